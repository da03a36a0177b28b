"""Line formats: Padilla et al.'s text format and YOLO text (see :mod:`geoeval.io.boxes`)."""

from __future__ import annotations

import math

import numpy as np

from geoeval.errors import InputError, swapped
from geoeval.io._boxset import (
    BoxColumns,
    BoxSet,
    ImageSize,
    _number,
    _shown,
    _Sizes,
    box_files,
    checked_class,
    with_outside_warnings,
)
from geoeval.io.store_paths import BoxPath, read_each

_FIELD_NAMES = {"xyrb": ("left", "top", "right", "bottom"),
                "xywh": ("left", "top", "width", "height")}
_REL_NAMES = ("centre x", "centre y", "width", "height")
#: What a reference line of six fields (a detection's: with a confidence) adds.
SWAPPED = ": a detection line (with a confidence), so " + swapped("ground truth",
                                                                  "detections")


def _read_text(f: BoxPath) -> str:
    """The text of one box file (UTF-8, a BOM allowed); an :class:`InputError` otherwise."""
    return _decoded(_file_bytes(f), f)


def _file_bytes(f: BoxPath) -> bytes:
    """The bytes of one box file (a local file or an object: :mod:`geoeval.io.store_paths`);
    an :class:`InputError` naming it otherwise."""
    try:
        return f.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", f) from exc


def _decoded(data: bytes, f: BoxPath) -> str:
    """``data``, the bytes of ``f``, as UTF-8 text (a BOM allowed)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{f}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                         f"offset {exc.start})") from None


def relative_to_absolute(
    cx: float, cy: float, bw: float, bh: float, size: ImageSize
) -> tuple[tuple[float, float, float, float], bool]:
    """Relative ``cx cy w h`` -> absolute ``x1 y1 x2 y2`` as Padilla et al.'s converter does.

    Padilla et al. (2020), Object-Detection-Metrics, ``convertToAbsoluteValues``:
    ``x1 = round((2 cx − w) W / 2)``, ``x2 = x1 + round(w W)`` (the same in y,
    Python's round-half-to-even), then clipped to ``[0, W − 1]`` × ``[0, H − 1]``.
    Returns the box and whether clipping changed it.
    """
    w, h = size
    x1 = float(round((2 * cx - bw) * w / 2))
    y1 = float(round((2 * cy - bh) * h / 2))
    x2 = x1 + round(bw * w)
    y2 = y1 + round(bh * h)
    c1, d1 = max(x1, 0.0), max(y1, 0.0)
    c2 = w - 1 if x2 >= w else x2
    d2 = h - 1 if y2 >= h else y2
    return (c1, d1, float(c2), float(d2)), (c1, d1, c2, d2) != (x1, y1, x2, y2)


def _read_lines(
    path: BoxPath,
    side: str | None,
    fmt: str,
    box_format: str,
    relative: bool,
    sizes: _Sizes,
    names: list[str] | None,
) -> BoxSet:
    files = box_files(path, ".txt", side, "box")
    cols = BoxColumns()
    lines: list[int] = []
    class_ids: list[int] = []
    n_clipped = 0
    for f, text in zip(files, read_each(files, _read_text), strict=True):
        key = cols.new_image(f)
        shown = _shown(f, path)
        for lineno, raw in enumerate(text.splitlines(), start=1):
            fields = raw.split()
            if not fields:
                continue
            where = f"{shown}:{lineno}"
            if side is None:
                side = "submission" if len(fields) == 6 else "reference"
            want = 6 if side == "submission" else 5
            if len(fields) != want:
                what = "detection" if side == "submission" else "ground-truth"
                raise InputError(f"expected {want} fields ({what}), got {len(fields)}"
                                 + (SWAPPED if side == "reference" and len(fields) == 6
                                    else ""), where)
            if fmt == "yolo":
                cls_name, cid, score, box = _yolo_line(fields, side, names, where)
                w, h = sizes.get(key, where)
                cx, cy, bw, bh = box
                x1, y1 = (cx - bw / 2) * w, (cy - bh / 2) * h
                x2, y2 = (cx + bw / 2) * w, (cy + bh / 2) * h
                class_ids.append(cid)
            else:
                cls_name = fields[0]
                off = 2 if side == "submission" else 1
                score = _number(fields[1], where, "confidence") if side == "submission" else 0.0
                if relative:
                    vals = [_number(t, where, n)
                            for t, n in zip(fields[off:], _REL_NAMES, strict=True)]
                    _check_unit(vals, _REL_NAMES, where, "relative coordinates: centre x, "
                                "centre y, width, height")
                    size = sizes.get(key, where)
                    (x1, y1, x2, y2), clipped = relative_to_absolute(*vals, size)
                    n_clipped += clipped
                else:
                    a, b, c, d = (_number(t, where, n) for t, n in
                                  zip(fields[off:], _FIELD_NAMES[box_format], strict=True))
                    if box_format == "xywh":
                        if c < 0 or d < 0:
                            raise InputError("negative width or height", where)
                        c, d = a + c, b + d
                        if not (math.isfinite(c) and math.isfinite(d)):
                            raise InputError("left + width or top + height is not finite",
                                             where)
                    x1, y1, x2, y2 = a, b, c, d
            if x2 < x1 or y2 < y1:
                raise InputError("right < left or bottom < top", where)
            cols.add((x1, y1, x2, y2), checked_class(cls_name, where), score)
            lines.append(lineno)
    box = cols.assemble(side == "submission", path, fmt, lines=lines,
                        class_ids=class_ids if fmt == "yolo" else None,
                        image_sizes=_known_sizes(cols.images, sizes))
    warnings: list[str] = []
    if n_clipped:
        warnings.append(f"{path}: {n_clipped} relative box(es) reach the image border or "
                        "beyond; clipped to [0, W - 1] x [0, H - 1] as Padilla et al.'s "
                        "converter does")
    rel_tol = 0.0
    if fmt == "yolo":
        # normalised values are written with ~6 decimals: a border box may reach a
        # rounding beyond [0, 1] without being outside its image
        what, known, rel_tol = "YOLO centre +- half size outside [0, 1]", box.image_sizes, 1e-5
    elif relative:
        what, known = "", {}  # reaching outside was clipped above
    else:
        what, known = "image size given", box.image_sizes
        b = box.boxes
        if b.shape[0] and float(np.abs(b).max()) <= 1.0 and float(b.max()) > 0:
            warnings.append(f"{path}: every coordinate is within [0, 1]: if they are relative "
                            "to the image size, read them as relative coordinates")
    return with_outside_warnings(box, known, what, rel_tol, earlier=warnings)


def _check_unit(vals: list[float], names: tuple[str, ...], where: str, what: str) -> None:
    for v, n in zip(vals, names, strict=True):
        if not 0.0 <= v <= 1.0:
            raise InputError(f"{n} {v:g} is outside [0, 1] ({what}); absolute "
                             "coordinates given as relative?", where)


def _known_sizes(images: list[str], sizes: _Sizes) -> dict[str, ImageSize]:
    out = {}
    for k in images:
        s = sizes.default or sizes.per_image.get(k)
        if s is not None:
            out[k] = s
    return out


def _yolo_line(
    fields: list[str], side: str, names: list[str] | None, where: str
) -> tuple[str, int, float, tuple[float, float, float, float]]:
    try:
        cid = int(fields[0])
    except ValueError:
        raise InputError(f"YOLO class index is not an integer: {fields[0]!r}", where) from None
    if cid < 0:
        raise InputError(f"negative YOLO class index {cid}", where)
    if names is not None:
        if cid >= len(names):
            raise InputError(f"class index {cid} but only {len(names)} class names", where)
        name = names[cid]
    else:
        name = str(cid)
    vals = [_number(t, where, n) for t, n in zip(fields[1:5], ("cx", "cy", "w", "h"), strict=True)]
    if vals[2] < 0 or vals[3] < 0:
        raise InputError("negative width or height", where)
    # Ultralytics refuses a label file with a value outside [0, 1] ("non-normalized or out of
    # bounds coordinates"); so do we, naming the line.
    _check_unit(vals, ("cx", "cy", "w", "h"), where, "YOLO coordinates are normalised")
    score = _number(fields[5], where, "confidence") if side == "submission" else 0.0
    cx, cy, bw, bh = vals
    return name, cid, score, (cx, cy, bw, bh)
