"""Where the worker runs a keyword search: on the event loop when the request is alone, on the
search threads when another request is in flight (the app exactly as the worker builds it)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kenning.paths import Paths, read_token
from kenning.search import service
from tests.security import build_app
from tests.support.search_rows import Rows

PORT = 37999


@pytest.fixture()
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, list[str]]:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    Path(paths.settings).write_text(json.dumps({"embedding_backend": "none"}))  # keyword search only
    rows = Rows(paths.db)
    for i in range(5):
        rows.obs(f"timezone bug number {i} in invoice dates")
    rows.conn.close()
    threads: list[str] = []
    real = service.search

    def recording(*args: Any, **kw: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args, **kw)

    monkeypatch.setattr(service, "search", recording)
    asgi, state, conn = build_app(paths.root, PORT)
    yield asgi, state, threads
    conn.close()


def client(asgi: Any, paths: Paths) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url=f"http://127.0.0.1:{PORT}",
                             headers={"Authorization": f"Bearer {read_token(paths)}"}, timeout=20)


def test_alone_inline_with_company_on_a_search_thread(app: tuple[Any, Any, list[str]]) -> None:
    asgi, state, threads = app
    loop_thread: list[str] = []

    async def main() -> None:
        loop_thread.append(threading.current_thread().name)
        async with client(asgi, state.paths) as c:
            first = await c.get("/api/search", params={"query": "timezone"})  # opens the pool's connection
            alone = await c.get("/api/search", params={"query": "timezone"})
            assert alone.status_code == 200 and alone.json()["count"] == 5
            assert alone.json()["results"] == first.json()["results"]
            assert state.requests.active == 0  # every request that ended was counted out

            # A batch request whose body has not finished arriving stays in flight meanwhile.
            release = asyncio.Event()

            async def slow_body() -> AsyncIterator[bytes]:
                yield b'{"ids": ['
                await release.wait()
                yield b"1]}"

            pending = asyncio.create_task(c.post("/api/observations/batch", content=slow_body(),
                                                 headers={"Content-Type": "application/json"}))
            for _ in range(100):
                if state.requests.active:
                    break
                await asyncio.sleep(0.01)
            assert state.requests.active == 1
            company = await c.get("/api/search", params={"query": "timezone"})
            assert company.json()["results"] == alone.json()["results"]
            release.set()
            batch = await pending
            assert batch.status_code == 200 and batch.json()["count"] == 1
            assert state.requests.active == 0

    asyncio.run(main())
    # The first search had no idle connection (an open may wait on the file's locks): on a thread.
    assert threads[0].startswith("kenning-search")
    assert threads[1] == loop_thread[0]  # alone, a connection idle: the event loop's own thread, no hop
    assert threads[2].startswith("kenning-search")  # another request waited for the loop


def test_a_lock_met_inline_sends_the_search_to_a_thread(app: tuple[Any, Any, list[str]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    asgi, state, threads = app
    loop = threading.current_thread().name  # asyncio.run runs the loop on this thread
    inner = service.search  # the recording wrapper
    timeouts: list[int] = []

    def locked_on_the_loop(conn: Any, *args: Any, **kw: Any) -> Any:
        timeouts.append(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        if threading.current_thread().name == loop:
            raise sqlite3.OperationalError("database is locked")
        return inner(conn, *args, **kw)

    monkeypatch.setattr(service, "search", locked_on_the_loop)

    async def main() -> list[httpx.Response]:
        async with client(asgi, state.paths) as c:
            return [await c.get("/api/search", params={"query": "timezone"}) for _ in range(3)]

    answers = asyncio.run(main())
    assert [r.status_code for r in answers] == [200, 200, 200]
    assert all(r.json()["count"] == 5 for r in answers)
    # Inline tries never wait on a lock (busy timeout 0); the thread's run waits as always.
    assert timeouts[0] > 0 and timeouts[1::2] == [0, 0] and all(t > 0 for t in timeouts[2::2])
    assert all(t.startswith("kenning-search") for t in threads)


def test_concurrent_searches_all_answer_alike(app: tuple[Any, Any, list[str]]) -> None:
    asgi, state, threads = app

    async def main() -> list[httpx.Response]:
        async with client(asgi, state.paths) as c:
            return list(await asyncio.gather(*(c.get("/api/search", params={"query": "invoice dates"})
                                               for _ in range(12))))

    answers = asyncio.run(main())
    assert all(r.status_code == 200 for r in answers)
    assert len({json.dumps(r.json()["results"]) for r in answers}) == 1 and answers[0].json()["count"] == 5
    assert len(threads) == 12 and state.requests.active == 0
