"""Choosing the provider (auto and explicit, with the reason), classifying SDK errors, the
OpenAI provider's streaming path, ``kenning doctor``'s observer lines and ``kenning stats``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kenning.doctor import run_checks
from kenning.observer.llm.base import ProviderError
from kenning.observer.llm.openai_api import OpenAIProvider
from kenning.observer.providers.rules import RulesObserver
from kenning.observer.registry import choose, resolve
from kenning.paths import Paths
from kenning.settings import Settings
from tests.support import fake_openai
from tests.support.llm_harness import Harness, observation

pytest.importorskip("anthropic")
pytest.importorskip("openai")


def test_auto_picks_anthropic_then_openai_then_rules() -> None:
    s = Settings()
    p, why = resolve(s, env={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    assert p is not None and p.name == "anthropic" and "ANTHROPIC_API_KEY" in why and "auto" in why
    p, why = resolve(s, env={"OPENAI_API_KEY": "k"})
    assert p is not None and p.name == "openai"
    p, why = resolve(s.replace(base_url="http://127.0.0.1:11434/v1"), env={})
    assert p is not None and p.name == "openai" and "local server" in why
    p, why = resolve(s, env={})
    if p is None:  # no claude login here: rules, with every reason given
        assert why.startswith("rules:") and "anthropic: no API key" in why and "openai:" in why


def test_explicit_provider_without_key_falls_back_to_rules_and_says_why() -> None:
    obs, why = choose(Settings(provider="anthropic"), env={})
    assert isinstance(obs, RulesObserver)
    assert "'anthropic' is not available" in why and "no API key" in why
    obs, why = choose(Settings(provider="rules"), env={"ANTHROPIC_API_KEY": "k"})
    assert isinstance(obs, RulesObserver) and "chosen in settings" in why


def test_kenning_keys_and_a_custom_variable_are_read_never_settings() -> None:
    p, why = resolve(Settings(provider="anthropic"), env={"KENNING_ANTHROPIC_API_KEY": "k"})
    assert p is not None and "KENNING_ANTHROPIC_API_KEY" in why
    p, why = resolve(Settings(provider="openai", api_key_env="MY_KEY"), env={"MY_KEY": "k", "OPENAI_API_KEY": ""})
    assert p is not None and "MY_KEY" in why
    obs, _ = choose(Settings(provider="anthropic", model="claude-x"), env={"ANTHROPIC_API_KEY": "k"})
    assert obs.name == "anthropic" and obs.config.model == "claude-x"  # type: ignore[attr-defined]
    obs.close()  # type: ignore[attr-defined]


def test_choosing_never_imports_an_sdk() -> None:
    code = ("import sys; from kenning.observer.registry import choose; from kenning.settings import Settings; "
            "o, _ = choose(Settings(), env={'ANTHROPIC_API_KEY': 'k'}); o.close(); "
            "choose(Settings(provider='openai'), env={'OPENAI_API_KEY': 'k'})[0].close(); "
            "print('anthropic' in sys.modules, 'openai' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       cwd=str(Path(__file__).resolve().parents[2]))
    assert r.stdout.split() == ["False", "False"], r.stderr


@pytest.mark.parametrize(("status", "kind"), [(429, "quota"), (402, "quota"), (401, "auth"), (403, "auth"),
                                              (500, "transient"), (503, "transient"), (400, "fatal")])
def test_http_failures_are_classified(status: int, kind: str) -> None:
    with fake_openai.FakeOpenAI([fake_openai.error(status, retry_after=2.5)]) as fake:
        conv = OpenAIProvider("k", base_url=fake.base_url).open("sys")
        with pytest.raises(ProviderError) as info:
            conv.send("hello", model="m", max_tokens=100)
    assert info.value.kind == kind
    if status == 429:
        assert info.value.retry_after == 2.5
    assert conv.size_chars == len("sys")  # a failed call leaves the history unchanged


def test_a_refused_connection_is_transient() -> None:
    conv = OpenAIProvider("k", base_url="http://127.0.0.1:9/v1", timeout=2).open("sys")
    with pytest.raises(ProviderError) as info:
        conv.send("hello", model="m", max_tokens=100)
    assert info.value.kind == "transient"


@pytest.mark.parametrize("stream", [False, True])
def test_openai_replies_streamed_or_not_with_usage(stream: bool) -> None:
    reply = observation("discovery", "Exports stream rows") * 3
    with fake_openai.FakeOpenAI([{"content": reply, "usage": {"prompt_tokens": 900, "completion_tokens": 60,
                                                                "prompt_tokens_details": {"cached_tokens": 800}}}]) \
            as fake:
        conv = OpenAIProvider("", base_url=fake.base_url, stream=stream).open("be brief")
        text, usage = conv.send("events", model="qwen", max_tokens=300)
        text2, _ = conv.send("more events", model="qwen", max_tokens=300)
        first, second = fake.requests
    assert text == reply == text2
    assert (usage.tokens_in, usage.cache_read, usage.tokens_out) == (100, 800, 60)
    assert first["body"].get("stream", False) is stream and first["body"]["max_tokens"] == 300
    assert "max_completion_tokens" not in first["body"]  # a compatible server, not api.openai.com
    assert [m["role"] for m in second["body"]["messages"]] == ["system", "user", "assistant", "user"]
    assert first["headers"]["authorization"] == "Bearer not-needed"


def run(h: Harness) -> None:
    s = h.session()
    h.spool(s.prompt("Add CSV export."), s.edit("src/export.py"), s.stop("Done."))
    h.settle()


def test_doctor_and_stats_show_provider_budget_and_savings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with fake_openai.FakeOpenAI([observation("feature", "CSV export of invoices")]) as fake:
        monkeypatch.setenv("KENNING_BASE_URL", fake.base_url)
        monkeypatch.setenv("KENNING_DAILY_TOKEN_BUDGET", "100000")
        h = Harness(tmp_path, provider="auto", base_url=fake.base_url, daily_token_budget=100000,
                    env={"OPENAI_API_KEY": "k"})
        run(h)
        h.close()
    checks = {name: (level, detail) for level, name, detail in run_checks(Paths(str(tmp_path / "data")))}
    level, detail = checks["observer"]
    assert level == "ok" and detail.startswith("no worker is running; a new one would use openai (gpt-4o-mini): "
                                               "picked by auto"), detail
    level, detail = checks["observer budget"]
    assert level == "ok" and "of 100,000" in detail

    from kenning.commands.stats import cmd_stats

    class Args:
        days = 7
        project = None
        json = False
        since = None
        until = None

    assert cmd_stats(Args()) == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "Observations: 1 (openai 1)" in out and "gpt-4o-mini" in out and "Savings:" in out
    assert "of 100,000 tokens" in out


def test_doctor_warns_when_the_budget_is_spent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("KENNING_DAILY_TOKEN_BUDGET", "10")
    with fake_openai.FakeOpenAI([observation("feature", "x")]) as fake:
        h = Harness(tmp_path, provider="openai", base_url=fake.base_url, daily_token_budget=10)
        run(h)
        h.close()
    checks: dict[str, Any] = {name: (level, detail) for level, name, detail in
                              run_checks(Paths(str(tmp_path / "data")))}
    level, detail = checks["observer budget"]
    assert level == "warn" and "rules observer takes over until midnight" in detail
