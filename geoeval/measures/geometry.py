"""Geometry measures on request, one registry: Panoptic Quality, Clinton et al.'s over-
and under-segmentation, PoLiS and Boundary IoU (``docs/geometry-measures.md``).

PQ and Clinton's measures are the scene's own (PQ has its own IoU > 0.5
matching); PoLiS and Boundary IoU are computed per one-to-one instance of each
matcher that ran (the pair whose outlines are compared). A new measure is its module
(a ``compute`` and a ``rows`` function) and one :func:`register_measure` entry: the
options (``--measures``), the report's ``geometry`` entry and the terminal table read
the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval import validate
from geoeval.encoding import number
from geoeval.errors import InputError
from geoeval.matching.result import Matching
from geoeval.overlap import Overlap

#: Boundary IoU bands: the polygons' exact distance band (default) or the reference
#: code's pixel erosion (:mod:`geoeval.measures.boundary_band`)
BOUNDARY_BANDS = ("distance", "raster")


def check_boundary_band(band: str) -> str:
    """``band`` if it is one of :data:`BOUNDARY_BANDS`, else :class:`InputError`."""
    if band not in BOUNDARY_BANDS:
        raise InputError(f"Boundary IoU band must be one of {', '.join(BOUNDARY_BANDS)}, "
                         f"got {band!r}")
    return band


@dataclass(frozen=True)
class GeometryMeasure:
    """One registered geometry measure.

    Attributes
    ----------
    name : str
        Its name (``--measures``, the report's ``geometry`` key; ``-`` and ``_`` are the
        same on the command line).
    compute : callable or str
        ``compute(overlap, pairs, **settings)`` (or ``"module:function"``, imported on
        first use) returning a value whose ``to_dict()`` is the report's entry.
        ``pairs`` maps each matcher that ran to the reference and submission indices of
        its one-to-one instances (:func:`one_to_one_pairs`); ``settings`` are the run's
        geometry settings (``boundary_width``, ``boundary_band``), each measure taking
        what it uses.
    rows : callable or str
        ``rows(entry)`` turns the report's entry into terminal-table rows ``(measure,
        matching, value or mean, median, pairs)``.
    title : str
        Its name in words.
    source : str
        Where it comes from (authors, year, section).
    """

    name: str
    compute: Callable[..., Any] | str
    rows: Callable[[dict[str, Any]], list[tuple[str, str, Any, Any, Any]]] | str
    title: str = ""
    source: str = ""

    def run(self, overlap: Overlap, pairs: Mapping[str, tuple[np.ndarray, np.ndarray]],
            **settings: Any) -> Any:
        return _resolve(self.compute)(overlap, pairs, **settings)

    def table_rows(self, entry: dict[str, Any]) -> list[tuple[str, str, Any, Any, Any]]:
        return _resolve(self.rows)(entry)


def _resolve(function: Callable[..., Any] | str) -> Callable[..., Any]:
    if not isinstance(function, str):
        return function
    import importlib

    module, _, attr = function.partition(":")
    return getattr(importlib.import_module(module), attr)


_MEASURES: dict[str, GeometryMeasure] = {}


def register_measure(measure: GeometryMeasure) -> GeometryMeasure:
    """Add ``measure`` to the registry (its name must be new)."""
    if measure.name in _MEASURES or measure.name == "all":
        raise ValueError(f"a geometry measure called {measure.name!r} is already registered")
    _MEASURES[measure.name] = measure
    return measure


@contextmanager
def registered_measure(measure: GeometryMeasure) -> Iterator[GeometryMeasure]:
    """``measure`` registered for the ``with`` block only (tests, experiments)."""
    register_measure(measure)
    try:
        yield measure
    finally:
        _MEASURES.pop(measure.name, None)


def measure_names() -> tuple[str, ...]:
    """The registered geometry measures, in registration order."""
    return tuple(_MEASURES)


def get_measure(name: str) -> GeometryMeasure:
    """The registered measure ``name`` (:class:`InputError` listing the known ones)."""
    try:
        return _MEASURES[name]
    except KeyError:
        raise InputError(f"unknown geometry measure {name.replace('_', '-')!r} (choose "
                         f"from {', '.join(n.replace('_', '-') for n in _MEASURES)}, all)") \
            from None


def parse_measures(measures: Sequence[str] | str | None) -> tuple[str, ...]:
    """The measures asked for, as a tuple of registered names (:func:`measure_names`).

    Accepts a sequence or a comma-separated string; ``-`` and ``_`` are the same;
    ``all`` is every measure. :class:`InputError` on an unknown name.
    """
    if measures is None:
        return ()
    items = measures.split(",") if isinstance(measures, str) else list(measures)
    names = [str(m).strip().lower().replace("-", "_") for m in items]
    names = [n for n in names if n]
    if "all" in names:
        return measure_names()
    for n in names:
        get_measure(n)
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True, eq=False)
class PairValues:
    """One value per one-to-one instance of a matching (NaN where undefined)."""

    reference: np.ndarray  # reference indices
    submission: np.ndarray  # submission indices
    values: np.ndarray

    def to_dict(self, rid: np.ndarray, sid: np.ndarray) -> dict[str, Any]:
        ok = self.values[~np.isnan(self.values)]
        return {
            "pairs": int(self.values.size),
            "defined": int(ok.size),
            "mean": float(ok.mean()) if ok.size else None,
            "median": float(np.median(ok)) if ok.size else None,
            "reference_ids": rid[self.reference].tolist(),
            "submission_ids": sid[self.submission].tolist(),
            "values": [number(v) for v in self.values.tolist()],
        }


@dataclass(frozen=True, eq=False)
class PairsByMatcher:
    """A per-pair measure of each matcher's one-to-one instances (PoLiS, Boundary IoU):
    :meth:`to_dict` gives, per matcher, :meth:`PairValues.to_dict` with the objects' ids."""

    values: dict[str, PairValues]
    ref_ids: np.ndarray
    sub_ids: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {n: v.to_dict(self.ref_ids, self.sub_ids) for n, v in self.values.items()}


@dataclass(frozen=True, eq=False)
class GeometryMeasures:
    """The geometry measures of a scene; :meth:`to_dict` is the report's ``geometry`` key
    (``measures`` the names asked for, then each one's entry)."""

    measures: tuple[str, ...]
    values: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"measures": list(self.measures),  # as asked; the entries in registry order
                **{n: self.values[n].to_dict() for n in measure_names() if n in self.values}}


def table_rows(geometry: dict[str, Any] | None) -> list[tuple[str, str, Any, Any, Any]]:
    """Terminal-table rows of a report's ``geometry`` entry, each registered measure's
    (:attr:`GeometryMeasure.rows`) in registry order."""
    if geometry is None:
        return []
    return [row for n in measure_names() if n in geometry
            for row in get_measure(n).table_rows(geometry[n])]


def one_to_one_pairs(m: Matching) -> tuple[np.ndarray, np.ndarray]:
    """Reference and submission indices of the one-to-one instances of ``m``."""
    a = m.arrays
    k = np.flatnonzero(a.kind == 0)
    return a.ref_idx[a.ref_ptr[k]], a.sub_idx[a.sub_ptr[k]]


def geometry_measures(
    overlap: Overlap,
    matchings: Mapping[str, Matching],
    measures: Sequence[str] | str,
    **settings: Any,
) -> GeometryMeasures:
    """Compute the geometry measures asked for (each registered measure's
    :attr:`GeometryMeasure.compute`).

    Parameters
    ----------
    overlap : Overlap
    matchings : mapping of matcher name to Matching
        Per-pair measures (PoLiS, Boundary IoU) are computed on each one's one-to-one
        instances.
    measures : sequence of str or str
        See :func:`parse_measures`.
    **settings
        The run's geometry settings, each measure taking what it uses:
        ``boundary_width`` (Boundary IoU band width ``d`` in CRS units; default 2 % of
        each reference object's bounding-box diagonal, or for the raster band the
        reference code's 2 % of the image diagonal) and ``boundary_band``
        (``distance``: the polygons' exact band; ``raster``: the reference code's
        erosion, for two label rasters on one grid).

    Returns
    -------
    GeometryMeasures
    """
    names = parse_measures(measures)
    validate.positive("boundary_width", settings.get("boundary_width"))
    check_boundary_band(settings.get("boundary_band", "distance"))
    pairs = {n: one_to_one_pairs(m) for n, m in matchings.items()}
    return GeometryMeasures(names, {n: get_measure(n).run(overlap, pairs, **settings)
                                    for n in names})


def pixel_size(overlap: Overlap) -> float:
    """The larger pixel side of the inputs that are labelled rasters (0 for none)."""
    sides = [max(abs(g.transform.a), abs(g.transform.e))
             for g in (overlap.reference.grid, overlap.submission.grid) if g is not None]
    return float(max(sides, default=0.0))


register_measure(GeometryMeasure(
    "pq", "geoeval.measures.panoptic:pq_measure", "geoeval.measures.panoptic:table_rows",
    title="Panoptic Quality", source="Kirillov et al. 2019"))
register_measure(GeometryMeasure(
    "clinton", "geoeval.measures.clinton:clinton_measure",
    "geoeval.measures.clinton:table_rows", title="over- and under-segmentation",
    source="Clinton et al. 2010"))
register_measure(GeometryMeasure(
    "polis", "geoeval.measures.polis:polis_measure", "geoeval.measures.polis:table_rows",
    title="PoLiS distance", source="Avbelj et al. 2015"))
register_measure(GeometryMeasure(
    "boundary_iou", "geoeval.measures.boundary_iou:boundary_iou_measure",
    "geoeval.measures.boundary_iou:table_rows", title="Boundary IoU",
    source="Cheng et al. 2021"))
