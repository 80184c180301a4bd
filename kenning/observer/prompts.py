"""The observer's prompts: the system prompt of a conversation and one user turn per batch.

Every instruction comes from the mode's ``prompts`` sections (JSON, our own words), so a user
mode can reword any of them. Events are rendered with their tool name, time, working
directory, parameters and outcome. Any field longer than ``FIELD_LIMIT`` characters keeps
its first 60 % and last 30 % of that limit around an explicit elision marker, so a 1 MB tool
output costs the model ~16 k characters, and the model is told what was cut.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from kenning.observer.modes import concept_ids
from kenning.observer.parse import KINDS
from kenning.observer.reading import origin_of
from kenning.observer.transcript import PAYLOAD_KEY, words_of
from kenning.records import Event, SessionInfo

FIELD_LIMIT = 16_000
HEAD_SHARE = 0.6
TAIL_SHARE = 0.3
# Response keys that repeat what the parameters already say (Edit's whole original file and
# patch) or carry no meaning: sending them is the classic way an observer burns tokens.
DROP_KEYS = frozenset({"originalFile", "structuredPatch", "userModified", "isImage", "noOutputExpected"})
MAX_DEPTH = 4
RECAP_TITLES = 25

SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")


def elide(text: str, limit: int = FIELD_LIMIT) -> str:
    """``text`` itself, or its head (60 % of ``limit``) + a marker + its tail (30 %)."""
    if len(text) <= limit:
        return text
    head, tail = int(limit * HEAD_SHARE), int(limit * TAIL_SHARE)
    cut = len(text) - head - tail
    return f"{text[:head]}\n<elided chars=\"{cut}\" of=\"{len(text)}\"/>\n{text[len(text) - tail:]}"


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _scalar(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _leaves(value: Any, prefix: str, depth: int, skip: set[str]) -> Iterable[tuple[str, str]]:
    """(dotted name, text) of every meaningful leaf; empty values and repeats are left out."""
    if value is None or value is False or value == "" or value == [] or value == {}:
        return
    if isinstance(value, dict) and depth < MAX_DEPTH:
        for k, v in value.items():
            if k in DROP_KEYS:
                continue
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k), depth + 1, skip)
        return
    if isinstance(value, list) and depth < MAX_DEPTH and any(isinstance(x, dict | list) for x in value):
        for i, v in enumerate(value[:50]):
            yield from _leaves(v, f"{prefix}.{i}", depth + 1, skip)
        if len(value) > 50:
            yield f"{prefix}.more", f"{len(value) - 50} more items"
        return
    text = _scalar(value) if not isinstance(value, dict | list) else json.dumps(value, ensure_ascii=False)
    if len(text) > 40 and text in skip:
        return  # e.g. Write's response repeating the content it was given
    yield prefix or "value", text


def render_fields(value: Any, *, skip: set[str] | None = None) -> str:
    """A dict of tool input or output as ``<name>text</name>`` lines, each field elided."""
    if isinstance(value, str):
        return elide(value)
    lines = [f"<{name}>{elide(text)}</{name}>" for name, text in _leaves(value, "", 0, skip or set())]
    return elide("\n".join(lines), 2 * FIELD_LIMIT)


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and depth < MAX_DEPTH:
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list) and depth < MAX_DEPTH:
        for v in value:
            yield from _strings(v, depth + 1)


def render_event(ev: Event) -> str:
    """One captured event as the observer reads it."""
    p = ev.payload
    at = _stamp(ev.occurred_at)
    if ev.kind == "UserPromptSubmit":
        raw_prompt = p.get("prompt")
        prompt = raw_prompt if isinstance(raw_prompt, str) else ""
        # Who wrote it (typed, queued, rejection, plan, headless, agent, notification): only the user's own words
        # can give a standing rule, and an accepted plan is the agent's words (DESIGN.md §9).
        origin = _attr(origin_of(ev))
        return f'<user_prompt number="{ev.prompt_number}" at="{at}" origin="{origin}">\n{elide(prompt)}\n</user_prompt>'
    if ev.kind == "Stop":
        raw = p.get("last_assistant_message")
        last = raw if isinstance(raw, str) else ""
        said = [t for t in p.get(PAYLOAD_KEY) or [] if isinstance(t, str) and t.strip()]
        # The user's words mid-turn (typed while the agent worked, said refusing a tool call), as prompts.
        words = "".join(f'<user_prompt number="{ev.prompt_number}" at="{at}" origin="{_attr(origin)}">\n'
                        f"{elide(text)}\n</user_prompt>\n" for origin, text in words_of(p))
        body = ""
        if said:  # what the agent explained along the way (from the transcript)
            body += "\n<agent_messages>\n" + elide("\n---\n".join(said)) + "\n</agent_messages>"
        if last:
            body += f"\n<agent_last_message>\n{elide(last)}\n</agent_last_message>"
        return f'{words}<turn_end at="{at}">{body + chr(10) if body else ""}</turn_end>'
    if ev.kind == "SessionEnd":
        return f'<session_end at="{at}" reason="{_attr(p.get("reason"))}"/>'
    if ev.kind not in ("PostToolUse", "PostToolUseFailure"):
        return f'<event kind="{_attr(ev.kind)}" at="{at}"/>'
    attrs = f'tool="{_attr(ev.tool_name or p.get("tool_name"))}" at="{at}" cwd="{_attr(p.get("cwd"))}"'
    if ev.agent_type or ev.agent_id:
        attrs += f' subagent="{_attr(ev.agent_type or ev.agent_id)}"'
    inp = p.get("tool_input")
    params = render_fields(inp)
    if ev.kind == "PostToolUseFailure":
        err = p.get("error")
        outcome = f'<outcome failed="true">\n{elide(_scalar(err) if err is not None else "")}\n</outcome>'
    else:
        skip = {s for s in _strings(inp) if len(s) > 40}
        outcome = f"<outcome>\n{render_fields(p.get('tool_response'), skip=skip)}\n</outcome>"
    return f"<tool_use {attrs}>\n<parameters>\n{params}\n</parameters>\n{outcome}\n</tool_use>"


def _attr(v: Any) -> str:
    s = "" if v is None else str(v)
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")[:500]


# --------------------------------------------------------------------------- prompt text

def _section(mode: dict[str, Any], key: str) -> str:
    prompts = mode.get("prompts") or {}
    value = prompts.get(key, "")
    if isinstance(value, list):  # long sections may be written as a list of lines
        value = "\n".join(str(x) for x in value)
    return str(value).strip()


def kind_lines(mode: dict[str, Any]) -> str:
    """Our kinds (fixed: they decide the layer), each with the mode's description of it."""
    described = {str(k["id"]): str(k.get("description") or "") for k in mode.get("memory_kinds") or []
                 if isinstance(k, dict) and "id" in k}
    return "\n".join(f"  - {k}: {described[k]}" if described.get(k) else f"  - {k}" for k in KINDS)


def observation_skeleton(mode: dict[str, Any]) -> str:
    """The XML shape of one observation, with our kinds and the mode's types and concepts."""
    types = "\n".join(f"  - {t['id']}: {t.get('description', t.get('label', ''))}"
                      for t in mode.get("observation_types") or [] if isinstance(t, dict) and "id" in t)
    concepts = ", ".join(concept_ids(mode))
    return (f"{_section(mode, 'format')}\n\n"
            "<observation>\n"
            "  <kind>one kind id</kind>\n"
            "  <scope>project, or user for a preference the user gave for all of their work</scope>\n"
            "  <tentative>true when it was said to be provisional, else false</tentative>\n"
            "  <why>the one sentence it rests on, copied exactly from the observed events</why>\n"
            "  <type>one type id</type>\n"
            "  <title>short headline of what was learned or done</title>\n"
            "  <subtitle>one sentence of context</subtitle>\n"
            "  <facts>\n    <fact>one self-contained fact</fact>\n  </facts>\n"
            "  <narrative>what happened and why it matters</narrative>\n"
            "  <concepts>\n    <concept>concept id</concept>\n  </concepts>\n"
            "  <files_read>\n    <file>path relative to the project root</file>\n  </files_read>\n"
            "  <files_modified>\n    <file>path relative to the project root</file>\n  </files_modified>\n"
            "  <supersedes>\n    <id>id of a listed memory this observation makes no longer true (optional)</id>\n"
            "  </supersedes>\n"
            "</observation>\n\n"
            f"Kinds:\n{kind_lines(mode)}\n\nTypes:\n{types}\n\nConcepts (choose 1-4): {concepts}")


def summary_skeleton(mode: dict[str, Any]) -> str:
    inner = "\n".join(f"  <{f}>…</{f}>" for f in SUMMARY_FIELDS)
    return f"<summary>\n{inner}\n</summary>"


def system_prompt(mode: dict[str, Any], session: SessionInfo) -> str:
    """The conversation's first, stable block: role, what to record and skip, the format.

    A fresh conversation for a session already under way (restart, idle timeout, history
    bound) also gets a recap: the first request and what is already recorded, so it neither
    misses the context nor records the same thing twice.
    """
    parts = [_section(mode, "role"), _section(mode, "memory"), _section(mode, "rules"), _section(mode, "record"),
             _section(mode, "skip"), _section(mode, "style"), observation_skeleton(mode), _section(mode, "why"),
             _section(mode, "supersede"), _section(mode, "languages"), _section(mode, "reply")]
    parts.append(f"Observed project: {session.project} (root {session.project_root or 'unknown'}).")
    recap = recap_lines(session)
    if recap:
        parts.append(_section(mode, "recap") + "\n" + "\n".join(recap))
    return "\n\n".join(p for p in parts if p)


def recap_lines(session: SessionInfo) -> list[str]:
    """Nothing for a session seen for the first time (its request is in the first batch)."""
    if not session.prior_observations and session.prior_summary is None:
        return []
    lines: list[str] = []
    first = next((p for p in session.prompts if p), "")
    if first:
        lines.append(f"First request of the session: {elide(' '.join(first.split()), 600)}")
    titles = [str(o.get("title") or "") for o in session.prior_observations if o.get("title")]
    for t in titles[-RECAP_TITLES:]:
        lines.append(f"- already recorded: {t}")
    return lines


def memories_block(mode: dict[str, Any], memories: Sequence[dict[str, Any]]) -> str:
    """The project's memories a new observation may replace, each as ``[#id] (layer type) title``."""
    if not memories:
        return ""
    rows = [f"[#{int(m['id'])}] ({_attr(m.get('layer') or '')} {_attr(m.get('type') or '')}) "
            f"{elide(' '.join(str(m.get('title') or '').split()), 300)}" for m in memories]
    return f"{_section(mode, 'memories_intro')}\n<current_memories>\n" + "\n".join(rows) + "\n</current_memories>"


def batch_turn(mode: dict[str, Any], events: Sequence[Event], *, summary: bool,
               memories: Sequence[dict[str, Any]] = ()) -> str:
    """One user turn: memories not shown before in this conversation, the rendered events, what to do."""
    body = "\n".join(render_event(e) for e in events)
    parts = [memories_block(mode, memories), _section(mode, "turn_intro"),
             f"<observed_events>\n{body}\n</observed_events>", _section(mode, "turn_outro")]
    if summary:
        parts.append(_section(mode, "summary_request") + "\n" + summary_skeleton(mode))
    return "\n\n".join(p for p in parts if p)
