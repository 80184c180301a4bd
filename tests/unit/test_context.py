"""The SessionStart index, rendered from a real SQLite database built by the migrations.

Rows are stored with the repository functions the worker uses (so layers, supersession and
near-duplicate groups are computed as in production); the text is checked the way the agent
will read it: one note when nothing is known, otherwise a header, a legend, the economics, the
standing rules, the key memories, the recent work by day, where the latest work stands, and a
footer counting what was left out, within the budgets, always inside the tags.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from kenning.context.index import age
from kenning.context.session_start import CLOSE, OPEN, build, build_for_cwd, empty_note
from kenning.paths import Paths
from kenning.project import canonical
from kenning.records import ObservationDraft, Outcome, SummaryDraft
from kenning.settings import Settings
from kenning.store import repo
from kenning.store.db import open_db
from kenning.store.identity import APPLICATION_ID, ForeignDatabase

PROJECT = "invoice-api"
# 2024-03-04 09:15:00 in the local time zone: rendered times are local, so are the expectations.
BASE = time.mktime((2024, 3, 4, 9, 15, 0, 0, 0, -1))
NOW = BASE + 3 * 86_400
DAY = 86_400
ROW = re.compile(r"^#(\d+) (\d+(?:m|h|d|w|mo|y)) (\S+) (.+?)(?: \(×(\d+)\))?$")
SUMMARY_ROW = re.compile(r"^S(\d+) (\d+(?:m|h|d|w|mo|y)) 📋 (.+)$")
RULES = "## Standing rules and preferences (follow them; newest version only)"
KEYS = "## Key decisions, gotchas and root causes"
RECENT = "## Recent work (oldest first)"
# Distinct words, so that titles built from them are not near-duplicates of each other.
_WORD_LIST = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
              "quebec "
         "romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dahlia elm fern ginger hazel "
         "iris jasmine kale laurel maple nutmeg olive pepper quince rose sage thyme umber violet willow yarrow zinnia "
         "acorn birch cobalt dune ember flint granite harbor island jungle kettle lantern meadow nectar orchid "
         "prairie quartz ripple")
WORDS = _WORD_LIST.split()


def day(t: float) -> str:
    return time.strftime("%Y-%m-%d (%a)", time.localtime(t))


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "kenning.db"))
    yield c
    c.close()


def session(conn: sqlite3.Connection, name: str, at: float, project: str = PROJECT) -> int:
    with repo.transaction(conn):
        return repo.upsert_session(conn, platform="claude-code", agent_session_id=name, project=project,
                                   project_root=f"/work/{project}", cwd=f"/work/{project}", at=at)


def observe(conn: sqlite3.Connection, sid: int, title: str, at: float, kind: str = "change", *,
            project: str = PROJECT, source_tokens: int = 0, status: str = "active", facts: list[str] | None = None,
            concepts: list[str] | None = None, role: str = "") -> int:
    """Store one observation the way the worker stores an observer's outcome (``kind``: its type; ``role``: the
    kind the observer judged, "rootcause", "fix" …)."""
    with repo.transaction(conn):
        [oid] = repo.store_outcome(conn, sid, project, Outcome(observations=[ObservationDraft(
            type=kind, title=title, created_at=at, narrative=title, source_tokens=source_tokens,
            facts=facts or [], concepts=concepts or [], kind=role)]), "rules")
        if status != "active":
            conn.execute("UPDATE observations SET status = ? WHERE id = ?", (status, oid))
    return oid


def summarize(conn: sqlite3.Connection, sid: int, at: float, *, project: str = PROJECT, request: str = "",
              learned: str = "", completed: str = "", next_steps: str = "", source_tokens: int = 0,
              files_modified: list[str] | None = None, notes: str = "") -> int:
    with repo.transaction(conn):
        repo.upsert_summary(conn, sid, project, SummaryDraft(
            created_at=at, request=request, learned=learned, completed=completed, next_steps=next_steps,
            source_tokens=source_tokens, files_modified=files_modified or [], notes=notes), "rules", at)
    return int(conn.execute("SELECT id FROM session_summaries WHERE session_id = ?", (sid,)).fetchone()[0])


def render(conn: sqlite3.Connection, project: str = PROJECT, **settings: int) -> str:
    text = build(conn, Settings().replace(**settings), project, now=NOW)
    assert_well_formed(text)
    return text


def assert_well_formed(text: str) -> None:
    assert text.startswith(OPEN) and text.endswith(CLOSE)
    assert text.count(OPEN) == 1 and text.count(CLOSE) == 1


def obs_rows(text: str, section: str | None = None) -> list[tuple[int, str, str, str]]:
    lines = section_lines(text, section) if section else text.splitlines()
    return [(int(m[1]), m[2], m[3], m[4]) for m in (ROW.match(ln) for ln in lines) if m]


def section_lines(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    if heading not in lines:
        return []
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ") or not lines[i]), len(lines))
    return lines[start:end]


def summary_rows(text: str) -> list[int]:
    return [int(m[1]) for m in (SUMMARY_ROW.match(ln) for ln in text.splitlines()) if m]


# --------------------------------------------------------------------------------- empty


def test_empty_project_gets_exactly_the_one_line_note(conn: sqlite3.Connection) -> None:
    text = render(conn)
    assert text == empty_note(PROJECT)
    assert "\n" not in text
    assert PROJECT in text and "no memory" in text


def test_other_projects_memory_does_not_fill_an_empty_project(conn: sqlite3.Connection) -> None:
    other = session(conn, "o1", BASE, project="payroll")
    observe(conn, other, "Payroll secret sauce", BASE, project="payroll")
    summarize(conn, other, BASE + 60, project="payroll", request="Payroll work", learned="x")
    assert render(conn) == empty_note(PROJECT)


# -------------------------------------------------------------------------------- layers


def test_rules_first_then_key_memories_then_recent_work_by_day(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    c = observe(conn, sid, "Explored totals.py: how VAT is rounded", BASE, "discovery")
    a = observe(conn, sid, "Fixed the VAT rounding: totals rounded the sum instead of each line", BASE + DAY,
                "bugfix")
    b = observe(conn, sid, "We always round VAT per line, never on the total", BASE + DAY + 20, "decision")
    d = observe(conn, sid, "Added export.py", BASE + DAY + 3600, "feature")
    text = render(conn)
    lines = text.splitlines()
    assert lines.index(RULES) < lines.index(KEYS) < lines.index(RECENT)
    assert [r[0] for r in obs_rows(text, RULES)] == [b]
    assert [r[0] for r in obs_rows(text, KEYS)] == [a]
    assert [r[0] for r in obs_rows(text, RECENT)] == [c, d]  # routine work, oldest first
    # Every row shows its age; recent work is grouped by day.
    assert obs_rows(text, RULES)[0] == (b, age(NOW - BASE - DAY - 20), "⚖️",
                                        "We always round VAT per line, never on the total")
    assert obs_rows(text, RECENT)[0] == (c, "3d", "🔵", "Explored totals.py: how VAT is rounded")
    recent = section_lines(text, RECENT)
    assert recent.index(f"### {day(BASE)}") < recent.index(f"### {day(BASE + DAY)}")


def test_routine_work_never_displaces_rules_and_key_memories(conn: sqlite3.Connection) -> None:
    old = session(conn, "old", BASE - 20 * DAY)
    rule = observe(conn, old, "Never edit generated files, run make proto", BASE - 20 * DAY, "decision")
    cause = observe(conn, old, "Fixed upload crash: nginx client_max_body_size was 1m; raised to 50m",
                    BASE - 19 * DAY, "bugfix")
    for s in range(15):
        sid = session(conn, f"routine{s}", BASE + s * 3600)
        for i in range(8):
            observe(conn, sid, f"Changed handler{s}_{i}.py: tidy logging in module {s} part {i}",
                    BASE + s * 3600 + i * 60)
        summarize(conn, sid, BASE + s * 3600 + 900, request=f"Tidy logging in module {s}",
                  files_modified=[f"handler{s}.py"])
    text = render(conn)
    assert [r[0] for r in obs_rows(text, RULES)] == [rule]
    assert [r[0] for r in obs_rows(text, KEYS)] == [cause]
    assert len(text) <= Settings().context_max_chars
    assert re.search(r"^\d[\d,]* older or less important memories are not listed: search them", text, re.M)


def test_key_memories_rank_by_importance_then_recency(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    plain = observe(conn, sid, "Totals are computed in totals.py by invoice_total", BASE + DAY, "discovery")
    cause = observe(conn, sid, "Fixed the crash: parse_date ignored the timezone because of a naive datetime",
                    BASE, "bugfix")
    alert = observe(conn, sid, "API keys were logged in plain text by the request logger", BASE - DAY,
                    "security_alert")
    assert [r[0] for r in obs_rows(render(conn), KEYS)] == [alert, cause, plain]


def test_rules_have_their_own_budget_newest_first(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    ids = [observe(conn, sid, f"Always follow house rule number {i} about module m{i} carefully", BASE + i * 60,
                   "decision") for i in range(40)]
    text = render(conn, context_rules_chars=800)
    shown = [r[0] for r in obs_rows(text, RULES)]
    assert 0 < len(shown) < 40 and shown == ids[::-1][:len(shown)]  # newest first
    assert len("\n".join(section_lines(text, RULES))) <= 800 + 5
    assert f"{40 - len(shown)} older or less important memories are not listed" in text


def test_near_duplicates_are_one_row_with_their_count(conn: sqlite3.Connection) -> None:
    ids = []
    for i in range(11):
        sid = session(conn, f"q{i}", BASE + i * 600)
        ids.append(observe(conn, sid, "Explored cache.py: how does the cache key work", BASE + i * 600, "discovery"))
        summarize(conn, sid, BASE + i * 600 + 60, request="How does the cache key work?")
    text = render(conn)
    # Each session's own line tells its work: its routine rows are not listed besides.
    assert obs_rows(text, RECENT) == []
    assert len(summary_rows(text)) == 1  # the same question asked eleven times: one summary row
    assert text.count("How does the cache key work") == 1
    # Without the summaries, the routine rows are listed, the group once with its count.
    conn.execute("DELETE FROM session_summaries")
    text = render(conn)
    assert [r[0] for r in obs_rows(text, RECENT)] == [ids[-1]]  # the newest stands for the group
    assert f"#{ids[-1]} " in text and "(×11)" in text


def test_titles_are_one_line_and_bounded(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    oid = observe(conn, sid, "multi\nline   title\twith " + "x" * 400, BASE)
    [row] = obs_rows(render(conn))
    assert row[0] == oid and row[3].startswith("multi line title with x")
    assert len(row[3]) == 160 and row[3].endswith("…")


def test_braces_in_titles_are_printed_verbatim(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    observe(conn, sid, "Render {t} and {economics} in f-strings", BASE)
    text = render(conn)
    assert "Render {t} and {economics} in f-strings" in text
    assert text.count("Economics: ") == 1


def test_header_legend_and_footer(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    observe(conn, sid, "Something happened here", BASE)
    lines = render(conn).splitlines()
    assert lines[0] == OPEN
    assert lines[1].startswith(f"# Memory of {PROJECT} · {time.strftime('%a %Y-%m-%d', time.localtime(NOW))}")
    legend = lines[2]
    for part in ("📋 session", "🔴 bugfix", "🟣 feature", "✅ change", "🔵 discovery", "⚖️ decision"):
        assert part in legend
    assert lines[3].startswith("Economics: ")
    assert any("kenning show <ID>" in ln and "kenning search" in ln for ln in lines[-3:])
    assert not any("not listed" in ln for ln in lines)  # everything is listed


# ----------------------------------------------------------------------------- summaries


def test_summaries_are_rows_interleaved_with_their_sessions(conn: sqlite3.Connection) -> None:
    s1 = session(conn, "s1", BASE)
    o1 = observe(conn, s1, "First session work", BASE + 60)
    sum1 = summarize(conn, s1, BASE + 600, request="Round VAT per line", learned="Banker's rounding bites",
                     files_modified=["totals.py"])
    s2 = session(conn, "s2", BASE + 7200)
    o2 = observe(conn, s2, "Second session work", BASE + 7260)
    sum2 = summarize(conn, s2, BASE + 7800, request="Add the CSV export", learned="Export reuses totals",
                     completed="Export module added", next_steps="Wire an endpoint later",
                     files_modified=["export.py"])
    s3 = session(conn, "s3", BASE + 9000)
    o3 = observe(conn, s3, "Third session work, not summarized yet", BASE + 9060)
    text = render(conn)
    lines = text.splitlines()
    # The latest work (S2) is said once, under "Where we left off", not also as a line of recent work.
    assert summary_rows(text) == [sum1]
    pos = {name: next(i for i, ln in enumerate(lines) if ln.startswith(name)) for name in (f"S{sum1} ", f"#{o3} ")}
    # One line a session, oldest first; a session's routine rows only while it has no summary yet.
    assert pos[f"S{sum1} "] < pos[f"#{o3} "]
    assert f"#{o1} " not in text and f"#{o2} " not in text
    # What it was about → what came of it.
    assert f"S{sum1} {age(NOW - BASE - 600)} 📋 Round VAT per line → Banker's rounding bites" in lines
    tail = lines[lines.index(next(ln for ln in lines if ln.startswith("## Where we left off"))):]
    assert tail[0].startswith(f"## Where we left off (S{sum2}, ")
    assert "Worked on: Add the CSV export" in tail
    assert "Done: Export module added" in tail
    assert "Still open: Wire an endpoint later" in tail
    assert not any("Banker's rounding" in ln for ln in tail)


def test_where_we_left_off_names_commits_earlier_sessions_left_unpushed_on_their_branch(
        conn: sqlite3.Connection) -> None:
    """Two fixes committed on `hotfix` and not pushed, then a session on the lint set-up: said, with the branch.
    A push since, or the latest committing on that branch (its own state says it waits), and it is not said."""
    a = session(conn, "a", BASE)
    sa = summarize(conn, a, BASE + 600, request="WAL rotation skips nodes",
                   notes="State: committed 937984d fix: WAL rotation skipped for all nodes; not pushed (hotfix)")
    b = session(conn, "b", BASE + 3600)
    sb = summarize(conn, b, BASE + 4200, request="Messages dropped during checkpoints",
                   notes="State: committed fc47b12 fix: pause WAL writes during checkpoints; not pushed (hotfix)")
    c = session(conn, "c", BASE + 7200)
    summarize(conn, c, BASE + 7800, request="Add a make target for gofumpt", files_modified=["Makefile"],
              notes="State: not committed: Makefile")
    tail = render(conn).split("## Where we left off", 1)[1]
    line = next(ln for ln in tail.splitlines() if ln.startswith("Earlier sessions ended with commits not pushed: "))
    assert line.index(f"fc47b12 fix: pause WAL writes during checkpoints (S{sb}, ") < line.index(
        f"937984d fix: WAL rotation skipped for all nodes (S{sa}, "), line
    assert line.count(", on hotfix)") == 2, line
    # The latest commits on `hotfix` too: "State: …; not pushed (hotfix)" above says that branch waits.
    summarize(conn, c, BASE + 7800, request="Add a make target for gofumpt", files_modified=["Makefile"],
              notes="State: committed 1a2b3c4 Add a make target for gofumpt; not pushed (hotfix)")
    text = render(conn)
    assert "State: committed 1a2b3c4 Add a make target for gofumpt; not pushed (hotfix)" in text
    assert "commits not pushed" not in text, text
    # ... on another branch: the hotfix commits are still said.
    summarize(conn, c, BASE + 7800, request="Add a make target for gofumpt", files_modified=["Makefile"],
              notes="State: committed 1a2b3c4 Add a make target for gofumpt; not pushed (tooling)")
    assert "Earlier sessions ended with commits not pushed: fc47b12" in render(conn)
    # A pull request opened since (its branch had to be pushed, which the commands may not show): not said.
    summarize(conn, c, BASE + 7800, request="Add a make target for gofumpt", files_modified=["Makefile"],
              notes="State: committed 1a2b3c4 Add a make target for gofumpt; not pushed (tooling); PR #12 opened")
    assert "commits not pushed" not in render(conn)
    summarize(conn, c, BASE + 7800, request="Add a make target for gofumpt", files_modified=["Makefile"],
              notes="State: committed 1a2b3c4 Add a make target for gofumpt; not pushed (tooling)")
    # A push since (of any branch: it may have carried them): not said.
    with repo.transaction(conn):
        conn.execute("UPDATE session_summaries SET notes = ? WHERE session_id = ?",
                     ("State: committed fc47b12 fix: pause WAL writes during checkpoints; pushed (hotfix)", b))
    text = render(conn)
    assert "commits not pushed" not in text, text


def test_unpushed_commits_are_named_back_to_the_last_push_however_many_sessions_came_since(
        conn: sqlite3.Connection) -> None:
    """A commit stays unpushed until a push: five sessions of other work later it is still said (the newest
    three sessions with such commits by name, the rest counted)."""
    hot = summarize(conn, session(conn, "hot", BASE), BASE + 600, request="WAL rotation skips nodes",
                    notes="State: committed 937984d fix: WAL rotation skipped for all nodes; not pushed (hotfix)")
    for i in range(5):
        summarize(conn, session(conn, f"lint{i}", BASE + 3600 * (i + 1)), BASE + 3600 * (i + 1) + 600,
                  request=f"Tune the linter, step {i}", files_modified=[".golangci.yml"],
                  notes="State: not committed: .golangci.yml")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith("Earlier sessions ended with commits not"))
    assert f"937984d fix: WAL rotation skipped for all nodes (S{hot}, " in line and ", on hotfix)" in line, line
    for i in range(3):
        summarize(conn, session(conn, f"more{i}", BASE - 3600 * (i + 1)), BASE - 3600 * (i + 1) + 600,
                  request=f"Earlier fix {i}",
                  notes=f"State: committed {i}a2b3c4 fix: earlier fix {i}; not pushed (hotfix)")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith("Earlier sessions ended with commits not"))
    assert line.endswith("; and 1 earlier session"), line
    assert "earlier fix 2" not in line, line  # the oldest is the one counted


def test_where_we_left_off_names_what_earlier_sessions_left_uncommitted(conn: sqlite3.Connection) -> None:
    """A session ended with files not committed; later sessions worked elsewhere: said, as how it ended.
    A file a later session changed again is that session's business (its own state says it)."""
    a = session(conn, "a", BASE)
    summarize(conn, a, BASE + 600, request="Make checkout failures non-fatal", completed="checkout made non-fatal",
              files_modified=["src/git_ops.ts", "src/runner.ts"],
              notes="State: not committed: src/git_ops.ts, src/runner.ts")
    b = session(conn, "b", BASE + 3600)
    summarize(conn, b, BASE + 4200, request="Tidy the runner", completed="runner tidied",
              files_modified=["src/runner.ts"], notes="State: committed 1a2b3c4 Tidy the runner; not pushed")
    c = session(conn, "c", BASE + 7200)
    latest = summarize(conn, c, BASE + 7800, request="Add the score button", completed="button added",
                       files_modified=["web/score.tsx"], notes="State: committed 9f8e7d6 Add the score button")
    text = render(conn)
    tail = text[text.index("## Where we left off"):]
    line = next(ln for ln in tail.splitlines() if ln.startswith("Earlier sessions ended with changes not committed"))
    sid_a = conn.execute("SELECT id FROM session_summaries WHERE session_id = ?", (a,)).fetchone()[0]
    assert f"src/git_ops.ts (S{sid_a}, " in line, line
    assert "runner.ts" not in line, line  # changed again (and committed) later
    assert f"S{latest}" not in line
    # A push since: what was left before it was committed since, or dropped.
    with repo.transaction(conn):
        conn.execute("UPDATE session_summaries SET notes = ? WHERE session_id = ?",
                     ("State: committed 1a2b3c4 Tidy the runner; pushed (main)", b))
    assert "Earlier sessions ended with" not in render(conn)
    # Nothing left uncommitted before the latest: no such line.
    with repo.transaction(conn):
        conn.execute("UPDATE session_summaries SET notes = '' WHERE session_id = ?", (a,))
    assert "Earlier sessions ended with" not in render(conn)


def test_where_we_left_off_is_the_latest_work_not_the_latest_question(conn: sqlite3.Connection) -> None:
    work = session(conn, "work", BASE)
    summarize(conn, work, BASE + 600, request="Migrate invoices to the v2 schema", completed="Schema v2 migrated",
              next_steps="Backfill the archive table", files_modified=["migrations/0002_v2.sql"])
    for i in range(3):
        q = session(conn, f"question{i}", BASE + DAY + i * 600)
        summarize(conn, q, BASE + DAY + i * 600 + 60, request="What does the v2 schema look like?",
                  completed="Explained the schema")
    text = render(conn)
    tail = text[text.index("## Where we left off"):]
    assert "Worked on: Migrate invoices to the v2 schema" in tail and "Backfill the archive table" in tail
    assert "What does the v2 schema look like" not in tail


def test_summary_without_request_is_still_a_row(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    sm = summarize(conn, sid, BASE + 60, completed="Something got done")
    empty = summarize(conn, session(conn, "s2", BASE + 120), BASE + 180, files_modified=["a.py"])
    # (a later session's work is where we left off: these two are lines of recent work)
    summarize(conn, session(conn, "s3", BASE + 240), BASE + 300, request="Later work", files_modified=["b.py"])
    lines = render(conn).splitlines()
    assert f"S{sm} {age(NOW - BASE - 60)} 📋 Something got done" in lines
    assert f"S{empty} {age(NOW - BASE - 180)} 📋 Session" in lines


def test_context_sessions_budget_keeps_the_newest_summaries(conn: sqlite3.Connection) -> None:
    ids = []
    for i in range(12):
        sid = session(conn, f"s{i}", BASE + i * 3600)
        ids.append(summarize(conn, sid, BASE + i * 3600 + 60, request=f"Request number {i} about module m{i}",
                             learned=f"L{i}", files_modified=[f"m{i}.py"]))
    text = render(conn, context_sessions=10)
    assert summary_rows(text) == ids[2:-1]  # the newest is where we left off
    assert f"## Where we left off (S{ids[-1]}, " in text and "Learned: L11" in text


# -------------------------------------------------------------------- what is never shown


def test_other_projects_observations_never_appear(conn: sqlite3.Connection) -> None:
    mine = session(conn, "mine", BASE)
    other = session(conn, "other", BASE + 30, project="payroll")
    keep = observe(conn, mine, "Invoice work", BASE + 60)
    observe(conn, other, "PAYROLL-ONLY observation", BASE + 90, project="payroll")
    summarize(conn, other, BASE + 120, project="payroll", request="PAYROLL-ONLY request", learned="PAYROLL-ONLY")
    text = render(conn)
    assert "PAYROLL" not in text
    assert [r[0] for r in obs_rows(text)] == [keep]
    assert summary_rows(text) == []


def test_retracted_and_superseded_observations_are_not_shown(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    live = observe(conn, sid, "Still true", BASE + 60)
    observe(conn, sid, "RETRACTED memory", BASE + 120, status="retracted")
    observe(conn, sid, "SUPERSEDED memory", BASE + 180, status="superseded")
    text = render(conn)
    assert [r[0] for r in obs_rows(text)] == [live]
    assert "RETRACTED" not in text and "SUPERSEDED" not in text
    assert "not listed" not in text  # hidden rows are not counted as left out


def test_a_corrected_rule_shows_only_its_new_version_and_no_echo_of_the_old(conn: sqlite3.Connection) -> None:
    s1 = session(conn, "s1", BASE)
    old = observe(conn, s1, "We use npm for package installs", BASE, "decision")
    summarize(conn, s1, BASE + 60, request="We use npm for package installs", files_modified=["package.json"])
    s2 = session(conn, "s2", BASE + DAY)
    new = observe(conn, s2, "From now on use pnpm instead of npm for installs", BASE + DAY, "decision")
    text = render(conn)
    assert [r[0] for r in obs_rows(text, RULES)] == [new]
    assert f"#{old} " not in text and "We use npm" not in text
    status = conn.execute("SELECT status, superseded_by FROM observations WHERE id = ?", (old,)).fetchone()
    assert tuple(status) == ("superseded", new)


def test_archived_routine_work_is_not_listed_but_rules_and_decisions_never_age_out(
        conn: sqlite3.Connection) -> None:
    rule = observe(conn, session(conn, "older", BASE - 91 * DAY), "Always use Decimal for money, never float",
                   BASE - 91 * DAY, "decision")
    old = session(conn, "old", BASE - 90 * DAY)
    routine = observe(conn, old, "Changed the README wording of the install section", BASE - 89 * DAY)
    summarize(conn, old, BASE - 89 * DAY, request="Reword the README", files_modified=["README.md"])
    new = session(conn, "new", BASE)
    fresh = observe(conn, new, "Changed the export column order", BASE)
    text = render(conn, archive_after_days=30)
    assert [r[0] for r in obs_rows(text, RULES)] == [rule]
    assert [r[0] for r in obs_rows(text, RECENT)] == [fresh]
    assert f"#{routine} " not in text and "Reword the README" not in text.split("## Where we left off")[0]
    assert "1 older or less important memories are not listed" in text
    kept = render(conn, archive_after_days=0)  # 0: nothing is archived
    assert "Reword the README" in kept.split("## Where we left off")[0]  # the old session's line


def test_the_archive_counts_back_from_the_projects_latest_work_not_from_now(conn: sqlite3.Connection) -> None:
    """A project last worked on four months ago (an imported history, a project picked up again)
    still lists its recent work and sessions; what came long before that stays archived."""
    last = NOW - 120 * DAY
    older = session(conn, "older", last - 50 * DAY)
    long_before = observe(conn, older, "Changed the README wording of the install section", last - 50 * DAY)
    sid = session(conn, "latest", last - DAY)
    recent = observe(conn, sid, "Changed the export column order", last - DAY)
    summarize(conn, sid, last, request="Reorder the CSV export", files_modified=["export.py"])
    text = render(conn, archive_after_days=30)
    assert "Reorder the CSV export" in text.split("## Where we left off")[0]  # its session's line
    assert f"#{recent} " not in text  # (told by its session's line)
    assert f"#{long_before} " not in text
    conn.execute("DELETE FROM session_summaries")  # without summaries, the routine rows themselves
    text = render(conn, archive_after_days=30)
    assert [r[0] for r in obs_rows(text, RECENT)] == [recent], text
    assert f"#{long_before} " not in text


# ---------------------------------------------------------------------------- budgets


def test_count_budget_lists_the_newest_and_says_how_many_are_left_out(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    ids = [observe(conn, sid, f"Changed {WORDS[i]} handling", BASE + i * 600) for i in range(60)]
    text = render(conn, context_observations=50)
    rows = obs_rows(text)
    assert [r[0] for r in rows] == ids[10:]
    assert "10 older or less important memories are not listed: search them" in text


def test_character_cap_keeps_newest_rows_and_stays_well_formed(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    ids = [observe(conn, sid, f"Observation of {WORDS[i % 60]}_{WORDS[i // 60]} " + "with a longer title " * 3,
                   BASE + i * 300) for i in range(200)]
    earlier = session(conn, "s0", BASE - DAY)  # a summarized session (so there is a "Where we left off")
    summarize(conn, earlier, BASE - DAY + 60, request="Long session", learned="Lots", next_steps="More",
              files_modified=["a.py"])
    text = render(conn, context_observations=200, context_max_chars=3000)
    assert len(text) <= 3000
    rows = obs_rows(text)
    assert 0 < len(rows) < 200
    assert [r[0] for r in rows] == ids[200 - len(rows):]  # the newest survive, the oldest are dropped
    assert f"{200 - len(rows)} older or less important memories are not listed" in text
    assert "## Where we left off" in text
    assert text.splitlines()[1].startswith(f"# Memory of {PROJECT}")


@pytest.mark.parametrize("cap", [500, 600, 1200])
def test_tiny_character_caps_still_end_with_the_closing_tag(conn: sqlite3.Connection, cap: int) -> None:
    sid = session(conn, "s1", BASE)
    for i in range(30):
        observe(conn, sid, f"Observation {i} " + "padding " * 20, BASE + i * 60)
    observe(conn, sid, "Always write the changelog entry by hand " + "really " * 30, BASE, "decision")
    summarize(conn, sid, BASE + 4000, request="r" * 300, learned="l" * 600, next_steps="n" * 500,
              files_modified=["a.py"])
    text = render(conn, context_max_chars=cap)
    assert len(text) <= cap


def test_default_budget_fits_claude_codes_10000_character_hook_limit(conn: sqlite3.Connection) -> None:
    for s in range(12):
        sid = session(conn, f"s{s}", BASE + s * 3600)
        for i in range(10):
            observe(conn, sid, f"S{s} observation {i} " + "words " * 30, BASE + s * 3600 + i * 60,
                    "decision" if i == 0 else "bugfix" if i == 1 else "change")
        summarize(conn, sid, BASE + s * 3600 + 900, request="req " * 40, learned="learned " * 100,
                  completed="done " * 100, next_steps="next " * 100, files_modified=["x.py"])
    text = build(conn, Settings(), PROJECT, now=NOW)
    assert_well_formed(text)
    assert len(text) <= Settings().context_max_chars < 10_000


# -------------------------------------------------------------------------- economics


def test_economics_line_shows_reading_cost_and_work_condensed(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    observe(conn, sid, "Changed the invoice numbering", BASE, source_tokens=12_000)
    observe(conn, sid, "Added the CSV export", BASE + 60, source_tokens=30_000)
    summarize(conn, sid, BASE + 120, request="R", learned="L", source_tokens=8_000)
    text = render(conn)
    m = re.search(r"^Economics: reading this index costs ~([\d,]+) tokens; it condenses ~([\d,]+) tokens "
                  r"of past work \(([\d.]+)% smaller\)\.$", text, re.M)
    assert m, text
    read, work, pct = int(m[1].replace(",", "")), int(m[2].replace(",", "")), float(m[3])
    assert work == 50_000
    assert 0 < read < 1000
    # Rounded down to a tenth: never "100" while the index costs anything to read.
    assert pct == math.floor((100 - read * 100 / work) * 10) / 10 and pct < 100


def test_economics_without_source_tokens_only_states_the_reading_cost(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    observe(conn, sid, "A change of module a", BASE)
    line = next(ln for ln in render(conn).splitlines() if ln.startswith("Economics: "))
    assert re.fullmatch(r"Economics: reading this index costs ~\d+ tokens\.", line)


# ---------------------------------------------------------------------- build_for_cwd


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    p = tmp_path / "work" / PROJECT
    (p / ".git").mkdir(parents=True)
    (p / "src").mkdir()
    return p


def test_build_for_cwd_on_a_missing_database_returns_the_note(tmp_path: Path, project_dir: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    text = build_for_cwd(paths, Settings(), str(project_dir / "src"))
    assert text == empty_note(PROJECT)
    assert not os.path.exists(paths.db)  # reading never creates the database


def test_build_for_cwd_on_an_empty_file_returns_the_note(tmp_path: Path, project_dir: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    Path(paths.db).write_bytes(b"")  # created, never written: a database that does not exist yet
    assert build_for_cwd(paths, Settings(), str(project_dir)) == empty_note(PROJECT)


def test_build_for_cwd_on_a_damaged_file_says_memory_is_unavailable(tmp_path: Path, project_dir: Path) -> None:
    """Unreadable is not empty: never "no memory yet" for a file that holds memory it cannot read."""
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    open_db(paths.db).close()  # ours (its header says so), then damaged past the header
    with open(paths.db, "r+b") as fh:
        fh.seek(100)
        fh.write(b"\xa5" * (os.path.getsize(paths.db) - 100))
    text = build_for_cwd(paths, Settings(), str(project_dir))
    assert "no memory" not in text and "unavailable" in text and "corrupt" in text and "kenning repair" in text
    assert text.startswith(OPEN) and text.endswith(CLOSE)


def test_build_for_cwd_on_a_sqlite_file_without_our_schema_yet_returns_the_note(tmp_path: Path,
                                                                                 project_dir: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    c = sqlite3.connect(paths.db)
    c.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # ours, before its first migration ran
    c.commit()
    c.close()
    assert build_for_cwd(paths, Settings(), str(project_dir)) == empty_note(PROJECT)


@pytest.mark.parametrize("make", ["garbage", "unrelated table"])
def test_build_for_cwd_on_a_foreign_file_raises_instead_of_saying_no_memory(tmp_path: Path, project_dir: Path,
                                                                           make: str) -> None:
    """"No memory of this project yet" would be untrue: the hook tells the user instead."""
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    if make == "garbage":
        Path(paths.db).write_bytes(b"this is not a database at all" * 100)
    else:
        c = sqlite3.connect(paths.db)
        c.execute("CREATE TABLE unrelated (x)")
        c.commit()
        c.close()
    with pytest.raises(ForeignDatabase, match="not a Kenning database"):
        build_for_cwd(paths, Settings(), str(project_dir))


@pytest.mark.parametrize("dirname", ["data", "data with spaces", "data#hash", "data?query", "data%41pct"])
def test_build_for_cwd_reads_the_real_database(tmp_path: Path, project_dir: Path, dirname: str) -> None:
    paths = Paths(str(tmp_path / dirname))
    os.makedirs(paths.root)
    c = open_db(paths.db)
    key = canonical(str(project_dir))
    sid = session(c, "s1", BASE, project=key)
    oid = observe(c, sid, "Remembered across sessions", BASE, "decision", project=key)
    summarize(c, sid, BASE + 60, project=key, request="Remember this", learned="It works")
    text = build_for_cwd(paths, Settings(), str(project_dir / "src"), now=NOW)
    c.close()
    assert_well_formed(text)
    assert [(r[0], r[2], r[3]) for r in obs_rows(text)] == [(oid, "⚖️", "Remembered across sessions")]
    assert "Learned: It works" in text


def test_build_for_cwd_on_an_excluded_project_returns_nothing(tmp_path: Path, project_dir: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    c = open_db(paths.db)
    observe(c, session(c, "s1", BASE), "Secret project work", BASE)
    c.close()
    assert build_for_cwd(paths, Settings().replace(excluded_projects=(PROJECT,)), str(project_dir)) == ""


def test_two_repositories_with_one_folder_name_keep_their_own_memory(tmp_path: Path) -> None:
    """Two checkouts called `api` (no shared remote) are two projects: neither sees the other's rows."""
    paths = Paths(str(tmp_path / "data"))
    os.makedirs(paths.root)
    mine, theirs = tmp_path / "work" / "api", tmp_path / "clients" / "api"
    for d in (mine, theirs):
        (d / ".git").mkdir(parents=True)
    c = open_db(paths.db)
    for d, title in ((mine, "Staging DB lives on host db-7"), (theirs, "Client VPN credentials rotate monthly")):
        key = canonical(str(d))
        with repo.transaction(c):
            sid = repo.upsert_session(c, platform="claude-code", agent_session_id=title, project=key,
                                      project_root=key, cwd=key, at=BASE, name="api")
        observe(c, sid, title, BASE + 60, "discovery", project=key)
    c.close()
    text = build_for_cwd(paths, Settings(), str(mine), now=NOW)
    assert "Staging DB lives on host db-7" in text and "Client VPN" not in text
    # The header tells them apart by their checkout.
    assert f"# Memory of api ({canonical(str(mine))})" in text
    (theirs / "sub").mkdir()
    other = build_for_cwd(paths, Settings(), str(theirs / "sub"), now=NOW)  # a subdirectory as cwd
    assert "Client VPN credentials rotate monthly" in other and "Staging DB" not in other


def test_where_we_left_off_lists_no_outcome_that_only_says_it_is_over(conn: sqlite3.Connection) -> None:
    """A table's status cell ("| rename | done |", "| 互換性 | 完了 |") becomes an item of its own: not an outcome."""
    sid = session(conn, "s1", BASE)
    summarize(conn, sid, BASE + 60, request="Rename the helpers",
              completed="Renamed parse_row to read_row; 完了; Done.; refactor: extract helpers")
    done = next(ln for ln in render(conn).splitlines() if ln.startswith("Done: "))
    assert done == "Done: Renamed parse_row to read_row; refactor: extract helpers", done


def test_an_outcome_of_done_words_alone_leaves_no_empty_done_line(conn: sqlite3.Connection) -> None:
    sid = session(conn, "s1", BASE)
    summarize(conn, sid, BASE + 60, request="Rename the helpers", completed="完了",
              learned="read_row is the reader's name everywhere")
    tail = render(conn).split("## Where we left off", 1)[1].splitlines()
    assert not any(ln.startswith("Done:") for ln in tail), tail
    assert "Learned: read_row is the reader's name everywhere" in tail


def test_a_session_line_without_a_commit_gives_what_it_found_to_be_the_cause(conn: sqlite3.Connection) -> None:
    """Not the first thing it looked at on the way (a slow function that was not the regression)."""
    s1 = session(conn, "s1", BASE)
    hunt = summarize(conn, s1, BASE + 600, request="Startup got slow yesterday",
                     learned="`readLevel` decodes every value with `binary.Read`, which is slow\n"
                             "The root cause is commit 93a9d73, which added a 10s deadline around shutdown")
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Add the CSV export",
              files_modified=["export.py"])
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"S{hunt} "))
    assert "→ The root cause is commit 93a9d73" in line, line


@pytest.mark.parametrize("commit", ["Add --trust flag to the CLI invocation",
                                    "1a2b3c4 Add --trust flag to the CLI invocation"])
def test_a_session_line_gives_its_commit_subject_whole_with_or_without_a_hash(conn: sqlite3.Connection,
                                                                               commit: str) -> None:
    """Git printed no hash for the commit (the state names its subject alone): the subject's first word is a
    word of it ("Add"), not a hash to leave out."""
    sid = summarize(conn, session(conn, "s1", BASE), BASE + 600, request="Cursor runs fail without trust",
                    notes=f"State: committed {commit}; not pushed")
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Add the CSV export",
              files_modified=["export.py"])
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"S{sid} "))
    assert line.endswith("Cursor runs fail without trust → Add --trust flag to the CLI invocation"), line


def test_a_session_line_gives_the_commit_of_its_work_not_the_housekeeping_before_it(conn: sqlite3.Connection) -> None:
    """'chore: commit post-release housekeeping artifacts' came first; the release is what came of the session.
    A session whose commits are all housekeeping gives its first."""
    sid = summarize(conn, session(conn, "s1", BASE), BASE + 600, request="What should we do next?",
                    notes="State: committed 2d6f7eb chore: commit post-release housekeeping artifacts, … 4 more, "
                          "62ad1de chore(release): v0.16.0, b9d1481 fix(review): address the review feedback; "
                          "pushed (release/v0.16.0)")
    other = summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Tidy the docs",
                      notes="State: committed 1a2b3c4 docs: fix typos in the README, 5d6e7f8 ci: cache the "
                            "toolchain; pushed (main)")
    summarize(conn, session(conn, "s3", BASE + 7200), BASE + 7800, request="Add the CSV export",
              files_modified=["export.py"])
    lines = render(conn).splitlines()
    line = next(ln for ln in lines if ln.startswith(f"S{sid} "))
    assert "What should we do next? → chore(release): v0.16.0 [" in line, line
    line = next(ln for ln in lines if ln.startswith(f"S{other} "))
    assert "Tidy the docs → docs: fix typos in the README [" in line, line


@pytest.mark.parametrize("scratch", ["x", "wip", "fixup! feat(cli): accept stable ids"])
def test_a_scratch_commit_is_not_what_came_of_a_session(conn: sqlite3.Connection, scratch: str) -> None:
    """An unseen project's session line read "Review PR #36; then: … → x [PR #45 opened; …]": a commit made to be
    squashed ("git commit -qm x") named first. The work's commit is what came of it."""
    sid = summarize(conn, session(conn, "s1", BASE), BASE + 600, request="Review PR #36 and fix the nits",
                    notes=f"State: committed 9f8e7d6 {scratch}, 1a2b3c4 feat(cli): accept stable symbol ids; "
                          "pushed (feat/ids)")
    summarize(conn, session(conn, "s2", BASE + 7200), BASE + 7800, request="Add the CSV export",
              files_modified=["export.py"])  # (the last session is where we left off, not a line of its own)
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"S{sid} "))
    assert "→ feat(cli): accept stable symbol ids" in line, line


def test_a_session_that_says_no_outcome_is_left_to_the_rows_it_found(conn: sqlite3.Connection) -> None:
    """Its line would only point at them ("Shutdown used to take only 10s → #169"); with a pull request or a push
    of its own to say, it stays, pointing at them."""
    s1 = session(conn, "s1", BASE)
    found = observe(conn, s1, "The 10s shutdown deadline added by commit 93a9d73 kills the snapshot writer",
                    BASE + 300, "bugfix")
    hunt = summarize(conn, s1, BASE + 600, request="Shutdown used to take only 10s")
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Add the CSV export",
              files_modified=["export.py"])
    text = render(conn)
    assert f"#{found} " in text and not [ln for ln in text.splitlines() if ln.startswith(f"S{hunt} ")], text
    summarize(conn, s1, BASE + 600, request="Shutdown used to take only 10s", notes="State: PR #12 opened")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"S{hunt} "))
    assert line.endswith(f"Shutdown used to take only 10s → #{found} [PR #12 opened]"), line


def test_a_cause_whose_session_committed_its_fix_is_said_to_be_fixed(conn: sqlite3.Connection) -> None:
    s1 = session(conn, "s1", BASE)
    cause = observe(conn, s1, "`RotateShards` uses a non-blocking send on rotation channels buffered at only 64",
                    BASE + 300, "bugfix", role="rootcause")
    summarize(conn, s1, BASE + 600, request="Shard rotation warnings after every checkpoint",
              notes="State: committed 88c6586 fix: shard rotation skipped on full rotation channels; not pushed")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"#{cause} "))
    assert line.endswith("— fixed in 88c6586 fix: shard rotation skipped on full rotation channels"), line


def test_a_verb_of_change_does_not_tell_a_commit_from_the_row_that_says_it(conn: sqlite3.Connection) -> None:
    """"Implement plan-first export pipeline with sequential execution" and the session's row "Replaced the
    batch-based export engine with a sequential pipeline": one thing, said once (the verbs say nothing of it)."""
    s1 = session(conn, "s1", BASE)
    row = observe(conn, s1, "Replaced the batch-based export engine with a 4-phase sequential pipeline",
                  BASE + 300, "bugfix", role="fix")
    line = summarize(conn, s1, BASE + 600, request="Plan: Plan-first export pipeline",
                     notes="State: committed Implement plan-first export pipeline with 4-phase sequential execution; "
                           "not pushed")
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Add the PDF export",
              files_modified=["export.py"])
    text = render(conn)
    assert f"#{row} " in text and not any(ln.startswith(f"S{line} ") for ln in text.splitlines()), text


@pytest.mark.parametrize(("commit", "said_twice"), [
    ("fix: evaluation crash when debug file writes fail", True),  # the row of the session, in other words
    ("feat: export the evaluation results as CSV files", False)])  # something else the session did
def test_a_session_line_whose_commit_a_row_of_it_says_in_other_words_is_not_said_twice(
        conn: sqlite3.Connection, commit: str, said_twice: bool) -> None:
    s1 = session(conn, "s1", BASE)
    row = observe(conn, s1, "Each debug write is now wrapped so IO failures are logged as warnings and never crash "
                  "the evaluator", BASE + 300, "bugfix", role="fix")
    line = summarize(conn, s1, BASE + 600, request="Fix the evaluation crash",
                     notes=f"State: committed 1a2b3c4 {commit}; not pushed")
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Add the PDF export",
              files_modified=["export.py"])
    text = render(conn)
    assert f"#{row} " in text
    assert any(ln.startswith(f"S{line} ") for ln in text.splitlines()) is not said_twice, text
    summarize(conn, s1, BASE + 600, request="Fix the evaluation crash",
              notes=f"State: committed 1a2b3c4 {commit}; pushed (main)")  # a state of its own to say: it stays
    assert any(ln.startswith(f"S{line} ") for ln in render(conn).splitlines()), text
    summarize(conn, s1, BASE + 600, request="Investigate the crash report in the discussion; then: make a PR and "
              "reply to the discussion; address the review feedback and the failing checks",
              notes=f"State: committed 1a2b3c4 {commit}; pushed (codex/fix-evaluation-crash-on-debug-writes, "
                    "codex/structured-evaluation-output); PR #1067 opened; merged #1066")  # even when cut short
    shown = next(ln for ln in render(conn).splitlines() if ln.startswith(f"S{line} "))
    assert "[PR #1067 opened; merged #1066; pushed (codex/fix-evaluation-crash" in shown, shown  # (cut: the branches)


def test_a_fix_part_of_which_a_later_fix_named_as_its_cause_says_so(conn: sqlite3.Connection) -> None:
    """A first fix that a later one had to undo is not shown as the fix (the rest of it still stands)."""
    s1 = session(conn, "s1", BASE)
    first = observe(conn, s1, "Rotation deadlock during shutdown — fix: `RotateShards` returns at once while "
                    "shutting down; uses a non-blocking send to the rotation channels", BASE + 300, "bugfix",
                    role="fix")
    summarize(conn, s1, BASE + 600, request="Shutdown hangs", notes="State: committed 5d6e7f8 fix: rotation deadlock")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"#{first} "))
    assert "uses a non-blocking send" in line and "replaced" not in line, line
    summarize(conn, session(conn, "s2", BASE + 3600), BASE + 4200, request="Rotation skipped warnings",
              notes="State: committed 937984d fix: shard rotation skipped for all hosts due to non-blocking send")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"#{first} "))
    assert line.endswith("fix: `RotateShards` returns at once while shutting down; its non-blocking send was later "
                         "named as a cause and replaced (937984d)"), line


@pytest.mark.parametrize(("said", "shown"), [
    ("thoughts on [https://github.com/o/hk/discussions/1077#discussioncomment-1](https://github.com/o/hk/discu…; "
     "then: make a PR", "thoughts on hk/discussions/1077; then: make a PR"),  # a link the stored request cut short
    ("investigate [https://github.com/o/hk/discussions/1061](https://github.com/o/hk/discussions/1061); then: fix",
     "investigate hk/discussions/1061; then: fix"),
    ("why is this failing https://github.com/o/hk/actions/runs/2854/job/8464",
     "why is this failing hk/actions/runs/2854"),
    ("see https://github.com/o/r/pull/12?tab=files, then [the docs](https://x.io/a/b/c/d)",
     "see r/pull/12, then the docs"),
    ("read https://docs.example.org/guide/setup/install.html", "read guide/setup/install.html"),
    ("see https://github.com/o/r/blob/main/src/cli/mod.rs#L40", "see src/cli/mod.rs")])
def test_links_are_named_as_a_reader_names_them(said: str, shown: str) -> None:
    from kenning.context.layout import short_links

    assert short_links(said) == shown


def test_a_scripted_run_that_only_gave_a_role_is_no_line_of_recent_work(conn: sqlite3.Connection) -> None:
    scripted = summarize(conn, session(conn, "s1", BASE), BASE + 60,
                         request="You are a futures analyst grounded in the Tidy First philosophy")
    work = summarize(conn, session(conn, "s2", BASE + 3600), BASE + 3700, request="Add the CSV export",
                     files_modified=["export.py"])
    summarize(conn, session(conn, "s3", BASE + 7200), BASE + 7300, request="Add the PDF export",
              files_modified=["pdf.py"])
    lines = render(conn).splitlines()
    assert not [ln for ln in lines if ln.startswith(f"S{scripted} ")], lines
    assert [ln for ln in lines if ln.startswith(f"S{work} ")], lines


def test_a_value_a_later_memory_states_otherwise_is_said_beside_the_older_one(conn: sqlite3.Connection) -> None:
    """A deadline raised "from 10s to 120s", then spoken of as 60s a day later: the older row says so."""
    first = observe(conn, session(conn, "s1", BASE), "Shutdown is cut off by a hard 10s deadline — fix: raises the "
                    "shutdown deadline from 10s to 120s", BASE + 300, "bugfix", role="rootcause")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"#{first} "))
    assert "later the" not in line, line
    later = observe(conn, session(conn, "s2", BASE + 86400), "On shutdown, the drain step wastes the entire 60s "
                    "deadline on redundant writes", BASE + 86400 + 300, "bugfix", role="rootcause")
    line = next(ln for ln in render(conn).splitlines() if ln.startswith(f"#{first} "))
    assert line.endswith(f"from 10s to 120s; later the deadline is 60s (#{later})"), line


def test_a_decision_a_later_fix_switched_away_from_is_not_listed(conn: sqlite3.Connection) -> None:
    """The plan chose the styled `TreeView`; the same session's fix switched from it to the unstyled one."""
    s1 = session(conn, "s1", BASE)
    chose = observe(conn, s1, "We'll use `createTreeCollection` and `TreeView.` components from the vendor docs",
                    BASE + 100, "decision", role="decision")
    assert f"#{chose} " in render(conn)
    fixed = observe(conn, s1, "The fix was switching from the styled `TreeView` components (which need a provider) "
                    "to the unstyled ones of `@ark-ui/react/tree-view`", BASE + 900, "bugfix", role="fix")
    text = render(conn)
    assert f"#{fixed} " in text and f"#{chose} " not in text, text


def test_a_change_row_beside_the_sessions_commits_is_not_said_as_done(conn: sqlite3.Connection) -> None:
    """The state names the commit; the change row would only repeat its files and a fragment of what it did."""
    sid = session(conn, "s1", BASE)
    summarize(conn, sid, BASE + 60, request="Skip evaluators the inventory rules out",
              completed="Changed skip-rules.ts, runner.ts and 5 more: Added `inventory` option to both; "
                        "Changed mod.rs, bookmark.rs (asked: review the refactor); The branch is ready for review",
              notes="State: committed c653b3c Add inventory-based evaluator skipping; not pushed")
    lines = render(conn).splitlines()
    assert "Done: The branch is ready for review" in lines, lines
    summarize(conn, sid, BASE + 60, request="Skip evaluators the inventory rules out",
              completed="Changed skip-rules.ts, runner.ts and 5 more: Added `inventory` option to both",
              notes="State: not committed: skip-rules.ts, runner.ts")  # no commit says it: the row does
    assert any(ln.startswith("Done: Changed skip-rules.ts") for ln in render(conn).splitlines())
