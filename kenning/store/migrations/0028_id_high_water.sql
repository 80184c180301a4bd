-- Ids are never reused. Without AUTOINCREMENT SQLite gives a new row the largest id + 1, so
-- forgetting the newest memory handed its number to the next one: "#42" in an old note, a
-- supersession or a user's memory then named another memory. Rebuilding the tables with
-- AUTOINCREMENT would mean recreating every trigger, index and view built on them; instead the
-- highest id ever deleted is kept here and every insert (kenning/store/repo.py next_id; a test holds
-- that no other INSERT into these tables exists) takes the next number above it and the largest
-- live id. (A trigger refusing other inserts was tried: it broke every fixture that writes rows
-- by hand after a delete, and cannot give the right id itself.)
CREATE TABLE id_high_water (
    name TEXT PRIMARY KEY,   -- the table
    n INTEGER NOT NULL       -- no new row of it may have an id at or below this
) WITHOUT ROWID;

INSERT INTO id_high_water (name, n) SELECT 'observations', IFNULL(MAX(id), 0) FROM observations;
INSERT INTO id_high_water (name, n) SELECT 'session_summaries', IFNULL(MAX(id), 0) FROM session_summaries;
INSERT INTO id_high_water (name, n) SELECT 'user_prompts', IFNULL(MAX(id), 0) FROM user_prompts;

CREATE TRIGGER id_high_water_observations_ad AFTER DELETE ON observations BEGIN
    UPDATE id_high_water SET n = MAX(n, old.id) WHERE name = 'observations';
END;

CREATE TRIGGER id_high_water_session_summaries_ad AFTER DELETE ON session_summaries BEGIN
    UPDATE id_high_water SET n = MAX(n, old.id) WHERE name = 'session_summaries';
END;

CREATE TRIGGER id_high_water_user_prompts_ad AFTER DELETE ON user_prompts BEGIN
    UPDATE id_high_water SET n = MAX(n, old.id) WHERE name = 'user_prompts';
END;

-- When a memory of the session was last forgotten (kenning/store/forget.py): an LLM observer keeps
-- a live conversation per session that still holds the forgotten text, and starts it afresh when
-- this moves (kenning/observer/llm/observer.py), so the memory is not written again.
ALTER TABLE sessions ADD COLUMN forgotten_at REAL;
