"""Project resolution (git root, worktrees) and exclusion globs."""

from __future__ import annotations

import fnmatch
import os
import posix
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.project import (
    canonical,
    find_root,
    git_remote,
    glob_match,
    identify,
    is_excluded,
    normalize_remote,
    relative,
)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True)


def real(p: Path) -> str:
    return os.path.realpath(p)


@pytest.fixture
def no_git_above(tmp_path: Path) -> Path:
    for d in [tmp_path, *tmp_path.parents]:
        if (d / ".git").exists():
            pytest.skip(f"{d} is inside a git checkout; the 'no git' case cannot be built here")
    return tmp_path


def test_git_repo_root_names_the_project(no_git_above: Path) -> None:
    repo = no_git_above / "invoice-api"
    (repo / ".git").mkdir(parents=True)
    assert find_root(str(repo)) == ("invoice-api", real(repo))


def test_nested_subdir_resolves_to_the_repo(no_git_above: Path) -> None:
    repo = no_git_above / "invoice-api"
    (repo / ".git").mkdir(parents=True)
    deep = repo / "src" / "billing" / "tax"
    deep.mkdir(parents=True)
    assert find_root(str(deep)) == ("invoice-api", real(repo))


def test_innermost_repo_wins(no_git_above: Path) -> None:
    outer = no_git_above / "outer"
    inner = outer / "vendor" / "inner"
    (outer / ".git").mkdir(parents=True)
    (inner / ".git").mkdir(parents=True)
    (inner / "x").mkdir()
    assert find_root(str(inner / "x")) == ("inner", real(inner))
    assert find_root(str(outer / "vendor")) == ("outer", real(outer))


def test_no_git_means_the_folder_itself(no_git_above: Path) -> None:
    folder = no_git_above / "scratch" / "notes"
    folder.mkdir(parents=True)
    assert find_root(str(folder)) == ("notes", real(folder))


def test_symlinked_cwd_resolves_to_the_real_repo(no_git_above: Path) -> None:
    repo = no_git_above / "invoice-api"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (no_git_above / "shortcut").symlink_to(repo / "src")
    assert find_root(str(no_git_above / "shortcut")) == ("invoice-api", real(repo))


def test_linked_worktree_resolves_to_the_main_repo(no_git_above: Path) -> None:
    main = no_git_above / "invoice-api"
    main.mkdir()
    git("init", "-q", cwd=main)
    (main / "README").write_text("hi\n")
    git("add", "README", cwd=main)
    git("commit", "-q", "-m", "init", cwd=main)
    wt = no_git_above / "invoice-api-feature"
    git("worktree", "add", "-q", "-b", "feature", str(wt), cwd=main)
    assert (wt / ".git").is_file()  # a real linked worktree: .git is a file
    (wt / "src").mkdir()
    assert find_root(str(wt)) == ("invoice-api", real(main))
    assert find_root(str(wt / "src")) == ("invoice-api", real(main))
    assert find_root(str(main)) == ("invoice-api", real(main))


def test_worktree_with_relative_gitdir_and_no_commondir(no_git_above: Path) -> None:
    main = no_git_above / "repo"
    meta = main / ".git" / "worktrees" / "wt"
    meta.mkdir(parents=True)
    wt = no_git_above / "wt"
    wt.mkdir()
    (wt / ".git").write_text("gitdir: ../repo/.git/worktrees/wt\n")
    assert find_root(str(wt)) == ("repo", real(main))


def test_submodule_checkout_stays_its_own_project(no_git_above: Path) -> None:
    sup = no_git_above / "super"
    (sup / ".git" / "modules" / "lib").mkdir(parents=True)
    sub = sup / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert find_root(str(sub)) == ("lib", real(sub))


def test_unreadable_git_file_keeps_the_checkout(no_git_above: Path) -> None:
    wt = no_git_above / "odd"
    wt.mkdir()
    (wt / ".git").write_text("not a gitdir line\n")
    assert find_root(str(wt)) == ("odd", real(wt))


# ---------------------------------------------------------------------------- exclusion


def test_excluded_by_name_glob() -> None:
    assert is_excluded("client-acme", "/src/client-acme", "/src/client-acme", ["client-*"])
    assert not is_excluded("invoice-api", "/src/invoice-api", "/src/invoice-api", ["client-*"])
    assert not is_excluded("Client-acme", "/x/Client-acme", "/x/Client-acme", ["client-*"])  # case matters


def test_excluded_by_path_glob_and_directory() -> None:
    assert is_excluded("api", "/work/secret/api", "/work/secret/api", ["/work/secret/*"])
    # A directory without a glob covers everything below it.
    assert is_excluded("api", "/work/secret/api", "/work/secret/api/src", ["/work/secret"])
    assert is_excluded("api", "/work/secret/api", "/work/secret/api", ["/work/secret/"])
    assert not is_excluded("api", "/work/secretive/api", "/work/secretive/api", ["/work/secret"])
    assert not is_excluded("api", "/work/public/api", "/work/public/api", ["/work/secret/*"])


def test_excluded_by_cwd_even_when_root_is_elsewhere() -> None:
    assert is_excluded("mono", "/src/mono", "/src/mono/private/tax", ["/src/mono/private"])
    assert not is_excluded("mono", "/src/mono", "/src/mono/public", ["/src/mono/private"])


def test_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    root = f"{home}/clients/acme"
    assert is_excluded("acme", root, root, ["~/clients/*"])
    assert is_excluded("acme", root, root, ["~/clients"])
    assert not is_excluded("acme", "/elsewhere/clients/acme", "/elsewhere/clients/acme", ["~/clients"])


def test_empty_and_blank_globs_exclude_nothing() -> None:
    assert not is_excluded("api", "/src/api", "/src/api", [])
    assert not is_excluded("api", "/src/api", "/src/api", ["", "   "])


def test_question_mark_and_classes_in_globs() -> None:
    assert is_excluded("api-1", "/src/api-1", "/src/api-1", ["api-?"])
    assert not is_excluded("api-12", "/src/api-12", "/src/api-12", ["api-?"])
    assert is_excluded("api-b", "/src/api-b", "/src/api-b", ["api-[ab]"])
    assert not is_excluded("api-c", "/src/api-c", "/src/api-c", ["api-[ab]"])


@pytest.mark.parametrize(("text", "pattern"), [
    ("", ""), ("", "*"), ("a", ""), ("abc", "a*c"), ("abc", "a*b"), ("aaa", "a*a*a"), ("aa", "a*a*a"),
    ("/w/secret/api", "/w/*/api"), ("/w/secret/api", "*secret*"), ("x/y", "x?y"), ("mississippi", "*sip*"),
    ("mississippi", "m*iss*ppi"), ("mississippi", "m*iss*ppx"), ("ab", "a**b"), ("a*b", "a\\*b"),
])
def test_glob_match_agrees_with_fnmatch(text: str, pattern: str) -> None:
    assert glob_match(text, pattern) is fnmatch.fnmatchcase(text, pattern)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab/*?.", max_size=10), st.text(alphabet="ab/.", max_size=12))
def test_glob_match_agrees_with_fnmatch_on_generated_input(pattern: str, text: str) -> None:
    assert glob_match(text, pattern) is fnmatch.fnmatchcase(text, pattern)


def test_relative_paths_inside_the_root_only() -> None:
    assert relative("/src/api/app/main.py", "/src/api") == "app/main.py"
    assert relative("/src/api/app/main.py", "/src/api/") == "app/main.py"
    assert relative("/src/api-v2/main.py", "/src/api") == "/src/api-v2/main.py"
    assert relative("/etc/hosts", "/src/api") == "/etc/hosts"


# ---------------------------------------------------------------------------- identity


def test_same_folder_name_different_repositories_get_different_keys(no_git_above: Path) -> None:
    a, b = no_git_above / "acme" / "api", no_git_above / "beta" / "api"
    for d in (a, b):
        (d / ".git").mkdir(parents=True)
    (b / "src").mkdir()
    pa, pb = identify(str(a)), identify(str(b / "src"))
    assert pa.name == pb.name == "api"
    assert pa.key != pb.key
    assert (pa.key, pb.key) == (real(a), real(b))


def test_worktrees_subdirs_and_symlinks_share_the_main_checkout_key(no_git_above: Path) -> None:
    main = no_git_above / "invoice-api"
    main.mkdir()
    git("init", "-q", cwd=main)
    (main / "README").write_text("hi\n")
    git("add", "README", cwd=main)
    git("commit", "-q", "-m", "init", cwd=main)
    wt = no_git_above / "feature-x"
    git("worktree", "add", "-q", "-b", "feature", str(wt), cwd=main)
    (main / "src").mkdir()
    (no_git_above / "link").symlink_to(main)
    keys = {identify(str(p)).key for p in (main, main / "src", wt, no_git_above / "link" / "src")}
    assert keys == {real(main)}
    assert identify(str(wt)).name == "invoice-api"


def test_case_variants_of_one_path_share_a_key_on_a_case_insensitive_file_system(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Where a case-swapped path is the same inode (macOS, Windows), the key is folded."""
    repo = tmp_path / "Src" / "API"
    repo.mkdir(parents=True)
    real_stat = posix.stat

    def insensitive(path: Any, *a: Any, **kw: Any) -> os.stat_result:
        p = str(path)
        if p.lower() == str(repo).lower():
            p = str(repo)
        return real_stat(p, *a, **kw)

    monkeypatch.setattr(posix, "stat", insensitive)  # (the hook's modules call posix, not os)
    folded = canonical(str(repo))
    assert folded == str(repo).lower()
    monkeypatch.setattr(posix, "stat", real_stat)
    assert canonical(str(repo)) == str(repo)  # here case matters: the path stays as it is


@pytest.mark.parametrize(("url", "want"), [
    ("git@github.com:Acme/API.git", "github.com/acme/api"),
    ("https://github.com/acme/api", "github.com/acme/api"),
    ("https://x-access-token:ghp_SECRET@github.com/acme/api.git", "github.com/acme/api"),
    ("ssh://git@github.com:22/acme/api.git/", "github.com/acme/api"),
    ("git://github.com/acme/api.git", "github.com/acme/api"),
])
def test_remote_spellings_normalise_to_one_without_credentials(url: str, want: str) -> None:
    assert normalize_remote(url) == want


def test_a_local_remote_is_its_canonical_path(tmp_path: Path) -> None:
    (tmp_path / "upstream.git").mkdir()
    assert normalize_remote("../upstream.git", str(tmp_path / "clone")) == real(tmp_path / "upstream")
    assert normalize_remote(f"file://{tmp_path}/upstream.git") == real(tmp_path / "upstream")


def test_git_remote_reads_origin_from_the_config_of_clones_and_worktrees(no_git_above: Path) -> None:
    main = no_git_above / "api"
    main.mkdir()
    git("init", "-q", cwd=main)
    assert git_remote(str(main)) == ""
    git("remote", "add", "upstream", "https://github.com/acme/api.git", cwd=main)
    assert git_remote(str(main)) == "github.com/acme/api"
    git("remote", "add", "origin", "git@github.com:me/api.git", cwd=main)
    assert git_remote(str(main)) == "github.com/me/api"  # origin wins
    (main / "f").write_text("x")
    git("add", "f", cwd=main)
    git("commit", "-q", "-m", "x", cwd=main)
    wt = no_git_above / "wt"
    git("worktree", "add", "-q", "-b", "b", str(wt), cwd=main)
    assert git_remote(find_root(str(wt))[1]) == "github.com/me/api"
    assert git_remote(str(no_git_above)) == ""
