"""The redaction settings: `redact_disabled` and `redact_custom` are validated item by item.

A bad item is reported and ignored, never a crash and never a reason to drop the good ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.paths import Paths
from kenning.privacy.redact import Redactor, detector_names, parse_custom
from kenning.settings import custom_patterns, load, save


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    p = Paths(str(tmp_path / "data"))
    os.makedirs(p.root)
    return p


def write(paths: Paths, values: dict[str, object]) -> None:
    Path(paths.settings).write_text(json.dumps(values))


def test_defaults_are_empty_and_cost_no_regex_import(paths: Paths) -> None:
    s, problems = load(paths, environ={})
    assert s.redact_disabled == () and s.redact_custom == () and problems == []
    code = ("import sys; from kenning.paths import Paths; from kenning.settings import load; "
            f"load(Paths({paths.root!r}), environ={{}}); print('re' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                         cwd=str(Path(__file__).parents[2]), check=True)
    assert out.stdout.strip() == "False"  # the hook reads settings on every call


def test_unknown_detector_names_are_reported_and_the_known_ones_kept(paths: Paths) -> None:
    write(paths, {"redact_disabled": ["jwt", "no_such_detector", "aws_access_key"]})
    s, problems = load(paths, environ={})
    assert s.redact_disabled == ("jwt", "aws_access_key")
    [p] = problems
    assert "no_such_detector" in p and "jwt" in p  # the message lists the valid names


@pytest.mark.parametrize(("item", "why"), [
    ("bad=(", "invalid regex"),
    ("empty=x*", "matches the empty string"),
    ("noequals", "expected name=regex"),
    ("=abc", "expected name=regex"),
    ("name=", "expected name=regex"),
    ("bad name=abc", "the name must be"),
    ("x" * 41 + "=abc", "the name must be"),
    ("huge=a{99999999999}", "invalid regex"),
])
def test_bad_custom_patterns_are_reported_and_ignored(paths: Paths, item: str, why: str) -> None:
    write(paths, {"redact_custom": ["ticket=TICKET-\\d{5}", item]})
    s, problems = load(paths, environ={})
    assert s.redact_custom == ("ticket=TICKET-\\d{5}",)
    assert len(problems) == 1 and why in problems[0], problems


def test_custom_patterns_from_the_environment_keep_their_commas(paths: Paths) -> None:
    s, problems = load(paths, environ={"KENNING_REDACT_CUSTOM": '["id=ID-\\\\d{1,3}", "host=[a-z]+\\\\.corp"]'})
    assert s.redact_custom == ("id=ID-\\d{1,3}", "host=[a-z]+\\.corp") and problems == []
    s, problems = load(paths, environ={"KENNING_REDACT_CUSTOM": "id=ID-\\d{1,3}"})  # one pattern, not split
    assert s.redact_custom == ("id=ID-\\d{1,3}",) and problems == []
    s, problems = load(paths, environ={"KENNING_REDACT_CUSTOM": '["unclosed'})
    assert s.redact_custom == () and "KENNING_REDACT_CUSTOM" in problems[0]
    s, problems = load(paths, environ={"KENNING_REDACT_DISABLED": "jwt, openai_key"})
    assert s.redact_disabled == ("jwt", "openai_key") and problems == []


def test_custom_patterns_become_name_regex_pairs(paths: Paths) -> None:
    write(paths, {"redact_custom": ["kv=key=\\w+"]})
    s, _ = load(paths, environ={})
    assert custom_patterns(s) == [("kv", "key=\\w+")]  # only the first '=' splits


def test_save_refuses_bad_items_and_writes_nothing(paths: Paths) -> None:
    _content, errors = save(paths, {"redact_custom": ["bad=("]})
    assert errors and "invalid regex" in errors[0]
    assert not Path(paths.settings).exists()
    _content, errors = save(paths, {"redact_disabled": ["jwt"], "redact_custom": ["t=T-\\d+"]})
    assert errors == []
    s, _ = load(paths, environ={})
    assert s.redact_disabled == ("jwt",) and s.redact_custom == ("t=T-\\d+",)


def test_every_detector_can_be_disabled_by_its_name() -> None:
    for name in detector_names():
        assert parse_custom(f"{name}=x{name}y")[0] == name  # names are valid custom names too


def test_a_custom_pattern_named_like_a_builtin_uses_its_own_regex() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX2hlcmU"
    assert Redactor().text(f"token {jwt}") == "token [REDACTED:jwt]"  # compiles the built-in
    custom = Redactor(disabled=["jwt"], custom=[("jwt", r"\bFOO\d+\b")])
    assert custom.text(f"FOO123 and {jwt}") == f"[REDACTED:jwt] and {jwt}"


def test_custom_patterns_apply_to_short_strings() -> None:
    r = Redactor(custom=[("pin", r"\b\d{4}\b")])
    assert r.text("pin 1234") == "pin [REDACTED:pin]"
    assert Redactor().text("pin 1234") == "pin 1234"
