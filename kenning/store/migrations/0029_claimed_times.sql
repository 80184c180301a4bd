-- A time from the future is not believed (kenning/memory/order.py): an event, observation or summary
-- that claims a time more than 5 minutes after it arrived is stored at its arrival time, and the time
-- it claimed is kept here (NULL: the claim was believed). Rows stored before this migration are
-- clamped the same way now, against the time they were recorded.
ALTER TABLE events ADD COLUMN claimed_at REAL;
ALTER TABLE observations ADD COLUMN claimed_at REAL;
ALTER TABLE session_summaries ADD COLUMN claimed_at REAL;
UPDATE observations SET claimed_at = created_at, created_at = recorded_at WHERE created_at > recorded_at + 300;
UPDATE session_summaries SET claimed_at = created_at, created_at = recorded_at WHERE created_at > recorded_at + 300;
