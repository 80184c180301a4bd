"""File history on Read: what earlier sessions did with the file the agent is about to read.

PreToolUse(Read) of any file: the standing rules of the project that name it ("never edit
src/gen/*.pb.go by hand, run make proto"), whatever its size or age. Of a file of at least
``file_context_min_bytes``: the observations that touched it (its absolute or
project-relative path, looked up in ``observation_files``), one per session, ranked by
specificity (changed the file +2; touches ≤ 3 files +2, ≤ 8 +1; then newest), the top
``file_context_limit``, as compact ``#id date icon title`` rows; only heads of
near-duplicate groups, and routine work no older than ``archive_after_days``. The notes are
not given when the file changed on disk after the newest of them (they may be stale).
Nothing is said a second time for the same file in the same session unless something
newer exists.

Standard library only and import-light: the hook runs this on every large Read. It talks
to SQLite through ``_sqlite3`` (``sqlite3`` drags in ``datetime``: ~3 ms more per process).
"""

from __future__ import annotations

import os
import time

from kenning.context.fence import CLOSE, OPEN, wrap  # noqa: F401 - CLOSE: part of this module's face
from kenning.project import resolve_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from collections.abc import Sequence
    from typing import Any

    from kenning.paths import Paths
    from kenning.settings import Settings

# The `code` mode's icons, so the hook needs no JSON mode file for the default mode
# (tests/unit/test_file_history.py checks they match code.json).
CODE_ICONS = {"bugfix": "🔴", "feature": "🟣", "refactor": "🔄", "change": "✅", "discovery": "🔵",
              "decision": "⚖️", "security_alert": "🚨", "security_note": "🔐", "sensitive": "🔒"}
FALLBACK_ICON = "•"
MODIFIED_MARK = "✎"
# Event timestamps and file mtimes come from the same clock, but an observation may carry a
# rounded time (imports, LLM observers): a change within this slack is not "after" it.
MTIME_SLACK_S = 2.0
# Newest matching observations considered at most (per spelling of the path): bounds the work
# for a file that thousands of observations touched (the ranking then prefers recent sessions).
CANDIDATE_CAP = 500
TITLE_CHARS = 160
SEEN_DIR = "file-context"
SEEN_TTL_S = 7 * 86400


class Touch:
    """One observation that touched the file."""

    __slots__ = ("created_at", "id", "modified", "n_files", "project", "session_id", "title", "type")

    def __init__(self, id: int, session_id: int, project: str, type: str, title: str, created_at: float,
                 modified: bool, n_files: int) -> None:
        self.id = id
        self.session_id = session_id
        self.project = project
        self.type = type
        self.title = title
        self.created_at = created_at
        self.modified = modified
        self.n_files = n_files

    @property
    def score(self) -> int:
        """Specificity: an observation that changed this file, among few, is about this file."""
        s = 2 if self.modified else 0
        if self.n_files <= 3:
            s += 2
        elif self.n_files <= 8:
            s += 1
        return s

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session_id": self.session_id, "project": self.project, "type": self.type,
                "title": self.title, "created_at": self.created_at, "modified": self.modified,
                "n_files": self.n_files, "score": self.score}


# ------------------------------------------------------------------------------ paths

def resolve(file_path: str, cwd: str) -> str:
    """The absolute, normalised path the agent reads (relative paths are relative to cwd)."""
    p = os.path.expanduser(file_path)
    if not os.path.isabs(p):
        p = os.path.join(cwd or os.getcwd(), p)
    return os.path.normpath(p)


def stored_forms(abs_path: str, root: str) -> list[str]:
    """Every form under which observations may have stored this file.

    Observers store paths relative to the project root (a realpath) when the file is inside
    it, else as given: look up the path as given, its realpath, and both relative to the root.
    """
    forms: list[str] = []
    try:
        real = os.path.realpath(abs_path)
    except (OSError, ValueError):
        real = abs_path
    base = root.rstrip("/") + "/" if root else ""
    for p in dict.fromkeys((abs_path, real)):
        forms.append(p)
        if base and p.startswith(base):
            forms.append(p[len(base):])
    return list(dict.fromkeys(forms))


def display_path(abs_path: str, root: str) -> str:
    for base in dict.fromkeys((root, _real(root))):
        if base and abs_path.startswith(base.rstrip("/") + "/"):
            return abs_path[len(base.rstrip("/")) + 1:]
    real = _real(abs_path)
    if root and real.startswith(_real(root).rstrip("/") + "/"):
        return real[len(_real(root).rstrip("/")) + 1:]
    return abs_path


def _real(p: str) -> str:
    try:
        return os.path.realpath(p) if p else p
    except (OSError, ValueError):
        return p


# ------------------------------------------------------------------------------ query

def touches(conn: Any, forms: Sequence[str], project: str) -> list[Touch]:
    """Active observations of ``project`` that touched any of ``forms`` (the newest CANDIDATE_CAP per form).

    Only this project's rows, whatever the form: another repository's notes on a file of the
    same path (or on this very file, read from there) are that repository's memory.
    Titles are left empty here: :func:`with_titles` reads them for the few rows shown.
    """
    if not forms:
        return []
    # Per form, one range of the (path, project, observation_id) key read backwards: newest first
    # with no sort, stopping after CANDIDATE_CAP rows (ids grow with time; a few forms, most empty).
    by_id: dict[int, Touch] = {}
    for form in forms:
        rows = conn.execute(
            "SELECT observation_id, session_id, project, type, created_at, modified, n_files FROM observation_files "
            "WHERE path = ? AND project = ? AND status = 'active' ORDER BY observation_id DESC LIMIT ?",
            (form, project, CANDIDATE_CAP)).fetchall()
        for r in rows:
            t = by_id.get(r[0])
            if t is None:
                by_id[r[0]] = Touch(int(r[0]), int(r[1]), str(r[2]), str(r[3]), "", float(r[4]), bool(r[5]),
                                    int(r[6] or 0))
            elif r[5]:
                t.modified = True  # stored under two spellings of the path; one of them as changed
    return list(by_id.values())


def current(conn: Any, found: list[Touch], archive_before: float) -> list[Touch]:
    """Without near-duplicates of other rows (their group's head stands for them) and archived routine work."""
    if not found:
        return found
    keep: set[int] = set()
    ids = [t.id for t in found]
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        for oid, layer, dup, created in conn.execute(
                "SELECT id, layer, duplicate_of, created_at FROM observations "
                f"WHERE id IN ({','.join('?' * len(chunk))})", tuple(chunk)):
            if dup is None and not (layer == "log" and created < archive_before):
                keep.add(int(oid))
    return [t for t in found if t.id in keep]


class Rule:
    """A standing rule of the project that names the file being read."""

    __slots__ = ("id", "title", "type")

    def __init__(self, id: int, type: str, title: str) -> None:
        self.id = id
        self.type = type
        self.title = title


# A file subject that may be stored unnormalised (a space or ``./`` around it) or is a glob: only
# names_file can tell whether it covers a path, so SQL hands it over. Every other file subject is
# the exact name names_file compares (see exact_names).
_LOOSE_SUBJECT = ("NOT (substr(subject, 6, 1) GLOB '[A-Za-z0-9_]' AND substr(subject, -1, 1) GLOB '[A-Za-z0-9_/]') "
                  "OR instr(subject, '*') OR instr(subject, '?') OR instr(subject, '[')")
EXACT_NAMES_CAP = 400  # a path this deep (26 folders or more: 400 names) has every subject checked, as before
LOOSE_INDEX = "observation_subjects_loose"  # migration 0023: the loose file subjects alone


def _has_loose_index(conn: Any) -> bool:
    """Whether the file has migration 0023's index (a hook may read a file the worker has not
    migrated yet); the schema is parsed already, so this costs microseconds."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?",
                        (LOOSE_INDEX,)).fetchone() is not None


def rules_for(conn: Any, project: str, rel_path: str) -> list[Rule]:
    """Active standing rules whose subjects name ``rel_path``: the file, a folder it is in, a glob it matches.

    Of the project's 300 newest rules, in the order of their ids. SQL keeps only the subjects that
    can name the file (one of its exact names, or a loose one for names_file to judge) and the rows
    are read for the rules that name it: a Read must not cost a row per file subject of every rule.
    The exact names are looked up by the primary key and the loose subjects in their own partial
    index (migration 0023), so nothing else is read either; an older file is filtered as before.
    """
    if not rel_path:
        return []
    names = exact_names(rel_path)
    rules = ("SELECT id FROM observations WHERE project = ? AND layer = 'rule' AND status = 'active' "
             "AND duplicate_of IS NULL ORDER BY created_at DESC LIMIT 300")
    files = "subject >= 'file:' AND subject < 'file;'"
    params: tuple[str, ...]
    if len(names) > EXACT_NAMES_CAP:
        sql = (f"SELECT observation_id, subject FROM observation_subjects WHERE observation_id IN ({rules}) "
               f"AND {files} ORDER BY observation_id")
        params = (project,)
    elif _has_loose_index(conn):
        marks = ",".join("?" * len(names))
        sql = (f"WITH rules (id) AS MATERIALIZED ({rules}) "
               f"SELECT observation_id, subject FROM observation_subjects WHERE project = ? AND subject IN ({marks}) "
               "AND +observation_id IN rules UNION "
               f"SELECT observation_id, subject FROM observation_subjects WHERE project = ? AND {files} "
               f"AND ({_LOOSE_SUBJECT}) AND +observation_id IN rules ORDER BY 1")
        params = (project, project, *("file:" + n for n in names), project)
    else:
        sql = (f"SELECT observation_id, subject FROM observation_subjects WHERE observation_id IN ({rules}) "
               f"AND {files} AND (subject IN ({','.join('?' * len(names))}) OR {_LOOSE_SUBJECT}) "
               "ORDER BY observation_id")
        params = (project, *("file:" + n for n in names))
    ids: list[int] = []
    for oid, subject in conn.execute(sql, params):
        if (not ids or ids[-1] != int(oid)) and names_file(str(subject)[5:], rel_path):
            ids.append(int(oid))
    if not ids:
        return []
    rows = {int(r[0]): r for r in conn.execute(
        f"SELECT id, type, title FROM observations WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))}
    return [Rule(i, str(rows[i][1]), str(rows[i][2] or "")) for i in ids if i in rows]


def exact_names(rel_path: str) -> set[str]:
    """Every name without a glob, space or leading ``./`` for which names_file(name, rel_path) holds:
    the path, its tails after a ``/`` (``b/c.py``, ``c.py``), its folders (``a``, ``a/b``) and
    every run of whole segments ending in ``/`` (``a/``, ``b/``, ``a/b/``)."""
    slashes = [i for i, c in enumerate(rel_path) if c == "/"]
    starts = [0] + [i + 1 for i in slashes]
    names = {rel_path}
    names.update(rel_path[s:] for s in starts[1:])
    names.update(rel_path[:k] for k in slashes)
    names.update(rel_path[s:k + 1] for s in starts for k in slashes if k >= s)
    names.discard("")
    return names


def names_file(named: str, rel_path: str) -> bool:
    """Whether a path a rule names (``src/gen/``, ``*.pb.go``, ``api.pb.go``) covers ``rel_path``."""
    named = named.strip().lstrip("./")
    if not named:
        return False
    base = rel_path.rsplit("/", 1)[-1]
    if any(c in named for c in "*?["):
        from fnmatch import fnmatchcase  # re: only when a rule names a glob

        return fnmatchcase(rel_path, named) or fnmatchcase(base, named) or fnmatchcase(rel_path, "*/" + named)
    if named.endswith("/"):
        return rel_path.startswith(named) or ("/" + named) in ("/" + rel_path)
    return rel_path == named or rel_path.endswith("/" + named) or (rel_path + "/").startswith(named + "/")


def with_titles(conn: Any, picked: Sequence[Touch]) -> None:
    """Fill in the titles of the rows to show (a primary-key read each)."""
    if not picked:
        return
    marks = ",".join("?" * len(picked))
    titles = dict(conn.execute(f"SELECT id, title FROM observations WHERE id IN ({marks})",
                               tuple(t.id for t in picked)).fetchall())
    for t in picked:
        t.title = str(titles.get(t.id) or "")


def pick(found: Sequence[Touch], limit: int) -> list[Touch]:
    """One observation per session (its most specific, then newest), the best ``limit`` sessions."""
    best: dict[int, Touch] = {}
    for t in found:
        cur = best.get(t.session_id)
        if cur is None or (t.score, t.created_at, t.id) > (cur.score, cur.created_at, cur.id):
            best[t.session_id] = t
    ranked = sorted(best.values(), key=lambda t: (t.score, t.created_at, t.id), reverse=True)
    return ranked[:max(0, limit)]


# ----------------------------------------------------------------------------- render

def render(shown_path: str, picked: Sequence[Touch], sessions: int, icons: dict[str, str],
           rules: Sequence[Rule] = ()) -> str:
    """The rules about the file, then compact rows oldest first, inside the marker that keeps them
    from being captured again."""
    rows = sorted(picked, key=lambda t: (t.created_at, t.id))
    lines = [OPEN]
    if rules:
        lines.append(f"Kenning: standing rules of this project about {shown_path} (follow them):")
        lines += [f"#{r.id} {icons.get(r.type, FALLBACK_ICON)} {_one_line(r.title)}" for r in rules]
    if not rows:
        lines.append("Full record of a row: `kenning show <ID>` or the get_observations tool.")
        return wrap("\n".join(lines[1:]))  # rule titles are stored text: neutralised
    lines.append(f"Kenning: earlier sessions' notes on {shown_path} (oldest first; {MODIFIED_MARK} = "
                 f"that session changed the file).")
    for t in rows:
        day = time.strftime("%Y-%m-%d", time.localtime(t.created_at))
        mark = f" {MODIFIED_MARK}" if t.modified else ""
        lines.append(f"#{t.id} {day} {icons.get(t.type, FALLBACK_ICON)} {_one_line(t.title)}{mark}")
    if sessions > len(rows):
        lines.append(f"These are the {len(rows)} most specific of {sessions} sessions that touched it.")
    lines.append("Full record of a row: `kenning show <ID>` or the get_observations tool.")
    return wrap("\n".join(lines[1:]))  # titles and the path are stored text: neutralised


def _one_line(title: str) -> str:
    s = " ".join(title.split())
    return s if len(s) <= TITLE_CHARS else s[:TITLE_CHARS - 1] + "…"


def icons_for(settings: Settings, modes_dir: str | None) -> dict[str, str]:
    """Type icons of the configured mode; the default mode needs no file read."""
    if settings.mode == "code" and not (modes_dir and os.path.exists(os.path.join(modes_dir, "code.json"))):
        return CODE_ICONS
    from kenning.observer.modes import load_mode, type_icons

    return type_icons(load_mode(settings.mode, modes_dir)) or CODE_ICONS


# ------------------------------------------------------------------------------ build

class History:
    """What the lookup found for one file."""

    __slots__ = ("found", "mark", "newest", "picked", "rules", "sessions", "shown_path")

    def __init__(self, shown_path: str, found: list[Touch], limit: int, rules: list[Rule] | None = None) -> None:
        self.shown_path = shown_path
        self.found = found
        self.rules = rules or []
        self.picked = pick(found, limit)
        self.sessions = len({t.session_id for t in found})
        self.newest = max((t.created_at for t in found), default=0.0)
        # ids only grow: a larger one is newer
        self.mark = max([t.id for t in found] + [r.id for r in self.rules], default=0)

    def stale(self, mtime: float) -> bool:
        """True when the file changed on disk after the newest note about it."""
        return bool(self.found) and mtime > self.newest + MTIME_SLACK_S

    def without_notes(self) -> None:
        """Keep only the rules (a small file, or notes older than the file)."""
        self.found, self.picked, self.sessions = [], [], 0

    def text(self, icons: dict[str, str]) -> str:
        if not (self.picked or self.rules):
            return ""
        return render(self.shown_path, self.picked, self.sessions, icons, self.rules)


def lookup(conn: Any, settings: Settings, abs_path: str, project: str, root: str) -> History:
    """``project`` is the project's key (kenning.project), resolved here through its aliases."""
    key = resolve_key(conn, project)
    forms = stored_forms(abs_path, root)
    archive = time.time() - settings.archive_after_days * 86400 if settings.archive_after_days else 0.0
    found = current(conn, touches(conn, forms, key), archive)
    shown = display_path(abs_path, root)
    history = History(shown, found, settings.file_context_limit, rules_for(conn, key, shown))
    with_titles(conn, history.picked)
    from kenning.context.evidence_marks import mark_titles  # gone evidence noted (docs/memory.md)

    mark_titles(conn, root, [*history.picked, *history.rules], settings, TITLE_CHARS)
    return history


def connect_readonly(db_path: str, deadline: float) -> Any:
    """A read-only connection whose statements are interrupted once ``deadline`` (monotonic) passes."""
    try:
        import _sqlite3 as sqlite  # the C module: no datetime/collections.abc import
        connect = sqlite.connect
    except (ImportError, AttributeError):  # pragma: no cover - other interpreters
        import sqlite3 as sqlite  # type: ignore[no-redef]
        connect = sqlite.connect
    from kenning.store.identity import verify

    path = db_path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    left = max(0.01, deadline - time.monotonic())
    conn = connect(f"file:{path}?mode=ro", uri=True, timeout=left, isolation_level=None,
                   check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(left * 1000)}")
    try:
        verify(conn, db_path)  # ForeignDatabase: the hook logs it and the Read goes on without history
    except BaseException:
        conn.close()
        raise
    # Runs every 1000 VM steps: a non-zero answer aborts the statement ("interrupted").
    conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    return conn


# ------------------------------------------------------------------ per-session state

class Seen:
    """Which files a session was already told about, and up to which observation.

    One append-only file per session (``<data>/file-context/<session>``), lines
    ``<mark>\\t<path>``: appends of a short line are atomic, so parallel Reads in one session
    never corrupt it. Files untouched for a week are pruned when a new session starts one.
    """

    def __init__(self, root: str, key: str) -> None:
        self.dir = os.path.join(root, SEEN_DIR)
        self.path = os.path.join(self.dir, key)

    def mark(self, file_key: str) -> int:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                data = fh.read()
        except OSError:
            return 0
        best = 0
        for line in data.splitlines():
            head, _, path = line.partition("\t")
            mark = head.partition(" ")[0]  # after a space: what was told (read back by the worker's ledger)
            if path == file_key and mark.isdigit():
                best = max(best, int(mark))
        return best

    def record(self, file_key: str, mark: int, told: str = "") -> None:
        """``told``: one line of JSON (no tab, no newline) naming what was shown, for the worker's ledger."""
        line = (f"{mark} {told}\t{file_key}\n" if told else f"{mark}\t{file_key}\n").encode("utf-8", "replace")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
            fresh = True
        except FileExistsError:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND, 0o600)
            fresh = False
        except FileNotFoundError:
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            fresh = True
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        if fresh:
            self.prune()

    def prune(self, now: float | None = None) -> int:
        cutoff = (time.time() if now is None else now) - SEEN_TTL_S
        removed = 0
        try:
            names = os.listdir(self.dir)
        except OSError:
            return 0
        for name in names:
            p = os.path.join(self.dir, name)
            try:
                if os.stat(p).st_mtime < cutoff:
                    os.unlink(p)
                    removed += 1
            except OSError:
                continue
        return removed


def for_read(paths: Paths, settings: Settings, file_path: str, cwd: str, project: str, root: str,
             session_key: str | None, *, budget_s: float | None = None,
             session: tuple[str, str] = ("", "")) -> str | None:
    """The additionalContext for a Read of ``file_path``, or None when there is nothing to say.

    ``session`` (the agent's session id, its agent): written with the "already told" line, so the worker
    can put this handing in its ledger (the hook itself never writes the database)."""
    deadline = time.monotonic() + (settings.file_context_timeout_ms / 1000 if budget_s is None else budget_s)
    abs_path = resolve(file_path, cwd)
    try:
        st = os.stat(abs_path)
    except (OSError, ValueError):
        return None  # missing: the Read itself will say so
    if (st.st_mode & 0o170000) != 0o100000:
        return None  # directories, devices: nothing to say
    if not os.path.exists(paths.db):
        return None
    conn = connect_readonly(paths.db, deadline)
    try:
        history = lookup(conn, settings, abs_path, project, root)
    except Exception as e:
        if "no such table" in str(e) or "no such column" in str(e):
            return None  # a database the worker has not migrated yet: no history to give
        raise
    finally:
        conn.close()
    if st.st_size < settings.file_context_min_bytes or history.stale(st.st_mtime):
        history.without_notes()  # small files are not worth the tokens; stale notes may mislead
    if not (history.picked or history.rules):
        return None
    seen = Seen(paths.root, session_key) if session_key else None
    file_key = _real(abs_path)
    if seen is not None and seen.mark(file_key) >= history.mark:
        return None  # told already in this session, and nothing newer since
    text = history.text(icons_for(settings, paths.modes))
    if seen is not None:
        try:
            seen.record(file_key, history.mark, told(history, text, project, session) if session[0] else "")
        except OSError:
            pass  # worst case the same history is given again
    return text


def told(history: History, text: str, project: str, session: tuple[str, str]) -> str:
    """What a Read was told, as one line of JSON: when, to which session, the rules and notes shown
    (with the characters of each row) and the rows that changed the file (kenning/worker/given.py)."""
    from kenning import fastjson

    chars = [[int(ln[1:].partition(" ")[0]), len(ln)] for ln in text.splitlines()
             if ln.startswith("#") and ln[1:].partition(" ")[0].isdigit()]
    return fastjson.dumps({"at": round(time.time(), 3), "s": session[0], "a": session[1], "k": project,
                           "f": history.shown_path, "r": [r.id for r in history.rules],
                           "n": [t.id for t in history.picked], "m": [t.id for t in history.picked if t.modified],
                           "c": chars})
