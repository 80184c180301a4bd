"""The web viewer's service side: feed pages, details, edits, stats and settings (see docs/viewer-api.md).

The HTTP surface is kenning/worker/routes/viewer.py; the page itself is static/ (no build step).
"""
