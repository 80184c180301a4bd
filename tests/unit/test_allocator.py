"""kenning.allocator: glibc's malloc limited to a few arenas, and freed memory handed back."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import pytest

from kenning import allocator

glibc = pytest.mark.skipif(not allocator._glibc(), reason="glibc only")


def _rss_anon_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon")


@glibc
def test_trim_gives_freed_arena_memory_back() -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    # 48 MB in 64 KB blocks (below the mmap threshold: they come from an arena), touched, then all
    # freed but the last, which pins the arena's top: glibc keeps the rest until trimmed.
    blocks = [libc.malloc(64 << 10) for _ in range(768)]
    for b in blocks:
        ctypes.memset(b, 1, 64 << 10)
    for b in blocks[:-1]:
        libc.free(b)
    before = _rss_anon_kb()
    assert allocator.trim()
    after = _rss_anon_kb()
    libc.free(blocks[-1])
    assert before - after > 32 << 10, (before, after)


@glibc
def test_limit_arenas_caps_the_arenas_of_a_threaded_process() -> None:
    # In a fresh interpreter: eight threads allocating at once get at most two arenas.
    code = textwrap.dedent("""
        import ctypes, re, threading
        from kenning import allocator
        assert allocator.limit_arenas(2)
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        go = threading.Barrier(8)
        def work():
            go.wait()
            for _ in range(2000):
                libc.malloc(256)
        ts = [threading.Thread(target=work) for _ in range(8)]
        for t in ts: t.start()
        for t in ts: t.join()
        libc.open_memstream.restype = ctypes.c_void_p
        buf, size = ctypes.c_char_p(), ctypes.c_size_t()
        f = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
        libc.malloc_info(0, ctypes.c_void_p(f))
        libc.fclose(ctypes.c_void_p(f))
        print(len(re.findall(r'<heap nr=', ctypes.string_at(buf, size.value).decode())))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert 1 <= int(out) <= 2


def test_elsewhere_both_calls_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator, "_libc", False)
    assert allocator.limit_arenas() is False
    assert allocator.trim() is False
