"""Labelled rasters: one integer label per object (any GDAL raster).

An object is every pixel holding one non-background label; it
may be several disconnected pieces. Nodata counts as background.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from geoeval.errors import CapacityError, InputError, first_line
from geoeval.grid import LabelGrid, label_areas, label_index
from geoeval.objects import ObjectSet

# --- memory limit --------------------------------------------------------------

#: Environment variable overriding the memory limit of :func:`read_raster` (bytes,
#: optionally with a K, M, G or T suffix, powers of 1024).
MEMORY_ENV = "GEOEVAL_MAX_MEMORY"

# Bytes per pixel the pipeline holds beyond the labels and one working copy of
# them: masks (1 byte each), object indices (4-8 bytes) and sort keys.
_WORK_BYTES_PER_PIXEL = 16


def memory_needed(width: int, height: int, itemsize: int) -> int:
    """Bytes a labelled raster of this size needs in memory while it is scored.

    The labels themselves, one working copy of them (nodata mapping,
    resampling), and about 16 bytes per pixel of masks, object indices and
    sort keys (label counting, the co-occurrence histogram, vectorising).
    """
    return int(width) * int(height) * (2 * int(itemsize) + _WORK_BYTES_PER_PIXEL)


def _available_memory() -> int | None:
    """Memory available to this process now (bytes), or ``None`` when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _parse_size(text: str) -> int:
    """``"512M"`` → bytes (K, M, G, T are powers of 1024; a bare number is bytes)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if t and t[-1] in _UNITS:
        scale, t = 1024 ** (_UNITS.index(t[-1]) + 1), t[:-1]
    value = float(t)  # ValueError for junk
    if not np.isfinite(value) or value <= 0:
        raise ValueError(text)
    return int(value * scale)


_UNITS = "KMGT"


def memory_limit(max_memory: int | None = None) -> tuple[int | None, str]:
    """The memory limit of one raster read (bytes or ``None``) and where it comes from.

    ``max_memory`` if given, else the environment variable ``GEOEVAL_MAX_MEMORY``,
    else half of the memory available when the file is read (``MemAvailable`` of
    ``/proc/meminfo``, or ``os.sysconf`` elsewhere); ``None`` when none is known.
    """
    if max_memory is not None:
        if max_memory <= 0:
            raise InputError(f"must be a positive number of bytes, got {max_memory}",
                             "max_memory")
        return int(max_memory), "the max_memory argument"
    env = os.environ.get(MEMORY_ENV)
    if env is not None and env.strip():
        try:
            return _parse_size(env), f"{MEMORY_ENV}={env.strip()}"
        except ValueError:
            raise InputError(
                f"{env!r} is not a memory size (use bytes or a K, M, G, T suffix, e.g. 8G)",
                MEMORY_ENV,
            ) from None
    avail = _available_memory()
    if avail is None:
        return None, "no limit"
    return avail // 2, f"half of the available memory; set {MEMORY_ENV} to change it"


def fmt_bytes(n: float) -> str:
    """``1536`` → ``'1.5 KiB'`` (binary units, 3 significant digits)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} B" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def check_memory(
    width: int, height: int, itemsize: int, path: str | Path, max_memory: int | None = None,
    action: str | None = None,
) -> None:
    """Refuse a whole grid too large to hold in memory, before reading a pixel of it.

    Only steps that need a whole grid at once check (resampling a raster onto
    another grid, ``LabelGrid.labels``); reading and scoring go window by window.
    ``action`` names the step in the message.

    Raises
    ------
    CapacityError
        :func:`memory_needed` exceeds :func:`memory_limit`; the message states
        both and what helps.
    """
    limit, source = memory_limit(max_memory)
    need = memory_needed(width, height, itemsize)
    if limit is None or need <= limit:
        return
    what = f"{action} ({width} x {height} pixels)" if action else f"{width} x {height} pixels"
    raise CapacityError(
        f"{what} needs about {fmt_bytes(need)} of memory, "
        f"more than the limit of {fmt_bytes(limit)} ({source}); crop or tile the raster "
        "(e.g. gdal_translate -srcwin) and score the tiles, or raise the limit",
        path,
    )


# --- reading ---------------------------------------------------------------------

def _gdal_reason(exc: BaseException) -> str:
    from geoeval.io.raster_files import gdal_reason

    return gdal_reason(exc)


def _band_dtype(name: str, band: int, path: str | Path) -> np.dtype:
    """The numpy dtype of a band, refusing anything but integers."""
    if name.startswith("complex"):
        raise InputError(
            f"band {band} has the complex data type {name}; a labelled raster needs "
            "integer labels (one real integer per pixel)",
            path,
        )
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise InputError(f"band {band} has the unsupported data type {name}", path) from None
    if dtype.kind not in "iu":
        raise InputError(
            f"band {band} has data type {dtype.name}; a labelled raster needs integer labels "
            "(a float band is refused even when its values are whole numbers, since it may "
            "have rounded large labels together; convert it, e.g. gdal_translate -ot Int32)",
            path,
        )
    return dtype


def check_background(background: int, dtype: np.dtype, path: str | Path) -> None:
    """Refuse a background label the raster's integer type cannot hold.

    Raises
    ------
    InputError
        ``background`` is outside ``[min, max]`` of ``dtype``; names ``--background``.
    """
    info = np.iinfo(dtype)
    if isinstance(background, (bool, np.bool_)) or not isinstance(
            background, (int, np.integer)):
        raise InputError(f"--background must be an integer label, got {background!r}", path)
    if not info.min <= int(background) <= info.max:
        raise InputError(
            f"--background {int(background)} is outside the range of the raster's data type "
            f"{dtype.name} ({info.min}..{info.max})",
            path,
        )


def read_raster(
    path: str | Path, *, band: int = 1, background: int = 0, max_memory: int | None = None,
    assumed_crs: Any = None,
) -> ObjectSet:
    """Read a labelled raster as an :class:`~geoeval.objects.ObjectSet`.

    Parameters
    ----------
    path : str or Path
        Any raster GDAL can open (GeoTIFF, PNG, VRT, …).
    band : int
        1-based band index holding the labels.
    background : int
        Label value of the background; must fit the band's integer type. The
        band's nodata value, if any, is mapped to it.
    max_memory : int, optional
        Limit of the steps that need the whole grid at once (resampling onto
        another grid reads :attr:`LabelGrid.labels`; see :func:`memory_limit`:
        default ``GEOEVAL_MAX_MEMORY`` or half of the available memory).
        Reading itself is windowed and never refused.
    assumed_crs : CRS-like, optional
        CRS of a raster that has none (``--crs``, or ``--ref-crs``/``--sub-crs``
        for one side); a raster's own CRS always wins.

    Returns
    -------
    ObjectSet
        ``ids`` are the distinct non-background labels (sorted ascending, exact
        for every integer type), ``areas`` their pixel counts times the pixel
        area, ``grid`` the labels.

    Raises
    ------
    InputError
        The file cannot be opened or read, the band does not exist, its data
        type is not an integer type (float and complex bands are refused), or
        ``background`` does not fit it.

    Notes
    -----
    The band is read window by window (:mod:`geoeval.io.windowed`): memory is
    about one window per thread plus the objects. The grid keeps the source, not
    the pixels; objects' bounding boxes are found when a step needs them
    (:func:`geoeval.measures.rasterize.label_boxes`).
    """
    from geoeval.io.windowed import scan
    from geoeval.io.zipped import resolve

    memory_limit(max_memory)  # a bad limit is an error even when no whole grid is read
    path = resolve(path)  # a zip archive: the raster it holds
    source, transform, crs = open_source(path, band=band, background=background)
    if crs is None and assumed_crs is not None:
        crs = _assumed(assumed_crs, path)
    found = _scanned(lambda: scan([source], boxes=False), [source])
    return objects_from_scan(source, found.ids[0], found.counts[0], transform, crs,
                             max_memory)


class PairCounts(NamedTuple):
    """Label-pair counts of two rasters on one grid, counted while reading them.

    ``scan`` (a :class:`geoeval.io.windowed.Scan`) holds the counts; ``grid`` and
    ``other_source`` say which grids they belong to, so that
    :func:`geoeval.overlap.compute_overlap` uses them only for those.
    """

    grid: Any
    other_source: Any
    scan: Any

    def belong_to(self, reference_grid: Any, submission_grid: Any) -> bool:
        """The counts are those of these two grids."""
        return reference_grid is self.grid and submission_grid.source == self.other_source


def read_raster_pair(
    reference: str | Path, submission: str | Path, *, reference_options: dict[str, Any],
    submission_options: dict[str, Any],
) -> tuple[ObjectSet, ObjectSet, PairCounts | None]:
    """Read two labelled rasters; on one grid, both are scanned in one pass.

    The pass also counts the label pairs of the overlap (Özdemir et al. 2010,
    §4), returned as :class:`PairCounts` for :func:`geoeval.overlap.compute_overlap`,
    so each file is read once. On different grids each is read on its own
    (:func:`read_raster`) and the counts are ``None``. Options are those of
    :func:`read_raster`.
    """
    from geoeval.grid import same_crs
    from geoeval.io.windowed import scan

    memory_limit(reference_options.get("max_memory"))  # a bad limit is an error anyway
    ro = {k: v for k, v in reference_options.items() if k != "max_memory"}
    so = {k: v for k, v in submission_options.items() if k != "max_memory"}
    rs, rt, rc = open_source(reference, **ro)
    ss, st, sc = open_source(submission, **so)
    if rs.shape != ss.shape or tuple(rt) != tuple(st) or not same_crs(rc, sc):
        return (read_raster(reference, **reference_options),
                read_raster(submission, **submission_options), None)
    try:
        found = _scanned(lambda: scan([rs, ss], boxes=False), [rs, ss])
    except InputError:  # read each on its own: the error names the file that fails
        read_raster(reference, **reference_options)
        read_raster(submission, **submission_options)
        raise
    ref = objects_from_scan(rs, found.ids[0], found.counts[0], rt, rc,
                            reference_options.get("max_memory"))
    sub = objects_from_scan(ss, found.ids[1], found.counts[1], st, sc,
                            submission_options.get("max_memory"))
    return ref, sub, PairCounts(ref.grid, ss, found)


def _assumed(crs: Any, path: str | Path) -> Any:
    """The CRS given (``--crs``, ``--ref-crs``, ``--sub-crs``) for a raster that has none."""
    from rasterio.crs import CRS

    try:
        return CRS.from_user_input(crs)
    except Exception as exc:
        raise InputError(f"--crs {crs!r} is not a CRS ({' '.join(str(exc).split())})",
                         path) from None


def _scanned(run: Any, sources: list[Any]) -> Any:
    """``run()`` (a scan), GDAL read errors as an :class:`InputError` naming the file."""
    from rasterio._err import CPLE_BaseError  # GDAL's errors (not RasterioErrors)
    from rasterio.errors import RasterioError

    try:
        return run()
    except (RasterioError, CPLE_BaseError) as exc:
        from geoeval.io.url_paths import remote_failure

        reason = _gdal_reason(exc)
        bad = sources[0]
        mapped = remote_failure(exc, bad.path)
        if mapped is not None:
            raise mapped from None
        raise InputError(
            f"cannot read band {bad.band} ({reason}); is the file truncated "
            "or a source of it missing?",
            bad.shown,
        ) from None


def open_source(path: str | Path, *, band: int = 1, background: int = 0) -> tuple[Any, Any, Any]:
    """Check a labelled band without reading a pixel: its source, transform and CRS.

    Raises
    ------
    InputError
        As :func:`read_raster`, for everything known before reading pixels.
    """
    from rasterio._err import CPLE_BaseError  # GDAL's errors (not RasterioErrors)
    from rasterio.errors import RasterioError

    from geoeval.io.raster_files import open_quietly

    try:  # NotGeoreferencedWarning ("has no CRS" is ours to say) and GDAL's complaints
        # (a truncated file's tags) kept off the terminal
        src = open_quietly(path)
    except (RasterioError, CPLE_BaseError) as exc:
        from geoeval.io.url_paths import remote_failure

        # a URL: missing, denied, unreachable… in the stores' words (one table)
        raise remote_failure(exc, path) or InputError(
            f"cannot open as a raster ({first_line(exc)})", path) from None
    with src:
        if not 1 <= band <= src.count:
            raise InputError(f"band {band} does not exist (the raster has {src.count})", path)
        dtype = _band_dtype(src.dtypes[band - 1], band, path)
        check_background(background, dtype, path)
        source = raster_source(src, band, background, dtype, path)
        return source, src.transform, (src.crs if src.crs else None)


def raster_source(src: Any, band: int, background: int, dtype: np.dtype,
                  path: str | Path) -> Any:
    """The :class:`~geoeval.io.windowed.RasterSource` of an open band (nodata rule included).

    GDAL reports nodata as a double, exact for every integer up to 2**53. For
    64-bit bands GDAL's own nodata mask, which compares the exact 64-bit value,
    decides: rasterio cannot report every 64-bit nodata (a ``UInt64`` nodata of
    2**64 - 1 reads as none, one of 2**60 as 1.0 with rasterio 1.4).
    """
    from rasterio.enums import MaskFlags

    from geoeval.io.raster_files import file_version
    from geoeval.io.windowed import RasterSource

    nodata = src.nodatavals[band - 1]
    value: int | None = None
    gdal_mask = False
    if dtype.itemsize == 8:
        gdal_mask = MaskFlags.nodata in src.mask_flag_enums[band - 1]
    elif nodata is not None and np.isfinite(nodata) and nodata == np.floor(nodata):
        info = np.iinfo(dtype)
        if info.min <= nodata <= info.max:
            value = int(nodata)
    # unwritten blocks of a sparse GeoTIFF read as the nodata value, else 0
    sparse_bg = src.driver == "GTiff" and (
        value is not None or gdal_mask or (nodata is None and background == 0))
    return RasterSource(
        sparse_background=bool(sparse_bg), version=file_version(path),
        path=os.fspath(path), band=int(band), background=int(background), dtype=dtype.name,
        nodata=value, gdal_mask=gdal_mask, shape=(int(src.height), int(src.width)),
        block_shape=tuple(int(v) for v in src.block_shapes[band - 1]),  # type: ignore[arg-type]
    )


def _read_whole(source: Any, max_memory: int | None) -> np.ndarray:
    """The whole band of ``source``, after the memory check (only resampling needs it)."""
    h, w = source.shape
    check_memory(w, h, np.dtype(source.dtype).itemsize, source.shown, max_memory)
    return source.read((0, h, 0, w))


def objects_from_scan(source: Any, ids: np.ndarray, counts: np.ndarray, transform: Any,
                      crs: Any, max_memory: int | None = None) -> ObjectSet:
    """An :class:`ObjectSet` on a windowed :class:`LabelGrid` from a scan of its source."""
    from geoeval.grid import id_array

    ids = np.asarray(ids)
    hi = int(ids.max()) if ids.size else 0
    h, w = source.shape
    dtype = np.dtype(source.dtype)

    grid = LabelGrid(None, transform, crs, source.background, source=source, shape=(h, w),
                     dtype=dtype, whole=partial(_read_whole, source, max_memory))
    return ObjectSet(
        ids=id_array(ids, hi),
        areas=np.asarray(counts).astype(float) * grid.pixel_area,
        crs=crs,
        grid=grid,
        path=source.shown,
        input_type="raster",
    )


def objects_from_labels(
    labels: np.ndarray,
    transform: Any = None,
    crs: Any = None,
    *,
    background: int = 0,
    path: str = "<memory>",
) -> ObjectSet:
    """An :class:`ObjectSet` from a label array already in memory.

    ``transform`` defaults to the identity (pixel units, y down as in rasterio).
    """
    from affine import Affine

    labels = np.asarray(labels)
    if labels.ndim != 2 or labels.dtype.kind not in "iu":
        raise InputError("labels must be a 2-D integer array", path)
    check_background(background, labels.dtype, path)
    transform = Affine.identity() if transform is None else transform
    grid = LabelGrid(labels=labels, transform=transform, crs=crs, background=int(background))
    ids, counts = label_areas(labels, background)
    return ObjectSet(
        ids=ids,
        areas=counts.astype(float) * grid.pixel_area,
        crs=crs,
        grid=grid,
        path=path,
        input_type="raster" if path != "<memory>" else "memory",
    )


def resample_to_grid(objects: ObjectSet, target: LabelGrid) -> ObjectSet:
    """Resample a labelled raster onto another grid (nearest neighbour).

    The labels are first replaced by their object index (``0`` = background,
    ``k + 1`` = ``ids[k]``, a ``uint32``), that index is warped, and the labels
    are put back: exact for every integer dtype (``int8`` and 64-bit labels
    included), whatever GDAL's warper supports.

    Raises
    ------
    CRSMismatchError
        GDAL cannot transform between the two CRSs.
    """
    from rasterio._err import CPLE_BaseError  # GDAL's errors (not RasterioErrors)
    from rasterio.errors import CRSError, RasterioError
    from rasterio.warp import Resampling, reproject

    from geoeval.errors import CRSMismatchError

    src = objects.grid
    assert src is not None
    th, tw = target.shape
    # the whole submission grid (src.labels checks its own size) and a whole target grid
    check_memory(tw, th, np.dtype(src.dtype).itemsize, objects.path,
                 action="resampling it onto the reference grid")
    bg = src.background
    fg = src.labels != bg
    index = np.zeros(src.labels.shape, dtype=np.uint32)
    index[fg] = label_index(objects.ids, src.labels[fg]) + 1
    del fg
    dest = np.zeros(target.shape, dtype=np.uint32)
    src_crs = src.crs
    dst_crs = target.crs if target.crs is not None else src.crs
    if src_crs is None and dst_crs is None:  # shared coordinates: any one CRS on both sides
        src_crs = dst_crs = "EPSG:3857"
    try:
        reproject(
            source=index,
            destination=dest,
            src_transform=src.transform,
            src_crs=src_crs,
            dst_transform=target.transform,
            dst_crs=dst_crs,
            src_nodata=0,
            dst_nodata=0,
            resampling=Resampling.nearest,
        )
    except (RasterioError, CRSError, CPLE_BaseError) as exc:
        raise CRSMismatchError(
            f"cannot be resampled onto the reference grid ({_gdal_reason(exc)})", objects.path
        ) from None
    del index
    ids = np.asarray(objects.ids).astype(src.dtype)
    labels = np.full(target.shape, bg, dtype=src.dtype)
    hit = dest > 0
    labels[hit] = ids[dest[hit].astype(np.intp) - 1]
    out = objects_from_labels(labels, target.transform, target.crs, background=bg,
                              path=objects.path)
    return ObjectSet(
        ids=out.ids,
        areas=out.areas,
        crs=target.crs,
        grid=out.grid,
        path=objects.path,
        input_type=objects.input_type,
        read_crs=objects.input_crs,
    )
