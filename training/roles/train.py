"""Train the role model (kenning/observer/roles) and say how well it does on projects it never saw.

  python training/roles/train.py [--transcripts DIR] [--extra DIR | --no-extra] [--write] [--exclude PROJECT ...]

Training material:
* units of real sessions (`--transcripts`, default ../shared/data/real-sessions next to the
  checkout), cut by training/roles/extract.py, labelled in training/roles/labels/*.tsv (unit id →
  role; the text stays in the transcripts, never in this repository);
* units of the extra real sessions of other projects (`--extra`, default ../extra-sessions next to
  the checkout, read when it exists; training/roles/sources.json says where each file comes from),
  labelled and joined the same way;
* our own labelled sentences in training/roles/own/*.jsonl (written by us, several languages).

It reports leave-one-project-out precision and recall per role (every project scored by a model
trained without it, the extra projects too; our own sentences are split by language the same way),
then, with --write,
trains on everything and writes kenning/observer/roles/roles.bin. Needs numpy (the dev extra).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import sys
from array import array
from collections import Counter, defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from extract import session_units  # noqa: E402

from kenning.observer.roles.features import BUCKETS, features  # noqa: E402
from kenning.observer.roles.model import WEIGHTS, Model  # noqa: E402
from kenning.observer.roles.roles import ROLES, WORTH  # noqa: E402

DEFAULT_TRANSCRIPTS = os.path.abspath(os.path.join(ROOT, "..", "shared", "data", "real-sessions"))
DEFAULT_EXTRA = os.path.abspath(os.path.join(ROOT, "..", "extra-sessions"))


def load_labels() -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(glob.glob(os.path.join(HERE, "labels", "*.tsv"))):
        for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[1] in ROLES:
                out[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return out


def real_examples(src: str, labels: dict[str, tuple[str, str]]) -> list[dict[str, object]]:
    """Labelled units of the transcripts under ``src`` (one per distinct unit of a project)."""
    from extract import unit_id

    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for dp, _dns, fs in sorted(os.walk(src)):
        for f in sorted(fs):
            if not f.endswith(".jsonl"):
                continue
            project = os.path.basename(dp)
            for u in session_units(os.path.join(dp, f), project):
                uid = unit_id(project, str(u["text"]))
                if uid in seen or uid not in labels:
                    continue
                seen.add(uid)
                out.append({**u, "project": project, "role": labels[uid][0], "group": project})
    return out


def not_trained_on() -> set[str]:
    """The extra projects (folders) that are labelled but kept out of training: sources.json says why."""
    with open(os.path.join(HERE, "sources.json"), encoding="utf-8") as fh:
        repos = json.load(fh)["repositories"]
    return {name.replace("/", "-") for name, about in repos.items() if about.get("train") is False}


def own_examples() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for path in sorted(glob.glob(os.path.join(HERE, "own", "*.jsonl"))):
        for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                d.setdefault("speaker", "user")
                d.setdefault("origin", "typed" if d["speaker"] == "user" else "final")
                d.setdefault("heading", "")
                d["group"] = "own:" + str(d.get("lang") or "en")
                out.append(d)
    return out


def featurise(ex: dict[str, object]) -> dict[int, float]:
    return features(str(ex["text"]), str(ex.get("heading") or ""), speaker=str(ex.get("speaker") or "agent"),
                    origin=str(ex.get("origin") or ""), bullet=bool(ex.get("bullet")), label=bool(ex.get("label")),
                    first=int(ex.get("index") or 0) == 0, last=ex.get("origin") == "final")


class Data:
    """Sparse rows (feature index -> value) in two orders: by row (for the logits) and by feature
    (for the gradient), so both are one gather and one ``reduceat`` over all roles at once."""

    def __init__(self, rows: list[dict[int, float]], y: list[int]) -> None:
        self.n = len(rows)
        lens = np.array([len(r) for r in rows])
        self.row = np.repeat(np.arange(self.n), lens).astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        self.idx = np.fromiter((i for r in rows for i in r), dtype=np.int64)
        self.val = np.fromiter((v for r in rows for v in r.values()), dtype=np.float64)
        self.y = np.array(y, dtype=np.int64)
        order = np.argsort(self.idx, kind="stable")
        self.by_feat = order
        sorted_idx = self.idx[order]
        self.feat_ids, self.feat_starts = np.unique(sorted_idx, return_index=True)

    def logits(self, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.add.reduceat(self.val[:, None] * w[self.idx], self.starts, axis=0) + b

    def gradient(self, g: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        o = self.by_feat
        contrib = self.val[o, None] * g[self.row[o]]
        out = np.zeros(shape)
        out[self.feat_ids] = np.add.reduceat(contrib, self.feat_starts, axis=0)
        return out


def train(data: Data, k: int, *, l2: float, epochs: int = 300, lr: float = 0.05,
          class_weight: np.ndarray | None = None,
          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    w = np.zeros((BUCKETS, k))
    b = np.zeros(k)
    mw, vw, mb, vb = np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)
    sw = class_weight[data.y] if class_weight is not None else np.ones(data.n)
    if sample_weight is not None:
        sw = sw * sample_weight
    y1 = np.zeros((data.n, k))
    y1[np.arange(data.n), data.y] = 1.0
    for t in range(1, epochs + 1):
        z = data.logits(w, b)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - y1) * sw[:, None] / sw.sum()
        gw = data.gradient(g, w.shape)
        gw += l2 * w
        gb = g.sum(axis=0)
        for m, v, grad in ((mw, vw, gw), (mb, vb, gb)):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
        w -= lr * (mw / (1 - 0.9 ** t)) / (np.sqrt(vw / (1 - 0.999 ** t)) + 1e-8)
        b -= lr * (mb / (1 - 0.9 ** t)) / (np.sqrt(vb / (1 - 0.999 ** t)) + 1e-8)
    return w, b


def weights_for(y: list[int], k: int, power: float) -> np.ndarray:
    counts = np.bincount(np.array(y), minlength=k).astype(float)
    counts[counts == 0] = 1
    cw = (counts.sum() / counts) ** power
    return cw / cw[np.array(y)].mean()


def quantise(w: np.ndarray, b: np.ndarray) -> Model:
    scale = np.abs(w).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return Model(tuple(ROLES), [float(x) for x in b], [float(x) for x in scale], array("b", q.tobytes()), BUCKETS)


def report(name: str, gold: list[int], pred: list[int],
           worth: list[float] | None = None) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    print(f"\n{name}: {len(gold)} units, accuracy {np.mean(np.array(gold) == np.array(pred)):.3f}")
    print(f"{'role':<10} {'n':>5} {'prec':>6} {'recall':>6} {'f1':>6}")
    for c, role in enumerate(ROLES):
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        n_gold = sum(1 for g in gold if g == c)
        n_pred = sum(1 for p in pred if p == c)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out[role] = {"n": n_gold, "precision": round(prec, 3), "recall": round(rec, 3), "f1": round(f1, 3)}
        print(f"{role:<10} {n_gold:>5} {prec:>6.3f} {rec:>6.3f} {f1:>6.3f}")
    keep = [c for c, r in enumerate(ROLES) if r != "noise"]
    tp = sum(1 for g, p in zip(gold, pred, strict=True) if g in keep and p in keep)
    kept = sum(1 for p in pred if p in keep)
    n_worth = sum(1 for g in gold if g in keep)
    print(f"kept vs noise: precision {tp / max(1, kept):.3f}, recall {tp / max(1, n_worth):.3f}")
    out["kept"] = {"n": n_worth, "precision": round(tp / max(1, kept), 3), "recall": round(tp / max(1, n_worth), 3)}
    if worth is not None:
        # What the observer keeps: the summed probability of the roles worth keeping (roles.py WORTH).
        for t in (0.55, 0.7):
            hit = [w >= t for w in worth]
            good = [ROLES[g] in WORTH for g in gold]
            tp_w = sum(1 for h, ok in zip(hit, good, strict=True) if h and ok)
            prec, rec = tp_w / max(1, sum(hit)), tp_w / max(1, sum(good))
            print(f"worth >= {t}: precision {prec:.3f}, recall {rec:.3f} ({sum(good)} worth keeping)")
            out[f"worth>={t}"] = {"n": sum(good), "precision": round(prec, 3), "recall": round(rec, 3)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transcripts", default=DEFAULT_TRANSCRIPTS)
    ap.add_argument("--extra", default=DEFAULT_EXTRA, help="extra real sessions of other projects (read if it exists)")
    ap.add_argument("--no-extra", action="store_true", help="leave the extra sessions out (the development set only)")
    ap.add_argument("--write", action="store_true", help="train on everything and write the shipped weights")
    ap.add_argument("--out", default=WEIGHTS, help="where --write puts the weights")
    ap.add_argument("--exclude", action="append", default=[], help="leave this project (folder) out entirely")
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--power", type=float, default=0.5, help="class weight = (1/frequency)^power")
    # The defaults are the options of the shipped weights (bench/real_sessions.py trains its folds with them).
    ap.add_argument("--own-weight", type=float, default=2.0,
                    help="weight of our own sentences (the only Chinese, Korean, German, Spanish) against real units")
    ap.add_argument("--extra-weight", type=float, default=0.6,
                    help="weight of the extra sessions' units (other projects, labelled strictly) against the rest")
    ap.add_argument("--all-extra", action="store_true",
                    help="also the extra sessions sources.json labels but keeps out of training (\"train\": false)")
    ap.add_argument("--no-cv", action="store_true")
    ap.add_argument("--json", help="write the cross-validation numbers here")
    ap.add_argument("--predictions", help="write every unit's held-out probabilities here (JSONL, no text)")
    a = ap.parse_args()

    labels = load_labels()
    examples = real_examples(a.transcripts, labels) if os.path.isdir(a.transcripts) else []
    if not examples:
        print(f"no labelled units found under {a.transcripts}: training on our own sentences only", file=sys.stderr)
    dev_groups = {str(e["group"]) for e in examples}
    extra = real_examples(a.extra, labels) if not a.no_extra and os.path.isdir(a.extra) else []
    held_back = set() if a.all_extra else not_trained_on()
    extra = [e for e in extra if e["group"] not in held_back]
    if held_back:
        print("not trained on (sources.json, \"train\": false; --all-extra to include):", ", ".join(sorted(held_back)))
    if extra:
        print(f"extra sessions: {len(extra)} labelled units under {a.extra}")
    examples = [e for e in examples + extra if e["group"] not in a.exclude] + own_examples()
    k = len(ROLES)
    feats = [featurise(e) for e in examples]
    y = [ROLES.index(str(e["role"])) for e in examples]
    groups = [str(e["group"]) for e in examples]
    extra_groups = {str(e["group"]) for e in extra}
    mult = np.array([a.own_weight if g.startswith("own:") else a.extra_weight if g in extra_groups else 1.0
                     for g in groups])
    print(f"{len(examples)} labelled units; roles: {dict(Counter(str(e['role']) for e in examples))}")
    print(f"groups: {dict(Counter(groups))}")
    result: dict[str, object] = {}
    if not a.no_cv:
        gold: list[int] = []
        pred: list[int] = []
        per_group: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        worths: list[float] = []
        held: list[dict[str, object]] = []
        for g in sorted(set(groups)):
            tr = [i for i, x in enumerate(groups) if x != g]
            te = [i for i, x in enumerate(groups) if x == g]
            ytr = [y[i] for i in tr]
            w, b = train(Data([feats[i] for i in tr], ytr), k, l2=a.l2, epochs=a.epochs,
                         class_weight=weights_for(ytr, k, a.power), sample_weight=mult[tr])
            m = quantise(w, b)
            for i in te:
                probs = m.probabilities(feats[i])
                p = max(range(k), key=lambda c: probs[ROLES[c]])
                held.append({"group": g, "gold": ROLES[y[i]], "speaker": examples[i].get("speaker"),
                             "origin": examples[i].get("origin"), "probs": {r: round(v, 4) for r, v in probs.items()}})
                gold.append(y[i])
                pred.append(p)
                worths.append(sum(probs[r] for r in WORTH))
                per_group[g][0].append(y[i])
                per_group[g][1].append(p)
        result["leave_one_project_out"] = report("leave one project out", gold, pred, worths)
        # The same held-out judgements, on the development projects alone and on the extra ones alone,
        # so that material added from elsewhere can be seen not to cost the development set anything.
        subsets = {"development projects": lambda g: g in dev_groups,
                   "extra projects": lambda g: not g.startswith("own:") and g not in dev_groups,
                   "own sentences": lambda g: g.startswith("own:")}
        groups_held = [str(h["group"]) for h in held]
        for name, inside in subsets.items():
            idx = [k for k, g in enumerate(groups_held) if inside(g)]
            if idx:
                result[name] = report(f"leave one project out, {name}", [gold[k] for k in idx],
                                      [pred[k] for k in idx], [worths[k] for k in idx])
        for g, (gg, pp) in sorted(per_group.items()):
            acc = np.mean(np.array(gg) == np.array(pp))
            print(f"  {g}: {len(gg)} units, accuracy {acc:.3f}")
        if a.predictions:
            with open(a.predictions, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(h) + "\n" for h in held)
    if a.write:
        w, b = train(Data(feats, y), k, l2=a.l2, epochs=a.epochs, class_weight=weights_for(y, k, a.power),
                     sample_weight=mult)
        m = quantise(w, b)
        with open(a.out, "wb") as fh:
            fh.write(m.to_bytes())
        print(f"wrote {a.out} ({os.path.getsize(a.out):,} bytes)")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
