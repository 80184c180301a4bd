"""Memories next to the prompt: gating, relevance threshold, exclusions, rendering.

A real database built by the migrations, rows stored with the repository functions, and the
real keyword search of ``kenning.search.service`` (the worker adds embeddings on top of it).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kenning.context import prompt as pc
from kenning.records import ObservationDraft
from kenning.search.service import search
from kenning.store import repo
from kenning.store.db import open_db

PROJECT = "invoice-api"
T0 = time.mktime((2024, 3, 4, 9, 15, 0, 0, 0, -1))
ROW = re.compile(r"^#(\d+) (\d{4}-\d\d-\d\d) (\S+) (.+)$")


class Memory:
    def __init__(self, tmp: Path) -> None:
        self.conn = open_db(str(tmp / "kenning.db"))
        self.sessions: dict[tuple[str, str], int] = {}

    def session(self, name: str, project: str = PROJECT, at: float = T0) -> int:
        if (name, project) not in self.sessions:
            with repo.transaction(self.conn):
                self.sessions[(name, project)] = repo.upsert_session(
                    self.conn, platform="claude-code", agent_session_id=name, project=project,
                    project_root=f"/work/{project}", cwd=f"/work/{project}", at=at)
        return self.sessions[(name, project)]

    def observe(self, title: str, narrative: str = "", *, session: str = "past", project: str = PROJECT,
                kind: str = "discovery", at: float = T0, status: str = "active",
                recorded_at: float | None = None) -> int:
        sid = self.session(session, project)
        with repo.transaction(self.conn):
            oid = repo.insert_observation(self.conn, sid, project, ObservationDraft(
                type=kind, title=title, narrative=narrative, created_at=at), "rules", recorded_at or at)
            assert oid is not None
            if status != "active":
                self.conn.execute("UPDATE observations SET status = ? WHERE id = ?", (status, oid))
        return oid

    def search(self, query: str, **kw: Any) -> list[Any]:
        return search(self.conn, query, **kw)

    def build(self, text: str, project: str = PROJECT, **kw: Any) -> tuple[str, list[pc.Pick]]:
        args: dict[str, Any] = {"limit": 5, "min_relevance": 0.5, "min_similarity": 0.5}
        args.update(kw)
        return pc.build(self.conn, text, project, keyword_search=self.search, **args)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path)
    # Background the relevance weights are computed against: many notes about tests and files.
    for i in range(30):
        m.observe(f"Ran the test suite for module {i}", f"The tests in file {i} pass after the change.",
                  session=f"bg{i % 5}", at=T0 - 3600 - i)
    yield m
    m.conn.close()


def ids(picks: list[pc.Pick]) -> list[int]:
    return [p.hit.id for p in picks]


# ------------------------------------------------------------------------- gating

def test_worth_asking() -> None:
    assert pc.worth_asking("x" * 20, 20)
    assert not pc.worth_asking("x" * 19, 20)
    assert not pc.worth_asking("   short prompt here   ", 20)  # whitespace does not count
    assert not pc.worth_asking("<task-notification><task-id>a</task-id> finished </task-notification>", 20)
    assert not pc.worth_asking("  \n<task-notification>done, with a long enough text</task-notification>", 20)
    assert pc.worth_asking("Please look at the <task-notification> tag handling", 20)


# ---------------------------------------------------------------------- relevance

def test_coverage_uses_the_index_stemmer_and_rarity(mem: Memory) -> None:
    rare = mem.observe("parse_invoice fails on empty customer records", "It crashed in parse_invoice.")
    common = mem.observe("Ran the test suite again", "All tests pass.")
    rel = pc.Relevance(mem.conn, "Why is the parse_invoice test failing?")
    cov = rel.coverage(pc.texts_of(mem.conn, [rare, common]))
    # "failing" matches "fails" (porter); parse_invoice is rare, "test" is everywhere.
    assert cov[rare] > 0.6
    assert cov[common] < 0.3
    assert 0 <= cov[common] < cov[rare] <= 1


def test_prompt_of_stopwords_or_unknown_words_covers_nothing(mem: Memory) -> None:
    oid = mem.observe("Invoice totals round VAT per line")
    rel = pc.Relevance(mem.conn, "write a haiku about the ocean")
    assert rel.coverage(pc.texts_of(mem.conn, [oid])) == {oid: 0.0}


@dataclass
class FakeHit:
    id: int
    session_id: int
    similarity: float | None = None
    kind: str = "observation"
    type: str = "discovery"
    title: str = "t"
    created_at: float = T0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def test_select_keeps_search_order_threshold_limit_and_exclusions(mem: Memory) -> None:
    a = mem.observe("VAT rounding of invoice totals uses Decimal", session="s1")
    b = mem.observe("Invoice totals: VAT computed per line, rounded half up", session="s2")
    c = mem.observe("Unrelated: the CI cache key", session="s3")
    d = mem.observe("Same invoice totals VAT rounding topic again", session="s4")
    sid = mem.session("s1")
    hits = [FakeHit(b, 2), FakeHit(c, 3), FakeHit(a, sid), FakeHit(d, 4)]
    rel = pc.Relevance(mem.conn, "How are VAT and invoice totals rounded?")
    got = pc.select(mem.conn, rel, hits, limit=5, min_relevance=0.5, min_similarity=0.5)
    assert ids(got) == [b, a, d]  # the order given, the unrelated one dropped
    assert ids(pc.select(mem.conn, rel, hits, limit=2, min_relevance=0.5, min_similarity=0.5)) == [b, a]
    assert ids(pc.select(mem.conn, rel, hits, limit=5, min_relevance=0.5, min_similarity=0.5,
                         exclude={b}, exclude_session=sid)) == [d]
    # By meaning alone: no shared word, but similar enough.
    hits = [FakeHit(c, 3, similarity=0.62), FakeHit(a, sid, similarity=0.2)]
    other = pc.Relevance(mem.conn, "something else entirely here")
    assert ids(pc.select(mem.conn, other, hits, limit=5, min_relevance=0.5, min_similarity=0.5)) == [c]
    # Threshold 0: every candidate is relevant; threshold 1: only full coverage.
    assert len(pc.select(mem.conn, rel, [FakeHit(c, 3)], limit=5, min_relevance=0.0, min_similarity=1.0)) == 1
    assert pc.select(mem.conn, rel, [FakeHit(c, 3)], limit=5, min_relevance=1.0, min_similarity=1.0) == []


def test_keyword_search_uses_only_the_selective_terms(mem: Memory) -> None:
    mem.observe("parse_invoice fails on empty customer records")
    rel = pc.Relevance(mem.conn, "Run the test suite for parse_invoice and the unheardof module")
    # "test", "suite", "module", "Run" are in most notes; "unheardof" in none: neither can find anything.
    assert rel.search_text() == "parse_invoice"
    assert pc.Relevance(mem.conn, "Run the test suite for this module again").search_text() == ""
    assert rel.cap == 20  # 5% of ~31 observations, but at least 20


class FakeVectors:
    """The vector index's interface: nearest(text, k, kinds, project) -> [(kind, id, similarity)]."""

    def __init__(self, answers: list[tuple[str, int, float]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def nearest(self, text: str, *, k: int, kinds: Any = ("observation",), project: str | None = None) -> Any:
        self.asked.append(text)
        return self.answers[:k]


def test_hybrid_candidates_by_meaning_are_fused_and_filtered(mem: Memory) -> None:
    vat = mem.observe("Invoice totals round VAT per line", at=T0 + 1)
    poem = mem.observe("Seaside rhymes for the release notes", at=T0 + 2)   # shares no word with the prompt
    far = mem.observe("Unrelated cache note", at=T0 + 3)
    elsewhere = mem.observe("Ocean poem in another project", project="other-project")
    old = mem.observe("Ocean poem, superseded", status="superseded")
    vectors = FakeVectors([("observation", poem, 0.71), ("observation", elsewhere, 0.9),
                           ("observation", old, 0.8), ("observation", far, 0.3), ("summary", 1, 0.99)])
    text, picks = mem.build("Write a haiku about the ocean and the moon, please", vectors=vectors)
    assert ids(picks) == [poem]  # by meaning; other project, inactive, too dissimilar, summaries: out
    assert vectors.asked == ["Write a haiku about the ocean and the moon, please"]  # the whole prompt
    assert picks[0].hit.similarity == 0.71 and f"#{poem} " in text
    # Both lists: a note found by keywords and by meaning ranks first.
    vectors = FakeVectors([("observation", poem, 0.6), ("observation", vat, 0.55)])
    _t, picks = mem.build("How do invoice totals round VAT?", vectors=vectors)
    assert ids(picks) == [vat, poem]


def test_candidates_keep_the_project_and_fused_order(mem: Memory) -> None:
    a = mem.observe("a")
    b = mem.observe("b")
    c = mem.observe("c", project="other-project")
    got = pc.candidates(mem.conn, PROJECT, [a, c], {b: 0.9, a: 0.5})
    assert [x.id for x in got] == [a, b]  # a is in both lists
    assert got[1].similarity == 0.9 and got[0].similarity == 0.5
    assert pc.candidates(mem.conn, PROJECT, [], {}) == []


# --------------------------------------------------------------------------- build

def test_build_renders_compact_rows_with_ids(mem: Memory) -> None:
    oid = mem.observe("Invoice totals round VAT per line with Decimal", "Rounding happens per invoice line.",
                      kind="decision", at=T0 + 60)
    text, picks = mem.build("Why do invoice totals round the VAT per line?")
    assert ids(picks) == [oid]
    lines = text.splitlines()
    assert lines[0] == pc.OPEN and lines[-1] == pc.CLOSE
    rows = [ROW.match(x) for x in lines[1:-1] if ROW.match(x)]
    assert [(int(m[1]), m[2], m[3]) for m in rows if m] == [
        (oid, time.strftime("%Y-%m-%d", time.localtime(T0 + 60)), "⚖️")]
    assert "kenning show <ID>" in text
    assert len(text) < 10_000
    assert picks[0].as_dict()["coverage"] >= 0.5


def test_nothing_relevant_gives_nothing(mem: Memory) -> None:
    mem.observe("Invoice totals round VAT per line")
    assert mem.build("Write a haiku about the ocean and the moon, please") == ("", [])
    assert mem.build("Run the tests for this module file and tell me") == ("", [])  # common words only


def test_other_projects_inactive_and_sensitive_elsewhere_are_never_given(mem: Memory) -> None:
    mine = mem.observe("Invoice totals round VAT per line", kind="sensitive")
    mem.observe("Invoice totals round VAT per line in billing", project="other-project")
    mem.observe("Invoice totals round VAT per line (old)", status="superseded")
    mem.observe("Invoice totals round VAT per line (wrong)", status="retracted")
    _text, picks = mem.build("Invoice totals round VAT per line?")
    assert ids(picks) == [mine]  # its own project's sensitive note stays visible there
    _text, picks = mem.build("Invoice totals round VAT per line?", project="other-project")
    assert [p.hit.project for p in picks] == ["other-project"]
    assert all(p.hit.type != "sensitive" for p in picks)


def test_this_session_and_its_start_index_are_left_out(mem: Memory) -> None:
    old = mem.observe("Invoice totals round VAT per line", at=T0 - 7200, recorded_at=T0 - 7200)
    mem.session("now", at=T0)  # started after `old` was recorded: `old` was in its start index
    later = mem.observe("Invoice totals: VAT rounding moved to Decimal", session="elsewhere", at=T0 + 60,
                        recorded_at=T0 + 60)
    own = mem.observe("Invoice totals VAT rounding checked in this session", session="now", at=T0 + 90)
    _text, picks = mem.build("How do invoice totals round VAT?", agent_session_id="now")
    assert ids(picks) == [later]
    assert old not in ids(picks) and own not in ids(picks)
    # A session whose start index was small (context_observations=0) is told about `old`.
    _text, picks = mem.build("How do invoice totals round VAT?", agent_session_id="now", start_count=0)
    assert sorted(ids(picks)) == sorted([old, later])
    # An unknown session (not ingested yet): nothing to exclude.
    _text, picks = mem.build("How do invoice totals round VAT?", agent_session_id="unknown")
    assert sorted(ids(picks)) == sorted([old, later, own])


def test_not_given_twice_in_one_session(mem: Memory) -> None:
    a = mem.observe("Invoice totals round VAT per line", at=T0 + 10)
    given = pc.Given()
    _t, picks = mem.build("How do invoice totals round VAT?", agent_session_id="s", given=given)
    assert ids(picks) == [a]
    assert mem.build("How do invoice totals round VAT?", agent_session_id="s", given=given) == ("", [])
    b = mem.observe("Invoice totals round VAT of refunds half up as well", at=T0 + 20)
    _t, picks = mem.build("How do invoice totals round VAT?", agent_session_id="s", given=given)
    assert ids(picks) == [b]
    _t, picks = mem.build("How do invoice totals round VAT?", agent_session_id="other", given=given)
    assert sorted(ids(picks)) == sorted([a, b])


def test_given_is_bounded() -> None:
    g = pc.Given(max_sessions=3)
    for i in range(5):
        g.add(f"s{i}", [i])
    assert g.get("s0") == set() and g.get("s1") == set()
    assert g.get("s4") == {4}
    g.add("s2", [9])
    g.add("s5", [5])  # evicts the least recently used: s3
    assert g.get("s3") == set() and g.get("s2") == {2, 9}


def test_hostile_prompts_never_raise(mem: Memory) -> None:
    mem.observe("Invoice totals round VAT per line")
    for text in ['"unbalanced (quote', "NEAR(a b) OR -x *", "settings.json", "総計の丸め 発票 VAT", "x" * 10_000,
                 "\x00\x01 control", "'; DROP TABLE observations; --"]:
        out, picks = mem.build(text)
        assert isinstance(out, str) and isinstance(picks, list)
    assert mem.conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0


def test_temporary_tables_work_on_a_read_only_connection(mem: Memory, tmp_path: Path) -> None:
    oid = mem.observe("Invoice totals round VAT per line")
    ro = sqlite3.connect(f"file:{tmp_path / 'kenning.db'}?mode=ro", uri=True)
    try:
        rel = pc.Relevance(ro, "invoice totals VAT rounding")
        assert rel.coverage(pc.texts_of(ro, [oid]))[oid] > 0.9
        rel2 = pc.Relevance(ro, "a second prompt on the same connection about VAT")  # tables reused
        assert rel2.coverage(pc.texts_of(ro, [oid]))[oid] > 0
    finally:
        ro.close()


def test_a_word_unseen_before_is_found_once_a_note_holds_it(mem: Memory) -> None:
    """Document frequencies are cached, but "never seen" only until the next note is stored."""
    assert pc.Relevance(mem.conn, "How does reconcile_ledger work?").dfs == [0, 0]
    oid = mem.observe("reconcile_ledger rounds each ledger line first")
    rel = pc.Relevance(mem.conn, "How does reconcile_ledger work?")
    assert rel.dfs[0] == 1 and rel.search_text() == "reconcile_ledger"
    _text, picks = mem.build("How does reconcile_ledger work?")
    assert ids(picks) == [oid]


class SlowVectors(FakeVectors):
    def __init__(self, answers: list[tuple[str, int, float]], delay: float, fail: bool = False) -> None:
        super().__init__(answers)
        self.delay = delay
        self.fail = fail

    def nearest(self, text: str, *, k: int, kinds: Any = ("observation",), project: str | None = None) -> Any:
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("embedder crashed")
        return super().nearest(text, k=k, kinds=kinds, project=project)


def test_the_meaning_side_is_awaited_only_within_its_budget(mem: Memory) -> None:
    pc.Meaning.reset()
    vat = mem.observe("Invoice totals round VAT per line", at=T0 + 1)
    poem = mem.observe("Seaside rhymes for the release notes", at=T0 + 2)
    ask = "How do invoice totals round VAT? Also something about the sea"
    fast = pc.Meaning(SlowVectors([("observation", poem, 0.8)], 0.0), 1.0)
    _t, picks = mem.build(ask, meaning=fast)
    assert sorted(ids(picks)) == sorted([vat, poem]) and fast.state == "answered"
    slow = pc.Meaning(SlowVectors([("observation", poem, 0.8)], 0.5), 0.05)
    t0 = time.monotonic()
    _t, picks = mem.build(ask, meaning=slow)
    assert time.monotonic() - t0 < 0.4  # did not wait for the embedder
    assert ids(picks) == [vat] and slow.state == "timed out"  # keywords alone
    broken = pc.Meaning(SlowVectors([], 0.0, fail=True), 1.0)
    _t, picks = mem.build(ask, meaning=broken)
    assert ids(picks) == [vat] and broken.state == "failed"
    off = pc.Meaning(None, 1.0)
    mem.build(ask, meaning=off)
    assert off.state == "off"


def test_a_slow_embedder_is_not_awaited_until_it_is_fast_again(mem: Memory) -> None:
    pc.Meaning.reset()
    vat = mem.observe("Invoice totals round VAT per line", at=T0 + 1)
    ask = "How do invoice totals round VAT?"
    slow = SlowVectors([], 0.12)
    for _ in range(3):  # three lookups slower than the 50 ms budget
        m = pc.Meaning(slow, 0.05)
        mem.build(ask, meaning=m)
        assert m.state == "timed out"
        time.sleep(0.1)  # let them finish (and be timed)
    m = pc.Meaning(slow, 0.05)
    t0 = time.monotonic()
    _t, picks = mem.build(ask, meaning=m)
    assert m.state == "skipped: slow lately" and time.monotonic() - t0 < 0.05
    assert ids(picks) == [vat]  # keywords alone, at once
    time.sleep(0.15)
    fast = SlowVectors([], 0.0)
    for _ in range(6):  # fast lookups push the median back under the budget
        pc.Meaning._done(time.monotonic())
    m = pc.Meaning(fast, 0.05)
    mem.build(ask, meaning=m)
    assert m.state == "answered"
    # At most two lookups at once: a third is not even started.
    pc.Meaning.reset()
    stuck = SlowVectors([], 0.3)
    ms = [pc.Meaning(stuck, 0.01) for _ in range(3)]
    for m in ms:
        m.start(ask, k=5, project=PROJECT)
    assert [m.state for m in ms] == ["asked", "asked", "skipped: busy"]
    time.sleep(0.35)
    pc.Meaning.reset()


def test_a_rule_the_agent_proposed_is_labelled_next_to_the_prompt(mem: Memory) -> None:
    proposed = mem.observe("Always regenerate the invoice schema before deploying", kind="decision")
    confirmed = mem.observe("The invoice schema lives in schema/invoice.json", kind="discovery")
    mem.conn.execute("UPDATE observations SET kind = 'proposed', layer = 'key' WHERE id = ?", (proposed,))
    text, picks = mem.build("how do we regenerate the invoice schema?")
    assert proposed in ids(picks) and confirmed in ids(picks), text
    lines = {int(m.group(1)): m.group(4) for m in map(ROW.match, text.splitlines()) if m}
    assert lines[proposed].endswith("(proposed by the agent, not confirmed)"), text
    assert "proposed" not in lines[confirmed], text
