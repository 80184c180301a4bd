"""What the user can keep out of memory: ``<private>``, private turns, ``#nomem``, excluded projects.

Every scenario runs real hook processes; the worker is a real process. Where something must not
be stored, the raw bytes of every file in the data dir are searched for it (spool before the
worker ingests, then the database with its WAL, the logs), not only the rows a query returns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kenning.paths import read_token
from tests.conftest import Home
from tests.security import (
    base_payload,
    bash,
    context_of,
    files_containing,
    hook_json,
    http,
    prompt,
    session_end,
    session_start,
    stop,
    tree_bytes,
    write,
)


def run(home: Home, events: list[tuple[str, dict[str, Any]]], env: dict[str, str] | None = None) -> None:
    for event, payload in events:
        hook_json(home.hook(event, payload, env=env))


def rows(home: Home, sql: str, *args: Any) -> list[Any]:
    conn = home.db()
    try:
        return [tuple(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def all_memory_text(home: Home) -> str:
    """Every observation and summary field, as the context builders and search would see them."""
    obs = rows(home, "SELECT title, subtitle, narrative, facts, concepts, files_read, files_modified FROM observations")
    sums = rows(home, "SELECT request, investigated, learned, completed, next_steps, notes, files_read, "
                      "files_modified FROM session_summaries")
    prompts = rows(home, "SELECT prompt_text FROM user_prompts")
    return json.dumps([obs, sums, prompts])


# ------------------------------------------------------------------ <private> everywhere

PRIVATE = {  # canary → where it hides
    "PRV-prompt-a1": "prompt",
    "PRV-cmd-b2": "tool input (Bash command)",
    "PRV-stdout-c3": "tool output (stdout)",
    "PRV-error-d4": "tool failure (error)",
    "PRV-last-e5": "Stop last_assistant_message",
    "PRV-nested-f6": "tool input nested in JSON",
    "PRV-json-string-f7": "JSON text inside a string",
    "PRV-multi-g7": "multiline block",
    "PRV-unclosed-h8": "unclosed tag in tool output",
    "PRV-upper-i9": "upper-case tag",
    "PRV-attr-j0": "tag with attributes",
    "PRV-outer-k1": "outer part of nested blocks",
    "PRV-content-l2": "Write content",
    "PRV-edit-m3": "Edit new_string",
}
PUBLIC = ["PUB-prompt-keep", "PUB-cmd-keep", "PUB-stdout-keep", "PUB-last-keep", "PUB-content-keep"]


def private_session(project: str, sid: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("UserPromptSubmit", prompt(project, sid, "PUB-prompt-keep: deploy <private>with PRV-prompt-a1</private> now")),
        ("PostToolUse", bash(project, sid, f"toolu_{sid}_1",
                             "echo PUB-cmd-keep <private>PRV-cmd-b2</private>",
                             stdout="PUB-stdout-keep\n<private>\nPRV-stdout-c3\n</private>\ndone")),
        ("PostToolUseFailure", bash(project, sid, f"toolu_{sid}_2", "make deploy",
                                    stdout="Error: <private>PRV-error-d4</private> refused", failed=True)),
        ("PostToolUse", base_payload(project, sid, "PostToolUse", tool_name="mcp__db__query",
                                     tool_use_id=f"toolu_{sid}_3",
                                     tool_input={"q": {"filter": [{"note": "<private>PRV-nested-f6</private>"}]},
                                                 "raw": '{"k": "<private>PRV-json-string-f7</private>"}'},
                                     tool_response={"rows": [[1, "<PRIVATE>PRV-upper-i9</PRIVATE>"]],
                                                    "log": "line 1\n<private reason=\"hr\">PRV-attr-j0</private>",
                                                    "tail": "visible <private>PRV-unclosed-h8 and all after"})),
        ("PostToolUse", write(project, sid, f"toolu_{sid}_4", "notes.md",
                              "PUB-content-keep\n<private>\nline one\nPRV-multi-g7\nline three\n</private>\n"
                              "<private>a <private>b</private> PRV-outer-k1 </private>end\n"
                              "<private>PRV-content-l2</private>")),
        ("PostToolUse", base_payload(project, sid, "PostToolUse", tool_name="Edit", tool_use_id=f"toolu_{sid}_5",
                                     tool_input={"file_path": f"{project}/notes.md", "old_string": "end",
                                                 "new_string": "<private>PRV-edit-m3</private>"},
                                     tool_response={"filePath": f"{project}/notes.md", "oldString": "end",
                                                    "newString": "<private>PRV-edit-m3</private>"})),
        ("Stop", stop(project, sid, "PUB-last-keep. <private>PRV-last-e5</private>")),
        ("SessionEnd", session_end(project, sid)),
    ]


def test_private_blocks_never_reach_the_disk_at_any_capture_point(home: Home) -> None:
    home.paths.ensure()
    run(home, private_session(str(home.project), "priv-1"))
    spool = tree_bytes(home.paths.spool)
    assert len(spool) == 8
    for canary, where in PRIVATE.items():
        assert not files_containing(spool, canary), f"<private> in the {where} reached the spool"
    for keep in PUBLIC:
        assert files_containing(spool, keep), f"{keep} (outside <private>) was lost"
    home.start_worker()
    home.flush()
    data = tree_bytes(home.data)
    for canary, where in PRIVATE.items():
        assert not files_containing(data, canary), f"<private> in the {where} is stored"
    assert rows(home, "SELECT COUNT(*) FROM events WHERE status = 'pending'") == [(0,)]
    assert rows(home, "SELECT COUNT(*) FROM observations")[0][0] >= 1


# ------------------------------------------------------------------------ private turns

TURN2_CANARIES = ["rotation_secret_plan.py", "PRIVTURN-stdout-77", "PRIVTURN-last-88", "rotate-the-keys-99"]


def test_an_entirely_private_prompt_makes_its_whole_turn_private(home: Home) -> None:
    home.start_worker()
    p = str(home.project)
    sid = "privturn-1"
    run(home, [
        ("SessionStart", session_start(p, sid)),
        ("UserPromptSubmit", prompt(p, sid, "Add a CSV export to the invoice report")),
        ("PostToolUse", write(p, sid, "toolu_pt_1", "export_csv.py", "def export():\n    return []\n")),
        ("Stop", stop(p, sid, "Added export_csv.py with an export() function.")),
        # Turn 2: the whole prompt is private.
        ("UserPromptSubmit", prompt(p, sid, "<private>rotate-the-keys-99 for the prod database</private>")),
        ("PostToolUse", write(p, sid, "toolu_pt_2", "rotation_secret_plan.py", "PLAN = 'rotate'\n")),
        ("PostToolUse", bash(p, sid, "toolu_pt_3", "python rotation_secret_plan.py", stdout="PRIVTURN-stdout-77")),
        ("PostToolUseFailure", bash(p, sid, "toolu_pt_4", "python rotation_secret_plan.py --apply",
                                    stdout="PRIVTURN-stdout-77 denied", failed=True)),
        ("Stop", stop(p, sid, "Rotated them: PRIVTURN-last-88. You should also consider revoking the old ones.")),
    ])
    home.flush()
    # After the private turn: nothing from it, anywhere in memory.
    text = all_memory_text(home)
    for canary in TURN2_CANARIES:
        assert canary not in text, f"{canary} from the private turn is in memory: {text[:2000]}"
    assert rows(home, "SELECT COUNT(*) FROM observations WHERE prompt_number = 2") == [(0,)]
    assert rows(home, "SELECT COUNT(*) FROM events WHERE status = 'pending'") == [(0,)]
    assert rows(home, "SELECT COUNT(*) FROM observations WHERE prompt_number = 1")[0][0] >= 1

    # Not even the raw events of that turn are kept (only their keys, for exactly-once ingest).
    data = tree_bytes(home.data)
    for canary in TURN2_CANARIES:
        assert not files_containing(data, canary), f"{canary} from the private turn is on disk"

    # Turn 3 in the same session is an ordinary turn again.
    run(home, [
        ("UserPromptSubmit", prompt(p, sid, "Now fix the typo in the README heading")),
        ("PostToolUse", write(p, sid, "toolu_pt_5", "README.md", "# Invoice API\n")),
        ("Stop", stop(p, sid, "Fixed the README heading typo.")),
        ("SessionEnd", session_end(p, sid)),
    ])
    home.flush()
    obs3 = rows(home, "SELECT title, files_modified FROM observations WHERE prompt_number = 3")
    assert obs3 and any("README.md" in files for _t, files in obs3), obs3
    summary = rows(home, "SELECT request, completed, files_modified, next_steps FROM session_summaries")
    assert summary and "README" in json.dumps(summary), summary
    text = all_memory_text(home)
    for canary in TURN2_CANARIES:
        assert canary not in text, f"{canary} from the private turn is in memory: {text[:2000]}"
    # Nor what the next session is told.
    ctx = context_of(home.hook("SessionStart", session_start(p, "privturn-2")))
    assert "README" in ctx or "export" in ctx.lower(), ctx
    for canary in TURN2_CANARIES:
        assert canary not in ctx


def test_a_tool_event_whose_prompt_has_not_arrived_is_not_private(home: Home) -> None:
    """No prompt yet (Kenning installed mid-session, a prompt hook that failed) is not a private prompt."""
    home.start_worker()
    p = str(home.project)
    # Another session's private prompt must not leak its privacy either.
    run(home, [("UserPromptSubmit", prompt(p, "other-sess", "<private>nothing to see</private>"))])
    run(home, [
        ("PostToolUse", write(p, "noprompt-1", "toolu_np_1", "src/loader.py", "def load():\n    return 1\n")),
        ("PostToolUse", bash(p, "noprompt-1", "toolu_np_2", "pytest -q tests/test_loader.py", stdout="1 passed")),
        ("Stop", stop(p, "noprompt-1", "Wrote src/loader.py; the loader test passes.")),
    ])
    home.flush()
    skipped = rows(home, "SELECT e.kind FROM events e JOIN sessions s ON s.id = e.session_id "
                         "WHERE s.agent_session_id = 'noprompt-1' AND e.status = 'skipped'")
    assert skipped == [], skipped
    obs = rows(home, "SELECT o.files_modified FROM observations o JOIN sessions s ON s.id = o.session_id "
                     "WHERE s.agent_session_id = 'noprompt-1'")
    assert any("loader.py" in f for (f,) in obs), obs


# ------------------------------------------------------------------------------ #nomem

def test_the_optout_marker_stops_capture_and_injection_for_the_rest_of_the_session(home: Home) -> None:
    home.start_worker()
    p = str(home.project)
    sid = "nomem-1"
    run(home, [
        ("SessionStart", session_start(p, sid)),
        ("UserPromptSubmit", prompt(p, sid, "Add retry with backoff to the webhook client")),
        ("PostToolUse", write(p, sid, "toolu_nm_1", "webhook_client.py", "RETRIES = 3\n")),
        ("Stop", stop(p, sid, "Added retries to webhook_client.py.")),
        ("UserPromptSubmit", prompt(p, sid, "#nomem now look at the NOMEM-prompt-31 payroll export")),
        ("PostToolUse", write(p, sid, "toolu_nm_2", "payroll_NOMEM-file-32.py", "SALARY = 1\n")),
        ("PostToolUseFailure", bash(p, sid, "toolu_nm_3", "cat payroll.csv", stdout="NOMEM-out-33", failed=True)),
        ("Stop", stop(p, sid, "NOMEM-last-34 done")),
        ("UserPromptSubmit", prompt(p, sid, "and NOMEM-later-35 as well")),  # later prompts too
        ("SessionEnd", session_end(p, sid)),
    ])
    home.flush()
    data = tree_bytes(home.data)
    for canary in ("NOMEM-prompt-31", "NOMEM-file-32", "NOMEM-out-33", "NOMEM-last-34", "NOMEM-later-35",
                   "#nomem now look"):
        assert not files_containing(data, canary), f"{canary} was captured after #nomem"
    # What came before the marker stays.
    assert "webhook_client.py" in all_memory_text(home)
    kinds = rows(home, "SELECT e.kind FROM events e JOIN sessions s ON s.id = e.session_id "
                       "WHERE s.agent_session_id = ? ORDER BY e.id", sid)
    assert [k for (k,) in kinds] == ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"], kinds

    # Resuming that session: no context is injected, and nothing is captured.
    r = home.hook("SessionStart", session_start(p, sid, source="resume"))
    assert context_of(r) == "", r.stdout
    # A different session in the same project is remembered and told as usual.
    ctx = context_of(home.hook("SessionStart", session_start(p, "nomem-2")))
    assert "webhook_client.py" in ctx, ctx
    assert rows(home, "SELECT COUNT(*) FROM events e JOIN sessions s ON s.id = e.session_id "
                      "WHERE s.agent_session_id = ?", sid) == [(4,)]


def test_a_configured_optout_marker_replaces_the_default(home: Home) -> None:
    env = {"KENNING_OPTOUT_MARKER": "@@offrecord"}
    p = str(home.project)
    home.paths.ensure()
    run(home, [("UserPromptSubmit", prompt(p, "mk-1", "#nomem is not the marker here: KEEP-71")),
               ("UserPromptSubmit", prompt(p, "mk-2", "@@offrecord DROP-72")),
               ("PostToolUse", write(p, "mk-2", "toolu_mk_1", "drop.py", "DROP-73\n"))], env=env)
    spool = tree_bytes(home.paths.spool)
    assert files_containing(spool, "KEEP-71")
    assert not files_containing(spool, "DROP-72") and not files_containing(spool, "DROP-73")
    # An empty marker turns the feature off.
    run(home, [("UserPromptSubmit", prompt(p, "mk-3", "#nomem KEEP-74"))], env={"KENNING_OPTOUT_MARKER": ""})
    assert files_containing(tree_bytes(home.paths.spool), "KEEP-74")


# --------------------------------------------------------------------- excluded projects

def make_project(path: Path) -> str:
    (path / ".git").mkdir(parents=True, exist_ok=True)
    return str(path)


def project_session(project: str, sid: str, marker: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("UserPromptSubmit", prompt(project, sid, f"Refactor the {marker} module")),
        ("PostToolUse", write(project, sid, f"toolu_{sid}_1", f"{marker}.py", "X = 1\n")),
        ("Stop", stop(project, sid, f"Refactored {marker}.py.")),
        ("SessionEnd", session_end(project, sid)),
    ]


def test_excluded_projects_are_neither_captured_nor_injected(home: Home, tmp_path: Path) -> None:
    user_home = tmp_path / "user-home"
    by_name = make_project(tmp_path / "client-acme")
    by_path = make_project(tmp_path / "vault" / "ledger")
    by_tilde = make_project(user_home / "work" / "private-repo")
    nested_cwd = os.path.join(by_path, "src", "deep")
    os.makedirs(nested_cwd)
    kept = make_project(tmp_path / "open-source-lib")
    env = {"HOME": str(user_home)}
    home.env.update(env)  # the worker (spawned by the CLI) sees the same HOME

    # First, memory of every project exists (captured before they were excluded).
    home.start_worker()
    for i, (proj, marker) in enumerate([(by_name, "acmemod"), (by_path, "ledgermod"), (by_tilde, "tildemod"),
                                        (kept, "keptmod")]):
        run(home, project_session(proj, f"before-{i}", marker))
    home.flush()
    for proj in (by_name, by_path, by_tilde, kept):
        assert context_of(home.hook("SessionStart", session_start(proj, f"probe-{abs(hash(proj))}"))), proj
    home.stop_worker()

    # Now the user excludes three of them: by name, by path, by a ~ path.
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps(
        {"excluded_projects": ["client-*", f"{tmp_path}/vault/*", "~/work/private-*"]}))
    home.start_worker()
    home.flush()
    before = rows(home, "SELECT COUNT(*) FROM events")[0][0]
    for i, (proj, marker) in enumerate([(by_name, "acme2"), (by_path, "ledger2"), (by_tilde, "tilde2")]):
        run(home, [(e, p) for e, p in project_session(proj, f"after-{i}", marker)])
        run(home, [("UserPromptSubmit", prompt(nested_cwd if proj == by_path else proj, f"after-n{i}", "x y z"))])
        # Not injected: the hook prints nothing, the API and the CLI give no context.
        assert context_of(home.hook("SessionStart", session_start(proj, f"after-s{i}"))) == ""
        body = http(home.port, "GET", f"/api/context?cwd={proj}", token=read_token(home.paths)).json()
        assert body["excluded"] is True and body["context"] == "", body
        cli = home.kenning("context", "--cwd", proj)
        assert "mod" not in cli.stdout, cli.stdout
    home.flush()
    assert home.spool_depth() == 0
    assert rows(home, "SELECT COUNT(*) FROM events")[0][0] == before, "an excluded project was captured"
    data = tree_bytes(home.data)
    for marker in ("acme2", "ledger2", "tilde2"):
        assert not files_containing(data, marker)
    # The project that is not excluded is captured and told as before.
    run(home, project_session(kept, "after-kept", "kept2"))
    home.flush()
    ctx = context_of(home.hook("SessionStart", session_start(kept, "after-kept-s")))
    assert "kept2" in ctx or "keptmod" in ctx, ctx
