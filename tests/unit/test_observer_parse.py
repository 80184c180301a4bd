"""The observer's reply parser: tolerant of sloppy models, inert against hostile XML."""

from __future__ import annotations

import time

from kenning.observer.modes import load_mode, type_ids
from kenning.observer.parse import (
    KINDS,
    MAX_WHY_CHARS,
    map_kind,
    map_scope,
    map_tentative,
    map_type,
    normalize_concepts,
    parse_reply,
    unescape,
)

TYPES = type_ids(load_mode("code"))

GOOD = """
<observation>
  <type>bugfix</type>
  <title>Fixed VAT rounding in invoice totals</title>
  <subtitle>round() was banker's rounding</subtitle>
  <facts><fact>totals.py used round(x, 2)</fact><fact>now uses Decimal.quantize(ROUND_HALF_UP)</fact></facts>
  <narrative>Per-line VAT was off by a cent &amp; the test caught it.</narrative>
  <concepts><concept>problem-solution: rounding</concept><concept>Gotcha</concept><concept>gotcha</concept></concepts>
  <files_read><file>src/totals.py</file></files_read>
  <files_modified><file>src/totals.py</file></files_modified>
</observation>
<observation><type>decision</type><title>Money is Decimal, never float</title></observation>
"""


def test_several_observations_are_parsed_with_their_fields() -> None:
    r = parse_reply(GOOD, TYPES)
    assert r.kind == "observations"
    assert [o.type for o in r.observations] == ["bugfix", "decision"]
    first = r.observations[0]
    assert first.title == "Fixed VAT rounding in invoice totals"
    assert first.facts == ["totals.py used round(x, 2)", "now uses Decimal.quantize(ROUND_HALF_UP)"]
    assert first.narrative == "Per-line VAT was off by a cent & the test caught it."
    assert first.concepts == ["problem-solution", "gotcha"]
    assert first.files_modified == ["src/totals.py"]


def test_fenced_reply_and_summary() -> None:
    text = "Here you go:\n```xml\n<summary><request>Add CSV export</request><learned>uv, not pip</learned>" \
           "<next_steps>document it</next_steps></summary>\n```"
    r = parse_reply(text, TYPES)
    assert r.kind == "observations"
    assert r.summary is not None and r.summary.request == "Add CSV export" and r.summary.next_steps == "document it"


def test_empty_and_skip_are_empty_not_prose() -> None:
    assert parse_reply("", TYPES).kind == "empty"
    assert parse_reply("   \n", TYPES).kind == "empty"
    assert parse_reply('<skip reason="status check only"/>', TYPES).kind == "empty"


def test_prose_is_prose() -> None:
    r = parse_reply("I looked at the session and the user ran some tests. Nothing else happened.", TYPES)
    assert r.kind == "prose" and not r.observations
    assert r.preview.startswith("I looked")


def test_quota_and_auth_replies_are_recognised() -> None:
    assert parse_reply("Claude AI usage limit reached|1767225600", TYPES).kind == "quota"
    assert parse_reply("Error: rate limit exceeded, retry later", TYPES).kind == "quota"
    assert parse_reply("Invalid API key · Please run /login", TYPES).kind == "auth"
    assert parse_reply("Failed to authenticate. API Error: 401", TYPES).kind == "auth"


def test_malformed_xml_is_salvaged_or_dropped_never_raises() -> None:
    truncated = "<observation><type>feature</type><title>Added export.py</title><narrative>cut off"
    r = parse_reply(truncated, TYPES)
    assert r.kind == "observations" and r.observations[0].title == "Added export.py"
    garbage = "<observation><type>feature</type></observation><summary></summary><<<>>>&&&;"
    r = parse_reply(garbage, TYPES)
    assert r.kind == "empty" and r.skipped_blocks == 2
    for junk in ("<observation", "</observation>", "<title>x</title>", "<<<", "&#xFFFFFFFF;", "\x00" * 10):
        parse_reply(junk, TYPES)


def test_unknown_types_are_mapped_and_flagged_never_lost() -> None:
    assert map_type("bugfix", TYPES) == ("bugfix", None)
    assert map_type("Bug", TYPES) == ("bugfix", "Bug")
    assert map_type("enhancement", TYPES) == ("feature", "enhancement")
    assert map_type("refactr", TYPES) == ("refactor", "refactr")
    assert map_type("zebra", TYPES) == ("discovery", "zebra")
    r = parse_reply("<observation><type>zebra</type><title>Something learned</title></observation>", TYPES)
    assert r.observations[0].type == "discovery" and r.observations[0].original_type == "zebra"


def test_concepts_are_normalised() -> None:
    assert normalize_concepts(["How-It-Works: parser", " gotcha ", "GOTCHA", "", "bugfix"], "bugfix") == \
        ["how-it-works", "gotcha"]


def test_entity_expansion_bomb_is_not_expanded() -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">'
                      for i in range(1, 10))
            + ']><observation><type>discovery</type><title>&lol9;</title><narrative>&lol9; &amp;</narrative>'
              "</observation>")
    started = time.perf_counter()
    r = parse_reply(bomb, TYPES)
    assert time.perf_counter() - started < 1.0
    obs = r.observations[0]
    assert obs.title == "&lol9;"  # left literal: no DTD, no custom entities
    assert obs.narrative == "&lol9; &"
    assert len(obs.title) < 20


def test_external_entities_are_inert() -> None:
    xxe = ('<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
           "<observation><type>discovery</type><title>&xxe;</title></observation>")
    assert parse_reply(xxe, TYPES).observations[0].title == "&xxe;"


def test_unescape_only_knows_predefined_and_numeric_references() -> None:
    assert unescape("&lt;a&gt; &amp; &quot;&apos; &#65;&#x42; &nbsp; &#xD800;") == "<a> & \"' AB &nbsp; "


def test_huge_reply_is_bounded() -> None:
    block = ("<observation><type>change</type><title>t{}</title><narrative>" + "x" * 100_000
             + "</narrative></observation>")
    text = "".join(block.format(i) for i in range(50))
    started = time.perf_counter()
    r = parse_reply(text, TYPES)
    assert time.perf_counter() - started < 2.0
    assert len(r.observations) == 50 and all(len(o.narrative) <= 4000 for o in r.observations)


ROLES = """
<observation>
  <kind>Rule</kind><scope>user</scope><tentative>true</tentative>
  <why>In every project, answer me in French &amp; keep it short.</why>
  <type>decision</type><title>Answer in French everywhere</title>
</observation>
<observation><kind>root cause</kind><why><![CDATA[cache_key() ignored tenant_id]]></why>
  <type>bugfix</type><title>Cache keys ignored the tenant</title></observation>
<observation><type>feature</type><title>Added --verbose</title></observation>
"""


def test_kind_scope_tentative_and_why_are_read_and_the_old_format_still_parses() -> None:
    first, second, old = parse_reply(ROLES, TYPES).observations
    assert (first.kind, first.scope, first.tentative, first.roles_given) == ("rule", "user", True, True)
    assert first.why == "In every project, answer me in French & keep it short."
    assert (second.kind, second.why, second.notes) == ("rootcause", "cache_key() ignored tenant_id", [])
    # the format from before kinds existed: nothing claimed, nothing to check
    assert (old.kind, old.scope, old.tentative, old.why, old.roles_given) == ("", "project", False, "", False)


def test_kinds_are_mapped_or_dropped_with_a_reason_never_raising() -> None:
    assert map_kind("gotcha") == ("gotcha", None)
    assert map_kind("To-Do") == ("todo", None)
    assert map_kind("preference") == ("rule", "the model wrote kind 'preference', read as 'rule'")
    assert map_kind("gotchas")[0] == "gotcha"  # a near miss
    kind, note = map_kind("bananas")
    assert kind == "" and note and "not one of ours" in note
    assert map_kind("") == ("", None)
    assert map_scope("Global") == ("user", None) and map_scope("project") == ("project", None)
    assert map_scope("galaxy")[0] == "project" and map_scope("galaxy")[1]
    assert map_tentative("yes") == (True, None) and map_tentative("false") == (False, None)
    assert map_tentative("perhaps")[0] is False and map_tentative("perhaps")[1]
    for junk in ("<observation><kind><kind>rule</kind><title>x</title></observation>",
                 "<observation><title>x</title><why>" + "w" * 50_000 + "</why></observation>",
                 "<observation><title>x</title><tentative>&#xFFFFFFFF;</tentative><scope><</scope></observation>"):
        obs = parse_reply(junk, TYPES).observations[0]
        assert obs.kind in (*KINDS, "") and len(obs.why) <= MAX_WHY_CHARS
