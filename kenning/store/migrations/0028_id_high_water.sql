-- Ids are never reused. Without AUTOINCREMENT SQLite gives a new row the largest id + 1, so
-- forgetting the newest memory handed its number to the next one: "#42" in an old note, a
-- supersession or a user's memory then named another memory. Rebuilding the tables with
-- AUTOINCREMENT would mean recreating every trigger, index and view built on them; instead the
-- highest id ever deleted is kept here and every insert (kenning/store/repo.py next_id; a test holds
-- that no other INSERT into these tables exists) takes the next number above it and the largest
-- live id. (A trigger refusing other inserts was tried: it broke every fixture that writes rows
-- by hand after a delete, and cannot give the right id itself.)
-- A table's row is made by its first delete (or here, when it already has rows): a fresh database has
-- none, so `kenning repair`, which copies a damaged file's rows into a fresh one, carries the mark over.
CREATE TABLE id_high_water (
    name TEXT PRIMARY KEY,   -- the table
    n INTEGER NOT NULL       -- no new row of it may have an id at or below this
);  -- a rowid table: `kenning repair` salvages rows in rowid order

INSERT INTO id_high_water (name, n) SELECT 'observations', MAX(id) FROM observations HAVING MAX(id) IS NOT NULL;
INSERT INTO id_high_water (name, n) SELECT 'session_summaries', MAX(id) FROM session_summaries HAVING MAX(id) IS NOT NULL;
INSERT INTO id_high_water (name, n) SELECT 'user_prompts', MAX(id) FROM user_prompts HAVING MAX(id) IS NOT NULL;

CREATE TRIGGER id_high_water_observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO id_high_water (name, n) VALUES ('observations', old.id)
        ON CONFLICT (name) DO UPDATE SET n = MAX(n, excluded.n);
END;

CREATE TRIGGER id_high_water_session_summaries_ad AFTER DELETE ON session_summaries BEGIN
    INSERT INTO id_high_water (name, n) VALUES ('session_summaries', old.id)
        ON CONFLICT (name) DO UPDATE SET n = MAX(n, excluded.n);
END;

CREATE TRIGGER id_high_water_user_prompts_ad AFTER DELETE ON user_prompts BEGIN
    INSERT INTO id_high_water (name, n) VALUES ('user_prompts', old.id)
        ON CONFLICT (name) DO UPDATE SET n = MAX(n, excluded.n);
END;

-- When a memory of the session was last forgotten (kenning/store/forget.py): an LLM observer keeps
-- a live conversation per session that still holds the forgotten text, and starts it afresh when
-- this moves (kenning/observer/llm/observer.py), so the memory is not written again.
ALTER TABLE sessions ADD COLUMN forgotten_at REAL;
