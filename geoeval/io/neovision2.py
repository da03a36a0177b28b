"""Reader for DARPA Neovision2 CSV files (Ekambaram et al. 2012, §4 and Table 4).

One CSV file per sequence, optionally inside one folder per domain::

    Frame,BoundingBox_X1,BoundingBox_Y1,...,BoundingBox_X4,BoundingBox_Y4,
    ObjectType,Occlusion,Ambiguous,Confidence,SiteInfo,Version

Each box is given by its four corners (an oriented box in general); it becomes
its axis-aligned envelope, as the protocol prescribes (§3.1). The first line
(the "format info" line) is recognised by its column names, matched without
regard to case, spaces or underscores; a file without it is read in the order
of Table 4.

Don't-care annotations (§3.7) are read from the ground truth:

* a row whose ``ObjectType`` is a don't-care-frame label (default ``DCF``,
  ``DontCareFrame``) marks its whole frame as a don't-care frame;
* a row whose ``ObjectType`` is a don't-care-region label (default ``DCR``,
  ``DontCareRegion``) is a don't-care region of its frame (all classes);
* a row whose ``ObjectType`` is a don't-care-object label (default ``DCO``,
  ``DontCare``), or whose ``Ambiguous`` flag is true, is a don't-care object
  (of its own class, or of every class for the class-less labels).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from geoeval.errors import InputError
from geoeval.io.store_paths import BoxPath, StorePath, box_path, missing, read_each

COLUMNS: tuple[str, ...] = (
    "frame", "x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4",
    "objecttype", "occlusion", "ambiguous", "confidence", "siteinfo", "version",
)
_REQUIRED = COLUMNS[:10]
_ALIASES = {f"boundingbox{c}{k}": f"{c}{k}" for c in "xy" for k in "1234"}
_ALIASES.update({"objecttype": "objecttype", "class": "objecttype", "label": "objecttype"})

_DISPLAY = {f"{c}{k}": f"BoundingBox_{c.upper()}{k}" for c in "xy" for k in "1234"}
_DISPLAY.update({"frame": "Frame", "confidence": "Confidence"})

DCF_LABELS: frozenset[str] = frozenset({"dcf", "dontcareframe"})
DCR_LABELS: frozenset[str] = frozenset({"dcr", "dontcareregion"})
DCO_LABELS: frozenset[str] = frozenset({"dco", "dontcare", "dontcareobject"})

#: Role of a row: an object, or a don't-care object, region or frame (§3.7).
ROLE_OBJECT, ROLE_DCO, ROLE_DCR, ROLE_DCF = 0, 1, 2, 3
_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0", ""})


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-']", "", text).lower()


@dataclass(frozen=True)
class Neovision2Boxes:
    """Boxes read from Neovision2 CSV files (one row per CSV row).

    Attributes
    ----------
    path : str
        The file or folder read.
    sequences : tuple of str
        Sequence keys: the file's path relative to the folder without ``.csv``
        (``"TowerF/001"``), or the file's stem for a single file.
    domains : tuple of (str or None)
        Domain of each sequence: the first folder of its key, ``None`` if the
        file sits directly in the folder read.
    files : tuple of str
        The file of each sequence (for messages).
    sequence : numpy.ndarray
        Index into ``sequences`` of each row.
    frame : numpy.ndarray
        Frame number of each row.
    boxes : numpy.ndarray
        ``(n, 4)`` axis-aligned envelopes ``(x1, y1, x2, y2)`` of the four corners.
    label : numpy.ndarray
        ``ObjectType`` of each row (str, whitespace stripped).
    role : numpy.ndarray
        ``ROLE_OBJECT``, ``ROLE_DCO``, ``ROLE_DCR`` or ``ROLE_DCF`` (ground truth
        semantics; :func:`read_neovision2` with ``dont_care=False`` gives only
        ``ROLE_OBJECT``).
    all_classes : numpy.ndarray
        True for don't-care rows that apply to every class (frames, regions and
        don't-care objects given by a class-less label).
    occlusion, ambiguous : numpy.ndarray
        The boolean flags.
    confidence : numpy.ndarray
        Confidence of each row, NaN where the column is empty or absent.
    line : numpy.ndarray
        Line number of each row in its file.
    warnings : tuple of str
    """

    path: str
    sequences: tuple[str, ...]
    domains: tuple[str | None, ...]
    files: tuple[str, ...]
    sequence: np.ndarray
    frame: np.ndarray
    boxes: np.ndarray
    label: np.ndarray
    role: np.ndarray
    all_classes: np.ndarray
    occlusion: np.ndarray
    ambiguous: np.ndarray
    confidence: np.ndarray
    line: np.ndarray
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return int(self.frame.size)


def read_neovision2(
    path: str | Path | StorePath,
    *,
    dont_care: bool = True,
    dcf_labels: Iterable[str] = DCF_LABELS,
    dcr_labels: Iterable[str] = DCR_LABELS,
    dco_labels: Iterable[str] = DCO_LABELS,
    ambiguous_is_dco: bool = True,
) -> Neovision2Boxes:
    """Read a Neovision2 CSV file, or a folder of per-sequence CSV files.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` file (one sequence) or a folder. In a folder every ``*.csv``
        file directly in it or in its sub-folders is one sequence; the first
        sub-folder level names the domain (``TowerF/001.csv``; §4). A URL too:
        ``s3://``, ``gs://``, ``az://`` (a prefix is a folder), ``https://`` (a
        file: the web has no listing).
    dont_care : bool
        Interpret don't-care annotations (ground truth). Use ``False`` for
        system output, where every row is a detection.
    dcf_labels, dcr_labels, dco_labels : iterable of str
        ``ObjectType`` values (compared without case, spaces, ``_``, ``-``,
        ``'``) marking don't-care frames, regions and class-less objects.
    ambiguous_is_dco : bool
        A ground-truth row with ``Ambiguous`` true is a don't-care object of its
        class (§3.7: objects "which can't be reliably identified").

    Returns
    -------
    Neovision2Boxes

    Raises
    ------
    InputError
        Missing path, empty folder, unknown header, a row with the wrong number
        of fields, a value that is not a number / boolean, a negative or
        non-integer frame, a confidence outside ``[0, 1]``. The message names
        the file and line.

    References
    ----------
    Ekambaram et al., *Neovision2 Performance Evaluation Protocol* v3.0 (2012),
    §3.1 (envelopes of oriented boxes), §3.7 (don't-care annotations), §4 and
    Table 4 (file layout).
    """
    root = box_path(path)  # a URL: read through geoeval.io.stores
    if root.is_dir():
        files = sorted(p for p in root.rglob("*.csv") if p.is_file())
        if not files:
            raise InputError("folder holds no .csv file", root)
        keys = [p.relative_to(root).with_suffix("").as_posix() for p in files]
        domains = [k.split("/")[0] if "/" in k else None for k in keys]
    elif root.is_file():
        files, keys, domains = [root], [root.stem], [None]
    else:
        raise missing(root)
    sets = (
        {_norm(s) for s in dcf_labels},
        {_norm(s) for s in dcr_labels},
        {_norm(s) for s in dco_labels},
    )
    parts = [_read_file(f, text) for f, text in zip(files, read_each(files, _text),
                                                     strict=True)]
    n = np.array([p["frame"].size for p in parts], dtype=np.int64)

    def cat(key: str, dtype: object) -> np.ndarray:
        arrays = [p[key] for p in parts]
        return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)

    label = cat("label", object)
    ambiguous = cat("ambiguous", bool)
    role = np.full(label.size, ROLE_OBJECT, dtype=np.int8)
    all_classes = np.zeros(label.size, dtype=bool)
    if dont_care and label.size:
        uniq, inv = np.unique(label.astype(str), return_inverse=True)
        normed = np.array([_norm(s) for s in uniq], dtype=object)[inv.reshape(-1)]
        if ambiguous_is_dco:
            role[ambiguous] = ROLE_DCO
        for code, labels in ((ROLE_DCO, sets[2]), (ROLE_DCR, sets[1]), (ROLE_DCF, sets[0])):
            hit = np.isin(normed, list(labels))
            role[hit] = code
            all_classes |= hit
    return Neovision2Boxes(
        path=str(root),
        sequences=tuple(keys),
        domains=tuple(domains),
        files=tuple(str(f) for f in files),
        sequence=np.repeat(np.arange(len(files), dtype=np.int64), n),
        frame=cat("frame", np.int64),
        boxes=cat("boxes", float).reshape(-1, 4),
        label=label,
        role=role,
        all_classes=all_classes,
        occlusion=cat("occlusion", bool),
        ambiguous=ambiguous,
        confidence=cat("confidence", float),
        line=cat("line", np.int64),
    )


def _header(fields: list[str]) -> list[str] | None:
    """Canonical column names if ``fields`` is the format-info line, else None."""
    names = [_norm(f) for f in fields]
    names = [_ALIASES.get(n, n) for n in names]
    if "frame" not in names:
        return None
    return names


def _text(path: BoxPath) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path) from exc


def _read_file(path: BoxPath, text: str) -> dict[str, np.ndarray]:
    rows: list[list[str]] = []
    lines: list[int] = []
    reader = csv.reader(io.StringIO(text))
    names: list[str] | None = None
    try:
        for fields in reader:
            if not fields or all(not f.strip() for f in fields):
                continue
            if names is None and not rows:
                names = _header(fields)
                if names is not None:
                    missing = [c for c in _REQUIRED if c not in names]
                    if missing:
                        raise InputError(
                            f"line {reader.line_num}: header lacks column(s) "
                            f"{', '.join(missing)}", path)
                    continue
                names = list(COLUMNS)
            rows.append(fields)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputError(f"line {reader.line_num}: {exc}", path) from exc
    if names is None:
        names = list(COLUMNS)
    return _columns(path, names, rows, np.array(lines, dtype=np.int64))


def _columns(
    path: BoxPath, names: list[str], rows: list[list[str]], lines: np.ndarray
) -> dict[str, np.ndarray]:
    width = len(names)
    counts = np.array([len(r) for r in rows], dtype=np.int64)
    # a trailing empty field (a final comma) is tolerated; fewer fields is not
    short = np.flatnonzero(counts < 10)
    if short.size:
        k = short[0]
        raise InputError(f"line {lines[k]}: {counts[k]} fields, expected {width}", path)
    padded = [r + [""] * (width - len(r)) if len(r) < width else r[:width] for r in rows]
    cols = list(zip(*padded, strict=True)) if padded else [()] * width
    col = {name: i for i, name in enumerate(names)}

    def column(name: str) -> np.ndarray:
        if name not in col:
            return np.full(len(rows), "", dtype=object)
        return np.array([v.strip() for v in cols[col[name]]], dtype=object)

    def numbers(name: str, allow_empty: bool = False) -> np.ndarray:
        raw = cols[col[name]] if name in col else ("",) * len(rows)
        try:
            if allow_empty:
                values = np.fromiter((float(v) if v.strip() else np.nan for v in raw),
                                     dtype=float, count=len(raw))
            else:
                values = np.fromiter(map(float, raw), dtype=float, count=len(raw))
        except ValueError:
            values = None
        if values is None:
            bad_k = _first_bad(raw, allow_empty)
        else:
            finite = np.isfinite(values)
            if allow_empty:
                finite |= np.array([not v.strip() for v in raw], dtype=bool) if len(raw) else \
                    np.zeros(0, dtype=bool)
            bad_k = None if finite.all() else int(np.flatnonzero(~finite)[0])
        if bad_k is not None:
            raise InputError(f"line {lines[bad_k]}: {_DISPLAY.get(name, name)} "
                             f"{raw[bad_k].strip()!r} is not a finite number", path)
        return values

    frame = numbers("frame")
    bad = (frame < 0) | (frame != np.round(frame))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"line {lines[k]}: Frame {frame[k]:g} is not a non-negative integer", path)
    xs = np.stack([numbers(f"x{i}") for i in range(1, 5)], axis=1)
    ys = np.stack([numbers(f"y{i}") for i in range(1, 5)], axis=1)
    boxes = np.stack([xs.min(1), ys.min(1), xs.max(1), ys.max(1)], axis=1)
    label = column("objecttype")
    empty = np.flatnonzero(label == "")
    if empty.size:
        raise InputError(f"line {lines[empty[0]]}: empty ObjectType", path)
    confidence = numbers("confidence", allow_empty=True)
    bad = (confidence < 0) | (confidence > 1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"line {lines[k]}: Confidence {confidence[k]:g} outside [0, 1]", path)
    return {
        "frame": frame.astype(np.int64),
        "boxes": boxes,
        "label": label.astype(object),
        "occlusion": _flags(path, column("occlusion"), lines, "Occlusion"),
        "ambiguous": _flags(path, column("ambiguous"), lines, "Ambiguous"),
        "confidence": confidence,
        "line": lines,
    }


def _first_bad(raw: tuple[str, ...], allow_empty: bool) -> int:
    """Position of the first value that does not parse as a finite float."""
    for k, value in enumerate(raw):
        if allow_empty and not value.strip():
            continue
        try:
            if np.isfinite(float(value)):
                continue
        except ValueError:
            pass
        return k
    return 0


def _flags(path: BoxPath, raw: np.ndarray, lines: np.ndarray, name: str) -> np.ndarray:
    low = np.array([v.lower() for v in raw], dtype=object)
    true = np.isin(low, list(_TRUE))
    bad = ~(true | np.isin(low, list(_FALSE)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"line {lines[k]}: {name} {str(raw[k])!r} is not TRUE or FALSE", path)
    return true
