"""Reading an observer model's reply: tolerant, and safe by construction.

The reply is untrusted text that is *supposed* to hold ``<observation>`` / ``<summary>``
blocks. No XML library is used: tags are found by pattern and only the five predefined
entities and numeric character references are decoded, so a DTD, ``<!ENTITY>``
declarations or an entity-expansion bomb are inert text. A reply is classified as:

* ``observations`` — at least one usable observation or summary;
* ``empty`` — nothing, or an explicit ``<skip/>``: the events were judged not worth keeping;
* ``quota`` / ``auth`` — the provider refused (usage limit, rate limit, bad credentials): the
  events must go back to the queue, nothing is dropped;
* ``prose`` — text without any block: dropped, not retried (retrying prose burns tokens).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

OBSERVATION_FIELDS = ("type", "title", "subtitle", "narrative", "kind", "scope", "tentative", "why")
LIST_FIELDS = {"facts": "fact", "concepts": "concept", "files_read": "file", "files_modified": "file"}
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")
MAX_FIELD_CHARS = 4000
MAX_ITEMS = 30

# What models write instead of our type ids, mapped to the nearest one.
TYPE_SYNONYMS = {
    "bug": "bugfix", "fix": "bugfix", "bug_fix": "bugfix", "bug-fix": "bugfix", "hotfix": "bugfix",
    "feat": "feature", "enhancement": "feature", "addition": "feature", "new_feature": "feature",
    "refactoring": "refactor", "cleanup": "refactor", "restructure": "refactor",
    "update": "change", "modification": "change", "config": "change", "configuration": "change", "chore": "change",
    "learning": "discovery", "insight": "discovery", "finding": "discovery", "investigation": "discovery",
    "info": "discovery", "note": "discovery", "gotcha": "discovery", "observation": "discovery",
    "choice": "decision", "preference": "decision", "rule": "decision", "convention": "decision",
    "security": "security_note", "vulnerability": "security_alert", "security-alert": "security_alert",
    "security-note": "security_note", "secret": "sensitive", "private": "sensitive",
}

# What a memory is (DESIGN.md §9): its role decides its layer (kenning/memory/layers.py KIND_LAYERS).
KINDS = ("rule", "decision", "rootcause", "fix", "change", "gotcha", "todo", "status", "fact", "note", "answer",
         "explored")
# What models write instead of our kind ids. A kind that maps to nothing is left out (the type decides the layer).
KIND_SYNONYMS = {
    "preference": "rule", "standing_rule": "rule", "convention": "rule", "instruction": "rule", "policy": "rule",
    "guideline": "rule", "choice": "decision", "tradeoff": "decision", "trade_off": "decision",
    "root_cause": "rootcause", "cause": "rootcause", "diagnosis": "rootcause", "bugfix": "fix", "bug_fix": "fix",
    "solution": "fix", "resolution": "fix", "edit": "change", "feature": "change", "refactor": "change",
    "update": "change", "modification": "change", "pitfall": "gotcha", "caveat": "gotcha", "trap": "gotcha",
    "footgun": "gotcha", "to_do": "todo", "open_item": "todo", "next_step": "todo", "next_steps": "todo",
    "follow_up": "todo", "followup": "todo", "progress": "status", "state": "status", "workstream": "status",
    "qa": "answer", "q&a": "answer", "question": "answer", "reply": "answer", "explanation": "answer",
    "exploration": "explored", "explore": "explored", "read": "explored", "log": "note", "session_log": "note",
}
USER_SCOPES = ("user", "global", "everywhere", "all_projects", "user_wide")
PROJECT_SCOPES = ("project", "repo", "repository", "local", "")
_TRUE = ("true", "yes", "1", "tentative", "provisional")
_FALSE = ("false", "no", "0", "")
MAX_WHY_CHARS = 1000

_BLOCK = {name: re.compile(rf"<{name}(?:\s[^>]*)?>(.*?)(?:</{name}\s*>|\Z)", re.DOTALL | re.IGNORECASE)
          for name in ("observation", "summary")}
_SKIP = re.compile(r"<skip(?:_summary)?(?:\s[^>]*)?/?>", re.IGNORECASE)
_ENTITY = re.compile(r"&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);")
_PREDEFINED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_QUOTA = re.compile(r"usage limit|rate[ -]?limit|quota|too many requests|credit balance is too low|"
                    r"limit (?:reached|exceeded)|weekly limit|\b5-hour limit|overloaded|\b429\b", re.IGNORECASE)
_AUTH = re.compile(r"invalid (?:x-)?api[ -]?key|authentication[_ ](?:error|failed)|failed to authenticate|"
                   r"unauthori[sz]ed|\b401\b|\b403\b|please run /login|oauth token|permission denied for api",
                   re.IGNORECASE)


@dataclass
class ParsedObservation:
    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    original_type: str | None = None  # set when the model's type was mapped to one of ours
    supersedes: list[int] = field(default_factory=list)  # ids the model says this one replaces (unchecked)
    # What the model says the memory is, unchecked against the events (kenning/observer/llm/vetting.py does
    # that): "" when it said nothing (a reply in the format before kinds existed) or nothing we know.
    kind: str = ""
    scope: str = "project"
    tentative: bool = False
    why: str = ""  # the sentence the model says it rests on
    roles_given: bool = False  # the block had any of kind / scope / tentative / why
    notes: list[str] = field(default_factory=list)  # what was corrected while reading, and why


@dataclass
class ParsedSummary:
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""


@dataclass
class Reply:
    kind: str  # observations | empty | quota | auth | prose
    observations: list[ParsedObservation] = field(default_factory=list)
    summary: ParsedSummary | None = None
    skipped_blocks: int = 0  # blocks that were present but unusable
    preview: str = ""


def unescape(text: str) -> str:
    """Decode only the predefined XML entities and character references; everything else stays literal."""

    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref in _PREDEFINED:
            return _PREDEFINED[ref]
        try:
            code = int(ref[2:], 16) if ref.startswith("#x") else int(ref[1:])
            return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""
        except ValueError:
            return m.group(0)

    return _ENTITY.sub(one, text)


def _field(body: str, name: str) -> str:
    m = re.search(rf"<{name}(?:\s[^>]*)?>(.*?)</{name}\s*>", body, re.DOTALL | re.IGNORECASE)
    if not m:
        return ""
    value = re.sub(r"<!\[CDATA\[(.*?)\]\]>", r"\1", m.group(1), flags=re.DOTALL)
    value = re.sub(r"<[^>]{0,200}>", " ", value)  # stray inner tags
    return " ".join(unescape(value).split())[:MAX_FIELD_CHARS]


def _items(body: str, outer: str, inner: str) -> list[str]:
    m = re.search(rf"<{outer}(?:\s[^>]*)?>(.*?)</{outer}\s*>", body, re.DOTALL | re.IGNORECASE)
    if not m:
        return []
    found = re.findall(rf"<{inner}(?:\s[^>]*)?>(.*?)</{inner}\s*>", m.group(1), re.DOTALL | re.IGNORECASE)
    if not found:  # a bare list: one item per line
        found = [ln.strip(" -*•\t") for ln in m.group(1).splitlines()]
    out: list[str] = []
    for raw in found:
        item = " ".join(unescape(re.sub(r"<[^>]{0,200}>", " ", raw)).split())[:MAX_FIELD_CHARS]
        if item and item not in out:
            out.append(item)
    return out[:MAX_ITEMS]


def map_type(raw: str, valid: list[str]) -> tuple[str, str | None]:
    """Our type for what the model wrote, and the original when it had to be mapped."""
    t = raw.strip().lower().replace(" ", "_")
    if t in valid:
        return t, None
    if TYPE_SYNONYMS.get(t) in valid:
        return TYPE_SYNONYMS[t], raw
    close = difflib.get_close_matches(t, valid, n=1, cutoff=0.75)
    if close:
        return close[0], raw
    fallback = "discovery" if "discovery" in valid else valid[0]
    return fallback, raw or None


def map_kind(raw: str) -> tuple[str, str | None]:
    """Our kind for what the model wrote ("" when unknown), and a note when it had to be mapped or dropped."""
    k = re.sub(r"[\s-]+", "_", raw.strip().lower())
    if k in KINDS or not k:
        return k, None
    if k.replace("_", "") in KINDS:  # root_cause, to_do
        return k.replace("_", ""), None
    if k in KIND_SYNONYMS:
        return KIND_SYNONYMS[k], f"the model wrote kind {raw!r}, read as {KIND_SYNONYMS[k]!r}"
    close = difflib.get_close_matches(k, KINDS, n=1, cutoff=0.8)
    if close:
        return close[0], f"the model wrote kind {raw!r}, read as {close[0]!r}"
    return "", f"the model wrote kind {raw!r}, not one of ours: its layer follows its type"


def map_scope(raw: str) -> tuple[str, str | None]:
    s = re.sub(r"[\s-]+", "_", raw.strip().lower())
    if s in USER_SCOPES:
        return "user", None
    if s in PROJECT_SCOPES:
        return "project", None
    return "project", f"the model wrote scope {raw!r}, read as 'project'"


def map_tentative(raw: str) -> tuple[bool, str | None]:
    t = raw.strip().lower()
    if t in _TRUE:
        return True, None
    return False, None if t in _FALSE else f"the model wrote tentative {raw!r}, read as false"


def normalize_concepts(concepts: list[str], type_id: str) -> list[str]:
    """Cut at ':', lowercase, deduplicate, drop empty ones and the type itself."""
    out: list[str] = []
    for c in concepts:
        c = c.split(":", 1)[0].strip().lower().replace(" ", "-")
        if c and c != type_id and c not in out:
            out.append(c)
    return out


def parse_reply(text: str, valid_types: list[str]) -> Reply:
    """Parse and classify one reply."""
    raw = text or ""
    preview = " ".join(raw.split())[:200]
    body = raw  # blocks are found anywhere, inside a ``` fence or not
    reply = Reply(kind="prose", preview=preview)
    for block in _BLOCK["observation"].findall(body):
        obs = _observation(block, valid_types)
        if obs is None:
            reply.skipped_blocks += 1
        else:
            reply.observations.append(obs)
    summaries = _BLOCK["summary"].findall(body)
    if summaries:
        s = ParsedSummary(**{f: _field(summaries[-1], f) for f in SUMMARY_FIELDS})
        if any((s.request, s.investigated, s.learned, s.completed, s.next_steps)):
            reply.summary = s
        else:
            reply.skipped_blocks += 1
    if reply.observations or reply.summary:
        reply.kind = "observations"
    elif not raw.strip() or _SKIP.search(raw) or (reply.skipped_blocks and not _QUOTA.search(raw)):
        reply.kind = "empty"
    elif _AUTH.search(raw):
        reply.kind = "auth"
    elif _QUOTA.search(raw):
        reply.kind = "quota"
    return reply


def _observation(block: str, valid_types: list[str]) -> ParsedObservation | None:
    values = {f: _field(block, f) for f in OBSERVATION_FIELDS}
    lists = {f: _items(block, f, inner) for f, inner in LIST_FIELDS.items()}
    type_id, original = map_type(values["type"], valid_types)
    title = values["title"] or (lists["facts"][0] if lists["facts"] else values["narrative"])
    if not title:
        return None
    title = title if len(title) <= 160 else title[:159].rstrip() + "…"
    kind, kind_note = map_kind(values["kind"])
    scope, scope_note = map_scope(values["scope"])
    tentative, tentative_note = map_tentative(values["tentative"])
    given = any(re.search(rf"<{f}(?:\s[^>]*)?>", block, re.IGNORECASE) for f in ("kind", "scope", "tentative", "why"))
    return ParsedObservation(type=type_id, title=title, subtitle=values["subtitle"][:300],
                             narrative=values["narrative"], facts=lists["facts"],
                             concepts=normalize_concepts(lists["concepts"], type_id),
                             files_read=lists["files_read"], files_modified=lists["files_modified"],
                             original_type=original, supersedes=_ids(block), kind=kind, scope=scope,
                             tentative=tentative, why=values["why"][:MAX_WHY_CHARS], roles_given=given,
                             notes=[n for n in (kind_note, scope_note, tentative_note) if n])


def _ids(block: str) -> list[int]:
    """Ids in ``<supersedes>``: ``<id>12</id>``, ``#12`` or a bare list ("12, 15")."""
    m = re.search(r"<supersedes(?:\s[^>]*)?>(.*?)</supersedes\s*>", block, re.DOTALL | re.IGNORECASE)
    if not m:
        return []
    out: list[int] = []
    for raw in re.findall(r"#?\b(\d{1,18})\b", m.group(1)):
        n = int(raw)
        if 0 < n < 2**63 and n not in out:
            out.append(n)
    return out[:MAX_ITEMS]
