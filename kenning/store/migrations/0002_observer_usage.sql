-- What the observer spent, per day and provider (cost control; `kenning stats`).
CREATE TABLE observer_usage (
    day TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    calls INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, provider, model)
);
-- Session-start context reads active rows of one project newest first: one index serves it.
DROP INDEX observations_project_time;
CREATE INDEX observations_project_status_time ON observations (project, status, created_at);
