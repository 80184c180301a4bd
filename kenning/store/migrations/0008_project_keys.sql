-- A project is a repository, not a folder name: rows are filed under the project's key (the
-- canonical path of its main checkout; kenning/project.py), and `projects` keeps the display
-- name, the latest checkout and its remote. `project_aliases` maps another checkout of the same
-- repository (a clone of the same remote) or a key merged away onto the key its rows use.
CREATE TABLE projects (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,                 -- short display name: the checkout's folder name
    root TEXT NOT NULL DEFAULT '',      -- the latest main checkout seen
    remote TEXT NOT NULL DEFAULT '',    -- normalised origin URL, no credentials ('' = none known)
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL
);
CREATE INDEX projects_name ON projects (name);
CREATE INDEX projects_remote ON projects (remote) WHERE remote != '';
CREATE TABLE project_aliases (
    alias TEXT PRIMARY KEY,
    key TEXT NOT NULL
);
CREATE INDEX project_aliases_key ON project_aliases (key);

-- Re-key existing rows. Until now `project` held the folder name: two repositories called `api`
-- shared one memory. Every session recorded its root, which becomes its key; a session without
-- one (a memory saved without a checkout, an import) joins the only root its name ever had, and
-- keeps its name as its key when there were several (which repository it was is unknown).
CREATE TEMP TABLE rekey_names AS
    SELECT project AS name, MIN(project_root) AS root, COUNT(DISTINCT project_root) AS roots
    FROM sessions WHERE project_root != '' GROUP BY project;
INSERT INTO projects (key, name, root, remote, first_seen, last_seen)
    SELECT project_root, MAX(project), project_root, '', MIN(started_at), MAX(started_at)
    FROM sessions WHERE project_root != '' GROUP BY project_root;
UPDATE sessions SET project = (SELECT root FROM rekey_names r WHERE r.name = sessions.project)
    WHERE project_root = '' AND project IN (SELECT name FROM rekey_names WHERE roots = 1);
UPDATE sessions SET project = project_root WHERE project_root != '' AND project != project_root;
INSERT OR IGNORE INTO projects (key, name, root, remote, first_seen, last_seen)
    SELECT project, project, '', '', MIN(started_at), MAX(started_at) FROM sessions GROUP BY project;
DROP TABLE rekey_names;

-- Every row takes its session's key (observation_files follows through its trigger).
UPDATE observations SET project = (SELECT s.project FROM sessions s WHERE s.id = observations.session_id)
    WHERE project IS NOT (SELECT s.project FROM sessions s WHERE s.id = observations.session_id);
UPDATE session_summaries SET project = (SELECT s.project FROM sessions s WHERE s.id = session_summaries.session_id)
    WHERE project IS NOT (SELECT s.project FROM sessions s WHERE s.id = session_summaries.session_id);
UPDATE embeddings SET project = COALESCE(CASE kind
        WHEN 'observation' THEN (SELECT o.project FROM observations o WHERE o.id = embeddings.row_id)
        WHEN 'summary' THEN (SELECT m.project FROM session_summaries m WHERE m.id = embeddings.row_id)
        ELSE (SELECT s.project FROM user_prompts u JOIN sessions s ON s.id = u.session_id
              WHERE u.id = embeddings.row_id) END, project);
