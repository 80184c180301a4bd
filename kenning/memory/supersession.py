"""Whether a new memory replaces an older one (the offline rule; an LLM observer names ids itself).

A newer statement replaces an older one on the same subject when

* both are standing rules (or the new one is a decision about a rule's subject) and the new one
  turns away from what the old one prescribes ("use pnpm, not npm" after "we use npm"), or says
  so with a cue ("from now on", "is gone", "instead of", "switched to", …) and shares a subject
  with it, or fills the same slot with something else ("from now on use pnpm for installs"
  after "use npm for installs": the same words once the tools are taken out);
* both say where the same workstream stands ("resumed the billing migration" after "paused
  the billing migration");
* both are facts about the same setting, command or file and the new one says it changed
  ("MAX_WORKERS is now 8", "the staging DB moved to db-9"), or sets the same setting to
  another value.

* the user's standing rule turns away from a command an older key memory says is run ("I don't want
  `cargo update` in release-plz" after "release-plz also runs `cargo update`");

* a decision chose something a newer memory says was switched away from ("switching from Chakra's
  `TreeView` to Ark UI's", "replaced `X` with `Y`", "instead of `X`"), a thing both name in code:
  whatever kind the newer one is (a fix often says it);

* a value the new memory says was changed ("raised the shutdown deadline from 10s to 120s") makes
  an older memory that states the old value of the same thing ("a 10s overall deadline caps the
  shutdown") no longer true, whatever kind either is.

Otherwise fixes, security notes and explored code are never replaced this way: two fixes of one
function are both true.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

from kenning.memory import cues
from kenning.memory import subjects as subj
from kenning.memory.layers import KEY, RULE
from kenning.memory.order import earlier
from kenning.memory.text import jaccard, stem

SLOT_SIMILAR = 0.5       # template overlap (with a cue) for "the same slot, another filler"
SLOT_SAME = 0.75         # template overlap that needs no cue
NEVER_REPLACED = ("bugfix", "security_alert", "security_note", "sensitive")
# Kinds whose memories a changed value can make untrue even when their type is one of NEVER_REPLACED.
CHANGEABLE = ("fix", "rootcause", "decision", "fact", "gotcha")
_ASSIGNMENT = re.compile(r"`?([A-Za-z_][\w.-]*)`?\s*(?:=|:=|\bto\b|\bis\b|\bat\b)\s*`?([\w./:-]+)`?")


@dataclass
class Memory:
    """What the rule needs of one observation."""

    id: int
    type: str
    layer: str
    text: str           # title, subtitle and facts
    created_at: float
    subjects: frozenset[str] = field(default_factory=frozenset)
    kind: str = ""      # the role the observer judged ('' before migration 0025)

    @classmethod
    def of(cls, id: int, type: str, layer: str, text: str, created_at: float, *, kind: str = "") -> Memory:
        return cls(id, type, layer or "", text, created_at, subj.subjects(text), kind)


def could_replace(new: Memory, old_id: int, old_type: str, old_layer: str, old_created_at: float,
                  old_kind: str = "") -> bool:
    """The tests of :func:`replaces` that read no text: when False, ``new`` never replaces that row
    (the caller need not build its Memory; :func:`kenning.store.supersede.automatic` asks SQL)."""
    # Newer by the clock while both clocks are believable, by arrival when either claims the future.
    if new.id == old_id or not earlier(old_created_at, old_id, new.created_at, new.id):
        return False
    if old_type in NEVER_REPLACED and old_kind not in CHANGEABLE:
        return False
    return not (new.type in NEVER_REPLACED and (old_layer or "") != RULE and old_kind not in CHANGEABLE
                and new.kind not in CHANGEABLE)


def replaces(new: Memory, old: Memory) -> bool:
    """Whether ``new`` makes ``old`` no longer true."""
    if not could_replace(new, old.id, old.type, old.layer, old.created_at, old.kind):
        return False
    if new.layer in (KEY, RULE) and old.layer in (KEY, RULE) and changed_value(new.text, old.text):
        return True
    if old.type == "decision" and old.layer == KEY and new.layer in (KEY, RULE) and switched_from(new.text, old.text):
        return True
    if old.type in NEVER_REPLACED or (new.type in NEVER_REPLACED and old.layer != RULE):
        return False  # two fixes of one thing are both true, unless one changed what the other states
    shared = _specific(subj.overlap(new.subjects, old.subjects), new.subjects, old.subjects)
    cue = subj.supersedes_something(new.text)
    strong = cue and subj.strong_cue(new.text)
    if subj.is_status(new.text) and subj.is_status(old.text):
        return any(s.startswith("work:") for s in shared)
    if new.layer == RULE and old.layer == KEY and _turns_away(new, old, shared):
        return True
    if (old.layer == RULE or old.type == "decision") and (new.layer == RULE or new.type == "decision"):
        return _replaces_rule(new, old, shared, cue, strong)
    if new.layer == KEY and old.layer == KEY:
        things = shared - {s for s in shared if s.startswith(("work:", "id:"))}
        if things and (cue or _reassigned(new.text, old.text)):
            return True
        return strong and _slot(new, old) >= SLOT_SIMILAR and len(_template_overlap(new, old)) >= 2
    return False


def _turns_away(rule: Memory, old: Memory, shared: set[str]) -> bool:
    """The user's rule turns away from a command an older finding says is done ("I don't want `cargo update`,
    remove it from release-plz" after "release-plz also runs `cargo update`"): the user's later word is what
    holds. Only about the very command (a shared command of two words, or two shared things), and never a
    finding that itself turns away from it."""
    away = {s for s in subj.negated(rule.text) if s in old.subjects} - subj.negated(old.text)
    if not away:
        return False
    return any(s.startswith("cmd:") and " " in s for s in shared) or len(shared) >= 2


def _replaces_rule(new: Memory, old: Memory, shared: set[str], cue: bool, strong: bool) -> bool:
    if not cues.english(new.text) or not old.text.isascii():
        # The grammar below reads English; in other languages a correction says so, about the same thing:
        # "更正：依赖管理改用 uv，不要再用 poetry" after "以后所有的 Python 依赖都用 poetry 管理", "Korrektur: ab
        # sofort bun statt pnpm" after "Ab jetzt immer pnpm" (German, Spanish … written without accents are ASCII).
        return not cues.english(new.text) and corrects(new.text, old.text)
    turned_away = subj.negated(new.text) & {s for s in old.subjects if s.startswith("cmd:")}
    if turned_away and not (subj.negated(old.text) & turned_away):
        return True  # the old rule prescribed what the new one turns away from
    tools = {s for s in shared if s.startswith(("cmd:", "set:", "file:"))}
    if strong and tools:
        return True
    slot = _slot(new, old)
    if strong and slot >= SLOT_SIMILAR:
        return True
    # The same slot filled with another tool or value replaces the old one only where one filler
    # excludes the other ("use yarn for installs" after "use npm for installs"; "deploys happen only
    # on Thursdays"), not where fillers add up ("run `make lint` before pushing" after `make test`).
    if not _exclusive(new, old):
        return False
    if cue and (tools or slot >= SLOT_SIMILAR):
        return True
    sized = min(len(subj.template(new.text, new.subjects)), len(subj.template(old.text, old.subjects))) >= 2
    fillers = {s for s in new.subjects if s.startswith("cmd:")}, {s for s in old.subjects if s.startswith("cmd:")}
    return sized and slot >= SLOT_SAME and fillers[0] != fillers[1] and bool(fillers[0])


_CHOICE_VERBS = "use prefer deploy host store install lint format build manage bundle package serve schedule target pin"
EXCLUSIVE = frozenset(stem(w) for w in _CHOICE_VERBS.split())
_ONLY = re.compile(r"\b(?:only|always|exclusively|single|one)\b", re.IGNORECASE)


def _exclusive(new: Memory, old: Memory) -> bool:
    """Whether the rules' slot takes one filler at a time: a choice verb, or "only"."""
    shared = _template_overlap(new, old)
    return bool(shared & EXCLUSIVE) or bool(_ONLY.search(new.text) and _ONLY.search(old.text))


def _slot(new: Memory, old: Memory) -> float:
    return jaccard(subj.template(new.text, new.subjects), subj.template(old.text, old.subjects))


def _template_overlap(new: Memory, old: Memory) -> frozenset[str]:
    return subj.template(new.text, new.subjects) & subj.template(old.text, old.subjects)


def _specific(shared: set[str], a: AbstractSet[str], b: AbstractSet[str]) -> set[str]:
    """Shared subjects, without a command's first word when each side names it more precisely
    and differently (``make test`` and ``make lint`` share ``make``: not the same command)."""
    out = set(shared)
    for s in shared:
        if s.startswith("cmd:") and " " not in s:
            longer_a = {x for x in a if x.startswith(s + " ")}
            longer_b = {x for x in b if x.startswith(s + " ")}
            if longer_a and longer_b and not longer_a & longer_b:
                out.discard(s)
    return out


def _reassigned(new: str, old: str) -> bool:
    """The same setting given another value ("MAX_WORKERS=8" after "MAX_WORKERS=4")."""
    a = {k.lower(): (k, v) for k, v in _assignments(new)}
    b = {k.lower(): v for k, v in _assignments(old)}
    return any(k in b and b[k] != v and ("_" in name or "." in name or name.isupper())
               for k, (name, v) in a.items())


@lru_cache(maxsize=2048)  # a pure function of the text: asked again for every candidate of every new memory
def _assignments(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_ASSIGNMENT.findall(text))


# "from 10s to 120s", "10 → 120 seconds": a value that changed, with the words before it (what it is).
# "… from 10s to 120s", "… from v0.52.0 to v0.54.0" (a version: the value, with or without its "v").
_CHANGE = re.compile(r"((?:[\w`./-]+\s+){0,4}?)(?:from|was)\s+`?v?(\d[\w.]*(?:[\s-](?:seconds?|secs?|ms|"
                     r"milliseconds?|minutes?|mins?|hours?|days?|bytes?|[kmgt]i?b))?)`?\s+(?:to|→|->|=>)\s+`?v?(\d[\w.]*)",
                     re.IGNORECASE)
_VALUE = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)*)\s*-?\s*(seconds?|secs?|s|milliseconds?|ms|minutes?|mins?|m|hours?|h|"
                    r"days?|d|bytes?|b|[kmgt]i?b)?(?![\w.])", re.IGNORECASE)
_UNITS = {"second": "s", "seconds": "s", "sec": "s", "secs": "s", "millisecond": "ms", "milliseconds": "ms",
          "minute": "m", "minutes": "m", "min": "m", "mins": "m", "hour": "h", "hours": "h", "day": "d", "days": "d",
          "byte": "b", "bytes": "b"}


def _value(number: str, unit: str | None) -> str:
    u = (unit or "").lower()
    return number + _UNITS.get(u, u)


def has_change(text: str) -> bool:
    """Whether ``text`` says some value changed ("from 10s to 120s")."""
    return bool(_CHANGE.search(text or ""))


def changed_value(new: str, old: str) -> bool:
    """``new`` says a value changed from what ``old`` states for the same thing: the old value is in
    ``old`` and so is a word that names what it is ("deadline")."""
    old_values = {_value(m.group(1), m.group(2)) for m in _VALUE.finditer(old)}
    if not old_values:
        return False
    old_words = {stem(w) for w in re.findall(r"[A-Za-z]{4,}", old.lower())}
    for m in _CHANGE.finditer(new):
        before = _VALUE.fullmatch(m.group(2).strip())
        after = _VALUE.match(m.group(3))
        if before is None or after is None:
            continue
        was = _value(before.group(1), before.group(2))
        now = _value(after.group(1), after.group(2) or before.group(2))
        if was == now or was not in old_values:
            continue
        what = {stem(w) for w in re.findall(r"[A-Za-z]{4,}", m.group(1).lower())} - {"from", "with", "that", "this"}
        if what & old_words:
            return True
    return False


# What a memory says was left: "switching from Chakra UI's styled `TreeView` (…) to …", "replaced `X` with",
# "instead of `X`", "moved away from `X`".
_LEFT = re.compile(r"\b(?:switch(?:ed|ing|es)?|mov(?:ed|ing|es)(?: away)?|migrat(?:ed|ing|es)|went|changed?)\s+from\s+"
                   r"(.+?)(?:\s+(?:to|in favou?r of|over to)\s+|[;.]\s|$)|\breplac(?:ed|ing|es)\s+(.+?)\s+with\s+|"
                   r"\binstead of\s+([^,;.]+)", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{1,120})`")


def _code_names(text: str) -> set[str]:
    return {m.group(1).strip().rstrip(".").removesuffix("()").lower() for m in _CODE.finditer(text)} - {""}


def _left(text: str) -> set[str]:
    """What ``text`` says was switched away from, replaced or used instead of, as code names."""
    return {n for m in _LEFT.finditer(text) for n in _code_names(next(g for g in m.groups() if g is not None))}


def switched_from(new: str, old: str) -> bool:
    """``new`` says something was switched away from, replaced or used instead of, that ``old`` chose: names in
    code (not what ``old`` itself says it left: "use `pnpm` instead of `npm`" agrees with "… instead of `npm`")."""
    mine = _code_names(old) - _left(old)
    return bool(mine) and bool(_left(new) & mine)


_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9_+-]+)*")
_NEAR = 40  # how far from the words that replace something a correction names it ("statt pnpm", "poetry yerine")
# The common words of a rule in the other languages in Latin letters we read (German, French, Spanish, Portuguese,
# Italian, Turkish): two rules share them whatever they are about ("wir verwenden …", "a partir de ahora …").
_FRAME_TEXT = """
ab jetzt sofort wir ich du sie es der die das den dem ein eine einen und oder im mit von zu auf ist sind bitte immer
nie niemals kein keine keinen nicht mehr statt stattdessen verwenden benutzen nutzen nehmen diesem diese dieses projekt
hier alle alles
a de del el la los las un una y o en con para por que no siempre nunca usa usar usamos uses este esta proyecto partir
ahora lugar vez
le les une des du et ou dans avec pour par ne pas plus jamais toujours on utilise utiliser utilisez ce cette projet au
lieu
os as um uma e em na com sempre use usem projeto agora
il lo gli nel per che non sempre usiamo usare questo questa progetto ora poi invece
bu ve veya ile her zaman asla kullan kullanma kullanmayin projede proje sonra bundan yerine
"""
_FRAME_WORDS = frozenset(_FRAME_TEXT.split())
# The words that replace something, next to what they replace
_REPLACED = re.compile(
    r"(?<![\w-])(?:instead of|instead|rather than|no longer|anymore|not any ?more|switch(?:ed)? (?:from|to)|"
    r"au lieu de|plutôt que|ne plus|statt|anstatt|stattdessen|nicht mehr|kein(?:e[nrs]?)?|mehr|en lugar de|"
    r"en vez de|ya no|más|em vez de|ao invés de|mais|invece di|più|вместо|больше не|yerine|artık|değil)(?![\w-])|"
    # "in English, not German": the contrast after a comma
    r",\s*(?:not|nicht|pas|no|não|non|не)(?![\w-])|"
    r"代わりに|ではなく|대신|改用|换成|改为|不再|不要再|别再|더 이상|もう", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`\n]{1,80})`")
_HANGUL_ENDINGS = frozenset(["하세", "세요", "주세", "니다", "합니", "습니", "해요", "으로", "에서", "에게",
                             "하고", "해야", "합시", "시다", "앞으", "하지", "마세"])
# Those that follow what they replace ("poetry yerine", "pnpm 대신", "kein pnpm mehr"); the others precede it
_AFTER_IT = frozenset(["yerine", "değil", "대신", "代わりに", "ではなく", "mehr", "anymore", "instead"])
_SHARED_NAMES = 1      # a tool, file or setting both name ("poetry", "UTC")
_SHARED_PAIRS = 2      # or as many character pairs of a CJK text (依赖, 管理)
# The words our observers put around what was said ("stated by the user", "User: …"): no shared subject.
_SAID_BY = frozenset(["user", "stated", "said", "typed", "agent", "worked", "rejecting", "tool", "call", "plan",
                      "accepted", "decided", "reported", "noted", "gotcha", "open", "item", "how", "it", "works"])


def _grammar(pair: str) -> bool:
    """A character pair of grammar, not of a subject: all kana (particles, verb endings), a common Korean ending,
    or part of a cue word ("以后", "앞으로")."""
    if all("\u3040" <= c <= "\u30ff" for c in pair) or pair in _HANGUL_ENDINGS:
        return True
    return any(cues.has(pair, sig) for sig in ("always", "must", "prohibit", "correction"))


def corrects(new: str, old: str) -> bool:
    """In any language: ``new`` says it corrects or replaces something ("更正", "改用", "代わりに",
    "대신", "stattdessen", "instead") and is about what ``old`` is about: a name both use, or two of
    the character pairs of a text written without spaces."""
    from kenning.memory.text import STOPWORDS, content_words

    if not cues.has(new, "correction"):
        return False
    # What a correction replaces is named next to the words that replace it ("bun statt pnpm", "au lieu de pnpm",
    # "kein pnpm mehr", "poetry yerine uv", "pnpm 대신"); the other words two rules of one language share ("wir
    # verwalten …", "gerimos …") say nothing of what they are about. A name in code quotes is a name anywhere.
    replaced: set[str] = set()
    for m in _REPLACED.finditer(new):
        if m.group(0).lower() in _AFTER_IT:
            replaced |= {w.lower() for w in _LATIN.findall(new[max(0, m.start() - _NEAR):m.start()])[-2:]}
        else:
            replaced |= {w.lower() for w in _LATIN.findall(new[m.end():m.end() + _NEAR])[:2]}
    replaced |= {c.lower() for c in _QUOTED.findall(new)}
    names = replaced & ({w.lower() for w in _LATIN.findall(old)} | {c.lower() for c in _QUOTED.findall(old)})
    if len(names - STOPWORDS - _SAID_BY - _FRAME_WORDS) >= _SHARED_NAMES:
        return True
    # Written without spaces: two character pairs both use, not those of grammar (kana, a polite ending) or of
    # the cue words themselves (以后, 앞으로)
    pairs = {w for w in content_words(new) & content_words(old) if not w.isascii() and not _grammar(w)}
    return len(pairs) >= _SHARED_PAIRS
