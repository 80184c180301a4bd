"""The C allocator of a long-running process (the worker): fewer arenas, freed memory handed back.

glibc's malloc gives each thread that allocates while another holds an arena an arena of its own
(up to 8 per core), and keeps what is freed there: a large block freed raises the size below
which later blocks come from an arena instead of their own mapping, so the embedding model's
activations (megabytes per pass, on the backlog threads, the search threads and the HTTP
threads) end up held in every arena at its peak. Under the load benchmark the worker had 16
arenas, 20-40 MB of them free. Two arenas share what is freed between the threads, and
``malloc_trim`` gives the free pages of every arena back to the OS (as when the backlog pauses).

glibc only (Linux): elsewhere (musl, macOS) both calls do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from typing import Any

ARENAS = 2            # malloc arenas at most, for the whole process
M_ARENA_MAX = -8      # glibc's mallopt() parameter number (malloc.h)

_libc: Any = None
_lock = threading.Lock()


def _glibc() -> Any:
    """glibc's handle, or False when this is not glibc (no ``gnu_get_libc_version``)."""
    global _libc
    with _lock:
        if _libc is None:
            try:
                lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                lib.gnu_get_libc_version  # noqa: B018 - AttributeError on another C library
                lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                lib.malloc_trim.argtypes = [ctypes.c_size_t]
                _libc = lib
            except (OSError, AttributeError):
                _libc = False
        return _libc


def limit_arenas(n: int = ARENAS) -> bool:
    """At most ``n`` malloc arenas from now on; call before the process starts its threads
    (glibc fixes the limit when a thread first needs a new arena). True when applied."""
    lib = _glibc()
    return bool(lib) and lib.mallopt(M_ARENA_MAX, n) == 1


def trim() -> bool:
    """Give the free pages of every arena back to the OS. True when memory was released."""
    lib = _glibc()
    return bool(lib) and lib.malloc_trim(0) == 1
