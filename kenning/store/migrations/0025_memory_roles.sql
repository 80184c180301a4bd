-- What the observer judged each memory to be (kenning/observer/roles, DESIGN.md §9), canonical like
-- the text it was judged from:
--   kind       its role: rule, decision, rootcause, fix, change, gotcha, todo, status, fact, answer,
--              explored; NULL for rows judged before roles existed (their layer derives from type and
--              text, as before);
--   scope      'project' (this repository) or 'user' (a preference for all of the user's work: given
--              at session start in every project);
--   tentative  1 when it was said to be provisional ("for now", "暂定"): injected marked as such;
--   why        JSON {"said", "by", "origin", "where", "how"}: the sentence it was judged from, who said
--              it (user / agent / plan), where, and how it was judged, so a user can see and undo it.
ALTER TABLE observations ADD COLUMN kind TEXT;
ALTER TABLE observations ADD COLUMN scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'user'));
ALTER TABLE observations ADD COLUMN tentative INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN why TEXT NOT NULL DEFAULT '';

-- Every project's session start lists the user's own preferences: few rows, found without a scan.
CREATE INDEX observations_user_scope ON observations (layer, status, created_at)
    WHERE scope = 'user' AND duplicate_of IS NULL;

-- A preference of the user is shown in every project: its changes move the global counter of
-- migration 0021, so no project's kept selection outlives them.
CREATE TRIGGER context_changes_user_scope_ai AFTER INSERT ON observations WHEN new.scope = 'user' BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
CREATE TRIGGER context_changes_user_scope_au AFTER UPDATE ON observations
WHEN new.scope = 'user' OR old.scope = 'user' BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
CREATE TRIGGER context_changes_user_scope_ad AFTER DELETE ON observations WHEN old.scope = 'user' BEGIN
    UPDATE context_changes SET n = n + 1 WHERE project = '';
END;
