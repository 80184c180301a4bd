"""Key means key: in histories where routine sessions (what does f return?, rename this, add a docstring)
sit between the sessions that matter (a root cause found, a decision and its reason, a gotcha, a
rule), what the session-start index lists as key memories is the latter, not "user asked X, the agent
answered Y" (DESIGN.md §9). Several projects, phrasings drawn at random (seeded), the offline
observer, a real SQLite file and the real index.
"""

from __future__ import annotations

import random
import re

import pytest

from tests.support.memory_story import Story, Turn, bash, edit, read

KEY_SECTION = "## Key decisions, gotchas and root causes"
# What the routine sessions say (judged by what the text is, not by the kind our observer gave it).
ROUTINE = re.compile(r"returns? |is defined in|has three callers|^Renamed |docstring", re.IGNORECASE)
FUNCS = ["parse_invoice", "load_config", "render_report", "sync_accounts", "resolve_user", "merge_ledgers",
         "compute_tax", "fetch_rates", "build_index", "export_rows", "validate_iban", "schedule_job"]
FILES = ["billing/invoice.py", "core/config.py", "reports/render.py", "sync/accounts.py", "auth/users.py",
         "ledger/merge.py", "tax/compute.py", "fx/rates.py", "search/index.py", "export/rows.py"]


def routine(rng: random.Random, root: str) -> list[Turn]:
    f, path = rng.choice(FUNCS), rng.choice(FILES)
    kind = rng.randrange(4)
    if kind == 0:
        return [Turn(rng.choice([f"What does `{f}()` return?", f"What does {f} return when the input is empty?",
                                 f"Where is `{f}` defined?"]), [read(root, path)],
                     last=rng.choice([f"`{f}()` returns a list of rows, or an empty list when nothing matches.",
                                      f"`{f}` is defined in `{path}` and returns a dict keyed by account id.",
                                      f"It returns `None` for empty input; otherwise the parsed `{f}` result."]))]
    if kind == 1:
        return [Turn(f"Rename `{f}` to `{f}_v2` in {path}.", [edit(root, path, f, f + "_v2"),
                                                               bash("pytest -q", "42 passed")],
                     last=f"Renamed `{f}` to `{f}_v2` in `{path}` and updated its two callers; all tests pass.")]
    if kind == 2:
        return [Turn(f"Add a docstring to `{f}`.", [edit(root, path, "def ", 'def """doc"""')],
                     last=f"Added a docstring to `{f}` describing its arguments and return value.")]
    return [Turn(f"How many callers does `{f}` have?", [bash(f"grep -rn {f} src", f"src/a.py: {f}()")],
                 last=f"`{f}` has three callers: the CLI, the worker and one test.")]


def important(i: int, root: str) -> list[Turn]:
    return [
        [Turn("The nightly sync crashes with a KeyError, please fix it.",
              [bash("python -m jobs.sync", fails="KeyError: 'currency'"), edit(root, "sync/accounts.py"),
               bash("python -m jobs.sync", "synced 1200 accounts")],
              last="The crash came from accounts created before 2021: they have no `currency` field, so "
                   "`sync_accounts()` raised a KeyError. Fixed by defaulting the currency to the ledger's.")],
        [Turn("We'll store sessions in Redis rather than Postgres, because Redis gives us per-key TTLs.",
              last="Understood, sessions go to Redis.")],
        [Turn("Run the integration tests.", [bash("pytest -q tests/integration", fails="ConnectionRefusedError")],
              last="The integration tests need Docker running: without it the database container is missing "
                   "and every test fails with ConnectionRefusedError.")],
        [Turn("From now on, every migration must come with a rollback script.", last="Will do.")],
    ][i % 4]


def key_rows(context: str) -> list[int]:
    if KEY_SECTION not in context:
        return []
    section = context.split(KEY_SECTION, 1)[1].split("\n## ", 1)[0]
    return [int(line.split()[0][1:]) for line in section.splitlines() if line.startswith("#")]


@pytest.mark.parametrize("seed", [3, 11])
def test_routine_sessions_between_the_important_ones_stay_out_of_the_key_memories(story: Story, seed: int) -> None:
    rng = random.Random(seed)
    projects = ["billing", "ledger", "portal"]
    for p in projects:
        root = story.root(p)
        for i in range(4):
            for _ in range(rng.randint(3, 6)):
                story.session(p, *routine(rng, root))
            story.session(p, *important(i, root))
    shown = key = 0
    for p in projects:
        by_id = {r["id"]: r for r in story.rows(p)}
        rows = key_rows(story.context(p))
        assert rows, story.context(p)
        shown += len(rows)
        key += sum(1 for i in rows if not ROUTINE.search(by_id[i]["title"]))
        ctx = story.context(p)
        assert "Redis" in ctx and "Docker" in ctx and "currency" in ctx, ctx  # what mattered is there
    assert key / shown >= 0.8, (key, shown)
