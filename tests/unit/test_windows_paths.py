"""Windows paths read on this (POSIX) machine: recognised as absolute, normalised without the disk, named
by their last folder, keyed case-insensitively, and never resolved against the process's own folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kenning import winpath
from kenning.history.identity import checkout
from kenning.paths import Paths
from kenning.project import canonical, find_root, identify, normalize_remote, relative

REPO = "C:\\Users\\someone\\source\\repos\\NumWordify"
KEY = "c:\\users\\someone\\source\\repos\\numwordify"


@pytest.mark.parametrize("path", [
    REPO, "C:/Users/someone/source/repos/NumWordify", "c:\\", "D:", "\\\\server\\share\\repo",
    "\\\\?\\C:\\Users\\me\\repo", "\\\\?\\UNC\\server\\share\\repo", "\\Users\\me\\repo",
])
def test_windows_paths_are_recognised(path: str) -> None:
    assert winpath.is_windows(path)


@pytest.mark.parametrize("path", ["/Users/me/repo", "relative/dir", "", "C", "C:relative", "ab:/x", "//server/share"])
def test_posix_and_other_paths_are_not(path: str) -> None:
    assert not winpath.is_windows(path)


@pytest.mark.parametrize("spelling", [
    REPO, REPO + "\\", "C:/Users/someone/source/repos/NumWordify", "c:\\USERS\\someone\\source\\repos\\NumWordify",
    "C:\\Users\\someone\\source\\.\\tmp\\..\\repos\\NumWordify", "C:\\Users\\\\someone\\source\\repos\\NumWordify",
    "\\\\?\\C:\\Users\\someone\\source\\repos\\NumWordify",
])
def test_one_folder_however_spelled_has_one_key(spelling: str) -> None:
    assert winpath.key(spelling) == KEY
    assert canonical(spelling) == KEY


def test_normalising_keeps_case_and_uses_backslashes() -> None:
    assert winpath.normalise("c:/Users/Me/./Repo/") == "C:\\Users\\Me\\Repo"
    assert winpath.normalise("\\\\?\\UNC\\Server\\Share\\Repo") == "\\\\Server\\Share\\Repo"
    assert winpath.normalise("//Server/Share/Repo".replace("/", "\\")) == "\\\\Server\\Share\\Repo"
    assert winpath.normalise("C:\\..\\x") == "C:\\x"  # above the root is the root
    assert winpath.name(REPO) == "NumWordify" and winpath.name("C:\\") == "C:"
    assert winpath.name("\\\\server\\share") == "\\\\server\\share"


def test_a_unc_share_is_its_own_anchor() -> None:
    assert winpath.split("\\\\server\\share\\team\\repo") == ("\\\\server\\share", ["team", "repo"])
    assert winpath.key("\\\\Server\\Share\\Team\\Repo") == "\\\\server\\share\\team\\repo"
    assert identify("\\\\server\\share\\team\\Repo").name == "Repo"


def test_find_root_never_looks_at_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bug: ``C:\\...`` was a relative path to realpath and went under the importer's folder."""
    here = tmp_path / "importer"
    (here / ".git").mkdir(parents=True)  # even inside a repository of this machine
    monkeypatch.chdir(here)
    for cwd in (REPO, "C:/Users/someone/source/repos/NumWordify", REPO + "\\src\\Lib"):
        _, root = find_root(cwd)
        assert str(tmp_path) not in root and os.sep + "importer" not in root
        assert root.startswith("C:\\Users\\someone\\source\\repos\\NumWordify")
    assert find_root(REPO) == ("NumWordify", REPO)
    p = identify("C:/Users/someone/source/repos/NumWordify/")
    assert (p.key, p.name, p.root) == (KEY, "NumWordify", REPO)


def test_an_imported_windows_session_is_its_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert checkout(REPO) == ("NumWordify", REPO)
    assert checkout("c:/users/someone/source/repos/NumWordify") == (
        "NumWordify", "C:\\users\\someone\\source\\repos\\NumWordify")
    assert checkout(REPO + "\\.claude\\worktrees\\brave-owl") == ("NumWordify", REPO)
    assert checkout("C:\\Users\\someone\\.codex\\worktrees\\4f2a\\NumWordify") == (
        "NumWordify", "C:\\Users\\someone\\.codex\\worktrees\\4f2a\\NumWordify")
    assert checkout("\\\\build01\\src\\NumWordify") == ("NumWordify", "\\\\build01\\src\\NumWordify")


def test_files_of_a_windows_checkout_are_relative_with_slashes() -> None:
    assert relative(REPO + "\\NumWordify\\Converter.cs", REPO) == "NumWordify/Converter.cs"
    assert relative("c:/users/SOMEONE/source/repos/numwordify/README.md", REPO) == "README.md"
    assert relative("D:\\elsewhere\\x.cs", REPO) == "D:\\elsewhere\\x.cs"
    assert relative("C:\\Users\\someone\\source\\repos\\NumWordifyOld\\x.cs", REPO).endswith("NumWordifyOld\\x.cs")
    assert relative("/Users/me/repo/src/a.py", "/Users/me/repo") == "src/a.py"  # POSIX as before
    assert winpath.relative(REPO, REPO) is None and winpath.relative("/posix/path", REPO) is None


def test_a_windows_folder_is_never_inside_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = Paths(str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path / "data")  # realpath of a relative path would have landed in here
    assert not paths.contains(REPO)
    assert paths.contains(str(tmp_path / "data" / "spool"))


def test_a_remote_on_a_windows_share_is_no_local_folder() -> None:
    assert normalize_remote("\\\\server\\git\\NumWordify.git") == "\\\\server\\git\\numwordify"
    assert normalize_remote("C:/git/NumWordify.git") == "c:\\git\\numwordify"
    assert normalize_remote("git@github.com:someone/NumWordify.git") == "github.com/someone/numwordify"


def test_a_windows_checkout_has_no_remote_to_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.project import git_remote

    monkeypatch.chdir(tmp_path)
    decoy = tmp_path / (REPO + "/.git")  # a relative path of that name here must not be read
    decoy.mkdir(parents=True)
    (decoy / "config").write_text('[remote "origin"]\n\turl = https://github.com/decoy/decoy.git\n')
    assert git_remote(REPO) == ""
