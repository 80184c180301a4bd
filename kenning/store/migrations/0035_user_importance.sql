-- The importance a user gave a memory by hand (the viewer's edit; kenning/store/edits.py). Canonical,
-- like user_layer: a rebuild of the memory index derives importance again and applies this on top
-- (importance = COALESCE(user_importance, derived)), so an edit outlives `kenning reindex`.
ALTER TABLE observations ADD COLUMN user_importance INTEGER;  -- 0-10; NULL: as derived
