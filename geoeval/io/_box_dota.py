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
Result files are read by pyarrow's CSV parser (correctly rounded, like
Python's ``float``); a file it refuses is read again line by line, which
either accepts it (runs of blanks, a trailing blank) or names the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from geoeval.errors import InputError
from geoeval.io._box_text import _read_text
from geoeval.io._boxset import BoxSet, _number, _shown
from geoeval.io._outlines import Outlines

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
    root = Path(path)
    if not root.exists():
        raise InputError("no such file or folder", root)
    files = [root] if root.is_file() else sorted(
        (q for q in root.iterdir() if q.is_file() and q.suffix.lower() == ".txt"),
        key=lambda q: q.stem)
    if not files:
        raise InputError("no .txt labelTxt file in this folder", root)
    stems = [q.stem for q in files]
    dup = next((a for a, b in zip(stems, stems[1:], strict=False) if a == b), None)
    if dup is not None:
        raise InputError(f"image {dup!r} has two label files", root)
    cols = _Objects()
    for f in files:
        _label_file(f, _shown(f, root), cols)
    return cols.assemble(root)


@dataclass
class _Objects:
    images: list[str]
    shown: list[str]
    corners: list[list[float]]
    image: list[int]
    classes: list[str]
    difficult: list[bool]
    lines: list[int]

    def __init__(self) -> None:
        self.images, self.shown, self.corners, self.image = [], [], [], []
        self.classes, self.difficult, self.lines = [], [], []

    def assemble(self, root: Path) -> BoxSet:
        n = len(self.corners)
        corners = np.asarray(self.corners, dtype=float).reshape(n, 8)
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


def _label_file(f: Path, shown: str, cols: _Objects) -> None:
    cols.images.append(f.stem)
    cols.shown.append(shown)
    index = len(cols.images) - 1
    objects = 0
    for lineno, raw in enumerate(_read_text(f).splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) == 1 and ":" in parts[0]:
            _header(parts[0], f"{shown}:{lineno}", objects)
            continue
        if len(parts) not in (9, 10):
            raise InputError(f"expected 9 or 10 fields (x1 y1 x2 y2 x3 y3 x4 y4 class "
                             f"[difficult]), got {len(parts)}", f"{shown}:{lineno}")
        try:
            cols.corners.append(list(map(float, parts[:8])))
        except ValueError:  # name the field
            for t, name in zip(parts, _CORNERS, strict=False):
                _number(t, f"{shown}:{lineno}", name)
        cols.classes.append(parts[8])
        flag = parts[9] if len(parts) == 10 else "0"
        if not flag.isdigit():  # the devkit reads int(flag); 0 is not difficult
            raise InputError(f"difficult must be a whole number (0 or 1), got {flag!r}",
                             f"{shown}:{lineno}")
        cols.difficult.append(flag.strip("0") != "")
        cols.image.append(index)
        cols.lines.append(lineno)
        objects += 1


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


def dota_result_files(path: str | Path, task: int) -> tuple[dict[str, Path], list[str]]:
    """The ``Task{task}_<class>.txt`` files of a results folder (class -> file), and the
    names of the other task's files present (for a hint when none of ``task`` is)."""
    root = Path(path)
    if not root.exists():
        raise InputError("no such file or folder", root)
    if not root.is_dir():
        raise InputError("expected a folder of Task1_<class>.txt / Task2_<class>.txt "
                         "files", root)
    found: dict[str, Path] = {}
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


def read_dota_results(path: str | Path, task: int, images: tuple[str, ...],
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
    found, _ = dota_result_files(path, task)
    names = [c for c in (classes if classes is not None else tuple(found)) if c in found]
    fields = 10 if task == 1 else 6
    image_parts, coord_parts, score_parts, class_parts = [], [], [], []
    for c in names:
        f = found[c]
        shown = _shown(f, Path(path))
        pos, score, coords = _result_columns(f, shown, fields, images)
        if task == 2:
            _check_box_order(coords, f, shown)
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
                  path=str(path), fmt=f"dota-task{task}")
    if task == 1:
        return BoxSet(boxes=None, outlines=Outlines.from_quads(coords), **common)
    return BoxSet(boxes=coords.reshape(n, 4), **common)


def _result_columns(f: Path, shown: str, fields: int, images: tuple[str, ...]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Image index (into ``images``), confidence and coordinates of each line of a result
    file; a line on an image outside ``images`` is an error naming it."""
    fast = _read_fast(f, fields, images)
    if fast is not None:
        pos, values, unknown = fast
    else:
        pos, values, unknown = _read_slow(f, shown, fields, images)
    if unknown is not None:
        row, name = unknown
        raise InputError(f"image {name!r} has no ground-truth file ({int((pos < 0).sum())} "
                         "line(s) of this file)", f"{shown}:{_line_of_row(f, row)}")
    return pos, values[:, 0].copy(), np.ascontiguousarray(values[:, 1:])


def _read_fast(f: Path, fields: int, images: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray, tuple[int, str] | None] | None:
    """pyarrow's CSV reader with one space as delimiter, or ``None`` when it refuses the
    file (then :func:`_read_slow` names the problem, or accepts what pyarrow does not:
    several blanks in a row, a trailing blank, tabs)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    if f.stat().st_size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, fields - 1)), None
    names = [f"c{i}" for i in range(fields)]
    try:
        table = pacsv.read_csv(
            f,
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False,
                                             ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: (pa.string() if i == 0 else pa.float64())
                              for i, n in enumerate(names)},
                null_values=[], strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    if not table.num_rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, fields - 1)), None
    values = np.column_stack([table.column(i).to_numpy() for i in range(1, fields)])
    if not np.isfinite(values).all():
        return None
    found = pc.index_in(table.column(0), value_set=pa.array(images, type=pa.string()))
    pos = found.fill_null(-1).to_numpy().astype(np.int64)
    unknown = None
    if (pos < 0).any():
        row = int(np.flatnonzero(pos < 0)[0])
        unknown = (row, table.column(0)[row].as_py())
    return pos, values, unknown


def _read_slow(f: Path, shown: str, fields: int, images: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray, tuple[int, str] | None]:
    names = ("confidence", *(_CORNERS if fields == 10 else _BOX))
    where_image = {k: i for i, k in enumerate(images)}
    pos, rows = [], []
    unknown = None
    for lineno, raw in enumerate(_read_text(f).splitlines(), start=1):
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


def _line_of_row(f: Path, row: int) -> int:
    """The line number of data row ``row`` (blank lines skipped, as the readers do)."""
    seen = -1
    for lineno, raw in enumerate(_read_text(f).splitlines(), start=1):
        if raw.split():
            seen += 1
            if seen == row:
                return lineno
    return row + 1


def _check_box_order(coords: np.ndarray, f: Path, shown: str) -> None:
    bad = np.flatnonzero((coords[:, 2] < coords[:, 0]) | (coords[:, 3] < coords[:, 1]))
    if bad.size:
        raise InputError("xmax < xmin or ymax < ymin (task 2 boxes are xmin ymin xmax ymax)",
                         f"{shown}:{_line_of_row(f, int(bad[0]))}")
