"""A Shapefile's parts: its sidecar files, whether they are whole, and its code page.

A Shapefile is several files (``.shp`` shapes, ``.shx`` index, ``.dbf`` attributes,
``.prj`` CRS, ``.cpg`` code page) that travel together and break apart; GDAL reads a
broken one without a word. These checks read the files' headers (ESRI Shapefile
Technical Description, 1998; the dBASE file header), in a zip archive too
(:mod:`geoeval.io.zipped`), so that :mod:`geoeval.io.vector` refuses what GDAL would
misread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from geoeval.errors import InputError
from geoeval.io import zipped


def sidecar(p: Path, ext: str) -> Path | None:
    """The sidecar ``ext`` of a Shapefile (either case; in its zip archive for a member
    of one), or ``None``."""
    return next((c for c in (p.with_suffix(ext), p.with_suffix(ext.upper()))
                 if zipped.is_file(c)), None)


def check_shapefile(p: Path) -> None:
    """Refuse a Shapefile whose ``.shx``/``.dbf`` is missing or whose files are cut short.

    GDAL reads a record that runs past the end of the ``.shp`` as a feature
    without geometry, and a ``.shp`` without ``.dbf`` as features without
    attributes, both silently; the sizes in the headers (ESRI Shapefile
    Technical Description, 1998; dBASE file header) tell whether a file is whole.
    """
    for ext, what in ((".shx", "index"), (".dbf", "attribute table")):
        if sidecar(p, ext) is None:
            raise InputError(f"Shapefile without {ext} ({p.with_suffix(ext).name} is missing): "
                             f"its {what} must be copied beside it", p)
    size = zipped.size(p)
    head = zipped.head(p, 100)
    if len(head) < 100 or int.from_bytes(head[:4], "big") != 9994:
        raise InputError("is not a Shapefile (no valid 100-byte .shp header)", p)
    declared = int.from_bytes(head[24:28], "big") * 2
    shx = sidecar(p, ".shx")
    assert shx is not None
    raw = zipped.head(shx)
    # the index: a 100-byte header, then 8 bytes a record, its length declared in the header
    shx_declared = int.from_bytes(raw[24:28], "big") * 2 if len(raw) >= 28 else None
    if (len(raw) < 100 or (len(raw) - 100) % 8 or int.from_bytes(raw[:4], "big") != 9994
            or (shx_declared is not None and len(raw) < shx_declared)):
        raise InputError(f"damaged Shapefile: its index {shx.name} is cut short or not an "
                         f"index ({len(raw)} bytes, its header says "
                         f"{shx_declared if shx_declared is not None else 'nothing'}); copy "
                         "it again (or let GDAL rebuild it: SHAPE_RESTORE_SHX=YES)", p)
    index = np.frombuffer(raw[100:], dtype=">i4").reshape(-1, 2).astype(np.int64)
    past = int(np.count_nonzero((index[:, 0] + 4 + index[:, 1]) * 2 > size))
    if size < declared or past:
        raise InputError(f"truncated Shapefile: {past} of {index.shape[0]} record(s) run past "
                         f"the end of the file ({size} bytes, its header says {declared}); "
                         "copy it again", p)
    dbf = sidecar(p, ".dbf")
    assert dbf is not None
    dsize = zipped.size(dbf)
    dhead = zipped.head(dbf, 12)
    if len(dhead) < 12:
        raise InputError(f"truncated Shapefile: {dbf.name} has no dBASE header", p)
    n_rec = int.from_bytes(dhead[4:8], "little")
    expected = int.from_bytes(dhead[8:10], "little") + n_rec * int.from_bytes(dhead[10:12],
                                                                              "little")
    if dsize < expected:
        raise InputError(f"truncated Shapefile: {dbf.name} is {dsize} bytes, its header "
                         f"says {expected} ({n_rec} records); copy it again", p)
    if n_rec != index.shape[0]:
        raise InputError(f"Shapefile parts disagree: {index.shape[0]} shapes in "
                         f"{shx.name} but {n_rec} records in {dbf.name}", p)


def shapefile_encoding(path: str | Path) -> str | None:
    """Python codec named by a Shapefile's ``.cpg`` sidecar, or ``None``.

    GDAL reads ``.cpg`` files itself but only knows some spellings (``1252``,
    ``UTF-8``, ``8859-1``, ``ANSI 1251``); ArcGIS and other tools also write e.g.
    ``ANSI 1252`` or ``Windows-1250``, which GDAL would silently read as
    ISO-8859-1. The sidecar is therefore parsed here and the encoding passed to
    the reader explicitly. Without a ``.cpg`` (or with one Python does not
    know) GDAL's own rule applies (the DBF's language driver id, else
    ISO-8859-1).
    """
    import codecs
    import re

    from geoeval.io.url_paths import as_path, is_remote

    p = as_path(path)
    if p.suffix.lower() != ".shp" or is_remote(p):  # GDAL reads a remote .cpg itself
        return None
    cpg = sidecar(p, ".cpg")
    if cpg is None:
        return None
    text = zipped.head(cpg).decode("ascii", errors="ignore").strip()
    m = re.fullmatch(r"(?i)(?:ansi|windows|cp|ms)?[ _-]?(\d{3,5})", text)
    name = f"cp{m.group(1)}" if m else text
    m = re.fullmatch(r"(?i)(?:iso[ _-]?)?8859[ _-]?(\d{1,2})", text)
    if m:
        name = f"iso-8859-{m.group(1)}"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None
