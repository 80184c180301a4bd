"""Search filters as SQL ``WHERE`` fragments, one builder per kind of row.

Every value is a bound parameter. The three kinds carry different columns: only
observations have a type, concepts and a status; prompts get their project from the
session; summaries and observations list the files they touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KINDS = ("observation", "summary", "prompt")
MAX_FILTER_VALUES = 50


@dataclass(frozen=True)
class Filters:
    project: str | None = None
    types: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    session: int | None = None
    include_inactive: bool = False
    hide_sensitive: bool = False  # also when scoped by project (a timeline nobody scoped)
    agent: str | None = None  # the coding agent whose session recorded the row (sessions.platform)

    def kind_allowed(self, kind: str) -> bool:
        """Whether rows of ``kind`` can satisfy these filters at all."""
        if self.types and kind != "observation" and kind not in self.types:
            return False
        if self.types and kind == "observation" and not self.observation_types():
            return False
        if self.concepts and kind != "observation":
            return False
        return not (self.files and kind == "prompt")

    def observation_types(self) -> tuple[str, ...]:
        return tuple(t for t in self.types if t not in ("summary", "prompt"))


def make(project: str | None = None, types: Sequence[str] | None = None, concepts: Sequence[str] | None = None,
         files: Sequence[str] | None = None, since: float | None = None, until: float | None = None,
         session: int | None = None, include_inactive: bool = False, agent: str | None = None) -> Filters:
    """Normalised filters: empty strings dropped, lists bounded."""
    def norm(values: Sequence[str] | None) -> tuple[str, ...]:
        if not values:
            return ()
        if isinstance(values, str):
            values = [values]
        return tuple(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))[
            :MAX_FILTER_VALUES]

    return Filters(project=(project or None), types=norm(types), concepts=norm(concepts),
                   files=tuple(_norm_path(f) for f in norm(files)), since=since, until=until, session=session,
                   include_inactive=include_inactive, agent=(agent or None))


def _norm_path(p: str) -> str:
    p = p.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.rstrip("/") or p


def _suffixes(path: str) -> list[str]:
    """``/a/b/c.py`` → ``a/b/c.py``, ``b/c.py``, ``c.py``: the stored paths it ends with after a ``/``."""
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(1, len(parts)) if parts[i]]


def _files_clause(alias: str, files: tuple[str, ...], params: list[object]) -> str:
    """A stored path matches a wanted one when equal, or when one is a path suffix of the other
    (absolute in the row, project-relative in the query, or the reverse)."""
    parts = []
    one: list[object] = []
    for f in files:
        parts.append("(j.value = ? OR substr(j.value, -?) = ? OR substr(?, -length(j.value) - 1) = '/' || j.value)")
        one.extend([f, len(f) + 1, "/" + f.lstrip("/"), f])
    cond = " OR ".join(parts)
    params.extend(one + one)  # the same condition over both lists
    return (f"(EXISTS (SELECT 1 FROM json_each({alias}.files_read) j WHERE {cond}) OR "
            f"EXISTS (SELECT 1 FROM json_each({alias}.files_modified) j WHERE {cond}))")


def _observation_files_clause(files: tuple[str, ...], params: list[object]) -> str:
    """The same matching as :func:`_files_clause`, served by ``observation_files`` (one row per
    path an observation touched, keyed by path): the wanted paths and their suffixes are index
    lookups; only "the stored path ends with the wanted one" reads the table's path keys, never
    the observations' JSON."""
    exact: list[str] = []
    tails: list[object] = []
    for f in files:
        exact.append(f)
        exact.extend(_suffixes(f))  # the wanted path ends with '/' + the stored one
        tails.extend([len(f) + 1, "/" + f.lstrip("/")])
    exact = list(dict.fromkeys(exact))
    marks = ",".join("?" * len(exact))
    tail = " OR ".join("substr(path, -?) = ?" for _f in files)
    params.extend(exact)
    params.extend(tails)
    return (f"o.id IN (SELECT observation_id FROM observation_files WHERE path IN ({marks}) "
            f"UNION SELECT observation_id FROM observation_files WHERE {tail})")


def where(kind: str, f: Filters, params: list[object]) -> str:
    """The ``WHERE`` conditions (joined by AND, never empty) for rows of ``kind``."""
    clauses: list[str] = []
    if kind == "observation":
        a = "o"
        if f.project:
            clauses.append("o.project = ?")
            params.append(f.project)
        if not f.project or f.hide_sensitive:
            # a sensitive observation is shown only to a search scoped to its own project
            clauses.append("o.type != 'sensitive'")
        if not f.include_inactive:
            clauses.append("o.status = 'active'")
        types = f.observation_types()
        if types:
            clauses.append(f"o.type IN ({','.join('?' * len(types))})")
            params.extend(types)
        if f.concepts:
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(o.concepts) c WHERE c.value IN "
                           f"({','.join('?' * len(f.concepts))}))")
            params.extend(f.concepts)
    elif kind == "summary":
        a = "s"
        if f.project:
            clauses.append("s.project = ?")
            params.append(f.project)
    else:
        a = "u"
        clauses.append("u.prompt_text NOT IN ('', '[forgotten]')")
        if f.project:
            clauses.append("ses.project = ?")
            params.append(f.project)
    if f.files and kind != "prompt":
        # the file clause needs its own parameter order: build it after the simple ones
        sub: list[object] = []
        clauses.append(_observation_files_clause(f.files, sub) if kind == "observation"
                       else _files_clause(a, f.files, sub))
        params.extend(sub)
    if f.since is not None:
        clauses.append(f"{a}.created_at >= ?")
        params.append(float(f.since))
    if f.until is not None:
        clauses.append(f"{a}.created_at < ?")
        params.append(float(f.until))
    if f.session is not None:
        clauses.append(f"{a}.session_id = ?")
        params.append(int(f.session))
    if f.agent:
        clauses.append(f"{a}.session_id IN (SELECT id FROM sessions WHERE platform = ?)")
        params.append(f.agent)
    return " AND ".join(clauses) or "1"
