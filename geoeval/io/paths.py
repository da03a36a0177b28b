"""A path is a path: the names geoeval gives GDAL for a user's local files.

GDAL reads more than a file name in the text it is given: a driver prefix
(``GTIFF_RAW:ref.tif``, ``GTIFF_DIR:1:sub.tif``, ``GPKG:a.gpkg:layer``) opens
*another* file, through that driver, and ``/vsi…`` names a virtual file system.
The Python libraries between us and GDAL read even more: pyogrio parses every
name as a URL (Python's ``urllib.parse``), so a ``;`` ends the path, tabs and
newlines are dropped and a ``!`` separates an archive from a member; a name
that is not valid UTF-8 (a byte of another encoding, kept by Python as a lone
surrogate) cannot be passed at all.

:func:`local_path` gives the name to hand over for a local file or folder: its
absolute path, which no driver prefix can claim, or, when a library would still
change that on its way to GDAL, a symbolic link with a plain name to it (and to
its sidecar files: same name, other extensions, e.g. a Shapefile's ``.shx``,
``.dbf``, ``.prj``) in a private folder of this process, removed when the
process exits. Messages always name the user's path.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from geoeval.errors import InputError

_LOCK = threading.Lock()
_FOLDER: list[str] = []  # the private folder of links, made on first use


#: What pyogrio's URL parsing (``urllib.parse``) takes out of a local path: ``;`` ends
#: it, ``!`` separates an archive from a member, tabs and newlines are dropped.
_URL_SYNTAX = (";", "!", "\t", "\n", "\r")


def _changed_on_the_way(name: str) -> bool:
    """Whether pyogrio or GDAL would not take ``name`` (absolute) as the file it names
    (pyogrio's own rule, ``pyogrio.util.vsi_path``, without importing pyogrio: that
    imports pandas and geopandas, which a raster run never needs)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # not valid UTF-8: cannot be passed to GDAL
        return True
    return (name.startswith("/vsi") or any(c in name for c in _URL_SYNTAX)
            or name.lower().endswith(".zip"))


def local_path(path: str | os.PathLike[str]) -> str:
    """The name to give GDAL (through rasterio or pyogrio) for the local file or
    folder ``path``: its absolute path, or a link to it with a plain name (see
    the module). A ``/vsi…`` name that is no local file is a GDAL virtual file
    (``/vsis3/bucket/ref.tif``, ``/vsicurl/https://…``): given as it is, and a URL
    (``s3://…``, ``https://…``) as that name (:attr:`Location.gdal
    <geoeval.io.locations.Location.gdal>`); a file in a
    zip archive (``det.zip/det.shp``, :mod:`geoeval.io.zipped`) is GDAL's
    ``/vsizip/`` name of it.

    Raises
    ------
    InputError
        The name needs a link and the system allows none (naming the file).
    """
    text = os.fspath(path)
    from geoeval.io.locations import is_url, locate

    if is_url(text) and not os.path.lexists(text):
        return locate(text).gdal  # s3://, https://…: GDAL's virtual file system name
    from geoeval.io.zipped import gdal_name

    member = gdal_name(text)  # a file in a zip archive: read in place, through /vsizip/
    if member is not None:
        return member
    if text.startswith("/vsi") and not os.path.lexists(text):
        return text  # a GDAL virtual file system (/vsis3/…, /vsimem/…): GDAL's own name
    absolute = os.path.abspath(text)
    if not _changed_on_the_way(absolute):
        return absolute
    return _link(absolute, path)


def _link(absolute: str, given: str | os.PathLike[str]) -> str:
    p = Path(absolute)
    key = hashlib.sha256(os.fsencode(absolute)).hexdigest()[:16]
    stem = p.name.split(".", 1)[0]
    rest = p.name[len(stem):]  # ".shp", ".gpkg", ".tar.gz": the extension(s)
    plain = "".join(c for c in rest if c.isascii() and (c.isalnum() or c in "._-"))
    with _LOCK:
        folder = os.path.join(_folder(), key)
        target = os.path.join(folder, "layer" + plain)
        if os.path.lexists(target):
            return target
        os.makedirs(folder, exist_ok=True)
        try:
            os.symlink(absolute, target)
            if p.parent.is_dir():  # sidecars: the same name with other extensions
                for other in p.parent.iterdir():
                    if other.name != p.name and other.name.startswith(stem + "."):
                        alias = "layer" + "".join(
                            c for c in other.name[len(stem):]
                            if c.isascii() and (c.isalnum() or c in "._-"))
                        if not os.path.lexists(os.path.join(folder, alias)):
                            os.symlink(str(other), os.path.join(folder, alias))
        except OSError as exc:
            raise InputError("this file name cannot be passed to GDAL as it is (it holds "
                             "';', '!', a tab or newline, or bytes that are not UTF-8) and "
                             f"no link to it can be made ({exc.strerror or exc}); rename "
                             "the file", given) from None
    return target


def _folder() -> str:
    """This process's private folder of links (removed at exit)."""
    if not _FOLDER or not os.path.isdir(_FOLDER[0]):
        _FOLDER[:] = [tempfile.mkdtemp(prefix="geoeval-names-")]
        atexit.register(shutil.rmtree, _FOLDER[0], True)
    return _FOLDER[0]


def shown(text: str, name: str, path: str | os.PathLike[str]) -> str:
    """A library's message about ``name`` (from :func:`local_path`) with the user's
    ``path`` in its place."""
    return text.replace(name, os.fspath(path)) if name else text
