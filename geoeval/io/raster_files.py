"""A raster file as GDAL holds it: one open handle per thread and file version, GDAL's
messages kept off the terminal and its reasons in one line, the blocks a sparse
GeoTIFF has written.

The windowed scan (:mod:`geoeval.io.windowed`) and the raster reader
(:mod:`geoeval.io.raster`) read through these; a task on a Dask worker too, in the
worker's threads.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from geoeval.errors import first_line


def gdal_reason(exc: BaseException) -> str:
    """GDAL's own words for a rasterio error (rasterio often says 'see previous'), one
    line cut to :data:`geoeval.errors.REASON_CHARS` characters."""
    from geoeval.errors import REASON_CHARS, cut

    cause = exc.__cause__ or exc.__context__
    return cut(first_line(cause if cause is not None else exc), REASON_CHARS)


@contextlib.contextmanager
def quiet_gdal() -> Iterator[None]:
    """GDAL's messages kept off the terminal in this thread; its errors are still
    raised by rasterio, and put in our words.

    rasterio sends GDAL's messages to its logger only in the thread that started
    its first GDAL environment; in a thread of a pool or of a Dask worker, GDAL
    printed them itself (a truncated sparse GeoTIFF's tile index: a thousand
    ``ERROR 1: _TIFFPartialReadStripArray`` lines, 85 KB, before our one line).
    """
    try:
        from rasterio._env import catch_errors  # rasterio's handler, for this thread
    except ImportError:  # pragma: no cover - another rasterio: its environment
        import rasterio

        with rasterio.Env():
            yield
        return
    with catch_errors():
        yield


_LOCAL = threading.local()
#: Held while a raster is opened with its warnings caught: ``warnings.catch_warnings``
#: swaps the process's filters, so two threads inside it at once can each restore the
#: other's state (a ``NotGeoreferencedWarning`` then reached the terminal, once in a
#: CI run, from a truncated GeoTIFF opened by two threads).
_OPENING = threading.Lock()


def open_quietly(path: str | os.PathLike[str]) -> Any:
    """``rasterio.open`` of ``path`` (a local file or a GDAL virtual path), its Python
    warnings and GDAL's messages kept off the terminal: the readers say what matters
    once, in their words."""
    import warnings
    from pathlib import Path

    import rasterio

    from geoeval.io.paths import local_path

    with _OPENING, warnings.catch_warnings(), quiet_gdal():
        warnings.simplefilter("ignore")
        name = local_path(path)
        # a Path: rasterio would parse a string as a URL (';', '#', '!'); GDAL's
        # virtual names (/vsis3/…, /vsicurl/https://…) as they are, never a Path
        return rasterio.open(name if name.startswith("/vsi") else Path(name))


def file_version(path: str | os.PathLike[str]) -> tuple[int, ...]:
    """The identity and version of a file (device, inode, size, modification time): equal
    only while it is the same file, unchanged; ``()`` for a name that is no file of its own
    (a GDAL virtual path such as ``/vsicurl/…``)."""
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def open_raster(path: str) -> Any:
    """An open rasterio dataset for ``path``, one per thread (handles are not thread-safe).

    A handle is reused only for the same file as when it was opened: the key is the
    absolute path, and the file's identity and version (device, inode, size, modification
    time) must still match. A relative name read again from another folder, or a file
    written anew at the same path (a notebook regenerating ``predictions.tif``), opens the
    file afresh instead of reading the old one's pixels."""
    cache = getattr(_LOCAL, "datasets", None)
    if cache is None:
        cache = _LOCAL.datasets = {}
    version = file_version(path)
    where = os.path.abspath(path) if version else path  # a GDAL virtual path as it is
    held = cache.get(where)
    if held is not None and held[0] == version and not held[1].closed:
        return held[1]
    if held is not None:
        held[1].close()
    from geoeval.io.url_paths import ready_for_urls

    ready_for_urls(path)  # a URL read on a Dask worker: GDAL told the store's endpoint
    # NotGeoreferencedWarning and GDAL's complaints: the reader's to say (once)
    ds = open_quietly(path)
    cache[where] = (version, ds)
    return ds


@functools.lru_cache(maxsize=1 << 14)
def written_blocks(path: str, band: int, row: int, n_cols: int,
                    version: tuple[int, ...]) -> np.ndarray:
    """Which blocks of block row ``row`` are present in the file (GDAL's
    ``BLOCK_OFFSET_x_y``; empty for an unwritten block of a sparse GeoTIFF), asked
    once per row, file version and process: the scan and the vectorising ask for
    the same rows. GDAL's complaints (a truncated file's tile index, a thousand
    lines) kept off the terminal (:func:`quiet_gdal`)."""
    with quiet_gdal():
        ds = open_raster(path)
        return np.array([bool(ds.get_tag_item(f"BLOCK_OFFSET_{j}_{row}", "TIFF", bidx=band))
                         for j in range(n_cols)], dtype=bool)
