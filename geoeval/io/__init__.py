"""Readers: labelled rasters and vector layers into :class:`~geoeval.objects.ObjectSet`.

:func:`read` opens one file; :func:`read_pair` opens a reference and a
submission and brings the submission into the reference's CRS (and grid, for
two rasters), so that overlaps
(Özdemir et al. 2010, §4) are measured in one space.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from geoeval.errors import (
    CRSMismatchError,
    FieldError,
    GeoevalError,
    InputError,
    first_line,
    printable,
)
from geoeval.grid import crs_name, same_crs
from geoeval.io.formats import OGR_SUFFIXES
from geoeval.io.missing_crs import MissingCRSError, overlap
from geoeval.io.missing_crs import extent_text as _fmt
from geoeval.objects import ObjectSet

# Extensions read as vector layers; everything else is tried as a raster first (the
# input formats' registry, geoeval.io.formats, decides).
VECTOR_SUFFIXES = set(OGR_SUFFIXES)


def detect_input_type(path: str | Path) -> str:
    """``raster`` or ``vector``, from the file name (and content when unclear): the
    kind of its :class:`~geoeval.io.inputs.Input` (:func:`geoeval.io.inputs.resolve`)."""
    from geoeval.io.inputs import resolve

    return resolve(path).kind


def input_path(source: Any) -> Any:
    """An input as the readers take it: a zip archive (``det.zip``, ``zip://…``,
    ``/vsizip/…``) as the member it holds or names, ``det.zip/det.shp``
    (:func:`geoeval.io.zipped.resolve`); anything else as it is."""
    from geoeval.io.layer_files import is_tile_pattern
    from geoeval.io.url_paths import is_remote
    from geoeval.io.zipped import resolve

    if isinstance(source, (str, Path)) and not is_tile_pattern(source) \
            and not is_remote(source):
        return resolve(source)
    return source


def input_kind(source: Any, input_type: str | None = None) -> str:
    """``raster`` or ``vector``: what an input is, decided once (data in memory by its
    type, :func:`in_memory_type`; a path by ``input_type`` when given, else by its
    name, :func:`detect_input_type`; a resolved :class:`~geoeval.io.inputs.Input` by
    its own kind)."""
    from geoeval.io.inputs import Input

    if isinstance(source, Input):
        return input_type or source.kind
    return in_memory_type(source) or input_type or detect_input_type(source)


def in_memory_type(source: Any) -> str | None:
    """``"vector"`` or ``"raster"`` for data already in memory that :func:`read`
    accepts, ``None`` for a path (or anything else).

    Accepted: a GeoDataFrame or GeoSeries (vector); a ``(labels, transform)`` or
    ``(labels, transform, crs)`` tuple with a 2-D integer numpy array, an open
    rasterio dataset, or an xarray ``DataArray`` with rioxarray's ``.rio``
    accessor (raster).
    """
    module = type(source).__module__
    if module.startswith("geopandas"):
        return "vector"
    if isinstance(source, tuple) and source and hasattr(source[0], "ndim"):
        return "raster"
    if module == "numpy":
        return "raster"  # a bare array: refused by read() with the reason
    if module.startswith("rasterio") and hasattr(source, "transform"):
        return "raster"
    if hasattr(source, "rio") and hasattr(source, "values"):
        return "raster"
    return None


def _read_in_memory(source: Any, *, band: int, background: int, id_field: str | None,
                    class_field: str | None, crs: Any, attributes: bool) -> ObjectSet:
    from geoeval.io.raster import objects_from_labels

    module = type(source).__module__
    if module.startswith("geopandas"):
        from geoeval.io.vector import objects_from_frame

        return objects_from_frame(source, id_field=id_field, class_field=class_field, crs=crs,
                                  path=f"<{type(source).__name__}>", attributes=attributes)
    if isinstance(source, tuple):
        if len(source) not in (2, 3):
            raise InputError("give a label array as (labels, transform) or "
                             "(labels, transform, crs)", "<array>")
        labels, transform, *rest = source
        return objects_from_labels(labels, transform, rest[0] if rest else crs,
                                   background=background, path="<array>")
    if module.startswith("rasterio"):
        from geoeval.io.raster import read_raster

        return read_raster(source.name, band=band, background=background)
    if hasattr(source, "rio"):
        values = source.values
        if values.ndim == 3:
            values = values[band - 1]
        return objects_from_labels(values, source.rio.transform(), source.rio.crs,
                                   background=background, path="<DataArray>")
    raise InputError("a bare label array has no georeference: pass (labels, transform) or "
                     "(labels, transform, crs)", "<array>")


def read(
    path: str | Path | Any,
    *,
    input_type: str | None = None,
    band: int = 1,
    background: int = 0,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    max_memory: int | None = None,
    attributes: bool = True,
    region: Any = None,
) -> ObjectSet:
    """Read a labelled raster or a vector layer.

    Parameters
    ----------
    path : str, Path, or data in memory
        A file (a zip archive holding one layer or raster, or a member of one:
        ``det.zip``, ``det.zip/buildings.shp``, ``/vsizip/det.zip/buildings.shp``,
        :mod:`geoeval.io.zipped`), or data already in memory (see :func:`in_memory_type`): a
        GeoDataFrame/GeoSeries, ``(labels, transform[, crs])``, an open rasterio
        dataset, an xarray ``DataArray`` with rioxarray's ``.rio``; an
        :class:`~geoeval.objects.ObjectSet` is returned as it is.
    input_type : {'raster', 'vector'}, optional
        Default: from the file name (:data:`VECTOR_SUFFIXES` are vector).
    band, background
        Raster options (see :func:`geoeval.io.raster.read_raster`).
    layer, id_field, class_field
        Vector options (see :func:`geoeval.io.vector.read_vector`).
    crs : optional
        CRS to assume for an input that has none (a Shapefile without
        ``.prj``, a raster without georeferencing).
    max_memory : int, optional
        Raster option: refuse a raster needing more bytes than this (default:
        the environment variable ``GEOEVAL_MAX_MEMORY``, else half of the
        available memory; see :func:`geoeval.io.raster.memory_limit`).
    attributes : bool
        Vector option: keep the layer's attribute columns
        (:attr:`~geoeval.objects.ObjectSet.attributes`, what the per-object outputs
        carry). Without it a file is read with its id and class fields only, and the
        columns of a GeoDataFrame are left out the same way. :func:`geoeval.score`
        decides it from the outputs asked for.
    region : geoeval.io.region.Region, optional
        Only the objects whose representative point is in this region, reading only
        what it needs (:mod:`geoeval.io.region`).

    Returns
    -------
    ObjectSet
    """
    if region is not None:
        return _read_region(path, region, input_type=input_type, band=band,
                            background=background, layer=layer, id_field=id_field,
                            class_field=class_field, crs=crs, max_memory=max_memory,
                            attributes=attributes)
    if isinstance(path, ObjectSet):
        return path
    if in_memory_type(path) is not None:
        return _read_in_memory(path, band=band, background=background, id_field=id_field,
                               class_field=class_field, crs=crs, attributes=attributes)
    from geoeval.io.inputs import resolve

    # a path or URL resolved once (its format and shape), unless already resolved
    path = resolve(path, input_type=input_type)
    return _printable(_read_file(path, input_type=input_type, band=band,
                                 background=background, layer=layer, id_field=id_field,
                                 class_field=class_field, crs=crs, max_memory=max_memory,
                                 attributes=attributes))


def _read_region(path: Any, region: Any, **options: Any) -> ObjectSet:
    """:func:`read` restricted to ``region`` (:mod:`geoeval.io.region`): a vector
    file, dataset folder or pattern of tiles by the pieces the region needs, a label
    raster by its window; anything else read whole, then restricted by the rule."""
    from geoeval.io.region import objects_inside
    from geoeval.io.region_pieces import read_vector_region
    from geoeval.io.region_raster import read_raster_region

    if not isinstance(path, ObjectSet) and in_memory_type(path) is None:
        from geoeval.io.inputs import resolve

        path = resolve(path, input_type=options.get("input_type"))
        kind = options.get("input_type") or path.kind
        own = path.format.reader()
        if own is None and kind == "raster":
            return _printable(read_raster_region(
                path, region, band=options["band"], background=options["background"],
                crs=options["crs"]))
        if own is None and kind == "vector":
            return _printable(read_vector_region(
                path, region, layer=options["layer"], id_field=options["id_field"],
                class_field=options["class_field"], crs=options["crs"],
                attributes=options["attributes"]))
    return objects_inside(read(path, **options), region)


def _printable(objects: ObjectSet) -> ObjectSet:
    """The objects with their file's name and the reader's warnings as valid UTF-8
    (:func:`geoeval.errors.printable`): both go into reports and onto the terminal."""
    from geoeval.io.locations import redact

    path = None if objects.path is None else redact(printable(objects.path))
    # GDAL's words name the file it opened: a signed URL's query taken out
    notes = tuple(redact(printable(w)) for w in objects.warnings)
    if path == objects.path and notes == tuple(objects.warnings):
        return objects
    return replace(objects, path=path, warnings=notes)


def _read_file(inp: Any, *, input_type: str | None, band: int, background: int,
               layer: str | int | None, id_field: str | None, class_field: str | None,
               crs: Any, max_memory: int | None, attributes: bool = True) -> ObjectSet:
    """:func:`read` of a file (or a pattern of tiles, a dataset folder), resolved
    (:class:`~geoeval.io.inputs.Input`): its facts read, not derived again."""
    from geoeval.io.inputs import DATASET, PATTERN

    input_type = input_type or inp.kind
    own = inp.format.reader()
    path = inp.source
    if own is not None:  # a registered format's own reader (geoeval.io.formats)
        options = (dict(band=band, background=background, crs=crs) if input_type == "raster"
                   else dict(layer=layer, id_field=id_field, class_field=class_field, crs=crs))
        return own(path, **options)
    if input_type == "raster":
        from geoeval.io.raster import read_raster

        return read_raster(path, band=band, background=background, max_memory=max_memory,
                           assumed_crs=crs)
    if input_type == "vector":
        from geoeval.io.pieces import read_dataset
        from geoeval.io.vector import read_vector

        if inp.shape in (PATTERN, DATASET):  # several files: one layer
            objects = read_dataset(inp, id_field=id_field, class_field=class_field, crs=crs,
                                   layer=layer if inp.shape == PATTERN else None)
            return objects if attributes else replace(objects, attributes=None)

        return read_vector(path, layer=layer, id_field=id_field, class_field=class_field, crs=crs,
                           attributes=attributes)
    raise InputError(f"unknown input_type {input_type!r} (expected 'raster' or 'vector')",
                     path)


def read_side(path: str | Path | Any, side: str, **options: Any) -> ObjectSet:
    """:func:`read` of one side of a pair (``side``: ``"reference"`` or
    ``"submission"``), whose field errors name that side
    (:meth:`geoeval.errors.FieldError.on`)."""
    try:
        return read(path, **options)
    except FieldError as exc:
        raise exc.on(side) from None


_RASTER_OPTIONS = {"input_type", "band", "background", "max_memory"}


def _both_raster_files(reference: Any, submission: Any, ref_opts: dict[str, Any],
                       sub_opts: dict[str, Any]) -> bool:
    """True when both inputs are raster files read with raster options only (one pass)."""
    from geoeval.io.inputs import Input, resolve

    for path, opts in ((reference, ref_opts), (submission, sub_opts)):
        if isinstance(path, ObjectSet) or in_memory_type(path) is not None:
            return False
        if not set(k for k, v in opts.items() if v is not None) <= _RASTER_OPTIONS:
            return False
        try:
            inp = path if isinstance(path, Input) else resolve(path)
        except InputError:  # let read() report it, in its order
            return False
        if inp.format.reader() is not None:  # a registered format's own reader
            return False
        if (opts.get("input_type") or inp.kind) != "raster":
            return False
    return True


def read_pair(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    *,
    reference_options: dict[str, Any] | None = None,
    submission_options: dict[str, Any] | None = None,
) -> tuple[ObjectSet, ObjectSet, list[str]]:
    """Read a reference and a submission into the reference's CRS (and grid).

    :func:`read_pair_counted` without the label-pair counts; same parameters,
    same errors.

    Returns
    -------
    reference, submission : ObjectSet
    warnings : list of str
        E.g. that a raster submission was resampled onto the reference grid.
    """
    ref, sub, warnings, _ = read_pair_counted(reference, submission,
                                              reference_options=reference_options,
                                              submission_options=submission_options)
    return ref, sub, warnings


def read_pair_counted(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    *,
    reference_options: dict[str, Any] | None = None,
    submission_options: dict[str, Any] | None = None,
) -> tuple[ObjectSet, ObjectSet, list[str], Any]:
    """Read a reference and a submission into the reference's CRS (and grid), with
    the label-pair counts of two rasters on one grid when the reading pass counted them.

    Parameters
    ----------
    reference, submission : path or ObjectSet
    reference_options, submission_options : dict, optional
        Keyword arguments of :func:`read` for each side.

    Returns
    -------
    reference, submission : ObjectSet
    warnings : list of str
        E.g. that a raster submission was resampled onto the reference grid.
    counts : geoeval.io.raster.PairCounts or None
        Label-pair counts of two rasters on one grid, counted in the reading
        pass, for :func:`geoeval.overlap.compute_overlap` (``None`` otherwise).

    Raises
    ------
    CRSMismatchError
        Only one input has a CRS, the two CRSs cannot be transformed into each
        other (the message names both), or the two extents do not overlap (for
        two rasters: checked in the reference CRS before resampling, and a
        shared edge alone is not an overlap).
    """
    ref_opts, sub_opts = reference_options or {}, submission_options or {}
    reference, submission = input_path(reference), input_path(submission)
    if _both_raster_files(reference, submission, ref_opts, sub_opts):
        from geoeval.io.raster import read_raster_pair

        keep = ("band", "background", "max_memory")
        ro = {k: v for k, v in ref_opts.items() if k in keep and v is not None}
        so = {k: v for k, v in sub_opts.items() if k in keep and v is not None}
        ref, sub, counts = read_raster_pair(reference, submission,  # type: ignore[arg-type]
                                            reference_options=ro, submission_options=so)
        ref, sub = _printable(ref), _printable(sub)
    else:
        try:
            ref = read_side(reference, "reference", **ref_opts)
        except MissingCRSError as exc:  # a CRS to suggest needs the submission's
            raise _beside(exc, "reference", submission, sub_opts) from None
        try:
            sub = read_side(submission, "submission", **sub_opts)
        except MissingCRSError as exc:
            raise _beside(exc, "submission", ref, {}) from None
        counts = None
    warnings: list[str] = [*ref.warnings, *sub.warnings]  # the readers' (skipped features…)
    if (ref.crs is None) != (sub.crs is None):
        has, lacks = (ref, sub) if sub.crs is None else (sub, ref)
        side = "reference" if lacks is ref else "submission"
        raise MissingCRSError(f"has no CRS but {has.path} has one", lacks.path,
                              bounds=extent(lacks)).beside(
            side, has.crs, extent(has), f"the {_OTHER[side]} {has.path}")
    two_grids = ref.grid is not None and sub.grid is not None
    if ref.crs is not None and not same_crs(ref.crs, sub.crs):
        _check_transformable(sub, ref)
        if two_grids:
            _check_grid_extents(ref, sub)  # before resampling: it would hide a miss
            sub = _resample(sub, ref, warnings, "CRS")
        else:
            from geoeval.io.vector import reproject

            try:
                sub = reproject(sub, ref.crs)
            except Exception as exc:  # pyproj.ProjError, GDAL errors: not transformable
                raise CRSMismatchError(
                    f"cannot be reprojected from {crs_name(sub.crs)} to the reference's "
                    f"{crs_name(ref.crs)} ({first_line(exc)})",
                    sub.path,
                ) from None
    elif two_grids and not ref.grid.same_grid(sub.grid):  # type: ignore[union-attr]
        _check_grid_extents(ref, sub)
        sub = _resample(sub, ref, warnings, "grid")
    if sub.grid is None and ref.crs is not None:
        sub = sub.in_crs(ref.crs)
    if not two_grids:  # two rasters were checked before resampling
        _check_extents(ref, sub)
    return ref, sub, warnings, counts


_OTHER = {"reference": "submission", "submission": "reference"}


def _beside(error: MissingCRSError, side: str, other: Any,
            other_options: dict[str, Any]) -> MissingCRSError:
    """``error`` (an input of the pair ``side`` without a CRS) with the CRS its
    coordinates fit beside the other input (:func:`geoeval.io.missing_crs.suggested_crs`),
    read here when it is not yet; unchanged when the input's extent is unknown (the
    tiles of a layer)."""
    if error.bounds is None:
        return error
    try:
        objects = read_side(other, _OTHER[side], **other_options)
    except GeoevalError:  # the other input fails too: its own error comes after this one
        return error.beside(side, None, None, "")
    return error.beside(side, objects.crs, extent(objects),
                        f"the {_OTHER[side]} {objects.path}")


def _check_transformable(sub: ObjectSet, ref: ObjectSet) -> None:
    """Refuse a CRS pair that PROJ cannot transform (e.g. an engineering CRS against UTM).

    Raises
    ------
    CRSMismatchError
        Naming both CRSs and both files.
    """
    from pyproj import CRS, Transformer

    try:
        t = Transformer.from_crs(CRS.from_user_input(sub.crs), CRS.from_user_input(ref.crs),
                                 always_xy=True)
        reason = None
        b = extent(sub)
        if b is not None:
            out = t.transform_bounds(*b, densify_pts=21)
            if not all(math.isfinite(v) for v in out):
                reason = "the transformed extent is not finite"
    except Exception as exc:  # pyproj.exceptions.ProjError / CRSError
        reason = first_line(exc)
    if reason is not None:
        raise CRSMismatchError(
            f"its CRS {crs_name(sub.crs)} cannot be transformed to the CRS "
            f"{crs_name(ref.crs)} of the reference {ref.path} ({reason})",
            sub.path,
        )


def _resample(sub: ObjectSet, ref: ObjectSet, warnings: list[str], what: str) -> ObjectSet:
    from geoeval.io.raster import resample_to_grid

    assert ref.grid is not None
    warnings.append(
        f"{sub.path}: raster on another {what} than the reference; resampled (nearest) "
        "onto the reference grid"
    )
    return resample_to_grid(sub, ref.grid)


def extent(objects: ObjectSet) -> tuple[float, float, float, float] | None:
    """``(minx, miny, maxx, maxy)`` of the objects (their grid's for a raster);
    ``None`` when there is no object (empty geometries count as none)."""
    import numpy as np

    if objects.grid is not None:
        return objects.grid.bounds
    if len(objects) == 0:
        return None
    import shapely

    b = shapely.bounds(objects.polygons)
    b = b[np.isfinite(b).all(axis=1)]
    if b.size == 0:
        return None
    return (float(np.min(b[:, 0])), float(np.min(b[:, 1])),
            float(np.max(b[:, 2])), float(np.max(b[:, 3])))


def _check_extents(ref: ObjectSet, sub: ObjectSet) -> None:
    rb, sb = extent(ref), extent(sub)
    if rb is None or sb is None:
        return
    if not overlap(rb, sb):
        raise CRSMismatchError(
            f"extent {_fmt(sb)} does not overlap the reference extent {_fmt(rb)} "
            f"({ref.path}); wrong CRS or wrong file?",
            sub.path,
        )


def _check_grid_extents(ref: ObjectSet, sub: ObjectSet) -> None:
    """Two rasters must share some area: refuse disjoint (or only touching) extents.

    Run before the submission is resampled onto the reference grid (after it,
    both extents would be the reference's and a wrong file would silently score
    "all missed"). The submission's extent is taken into the reference CRS
    (densified edges) when the CRSs differ.

    Raises
    ------
    CRSMismatchError
        The extents share no area; the message names both files and extents.
    """
    assert ref.grid is not None and sub.grid is not None
    rb, sb = ref.grid.bounds, sub.grid.bounds
    if ref.crs is not None and sub.crs is not None and not same_crs(ref.crs, sub.crs):
        from pyproj import CRS, Transformer

        t = Transformer.from_crs(CRS.from_user_input(sub.crs), CRS.from_user_input(ref.crs),
                                 always_xy=True)
        sb = t.transform_bounds(*sb, densify_pts=21)
    if rb[0] >= sb[2] or sb[0] >= rb[2] or rb[1] >= sb[3] or sb[1] >= rb[3]:
        raise CRSMismatchError(
            f"raster extent {_fmt(sb)} does not overlap the extent {_fmt(rb)} of the "
            f"reference raster {ref.path}; wrong CRS or wrong file?",
            sub.path,
        )
