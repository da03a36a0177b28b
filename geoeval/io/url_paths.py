"""A URL where the readers expect a path, and the files GDAL does not open for them.

The readers name a file by its path (its suffix, its name, its sidecars). A URL
never goes through :class:`pathlib.Path` (``Path("s3://b/k")`` is ``s3:/b/k``): they
get a :class:`UrlPath` (:func:`as_path`), whose ``str`` is the name to show
(:attr:`~geoeval.io.locations.Location.display`, secrets removed) and whose
``os.fspath`` the text to open (:func:`geoeval.io.paths.local_path` gives GDAL its
``/vsi…`` name). GeoParquet, which GDAL's wheels do not read, is opened where it lives
by :func:`parquet_source`.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PurePosixPath
from typing import Any

from geoeval.io.locations import Location, is_url, locate
from geoeval.io.stores import anonymous


class UrlPath(os.PathLike):
    """A URL as the readers that name files by path use it: the parts of
    :class:`pathlib.PurePath` they read (``name``, ``suffix``, ``stem``,
    ``with_suffix``, ``parent``) on the URL's path, ``str`` the name shown (secrets
    removed), ``os.fspath`` the URL itself (for :func:`geoeval.io.paths.local_path`)."""

    __slots__ = ("location",)

    def __init__(self, location: Location | str) -> None:
        self.location = location if isinstance(location, Location) else locate(location)

    def __fspath__(self) -> str:
        return self.location.text

    def __str__(self) -> str:
        return self.location.display

    def __repr__(self) -> str:
        return f"UrlPath({self.location.display!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UrlPath) and other.location.url == self.location.url

    def __lt__(self, other: UrlPath) -> bool:
        return self.location.url < other.location.url

    def __hash__(self) -> int:
        return hash(self.location.url)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.location,))

    @property
    def _key(self) -> str:
        return self.location.key.split("?", 1)[0].rstrip("/")

    @property
    def name(self) -> str:
        return posixpath.basename(self._key)

    @property
    def suffix(self) -> str:
        return posixpath.splitext(self.name)[1]

    @property
    def stem(self) -> str:
        return posixpath.splitext(self.name)[0]

    @property
    def parent(self) -> UrlPath:
        loc = self.location
        head = posixpath.dirname(self._key)
        return type(self)(locate(f"{loc.scheme}://{loc.bucket}/{head}"))

    def with_suffix(self, suffix: str) -> UrlPath:
        return self.parent / (self.stem + suffix)

    def __truediv__(self, name: str) -> UrlPath:
        return type(self)(self.location.child(name))

    def relative_to(self, other: UrlPath) -> PurePosixPath:
        """This key's path below ``other``'s (``TowerF/001.csv``)."""
        base = other.location.key.split("?", 1)[0].rstrip("/")
        key = self._key
        if base and not key.startswith(base + "/"):
            raise ValueError(f"{self} is not under {other}")
        return PurePosixPath(key[len(base):].lstrip("/"))

    def is_dir(self) -> bool:
        return False

    def is_file(self) -> bool:
        return True

    def exists(self) -> bool:
        return True

    def is_symlink(self) -> bool:
        return False

def as_path(path: Any) -> Any:
    """``path`` as the readers take it: a :class:`UrlPath` for a URL (text, a
    :class:`UrlPath`, a resolved :class:`~geoeval.io.inputs.Input` of one), a
    :class:`pathlib.Path` otherwise."""
    if isinstance(path, UrlPath):
        return path
    if is_remote(path):
        return UrlPath(os.fspath(path))
    return Path(path)


def is_remote(path: Any) -> bool:
    """Whether ``path`` (text, a path-like) names an object store or the web (not a
    local file whose name looks like one)."""
    if isinstance(path, UrlPath):
        return True
    if not isinstance(path, str | os.PathLike):
        return False
    text = os.fspath(path)
    return isinstance(text, str) and is_url(text) and not os.path.lexists(text)



def parquet_source(path: Any) -> Any:
    """What :mod:`pyarrow.parquet` (and geopandas) open for the GeoParquet file
    ``path``: GDAL's safe name of a local file (:func:`geoeval.io.paths.local_path`),
    else a seekable file where it lives (Arrow's file of an object store, HTTP ranges
    on the web, :func:`geoeval.io.stores.open_input`): only the footer and the row
    groups read are fetched."""
    from geoeval.io.paths import local_path

    if not is_remote(path):
        return local_path(path)
    import pyarrow as pa

    from geoeval.io import stores

    loc = locate(os.fspath(path))
    f = stores.open_input(loc, anon=anonymous())
    return f if loc.is_store else pa.PythonFile(f, mode="r")


#: Footers of GeoParquet files read where they live, by version of the file
#: (:func:`geoeval.io.stores.open_version`): a run plans, prunes and reads a file in
#: several steps, and each would fetch its footer again (a few % of the file each time).
_FOOTERS: dict[tuple[Any, ...], Any] = {}
_FOOTERS_KEPT = 64


def parquet_file(path: Any) -> Any:
    """A :class:`pyarrow.parquet.ParquetFile` of ``path`` (:func:`parquet_source`); the
    footer of a file where it lives fetched once per version of the file in this
    process."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not is_remote(path):
        return pq.ParquetFile(parquet_source(path))
    from geoeval.io import stores

    loc = locate(os.fspath(path))
    f, version = stores.open_version(loc, anon=anonymous())
    source = f if loc.is_store else pa.PythonFile(f, mode="r")
    known = _FOOTERS.get(version) if None not in version else None
    out = pq.ParquetFile(source, metadata=known)
    if known is None and None not in version:
        while len(_FOOTERS) >= _FOOTERS_KEPT:
            _FOOTERS.pop(next(iter(_FOOTERS)))
        _FOOTERS[version] = out.metadata
    return out


_CONFIGURED: list[int] = []  # the process that configured GDAL for URLs


def ready_for_urls(path: Any) -> None:
    """GDAL configured for the stores (:func:`geoeval.io.locations.configure_gdal`) in
    this process before ``path``, a URL, is read: once per process (a Dask worker
    reads with its own environment)."""
    if _CONFIGURED == [os.getpid()] or not is_remote(path):
        return
    from geoeval.io.locations import configure_gdal

    configure_gdal(anon=anonymous())
    _CONFIGURED[:] = [os.getpid()]


def remote_failure(exc: BaseException, path: Any) -> Any:
    """GDAL's (or Arrow's) failure ``exc`` reading ``path``, a URL, as the one line of
    :func:`geoeval.io.stores.gdal_failure` (missing, access denied, no credentials,
    unreachable, …); ``None`` for a local path or a message that names no such reason."""
    if not is_remote(path):
        return None
    from geoeval.errors import InputError
    from geoeval.io import stores

    loc = locate(os.fspath(path))
    if isinstance(exc, InputError):
        return None
    cause = exc.__cause__ or exc.__context__
    text = " ".join(str(e) for e in (exc, cause) if e is not None)
    return stores.gdal_failure(text, loc)
