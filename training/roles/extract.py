"""Units of real transcripts, for labelling and training the role model.

  python training/roles/extract.py <transcripts folder> <out folder>

Reads Claude Code and Codex transcripts (any tree of *.jsonl), cuts every turn into units the way
the offline observer does (kenning/observer/units.py: the user's prompts, the agent's texts along
the way and its last one) and writes <out>/units.jsonl (one unit a line, with its id) and one
labelling sheet per session under <out>/sheets/. Nothing of it is written into the repository:
the transcripts' text stays where it is; labels refer to units by id (a hash of project and text).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from kenning.observer.units import units

SYNTHETIC = ("<command-name>", "<command-message>", "<local-command", "<task-notification>", "<system-reminder>",
             "[Request interrupted", "Caveat:", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
             "This session is being continued from a previous", "Another Claude session sent a message",
             "<agent-message", "<user-prompt-submit-hook>")
REJECTED = "The user doesn't want to proceed with this tool use"
SAID = "the user said:"


@dataclass
class Turn:
    prompt: str = ""
    origin: str = "typed"   # typed | queued | rejection | plan | headless | none
    texts: list[str] = field(default_factory=list)
    at: str = ""


def unit_id(project: str, text: str) -> str:
    return hashlib.sha1(f"{project}\x00{' '.join(text.split())}".encode()).hexdigest()[:12]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def claude_turns(path: str) -> Iterator[Turn]:
    cur = Turn(origin="none")
    seen_queued: set[str] = set()
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        t = d.get("type")
        if d.get("isSidechain"):
            continue
        if t == "queue-operation" and d.get("operation") == "enqueue":
            c = d.get("content")
            if isinstance(c, str) and c.strip() and not c.lstrip().startswith(("/", "<", "{")):
                yield cur
                seen_queued.add(c.strip())
                cur = Turn(c.strip(), "queued", at=d.get("timestamp", ""))
            continue
        if t == "user":
            m = d.get("message") or {}
            c = m.get("content")
            if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
                for b in c:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        txt = _text_of(b.get("content")) if not isinstance(b.get("content"), str) else b["content"]
                        if REJECTED in txt and SAID in txt:
                            yield cur
                            cur = Turn(txt.split(SAID, 1)[1].strip(), "rejection", at=d.get("timestamp", ""))
                continue
            if d.get("isMeta") or d.get("isCompactSummary"):
                continue
            text = _text_of(c).strip()
            if not text or text.startswith(SYNTHETIC) or text in seen_queued:
                continue
            origin = "plan" if d.get("planContent") else "headless" if d.get("entrypoint") == "sdk-cli" else "typed"
            yield cur
            cur = Turn(text, origin, at=d.get("timestamp", ""))
        elif t == "assistant":
            for b in (d.get("message") or {}).get("content") or []:
                if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text") or "").strip():
                    cur.texts.append(b["text"])
    yield cur


def codex_turns(path: str) -> Iterator[Turn]:
    cur = Turn(origin="none")
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        p = d.get("payload") or {}
        if d.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "user":
            text = "\n".join(str(c.get("text") or "") for c in p.get("content") or [] if isinstance(c, dict)).strip()
            if text and not text.startswith(("<", "# AGENTS.md")):
                yield cur
                cur = Turn(text, "typed", at=d.get("timestamp", ""))
        elif d.get("type") == "event_msg" and p.get("type") == "agent_message":
            msg = p.get("message")
            if isinstance(msg, str) and msg.strip():
                cur.texts.append(msg)
    yield cur


def session_units(path: str, project: str) -> Iterator[dict[str, object]]:
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    reader = codex_turns if '"session_meta"' in first else claude_turns
    for n, turn in enumerate(t for t in reader(path) if t.prompt or t.texts):
        if turn.prompt:
            for u in units(turn.prompt):
                yield {"turn": n, "speaker": "user", "origin": turn.origin, "heading": u.heading, "text": u.text,
                       "index": u.index, "bullet": u.bullet, "label": u.label}
        for k, text in enumerate(turn.texts):
            origin = "final" if k == len(turn.texts) - 1 else "progress"
            for u in units(text):
                yield {"turn": n, "speaker": "agent", "origin": origin, "heading": u.heading, "text": u.text,
                       "index": u.index, "bullet": u.bullet, "label": u.label, "message": k}


def main() -> None:
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "sheets"), exist_ok=True)
    n = 0
    with open(os.path.join(out, "units.jsonl"), "w", encoding="utf-8") as fh:
        for dp, _dns, fs in sorted(os.walk(src)):
            for f in sorted(fs):
                if not f.endswith(".jsonl"):
                    continue
                project = os.path.basename(dp)
                session = f[:-len(".jsonl")]
                sheet: list[str] = [f"# {project} / {session}"]
                last_turn = -1
                last_msg = None
                for u in session_units(os.path.join(dp, f), project):
                    u.update(project=project, session=session, id=unit_id(project, str(u["text"])))
                    fh.write(json.dumps(u, ensure_ascii=False) + "\n")
                    n += 1
                    if u["turn"] != last_turn:
                        sheet.append(f"\n## turn {u['turn']}")
                        last_turn, last_msg = int(u["turn"]), None
                    if u["speaker"] == "agent" and u.get("message") != last_msg:
                        last_msg = u.get("message")
                        sheet.append(f"### agent ({u['origin']})")
                    head = f" [{u['heading']}]" if u["heading"] else ""
                    who = f"USER/{u['origin']}" if u["speaker"] == "user" else "agent"
                    sheet.append(f"{u['id']} {who}{head} {'- ' if u['bullet'] else ''}{u['text']}")
                with open(os.path.join(out, "sheets", f"{project}--{session}.md"), "w", encoding="utf-8") as sh:
                    sh.write("\n".join(sheet) + "\n")
    print(f"{n} units")


if __name__ == "__main__":
    main()
