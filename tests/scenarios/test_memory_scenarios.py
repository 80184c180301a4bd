"""Does the next session get what is true and matters? Multi-session scenarios, offline observer.

Each scenario plays several sessions through real hook processes and one real worker (the
``rules`` observer), then a probe session; its injected context (SessionStart, the probe
prompt's UserPromptSubmit, a Read's PreToolUse) must hold some facts and must not hold others.
See tests/support/scenario.py for how a scenario is played.
"""

from __future__ import annotations

import pytest

from tests.conftest import Home
from tests.support.scenario import Probe, Runner, Scenario, Session, Turn, bash, check, edit, read, write

BIG = "\n".join(f"line {i} of a file large enough to get its history on Read" for i in range(60)) + "\n"


def routine(n: int, repo: str = "main") -> list[Session]:
    """Ordinary sessions: a small change each, nothing worth remembering beyond the log."""
    parts = ["logging", "docstrings", "imports", "typing", "naming", "comments", "error messages", "formatting",
             "constants", "tests", "fixtures", "helpers", "README", "CLI help", "config loading", "retries"]
    out = []
    for i in range(n):
        area = parts[i % len(parts)]
        f = f"src/module_{i}.py"
        out.append(Session([Turn(f"Tidy up the {area} in {f}", [write(f, f"# {area}\nVALUE_{i} = {i}\n")],
                                 last=f"Tidied the {area} in {f}.")], repo=repo))
    return out


SCENARIOS = [
    Scenario(
        "preference_after_15_routine_sessions",
        [Session([Turn("We prefer small PRs, e.g. one feature per PR, and squash merges on main.",
                       [read("README.md")], last="Noted.")]),
         *routine(15)],
        Probe(prompt="I'm about to open a PR for the new export and the CSV fixes together, anything to know?"),
        must=["We prefer small PRs, e.g. one feature per PR, and squash merges on main"],
        must_not=["/⚖️ [Oo]ne feature per PR/"],
    ),
    Scenario(
        "corrected_rule",
        [Session([Turn("Run the tests with `make test` before every commit.", last="Will do.")]),
         Session([Turn("Tidy the Makefile", [edit("Makefile", "test:", "check:")], last="Done.")]),
         Session([Turn("`make test` is gone; from now on run `just test` before every commit.",
                       [write("justfile", "test:\n\tpytest -q\n")], last="Added a justfile with a test recipe.")])],
        Probe(prompt="Which command runs the test suite before I commit?"),
        must=["run `just test` before every commit"],
        must_not=["Run the tests with `make test`"],
    ),
    Scenario(
        "changed_status",
        [Session([Turn("Let's pause the billing migration until finance signs off on the new tax codes.",
                       last="Paused; nothing is half-migrated.")]),
         Session([Turn("Add a retry to the webhook client", [edit("src/webhooks.py", "send(", "send_with_retry(")],
                       last="Added a retry with backoff to the webhook client.")]),
         Session([Turn("Finance signed off, so resume the billing migration with the invoices table first.",
                       last="Resuming with the invoices table.")])],
        Probe(prompt="What is the state of the billing migration?"),
        must=["resume the billing migration with the invoices table first"],
        must_not=["pause the billing migration until finance"],
    ),
    Scenario(
        "root_cause_the_agent_explained",
        [Session([Turn("Uploads over 1 MB crash with a 413, please fix it.",
                       [bash("curl -sf -F file=@big.bin localhost:8080/upload", fails="413 Request Entity Too Large"),
                        read("deploy/nginx.conf"),
                        edit("deploy/nginx.conf", "client_max_body_size 1m;", "client_max_body_size 50m;"),
                        bash("curl -sf -F file=@big.bin localhost:8080/upload", "ok")],
                       said=["Let me reproduce the upload first.",
                             "The 413 comes from nginx, not from the app: client_max_body_size is 1m."],
                       last="The crash was nginx's client_max_body_size of 1m; raising it to 50m fixed the 413 "
                            "on uploads.")]),
         *routine(3)],
        Probe(prompt="Uploads are failing with a 413 again, what did we find last time?", read="deploy/nginx.conf"),
        files={"main:deploy/nginx.conf": "server {\n    client_max_body_size 1m;\n}\n" + BIG},
        must=["client_max_body_size"],
    ),
    Scenario(
        "decision_with_its_reason",
        [Session([Turn("We chose Postgres over Mongo because we need transactions across invoices and payments.",
                       last="Understood, the schema will stay relational.")]),
         *routine(4)],
        Probe(prompt="Should the new payments service store its data in Mongo?"),
        must=["We chose Postgres over Mongo because we need transactions across invoices and payments"],
    ),
    Scenario(
        "environment_gotcha_and_its_fix",
        [Session([Turn("The date tests fail on CI, find out why.",
                       [bash("pytest -q tests/test_dates.py",
                             fails="E       AssertionError: assert '2024-03-03' == '2024-03-04'\n1 failed"),
                        read("tests/test_dates.py"),
                        bash("TZ=UTC pytest -q tests/test_dates.py", "3 passed")],
                       said=["The expected dates are computed at local midnight."],
                       last="The date tests need TZ=UTC: they compare against local midnight. Running them with "
                            "TZ=UTC makes them pass.")]),
         *routine(3)],
        Probe(prompt="The date tests fail on my laptop with an off-by-one day"),
        files={"main:tests/test_dates.py": "def test_day():\n    assert True\n"},
        must=["TZ=UTC"],
    ),
    Scenario(
        "two_facts_from_two_sessions",
        [Session([Turn("Where does the staging database live?", [read("deploy/staging.env")],
                       last="The staging database runs on db-7.internal, port 6432 behind pgbouncer.")]),
         *routine(2),
         Session([Turn("How do we get credentials for staging?", [read("docs/access.md")],
                       last="Staging credentials come from the 1Password vault infra-staging; nobody keeps them in "
                            "env files.")])],
        Probe(prompt="How do I connect to the staging database with psql?"),
        files={"main:deploy/staging.env": "DB_HOST=db-7.internal\n", "main:docs/access.md": "# access\n"},
        must=["db-7.internal", "infra-staging"],
    ),
    Scenario(
        "same_folder_name_two_repositories",
        [Session([Turn("We deploy the api with Kubernetes, never by hand.",
                       [edit("src/app.py", "app = App()", "app = App(name='acme')")], last="Done.")], repo="acme"),
         Session([Turn("Fix the login redirect",
                       [edit("src/app.py", "redirect('/')", "redirect('/home')")],
                       last="Fixed the login redirect: it now lands on /home for the acme tenant.")], repo="acme"),
         Session([Turn("We deploy the api to Heroku with git push.", last="OK.")], repo="beta")],
        Probe(repo="beta", prompt="How do we deploy the api and what happened to the login redirect?",
              read="src/app.py"),
        repos={"acme": "clients/acme/api", "beta": "clients/beta/api"},
        files={"acme:src/app.py": BIG, "beta:src/app.py": BIG},
        must=["Heroku"],
        must_not=["Kubernetes", "acme", "login redirect"],
    ),
    Scenario(
        "two_worktrees_of_one_repository",
        [Session([Turn("Never log request bodies: they hold card numbers.", last="Understood.")]),
         Session([Turn("Fix the flaky cache test",
                       [bash("pytest -q tests/test_cache.py", fails="FAILED tests/test_cache.py::test_ttl - "
                                                                    "AssertionError: expired too early"),
                        edit("src/cache.py", "ttl = 1", "ttl = 60"),
                        bash("pytest -q tests/test_cache.py", "4 passed")],
                       last="The cache test was flaky because the TTL was 1 second; it is 60 now.")],
                 repo="feature")],
        Probe(repo="feature", prompt="Can I log the request body to debug the checkout?"),
        repos={"main": "shop", "feature": "shop-feature"},
        worktree={"feature": "main"},
        files={"main:src/cache.py": "ttl = 1\n"},
        must=["Never log request bodies: they hold card numbers", "TTL was 1 second"],
    ),
    Scenario(
        "never_edit_rule_when_the_file_is_read",
        [Session([Turn("Never edit src/gen/api_pb2.py by hand; run `make proto` instead.", last="Got it.")]),
         *routine(3)],
        Probe(prompt="The generated API module has a typo in a field name", read="src/gen/api_pb2.py"),
        files={"main:src/gen/api_pb2.py": "# generated\nFIELD = 1\n"},
        must=["run `make proto` instead"],
    ),
    Scenario(
        "pasted_secret_never_returned",
        [Session([Turn("Use this token for the staging API: ghp_" + "Zq8" * 12 + " and never commit it.",
                       [write("scripts/staging_smoke.sh", "curl -H \"Authorization: Bearer $TOKEN\" staging/health\n")],
                       last="Wrote scripts/staging_smoke.sh reading the token from $TOKEN.")]),
         *routine(2)],
        Probe(prompt="Run the staging smoke test with the token from last time", read="scripts/staging_smoke.sh"),
        must=["staging_smoke.sh"],
        must_not=["ghp_Zq8", "Zq8Zq8Zq8"],
    ),
    Scenario(
        "same_question_eleven_times_and_the_fix",
        [*[Session([Turn("How does the cache key work?", [read("src/cache.py")],
                         last="cache_key() hashes the path and the query string.")]) for _ in range(11)],
         Session([Turn("Customers see each other's dashboards from the cache, fix it",
                       [bash("pytest -q tests/test_cache.py", fails="FAILED tests/test_cache.py::test_tenant_isolation"
                                                                    " - AssertionError: cross-tenant hit"),
                        edit("src/cache.py", "key = path", "key = (tenant_id, path)"),
                        bash("pytest -q tests/test_cache.py", "5 passed")],
                       last="Fixed cross-tenant cache hits: cache_key() ignored tenant_id; it is part of the key "
                            "now.")]),
         *routine(2)],
        Probe(prompt="Is the cache safe across tenants?"),
        files={"main:src/cache.py": "key = path\n" + BIG},
        must=["cache_key() ignored tenant_id", "(×11)"],
        must_not=["Test_tenant_isolation", "/How does the cache key work.*\\n.*How does the cache key work/"],
    ),
    Scenario(
        "switched_tool_and_identifier_case",
        [Session([Turn("We use npm for installs and scripts.", last="OK.")]),
         Session([Turn("We switched to pnpm, npm is no longer used here; test_Parser_edge_cases must keep its name.",
                       [write("pnpm-lock.yaml", "lockfileVersion: 9\n")], last="Switched the lockfile to pnpm.")])],
        Probe(prompt="How do I install the dependencies?"),
        must=["test_Parser_edge_cases must keep its name", "switched to pnpm"],
        must_not=["We use npm for installs"],
    ),
]

SCENARIOS += [
    Scenario(
        "status_reported_by_the_agent_then_resumed",
        [Session([Turn("Start migrating the invoices table to the new schema.",
                       [edit("migrations/0007_invoices.sql", "-- todo", "ALTER TABLE invoices ADD COLUMN tenant_id")],
                       last="Paused the invoices schema migration at step 3: the DBA has to approve the new index "
                            "first.")]),
         *routine(2),
         Session([Turn("The DBA approved, resume the invoices schema migration.", last="Resumed; step 4 is next.")])],
        Probe(prompt="Where are we with the invoices schema migration?"),
        must=["resume the invoices schema migration"],
        must_not=["Paused the invoices schema migration"],
    ),
    Scenario(
        "cause_explained_along_the_way",
        [Session([Turn("The nightly export job crashes, please fix it",
                       [bash("python -m jobs.export", fails="MemoryError"), read("jobs/export.py"),
                        edit("jobs/export.py", "rows = list(query)", "rows = query.iterator()"),
                        bash("python -m jobs.export", "exported 120000 rows")],
                       said=["Reproducing the crash.",
                             "The export loaded all 120k rows into memory at once because of list(query); streaming "
                             "with iterator() keeps it flat."],
                       last="Done.")]),
         *routine(2)],
        Probe(prompt="The export job ran out of memory again"),
        files={"main:jobs/export.py": "rows = list(query)\n"},
        must=["iterator()"],
    ),
    Scenario(
        "correction_that_starts_with_actually",
        [Session([Turn("Use pnpm for all installs.", last="OK.")]),
         *routine(2),
         Session([Turn("Actually, use yarn for installs; we dropped pnpm last week.", last="Will use yarn.")])],
        Probe(prompt="Install the new date library"),
        must=["use yarn for installs"],
        must_not=["Use pnpm for all installs"],
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(home: Home, scenario: Scenario) -> None:
    runner = Runner(home, scenario)
    runner.play()
    got = runner.probe()
    problems = check(scenario, got)
    assert not problems, "\n".join([*problems, "--- SessionStart", got.session_start, "--- prompt", got.prompt,
                                    "--- read", got.read])


def test_the_suite_covers_what_the_issue_lists() -> None:
    assert len(SCENARIOS) >= 12 and all(len(s.sessions) >= 2 for s in SCENARIOS)
