"""DOTA's files: labelTxt ground truth and ``Task1_<class>.txt`` / ``Task2_<class>.txt`` results.

The formats of the DOTA data set (Xia et al. 2018; the devkit of Ding et al.,
CAPTAIN-WHU/DOTA_devkit):

* ground truth: one ``<image>.txt`` per image, optional header lines
  ``imagesource:<text>`` and ``gsd:<metres per pixel>`` (``gsd:null`` when
  unknown), then one object per line ``x1 y1 x2 y2 x3 y3 x4 y4 <class>
  [<difficult>]`` (four corners in the annotator's order, difficult 0 or 1,
  0 when absent);
* results: one file per class, ``Task1_<class>.txt`` with lines
  ``<image> <confidence> x1 y1 x2 y2 x3 y3 x4 y4`` (oriented boxes) or
  ``Task2_<class>.txt`` with ``<image> <confidence> xmin ymin xmax ymax``
  (horizontal boxes).

Corners are kept as written (order, orientation, self-intersections): the
objects come back as a :class:`~geoeval.io.boxes.BoxSet` with
:class:`~geoeval.io.boxes.Outlines` (task 1) or boxes (task 2). Every malformed
line is an :class:`~geoeval.errors.InputError` naming the file and the line.
Both kinds of files are read by pyarrow's CSV parser (correctly rounded, like
Python's ``float``: the label files' object lines all in one call); a file it
refuses is read again line by line, which either accepts it (runs of blanks, a
blank line, a line without difficult flag) or names the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, swapped
from geoeval.io._box_text import _decoded, _file_bytes
from geoeval.io._boxset import BoxSet, _number, _shown, checked_class
from geoeval.io._outlines import Outlines
from geoeval.io.store_paths import (
    BoxPath,
    StorePath,
    box_path,
    check_listable,
    missing,
    read_each,
)
from geoeval.io.store_paths import shown as shown_name

#: Header keys of a labelTxt file.
HEADERS = ("imagesource", "gsd")
_CORNERS = ("x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4")
_BOX = ("xmin", "ymin", "xmax", "ymax")
_RESULT = re.compile(r"^Task([12])_(.+)\.txt$")


def read_dota_labels(path: str | Path) -> BoxSet:
    """Read a folder of DOTA labelTxt files (one per image; image key = file name stem).

    Returns
    -------
    BoxSet
        The reference: one object per line, its four corners as
        :class:`~geoeval.io.boxes.Outlines` (``boxes`` their bounding boxes),
        ``difficult`` from the tenth field, ``lines`` the source lines. An image
        whose file holds only headers (or nothing) has no object.

    Raises
    ------
    InputError
        A folder without ``.txt`` file, a header after the first object, an
        unknown header, a line that is not 9 or 10 fields, a corner that is not
        a finite number, a difficult flag that is not a whole number ≥ 0.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "P0001.txt").write_text(
    ...     "imagesource:GoogleEarth\\ngsd:0.15\\n10 10 50 10 50 30 10 30 plane 0\\n")
    >>> ref = read_dota_labels(d)
    >>> ref.images, ref.classes.tolist(), ref.boxes.tolist()
    (('P0001',), ['plane'], [[10.0, 10.0, 50.0, 30.0]])
    """
    root = box_path(path)
    if not root.exists():
        raise missing(root)
    files = [root] if root.is_file() else sorted(
        (q for q in root.iterdir() if q.is_file() and q.suffix.lower() == ".txt"),
        key=lambda q: q.stem)
    if not files:
        raise InputError("no .txt labelTxt file in this folder", root)
    if all(_RESULT.match(q.name) for q in files):
        raise InputError(f"{files[0].name} is a file of DOTA results, not labelTxt: "
                         + swapped("labelTxt folder", "folder of Task1_<class>.txt files"),
                         root)
    stems = [q.stem for q in files]
    dup = next((a for a, b in zip(stems, stems[1:], strict=False) if a == b), None)
    if dup is not None:
        raise InputError(f"image {dup!r} has two label files", root)
    raw = list(read_each(files, _file_bytes))  # a URL's objects fetched a few at a time
    fast = _labels_at_once(files, raw, root)
    if fast is not None:
        return fast
    cols = _Objects()
    for f, data in zip(files, raw, strict=True):
        _label_file(f, data, _shown(f, root), cols)
    return cols.assemble(root)


def _labels_at_once(files: list[BoxPath], raw: list[bytes], root: BoxPath) -> BoxSet | None:
    """Every file's object lines parsed in one pyarrow call (headers checked here), or
    ``None`` when any file needs the line reader (a 9-field line, a blank line, a bad
    value: it names the line)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    bodies, counts, first = [], [], []
    for f, data in zip(files, raw, strict=True):
        data = data.removeprefix(b"\xef\xbb\xbf")
        start, line = 0, 1
        while data.startswith((b"imagesource:", b"gsd:"), start):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            token = data[start:end].decode("utf-8", "replace").strip()
            if " " in token:
                return None
            _header(token, f"{_shown(f, root)}:{line}", 0)
            start, line = end + 1, line + 1
        body = data[start:]
        if body and not body.endswith(b"\n"):
            body += b"\n"
        if body.startswith(b"\n") or b"\n\n" in body or b"\r" in body:
            return None
        bodies.append(body)
        counts.append(body.count(b"\n"))
        first.append(line)
    names = [f"c{i}" for i in range(10)]
    types = {n: pa.float64() for n in names[:8]}
    types.update({names[8]: pa.dictionary(pa.int32(), pa.string()),
                  names[9]: pa.dictionary(pa.int32(), pa.string())})
    n = int(sum(counts))
    if n:
        try:
            table = pacsv.read_csv(
                pa.BufferReader(b"".join(bodies)),
                read_options=pacsv.ReadOptions(column_names=names),
                parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False),
                convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                                     strings_can_be_null=False))
        except pa.ArrowException:  # any Arrow error: the line reader names it
            return None
        if table.num_rows != n:
            return None
        corners = np.column_stack([np.concatenate([_numbers(c, np.float64)
                                                   for c in table.column(i).chunks])
                                   for i in range(8)])
        classes = _dictionary_values(table.column(8))
        flags = _dictionary_values(table.column(9))
        if not np.isfinite(corners).all() or not all(v.isdigit() for v in set(flags.tolist())):
            return None
    else:
        corners, classes, flags = np.zeros((0, 8)), np.zeros(0, dtype=str), np.zeros(0, str)
    image = np.repeat(np.arange(len(files), dtype=np.int64), counts)
    within = np.arange(n, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return BoxSet(boxes=None, image_index=image, classes=classes.astype(str),
                  images=tuple(q.stem for q in files),
                  difficult=np.char.strip(flags.astype(str), "0") != "",
                  lines=np.asarray(first, dtype=np.int64)[image] + within,
                  path=str(root), fmt="dota", outlines=Outlines.from_quads(corners))


def _dictionary_values(column: Any) -> np.ndarray:
    """A dictionary-typed pyarrow column as a numpy array of its strings."""
    parts = [np.asarray(c.dictionary.to_pylist() or [""], dtype=str)[_numbers(c.indices,
                                                                              np.int32)]
             for c in column.chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=str)


@dataclass
class _Objects:
    images: list[str]
    shown: list[str]
    corners: list[np.ndarray]
    image: list[int]
    classes: list[str]
    difficult: list[bool]
    lines: list[int]

    def __init__(self) -> None:
        self.images, self.shown, self.corners, self.image = [], [], [], []
        self.classes, self.difficult, self.lines = [], [], []

    def assemble(self, root: BoxPath) -> BoxSet:
        n = len(self.classes)
        corners = np.concatenate(self.corners) if self.corners else np.zeros((0, 8))
        bad = np.argwhere(~np.isfinite(corners))
        if bad.size:  # 'inf' and 'nan' parse as floats
            k, field = int(bad[0, 0]), int(bad[0, 1])
            raise InputError(f"{_CORNERS[field]} is not finite: {corners[k, field]!r}",
                             f"{self.shown[self.image[k]]}:{self.lines[k]}")
        outlines = Outlines.from_quads(corners)
        # files are read in the order of their image keys: image index = file index
        return BoxSet(
            boxes=None, image_index=np.asarray(self.image, dtype=np.int64).reshape(n),
            classes=np.asarray(self.classes, dtype=str) if n else np.zeros(0, dtype=str),
            images=tuple(self.images),
            difficult=np.asarray(self.difficult, dtype=bool).reshape(n),
            lines=np.asarray(self.lines, dtype=np.int64).reshape(n),
            path=str(root), fmt="dota", outlines=outlines)


def _label_file(f: BoxPath, data: bytes, shown: str, cols: _Objects) -> None:
    """One labelTxt file's objects: the whole file at once (headers, then lines of 9 or 10
    fields), or line by line when something is off, which names the line."""
    cols.images.append(f.stem)
    cols.shown.append(shown)
    index = len(cols.images) - 1
    rows = [(n, parts) for n, parts in enumerate(
        (line.split() for line in _decoded(data, f).splitlines()), start=1) if parts]
    k = 0
    while k < len(rows) and len(rows[k][1]) == 1 and ":" in rows[k][1][0]:
        _header(rows[k][1][0], f"{shown}:{rows[k][0]}", 0)
        k += 1
    body = rows[k:]
    try:
        if any(len(parts) not in (9, 10) for _, parts in body):
            raise ValueError
        corners = np.array([parts[:8] for _, parts in body], dtype=float).reshape(-1, 8)
        flags = [parts[9] if len(parts) == 10 else "0" for _, parts in body]
        if not all(flag.isdigit() for flag in flags):
            raise ValueError
    except ValueError:
        _label_lines(body, shown)  # raises, naming the line (numpy reads what float reads)
        corners = np.array([[float(t) for t in parts[:8]] for _, parts in body]).reshape(-1, 8)
        flags = [parts[9] if len(parts) == 10 else "0" for _, parts in body]
    cols.corners.append(corners)
    cols.classes += [checked_class(parts[8], f"{shown}:{n}") for n, parts in body]
    cols.difficult += [flag.strip("0") != "" for flag in flags]
    cols.image += [index] * len(body)
    cols.lines += [n for n, _ in body]


def _label_lines(rows: list[tuple[int, list[str]]], shown: str) -> None:
    """The object lines checked one by one: the first bad one is an error naming it."""
    for lineno, parts in rows:
        where = f"{shown}:{lineno}"
        if len(parts) == 1 and ":" in parts[0]:
            _header(parts[0], where, 1)
        if len(parts) not in (9, 10):
            raise InputError(f"expected 9 or 10 fields (x1 y1 x2 y2 x3 y3 x4 y4 class "
                             f"[difficult]), got {len(parts)}", where)
        for t, name in zip(parts, _CORNERS, strict=False):
            _number(t, where, name)
        if len(parts) == 10 and not parts[9].isdigit():  # the devkit reads int(flag)
            raise InputError(f"difficult must be a whole number (0 or 1), got {parts[9]!r}",
                             where)


def _header(token: str, where: str, objects: int) -> None:
    key, _, value = token.partition(":")
    if key not in HEADERS:
        raise InputError(f"unknown header {key + ':'!r} (labelTxt headers are "
                         "'imagesource:' and 'gsd:')", where)
    if objects:
        raise InputError(f"header {key + ':'!r} after the first object", where)
    if key == "gsd" and value.lower() not in ("null", "none", ""):
        gsd = _number(value, where, "gsd")
        if gsd <= 0:
            raise InputError(f"gsd must be positive, got {value!r}", where)


def dota_result_files(path: str | Path | StorePath, task: int
                      ) -> tuple[dict[str, BoxPath], list[str]]:
    """The ``Task{task}_<class>.txt`` files of a results folder (class -> file), and the
    names of the other task's files present (for a hint when none of ``task`` is)."""
    root = box_path(path)
    check_listable(root)  # a folder on the web: it has no listing
    if not root.exists():
        raise missing(root)
    if not root.is_dir():
        holder = (f": give the folder holding it, {root.parent}" if _RESULT.match(root.name)
                  else "")
        raise InputError("a file, where a folder of Task1_<class>.txt / Task2_<class>.txt "
                         f"files is expected{holder}", root)
    found: dict[str, BoxPath] = {}
    other: list[str] = []
    for q in sorted(root.iterdir()):
        m = _RESULT.match(q.name)
        if not (m and q.is_file()):
            continue
        if int(m.group(1)) == task:
            found[m.group(2)] = q
        else:
            other.append(q.name)
    return found, other


def read_dota_results(path: str | Path | StorePath, task: int, images: tuple[str, ...],
                      classes: tuple[str, ...] | None = None) -> BoxSet:
    """Read a folder of ``Task1_<class>.txt`` (``task=1``) or ``Task2_<class>.txt`` files.

    Parameters
    ----------
    path : str or Path
        The results folder.
    task : {1, 2}
        Oriented boxes (four corners) or horizontal boxes (``xmin ymin xmax ymax``).
    images : tuple of str
        The reference's image keys; a result on another image is an error naming
        the file and line (DOTA_devkit stops there too).
    classes : tuple of str, optional
        The classes to read (others' files are left unread); default every file.

    Returns
    -------
    BoxSet
        The submission, class files in ``classes`` order, lines in file order
        (DOTA_devkit ranks a class's detections in that order); ``images`` is
        ``images``; task 1 with :class:`~geoeval.io.boxes.Outlines`.
    """
    root = box_path(path)
    found, _ = dota_result_files(root, task)
    names = [c for c in (classes if classes is not None else tuple(found)) if c in found]
    fields = 10 if task == 1 else 6
    image_parts, coord_parts, score_parts, class_parts = [], [], [], []
    files = [found[c] for c in names]
    for c, f, data in zip(names, files, read_each(files, _file_bytes), strict=True):
        shown = _shown(f, root)
        pos, score, coords = _result_columns(f, data, shown, fields, images)
        if task == 2:
            _check_box_order(coords, f, data, shown)
        image_parts.append(pos)
        coord_parts.append(coords)
        score_parts.append(score)
        class_parts.append(np.full(pos.size, c))
    n = int(sum(p.size for p in score_parts))
    coords = np.concatenate(coord_parts) if coord_parts else np.zeros((0, fields - 2))
    image_index = (np.concatenate(image_parts).astype(np.int64) if image_parts
                   else np.zeros(0, dtype=np.int64))
    cls = np.concatenate(class_parts) if n else np.zeros(0, dtype=str)
    scores = np.concatenate(score_parts) if score_parts else np.zeros(0)
    common = dict(image_index=image_index, classes=cls, images=tuple(images), scores=scores,
                  path=shown_name(path), fmt=f"dota-task{task}")
    if task == 1:
        return BoxSet(boxes=None, outlines=Outlines.from_quads(coords), **common)
    return BoxSet(boxes=coords.reshape(n, 4), **common)


def _result_columns(f: BoxPath, data: bytes, shown: str, fields: int,
                    images: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Image index (into ``images``), confidence and coordinates of each line of a result
    file (``data``, the bytes of ``f``, called ``shown``); a line on an image outside
    ``images`` is an error naming it."""
    fast = _read_fast(data, fields, images)
    if fast is not None:
        pos, values, unknown = fast
    else:
        pos, values, unknown = _read_slow(f, data, shown, fields, images)
    if unknown is not None:
        row, name = unknown
        raise InputError(f"image {name!r} has no ground-truth file ({int((pos < 0).sum())} "
                         "line(s) of this file)", f"{shown}:{_line_of_row(f, data, row)}")
    return pos, values[:, 0].copy(), np.ascontiguousarray(values[:, 1:])


def _read_fast(data: bytes, fields: int, images: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray, tuple[int, str] | None] | None:
    """pyarrow's CSV reader with one space as delimiter, or ``None`` when it refuses the
    file (then :func:`_read_slow` names the problem, or accepts what pyarrow does not:
    several blanks in a row, a trailing blank, tabs). Image names come as a dictionary
    column: one lookup per distinct name, not per line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not data:
        return np.zeros(0, dtype=np.int64), np.zeros((0, fields - 1)), None
    names = [f"c{i}" for i in range(fields)]
    types = {n: pa.float64() for n in names[1:]}
    types[names[0]] = pa.dictionary(pa.int32(), pa.string())
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False,
                                             ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                                 strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowException, UnicodeDecodeError):  # the line reader names the problem
        return None
    if not table.num_rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, fields - 1)), None
    values = np.column_stack([np.concatenate([_numbers(c, np.float64)
                                              for c in table.column(i).chunks])
                              for i in range(1, fields)])
    if not np.isfinite(values).all():
        return None
    where = {k: i for i, k in enumerate(images)}
    parts = []
    for chunk in table.column(0).chunks:
        lut = np.array([where.get(k, -1) for k in chunk.dictionary.to_pylist()] or [-1],
                       dtype=np.int64)
        parts.append(lut[_numbers(chunk.indices, np.int32)])
    pos = np.concatenate(parts)
    unknown = None
    if (pos < 0).any():
        row = int(np.flatnonzero(pos < 0)[0])
        unknown = (row, str(table.column(0)[row].as_py()))
    return pos, values, unknown


def _numbers(array: Any, dtype: type) -> np.ndarray:
    """A pyarrow array of numbers without nulls as a numpy view of its data buffer
    (``to_numpy`` would import pandas: a second of start-up for the command line)."""
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array),
                         offset=array.offset * np.dtype(dtype).itemsize)


def _read_slow(f: BoxPath, data: bytes, shown: str, fields: int, images: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray, tuple[int, str] | None]:
    names = ("confidence", *(_CORNERS if fields == 10 else _BOX))
    where_image = {k: i for i, k in enumerate(images)}
    pos, rows = [], []
    unknown = None
    for lineno, raw in enumerate(_decoded(data, f).splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        where = f"{shown}:{lineno}"
        if len(parts) != fields:
            layout = "x1 y1 x2 y2 x3 y3 x4 y4" if fields == 10 else "xmin ymin xmax ymax"
            raise InputError(f"expected {fields} fields (image confidence {layout}), "
                             f"got {len(parts)}", where)
        pos.append(where_image.get(parts[0], -1))
        if pos[-1] < 0 and unknown is None:
            unknown = (len(pos) - 1, parts[0])
        rows.append([_number(t, where, name) for t, name in zip(parts[1:], names,
                                                                 strict=True)])
    values = np.asarray(rows, dtype=float).reshape(len(rows), fields - 1)
    return np.asarray(pos, dtype=np.int64), values, unknown


def _line_of_row(f: BoxPath, data: bytes, row: int) -> int:
    """The line number of data row ``row`` (blank lines skipped, as the readers do) of
    ``data``, the bytes of ``f``."""
    seen = -1
    for lineno, raw in enumerate(_decoded(data, f).splitlines(), start=1):
        if raw.split():
            seen += 1
            if seen == row:
                return lineno
    return row + 1


def _check_box_order(coords: np.ndarray, f: BoxPath, data: bytes, shown: str) -> None:
    bad = np.flatnonzero((coords[:, 2] < coords[:, 0]) | (coords[:, 3] < coords[:, 1]))
    if bad.size:
        raise InputError("xmax < xmin or ymax < ymin (task 2 boxes are xmin ymin xmax ymax)",
                         f"{shown}:{_line_of_row(f, data, int(bad[0]))}")
