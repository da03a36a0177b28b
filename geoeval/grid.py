"""Label grids in memory: :class:`LabelGrid`, label lookup, areas, vectorising.

The lowest stage of the pipeline above :mod:`geoeval.errors`: plain arrays and
an affine transform, no files. Readers (:mod:`geoeval.io.raster`) build a
:class:`LabelGrid`; :mod:`geoeval.objects` derives polygons from one lazily.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from geoeval.arrays import lookup, unique
from geoeval.errors import first_line


class LabelGrid:
    """A labelled raster on a georeferenced grid: an array in memory or a windowed source.

    Parameters
    ----------
    labels : numpy.ndarray or None
        2-D integer array, or ``None`` when ``source`` reads the labels. Pixels
        equal to ``background`` belong to no object (nodata has already been
        mapped to ``background`` by the reader).
    transform : affine.Affine
        Pixel-to-CRS transform (rasterio convention, pixel corners).
    crs : rasterio.crs.CRS or None
        Coordinate reference system, ``None`` if the file has none.
    background : int
        The background label value.
    source : object, optional
        Reads labels of any window: ``source.read((row0, row1, col0, col1))``
        (e.g. :class:`geoeval.io.windowed.RasterSource`); with it the grid never
        holds the whole array unless :attr:`labels` is asked for.
    shape, dtype : optional
        Grid shape and label dtype (taken from ``labels`` when it is given).
    boxes : numpy.ndarray, optional
        ``(row0, row1, col0, col1)`` of each object, aligned with the ids of the
        ObjectSet holding this grid, when known. The file readers leave them out
        (``None``): only per-object masks need them, and
        :func:`geoeval.measures.rasterize.label_boxes` then scans the source once.
    whole : callable, optional
        Called to read the whole array when :attr:`labels` is asked for on a
        source grid (the reader's memory check lives there).

    Attributes
    ----------
    scanned : tuple or None
        ``(labels, boxes)`` of every label of the source, once a box scan has run.
    """

    __slots__ = ("_labels", "transform", "crs", "background", "source", "_shape", "_dtype",
                 "boxes", "_whole", "scanned")

    def __init__(self, labels: np.ndarray | None = None, transform: Any = None,
                 crs: Any = None, background: int = 0, *, source: Any = None,
                 shape: tuple[int, int] | None = None, dtype: Any = None,
                 boxes: np.ndarray | None = None, whole: Any = None) -> None:
        if labels is None and source is None:
            raise ValueError("a LabelGrid needs labels or a source")
        self._labels = labels
        self.transform = transform
        self.crs = crs
        self.background = background
        self.source = source
        self._shape = tuple(labels.shape) if labels is not None else tuple(shape)  # type: ignore[arg-type]
        self._dtype = labels.dtype if labels is not None else np.dtype(dtype)
        self.boxes = boxes
        self._whole = whole
        self.scanned: Any = None

    def __repr__(self) -> str:
        h, w = self.shape
        kind = "" if self._labels is not None else " (windowed)"
        return f"<LabelGrid {w} x {h} {self.dtype}{kind}, background {self.background}>"

    @property
    def in_memory(self) -> bool:
        """True when the whole label array is held in memory."""
        return self._labels is not None

    @property
    def labels(self) -> np.ndarray:
        """The whole label array (read once from the source when not in memory).

        Only for steps that truly need every pixel at once (resampling onto
        another grid); everything else reads windows with :meth:`read`.
        """
        if self._labels is None:
            h, w = self.shape
            self._labels = (self._whole() if self._whole is not None
                            else self.source.read((0, h, 0, w)))
        return self._labels

    def label_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """Every label of a windowed grid's source and its bounding box
        ``(row0, row1, col0, col1)`` (ends exclusive), sorted by label: one
        window-by-window scan of the source (``source.label_boxes()``), the first
        time only (then kept in :attr:`scanned`)."""
        if self.scanned is None:
            self.scanned = self.source.label_boxes()
        return self.scanned

    def read(self, window: tuple[int, int, int, int]) -> np.ndarray:
        """Labels of ``(row0, row1, col0, col1)`` (ends exclusive), background filled in."""
        r0, r1, c0, c1 = window
        if self._labels is not None:
            return self._labels[r0:r1, c0:c1]
        return self.source.read(window)

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape  # type: ignore[return-value]

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def pixel_area(self) -> float:
        """Area of one pixel in square CRS units (absolute determinant)."""
        t = self.transform
        return abs(t.a * t.e - t.b * t.d)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(minx, miny, maxx, maxy) of the whole grid in CRS units."""
        h, w = self.shape
        t = self.transform
        xs = [t.c, t.c + t.a * w, t.c + t.b * h, t.c + t.a * w + t.b * h]
        ys = [t.f, t.f + t.d * w, t.f + t.e * h, t.f + t.d * w + t.e * h]
        return (min(xs), min(ys), max(xs), max(ys))

    def same_grid(self, other: LabelGrid) -> bool:
        """True when both grids have the same shape, transform and CRS."""
        return (
            self.shape == other.shape
            and tuple(self.transform) == tuple(other.transform)
            and same_crs(self.crs, other.crs)
        )


#: Target pixels per window (whole blocks are grouped up to about this many): 8 M,
#: 32 MB of uint32 labels a source. Whole rows of 256-pixel blocks of rasters up to
#: 32,768 pixels wide fit, so such rasters are read in full-width strips: at 26,688²
#: the scan took 4 % less time than with 4 M windows, which cut every row in two.
WINDOW_PIXELS = 1 << 23


def windows(shape: tuple[int, int], block_shape: tuple[int, int],
            target: int | None = None) -> list[tuple[int, int, int, int]]:
    """Windows of whole blocks covering ``shape``, each about ``target`` pixels.

    Rows of blocks are taken whole when they hold at most ``target`` pixels
    (several rows are grouped), else cut into runs of whole blocks. ``target``
    defaults to :data:`WINDOW_PIXELS` (read when called).

    Examples
    --------
    >>> windows((5, 7), (2, 4), target=16)
    [(0, 2, 0, 7), (2, 4, 0, 7), (4, 5, 0, 7)]
    >>> windows((4, 8), (2, 2), target=4)[:3]
    [(0, 2, 0, 2), (0, 2, 2, 4), (0, 2, 4, 6)]
    """
    target = WINDOW_PIXELS if target is None else int(target)
    h, w = (int(v) for v in shape)
    bh, bw = max(1, min(int(block_shape[0]), h or 1)), max(1, min(int(block_shape[1]), w or 1))
    out: list[tuple[int, int, int, int]] = []
    if h == 0 or w == 0:
        return out
    row_px = bh * w
    if row_px <= target:
        step = bh * max(1, target // row_px)
        return [(r, min(r + step, h), 0, w) for r in range(0, h, step)]
    cstep = bw * max(1, target // (bh * bw))
    for r in range(0, h, bh):
        for c in range(0, w, cstep):
            out.append((r, min(r + bh, h), c, min(c + cstep, w)))
    return out


def label_index(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each label value in the sorted label array ``ids``.

    The comparison runs in the dtype of ``values`` (the raster's own integer
    type, which holds every id since the ids were taken from it), so labels are
    never promoted to float: ``uint64`` labels above 2**53 stay distinct.

    Examples
    --------
    >>> ids = np.array([2**53, 2**53 + 1], dtype=np.int64)
    >>> label_index(ids, np.array([2**53 + 1, 2**53], dtype=np.uint64)).tolist()
    [1, 0]
    """
    values = np.asarray(values)
    ids = np.asarray(ids)
    if values.dtype.kind in "iu":
        ids = ids.astype(values.dtype, copy=False)
        pos, found = lookup(ids, values)  # a table over the ids' range when it pays
        if found.all():
            return pos
    return np.searchsorted(ids, values)


def crs_name(crs: Any) -> str:
    """A short, one-line name of a CRS: ``EPSG:32651 (WGS 84 / UTM zone 51N)`` (also
    importable from :mod:`geoeval.io`, where messages name CRSs)."""
    try:
        from pyproj import CRS

        c = CRS.from_user_input(crs)
    except Exception:
        return first_line(Exception(str(crs)))[:80]
    code = c.to_authority()
    if code:
        return f"{code[0]}:{code[1]} ({c.name})"
    return f"'{c.name}' ({c.type_name.lower()})"


def same_crs(a: Any, b: Any) -> bool:
    """True when two CRS (any form pyproj accepts, or ``None``) are the same.

    ``None`` equals only ``None``. Two local (engineering) CRS with the same
    name, axes and units are the same grid, whatever driver wrote them.

    Examples
    --------
    >>> same_crs("EPSG:4326", "epsg:4326"), same_crs(None, None), same_crs(None, "EPSG:4326")
    (True, True, False)
    """
    if type(a) is type(b) and a == b:  # cheap path, no pyproj import
        return True
    from pyproj import CRS

    try:
        ca, cb = CRS.from_user_input(a), CRS.from_user_input(b)
    except Exception:
        return a == b
    if ca == cb:
        return True
    # One local / engineering grid written by two drivers (GDAL's GeoTIFF writer drops
    # the LOCAL_DATUM a GeoPackage keeps): same name, axes and units is the same grid.
    eng = "Engineering CRS"
    return (ca.type_name == cb.type_name == eng and ca.name == cb.name
            and [(x.direction, x.unit_name) for x in ca.axis_info]
            == [(x.direction, x.unit_name) for x in cb.axis_info])


def authority_code(crs: Any) -> str | None:
    """The authority code naming ``crs`` (``EPSG:32651``; PROJ's identification,
    :meth:`pyproj.CRS.to_authority`), ``None`` when none does (or no CRS).

    Identifying a CRS that carries no code (a local projection built from the data)
    searches PROJ's database, about 0.3 s: each definition is searched once a process.
    """
    if crs is None:
        return None
    from pyproj import CRS

    try:
        wkt = CRS.from_user_input(crs).to_wkt()
    except Exception:
        return None
    return _authority(wkt)


@functools.lru_cache(maxsize=64)
def _authority(wkt: str) -> str | None:
    from pyproj import CRS

    code = CRS.from_wkt(wkt).to_authority()
    return f"{code[0]}:{code[1]}" if code else None


def crs_code(crs: Any) -> str | None:
    """The short name a report records for a CRS: its authority code (``EPSG:4326``),
    else its own name (``site grid``), else its PROJ string; ``None`` for no CRS.
    Never its whole definition (a projection's PROJJSON is about 2 KB).

    Examples
    --------
    >>> crs_code("EPSG:3857"), crs_code('LOCAL_CS["site grid",UNIT["metre",1]]'), crs_code(None)
    ('EPSG:3857', 'site grid', None)
    """
    if crs is None:
        return None
    code = authority_code(crs)
    if code is not None:
        return code
    import warnings

    from pyproj import CRS

    try:
        c = CRS.from_user_input(crs)
    except Exception:
        return " ".join(str(crs).split())[:80]
    if c.name and c.name != "unknown":
        return str(c.name)
    with warnings.catch_warnings():  # "you will likely lose ...": a name, not a definition
        warnings.simplefilter("ignore")
        return c.to_proj4() or str(c.name)


# Above this many distinct values per pixel, np.unique is used instead of bincount.
_BINCOUNT_FACTOR = 4


def label_areas(labels: np.ndarray, background: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-background labels (sorted) and their pixel counts.

    Uses ``np.bincount`` when the labels are small non-negative integers (one
    pass, no sort) and ``np.unique`` otherwise (labels need not be ``1..n``).
    Labels stay exact for every integer dtype: the ids are ``int64`` unless a
    ``uint64`` label exceeds ``2**63 - 1``, then ``uint64`` (never float).
    """
    flat = labels.ravel()
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if flat.dtype.kind == "u" and flat.dtype.itemsize <= 2:  # no range scan needed
        lo, hi = 0, int(np.iinfo(flat.dtype).max)
    else:
        lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi <= max(_BINCOUNT_FACTOR * flat.size, 1 << 16):
        # in slices: bincount casts each slice to intp itself (no whole-raster int64
        # copy, which for a large uint32 grid cost more time than the counting)
        step = max(1 << 22, hi + 1)
        counts = np.bincount(flat[:step], minlength=hi + 1)
        for i in range(step, flat.size, step):
            counts += np.bincount(flat[i:i + step], minlength=hi + 1)
        if 0 <= background <= hi:
            counts[background] = 0
        ids = np.flatnonzero(counts)
        return ids.astype(np.int64), counts[ids]
    ids, counts = np.unique(flat, return_counts=True)
    keep = ids != background
    return id_array(ids[keep], hi), counts[keep]


def id_array(ids: np.ndarray, hi: int) -> np.ndarray:
    """Label ids as ``int64`` when every one fits, else (huge ``uint64`` labels) ``uint64``."""
    if hi > np.iinfo(np.int64).max:
        return ids.astype(np.uint64)
    return ids.astype(np.int64)


def vectorize_grid(grid: LabelGrid, ids: np.ndarray) -> np.ndarray:
    """Polygons of each label (along pixel edges), aligned with ``ids``.

    Pieces of one label become one MultiPolygon. Areas equal pixel counts times
    the pixel area exactly (up to floating point). A windowed grid is vectorised
    window by window, skipping the windows its source knows to be empty (the
    unwritten blocks of a sparse GeoTIFF), each window cut to the rows and columns
    holding an object; the pieces of an object cut by window edges are dissolved
    into one geometry (``shapely.buffer(·, 0)`` over all such objects at once,
    exact on pixel-edge coordinates).
    """
    import shapely

    ids = np.asarray(ids)
    out = np.empty(ids.size, dtype=object)
    if ids.size == 0:
        return out
    if grid.in_memory:
        h, w = grid.shape
        pieces_arr, owner_arr = _window_pieces(grid, ids, (0, h, 0, w))
        stitched = np.zeros(0, np.int64)
    else:
        import rasterio

        # each block is read once: a small GDAL block cache (as in io.windowed.scan);
        # a window whose blocks are all absent from the file (a sparse GeoTIFF) holds
        # no object and is not read
        wins = windows(grid.shape, grid.source.block_shape)
        written = getattr(grid.source, "written", None)
        if written is not None:
            wins = [w for w in map(written, wins) if w is not None]
        with rasterio.Env(GDAL_CACHEMAX=64):
            parts = [_window_pieces(grid, ids, win) for win in wins]
        parts = parts or [(np.zeros(0, dtype=object), np.zeros(0, np.int64))]
        pieces_arr = np.concatenate([p for p, _ in parts])
        owner_arr = np.concatenate([o for _, o in parts])
        win_of = np.concatenate([np.full(o.size, k) for k, (_, o) in enumerate(parts)])
        # owners with pieces in more than one window need their pieces dissolved
        order = np.lexsort((win_of, owner_arr))
        o, wk = owner_arr[order], win_of[order]
        same_owner = o[1:] == o[:-1]
        stitched = unique(o[1:][same_owner & (wk[1:] != wk[:-1])])
    order = np.argsort(owner_arr, kind="stable")
    pieces_arr, owner_arr = pieces_arr[order], owner_arr[order]
    counts = np.bincount(owner_arr, minlength=ids.size)
    single = counts[owner_arr] == 1
    out[owner_arr[single]] = pieces_arr[single]
    multi = ~single
    if multi.any():
        owners, inverse = np.unique(owner_arr[multi], return_inverse=True)
        out[owners] = shapely.multipolygons(pieces_arr[multi], indices=inverse)
    if stitched.size:
        out[stitched] = shapely.buffer(out[stitched], 0)
    return out


def _window_pieces(grid: LabelGrid, ids: np.ndarray,
                   window: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Polygons (4-connected pieces) of one window of ``grid`` and their object positions."""
    from affine import Affine
    from rasterio.features import shapes
    from shapely.geometry import shape

    labels = grid.read(window)
    mask = labels != grid.background
    # only the rows and columns that hold an object: rasterio.features.shapes walks
    # every pixel it is given (a window of a sparse raster is mostly background)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    r0, r1, c0, c1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    labels, mask = labels[r0:r1, c0:c1], mask[r0:r1, c0:c1]
    # rasterio.features.shapes needs a 32-bit type: vectorise object positions + 1.
    index = np.zeros(labels.shape, dtype=np.int32)
    index[mask] = label_index(ids, labels[mask]).astype(np.int32) + 1
    # traced in the grid's pixel coordinates (whole numbers, exact whatever the window
    # or the cut), then placed by the grid's transform as GDAL places pixel corners
    # (x = c + a·col + b·row): an edge shared by two objects, or by two windows' pieces
    # of one object, gets the same coordinates from both sides
    pixels = Affine.translation(window[2] + c0, window[0] + r0)
    pieces, owner = [], []
    for geom, value in shapes(index, mask=mask, transform=pixels, connectivity=4):
        pieces.append(shape(geom))
        owner.append(int(value) - 1)
    t = grid.transform

    def place(xy: np.ndarray) -> np.ndarray:
        col, row = xy[:, 0], xy[:, 1]
        return np.column_stack([(t.c + t.a * col) + t.b * row, (t.f + t.d * col) + t.e * row])

    import shapely

    placed = shapely.transform(np.asarray(pieces, dtype=object), place)
    return np.asarray(placed, dtype=object), np.asarray(owner, dtype=np.int64)
