-- Imported sessions whose folders are not on this machine carry no `.git` to follow and, from
-- Claude Code, no remote: whether two same-named checkouts are one repository is judged from what
-- their sessions did (kenning/store/checkouts.py). `checkout_evidence` keeps it per checkout (the
-- key its own path gives, before any alias): the files its sessions read or changed (relative to
-- the checkout), the commits and the branches they named. Written by `kenning import-history` in
-- the transactions that store the events; only read to decide joins.
CREATE TABLE checkout_evidence (
    checkout TEXT NOT NULL,
    kind TEXT NOT NULL,                 -- 'file' | 'commit' | 'branch'
    value TEXT NOT NULL,
    PRIMARY KEY (checkout, kind, value)
) WITHOUT ROWID;

-- Why a checkout's rows are filed under another project ('' for aliases made before this was
-- recorded), and when: `kenning doctor` and the import summary say which checkouts were joined.
ALTER TABLE project_aliases ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE project_aliases ADD COLUMN joined_at REAL;
