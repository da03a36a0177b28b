"""An input resolved once, at the edge, into one value that every later stage reads.

A user names an input as a path or a URL (:mod:`geoeval.io.locations`). What it is —
its format (:func:`geoeval.io.formats.format_of`), its shape (one file, a folder of
scenes, a pattern of tiles, a GeoParquet dataset folder), its files, its CRS — is
decided here once, by :func:`resolve`, into an :class:`Input`; the readers, the
route's choice (:mod:`geoeval.scoring.dispatch`) and the Dask engine's plans read its
facts instead of deriving them again from the text, and what is read from its
metadata (its CRS, the plan of its pieces) is kept in it (:meth:`Input.memo`,
:func:`geoeval.io.pieces.planned`).

A URL never goes through :class:`pathlib.Path` (``Path("s3://b/k")`` is ``s3:/b/k``):
its :attr:`Input.source` is a :class:`~geoeval.io.url_paths.UrlPath`.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geoeval.errors import InputError
from geoeval.io.formats import InputFormat, format_for
from geoeval.io.locations import Location, locate
from geoeval.io.stores import anonymous
from geoeval.io.url_paths import UrlPath, is_remote

#: An input's shapes.
FILE, FOLDER, PATTERN, DATASET = "file", "folder", "pattern", "dataset"


@dataclass(frozen=True, eq=False)
class Input(os.PathLike):
    """One input, resolved once (:func:`resolve`).

    Attributes
    ----------
    source : str or Path or UrlPath
        What the readers are given: the path (a zip archive resolved to its member,
        a pattern of tiles as its text), or a :class:`UrlPath`.
    location : Location
    format : InputFormat
        Its registered format (:mod:`geoeval.io.formats`): decided here, once.
    shape : {'file', 'folder', 'pattern', 'dataset'}
        One file (or one data source such as a FileGDB folder), a folder of scenes, a
        pattern of tiles, a GeoParquet dataset folder.
    anon : bool
        Read a public bucket without credentials.
    """

    source: Any
    location: Location
    format: InputFormat
    shape: str = FILE
    anon: bool = False
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __fspath__(self) -> str:
        """The text to open (a URL: its whole text, secrets included: never shown)."""
        return self.location.text if self.is_remote else os.fspath(self.source)

    def __str__(self) -> str:
        return self.display

    @property
    def kind(self) -> str:
        """``raster`` or ``vector``: a pattern of tiles and a dataset are vector layers."""
        return "vector" if self.shape in (PATTERN, DATASET) else self.format.kind

    @property
    def display(self) -> str:
        """The name shown in messages and reports (secrets removed)."""
        return self.location.display if self.is_remote else str(self.source)

    @property
    def is_remote(self) -> bool:
        return not self.location.is_local and self.location.scheme != "vsi"

    @property
    def path(self) -> Any:
        """The source as a path object (:class:`UrlPath` for a URL)."""
        return self.source if self.is_remote else Path(self.source)

    def memo(self, key: Any, make: Any) -> Any:
        """``make()`` computed once per ``key`` for this input (the plan of its pieces,
        its raster header)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def resolve(source: Any, *, input_type: str | None = None, anon: bool = False) -> Input:
    """The :class:`Input` of a path or URL: its format and shape decided once.

    Raises
    ------
    InputError
        A local file that does not exist; a store that cannot be reached or refuses
        (one line naming the URL, :func:`geoeval.io.stores.failure`).
    """
    if isinstance(source, Input):
        return source
    if isinstance(source, UrlPath) or is_remote(source):
        return _remote(locate(os.fspath(source)), input_type, anon or anonymous())
    from geoeval.io import zipped
    from geoeval.io.layer_files import is_parquet_dataset, is_tile_pattern

    loc = locate(os.fspath(source))
    if is_tile_pattern(source):
        return Input(source, loc, format_for(Path(source).suffix, folder=False, vector=True),
                     PATTERN, anon)
    resolved = zipped.resolve(source)  # a zip archive: the member it holds
    if input_type is None and not zipped.exists(resolved):
        raise InputError("no such file", resolved)
    p = Path(resolved)
    folder = p.is_dir()
    fmt = format_for(p.suffix, folder=folder)
    shape = (FOLDER if is_scene_folder(p) else DATASET if folder and is_parquet_dataset(p)
             else FILE)
    return Input(resolved, locate(os.fspath(resolved)), fmt, shape, anon)


def is_scene_folder(path: Any) -> bool:
    """The one rule of a local folder of scenes (scored scene by scene, paired by name
    with another folder): a folder that is not one data source (a FileGDB ``.gdb``, a
    GeoParquet dataset, :func:`geoeval.io.layer_files.is_parquet_dataset`)."""
    from geoeval.io.layer_files import is_parquet_dataset

    if is_remote(path) or not isinstance(path, str | os.PathLike):
        return False
    p = Path(path)
    return p.is_dir() and p.suffix.lower() != ".gdb" and not is_parquet_dataset(p)


def _remote(loc: Location, input_type: str | None, anon: bool) -> Input:
    """An input in object storage or on the web (see :func:`resolve`)."""
    from geoeval.io import stores
    from geoeval.io.url_paths import ready_for_urls

    ready_for_urls(loc.text)  # GDAL told the endpoint (once per process)
    path = UrlPath(loc)
    if loc.is_store and stores.is_pattern(loc.text):
        return Input(path, loc, format_for(path.suffix, folder=False, vector=True), PATTERN,
                     anon)
    found = stores.kind(loc, anon=anon)  # one request: a failure told here, in one line
    if found == "missing":
        raise InputError("no such object (check the bucket and key)", loc.display)
    folder = found == "folder"
    fmt = format_for(path.suffix, folder=folder)
    shape = FILE
    if folder:
        files = stores.list_files(loc, anon=anon)
        parquet = [f for f in files if posixpath.splitext(f.key)[1].lower()
                   in (".parquet", ".geoparquet")]
        shape = DATASET if parquet and (len(parquet) == len(files)
                                        or path.suffix.lower() in (".parquet",
                                                                   ".geoparquet")) \
            else FOLDER
    if shape == FOLDER:
        raise InputError("is a prefix of several files, not one layer: give one file, a "
                         "prefix of GeoParquet files (a dataset), or a quoted pattern of "
                         "tiles ('s3://bucket/tiles/*.gpkg'); folders of scenes are read "
                         "from local folders only", loc.display)
    return Input(path, loc, fmt, shape, anon)

def is_pattern(path: Any) -> bool:
    """A pattern of tiles: an :class:`Input` of that shape, a URL of object storage with
    a wildcard, a local pattern naming no file (:func:`geoeval.io.layer_files.is_tile_pattern`)."""
    if isinstance(path, Input):
        return path.shape == PATTERN
    if is_remote(path):
        loc = locate(os.fspath(path))
        return loc.is_store and any(c in loc.key for c in "*?[")
    from geoeval.io.layer_files import is_tile_pattern

    return is_tile_pattern(path)


def is_dataset(path: Any) -> bool:
    """A GeoParquet dataset folder: an :class:`Input` of that shape, or a local folder
    of GeoParquet files (:func:`geoeval.io.layer_files.is_parquet_dataset`)."""
    if isinstance(path, Input):
        return path.shape == DATASET
    if is_remote(path):
        return False  # a prefix is known to be a dataset once resolved
    from geoeval.io.layer_files import is_parquet_dataset

    return is_parquet_dataset(path)


def layer_files(path: Any) -> list[Any]:
    """The files of a layer of several files, sorted by name: the tiles a pattern
    matches, the GeoParquet files of a dataset folder (local: :class:`~pathlib.Path`;
    in object storage: :class:`UrlPath`, listed once per :class:`Input`)."""
    if isinstance(path, Input):
        return path.memo("files", lambda: _layer_files(path))
    return _layer_files(resolve(path))


def _layer_files(inp: Input) -> list[Any]:
    from geoeval.io import stores
    from geoeval.io.layer_files import dataset_files, tile_files

    if not inp.is_remote:
        return tile_files(inp.source) if inp.shape == PATTERN else dataset_files(
            Path(inp.source))
    if inp.shape == PATTERN:
        found = [UrlPath(f) for f in stores.glob(inp.location.text, anon=inp.anon)]
        if not found:
            raise InputError("matches no object (a pattern of tiles: give the files of one "
                             "layer, e.g. 's3://bucket/tiles/*.gpkg', quoted in the shell)",
                             inp.display)
        return found
    return [UrlPath(f) for f in stores.list_files(inp.location, anon=inp.anon)
            if posixpath.splitext(f.key)[1].lower() in (".parquet", ".geoparquet")]
