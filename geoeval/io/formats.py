"""The registry of input formats: which reader opens a file, and what it is.

Every file geoeval reads as a scene's side goes through :func:`format_of`: the
registered format claiming its name (by suffix) says whether it is a ``raster`` or a
``vector`` input (:func:`geoeval.io.detect_input_type`, decided once per input), which
function reads it (:func:`geoeval.io.read`), and whether a Dask cluster can read it by
pieces (the route by partitions, :mod:`geoeval.scoring.dispatch`). A file no format
claims is a raster for GDAL to open.

A new reader is its module (``read(path, **options) -> ObjectSet``) and one
:func:`register_format` entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The vector layers OGR reads (and GeoParquet), by suffix.
OGR_SUFFIXES = (".shp", ".gpkg", ".geojson", ".json", ".fgb", ".gml", ".kml", ".sqlite",
                ".tab", ".parquet", ".geoparquet", ".csv", ".gdb", ".mif", ".geojsonl",
                ".geojsons")


@dataclass(frozen=True)
class InputFormat:
    """One registered input format.

    Attributes
    ----------
    name : str
    kind : {'raster', 'vector'}
        What its files are (the reader options that apply, the overlap's kind).
    suffixes : tuple of str
        File name endings it claims (lower case, with the dot).
    read : callable or str, optional
        ``read(path, **options) -> ObjectSet`` (or ``"module:function"``, imported on
        first use), given the reader options of :func:`geoeval.io.read` that apply to
        its kind; ``None``: geoeval's own reader of that kind.
    pieces : bool
        A Dask cluster reads it by pieces (:mod:`geoeval.io.pieces`): two such layers
        can be scored by partitions.
    title : str
    """

    name: str
    kind: str
    suffixes: tuple[str, ...] = ()
    read: Callable[..., Any] | str | None = None
    pieces: bool = False
    title: str = ""

    def reader(self) -> Callable[..., Any] | None:
        """The read function (imported on first use when given by name)."""
        if self.read is None or not isinstance(self.read, str):
            return self.read
        import importlib

        module, _, attr = self.read.partition(":")
        return getattr(importlib.import_module(module), attr)


_FORMATS: dict[str, InputFormat] = {}


def register_format(fmt: InputFormat) -> InputFormat:
    """Add ``fmt`` (its name new; a suffix claimed by an earlier format is then
    claimed by this one)."""
    if fmt.name in _FORMATS:
        raise ValueError(f"an input format called {fmt.name!r} is already registered")
    if fmt.kind not in ("raster", "vector"):
        raise ValueError(f"input format {fmt.name!r}: kind must be 'raster' or 'vector'")
    _FORMATS[fmt.name] = fmt
    return fmt


@contextmanager
def registered_format(fmt: InputFormat) -> Iterator[InputFormat]:
    """``fmt`` registered for the ``with`` block only (tests, experiments)."""
    register_format(fmt)
    try:
        yield fmt
    finally:
        _FORMATS.pop(fmt.name, None)


def formats() -> tuple[InputFormat, ...]:
    """The registered formats, in registration order."""
    return tuple(_FORMATS.values())


def format_of(path: str | Path) -> InputFormat:
    """The format of a file or folder: the last registered one claiming its suffix; a
    folder (a GeoParquet dataset, a FileGDB) is an OGR layer; anything else a GDAL
    raster."""
    p = Path(path)
    return format_for(p.suffix, folder=p.is_dir())


def format_for(suffix: str, *, folder: bool, vector: bool = False) -> InputFormat:
    """The format of a name ending in ``suffix``: the last registered one claiming it;
    else a ``folder`` (a GeoParquet dataset, a FileGDB) or a ``vector`` input (a
    pattern of tiles) is an OGR layer, anything else a GDAL raster. The one rule of
    :func:`format_of`, for names that are no local path (URLs,
    :mod:`geoeval.io.inputs`)."""
    suffix = suffix.lower()
    for fmt in reversed(_FORMATS.values()):
        if suffix in fmt.suffixes:
            return fmt
    return _FORMATS["ogr"] if folder or vector else _FORMATS["gdal"]


register_format(InputFormat("gdal", "raster", read=None,
                            title="labelled raster (GeoTIFF and any GDAL raster)"))
register_format(InputFormat("ogr", "vector", OGR_SUFFIXES, read=None, pieces=True,
                            title="vector layer (OGR: Shapefile, GeoPackage, GeoJSON, …; "
                                  "GeoParquet)"))
