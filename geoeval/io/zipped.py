"""Zipped inputs: a layer or raster read inside its zip archive, in place.

Shapefiles travel zipped (``det.zip``, ``det.shp.zip``), and GDAL reads a zip
archive without extracting it (its ``/vsizip/`` file system). An input may be
named

* ``det.zip`` (or ``det.shp.zip``, ``zip://det.zip``, ``/vsizip/det.zip``): the
  archive holding **one** layer or raster (a Shapefile with its sidecars, a
  GeoPackage, a GeoJSON file, a GeoTIFF, …), read as that layer;
* ``det.zip/buildings.shp`` (or GDAL's ``/vsizip/det.zip/buildings.shp``, or
  ``zip://det.zip!buildings.shp``): one member of an archive holding several.

:func:`resolve` turns each of these into the one form the readers take,
``<archive>/<member>`` as the user spelled the archive (what messages and reports
name); :func:`gdal_name` is the name GDAL is given for it (``/vsizip/{…}/member``,
used by :func:`geoeval.io.paths.local_path`); :func:`exists`, :func:`is_file`,
:func:`size` and :func:`head` read a member's bytes for the checks a reader makes
before GDAL opens it (a Shapefile's sidecars, its headers). The archive is never
modified and nothing is extracted next to it.
"""

from __future__ import annotations

import functools
import os
import zipfile
from pathlib import Path, PurePosixPath

from geoeval.errors import InputError
from geoeval.io.formats import OGR_SUFFIXES

#: Raster files a zip archive may hold (any other name is not taken for a layer).
RASTER_SUFFIXES = (".tif", ".tiff", ".vrt", ".img", ".jp2", ".png", ".asc")
_PARQUET = (".parquet", ".geoparquet")
#: The most names a message lists.
_LISTED = 8


def _is_archive(text: str) -> bool:
    return text.lower().endswith(".zip") and os.path.isfile(text)


def split(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """``(archive, member)`` of a name of a zip archive or of a member in one (the
    forms of the module), ``member`` ``""`` for the archive itself; ``None`` for any
    other name. The archive must be an existing file.

    A path that went through :class:`pathlib.Path` (the command line's arguments) has
    lost a slash: ``zip://det.zip`` is ``zip:/det.zip``, ``/vsizip//abs/det.zip`` is
    ``/vsizip/abs/det.zip``; both readings are tried.
    """
    text = os.fspath(path)
    if ".zip" not in text.lower():
        return None
    for prefix in ("zip://", "zip:/", "/vsizip/"):
        if text.startswith(prefix):
            rest = text[len(prefix):]
            if rest.startswith("{") and "}" in rest:  # GDAL's /vsizip/{archive}/member
                archive, _, member = rest[1:].partition("}")
                return (archive, member.strip("/")) if _is_archive(archive) else None
            rest = rest.replace("!", "/", 1) if prefix != "/vsizip/" else rest
            for candidate in (rest, "/" + rest.lstrip("/"), rest.lstrip("/")):
                found = _in_archive(candidate)
                if found is not None:
                    return found
            return None
    return _in_archive(text)


def _in_archive(text: str) -> tuple[str, str] | None:
    """``(archive, member)`` of a plain path whose first ``.zip`` file is an archive."""
    if _is_archive(text):
        return text, ""
    parts = text.split("/")
    for k in range(1, len(parts)):
        head = "/".join(parts[:k])
        if head.lower().endswith(".zip") and _is_archive(head):
            return head, "/".join(p for p in parts[k:] if p)
    return None


@functools.lru_cache(maxsize=32)
def _names(archive: str, version: tuple[int, ...]) -> tuple[str, ...]:
    try:
        with zipfile.ZipFile(archive) as z:
            return tuple(z.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"is not a readable zip archive ({exc})", archive) from None


def _listing(archive: str) -> tuple[str, ...]:
    """The names in ``archive`` (read once per version of the file)."""
    st = os.stat(archive)
    return _names(os.path.abspath(archive), (st.st_ino, st.st_size, st.st_mtime_ns))


def _inputs(names: tuple[str, ...]) -> list[str]:
    """The members of an archive that are a layer or raster: a file with a layer's or
    raster's suffix, or a FileGDB folder (``x.gdb``), not a macOS resource fork."""
    found: list[str] = []
    for name in names:
        parts = PurePosixPath(name).parts
        if not parts or parts[0] == "__MACOSX" or parts[-1].startswith("."):
            continue
        gdb = next((k for k, q in enumerate(parts) if q.lower().endswith(".gdb")), None)
        if gdb is not None:
            folder = "/".join(parts[:gdb + 1])
            if folder not in found:
                found.append(folder)
            continue
        if name.endswith("/"):
            continue
        suffix = PurePosixPath(name).suffix.lower()
        if suffix in OGR_SUFFIXES or suffix in RASTER_SUFFIXES:
            found.append(name)
    return found


def resolve(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``path`` as the readers take it: a zip archive or member as
    ``<archive>/<member>`` (the archive's one layer or raster when no member is
    named); any other path unchanged.

    Raises
    ------
    InputError
        Naming the archive: it is no zip archive, holds no layer or raster, holds
        several (the message lists them and says how to name one), the member named
        is not in it, or is a GeoParquet file (which cannot be read inside a zip).
    """
    found = split(path)
    if found is None:
        return path
    archive, member = found
    names = _listing(archive)
    if not member:
        inputs = _inputs(names)
        if not inputs:
            shown = ", ".join(n for n in names[:_LISTED]) or "nothing"
            raise InputError(f"is a zip archive holding no layer or raster geoeval reads "
                             f"({shown}{', …' if len(names) > _LISTED else ''})", archive)
        if len(inputs) > 1:
            listed = ", ".join(inputs[:_LISTED]) + (", …" if len(inputs) > _LISTED else "")
            raise InputError(
                f"is a zip archive holding {len(inputs)} layers ({listed}); name one by its "
                f"path in the archive, e.g. {archive}/{inputs[0]} (or GDAL's "
                f"/vsizip/{archive}/{inputs[0]})", archive)
        member = inputs[0]
    if member not in names and not any(n.startswith(member + "/") for n in names):
        listed = ", ".join(_inputs(names)[:_LISTED]) or "none"
        raise InputError(f"holds no {member} (its layers and rasters: {listed})", archive)
    if PurePosixPath(member).suffix.lower() in _PARQUET:
        raise InputError(f"holds {member}, a GeoParquet file, which cannot be read inside a "
                         "zip archive; extract it and give the .parquet file", archive)
    return f"{archive}/{member}"


def _member(path: str | os.PathLike[str]) -> tuple[str, str] | None:
    found = split(path)
    return found if found is not None and found[1] else None


def gdal_name(path: str | os.PathLike[str]) -> str | None:
    """GDAL's name of a zip member (``/vsizip/{/abs/det.zip}/det.shp``), ``None`` for any
    other path (a whole archive included: :func:`resolve` names its member first)."""
    found = _member(path)
    if found is None:
        return None
    return "/vsizip/{" + os.path.abspath(found[0]) + "}/" + found[1]


def exists(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` exists: a file or folder, or a member of a zip archive."""
    found = _member(path)
    if found is None:
        return Path(path).exists()
    names = _listing(found[0])
    return found[1] in names or any(n.startswith(found[1] + "/") for n in names)


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file, or a file in a zip archive."""
    found = _member(path)
    return Path(path).is_file() if found is None else found[1] in _listing(found[0])


def size(path: str | os.PathLike[str]) -> int:
    """The size of a file, or of a file in a zip archive (uncompressed), in bytes."""
    found = _member(path)
    if found is None:
        return Path(path).stat().st_size
    with zipfile.ZipFile(found[0]) as z:
        return z.getinfo(found[1]).file_size


def head(path: str | os.PathLike[str], n: int | None = None) -> bytes:
    """The first ``n`` bytes (all with ``None``) of a file, or of a file in a zip
    archive."""
    found = _member(path)
    if found is None:
        with open(path, "rb") as fh:
            return fh.read() if n is None else fh.read(n)
    with zipfile.ZipFile(found[0]) as z, z.open(found[1]) as fh:
        return fh.read() if n is None else fh.read(n)
