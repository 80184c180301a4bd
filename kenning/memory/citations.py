"""What a memory about code rests on: the files, identifiers and commands it names.

Read from the memory itself at read time (no stored copy to fall out of step): the files the
observer saw it touch (``files_read``/``files_modified``) and the paths, backticked identifiers,
code-shaped names (``line_vat()``, ``snake_case``, ``--flags``) and make/just/npm-style targets in
its text. Every pattern is ASCII-only (``re.ASCII``), so identifiers inside Chinese or Japanese
text are found the same way as in English: the CJK characters around them are not word characters.

Conservative by design: what is extracted is only *checked* (kenning/context/evidence_check.py),
and a check that cannot decide says nothing. Standard library only (the hooks import it).
"""

from __future__ import annotations

import functools
import re

from kenning.fastjson import loads

MAX_FILES = 12    # cited files per memory (files_modified first, then the text's, then files_read)
MAX_NAMES = 8
MAX_TARGETS = 6

_EXT = ("py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|vue|svelte|css|scss|html|"
        "sql|sh|bash|zsh|proto|toml|ya?ml|json|ini|cfg|md|rst|txt|lock|gradle|tf|ex|exs|erl|lua|dart|scala|r|jl")
_FILE = re.compile(r"(?<![\w./:@~-])((?:\.{1,2}/)?(?:[\w@+-][\w.@+-]*/)*[\w+-][\w.+-]*\.(?:" + _EXT + r"))(?![\w/.-])"
                   r"|(?<![\w./:@~-])((?:[\w@+-][\w.@+-]*/)*(?:Makefile|GNUmakefile|justfile|Justfile|Dockerfile))"
                   r"(?![\w/.-])", re.ASCII | re.IGNORECASE)
_TICKS = re.compile(r"`([^`\n]{1,160})`")
_NAME = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]{2,})(?:\(\))?$", re.ASCII)
_FLAG = re.compile(r"^--[a-z][a-z0-9-]{2,}$", re.ASCII)
# Outside backticks only shapes no prose word has: a call ``name()``, snake_case, SCREAMING_SNAKE.
_CALL = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w{2,})\(\)", re.ASCII)
_SNAKE = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?![\w/-]|\.\w)", re.ASCII)
_RUNNERS = r"make|just|npm run|pnpm(?: run)?|yarn(?: run)?|bun run"
_COMMAND = re.compile(r"(?<![\w-])(" + _RUNNERS + r")((?:\s+-[\w=-]+)*)\s+([A-Za-z0-9_][\w:.-]*[\w])", re.ASCII)
# Prose after "make"/"just"/"yarn" is not a target ("make sure", "just the"): outside backticks a target
# must follow a word that introduces a command.
_LEAD = re.compile(r"(?:^|[\s(\"'])(?:run|runs|ran|running|use|uses|used|via|with|then|try|call|calls|\$|>)\s*$",
                   re.ASCII | re.IGNORECASE)
_NOT_TARGETS = frozenset((
    "sure", "it", "the", "a", "an", "that", "this", "them", "sense", "up", "use", "of", "to", "do", "so", "all",
    "one", "out", "any",
))
_PM_BUILTINS = frozenset((
    "install", "i", "add", "remove", "rm", "why", "dlx", "exec", "create", "init", "update", "up", "upgrade", "link",
    "unlink", "publish", "pack", "audit", "outdated", "list", "ls", "info", "view", "config", "store", "import",
    "patch",
))
# A memory that records a removal ("deleted src/old.py", "renamed `old_fn`") cites what is meant to be
# gone: it is not checked at all.
_REMOVAL = re.compile(r"(?<![A-Za-z])(?:delet|remov|renam|mov(?:ed|ing|e)\b|drop|rm\s|git rm|unlink|obsolet|deprecat|"
                      r"replac|migrat(?:ed|ing) (?:away|off))|删除|删掉|移除|重命名|改名|削除|名前を変更|삭제|제거",
                      re.IGNORECASE)
_NOT_NAMES = frozenset(["e.g", "i.e", "etc", "utf_8", "utf-8", "n_a"])


class Citations:
    """The files, identifiers and (runner, target) pairs one memory names."""

    __slots__ = ("files", "names", "targets")

    def __init__(self, files: tuple[str, ...], names: tuple[str, ...], targets: tuple[tuple[str, str], ...]) -> None:
        self.files = files
        self.names = names
        self.targets = targets

    def __bool__(self) -> bool:
        return bool(self.files or self.names or self.targets)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Citations) and (self.files, self.names, self.targets) == \
            (other.files, other.names, other.targets)

    def __hash__(self) -> int:
        return hash((self.files, self.names, self.targets))

    def __repr__(self) -> str:
        return f"Citations(files={self.files!r}, names={self.names!r}, targets={self.targets!r})"


NOTHING = Citations((), (), ())


def _paths(raw: str) -> list[str]:
    try:
        value = loads(raw or "[]")
    except (ValueError, TypeError):
        return []
    return [str(x) for x in value if isinstance(x, str) and x and "\x00" not in x] if isinstance(value, list) else []


def _add(out: list[str], item: str, cap: int) -> None:
    if item and item not in out and len(out) < cap:
        out.append(item)


def _runner(word: str) -> str:
    return word.split()[0]


def _target(out: list[tuple[str, str]], runner: str, opts: str, target: str) -> None:
    # ``make -C dir x``, ``npm --prefix web run x``: another folder's file, not checked.
    if "-C" in opts.split() or "--prefix" in opts or "--filter" in opts or "--cwd" in opts:
        return
    run = _runner(runner)
    if target.lower() in _NOT_TARGETS or (run in ("pnpm", "yarn") and " run" not in runner
                                           and target in _PM_BUILTINS):
        return
    if (run, target) not in out and len(out) < MAX_TARGETS:
        out.append((run, target))


@functools.lru_cache(maxsize=4096)
def cite(text: str, files_modified: str = "[]", files_read: str = "[]") -> Citations:
    """What a memory whose words are ``text`` (title, narrative, facts) and whose file lists are the
    stored JSON arrays cites."""
    files: list[str] = []
    names: list[str] = []
    targets: list[tuple[str, str]] = []
    if _REMOVAL.search(text):
        return NOTHING
    for p in _paths(files_modified):
        _add(files, p, MAX_FILES)
    for m in _FILE.finditer(text):
        _add(files, m.group(1) or m.group(2), MAX_FILES)
    for span in _TICKS.findall(text):
        s = span.strip()
        cmd = _COMMAND.fullmatch(s)
        if cmd:
            _target(targets, cmd.group(1), cmd.group(2), cmd.group(3))
            continue
        if _FILE.fullmatch(s):
            continue  # a path: taken above
        if _FLAG.match(s):
            _add(names, s, MAX_NAMES)
            continue
        named = _NAME.match(s)
        if named and s.lower() not in _NOT_NAMES and (not s.isalpha() or s.endswith("()") or not s.islower()
                                                   or "." in s):
            # A bare lower-case word in backticks ("`true`", "`make`") is too common to check.
            _add(names, named.group(1), MAX_NAMES)
    for m in _CALL.finditer(text):
        _add(names, m.group(1), MAX_NAMES)
    for m in _SNAKE.finditer(text):
        word = m.group(1)
        if word.lower() not in _NOT_NAMES and not any(word in f for f in files):
            _add(names, word, MAX_NAMES)
    for m in _COMMAND.finditer(text):
        lead = text[max(0, m.start() - 12):m.start()]
        quoted = text[max(0, m.start() - 1):m.start()] == "`"
        if quoted or _LEAD.search(lead) or m.start() == 0:
            _target(targets, m.group(1), m.group(2), m.group(3))
    for p in _paths(files_read):
        _add(files, p, MAX_FILES)
    return Citations(tuple(files), tuple(names), tuple(targets))


def text_of(title: str, narrative: str, facts: str) -> str:
    """The words of a memory that may cite something: its title, narrative and facts (a JSON list)."""
    try:
        items = loads(facts or "[]")
    except (ValueError, TypeError):
        items = []
    extra = "\n".join(str(x) for x in items) if isinstance(items, list) else ""
    return "\n".join(x for x in (title, narrative, extra) if x)
