"""Settings: defaults on disk, env overrides, validation that reports instead of raising."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from kenning import settings
from kenning.paths import Paths
from kenning.settings import SPECS, default_port, defaults, load, save


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths(str(tmp_path / "data"))


def write_settings(paths: Paths, content: bytes | str | dict) -> None:
    os.makedirs(paths.root, exist_ok=True)
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode()
    Path(paths.settings).write_bytes(content)


def problems_about(problems: list[str], word: str) -> list[str]:
    return [p for p in problems if word in p]


# --------------------------------------------------------------------------- defaults


def test_first_load_with_create_writes_every_default_as_private_file(paths: Paths) -> None:
    assert not os.path.exists(paths.settings)
    s, problems = load(paths, create=True, environ={})
    assert problems == []
    assert stat.S_IMODE(os.stat(paths.settings).st_mode) == 0o600
    on_disk = json.loads(Path(paths.settings).read_text())
    assert set(on_disk) == set(SPECS)
    assert on_disk == defaults()
    assert on_disk["port"] == default_port()
    assert on_disk["skip_tools"] == list(settings.DEFAULT_SKIP_TOOLS)
    assert s.as_dict() == on_disk


def test_load_without_create_writes_nothing(paths: Paths) -> None:
    s, problems = load(paths, environ={})
    assert problems == []
    assert not os.path.exists(paths.settings)
    assert s.as_dict() == defaults()


def test_create_does_not_overwrite_an_existing_file(paths: Paths) -> None:
    write_settings(paths, {"provider": "rules"})
    s, problems = load(paths, create=True, environ={})
    assert problems == []
    assert s.provider == "rules"
    assert json.loads(Path(paths.settings).read_text()) == {"provider": "rules"}


def test_default_port_is_in_the_per_user_range() -> None:
    assert 37800 <= default_port() < 37900
    assert default_port() == 37800 + os.getuid() % 100


# ------------------------------------------------------------------------ env overrides


def test_env_overrides_file_and_default(paths: Paths) -> None:
    write_settings(paths, {"port": 40001, "provider": "rules"})
    s, problems = load(paths, environ={"KENNING_PORT": "40002"})
    assert problems == []
    assert s.port == 40002
    assert s.provider == "rules"  # untouched by env: the file value stands


def test_env_override_reads_os_environ_by_default(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_PORT", "40123")
    s, problems = load(paths)
    assert problems == []
    assert s.port == 40123


def test_env_list_values_split_on_commas(paths: Paths) -> None:
    s, problems = load(paths, environ={"KENNING_EXCLUDED_PROJECTS": "a,b", "KENNING_SKIP_TOOLS": " Bash , ,Read,"})
    assert problems == []
    assert s.excluded_projects == ("a", "b")
    assert s.skip_tools == ("Bash", "Read")


@pytest.mark.parametrize(("raw", "expected"), [
    ("false", False), ("0", False), ("off", False), ("NO", False),
    ("true", True), ("1", True), ("On", True), ("yes", True),
])
def test_env_booleans(paths: Paths, raw: str, expected: bool) -> None:
    s, problems = load(paths, environ={"KENNING_REDACT_SECRETS": raw})
    assert problems == []
    assert s.redact_secrets is expected


def test_invalid_env_value_is_ignored_and_reported(paths: Paths) -> None:
    write_settings(paths, {"port": 40001})
    s, problems = load(paths, environ={"KENNING_PORT": "not-a-port", "KENNING_REDACT_SECRETS": "maybe"})
    assert s.port == 40001  # the file value survives a broken env override
    assert s.redact_secrets is True
    assert problems_about(problems, "KENNING_PORT")
    assert problems_about(problems, "KENNING_REDACT_SECRETS")


def test_non_setting_env_vars_are_not_problems(paths: Paths) -> None:
    s, problems = load(paths, environ={"KENNING_DATA_DIR": "/elsewhere", "KENNING_INTERNAL": "1"})
    assert problems == []
    assert s.as_dict() == defaults()


# ------------------------------------------------------------------------ invalid values


@pytest.mark.parametrize(("key", "bad"), [
    ("port", 80),                    # below range
    ("port", 70000),                 # above range
    ("port", "http"),                # not a number
    ("port", True),                  # bool is not an int here
    ("port", 40000.5),               # float
    ("port", [40000]),               # wrong type
    ("context_max_chars", 9801),     # above Claude Code's cut
    ("provider", "gpt-9"),           # unknown choice
    ("provider", 3),
    ("log_level", "VERBOSE"),        # unknown choice
    ("redact_secrets", "perhaps"),
    ("redact_secrets", 1),
    ("excluded_projects", [1, 2]),
    ("excluded_projects", {"a": 1}),
    ("mode", ""),
    ("mode", None),
])
def test_invalid_file_value_falls_back_to_default_and_is_reported(paths: Paths, key: str, bad: object) -> None:
    write_settings(paths, {key: bad, "context_sessions": 7})
    s, problems = load(paths, environ={})
    assert getattr(s, key) == (default_port() if key == "port" else SPECS[key].default)
    assert len(problems) == 1 and key in problems[0], problems
    assert s.context_sessions == 7  # other valid values still apply


def test_valid_file_values_are_normalised(paths: Paths) -> None:
    write_settings(paths, {"log_level": "debug", "port": "40500", "excluded_projects": ["  a ", "", "b"],
                           "skip_tools": "X,Y", "redact_secrets": False})
    s, problems = load(paths, environ={})
    assert problems == []
    assert s.log_level == "DEBUG"
    assert s.port == 40500
    assert s.excluded_projects == ("a", "b")
    assert s.skip_tools == ("X", "Y")
    assert s.redact_secrets is False


def test_unknown_key_is_reported_and_ignored(paths: Paths) -> None:
    write_settings(paths, {"prot": 40000, "provider": "rules"})
    s, problems = load(paths, environ={})
    assert s.provider == "rules"
    assert not hasattr(s, "prot")
    assert len(problems) == 1 and "prot" in problems[0]


# ------------------------------------------------------------------------- corrupt files


@pytest.mark.parametrize("content", [
    b'{"port": 40000,',                      # truncated JSON
    b"\xff\xfe\x00\x01\x80garbage\x00\xc3",  # binary, invalid UTF-8
    b"[1, 2, 3]",                            # a list, not an object
    b'"just a string"',
    b"null",
    b"",
    b"[" * 100_000 + b"]" * 100_000,         # nesting deep enough to exhaust the parser
])
def test_corrupt_settings_file_gives_defaults_and_a_problem(paths: Paths, content: bytes) -> None:
    write_settings(paths, content)
    s, problems = load(paths, create=True, environ={})
    assert s.as_dict() == defaults()
    assert len(problems) == 1 and paths.settings in problems[0], problems
    assert Path(paths.settings).read_bytes() == content  # never overwritten by create


def test_settings_path_that_is_a_directory_gives_defaults_and_a_problem(paths: Paths) -> None:
    os.makedirs(paths.settings)
    s, problems = load(paths, create=True, environ={})
    assert s.as_dict() == defaults()
    assert len(problems) == 1 and "unreadable" in problems[0]


def test_unreadable_settings_file_gives_defaults_and_a_problem(paths: Paths) -> None:
    write_settings(paths, {"provider": "rules"})
    os.chmod(paths.settings, 0o000)
    try:
        try:
            open(paths.settings).close()
            pytest.skip("this user (root?) can read a 0000 file")
        except PermissionError:
            pass
        s, problems = load(paths, environ={})
        assert s.provider == "auto"
        assert len(problems) == 1 and "unreadable" in problems[0]
    finally:
        os.chmod(paths.settings, 0o600)


# ----------------------------------------------------------------------------------- save


def test_save_creates_file_with_defaults_plus_change(paths: Paths) -> None:
    saved, errors = save(paths, {"port": 40010})
    assert errors == []
    on_disk = json.loads(Path(paths.settings).read_text())
    assert on_disk == saved
    assert on_disk == {**defaults(), "port": 40010}
    assert stat.S_IMODE(os.stat(paths.settings).st_mode) == 0o600
    assert load(paths, environ={})[0].port == 40010


def test_save_merges_into_existing_file(paths: Paths) -> None:
    write_settings(paths, {"provider": "rules", "mode": "code-chill"})
    saved, errors = save(paths, {"context_sessions": 3, "log_level": "warning", "excluded_projects": "x, y"})
    assert errors == []
    on_disk = json.loads(Path(paths.settings).read_text())
    assert saved == on_disk
    assert on_disk == {"provider": "rules", "mode": "code-chill", "context_sessions": 3,
                       "log_level": "WARNING", "excluded_projects": ["x", "y"]}
    s, problems = load(paths, environ={})
    assert problems == []
    assert (s.provider, s.context_sessions, s.excluded_projects) == ("rules", 3, ("x", "y"))


@pytest.mark.parametrize("changes", [
    {"port": 80},
    {"provider": "rules", "port": "eighty"},  # one valid, one invalid: nothing written
    {"colour": "blue"},
    {"log_level": "LOUD"},
])
def test_save_writes_nothing_when_a_change_is_invalid(paths: Paths, changes: dict) -> None:
    write_settings(paths, '{"mode":  "code-chill"}')
    before = Path(paths.settings).read_bytes()
    _current, errors = save(paths, changes)
    assert errors
    assert Path(paths.settings).read_bytes() == before
    assert os.listdir(paths.root) == ["settings.json"]  # no temp file left either


def test_save_invalid_change_without_file_creates_nothing(paths: Paths) -> None:
    _current, errors = save(paths, {"port": 1})
    assert len(errors) == 1 and "port" in errors[0]
    assert not os.path.exists(paths.settings)


@pytest.mark.parametrize("content", [b"{not json", b"[" * 100_000 + b"]" * 100_000, b"[1]"])
def test_save_over_a_corrupt_file_starts_from_defaults(paths: Paths, content: bytes) -> None:
    write_settings(paths, content)
    saved, errors = save(paths, {"provider": "rules"})
    assert errors == []
    assert json.loads(Path(paths.settings).read_text()) == saved == {**defaults(), "provider": "rules"}


def test_every_default_is_valid_as_written_out() -> None:
    """load() takes a value equal to its default (same type) without checking it: that is sound only
    because every default, as settings.json holds it, passes its own check and comes back unchanged."""
    from kenning import settings as s

    for name in s.SPECS:
        default = s._default(name)
        raw = list(default) if isinstance(default, tuple) else default
        assert s._coerce(name, raw, default, from_env=False) == default, name
        assert s._check_items(name, default) == (default, []), name
