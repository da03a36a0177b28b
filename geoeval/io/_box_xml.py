"""PASCAL VOC annotation XML, parsed safely (see :mod:`geoeval.io.boxes`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geoeval.errors import InputError
from geoeval.io._box_text import _file_bytes
from geoeval.io._boxset import (
    BoxColumns,
    BoxSet,
    ImageSize,
    _number,
    _shown,
    box_files,
    checked_class,
    with_outside_warnings,
)
from geoeval.io.store_paths import BoxPath, StorePath, box_path, read_each


@dataclass
class _Node:
    tag: str
    line: int
    children: list[_Node] = field(default_factory=list)
    text: str = ""

    def find(self, tag: str) -> _Node | None:
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]


class _Forbidden(Exception):
    pass


def parse_xml_safely(path: str | Path | StorePath, data: bytes | None = None) -> _Node:
    """Parse an XML file with expat, refusing DTDs and entity declarations.

    A document type declaration (``<!DOCTYPE``) or any entity declaration
    makes the file an :class:`InputError`, so neither entity expansion
    ("billion laughs") nor external entities can happen; only XML's five
    predefined entities and character references are left.
    Returns a small tree whose nodes know their source line. ``path`` may be a URL
    (:func:`~geoeval.io.store_paths.box_path`); ``data``, its bytes when already read.
    """
    from xml.parsers import expat

    p = box_path(path)
    if data is None:
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", p) from exc
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    root = _Node("#document", 0)
    stack = [root]

    def forbid(*_: Any) -> None:
        raise _Forbidden(parser.CurrentLineNumber)

    def start(tag: str, _attrs: dict[str, str]) -> None:
        node = _Node(tag, parser.CurrentLineNumber)
        stack[-1].children.append(node)
        stack.append(node)

    def end(_tag: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        stack[-1].text += text

    parser.StartDoctypeDeclHandler = forbid
    parser.EntityDeclHandler = forbid
    parser.UnparsedEntityDeclHandler = forbid
    parser.ExternalEntityRefHandler = forbid
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except _Forbidden as exc:
        raise InputError(f"{p}:{exc.args[0]}: DOCTYPE and ENTITY declarations are not "
                         "allowed in annotation XML") from None
    except expat.ExpatError as exc:
        raise InputError(f"{p}:{exc.lineno}: not well-formed XML "
                         f"({expat.ErrorString(exc.code)})") from None
    except LookupError as exc:  # an XML declaration naming an encoding Python does not know
        raise InputError(f"{p}:1: XML declares an unknown encoding ({exc})") from None
    if not root.children:
        raise InputError("empty XML document", p)
    return root.children[0]


def _read_voc(path: BoxPath, side: str | None) -> BoxSet:
    files = box_files(path, ".xml", side, "annotation")
    raw = read_each(files, _file_bytes)
    cols = BoxColumns()
    difficult: list[bool] = []
    sizes: dict[str, ImageSize] = {}
    any_score = False
    for f in files:
        key = cols.new_image(f)
        shown = _shown(f, path)
        root = parse_xml_safely(f, next(raw))
        if root.tag != "annotation":
            raise InputError(f"{shown}:{root.line}: root element is <{root.tag}>, "
                             "expected <annotation>")
        size = root.find("size")
        if size is not None:
            w, h = size.find("width"), size.find("height")
            if w is not None and h is not None:
                ws, hs = w.text.strip(), h.text.strip()
                if ws and hs:
                    sw = _number(ws, f"{shown}:{w.line}", "<width>")
                    sh = _number(hs, f"{shown}:{h.line}", "<height>")
                    if sw > 0 and sh > 0:
                        sizes[key] = (sw, sh)
        for obj in root.findall("object"):
            where = f"{shown}:{obj.line}"
            name = obj.find("name")
            if name is None or not name.text.strip():
                raise InputError("<object> without <name>", where)
            bnd = obj.find("bndbox")
            if bnd is None:
                raise InputError("<object> without <bndbox>", where)
            coords = []
            for tag in ("xmin", "ymin", "xmax", "ymax"):
                node = bnd.find(tag)
                if node is None:
                    raise InputError(f"<bndbox> without <{tag}>", f"{shown}:{bnd.line}")
                coords.append(_number(node.text.strip(), f"{shown}:{node.line}", f"<{tag}>"))
            x1, y1, x2, y2 = coords
            if x2 < x1 or y2 < y1:
                raise InputError("xmax < xmin or ymax < ymin", f"{shown}:{bnd.line}")
            diff = obj.find("difficult")
            dflag = False
            if diff is not None and diff.text.strip():
                dv = diff.text.strip()
                if dv not in ("0", "1"):
                    raise InputError(f"<difficult> must be 0 or 1, got {dv!r}",
                                     f"{shown}:{diff.line}")
                dflag = dv == "1"
            sc = obj.find("score")
            if sc is None:
                sc = obj.find("confidence")
            score = math.nan
            if sc is not None:
                any_score = True
                score = _number(sc.text.strip(), f"{shown}:{sc.line}", f"<{sc.tag}>")
            cols.add((x1, y1, x2, y2), checked_class(name.text.strip(), f"{shown}:{name.line}"),
                     score)
            difficult.append(dflag)
    is_det = any_score if side is None else side == "submission"
    if is_det and any(math.isnan(s) for s in cols.scores):
        raise InputError("detection XML: every <object> needs a <score>", path)
    box = cols.assemble(is_det, path, "voc", difficult=difficult, image_sizes=sizes)
    # the devkit keeps boxes as annotated (no clipping): so do we, and say so
    return with_outside_warnings(box, sizes, "beyond <size>, or negative")
