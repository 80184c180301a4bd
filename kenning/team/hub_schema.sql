-- Kenning's team hub on PostgreSQL (14 or later): created by `kenning team init` with the rights of the
-- role that runs it (it owns every object here); idempotent, so running it again upgrades in place.
--
-- What crosses the wire is `ops`: an append-only log of immutable operations on memories, each with a
-- global id (origin device + local id), its author (the database role that wrote it: checked, never
-- claimed), a hybrid logical clock and a content hash. `memories` is materialised from it by a trigger
-- (owner rights), with the review state and a revision number that clients pull by. A `forgotten`
-- operation is a tombstone: the trigger erases the text from `memories` and from every earlier op of
-- that memory, and a later `created` of the same id stays empty. Members read and append rows of their
-- own teams only (row-level security); nobody but the owner updates or deletes. A member may be restricted to
-- some of the team's projects (schema 3: `members.projects`): then they read, write and review those only.
CREATE SCHEMA IF NOT EXISTS kenning;

CREATE TABLE IF NOT EXISTS kenning.meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO kenning.meta VALUES ('schema_version', '3') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;

CREATE TABLE IF NOT EXISTS kenning.teams (
    name text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_]{0,39}$'),
    auto_approve boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS kenning.members (
    team text NOT NULL REFERENCES kenning.teams (name) ON DELETE CASCADE,
    role_name text NOT NULL,
    can_review boolean NOT NULL DEFAULT true,
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team, role_name)
);

CREATE TABLE IF NOT EXISTS kenning.ops (
    seq bigserial PRIMARY KEY,
    team text NOT NULL REFERENCES kenning.teams (name),
    gid text NOT NULL CHECK (gid ~ '^[0-9a-f]{8,32}:[0-9]{1,19}$'),
    kind text NOT NULL,  -- created, superseded, edited, pinned, unpinned, forgotten (ops_kind_check below)
    project text NOT NULL CHECK (length(project) BETWEEN 1 AND 300),  -- the normalised git remote
    author text NOT NULL DEFAULT session_user,
    device text NOT NULL CHECK (device ~ '^[0-9a-f]{8,32}$'),
    hlc text NOT NULL CHECK (hlc ~ '^[0-9]{13}\.[0-9]{5}\.[0-9a-f]{8,32}$'),
    content_hash text NOT NULL DEFAULT '' CHECK (length(content_hash) <= 64),
    payload jsonb CHECK (payload IS NULL OR octet_length(payload::text) <= 16384),
    at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (gid, kind, hlc)
);
CREATE INDEX IF NOT EXISTS ops_team_seq ON kenning.ops (team, seq);

CREATE SEQUENCE IF NOT EXISTS kenning.revisions;
CREATE TABLE IF NOT EXISTS kenning.memories (
    gid text PRIMARY KEY,
    team text NOT NULL REFERENCES kenning.teams (name),
    project text NOT NULL,
    author text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    hlc text NOT NULL,
    content_hash text NOT NULL DEFAULT '',
    layer text NOT NULL DEFAULT 'key' CHECK (layer IN ('rule', 'key')),
    type text NOT NULL DEFAULT 'discovery',
    title text,                              -- NULL once forgotten
    body text,                               -- NULL once forgotten
    review text NOT NULL DEFAULT 'pending' CHECK (review IN ('pending', 'approved', 'rejected')),
    reviewer text NOT NULL DEFAULT '',
    reviewed_at timestamptz,
    superseded_by text,                      -- an edge to the gid that replaces it, never an overwrite
    forgotten boolean NOT NULL DEFAULT false,
    rev bigint NOT NULL DEFAULT nextval('kenning.revisions')  -- what clients pull by
);
CREATE INDEX IF NOT EXISTS memories_team_rev ON kenning.memories (team, rev);

CREATE TABLE IF NOT EXISTS kenning.audit (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    actor text NOT NULL DEFAULT session_user,
    team text NOT NULL,
    action text NOT NULL,     -- write:<kind>, approved, rejected, member+, member-
    gid text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS audit_team ON kenning.audit (team, at);

-- ---- schema 3: unpinning travels (kenning/team/sync.py). `unpinned` is an op; the layer of a memory resolves
-- last-writer-wins under the clock of the pin or unpin that set it (`layer_hlc`), whatever the arrival order.
DO $$ BEGIN
    -- Replaced once (checking the constraint reads the whole log), not on every run of init.
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'kenning.ops'::regclass AND conname = 'ops_kind_check'
                   AND pg_get_constraintdef(oid) LIKE '%unpinned%') THEN
        ALTER TABLE kenning.ops DROP CONSTRAINT IF EXISTS ops_kind_check;
        ALTER TABLE kenning.ops ADD CONSTRAINT ops_kind_check
            CHECK (kind IN ('created', 'superseded', 'edited', 'pinned', 'unpinned', 'forgotten'));
    END IF;
END $$;
ALTER TABLE kenning.memories ADD COLUMN IF NOT EXISTS layer_hlc text NOT NULL DEFAULT '';
-- ---- end of schema 3: unpinning

-- ---- schema 3: projects per member. NULL: every project of the team (as before); else only these
-- (normalised git remotes; an empty list: none). The audit log names the project of each row it can, so a
-- member restricted to some projects reads the audit of those only (older rows are filled in here).
ALTER TABLE kenning.members ADD COLUMN IF NOT EXISTS projects text[];
ALTER TABLE kenning.audit ADD COLUMN IF NOT EXISTS project text NOT NULL DEFAULT '';
UPDATE kenning.audit a SET project = m.project FROM kenning.memories m
    WHERE a.project = '' AND a.gid = m.gid AND a.team = m.team;
-- ---- end of schema 3: projects per member

-- Membership, asked with owner rights (members cannot list who else is in which team).
CREATE OR REPLACE FUNCTION kenning.is_member(t text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
    SELECT EXISTS (SELECT 1 FROM kenning.members m WHERE m.team = t AND m.role_name = session_user)
$$;

-- schema 3: may the session's role see and write rows of project ``p`` of team ``t``? (owner rights, like
-- is_member; a member with no project list sees every project of the team).
CREATE OR REPLACE FUNCTION kenning.may_see(t text, p text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
    SELECT EXISTS (SELECT 1 FROM kenning.members m WHERE m.team = t AND m.role_name = session_user
                   AND (m.projects IS NULL OR p = ANY (m.projects)))
$$;

CREATE OR REPLACE FUNCTION kenning.apply_op() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
DECLARE
    gone boolean;
    auto boolean;
    known text;
BEGIN
    -- Revisions of a team are taken in commit order: a transaction that changes the team's memories holds
    -- this lock until it commits, so a pull can never see a later revision while an earlier one is still
    -- uncommitted (its cursor would pass it and the memory would never reach that machine).
    PERFORM pg_advisory_xact_lock(hashtext('kenning.revisions:' || NEW.team));
    -- schema 3 (projects per member): an op names the project of the memory it touches, whatever it claims,
    -- so the row-level check that runs after this trigger (ops_append) judges the project really written.
    SELECT project, forgotten INTO known, gone FROM kenning.memories WHERE gid = NEW.gid AND team = NEW.team;
    IF known IS NOT NULL THEN
        NEW.project := known;
    END IF;
    IF NEW.kind = 'forgotten' THEN
        NEW.payload := NULL;
        UPDATE kenning.ops SET payload = NULL WHERE gid = NEW.gid AND team = NEW.team AND payload IS NOT NULL;
        INSERT INTO kenning.memories AS m (gid, team, project, author, hlc, forgotten)
            VALUES (NEW.gid, NEW.team, NEW.project, NEW.author, NEW.hlc, true)
        ON CONFLICT (gid) DO UPDATE SET title = NULL, body = NULL, forgotten = true,
            rev = nextval('kenning.revisions') WHERE m.team = NEW.team;
    ELSIF gone THEN
        NEW.payload := NULL;  -- nothing comes back after a tombstone
    ELSIF NEW.kind = 'created' THEN
        SELECT auto_approve INTO auto FROM kenning.teams WHERE name = NEW.team;
        INSERT INTO kenning.memories (gid, team, project, author, hlc, content_hash, layer, type, title, body,
                                      review, reviewer, reviewed_at)
            VALUES (NEW.gid, NEW.team, NEW.project, NEW.author, NEW.hlc, NEW.content_hash,
                    CASE WHEN NEW.payload->>'layer' = 'rule' THEN 'rule' ELSE 'key' END,
                    left(coalesce(NEW.payload->>'type', 'discovery'), 40),
                    NEW.payload->>'title', NEW.payload->>'text',
                    CASE WHEN auto THEN 'approved' ELSE 'pending' END,
                    CASE WHEN auto THEN 'automatic' ELSE '' END, CASE WHEN auto THEN now() END)
        ON CONFLICT (gid) DO NOTHING;
    ELSIF NEW.kind = 'superseded' THEN
        UPDATE kenning.memories SET superseded_by = NEW.payload->>'by', rev = nextval('kenning.revisions')
            WHERE gid = NEW.gid AND team = NEW.team AND (NEW.payload->>'by') ~ '^[0-9a-f]{8,32}:[0-9]{1,19}$';
    ELSIF NEW.kind IN ('pinned', 'unpinned') THEN
        -- schema 3 (unpinning): the later clock wins, whatever the order ops arrive in. The revision moves even
        -- when this op loses, so the machine that sent it pulls the memory again and follows the winner.
        UPDATE kenning.memories SET
            layer = CASE WHEN layer_hlc < NEW.hlc THEN CASE WHEN NEW.kind = 'pinned' THEN 'rule' ELSE 'key' END
                         ELSE layer END,
            layer_hlc = greatest(layer_hlc, NEW.hlc), rev = nextval('kenning.revisions')
            WHERE gid = NEW.gid AND team = NEW.team;
    ELSIF NEW.kind = 'edited' THEN  -- last writer wins under the clock; an edit is reviewed again
        SELECT auto_approve INTO auto FROM kenning.teams WHERE name = NEW.team;
        UPDATE kenning.memories SET title = NEW.payload->>'title', body = NEW.payload->>'text',
            content_hash = NEW.content_hash, hlc = NEW.hlc, rev = nextval('kenning.revisions'),
            review = CASE WHEN auto THEN 'approved' ELSE 'pending' END
            WHERE gid = NEW.gid AND team = NEW.team AND hlc < NEW.hlc;
        IF NOT FOUND THEN  -- schema 3: an edit that loses still moves the revision (see the pin above)
            UPDATE kenning.memories SET rev = nextval('kenning.revisions') WHERE gid = NEW.gid AND team = NEW.team;
        END IF;
    END IF;
    INSERT INTO kenning.audit (actor, team, action, gid, project)
        VALUES (NEW.author, NEW.team, 'write:' || NEW.kind, NEW.gid, NEW.project);
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS ops_apply ON kenning.ops;
CREATE TRIGGER ops_apply BEFORE INSERT ON kenning.ops FOR EACH ROW EXECUTE FUNCTION kenning.apply_op();

-- The memory ``g`` if the session's member may review it: a reviewer of its team who may see its project
-- (schema 3: a member restricted to other projects may not), not forgotten, not their own. Both review
-- functions call it, so neither can check less than the other.
CREATE OR REPLACE FUNCTION kenning.reviewable(g text) RETURNS kenning.memories
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
DECLARE
    m kenning.memories%ROWTYPE;
BEGIN
    SELECT * INTO m FROM kenning.memories WHERE gid = g;
    IF NOT FOUND OR NOT EXISTS (SELECT 1 FROM kenning.members WHERE team = m.team AND role_name = session_user
                                AND can_review)
            OR NOT kenning.may_see(m.team, m.project) THEN
        RAISE EXCEPTION 'no memory % to review in your teams', g;
    END IF;
    IF m.forgotten THEN
        RAISE EXCEPTION 'memory % was forgotten', g;
    END IF;
    IF m.author = session_user THEN
        RAISE EXCEPTION 'memory % is yours: a teammate reviews it', g;
    END IF;
    RETURN m;
END $$;
REVOKE ALL ON FUNCTION kenning.reviewable(text) FROM PUBLIC;

-- A reviewer approves or rejects a memory of their team; nobody reviews their own.
CREATE OR REPLACE FUNCTION kenning.review(g text, decision text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
DECLARE
    m kenning.memories%ROWTYPE;
BEGIN
    IF decision NOT IN ('approved', 'rejected') THEN
        RAISE EXCEPTION 'a review is approved or rejected, not %', decision;
    END IF;
    m := kenning.reviewable(g);
    PERFORM pg_advisory_xact_lock(hashtext('kenning.revisions:' || m.team));  -- see apply_op
    UPDATE kenning.memories SET review = decision, reviewer = session_user, reviewed_at = now(),
        rev = nextval('kenning.revisions') WHERE gid = g;
    INSERT INTO kenning.audit (team, action, gid, project) VALUES (m.team, decision, g, m.project);
    RETURN decision;
END $$;

-- Least privilege: members read their teams' rows and append operations; that is all.
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'kenning_member') THEN
        CREATE ROLE kenning_member NOLOGIN;
    END IF;
END $$;
REVOKE ALL ON ALL TABLES IN SCHEMA kenning FROM PUBLIC;
REVOKE ALL ON FUNCTION kenning.review(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION kenning.apply_op() FROM PUBLIC;
GRANT USAGE ON SCHEMA kenning TO kenning_member;
GRANT SELECT, INSERT ON kenning.ops TO kenning_member;
GRANT USAGE ON SEQUENCE kenning.ops_seq_seq TO kenning_member;
GRANT SELECT ON kenning.memories, kenning.audit, kenning.meta TO kenning_member;
GRANT SELECT ON kenning.teams TO kenning_member;
GRANT EXECUTE ON FUNCTION kenning.review(text, text), kenning.is_member(text) TO kenning_member;
REVOKE ALL ON FUNCTION kenning.may_see(text, text) FROM PUBLIC;  -- schema 3: projects per member
GRANT EXECUTE ON FUNCTION kenning.may_see(text, text) TO kenning_member;

ALTER TABLE kenning.ops ENABLE ROW LEVEL SECURITY;
ALTER TABLE kenning.memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE kenning.audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE kenning.teams ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS ops_read ON kenning.ops;
DROP POLICY IF EXISTS ops_append ON kenning.ops;
DROP POLICY IF EXISTS memories_read ON kenning.memories;
DROP POLICY IF EXISTS audit_read ON kenning.audit;
DROP POLICY IF EXISTS teams_read ON kenning.teams;
-- schema 3: rows are per team and project (may_see: a member restricted to some projects sees those only).
CREATE POLICY ops_read ON kenning.ops FOR SELECT USING (kenning.may_see(team, project));
-- The author is the role that writes: a row claiming someone else is refused. Checked after the trigger
-- (apply_op), which set the project to the one of the memory the op touches.
CREATE POLICY ops_append ON kenning.ops FOR INSERT WITH CHECK (kenning.may_see(team, project) AND author = session_user);
CREATE POLICY memories_read ON kenning.memories FOR SELECT USING (kenning.may_see(team, project));
-- A team-wide audit row (project ''; member+, member-) is read by whole-team members only.
CREATE POLICY audit_read ON kenning.audit FOR SELECT USING (kenning.may_see(team, project));
CREATE POLICY teams_read ON kenning.teams FOR SELECT USING (kenning.is_member(name));

-- ==== Schema 3: review with an edit (kenning.review_edited) ==============================================
-- A reviewer approves a waiting memory in their own wording. The edit is an `edited` op written as the
-- reviewer (author = session_user: the ops log and the audit log, through apply_op, say who edited what),
-- under a clock after the memory's own, then the approval: one transaction, so no pull sees the edit
-- without its approval. The client scanned the new text for secrets; the hub bounds it like a pull does.
-- An older hub gets this function when `kenning team init` runs this file again.
CREATE OR REPLACE FUNCTION kenning.review_edited(g text, new_title text, new_body text, clock text, dev text,
                                                 chash text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, kenning AS $$
DECLARE
    m kenning.memories%ROWTYPE;
BEGIN
    m := kenning.reviewable(g);
    IF m.review <> 'pending' THEN
        RAISE EXCEPTION 'memory % is not waiting for review (it is %)', g, m.review;
    END IF;
    IF length(btrim(coalesce(new_title, ''))) = 0 OR length(new_title) > 200 THEN
        RAISE EXCEPTION 'an edited title holds 1 to 200 characters';
    END IF;
    IF length(coalesce(new_body, '')) > 4000 THEN
        RAISE EXCEPTION 'an edited text holds at most 4000 characters';
    END IF;
    IF clock IS NULL OR clock <= m.hlc THEN
        RAISE EXCEPTION 'memory % changed since it was read: review it again', g;
    END IF;
    INSERT INTO kenning.ops (team, gid, kind, project, device, hlc, content_hash, payload)
        VALUES (m.team, g, 'edited', m.project, dev, clock, left(coalesce(chash, ''), 64),
                jsonb_build_object('title', new_title, 'text', coalesce(new_body, '')));
    -- apply_op took the team's revisions lock and applied the edit (its clock is the latest).
    UPDATE kenning.memories SET review = 'approved', reviewer = session_user, reviewed_at = now(),
        rev = nextval('kenning.revisions') WHERE gid = g AND hlc = clock AND NOT forgotten;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory % changed since it was read: review it again', g;
    END IF;
    INSERT INTO kenning.audit (team, action, gid, project) VALUES (m.team, 'approved', g, m.project);
    RETURN 'approved';
END $$;
REVOKE ALL ON FUNCTION kenning.review_edited(text, text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kenning.review_edited(text, text, text, text, text, text) TO kenning_member;
-- ==== end of schema 3: review with an edit ===============================================================
