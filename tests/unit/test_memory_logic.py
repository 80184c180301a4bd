"""The principles behind memory that knows what matters (kenning/memory, kenning/observer/roles).

Sentences, subjects, layers, supersession and near-duplicates are pure functions of text: these
tests state what they must hold for any wording, not for one scenario.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.memory import duplicates
from kenning.memory.layers import KEY, LOG, RULE, classify
from kenning.memory.subjects import is_status, negated, subjects, supersedes_something
from kenning.memory.supersession import Memory, replaces
from kenning.memory.text import capitalised, content_words, sentences, tokens
from kenning.observer.roles.roles import judge
from kenning.observer.stated import statements
from kenning.observer.units import units

# ------------------------------------------------------------------------------ sentences


@pytest.mark.parametrize(("text", "want"), [
    ("We prefer small PRs, e.g. one feature per PR. Also squash.", ["We prefer small PRs, e.g. one feature per PR.",
                                                                   "Also squash."]),
    ("Keep i.e. and etc. inside. Next one!", ["Keep i.e. and etc. inside.", "Next one!"]),
    ("Run `make proto. now` then stop. Done.", ["Run `make proto. now` then stop.", "Done."]),
    ("See README.md for v1.2 details. Then go.", ["See README.md for v1.2 details.", "Then go."]),
    ("`make test` is gone; run `just test`.", ["`make test` is gone; run `just test`."]),
    ("- use uv\n- never pip", ["use uv", "never pip"]),
    # a sentence that ends inside the bracket it closes, unless the bracket holds all there is or it goes on
    ("The cache is rebuilt on start (it used to be lazy.) The lock is removed after.",
     ["The cache is rebuilt on start (it used to be lazy.)", "The lock is removed after."]),
    ("Retry once (really!) Then stop.", ["Retry once (really!)", "Then stop."]),
    ("Keep it short (e.g. one line.) and then go on.", ["Keep it short (e.g. one line.) and then go on."]),
    ("(1.) First item here.", ["(1.) First item here."]),
])
def test_sentences_end_where_sentences_end(text: str, want: list[str]) -> None:
    assert sentences(text) == want


@pytest.mark.parametrize(("text", "want"), [
    ("Всегда запускай линтер.", ["всегда", "запускай", "линтер"]),       # a script with spaces, not Latin
    ("Tüm projelerimde Türkçe cevap ver", ["tüm", "projelerimde", "türkçe", "cevap", "ver"]),  # whole, not "rk"
    ("Le test échoue sur src/app.py v1.2", ["le", "test", "échoue", "sur", "src/app.py", "v1.2"]),
    ("Η δοκιμή αποτυγχάνει", ["η", "δοκιμή", "αποτυγχάνει"]),
    ("数据库迁移 fails", ["fails", "数据", "据库", "库迁", "迁移"]),                 # character pairs
])
def test_words_of_every_script(text: str, want: list[str]) -> None:
    """Words were ASCII letters only: a sentence in Russian had none, so the observer took it for an empty one and
    dropped it (a rule, a cause), and "Türkçe" was the words "t", "rk" and "e"."""
    assert tokens(text) == want
    assert content_words("Никогда не коммить напрямую в ветку релиза.")


@pytest.mark.parametrize(("text", "want"), [
    ("we use pnpm", "We use pnpm"),
    ("test_x must stay skipped", "test_x must stay skipped"),
    ("pnpm is the package manager", "pnpm is the package manager"),
    ("parseDate() returns UTC", "parseDate() returns UTC"),
    ("never edit generated files", "Never edit generated files"),
])
def test_identifiers_keep_their_case(text: str, want: str) -> None:
    assert capitalised(text) == want


# ------------------------------------------------------------------------------- statements


@pytest.mark.parametrize(("prompt", "want"), [
    ("We prefer small PRs, e.g. one feature per PR.", [("rule", "We prefer small PRs, e.g. one feature per PR")]),
    ("test_cache_key must never be skipped on CI.", [("rule", "test_cache_key must never be skipped on CI")]),
    ("`make test` is gone; from now on run `just test`.",
     [("rule", "`make test` is gone; from now on run `just test`")]),
    ("We chose Postgres over Mongo. Because we need transactions across invoices.",
     [("choice", "We chose Postgres over Mongo: because we need transactions across invoices")]),
    ("Let's pause the billing migration until finance signs off.",
     [("status", "Let's pause the billing migration until finance signs off")]),
    ("FYI the integration tests need Docker running.", [("fact", "The integration tests need Docker running")]),
    ("Invoice totals need VAT rounding.", []),
    ("FYI the flaky test was caused by the shared tmp dir; we isolated it with tmp_path.",
     [("fact", "The flaky test was caused by the shared tmp dir; we isolated it with tmp_path")]),
    ("I'd rather you not add comments to obvious code.", [("rule", "I'd rather you not add comments to obvious code")]),
    ("Use pnpm for all installs.", [("rule", "Use pnpm for all installs")]),
    ("Use the staging DB for this test", []),
    ("Can you use pnpm instead of npm?", []),
    # a question, its mark left out (an unseen project's key row as the user's decision)
    ("Could we list the options and what we picked (I'd go with the cache now as a simple improvement)", []),
    # what is to happen once something is done, not where work stands (an unseen project's "status")
    ("When you are done with the release, dispatch the review agents and fix their feedback", []),
    ("Once the billing migration is done, drop the old table.", []),
])
def test_what_a_prompt_states(prompt: str, want: list[tuple[str, str]]) -> None:
    assert statements(prompt) == want


# -------------------------------------------------------------------------------- subjects


@pytest.mark.parametrize(("text", "must"), [
    ("We use npm for installs", {"cmd:npm"}),
    ("Run the tests with `make test`", {"cmd:make test"}),
    ("Never edit src/gen/*.pb.go by hand, run make proto", {"file:src/gen/*.pb.go", "cmd:make proto"}),
    ("Set MAX_WORKERS=4 in prod", {"set:MAX_WORKERS"}),
    ("Tests need TZ=UTC", {"set:TZ"}),
    ("Paused the billing migration", {"work:billing migration"}),
    ("The DBA approved, resume the invoices schema migration.", {"work:invoices migration schema"}),
    ("cache_key() ignored tenant_id", {"id:cache_key", "id:tenant_id"}),
    ("Moved CI from Jenkins to GitHub Actions", {"cmd:jenkins", "cmd:github actions"}),
    ("PAY-123 is blocked on legal", {"ticket:PAY-123"}),
])
def test_subjects_name_the_things_a_memory_is_about(text: str, must: set[str]) -> None:
    assert must <= subjects(text)


def test_cue_words_and_negations() -> None:
    for text in ("From now on use pnpm", "npm is no longer used", "Use yarn instead of npm", "`make test` is gone",
                 "We switched to ruff", "Resumed the billing migration", "Actually, run it with -x"):
        assert supersedes_something(text), text
    for text in ("Use pnpm for installs", "Run the tests with pytest", "Fixed the parser crash"):
        assert not supersedes_something(text), text
    assert negated("Use pnpm, not npm") == {"cmd:npm"}
    assert is_status("The billing migration is paused") and not is_status("Fixed the billing bug")
    # the work is named within its clause: a name said to the reader is none ("Dmytro, the implementation is
    # done and ready for review" was a key row of an unseen project)
    assert not is_status("Dmytro, the implementation is done and ready for review.")
    assert is_status("Dmytro, the billing migration is done and ready for review.")


# ---------------------------------------------------------------------------------- layers


@pytest.mark.parametrize(("type_", "title", "layer"), [
    ("decision", "We use pnpm, never npm", RULE),
    ("decision", "Never edit generated files, run make proto", RULE),
    ("decision", "We chose Postgres over Mongo because we need transactions", KEY),
    ("decision", "Paused the billing migration until Q3", KEY),
    ("bugfix", "Fixed the upload crash", KEY),
    ("discovery", "Explored totals.py: how VAT is rounded", LOG),
    ("discovery", "parse_date fails when TZ is unset", KEY),
    ("change", "Changed totals.py: tidy imports", LOG),
    ("change", "Changed cache.py: the cause was cache_key() ignoring tenant_id", KEY),
    ("feature", "Added export.py", LOG),
    ("security_alert", "API keys were logged in plain text", KEY),
])
def test_layers(type_: str, title: str, layer: str) -> None:
    assert classify(type_, title)[0] == layer


def test_importance_puts_explained_fixes_and_security_first() -> None:
    plain = classify("discovery", "Totals are computed in totals.py")[1]
    cause = classify("bugfix", "Fixed the crash: parse_date ignored the timezone")[1]
    alert = classify("security_alert", "Secrets were logged")[1]
    assert alert > cause > plain


# ---------------------------------------------------------------------------- supersession


def mem(i: int, title: str, type_: str = "decision", at: float | None = None) -> Memory:
    layer = classify(type_, title)[0]
    return Memory.of(i, type_, layer, title, float(i if at is None else at))


@pytest.mark.parametrize(("old", "new"), [
    ("We use npm for package installs", "Use pnpm, not npm"),
    ("We use npm for package installs", "From now on use pnpm for installs"),
    ("Run the tests with `make test`", "`make test` is gone; run `just test` from now on"),
    ("Deploy with `fab deploy`", "We switched deployments from fab to `kubectl apply`"),
    ("Always format with black", "Use ruff format instead of black from now on"),
])
def test_a_correction_replaces_the_rule_on_the_same_subject(old: str, new: str) -> None:
    assert replaces(mem(2, new), mem(1, old))


@pytest.mark.parametrize(("old", "new"), [
    ("We use npm for package installs", "Always run ruff before committing"),
    ("Never edit generated files, run make proto", "From now on write tests first"),
    ("Use pnpm, not npm", "We use npm for package installs"),  # older and newer swapped below
])
def test_unrelated_rules_and_older_statements_replace_nothing(old: str, new: str) -> None:
    assert not replaces(mem(1, new), mem(2, old))  # the "new" one is older here, or unrelated


def test_a_status_replaces_the_last_status_of_the_same_workstream() -> None:
    paused = mem(1, "Paused the billing migration until finance signs off")
    resumed = mem(2, "Resumed the billing migration")
    other = mem(3, "Paused the search rewrite")
    assert replaces(resumed, paused)
    assert not replaces(other, resumed)


def test_a_changed_setting_replaces_the_old_fact_but_fixes_stay() -> None:
    old = mem(1, "MAX_WORKERS is set to 4 in the worker config", "discovery")
    assert replaces(mem(2, "MAX_WORKERS is now 8 after the load test", "discovery"), old)
    assert replaces(mem(3, "Set MAX_WORKERS=16 for the batch host", "discovery"), old)
    fix1 = mem(4, "Fixed parse_date: it ignored the timezone", "bugfix")
    assert not replaces(mem(5, "Fixed parse_date again: it now handles DST", "bugfix"), fix1)


# --------------------------------------------------------------------------- near-duplicates


def test_near_duplicates_same_words_and_identifiers() -> None:
    w = duplicates.words_of
    assert duplicates.signature("bugfix", "Fixed `pytest` failure: assert 3 == 4") == \
        duplicates.signature("bugfix", "Fixed `pytest` failure: assert 5 == 4")
    assert duplicates.similar(w("Explored cache.py: how does the cache key work"),
                              w("Explored cache.py: How does the cache key work?"))
    assert not duplicates.similar(w("Always follow rule 3 of module m3"), w("Always follow rule 4 of module m4"))
    assert not duplicates.similar(w("Fixed the parser"), w("Fixed the lexer"))
    assert duplicates.signature("note", "Note") is None  # too short to call anything its duplicate


# ------------------------------------------------------------------------------- explained


def test_what_the_agent_explained_is_sorted_by_role() -> None:
    said = ("Let me look at the cache first. The cross-tenant hits came from cache_key() ignoring tenant_id. "
            "I added tenant_id to the key and the test now passes. The date tests need TZ=UTC: they compare "
            "against local midnight. I chose Redis over Memcached because we need per-key TTLs. Want me to open a PR?")
    roles = {u.text: judge(u, speaker="agent", origin="final", last=True).role for u in units(said)}
    assert roles["The cross-tenant hits came from cache_key() ignoring tenant_id."] == "rootcause"
    assert roles["I added tenant_id to the key and the test now passes."] == "fix"
    assert roles["I chose Redis over Memcached because we need per-key TTLs."] == "decision"
    assert roles["The date tests need TZ=UTC: they compare against local midnight."] in ("gotcha", "rootcause")
    assert roles["Let me look at the cache first."] == "noise"  # narration
    assert roles["Want me to open a PR?"] == "noise"  # a question


def rule(i: int, text: str) -> Memory:
    """A rule as the rules observer stores one (type decision, concept pattern)."""
    return Memory.of(i, "decision", classify("decision", text, concepts=["pattern"])[0], text, float(i))


@pytest.mark.parametrize(("old", "new", "replaced"), [
    ("We use yarn for everything", "Actually, don't use yarn, use pnpm", True),
    ("Lint with flake8", "Scratch that: use ruff instead of flake8", True),
    ("CI runs on Jenkins", "We moved from Jenkins to GitHub Actions for CI", True),
    ("Use requests for HTTP calls", "Stop using requests; httpx from now on", True),
    ("The payments refactor is on hold until the API team ships v2", "We are back on the payments refactor", True),
    ("Deploys happen only on Tuesdays", "Deploys happen only on Thursdays from now on", True),
    ("Use 4 spaces, not tabs, in the YAML files", "Use 2 spaces in the YAML files from now on", True),
    ("Never edit generated files, run make proto", "make proto is gone; run buf generate instead", True),
    ("We use npm for installs", "We use yarn for installs", True),
    ("We target Python 3.10", "We target Python 3.12 from now on", True),
    # a new rule that says "from now on" adds to the others; fillers that add up do not replace
    ("Run the tests before committing", "From now on, always run ruff before committing", False),
    ("Run `make test` before pushing", "From now on run `make lint` before pushing", False),
    ("Write docs for every public function", "From now on write tests for every bug fix", False),
    ("Use httpx for HTTP", "From now on use pytest-xdist for the test suite", False),
    ("Always use Decimal for money", "From now on use UTC timestamps everywhere", False),
    ("Always rebase, never merge main into feature branches", "Keep commits small", False),
    ("We decided to drop Python 3.9 support because it is EOL", "We use uv, not pip", False),
])
def test_which_rules_a_new_rule_replaces(old: str, new: str, replaced: bool) -> None:
    assert replaces(rule(2, new), rule(1, old)) is replaced


def test_a_role_model_that_cannot_be_read_is_said_in_the_log_and_cue_words_take_over(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from kenning.observer.roles import model

    damaged = tmp_path / "roles.bin"
    damaged.write_bytes(b"not a model")
    with caplog.at_level("WARNING", logger="kenning.observer"):
        assert model._load(str(damaged)) is None
        assert model._load(str(tmp_path / "missing.bin")) is None
    said = [r.getMessage() for r in caplog.records]
    assert any("roles.bin" in m and "cue words" in m for m in said), said
    assert any("missing.bin" in m for m in said), said


def test_a_decision_is_replaced_by_a_memory_that_switched_away_from_what_it_chose() -> None:
    chose = mem(1, "We'll use `createTreeCollection` and `TreeView.` components from the vendor docs.")
    switched = Memory.of(2, "bugfix", "key", "The fix was switching from the styled `TreeView` components (which "
                         "need a provider) to the unstyled ones of `@ark-ui/react/tree-view`", 2.0, kind="fix")
    assert replaces(switched, chose)
    assert replaces(Memory.of(3, "bugfix", "key", "Replaced `createTreeCollection` with a plain list of nodes",
                              3.0, kind="fix"), chose)
    # something else left, or the same thing kept: nothing replaced; a fix is never replaced this way
    assert not replaces(Memory.of(4, "bugfix", "key", "Switched from `memcached` to `valkey` for sessions", 4.0,
                                  kind="fix"), chose)
    assert not replaces(Memory.of(5, "bugfix", "key", "The `TreeView` now expands the selected node", 5.0,
                                  kind="fix"), chose)
    # what the decision itself turned away from: the later memory agrees with it
    agreed = Memory.of(8, "decision", "key", "The plan installs with `pnpm` instead of `npm`, because the lock file "
                       "is pnpm's", 8.0, kind="decision")
    assert not replaces(Memory.of(9, "bugfix", "key", "The CI job now installs with `pnpm` instead of `npm`",
                                  9.0, kind="fix"), agreed)
    fixed = Memory.of(6, "bugfix", "key", "Fixed the `TreeView` keys: each node has its path as key", 6.0, kind="fix")
    assert not replaces(Memory.of(7, "bugfix", "key", "Switched from `TreeView` to `List` in the sidebar", 7.0,
                                  kind="fix"), fixed)
