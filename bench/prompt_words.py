"""The prompt context with and without the synonym table (kenning/search/synonyms.py): what
passes the relevance threshold, on a labelled set of our own, and what it costs.

    .venv/bin/python bench/prompt_words.py [--write] [--threshold 60]

Background: the recall corpus (bench/recall/corpus.py: 256 observations from the real pipeline)
gives the word statistics a real memory has. Into it go LABELLED memories of one project (a
web shop) written for this benchmark (English, Chinese, German, French, Spanish), among them memories that
share only a synonym's word with a prompt in another sense ("the country-code database", "the repository
pattern"). Each prompt lists the memories a developer would want next to it (none for the prompts
that only mention a listed word in passing). ``prompt.build`` runs keywords-only (no embeddings)
with the default threshold, with the table, then without it (``recall_terms`` gives no
alternatives and finds no table word inside CJK text, the search gets no synonyms); the same
process, the same database. A pick not labelled relevant is a false hit.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for p in (str(HERE.parent), str(HERE), str(HERE / "recall")):
    if p not in sys.path:
        sys.path.insert(0, p)

from common import command_line, md_table, run_header, write_section  # noqa: E402
from corpus import build  # noqa: E402

from kenning.context import prompt  # noqa: E402
from kenning.records import ObservationDraft  # noqa: E402
from kenning.search import synonyms  # noqa: E402
from kenning.search.service import search  # noqa: E402
from kenning.store import repo  # noqa: E402
from kenning.store.db import open_db  # noqa: E402

PROJECT = "webshop"
MEMORIES = {
    "ingress": "Kubernetes ingress returned 502 after the helm chart upgrade; pinned the chart to 4.2",
    "namespaces": "Kubernetes namespaces are named after the team that owns the service",
    "pool": "The database connection pool is capped at 20 connections in production",
    "migrations": "Database migrations run with alembic upgrade head before each deploy",
    "settings": "Configuration lives in settings.toml and environment variables override it",
    "squash": "The repository accepts squash merges only: no merge commits on main",
    "jwt": "Authentication uses short-lived JWTs signed with the rotating key from vault",
    "uv": "Dependencies are pinned with uv lock; never install with pip into the project",
    "days": "Deploys go out on Tuesdays and Thursdays only, never on a Friday",
    "staging": "The staging environment mirrors production except for the payment provider sandbox",
    "cache-key": "The CI cache key includes the hash of uv.lock",
    "card": "Error messages from the payment provider are logged without card data",
    "regression": "周五上线之前必须跑完整的回归测试",
    "backup": "数据库备份每天凌晨三点执行，保留三十天",
    "mkdocs": "The documentation site is built with mkdocs from the docs folder",
    "approval": "Pull requests need one approval and a green CI run before merging",
    "2fa": "The admin dashboard requires two-factor authentication for every account",
    "index": "Performance: the product list query needs the (category, price) index",
    "tmp": "Temporary files go to /var/tmp and are cleaned every night",
    "notes": "Release notes are generated from conventional commit messages",
    "de-pool": "Der Datenbank-Pool ist in Produktion auf 20 Verbindungen begrenzt",
    "fr-secret": "Le mot de passe de la base de données de staging change chaque mois",
    "es-config": "La configuración de la API se lee de config/api.yaml al arrancar",
    # Memories that share a listed word with some prompt in another sense
    "countries": "The database of country codes is vendored from ISO 3166 into data/countries.csv",
    "env-example": "The .env.example file lists every variable with a dummy value",
    "pattern": "Repository pattern: each aggregate root has exactly one repository class",
    "cron": "Kubernetes is not used for the batch jobs: they run from cron on the worker VM",
    "prod-flags": "Feature flags default to off in production until product signs off",
}
PROMPTS: list[tuple[str, set[str]]] = [
    ("the k8s ingress gives 502 again after upgrading the helm chart", {"ingress"}),
    ("how should I name the new k8s namespace for the search team", {"namespaces"}),
    ("why is the DB connection pool exhausted in prod", {"pool", "de-pool"}),
    ("do we run the db migrations before the deploy", {"migrations"}),
    ("where does the app read its config, and can env vars override it", {"settings"}),
    ("can I land this in the repo with a merge commit", {"squash"}),
    ("how are the auth JWTs signed", {"jwt"}),
    ("how do I add a new dep to the project, with pip?", {"uv"}),
    ("can we deploy on Friday afternoon", {"days", "regression"}),
    ("is the staging env the same as prod", {"staging"}),
    ("周五可以上线吗", {"days", "regression"}),
    ("数据库备份什么时候跑", {"backup"}),
    ("when do the database backups run", {"backup"}),
    ("where are the docs built", {"mkdocs"}),
    ("what does a PR need before merging", {"approval"}),
    ("does the admin dashboard need two-factor auth", {"2fa"}),
    ("the product list query is slow, any perf ideas", {"index"}),
    ("where should tmp files go", {"tmp"}),
    ("how are the release notes made", {"notes"}),
    ("what is in the country codes db", {"countries"}),
    ("add a new variable to the env example file", {"env-example"}),
    ("does every aggregate get its own repository class", {"pattern"}),
    ("warum ist der DB-Pool in prod erschöpft", {"de-pool", "pool"}),
    ("qui change le password de la DB de staging ?", {"fr-secret"}),
    ("¿dónde se lee la config de la API?", {"es-config"}),
    # A listed word in passing: nothing here is about it
    ("warum ist der Thread-Pool erschöpft", set()),
    ("write a small k8s operator in rust just for fun", set()),
    ("explain what a database transaction is in general", set()),
    ("set up my dev environment on the new laptop", set()),
    ("what config format does nginx use", set()),
    ("rename the repo folder on my machine", set()),
    ("fix the typo in the auth page footer", set()),
]


def fill(conn: Any) -> dict[int, str]:
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="labelled", project=PROJECT,
                                  project_root="/src/webshop", cwd="/src/webshop", at=time.time() - 86400)
        out = {}
        for name, title in MEMORIES.items():
            oid = repo.insert_observation(conn, sid, PROJECT, ObservationDraft(
                type="decision", title=title, narrative=title, created_at=time.time() - 3600), "rules")
            assert oid is not None
            out[oid] = name
    return out


def run(conn: Any, names: dict[int, str], threshold: float, table: bool) -> dict[str, Any]:
    real_group, real_in_run, real_phrases = synonyms.group, synonyms.in_run, synonyms.phrases
    if not table:
        synonyms.group = lambda word: (None, ())  # type: ignore[assignment]
        synonyms.in_run = lambda run: []  # type: ignore[assignment]
        synonyms.phrases = lambda text: ([], text)  # type: ignore[assignment]
    try:
        def keywords(query: str, **kw: Any) -> list[Any]:
            kw["synonyms"] = table
            return search(conn, query, **kw)

        rows, times = [], []
        for text, want in PROMPTS:
            t0 = time.perf_counter()
            _out, picks = prompt.build(conn, text, PROJECT, keyword_search=keywords, limit=5,
                                       min_relevance=threshold, min_similarity=1.0)
            times.append((time.perf_counter() - t0) * 1000)
            got = {names.get(p.hit.id, f"#{p.hit.id}") for p in picks}
            rows.append((text, want, got))
    finally:
        synonyms.group, synonyms.in_run, synonyms.phrases = real_group, real_in_run, real_phrases
    tp = sum(len(g & w) for _t, w, g in rows)
    fp = sum(len(g - w) for _t, w, g in rows)
    relevant = sum(len(w) for _t, w, _g in rows)
    return {"rows": rows, "tp": tp, "fp": fp, "relevant": relevant, "p50": statistics.median(times),
            "max": max(times)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--threshold", type=int, default=60, help="prompt_context_min_relevance (%%), default 60")
    args = ap.parse_args()
    db = build(tempfile.mkdtemp(prefix="kenning-bench-prompt-words-"))
    conn = open_db(db)
    names = fill(conn)
    th = args.threshold / 100
    run(conn, names, th, True)  # warm the caches of both sides alike
    run(conn, names, th, False)
    on, off = run(conn, names, th, True), run(conn, names, th, False)
    conn.close()
    table = [[text, ", ".join(sorted(want)) or "–", ", ".join(sorted(g_off)) or "–", ", ".join(sorted(g_on)) or "–"]
             for (text, want, g_on), (_t, _w, g_off) in zip(on["rows"], off["rows"], strict=True)]
    n_rel = on["relevant"]
    summary = md_table(["", f"relevant given (of {n_rel})", "false hits", "build p50 ms", "build max ms"], [
        ["without the table", off["tp"], off["fp"], f"{off['p50']:.2f}", f"{off['max']:.1f}"],
        ["with the table", on["tp"], on["fp"], f"{on['p50']:.2f}", f"{on['max']:.1f}"]])
    body = "\n\n".join([
        "## Prompt context: synonyms and CJK words (bench/prompt_words.py)", run_header(command_line()),
        __doc__.split("\n\n", 1)[1].strip(),
        f"{len(PROMPTS)} prompts, {len(MEMORIES)} labelled memories among {names and min(names) - 1} background "
        f"observations; threshold {args.threshold}%, at most 5 memories a prompt, keywords only.",
        summary, md_table(["prompt", "relevant", "given without the table", "given with it"], table)])
    print(body)
    if args.write:
        write_section("prompt-words", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
