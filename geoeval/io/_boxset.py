"""The :class:`BoxSet` data object and the helpers every box reader shares.

Private to :mod:`geoeval.io.boxes`, which re-exports the public names.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.errors import InputError
from geoeval.io._outlines import Outlines
from geoeval.io.masks import Masks
from geoeval.reprs import listed, warned

if TYPE_CHECKING:
    from geoeval.io.store_paths import BoxPath

ImageSize = tuple[float, float]


@dataclass(frozen=True)
class BoxSet:
    """Objects of a multi-image data set: a reference (ground truth) or a submission (detections).

    Each object is an axis-aligned box, or an outline (an oriented box's four
    corners, an instance polygon: :attr:`outlines`) whose axis-aligned bounding
    box is then :attr:`boxes`. The box protocols (VOC, COCO, ROBIN, Neovision2)
    read :attr:`boxes` only; DOTA's oriented task reads the outlines.

    Attributes
    ----------
    boxes : numpy.ndarray
        ``(n, 4)`` float64 array ``x1, y1, x2, y2`` in absolute image units
        (``x2 >= x1``, ``y2 >= y1``): the box itself, or the bounding box of the
        outline (derived from :attr:`outlines` when given as ``None``).
    image_index : numpy.ndarray
        ``(n,)`` int64 index of each box's image in :attr:`images` (the image
        key of each box is :attr:`image_keys`; an :class:`ObjectSet`'s ``image``
        holds such keys).
    classes : numpy.ndarray
        ``(n,)`` str array of class names.
    images : tuple of str
        Every image key of the data set, sorted, including images without
        boxes (an empty text file, an XML file with no object, a COCO image
        without annotation).
    scores : numpy.ndarray or None
        Detection confidence; ``None`` for ground truth.
    difficult : numpy.ndarray
        VOC ``difficult`` flag (bool; all false for other formats).
    iscrowd : numpy.ndarray
        COCO ``iscrowd`` flag (bool; all false for other formats).
    areas : numpy.ndarray or None
        COCO annotation ``area`` field (ground truth) or ``w * h`` (results);
        ``None`` for other formats (use :meth:`box_areas`).
    ids : numpy.ndarray
        Annotation ids (COCO ground truth), else ``1..n`` in reading order.
    wh : numpy.ndarray or None
        ``(n, 2)`` width and height exactly as written (COCO), so that the
        COCO protocol can reproduce the official evaluator bit for bit.
    class_ids : numpy.ndarray or None
        COCO ``category_id`` or YOLO class index of each box.
    image_sizes : dict
        Image key -> ``(width, height)`` where the input states it (VOC
        ``<size>``, COCO ``images``) or the caller gave it.
    categories : dict
        COCO category name -> id (ground truth files; empty otherwise).
    image_ids : dict
        COCO image key -> integer image id.
    lines : numpy.ndarray or None
        Source line of each box (text formats), for messages.
    warnings : tuple of str
        What the reader accepted but the user should know (boxes outside the
        image, boxes clipped, zero-area boxes, coordinates that look relative);
        each message names the file and how many boxes it concerns.
    path, fmt : str
        Where the boxes came from and in which format.
    masks : Masks or None
        Instance masks (COCO ``segmentation``, rasterised as the COCO mask API
        does), one per box, when read for mask or boundary evaluation; ``None``
        otherwise.
    outlines : Outlines or None
        Each object's outline (columnar rings, vertices as written: see
        :class:`~geoeval.io.boxes.Outlines`); ``None`` when the objects are the
        axis-aligned boxes themselves.
    """

    boxes: np.ndarray
    image_index: np.ndarray
    classes: np.ndarray
    images: tuple[str, ...]
    scores: np.ndarray | None = None
    difficult: np.ndarray | None = None
    iscrowd: np.ndarray | None = None
    areas: np.ndarray | None = None
    ids: np.ndarray | None = None
    wh: np.ndarray | None = None
    class_ids: np.ndarray | None = None
    image_sizes: dict[str, ImageSize] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    image_ids: dict[str, int] = field(default_factory=dict)
    lines: np.ndarray | None = None
    warnings: tuple[str, ...] = ()
    path: str = "<memory>"
    fmt: str = "memory"
    # instance masks: a separate field, absent unless asked for (COCO segm / boundary)
    masks: Masks | None = None
    outlines: Outlines | None = None

    def __post_init__(self) -> None:
        if self.outlines is not None:
            if self.boxes is None:
                object.__setattr__(self, "boxes", self.outlines.bounds())
            elif len(self.outlines) != len(self.boxes):
                raise ValueError(f"{len(self.outlines)} outlines for {len(self.boxes)} boxes")
        n = int(np.asarray(self.boxes).reshape(-1, 4).shape[0])
        fill = {
            "difficult": np.zeros(n, dtype=bool),
            "iscrowd": np.zeros(n, dtype=bool),
            "ids": np.arange(1, n + 1, dtype=np.int64),
        }
        for name, default in fill.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)

    def __repr__(self) -> str:
        classes = listed(self.class_names, 4)
        return (f"<BoxSet {len(self)} {self.side} boxes in {len(self.images)} images, "
                f"{len(self.class_names)} classes ({classes}); {self.fmt} from {self.path}"
                f"{warned(self.warnings)}>")

    def __len__(self) -> int:
        return int(self.boxes.shape[0])

    @property
    def side(self) -> str:
        """``"submission"`` if the boxes carry a confidence, else ``"reference"``."""
        return "reference" if self.scores is None else "submission"

    @property
    def kind(self) -> str:
        """``"outline"`` if the objects carry :attr:`outlines`, else ``"box"``."""
        return "box" if self.outlines is None else "outline"

    @property
    def image_keys(self) -> np.ndarray:
        """Image key of each box (str array)."""
        if not len(self):
            return np.zeros(0, str)
        return np.asarray(self.images, dtype=str)[self.image_index]

    @property
    def class_names(self) -> tuple[str, ...]:
        """Sorted distinct class names."""
        return tuple(sorted(set(self.classes.tolist())))

    def box_areas(self, *, plus_one: bool = False) -> np.ndarray:
        """Geometric box areas (see :func:`geoeval.objects.box_area`)."""
        from geoeval.objects import box_area

        return box_area(self.boxes, plus_one=plus_one)

    def subset(self, index: np.ndarray) -> BoxSet:
        """The boxes at ``index`` (integer or boolean); images and metadata kept."""
        idx = np.asarray(index)

        def take(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[idx]

        return replace(
            self,
            boxes=self.boxes[idx],
            image_index=self.image_index[idx],
            classes=self.classes[idx],
            scores=take(self.scores),
            difficult=take(self.difficult),
            iscrowd=take(self.iscrowd),
            areas=take(self.areas),
            ids=take(self.ids),
            wh=take(self.wh),
            class_ids=take(self.class_ids),
            lines=take(self.lines),
            masks=None if self.masks is None else self.masks.subset(idx),
            outlines=None if self.outlines is None else self.outlines.take(idx),
        )

    def reindex_images(self, images: Sequence[str]) -> BoxSet:
        """The same boxes with :attr:`image_index` indexing into ``images`` (a superset).

        Used to put a reference and a submission on one image list
        (images present on one side only keep zero boxes on the other).
        """
        images = tuple(images)
        pos = {k: i for i, k in enumerate(images)}
        missing = [k for k in self.images if k not in pos]
        if missing:
            raise InputError(f"images not in the new list: {missing[:3]}")
        mapping = np.array([pos[k] for k in self.images], dtype=np.int64)
        index = mapping[self.image_index] if len(self) else np.zeros(0, dtype=np.int64)
        return replace(self, image_index=index, images=images)

    def geometry(self) -> np.ndarray:
        """A shapely array of the objects: the outlines' polygons, else the boxes
        (``shapely.box``); built on request only, vectorised."""
        import shapely

        if self.outlines is not None:
            return self.outlines.geometry()
        b = self.boxes
        if not len(self):
            return np.zeros(0, dtype=object)
        return shapely.box(b[:, 0], b[:, 1], b[:, 2], b[:, 3])

    def to_objects(self) -> Any:
        """An :class:`~geoeval.objects.ObjectSet` with the objects' shapely polygons
        (:meth:`geometry`); ``image`` holds the image keys, ``ids`` the box ids."""
        import shapely

        from geoeval.objects import ObjectSet

        geoms = self.geometry()
        return ObjectSet(
            ids=self.ids,
            areas=self.box_areas() if self.outlines is None else shapely.area(geoms),
            geometry=geoms,
            classes=self.classes,
            scores=self.scores,
            image=self.image_keys,
            path=self.path,
            input_type="boxes",
        )


def empty_boxset(*, side: str, path: str = "<memory>", fmt: str = "memory",
                 images: Sequence[str] = ()) -> BoxSet:
    """A :class:`BoxSet` with no box (``side="submission"`` gives it an empty score array)."""
    return BoxSet(
        boxes=np.zeros((0, 4)),
        image_index=np.zeros(0, dtype=np.int64),
        classes=np.zeros(0, dtype=str),
        images=tuple(sorted(images)),
        scores=np.zeros(0) if side == "submission" else None,
        path=path,
        fmt=fmt,
    )


@dataclass(frozen=True)
class _Sizes:
    default: ImageSize | None
    per_image: dict[str, ImageSize]

    def get(self, key: str, where: str) -> ImageSize:
        if self.default is not None:
            return self.default
        size = self.per_image.get(key)
        if size is None:
            raise InputError("relative coordinates need the image size: give image_size "
                             "(W, H) or a mapping with this image", where)
        return size


def _files(path: BoxPath, suffix: str) -> list[BoxPath]:
    if path.is_file():
        return [path]
    return sorted(q for q in path.iterdir() if q.is_file() and q.suffix.lower() == suffix
                  and q.name not in _NAMES_FILES)

_NAMES_FILES = {"classes.txt", "obj.names"}


def box_files(path: BoxPath, suffix: str, side: str | None, what: str) -> list[BoxPath]:
    """The ``suffix`` files a box reader reads (``path`` itself if a file); a reference
    folder without any is an error naming the folder."""
    files = _files(path, suffix)
    if not files and path.is_dir() and side == "reference":
        raise InputError(f"no {suffix} {what} file in this folder", path)
    return files


@dataclass
class BoxColumns:
    """Column lists a file-per-image box reader fills: one image per file, one row per box.

    :meth:`new_image` starts a file's image, :meth:`add` appends a box of the
    current image, :meth:`assemble` makes the :class:`BoxSet` (images sorted).
    """

    images: list[str] = field(default_factory=list)
    rows: list[tuple[float, float, float, float]] = field(default_factory=list)
    image: list[int] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)

    def new_image(self, f: BoxPath) -> str:
        """Start the image of file ``f``; its key (the file name without suffix)."""
        self.images.append(f.stem)
        return f.stem

    def add(self, box: tuple[float, float, float, float], cls: str, score: float) -> None:
        """One box of the current image."""
        self.rows.append(box)
        self.image.append(len(self.images) - 1)
        self.classes.append(cls)
        self.scores.append(score)

    def assemble(self, with_scores: bool, path: BoxPath, fmt: str, **extra: Any) -> BoxSet:
        """The :class:`BoxSet`: scores kept only ``with_scores``, ``extra`` as :func:`_assemble`."""
        return _assemble(self.images, self.rows, self.image, self.classes,
                         self.scores if with_scores else None, str(path), fmt, **extra)


def with_outside_warnings(box: BoxSet, sizes: dict[str, ImageSize], what: str,
                          rel_tol: float = 0.0, earlier: Sequence[str] = ()) -> BoxSet:
    """``box`` with ``earlier`` warnings and :func:`outside_warnings`' appended (``box``
    itself when there are none)."""
    warns = [*earlier, *outside_warnings(box.boxes, box.image_index, box.images, sizes,
                                         box.path, what, rel_tol)]
    return replace(box, warnings=tuple(box.warnings) + tuple(warns)) if warns else box


#: The longest class name read, in characters. Names are short words; a longer one is a
#: broken file, and numpy's fixed-width strings would give every box its width (a
#: megabyte name in one box of 10,000 was 40 GB).
MAX_CLASS_NAME = 1000


def checked_class(name: str, where: str) -> str:
    """``name``, or an :class:`InputError` at ``where`` when it is too long."""
    if len(name) > MAX_CLASS_NAME:
        raise InputError(f"a class name of {len(name):,} characters (at most "
                         f"{MAX_CLASS_NAME:,}) starting {name[:40]!r}", where)
    return name


def _number(token: str, where: str, what: str) -> float:
    try:
        value = float(token)
    except (ValueError, OverflowError):
        raise InputError(f"{what} is not a number: {token!r}", where) from None
    if not math.isfinite(value):
        raise InputError(f"{what} is not finite: {token!r}", where)
    return value


def _shown(f: BoxPath, root: BoxPath) -> str:
    """File name as shown in messages: ``folder/file`` (last folder only)."""
    return str(f) if root.is_file() else os.path.join(root.name, f.name)


def _assemble(
    images: list[str],
    rows: list[tuple[float, float, float, float]],
    image_index: list[int],
    classes: list[str],
    scores: list[float] | None,
    path: str,
    fmt: str,
    *,
    lines: list[int] | None = None,
    difficult: list[bool] | None = None,
    class_ids: list[int] | None = None,
    image_sizes: dict[str, ImageSize] | None = None,
    warnings: Sequence[str] = (),
) -> BoxSet:
    """Column lists -> a :class:`BoxSet` with images sorted by key."""
    order = sorted(range(len(images)), key=images.__getitem__)
    sorted_images = [images[i] for i in order]
    if len(set(sorted_images)) != len(sorted_images):
        dup = next(a for a, b in zip(sorted_images[:-1], sorted_images[1:], strict=True) if a == b)
        raise InputError(f"image {dup!r} appears twice", path)
    rank = np.empty(len(images), dtype=np.int64)
    rank[order] = np.arange(len(images))
    img = (rank[np.asarray(image_index, dtype=np.int64)] if image_index
           else np.zeros(0, dtype=np.int64))
    n = len(rows)
    return BoxSet(
        boxes=np.asarray(rows, dtype=float).reshape(n, 4),
        image_index=img,
        classes=np.asarray(classes, dtype=str) if n else np.zeros(0, dtype=str),
        images=tuple(sorted_images),
        scores=None if scores is None else np.asarray(scores, dtype=float).reshape(n),
        difficult=None if difficult is None else np.asarray(difficult, dtype=bool).reshape(n),
        lines=None if lines is None else np.asarray(lines, dtype=np.int64).reshape(n),
        class_ids=None if class_ids is None else np.asarray(class_ids, dtype=np.int64).reshape(n),
        image_sizes=dict(image_sizes or {}),
        warnings=tuple(warnings),
        path=path,
        fmt=fmt,
    )


def outside_warnings(
    boxes: np.ndarray, image_index: np.ndarray, images: Sequence[str],
    sizes: dict[str, ImageSize], path: str, what: str, rel_tol: float = 0.0,
) -> list[str]:
    """Warnings for boxes that reach outside their image, or have zero area (kept as given).

    ``boxes`` is ``(n, 4)`` ``x1, y1, x2, y2``; only images with a known size are
    checked (vectorised: one size lookup per image, one comparison per box). A box
    reaching out by at most ``rel_tol`` times the image size is inside (the
    rounding of normalised coordinates written with a few decimals).
    """
    out: list[str] = []
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if b.shape[0] == 0:
        return out
    unknown = (math.nan, math.nan)
    wh = np.array([sizes.get(k, unknown) for k in images], dtype=float).reshape(-1, 2)
    w, h = wh[image_index, 0], wh[image_index, 1]
    tw, th = rel_tol * w, rel_tol * h
    outside = (b[:, 0] < -tw) | (b[:, 1] < -th) | (b[:, 2] > w + tw) | (b[:, 3] > h + th)
    n_out = int(outside.sum())  # NaN comparisons are False: unknown sizes are not checked
    if n_out:
        out.append(f"{path}: {n_out} box(es) reach outside their image ({what}); kept as "
                   "given, not clipped")
    zero = (b[:, 2] == b[:, 0]) | (b[:, 3] == b[:, 1])
    n_zero = int(zero.sum())
    if n_zero:
        out.append(f"{path}: {n_zero} box(es) of zero width or height; kept (their area is 0, "
                   "or one pixel wide under the VOC +1 convention)")
    return out
