"""geoeval.heap.memory_kept: freed memory reused within a run, handed back after."""

from __future__ import annotations

import resource
import threading

import numpy as np
import pytest

from geoeval import heap

glibc = pytest.mark.skipif(heap._LIBC is None, reason="glibc's malloc only")


def _faults_of(work) -> int:
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    work()
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def _churn() -> None:
    # what a run does all the time: a temporary (48 MiB) made, written and dropped
    for _ in range(20):
        a = np.empty(6 << 20)
        a[:] = 1.0
        del a


@glibc
def test_kept_memory_is_not_faulted_in_again():
    with heap.memory_kept():
        _churn()  # the first one takes its pages
        kept = _faults_of(_churn)
    assert heap._depth == 0
    # 20 × 48 MiB is 245,760 pages given back and zeroed again each time without it
    # (glibc's adaptive threshold stops at 32 MiB mappings, a large free is trimmed)
    assert kept < 2_000, kept


@glibc
def test_nested_and_concurrent_blocks_restore_once_and_on_errors():
    seen = []

    def worker() -> None:
        with heap.memory_kept():
            seen.append(heap._depth)

    with heap.memory_kept():
        with heap.memory_kept():
            assert heap._depth == 2
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert heap._depth == 0 and len(seen) == 4 and min(seen) >= 2
    with pytest.raises(ValueError), heap.memory_kept():
        raise ValueError("a failed run")
    assert heap._depth == 0
