-- The web viewer's feed pages every kind of memory newest first, across projects: without
-- these, the first page at 100k observations sorts the whole table (~60 ms); with them a
-- page is a short backwards walk of an index whatever its depth (keyset cursor).
CREATE INDEX observations_time ON observations (created_at, id);
CREATE INDEX user_prompts_time ON user_prompts (created_at, id);
CREATE INDEX session_summaries_time ON session_summaries (created_at, id);
