"""Per-object pixel masks on one working grid, for pixel-based measures (Mallows).

A pixel measure needs both sides of a match instance on one grid (the Mallows
score of Özdemir et al. 2010, §4.2, is defined on pixels: vector inputs are
rasterised, on the reference grid or at a stated resolution). This module
chooses that grid and cuts each object's mask in its own bounding-box window,
so no stage ever holds a full-raster array per object:

* a labelled raster already on the working grid: ``labels[window] == label``,
  with the windows of all labels found in one pass (``scipy.ndimage.find_objects``);
* anything else (vector layers, or a raster on another grid, vectorised along
  its pixel edges): ``rasterio.features.rasterize`` of the polygon in its own
  window (a pixel belongs to the object when its centre is inside).

Window coordinates are integer ``(row, col)`` indices of the working grid; for a
grid built from a resolution they may be negative (the grid is unbounded and
anchored at CRS coordinates ``(0, 0)``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.grid import LabelGrid, label_index
from geoeval.objects import ObjectSet

# (row0, col0, mask): an object's mask cropped to its bounding box.
Window = tuple[int, int, np.ndarray]


#: How :func:`auto_resolution` chooses the grid step of two vector layers.
AUTO_RESOLUTION_RULE = "a tenth of the median reference object's side, √area, to 2 digits"


def auto_resolution(reference: ObjectSet, submission: ObjectSet) -> float | None:
    """A grid step for the Mallows score of two vector layers, from the data.

    A tenth of the side (``√area``) of the median reference object, rounded to two
    significant digits, so that a typical object covers about a hundred pixels
    (the submission's objects when the reference has none); ``None`` when neither
    side has an object of positive area.

    Examples
    --------
    >>> from shapely import box
    >>> ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 26, 6),
    ...                                  box(40, 0, 52, 12)])
    >>> auto_resolution(ref, ref)
    1.0
    """
    for side in (reference, submission):
        areas = np.asarray(side.areas, dtype=float)
        areas = areas[areas > 0]
        if areas.size:
            return step_from_median(float(np.median(areas)))
    return None


def step_from_median(median_area: float) -> float:
    """:data:`AUTO_RESOLUTION_RULE` from the median object area: a tenth of its side
    ``√area``, to two significant digits (the one copy of the rule: the in-memory
    engine and the Dask engine's partitions, whose median is found on the cluster,
    both use it).

    Examples
    --------
    >>> step_from_median(100.0), step_from_median(2.0)
    (1.0, 0.14)
    """
    return float(f"{np.sqrt(median_area) / 10:.2g}")


def auto_resolution_note(resolution: float) -> str:
    """The note of a run whose Mallows grid step was chosen from the data, naming the
    option as the caller knows it (:func:`geoeval.validate.option_name`).

    A note, not a warning: every run of two vector layers without a step chooses one
    by :data:`AUTO_RESOLUTION_RULE`, a documented default, not something wrong with the
    inputs (so ``--strict`` passes); the report records it in ``parameters.mallows``
    (``resolution``, ``resolution_rule``).

    Examples
    --------
    >>> auto_resolution_note(0.59).endswith("chosen from the data (a tenth of the median "
    ...                                     "reference object's side, √area, to 2 digits); "
    ...                                     "set it with resolution=")
    True
    """
    from geoeval.validate import option_name

    return ("both inputs are vector layers: the Mallows score rasterises them on a "
            f"grid of step {resolution:g} (CRS units) chosen from the data "
            f"({AUTO_RESOLUTION_RULE}); set it with {option_name('resolution')}")


@dataclass(frozen=True)
class WorkGrid:
    """The grid a pixel measure works on.

    Attributes
    ----------
    transform : affine.Affine
        Pixel-corner to CRS transform (rasterio convention).
    shape : tuple of int or None
        ``(rows, cols)`` of a bounded grid (a raster); ``None`` for the unbounded
        grid built from a resolution.
    source : str
        ``reference``, ``submission`` or ``resolution``.
    """

    transform: Any
    shape: tuple[int, int] | None
    source: str

    @property
    def sampling(self) -> tuple[float, float]:
        """Length of one step along rows and along columns, in CRS units."""
        t = self.transform
        return (float(np.hypot(t.b, t.e)), float(np.hypot(t.a, t.d)))

    def matches(self, grid: LabelGrid) -> bool:
        """True when ``grid`` is this very grid (same transform and shape)."""
        return self.shape == tuple(grid.shape) and tuple(self.transform) == tuple(
            grid.transform
        )


def choose_grid(
    reference: ObjectSet, submission: ObjectSet, resolution: float | None = None
) -> WorkGrid:
    """The working grid: the reference grid, else the submission grid, else a resolution grid.

    Parameters
    ----------
    reference, submission : ObjectSet
    resolution : float, optional
        Pixel size (CRS units) of the grid used when neither side is a raster;
        ignored when one is (vectors are rasterised onto the reference grid).

    Raises
    ------
    InputError
        Both sides are vector layers and no (positive) resolution is given, or
        the grid is sheared (its row and column steps are not perpendicular).
    """
    from affine import Affine

    if reference.grid is not None:
        g = reference.grid
        wg = WorkGrid(g.transform, tuple(g.shape), "reference")  # type: ignore[arg-type]
    elif submission.grid is not None:
        g = submission.grid
        wg = WorkGrid(g.transform, tuple(g.shape), "submission")  # type: ignore[arg-type]
    else:
        if resolution is None:
            raise InputError(
                "both inputs are vector layers: the Mallows score rasterises them and "
                "needs a grid step (--resolution, in CRS units)",
                reference.path,
            )
        if not np.isfinite(resolution) or resolution <= 0:
            raise InputError(f"resolution must be a positive number, got {resolution}")
        r = float(resolution)
        wg = WorkGrid(Affine(r, 0.0, 0.0, 0.0, -r, 0.0), None, "resolution")
    t = wg.transform
    rs, cs = wg.sampling
    if rs == 0 or cs == 0 or abs(t.a * t.b + t.d * t.e) > 1e-9 * rs * cs:
        path = reference.path if wg.source == "reference" else submission.path
        raise InputError(
            "the raster grid is sheared or degenerate; pixel measures need "
            "perpendicular row and column steps",
            path,
        )
    return wg


def label_boxes(grid: LabelGrid, ids: np.ndarray) -> np.ndarray:
    """Bounding box ``(row0, row1, col0, col1)`` (ends exclusive) of each label in ``ids``.

    The grid's boxes when it has them; for a windowed grid, one window-by-window
    scan of its source (the first time only); for an array in memory, one pass
    over it (``scipy.ndimage.find_objects``). Labels absent from the raster get an
    empty box ``(0, 0, 0, 0)``.
    """
    from scipy import ndimage

    ids = np.asarray(ids)
    if grid.boxes is not None and len(grid.boxes) == ids.size:
        return np.array(grid.boxes, dtype=np.int64)
    if not grid.in_memory:
        return _scanned_boxes(grid, ids)
    labels = grid.labels
    boxes = np.zeros((ids.size, 4), dtype=np.int64)
    if ids.size == 0 or labels.size == 0:
        return boxes
    lo, hi = int(labels.min()), int(labels.max())
    if grid.background == 0 and lo >= 0 and hi <= max(4 * labels.size, 1 << 16):
        # labels are small non-negative integers: find_objects on them directly
        slices = ndimage.find_objects(labels)
        pos = ids.astype(np.int64) - 1
    else:
        fg = labels != grid.background
        index = np.zeros(labels.shape, dtype=np.intp)
        index[fg] = label_index(ids, labels[fg]) + 1
        slices = ndimage.find_objects(index, max_label=ids.size)
        pos = np.arange(ids.size)
    for k, p in enumerate(pos.tolist()):
        s = slices[p] if 0 <= p < len(slices) else None
        if s is not None:
            boxes[k] = (s[0].start, s[0].stop, s[1].start, s[1].stop)
    return boxes


def _scanned_boxes(grid: LabelGrid, ids: np.ndarray) -> np.ndarray:
    """Boxes of ``ids`` from the grid's own scan of its source
    (:meth:`LabelGrid.label_boxes`, run once per grid)."""
    labels, found_boxes = grid.label_boxes()
    boxes = np.zeros((ids.size, 4), dtype=np.int64)
    if ids.size == 0 or labels.size == 0:
        return boxes
    pos = np.minimum(label_index(labels, ids), labels.size - 1)
    hit = labels[pos] == ids.astype(labels.dtype)
    boxes[hit] = found_boxes[pos[hit]]
    return boxes


class GridMasks:
    """Masks of the objects of a labelled raster that lies on the working grid.

    Each mask reads only its object's bounding box (:meth:`LabelGrid.read`), so a
    windowed grid is never read whole.
    """

    def __init__(self, objects: ObjectSet) -> None:
        assert objects.grid is not None
        self.grid = objects.grid
        # compared in the raster's own dtype: int64 ids against uint64 labels would be float
        self.ids = np.asarray(objects.ids).astype(self.grid.dtype)
        self.boxes = label_boxes(objects.grid, objects.ids)

    def window(self, k: int) -> Window:
        r0, r1, c0, c1 = (int(v) for v in self.boxes[k])
        return r0, c0, self.grid.read((r0, r1, c0, c1)) == self.ids[k]


class PolygonMasks:
    """Masks of polygons rasterised on the working grid (pixel centre inside).

    On a bounded grid the windows are clipped to it: the part of an object
    outside the raster is dropped, so its boundary lies on the raster's edge.
    """

    def __init__(self, objects: ObjectSet, grid: WorkGrid) -> None:
        import shapely

        self.geoms = objects.polygons
        self.grid = grid
        self.bounds = shapely.bounds(self.geoms) if len(self.geoms) else np.zeros((0, 4))
        self.inverse = ~grid.transform

    def window(self, k: int) -> Window:
        from affine import Affine
        from rasterio.features import rasterize

        minx, miny, maxx, maxy = self.bounds[k]
        if not np.all(np.isfinite(self.bounds[k])):  # empty geometry
            return 0, 0, np.zeros((0, 0), dtype=bool)
        inv = self.inverse
        corners = [inv @ (x, y) for x in (minx, maxx) for y in (miny, maxy)]
        cols = [c for c, _ in corners]
        rows = [r for _, r in corners]
        r0, r1 = int(np.floor(min(rows))), int(np.ceil(max(rows)))
        c0, c1 = int(np.floor(min(cols))), int(np.ceil(max(cols)))
        if self.grid.shape is not None:
            h, w = self.grid.shape
            r0, r1, c0, c1 = max(r0, 0), min(r1, h), max(c0, 0), min(c1, w)
        if r1 <= r0 or c1 <= c0:
            return 0, 0, np.zeros((0, 0), dtype=bool)
        transform = self.grid.transform @ Affine.translation(c0, r0)
        with _no_aws_session():
            mask = rasterize(
                [(self.geoms[k], 1)],
                out_shape=(r1 - r0, c1 - c0),
                transform=transform,
                fill=0,
                all_touched=False,
                dtype="uint8",
            ).astype(bool)
        return r0, c0, mask


_SESSION_LOCK = threading.Lock()
_SESSION_USERS = [0]
_SESSION_SAVED: list[Any] = [None]


@contextmanager
def _no_aws_session() -> Iterator[None]:
    """rasterio without its boto3 session while a mask is rasterised in memory.

    With ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` in the environment (the
    standard way to reach object storage), every ``rasterio.Env`` — and its
    ``rasterize`` opens one per call, inside its C code — builds a boto3 session:
    ~50 ms against ~1 ms for the mask itself, so the Mallows score of a vector pair
    ran ~50× slower for anyone with AWS credentials set. A mask drawn in memory
    reads no file; and GDAL reads those variables itself for the files it opens
    elsewhere meanwhile. Counted, so that threads drawing masks at once restore
    rasterio's module only when the last one is done.
    """
    import rasterio.session as sessions

    with _SESSION_LOCK:
        if _SESSION_USERS[0] == 0:
            _SESSION_SAVED[0] = sessions.boto3
            sessions.boto3 = None
        _SESSION_USERS[0] += 1
    try:
        yield
    finally:
        with _SESSION_LOCK:
            _SESSION_USERS[0] -= 1
            if _SESSION_USERS[0] == 0:
                sessions.boto3 = _SESSION_SAVED[0]


def mask_source(objects: ObjectSet, grid: WorkGrid) -> GridMasks | PolygonMasks:
    """The mask cutter for one side: label windows if on ``grid``, else rasterised polygons."""
    if objects.grid is not None and grid.matches(objects.grid):
        return GridMasks(objects)
    return PolygonMasks(objects, grid)
