"""The fence's pre-check (``probe``) decides without ``re`` and never misses a tag the pattern finds.

``neutralise`` must give exactly what the pattern alone gives on the folded, decoded form of every
text (``reference``: no pre-check); the pre-check only spares the pattern's compilation (~20 ms) and
the character-by-character fold where it provably finds nothing. Its tables are checked against
``re`` and ``unicodedata`` themselves.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.context import fence, invisible
from tests.security.test_fence import HOSTILE

EVERY = "".join(map(chr, range(0x110000))).encode("utf-8", "surrogatepass").decode("utf-8", "replace")
# Where compatibility forms of letters and brackets live (full-width, small forms, mathematical,
# enclosed, tags) besides the whole BMP: each code point is tried in the templates below.
PLANES = [*range(0x80, 0x10000), *range(0x1D400, 0x1D800), *range(0x1F100, 0x1F200), *range(0xE0000, 0xE0080)]


def reference(text: str) -> str:
    """``neutralise`` without the pre-check: the pattern on the folded form of every text."""
    return fence._splice(invisible.strip_hidden(text))


def form_of(text: str) -> str:
    return "".join(fence._units(invisible.strip_hidden(text)).pieces)


def found_by_pattern(text: str) -> bool:
    return fence._compiled().search(form_of(text)) is not None


def seen_by_precheck(text: str) -> bool:
    return fence.probe(invisible.strip_hidden(text)) is not None


def test_tables_are_what_re_and_unicodedata_say() -> None:
    assert set(fence.WHITESPACE) == set(re.findall(r"\s", EVERY)) == {c for c in EVERY if c.isspace()}
    assert tuple(sorted({n[0] for n in fence.NAMES})) == fence.FIRST_WORDS
    # Every character that folds to an opener or to the start of an encoding is in OPENERS.
    openers = {c for c in EVERY[0x80:] if c != "\ufffd" and any(m in invisible.fold_char(c) for m in "<&%\\")}
    assert openers == set(fence.OPENERS)


def test_every_code_point_in_a_tag_is_seen() -> None:
    """A character anywhere a tag can hold one (opener, gap, slash, inside a name): whenever the pattern
    then finds a tag, on the text or its NFKC form, so does the pre-check."""
    missed = []
    for cp in PLANES:
        c = chr(cp)
        for text in (f"{c}system>", f"{c}/kenning-context>", f"<{c}system>", f"<{c}/{c}function_calls>",
                     f"<s{c}ystem>", f"<{c}ystem>", f"&#6{c};system", f"<{c}{c}persisted-output>"):
            if found_by_pattern(text) and not seen_by_precheck(text):
                missed.append(text)
    assert not missed, missed[:20]


def test_hostile_spellings_are_seen() -> None:
    extra = ["&#0060;system", "&#x003C;/system", "\\u003c system", "<\u200b\u200bs\u200by\u200bstem>",
             "< \n /  function_calls", "<system_\u0130nstruction", "<\u017fystem", "<\u212aenning-context>",
             "\uff1csystem", "\ufe64system", "&#x3c;&#47;system", "%3c%2fsystem", "<\\/system", "&LT;SYSTEM",
             "&lt;&sol;kenning-context&gt;", "<" + " " * 600 + "system>", "<" + "\u200b" * 600 + "system>",
             "<s" + "\u200b" * 600 + "ystem>", "\\U003C/KENNING-CONTEXT"]
    for text in HOSTILE + extra:
        assert found_by_pattern(text), text
        assert seen_by_precheck(text), text
        assert fence.neutralise(text) == reference(text) != text


def test_ordinary_text_is_decided_without_the_pattern() -> None:
    for text in ("if a < size and b <= count: return List<String>()", "x = {'system': 1}  # see <context>",
                 "for (i = 0; i < n; i++) { function(i); }", "a &lt; b, 3 < 4 -> <span>", "— “quoted” … ok",
                 "<div class='systemic'>", "the <sys> tag and <fun>", "\\u003cb\\u003e"):
        assert fence.probe(text) is None, text
        assert fence.neutralise(text) is text


PIECES = ["<", "</", "< /", "&lt;", "&lt", "&#60;", "&#060", "&#x3c;", "&#X003C", "%3c", "%3C", "\\u003c", "\\x3c",
          "＜", "﹤", "/", "／", "&sol;", "%2f", "&#47;", "\\/", " ", "\n", "\t", "\u200b", "\u00ad", "\u3000",
          "system", "SYSTEM", "Sys", "tem", "ſystem", "ｓｙｓｔｅｍ", "kenning", "\u212aenning", "-", "_", ".", ":",
          "context", "reminder", "claude", "mem", "function", "calls", "results", "persisted", "output", ">",
          "＞", "&gt;", "a", "b = 1", "x < y", "…", "é", "\u0301", "prompt", "message", "instruction", "İ", ";"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.text(max_size=12))
def test_neutralise_equals_the_pattern_alone(pieces: list[str], noise: str) -> None:
    text = "".join(pieces) + noise
    assert fence.neutralise(text) == reference(text)
    if found_by_pattern(text):
        assert seen_by_precheck(text)


def test_ordinary_code_is_neutralised_without_re() -> None:
    """A 20 KB module of ordinary code (ASCII and not) through ``neutralise``: no ``re``, no change. (Its
    CJK examples are left out: CJK text is left to ``unicodedata``, see the test below.)"""
    code = ("import sys; sys.path.insert(0, '.'); from kenning.context import fence; "
            "src = ''.join(c for c in open('kenning/context/prompt.py', encoding='utf-8').read() "
            "if c.isascii() or fence.known_fold(c) is not None) * 2; "
            "assert len(src) > 20000 and not src.isascii(); "
            "same = fence.neutralise(src) is src and fence.neutralise(src.encode('ascii', 'ignore').decode()) "
            "== src.encode('ascii', 'ignore').decode(); "
            "loaded = 're' in sys.modules or 'unicodedata' in sys.modules; print(int(same), int(loaded))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "0"]


def composition_seconds() -> set[int]:
    """Every code point that is the second of a canonical composition pair (Hangul jamo included)."""
    out = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<") and len(d.split()) == 2:
            out.add(int(d.split()[1], 16))
    return out


def test_the_known_folds_are_what_unicodedata_says() -> None:
    seconds = composition_seconds()
    assert fence.known_fold("\u2022") == "\u2022"  # (builds the ranges)
    inert = [cp for a, b in invisible._inert for cp in range(a, b + 1)]
    assert len(inert) > 3000
    for cp in inert:
        c = chr(cp)
        assert unicodedata.category(c) not in ("Cn", "Cs", "Co", "Mn", "Me"), hex(cp)
        assert unicodedata.category(c) != "Cf" or invisible.fold_char(c) == "", hex(cp)
        assert unicodedata.normalize("NFKD", c) == c and unicodedata.combining(c) == 0, hex(cp)
        assert cp not in seconds, hex(cp)
    for c, to in fence.NFKC_ASCII.items():
        assert not c.isascii() and to.isascii() and unicodedata.normalize("NFKD", c) == to, hex(ord(c))
    # A text outside the tables is left to unicodedata.
    for text in ("caf\u00e9", "e\u0301", "\uff53ystem", "\uac00", "\udcff", "\u00bd", "\u2260"):
        assert fence.known_fold("ok " + text) is None, text


KNOWN = [*fence.NFKC_ASCII, "\u2022", "\u2014", "\u2192", "\u2264", "\u2713", "\U0001f600", "\u00a9", "\u201c"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from([*KNOWN, *PIECES]), max_size=14), st.text(max_size=6))
def test_a_known_fold_is_the_nfkc_form(pieces: list[str], noise: str) -> None:
    text = "".join(pieces) + noise
    folded = fence.known_fold(text)
    assert folded is None or folded == unicodedata.normalize("NFKC", text) == unicodedata.normalize("NFKD", text)
    if folded is not None and unicodedata.is_normalized("NFKC", text):
        assert folded is text
    assert fence.neutralise(text) == reference(text)
