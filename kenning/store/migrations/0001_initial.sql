-- The file says it is Kenning's (kenning/store/identity.py checks this before every open).
PRAGMA application_id = 1263423047;

-- Agent sessions: one row per (platform, agent session id).
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL DEFAULT 'claude-code',
    agent_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    project_root TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'abandoned')),
    prompt_count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (platform, agent_session_id)
);
CREATE INDEX sessions_project ON sessions (project, started_at);

-- Captured events: the durable per-session queue between the spool and the observer, and
-- the ledger that makes ingest idempotent (UNIQUE session_id + event_key).
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    event_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool_name TEXT,
    prompt_number INTEGER NOT NULL DEFAULT 0,
    agent_id TEXT,
    agent_type TEXT,
    occurred_at REAL NOT NULL,
    payload TEXT,
    size_chars INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'skipped')),
    processed_at REAL,
    UNIQUE (session_id, event_key)
);
CREATE INDEX events_pending ON events (session_id, id) WHERE status = 'pending';
CREATE INDEX events_processed ON events (processed_at) WHERE status != 'pending';

CREATE TABLE user_prompts (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    prompt_number INTEGER NOT NULL,
    prompt_text TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (session_id, prompt_number)
);

CREATE TABLE observations (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    subtitle TEXT NOT NULL DEFAULT '',
    facts TEXT NOT NULL DEFAULT '[]',
    narrative TEXT NOT NULL DEFAULT '',
    concepts TEXT NOT NULL DEFAULT '[]',
    files_read TEXT NOT NULL DEFAULT '[]',
    files_modified TEXT NOT NULL DEFAULT '[]',
    prompt_number INTEGER,
    tokens_spent INTEGER NOT NULL DEFAULT 0,   -- observer model tokens used to produce it
    source_tokens INTEGER NOT NULL DEFAULT 0,  -- size of the captured work it compresses
    created_at REAL NOT NULL,                  -- when the event happened
    recorded_at REAL NOT NULL,                 -- when it was stored
    content_hash TEXT NOT NULL,
    agent_id TEXT,
    agent_type TEXT,
    observer TEXT NOT NULL DEFAULT 'rules',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'retracted')),
    superseded_by INTEGER REFERENCES observations (id) ON DELETE SET NULL,
    UNIQUE (session_id, content_hash)
);
CREATE INDEX observations_project_time ON observations (project, created_at);
CREATE INDEX observations_session ON observations (session_id);

CREATE TABLE session_summaries (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
    project TEXT NOT NULL,
    prompt_number INTEGER,
    request TEXT NOT NULL DEFAULT '',
    investigated TEXT NOT NULL DEFAULT '',
    learned TEXT NOT NULL DEFAULT '',
    completed TEXT NOT NULL DEFAULT '',
    next_steps TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    files_read TEXT NOT NULL DEFAULT '[]',
    files_modified TEXT NOT NULL DEFAULT '[]',
    tokens_spent INTEGER NOT NULL DEFAULT 0,
    source_tokens INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    recorded_at REAL NOT NULL,
    observer TEXT NOT NULL DEFAULT 'rules'
);
CREATE INDEX session_summaries_project_time ON session_summaries (project, created_at);

-- Full-text indexes: external content, kept in step by triggers (derived, rebuildable).
CREATE VIRTUAL TABLE observations_fts USING fts5 (
    title, subtitle, narrative, facts, concepts,
    content = 'observations', content_rowid = 'id', tokenize = 'porter unicode61'
);
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
END;
CREATE TRIGGER observations_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON observations BEGIN
    INSERT INTO observations_fts (observations_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
    INSERT INTO observations_fts (rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;

CREATE VIRTUAL TABLE session_summaries_fts USING fts5 (
    request, investigated, learned, completed, next_steps, notes,
    content = 'session_summaries', content_rowid = 'id', tokenize = 'porter unicode61'
);
CREATE TRIGGER session_summaries_ai AFTER INSERT ON session_summaries BEGIN
    INSERT INTO session_summaries_fts (rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;
CREATE TRIGGER session_summaries_ad AFTER DELETE ON session_summaries BEGIN
    INSERT INTO session_summaries_fts (session_summaries_fts, rowid, request, investigated, learned, completed,
                                       next_steps, notes)
    VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
END;
CREATE TRIGGER session_summaries_au AFTER UPDATE ON session_summaries BEGIN
    INSERT INTO session_summaries_fts (session_summaries_fts, rowid, request, investigated, learned, completed,
                                       next_steps, notes)
    VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
    INSERT INTO session_summaries_fts (rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;

CREATE VIRTUAL TABLE user_prompts_fts USING fts5 (
    prompt_text, content = 'user_prompts', content_rowid = 'id', tokenize = 'porter unicode61'
);
CREATE TRIGGER user_prompts_ai AFTER INSERT ON user_prompts BEGIN
    INSERT INTO user_prompts_fts (rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
CREATE TRIGGER user_prompts_ad AFTER DELETE ON user_prompts BEGIN
    INSERT INTO user_prompts_fts (user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
END;
CREATE TRIGGER user_prompts_au AFTER UPDATE ON user_prompts BEGIN
    INSERT INTO user_prompts_fts (user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
    INSERT INTO user_prompts_fts (rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
