"""The injection ledger in the viewer (issue 29), in headless Chromium against the installed wheel: a
session shows what it was told from memory and why; a memory shows how often it was given and used;
Stats show the memory's health over a date range. The Next-session tab after a reload or from a
``?tab=preview`` link shows the preview at once. Twenty rules unpinned at once, and undone."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.conftest import Home, load_fixture
from tests.support import browser as br
from tests.support.viewer import DECISION_TITLE, TIMEOUT_MS, api, capture_turn, obs_row, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)


def told(home: Home, session: str) -> int:
    """A SessionStart through the real hook (the worker serves it and records it); the session's row id."""
    payload = load_fixture("print-mode/events/SessionStart.startup.json", cwd=str(home.project))
    payload["session_id"] = session
    r = home.hook("SessionStart", payload)
    assert r.returncode == 0 and DECISION_TITLE in r.stdout.decode(), r.stdout[-500:]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        home.flush()
        conn = home.db()
        try:
            row = conn.execute("SELECT s.id FROM sessions s WHERE s.agent_session_id = ? AND EXISTS (SELECT 1 "
                               "FROM injections i WHERE i.session = s.agent_session_id)", (session,)).fetchone()
        finally:
            conn.close()
        if row is not None:
            return int(row[0])
        time.sleep(0.2)
    raise AssertionError("the worker did not record the session start")


def test_a_session_shows_what_it_was_told_and_a_memory_how_often(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "ledger-past")
    home.flush()
    sid = told(home, "ledger-next")
    rule = obs_row(home, DECISION_TITLE)
    assert rule is not None and rule["layer"] == "rule"

    open_viewer(page, home, f"?item=s{sid}")
    told_here = page.locator("#ledger-session")
    expect(told_here).to_contain_text(DECISION_TITLE)
    expect(told_here).to_contain_text("session start")
    expect(told_here).to_contain_text("why: standing rule")
    expect(told_here).to_contain_text("Told ")
    shot(page, "ledger-session", full_page=True)

    told_here.locator(f"button[data-oid='{rule['id']}']").click()  # to the memory's own detail
    given = page.locator("#ledger-memory")
    expect(given).to_contain_text("Given 1 time, used 0 times")
    expect(given).to_contain_text("standing rule")
    expect(given).to_contain_text("session ledger-next")
    shot(page, "ledger-memory", full_page=True)
    # Each handing links to the session that received it: its ledger, what it was told and why.
    link = given.locator(f"button.session-link[data-sid='{sid}']")
    link.scroll_into_view_if_needed()
    shot(page, "ledger-memory-sessions")
    link.click()
    expect(page.locator("#detail-title")).to_contain_text(f"Session #{sid}")
    expect(page.locator("#ledger-session")).to_contain_text(DECISION_TITLE)
    assert f"item=s{sid}" in page.url
    page.click("#detail-back")  # and back to the memory
    expect(page.locator("#ledger-memory")).to_contain_text("Given 1 time")

    # The Stats tab: the memory's health over a date range.
    page.click("#tab-stats")
    health = page.locator("#memory-health")
    expect(health).to_contain_text("1 time in 1 session")
    expect(health).to_contain_text("0.0% · a check-up is due")
    shot(page, "memory-health", full_page=True)
    page.fill("#stats-from", time.strftime("%Y-%m-%d", time.localtime(time.time() + 2 * 86400)))
    page.fill("#stats-to", time.strftime("%Y-%m-%d", time.localtime(time.time() + 3 * 86400)))
    page.click("#stats-range button[type='submit']")
    expect(health).to_contain_text("nothing recorded")


def _clockless(text: str) -> str:
    """The index without what the clock moves: its header's time and the rows' ages ("08:40 UTC", "1m")."""
    text = re.sub(r"\b\d{2}:\d{2}\b", "HH:MM", text)
    return " ".join(re.sub(r"(?<=\s)\d+(?:m|h|d|mo|y)(?=\s)", "AGE", text).split())


def _shows_but_for_the_clock(page: Any, expected: str) -> None:
    """The page shows the index the API gives, the same but for a minute that may have passed between the two
    (the header says the time to the minute; a row its age)."""
    shown = page.locator("#preview-text")
    expect(shown).to_contain_text("</kenning-context>")
    assert _clockless(shown.inner_text()) == _clockless(expected)


def test_next_session_tab_after_a_reload_and_from_a_link(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "preview-reload")
    home.flush()
    expected = api(home, f"preview?project={home.key}")["context"]
    open_viewer(page, home, "?tab=preview")
    _shows_but_for_the_clock(page, expected)
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    _shows_but_for_the_clock(page, expected)
    assert "No project has memory yet" not in page.locator("#preview-size").inner_text()
    shot(page, "preview-after-reload")


def test_bulk_unpin_of_twenty_rules_with_undo(worker: Home, page: Any) -> None:
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.store.db import open_db

    home = worker
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        door = MemoryService(conn, "cli")
        ids = []
        for i in range(20):
            draft = ObservationDraft(type="discovery", title=f"Imported convention number {i} about module m{i}",
                                     narrative=f"convention {i}", created_at=time.time() - 600 + i)
            oid = door.save(draft, project=home.key).id
            door.pin(oid)
            ids.append(oid)
    finally:
        conn.close()

    def layers() -> dict[int, tuple[str, str | None]]:
        c = home.db()
        try:
            return {int(r[0]): (str(r[1]), r[2]) for r in c.execute(
                f"SELECT id, layer, user_layer FROM observations WHERE id IN ({','.join(map(str, ids))})")}
        finally:
            c.close()

    before = layers()
    assert {v[0] for v in before.values()} == {"rule"}
    open_viewer(page, home, "?memory=rule")
    expect(page.locator("#feed article.item[data-kind='observation']")).to_have_count(20)
    page.click("#bulk-select")
    page.click("#bulk-all")
    expect(page.locator("#bulk-count")).to_have_text("20 selected")
    shot(page, "bulk-selected")
    page.click("#bulk-unpin")
    expect(page.locator("#bulk-undo")).to_contain_text("Unpinned 20.")
    expect(page.locator("#feed article.item[data-kind='observation']")).to_have_count(0)  # none is a rule now
    assert {v[0] for v in layers().values()} == {"key"}
    shot(page, "bulk-unpinned")
    page.click("#bulk-undo-btn")
    expect(page.locator("#feed article.item[data-kind='observation']")).to_have_count(20)
    assert layers() == before  # each put back exactly as it was: a rule, pinned by the user
    c = home.db()
    try:
        ops = [str(r[0]) for r in c.execute("SELECT op FROM memory_log WHERE surface = 'viewer'")]
    finally:
        c.close()
    assert ops.count("unpinned") == 20 and ops.count("undone") == 20


def greeting_replaced(home: Home, turn: str, title: str) -> tuple[dict[str, Any], int]:
    """A captured turn's "Added hello.txt" memory, and a newer memory (saved as the CLI saves) to replace it."""
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.store.db import open_db

    capture_turn(home, turn)
    home.flush()
    old = obs_row(home, "Added hello.txt")
    conn = open_db(home.paths.db)
    try:
        new = MemoryService(conn, "cli").save(ObservationDraft(
            type="feature", title=title, narrative="replaced the greeting", created_at=time.time()),
            project=home.key).id
    finally:
        conn.close()
    return old, new


def test_supersede_from_the_viewer_naming_the_replacement(worker: Home, page: Any) -> None:
    home = worker
    old, new = greeting_replaced(home, "supersede-turn", "hello.txt now greets in English and French")
    open_viewer(page, home, f"?item=o{old['id']}")
    page.click("#act-supersede")
    page.fill("#supersede-by", str(old["id"]))  # itself: refused before any request
    page.click("#supersede-go")
    expect(page.locator("#act-error")).to_contain_text("another memory")
    page.fill("#supersede-by", f"#{new}")
    page.click("#supersede-go")
    expect(page.locator("#superseded-by")).to_contain_text(f"#{new}")
    expect(page.locator("#act-restore")).to_be_visible()
    row = obs_row(home, "Added hello.txt")
    assert row["status"] == "superseded" and row["superseded_by"] == new
    shot(page, "supersede-from-viewer")


def test_a_cli_supersede_appears_on_an_open_page(worker: Home, page: Any) -> None:
    home = worker
    old, new = greeting_replaced(home, "live-turn", "hello.txt greets in two languages now")
    open_viewer(page, home, f"?item=o{old['id']}")
    card = page.locator(f"#feed article.item[data-key='o:{old['id']}']")
    expect(card).to_be_visible()
    expect(card.locator(".flag-superseded")).to_have_count(0)
    r = home.kenning("supersede", str(old["id"]), "--by", str(new))
    assert r.returncode == 0, r.stdout + r.stderr
    t0 = time.monotonic()
    expect(page.locator("#superseded-by")).to_contain_text(f"#{new}", timeout=5000)  # the open detail
    took = time.monotonic() - t0
    # The feed of current memory no longer lists it (or flags it, in a view that keeps superseded ones).
    expect(page.locator(f"#feed article.item[data-key='o:{old['id']}']:not(.status-superseded)")).to_have_count(0)
    assert took < 2.0, f"shown {took:.1f} s after the CLI returned"
    shot(page, "live-cli-supersede")


def test_interleaved_sessions_are_grouped_once_per_session(worker: Home, page: Any) -> None:
    from kenning.records import ObservationDraft as Draft
    from kenning.store import repo
    from kenning.store.db import open_db

    home = worker
    home.paths.ensure()
    conn = open_db(home.paths.db)
    now = time.time()
    try:
        with repo.transaction(conn):
            sids = [repo.upsert_session(conn, platform="claude-code", agent_session_id=f"par-{k}", project=home.key,
                                        project_root=str(home.project), cwd=str(home.project), at=now - 900)
                    for k in "ab"]
            for i in range(12):  # a, b, a, b, … one minute apart
                repo.insert_observation(conn, sids[i % 2], home.key, Draft(
                    type="change", title=f"Step {i} of the {'ab'[i % 2]} work on module {i}",
                    created_at=now - 800 + i * 60), "rules")
    finally:
        conn.close()
    open_viewer(page, home)
    expect(page.locator("#feed article.item[data-kind='observation']")).to_have_count(12)
    groups = page.eval_on_selector_all("#feed .day .session", "els => els.map(e => e.dataset.session)")
    assert sorted(groups) == sorted(str(s) for s in sids), groups  # one group each, not twelve
    counts = page.eval_on_selector_all("#feed .session .session-count", "els => els.map(e => e.textContent)")
    assert counts == ["6 items", "6 items"]
    shot(page, "interleaved-sessions")


def test_search_says_why_meaning_did_not_answer(worker: Home, page: Any) -> None:
    home = worker  # embedding_backend none (the worker fixture)
    capture_turn(home, "note-turn")
    home.flush()
    open_viewer(page, home)
    page.fill("#search", "hello")
    page.press("#search", "Enter")
    heading = page.locator("#feed-heading")
    expect(heading).to_contain_text("for “hello” (keywords)")
    expect(page.locator("#search-note")).to_have_text(
        "Search by meaning is off: embeddings are off (embedding_backend none). These results match keywords only.")


def _contrast(fg: str, bg: str) -> float:
    """WCAG contrast of two computed ``rgb(r, g, b)`` colours."""
    def lum(css: str) -> float:
        parts = [float(x) / 255 for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in parts]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_superseded_cards_and_highlights_keep_aa_contrast_in_both_themes(worker: Home, page: Any) -> None:
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.store.db import open_db

    home = worker
    capture_turn(home, "contrast-turn")
    home.flush()
    old = obs_row(home, "Added hello.txt")
    conn = open_db(home.paths.db)
    try:
        new = MemoryService(conn, "cli").save(ObservationDraft(
            type="feature", title="hello.txt greets twice", narrative="n", created_at=time.time()),
            project=home.key).id
        MemoryService(conn, "cli").supersede([old["id"]], new)
    finally:
        conn.close()
    open_viewer(page, home, "?memory=superseded&q=hello")
    card = page.locator(f"#feed article.item[data-key='o:{old['id']}']")
    expect(card.locator("mark").first).to_be_visible()
    for theme in ("light", "dark"):
        page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        page.wait_for_timeout(100)
        style = card.evaluate("""e => { const s = getComputedStyle(e); const t = e.querySelector('.item-title');
            const m = e.querySelector('mark'); return {opacity: s.opacity, bg: s.backgroundColor,
            title: getComputedStyle(t).color, mark: getComputedStyle(m).color,
            markBg: getComputedStyle(m).backgroundColor}; }""")
        assert style["opacity"] == "1", (theme, style)
        assert _contrast(style["title"], style["bg"]) >= 4.5, (theme, style)
        assert _contrast(style["mark"], style["markBg"]) >= 4.5, (theme, style)
    shot(page, "superseded-contrast")


def test_a_rule_written_by_hand_in_the_viewer(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "write-turn")
    home.flush()
    open_viewer(page, home)
    page.click("#write-open")
    page.select_option("#write-project", home.key)
    page.click("#write-save")  # nothing written: the browser asks for the text first
    assert page.locator("#write-form").is_visible()
    page.fill("#write-text", "Deploys happen on Tuesdays only. token=ghp_" + "a1B2" * 9)
    page.check("#write-rule")
    page.click("#write-save")
    expect(page.locator("#toast")).to_contain_text("a standing rule")
    row = obs_row(home, "Deploys happen on Tuesdays")
    assert row is not None and row["layer"] == "rule" and row["user_layer"] == "rule"
    assert "ghp_" + "a1B2" * 9 not in (row["narrative"] or "") + (row["title"] or "")  # redacted like any capture
    expect(page.locator("#detail-title")).to_contain_text("Deploys happen on Tuesdays")
    conn = home.db()
    try:
        ops = [(str(r[0]), str(r[1])) for r in conn.execute("SELECT surface, op FROM memory_log ORDER BY id")][-2:]
    finally:
        conn.close()
    assert ops == [("viewer", "saved"), ("viewer", "pinned")]
    shot(page, "written-by-hand")


def test_on_a_phone_the_filters_fold_away_and_the_preview_fits(worker: Home, page: Any) -> None:
    from tests.support.viewer import PHONE

    home = worker
    capture_turn(home, "phone-turn")
    home.flush()
    page.set_viewport_size(PHONE)
    open_viewer(page, home, "?type=feature")
    first = page.locator("#feed article.item").first
    expect(first).to_be_visible()
    folded = first.bounding_box()["y"]
    assert not page.locator("#f-memory").is_visible()
    expect(page.locator("#filters-toggle")).to_have_text("Filters (1)")  # the type set by the link
    page.click("#filters-toggle")
    expect(page.locator("#f-memory")).to_be_visible()
    expect(page.locator("#filters-toggle")).to_have_attribute("aria-expanded", "true")
    opened = first.bounding_box()["y"]
    assert folded < 360 and opened - folded > 150, (folded, opened)  # the filters took ~180 px of a phone
    page.click("#tab-preview")
    expect(page.locator("#preview-text")).not_to_be_empty()
    box = page.locator("#preview-project").bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    page.screenshot(path=str(br.artifacts_dir() / "phone-preview-390.png"))
