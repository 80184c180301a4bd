"""A preference the user states for all their work reaches every project; a project's rule stays in it.

Through the real hook processes and worker (offline observer): one session in a repository states
both, then the first session of another repository, which has no memory of its own yet, is told the
preference, under its own heading, and nothing of the first repository.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Home
from tests.security import hook_json, prompt, session_end, session_start, stop

PREFERENCE = "Whatever the repository, always give me the conclusion first and keep your answers short."
RULE = "In this repository, never edit the generated protobuf files by hand; run `make proto` instead."


def _context(home: Home, project: Path, sid: str) -> str:
    payload = session_start(str(project), sid)
    out = hook_json(home.hook("SessionStart", payload))  # the project is the payload's cwd
    assert out is not None
    return str(out["hookSpecificOutput"]["additionalContext"])


def test_a_preference_for_every_project_reaches_a_new_project_and_a_project_rule_does_not(home: Home,
                                                                                          tmp_path: Path) -> None:
    home.start_worker()
    try:
        proj, sid = str(home.project), "prefs-1"
        hook_json(home.hook("SessionStart", session_start(proj, sid)))
        for text in (PREFERENCE, RULE):
            hook_json(home.hook("UserPromptSubmit", prompt(proj, sid, text)))
            hook_json(home.hook("Stop", stop(proj, sid, "Understood.")))
        hook_json(home.hook("SessionEnd", session_end(proj, sid)))
        home.flush()

        here = _context(home, home.project, "prefs-2")
        assert "conclusion first" in here and "generated protobuf files" in here, here
        assert here.index("## Your preferences (every project") < here.index("## Standing rules")

        other = tmp_path / "elsewhere" / "billing"
        (other / ".git").mkdir(parents=True)
        fresh = _context(home, other, "billing-1")
        assert "conclusion first" in fresh, fresh
        assert "## Your preferences (every project" in fresh
        assert "protobuf" not in fresh and "make proto" not in fresh, fresh
        assert "no memory of project" not in fresh

        # `kenning show` says what it was judged to be, on whose words, and how to undo it.
        pref = home.db().execute("SELECT id FROM observations WHERE scope = 'user'").fetchone()[0]
        shown = home.kenning("show", str(pref))
        assert shown.returncode == 0, shown.stderr
        assert "Judged: rule (a standing rule, for all your projects)" in shown.stdout, shown.stdout
        assert "Because you said" in shown.stdout and "conclusion first" in shown.stdout, shown.stdout
        assert f"kenning unpin {pref}" in shown.stdout, shown.stdout
    finally:
        home.stop_worker()
