"""A default install (embedding_backend auto, no embedding package installed) logs no WARNING while
doctor is green: keyword search is the expected state, not a fault. Said once, at info level."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from kenning.paths import Paths
from kenning.search import embedders
from kenning.settings import Settings
from tests.conftest import Home
from tests.support.llm_harness import Session


def test_a_default_worker_logs_no_warning_and_doctor_is_green(home: Home) -> None:
    if embedders.resolve("auto") != "none":
        pytest.skip("an embedding back-end is installed here: auto is not the default install's none")
    home.env["KENNING_EMBEDDING_BACKEND"] = "auto"  # the default (the test suite otherwise sets none)
    home.start_worker()
    s = Session(home.project)
    for p in (s.start(), s.prompt("Keep totals in cents"), s.edit("src/totals.py"), s.stop("Done."), s.end()):
        assert home.hook(p["hook_event_name"], p).returncode == 0
    home.flush()
    from kenning.hook.client import authed, json_answer, read_pid_file

    info = read_pid_file(home.paths)
    assert info
    deadline = time.monotonic() + 20
    while True:  # the embedder has decided (it used to warn from its thread, after its first wait)
        status = json_answer(authed(home.paths, info["port"], "GET", "/api/search/status", timeout=5))
        if status and status["embeddings"]["state"] not in ("starting", "loading"):
            break
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    assert status["embeddings"]["state"] == "off"
    checks = json.loads(home.kenning("doctor", "--json").stdout)  # (no agent is installed in this scratch home)
    search = [c for c in checks if c["check"] in ("search", "embeddings")]
    assert search and all(c["ok"] for c in search), search
    log = Path(home.paths.worker_log).read_text()
    assert " WARNING " not in log, log
    assert "embeddings are off: no embedding back-end is installed" in log  # said, at info level


def test_auto_without_a_back_end_says_so_at_info_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    from kenning.search.runtime import SearchRuntime
    from kenning.store.db import open_db

    monkeypatch.setattr(embedders, "resolve", lambda backend: "none")  # whatever this venv has installed
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    open_db(paths.db).close()
    caplog.set_level(logging.INFO, logger="kenning")
    runtime = SearchRuntime(paths, Settings(embedding_backend="auto"))
    try:
        assert runtime.semantic is not None and runtime.semantic.wait_ready(5) is False
        time.sleep(1.5)  # past the first wait of an embedder thread, had one been started
        assert runtime.semantic.state == "off"
        assert runtime.meaning_unavailable().startswith("embeddings are off")
    finally:
        runtime.close()
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert any("embeddings are off" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)
