"""A Dask LocalCluster for the engine's tests, and a worker killed in the middle of a run.

Imported by the test modules (as ``chromium`` is); the ``cluster`` fixture they
declare comes from :func:`local_cluster`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytest


def local_cluster(silence: int = logging.ERROR) -> Any:
    """Two single-threaded worker processes, no dashboard."""
    import distributed

    with warnings.catch_warnings():  # "port 8787 in use": one cluster per xdist worker
        warnings.simplefilter("ignore", UserWarning)
        return distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                        dashboard_address=None, silence_logs=silence)


def kill_a_worker_mid_run(cluster: Any, run: Callable[[], Any], task: str,
                          after: int = 3) -> Any:
    """``run()`` in a thread; once ``after`` tasks whose key holds ``task`` are in
    memory on the cluster, one worker process exits. Returns ``run()``'s result,
    checking that the worker died while the run was still going and that it is gone."""
    import distributed

    out: dict = {}
    thread = threading.Thread(target=lambda: out.setdefault("res", run()))
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as watch:
        thread.start()

        def done(dask_scheduler: Any) -> int:
            return sum(1 for k, ts in dask_scheduler.tasks.items()
                       if task in str(k) and ts.state == "memory")

        deadline = time.monotonic() + 60
        while watch.run_on_scheduler(done) < after and time.monotonic() < deadline:
            time.sleep(0.02)
        victim = sorted(watch.scheduler_info()["workers"])[0]
        killed_at = "res" not in out
        with pytest.raises(Exception):  # noqa: B017 - the worker dies while answering
            watch.run(os._exit, 1, workers=[victim])
        thread.join(timeout=300)
        assert killed_at and not thread.is_alive()
        assert victim not in watch.scheduler_info()["workers"]
    return out["res"]


def record_gathered(monkeypatch: Any, size: Callable[[Any], int]) -> list[int]:
    """The ``size`` of everything the client receives from the cluster
    (``Client.gather`` and ``Future.result``), appended to the returned list."""
    import distributed

    gathered: list[int] = []
    real_gather, real_result = distributed.Client.gather, distributed.Future.result

    def gather(self: Any, futures: Any, *a: Any, **k: Any) -> Any:
        out = real_gather(self, futures, *a, **k)
        gathered.append(size(out))
        return out

    def result(self: Any, *a: Any, **k: Any) -> Any:
        out = real_result(self, *a, **k)
        gathered.append(size(out))
        return out

    monkeypatch.setattr(distributed.Client, "gather", gather)
    monkeypatch.setattr(distributed.Future, "result", result)
    return gathered
