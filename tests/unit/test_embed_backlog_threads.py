"""The embedding backlog on several threads: every row gets its own vector, the threads run at
the lowest CPU priority, a search pauses them between two layers, and a new memory is embedded
on its own, ahead of the backlog."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from kenning.paths import Paths
from kenning.search import indexer, semantic
from kenning.search.semantic import Semantic, backlog_threads
from tests.support.fake_embedder import FakeEmbedder
from tests.support.search_rows import Rows


class LayeredFake(FakeEmbedder):
    """A fake model that scales over threads: each backlog pass takes a while, with one pause point
    (a 'layer' boundary) in the middle, and says which thread ran it at what priority."""

    parallel = True
    LAYER_S = 0.03

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[tuple[int, int, int]] = []  # (native thread id, nice value, texts)

    def embed_backlog(self, texts: list[str], between: Any) -> Any:
        tid = threading.get_native_id()
        nice = os.getpriority(os.PRIO_PROCESS, tid) if sys.platform == "linux" else 0
        time.sleep(self.LAYER_S)
        between()
        time.sleep(self.LAYER_S)
        out = self.embed(texts)
        self.passes.append((tid, nice, len(texts)))
        return out


def _semantic(tmp_path: Path, n_rows: int, threads: int) -> tuple[Semantic, LayeredFake, Rows, list[int]]:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    rows = Rows(paths.db)
    ids = [rows.obs(f"note {i} about the {'car' if i % 2 else 'invoice'} widget", narrative="x" * (i % 7)) for i in
           range(n_rows)]
    emb = LayeredFake()
    sem = Semantic(paths, SimpleNamespace(embedding_threads=threads), embedder=emb)
    return sem, emb, rows, ids


def _stored(rows: Rows, model: str) -> dict[int, np.ndarray]:
    return {r[0]: np.frombuffer(r[1], dtype="<f4") for r in rows.conn.execute(
        "SELECT row_id, vector FROM embeddings WHERE kind = 'observation' AND model = ?", (model,))}


def test_backlog_threads_embed_every_row_at_the_lowest_priority(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "_cores_wanted", lambda: False)  # an idle machine
    sem, emb, rows, ids = _semantic(tmp_path, 37, threads=2)
    assert sem.threads == 2 and sem.slice_rows == semantic.BATCH * semantic.PASSES * 2
    sem.start()
    sem.poke()
    try:
        assert sem.wait_ready(30), sem.status()
    finally:
        sem.stop()
        sem.join(5)
    assert sem.status()["threads"] == 2
    stored = _stored(rows, emb.model)
    assert sorted(stored) == sorted(ids)
    texts = {i.row_id: i.text for i in indexer.missing(rows.conn, "another-model", 100)}
    for row_id, vec in stored.items():  # each row's own vector, whichever thread computed it
        assert np.array_equal(vec, FakeEmbedder().embed([texts[row_id]])[0]), row_id
    assert len({tid for tid, _, _ in emb.passes}) == 2  # both threads took passes
    assert max(n for _, _, n in emb.passes) <= semantic.BATCH
    if sys.platform == "linux":
        assert {nice for _, nice, _ in emb.passes} == {19}


def test_a_search_pauses_the_backlog_threads_between_layers(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "MAX_DEFER_S", 30.0)
    monkeypatch.setattr(semantic, "_cores_wanted", lambda: False)
    sem, emb, rows, _ids = _semantic(tmp_path, 120, threads=2)
    sem.start()
    sem.poke()
    try:
        deadline = time.monotonic() + 20
        while len(emb.passes) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert emb.passes, sem.status()
        with sem.searching():
            time.sleep(2 * LayeredFake.LAYER_S + 0.05)  # passes past their layer boundary finish
            held = len(emb.passes)
            time.sleep(0.5)
            assert len(emb.passes) == held  # the others wait at theirs while the search runs
        assert sem.wait_ready(30), sem.status()
    finally:
        sem.stop()
        sem.join(5)
    assert len(_stored(rows, emb.model)) == 120


def test_helper_threads_leave_the_cores_to_other_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # More tasks runnable than cores (a hook starting, the agent, a build): a helper takes no new
    # pass and sleeps inside the one it has; the first thread carries the backlog alone.
    wanted = threading.Event()
    monkeypatch.setattr(semantic, "_cores_wanted", wanted.is_set)
    sem, emb, rows, ids = _semantic(tmp_path, 200, threads=2)
    sem.start()
    sem.poke()
    try:
        deadline = time.monotonic() + 20
        while len({tid for tid, _, _ in emb.passes}) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        first = sem._thread.native_id
        assert len({tid for tid, _, _ in emb.passes}) == 2, emb.passes
        wanted.set()
        # The pass a helper has under way waits at its pause point until the first thread has done
        # the rest of the slice (then it takes that one's place); no helper starts another.
        time.sleep(0.5)
        n = len(emb.passes)
        time.sleep(0.5)
        later = emb.passes[n:]
        assert len(later) >= 4 and {tid for tid, _, _ in later} == {first}, later
        wanted.clear()
        assert sem.wait_ready(30), sem.status()
    finally:
        sem.stop()
        sem.join(5)
    assert len(_stored(rows, emb.model)) == len(ids)


def test_a_new_memory_is_embedded_alone_ahead_of_the_backlog(tmp_path: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    rows = Rows(paths.db)
    for i in range(30):
        rows.obs(f"old note {i}", narrative="backlog")
    emb = FakeEmbedder()
    cursor = indexer.Cursor()
    assert indexer.step(rows.conn, emb.model, emb.embed, batch=4, cursor=cursor) == 4  # the backlog has begun
    new = rows.obs("a fresh decision", narrative="just saved")
    fresh_calls: list[list[str]] = []

    def embed_fresh(texts: list[str]) -> Any:
        fresh_calls.append(texts)
        return emb.embed(texts)

    found = indexer.missing(rows.conn, emb.model, 8, cursor)
    assert [(i.row_id, i.fresh) for i in found] == [(new, True)]  # alone: no backlog rows with it
    assert indexer.step(rows.conn, emb.model, emb.embed, batch=8, cursor=cursor, embed_fresh=embed_fresh) == 1
    assert len(fresh_calls) == 1 and "a fresh decision" in fresh_calls[0][0]
    backlog = indexer.missing(rows.conn, emb.model, 8, cursor)
    assert len(backlog) == 8 and not any(i.fresh for i in backlog)
    assert indexer.step(rows.conn, emb.model, emb.embed, batch=8, cursor=cursor, embed_fresh=embed_fresh) == 8
    assert len(fresh_calls) == 1  # the backlog went to the other function


def test_thread_count_follows_the_setting_else_the_usable_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    assert backlog_threads(3) == 3
    monkeypatch.setattr(os.path, "exists", lambda p: p == "/proc/loadavg")  # as on Linux
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert backlog_threads(0) == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert backlog_threads(0) == semantic.MAX_THREADS

    def unsupported(pid: int) -> set[int]:
        raise AttributeError

    monkeypatch.setattr(os, "sched_getaffinity", unsupported, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert backlog_threads(0) == 3
    monkeypatch.setattr(os.path, "exists", lambda p: False)  # no /proc/loadavg: busy cores go unseen
    assert backlog_threads(0) == 1 and backlog_threads(2) == 2
    # A back-end that does not scale over threads keeps one, in small slices.
    sem = Semantic(Paths("/nonexistent"), SimpleNamespace(embedding_threads=4), embedder=FakeEmbedder())
    assert sem.threads == 1 and sem.slice_rows == semantic.SERIAL_BATCH
