"""What a memory cites (kenning/memory/citations.py) and the bounded check of it against a
working tree (kenning/context/evidence_check.py), on real files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kenning.context import evidence_check as ec
from kenning.memory.citations import cite


@pytest.fixture(autouse=True)
def fresh() -> None:
    ec.forget_cache()


def test_files_identifiers_and_targets_are_read_from_the_memory() -> None:
    c = cite("`line_vat()` in src/invoice_api/totals.py rounds each line; never edit app/payment_pb2.py, "
             "run `make proto`; the KENNING_DATA_DIR setting and `--dry-run` matter", '["src/api.py"]', '["README.md"]')
    assert c.files == ("src/api.py", "src/invoice_api/totals.py", "app/payment_pb2.py", "README.md")
    assert set(c.names) >= {"line_vat", "KENNING_DATA_DIR", "--dry-run"}
    assert c.targets == (("make", "proto"),)


def test_identifiers_inside_chinese_and_japanese_text() -> None:
    c = cite("修改了src/totals.py里的line_vat()函数，由KENNING_ROUNDING控制")
    assert c.files == ("src/totals.py",) and c.names == ("line_vat", "KENNING_ROUNDING")
    j = cite("`parse_invoice`関数はapp/billing.pyにあります。`make lint`を実行")
    assert j.files == ("app/billing.py",) and "parse_invoice" in j.names and j.targets == (("make", "lint"),)


def test_prose_is_not_taken_for_code() -> None:
    c = cite("Make sure the totals are right; just the tests, make it pass. Visit https://example.com/a/b.py "
             "in GitHub. `true` is fine. pnpm install first.")
    assert c.names == () and c.targets == () and c.files == ()
    assert not c


def test_targets_only_after_a_word_that_runs_them_or_in_backticks() -> None:
    assert cite("then run make lint").targets == (("make", "lint"),)
    assert cite("use `just deploy`; yarn run build").targets == (("just", "deploy"),)
    assert cite("via pnpm run e2e").targets == (("pnpm", "e2e"),)
    assert cite("`make -C web build`").targets == ()  # another folder's Makefile: not checked


def _tree(tmp_path: Path) -> ec.Checker:
    return ec.Checker(str(tmp_path))


def test_gone_file_identifier_and_target(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "totals.py").write_text("def invoice_vat():\n    pass\n")
    (tmp_path / "Makefile").write_text(".PHONY: lint\nlint:\n\truff check .\nVERSION := 1\n")
    (tmp_path / "package.json").write_text('{"scripts": {"build": "tsc"}}')
    c = cite("`line_vat()` and `invoice_vat` in src/totals.py and src/gone.py; run `make proto`, `make lint`, "
             "`make VERSION`; `npm run build` and `npm run e2e`")
    notes = ec.gone(_tree(tmp_path), c)
    assert notes == ["`src/gone.py` no longer exists", "`line_vat` not found in `src/totals.py`",
                     "`make proto`: no such target in Makefile", "`make VERSION`: no such target in Makefile",
                     "`npm e2e`: no such script in package.json"]


def test_nothing_is_claimed_without_a_working_tree_or_the_runners_file(tmp_path: Path) -> None:
    c = cite("`helper()` in src/x.py; run `make proto`")
    assert ec.gone(ec.Checker(""), c) == ["`src/x.py` no longer exists"] or not ec.Checker("").usable()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("pass\n")
    assert ec.gone(_tree(tmp_path), cite("run `make proto`")) == []  # no Makefile: cannot tell
    (tmp_path / "Makefile").write_text("include common.mk\nlint:\n\ttrue\n")
    assert ec.gone(_tree(tmp_path), cite("run `make proto`")) == []  # targets may come from common.mk
    (tmp_path / "Makefile").write_text("%.o: %.c\n\tcc $<\n")
    assert ec.gone(_tree(tmp_path), cite("run `make proto`")) == []  # a pattern rule: any name


def test_paths_outside_the_tree_are_not_judged(tmp_path: Path) -> None:
    c = cite("see ../other/app.py and /etc/app.py", '["/somewhere/else/main.py"]')
    assert ec.gone(_tree(tmp_path), c) == []


def test_the_check_reads_at_most_its_cap_and_a_warm_check_reads_nothing(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 100_000 + "def late():\n    pass\n")  # ~600 kB, the name past the cap
    small = tmp_path / "small.py"
    small.write_text("def early():\n    pass\n")
    c = cite("`late()` and `early()` and `missing_fn()` in big.py and small.py")
    assert ec.gone(_tree(tmp_path), c) == []  # late: past the cap of big.py, so cannot tell
    assert ec.reads == 2 and ec.bytes_read == ec.READ_CAP + small.stat().st_size and ec.largest_read == ec.READ_CAP
    ec.gone(_tree(tmp_path), c)
    assert ec.reads == 2  # warm: a stat per file
    small.write_text("def other():\n    pass\n")
    os.utime(small, (time.time() + 5, time.time() + 5))
    assert ec.gone(_tree(tmp_path), cite("`early()` in small.py")) == ["`early` not found in `small.py`"]
    assert ec.reads == 3


def test_a_file_that_cannot_be_read_is_never_judged_and_never_raises(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "blob.py").write_bytes(b"\x00binary" * 100)
    (tmp_path / "dir.py").mkdir()
    locked = tmp_path / "locked.py"
    locked.write_text("def here():\n    pass\n")
    locked.chmod(0)
    for name in ("pipe.py", "loop.py", "dangling.py", "blob.py", "dir.py", "locked.py"):
        started = time.monotonic()
        fn = "here" if name == "locked.py" else "absent_fn"  # (root reads a locked file: it holds ``here``)
        assert ec.gone(_tree(tmp_path), cite(f"`{fn}()` lives in {name}")) == [], name
        assert time.monotonic() - started < 1


def test_past_the_time_budget_nothing_more_is_read(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text("pass\n")
    checker = ec.Checker(str(tmp_path), budget_s=0)
    time.sleep(0.001)
    assert ec.gone(checker, cite("`absent_fn()` in m0.py m1.py m2.py m3.py m4.py")) == []
    assert ec.reads == 0


def test_a_memory_of_a_removal_is_not_checked() -> None:
    for text in ("Deleted src/old.py: nothing imports it", "Renamed `old_fn()` to `new_fn()` in src/a.py",
                 "删除了 src/old.py 里的 old_fn()", "src/old.py を削除した", "Moved helpers out of src/util.py"):
        assert not cite(text), text


def test_a_bare_file_name_is_never_judged_gone(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("def setup_all():\n    pass\n")
    assert ec.gone(_tree(tmp_path), cite("the rounding bug in totals.py")) == []  # may be src/x/totals.py
    assert ec.gone(_tree(tmp_path), cite("`setup_all()` and `gone_fn()` in setup.py")) == \
        ["`gone_fn` not found in `setup.py`"]  # found at the root: its identifiers are checked
