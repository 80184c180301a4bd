-- Edits and pins of a shared memory travel to the team hub (kenning/team/sync.py): a change of its text or
-- a pin made here after the hub knew it is flagged by these triggers, whatever surface made it; the sync
-- sends an `edited` or `pinned` op under a clock fixed before the first try (`edit_hlc`: a retry after a lost
-- answer is the same op) and clears the flags once the hub acknowledged that clock.
ALTER TABLE team_links ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE team_links ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE team_links ADD COLUMN edit_hlc TEXT NOT NULL DEFAULT '';
CREATE TRIGGER team_links_edited AFTER UPDATE OF title, narrative ON observations
WHEN (old.title IS NOT new.title OR old.narrative IS NOT new.narrative)
     AND EXISTS (SELECT 1 FROM team_links WHERE observation_id = new.id) BEGIN
    -- A change made while an earlier one was on its way: its clock no longer names what is here.
    UPDATE team_links SET edited = 1, edit_hlc = '' WHERE observation_id = new.id;
END;
CREATE TRIGGER team_links_pinned AFTER UPDATE OF layer ON observations
WHEN new.layer = 'rule' AND old.layer IS NOT 'rule'
     AND EXISTS (SELECT 1 FROM team_links WHERE observation_id = new.id) BEGIN
    UPDATE team_links SET pinned = 1, edit_hlc = '' WHERE observation_id = new.id;
END;
