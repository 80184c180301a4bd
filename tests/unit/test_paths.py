"""Data-dir layout: private permissions, the API token, the recursion guard, atomic writes."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from kenning.paths import Paths, data_dir, ensure_token, read_token, write_private


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_data_dir_comes_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path / "d"))
    assert data_dir() == str(tmp_path / "d")
    assert Paths().root == str(tmp_path / "d")
    monkeypatch.delenv("KENNING_DATA_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == str(tmp_path / "home" / ".kenning")


def test_ensure_creates_private_tree(tmp_path: Path) -> None:
    p = Paths(str(tmp_path / "data"))
    p.ensure()
    for d in (p.root, p.spool, p.spool_tmp, p.spool_corrupt, p.logs):
        assert os.path.isdir(d)
    assert mode(p.root) == 0o700
    p.ensure()  # idempotent
    assert mode(p.root) == 0o700


@pytest.mark.parametrize("loose", [0o755, 0o777, 0o710])
def test_ensure_tightens_an_open_data_dir(tmp_path: Path, loose: int) -> None:
    root = tmp_path / "data"
    root.mkdir()
    os.chmod(root, loose)
    p = Paths(str(root))
    p.ensure()
    assert mode(root) == 0o700


def test_ensure_token_creates_private_token_once(tmp_path: Path) -> None:
    p = Paths(str(tmp_path / "data"))
    assert read_token(p) == ""
    tok = ensure_token(p)
    assert len(tok) == 48 and int(tok, 16) >= 0  # 24 random bytes, hex
    assert mode(p.token) == 0o600
    assert mode(p.root) == 0o700
    assert Path(p.token).read_text() == tok
    assert ensure_token(p) == tok
    assert read_token(p) == tok
    assert ensure_token(Paths(str(tmp_path / "other"))) != tok


def race_for_token(p: Paths, n: int) -> list[str | BaseException]:
    barrier = threading.Barrier(n)
    results: list[str | BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            results.append(ensure_token(p))
        except BaseException as e:
            results.append(e)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_ensure_token_race_between_threads_yields_one_token(tmp_path: Path) -> None:
    for round_ in range(10):
        p = Paths(str(tmp_path / f"data{round_}"))
        results = race_for_token(p, 8)
        assert len(results) == 8
        assert len(set(results)) == 1, results
        assert isinstance(results[0], str) and len(results[0]) == 48
        assert Path(p.token).read_text() == results[0]
        assert mode(p.token) == 0o600


# ------------------------------------------------------------------------------ contains


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Paths, Path]:
    root = tmp_path / "data"
    p = Paths(str(root))
    p.ensure()
    return p, tmp_path


def test_contains_root_and_paths_inside(layout: tuple[Paths, Path]) -> None:
    p, _ = layout
    assert p.contains(p.root)
    assert p.contains(p.root + "/")
    assert p.contains(p.spool)
    assert p.contains(os.path.join(p.root, "not", "yet", "created.txt"))


def test_contains_rejects_outside_and_lookalike_prefix(layout: tuple[Paths, Path]) -> None:
    p, tmp = layout
    (tmp / "data-evil").mkdir()
    assert not p.contains(str(tmp))
    assert not p.contains(str(tmp / "data-evil" / "x"))  # shares the string prefix, not the dir
    assert not p.contains(os.path.join(p.root, "..", "elsewhere"))
    assert not p.contains("/")


def test_contains_follows_symlinks(layout: tuple[Paths, Path]) -> None:
    p, tmp = layout
    outside = tmp / "outside"
    outside.mkdir()
    # A link outside that points into the data dir is inside.
    (tmp / "link-in").symlink_to(p.root)
    assert p.contains(str(tmp / "link-in" / "kenning.db"))
    # A link inside that points out of the data dir is outside.
    os.symlink(outside, os.path.join(p.root, "escape"))
    assert not p.contains(os.path.join(p.root, "escape", "file"))


def test_paths_root_given_through_symlink_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    p = Paths(str(tmp_path / "alias"))
    assert p.root == str(real)
    assert p.contains(str(real / "x"))
    assert p.contains(str(tmp_path / "alias" / "x"))


# -------------------------------------------------------------------------- write_private


def test_write_private_creates_0600_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    write_private(str(target), b"hello")
    assert target.read_bytes() == b"hello"
    assert mode(target) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["f.json"]  # no temp file left behind


def test_write_private_replaces_a_loose_file_with_a_private_one(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o644)
    write_private(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert mode(target) == 0o600


def test_write_private_renames_rather_than_rewriting_in_place(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old content")
    os.link(target, tmp_path / "old-inode")
    write_private(str(target), b"new content")
    assert target.read_bytes() == b"new content"
    # The old inode was never truncated or written: a reader holding it saw a whole file.
    assert (tmp_path / "old-inode").read_bytes() == b"old content"


def test_write_private_readers_never_see_partial_content(tmp_path: Path) -> None:
    target = tmp_path / "big"
    size = 2 * 1024 * 1024
    versions = [b"A" * size, b"B" * size]
    write_private(str(target), versions[0])
    stop = threading.Event()
    bad: list[tuple[int, bytes]] = []

    def reader() -> None:
        while not stop.is_set():
            data = target.read_bytes()
            if data not in versions:
                bad.append((len(data), data[:1] + data[-1:]))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(30):
            write_private(str(target), versions[i % 2])
    finally:
        stop.set()
        t.join()
    assert bad == []
