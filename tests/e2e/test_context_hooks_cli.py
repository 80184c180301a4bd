"""File history on Read and memories next to the prompt, through the real Claude Code CLI.

``kenning install`` writes the hooks (PreToolUse with matcher ``Read`` among them); session 1
writes and fixes a module; session 2 asks about it and reads it. The requests the fake Messages
API receives must carry both contexts where Claude Code puts them: the prompt's memories next
to the user's text, the file's history next to the Read result; and the Read itself succeeds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.claude_cli import kenning_cli, run_claude, scratch_env
from tests.support.fake_anthropic import FakeAnthropic, all_text, script_by_prompt, text, tool_use

pytestmark = pytest.mark.e2e

BODY = "".join(f"# rounding rule {i}: VAT is computed per invoice line, then summed\n" for i in range(40))


def test_read_and_prompt_get_kenning_context(claude_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "vat-project")
    assert kenning_cli(env, "install", "--no-start").returncode == 0
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert [g.get("matcher") for g in settings["hooks"]["PreToolUse"]] == ["Read"]

    totals = project / "vat_totals.py"
    broken = BODY + "def line_total(net, rate):\n    return net * rate\n"
    session1 = [
        [text("Writing it."), tool_use("Write", {"file_path": str(totals), "content": broken})],
        [tool_use("Edit", {"file_path": str(totals), "old_string": "return net * rate",
                           "new_string": "return net * (1 + rate)"})],
        [text("Fixed: line_total now adds the VAT rate instead of multiplying by it.")],
    ]
    session2 = [[tool_use("Read", {"file_path": str(totals)})], [text("It computes VAT per line.")]]
    script = script_by_prompt({"Create vat_totals.py": session1, "line_total": session2})
    # Prompt context on (whatever its default), with a budget a loaded machine does not run out of (what is
    # given is tested here, its speed in bench/); a start index of 0 rows, so session 1's notes are
    # news to session 2 (in a project this small the start index would list them all).
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules", "KENNING_PROMPT_CONTEXT": "1",
                "KENNING_PROMPT_CONTEXT_TIMEOUT_MS": "5000",
                "KENNING_CONTEXT_OBSERVATIONS": "0", "KENNING_EMBEDDING_BACKEND": "none"}
    with FakeAnthropic(script=script) as fake:
        first = run_claude("Create vat_totals.py with line_total(net, rate) for VAT per invoice line.",
                           cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env, timeout=120,
                           claude_bin=claude_bin)
        assert first["rc"] == 0, first["stderr"] or first["stdout"]
        assert "(1 + rate)" in totals.read_text()
        n_first = len(fake.requests_of("main"))
        second = run_claude("How does line_total in vat_totals.py handle the VAT rate?", cwd=project, home=home,
                            base_url=fake.base_url, extra_env=hook_env, timeout=120, claude_bin=claude_bin)
        assert second["rc"] == 0, second["stderr"] or second["stdout"]
        later = fake.requests_of("main")[n_first:]
    try:
        conn = __import__("sqlite3").connect(data / "kenning.db")
        rows = conn.execute("SELECT id, title FROM observations WHERE files_modified LIKE '%vat_totals.py%'"
                            ).fetchall()
        conn.close()
        assert rows, "session 1 left no observation about vat_totals.py"
        first_request = all_text(later[0]["body"])
        assert "UserPromptSubmit hook additional context" in first_request
        assert "earlier observations that share this prompt" in first_request
        assert any(f"#{oid} " in first_request for oid, _t in rows)
        after_read = next(r for r in later if "tool_result" in all_text(r["body"]))
        blob = all_text(after_read["body"])
        assert "PreToolUse:Read hook additional context" in blob or "hook additional context" in blob
        assert "earlier sessions' notes on vat_totals.py" in blob
        assert "rounding rule 39" in blob  # the Read itself went through, whole
    finally:
        kenning_cli(env, "worker", "stop")
        kenning_cli(env, "uninstall", "--keep-worker")
