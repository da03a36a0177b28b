"""A client that runs every task at once, in this process: the Dask routes without a cluster.

:class:`InlineClient` has the part of ``distributed.Client``'s interface the engine
uses (``submit``, ``map``, ``gather``, ``scatter``, ``scheduler_info``), each task run
when it is submitted, its arguments' futures replaced by their results. The Dask
engine's orchestration (:func:`geoeval.engine.layers.score_layers`,
:func:`geoeval.engine.mosaic.score_mosaic`) then runs unchanged in one process: the
tests exercise the run itself, not a copy of it, and a failure can be stepped
through in a debugger.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any


class InlineFuture:
    """A finished task: its result, or the exception it raised (raised by :meth:`result`)."""

    _keys = itertools.count()

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error
        self.key = f"inline-{next(self._keys)}"

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value

    def done(self) -> bool:
        return True

    @property
    def status(self) -> str:
        """``"error"`` or ``"finished"``, as a ``distributed.Future``'s."""
        return "finished" if self.error is None else "error"


def _resolved(value: Any) -> Any:
    """``value`` with the futures in it (at any depth of lists, tuples, dicts) replaced by
    their results, as Dask passes a task its inputs."""
    if isinstance(value, InlineFuture):
        return value.result()
    if isinstance(value, list | tuple):
        return type(value)(_resolved(v) for v in value)
    if isinstance(value, dict):
        return {k: _resolved(v) for k, v in value.items()}
    return value


class InlineClient:
    """Runs each task when it is submitted, in this process (module docstring)."""

    def submit(self, fn: Callable[..., Any], *args: Any, pure: bool = True,
               **kwargs: Any) -> InlineFuture:
        try:
            return InlineFuture(fn(*_resolved(args), **_resolved(kwargs)))
        except Exception as exc:  # handed to whoever asks for the result, as Dask does
            return InlineFuture(error=exc)

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any],
            pure: bool = True) -> list[InlineFuture]:
        # as distributed's map: the shortest iterable decides
        return [self.submit(fn, *args) for args in zip(*iterables)]  # noqa: B905

    def gather(self, futures: Any) -> Any:
        return _resolved(futures)

    def scatter(self, data: list[Any], hash: bool = True) -> list[InlineFuture]:
        return [InlineFuture(d) for d in data]

    def scheduler_info(self) -> dict[str, Any]:
        return {"workers": {"inline": {}}}

    @staticmethod
    def as_completed(futures: list[InlineFuture]) -> Iterator[InlineFuture]:
        """The futures in order: every one is finished already."""
        return iter(futures)


def wait(client: Any, futures: list[Any]) -> None:
    """Return when every one of ``futures`` has finished (``distributed.wait`` on a
    cluster; at once with an :class:`InlineClient`)."""
    if isinstance(client, InlineClient):
        return
    from distributed import wait as finished

    finished(futures)


def as_completed(client: Any, futures: list[Any]) -> Iterator[Any]:
    """``futures`` as they finish: ``distributed.as_completed`` on a cluster, in order
    with an :class:`InlineClient`."""
    if isinstance(client, InlineClient):
        return client.as_completed(futures)
    from distributed import as_completed as finished

    return iter(finished(futures))
