-- The hub's review state of a memory this machine shared (kenning/team/sync.py records it when a pull brings
-- the memory back changed): '' not known yet, 'pending', 'approved', 'rejected'. The viewer shows it.
ALTER TABLE team_links ADD COLUMN review TEXT NOT NULL DEFAULT '';
