"""What comes back from the cluster: the results gathered in order (a failed task named),
the one progress count of a run with its time left, the tasks' summaries added up, and
partial sums added on the workers in a tree (only the total reaches the client)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from geoeval.errors import InputError
from geoeval.measures.mallows import add_mallows_sums
from geoeval.progress import TimeLeft
from geoeval.sums import ZERO


def on_workers(client: Any, function: Callable[..., Any], items: list[Any]) -> list[Any]:
    """``function`` of every item on the workers, the results in item order; on failures
    the first item's error in item order (the local reader's), whichever failed first,
    as one line naming the tile when it is not geoeval's own (:func:`gather`)."""
    from geoeval.engine.inline import wait

    futures = client.map(function, items, pure=False)
    wait(client, futures)
    failed = [k for k, future in enumerate(futures) if future.status == "error"]
    if failed:
        k = failed[0]
        gather(client, [futures[k]], [items[k]], "planning", None, label="tiles")
    return client.gather(futures)


def gather(client: Any, futures: list[Any], items: list[Any], what: str,
            meter: Meter | None, label: str = "pieces") -> list[Any]:
    """Results in order, each counted by ``meter``; a failed task's error
    is raised naming the item (piece: file and rows; partition: its number)."""
    from geoeval.engine.inline import as_completed

    out: list[Any] = [None] * len(futures)
    where = {f.key: i for i, f in enumerate(futures)}
    done = 0
    for fut in as_completed(client, futures):
        i = where[fut.key]
        try:
            out[i] = fut.result()
        except InputError:
            raise
        except Exception as exc:
            item = items[i]
            name = (f"{item.path} ({'row groups' if item.kind == 'parquet' else 'features'} "
                    f"{item.start}..{item.start + item.count - 1})"
                    if hasattr(item, "path") else
                    (f"partition {item}" if isinstance(item, int) else str(item)))
            raise InputError(f"{what} failed on {name}: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        done += 1
        if meter is not None:
            meter.add(f"{what} {done}/{len(futures)} {label}")
    return out


class Meter:
    """One count of the run's work on the cluster, reported as one step: pieces read,
    partitions matched, the boundary solved, parts written, as ``done/total``, the
    time left (:class:`geoeval.progress.TimeLeft`, the in-memory engine's rule), and
    what is running. The partitions are estimated from the pieces' feature counts until
    the key cuts are known (:meth:`partitions`)."""

    STEP = "scoring on the cluster"

    def __init__(self, progress: Callable[[str], None] | None, pieces: int,
                 partitions: int, writes: bool) -> None:
        self.progress, self.pieces, self.writes = progress, pieces, writes
        self.total = 0
        self.done = 0
        self.left = TimeLeft()
        self.partitions(partitions)

    def partitions(self, k: int) -> None:
        """The number of partitions is known (or estimated): the total follows."""
        # pieces, partitions, the boundary, and (writing) a part a partition + the boundary's
        self.total = self.pieces + k + 1 + ((k + 1) if self.writes else 0)

    def add(self, stage: str) -> None:
        self.done += 1
        self.report(stage)

    def report(self, stage: str) -> None:
        if self.progress is None:
            return
        done = min(self.done, self.total)
        left = self.left.text(done, self.total)
        self.progress(f"{self.STEP}: {done}/{self.total}{left} ({stage})")


#: Partial summaries added per reduction task (the tree of additions on the workers).
REDUCE_FAN_IN = 8


def reduce_tree(client: Any, futures: list[Any], add: Callable[..., Any]) -> Any:
    """The future of ``add(*values)`` over the results of ``futures`` (at least one), a
    tree of tasks on the workers (:data:`REDUCE_FAN_IN` at a time): only the total
    reaches the client."""
    while len(futures) > 1:
        futures = [client.submit(add, *futures[i:i + REDUCE_FAN_IN], pure=False)
                   for i in range(0, len(futures), REDUCE_FAN_IN)]
    return futures[0]


def add_summaries(summaries: list[dict[str, Any]], matchers: Sequence[str],
                  keys: Sequence[str]) -> dict[str, Any]:
    """Tasks' summaries added up: the numbers under ``keys``, and per matcher its counts,
    sums, kinds and solver counts (:func:`~geoeval.measures.mallows.add_mallows_sums` for
    the Mallows sums); the
    partitions' and the label-mosaic blocks' (:mod:`geoeval.engine.mosaic`) alike."""
    total: dict[str, Any] = {k: 0 for k in keys}
    total["matchers"] = {}
    for s in summaries:
        for key in keys:
            total[key] += s[key]
    for name in matchers:
        acc: dict[str, Any] = {"missed": 0, "false_alarms": 0, "matched_overlap": ZERO,
                               "kinds": {}, "score_sum": ZERO, "score_n": 0, "solver": {},
                               "params": {}, "mallows": None}
        for s in summaries:
            m = s["matchers"][name]
            for key in ("missed", "false_alarms", "matched_overlap", "score_sum", "score_n"):
                acc[key] += m[key]
            for key in ("kinds", "solver"):
                for kk, v in m[key].items():
                    acc[key][kk] = acc[key].get(kk, 0) + v
            acc["params"] = m["params"] or acc["params"]
            acc["mallows"] = add_mallows_sums(acc["mallows"], m.get("mallows"))
        total["matchers"][name] = acc
    return total
