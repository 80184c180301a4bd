"""Repairing a database that cannot be read: set it aside, recover what SQLite can, start afresh.

1. The damaged file (with its ``-wal`` and ``-shm``) is *moved* aside, never deleted:
   ``kenning.db.damaged-<time>``.
2. What can be read is recovered: with the ``sqlite3`` command-line shell, its ``.recover``
   (reads the file page by page, past broken b-trees and even a broken header) rebuilds a
   copy; without it, the rows are salvaged table by table and row by row from the damaged
   file, skipping what cannot be read. A file cut short (SQLite refuses it: its header counts
   pages the file no longer has), or one nothing could be read from that way, is also read
   page by page by our own reader (kenning/store/pages.py): each table's b-tree from its root,
   every leaf page before the cut.
3. The newest good backup (kenning/store/backup.py), when there is one, gives back the rows the
   damaged file lost: only rows whose key is missing are added, as the backup holds them (what
   was read from the damaged file is newer and wins). The report counts them apart.
4. A fresh database (all migrations) gets every canonical row recovered; the search indexes
   and derived tables refill from them through the schema's own triggers. Rows whose parent
   did not survive (an observation of a lost session) are counted and left out.
5. The caller re-ingests the spool: events not yet saved are still there.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.store.db import open_db
from kenning.store.health import uri_path

MAX_ERRORS_PER_TABLE = 2000
RECOVER_TIMEOUT_S = 600


@dataclass
class Report:
    moved_to: str = ""
    method: str = ""
    saved: dict[str, int] = field(default_factory=dict)
    orphans: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    from_backup: dict[str, int] = field(default_factory=dict)
    backup: str = ""          # the backup rows were restored from ('' none)
    restored_ids: list[int] = field(default_factory=list)  # observations the backup gave back
    resuperseded: int = 0     # of them, marked superseded again by newer rows the damaged file kept
    pages_lost: int = 0       # pages a table's b-tree points at that the file no longer has (or that do not parse)

    def as_dict(self) -> dict[str, Any]:
        return {"moved_to": self.moved_to, "method": self.method, "saved": self.saved, "orphans": self.orphans,
                "unreadable": self.unreadable, "problems": self.problems, "from_backup": self.from_backup,
                "backup": self.backup, "pages_lost": self.pages_lost, "resuperseded": self.resuperseded}


def move_aside(db: str, now: float | None = None) -> str:
    """Rename ``db`` and its ``-wal``/``-shm`` to ``<db>.damaged-<time>``; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    dest = f"{db}.damaged-{stamp}"
    n = 1
    while os.path.exists(dest):
        n += 1
        dest = f"{db}.damaged-{stamp}-{n}"
    for suffix in ("-wal", "-shm"):  # first, so the main file never stands without its WAL
        if os.path.exists(db + suffix):
            os.rename(db + suffix, dest + suffix)
    os.rename(db, dest)
    return dest


def recover(damaged: str, db: str, *, use_cli: bool = True, backup: str | None = None) -> Report:
    """Build a fresh database at ``db`` from what ``damaged`` still holds, and what ``backup`` (a
    good backup's path) holds that it lost."""
    report = Report(moved_to=damaged)
    work = f"{db}.repair-{os.getpid()}"
    for p in (work, work + "-wal", work + "-shm"):
        if os.path.exists(p):
            os.unlink(p)
    source_path = damaged
    recovered = f"{db}.recovered-{os.getpid()}"
    cli = shutil.which("sqlite3") if use_cli else None
    if cli and _cli_recover(cli, damaged, recovered, report):
        source_path, report.method = recovered, "sqlite3 .recover"
    else:
        report.method = "row by row"
    try:
        dest = open_db(work)
        try:
            src = sqlite3.connect(f"file:{uri_path(source_path)}?mode=ro", uri=True, isolation_level=None)
            try:
                _copy_all(src, dest, report, damaged, backup)
            finally:
                src.close()
            check = dest.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"the rebuilt database failed its integrity check: {check}")
            dest.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            dest.close()
        for suffix in ("-wal", "-shm"):
            if os.path.exists(work + suffix):
                os.unlink(work + suffix)
        os.replace(work, db)
    finally:
        for p in (recovered, recovered + "-wal", recovered + "-shm", work, work + "-wal", work + "-shm"):
            if os.path.exists(p):
                os.unlink(p)
    return report


def _cli_recover(cli: str, damaged: str, out: str, report: Report) -> bool:
    """``sqlite3 damaged .recover | sqlite3 out``; False when the shell cannot do it."""
    for p in (out, out + "-wal", out + "-shm"):
        if os.path.exists(p):
            os.unlink(p)
    try:
        dump = subprocess.Popen([cli, "-readonly", damaged, ".recover"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        load = subprocess.run([cli, out], stdin=dump.stdout, capture_output=True, timeout=RECOVER_TIMEOUT_S)
        assert dump.stdout is not None
        dump.stdout.close()
        dump_err = dump.communicate(timeout=RECOVER_TIMEOUT_S)[1]
    except (OSError, subprocess.SubprocessError) as e:
        report.problems.append(f"the sqlite3 shell's .recover could not run ({e}); salvaged without it")
        return False
    if dump.returncode != 0 or not os.path.exists(out):
        report.problems.append("the sqlite3 shell's .recover could not read it ("
                               + dump_err.decode("utf-8", "replace").strip()[:300] + "); salvaged without it")
        return False
    if load.returncode != 0:  # some statements of the recovered script failed; what loaded is still usable
        report.problems.append("sqlite3 .recover: " + load.stderr.decode("utf-8", "replace").strip()[:300])
    return True


def _tables(conn: sqlite3.Connection) -> list[str]:
    """The canonical tables of a fresh database, parents before children: not FTS, not FTS shadows,
    not derived by triggers, not the migration log."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [r[0] for r in rows if (r[1] or "").upper().startswith("CREATE VIRTUAL TABLE")]
    derived = {"observation_files", "observation_concepts", "search_scope_rows", "search_terms", "observation_subjects",
               "schema_migrations"}
    names = [r[0] for r in rows if r[0] not in virtual and r[0] not in derived and not r[0].startswith("sqlite_")
             and not any(r[0].startswith(v + "_") for v in virtual)]
    parents = {n: {str(fk[2]) for fk in conn.execute(f'PRAGMA foreign_key_list("{n}")')} & set(names) - {n}
               for n in names}
    ordered: list[str] = []
    while parents:
        ready = sorted(n for n, p in parents.items() if p <= set(ordered)) or sorted(parents)[:1]
        for n in ready:
            ordered.append(n)
            parents.pop(n)
    return ordered


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    try:
        return [str(r[1]) for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]
    except sqlite3.DatabaseError:
        return []


def _copy_all(src: sqlite3.Connection, dest: sqlite3.Connection, report: Report, damaged: str = "",
              backup: str | None = None) -> None:
    dest.execute("PRAGMA foreign_keys = OFF")  # parents may be lost: orphans are dropped after the copy
    dest.execute("BEGIN IMMEDIATE")
    try:
        tables = _tables(dest)
        cut = bool(damaged) and _cut_short(damaged)
        for table in tables if not (cut and src_is(src, damaged)) else ():  # SQLite refuses a cut file: pages only
            want = _columns(dest, "main", table)
            have = set(_columns(src, "main", table))
            cols = [c for c in want if c in have]
            if not cols:
                continue
            saved, bad = _salvage(src, dest, table, cols)
            report.saved[table] = saved
            if bad:
                report.unreadable[table] = bad
        if damaged and (cut or not any(report.saved.values())):
            _copy_pages(damaged, dest, tables, report)
        if backup:
            _copy_backup(backup, dest, tables, report)
        dest.execute("COMMIT")
    except BaseException:
        dest.execute("ROLLBACK")
        raise
    orphans: dict[str, set[int]] = {}
    for table, rowid, _parent, _fk in dest.execute("PRAGMA foreign_key_check").fetchall():
        orphans.setdefault(str(table), set()).add(int(rowid))
    if orphans:
        dest.execute("BEGIN IMMEDIATE")
        for table, ids in orphans.items():
            dest.executemany(f'DELETE FROM "{table}" WHERE rowid = ?', [(i,) for i in ids])
            report.orphans[table] = len(ids)
            from_file = min(len(ids), report.saved.get(table, 0))  # which source an orphan came from is not kept
            report.saved[table] = report.saved.get(table, 0) - from_file
            if len(ids) > from_file:
                report.from_backup[table] = report.from_backup.get(table, 0) - (len(ids) - from_file)
        dest.execute("COMMIT")
    dest.execute("PRAGMA foreign_keys = ON")
    # Subjects and duplicate groups are derived: computed afresh for the rows that came back, from
    # wherever they came (the user's pins and demotions are kept by the rebuild).
    from kenning.store import memory_index

    dest.execute("BEGIN IMMEDIATE")
    try:
        memory_index.rebuild(dest)
        if report.restored_ids and backup:
            # A row the backup gave back may have been superseded after the backup by a row the damaged
            # file kept: that mark was on the lost row. The offline rule is asked again between the two.
            from kenning.store import supersede

            taken = os.path.getmtime(backup)
            newer = [int(r[0]) for r in dest.execute("SELECT id FROM observations WHERE recorded_at > ?", (taken,))]
            report.resuperseded = len({old for old, _new in supersede.among(dest, report.restored_ids, newer)})
        dest.execute("COMMIT")
    except BaseException:
        dest.execute("ROLLBACK")
        raise


def src_is(conn: sqlite3.Connection, path: str) -> bool:
    """Whether ``conn`` reads the file at ``path`` (not the sqlite3 shell's recovered copy of it)."""
    return any(os.path.realpath(str(r[2])) == os.path.realpath(path) for r in conn.execute("PRAGMA database_list")
               if r[1] == "main")


def _cut_short(path: str) -> bool:
    """Whether the file ends before the pages its header counts (a file cut at some byte)."""
    from kenning.store.pages import PageFile, Unreadable

    try:
        pf = PageFile(path)
    except (Unreadable, OSError):
        return True
    pf.close()
    return pf.header_pages > pf.pages or pf.size % pf.page_size != 0


def _copy_pages(damaged: str, dest: sqlite3.Connection, tables: list[str], report: Report) -> None:
    """The rows our page reader finds in ``damaged`` that SQLite could not give (INSERT OR IGNORE)."""
    from kenning.store import pages

    try:
        found, tally = pages.read_tables(damaged, tables)
    except (pages.Unreadable, OSError) as e:
        report.problems.append(f"page by page: {e}")
        return
    report.method = "page by page" if report.method == "row by row" and not any(report.saved.values()) \
        else report.method + " + page by page"
    report.pages_lost = tally.lost_pages
    report.problems.extend(tally.problems)
    if tally.lost_cells:
        report.problems.append(f"{tally.lost_cells} row(s) on readable pages could not be decoded (a long value "
                               "continued on a lost page)")
    for table in tables:
        want = set(_columns(dest, "main", table))
        added = 0
        for row in found.get(table, []):
            cols = [c for c in row if c in want]
            names = ", ".join(f'"{c}"' for c in cols)
            try:
                cur = dest.execute(f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(cols))})',
                                   [row[c] for c in cols])
                added += cur.rowcount
            except sqlite3.Error:
                report.unreadable[table] = report.unreadable.get(table, 0) + 1
        if added:
            report.saved[table] = report.saved.get(table, 0) + added


def _copy_backup(backup: str, dest: sqlite3.Connection, tables: list[str], report: Report) -> None:
    """Rows of the backup whose key the recovered rows lack: what the damage took, as it was then."""
    try:
        src = sqlite3.connect(f"file:{uri_path(backup)}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        report.problems.append(f"the backup {backup} cannot be opened ({e})")
        return
    try:
        report.backup = backup
        for table in tables:
            want = _columns(dest, "main", table)
            have = set(_columns(src, "main", table))
            cols = [c for c in want if c in have]
            if not cols:
                continue
            before = dest.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
            known = {int(r[0]) for r in dest.execute("SELECT id FROM observations")} if table == "observations" \
                else set()
            _salvage(src, dest, table, cols)
            added = dest.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] - before
            if table == "observations" and added:
                report.restored_ids = sorted({int(r[0]) for r in dest.execute("SELECT id FROM observations")} - known)
            if added:
                report.from_backup[table] = added
    finally:
        src.close()


def _salvage(src: sqlite3.Connection, dest: sqlite3.Connection, table: str, cols: list[str]) -> tuple[int, int]:
    """Copy readable rows in rowid order, stepping over what cannot be read; (saved, read errors)."""
    names = ", ".join(f'"{c}"' for c in cols)
    insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(cols))})'
    if _without_rowid(dest, table):  # no rowid to step by: read in one pass, as far as it goes
        saved = 0
        try:
            for row in src.execute(f'SELECT {names} FROM "{table}"'):
                try:
                    dest.execute(insert, tuple(row))
                    saved += 1
                except sqlite3.Error:
                    pass
        except sqlite3.DatabaseError:
            return saved, 1
        return saved, 0
    select = f'SELECT rowid, {names} FROM "{table}" WHERE rowid > ? ORDER BY rowid'
    last, saved, errors, skip = -(2**63), 0, 0, 1
    while errors < MAX_ERRORS_PER_TABLE:
        try:
            for row in src.execute(select, (last,)):
                last = int(row[0])
                try:
                    dest.execute(insert, tuple(row[1:]))
                    saved += 1
                except sqlite3.Error:  # a value the new schema refuses: count it as unreadable
                    errors += 1
                skip = 1
            return saved, errors
        except sqlite3.DatabaseError:
            errors += 1
            if last == -(2**63):
                last = 0
            last += skip  # step over the broken page, further each time it persists
            skip = min(skip * 4, 1 << 20)
    return saved, errors


def _without_rowid(conn: sqlite3.Connection, table: str) -> bool:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return bool(row) and "WITHOUT ROWID" in " ".join(str(row[0] or "").upper().split())
