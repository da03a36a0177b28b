"""A matching's per-object lists, named by user ids: what the report lists.

The JSON report lists each matcher's instances (their members' ids, overlap, kind,
score, Mallows score), its missed reference ids and its false alarms' ids
(``docs/report.md``). :class:`MatchLists` holds them as columns, the members keyed
by their **position** in their layer (for a label raster, the label: the same order),
so that the lists of a scene's parts, solved apart (the Dask engine's partitions
and blocks), concatenate into the whole scene's: :meth:`MatchLists.concat` sorts the
instances by their smallest reference position, the order of every report
(:meth:`~geoeval.matching.result.InstanceArrays.sorted_by_reference`), and the
missed and false alarms by position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.arrays import SizedByArrays
from geoeval.matching.result import InstanceArrays, Matching


@dataclass(frozen=True, eq=False)
class MatchLists(SizedByArrays):
    """One matcher's per-object lists.

    Attributes
    ----------
    instances : InstanceArrays
        The instances, their members as positions in their layers.
    ref_ids, sub_ids : numpy.ndarray
        The id of each member (aligned with ``instances.ref_idx`` / ``sub_idx``).
    mallows : numpy.ndarray or None
        Each instance's Mallows score (NaN where undefined), when computed.
    missed, false_alarms : numpy.ndarray of int
        Positions of the missed reference and the false-alarm submitted objects
        (labels of a label raster: any integer type, in the layer's order).
    missed_ids, false_alarm_ids : numpy.ndarray
        Their ids.
    """

    instances: InstanceArrays
    ref_ids: np.ndarray
    sub_ids: np.ndarray
    mallows: np.ndarray | None
    missed: np.ndarray
    missed_ids: np.ndarray
    false_alarms: np.ndarray
    false_alarm_ids: np.ndarray

    def __len__(self) -> int:
        return len(self.instances)

    @property
    def n_objects(self) -> int:
        """Objects the lists name (members, missed and false alarms of both sides)."""
        return int(self.ref_ids.size + self.sub_ids.size + self.missed.size
                   + self.false_alarms.size)

    @classmethod
    def of(cls, m: Matching, ref_ids: np.ndarray, sub_ids: np.ndarray,
           mallows: np.ndarray | None = None, ref_pos: np.ndarray | None = None,
           sub_pos: np.ndarray | None = None) -> MatchLists:
        """The lists of matching ``m`` on objects with ids ``ref_ids`` / ``sub_ids`` at
        positions ``ref_pos`` / ``sub_pos`` of their layers (increasing; default
        ``0..n-1``)."""
        a = m.arrays
        rpos = np.arange(len(ref_ids)) if ref_pos is None else np.asarray(ref_pos)
        spos = np.arange(len(sub_ids)) if sub_pos is None else np.asarray(sub_pos)
        ref_ids, sub_ids = np.asarray(ref_ids), np.asarray(sub_ids)
        at = InstanceArrays(a.ref_ptr, rpos[a.ref_idx], a.sub_ptr, spos[a.sub_idx],
                            a.overlap, a.kind, a.score)
        return cls(at, ref_ids[a.ref_idx], sub_ids[a.sub_idx],
                   None if mallows is None else np.asarray(mallows, float),
                   rpos[m.missed], ref_ids[m.missed], spos[m.false_alarms],
                   sub_ids[m.false_alarms])

    @staticmethod
    def concat(parts: Sequence[MatchLists]) -> MatchLists:
        """The lists of disjoint parts of a scene as the whole scene's: instances by their
        smallest reference position, missed and false alarms by position."""
        parts = list(parts)
        if len(parts) == 1:
            return parts[0]
        inst = [p.instances for p in parts]
        ref_ptr = _ptr([np.diff(i.ref_ptr) for i in inst])
        sub_ptr = _ptr([np.diff(i.sub_ptr) for i in inst])
        joined = InstanceArrays(
            ref_ptr, np.concatenate([i.ref_idx for i in inst]), sub_ptr,
            np.concatenate([i.sub_idx for i in inst]),
            np.concatenate([i.overlap for i in inst]), np.concatenate([i.kind for i in inst]),
            np.concatenate([i.score for i in inst]))
        first = joined.ref_idx[joined.ref_ptr[:-1]] if len(joined) else np.zeros(0, np.int64)
        order = np.argsort(first, kind="stable")
        ref_ids, sub_ids = _ids([p.ref_ids for p in parts]), _ids([p.sub_ids for p in parts])
        ref_rows = _member_rows(joined.ref_ptr, order)
        sub_rows = _member_rows(joined.sub_ptr, order)
        mallows = None
        if any(p.mallows is not None for p in parts):
            mallows = np.concatenate([np.full(len(p), np.nan) if p.mallows is None
                                      else p.mallows for p in parts])[order]
        missed = np.concatenate([p.missed for p in parts])
        fa = np.concatenate([p.false_alarms for p in parts])
        mo, fo = np.argsort(missed, kind="stable"), np.argsort(fa, kind="stable")
        return MatchLists(joined.take(order), ref_ids[ref_rows], sub_ids[sub_rows], mallows,
                          missed[mo], _ids([p.missed_ids for p in parts])[mo], fa[fo],
                          _ids([p.false_alarm_ids for p in parts])[fo])


def _ptr(counts: list[np.ndarray]) -> np.ndarray:
    c = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    ptr = np.zeros(c.size + 1, np.int64)
    np.cumsum(c, out=ptr[1:])
    return ptr


def _member_rows(ptr: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows of the members of instances ``order`` (CSR ``ptr``), in that order."""
    counts = np.diff(ptr)[order]
    starts = np.repeat(ptr[:-1][order], counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return starts + within


def _ids(chunks: list[np.ndarray]) -> np.ndarray:
    """Ids of several parts as one array (integers stay integers; text stays text)."""
    chunks = [np.asarray(c) for c in chunks]
    kinds = {c.dtype.kind for c in chunks if c.size}
    if len(kinds) > 1 or kinds & {"O", "U", "S"}:
        return np.concatenate([c.astype(object) for c in chunks])
    return np.concatenate(chunks) if chunks else np.zeros(0, np.int64)


#: Objects (reference and submission together) past which a report lists none of them
#: one by one. Below it a matcher's report lists its ``instances``, ``missed_ids`` and
#: ``false_alarm_ids``; past it, on every engine and route alike, it gives
#: ``objects_dataset`` (the ``--objects`` folder, or ``null``) and ``not_listed``
#: (:func:`not_listed`) instead (``docs/report.md``). 100,000 objects make a report of
#: about 6 MB, and the Dask engine's client then holds at most that many objects' lists
#: (about 0.03 GB, some 300 bytes an object): its memory does not grow with the layers.
LIST_LIMIT = 100_000


def listable(n_objects: int) -> bool:
    """Whether a report lists ``n_objects`` objects (both sides) one by one: at most
    :data:`LIST_LIMIT` (read at each call)."""
    return n_objects <= LIST_LIMIT


def unlisted(n_objects: int) -> int | None:
    """The objects a report of ``n_objects`` objects leaves unlisted: all of them past
    :data:`LIST_LIMIT`, else ``None``."""
    return None if listable(n_objects) else int(n_objects)


def not_listed(n_objects: int, objects_dataset: str | None) -> dict[str, Any]:
    """A matcher's report's ``not_listed`` object for a run of ``n_objects`` objects past
    :data:`LIST_LIMIT`: how many, the limit, and where their results are (the objects
    dataset ``objects_dataset``) or how to get them (``--objects``)."""
    return {"objects": int(n_objects), "limit": LIST_LIMIT,
            "note": _where(objects_dataset)}


def not_listed_note(n_objects: int) -> str:
    """The note a run that asked for the lists gets when its report leaves them out
    (no objects dataset written)."""
    return (f"the report lists no object one by one ({n_objects:,} objects, more than "
            f"{LIST_LIMIT:,}): {_where(None)}")


def _where(objects_dataset: str | None) -> str:
    if objects_dataset is not None:
        return "every object's result is in the objects dataset (objects_dataset)"
    return ("write every object's result with --objects DIR (objects_dir= in Python) "
            "to have them")
