"""kenning.paths' path operations (built on ``posix``, so that the hook never imports ``os``) answer
exactly what their ``os`` / ``os.path`` namesakes answer: on random symlink trees (relative and
absolute links, chains, loops, dangling links, ``..`` through links), on odd spellings, and for
every environment case."""

from __future__ import annotations

import os
import posixpath
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import paths

PARTS = st.sampled_from(["a", "b", "c", "l1", "l2", "l3", ".", "..", "", "x y", "é"])
SPELLINGS = st.lists(PARTS, max_size=8).map("/".join)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["", "/", "//", "///", "./", "../"]), SPELLINGS, st.sampled_from(["", "/", "//"]))
def test_normpath_dirname_basename_join_are_os_paths(lead: str, body: str, tail: str) -> None:
    path = lead + body + tail
    assert paths.normpath(path) == posixpath.normpath(path)
    assert paths.dirname(path) == posixpath.dirname(path)
    assert paths.basename(path) == posixpath.basename(path)
    for other in ("", "x", "/abs", "x/", "//y"):
        assert paths.join(path, other) == posixpath.join(path, other)
        assert paths.join(path, other, "z") == posixpath.join(path, other, "z")


def _tree(root: Path, links: list[tuple[str, str]]) -> None:
    """Directories a, a/b, a/b/c, a file f in each, and the given links (name in ``root`` → target)."""
    (root / "a" / "b" / "c").mkdir(parents=True)
    for d in ("a", "a/b", "a/b/c"):
        (root / d / "f").write_text("x")
    for name, target in links:
        link = root / name
        if not link.is_symlink() and not link.exists():
            link.symlink_to(target.replace("ROOT", str(root)))


TARGETS = st.sampled_from(["a", "a/b", "a/b/c", "a/f", "missing", "l1", "l2", "l3", "a/../l2", "../x", "ROOT/a/b",
                           "ROOT/l1", "ROOT/l3/c", ".", "..", "a/b/../../l1", "/", "a//b/"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["l1", "l2", "l3", "a/l4", "a/b/l5"]), TARGETS), max_size=5),
       st.lists(st.lists(PARTS | st.sampled_from(["a/l4", "a/b/l5", "f", "missing"]), max_size=6), min_size=1,
                max_size=8))
def test_realpath_is_os_realpath_on_symlink_trees(tmp_path_factory: pytest.TempPathFactory,
                                                  links: list[tuple[str, str]], queries: list[list[str]]) -> None:
    root = tmp_path_factory.mktemp("tree")
    _tree(root, links)
    for parts in queries:
        for path in (str(root) + "/" + "/".join(parts), "/".join(parts)):
            assert paths.realpath(path) == os.path.realpath(path), (path, links)


def test_realpath_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, [("l1", "a/b"), ("l2", "l1/../c")])
    monkeypatch.chdir(tmp_path / "a")
    for path in ("", ".", "b", "../l1", "../l2/x", "../../..", "b/c/../../f"):
        assert paths.realpath(path) == os.path.realpath(path), path


def test_realpath_raises_on_a_nul_as_os_does() -> None:
    with pytest.raises(ValueError):
        os.path.realpath("/tmp/a\0b")
    with pytest.raises(ValueError):
        paths.realpath("/tmp/a\0b")


def test_file_tests_are_os_paths(tmp_path: Path) -> None:
    _tree(tmp_path, [("dangling", "missing"), ("dirlink", "a"), ("filelink", "a/f")])
    os.mkfifo(tmp_path / "fifo")
    for name in ("a", "a/f", "dangling", "dirlink", "filelink", "fifo", "missing", "a/f/x", "a\0"):
        p = str(tmp_path / name)
        assert (paths.exists(p), paths.isdir(p), paths.isfile(p)) == \
            (os.path.exists(p), os.path.isdir(p), os.path.isfile(p)), name


@pytest.mark.parametrize("home", ["/home/u", "/home/u/", "/", "//", "", "relative/h"])
def test_expanduser_is_os_expanduser(monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    monkeypatch.setenv("HOME", home)
    for path in ("~", "~/", "~/x", "~//x", "x/~", "", "/abs", "~root", "~root/x", "~nosuchuser_kenning/x"):
        assert paths.expanduser(path) == os.path.expanduser(path), (home, path)
    monkeypatch.delenv("HOME")
    for path in ("~", "~/x"):
        assert paths.expanduser(path) == os.path.expanduser(path), path


def test_env_reads_what_os_environ_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TEST_A", "é \udcff x")  # an undecodable byte, as os.environ keeps it
    monkeypatch.setenv("KENNING_TEST_B", "")
    monkeypatch.delenv("KENNING_TEST_C", raising=False)
    for name in ("KENNING_TEST_A", "KENNING_TEST_B", "KENNING_TEST_C", "HOME"):
        assert paths.env(name) == os.environ.get(name)
    assert paths.env_with_prefix("KENNING_TEST_") == {k: v for k, v in os.environ.items()
                                                      if k.startswith("KENNING_TEST_")}


def test_the_capture_path_never_imports_os(tmp_path: Path) -> None:
    """The hook's modules, with a Paths, the project and the settings worked out, leave os unloaded."""
    code = ("import sys;sys.path.append(sys.argv[1]);from kenning.hook import main;from kenning.settings import load;"
            "from kenning.project import find_root, project_key;from kenning.paths import Paths;p = Paths();load(p);"
            "n, r = find_root(sys.argv[2]);project_key(r, n);p.contains(sys.argv[2]);print('os' in sys.modules)")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    env = {"KENNING_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(Path(paths.__file__).parents[1]), str(repo)],
                         capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
