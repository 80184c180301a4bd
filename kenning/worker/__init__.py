"""The worker daemon: drains the spool, runs the observer, serves the local HTTP API."""
