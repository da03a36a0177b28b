"""A Dask cluster that shares no disk with the client, for the tests.

:func:`separate_cluster` starts a scheduler and worker processes (``dask scheduler``,
``dask worker``), each in its own working folder with its own temporary folder, and
each worker in its own mount namespace in which the client's private folder is
covered by an empty file system: whatever the client keeps there (its temporary
files, its local copies of the inputs) does not exist for a worker, as on a real
cluster whose machines share nothing with the client's laptop. The workers' only
way to the data is the store, through the environment they are given (their own,
as on a real cluster).

Covering a folder needs a mount namespace (``unshare --mount``, Linux, as root);
:func:`can_separate` says whether this machine allows it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.stores import _free_port, _stop


def can_separate() -> bool:
    """Whether worker processes can be given a mount namespace here."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True)
    return probe.returncode == 0


@dataclass(frozen=True)
class SeparateCluster:
    """A running cluster: its scheduler's address, and the client's private folder
    that its workers cannot see."""

    address: str
    private: Path


@contextlib.contextmanager
def separate_cluster(private: Path, environ: Mapping[str, str], n_workers: int = 2
                     ) -> Iterator[SeparateCluster]:
    """A scheduler and ``n_workers`` single-threaded workers on loopback; in each
    worker's mount namespace, ``private`` (the client's folder) is an empty
    file system. ``environ`` is added to the workers' environment (a store's
    endpoint and credentials)."""
    base = Path(tempfile.mkdtemp(prefix="geoeval-cluster-"))
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                      env.get("PYTHONPATH")]))
    procs: list[subprocess.Popen] = []
    try:
        folder = base / "scheduler"
        folder.mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(port), "--dashboard-address", ":0", "--no-show"],
            cwd=folder, env=dict(env, TMPDIR=str(folder)), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True))
        for i in range(n_workers):
            folder = base / f"worker-{i}"
            folder.mkdir()
            worker = [sys.executable, "-m", "distributed.cli.dask_worker", address,
                      "--nthreads", "1", "--nworkers", "1", "--no-nanny",
                      "--local-directory", str(folder), "--dashboard-address", ":0",
                      "--no-dashboard"]
            cover = f"mount -t tmpfs geoeval-hidden {_quote(private)} && exec " + " ".join(
                _quote(a) for a in worker)
            procs.append(subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", cover],
                cwd=folder, env=dict(env, TMPDIR=str(folder)), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True))
        _wait_for_workers(address, n_workers, procs)
        yield SeparateCluster(address, private)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        shutil.rmtree(base, ignore_errors=True)


def _quote(text: object) -> str:
    import shlex

    return shlex.quote(str(text))


def _wait_for_workers(address: str, n: int, procs: list[subprocess.Popen],
                      seconds: float = 60.0) -> None:
    import distributed

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"a cluster process exited with {proc.returncode}")
        with contextlib.suppress(OSError, TimeoutError):
            with distributed.Client(address, timeout=5, set_as_default=False) as client:
                client.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
                return
        time.sleep(0.2)
    raise RuntimeError(f"the cluster at {address} did not get {n} workers in {seconds:.0f} s")
