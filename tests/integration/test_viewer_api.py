"""The viewer's HTTP API on a real worker fed by real hook processes (docs/viewer-api.md)."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kenning.paths import read_token
from tests.conftest import Home, load_fixture
from tests.support.clock import unclocked

PROMPT = "print-mode/events/UserPromptSubmit.json"
STOP = "print-mode/events/Stop.json"
SESSION_START = "print-mode/events/SessionStart.json"


def client(home: Home, token: bool = True) -> httpx.Client:
    headers = {"Authorization": f"Bearer {read_token(home.paths)}"} if token else {}
    return httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=30, headers=headers)


def say(home: Home, text: str, session: str = "viewer-s1") -> None:
    """A real prompt then its Stop, through the real hook processes."""
    p = load_fixture(PROMPT, cwd=str(home.project))
    p.update(prompt=text, session_id=session)
    assert home.hook("UserPromptSubmit", p).returncode == 0
    stop = load_fixture(STOP, cwd=str(home.project))
    stop["session_id"] = session
    assert home.hook("Stop", stop).returncode == 0


def saved(home: Home) -> dict[str, Any]:
    with open(home.paths.settings, encoding="utf-8") as fh:
        return dict(json.load(fh))


@pytest.fixture
def live(home: Home) -> Iterator[tuple[Home, httpx.Client]]:
    home.start_worker()
    with client(home) as c:
        yield home, c


def test_page_is_public_api_is_not(live: tuple[Home, httpx.Client]) -> None:
    home, _c = live
    with client(home, token=False) as anon:
        page = anon.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert read_token(home.paths) not in page.text
        for path in ("/static/..%2ftoken", "/static/.hidden.js", "/static/token", "/static/x.py"):
            assert anon.get(path).status_code == 404, path
        for path in ("meta", "feed", "search?q=x", "observations/1", "sessions/1", "preview?project=p", "stats",
                     "settings", "stream"):
            assert anon.get(f"/api/viewer/{path}").status_code == 401, path
        assert anon.put("/api/viewer/settings", json={"changes": {"log_level": "DEBUG"}}).status_code == 401
        assert anon.delete("/api/viewer/observations/1").status_code == 401
    with client(home) as c:
        # A write from a foreign page is refused even with the token (CSRF).
        r = c.put("/api/viewer/settings", json={"changes": {"context_observations": 3}},
                  headers={"Origin": "http://evil.example"})
        assert r.status_code == 403


def test_feed_detail_edit_retract_delete(live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    say(home, "Always use Decimal for money amounts in this codebase, never float.")
    home.flush()
    feed = c.get("/api/viewer/feed").json()
    kinds = [it["kind"] for it in feed["items"]]
    assert "prompt" in kinds and "observation" in kinds
    obs = next(it for it in feed["items"] if it["kind"] == "observation")
    assert obs["type"] == "decision" and "Decimal" in obs["title"]
    d = c.get(f"/api/viewer/observations/{obs['id']}").json()
    assert d["prompt"]["text"].startswith("Always use Decimal")
    assert d["session"]["agent_session_id"] == "viewer-s1"
    judged = d["memory"]["judged"]  # what the observer made of it, and the words it rests on
    assert (judged["kind"], judged["by"], judged["scope"]) == ("rule", "user", "project"), judged
    assert "Decimal" in judged["said"] and judged["how"], judged
    story = c.get(f"/api/viewer/sessions/{d['session']['id']}").json()
    assert [o["id"] for t in story["turns"] for o in t["observations"]] == [obs["id"]]

    r = c.patch(f"/api/viewer/observations/{obs['id']}", json={"title": "Money is Decimal", "type": "decision"})
    assert r.status_code == 200 and r.json()["observation"]["title"] == "Money is Decimal"
    assert c.patch(f"/api/viewer/observations/{obs['id']}", json={"type": "nonsense"}).status_code == 400
    assert c.patch(f"/api/viewer/observations/{obs['id']}", content=b"{").status_code == 400
    assert c.patch("/api/viewer/observations/99999", json={"title": "x"}).status_code == 404

    project = obs["project"]
    before = c.get("/api/viewer/preview", params={"project": project}).json()["context"]
    assert "Money is Decimal" in before
    assert c.patch(f"/api/viewer/observations/{obs['id']}", json={"status": "retracted"}).status_code == 200
    after = c.get("/api/viewer/preview", params={"project": project}).json()["context"]
    assert "Money is Decimal" not in after  # kept, flagged, and no longer injected
    only_obs = {"q": "Money Decimal", "kinds": "observation"}
    assert c.get("/api/viewer/search", params={**only_obs, "include_inactive": "0"}).json()["items"] == []
    flagged = c.get("/api/viewer/search", params=only_obs).json()["items"]  # the viewer shows them, flagged
    assert [(it["id"], it["status"]) for it in flagged] == [(obs["id"], "retracted")]

    assert c.delete(f"/api/viewer/observations/{obs['id']}").json()["deleted"] == 1
    assert c.get(f"/api/viewer/observations/{obs['id']}").status_code == 404
    assert c.delete(f"/api/viewer/observations/{obs['id']}").status_code == 404
    left = c.get("/api/viewer/feed").json()["items"]
    assert obs["id"] not in [it["id"] for it in left if it["kind"] == "observation"]


def test_preview_is_exactly_what_session_start_injects(live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    say(home, "From now on we prefer pnpm over npm for every install in this repo.")
    home.flush()
    project = c.get("/api/viewer/meta").json()["projects"][0]["project"]
    preview = c.get("/api/viewer/preview", params={"project": project}).json()
    start = load_fixture(SESSION_START, cwd=str(home.project))
    out = home.hook("SessionStart", start)
    injected = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert unclocked(preview["context"]) == unclocked(injected) and "pnpm" in injected  # (runs may straddle a minute)
    assert preview["chars"] == len(injected) and preview["tokens"] == (len(injected) + 3) // 4


def test_settings_saved_validated_and_live(live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    form = {s["name"]: s for s in c.get("/api/viewer/settings").json()["settings"]}
    assert form["context_observations"]["value"] == 50 and form["context_observations"]["help"]
    bad = c.put("/api/viewer/settings", json={"changes": {"context_observations": -1, "file_context": "maybe"}})
    assert bad.status_code == 400
    assert set(bad.json()["problems"]) == {"context_observations", "file_context"}
    assert saved(home).get("context_observations", 50) == 50  # nothing saved
    for text in ("Always run ruff before committing.", "Never push straight to main.", "Prefer httpx to requests."):
        say(home, text, session=f"s-{text[:5]}")
    home.flush()
    project = c.get("/api/viewer/meta").json()["projects"][0]["project"]
    rows = c.get("/api/viewer/preview", params={"project": project}).json()["context"].count("⚖️")
    ok = c.put("/api/viewer/settings", json={"changes": {"context_rules": 1, "provider": "rules"}})
    assert ok.status_code == 200, ok.text
    assert ok.json()["restart_needed"] == ["provider"]
    assert saved(home)["context_rules"] == 1
    # Effective at once: the next preview (and SessionStart) lists one standing rule, no restart.
    fewer = c.get("/api/viewer/preview", params={"project": project}).json()["context"].count("⚖️")
    assert rows >= 3 and fewer < rows
    assert {s["name"]: s for s in ok.json()["settings"]}["context_rules"]["value"] == 1


def test_stats_and_meta(live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    say(home, "We always squash-merge pull requests here.")
    home.flush()
    st = c.get("/api/viewer/stats", params={"days": 7}).json()
    assert len(st["days"]) == 7 and st["days"][-1]["total"] >= 1
    assert st["totals"]["observations"] >= 1 and st["db_bytes"] > 0 and st["spool_depth"] == 0
    assert st["observer"]["provider"] == "rules" and "embedding" in st
    today = time.strftime("%Y-%m-%d", time.gmtime())
    ranged = c.get("/api/viewer/stats", params={"from": "2025-12-01", "to": today}).json()
    assert ranged["from"] == "2025-12-01" and ranged["to"] == today and ranged["days"][0]["day"] == "2025-12-01"
    assert len(ranged["days"]) > 360 and ranged["first_day"] == today
    assert sum(d["total"] for d in ranged["days"]) == st["totals"]["observations"]
    meta = c.get("/api/viewer/meta").json()
    assert "decision" in [t["id"] for t in meta["types"]] and meta["projects"]
    for bad in ("feed?limit=0", "feed?limit=abc", "feed?before=nope", "feed?kinds=users", "feed?since=yesterday",
                "stats?days=0", "stats?from=2026-02-30", "stats?from=2026-03-02&to=2026-03-01",
                "stats?from=1990-01-01&to=2026-01-01", "search", "search?q=x&sort=best",
                "observations/0", "observations/abc", "sessions/x", "preview"):
        r = c.get(f"/api/viewer/{bad}")
        assert r.status_code in (400, 404) and "error" in r.json(), bad


@pytest.mark.parametrize("q", ['"unbalanced', "a AND (b", "NEAR(x y)", "*", "-x", "数据库", "x" * 10_000, "\u202e"])
def test_hostile_search_strings(live: tuple[Home, httpx.Client], q: str) -> None:
    _home, c = live
    r = c.get("/api/viewer/search", params={"q": q})
    assert r.status_code in (200, 400) and isinstance(r.json().get("items", []), list)


def read_events(c: httpx.Client, out: queue.Queue[tuple[str, str, Any]], stop: threading.Event,
                headers: dict[str, str] | None = None) -> None:
    try:
        with c.stream("GET", "/api/viewer/stream", headers=headers or {}, timeout=None) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            ev: dict[str, str] = {}
            for line in r.iter_lines():
                if stop.is_set():
                    return
                if not line:
                    if "event" in ev:
                        out.put((ev["event"], ev.get("id", ""), json.loads(ev.get("data") or "null")))
                    ev = {}
                elif not line.startswith(":"):
                    k, _sep, v = line.partition(":")
                    ev[k] = v[1:] if v.startswith(" ") else v
    except httpx.HTTPError:
        if not stop.is_set():
            raise  # the stream broke while the test still reads it
        # told to stop, then the worker went away mid-stream (the fixture's teardown): not an error


def wait_for(out: queue.Queue[tuple[str, str, Any]], pred: Any, timeout: float = 20) -> list[tuple[str, str, Any]]:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            ev = out.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(ev)
        if pred(ev):
            return seen
    raise AssertionError(f"not seen in {timeout}s; got {[e[0] for e in seen]}")


def test_stream_sends_new_items_status_and_resumes(live: tuple[Home, httpx.Client]) -> None:
    home, _c = live
    out: queue.Queue[tuple[str, str, Any]] = queue.Queue()
    stop = threading.Event()
    t = threading.Thread(target=read_events, args=(client(home), out, stop), daemon=True)
    t.start()
    wait_for(out, lambda e: e[0] == "ready")
    wait_for(out, lambda e: e[0] == "status")
    say(home, "Never commit generated protobuf files to this repository.")
    seen = wait_for(out, lambda e: e[0] == "item" and e[2]["kind"] == "observation")
    got = [e for e in seen if e[0] == "item"]
    assert got[0][2]["kind"] == "prompt" and got[0][2]["title"].startswith("Never commit generated")
    obs_event = got[-1]
    assert obs_event[2]["type"] == "decision" and obs_event[1]  # an id to resume from
    stop.set()

    # A reconnect from the prompt's id gets what came after it, and only that.
    out2: queue.Queue[tuple[str, str, Any]] = queue.Queue()
    stop2 = threading.Event()
    threading.Thread(target=read_events, args=(client(home), out2, stop2, {"Last-Event-ID": got[0][1]}),
                     daemon=True).start()
    again = [e for e in wait_for(out2, lambda e: e[0] == "item" and e[2]["kind"] == "observation") if e[0] == "item"]
    assert [e[2]["key"] for e in again] == [e[2]["key"] for e in got[1:]]
    stop2.set()


def test_search_says_when_there_is_nothing_to_search_and_errors_speak_plainly(
        live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    say(home, "We always squash-merge pull requests here.")
    home.flush()
    for q in ("🙂", "*", "-", "()"):
        body = c.get("/api/viewer/search", params={"q": q}).json()
        assert body["no_words"] is True and body["items"] == [] and body["terms"] == [], q
    body = c.get("/api/viewer/search", params={"q": "squash merges"}).json()
    assert body["no_words"] is False and body["terms"] == ["squash", "merges"] and body["items"]
    assert body["total"] == len(body["items"]) and body["more"] is False and body["sort"] == "relevance"
    ats = [it["at"] for it in c.get("/api/viewer/search", params={"q": "squash", "sort": "oldest"}).json()["items"]]
    assert ats == sorted(ats)
    ats = [it["at"] for it in c.get("/api/viewer/search", params={"q": "squash", "sort": "newest"}).json()["items"]]
    assert ats == sorted(ats, reverse=True)
    assert c.get("/api/viewer/search", params={"q": "squash " + "x" * 10_000}).status_code == 200  # its head is used
    r = c.get("/api/viewer/search", params={"q": "x" * 20_000})
    assert r.status_code == 400 and "the search text is too long" in r.json()["error"]
    assert " q " not in r.json()["error"]
    for route in ("feed", "search"):
        r = c.get(f"/api/viewer/{route}", params={"q": "squash", "since": "2026-03-10", "until": "2026-03-01"})
        assert r.status_code == 400 and r.json()["error"].startswith("the From date is after the To date")
    r = c.get("/api/viewer/feed", params={"tz": "Mars/Olympus"})
    assert r.status_code == 400 and "time zone" in r.json()["error"]
    counts = c.get("/api/viewer/feed", params={"tz": "Europe/Paris"}).json()["counts"]
    assert sum(counts["days"].values()) >= 1 and counts["sessions"]


def test_stats_per_project_delete_at_once_and_mode_choices(live: tuple[Home, httpx.Client]) -> None:
    home, c = live
    say(home, "We always squash-merge pull requests here.")
    home.flush()
    project = c.get("/api/viewer/meta").json()["projects"][0]["project"]
    mine = c.get("/api/viewer/stats", params={"project": project}).json()
    other = c.get("/api/viewer/stats", params={"project": "no-such-project"}).json()
    assert mine["totals"]["observations"] >= 1 and other["totals"]["observations"] == 0
    assert other["totals"]["sessions"] == 0 and other["savings"]["index_tokens"] == 0
    assert set(mine["savings"]) >= {"work_tokens", "index_tokens", "full_tokens", "observer_tokens", "saved_pct"}

    oid = next(it["id"] for it in c.get("/api/viewer/feed").json()["items"] if it["kind"] == "observation")
    t0 = time.monotonic()
    r = c.delete(f"/api/viewer/observations/{oid}")
    assert r.status_code == 200 and r.json()["deleted"] == 1 and time.monotonic() - t0 < 2
    assert r.json()["compaction"]["state"] in ("waiting", "running")
    deadline = time.monotonic() + 30
    while c.get("/api/viewer/compaction").json()["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.1)

    settings = c.get("/api/viewer/settings").json()
    mode = next(s for s in settings["settings"] if s["name"] == "mode")
    assert mode["kind"] == "choice" and "code" in mode["choices"] and "code-chill" in mode["choices"]
    assert settings["sections"][0]["id"] == "observer"
    origin = {"Origin": f"http://127.0.0.1:{home.port}"}
    r = c.put("/api/viewer/settings", json={"changes": {"mode": "nope"}}, headers=origin)
    assert r.status_code == 400 and "mode" in r.json()["problems"] and "nothing was saved" not in r.json()["error"]
    assert c.put("/api/viewer/settings", json={"changes": {"mode": "code-chill"}}, headers=origin).status_code == 200


def test_search_counts_and_pages_one_ranking_to_the_end(live: tuple[Home, httpx.Client]) -> None:
    from tests.support.search_rows import Rows

    home, c = live
    rows = Rows(home.paths.db)
    now = time.time()
    for i in range(250):  # each names its own identifier: 250 memories, no near-duplicates, all tied in BM25
        rows.obs(f"Zebra striping rule for grid_{i}_cell", at=now - i * 60)
    rows.conn.commit()
    seen: list[int] = []
    offset: int | None = 0
    while offset is not None:  # pages of one ranking: none skipped, none repeated
        page = c.get("/api/viewer/search", params={"q": "zebra striping", "limit": 100, "offset": offset}).json()
        assert page["total"] == 250 and page["more"] is False
        seen += [it["id"] for it in page["items"]]
        offset = page["next_offset"]
    assert len(seen) == len(set(seen)) == 250
    newest = c.get("/api/viewer/search", params={"q": "zebra striping", "sort": "newest"}).json()
    assert newest["total"] == 250 and [it["title"] for it in newest["items"][:2]] == [
        "Zebra striping rule for grid_0_cell", "Zebra striping rule for grid_1_cell"]
    for i in range(250, 450):  # past the first depth read (400 hits): a lower bound, said so
        rows.obs(f"Zebra striping rule for grid_{i}_cell", at=now - i * 60)
    rows.conn.close()
    first = c.get("/api/viewer/search", params={"q": "zebra striping"}).json()
    assert first["more"] is True and first["total"] == 400
