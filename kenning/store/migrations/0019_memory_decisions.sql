-- A user's decision about a memory's layer (kenning/store/decisions.py): pinned as a standing
-- rule ('rule'), a rule demoted to an ordinary memory or routine work kept out of the archive
-- ('key'). Canonical, unlike `layer`: a rebuild of the memory index derives the layer again and
-- then applies this on top (layer = COALESCE(user_layer, derived)), so a pin outlives it.
-- A decision holds for the whole near-duplicate group (a newer restatement inherits it).
ALTER TABLE observations ADD COLUMN user_layer TEXT;   -- rule | key; NULL: as derived
ALTER TABLE observations ADD COLUMN user_layer_at REAL;

-- The viewer's memory views across all projects (rules, key memories, the archive): a walk of
-- one layer's group heads in time order, like observations_layer_time does for one project.
CREATE INDEX observations_layer_all ON observations (layer, status, created_at) WHERE duplicate_of IS NULL;
-- Superseded memories (hidden from the feed by default, shown by the viewer's filter), of one
-- project or of all of them, in time order.
CREATE INDEX observations_superseded ON observations (project, created_at) WHERE status = 'superseded';
CREATE INDEX observations_superseded_time ON observations (created_at) WHERE status = 'superseded';
CREATE INDEX observations_decided ON observations (user_layer) WHERE user_layer IS NOT NULL;
