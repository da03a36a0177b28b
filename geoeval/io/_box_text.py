"""Line formats: the ``seeds/002`` text format and YOLO text (see :mod:`geoeval.io.boxes`)."""

from __future__ import annotations

from pathlib import Path

from geoeval.errors import InputError
from geoeval.io._boxset import (
    BoxSet,
    ImageSize,
    _assemble,
    _files,
    _number,
    _shown,
    _Sizes,
)

_FIELD_NAMES = {"xyrb": ("left", "top", "right", "bottom"),
                "xywh": ("left", "top", "width", "height")}


def _read_lines(
    path: Path,
    kind: str | None,
    fmt: str,
    box_format: str,
    relative: bool,
    sizes: _Sizes,
    names: list[str] | None,
) -> BoxSet:
    files = _files(path, ".txt")
    images: list[str] = []
    rows: list[tuple[float, float, float, float]] = []
    image: list[int] = []
    classes: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    class_ids: list[int] = []
    for f in files:
        key = f.stem
        img_idx = len(images)
        images.append(key)
        try:
            text = f.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read: {exc}", f) from exc
        shown = _shown(f, path)
        for lineno, raw in enumerate(text.splitlines(), start=1):
            fields = raw.split()
            if not fields:
                continue
            where = f"{shown}:{lineno}"
            if kind is None:
                kind = "det" if len(fields) == 6 else "gt"
            want = 6 if kind == "det" else 5
            if len(fields) != want:
                what = "detection" if kind == "det" else "ground-truth"
                raise InputError(f"expected {want} fields ({what}), got {len(fields)}", where)
            if fmt == "yolo":
                cls_name, cid, score, box = _yolo_line(fields, kind, names, where)
                w, h = sizes.get(key, where)
                cx, cy, bw, bh = box
                x1, y1 = (cx - bw / 2) * w, (cy - bh / 2) * h
                x2, y2 = (cx + bw / 2) * w, (cy + bh / 2) * h
                class_ids.append(cid)
            else:
                cls_name = fields[0]
                off = 2 if kind == "det" else 1
                score = _number(fields[1], where, "confidence") if kind == "det" else 0.0
                a, b, c, d = (_number(t, where, n) for t, n in
                              zip(fields[off:], _FIELD_NAMES[box_format], strict=True))
                if box_format == "xywh":
                    if c < 0 or d < 0:
                        raise InputError("negative width or height", where)
                    c, d = a + c, b + d
                if relative:
                    w, h = sizes.get(key, where)
                    a, b, c, d = a * w, b * h, c * w, d * h
                x1, y1, x2, y2 = a, b, c, d
            if x2 < x1 or y2 < y1:
                raise InputError("right < left or bottom < top", where)
            rows.append((x1, y1, x2, y2))
            image.append(img_idx)
            classes.append(cls_name)
            scores.append(score)
            lines.append(lineno)
    return _assemble(images, rows, image, classes, scores if kind == "det" else None,
                     str(path), fmt, lines=lines,
                     class_ids=class_ids if fmt == "yolo" else None,
                     image_sizes=_known_sizes(images, sizes))


def _known_sizes(images: list[str], sizes: _Sizes) -> dict[str, ImageSize]:
    out = {}
    for k in images:
        s = sizes.default or sizes.per_image.get(k)
        if s is not None:
            out[k] = s
    return out


def _yolo_line(
    fields: list[str], kind: str, names: list[str] | None, where: str
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
    cx, cy, bw, bh = (_number(t, where, n)
                      for t, n in zip(fields[1:5], ("cx", "cy", "w", "h"), strict=True))
    if bw < 0 or bh < 0:
        raise InputError("negative width or height", where)
    score = _number(fields[5], where, "confidence") if kind == "det" else 0.0
    return name, cid, score, (cx, cy, bw, bh)
