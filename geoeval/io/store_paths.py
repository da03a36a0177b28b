"""Box files and folders in object storage and on the web, read as the box readers read
local ones.

The box readers (COCO and CrowdAI JSON, DOTA labelTxt and result folders, VOC XML,
text and YOLO folders, Neovision2 CSV) walk folders and read whole files through a
few :class:`pathlib.Path` calls. :func:`box_path` resolves an input once, at the
reader's edge: a local path stays a :class:`~pathlib.Path`; a URL (``s3://``,
``gs://``, ``az://``, ``https://``, or GDAL's ``/vsis3/…`` spelling) becomes a
:class:`StorePath`, which answers the same calls through :mod:`geoeval.io.stores`
(a prefix listed as a folder, an object read whole into memory, nothing written to
disk). A URL never goes through :class:`~pathlib.Path`, which would collapse its
``//``.

A :class:`StorePath` prints as :attr:`~geoeval.io.locations.Location.display`
(secrets removed), so every message and report names the input as the user gave
it, and has no ``__fspath__``: a call that would open it as a local file fails
loudly instead of reading another file.

The web has no listing: a web URL is a file unless it ends with ``/``; listing a
web folder is refused with :func:`geoeval.io.stores.list_files`' line.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from geoeval.errors import InputError
from geoeval.io import stores, url_paths
from geoeval.io.locations import Location, is_url, locate
from geoeval.io.url_paths import UrlPath

#: The start of an HTML page (what a web server answers for a folder), never of a box file.
_WEB_PAGE = re.compile(rb"\s*(<!doctype\s+html|<html[\s>])", re.IGNORECASE)
#: Objects fetched at once when a reader reads every file of a prefix (one request each).
FETCHES = 8
T = TypeVar("T")


class StorePath(UrlPath):
    """A file or folder (prefix) of an object store, or a file on the web: the part of
    :class:`pathlib.Path` the box readers use — :class:`~geoeval.io.url_paths.UrlPath`'s
    names, with the answers and reads asked of the store.

    Parameters
    ----------
    location : Location
        Where it lives (not a local path).
    kind : {'file', 'folder', 'missing'}, optional
        Known already (a listing's entries are files); else asked once, when first
        needed (:func:`geoeval.io.stores.kind`).
    """

    def __init__(self, location: Location, kind: str | None = None) -> None:
        super().__init__(location)
        self._kind = kind
        self._listing: list[StorePath] | None = None

    def __fspath__(self) -> str:
        """None: a box file is read through the store, never opened as a local file (a
        call that would do so fails loudly instead of reading another file)."""
        raise TypeError(f"{self} is in object storage or on the web, not a local file")

    def __repr__(self) -> str:
        return f"StorePath({self.location.display!r})"

    @property
    def parent(self) -> StorePath:
        """The folder (prefix) holding it."""
        out = super().parent
        out._kind = "folder"
        return out

    # --- what it is --------------------------------------------------------------------

    def kind(self) -> str:
        """``'file'``, ``'folder'`` or ``'missing'``, asked of the store once. A web URL
        is a folder when it ends with ``/``, else a file (no request: a missing one
        fails when read, naming the server's answer)."""
        if self._kind is None:
            loc = self.location
            if loc.is_store:
                self._kind = stores.kind(loc)
            else:
                self._kind = "folder" if loc.key.split("?", 1)[0].endswith("/") or not (
                    loc.key) else "file"
        return self._kind

    def exists(self) -> bool:
        """Whether it is there (a file or a prefix holding objects)."""
        return self.kind() != "missing"

    def is_file(self) -> bool:
        """Whether it is one object (or a web file)."""
        return self.kind() == "file"

    def is_dir(self) -> bool:
        """Whether it is a prefix holding objects (or a web URL ending with ``/``)."""
        return self.kind() == "folder"

    # --- listing and reading -----------------------------------------------------------

    def iterdir(self) -> list[StorePath]:
        """The files directly in this folder (prefix), hidden ones too, sorted (listed
        once); a web folder is refused (:func:`geoeval.io.stores.list_files`)."""
        if self._listing is None:
            self._listing = [StorePath(f, "file")
                             for f in stores.list_files(self.location, hidden=True)]
        return list(self._listing)

    def glob(self, pattern: str) -> list[StorePath]:
        """The files directly in this folder whose names match ``pattern``."""
        return [f for f in self.iterdir() if fnmatch.fnmatchcase(f.name, pattern)]

    def rglob(self, pattern: str) -> list[StorePath]:
        """The files in this folder and below whose names match ``pattern``."""
        return [StorePath(f, "file") for f in stores.list_files(self.location, recursive=True,
                                                                 hidden=True)
                if fnmatch.fnmatchcase(f.name, pattern)]

    def read_bytes(self) -> bytes:
        """The whole object, in memory (one request). A web page where a box file is
        expected (a server's listing of a folder named without its final ``/``) is
        refused: the web has no folders to list."""
        data = stores.read_bytes(self.location)
        if not self.location.is_store and _WEB_PAGE.match(data[:512]):
            raise InputError("the server answered a web page (a folder's listing?), not a "
                             "file: the web has no folders to list: name each file's URL, "
                             "or put the files in object storage (s3://, gs://, az://)", self)
        return data

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        """:meth:`read_bytes` decoded (a :class:`UnicodeDecodeError` as from a local file)."""
        return self.read_bytes().decode(encoding, errors)


#: What a box reader takes as a file or folder: a local path or a :class:`StorePath`.
BoxPath = Path | StorePath


def box_path(source: str | os.PathLike[str] | Location | StorePath) -> BoxPath:
    """``source`` resolved once: a :class:`StorePath` for a URL of an object store or
    the web (or a :class:`~geoeval.io.locations.Location` of one), else a local
    :class:`~pathlib.Path`.

    Examples
    --------
    >>> str(box_path("s3://bucket/dota/labelTxt"))
    's3://bucket/dota/labelTxt'
    >>> box_path("labels/gt.json")
    PosixPath('labels/gt.json')
    """
    if isinstance(source, StorePath):
        return source
    if isinstance(source, UrlPath):  # a URL resolved by the other readers
        return StorePath(source.location)
    loc: Any = source if isinstance(source, Location) else (
        locate(source) if isinstance(source, str) and is_url(source) else None)
    if loc is None or loc.is_local or loc.scheme == "vsi":
        return Path(loc.text if loc is not None else source)
    return StorePath(loc)


def is_remote(source: object) -> bool:
    """Whether ``source`` names a URL (a :class:`StorePath`, a URL's text or
    :class:`~geoeval.io.locations.Location`) rather than a local file."""
    if isinstance(source, Location):
        return not (source.is_local or source.scheme == "vsi")
    return url_paths.is_remote(source)


def shown(source: object) -> str:
    """What messages and reports call ``source``: a URL without its secrets
    (:attr:`~geoeval.io.locations.Location.display`), a local path as given."""
    return str(box_path(source)) if is_remote(source) else str(source)  # type: ignore[arg-type]


def missing(p: BoxPath, given: object = None) -> InputError:
    """The error of an input that is not there, naming it (a local one as ``given``,
    the text it was given as, when known)."""
    if isinstance(p, StorePath):
        return InputError("no such object or prefix (check the bucket and key)", p)
    return InputError("no such file or folder", p if given is None else given)


def check_listable(p: BoxPath) -> None:
    """Refuse a folder on the web, which has no listing, with
    :func:`geoeval.io.stores.list_files`' line (where a reader needs a folder)."""
    if isinstance(p, StorePath) and not p.location.is_store:
        stores.list_files(p.location)


def read_each(files: Iterable[BoxPath], read: Callable[[BoxPath], T]) -> Iterator[T]:
    """``read(f)`` of each file, in order. Objects of a store or the web are fetched
    :data:`FETCHES` at a time (a prefix of thousands of small files would otherwise
    wait for each request in turn); local files are read one by one, when reached. A
    failure is raised where its file comes, as reading in turn would raise it."""
    files = list(files)
    if not any(isinstance(f, StorePath) for f in files):
        yield from map(read, files)
        return
    with ThreadPoolExecutor(FETCHES) as pool:
        yield from pool.map(read, files)
