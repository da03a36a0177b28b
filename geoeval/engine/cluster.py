"""Start or reach a Dask cluster for one run (``distributed``).

The cluster's logging (the workers' ``distributed.worker - ERROR - Compute Failed``
blocks, a closing worker's ``CommClosedError``) stays off the terminal: a failed
task reaches the user as geoeval's own one line. ``GEOEVAL_WORKER_LOGS=LEVEL``
(``debug``, ``info``, ``warning``, ``error``) lets it through from that level.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from geoeval.errors import InputError

#: Seconds to wait for a scheduler given by address before giving up.
CONNECT_TIMEOUT = 5


#: The environment variable that lets the cluster's logging reach the terminal.
LOGS_VARIABLE = "GEOEVAL_WORKER_LOGS"


def log_level() -> int:
    """The level from which the cluster's logging reaches the terminal: above every
    level unless :data:`LOGS_VARIABLE` names one.

    Raises
    ------
    InputError
        The variable holds something else than a level's name.
    """
    text = os.environ.get(LOGS_VARIABLE, "").strip()
    if not text:
        return logging.CRITICAL + 10
    level = logging.getLevelName(text.upper())
    if not isinstance(level, int):
        raise InputError(f"{LOGS_VARIABLE}={text!r} is not a logging level (debug, info, "
                         "warning, error)")
    return level


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
    level = log_level()
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
                        dashboard_address=None, silence_logs=level,
                        memory_limit=memory_limit if memory_limit is not None else "auto")
                with _quiet(level), distributed.Client(cluster) as client:
                    yield client
            except KeyboardInterrupt:  # Ctrl-C, SIGTERM: its workers end now, not drained
                _kill_workers(cluster)
                raise
            finally:
                if cluster is not None:
                    with _quiet(level):
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
        with _quiet(level):
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


@contextlib.contextmanager
def _quiet(level: int) -> Iterator[None]:
    """This process's ``distributed`` logging (the client; a LocalCluster's scheduler)
    shown from ``level`` on."""
    from distributed.utils import silence_logging_cmgr

    with silence_logging_cmgr(level):
        yield
