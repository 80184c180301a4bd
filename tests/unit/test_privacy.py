"""Privacy before the spool: ``<private>`` and echo tags are stripped (redaction: test_redact.py).

The last tests measure the redactor's false positives on real text: every string of the
captured Claude Code fixtures (and the fixture payloads through the hook's own path) and every
source file of Kenning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kenning.privacy.redact import Redactor
from kenning.privacy.tags import ECHO_TAGS, is_entirely_private, strip_text, strip_value

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")

# ---------------------------------------------------------------------------------- tags


@pytest.mark.parametrize(("text", "expected"), [
    ("a <private>x</private> b", "a  b"),
    ("before\n<private>\nline one\nline two\n</private>\nafter", "before\n\nafter"),
    ("a <private reason=\"pw\" level='2'>x</private> b", "a  b"),
    ("a <PRIVATE>x</Private> b", "a  b"),
    ("a <Private\n>x</private > b", "a  b"),
    ("1 <private>one</private> 2 <private>two</private> 3", "1  2  3"),
    ("x <system-reminder>Remember the todo list</system-reminder> y", "x  y"),
    ("x <kenning-context>\n# Memory of p\n#1 09:15 ok\n</kenning-context> y", "x  y"),
    ("x <claude-mem-context>old</claude-mem-context> y <persisted-output>o</persisted-output>", "x  y "),
    ("<system-reminder>a</system-reminder><private>b</private>", ""),
    ("<private>a<system-reminder>b</system-reminder>c</private>d", "d"),
    ("<system-reminder>a<private>b</private>c</system-reminder>d", "d"),
])
def test_blocks_are_removed_with_their_content(text: str, expected: str) -> None:
    assert strip_text(text) == expected


@pytest.mark.parametrize("tag", ECHO_TAGS)
def test_every_echo_tag_is_removed(tag: str) -> None:
    assert strip_text(f"keep <{tag}>echoed back</{tag}> this") == "keep  this"
    assert strip_text(f"keep <{tag.upper()} a=1>echoed back</{tag.upper()}> this") == "keep  this"


@pytest.mark.parametrize(("text", "expected"), [
    ("visible <private>hunter2 and everything after", "visible "),
    ("visible <private reason=x>\nline\nline", "visible "),
    ("<private>a</private> shown <private>not closed, hidden", " shown "),
    ("shown <private>hidden <private>also hidden</private> still hidden", "shown "),
])
def test_unclosed_private_hides_everything_after_it(text: str, expected: str) -> None:
    assert strip_text(text) == expected


def test_nested_private_blocks_never_leak_the_outer_content() -> None:
    assert strip_text("<private>a<private>b</private>LEAK</private>ok") == "ok"
    assert strip_text("<private>1<private>2<private>3</private>4</private>5</private>ok") == "ok"
    assert strip_text("x <private>a</private> <private>b</private> y") == "x   y"


@pytest.mark.parametrize("text", [
    "plain text without any tag",
    "comparisons: a < b and c > d, <div>html</div>, List<String>",
    "a <privateer>pirate</privateer> and <privacy>policy</privacy>",
    "a stray closer </private> is text",
    "a self-closing <private/> is not a block",
    "",
])
def test_text_without_our_tags_is_returned_unchanged(text: str) -> None:
    assert strip_text(text) == text


def test_tag_free_text_is_returned_as_the_same_object() -> None:
    big = "no tags here " * 10_000
    assert strip_text(big) is big
    html = "<div>" + "x" * 1000 + "</div>"
    assert strip_text(html) is html


def test_strip_value_walks_nested_json() -> None:
    value: dict[str, Any] = {
        "prompt": "fix it <private>token is hunter2</private> please",
        "tool_input": {"command": "echo hi", "list": ["a", "<system-reminder>r</system-reminder>b", 3, None, True]},
        "n": 1.5,
        "<private>keys are kept</private>": "v",
    }
    out = strip_value(value)
    assert out == {
        "prompt": "fix it  please",
        "tool_input": {"command": "echo hi", "list": ["a", "b", 3, None, True]},
        "n": 1.5,
        "<private>keys are kept</private>": "v",
    }
    assert value["prompt"].startswith("fix it <private>")  # the input is not mutated


@pytest.mark.parametrize(("text", "expected"), [
    ("<private>all of it</private>", True),
    ("  \n<private>a</private>\n<private>b</private>  ", True),
    ("<private>never closed", True),
    ("<private>a</private> but this is not", False),
    ("nothing private", False),
    ("", False),
    ("   ", False),
])
def test_is_entirely_private(text: str, expected: bool) -> None:
    assert is_entirely_private(text) is expected


# --------------------------------------------------------------- false positives on real text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _fixture_strings() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = str(path.relative_to(FIXTURES))
        if path.suffix == ".json":
            out += [(rel, s) for s in _strings(json.loads(text))]
        elif path.suffix == ".jsonl":
            out += [(rel, s) for line in text.splitlines() if line.strip() for s in _strings(json.loads(line))]
        else:
            out.append((rel, text))
    return out


def _hits(where: str, before: str, after: str) -> list[str]:
    return [f"{where}: …{after[max(0, m.start() - 50):m.end() + 20]!r}" for m in MARKER.finditer(after)
            if m.group(0) not in before]


def test_no_false_positives_on_real_claude_code_payloads() -> None:
    r = Redactor()
    strings = _fixture_strings()
    assert len(strings) > 1000  # the captures are really there
    hits = [h for where, s in strings for h in _hits(where, s, r.text(s))]
    print(f"\nfixture strings scanned: {len(strings)}, redactions: {len(hits)}")
    for h in hits:
        print("  ", h)
    assert hits == []


def test_real_hook_payloads_pass_through_the_hooks_redaction_unchanged() -> None:
    """Claude Code's own fields (``"permission_mode": "bypassPermissions"``, ids, paths) are left alone."""
    r = Redactor()
    payloads = [json.loads(p.read_text())["stdin"] for p in sorted(FIXTURES.rglob("events/*.json"))]
    assert len(payloads) > 50 and any(p.get("permission_mode") == "bypassPermissions" for p in payloads)
    changed = [p["hook_event_name"] for p in payloads if r.payload(p, "claude-code") != p]
    assert changed == []


def test_few_false_positives_on_kennings_own_source() -> None:
    r = Redactor()
    files = sorted((REPO / "kenning").rglob("*.py"))
    assert len(files) > 20
    hits: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        hits += _hits(str(path.relative_to(REPO)), text, r.text(text))
    print(f"\nsource files scanned: {len(files)}, redactions: {len(hits)}")
    for h in hits:
        print("  ", h)
    # Source code holds no secrets; what is flagged are the examples in the redactor's own docstrings.
    assert len(hits) <= 4


class _PastPrecheck(Exception):
    pass


def test_the_tag_precheck_on_non_ascii_text_is_the_lower_case_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """strip_text's pre-check lowers only ASCII bytes of a non-ASCII text: it must pass exactly the texts
    whose ``str.lower()`` holds an opener, for every code point next to or inside one."""
    from kenning.privacy import tags

    def past(*_a: object) -> None:
        raise _PastPrecheck

    monkeypatch.setattr(tags, "_patterns", past)

    def passes(text: str) -> bool:
        try:
            tags.strip_text(text)
        except _PastPrecheck:
            return True
        return False

    for cp in [*range(0x80, 0xD800), *range(0xE000, 0x10000), 0x1F600]:
        c = chr(cp)
        for text in (f"{c}<private>x", f"<{c}private>", f"<PR{c}IVATE>", f"<pr{c}vate>", f"{c}<KENNING-CONTEXT",
                     f"<{c}", f"<\u212aenning-context {c}", f"<PR\u0130VATE{c}"):
            lower = text.lower()
            assert passes(text) == any(o in lower for o in tags._LOWER_OPENERS), repr(text)
