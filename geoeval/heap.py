"""Freed memory kept for reuse while a run works (glibc's ``malloc``, on Linux).

A run makes and drops thousands of numpy temporaries of a few hundred kilobytes
to a few hundred megabytes. With glibc's defaults each one past its mapping
threshold is a fresh ``mmap`` and each large free gives memory back at once,
so the kernel zeroes the same pages again and again: on the CrowdAI table
(``benchmarks/bench_crowdai.py``) that was a sixth of the CPU time, 0.5–1 s in
page faults. Inside :func:`memory_kept` freed memory stays with the process
until the block ends; then what is free is handed back (``malloc_trim``) and the
thresholds are left where glibc's own adaptive rule takes them after large
frees (32 MiB mappings, 64 MiB trim), so the peak memory is unchanged.

Elsewhere (another C library, another system) the block does nothing.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# mallopt(3) parameters and the values used
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_KEPT = {_M_MMAP_THRESHOLD: 1 << 30, _M_TRIM_THRESHOLD: (1 << 31) - 1, _M_TOP_PAD: 64 << 20}
_AFTER = {_M_MMAP_THRESHOLD: 32 << 20, _M_TRIM_THRESHOLD: 64 << 20, _M_TOP_PAD: 128 << 10}

_lock = threading.Lock()
_depth = 0


def _glibc() -> ctypes.CDLL | None:
    """The process's C library, if it is glibc (it has ``mallopt`` and ``malloc_trim``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: no search for the library
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (OSError, AttributeError):
        return None


_LIBC = _glibc()


def _set(values: dict[int, int]) -> None:
    for param, value in values.items():
        _LIBC.mallopt(param, value)  # type: ignore[union-attr]


@contextmanager
def memory_kept() -> Iterator[None]:
    """Freed memory kept for reuse within the block, handed back at its end.

    Nested or concurrent blocks are fine: the first one in sets, the last one
    out hands back.

    Examples
    --------
    >>> import numpy as np
    >>> with memory_kept():
    ...     int(sum(np.ones(1 << 20).sum() for _ in range(3)))
    3145728
    """
    global _depth
    if _LIBC is None:
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            _set(_KEPT)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _set(_AFTER)
                _LIBC.malloc_trim(0)
