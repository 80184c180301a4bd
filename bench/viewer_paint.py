"""The web viewer with 100k observations: first paint, first feed page, and the feed's API calls.

    .venv/bin/python bench/viewer_paint.py [--quick] [--write] [--size N] [--loads N] [--requests N] [--keep]

A data dir is filled through the real migrations (``common.populate``: 80% of the observations
in one project, 20% in another, sessions of ~20 with a summary each, ~5% superseded or
retracted) plus one prompt per four observations, and a real worker is started on it (rules
observer, no embedding model: neither is on the paths measured). Then:

1. **Page loads** in headless Chromium (Debian's /usr/bin/chromium through Playwright), each in
   a new browser context (empty cache, no service worker), with the token in the URL fragment
   as ``kenning open`` gives it: ``first-contentful-paint`` from the Paint Timing API and the
   ``kenning:feed-rendered`` mark app.js sets when the first feed page is in the DOM (after the
   ``meta`` and ``feed`` calls answered), both from navigation start; also DOMContentLoaded
   and the time the ``feed`` response ended (Resource Timing). Two loads are run first and
   not counted (cold SQLite cache of the worker).
2. **Feed API calls** over one keep-alive HTTP/1.1 connection (``http.client``), each shape
   ``--requests`` times, interleaved round by round: ``meta``, the first feed page, ``before``
   pages near the top and deep in the history (cursors from a walk of the feed), and the same
   with filters (project, type, concept, project + type, the last 7 days); ``GET /api/health``
   is the baseline (the worker's cheapest route through the same guard).

Targets (the issue): first paint under 1 s with 100k observations; the feed's API calls under
50 ms p95, with the day and session counts the grouped feed asks for (``tz``) too.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    REPO,
    Install,
    command_line,
    fmt,
    load_avg,
    md_table,
    populate,
    project_key,
    run_header,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)

from kenning.paths import read_token

PAINT_TARGET_MS = 1000.0
API_TARGET_P95_MS = 50.0
PROJECT, OTHER = "bench-project", "other-project"
MARK = "kenning:feed-rendered"
TZ = "Europe/Paris"


# ------------------------------------------------------------------------------ data

def add_prompts(db: str, every: int = 4) -> int:
    """One prompt per ``every`` observations of each session, just before its observation."""
    conn = sqlite3.connect(db, isolation_level=None)
    rows = conn.execute("SELECT session_id, created_at FROM observations ORDER BY session_id, id").fetchall()
    out: list[tuple[Any, ...]] = []
    seen: dict[int, int] = {}
    for sid, at in rows:
        k = seen.get(sid, 0)
        seen[sid] = k + 1
        if k % every == 0:
            out.append((sid, k // every + 1, f"Please look at the next step of session {sid}, part {k // every + 1}",
                        at - 20))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                     "VALUES (?, ?, ?, ?)", out)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return len(out)


# ------------------------------------------------------------------------- page loads

LOAD_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const fcp = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
  const mark = performance.getEntriesByName('MARK')[0];
  const feed = performance.getEntriesByType('resource').find(e => e.name.includes('/api/viewer/feed'));
  const meta = performance.getEntriesByType('resource').find(e => e.name.includes('/api/viewer/meta'));
  return {fcp: fcp ? fcp.startTime : null, rendered: mark ? mark.startTime : null,
          dcl: nav ? nav.domContentLoadedEventEnd : null, feed_end: feed ? feed.responseEnd : null,
          feed_ms: feed ? feed.responseEnd - feed.requestStart : null,
          meta_ms: meta ? meta.responseEnd - meta.requestStart : null,
          rows: document.querySelectorAll('#feed article.item').length};
}""".replace("MARK", MARK)


def page_loads(inst: Install, loads: int, warmup: int = 2) -> dict[str, Any]:
    from tests.support.browser import ConsoleErrors, chromium

    url = f"http://127.0.0.1:{inst.port}/#token={read_token(inst.paths)}"
    samples: dict[str, list[float]] = {"fcp": [], "rendered": [], "dcl": [], "feed_end": [], "feed_ms": [],
                                       "meta_ms": []}
    errors: list[str] = []
    rows = 0
    with chromium() as browser:
        for i in range(warmup + loads):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            console = ConsoleErrors(page)
            page.goto(url)
            page.wait_for_selector("#feed article.item", timeout=30_000)
            deadline = time.monotonic() + 10
            got = page.evaluate(LOAD_JS)
            while (got["fcp"] is None or got["rendered"] is None) and time.monotonic() < deadline:
                page.wait_for_timeout(50)
                got = page.evaluate(LOAD_JS)
            errors += console.errors
            context.close()
            if i < warmup:
                continue
            rows = got["rows"]
            for k in samples:
                if got[k] is not None:
                    samples[k].append(float(got[k]))
    return {"samples": samples, "errors": errors, "rows": rows}


def stats_of(values_ms: list[float]) -> dict[str, float]:
    return summary_ms([int(v * 1e6) for v in values_ms])


# --------------------------------------------------------------------------- API calls

class Client:
    """HTTP/1.1 to the worker with the token: one keep-alive connection (what a browser does), or
    with ``fresh`` a new connection per request (what the hooks and the CLI do)."""

    def __init__(self, inst: Install, fresh: bool = False) -> None:
        self.port = inst.port
        self.fresh = fresh
        self.headers = {"Authorization": f"Bearer {read_token(inst.paths)}", "Host": f"127.0.0.1:{inst.port}",
                        "Accept": "application/json"}
        if fresh:
            self.headers["Connection"] = "close"
        self.conn = http.client.HTTPConnection("127.0.0.1", inst.port, timeout=30)

    def get(self, path: str) -> tuple[int, Any, int]:
        """(status, parsed body, elapsed ns)."""
        t0 = time.perf_counter_ns()
        if self.fresh:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request("GET", path, headers=self.headers)
            res = conn.getresponse()
            body = res.read()
            conn.close()
            return res.status, json.loads(body or b"null"), time.perf_counter_ns() - t0
        try:
            self.conn.request("GET", path, headers=self.headers)
            res = self.conn.getresponse()
            body = res.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.conn.request("GET", path, headers=self.headers)
            res = self.conn.getresponse()
            body = res.read()
        dt = time.perf_counter_ns() - t0
        return res.status, json.loads(body or b"null"), dt


def feed_path(**params: Any) -> str:
    return "/api/viewer/feed?" + urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)


def cursors(client: Client, pages: int, **params: Any) -> list[str]:
    """The ``next`` cursors of the first ``pages`` pages (limit 50), walking the feed."""
    out: list[str] = []
    before = None
    for _ in range(pages):
        status, body, _dt = client.get(feed_path(limit=50, before=before, **params))
        assert status == 200, body
        before = body["next"]
        if not before:
            break
        out.append(before)
    return out


def deep_cursor(db: str, depth: int) -> str:
    """A cursor ``depth`` observations back (what the next link says after scrolling that far)."""
    from kenning.viewer.items import RANK, Cursor

    conn = sqlite3.connect(db)
    at, oid = conn.execute("SELECT created_at, id FROM observations ORDER BY created_at DESC, id DESC "
                           "LIMIT 1 OFFSET ?", (depth,)).fetchone()
    conn.close()
    return Cursor(at, RANK["observation"], oid).encode()


def api_calls(inst: Install, n: int, rng: random.Random) -> list[tuple[str, dict[str, float], dict[str, float], int]]:
    """Per shape: (name, keep-alive stats, new-connection stats, items in the answer)."""
    client = Client(inst)
    fresh = Client(inst, fresh=True)
    week = time.time() - 7 * 86400
    shallow = cursors(client, 10)
    shallow_typed = cursors(client, 10, type="bugfix")
    n_obs = sqlite3.connect(inst.paths.db).execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    deep = [deep_cursor(inst.paths.db, int(n_obs * f)) for f in (0.25, 0.5, 0.75, 0.95)]
    key = project_key(inst)  # the feed filters by a project's key (its checkout's path), not its name
    shapes: list[tuple[str, Any]] = [
        ("GET /api/health (baseline)", lambda: "/api/health"),
        ("meta", lambda: "/api/viewer/meta"),
        ("feed, first page", lambda: feed_path(limit=50)),
        ("feed, `before` pages 2-11", lambda: feed_path(limit=50, before=rng.choice(shallow))),
        ("feed, `before` 25-95% deep", lambda: feed_path(limit=50, before=rng.choice(deep))),
        (f"feed, project={PROJECT}", lambda: feed_path(limit=50, project=key)),
        ("feed, type=bugfix", lambda: feed_path(limit=50, type="bugfix")),
        ("feed, type=bugfix, `before` pages 2-11", lambda: feed_path(limit=50, type="bugfix",
                                                                       before=rng.choice(shallow_typed))),
        ("feed, concept=gotcha", lambda: feed_path(limit=50, concept="gotcha")),
        (f"feed, project={OTHER} + type=decision", lambda: feed_path(limit=50, project=OTHER, type="decision")),
        ("feed, last 7 days", lambda: feed_path(limit=50, since=int(week))),
        # What the page asks since the feed is grouped: the same pages plus each day's and
        # session's count under the same filters (`tz` = the browser's time zone).
        ("feed + counts, first page", lambda: feed_path(limit=50, tz=TZ)),
        ("feed + counts, `before` 25-95% deep", lambda: feed_path(limit=50, before=rng.choice(deep), tz=TZ)),
        (f"feed + counts, project={PROJECT}", lambda: feed_path(limit=50, project=key, tz=TZ)),
        ("feed + counts, type=bugfix", lambda: feed_path(limit=50, type="bugfix", tz=TZ)),
        ("feed + counts, concept=gotcha", lambda: feed_path(limit=50, concept="gotcha", tz=TZ)),
        # The memory views (standing rules, key memories, the archive, superseded ones).
        ("feed + counts, memory=rule", lambda: feed_path(limit=50, memory="rule", tz=TZ)),
        (f"feed + counts, project={PROJECT} + memory=rule", lambda: feed_path(limit=50, project=key,
                                                                               memory="rule", tz=TZ)),
        (f"feed + counts, project={PROJECT} + memory=key", lambda: feed_path(limit=50, project=key,
                                                                              memory="key", tz=TZ)),
        ("feed + counts, memory=archived", lambda: feed_path(limit=50, memory="archived", tz=TZ)),
        ("feed + counts, memory=superseded", lambda: feed_path(limit=50, memory="superseded", tz=TZ)),
        (f"feed + counts, project={PROJECT} + memory=superseded", lambda: feed_path(limit=50, project=key,
                                                                                     memory="superseded", tz=TZ)),
    ]
    kept: dict[str, list[int]] = {name: [] for name, _ in shapes}
    new: dict[str, list[int]] = {name: [] for name, _ in shapes}
    items: dict[str, int] = {name: 0 for name, _ in shapes}
    for _ in range(3):  # warm-up round
        for _name, make in shapes:
            client.get(make())
    for _ in range(n):
        for name, make in shapes:
            for c, into in ((client, kept), (fresh, new)):
                status, body, dt = c.get(make())
                if status != 200:
                    raise RuntimeError(f"{name}: {status} {body}")
                into[name].append(dt)
                if isinstance(body, dict) and "items" in body:
                    items[name] = len(body["items"])
    client.conn.close()
    return [(name, summary_ms(kept[name]), summary_ms(new[name]), items[name]) for name, _ in shapes]


# ------------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run: 10k observations, 5 loads, 30 requests")
    ap.add_argument("--size", type=int, help="observations in the database (default 100000, --quick 10000)")
    ap.add_argument("--loads", type=int, help="measured page loads (default 20, --quick 5)")
    ap.add_argument("--requests", type=int, help="requests per API call shape (default 200, --quick 30)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dir")
    args = ap.parse_args()
    size = args.size or (10_000 if args.quick else 100_000)
    loads = args.loads or (5 if args.quick else 20)
    requests = args.requests or (30 if args.quick else 200)
    started = time.monotonic()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    from tests.support.browser import missing

    why = missing()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    root = temp_root("kenning-bench-viewer-")
    inst = Install(root, project=PROJECT)
    inst.env["KENNING_PROVIDER"] = "rules"
    inst.env["KENNING_EMBEDDING_BACKEND"] = "none"
    try:
        t0 = time.monotonic()
        main_n = size * 4 // 5
        counts = populate(inst.paths.db, {project_key(inst): main_n, OTHER: size - main_n})
        counts["prompts"] = add_prompts(inst.paths.db)
        build_s = time.monotonic() - t0
        db_mb = os.path.getsize(inst.paths.db) / 1e6
        inst.start_worker()

        p("## Web viewer with 100k observations (`bench/viewer_paint.py`)\n")
        p(run_header(command_line()))
        p(f"\nData: {counts['observations']:,} observations ({main_n:,} in `{PROJECT}`, {size - main_n:,} in "
          f"`{OTHER}`), {counts['summaries']:,} session summaries, {counts['prompts']:,} prompts; database "
          f"{db_mb:,.0f} MB, built in {build_s:.0f} s. Worker: rules observer, no embedding model. "
          f"Chromium: /usr/bin/chromium (headless, Playwright), viewport 1280x900, a new context per load.")

        res = page_loads(inst, loads)
        s = res["samples"]
        rows = []
        labels = [("fcp", "first-contentful-paint"), ("rendered", f"first feed page rendered (`{MARK}` mark)"),
                  ("dcl", "DOMContentLoaded end"), ("feed_end", "`feed` response end (from navigation start)"),
                  ("meta_ms", "`meta` request → response end"), ("feed_ms", "`feed` request → response end")]
        for key, label in labels:
            st = stats_of(s[key])
            rows.append([label, st["n"], fmt(st["p50"]), fmt(st["p95"]), fmt(st["min"]), fmt(st["max"])])
        p(f"\n### Page loads ({loads} measured after 2 unmeasured; {res['rows']} rows on the first screen)\n")
        p(md_table(["milestone (ms from navigation start)", "n", "p50", "p95", "min", "max"], rows))
        if res["errors"]:
            p("\nBrowser console errors during the loads:\n\n" + "\n".join(f"- `{e}`" for e in res["errors"][:10]))

        p(f"\n### Feed API calls ({requests} each way, shapes interleaved)\n")
        p("*keep-alive*: one HTTP/1.1 connection reused, as a browser does; *new conn.*: a connection per "
          "request (`Connection: close`), as the hooks and the CLI do.\n")
        api = api_calls(inst, requests, random.Random(5))
        arows = []
        verdicts = {"kept": True, "new": True}
        for name, kept, new, n_items in api:
            baseline = name.startswith("GET /api/health")
            ok_kept, ok_new = kept["p95"] < API_TARGET_P95_MS, new["p95"] < API_TARGET_P95_MS
            if not baseline:
                verdicts["kept"] = verdicts["kept"] and ok_kept
                verdicts["new"] = verdicts["new"] and ok_new
            arows.append([name, n_items if not baseline and name != "meta" else "–",
                          fmt(kept["p50"], 2), fmt(kept["p95"], 2), fmt(new["p50"], 2), fmt(new["p95"], 2),
                          fmt(new["p99"], 2), fmt(new["max"], 2),
                          "–" if baseline else f"{verdict(ok_kept)} / {verdict(ok_new)}"])
        p(md_table(["call", "items", "keep-alive p50 ms", "keep-alive p95 ms", "new conn. p50 ms",
                    "new conn. p95 ms", "new conn. p99 ms", "new conn. max ms",
                    f"p95 < {API_TARGET_P95_MS:.0f} ms (keep-alive / new)"], arows))

        fcp, rendered = stats_of(s["fcp"]), stats_of(s["rendered"])
        p("\n### Targets\n")
        p(md_table(["target", "measured", "verdict"], [
            [f"first paint < {PAINT_TARGET_MS:.0f} ms at {size:,} observations (p95 of FCP)",
             f"p50 {fmt(fcp['p50'])} ms, p95 {fmt(fcp['p95'])} ms", verdict(fcp["p95"] < PAINT_TARGET_MS)],
            [f"first feed page on screen < {PAINT_TARGET_MS:.0f} ms (p95 of the mark)",
             f"p50 {fmt(rendered['p50'])} ms, p95 {fmt(rendered['p95'])} ms",
             verdict(rendered["p95"] < PAINT_TARGET_MS)],
            [f"feed API calls p95 < {API_TARGET_P95_MS:.0f} ms, keep-alive (every shape above)",
             f"worst p95 {fmt(max(k['p95'] for n, k, _, _ in api if not n.startswith('GET /api/health')), 2)} ms",
             verdict(verdicts["kept"])],
            [f"feed API calls p95 < {API_TARGET_P95_MS:.0f} ms, new connection per request",
             f"worst p95 {fmt(max(f['p95'] for n, _, f, _ in api if not n.startswith('GET /api/health')), 2)} ms",
             verdict(verdicts["new"])],
        ]))
        p("\nHow to read this: first-contentful-paint is the static shell (header, tabs, filters) and does "
          "not wait for data; the mark is the number a user feels, a page of 50 rows from the 100k in the DOM "
          "after `meta` and `feed` answered. The feed pages by keyset cursor (`before`), so a page deep in the "
          "history costs what the first one does. The baseline row is the worker's cheapest route through the "
          "same token guard and HTTP stack: the difference is the feed's own cost. Keep-alive and new "
          "connections cost the same because the worker sets TCP_NODELAY on its listening socket (accepted "
          "sockets inherit it on Linux); before that, every response on a reused connection waited ~40 ms "
          "for the client's delayed ACK (Nagle), the baseline included.")
        p(f"\nLoad average at the end {load_avg()}; wall time of this benchmark {time.monotonic() - started:.0f} s.")
    finally:
        inst.stop_worker()
        if args.keep:
            print(f"(kept {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("viewer_paint", "\n".join(out))
        print(f"\n(section viewer_paint written to {os.path.relpath(REPO / 'BENCHMARKS.md')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
