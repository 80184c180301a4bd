-- Unpinning a shared memory travels too (kenning/team/sync.py). `pinned` now flags a change of the pin state
-- either way; the sync sends `pinned` or `unpinned`, as the layer is when it sends (a pin taken back before
-- it was sent is an `unpinned`: a teammate may have pinned the memory meanwhile, and the later change wins).
-- `changed_at` and `seen_hlc` are when the change was made and the latest clock this machine had seen then:
-- the op's clock derives from them, so under last-writer-wins a change made later wins over one made
-- earlier, whichever is sent first.
ALTER TABLE team_links ADD COLUMN changed_at REAL;
ALTER TABLE team_links ADD COLUMN seen_hlc TEXT NOT NULL DEFAULT '';
DROP TRIGGER IF EXISTS team_links_edited;
CREATE TRIGGER team_links_edited AFTER UPDATE OF title, narrative ON observations
WHEN (old.title IS NOT new.title OR old.narrative IS NOT new.narrative)
     AND EXISTS (SELECT 1 FROM team_links WHERE observation_id = new.id) BEGIN
    -- A change made while an earlier one was on its way: its clock no longer names what is here.
    UPDATE team_links SET edited = 1, edit_hlc = '', changed_at = (julianday('now') - 2440587.5) * 86400.0,
        seen_hlc = COALESCE((SELECT c.hlc FROM team_cursors c WHERE c.team = team_links.team), '')
    WHERE observation_id = new.id;
END;
DROP TRIGGER IF EXISTS team_links_pinned;
CREATE TRIGGER team_links_pinned AFTER UPDATE OF layer ON observations
WHEN (new.layer IS 'rule') != (old.layer IS 'rule')
     AND EXISTS (SELECT 1 FROM team_links WHERE observation_id = new.id) BEGIN
    UPDATE team_links SET pinned = 1, edit_hlc = '', changed_at = (julianday('now') - 2440587.5) * 86400.0,
        seen_hlc = COALESCE((SELECT c.hlc FROM team_cursors c WHERE c.team = team_links.team), '')
    WHERE observation_id = new.id;
END;
