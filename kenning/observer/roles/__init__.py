"""Judging what each unit of a session says: its role (rule, decision, root cause, fix, gotcha …)."""
