-- The web viewer's feed pages every kind of memory newest first, across projects: without
-- these, the first page at 100k observations sorts the whole table (~60 ms); with them a
-- page is a short backwards walk of an index whatever its depth (keyset cursor).
CREATE INDEX observations_time ON observations (created_at, id);
-- One project's rows in time order whatever their status (the viewer shows retracted ones, flagged).
CREATE INDEX observations_project_created ON observations (project, created_at, id);
-- One type's rows in time order: a rare type (security_alert) is a short walk, not a full scan.
CREATE INDEX observations_type_created ON observations (type, created_at, id);
CREATE INDEX observations_project_type_created ON observations (project, type, created_at, id);
CREATE INDEX user_prompts_time ON user_prompts (created_at, id);
CREATE INDEX session_summaries_time ON session_summaries (created_at, id);

-- Which observation carries which concept, for the feed's concept filter: testing the JSON
-- column of every row took ~110 ms at 100k observations for a rare concept; this is one range
-- of a small table. Derived from `observations`, kept in step by triggers like observation_files.
CREATE TABLE observation_concepts (
    concept TEXT NOT NULL,
    created_at REAL NOT NULL,
    observation_id INTEGER NOT NULL,
    PRIMARY KEY (concept, created_at, observation_id)
) WITHOUT ROWID;
CREATE INDEX observation_concepts_observation ON observation_concepts (observation_id);

INSERT OR IGNORE INTO observation_concepts (concept, created_at, observation_id)
SELECT DISTINCT j.value, o.created_at, o.id
FROM observations o, json_each(CASE WHEN json_valid(o.concepts) THEN o.concepts ELSE '[]' END) j
WHERE j.type = 'text' AND j.value != '';

CREATE TRIGGER observation_concepts_ai AFTER INSERT ON observations BEGIN
    INSERT OR IGNORE INTO observation_concepts (concept, created_at, observation_id)
    SELECT value, new.created_at, new.id
    FROM json_each(CASE WHEN json_valid(new.concepts) THEN new.concepts ELSE '[]' END)
    WHERE type = 'text' AND value != '';
END;
CREATE TRIGGER observation_concepts_ad AFTER DELETE ON observations BEGIN
    DELETE FROM observation_concepts WHERE observation_id = old.id;
END;
CREATE TRIGGER observation_concepts_au AFTER UPDATE OF concepts, created_at ON observations BEGIN
    DELETE FROM observation_concepts WHERE observation_id = old.id;
    INSERT OR IGNORE INTO observation_concepts (concept, created_at, observation_id)
    SELECT value, new.created_at, new.id
    FROM json_each(CASE WHEN json_valid(new.concepts) THEN new.concepts ELSE '[]' END)
    WHERE type = 'text' AND value != '';
END;
