"""A message cut into the units an observer judges one by one: sentences and list items, each
with the heading it sits under.

Agents write their conclusions as markdown: ``## Root cause`` followed by a paragraph,
``**Fix**: …``, bullet lists of changes, a table of files. The heading says what the text under
it is (a root cause, a fix, the next steps) in the agent's own words and in any language, so
every unit keeps it. Code blocks, tables of data and pasted logs are not prose: they are left
out. Nothing here decides what a unit means (kenning/observer/roles does that).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kenning.memory.text import sentences

MAX_UNIT = 600  # characters; a longer "sentence" is a paste, not something said
# A short code block that a sentence introduces ("To pick it up in jj, run:") is that sentence's object:
# the command is what the next session must know. At most this many lines and characters.
INLINE_CODE_LINES, INLINE_CODE_CHARS = 3, 200
_INTRODUCES = re.compile(r"(?:[:：]|には|하려면|如下)\s*$")

_FENCE = re.compile(r"^\s*(```|~~~)")
# A fence with a language after it ("```yaml", "```go title=…"): inside a block, one nested in it ("```markdown" over
# "```yaml" … "```" … "```"), never the block's end (a closing fence has no info string)
_OPENS = re.compile(r"^\s*(?:```|~~~)[`~]*\s*[A-Za-z][\w+#.-]*")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
# A line that is only a bold label: "**Root cause**" / "**Root cause:**" / "**Changes made across 3 files:**"
_LABEL_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)([^*_\n]{1,80}?)(?:\*\*|__)\s*[:：]?\s*$")
# The same, numbered, naming what it is about in brackets before its colon: "**1. Send-on-closed-channel
# panic** (`walCheckpoint.go` + `metricstore.go`):" heads the list under it
_LABEL_ABOUT = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)(?:\d+[.)]\s+)?([^*_\n]{1,80}?)(?:\*\*|__)"
                          r"(\s*\([^()\n]{1,80}\))?\s*[:：]\s*$")
# A bold label that opens a line: "**Root cause**: WAL sharding …", "- **Fix:** wrap the call …"
# (a bold phrase run into its sentence, "**10s overall deadline** caps the shutdown", is no label: a label
# ends with ":" or "." in or after the bold, or a dash after it)
_LABEL_START = re.compile(r"^(\s*(?:[-*+]|\d+[.)])?\s*)(?:\*\*|__)([^*_\n]{0,59}[^*_\n.!?。！？:：])\s*"
                          r"(?:[:：.]\s*(?:\*\*|__)\s*|(?:\*\*|__)\s*[:：—–-]\s*)(?=\S)")
# "Root cause: text" without bold, when the label is short and says what follows
_PLAIN_LABEL = re.compile(r"^(\s*(?:[-*+]|\d+[.)])?\s*)([^\s:：`][^:：`\n]{0,30}?)\s*[:：]\s+(?=\S)")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
# A line that is only a short plain label naming a cause or a fix ("Root cause:", "Recommended fix:", "根因：")
# heads the list or the paragraph right under it, as a bold one would (agents writing without emphasis)
_PLAIN_LABEL_LINE = re.compile(r"^\s*([^\s:：`*_#>|-][^:：`*\n]{0,30}?)\s*[:：]\s*$")
_CAUSE_OR_FIX = re.compile(r"\b(?:root[- ])?causes?\b|\bfix(?:es)?\b|\bworkarounds?\b|\bcausa\b|\bursache\b|"
                           r"\bcorrectif\b|\bsolution\b|\blösung\b|原因|根因|修复|解决|対策|修正|원인|해결|수정",
                           re.IGNORECASE)
def names_cause_or_fix(text: str) -> bool:
    """Whether a text says "cause", "fix" or "workaround" in so many words, in any language we read."""
    return bool(_CAUSE_OR_FIX.search(text))


# The sections of a report the user pastes (an issue's template), which plain text names on a line of their own
# ("Expected behavior", "Steps to reproduce", "期望行为"): they head what follows as a heading does.
_REPORT_SECTION = re.compile(
    r"^(?:expected|actual|observed|desired)(?: behaviou?r| results?| outcomes?| output)?$|^steps to reproduce$|"
    r"^(?:repro(?:duction)?(?: steps)?)$|^acceptance criteria$|^findings$|^(?:期望|预期|实际)(?:行为|结果|输出)$|"
    r"^复现步骤$|^(?:期待される|期待する)(?:動作|結果)$|^再現手順$|^(?:예상|기대|실제) (?:동작|결과)$|^재현 단계$|"
    r"^(?:comportement|résultat) (?:attendu|observé)$|^étapes pour reproduire$", re.IGNORECASE)

_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
_QUOTE = re.compile(r"^\s*>\s?")
# Claude Code's explanatory style sets its asides between two ruled lines, the first titled:
# "`★ Insight ─────────`" … "`─────────────`". The title heads what is inside; the closing line ends it.
_ASIDE_OPENS = re.compile(r"^\s*`?\s*[★☆✦✧◆▶]\s*([^─━`]{1,40}?)\s*[─━]{3,}\s*`?\s*$")
_ASIDE_CLOSES = re.compile(r"^\s*`?\s*[─━]{3,}\s*`?\s*$")
# Markdown's hard line break (two spaces or a backslash at the end of a line): the writer ended the line on
# purpose ("Opened PR: #582 …  ⏎ Replied to discussion: …", "**Status:** accepted  ⏎ **Date:** …").
_HARD_BREAK = re.compile(r"\S(?: {2,}|\\)$")
# Log lines and stack frames pasted into a prompt: a timestamp, a level, a path:line, a prompt sign.
_LOGLIKE = re.compile(r"^\s*(?:\[?\d{1,4}[-/:.]\d{1,2}[-/:.]\d{1,4}|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|"
                      r"FATAL)\]?\b|at [\w.$<>]+\(|\$ |> |[\w./-]+\.\w+:\d+)", re.IGNORECASE)
# An error a program printed, each layer's context before its cause ("error: sync: materialized execute: push
# target refs: …", Go's wrapped errors): however many words it has, no one said it.
_ERROR_CHAIN = re.compile(r"^\s*(?:error|fatal|panic|warning|err)\s*:\s*(?:[\w .()/-]{1,40}:\s+){2,}", re.IGNORECASE)
# Emphasis marks; a name that only looks like them stays: `__init__`, __main__ (a dunder, even unquoted).
_MARKS = re.compile(r"(?<!\w)__\w+?__(?!\w)|\*\*|__|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
# Inline code, whose marks are the code's: `*CommandStatusErr` is a pointer, `src/**/*.ts` a glob.
_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_LINK = re.compile(r"\[([^\]\n]{1,200})\]\((?:[^)\s]{1,500})\)")
_DIRECTIVE = re.compile(r"^::[\w-]+\{.*\}\s*$")  # Codex app directives: ::git-commit{cwd="…"}
# A line of machine markup only: an XML tag, or one element on its line (the reply a Codex automation's heartbeat
# asks for, "<heartbeat>", "<decision>NOTIFY</decision>"): no sentence of anyone's
_MARKUP = re.compile(r"^\s*(?:</?[A-Za-z_][\w.-]*(?:\s[^<>]*)?/?>|<([A-Za-z_][\w.-]*)(?:\s[^<>]*)?>[^<>]*</\1>)\s*$")

# Labels that are only the words "summary", "changes" …: a heading, not a statement.
_LABEL_WORDS = 6


@dataclass(frozen=True)
class Unit:
    """One thing said: a sentence or list item, under its heading."""

    text: str
    heading: str = ""     # the nearest heading or bold label above it (or opening it), markdown removed
    index: int = 0        # its position in the message
    bullet: bool = False  # a list item
    label: bool = False   # it opened with a bold "Label:" of its own (the label is in ``heading``)
    table: bool = False   # a row of a table, its cells joined by "; "
    before: str = ""      # the sentence before it in its paragraph ("That was deliberate" says what by it)
    introduces: bool = False  # it ended with ":" (or "如下" …): it introduces what follows, a list or a command
    para: int = 0         # which paragraph or list item of the message it is in


def report_section(heading: str) -> bool:
    """Whether a heading names a section of a pasted report ("Expected behavior", "Steps to reproduce"): what
    one piece of work is to achieve or what went wrong, never how to work from now on (of the labelled user
    sentences under such a heading, none is a rule)."""
    return bool(_REPORT_SECTION.match(heading.strip().rstrip(":：").strip()))


def units(text: str) -> list[Unit]:
    """The units of one message, in order (none for a message that is only data: a JSON document)."""
    if _is_data(text):
        return []
    out: list[Unit] = []
    heading = ""
    outer = ""         # the heading above a plain label line, back once the block under the label ends
    aside_of: str | None = None  # the heading before an aside, back once its closing line comes
    paras = 0          # paragraphs and list items so far
    plain = 0          # a plain label line heads what follows: 1 before its block, 2 within it
    para: list[str] = []
    para_bullet = False
    para_label = ""
    in_code = False
    depth = 0                     # fences open inside the code block (a block of Markdown quoting one of YAML)
    intro: int | None = None      # the unit whose sentence introduced what follows ("… run:"), if it just ended
    code: list[str] | None = None  # the lines of a code block such a sentence introduced, while in it

    def flush() -> None:
        nonlocal para, para_bullet, para_label, intro, heading, plain, paras, outer
        if para:
            paras += 1
            if plain == 2 and not para_bullet:  # a paragraph after the label's list or paragraph: not under it
                heading, plain = outer, 0
            elif plain == 1:
                plain = 2
            before = len(out)
            # Lines that are a list without its marks ("Consider testing:" over "Different line lengths around
            # the threshold" / "Various trivial patterns" / …): each its own item, not one run-on sentence.
            items = _bare_list(para) if not para_bullet else None
            if items:
                for line in items:
                    clean = tidy(line)
                    if clean and len(clean) <= MAX_UNIT and not _noise(clean):
                        out.append(Unit(clean, para_label or heading, len(out), True, para=paras))
                    paras += 1
                para, para_bullet, para_label = [], False, ""
                intro = None
                return
            body = " ".join(x.strip() for x in para)
            prev = ""
            for i, s in enumerate(sentences(body)):
                clean = tidy(s)
                if clean and len(clean) <= MAX_UNIT and not _noise(clean):
                    # A run-in label ("**Root cause.** …") heads its whole paragraph; it opens the first unit.
                    out.append(Unit(clean, para_label or heading, len(out), para_bullet, bool(para_label) and i == 0,
                                    before=prev, para=paras))
                prev = clean
            intro = len(out) - 1 if len(out) > before and _INTRODUCES.search(para[-1]) else None
            if intro is not None:
                out[intro] = replace(out[intro], introduces=True)
                if para_label and not para_bullet:
                    # "**What was wrong** — three defects:" over a list: its items are said under that label
                    if not plain:
                        outer = heading
                    heading, plain = para_label, 1
        para, para_bullet, para_label = [], False, ""

    lines = (text or "").splitlines()
    for n, raw in enumerate(lines):
        if _FENCE.match(raw):
            nested = bool(_OPENS.match(raw))
            if in_code and (nested or depth):
                depth += 1 if nested else -1
                if code is not None:
                    code.append(raw)
                continue
            flush()
            if in_code and code is not None and intro is not None:
                lines = [x.strip() for x in code if x.strip()]
                if lines and len(lines) <= INLINE_CODE_LINES and sum(map(len, lines)) <= INLINE_CODE_CHARS \
                        and "`" not in "".join(lines):
                    out[intro] = replace(out[intro], text=f"{out[intro].text}: `{'; '.join(lines)}`", introduces=False)
                intro = None
            code = [] if not in_code and intro is not None else None
            in_code = not in_code
            continue
        if in_code:
            if code is not None:
                code.append(raw)
            continue
        line = _QUOTE.sub("", raw).rstrip()
        if not line.strip() or _RULE.match(line) or _DIRECTIVE.match(line.strip()) or _MARKUP.match(line):
            flush()
            continue
        intro = None
        m = _HEADING.match(line)
        if m:
            flush()
            heading, plain = tidy(m.group(1)), 0
            continue
        m = _ASIDE_OPENS.match(line)
        if m:
            flush()
            aside_of, heading, plain = heading, tidy(m.group(1)), 0
            continue
        if _ASIDE_CLOSES.match(line):
            flush()
            heading, aside_of, plain = aside_of if aside_of is not None else heading, None, 0
            continue
        m = _LABEL_LINE.match(line) or _LABEL_ABOUT.match(line)
        if m and (len(m.group(1).split()) <= _LABEL_WORDS + 4 or _heads_a_list(m.group(1), lines, n)):
            flush()
            heading, plain = tidy(m.group(1)), 0
            continue
        if report_section(line) and not _BULLET.match(line):
            flush()  # "Expected behavior" alone on its line: the section of a report under it
            heading, plain = tidy(line.strip().rstrip(":：")), 0
            continue
        m = _PLAIN_LABEL_LINE.match(line)
        if m and not (para and para_bullet) and _is_label(m.group(1)) and _CAUSE_OR_FIX.search(m.group(1)) \
                and not _before_code(lines, n):
            flush()
            if not plain:
                outer = heading
            heading, plain = tidy(m.group(1)), 1
            continue
        if _TABLE_ROW.match(line):
            flush()
            if not _TABLE_RULE.match(line.replace("|", "", 1)):
                cells = [tidy(c) for c in line.strip().strip("|").split("|")]
                if len(cells) >= 3 and re.fullmatch(r"#?\d{1,3}[.)]?", cells[0]):
                    cells = cells[1:]  # the row's number ("| 7 | Overlap only for new files | …")
                row = "; ".join(c for c in cells if c)
                if row and len(row) <= MAX_UNIT and len(cells) >= 2:
                    paras += 1
                    out.append(Unit(row, heading, len(out), True, table=True, para=paras))
            continue
        if _BULLET.match(line):
            flush()
            para_bullet = True
            line = _BULLET.sub("", line)
        elif para and para_bullet and raw[:1] in (" ", "\t"):
            pass  # a wrapped list item goes on
        elif para and para_bullet:
            flush()
        lm = _LABEL_START.match(line)
        if lm and not para:
            para_label = tidy(lm.group(2))
            line = line[lm.end():]
        elif not para:
            pm = _PLAIN_LABEL.match(line)
            if pm and _is_label(pm.group(2)):
                para_label = tidy(pm.group(2))
                line = line[pm.end():]
        if _HARD_BREAK.search(raw):
            para.append(line.removesuffix("\\"))
            flush()
            continue
        para.append(line)
    flush()
    return out


_SENTENCE_END = re.compile(r"[.!?:;,。！？：；，、]$")


def _heads_a_list(label: str, lines: list[str], n: int) -> bool:
    """A longer bold line right over a list heads it, unless it is a sentence ("**Commit 1 — `47946b7` scrub state
    from `String()`'s URL (Fix 1)**" over what that commit did)."""
    if len(label.split()) > 2 * _LABEL_WORDS + 4 or _SENTENCE_END.search(label.strip()):
        return False
    after = next((x for x in lines[n + 1:] if x.strip()), "")
    return bool(_BULLET.match(after))


def _bare_list(lines: list[str]) -> list[str] | None:
    """The lines of a paragraph that is a list written without its marks: three or more short lines, each
    opening with a capital and none ending as a sentence or a clause does; None for wrapped prose."""
    rows = [x.strip() for x in lines]
    if len(rows) < 3 or any(not r or len(r) > 160 or not r[0].isupper() or _SENTENCE_END.search(r) for r in rows):
        return None
    return rows


def _before_code(lines: list[str], n: int) -> bool:
    """Whether a code block follows line ``n`` ("Fix:" over a command introduces it, it heads nothing)."""
    return bool(_FENCE.match(next((x for x in lines[n + 1:] if x.strip()), "")))


def _is_data(text: str) -> bool:
    t = (text or "").strip()
    if t[:1] not in ("{", "[") or t[-1:] not in ("}", "]"):
        return False
    import json

    try:
        json.loads(t)
    except ValueError:
        return False
    return True


def _is_label(word: str) -> bool:
    """"Root cause", "Fix", "Why", "原因", "Note": a short name, not the start of a sentence."""
    w = word.strip()
    if not w or len(w.split()) > 3 or w[-1] in ".!?":
        return False
    return w[0].isupper() or not w.isascii()


def tidy(text: str) -> str:
    """Markdown emphasis and links removed (not inside inline code), white space made single."""
    text = _LINK.sub(r"\1", text)
    out, at = [], 0
    for m in _CODE.finditer(text):
        out += [_plain(text[at:m.start()]), m.group()]
        at = m.end()
    t = "".join([*out, _plain(text[at:])])
    return " ".join(t.split()).strip(" :：-—–;；")


def _plain(text: str) -> str:
    return _MARKS.sub(lambda m: m.group() if m.group().startswith("__") and len(m.group()) > 2 else "", text)


_JSONISH = re.compile(r'^[\[{]|"\w+"\s*:\s*["\[{\d]|^\w+\([^)]*\)\s*[{;]?$')


# A source position of a stack frame: "app.tsx:12:5", "chunk-36jr.js:30815:13", "main.py\", line 40".
_FRAME = re.compile(r"\.\w{1,5}:\d+:\d+\b|\.\w{1,5}\", line \d+")


# What only a program prints: a "[Component]" tag, "exited with code N", a UUID, a clock time, an HTTP
# request line. Three of them in one unit is a pasted log, wherever it starts ("(1 retries remaining)
# [Repo] Saved … [Job] …").
_PRINTED = re.compile(r"\[[A-Z][\w .:/-]{2,30}\](?!\()|\bexit(?:ed)? with (?:exit )?code \d+|"
                      r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|"
                      r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b|\b(?:GET|POST|PUT|PATCH|DELETE) /")


def printed_from(text: str) -> int:
    """Where program output pasted after the user's own words begins ("I get this when I run it:
    [11:35:44] [API] GET /api/…"), or -1 when ``text`` holds none."""
    marks = list(_PRINTED.finditer(text))
    return marks[0].start() if len(marks) >= 3 else -1  # "[API]" and "GET /x" in a sentence are no paste


# A test runner's verdict on a test ("--- FAIL: TestHooks (0.05s)" of go test, "FAILED tests/x.py::test_y" of
# pytest, "test result: FAILED." of cargo): its output pasted, whatever words the failed assertion then prints.
_TEST_VERDICT = re.compile(r"(?:^|\s)(?:--- )?(?:FAIL|PASS|SKIP): \S+ \(\d+(?:\.\d+)?s\)|"
                           r"^=== (?:RUN|PAUSE|CONT|NAME)\s|^FAILED [\w./-]+\.py::\w|^test result: (?:FAILED|ok)\b|"
                           # go test's line for a package: "FAIL\tgithub.com/o/r/pkg 28.889s", "ok  \tpkg\t0.4s"
                           r"^(?:FAIL|ok)\s+[\w.-]+(?:/[\w.-]+)+\s+(?:\d+(?:\.\d+)?s|\(cached\)|\[[\w ]+\])\s*$")


def test_verdict(text: str) -> bool:
    """Whether a line is a test runner's verdict ("--- FAIL: TestX (0.2s)", "ok  \tpkg\t0.4s", "=== RUN …")."""
    return bool(_TEST_VERDICT.search(text))


def is_output(text: str) -> bool:
    """Whether a sentence is what a program printed (a log line, a test runner's verdict, JSON), not words."""
    return _noise(text)


def _noise(text: str) -> bool:
    """Pasted output rather than something said: a log line, a stack trace (two frames or more, and few
    words besides), a test runner's verdict, a bare path or command, JSON, a lone symbol."""
    if len(text) < 3 or not any(c.isalpha() for c in text) or _TEST_VERDICT.search(text):
        return True
    frames = len(_FRAME.findall(text))
    if frames >= 2:
        # Mostly frames: a pasted trace. A sentence that cites two positions while it explains is kept.
        said = [w for w in text.split() if w.isalpha() and len(w) >= 3]
        if len(said) <= 4 * frames:
            return True
    if _JSONISH.search(text) or printed_from(text) >= 0:
        return True
    if _ERROR_CHAIN.match(text):
        return True
    return bool(_LOGLIKE.match(text)) and not re.search(r"[a-z]{3,}\s+[a-z]{3,}\s+[a-z]{3,}", text)
