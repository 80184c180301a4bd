"""The role model: a multinomial logistic regression over hashed features, its weights shipped in the
package (``roles.bin``, trained by training/roles/train.py), read with the standard library.

File layout (little-endian): ``KRM1``, buckets (u32), roles (u32), then per role its name
(u8 length + UTF-8), bias (f32) and scale (f32); then ``buckets × roles`` int8 weights, row-major by
bucket. A weight is ``int8 * scale`` of its role. Quantised to int8 the file is ~1 MB and loads in
a few milliseconds; predictions differ from the float weights by well under a percent.
"""

from __future__ import annotations

import logging
import math
import os
import struct
from array import array
from functools import lru_cache

MAGIC = b"KRM1"
WEIGHTS = os.path.join(os.path.dirname(__file__), "roles.bin")


class Model:
    def __init__(self, roles: tuple[str, ...], bias: list[float], scale: list[float], weights: array,
                 buckets: int) -> None:
        self.roles = roles
        self.bias = bias
        self.scale = scale
        self.weights = weights
        self.buckets = buckets

    def logits(self, feats: dict[int, float]) -> list[float]:
        k = len(self.roles)
        acc = [0.0] * k
        w = self.weights
        for i, v in feats.items():
            base = (i % self.buckets) * k
            for c in range(k):
                q = w[base + c]
                if q:
                    acc[c] += q * v
        return [self.bias[c] + self.scale[c] * acc[c] for c in range(k)]

    def probabilities(self, feats: dict[int, float]) -> dict[str, float]:
        z = self.logits(feats)
        top = max(z)
        e = [math.exp(x - top) for x in z]
        total = sum(e)
        return {r: e[c] / total for c, r in enumerate(self.roles)}

    def to_bytes(self) -> bytes:
        out = bytearray(MAGIC + struct.pack("<II", self.buckets, len(self.roles)))
        for c, r in enumerate(self.roles):
            name = r.encode("utf-8")
            out += struct.pack("<B", len(name)) + name + struct.pack("<ff", self.bias[c], self.scale[c])
        out += self.weights.tobytes()
        return bytes(out)


def parse(data: bytes) -> Model:
    if data[:4] != MAGIC:
        raise ValueError("not a role model file")
    buckets, k = struct.unpack_from("<II", data, 4)
    pos = 12
    roles, bias, scale = [], [], []
    for _ in range(k):
        n = data[pos]
        roles.append(data[pos + 1:pos + 1 + n].decode("utf-8"))
        pos += 1 + n
        b, s = struct.unpack_from("<ff", data, pos)
        bias.append(b)
        scale.append(s)
        pos += 8
    weights = array("b")
    weights.frombytes(data[pos:pos + buckets * k])
    if len(weights) != buckets * k:
        raise ValueError("role model file is cut short")
    return Model(tuple(roles), bias, scale, weights, buckets)


def load() -> Model | None:
    """The shipped model (or the one ``KENNING_ROLE_MODEL`` names: how bench/real_sessions.py scores a
    project with a model trained without it), None when the file is missing or damaged (the observer
    then falls back on its cue words alone)."""
    return _load(os.environ.get("KENNING_ROLE_MODEL") or WEIGHTS)


@lru_cache(maxsize=2)
def _load(path: str) -> Model | None:
    try:
        with open(path, "rb") as fh:
            return parse(fh.read())
    except (OSError, ValueError, struct.error) as e:
        # Said once (the load is cached), where the worker logs: memory quality drops without the model.
        logging.getLogger("kenning.observer").warning("role model %s unreadable (%s): judging by cue words alone",
                                                      path, e)
        return None
