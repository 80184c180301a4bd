-- The operation log: one row per change to memory, written by kenning/memory_service.py (the one door
-- every surface writes through) in the same transaction as the change. It names what changed by id and
-- never holds a memory's text, so forgetting leaves no words of it here.
CREATE TABLE memory_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    surface TEXT NOT NULL,            -- observer, import, cli, http, viewer, mcp, demo
    op TEXT NOT NULL,                 -- observed, saved, imported, superseded, restored, forgotten, pinned, ...
    project TEXT NOT NULL DEFAULT '',
    ids TEXT NOT NULL DEFAULT '[]'    -- JSON list of the observation ids it changed
);
CREATE INDEX memory_log_time ON memory_log (at);
