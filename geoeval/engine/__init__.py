"""Where the overlap and the Mallows score run: in this process or on a Dask cluster.

``engine="local"`` (the default) is :func:`geoeval.overlap.compute_overlap` and a
local process pool for the Mallows score. ``engine="dask"`` with the objects in the
client maps the overlap over parts on a ``distributed`` cluster
(:mod:`geoeval.engine.client_overlap`), reduces the overlap edges to the client, and sends
the Mallows score's batches of instances to the same cluster; components and
matching then run in the client on the reduced sparse matrix. Two vector layers
(:mod:`geoeval.engine.layers`) and two label rasters on one grid
(:mod:`geoeval.engine.mosaic`) are instead read, matched and summarised by
partitions or blocks on the workers, the client holding only summaries. The
results are the same (``docs/scale.md``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from geoeval.errors import InputError
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, compute_overlap

#: The engines :func:`geoeval.score` takes.
ENGINES = ("local", "dask")


@dataclass(frozen=True)
class Engine:
    """An open engine: how to build the overlap, where to run Mallows batches.

    Attributes
    ----------
    name : str
        ``local`` or ``dask``.
    client : distributed.Client or None
        The Dask client (``dask`` only).
    n_jobs : int or None
        Workers to spread the Mallows score over (``None``: every core, local).
    """

    name: str
    client: Any = None
    n_jobs: int | None = None

    def overlap(self, reference: ObjectSet, submission: ObjectSet,
                counts: Any = None) -> Overlap:
        """The sparse overlap of the two sides, computed on this engine (``counts``:
        label-pair counts the reader returned, :func:`geoeval.overlap.compute_overlap`)."""
        if self.client is None:
            return compute_overlap(reference, submission, counts)
        from geoeval.engine.client_overlap import dask_overlap

        return dask_overlap(reference, submission, self.client)

    @property
    def mapper(self) -> Any:
        """``mapper(func, items)`` on the cluster for :func:`geoeval.parallel.remote`
        (``None`` when local): results in the order of ``items``."""
        if self.client is None:
            return None
        client = self.client

        def run(func: Any, items: list[Any]) -> list[Any]:
            return client.gather(client.map(func, items, pure=False))

        return run

    @property
    def executor(self) -> Any:
        """A ``concurrent.futures`` executor on the cluster (``None`` when local)."""
        return None if self.client is None else self.client.get_executor()


def check_engine(engine: str, scheduler: str | None) -> None:
    """:class:`InputError` for an unknown engine or a scheduler without ``engine='dask'``."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    if scheduler is not None and engine != "dask":
        raise InputError("--scheduler (scheduler=) needs --engine dask (engine='dask')")


@contextmanager
def open_engine(engine: str = "local", scheduler: str | None = None,
                n_jobs: int | None = None, memory_limit: str | None = None) -> Iterator[Engine]:
    """Open the engine for one run and close what was started for it.

    ``dask`` without ``scheduler`` starts a ``distributed.LocalCluster`` of
    ``n_jobs`` worker processes (default every core), one thread each, and
    closes it at the end (``memory_limit`` per worker, Dask's spelling, e.g.
    ``"4GB"``); with ``scheduler`` (``tcp://host:port``) it connects a
    client to that scheduler and closes only the client.
    """
    check_engine(engine, scheduler)
    if engine == "local":
        yield Engine("local", n_jobs=n_jobs)
        return
    from geoeval.engine.cluster import dask_client

    with dask_client(scheduler, n_jobs, memory_limit) as client:
        yield Engine("dask", client=client,
                     n_jobs=max(1, len(client.scheduler_info()["workers"])))
