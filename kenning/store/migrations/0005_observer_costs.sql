-- What the LLM observer spent, in detail: cached input apart (it is billed at about a tenth),
-- and per agent session (cost control, `kenning stats`). Observations keep their own share in
-- observations.tokens_spent.
ALTER TABLE observer_usage ADD COLUMN cache_read INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_usage ADD COLUMN cache_write INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_usage ADD COLUMN empty_replies INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_usage ADD COLUMN prose_replies INTEGER NOT NULL DEFAULT 0;
CREATE TABLE observer_session_usage (
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    calls INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    observations INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    PRIMARY KEY (session_id, provider, model)
);
