-- Embeddings of observations, summaries and prompts (derived, rebuildable: `kenning reindex`).
-- One row per (kind, row, model); `content_hash` is the hash of the embedded text, so text that
-- did not change is never embedded twice (and identical text elsewhere reuses the vector).
-- `vector` is little-endian float32, L2-normalised, `dim` values long.
CREATE TABLE embeddings (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('observation', 'summary', 'prompt')),
    row_id INTEGER NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (kind, row_id, model)
);
CREATE INDEX embeddings_model_hash ON embeddings (model, content_hash);

-- Readers keep the vectors in memory: new rows are appended (id > the last one seen); any
-- delete bumps this counter and makes them reload.
CREATE TABLE embedding_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    deletes INTEGER NOT NULL DEFAULT 0
);
INSERT INTO embedding_state (id, deletes) VALUES (1, 0);
CREATE TRIGGER embeddings_ad AFTER DELETE ON embeddings BEGIN
    UPDATE embedding_state SET deletes = deletes + 1 WHERE id = 1;
END;

-- Forgotten or rewritten rows take their vectors with them (`kenning forget`, cascades included).
CREATE TRIGGER embeddings_observation_ad AFTER DELETE ON observations BEGIN
    DELETE FROM embeddings WHERE kind = 'observation' AND row_id = old.id;
END;
CREATE TRIGGER embeddings_observation_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON observations
WHEN old.title IS NOT new.title OR old.subtitle IS NOT new.subtitle OR old.narrative IS NOT new.narrative
     OR old.facts IS NOT new.facts OR old.concepts IS NOT new.concepts BEGIN
    DELETE FROM embeddings WHERE kind = 'observation' AND row_id = old.id;
END;
CREATE TRIGGER embeddings_summary_ad AFTER DELETE ON session_summaries BEGIN
    DELETE FROM embeddings WHERE kind = 'summary' AND row_id = old.id;
END;
CREATE TRIGGER embeddings_summary_au AFTER UPDATE ON session_summaries
WHEN old.request IS NOT new.request OR old.investigated IS NOT new.investigated OR old.learned IS NOT new.learned
     OR old.completed IS NOT new.completed OR old.next_steps IS NOT new.next_steps OR old.notes IS NOT new.notes BEGIN
    DELETE FROM embeddings WHERE kind = 'summary' AND row_id = old.id;
END;
CREATE TRIGGER embeddings_prompt_ad AFTER DELETE ON user_prompts BEGIN
    DELETE FROM embeddings WHERE kind = 'prompt' AND row_id = old.id;
END;
CREATE TRIGGER embeddings_prompt_au AFTER UPDATE OF prompt_text ON user_prompts
WHEN old.prompt_text IS NOT new.prompt_text BEGIN
    DELETE FROM embeddings WHERE kind = 'prompt' AND row_id = old.id;
END;
