"""The write step of two vector layers on a Dask cluster: each partition's objects'
rows, written on its worker as one part of the objects dataset as soon as it is solved
(:mod:`geoeval.report.objects_dataset` gives the writer; the last part holds the
objects of the components that cross partitions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.engine.parts import Part
from geoeval.engine.solve import Boundary, PartResult, Solved
from geoeval.parallel import gc_paused


def write_rows(writer: Any, index: int, own: Part, solved: Solved) -> Any:
    """Part ``index`` of the objects dataset: the rows of ``solved``'s objects, taken
    from ``own`` (their ids, areas, geometries and attributes; positions sorted within
    each side)."""
    out = []
    for s in (0, 1):
        pos = solved.positions[s]
        mine = np.flatnonzero(own.side == s)
        rows = mine[np.searchsorted(own.pos[mine], pos)]
        order = np.argsort(pos, kind="stable")
        out.append((pos[order], own.ids[rows][order], own.areas[rows][order],
                    own.geometry[rows][order],
                    {m: {c: v[order] for c, v in d.items()}
                     for m, d in solved.columns[s].items()},
                    None if own.attributes is None else own.attributes.take(rows[order])))
    return writer.write(index, out)


@gc_paused
def write_interior(writer: Any, result: PartResult) -> Any:
    """Runs on a worker as soon as partition ``result.index`` is solved: its interior
    objects' rows, as part ``result.index`` (the partition is then released)."""
    return write_rows(writer, result.index, result.owned, result.interior)


@gc_paused
def write_boundary(writer: Any, index: int, solved: tuple[Solved, np.ndarray],
                   *parts: Boundary) -> Any:
    """Runs on a worker: the boundary components' objects' rows, as part ``index`` (the
    objects in :func:`solve_boundary`'s order)."""
    objects = Part.concat([p.objects for p in parts])
    objects = objects.take(np.lexsort((objects.pos, objects.side)))
    return write_rows(writer, index, objects, solved[0])
