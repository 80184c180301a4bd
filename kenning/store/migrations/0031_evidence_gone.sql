-- Memories whose evidence (a cited file, identifier or command: kenning/memory/citations.py) was
-- gone from the working tree when a session started (kenning/context/evidence_check.py), since
-- when and in how many sessions; a row goes when its evidence holds again. Review lists them
-- (`kenning stale`); the setting evidence_keep_days leaves old ones out of context. Written only
-- through kenning/memory_service.py; it goes with the memory it is about.
CREATE TABLE evidence_gone (
    observation_id INTEGER PRIMARY KEY REFERENCES observations (id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    since REAL NOT NULL,              -- first session start that found it gone (this time)
    last_at REAL NOT NULL,            -- latest one
    sessions INTEGER NOT NULL DEFAULT 1,
    notes TEXT NOT NULL DEFAULT '[]'  -- JSON list: what was gone, as the context says it
);
CREATE INDEX evidence_gone_project ON evidence_gone (project, sessions);
