-- The messages `kenning import-history` stored, by the key the transcript gives them (a Claude Code
-- message uuid, a tool call id, a queued message's time and text), with the session they went to.
-- A resumed Claude Code session is written into a new file that repeats the earlier file's lines
-- with the same uuids: a message already stored, from any file and any earlier import, is not
-- stored again. Kept apart from the events ledger, which forgets processed events after 30 days.
CREATE TABLE history_messages (
    agent TEXT NOT NULL,
    key TEXT NOT NULL,
    agent_session_id TEXT NOT NULL,
    PRIMARY KEY (agent, key)
) WITHOUT ROWID;

-- What earlier imports stored and the ledger still holds (their event keys are 'h:' + the key;
-- a tool call's is its own key, shared with live capture).
INSERT OR IGNORE INTO history_messages (agent, key, agent_session_id)
    SELECT s.platform, CASE WHEN e.event_key LIKE 'h:%' THEN substr(e.event_key, 3) ELSE e.event_key END,
           s.agent_session_id
    FROM events e JOIN sessions s ON s.id = e.session_id
    WHERE s.platform = 'claude-code' AND (e.event_key LIKE 'h:%' OR e.event_key LIKE 'PostToolUse%');
