"""No secret reaches the disk: one realistic fake of every detector, through real hooks and a real worker.

Each sample is assembled at run time (tests/security/corpus.py: no scanner mistakes this file
for a leak) and placed at every capture point Claude Code gives a hook: the prompt, a tool's input (a Bash
command, a Write's content, an Edit's strings, nested JSON), a tool's output (stdout, a Read's
file content, a failure's error) and Stop's ``last_assistant_message``. Then the raw bytes of
every file Kenning keeps are searched: the spool before the worker runs, then the database with
its ``-wal`` and ``-shm``, the spool's quarantine and every log. The secrets are nowhere; the
``[REDACTED:<name>]`` markers are there instead.
"""

from __future__ import annotations

import json
import re

from kenning.privacy.redact import Redactor, detector_names
from tests.conftest import REPO, Home
from tests.security import (
    base_payload,
    bash,
    files_containing,
    hook_json,
    prompt,
    session_end,
    stop,
    tree_bytes,
    write,
)
from tests.security.corpus import SECRETS, Sample, detector_samples
from tests.security.corpus import payload as corpus_payload

# detector -> (text as it would appear in work, the secret that must never be stored): one per detector
# that finds secrets in text (secret_field and credential_file are placed by the corpus test below).
SAMPLES: dict[str, tuple[str, str]] = detector_samples()
TEXT_DETECTORS = set(detector_names()) - {"secret_field", "credential_file"}


def test_every_detector_has_a_sample_that_it_alone_redacts() -> None:
    assert set(SAMPLES) == TEXT_DETECTORS, "add a sample for every new detector (tests/security/corpus.py)"
    r = Redactor()
    for name, (text, secret) in SAMPLES.items():
        out = r.text(text)
        assert secret not in out, (name, out)
        assert re.findall(r"\[REDACTED:([\w.\-]+)\]", out) == [name], (name, out)


def all_texts(sep: str = "\n") -> str:
    return sep.join(text for text, _secret in SAMPLES.values())


def test_all_samples_together_are_redacted_in_one_string() -> None:
    out = Redactor().text("Here is everything:\n" + all_texts() + "\nthanks")
    for name, (_text, secret) in SAMPLES.items():
        assert secret not in out, name
        assert f"[REDACTED:{name}]" in out, name


def session_events(project: str, sid: str) -> list[tuple[str, dict[str, object]]]:
    """A session carrying every sample at every capture point."""
    texts = all_texts()
    nested = {name: {"value": text, "list": [text, {"deeper": text}]} for name, (text, _s) in SAMPLES.items()}
    edit_old = "\n".join(text for text, _s in list(SAMPLES.values())[::2])
    edit_new = "\n".join(text for text, _s in list(SAMPLES.values())[1::2])
    env_file = "\n".join(f"VAR_{i}={text}" for i, (text, _s) in enumerate(SAMPLES.values()))
    read_path = f"{project}/config/secrets.txt"
    return [
        ("UserPromptSubmit", prompt(project, sid, "Deploy with these credentials please:\n" + texts)),
        ("PostToolUse", bash(project, sid, f"toolu_{sid}_bash", texts, stdout=texts, stderr=texts)),
        ("PostToolUse", write(project, sid, f"toolu_{sid}_write", ".env", env_file)),
        ("PostToolUse", base_payload(project, sid, "PostToolUse", tool_name="Edit", tool_use_id=f"toolu_{sid}_edit",
                                     tool_input={"file_path": f"{project}/settings.py", "old_string": edit_old,
                                                 "new_string": edit_new, "replace_all": False},
                                     tool_response={"filePath": f"{project}/settings.py", "oldString": edit_old,
                                                    "newString": edit_new, "originalFile": texts,
                                                    "structuredPatch": [{"lines": ["-" + edit_old, "+" + edit_new]}],
                                                    "userModified": False, "replaceAll": False})),
        ("PostToolUse", base_payload(project, sid, "PostToolUse", tool_name="Read", tool_use_id=f"toolu_{sid}_read",
                                     tool_input={"file_path": read_path},
                                     tool_response={"type": "text", "file": {
                                         "filePath": read_path, "content": texts, "numLines": texts.count("\n") + 1,
                                         "startLine": 1, "totalLines": texts.count("\n") + 1}})),
        ("PostToolUse", base_payload(project, sid, "PostToolUse", tool_name="mcp__vault__get",
                                     tool_use_id=f"toolu_{sid}_mcp", tool_input={"secrets": nested},
                                     tool_response=[{"type": "text", "text": json.dumps(nested)}])),
        ("PostToolUseFailure", bash(project, sid, f"toolu_{sid}_fail", "./deploy.sh " + texts, stdout=texts,
                                    failed=True)),
        ("Stop", stop(project, sid, "Deployed. For the record, I used:\n" + texts)),
        ("SessionEnd", session_end(project, sid)),
    ]


def assert_no_secret(tree: dict[str, bytes], where: str) -> None:
    assert tree, f"nothing to search in {where}"
    for name, (_text, secret) in SAMPLES.items():
        found = files_containing(tree, secret)
        assert not found, f"the {name} sample is stored in {where}: {found}"


def markers_in(tree: dict[str, bytes]) -> set[str]:
    found: set[str] = set()
    for data in tree.values():
        found |= {m.decode() for m in re.findall(rb"\[REDACTED:([\w.\-]+)\]", data)}
    return found


def test_no_secret_reaches_the_spool_the_database_or_the_logs(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps({"log_level": "DEBUG"}))
    project = str(home.project)
    for event, payload in session_events(project, "secret-1"):
        hook_json(home.hook(event, payload))
    # Worker down: everything waits in the spool.
    spool = tree_bytes(home.paths.spool)
    assert len(spool) == 9, sorted(spool)
    assert_no_secret(spool, "the spool")
    assert markers_in(spool) >= TEXT_DETECTORS

    # Worker up: ingest, observe, summarise; then the database, its WAL and every log.
    home.start_worker()
    home.flush()
    assert home.kenning("status").returncode == 0
    for oid in [r[0] for r in home.db().execute("SELECT id FROM observations")]:
        assert home.kenning("show", str(oid)).returncode == 0
    context = home.kenning("context", "--cwd", project)
    assert context.returncode == 0
    running = tree_bytes(home.data)
    assert {"kenning.db", "kenning.db-wal", "kenning.db-shm", "logs/worker.log"} <= set(running), sorted(running)
    assert_no_secret(running, "the data dir (worker running)")
    assert_no_secret({"kenning context": context.stdout.encode()}, "the injected context")
    db_files = {k: v for k, v in running.items() if k.startswith("kenning.db")}
    assert markers_in(db_files) >= TEXT_DETECTORS
    conn = home.db()
    try:
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 9
        assert conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0] == 0
    finally:
        conn.close()

    home.stop_worker()  # the last connection checkpoints the WAL into the database file
    stopped = tree_bytes(home.data)
    assert_no_secret(stopped, "the data dir (worker stopped)")


def test_redaction_can_be_turned_off_and_then_stores_the_text(home: Home) -> None:
    """The control experiment: the same grep finds the secrets when redaction is off."""
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps({"redact_secrets": False}))
    for event, payload in session_events(str(home.project), "secret-off")[:2]:
        hook_json(home.hook(event, payload))
    spool = tree_bytes(home.paths.spool)
    for name, (_text, secret) in SAMPLES.items():
        assert files_containing(spool, secret), f"the grep would not see a stored {name}"
# --------------------------------------------------------------------------- SECURITY.md

def test_security_md_lists_every_detector() -> None:
    """The detector table of SECURITY.md names exactly the detectors the code has."""
    text = (REPO / "SECURITY.md").read_text(encoding="utf-8")
    m = re.search(r"^## Secret detectors\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, "SECURITY.md has no '## Secret detectors' section"
    rows = re.findall(r"^\| `([\w.\-]+)` \|", m.group(1), re.M)
    names = detector_names()
    assert sorted(rows) == sorted(names), (
        f"missing from SECURITY.md: {sorted(set(names) - set(rows))}; "
        f"not detectors: {sorted(set(rows) - set(names))}")


def test_corpus_secrets_in_their_places_never_reach_the_spool(home: Home) -> None:
    """One corpus sample of every kind and place, each through a real hook process, then grep the spool."""
    home.paths.ensure()
    chosen: dict[tuple[str, str], Sample] = {}
    for sample in SECRETS:
        chosen.setdefault((sample.kind.split("/")[0], sample.place), sample)
    assert len(chosen) >= 30
    for i, sample in enumerate(chosen.values()):
        body = corpus_payload(sample, sid=f"corpus-{i}")
        body["cwd"] = str(home.project)
        hook_json(home.hook(body["hook_event_name"], body))
    spool = tree_bytes(home.paths.spool)
    assert len(spool) == len(chosen), sorted(spool)
    for sample in chosen.values():
        for secret in sample.secrets:
            assert not files_containing(spool, secret), (sample.kind, sample.place)
