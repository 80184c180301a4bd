-- Memory that knows what matters (kenning/memory): each observation's layer (rule: a standing
-- rule or preference; key: a decision, fact, gotcha or root cause; log: routine work), its
-- importance, what it is about (observation_subjects), when it was superseded, and near-duplicate
-- groups (the newest row of a group is its head: duplicate_of IS NULL, occurrences = its size).
-- Layer, importance, signature, subjects and groups derive from the canonical columns and are
-- rebuilt by `kenning reindex`; status, superseded_by and superseded_at are canonical.
ALTER TABLE observations ADD COLUMN layer TEXT;            -- rule | key | log; NULL until indexed
ALTER TABLE observations ADD COLUMN importance INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN signature TEXT;        -- same for titles that say the same thing
ALTER TABLE observations ADD COLUMN duplicate_of INTEGER;  -- the head of its group (NULL: a head)
ALTER TABLE observations ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1;
ALTER TABLE observations ADD COLUMN superseded_at REAL;

-- Session start reads heads of one layer of one project, newest or most important first.
CREATE INDEX observations_layer_time ON observations (project, layer, status, created_at)
    WHERE duplicate_of IS NULL;
CREATE INDEX observations_layer_importance ON observations (project, layer, status, importance, created_at)
    WHERE duplicate_of IS NULL;
CREATE INDEX observations_signature ON observations (project, signature) WHERE duplicate_of IS NULL;
CREATE INDEX observations_duplicates ON observations (duplicate_of) WHERE duplicate_of IS NOT NULL;

CREATE TABLE observation_subjects (
    project TEXT NOT NULL,
    subject TEXT NOT NULL,   -- kind:name (cmd:pnpm, file:src/gen/, set:MAX_WORKERS, work:billing migration)
    observation_id INTEGER NOT NULL,
    PRIMARY KEY (project, subject, observation_id)
) WITHOUT ROWID;
CREATE INDEX observation_subjects_observation ON observation_subjects (observation_id);
CREATE TRIGGER observation_subjects_ad AFTER DELETE ON observations BEGIN
    DELETE FROM observation_subjects WHERE observation_id = old.id;
END;
CREATE TRIGGER observation_subjects_au_project AFTER UPDATE OF project ON observations BEGIN
    UPDATE observation_subjects SET project = new.project WHERE observation_id = new.id;
END;

-- A group outlives the deletion of any member: a deleted head hands over to the newest remaining
-- member; a deleted member leaves its head one occurrence fewer.
CREATE TRIGGER observations_group_head_ad AFTER DELETE ON observations WHEN old.duplicate_of IS NULL BEGIN
    -- the new head is marked -old.id for a moment, so every step is an index lookup
    UPDATE observations SET duplicate_of = -old.id, occurrences = MAX(1, old.occurrences - 1) WHERE id = (
        SELECT d.id FROM observations d WHERE d.duplicate_of = old.id ORDER BY d.created_at DESC, d.id DESC LIMIT 1);
    UPDATE observations SET duplicate_of = (SELECT d.id FROM observations d WHERE d.duplicate_of = -old.id)
    WHERE duplicate_of = old.id;
    UPDATE observations SET duplicate_of = NULL WHERE duplicate_of = -old.id;
END;
CREATE TRIGGER observations_group_member_ad AFTER DELETE ON observations WHEN old.duplicate_of IS NOT NULL BEGIN
    UPDATE observations SET occurrences = MAX(1, occurrences - 1) WHERE id = old.duplicate_of;
END;
