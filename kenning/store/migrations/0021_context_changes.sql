-- A change counter per project for what the session-start index reads (kenning/context/cache.py):
-- the worker keeps a project's selection while its counter and the global one ('') stand still,
-- so every write that could change the index must move one of them, in the same transaction.
-- Observations and summaries move their project's counter (the old and the new project on an
-- update); sessions (their agent and start time are listed) move the global one. The project's
-- title and key (projects, project_aliases) are read afresh for every answer. The global
-- counter starts at a random value: a different database file never passes for this one by
-- holding the same counts.
CREATE TABLE context_changes (
    project TEXT PRIMARY KEY,  -- '' for the global counter
    n INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO context_changes (project, n) VALUES ('', abs(random() % 1000000000000));

CREATE TRIGGER context_changes_observation_ai AFTER INSERT ON observations BEGIN
    INSERT INTO context_changes (project, n) VALUES (new.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER context_changes_observation_au AFTER UPDATE ON observations BEGIN
    INSERT INTO context_changes (project, n) VALUES (new.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
    INSERT INTO context_changes (project, n) SELECT old.project, 1 WHERE old.project IS NOT new.project
        ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER context_changes_observation_ad AFTER DELETE ON observations BEGIN
    INSERT INTO context_changes (project, n) VALUES (old.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER context_changes_summary_ai AFTER INSERT ON session_summaries BEGIN
    INSERT INTO context_changes (project, n) VALUES (new.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER context_changes_summary_au AFTER UPDATE ON session_summaries BEGIN
    INSERT INTO context_changes (project, n) VALUES (new.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
    INSERT INTO context_changes (project, n) SELECT old.project, 1 WHERE old.project IS NOT new.project
        ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER context_changes_summary_ad AFTER DELETE ON session_summaries BEGIN
    INSERT INTO context_changes (project, n) VALUES (old.project, 1) ON CONFLICT (project) DO UPDATE SET n = n + 1;
END;

-- A session's agent (platform) and start are shown next to its rows. Its counters and end
-- (prompt_count, status, ended_at) are not read by the index: updates of those move nothing,
-- nor does a new session, unless rows already name its id (foreign keys make that impossible;
-- the check keeps it true without them).
CREATE TRIGGER context_changes_session_ai AFTER INSERT ON sessions
WHEN EXISTS (SELECT 1 FROM observations WHERE session_id = new.id)
  OR EXISTS (SELECT 1 FROM session_summaries WHERE session_id = new.id) BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
CREATE TRIGGER context_changes_session_au AFTER UPDATE OF id, platform, started_at ON sessions BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
CREATE TRIGGER context_changes_session_ad AFTER DELETE ON sessions BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
