"""The tools as MCP lists them (names, descriptions, JSON Schemas, hints) and the checking of the
arguments a call sends. Standard library only: ``tools/list`` is answered from here before
anything else is imported.

The schemas are the ones the MCP SDK derives from typed signatures (tests compare them with
it); arguments are checked the way it checks them, leniently: ``"20"`` is 20, ``"[12, 15]"`` a
list, unknown names are ignored; anything else is a tool error that names the argument.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REQUIRED: Any = object()

SEARCH_DESCRIPTION = (
    "Search Kenning's long-term memory of past coding sessions in this project: earlier work, bugs fixed, "
    "decisions made, gotchas, files changed, what the user asked before. Use it when a task may have history "
    "(\"how did we…\", \"why is…\", \"last time\", an error seen before, code you did not write in this session). "
    "Returns compact index rows `#id date type title (~N tokens)`, about 50-100 tokens each, best match first; "
    "then read full records with get_observations, or the surrounding history with memory_timeline. "
    "Filters: type, since/until, file, project ('*' = all projects)."
)
TIMELINE_DESCRIPTION = (
    "Show what happened before and after a memory in Kenning's history of past sessions: the observations, "
    "session summaries and prompts around one observation id (from search_memory), or around the best match "
    "for a query. Use it to understand the context of a past change, bug or decision. Compact rows, ~7 by default."
)
GET_DESCRIPTION = (
    "Read full records of Kenning memories (past-session observations) by id, as shown by search_memory or "
    "memory_timeline: narrative, facts, files read and modified, concepts, date and session. Pass ids like "
    "[12, 15] (\"S3\" for a session summary); at most 20 per call, each costs about the tokens its row showed."
)
SAVE_DESCRIPTION = (
    "Save a memory for future sessions in Kenning's long-term memory: a fact, decision, preference, convention "
    "or gotcha worth knowing next time (e.g. \"We use uv, never pip\"). Stored in the current project, "
    "searchable at once with search_memory and listed at the start of the next session. Secrets and "
    "<private> content are removed before storing. Saving the same text twice keeps one copy. A rule or "
    "preference you save is kept as your proposal until the user confirms it."
)
SUPERSEDE_DESCRIPTION = (
    "Mark Kenning memories as no longer true because a newer memory replaces them (a rule corrected, a "
    "decision reversed, a status changed): give their ids and `by`, the id of the memory that replaces them "
    "(save_memory it first if needed). They stop being given to future sessions but stay searchable, flagged. "
    "Current project only; a standing rule only the user replaces; the user can undo it with `kenning restore`."
)
GUIDE_DESCRIPTION = (
    "How to use Kenning's memory tools: search past sessions (search_memory) → context (memory_timeline) → "
    "full records (get_observations), save_memory and forget_memory; their filters and token costs. "
    "Call it once when unsure how to look something up in memory."
)
LEDGER_DESCRIPTION = (
    "Why Kenning memories were given to sessions, and whether they helped: for one memory id, how often it "
    "was handed to sessions (session start, prompt recall, file history, MCP), why each time, and its uses "
    "(fetched in full, id cited, a file it names edited, a command it names run); for a session id, what that "
    "session was told and why; with neither, this project's memory health (hit rate, memories never used)."
)
FORGET_DESCRIPTION = (
    "Permanently delete memories from Kenning's long-term memory by explicit observation id (from "
    "search_memory), e.g. when the user says a memory is wrong or must not be kept. Takes ids only, never a "
    "query; current project only; cannot be undone, so use it only when the user asks."
)

# kind -> the JSON Schema of a parameter of that Python type (as pydantic writes it)
_KINDS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "str?": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "int": {"type": "integer"},
    "id": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    "id?": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
    "ids": {"items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "type": "array"},
}


class Param:
    __slots__ = ("default", "description", "kind", "name")

    def __init__(self, name: str, kind: str, description: str, default: Any = REQUIRED) -> None:
        self.name, self.kind, self.description, self.default = name, kind, description, default

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(_KINDS[self.kind])
        if self.default is not REQUIRED:
            out["default"] = self.default
        out["description"] = self.description
        out["title"] = self.name.replace("_", " ").title()
        return out


def _hints(read_only: bool, destructive: bool = False) -> dict[str, bool]:
    return {"readOnlyHint": read_only, "destructiveHint": destructive, "idempotentHint": True,
            "openWorldHint": False}


class Tool:
    __slots__ = ("annotations", "description", "name", "params", "title")

    def __init__(self, name: str, title: str, description: str, annotations: dict[str, bool],
                 params: list[Param]) -> None:
        self.name, self.title, self.description = name, title, description
        self.annotations, self.params = annotations, params

    def listing(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"properties": {p.name: p.schema() for p in self.params}, "type": "object",
                                  "title": f"{self.name}Arguments"}
        required = [p.name for p in self.params if p.default is REQUIRED]
        if required:
            schema["required"] = required
        return {"name": self.name, "title": self.title, "description": self.description, "inputSchema": schema,
                "annotations": self.annotations}

    def arguments(self, given: Any) -> dict[str, Any]:
        """The call's arguments checked and converted, defaults filled in; ArgumentError otherwise."""
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise ArgumentError("arguments must be an object")
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name not in given:
                if p.default is REQUIRED:
                    raise ArgumentError(f"{p.name} is required")
                out[p.name] = p.default
                continue
            out[p.name] = _convert(p, given[p.name])
        return out


class ArgumentError(ValueError):
    """An argument of the wrong type: the model gets the message as the tool's error."""


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        if s.lstrip("+-").isdigit() and len(s) <= 30:
            return int(s)
    return None


def _id(value: Any) -> int | str | None:
    if isinstance(value, str) or value is None:
        return value
    return _integer(value)


def _convert(p: Param, value: Any) -> Any:
    kind = p.kind
    if kind in ("str?", "id?") and value is None:
        return None
    if kind in ("str", "str?"):
        if isinstance(value, str):
            return value
        raise ArgumentError(f"{p.name} must be a string")
    if kind == "int":
        n = _integer(value)
        if n is None:
            raise ArgumentError(f"{p.name} must be a whole number (got {str(value)[:40]!r})")
        return n
    if kind in ("id", "id?"):
        v = _id(value)
        if v is None:
            raise ArgumentError(f"{p.name} must be an id like 12 or '#12'")
        return v
    # "ids": a list; a JSON list sent as a string is read as one (models do that)
    if isinstance(value, str) and value.strip().startswith("["):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            pass
    if not isinstance(value, list):
        raise ArgumentError(f"{p.name} must be a list of ids, e.g. [12, 15]")
    items = [_id(v) for v in value]
    if any(v is None for v in items):
        raise ArgumentError(f"{p.name} must hold ids like 12, '#12' or 'S3'")
    return items


_QUERY = "Words to look for, e.g. 'vat rounding' or 'TypeError parse_date'. May be empty when a filter is given " \
         "(then newest first)."
TOOLS: tuple[Tool, ...] = (
    Tool("search_memory", "Search memory of past sessions", SEARCH_DESCRIPTION, _hints(True), [
        Param("query", "str", _QUERY, ""),
        Param("project", "str?", "Project name (default: the current project); '*' searches every project.", None),
        Param("type", "str?", "Only these types, comma-separated: bugfix, feature, refactor, change, discovery, "
                              "decision, security_alert, security_note, summary, prompt.", None),
        Param("since", "str?", "Only after this: 2026-11-30, 2026-11-30T14:05, 7d, 12h, yesterday.", None),
        Param("until", "str?", "Only before this (a date includes that day).", None),
        Param("file", "str?", "Only memories that read or changed this file path.", None),
        Param("limit", "int", "How many rows (1-100).", 20),
        Param("offset", "int", "Skip this many rows (paging).", 0),
    ]),
    Tool("memory_timeline", "Memory timeline around an observation", TIMELINE_DESCRIPTION, _hints(True), [
        Param("id", "id?", "Observation id from search_memory, e.g. 12 or '#12'.", None),
        Param("query", "str?", "Instead of id: center on the best match for these words.", None),
        Param("before", "int", "Rows before (0-20).", 3),
        Param("after", "int", "Rows after (0-20).", 3),
        Param("project", "str?", "Project for a query (default: the current one).", None),
    ]),
    Tool("get_observations", "Get full memory records by id", GET_DESCRIPTION, _hints(True), [
        Param("ids", "ids", "Ids from search_memory / memory_timeline, e.g. [12, 15] or ['#12', 'S3']; at most 20."),
    ]),
    Tool("save_memory", "Save a memory for future sessions", SAVE_DESCRIPTION, _hints(False), [
        Param("text", "str", "What to remember, self-contained: the fact or decision and why."),
        Param("title", "str?", "A short title (default: the first sentence).", None),
        Param("type", "str?", "discovery (default), decision, bugfix, feature, change, refactor, security_note, "
                              "security_alert.", None),
        Param("project", "str?", "Leave empty: memories are saved in the current project (another one only if "
                                 "the user allowed it).", None),
    ]),
    Tool("forget_memory", "Forget memories by id", FORGET_DESCRIPTION, _hints(False, destructive=True), [
        Param("ids", "ids", "Observation ids to delete, e.g. [12]; at most 100."),
    ]),
    Tool("supersede_memory", "Mark memories as replaced by a newer one", SUPERSEDE_DESCRIPTION, _hints(False), [
        Param("ids", "ids", "Ids of the memories no longer true, e.g. [12]; at most 100."),
        Param("by", "id", "Id of the memory that replaces them, e.g. 31."),
    ]),
    Tool("memory_ledger", "Why memories were given, and whether they helped", LEDGER_DESCRIPTION, _hints(True), [
        Param("id", "id?", "A memory's id, e.g. 12 or '#12': its handings and uses.", None),
        Param("session", "str?", "An agent session id: what that session was told, and why.", None),
    ]),
    Tool("memory_guide", "How to use the memory tools", GUIDE_DESCRIPTION, _hints(True), []),
)
BY_NAME = {t.name: t for t in TOOLS}
