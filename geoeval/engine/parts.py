"""The parts of two vector layers on a Dask cluster: pieces read and keyed, cut into
spatial partitions (the *partition* step of :mod:`geoeval.engine.layers`).

Every object gets the Hilbert key of its bounding-box centre over the bounds of both
layers (:mod:`geoeval.engine.hilbert`); the workers send the client a sample of their
keys (at most :data:`KEY_SAMPLE` a piece), the client cuts the key range into ``k``
runs of about equal counts (:func:`cuts`), each piece is split by those cuts on its
worker (:func:`split`) and the splits gathered per run, worker to worker
(:func:`assemble`): partition ``p`` holds the objects of **both sides** whose key falls
in run ``p``: it **owns** them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.arrays import SizedByArrays
from geoeval.parallel import gc_paused

#: Hilbert curve level of the ownership key (:mod:`geoeval.engine.hilbert`).
HILBERT_LEVEL = 16
#: Keys each piece sends to the client to place the partition cuts.
KEY_SAMPLE = 256


@dataclass
class Part(SizedByArrays):
    """Objects of both sides (one partition, a piece or a halo), columnar.

    ``side`` 0 is the reference, 1 the submission; ``pos`` the object's position
    in its layer (what the in-memory engine indexes it by); ``geometry`` the
    objects as WKB (a third of the memory of shapely objects; parsed where the
    overlap is computed, and written as it is), ``bounds`` their bounding boxes;
    ``classes`` each object's class value as read (``--class-field``; ``None`` for a
    side read without one), or ``None`` when no class is read; ``attributes`` the
    objects' attribute columns for the objects dataset (a ``pyarrow.Table``,
    ``ref_<name>`` / ``sub_<name>``, null on the other side's rows; :mod:`geoeval.io.attributes`),
    or ``None``. Halos leave them behind (only owned objects' rows are written).
    """

    side: np.ndarray
    pos: np.ndarray
    ids: np.ndarray
    geometry: np.ndarray
    areas: np.ndarray
    bounds: np.ndarray
    key: np.ndarray | None = None
    info: dict[str, Any] | None = None
    all_ids: np.ndarray | None = None
    classes: np.ndarray | None = None
    attributes: Any = None

    def __len__(self) -> int:
        return int(self.pos.size)

    def take(self, index: np.ndarray, *, attributes: bool = True) -> Part:
        """The objects at ``index``; without their attribute table unless ``attributes``."""
        return Part(self.side[index], self.pos[index], self.ids[index], self.geometry[index],
                    self.areas[index], self.bounds[index],
                    None if self.key is None else self.key[index],
                    classes=None if self.classes is None else self.classes[index],
                    attributes=None if self.attributes is None or not attributes
                    else self.attributes.take(np.asarray(index)))

    @staticmethod
    def concat(parts: Sequence[Part]) -> Part:
        parts = [p for p in parts if p is not None]
        if not parts:
            return empty_part()
        ids = [p.ids for p in parts if len(p)]
        classes = None
        if any(p.classes is not None for p in parts):  # a part without: no class (None)
            classes = np.concatenate([np.full(len(p), None, dtype=object)
                                      if p.classes is None else p.classes for p in parts])
        return Part(np.concatenate([p.side for p in parts]),
                    np.concatenate([p.pos for p in parts]),
                    np.concatenate(ids) if ids else parts[0].ids[:0],
                    np.concatenate([p.geometry for p in parts]),
                    np.concatenate([p.areas for p in parts]),
                    np.concatenate([p.bounds for p in parts]), classes=classes,
                    attributes=_concat_attributes(parts))

    def attribute_schema(self) -> Any:
        """The Arrow schema of its attribute table (``None``: none)."""
        return None if self.attributes is None else self.attributes.schema

    def shapes(self) -> np.ndarray:
        """The geometries as shapely objects."""
        return _from_wkb(self.geometry)


def _concat_attributes(parts: Sequence[Part]) -> Any:
    """The parts' attribute tables one after the other (columns of any, null where a
    part lacks them; a part without a table, e.g. a halo, all null)."""
    tables = [p.attributes for p in parts]
    if all(t is None for t in tables):
        return None
    import pyarrow as pa

    from geoeval.io.attributes import conform, unified_schema

    schema = unified_schema([t.schema for t in tables if t is not None])
    return pa.Table.from_arrays(
        [pa.concat_arrays(c) for c in zip(*(conform(t, schema, len(p))
                                            for t, p in zip(tables, parts, strict=True)),
                                          strict=True)],
        schema=schema)


def _to_wkb(geoms: np.ndarray) -> np.ndarray:
    import shapely

    return shapely.to_wkb(geoms) if geoms.size else np.zeros(0, dtype=object)


def _from_wkb(wkb: np.ndarray) -> np.ndarray:
    import shapely

    return np.asarray(shapely.from_wkb(wkb), dtype=object) if wkb.size \
        else np.zeros(0, dtype=object)


def empty_part() -> Part:
    return Part(np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64),
                np.zeros(0, dtype=object), np.zeros(0), np.zeros((0, 4)))


def piece_info(data: Any) -> dict[str, Any]:
    """What the client learns of a piece read on a worker: count, reader counts, bounds,
    the kind of its ids."""
    return {"n": int(data.areas.size), "counts": data.counts, "bounds": data.bounds,
            "ids": data.ids.dtype.kind, "empty_ids": int(getattr(data, "empty_ids", 0))}


@gc_paused
def keyed(data: Any, side: int, offset: int, bounds: tuple[float, ...]) -> Part:
    """A piece's objects with their positions and Hilbert keys
    (:func:`geoeval.engine.hilbert.hilbert_keys` of their bounding boxes over ``bounds``,
    level :data:`HILBERT_LEVEL`; bounds from metadata that are too small still give
    keys on the curve)."""
    import shapely

    from geoeval.engine.hilbert import hilbert_keys

    n = data.areas.size
    box = shapely.bounds(data.geometry) if n else np.zeros((0, 4))
    key = hilbert_keys(box, tuple(bounds), HILBERT_LEVEL) if n else np.zeros(0, np.int64)
    from geoeval.io.attributes import PREFIXES, attribute_table

    return Part(np.full(n, side, np.int8), offset + np.arange(n, dtype=np.int64), data.ids,
                _to_wkb(data.geometry), data.areas, box, key,
                all_ids=getattr(data, "all_ids", None), classes=getattr(data, "classes", None),
                attributes=attribute_table(getattr(data, "attributes", None),
                                           PREFIXES[("reference", "submission")[side]]))


@gc_paused
def read_keyed(piece: Any, side: int, bounds: tuple[float, ...]) -> Part:
    """Read a piece and key it at once (the layers' bounds known from their metadata):
    positions local to the piece (:func:`split` adds the piece's offset), the reader's
    counts in ``info``. Only the WKB of the piece stays in memory."""
    from geoeval.io.pieces import read_piece

    data = read_piece(piece)
    part = keyed(data, side, 0, bounds)
    part.info = piece_info(data)
    return part


def part_attributes(part: Part) -> Any:
    """Runs on a worker: the Arrow schema of a piece's attribute table (``None``: none)."""
    return part.attribute_schema()


def part_info(part: Part) -> dict[str, Any]:
    assert part.info is not None
    return part.info


def key_sample(part: Part) -> tuple[np.ndarray, np.ndarray]:
    """At most :data:`KEY_SAMPLE` evenly spaced sorted keys, each with the count it stands for."""
    if not len(part):
        return np.zeros(0, np.int64), np.zeros(0)
    keys = np.sort(part.key)
    at = np.unique(np.linspace(0, keys.size - 1, min(KEY_SAMPLE, keys.size)).astype(np.int64))
    return keys[at], np.full(at.size, keys.size / at.size)


@gc_paused
def split(part: Part, cuts: np.ndarray, offset: int = 0) -> dict[int, Part]:
    """The piece cut into the key runs (only the non-empty ones), its positions moved
    by ``offset`` (the objects of the pieces before it)."""
    if not len(part):
        return {}
    if offset:
        part = Part(part.side, part.pos + offset, part.ids, part.geometry, part.areas,
                    part.bounds, part.key, classes=part.classes, attributes=part.attributes)
    which = np.searchsorted(cuts, part.key, side="right")
    order = np.argsort(which, kind="stable")
    which = which[order]
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    out = {}
    for s, e in zip(starts.tolist(), [*starts[1:].tolist(), which.size], strict=True):
        out[int(which[s])] = part.take(order[s:e])
    return out


def bucket(splits: dict[int, Any], p: int) -> Any:
    return splits.get(p)


@gc_paused
def assemble(*parts: Part | None) -> Part:
    """One partition: its buckets, in (side, position) order."""
    part = Part.concat([p for p in parts if p is not None])
    order = np.lexsort((part.pos, part.side))
    return part.take(order)


def extent(part: Part) -> tuple[float, float, float, float]:
    if not len(part):
        return (np.nan,) * 4  # type: ignore[return-value]
    b = part.bounds
    return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()),
            float(b[:, 3].max()))


def side_extents(part: Part) -> list[tuple[float, float, float, float]]:
    """Runs on a worker: the extent of each side's objects in a partition (NaN: none)."""
    return [extent(part.take(np.flatnonzero(part.side == s), attributes=False))
            for s in (0, 1)]


def split_keys(splits: dict[int, Part]) -> set[int]:
    return set(splits)


def cuts(keys: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """``k - 1`` increasing key cuts giving runs of about equal weight (distinct cuts only)."""
    if k <= 1 or keys.size == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")
    keys, cum = keys[order], np.cumsum(weights[order])
    targets = cum[-1] * np.arange(1, k) / k
    cuts = keys[np.minimum(np.searchsorted(cum, targets), keys.size - 1)]
    return np.unique(cuts)
