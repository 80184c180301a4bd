"""A word a tool does not take, proved by the tool's own words and by the run that then passed without it.

``gh pr view 582 --json title,reviewThreads`` fails with `Unknown JSON field: "reviewThreads"`, and ``gh pr view
582 --json title,reviews`` passes; ``… | cat -A`` fails with "cat: illegal option -- A" (BSD cat), and ``… | cat -v
-e -t`` passes. The next session should not try the same word again. Only a tool's refusal of a field or an option
it names counts, and only once the same tool (its program and subcommand) passed in the same turn without that
word, or the tool listed the fields it has (gh's "Available fields:"): a wrapper that rewrote the command (its
refusal names the wrapper's option, and what passed is another program) or a word that passed later after all
proves nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kenning.observer.evidence import Command

MAX_TOOL_WORDS = 3
MAX_FIELDS_SAID = 12

# The tool's refusal, with the word refused: a JSON field (gh), a short option (BSD tools), a long or short flag
_REFUSED = re.compile(
    r"Unknown JSON field: \"(?P<field>[\w.-]+)\"|"
    r"illegal option -- (?P<short>\w)\b|"
    r"unknown (?:shorthand )?flag: '?(?P<flag>-{1,2}[\w-]+)|"
    r"unrecognized (?:option|argument)s?:? '?(?P<option>-{1,2}[\w-]+)|"
    r"no such option:? '?(?P<nosuch>-{1,2}[\w-]+)|"
    r"unexpected argument '(?P<unexpected>-{1,2}[\w-]+)'|"
    r"unknown (?:option|switch) [`'](?P<git>[\w-]+)'", re.IGNORECASE)  # git: "unknown option `cached'"
_WARNING = re.compile(r"\s*warning:", re.IGNORECASE)
_SEGMENTS = re.compile(r"\s*(?:\|\|?|&&|;)\s*")


@dataclass
class Refused:
    tool: str       # the program and its subcommand, as run: "gh pr view", "cat"
    word: str       # what it refused: "-A", or the field "reviewThreads"
    of_json: bool   # a field of --json, not an option
    says: str       # the tool's line that refuses it
    passed: str     # the same tool's run that passed without it ('' when none did)
    at: float
    fields: list[str] = field(default_factory=list)  # the fields the tool listed as the ones it has


def refused(commands: list[Command]) -> list[Refused]:
    """The words tools refused in ``commands`` that a later run of the same tool did without (one per word)."""
    out: list[Refused] = []
    for i, c in enumerate(commands):
        m = None if c.ok else _REFUSED.search(_head(c.output))
        if m is None:
            continue
        of_json = m.group("field") is not None
        word = m.group("field") or (f"-{m.group('short')}" if m.group("short") else "") or \
            m.group("flag") or m.group("option") or m.group("nosuch") or m.group("unexpected") or \
            _dashed(m.group("git") or "")
        seg = next((s for s in _SEGMENTS.split(c.command) if _says(s, word, of_json)), None)
        tool = tool_of(seg) if seg else ""
        if not tool or any(r.tool == tool and r.word == word for r in out):
            continue
        later = [s for d in commands[i + 1:] if d.ok for s in _SEGMENTS.split(d.command) if tool_of(s) == tool]
        if any(_says(s, word, of_json) for s in later):
            continue  # the word passed after all (another version, another context): nothing proved
        passed = next((_json_of(s, tool) if of_json else s for s in later if not of_json or "--json" in s.split()), "")
        fields = _listed_fields(c.output) if of_json else []
        if not passed and not fields:
            continue  # (a tool that lists the fields it has proves the refusal by itself)
        line = next((ln.strip() for ln in c.output.splitlines() if m.group(0) in ln), m.group(0))
        out.append(Refused(tool, word, of_json, line[:160], passed.strip(), c.at, fields))
    return out


def refuses_usage(output: str) -> bool:
    """Whether a failed run's output is the tool refusing a field or an option it was given: how the command was
    written, not a failure of the work."""
    return _REFUSED.search(_head(output)) is not None


def _head(output: str) -> str:
    """The start of a failed run's output, past the warnings printed before the refusal (git's "warning: in the
    working copy of …, LF will be replaced by CRLF", one line a file)."""
    return "\n".join(ln for ln in output[:20_000].splitlines() if not _WARNING.match(ln))[:2000]


def _dashed(name: str) -> str:
    """An option git names without its dashes ("unknown option `cached'", "unknown switch `x'")."""
    return "" if not name else name if name.startswith("-") else ("--" if len(name) > 1 else "-") + name


def title(r: Refused) -> str:
    what = f"`{r.tool} --json` has no field `{r.word}`" if r.of_json else f"`{r.tool}` has no option `{r.word}`"
    if not r.passed:
        listed = f"; its fields: {', '.join(r.fields)}" if len(r.fields) <= MAX_FIELDS_SAID else ""
        return f"{what} ({r.says}{listed})"
    passed = r.passed if len(r.passed) <= 80 else r.passed[:79].rstrip() + "…"
    return f"{what} ({r.says}); `{passed}` passed"


def _listed_fields(output: str) -> list[str]:
    """The fields a tool lists after refusing one (gh: "Available fields:" and one indented name a line)."""
    _, sep, rest = output.partition("Available fields:")
    if not sep:
        return []
    names = []
    for ln in rest.splitlines()[1:]:
        if not re.fullmatch(r"\s+[A-Za-z][\w.-]*\s*", ln):
            break
        names.append(ln.strip())
    return names


def _says(segment: str, word: str, of_json: bool) -> bool:
    """Whether a command segment gives ``word``: as a field of a comma list, or as an option (alone or among
    short options run together: ``-A`` in ``-vA``)."""
    if of_json:
        return re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", segment) is not None
    short = re.fullmatch(r"-(\w)", word)
    for w in segment.split():
        if w == word or w.startswith(word + "="):
            return True
        if short and re.fullmatch(r"-[A-Za-z]+", w) and short.group(1) in w[1:]:
            return True
    return False


def _json_of(segment: str, tool: str) -> str:
    """The tool with the fields it was asked for ("gh pr checks --json name,state"): what shows the fields that do."""
    words = segment.split()
    i = words.index("--json")
    return f"{tool} --json {words[i + 1]}" if i + 1 < len(words) else ""


def tool_of(segment: str) -> str:
    """A segment's program and subcommand words (up to the first option, path or number): "gh pr view"."""
    words: list[str] = []
    for w in segment.split():
        if w.startswith("-") or "/" in w or "=" in w or not re.fullmatch(r"[\w.:-]+", w) or w[0].isdigit():
            break
        words.append(w)
        if len(words) == MAX_TOOL_WORDS:
            break
    return " ".join(words)
