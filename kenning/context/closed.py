"""Open work that the repository's history since says is done: a to-do that names the release of a version or
the merge of a pull request, or a count of what remains of a version, once a later commit released that
version or a later merge took that pull request (the session summaries' state lines).

Standard library only (the SessionStart hook may build the index itself).
"""

from __future__ import annotations

import itertools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# A version as releases name it: "v0.16.0", "1.2.3", "2.0.0-rc.1", "v2.1" (not "1.5 hours": two parts need the v)
_VERSION = re.compile(r"(?<![A-Za-z0-9_.])v?\d+\.\d+\.\d+(?:-[A-Za-z0-9.]+)?(?![A-Za-z0-9_.])|"
                      r"(?<![A-Za-z0-9_.])v\d+\.\d+(?![A-Za-z0-9_.])")
_RELEASE = re.compile(r"releas|\bship|publish|\btag|\bbump|\bcut\b|"
                      r"릴리[스즈]|배포|출시|リリース|公開|发布|發布|发版|上线", re.IGNORECASE)
_MERGE = re.compile(r"merg|머지|병합|マージ|合并|合併", re.IGNORECASE)
_PR = re.compile(r"(?:#|\bPR\s*#?)(\d+)\b", re.IGNORECASE)
# What remains of some work: "the 2 remaining items", "남은 2개", "残り2件", "剩下的两项"
_REMAINS = re.compile(r"remaining|left to do|still (?:open|to do)|남은|남아 있|残り|残っ|剩下|剩余|还剩", re.IGNORECASE)
# What comes next: "the top priority is the v0.16.0 release", "next up: v2.3.0", "가장 높은 우선순위는 …", "次は…",
# with a word between ("recommended next feature work: tag v0.15.0 …", "다음 기능 작업 추천: …")
_NEXT = re.compile(r"\bpriorit(?:y|ies)\b|\bnext (?:up|is|comes)\b|\bnext (?:\w+ ){0,2}(?:steps?|work|tasks?)\b|"
                   r"우선순위|우선 과제|다음 (?:[가-힣]+ )?(?:작업|단계|할 일)|"
                   r"優先|次は|次の(?:\w{1,4}の)?(?:作業|ステップ)|优先|下一步|接下来", re.IGNORECASE)


class Done:
    """What one session's state line says was released and merged, as of when the session ended."""

    __slots__ = ("at", "merged", "released")  # (no dataclass: the hook path imports this)

    def __init__(self, at: float, released: frozenset[str], merged: frozenset[str]) -> None:
        self.at, self.released, self.merged = at, released, merged


def _version(v: str) -> str:
    return v.lower().removeprefix("v")


def done_of(line: str, at: float) -> Done | None:
    """The releases (commits whose subject releases a version) and merges a summary's state line names
    (kenning/context/layout.py state_of)."""
    released: set[str] = set()
    merged: set[str] = set()
    for part in line.split("; "):
        if part.startswith("committed "):
            for commit in part[len("committed "):].split(", "):
                if _RELEASE.search(commit):
                    released |= {_version(v) for v in _VERSION.findall(commit)}
        elif part.startswith("merged "):
            merged |= set(_PR.findall(part))
    return Done(at, frozenset(released), frozenset(merged)) if released or merged else None


def history(summaries: Iterable[tuple[str, float]]) -> list[Done]:
    """The releases and merges of sessions, from their (state line, ended at)."""
    return [d for d in (done_of(line, at) for line, at in summaries) if d is not None]


def closed(text: str, said_at: float, done: list[Done], *, open_work: bool = True) -> bool:
    """Whether work ``text`` leaves open (said at ``said_at``) was done since: its version released, or its pull
    request merged, in a session that ended after it was said. Of a memory that is no open work (``open_work``
    False: a gotcha, a fact …), only a count of what remains of a version, or its release said to come next ("the
    top priority is the v0.16.0 release"): "`gh pr merge 235` needs `--admin`" stays true after #235 is merged."""
    later = [d for d in done if d.at >= said_at]
    if not later:
        return False
    versions = {_version(v) for v in _VERSION.findall(text)}
    says = _REMAINS.search(text) or ((open_work or _NEXT.search(text)) and _RELEASE.search(text))
    if versions and says and any(versions & d.released for d in later):
        return True
    prs = set(_PR.findall(text))
    return open_work and bool(prs) and bool(_MERGE.search(text)) and any(prs & d.merged for d in later)


# A commit that repairs something: of a conventional type for that ("fix: …", "test(step): make the test
# deterministic", "perf: …"), or one that says it fixes ("chore(ci): fix …", "Fix the …"). Not a refactor, a
# feature or a chore: a cause is not "fixed in" a refactor that happened to share its words.
_CHANGES_CODE = re.compile(r"^(?:[0-9a-f]{7,40} )?(?:fix|bugfix|hotfix|test|perf)(?:\([^)]*\))?!?:", re.IGNORECASE)
_SAYS_FIX = re.compile(r"\bfix(?:es|ed)?\b|\bhotfix\b|\bresolve[sd]?\b", re.IGNORECASE)


_HASHED = re.compile(r"([0-9a-f]{7,40}) ")
# Housekeeping by the conventional commit types ("chore: commit post-release housekeeping artifacts", "docs: …",
# "ci: …"), unless its scope says it is a release ("chore(release): v0.16.0"), and merge commits.
_HOUSEKEEPING = re.compile(r"^(?:(?:chore|docs|style|ci|build|test)(?:\((?!release)[^)]*\))?!?:|Merge )|"
                           # a scratch commit, squashed or rewritten later ("x", "wip", "fixup! …")
                           r"^(?:\S{1,3}|wip|tmp|temp|scratch|(?:fixup|squash|amend)! .*)$", re.IGNORECASE)


def split_commit(commit: str) -> tuple[str, str]:
    """A commit a state line names as (hash, subject): "<hash> <subject>", or its subject alone when git printed no
    hash ("Add --trust flag …" keeps its first word)."""
    m = _HASHED.match(commit)
    return (m.group(1), commit[m.end():]) if m else ("", commit)


def housekeeping(commit: str) -> bool:
    """Whether a commit ("<hash> <subject>" or its subject) is housekeeping, not the work of its session."""
    return bool(_HOUSEKEEPING.match(split_commit(commit)[1]))


def changes_code(commit: str) -> bool:
    """Whether a commit ("<hash> <subject>" or its subject) can be the fix of a cause."""
    return bool(_CHANGES_CODE.match(commit) or _SAYS_FIX.search(commit))


_TERM = re.compile(r"[a-z][a-z0-9_-]{3,}")
_COMMON = frozenset(("fix", "fixed", "fixes", "with", "from", "that", "this", "when", "into", "only", "after",
                     "before", "without", "because", "were", "have", "does", "then", "than", "they", "them",
                     "their", "there", "which", "while", "also", "still", "every"))


_NOW = re.compile(r"\b(?:is|are) now\b|\bnow (?:uses|runs|returns|handles|calls|works)\b", re.IGNORECASE)


def commits_of(line: str) -> list[str]:
    """The commits ("<hash> <subject>") a summary's state line names."""
    part = next((p for p in line.split("; ") if p.startswith("committed ")), "")
    return [c for c in part[len("committed "):].split(", ") if c and not c.startswith("…")]


def fixed_in(cause: str, commits: list[str]) -> str:
    """The commit of the cause's session that changed the code about what the cause says (two words of substance
    in common), '' when none does: a cause said in the present tense is then history, not how the code is."""
    if _NOW.search(cause):
        return ""  # "… is now enabled": says how things are after a change, no cause of a fault
    mine = _terms(cause)
    return next((c for c in reversed(commits) if changes_code(c) and len(mine & _terms(c)) >= 2), "")


def _terms(text: str) -> set[str]:
    """A text's words of substance, to tell two texts about the same thing (two in common)."""
    return set(_TERM.findall(text.lower())) - _COMMON


# A gap the agent found: what something lacks or does not cover ("The Pkl tests cover feature and protected
# branches, but not detached `HEAD`", "there is no test for the empty cart", "没有覆盖…", "…のテストがない").
_GAP = re.compile(r"\bbut not\b|\bnot (?:yet )?(?:covered|tested|handled|supported)\b|\buntested\b|"
                  r"\bdo(?:es)?(?:n't|n’t| not) (?:cover|test|handle|support|check)\b|\b(?:is|are) missing\b|"
                  r"\bthere (?:is|are) no (?:tests?|coverage|check)\b|\bno (?:tests?|coverage) (?:for|of)\b|"
                  r"没有(?:测试|覆盖|处理|支持)|未(?:覆盖|测试|处理|支持)|缺少|テスト(?:が|は)(?:ない|ありません)|"
                  r"カバーして(?:いない|いません)|未対応|테스트(?:가|는) 없|커버하지 않|누락", re.IGNORECASE)
# Commits that add what was missing: a fix, a test, a feature ("fix(builtins): allow detached HEAD …").
_FILLS = re.compile(r"^(?:[0-9a-f]{7,40} )?(?:fix|bugfix|hotfix|test|feat|perf)(?:\([^)]*\))?!?:|"
                    r"\b(?:fix(?:es|ed)?|add(?:s|ed)?|support(?:s|ed)?|cover(?:s|ed)?)\b", re.IGNORECASE)


def states_gap(text: str) -> bool:
    """Whether a memory says what something lacks or does not cover."""
    return bool(_GAP.search(text))


def gap_filled(text: str, commits: list[str]) -> str:
    """The commit (of the session that found it, or a later one) that filled a gap a memory states, '' when none
    did: two words of substance in common with a commit that fixes, tests or adds. The gap was true for minutes
    ("… but not detached `HEAD`" before "fix(builtins): allow detached HEAD for branch guard" added those tests)."""
    if not _GAP.search(text):
        return ""
    mine = _terms(text)
    return next((c for c in commits if _FILLS.search(subject := split_commit(c)[1])
                 and len(mine & _terms(subject)) >= 2), "")


# What a fixing commit's subject names as the cause: "fix: rotation skipped for all nodes due to non-blocking send"
_CAUSED_BY = re.compile(r"\b(?:due to|caused by|because of|triggered by)\s+(.+)$", re.IGNORECASE)
_FIX_PART = " fix: "
_QUALIFIER = frozenset(("on", "in", "of", "for", "with", "when", "while", "during", "at", "to", "from", "after",
                        "before", "under", "that", "which", "if"))


def replaced(title: str, later: list[str]) -> tuple[str, str, str] | None:
    """A part of a fix (in ``title``, after " fix: ") that a later fixing commit names as the cause of what it
    fixed: (the part, the cause as the commit names it, the commit), None when none does. A first fix that a
    later one had to undo is no longer the fix ("… — fix: return at once during shutdown; uses a non-blocking
    send" after "fix: rotation skipped for all nodes due to non-blocking send")."""
    head, sep, fix = title.partition(_FIX_PART)
    if not sep:
        return None
    problem = set(_TERM.findall(head.lower()))
    parts = [p for p in re.split(r";\s+", fix) if p]
    for commit in later:
        m = _CAUSED_BY.search(commit.rstrip("…").rstrip())
        if m is None or not changes_code(commit):
            continue
        # the cause's own phrase, before what qualifies it ("non-blocking send" of "non-blocking send on small
        # channels"; a cut-off last word left out): all its words of substance in one part of the fix
        words = m.group(1).split()
        if commit.rstrip().endswith("…"):
            words = words[:-1]
        named = list(itertools.takewhile(lambda w: w.lower() not in _QUALIFIER, words))
        named = named[1:] if named and named[0].lower() in ("the", "a", "an", "its", "their") else named
        cause = _terms(" ".join(named))
        if len(cause) < 2 or cause <= problem:
            continue  # ("crash due to a missing config file" after "crash when the config file is missing — fix: …")
        for part in parts:
            if cause <= set(_TERM.findall(part.lower())):
                return part, " ".join(named), commit
    return None


# A file a memory names, in code quotes or bare ("`cursor-logo.svg`", "walCheckpoint.go"): its stem and extension.
_FILE = re.compile(r"(?<![\w/.-])([A-Za-z_][\w.-]*?)\.([a-z][a-z0-9]{0,4})(?![\w.-])")
# A commit that says it repairs something ("fix(ui): …", "Fix Cursor logo: …", "hotfix …"); not a test or a perf change.
_FIXING = re.compile(r"^(?:[0-9a-f]{7,40} )?(?:fix|bugfix|hotfix)(?:\([^)]*\))?!?:|\bfix(?:es|ed)?\b|\bhotfix\b",
                     re.IGNORECASE)


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if len(w) >= 3}


def refixed(title: str, later: list[str]) -> str:
    """The newest of ``later`` commits that fixes a file the memory names (every word of the file's stem in its
    subject: "Fix Cursor logo: replace corrupted SVG asset" fixes `cursor-logo.svg`), '' when none does. What the
    memory said of that file, or decided about it, did not hold: a later session had to fix it again. A stem of one
    short word ("index.ts", "main.go") names too little to tell; camelCase stays one word ("walCheckpoint.go" is
    not "WAL writes during checkpoint")."""
    fixes = [c for c in later if _FIXING.search(split_commit(c)[1])]  # newest first
    if not fixes or "." not in title:
        return ""
    stems = [w for m in _FILE.finditer(title) if (w := _words(m.group(1)))
             and (len(w) >= 2 or any(len(x) >= 8 for x in w))]
    for commit in fixes if stems else []:
        words = _words(commit)  # (once per commit, whatever the number of stems)
        if any(stem <= words for stem in stems):
            return commit
    return ""

