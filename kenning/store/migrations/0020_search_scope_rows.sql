-- Rows of each kind per project: the N of the per-project BM25 (kenning/search/bm25.py). Counting
-- them per query cost ~7 ms at 100k observations (80k rows of one project walked in an index);
-- this is one lookup. Derived, kept in step by triggers (like observation_concepts) and refilled
-- by `kenning reindex` (kenning/search/reindex.py). A prompt's project is its session's.
CREATE TABLE search_scope_rows (
    kind TEXT NOT NULL,     -- observation | summary | prompt
    project TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (kind, project)
) WITHOUT ROWID;

INSERT INTO search_scope_rows (kind, project, n)
    SELECT 'observation', project, COUNT(*) FROM observations GROUP BY project;
INSERT INTO search_scope_rows (kind, project, n)
    SELECT 'summary', project, COUNT(*) FROM session_summaries GROUP BY project;
INSERT INTO search_scope_rows (kind, project, n)
    SELECT 'prompt', s.project, COUNT(*) FROM user_prompts u JOIN sessions s ON s.id = u.session_id GROUP BY s.project;

CREATE TRIGGER search_scope_observation_ai AFTER INSERT ON observations BEGIN
    INSERT INTO search_scope_rows (kind, project, n) VALUES ('observation', new.project, 1)
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER search_scope_observation_ad AFTER DELETE ON observations BEGIN
    UPDATE search_scope_rows SET n = n - 1 WHERE kind = 'observation' AND project = old.project;
END;
CREATE TRIGGER search_scope_observation_au AFTER UPDATE OF project ON observations
WHEN old.project IS NOT new.project BEGIN
    UPDATE search_scope_rows SET n = n - 1 WHERE kind = 'observation' AND project = old.project;
    INSERT INTO search_scope_rows (kind, project, n) VALUES ('observation', new.project, 1)
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER search_scope_summary_ai AFTER INSERT ON session_summaries BEGIN
    INSERT INTO search_scope_rows (kind, project, n) VALUES ('summary', new.project, 1)
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER search_scope_summary_ad AFTER DELETE ON session_summaries BEGIN
    UPDATE search_scope_rows SET n = n - 1 WHERE kind = 'summary' AND project = old.project;
END;
CREATE TRIGGER search_scope_summary_au AFTER UPDATE OF project ON session_summaries
WHEN old.project IS NOT new.project BEGIN
    UPDATE search_scope_rows SET n = n - 1 WHERE kind = 'summary' AND project = old.project;
    INSERT INTO search_scope_rows (kind, project, n) VALUES ('summary', new.project, 1)
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;

-- A prompt counts for its session's project while that session exists (what the join of the
-- search sees). A session deleted takes its prompts' count with it before the cascade removes
-- them (their delete trigger then finds no session and subtracts nothing).
CREATE TRIGGER search_scope_prompt_ai AFTER INSERT ON user_prompts BEGIN
    INSERT INTO search_scope_rows (kind, project, n)
        SELECT 'prompt', s.project, 1 FROM sessions s WHERE s.id = new.session_id
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER search_scope_prompt_ad AFTER DELETE ON user_prompts BEGIN
    UPDATE search_scope_rows SET n = n - 1
        WHERE kind = 'prompt' AND project = (SELECT s.project FROM sessions s WHERE s.id = old.session_id);
END;
CREATE TRIGGER search_scope_prompt_au AFTER UPDATE OF session_id ON user_prompts
WHEN old.session_id IS NOT new.session_id BEGIN
    UPDATE search_scope_rows SET n = n - 1
        WHERE kind = 'prompt' AND project = (SELECT s.project FROM sessions s WHERE s.id = old.session_id);
    INSERT INTO search_scope_rows (kind, project, n)
        SELECT 'prompt', s.project, 1 FROM sessions s WHERE s.id = new.session_id
        ON CONFLICT (kind, project) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER search_scope_session_bd BEFORE DELETE ON sessions BEGIN
    UPDATE search_scope_rows SET n = n - (SELECT COUNT(*) FROM user_prompts u WHERE u.session_id = old.id)
        WHERE kind = 'prompt' AND project = old.project;
END;
CREATE TRIGGER search_scope_session_au AFTER UPDATE OF project ON sessions
WHEN old.project IS NOT new.project BEGIN
    UPDATE search_scope_rows SET n = n - (SELECT COUNT(*) FROM user_prompts u WHERE u.session_id = new.id)
        WHERE kind = 'prompt' AND project = old.project;
    INSERT INTO search_scope_rows (kind, project, n)
        SELECT 'prompt', new.project, COUNT(*) FROM user_prompts u WHERE u.session_id = new.id
        ON CONFLICT (kind, project) DO UPDATE SET n = n + excluded.n;
END;
