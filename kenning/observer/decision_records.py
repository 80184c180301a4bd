"""A decision record the agent wrote (an ADR: ``docs/adr/0019-defer-py-typed-marker.md``): a key decision.

Projects that keep architecture decision records write each choice down with its reason, in a shape tools agree
on: a title, a status, a "Decision" section (MADR: "Decision Outcome"), the context and consequences around it.
A record the agent wrote in the turn is the decision taken, said in the project's own words, whatever language the
agent spoke in (the development set: "Alpha 상태에서 `py.typed` 출시는 시기상조 …" said along the way, where a
sentence may still be a guess, and the record "Defer shipping `py.typed` until the package reaches stable status").
Only a record whose status is accepted (or says none) counts; a proposed one is tentative; a rejected, deprecated
or superseded one is no decision of now.
"""

from __future__ import annotations

import re

from kenning.memory.text import clip
from kenning.observer import evidence
from kenning.records import Event, ObservationDraft

TITLE = 240

_RECORD_PATH = re.compile(r"(?:^|/)(?:adrs?|decisions?|decision-records|architecture/decisions)/[^/]+\.md$|"
                          r"(?:^|/)ADR[-_ ]?\d+[^/]*\.md$", re.IGNORECASE)
_DECISION_HEAD = re.compile(r"^#{2,3}\s*(?:decision(?: outcome)?|결정|決定|决定|décision|entscheidung)\s*$",
                            re.IGNORECASE | re.MULTILINE)
_STATUS = re.compile(r"^\s*(?:\*\*)?status(?:\*\*)?\s*:?\s*(?:\*\*)?\s*:?\s*([A-Za-z]+)", re.IGNORECASE | re.MULTILINE)
_NOT_NOW = frozenset(("rejected", "deprecated", "superseded", "withdrawn", "abandoned"))


def drafts(tools: list[Event], root: str, at: float) -> list[ObservationDraft]:
    """The decisions of the records ``tools`` (one turn's tool calls) wrote whole."""
    out: list[ObservationDraft] = []
    for ev in tools:
        for path, text in _written(ev):
            inside = bool(root) and path.startswith(root.rstrip("/") + "/")
            rel = path[len(root.rstrip("/")) + 1:] if inside else path
            record = read_record(text)
            where = _RECORD_PATH.search(rel)
            if record is None or where is None:
                continue
            if not inside and rel.startswith("/"):  # (a worktree of the project: the record's own folder names it)
                rel = rel[where.start():].lstrip("/")
            title, decision, status = record
            said = clip(f"{title} — {decision}", TITLE)
            out.append(ObservationDraft(
                type="decision", title=said, subtitle=f"decision record written: {clip(rel, 120)}",
                facts=[decision, f"recorded in {rel}" + (f" (status: {status})" if status else "")],
                narrative=f"{title}: {decision}", concepts=["why-it-exists"], files_modified=[rel] if inside else [],
                created_at=at,
                kind="decision", tentative=status == "proposed",
                why={"said": decision, "by": "agent", "origin": "final", "where": rel,
                     "how": "a decision record the agent wrote (its Decision section)"}))
    return out[:2]


def told_by(record: ObservationDraft, others: list[ObservationDraft]) -> bool:
    """Whether another decision of the turn says this record's decision already: it names the record's number or
    the same code ("`py.typed` 결정 — ADR 0019로 stable까지 연기")."""
    number = re.match(r"ADR (\d+):", record.title)
    code = set(re.findall(r"`([^`]{2,60})`", record.title))
    for d in others:
        if d.kind != "decision" or d is record:
            continue
        if (number and re.search(rf"(?<!\d){number.group(1)}(?!\d)", d.title)) or code & set(
                re.findall(r"`([^`]{2,60})`", d.title)):
            return True
    return False


def read_record(text: str) -> tuple[str, str, str] | None:
    """(title, decision, status) of a decision record's text; None when it is none, or no decision of now."""
    m = _DECISION_HEAD.search(text)
    if m is None:
        return None
    st = _STATUS.search(text[:m.start()])
    status = st.group(1).lower() if st else ""
    if status in _NOT_NOW:
        return None
    head = re.search(r"^#\s+(.+?)\s*$", text, re.MULTILINE)
    title = re.sub(r"^(\d+)\.\s+", r"ADR \1: ", head.group(1).strip()) if head else ""
    body = text[m.end():]
    end = re.search(r"^#{1,3}\s", body, re.MULTILINE)
    paragraph = next((p for p in re.split(r"\n\s*\n", body[:end.start()] if end else body) if p.strip()), "")
    decision = " ".join(paragraph.split())
    if not title or len(decision) < 12:
        return None
    return title, decision, status


def _written(ev: Event) -> list[tuple[str, str]]:
    """(path, whole text) of the files a tool call created with their full content (a Write, a patch's added file)."""
    if ev.kind != "PostToolUse":
        return []
    inp = ev.payload.get("tool_input")
    if not isinstance(inp, dict):
        return []
    if ev.tool_name == "Write" and isinstance(inp.get("content"), str):
        path = evidence.file_path(ev)
        return [(path, inp["content"])] if path else []
    if ev.tool_name == "apply_patch":
        patch = str(inp.get("patch") or inp.get("input") or inp.get("command") or "")
        out = []
        for m in re.finditer(r"^\*\*\* Add File: (.+)\n((?:\+.*\n?)*)", patch, re.MULTILINE):
            out.append((m.group(1).strip(), "\n".join(ln[1:] for ln in m.group(2).splitlines())))
        return out
    return []
