"""The parts of an accepted plan the user set aside by asking for only some of them.

A plan hands over several parts ("## Optimization #2: Evaluator Skip …", "## Optimization #3: Smarter File
Filtering …", …); the user then asks for only some ("focus only "Evaluator Skip Based on Technical Inventory" and
"Optimization #6: …""). What the session did is those; the plan's other parts were not done, which is where that
work stands, not a to-do the user gave: said so in the session's summary ("Still open" while the session is
recent), never as a rule or a key memory. A part counts as named when its title (without a label such as
"Optimization #3:") or its number is in the user's words; sections that are no part of the work (context,
verification, the order of implementation) are none.

Only the user's next words after a plan narrow it, and only a plan whose turn was interrupted or changed nothing
(one carried out whole is done). The plan's parts are remembered across the turns of one observed batch (an import
sees a whole session).
"""

from __future__ import annotations

import re

from kenning.memory.text import clip

MAX_ITEM = 300

_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.MULTILINE | re.DOTALL)
# Sections of a plan that are not a part of the work
_NOT_WORK = re.compile(
    r"^(?:context|background|overview|summary|goals?|non-goals|problem|motivation|verification|testing|tests?|"
    r"test plan|implementation order|order|files? to (?:modify|create|change)|risks?|notes?|rollout|"
    r"out of scope|open questions|appendix|references|contexte|vérification|fichiers à modifier|contexto|"
    r"verificación|kontext|überprüfung|背景|概要|目的|検証|テスト|確認|実装順序|上下文|验证|测试|实现顺序|概述|"
    r"배경|검증|테스트|개요|구현 순서)", re.IGNORECASE)
# "Optimization #3:", "Phase 2 —", "Step 4.", "R5:": a label in front of a part's title
_LABEL = re.compile(r"^(?:[\w-]+\s+)?#?(\d+)\s*[:.)—–-]\s*|^([A-Z]\d+)\s*[:.)—–-]\s*")
# The user asks for only some: "focus only", "only do", "just", "只", "仅", "だけ", "のみ", "만"
_ONLY = re.compile(r"\bonly\b|\bjust\b|只|仅|だけ|のみ|만\b", re.IGNORECASE)


class PlanScope:
    """The work parts of the plan the batch's session accepted last."""

    def __init__(self) -> None:
        self.title = ""
        self.parts: list[str] = []

    def accepted(self, plan: str, title: str, *, carried_out: bool = False) -> None:
        """A plan handed over (its text, with its markdown headings); ``carried_out`` when its turn changed files
        and was not interrupted: then all of it was done, and nothing the user asks next narrows it."""
        self.title, self.parts = title, [] if carried_out else parts_of(plan)

    def forget(self) -> None:
        self.parts = []

    def left_out(self, words: str) -> str:
        """What the user's words leave out of the plan by asking for only some of its parts ('' when they do not,
        or name none of them, or name them all)."""
        if len(self.parts) < 2 or not _ONLY.search(words):
            return ""
        said = " ".join(words.lower().split())
        named = [p for p in self.parts if _named(p, said, self.parts)]
        left = [p for p in self.parts if p not in named]
        if not named or not left:
            return ""
        plan = f" “{clip(self.title, 80)}”" if self.title else ""
        item = f"Not done from the plan{plan} (asked for only {len(named)} of its {len(self.parts)} parts): " \
            + ", ".join(left)
        return clip(item.replace("; ", ", "), MAX_ITEM)


def parts_of(plan: str) -> list[str]:
    """The titles of a plan's parts: its numbered headings ("Optimization #3: …", "R5: …", "Partie 2 — …") one level
    below its title (or at its top level, when it has no single title), less those that are no part of the work.
    Only numbered parts are told apart: "only the root cause" names no part of a plan of "Root Cause" and "Fix"."""
    prose = _FENCE.sub("", plan)  # (a heading inside a code block is the code's: a prompt the plan quotes)
    heads = [(len(m.group(1)), m.group(2).strip()) for m in _HEADING.finditer(prose)]
    if not heads:
        return []
    top = min(level for level, _ in heads)
    level = top + 1 if sum(1 for lv, _ in heads if lv == top) == 1 else top
    return [h for lv, h in heads
            if lv == level and _LABEL.match(h) and not _NOT_WORK.match(_LABEL.sub("", h).strip("*` "))]


def _named(part: str, said: str, parts: list[str]) -> bool:
    """Whether the user's words (lower case, spaces collapsed) name a part: its title, or its label ("optimization
    #6", "#6", "phase 2", "r5") when no other part has that label."""
    title = " ".join(_LABEL.sub("", part).lower().split()).strip("*` ")
    if len(title) >= 8 and title in said:
        return True
    label = _label(part)
    if not label or sum(1 for p in parts if _label(p) == label) > 1:
        return False
    short = re.search(r"#\d+", label)  # "optimization #6" is also said "#6"
    return any(re.search(rf"(?<![\w#]){re.escape(x)}(?!\w|\.\d)", said) for x in ([label, short.group(0)] if short
                                                                               else [label]))


def _label(part: str) -> str:
    m = _LABEL.match(part)
    return " ".join(m.group(0).lower().rstrip(":.)—–- ").split()) if m else ""
