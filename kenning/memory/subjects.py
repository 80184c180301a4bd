"""What a memory is about (its subjects), and the words that say it replaces an older one.

A *subject* is a thing a rule, decision, fact or status can be about, written as
``kind:name`` so that two memories about the same thing meet:

* ``cmd:`` a command or tool (``cmd:make proto``, ``cmd:pnpm``): backticked commands, and the
  tool named after verbs like *use*, *run*, *switched to*, *instead of*;
* ``file:`` a path or file name (``file:src/gen/api.pb.go``, ``file:migrations/``, ``file:*.pb.go``);
* ``set:`` a setting (``set:MAX_WORKERS``, ``set:--no-cache``, ``set:db.pool.size``);
* ``id:`` a code identifier (``id:cache_key``, ``id:TenantCache``);
* ``work:`` a workstream (``work:billing migration``), named around status words;
* ``ticket:`` an issue key (``ticket:PAY-123``).

Cue words ("from now on", "no longer", "instead of", "is gone", "switched to", "resumed", …)
say that a statement replaces what was true before; status words say where a piece of work
stands. Nothing here knows any particular tool: the grammar finds the subjects.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from functools import lru_cache

from kenning.memory.text import STOPWORDS, content_words, stem, words

# Statements that replace what was said before.
SUPERSEDE_CUES = re.compile(
    r"\b(?:from now on|going forward|no longer|not any ?more|anymore|instead of|instead|rather than|"
    r"is gone|are gone|has been (?:removed|replaced|deprecated|dropped|renamed)|"
    r"(?:was|were|got) (?:removed|replaced|deprecated|dropped|renamed)|"
    r"(?:switched|switching|moved|moving|migrated|migrating|changed|changing) (?:[\w.-]+ ){0,3}(?:to|from)|"
    r"replaced (?:by|with)|replaces|supersedes|in favou?r of|"
    r"stop (?:using|running|doing)|don'?t use\b.*\banymore|deprecated|obsolete|"
    r"(?:is|are) now|now (?:use|uses|run|runs|lives?|is|are|we)|"
    r"actually|correction|scratch that|ignore (?:what i said|the earlier|my earlier)|"
    r"changed my mind|no more|not \w+ any ?more|resumed|resuming|back to|reverted to|"
    r"paused|pausing|on hold|unblocked|blocked|"
    r"(?:is|are|was) (?:done|finished|complete|completed|shipped|cancelled|canceled|abandoned|dropped))\b",
    re.IGNORECASE)

# Cues that only say a statement holds from now on ("from now on, run ruff before committing"):
# a new rule often says so without replacing any other.
WEAK_CUES = re.compile(r"^(?:from now on|going forward|now (?:we|use|uses|run|runs|is|are)|(?:is|are) now)$",
                       re.IGNORECASE)


@lru_cache(maxsize=2048)  # pure functions of the text, asked again for every candidate of every new memory
def strong_cue(text: str) -> bool:
    """A cue that says something older stops being true ("instead of", "is gone", "switched to", …)."""
    return any(not WEAK_CUES.match(m.group(0)) for m in SUPERSEDE_CUES.finditer(text or ""))


# Where a piece of work stands.
STATUS_WORDS = re.compile(
    r"\b(?:paused|pausing|pause|on hold|resumed|resuming|resume|blocked|unblocked|waiting (?:on|for)|back on|"
    r"postponed|deferred|shelved|parked|started|starting|kicked off|in progress|underway|"
    r"finished|completed|done|shipped|released|merged|landed|cancelled|canceled|abandoned|dropped|"
    r"(?:is|are) (?:live|next))\b", re.IGNORECASE)

WORK_NOUNS = ("migration", "refactor", "refactoring", "rewrite", "rollout", "roll-out", "upgrade", "port",
              "integration", "redesign", "cleanup", "clean-up", "project", "feature", "workstream", "epic",
              "spike", "experiment", "launch", "release", "deprecation", "split", "move", "transition",
              "implementation", "work", "effort", "initiative", "branch", "pr", "ticket", "change", "fix")

_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_CANDIDATE = re.compile(r"[\w./*@:-]+")  # tokens that may be paths (checked one by one: cheap)
_EXTENSIONS = words("py pyi js jsx ts tsx mjs cjs go rs rb java kt swift c h cc cpp hpp cs php sql sh bash zsh yml "
                    "yaml toml json jsonc ini cfg conf env lock md rst txt html css scss proto graphql gql tf hcl "
                    "xml gradle mk makefile dockerfile csv ipynb")
_PATH = re.compile(r"(?<![\w@:/.-])((?:\.{0,2}/)?(?:[\w.*-]+/)+[\w.*-]*|[\w*-]+(?:\.[\w*-]+)*\.(?:py|pyi|js|jsx|"
                   r"ts|tsx|mjs|cjs|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sql|sh|bash|zsh|yml|yaml|toml|"
                   r"json|jsonc|ini|cfg|conf|env|lock|md|rst|txt|html|css|scss|proto|graphql|gql|tf|hcl|xml|"
                   r"gradle|mk|makefile|dockerfile|csv|ipynb))(?![\w/])", re.IGNORECASE)
_ENV = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")
_ASSIGN = re.compile(r"(?<![\w-])([A-Za-z_][A-Za-z0-9_]*)=\S")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]+)")
_DOTTED = re.compile(r"\b([a-z][\w]*(?:\.[a-z_][\w]*){2,})\b")
_IDENT = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)"
                    r"(?:\(\))?")
_TICKET = re.compile(r"\b([A-Z][A-Z0-9]{1,9}-\d{1,6})\b")
# The word after these verbs names a tool or command: "we use pnpm", "switched to ruff".
_TOOL_AFTER = re.compile(
    r"\b(?:use|uses|using|used|run|runs|running|with|via|prefer|prefers|switch(?:ed|ing)? (?:over )?to|"
    r"mov(?:e|ed|ing) to|migrat(?:e|ed|ing) to|instead of|rather than|in favou?r of|replaced? (?:by|with)|"
    r"stop using|not|don'?t use|no more|over|than|call|calls|invoke|install(?:ed)? (?:with|via)|"
    r"build(?:s)? with|deploy(?:s|ed)? with|test(?:s|ed)? with|lint(?:s|ed)? with|format(?:s|ted)? with|"
    r"from|chose|choose|chosen|picked?|went with|go with|going with|settled on|adopt(?:ed)?|keep|keeps)\s+"
    r"(?:(?:on|in|via|through|with)\s+)?"
    r"(?:the\s+|a\s+|an\s+)?([A-Za-z][\w.+-]*(?:\s+(?:run|exec|test|build|install|dev|lint|check|proto|start|"
    r"serve|deploy|up|down|compose)\b)?)", re.IGNORECASE)
# The words before these name the subject: "make test is gone", "Jenkins was removed".
_GONE_WORDS = re.compile(r"\b(?:gone|removed|deprecated|dropped|replaced|obsolete|broken|dead|retired|renamed|"
                         r"no longer)\b", re.IGNORECASE)
_TOOL_BEFORE = re.compile(
    r"`?([A-Za-z][\w.+-]*(?:\s[\w.+-]+)?)`?\s+(?:is|are|was|were|has been|have been|got)\s+(?:now\s+)?"
    r"(?:gone|removed|deprecated|dropped|replaced|obsolete|broken|dead|retired|renamed|"
    r"no longer (?:used|needed|supported|required|available|allowed|wanted))", re.IGNORECASE)
_NOT_TOOLS = STOPWORDS | words("""
always never also just now then only every each all any some none tests test code file files it this that
thing things one way ones them here there first last next new old same other same really good bad fine
install installs installing build builds run runs lint linting format formatting check checks deploy
edit edits touch change changes commit push merge write read modify delete add remove call hand manually
used needed supported required working valid allowed necessary available wanted here there
project repo repository api app service package packages dependency dependencies command commands tool tools
script scripts setting settings value values version versions time times default instead place favour favor
""")


# A proper name after "to": "moved CI to GitHub Actions" (lower-case words after "to" are verbs),
# and any capitalised name inside a sentence ("CI runs on Jenkins"): products, services, tools.
_TO_NAME = re.compile(r"\bto\s+([A-Z][\w.+-]*(?:\s[A-Z][\w.+-]*)?)")
_PROPER = re.compile(r"(?<=[a-z0-9,;] )([A-Z][a-z][\w.+-]{2,})\b")


@lru_cache(maxsize=8192)  # a pure function of the text: supersession asks again for the same candidates
def subjects(text: str) -> frozenset[str]:
    """The subjects ``text`` mentions, as ``kind:name`` strings."""
    found: set[str] = set()
    t = text or ""
    for m in _BACKTICK.finditer(t):
        found |= _code_subjects(m.group(1))
    plain = _BACKTICK.sub(" ", t)
    for token in _CANDIDATE.findall(plain):
        p = token.strip(".,:;")
        if len(p) > 2 and _is_path(p):
            found.add("file:" + p.lstrip("./") if not p.startswith("../") else "file:" + p)
    for rx in (_ENV, _ASSIGN):
        for m in rx.finditer(t):
            found.add("set:" + m.group(1))
    if "--" in plain:
        for m in _FLAG.finditer(plain):
            found.add("set:" + m.group(1))
    for m in _DOTTED.finditer(plain):
        if not _PATH.fullmatch(m.group(1)):
            found.add("set:" + m.group(1))
    for m in _IDENT.finditer(plain):
        found.add("id:" + m.group(1))
    for m in _TICKET.finditer(t):
        found.add("ticket:" + m.group(1))
    for m in _PROPER.finditer(plain):
        name = m.group(1)
        if name.lower() not in _NOT_TOOLS and not _IDENT.fullmatch(name):
            found.add("cmd:" + name.lower())
    for rx in (_TOOL_AFTER, _TO_NAME):
        for m in rx.finditer(plain):
            name = _tool_name(m.group(1))
            if name:
                found.add("cmd:" + name)
    found |= {"cmd:" + name for name in _named_before_gone(plain)}
    found |= {"work:" + w for w in workstreams(plain)}
    return frozenset(found)


def _is_path(p: str) -> bool:
    """A path or a file name: it has a folder, or a known extension (``@`` and ``:`` rule out URLs, emails)."""
    if "@" in p or "://" in p or p.startswith("http"):
        return False
    if "/" in p:
        return bool(_PATH.fullmatch(p))
    stem_, dot, ext = p.rpartition(".")
    return bool(dot) and bool(stem_) and ext.lower() in _EXTENSIONS and ":" not in p


def _named_before_gone(text: str) -> list[str]:
    """Tools named just before "is gone", "was removed", "is no longer used" … ("`make test` is gone")."""
    if not _GONE_WORDS.search(text):
        return []
    out = []
    for m in _TOOL_BEFORE.finditer(text):
        name = _tool_name(m.group(1))
        if name:
            out.append(name)
    return out


def _code_subjects(code: str) -> set[str]:
    """Subjects of a backticked span: a command (its first word, and two when the second is a verb)."""
    out: set[str] = set()
    c = code.strip()
    if not c:
        return out
    if _PATH.fullmatch(c) or ("/" in c and " " not in c):
        out.add("file:" + c.lstrip("./"))
        return out
    if _ENV.fullmatch(c) or _FLAG.fullmatch(c):
        out.add("set:" + c)
        return out
    words = [w for w in c.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
    if not words:
        return out
    first = words[0].lower()
    name = words[0].rstrip(".")  # ("`TreeView.` components": the namespace, said with the dot of its members)
    if re.fullmatch(r"[\w.+-]+(?:\(\))?", name) and len(words) == 1 and _IDENT.fullmatch(name.rstrip("()")):
        out.add("id:" + name.rstrip("()"))
        return out
    out.add("cmd:" + first)
    if len(words) > 1 and re.fullmatch(r"[a-z][\w:.-]*", words[1]) and not words[1].startswith("-"):
        second = words[1].lower()
        if first in ("npm", "pnpm", "yarn", "bun", "uv", "poetry", "cargo", "go", "docker", "git") and \
                second in ("run", "exec", "x") and len(words) > 2:
            out.add(f"cmd:{first} {second} {words[2].lower()}")
        out.add(f"cmd:{first} {second}")
    for w in words[1:]:
        if _PATH.fullmatch(w):
            out.add("file:" + w.lstrip("./"))
    return out


def _tool_name(raw: str) -> str:
    words = raw.strip("`'\".,:;()").split()
    if not words:
        return ""
    head = words[0].strip("`'\".,:;()")
    if head.lower() in _NOT_TOOLS or len(head) < 2 or head.isdigit():
        return ""
    if not re.fullmatch(r"[A-Za-z][\w.+-]*", head):
        return ""
    name = head.lower()
    if len(words) > 1 and words[1].lower() not in _NOT_TOOLS:
        return f"{name} {words[1].lower().strip('`.,')}"
    return name


_NOT_WORK = words("""
this that current whole entire new want wants need needs try trying start continue finish do make doing working
work on plan planned going about lets let's big small quick whole full first next last
""")
# "not npm", "never pip", "instead of yarn": names a statement turns away from.
_NEGATED = re.compile(r"\b(?:not|never|no longer|don'?t use|do not use|stop using|instead of|rather than|no more|"
                      r"don'?t want|do not want|stop running|stop calling|"
                      r"avoid|drop(?:ped)?|away from|from)\s+(?:the\s+|using\s+|use\s+)?`?([A-Za-z][\w.+-]*)`?",
                      re.IGNORECASE)


@lru_cache(maxsize=2048)
def negated(text: str) -> frozenset[str]:
    """``cmd:`` subjects a statement turns away from ("use pnpm, not npm", "npm is gone" → {cmd:npm})."""
    out = set()
    for m in _NEGATED.finditer(text or ""):
        name = _tool_name(m.group(1))
        if name:
            out.add("cmd:" + name.split()[0])
    for name in _named_before_gone(text or ""):
        out.add("cmd:" + name.split()[0])
    return frozenset(out)


_WORK_NOUNS = frozenset(WORK_NOUNS)
_WORDS = re.compile(r"[\w-]+(?:\.[\w-]+)*")  # a sentence's full stop is not part of its last word


_CLAUSE_BREAK = re.compile(r"[,;:.!?—–()\n，。；：]")


def workstreams(text: str) -> set[str]:
    """Work named next to a work noun ("the billing migration", "the v2 API rewrite"), as sorted words."""
    found = list(_WORDS.finditer(text))
    lower = [m.group(0).lower() for m in found]
    out: set[str] = set()
    for i, w in enumerate(lower):
        if w not in _WORK_NOUNS:
            continue
        # the words naming it, within its clause ("Dmytro, the implementation is done": no work named)
        start = max(0, i - 3)
        while start < i and _CLAUSE_BREAK.search(text, found[start].end(), found[i].start()):
            start += 1
        before = [x for x in lower[start:i] if x not in STOPWORDS and x not in _NOT_WORK
                  and not STATUS_WORDS.fullmatch(x)]
        if before:
            out.add(" ".join(sorted({*before[-2:], w})))
    return out


@lru_cache(maxsize=2048)
def supersedes_something(text: str) -> bool:
    """Whether ``text`` says it replaces what held before."""
    return bool(SUPERSEDE_CUES.search(text or ""))


@lru_cache(maxsize=2048)
def is_status(text: str) -> bool:
    """Whether ``text`` says where a piece of work stands."""
    return bool(STATUS_WORDS.search(text or "")) and bool(workstreams(text or ""))


@lru_cache(maxsize=8192)
def template(text: str, subjects_: frozenset[str]) -> frozenset[str]:
    """The words of ``text`` once its subjects are taken out: what a rule says about its subject.

    "Use npm for installs" and "From now on use pnpm for installs" share a template
    ({use, install}): the second replaces the first although they name different tools.
    """
    names = {s.split(":", 1)[1].lower() for s in subjects_}
    parts = names | {w for n in names for w in re.split(r"[\s/]+", n)} | {stem(w) for n in names for w in n.split()}
    cues = content_words(" ".join(m.group(0) for m in SUPERSEDE_CUES.finditer(text or "")))
    return frozenset(w for w in content_words(text) if w not in parts and w not in cues)


def overlap(a: AbstractSet[str], b: AbstractSet[str]) -> set[str]:
    """Subjects two memories share; workstreams meet when they share most of their words."""
    shared = {s for s in a & b if not s.startswith("work:")}
    wa = [s[5:].split() for s in a if s.startswith("work:")]
    wb = [s[5:].split() for s in b if s.startswith("work:")]
    for x in wa:
        for y in wb:
            sx, sy = set(x), set(y)
            if len(sx & sy) >= min(2, len(sx), len(sy)) and len(sx & sy) * 2 >= max(len(sx), len(sy)):
                shared.add("work:" + " ".join(sorted(sx & sy)))
    return shared
