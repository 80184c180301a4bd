"""The `claude` provider with claude-agent-sdk and the Claude Code CLI (the one its wheel bundles, or the
same pinned version from npm on PATH when the SDK was built without it) against the fake API.

Offline: ANTHROPIC_BASE_URL points at tests/support/fake_anthropic.py, HOME is a scratch dir.
Covers issue 3's acceptance for this provider: one growing conversation per CLI process,
replies and usage, 401/403 -> auth, 429 / usage limit -> quota, a Claude Code login (no API
key) works, the observer's CLI fires none of the user's hooks (and a control run without
``setting_sources=[]`` shows the same hooks DO fire), and no `claude` process outlives
close(), a timeout, garbage collection, or the death of its parent.

Skipped when claude-agent-sdk (extra ``claude``) is not installed.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk not installed (extra 'claude')")

from kenning.observer.llm.base import ProviderError
from kenning.observer.llm.claude_agent import ClaudeAgentConversation, ClaudeAgentProvider
from tests.support.claude_cli import flag_value, sdk_cli_dir
from tests.support.fake_anthropic import FakeAnthropic, error, in_order, text

pytestmark = pytest.mark.slow

MODEL = "claude-haiku-4-5"
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")


# ---- helpers --------------------------------------------------------------------------------


def offline_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),  # never the developer's real one
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
        "ANTHROPIC_AUTH_TOKEN": "",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",  # one request per failure; the CLI's backoff takes minutes
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    env.update(extra)
    return env


def claude_children() -> list[tuple[int, str]]:
    """(pid, state) of every child of this process that runs a `claude` binary."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode()
        except (OSError, IndexError):
            continue
        if fields[1] == me and os.path.basename(argv0) == "claude":
            found.append((int(entry), fields[0]))
    return found


def wait_no_claude_children(timeout: float = 5.0) -> list[tuple[int, str]]:
    deadline = time.monotonic() + timeout
    left = claude_children()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = claude_children()
    return left  # zombies count too: an unreaped child is a leak as well


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def prompts_of(body: dict[str, Any]) -> list[str]:
    """Plain user/assistant texts of a request (the CLI's <system-reminder> blocks left out)."""
    out = []
    for msg in body["messages"]:
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for b in blocks:
            if b.get("type") == "text" and not b["text"].lstrip().startswith("<system-reminder>"):
                out.append(f"{msg['role']}:{b['text'].strip()}")
    return out


@pytest.fixture(scope="module", autouse=True)
def sdk_finds_a_cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The bundled CLI, or the pinned one from npm on PATH (see ``sdk_cli_dir``)."""
    try:
        where = sdk_cli_dir(tmp_path_factory.mktemp("claude-bin"))
    except LookupError as e:
        pytest.skip(str(e))
    with pytest.MonkeyPatch.context() as mp:
        if where:
            mp.setenv("PATH", where + os.pathsep + os.environ.get("PATH", ""))
        yield


@pytest.fixture(autouse=True)
def no_leftover_children() -> Iterator[None]:
    yield
    assert wait_no_claude_children() == [], "a claude process outlived its test"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".claude").mkdir(parents=True)
    return h


def provider_for(tmp_path: Path, home: Path, fake: FakeAnthropic, **kw: Any) -> ClaudeAgentProvider:
    env = offline_env(home, fake.base_url, **kw.pop("env", {}))
    return ClaudeAgentProvider(data_dir=str(tmp_path / "data"), env=env, **kw)


# ---- conversation ---------------------------------------------------------------------------


def test_two_sends_are_one_growing_conversation(tmp_path: Path, home: Path) -> None:
    script = in_order(
        [text("<observation>first</observation>")],
        {"content": [text("<observation>second</observation>")], "usage": {"input_tokens": 321, "output_tokens": 45,
                                                                          "cache_read_input_tokens": 7}},
    )  # fmt: skip
    with FakeAnthropic(script=script) as fake:
        provider = provider_for(tmp_path, home, fake)
        assert provider.available()[0]
        conv = provider.open("OBSERVER-SYSTEM-PROMPT")
        try:
            # @path must reach the model verbatim, never as the file's content.
            reply1, usage1 = conv.send("EVENT-1 read @/etc/hostname", model=MODEL, max_tokens=1500)
            pid = conv.pid
            reply2, usage2 = conv.send("EVENT-2", model=MODEL, max_tokens=1500)
            assert conv.pid == pid  # same subprocess: streaming input, not one CLI per turn
            size = conv.size_chars
        finally:
            conv.close()

    assert reply1 == "<observation>first</observation>"
    assert reply2 == "<observation>second</observation>"
    assert (usage1.tokens_in, usage1.tokens_out) == (100, 20)  # per turn, not cumulative
    assert (usage2.tokens_in, usage2.tokens_out, usage2.cache_read) == (321, 45, 7)
    turns = ("EVENT-1 read @/etc/hostname", reply1, "EVENT-2", reply2)
    assert size == len("OBSERVER-SYSTEM-PROMPT") + sum(map(len, turns))

    reqs = [r for r in fake.requests if r["path"].startswith("/v1/messages")]
    assert len(reqs) == 2, [r["kind"] for r in reqs]
    first, second = (r["body"] for r in reqs)
    assert prompts_of(first) == ["user:EVENT-1 read @/etc/hostname"]
    assert prompts_of(second) == [
        "user:EVENT-1 read @/etc/hostname",
        "assistant:<observation>first</observation>",
        "user:EVENT-2",
    ]
    for body in (first, second):
        system = json.dumps(body["system"])
        assert "OBSERVER-SYSTEM-PROMPT" in system
        assert body["tools"] == []  # no tools offered at all
        assert body["thinking"] == {"type": "disabled"}
        assert body["max_tokens"] == 1500
        assert body["model"] == MODEL
    # no transcript of the observer: --no-session-persistence
    assert not list((home / ".claude").glob("projects/**/*.jsonl"))


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        (error(401, message="invalid x-api-key"), "auth"),
        (error(403, message="forbidden"), "auth"),
        (error(429, message="Claude AI usage limit reached"), "quota"),
        (error(529, type="overloaded_error", message="Overloaded"), "transient"),
    ],
    ids=["401", "403", "429-usage-limit", "529"],
)
def test_failures_map_to_provider_errors(tmp_path: Path, home: Path, step: dict[str, Any], kind: str) -> None:
    with FakeAnthropic(script=in_order(step)) as fake:
        conv = provider_for(tmp_path, home, fake).open("SYS")
        try:
            with pytest.raises(ProviderError) as exc:
                conv.send("ONE", model=MODEL, max_tokens=100)
        finally:
            conv.close()
    assert exc.value.kind == kind, str(exc.value)
    assert len(fake.requests) == 1


def test_failed_turn_restarts_a_fresh_cli(tmp_path: Path, home: Path) -> None:
    """The CLI keeps a failed user turn in its history (the next prompt is merged into it),
    so the provider drops that process: the retry must not carry the failed text."""
    with FakeAnthropic(script=in_order([text("before")], error(429), [text("after")])) as fake:
        conv = provider_for(tmp_path, home, fake).open("SYS")
        try:
            assert conv.send("ONE", model=MODEL, max_tokens=100)[0] == "before"
            pid = conv.pid
            with pytest.raises(ProviderError) as exc:
                conv.send("TWO", model=MODEL, max_tokens=100)
            assert exc.value.kind == "quota"
            assert conv.pid is None and pid is not None and not alive(pid)
            assert conv.size_chars == len("SYS") + len("ONE") + len("before")  # unchanged by the failure
            assert conv.send("THREE", model=MODEL, max_tokens=100)[0] == "after"
            assert conv.size_chars == len("SYS") + len("THREE") + len("after")  # a fresh history
        finally:
            conv.close()
    assert prompts_of(fake.requests[1]["body"]) == ["user:ONE", "assistant:before", "user:TWO"]
    assert prompts_of(fake.requests[2]["body"]) == ["user:THREE"]


def test_claude_code_login_works_without_api_key(tmp_path: Path, home: Path) -> None:
    """A `claude /login` credentials file is all the provider needs (no ANTHROPIC_API_KEY)."""
    creds = home / ".claude" / ".credentials.json"
    token = "sk-ant-oat01-fake-login-token"
    oauth = {"accessToken": token, "refreshToken": "sk-ant-ort01-fake", "scopes": ["user:inference"],
             "expiresAt": int(time.time() * 1000) + 3_600_000, "subscriptionType": "max"}  # fmt: skip
    creds.write_text(json.dumps({"claudeAiOauth": oauth}))
    creds.chmod(0o600)
    with FakeAnthropic(script=in_order([text("via login")])) as fake:
        provider = provider_for(tmp_path, home, fake, env={"ANTHROPIC_API_KEY": ""})
        ok, why = provider.available()
        assert ok and ".credentials.json" in why and token not in why
        conv = provider.open("SYS")
        try:
            assert conv.send("hi", model=MODEL, max_tokens=100)[0] == "via login"
        finally:
            conv.close()
    headers = fake.requests[0]["headers"]
    assert headers.get("authorization") == f"Bearer {token}"
    assert "x-api-key" not in headers


def test_not_logged_in_is_auth(tmp_path: Path, home: Path) -> None:
    with FakeAnthropic(script=in_order([text("never")])) as fake:
        provider = provider_for(tmp_path, home, fake, env={"ANTHROPIC_API_KEY": ""})
        assert provider.available() == (
            False,
            "no Claude Code login found (run `claude` and /login) and no ANTHROPIC_API_KEY",
        )
        conv = provider.open("SYS")
        try:
            with pytest.raises(ProviderError) as exc:
                conv.send("hi", model=MODEL, max_tokens=100)
        finally:
            conv.close()
    assert exc.value.kind == "auth" and "/login" in str(exc.value)
    assert fake.requests == []


def test_model_switch_mid_conversation(tmp_path: Path, home: Path) -> None:
    with FakeAnthropic(script=in_order([text("a")], [text("ok")], [text("b")])) as fake:
        conv = provider_for(tmp_path, home, fake).open("SYS")
        try:
            conv.send("one", model=MODEL, max_tokens=100)
            pid = conv.pid
            assert conv.send("two", model="claude-sonnet-4-5", max_tokens=100)[0] == "b"
            assert conv.pid == pid
        finally:
            conv.close()
    models = [r["body"]["model"] for r in fake.requests]
    # The CLI validates a new model with a 1-token probe request before the turn.
    assert models[0] == MODEL and models[-1] == "claude-sonnet-4-5"


# ---- isolation ------------------------------------------------------------------------------


def _hook_settings(log: Path) -> dict[str, Any]:
    code = (
        "import json, sys; p = json.load(sys.stdin); "
        f"open({str(log)!r}, 'a').write(json.dumps(p.get('hook_event_name')) + '\\n')"
    )
    hook = {"hooks": [{"type": "command", "command": f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"}]}
    return {"hooks": {ev: [{"matcher": "*", **hook}] for ev in HOOK_EVENTS}}


class _GuardProvider(ClaudeAgentProvider):
    """The provider with its hook guards replaced: ``setting_sources`` (None = the CLI's
    default, every source) and the flag settings carrying ``disableAllHooks``."""

    def __init__(self, *, setting_sources: list[str] | None, settings: str | None, **kw: Any) -> None:
        super().__init__(**kw)
        self.guards = {"setting_sources": setting_sources, "settings": settings}

    def options(self, system: str, *, model: str, max_tokens: int) -> Any:
        opts = super().options(system, model=model, max_tokens=max_tokens)
        return dataclasses.replace(opts, **self.guards)


def _run_conversation(provider: ClaudeAgentProvider) -> None:
    conv = provider.open("SYS")
    try:
        conv.send("EVENT-1", model=MODEL, max_tokens=100)
        conv.send("EVENT-2", model=MODEL, max_tokens=100)
    finally:
        conv.close()


def test_observer_cli_fires_none_of_the_users_hooks(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "hooks.log"
    (home / ".claude" / "settings.json").write_text(json.dumps(_hook_settings(log)))
    # Project-scope hooks in the observer's own cwd must not fire either.
    project_settings = tmp_path / "data" / "observer-sessions" / ".claude" / "settings.json"
    project_settings.parent.mkdir(parents=True)
    project_settings.write_text(json.dumps(_hook_settings(log)))

    def fired() -> list[str]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    with FakeAnthropic(script=in_order([text("ok")])) as fake:
        env = offline_env(home, fake.base_url)
        data = str(tmp_path / "data")
        _run_conversation(ClaudeAgentProvider(data_dir=data, env=env))
        assert fake.requests, "the conversation never reached the model"
        assert fired() == []

        # Each guard alone is enough.
        no_hooks = json.dumps({"disableAllHooks": True})
        _run_conversation(_GuardProvider(data_dir=data, env=env, setting_sources=[], settings=None))
        _run_conversation(_GuardProvider(data_dir=data, env=env, setting_sources=None, settings=no_hooks))
        assert fired() == []

        # Control: without both guards the very same hooks fire, so the assertions above
        # would fail if the guards broke.
        _run_conversation(_GuardProvider(data_dir=data, env=env, setting_sources=None, settings=None))
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(fired()), fired()


def test_cli_process_is_isolated(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker is spawned by a hook of the user's session and inherits these.
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "parent-session-id")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/some/user/project")
    with FakeAnthropic(script=in_order([text("ok")])) as fake:
        conv = provider_for(tmp_path, home, fake).open("SYS")
        try:
            conv.send("hi", model=MODEL, max_tokens=100)
            pid = conv.pid
            assert pid is not None
            environ = dict(
                item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item
            )
            cwd = os.readlink(f"/proc/{pid}/cwd")
            argv = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
        finally:
            conv.close()
    assert environ["KENNING_INTERNAL"] == "1"
    assert "CLAUDECODE" not in environ  # the SDK drops it; the rest is blanked
    assert environ["CLAUDE_CODE_SESSION_ID"] == "" and environ["CLAUDE_PROJECT_DIR"] == ""
    assert environ["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py"
    sessions = (tmp_path / "data" / "observer-sessions").resolve()
    assert cwd == str(sessions)
    assert stat.S_IMODE(sessions.stat().st_mode) == 0o700
    assert "--setting-sources=" in argv and "--no-session-persistence" in argv
    assert flag_value(argv, "--tools") == "" and flag_value(argv, "--permission-mode") == "dontAsk"
    assert "ANTHROPIC_API_KEY" not in " ".join(argv)  # secrets travel in the env only


# ---- no orphan processes --------------------------------------------------------------------


def test_close_and_five_conversations_leave_no_process(tmp_path: Path, home: Path) -> None:
    with FakeAnthropic(script=in_order([text("ok")])) as fake:
        provider = provider_for(tmp_path, home, fake)
        pids = []
        for i in range(5):
            conv = provider.open("SYS")
            conv.send(f"event {i}", model=MODEL, max_tokens=100)
            pids.append(conv.pid)
            t0 = time.monotonic()
            conv.close()
            assert time.monotonic() - t0 < 3.0  # stdin EOF is enough: no 5 s grace wait
            assert conv.pid is None
            assert wait_no_claude_children() == []
            conv.close()  # idempotent
    assert len(set(pids)) == 5 and not any(alive(p) for p in pids if p)
    assert claude_children() == []


def test_send_timeout_kills_the_cli(tmp_path: Path, home: Path) -> None:
    script = in_order([text("fast")], {"content": [text("too late")], "delay": 8}, [text("fresh")])
    with FakeAnthropic(script=script) as fake:
        conv = provider_for(tmp_path, home, fake, timeout=1.5).open("SYS")
        try:
            conv.send("one", model=MODEL, max_tokens=100)
            pid = conv.pid
            assert pid is not None
            t0 = time.monotonic()
            with pytest.raises(ProviderError) as exc:
                conv.send("slow", model=MODEL, max_tokens=100)
            assert exc.value.kind == "transient" and "1.5 s" in str(exc.value)
            assert time.monotonic() - t0 < 6.0
            assert not alive(pid) and wait_no_claude_children() == []
        finally:
            conv.close()


def test_cli_that_never_answers_the_handshake_is_killed(tmp_path: Path, home: Path) -> None:
    pidfile = tmp_path / "cli.pid"
    cli = tmp_path / "claude"
    cli.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")  # deaf to stdin EOF
    cli.chmod(0o755)
    provider = ClaudeAgentProvider(
        data_dir=str(tmp_path / "data"), env={"HOME": str(home)}, cli_path=str(cli), start_timeout=2
    )
    conv = provider.open("SYS")
    t0 = time.monotonic()
    try:
        with pytest.raises(ProviderError) as exc:
            conv.send("hi", model=MODEL, max_tokens=100)
    finally:
        conv.close()
    assert exc.value.kind == "transient" and "did not start" in str(exc.value)
    assert time.monotonic() - t0 < 8.0
    assert not alive(int(pidfile.read_text()))


def test_close_from_another_thread_ends_a_hanging_send(tmp_path: Path, home: Path) -> None:
    in_flight = threading.Event()

    def script(body: dict[str, Any]) -> dict[str, Any]:
        in_flight.set()  # the request reached the model; the answer is 8 s away
        return {"content": [text("never seen")], "delay": 8}

    with FakeAnthropic(script=script) as fake:
        conv = provider_for(tmp_path, home, fake, timeout=60).open("SYS")
        outcome: list[BaseException | str] = []

        def run() -> None:
            try:
                outcome.append(conv.send("hangs", model=MODEL, max_tokens=100)[0])
            except BaseException as exc:
                outcome.append(exc)

        t = threading.Thread(target=run)
        t.start()
        assert in_flight.wait(30)
        t0 = time.monotonic()
        conv.close()
        t.join(10)
        assert not t.is_alive() and time.monotonic() - t0 < 6.0
    assert isinstance(outcome[0], ProviderError) and outcome[0].kind == "transient"


def test_garbage_collected_conversation_leaves_no_process(tmp_path: Path, home: Path) -> None:
    with FakeAnthropic(script=in_order([text("ok")])) as fake:
        provider: ClaudeAgentProvider | None = provider_for(tmp_path, home, fake)
        assert provider is not None
        conv: ClaudeAgentConversation | None = provider.open("SYS")
        assert conv is not None
        conv.send("hi", model=MODEL, max_tokens=100)
        pid = conv.pid
        assert pid is not None and alive(pid)
        del conv, provider  # never closed
        gc.collect()
        assert wait_no_claude_children() == []
        assert not alive(pid)


_ORPHAN_CHILD = """
import os, signal, sys
from kenning.observer.llm.claude_agent import ClaudeAgentProvider
conv = ClaudeAgentProvider(data_dir=sys.argv[1], env=__import__("json").loads(sys.argv[2])).open("SYS")
conv.send("hi", model=sys.argv[3], max_tokens=100)
print(conv.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # the worker dies without any cleanup
"""


def test_cli_exits_when_its_parent_is_killed(tmp_path: Path, home: Path) -> None:
    with FakeAnthropic(script=in_order([text("ok")])) as fake:
        env = offline_env(home, fake.base_url)
        proc = subprocess.run(
            [sys.executable, "-c", _ORPHAN_CHILD, str(tmp_path / "data"), json.dumps(env), MODEL],
            capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    pid = int(proc.stdout.split()[-1])
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the CLI outlived its parent (stdin EOF must end it)"
