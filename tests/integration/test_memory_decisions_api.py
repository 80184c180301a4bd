"""Pin, unpin and unarchive over HTTP on a real worker and through the real CLI: validated input,
clear 4xx errors, and the session-start context (/api/context, `kenning context`) following."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kenning.paths import read_token
from kenning.store import supersede
from kenning.store.repo import transaction
from tests.conftest import Home
from tests.support.viewer import RepoRows

DAY = 86400.0
A, B = "/src/client-a/api", "/src/client-b/api"  # two repositories, one folder name


@pytest.fixture
def live(home: Home) -> Iterator[tuple[Home, httpx.Client, dict[str, int]]]:
    home.paths.ensure()
    now = time.time()
    rows = RepoRows(home.paths.db)
    ids = {
        "gotcha": rows.obs("The integration tests need the fake S3 endpoint on port 9000", project=A, at=now - DAY),
        "rule": rows.obs("We always use pnpm, never npm", type="decision", project=A, at=now - 2 * DAY),
        "old_log": rows.obs("Explored src/ledger/ for the rounding helper", project=A, at=now - 40 * DAY),
        "fresh_log": rows.obs("Explored src/api/ for the router", project=A, at=now - DAY),
        "other": rows.obs("Client B deploys on Fridays only", type="discovery", project=B, at=now - DAY),
        "npm": rows.obs("We use npm for package installs", type="decision", project=A, at=now - 5 * DAY),
    }
    ids["pnpm"] = rows.obs("Use pnpm, not npm", type="decision", project=A, session="s2", at=now - 4 * DAY)
    with transaction(rows.conn):
        supersede.automatic(rows.conn, [ids["pnpm"]])
    rows.conn.close()
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    with httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=30,
                      headers={"Authorization": f"Bearer {read_token(home.paths)}"}) as c:
        yield home, c, ids


def context(c: httpx.Client, project: str = A) -> str:
    r = c.get("/api/context", params={"project": project})
    assert r.status_code == 200, r.text
    return str(r.json()["context"])


def rules(text: str) -> str:
    head = "## Standing rules and preferences"
    return text.split(head, 1)[1].split("\n## ", 1)[0] if head in text else ""


def post(c: httpx.Client, action: str, body: Any) -> tuple[int, Any]:
    r = c.post(f"/api/observations/{action}", json=body)
    return r.status_code, r.json()


def test_pin_unpin_over_http_change_what_sessions_are_given(live: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    home, c, ids = live
    assert "fake S3 endpoint" not in rules(context(c))
    status, body = post(c, "pin", {"id": ids["gotcha"], "project": A})
    assert status == 200 and body["layer"] == "rule" and body["previous"] == "key", body
    assert "fake S3 endpoint" in rules(context(c))
    # The viewer's Rules view lists it, the newest version of each rule only (npm was superseded).
    feed = c.get("/api/viewer/feed", params={"project": A, "memory": "rule"}).json()["items"]
    assert [it["id"] for it in feed] == [ids["gotcha"], ids["rule"], ids["pnpm"]] and feed[0]["pinned"]
    status, body = post(c, "pin", {"id": ids["gotcha"]})
    assert status == 409 and "already a standing rule" in body["error"]

    status, body = post(c, "unpin", {"id": ids["rule"]})
    assert status == 200 and body["layer"] == "key"
    text = context(c)
    assert "pnpm, never npm" not in rules(text) and "pnpm, never npm" in text  # a key memory now
    status, body = post(c, "unpin", {"id": ids["rule"]})
    assert status == 409 and "not a standing rule" in body["error"]

    # Errors a client can act on: no such id, another project, a superseded one, bad bodies, no token.
    assert post(c, "pin", {"id": 999_999})[0] == 404
    status, body = post(c, "pin", {"id": ids["other"], "project": A})
    assert status == 400 and "another project" in body["error"]
    status, body = post(c, "pin", {"id": ids["npm"]})
    assert status == 409 and "superseded: restore it first" in body["error"]
    for bad in ({}, {"id": "3"}, {"id": True}, {"id": -1}, {"id": 3, "x": 1}, [3], {"id": 3, "project": ""}):
        status, body = post(c, "pin", bad)
        assert status == 400 and body["error"], bad
    assert c.post("/api/observations/pin", content=b"{not json").status_code == 400
    assert httpx.post(f"http://127.0.0.1:{home.port}/api/observations/pin", json={"id": ids["gotcha"]}).status_code \
        == 401
    # The client-B memory of the same folder name never shows up in client A's context.
    assert "Fridays" not in context(c) and "Fridays" in context(c, B)


def test_unarchive_and_the_memory_views_over_http(live: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    _home, c, ids = live
    archive = c.get("/api/viewer/feed", params={"memory": "archived", "tz": "UTC"}).json()
    assert [it["id"] for it in archive["items"]] == [ids["old_log"]] and archive["items"][0]["archived"]
    assert sum(archive["counts"]["days"].values()) == 1
    assert "rounding helper" not in context(c)
    status, body = post(c, "unarchive", {"id": ids["fresh_log"]})
    assert status == 409 and "not in the archive yet" in body["error"]
    status, body = post(c, "unarchive", {"id": ids["old_log"], "project": A})
    assert status == 200 and body["layer"] == "key"
    assert "rounding helper" in context(c)
    assert c.get("/api/viewer/feed", params={"memory": "archived"}).json()["items"] == []
    # Superseded ones: hidden from the default feed, listed by their view, with what replaced them.
    every = [it["id"] for it in c.get("/api/viewer/feed", params={"project": A}).json()["items"]]
    assert ids["npm"] not in every and ids["pnpm"] in every
    gone = c.get("/api/viewer/feed", params={"memory": "superseded"}).json()["items"]
    assert [(it["id"], it["superseded_by"]) for it in gone] == [(ids["npm"], ids["pnpm"])]
    detail = c.get(f"/api/viewer/observations/{ids['npm']}").json()["memory"]
    assert detail["superseded_by"]["id"] == ids["pnpm"] and detail["superseded_by"]["shared"]
    newer = c.get(f"/api/viewer/observations/{ids['pnpm']}").json()["memory"]
    assert [it["id"] for it in newer["replaced"]] == [ids["npm"]]
    r = c.get("/api/viewer/feed", params={"memory": "pinned"})
    assert r.status_code == 400 and "memory view" in r.json()["error"]
    # The search honours the view too: superseded ones only when asked for.
    hits = c.get("/api/viewer/search", params={"q": "npm package installs"}).json()["items"]
    assert ids["npm"] not in [it["id"] for it in hits]
    hits = c.get("/api/viewer/search", params={"q": "npm package installs", "memory": "superseded"}).json()["items"]
    assert [it["id"] for it in hits] == [ids["npm"]]


def test_pin_unpin_unarchive_from_the_cli(live: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    home, _c, ids = live
    r = home.kenning("pin", str(ids["gotcha"]))
    assert r.returncode == 0 and f"#{ids['gotcha']} pinned" in r.stdout, r.stdout + r.stderr
    out = home.kenning("context", "--project", A).stdout
    assert "fake S3 endpoint" in rules(out)
    r = home.kenning("pin", str(ids["gotcha"]), str(ids["other"]), "--project", A)
    assert r.returncode == 1 and "already a standing rule" in r.stderr and "another project" in r.stderr
    r = home.kenning("unpin", str(ids["gotcha"]))
    assert r.returncode == 0 and "unpinned" in r.stdout
    assert "fake S3 endpoint" not in rules(home.kenning("context", "--project", A).stdout)
    r = home.kenning("unarchive", str(ids["old_log"]), "--json")
    assert r.returncode == 0 and '"layer": "key"' in r.stdout
    r = home.kenning("unpin", "424242")
    assert r.returncode == 1 and "no observation #424242" in r.stderr
