"""A CLI that explains itself (issue 28): a filter naming nothing known is an error with the nearest
names, not "No memory matches"; a query without words says so; ``show`` takes every id the CLI prints.

Memory is made through real hook processes and a real worker; commands run as real ``kenning``
processes, with the worker running (they ask it over HTTP) and stopped (they read the database).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest

from tests.conftest import Home
from tests.integration.test_memory_commands import call_json, other_project, session

UNKNOWN = [
    (("--project", "my-projetc"), "no such project 'my-projetc' (did you mean 'my-project'"),
    (("--type", "decisoin"), "no such type 'decisoin' (did you mean 'decision'"),
    (("--agent", "codx"), "no such agent 'codx' (did you mean 'codex'"),
]


@pytest.fixture
def memory(home: Home) -> Home:
    home.start_worker()
    session(home, "s-one", ["Always deploy with the blue pipeline from now on.", "We use uv, not pip."],
            cwd=other_project(home, "my-project"))
    home.flush()
    return home


@pytest.mark.parametrize("worker", [True, False], ids=["worker", "direct"])
def test_unknown_filters_are_errors_with_the_nearest_name(memory: Home, worker: bool) -> None:
    if not worker:
        memory.stop_worker()
    for flags, said in UNKNOWN:
        r = memory.kenning("search", "deploy", *flags)
        assert r.returncode == 2 and said in r.stderr, (flags, r.stdout, r.stderr)
        assert "No memory matches" not in r.stdout
    r = memory.kenning("search", "deploy", "--project", "my-project", "--type", "decision")
    assert r.returncode == 0 and "blue pipeline" in r.stdout, r.stderr
    for argv in (("timeline", "-q", "deploy", "--project", "my-projetc"), ("context", "--project", "my-projetc"),
                 ("export", "--project", "my-projetc"), ("forget", "--project", "my-projetc", "--dry-run")):
        r = memory.kenning(*argv)
        assert r.returncode == 2 and "no such project 'my-projetc' (did you mean 'my-project'" in r.stderr, \
            (argv, r.stdout, r.stderr)


@pytest.mark.parametrize("query", ["*", "\U0001f680", "?!-"])
def test_a_query_without_words_says_so(memory: Home, query: str) -> None:
    r = memory.kenning("search", query)
    assert r.returncode == 2 and "has no words to search for" in r.stderr, (r.stdout, r.stderr)
    assert "result(s)" not in r.stderr
    memory.stop_worker()
    r = memory.kenning("search", query)
    assert r.returncode == 2 and "has no words to search for" in r.stderr, (r.stdout, r.stderr)


def test_http_answers_400_with_the_nearest_name(memory: Home) -> None:
    for param, said in (("project=my-projetc", "did you mean 'my-project'"), ("type=decisoin", "'decision'"),
                        ("agent=codx", "'codex'"), ("query=" + quote("*"), "no words")):
        status, body = call_json(memory, "GET", f"/api/search?query=deploy&{param}" if "query" not in param
                                 else f"/api/search?{param}")
        assert status == 400 and said in body["error"], (param, status, body)
    status, body = call_json(memory, "GET", "/api/timeline?query=deploy&project=my-projetc")
    assert status == 400 and "no such project" in body["error"], body
    status, body = call_json(memory, "GET", "/api/search?query=deploy&project=my-project&agent=claude-code")
    assert status == 200 and body["results"], body


def test_show_takes_every_id_search_prints(memory: Home) -> None:
    r = memory.kenning("search", "--json", "-n", "200")
    hits = json.loads(r.stdout)["results"]
    labels = {h["kind"]: {"summary": "S", "prompt": "P"}.get(h["kind"], "#") + str(h["id"]) for h in hits}
    assert {"observation", "summary", "prompt"} <= set(labels), labels
    printed = memory.kenning("search").stdout
    for label in labels.values():
        assert re.search(rf"^{re.escape(label)}\s", printed, re.M), (label, printed)
    for kind, label in labels.items():
        for form in {label, label.lower(), label.lstrip("#")}:
            r = memory.kenning("show", form)
            assert r.returncode == 0, (form, r.stderr)
            assert r.stdout.startswith(label if kind != "observation" else label + " "), (form, r.stdout)
        r = memory.kenning("show", "--json", label)
        assert r.returncode == 0 and json.loads(r.stdout)["id"] == int(label[1:]), r.stdout
    summary = next(h for h in hits if h["kind"] == "summary")
    assert memory.kenning("show", f"S{summary['id']}").stdout.startswith(f"S{summary['id']} [session summary]")
    prompt = memory.kenning("show", labels["prompt"]).stdout
    assert "Always deploy with the blue pipeline" in prompt or "We use uv" in prompt, prompt
    r = memory.kenning("show", "S999999")
    assert r.returncode == 1 and "no session summary S999999" in r.stderr
    r = memory.kenning("show", "X1")
    assert r.returncode == 2 and "is not an id" in r.stderr


def test_one_token_count_for_the_index_everywhere(memory: Home) -> None:
    """The context's own Economics line, `context --stats`, `stats` and the HTTP API (context and the
    viewer's stats) report the same count for the same index: what its text costs to read."""
    where = other_project(memory, "my-project")
    r = memory.kenning("context", "--cwd", where, "--stats")
    assert r.returncode == 0, r.stderr
    text = r.stdout[:-1]  # print() adds the newline
    stated = int(re.search(r"reading this index costs ~([\d,]+) tokens", text)[1].replace(",", ""))  # type: ignore[index]
    measured = int(re.search(r"~([\d,]+) tokens\]", r.stderr)[1].replace(",", ""))  # type: ignore[index]
    assert stated == measured == (len(text) + 3) // 4, (stated, measured, len(text))
    stats = json.loads(memory.kenning("stats", "--json", "-p", "my-project").stdout)
    assert stats["savings"]["index_tokens"] == stated, stats["savings"]
    status, body = call_json(memory, "GET", "/api/context?project=my-project")
    assert status == 200 and body["tokens"] == stated, body.get("tokens")
    key = json.loads(memory.kenning("search", "--json", "-p", "my-project").stdout)["results"][0]["project"]
    status, body = call_json(memory, "GET", "/api/viewer/stats?project=" + quote(key))
    assert status == 200 and body["savings"]["index_tokens"] == stated, body.get("savings")
