-- Past sessions read by `kenning import-history`: one row per transcript / rollout file, so an
-- unchanged file is not read again and a session captured live by the hooks is never imported.
CREATE TABLE history_imports (
    path TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    agent_session_id TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL,
    mtime REAL NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    imported_at REAL NOT NULL
);
CREATE INDEX history_imports_session ON history_imports (agent, agent_session_id);
