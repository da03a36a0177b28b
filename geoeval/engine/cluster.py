"""Start or reach a Dask cluster for one run (``distributed``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from geoeval.errors import InputError

#: Seconds to wait for a scheduler given by address before giving up.
CONNECT_TIMEOUT = 5


@contextmanager
def dask_client(scheduler: str | None = None, n_jobs: int | None = None,
                memory_limit: str | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on a cluster started here or reached at ``scheduler``.

    Without ``scheduler``: a ``LocalCluster`` with ``n_jobs`` worker processes
    (default: every core this process may use), ``threads_per_worker=1``, no
    dashboard, ``memory_limit`` per worker (default Dask's: the machine's memory
    shared by the workers); it is closed on exit. With ``scheduler``: a client connected to
    it (at most :data:`CONNECT_TIMEOUT` seconds), closed on exit; the cluster is
    left running.

    Raises
    ------
    InputError
        dask/distributed are not installed, or the scheduler cannot be reached.
    """
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - they are dependencies
        raise InputError("engine 'dask' needs dask and distributed "
                         f"installed ({exc})") from None
    if scheduler is None:
        import warnings

        from geoeval.cancel import children_ignore_interrupt, deferred
        from geoeval.parallel import workers

        # its workers (restarted ones too) leave Ctrl-C to this process, which closes it;
        # a Ctrl-C while it starts stops the run once it can be closed
        cluster = None
        with children_ignore_interrupt():
            try:
                with deferred(), warnings.catch_warnings():  # "port 8787 in use": unused
                    warnings.simplefilter("ignore", UserWarning)
                    cluster = distributed.LocalCluster(
                        n_workers=n_jobs or workers(), threads_per_worker=1, processes=True,
                        dashboard_address=None, silence_logs=logging.ERROR,
                        memory_limit=memory_limit if memory_limit is not None else "auto")
                with distributed.Client(cluster) as client:
                    yield client
            except KeyboardInterrupt:  # Ctrl-C, SIGTERM: its workers end now, not drained
                _kill_workers(cluster)
                raise
            finally:
                if cluster is not None:
                    cluster.close()
        return
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise InputError(f"--scheduler (scheduler=) takes an address such as "
                         f"tcp://host:8786, got {scheduler!r}")
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=True)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there "
                         f"within {CONNECT_TIMEOUT} s ({reason})") from None
    try:
        yield client
    finally:
        client.close()


def _kill_workers(cluster: Any) -> None:
    """SIGKILL the worker processes of a ``LocalCluster`` (its nannies, in this
    process, then close it at once instead of waiting for their tasks)."""
    import os
    import signal

    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(nanny, "process", None), "pid", None)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
