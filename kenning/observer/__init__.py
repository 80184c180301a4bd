"""The observer: turns captured events into observations and session summaries."""
