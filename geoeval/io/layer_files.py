"""The files of one layer: a pattern of tiles, a GeoParquet dataset folder, and their
one CRS.

A GeoParquet **dataset** is a folder of ``.parquet`` files read as one layer
in the order of their sorted names (:func:`is_parquet_dataset`).

A **layer of tiles** is a file name pattern (``tiles/*.gpkg``, ``tiles/*.fgb``,
``"tiles/*"``; the characters ``*``, ``?`` and ``[``) naming no existing file:
the files it matches, in the order of their sorted names, are one layer
(:func:`is_tile_pattern`, :func:`tile_files`). A folder given as it is stays a
folder of scenes (paired by name with another folder); a pattern is how one says
"these files are one layer".

The files of one layer are in one CRS (:func:`one_crs`): anything else — parts
in two CRSs, a tile without a CRS among tiles with one, a Shapefile tile without
its ``.prj`` — is an error naming the file, never objects compared in the wrong
coordinates. A file the pattern matches but that cannot be a tile (a broken
symbolic link, a folder) is an error too: dropping it would score the layer
without its objects.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from geoeval.errors import InputError

_PARQUET = (".parquet", ".geoparquet")
_GLOB = ("*", "?", "[")


def is_tile_pattern(path: Any) -> bool:
    """A file name pattern (``*``, ``?``, ``[``) naming no existing file or folder: a
    layer of tiles (the files it matches, as one layer)."""
    if not isinstance(path, (str, Path)):
        return False
    text = str(path)
    return any(c in text for c in _GLOB) and not Path(text).exists()


def tile_files(pattern: str | Path) -> list[Path]:
    """The files a tile pattern matches, sorted by name (names starting with ``_`` or
    ``.`` left out). A folder that is itself one layer (a FileGDB ``.gdb``, a
    GeoParquet dataset folder) is a tile.

    Raises
    ------
    InputError
        The pattern matches no file; it matches a broken symbolic link or another
        folder (dropping it would score the layer without its objects), naming it.
    """
    import glob

    files = []
    for f in sorted(map(Path, glob.glob(str(pattern)))):
        if f.name.startswith(("_", ".")):
            continue
        if f.is_file() or f.is_dir() and (f.suffix.lower() == ".gdb" or is_parquet_dataset(f)):
            files.append(f)
        elif f.is_symlink() and not f.exists():
            raise InputError(f"is a broken symbolic link (to {os.readlink(f)}) that the "
                             f"pattern {pattern} matches: its tile cannot be read; give the "
                             "link its file back, or remove it", f)
        elif f.is_dir():
            raise InputError(f"is a folder that the pattern {pattern} matches: a pattern of "
                             "tiles names the files of one layer; narrow the pattern or move "
                             "the folder", f)
        else:
            raise InputError(f"is not a regular file, yet the pattern {pattern} matches it",
                             f)
    if not files:
        raise InputError("matches no file (a pattern of tiles: give the files of one layer, "
                         "e.g. 'tiles/*.gpkg', quoted in the shell)", pattern)
    return files


def is_parquet_dataset(path: str | Path) -> bool:
    """A folder holding GeoParquet files (``*.parquet``/``*.geoparquet``), read as one
    layer: its name ends in ``.parquet`` or it holds a ``_metadata`` file, or every
    file in it is a Parquet file."""
    p = Path(path)
    if not p.is_dir():
        return False
    files = dataset_files(p)
    if not files:
        return False
    if p.suffix.lower() in _PARQUET or (p / "_metadata").is_file():
        return True
    others = [q for q in p.iterdir() if q.is_file() and not q.name.startswith(("_", "."))
              and q.suffix.lower() not in _PARQUET]
    return not others and not any(q.is_dir() for q in p.iterdir())


def dataset_files(p: Path) -> list[Path]:
    return sorted(q for q in p.iterdir() if q.is_file() and q.suffix.lower() in _PARQUET
                  and not q.name.startswith(("_", ".")))


def one_crs(source: str, files: list[Path], texts: list[str | None], what: str,
            assumed: Any = None) -> Any:
    """The one CRS of the files of a layer (``texts``: each file's CRS as text, ``None``
    for none), parsed; ``assumed`` (``--crs``) for the files without one.

    A layer's files (the tiles of a pattern, the files of a GeoParquet dataset) are
    one layer, in one CRS: scoring them as if all were in the first one's would
    report the same building as a missed object and a false alarm.

    Raises
    ------
    InputError
        Naming the first file at fault: a Shapefile without ``.prj`` (its CRS is
        unknown, as for one file), a file without a CRS among files with one, a
        file in another CRS than the first.
    """
    from geoeval.grid import crs_name, same_crs
    from geoeval.io.vector import _assumed_crs

    given = None if assumed is None else _assumed_crs(files[0], assumed)
    parsed = []
    for f, text in zip(files, texts, strict=True):
        c = parse_crs(text)
        if c is None and given is None and f.suffix.lower() == ".shp":
            _assumed_crs(f, None)  # raises: a Shapefile without .prj
        parsed.append(given if c is None else c)
    known = [c is not None for c in parsed]
    if any(known) and not all(known):
        bad, good = known.index(False), known.index(True)
        raise InputError(f"has no CRS, while {files[good].name}, another {what} of {source}, "
                         f"is in {crs_name(parsed[good])}: the {what}s of a layer share one "
                         "CRS; give it with --crs", files[bad])
    first = parsed[0] if parsed else None
    for f, c in zip(files[1:], parsed[1:], strict=True):
        if c is not None and c is not first and not same_crs(first, c):
            raise InputError(f"is in {crs_name(c)}, another CRS than the first {what} of "
                             f"{source} ({files[0].name}, in {crs_name(first)}): the {what}s "
                             "of a layer share one CRS", f)
    return first


def geo_crs(geo: bytes, f: Path) -> str | None:
    """The CRS of GeoParquet ``geo`` metadata as text (:func:`parse_crs` parses it)."""
    try:
        meta = json.loads(geo)
        column = meta["columns"][meta["primary_column"]]
    except Exception:
        raise InputError("has unreadable GeoParquet 'geo' metadata", f) from None
    if "crs" not in column:  # GeoParquet: a missing crs means OGC:CRS84
        return "OGC:CRS84"
    crs = column["crs"]
    return None if crs is None else (crs if isinstance(crs, str)
                                     else json.dumps(crs, sort_keys=True))


@functools.lru_cache(maxsize=64)
def parse_crs(text: str | None) -> Any:
    """A CRS parsed once per text (PROJJSON, WKT, ``EPSG:n``; ``None`` for none): parsing
    a PROJJSON takes about 50 ms, and a layer of tiles repeats the same one in every
    file."""
    from pyproj import CRS

    if text is None:
        return None
    return CRS.from_user_input(json.loads(text) if text.startswith("{") else text)
