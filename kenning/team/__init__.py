"""Team memory on a PostgreSQL hub (docs/team.md). Imports nothing: ``render`` is read on the hook path."""
