-- Team memory (kenning/team, docs/team.md): which local memories are shared with a team hub, under which
-- global id (origin device + local id), and what was forgotten. Only ids, clocks and names here: the text
-- stays in `observations`, so forgetting a team memory leaves none of its words in these tables.
CREATE TABLE team_links (
    observation_id INTEGER PRIMARY KEY,      -- the local row: pushed from here, or pulled from the hub
    gid TEXT NOT NULL UNIQUE,
    team TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('local', 'hub')),
    hlc TEXT NOT NULL DEFAULT '',            -- the clock of its `created` op (a re-push sends the same op)
    author TEXT NOT NULL DEFAULT '',
    reviewer TEXT NOT NULL DEFAULT '',
    reviewed_at REAL,
    pushed INTEGER NOT NULL DEFAULT 0,       -- the hub acknowledged its `created` op
    edge TEXT NOT NULL DEFAULT ''            -- the gid of what supersedes it, once that edge was pushed
);
-- Forgotten team memories: pushed to the hub as tombstones, and never taken back from a pull.
CREATE TABLE team_tombstones (
    gid TEXT PRIMARY KEY,
    team TEXT NOT NULL,
    at REAL NOT NULL,
    pushed INTEGER NOT NULL DEFAULT 0
);
-- Whatever path deletes a shared memory (forget by id, query, project; the viewer; a pull), its
-- tombstone is written in the same transaction.
CREATE TRIGGER team_links_forgotten AFTER DELETE ON observations
WHEN EXISTS (SELECT 1 FROM team_links WHERE observation_id = old.id) BEGIN
    INSERT OR IGNORE INTO team_tombstones (gid, team, at, pushed)
        SELECT gid, team, CAST(strftime('%s', 'now') AS REAL), 0 FROM team_links WHERE observation_id = old.id;
    DELETE FROM team_links WHERE observation_id = old.id;
END;
-- Per team: the pull cursor (the hub's revision) and this device's hybrid logical clock.
CREATE TABLE team_cursors (
    team TEXT PRIMARY KEY,
    rev INTEGER NOT NULL DEFAULT 0,
    hlc TEXT NOT NULL DEFAULT ''
);
