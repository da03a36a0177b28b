"""Box readers: text, VOC XML, COCO JSON, YOLO and DOTA files into a :class:`BoxSet`.

A box data set is many images; an object is an axis-aligned rectangle in image
coordinates (no CRS), or an outline (an oriented box's four corners, an instance
polygon: :class:`Outlines`) with its axis-aligned bounding box. Every reader
returns the same plain :class:`BoxSet`: column arrays (image index, class name,
``x1, y1, x2, y2``, confidence, VOC ``difficult``, COCO ``iscrowd`` / ``area`` /
ids, outlines as flat vertex arrays) and the tuple of image keys, including
images that hold no box. Shapely geometry is built only on request
(:meth:`BoxSet.geometry`, :meth:`BoxSet.to_objects`): the box protocols work on
the coordinate arrays.

Formats (Padilla et al., Object-Detection-Metrics README, "Create the ground truth files")
------------------------------------------------------------------------------------------
``text``
    A folder with one ``.txt`` file per image (image key = file stem; ground
    truth and detection folders are matched by file name). Ground truth lines
    ``<class> <left> <top> <right> <bottom>``, detection lines
    ``<class> <confidence> <left> <top> <right> <bottom>``; with
    ``box_format="xywh"`` the last two numbers are width and height. With
    ``relative=True`` (the default when ``image_size`` is given) the four
    numbers are read as Padilla et al.'s code reads relative boxes (YOLO
    style, whatever ``box_format`` says): ``<centre x> <centre y> <width>
    <height>`` as fractions of the image size, each in ``[0, 1]``, turned into
    whole pixels and clipped to the image by its converter
    (:func:`relative_to_absolute`). Class names contain no spaces.
``voc``
    A folder of PASCAL VOC annotation XML files (image key = file stem): one
    ``<object>`` per box with ``<name>``, ``<difficult>`` and ``<bndbox>``
    (``xmin ymin xmax ymax``); an optional ``<score>`` (or ``<confidence>``)
    makes the file a detection file. Documents with a ``<!DOCTYPE`` or
    ``<!ENTITY`` declaration are refused (no entity expansion, no external
    entities).
``coco``
    A JSON file: ground truth (``images``, ``annotations``, ``categories``;
    ``bbox`` is ``[x, y, width, height]``) or results (a list of
    ``{image_id, category_id, bbox, score}``). Image key = ``str(image_id)``.
``yolo``
    A folder of ``.txt`` files ``<class index> <cx> <cy> <w> <h> [<confidence>]``
    relative to the image size, which comes from ``image_size`` (one global
    ``(W, H)`` or a mapping image key -> ``(W, H)``) or from the ground truth
    given as ``like``. Class names from ``class_names`` (a sequence or a names
    file, one per line), else the index.

DOTA's labelTxt ground truth and ``Task1_<class>.txt`` / ``Task2_<class>.txt``
results have their own readers (:func:`read_dota_labels`,
:func:`read_dota_results`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from geoeval.errors import InputError
from geoeval.io._box_coco import load_json
from geoeval.io._box_dota import dota_result_files, read_dota_labels, read_dota_results
from geoeval.io._box_text import _read_lines, relative_to_absolute
from geoeval.io._box_xml import _read_voc, parse_xml_safely
from geoeval.io._boxset import BoxSet, ImageSize, _Sizes, empty_boxset
from geoeval.io._coco_read import read_coco, read_coco_pair
from geoeval.io._outlines import Outlines
from geoeval.io.masks import Masks
from geoeval.io.store_paths import StorePath, box_path, missing

__all__ = [
    "BOX_FORMATS", "FORMATS", "SIDES", "BoxSet", "ImageSize", "Masks", "Outlines",
    "align_images",
    "detect_format", "dota_result_files", "empty_boxset", "load_json", "parse_xml_safely",
    "read_boxes", "read_coco", "read_coco_pair", "read_dota_labels", "read_dota_results",
    "relative_to_absolute",
]

FORMATS = ("text", "voc", "coco", "yolo")

BOX_FORMATS = ("xyrb", "xywh")

#: The two inputs of a box protocol: the reference (ground truth) and the submission
#: (detections).
SIDES = ("reference", "submission")


def detect_format(path: str | Path | StorePath) -> str:
    """The box format of ``path`` when it is unambiguous.

    ``.json`` file -> ``coco``; ``.xml`` file or a folder of ``.xml`` files ->
    ``voc``; ``.txt`` file or a folder of ``.txt`` files -> ``text`` (YOLO
    files look the same and must be asked for with ``fmt="yolo"``); an empty
    folder -> ``text``.
    """
    p = box_path(path)
    name = p if isinstance(p, StorePath) else path  # a local path named as given
    if not p.exists():
        raise missing(p, path)
    if p.is_file():
        suffix = p.suffix.lower()
        if suffix == ".json":
            return "coco"
        if suffix == ".xml":
            return "voc"
        if suffix == ".txt":
            return "text"
        raise InputError(f"cannot tell the box format of a {suffix or 'suffix-less'} file; "
                         "give fmt (text, voc, coco, yolo)", name)
    suffixes = {q.suffix.lower() for q in p.iterdir() if q.is_file()}
    has_xml, has_txt = ".xml" in suffixes, ".txt" in suffixes
    if has_xml and has_txt:
        raise InputError("folder holds both .xml and .txt files; give fmt", name)
    return "voc" if has_xml else "text"


def read_boxes(
    path: str | Path | StorePath,
    *,
    fmt: str | None = None,
    side: str | None = None,
    box_format: str = "xyrb",
    image_size: ImageSize | Mapping[str, ImageSize] | None = None,
    relative: bool | None = None,
    class_names: Sequence[str] | str | Path | None = None,
    like: BoxSet | None = None,
) -> BoxSet:
    """Read ground-truth or detection boxes.

    Parameters
    ----------
    path : str or Path
        A folder (text, VOC XML, YOLO) or a file (COCO JSON; a single text or
        XML file is one image), local or a URL: ``s3://``, ``gs://``, ``az://``
        (a prefix is a folder), ``https://`` (files only: the web has no listing).
    fmt : {'text', 'voc', 'coco', 'yolo'}, optional
        Default: :func:`detect_format`.
    side : {'reference', 'submission'}, optional
        Reference (ground truth) or submission (detections). Default: from the content (text: 5 or 6
        fields on the first box line; COCO: object or list; VOC: a ``<score>``
        element; YOLO: 5 or 6 fields).
    box_format : {'xyrb', 'xywh'}
        Text format with absolute coordinates only: last two numbers are
        right/bottom or width/height. Relative text boxes are always
        ``cx cy w h`` (as Padilla et al.'s code reads them).
    image_size : (W, H) or mapping image key -> (W, H), optional
        Needed for relative coordinates (text with ``relative``, YOLO).
    relative : bool, optional
        Text format: coordinates are relative to the image size, read as
        Padilla et al. (2020, Object-Detection-Metrics ``-gtcoords rel``) do:
        ``<centre x> <centre y> <width> <height>``, each in ``[0, 1]``, then
        ``x1 = round((2 cx - w) W / 2)``, ``x2 = x1 + round(w W)`` (same in y)
        and clipped to ``[0, W - 1]`` (a warning counts clipped boxes).
        Default: true exactly when ``image_size`` is given.
    class_names : sequence of str or path, optional
        YOLO class index -> name (a names file has one name per line).
    like : BoxSet, optional
        The reference: its image sizes are used where none is given, and
        COCO results take its category names.

    Returns
    -------
    BoxSet

    Raises
    ------
    InputError
        Unknown format, unreadable or malformed file; the message names the
        file and line (``dets/img1.txt:3: expected 6 fields, got 4``).

    Notes
    -----
    What is accepted with a warning (in :attr:`BoxSet.warnings`), never
    silently: boxes that reach outside their image where its size is known
    (kept as given, as the VOC devkit and the COCO evaluator do), relative
    boxes clipped to the image (as Padilla et al.'s converter does), zero-area
    boxes, absolute text coordinates that all lie in ``[0, 1]``.

    Examples
    --------
    Folders of one text file per image (Padilla et al.'s layout): ground truth
    ``class x1 y1 x2 y2``, detections ``class score x1 y1 x2 y2``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "gt").mkdir(); (d / "det").mkdir()
    >>> _ = (d / "gt" / "img1.txt").write_text("car 10 10 50 40\\ncar 60 10 90 40\\n")
    >>> _ = (d / "det" / "img1.txt").write_text("car 0.9 12 10 52 40\\n")
    >>> reference = read_boxes(d / "gt")
    >>> submission = read_boxes(d / "det", side="submission")
    >>> len(reference), len(submission), reference.images, submission.scores.tolist()
    (2, 1, ('img1',), [0.9])
    """
    given, path = path, box_path(path)  # a URL: a StorePath, read through geoeval.io.stores
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown box format {fmt!r} (expected one of {', '.join(FORMATS)})")
    if side is not None and side not in SIDES:
        raise InputError(f"unknown side {side!r} (expected 'reference' or 'submission')")
    if box_format not in BOX_FORMATS:
        raise InputError(f"unknown box format {box_format!r} (expected 'xyrb' or 'xywh')")
    if not path.exists():
        raise missing(path, given)
    sizes = _size_lookup(image_size, like)
    if fmt == "coco":
        return read_coco(path if isinstance(path, StorePath) else given, side=side, like=like)
    if fmt == "voc":
        return _read_voc(path, side)
    if fmt == "yolo":
        names = _class_names(class_names)
        return _read_lines(path, side, "yolo", "xywh", True, sizes, names)
    rel = image_size is not None if relative is None else relative
    return _read_lines(path, side, "text", box_format, rel, sizes, None)


def _size_lookup(
    image_size: ImageSize | Mapping[str, ImageSize] | None, like: BoxSet | None
) -> _Sizes:
    if image_size is None or isinstance(image_size, Mapping):
        per_image = dict(like.image_sizes) if like is not None else {}
        if image_size is not None:
            per_image.update({str(k): _check_size(v) for k, v in image_size.items()})
        return _Sizes(None, per_image)
    return _Sizes(_check_size(image_size), dict(like.image_sizes) if like is not None else {})


def _check_size(size: Any) -> ImageSize:
    try:
        w, h = (float(v) for v in size)
    except (TypeError, ValueError) as exc:
        raise InputError(f"image size must be (width, height), got {size!r}") from exc
    if not (w > 0 and h > 0 and math.isfinite(w) and math.isfinite(h)):
        raise InputError(f"image size must be positive, got {size!r}")
    return (w, h)


def _class_names(class_names: Sequence[str] | str | Path | StorePath | None
                 ) -> list[str] | None:
    if class_names is None:
        return None
    if isinstance(class_names, (str, Path, StorePath)):
        p = box_path(class_names)
        try:
            text = p.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise InputError(f"cannot read class names: {exc.strerror}", p) from exc
        return [ln.strip() for ln in text.splitlines() if ln.strip()]
    return [str(c) for c in class_names]


# --- pairing ground truth and detections -----------------------------------------------


def align_images(reference: BoxSet, submission: BoxSet) -> tuple[BoxSet, BoxSet]:
    """Put both sets on the union of their image keys (sorted).

    An image with a reference (ground-truth) file and no submission
    (detection) file has zero detections, and the other way round (Padilla et
    al.'s README: files are matched by name).
    """
    if reference.images == submission.images:
        return reference, submission
    images = tuple(sorted(set(reference.images) | set(submission.images)))
    return reference.reindex_images(images), submission.reindex_images(images)
