"""LLM observers: one long-lived conversation per agent session, behind the Observer interface."""
