"""Vectors: embedding rows once by content hash, the cached matrix, deletes, hybrid fusion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kenning.search import indexer, reindex
from kenning.search.config import SearchConfig
from kenning.search.service import search
from kenning.search.vectors import VectorIndex
from tests.support.fake_embedder import FakeEmbedder
from tests.support.search_rows import Rows, ids


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    return Rows(str(tmp_path / "kenning.db"))


def embed_all(rows: Rows, emb: FakeEmbedder) -> int:
    return reindex.embed_all(rows.conn, emb.model, emb.embed, batch=4)


def index(rows: Rows, emb: FakeEmbedder) -> VectorIndex:
    return VectorIndex(rows.conn.execute("PRAGMA database_list").fetchone()[2], emb.model,
                       lambda t: emb.embed([t])[0])


def test_every_kind_is_embedded_once(rows: Rows) -> None:
    rows.obs("car engine stalls", narrative="the vehicle stops")
    rows.summary("fix the invoice totals")
    rows.prompt("why is the build slow?")
    emb = FakeEmbedder()
    assert indexer.count_missing(rows.conn, emb.model) == 3
    assert embed_all(rows, emb) == 3
    assert indexer.counts(rows.conn, emb.model) == {"embedded": 3, "missing": 0}
    calls = len(emb.calls)
    assert embed_all(rows, emb) == 0 and len(emb.calls) == calls  # nothing twice
    blob, dim = rows.conn.execute("SELECT vector, dim FROM embeddings LIMIT 1").fetchone()
    assert dim == 64 and len(blob) == 64 * 4
    assert abs(np.linalg.norm(np.frombuffer(blob, dtype="<f4")) - 1) < 1e-5


def test_identical_text_reuses_the_vector(rows: Rows) -> None:
    emb = FakeEmbedder()
    rows.obs("same words here", session="s1")
    embed_all(rows, emb)
    rows.obs("same words here", session="s2")
    before = sum(len(c) for c in emb.calls)
    assert embed_all(rows, emb) == 1
    assert sum(len(c) for c in emb.calls) == before  # copied by content hash, not recomputed
    row = rows.conn.execute("SELECT COUNT(DISTINCT content_hash), COUNT(*) FROM embeddings").fetchone()
    assert tuple(row) == (1, 2)


def test_edits_and_deletes_remove_vectors(rows: Rows) -> None:
    emb = FakeEmbedder()
    a = rows.obs("car trouble")
    b = rows.obs("cash flow")
    p = rows.prompt("a prompt about cars")
    embed_all(rows, emb)
    rows.conn.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (a,))  # not a text change
    assert indexer.count_missing(rows.conn, emb.model) == 0
    rows.conn.execute("UPDATE observations SET title = 'automobile trouble' WHERE id = ?", (a,))
    assert indexer.count_missing(rows.conn, emb.model) == 1
    # what `kenning forget` does: delete the observation, blank the prompt's text
    rows.conn.execute("DELETE FROM observations WHERE id = ?", (b,))
    rows.conn.execute("UPDATE user_prompts SET prompt_text = '[forgotten]' WHERE id = ?", (p,))
    kinds = {(k, r) for k, r in rows.conn.execute("SELECT kind, row_id FROM embeddings")}
    assert ("observation", b) not in kinds and ("prompt", p) not in kinds
    assert indexer.count_missing(rows.conn, emb.model) == 1  # the forgotten prompt is not re-embedded


def test_forgetting_a_session_cascades_to_vectors(rows: Rows) -> None:
    emb = FakeEmbedder()
    rows.obs("car trouble", project="gamma", session="g1")
    rows.prompt("about the car", project="gamma", session="g1")
    rows.summary("car session", project="gamma", session="g1")
    embed_all(rows, emb)
    rows.conn.execute("DELETE FROM sessions WHERE project = 'gamma'")
    assert rows.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 0


def test_cached_matrix_follows_inserts_and_deletes(rows: Rows) -> None:
    emb = FakeEmbedder()
    vi = index(rows, emb)
    a = rows.obs("car engine")
    embed_all(rows, emb)
    assert vi.refresh() == 1
    b = rows.obs("automobile gearbox")
    embed_all(rows, emb)
    assert vi.refresh() == 2  # appended
    assert {r for _k, r, _s in vi.nearest("vehicle", k=5)} == {a, b}
    rows.conn.execute("DELETE FROM observations WHERE id = ?", (a,))
    assert vi.refresh() == 1  # reloaded after a delete
    assert [r for _k, r, _s in vi.nearest("vehicle", k=5)] == [b]


def test_nearest_filters_by_kind_and_project(rows: Rows) -> None:
    emb = FakeEmbedder()
    a = rows.obs("car engine")
    rows.obs("car in beta", project="beta", session="b1")
    p = rows.prompt("car question")
    embed_all(rows, emb)
    vi = index(rows, emb)
    assert {(k, r) for k, r, _s in vi.nearest("car", k=10, project="alpha")} == {("observation", a), ("prompt", p)}
    assert [(k, r) for k, r, _s in vi.nearest("car", k=10, kinds=["prompt"])] == [("prompt", p)]
    assert vi.nearest("car", k=10, project="nope") == []


def test_hybrid_finds_what_keywords_cannot(rows: Rows) -> None:
    emb = FakeEmbedder()
    target = rows.obs("Automobile engine stalls when cold")
    rows.obs("Unrelated note about tests")
    embed_all(rows, emb)
    vi = index(rows, emb)
    assert search(rows.conn, "vehicle") == []  # no shared keyword
    hits = search(rows.conn, "vehicle", vectors=vi)
    assert ids(hits)[0] == target and hits[0].match == "" and hits[0].similarity and hits[0].similarity > 0.25
    strict = search(rows.conn, "vehicle", vectors=vi, config=SearchConfig(min_similarity=0.25))
    assert ids(strict) == [target]  # the unrelated row is below the similarity floor


def test_hybrid_keeps_keyword_hits_and_filters(rows: Rows) -> None:
    emb = FakeEmbedder()
    kw = rows.obs("vehicle registration form")
    sem = rows.obs("automobile paperwork")
    hidden = rows.obs("car loan", type="sensitive")
    gone = rows.obs("car retracted", status="retracted")
    embed_all(rows, emb)
    vi = index(rows, emb)
    hits = search(rows.conn, "vehicle", vectors=vi)
    assert ids(hits)[0] == kw and sem in ids(hits)
    assert hidden not in ids(hits) and gone not in ids(hits)
    assert hidden in ids(search(rows.conn, "vehicle", vectors=vi, project="alpha"))
    assert ids(search(rows.conn, "vehicle", vectors=vi, types=["feature"])) == []
    no_vec = search(rows.conn, "vehicle", vectors=vi, config=SearchConfig(vector_weight=0))
    assert ids(no_vec) == [kw]


def test_query_vectors_are_cached(rows: Rows) -> None:
    emb = FakeEmbedder()
    rows.obs("car")
    embed_all(rows, emb)
    vi = index(rows, emb)
    vi.nearest("vehicle", k=3)
    n = len(emb.calls)
    vi.nearest("vehicle", k=3)
    assert len(emb.calls) == n


def test_a_paraphrase_is_not_buried_by_the_best_weak_keyword_match(rows: Rows) -> None:
    # "notes" is the only query word any row holds: the best keyword match is still weak evidence,
    # and the row that means the same (by the embedding) comes first.
    emb = FakeEmbedder()
    for i in range(10):
        rows.obs(f"Release notes {i}", narrative="what shipped to the customers this week and why")
    meant = rows.obs("Automobile engine quits when cold")
    embed_all(rows, emb)
    vi = index(rows, emb)
    hits = search(rows.conn, "vehicle breakdown notes", vectors=vi)
    assert ids(hits)[0] == meant and hits[0].match == ""


def test_nearest_is_exact_over_projects_appended_in_turns(rows: Rows) -> None:
    # Each project's vectors are kept apart (a scoped search reads only its own); across projects
    # the answer is still the exact top k of every row, also after rows arrive in several rounds.
    emb = FakeEmbedder()
    words = ["car", "engine", "cash", "invoice", "slow", "crash", "queue", "cache", "retry", "schema"]
    vi = index(rows, emb)
    made = []
    for round_ in range(3):
        for i in range(12):
            project = ("alpha", "beta", "gamma")[(i + round_) % 3]
            text = " ".join(words[(i * 7 + j * 3 + round_) % len(words)] for j in range(3))
            made.append(rows.obs(f"{text} {round_}-{i}", project=project, session=project))
        embed_all(rows, emb)
        vi.refresh()
    q = emb.embed(["car cash retry"])[0]
    vecs = emb.embed([r[0] for r in rows.conn.execute("SELECT title FROM observations ORDER BY id")])
    ids_all = [r[0] for r in rows.conn.execute("SELECT id FROM observations ORDER BY id")]
    got = vi.nearest_vector(q, k=7)
    # The 7 best similarities of all rows, best first (which of tied rows is picked may differ).
    assert [round(s, 5) for _k, _r, s in got] == [round(float(v), 5) for v in np.sort(vecs @ q)[::-1][:7]]
    assert all(abs(s - float(vecs[ids_all.index(r)] @ q)) < 1e-5 for _k, r, s in got)
    sims = vi.similarities(q, [("observation", r) for r in made])
    assert all(abs(sims[("observation", r)] - float(vecs[ids_all.index(r)] @ q)) < 1e-5 for r in made)
