-- Which observations touched which file, one row per (path, observation), for file history on
-- Read. A LIKE scan of the JSON arrays took ~115 ms at 100k observations, and even a path index
-- joined back to `observations` took ~15 ms when a file has a thousand notes (one random row
-- read each): so the few columns the ranking needs are copied here and a lookup is one
-- contiguous range of this table. Derived from `observations`, kept in step by triggers.
CREATE TABLE observation_files (
    path TEXT NOT NULL,
    observation_id INTEGER NOT NULL,
    session_id INTEGER NOT NULL,
    project TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    modified INTEGER NOT NULL DEFAULT 0,  -- 1 when the path is in files_modified
    n_files INTEGER NOT NULL DEFAULT 0,   -- distinct files the observation touches (fewer = more specific)
    -- A relative path is looked up within one project: its rows are one contiguous range, newest
    -- last, even when other projects have a file of the same name (README.md, src/index.ts).
    PRIMARY KEY (path, project, observation_id)
) WITHOUT ROWID;
CREATE INDEX observation_files_observation ON observation_files (observation_id);

-- A malformed JSON column must never make the observation's own INSERT fail: it reads as [].
CREATE TRIGGER observation_files_ai AFTER INSERT ON observations BEGIN
    INSERT OR REPLACE INTO observation_files
        (path, observation_id, session_id, project, type, status, created_at, modified, n_files)
    SELECT path, new.id, new.session_id, new.project, new.type, new.status, new.created_at, MAX(modified),
           COUNT(*) OVER ()
    FROM (SELECT value AS path, 1 AS modified
          FROM json_each(CASE WHEN json_valid(new.files_modified) THEN new.files_modified ELSE '[]' END)
          WHERE type = 'text' AND value != ''
          UNION ALL
          SELECT value, 0
          FROM json_each(CASE WHEN json_valid(new.files_read) THEN new.files_read ELSE '[]' END)
          WHERE type = 'text' AND value != '')
    GROUP BY path;
END;
CREATE TRIGGER observation_files_ad AFTER DELETE ON observations BEGIN
    DELETE FROM observation_files WHERE observation_id = old.id;
END;
CREATE TRIGGER observation_files_au_files AFTER UPDATE OF files_read, files_modified ON observations BEGIN
    DELETE FROM observation_files WHERE observation_id = old.id;
    INSERT OR REPLACE INTO observation_files
        (path, observation_id, session_id, project, type, status, created_at, modified, n_files)
    SELECT path, new.id, new.session_id, new.project, new.type, new.status, new.created_at, MAX(modified),
           COUNT(*) OVER ()
    FROM (SELECT value AS path, 1 AS modified
          FROM json_each(CASE WHEN json_valid(new.files_modified) THEN new.files_modified ELSE '[]' END)
          WHERE type = 'text' AND value != ''
          UNION ALL
          SELECT value, 0
          FROM json_each(CASE WHEN json_valid(new.files_read) THEN new.files_read ELSE '[]' END)
          WHERE type = 'text' AND value != '')
    GROUP BY path;
END;
CREATE TRIGGER observation_files_au_row AFTER UPDATE OF session_id, project, type, status, created_at
    ON observations BEGIN
    UPDATE observation_files SET session_id = new.session_id, project = new.project, type = new.type,
                                 status = new.status, created_at = new.created_at
    WHERE observation_id = new.id;
END;

-- Existing observations (an upgraded database).
INSERT OR REPLACE INTO observation_files
    (path, observation_id, session_id, project, type, status, created_at, modified, n_files)
SELECT f.path, o.id, o.session_id, o.project, o.type, o.status, o.created_at, f.modified, f.n_files
FROM (SELECT path, id, MAX(modified) AS modified, COUNT(*) OVER (PARTITION BY id) AS n_files
      FROM (SELECT j.value AS path, o.id AS id, 1 AS modified
            FROM observations o,
                 json_each(CASE WHEN json_valid(o.files_modified) THEN o.files_modified ELSE '[]' END) j
            WHERE j.type = 'text' AND j.value != ''
            UNION ALL
            SELECT j.value, o.id, 0
            FROM observations o,
                 json_each(CASE WHEN json_valid(o.files_read) THEN o.files_read ELSE '[]' END) j
            WHERE j.type = 'text' AND j.value != '')
      GROUP BY id, path) f
JOIN observations o ON o.id = f.id;
