"""The spool: atomic, private, time-ordered event files; bad files are set aside."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from kenning import spool
from kenning.paths import Paths


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    p = Paths(str(tmp_path / "data"))
    p.ensure()
    return p


def record(n: int = 0, **extra: object) -> dict:
    return {"event": "PostToolUse", "payload": {"tool_name": "Bash", "n": n}, **extra}


def test_write_puts_a_private_file_in_spool_not_tmp(paths: Paths) -> None:
    rec = record(1)
    path = spool.write(paths, rec)
    assert os.path.dirname(path) == paths.spool
    assert os.path.isfile(path)
    assert os.listdir(paths.spool_tmp) == []
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    on_disk = json.loads(Path(path).read_bytes())
    assert on_disk["id"] and on_disk["id"] == rec["id"]
    assert os.path.basename(path) == on_disk["id"] + ".json"
    assert on_disk == {"event": "PostToolUse", "payload": {"tool_name": "Bash", "n": 1}, "id": rec["id"]}
    assert spool.read(path) == on_disk
    assert spool.pending(paths) == [path]
    assert spool.depth(paths) == 1


def test_write_keeps_a_given_id(paths: Paths) -> None:
    path = spool.write(paths, record(id="00000000000000000001-0000001-abcd"))
    assert os.path.basename(path) == "00000000000000000001-0000001-abcd.json"


def test_write_keeps_unicode_and_makes_lone_surrogates_valid_utf8(paths: Paths) -> None:
    # A hook's stdin may carry "\ud800" escapes: the event must still be spooled, as valid
    # UTF-8 (SQLite refuses lone surrogates later), with the rest of the text intact.
    rec = {"event": "UserPromptSubmit", "payload": {"text": "héllo ✓ \ud800 end"}}
    path = spool.write(paths, rec)
    Path(path).read_bytes().decode("utf-8")  # strict: raises on an encoded surrogate
    text = spool.read(path)["payload"]["text"]
    assert text.startswith("héllo ✓ ") and text.endswith(" end")
    assert "\ud800" not in text


def test_new_ids_sort_by_time() -> None:
    ids = []
    for _ in range(20):
        ids.append(spool.new_id())
        time.sleep(0.0005)
    assert ids == sorted(ids)
    assert len(set(ids)) == 20
    stamp = ids[0].split("-")[0]
    assert len(stamp) == 20 and abs(int(stamp) - time.time_ns()) < 60 * 10**9


def test_written_files_sort_in_write_order(paths: Paths) -> None:
    written = [spool.write(paths, record(i), sync_dir=False) for i in range(15)]
    assert spool.pending(paths) == written
    assert [spool.read(p)["payload"]["n"] for p in spool.pending(paths)] == list(range(15))


def test_pending_orders_by_name_and_limits(paths: Paths) -> None:
    # Written out of order: older capture times must still come out first.
    for stamp in (300, 100, 200, 1_000):
        spool.write(paths, record(stamp, id=f"{stamp:020d}-0000001-00000000"))
    Path(paths.spool, "notes.txt").write_text("ignored")
    names = [os.path.basename(p) for p in spool.pending(paths)]
    assert names == [f"{s:020d}-0000001-00000000.json" for s in (100, 200, 300, 1_000)]
    assert [os.path.basename(p) for p in spool.pending(paths, limit=2)] == names[:2]
    assert spool.pending(paths, limit=0) == []
    assert spool.depth(paths) == 4


def test_pending_ignores_tmp_and_corrupt(paths: Paths) -> None:
    Path(paths.spool_tmp, "half-written.json").write_text("{")
    Path(paths.spool_corrupt, "bad.json").write_text("{")
    assert spool.pending(paths) == []
    assert spool.depth(paths) == 0


def test_pending_without_spool_dir_is_empty(tmp_path: Path) -> None:
    p = Paths(str(tmp_path / "nowhere"))
    assert spool.pending(p) == []
    assert spool.depth(p) == 0
    assert spool.corrupt_count(p) == 0


@pytest.mark.parametrize("raw", [
    b"{not json",
    b"",
    b"[1, 2]",
    b'"text"',
    b'{"event": "Stop"}',                          # payload missing
    b'{"event": "Stop", "payload": "x"}',          # payload not an object
    b'{"payload": {}}',                            # event missing
    b'{"event": 5, "payload": {}}',                # event not a string
    b'{"event": "Stop", "payload": {"a": "\xff\xfe"}}',  # invalid UTF-8
])
def test_read_rejects_invalid_records(paths: Paths, raw: bytes) -> None:
    path = os.path.join(paths.spool, "x.json")
    Path(path).write_bytes(raw)
    with pytest.raises(ValueError):
        spool.read(path)


def test_quarantine_moves_file_to_corrupt(paths: Paths) -> None:
    good = spool.write(paths, record(1))
    bad = os.path.join(paths.spool, "00000000000000000000-0000001-bad.json")
    Path(bad).write_bytes(b"\x00garbage")
    dest = spool.quarantine(paths, bad)
    assert dest == os.path.join(paths.spool_corrupt, os.path.basename(bad))
    assert Path(dest).read_bytes() == b"\x00garbage"
    assert not os.path.exists(bad)
    assert spool.pending(paths) == [good]
    assert spool.corrupt_count(paths) == 1
    spool.quarantine(paths, bad)  # already gone: no error
    assert spool.corrupt_count(paths) == 1


def test_confirm_deletes_and_tolerates_missing(paths: Paths) -> None:
    path = spool.write(paths, record(1))
    spool.confirm(path)
    assert spool.pending(paths) == []
    spool.confirm(path)


def test_clean_tmp_removes_only_old_temp_files(paths: Paths) -> None:
    old_tmp = Path(paths.spool_tmp, "old.json")
    fresh_tmp = Path(paths.spool_tmp, "fresh.json")
    old_tmp.write_text("{")
    fresh_tmp.write_text("{")
    two_hours_ago = time.time() - 7200
    os.utime(old_tmp, (two_hours_ago, two_hours_ago))
    finished = spool.write(paths, record(1))
    os.utime(finished, (two_hours_ago, two_hours_ago))
    assert spool.clean_tmp(paths) == 1
    assert not old_tmp.exists()
    assert fresh_tmp.exists()
    assert os.path.exists(finished)  # a spooled event is never a temp file
    assert spool.clean_tmp(paths, older_than=0.0) == 1
    assert not fresh_tmp.exists()


def test_write_into_read_only_spool_raises(paths: Paths) -> None:
    os.chmod(paths.spool_tmp, 0o500)
    try:
        if os.access(paths.spool_tmp, os.W_OK):
            pytest.skip("this user (root?) can write into a read-only directory")
        with pytest.raises(OSError):
            spool.write(paths, record(1))
        assert spool.pending(paths) == []
    finally:
        os.chmod(paths.spool_tmp, 0o700)


def test_write_raises_when_spool_tmp_is_unusable(paths: Paths) -> None:
    # Works as root too: the temp dir is a file, so the event cannot be written.
    os.rmdir(paths.spool_tmp)
    Path(paths.spool_tmp).write_text("")
    with pytest.raises(OSError):
        spool.write(paths, record(1))
    assert spool.pending(paths) == []


def test_write_raises_when_data_dir_missing(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        spool.write(Paths(str(tmp_path / "absent")), record(1))
