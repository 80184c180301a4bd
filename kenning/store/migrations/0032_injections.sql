-- The injection ledger: which memories were handed to which agent session, by which path, why, and at
-- what size (kenning/store/injections.py). Written by the worker only, never by a hook.
-- It names memories by id; a reason names at most the few words a memory shares with a prompt, or a file.
-- Forgetting a memory deletes its rows here.
CREATE TABLE injections (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    session TEXT NOT NULL DEFAULT '',     -- the agent's session id ('' when the surface cannot know it: MCP)
    agent TEXT NOT NULL DEFAULT '',       -- claude-code, codex, ...
    project TEXT NOT NULL DEFAULT '',     -- the project key
    via TEXT NOT NULL,                    -- session_start, prompt, file, mcp
    observation_id INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',      -- standing rule, key rank 3, matched: parser tabs, file read: a.py, ...
    chars INTEGER NOT NULL DEFAULT 0,     -- characters of the line that showed it
    ref TEXT                              -- one handing read from a file (file history): read once
);
CREATE INDEX injections_session ON injections (session, at);
CREATE INDEX injections_observation ON injections (observation_id, at);
CREATE INDEX injections_time ON injections (at);
CREATE UNIQUE INDEX injections_ref ON injections (ref, observation_id) WHERE ref IS NOT NULL;

-- Signs that an injected memory helped: the agent fetched it in full, cited its id, or acted on it
-- (edited a file it names, ran a command it names, used an identifier it names).
CREATE TABLE injection_uses (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    session TEXT NOT NULL DEFAULT '',
    observation_id INTEGER NOT NULL,
    kind TEXT NOT NULL,                   -- fetched, cited, edited, ran, named
    detail TEXT NOT NULL DEFAULT ''       -- the file, command or identifier that matched
);
CREATE INDEX injection_uses_observation ON injection_uses (observation_id, at);
CREATE INDEX injection_uses_session ON injection_uses (session, at);

-- How far the worker has looked through captured events for uses (one row). The events captured before
-- the ledger existed cannot show a use of anything it records: the look starts after them.
CREATE TABLE injection_scan (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    event_id INTEGER NOT NULL
);
INSERT INTO injection_scan (id, event_id) SELECT 1, COALESCE(MAX(id), 0) FROM events;
