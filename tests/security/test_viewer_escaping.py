"""The viewer never turns stored text into markup (issue 26: the fence's property tests, for the viewer).

The viewer builds its DOM in kenning/viewer/static/dom.js without innerHTML: stored text goes in
through text nodes and ``setAttribute`` (``h``), memory text through ``rich`` (backticks become
``<code>``, matched words ``<mark>``). In real Chromium, thousands of generated hostile strings
(tags, attributes, event handlers, comments, CDATA, entity and escape spellings, look-alike brackets,
invisible characters, the fence and system tags) go through ``h`` and ``rich`` exactly as a feed item
uses them; the browser serialises the result (its HTML escaping) and parses that again. The property:
the parse holds exactly the elements and attributes the viewer made, no element or attribute came
from the data, and the text reads back as it was stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import browser as br
from tests.support import fence_oracle

pytestmark = [pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]

STATIC = Path(__file__).resolve().parents[2] / "kenning" / "viewer" / "static"
ORIGIN = "http://kenning-viewer.test"
PIECES = [
    "<", ">", "</", "/>", '"', "'", "`", "=", "&", ";", "#", " ", "\n", "\r", "\t", "\0", "script", "img", "svg",
    "iframe", "style", "textarea", "title", "template", "math", "onerror", "onload", "onclick", "src", "href",
    "x", "alert(1)", "javascript:", "<!--", "-->", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<?xml ?>",
    "<img src=x onerror=alert(1)>", "<svg/onload=alert(1)>", "</textarea><script>alert(1)</script>",
    '" onmouseover="alert(1)', "' autofocus onfocus='alert(1)", "<b>bold</b>", "<a href='javascript:x'>",
    "&lt;", "&lt;script&gt;", "&#60;", "&#x3c;", "&amp;lt;", "%3Cscript%3E", "\\u003cscript\\u003e", "\uff1c",
    "\u2039", "\u3008", "\u2028", "\u2029", "\ufeff", "\u200b", "\u202e", "<kenning-context>", "</kenning-context>",
    "<system-reminder>", "`code`", "``", "</code>", "<mark>", "$&", "$1", "\\", "(?<x>", "[a-z]", ".*",
]


@st.composite
def hostile(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(PIECES) | st.sampled_from(fence_oracle.invisible_chars()[:200])
                          | st.text(max_size=6), min_size=1, max_size=16))
    return "".join(parts)


BUILD = """async (s) => {
  const {h, rich, matcher} = await import('/dom.js');
  const words = s.split(/\\s+/).filter(Boolean).slice(0, 3);
  const root = h('article', {class: 'item', title: s, 'data-title': s, 'aria-label': s},
    h('h3', {class: 'item-title'}, rich(s, matcher(words))), h('p', {class: 'item-sub'}, s));
  const shape = (el) => [el, ...el.querySelectorAll('*')].map(
    (e) => e.tagName + '|' + [...e.attributes].map((a) => a.name).sort().join(','));
  const html = root.outerHTML;
  const t = document.createElement('template');
  t.innerHTML = html;
  const back = t.content.firstElementChild;
  return {html, made: shape(root), parsed: back ? shape(back) : [], count: t.content.childNodes.length,
          title: back && back.getAttribute('title'), data: back && back.getAttribute('data-title'),
          sub: back && back.querySelector('p') ? back.querySelector('p').textContent : null,
          h3: back && back.querySelector('h3') ? back.querySelector('h3').textContent : null};
}"""
TAG_IN_HTML = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")


@pytest.fixture(scope="module")
def viewer_page() -> Iterator[Any]:
    """A page on a viewer-like origin whose ``/dom.js`` is the viewer's own file."""
    with br.chromium() as browser:
        page = browser.new_page()
        errors = br.ConsoleErrors(page)
        page.route(f"{ORIGIN}/blank.html", lambda route: route.fulfill(
            status=200, content_type="text/html", body="<!doctype html><meta charset=utf-8><title>t</title><body>"))
        page.route(f"{ORIGIN}/dom.js", lambda route: route.fulfill(
            status=200, content_type="text/javascript", body=(STATIC / "dom.js").read_text(encoding="utf-8")))
        page.goto(f"{ORIGIN}/blank.html")
        yield page
        errors.check()


def as_parsed(s: str, *, text: bool = False) -> str:
    """``s`` as an HTML parser gives it back: line breaks normalised, NUL replaced (in an attribute)
    or dropped (in text)."""
    return s.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "" if text else "\ufffd")


def check(page: Any, s: str) -> None:
    out = page.evaluate(BUILD, s)
    assert out["count"] == 1, out["html"]
    assert out["parsed"] == out["made"], (s, out["html"])
    assert set(out["made"]) <= {"ARTICLE|aria-label,class,data-title,title", "H3|class", "P|class", "MARK|",
                                "CODE|class"}, out["made"]
    tags = {m.group(2).lower() for m in TAG_IN_HTML.finditer(out["html"])}
    assert tags <= {"article", "h3", "p", "mark", "code"}, (s, out["html"])
    assert out["title"] == out["data"] == as_parsed(s)
    assert out["sub"] == as_parsed(s, text=True)
    assert out["h3"] == as_parsed(re.sub(r"`([^`\n]+)`", r"\1", s), text=True)  # rich: `x` shows x as code


def test_known_hostile_strings_stay_text(viewer_page: Any) -> None:
    for s in [*PIECES, "<img src=x onerror=alert(1)>`<b>x</b>` and <script>alert(1)</script>"]:
        check(viewer_page, s)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(hostile())
def test_no_generated_string_becomes_a_tag_or_attribute(viewer_page: Any, s: str) -> None:
    check(viewer_page, s)
