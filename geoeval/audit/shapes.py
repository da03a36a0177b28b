"""The 16 synthetic ground truths of the audit (Hemery et al. 2010, §3.2, Fig. 4), 256 × 256.

Eight boxes of different sizes and aspect ratios (``gt1``/``gt2`` two squares
of different scale for the scale-dependency check, ``gt4``/``gt5`` two
rectangles of equal area and perimeter, one horizontal, one vertical, for the
shape-dependency check, ``gt8`` a square 4 px from the left border) and eight
object silhouettes drawn from shapely primitives (car, person, bike, plane,
house, star, dog, tree), since Hemery et al.'s own drawings are not published.

Each ground truth is stored as a 4× supersampled raster (``SUPERSAMPLE``): an
altered image is drawn by mapping every output pixel centre back through the
inverse alteration and reading the fine raster there, so boxes (edges on
integer coordinates) stay exact under translation and scaling.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

IMAGE_SIZE = 256
SUPERSAMPLE = 4

# name: (top, left, height, width)
BOXES: dict[str, tuple[int, int, int, int]] = {
    "gt1": (96, 96, 64, 64),  # small square (scale dependency, with gt2)
    "gt2": (64, 64, 128, 128),  # large square
    "gt3": (88, 48, 80, 160),  # wide box
    "gt4": (96, 64, 64, 128),  # horizontal rectangle (shape dependency, with gt5)
    "gt5": (64, 96, 128, 64),  # vertical rectangle, same area and perimeter
    "gt6": (100, 28, 56, 200),  # long bar
    "gt7": (48, 80, 160, 96),  # tall box
    "gt8": (96, 4, 64, 64),  # square near the left border
}
SILHOUETTES: tuple[str, ...] = ("car", "person", "bike", "plane", "house", "star", "dog", "tree")
SHAPE_NAMES: tuple[str, ...] = tuple(BOXES) + tuple(
    f"gt{9 + i}_{n}" for i, n in enumerate(SILHOUETTES)
)


@dataclass(frozen=True)
class GroundTruth:
    """One synthetic ground truth.

    Attributes
    ----------
    name : str
        ``gt1`` … ``gt16_tree``.
    shape : str
        ``box`` or ``silhouette``.
    fine : numpy.ndarray
        Supersampled mask, ``(S·256, S·256)`` bool; fine cell ``(i, j)`` covers
        ``[i/S, (i+1)/S) × [j/S, (j+1)/S)`` in pixel units (row, column).
    bbox : tuple of float
        ``(top, left, bottom, right)`` of the object in pixel units (edges).
    """

    name: str
    shape: str
    fine: np.ndarray
    bbox: tuple[float, float, float, float]

    @property
    def centre(self) -> tuple[float, float]:
        """``(row, col)`` centre of the bounding box: the centre of scaling and rotation."""
        t, left, b, r = self.bbox
        return (t + b) / 2, (left + r) / 2


def _box(name: str) -> GroundTruth:
    top, left, h, w = BOXES[name]
    s = SUPERSAMPLE
    fine = np.zeros((IMAGE_SIZE * s, IMAGE_SIZE * s), dtype=bool)
    fine[top * s : (top + h) * s, left * s : (left + w) * s] = True
    return GroundTruth(name, "box", fine, (top, left, top + h, left + w))


def _silhouette_geometry(name: str):  # -> shapely geometry, x = column, y = row
    from shapely import affinity, unary_union
    from shapely.geometry import LineString, Point, Polygon, box

    def line(*pts, w=4.0):
        return LineString(pts).buffer(w / 2, cap_style="round")

    def ellipse(cx, cy, a, b):
        return affinity.scale(Point(cx, cy).buffer(1.0, 64), a, b)

    if name == "car":
        parts = [box(60, 120, 196, 150), Polygon([(84, 121), (102, 96), (154, 96), (174, 121)]),
                 Point(90, 150).buffer(15), Point(166, 150).buffer(15)]
    elif name == "person":
        parts = [Point(128, 60).buffer(13), box(110, 76, 146, 136), box(112, 134, 126, 196),
                 box(130, 134, 144, 196), line((112, 80), (88, 130), w=10),
                 line((144, 80), (168, 130), w=10)]
    elif name == "bike":
        ring = Point(0, 0).buffer(26).difference(Point(0, 0).buffer(19))
        parts = [affinity.translate(ring, 84, 150), affinity.translate(ring, 172, 150),
                 line((84, 150), (118, 108), (160, 108), (172, 150)),
                 line((118, 108), (128, 150), (84, 150)), line((128, 150), (160, 108)),
                 line((118, 108), (112, 96), w=5), box(102, 92, 124, 99),
                 line((160, 108), (156, 92), w=5), line((148, 92), (166, 92), w=5)]
    elif name == "plane":
        wing = Polygon([(112, 124), (142, 124), (124, 62), (110, 62)])
        tail = Polygon([(58, 126), (74, 126), (62, 100), (54, 100)])
        mirror = lambda g: affinity.scale(g, 1, -1, origin=(128, 128))  # noqa: E731
        parts = [ellipse(128, 128, 72, 11), wing, mirror(wing), tail, mirror(tail)]
    elif name == "house":
        parts = [box(84, 120, 172, 192), Polygon([(72, 122), (128, 70), (184, 122)]),
                 box(150, 76, 162, 108)]
    elif name == "star":
        ang = np.pi / 2 + np.arange(10) * np.pi / 5
        rad = np.where(np.arange(10) % 2 == 0, 72.0, 30.0)
        parts = [Polygon(np.c_[128 + rad * np.cos(ang), 134 - rad * np.sin(ang)])]
    elif name == "dog":
        parts = [ellipse(124, 132, 50, 22), Point(180, 106).buffer(17),
                 Polygon([(170, 96), (176, 76), (186, 94)]), line((190, 110), (204, 116), w=12)]
        parts += [box(x, 140, x + 11, 186) for x in (86, 104, 136, 152)]
        parts.append(line((76, 126), (58, 100), w=8))
    elif name == "tree":
        parts = [Point(128, 98).buffer(46), Point(100, 118).buffer(28), Point(156, 118).buffer(28),
                 box(118, 130, 138, 202)]
    else:  # pragma: no cover - names are fixed
        raise KeyError(name)
    return unary_union(parts)


def _silhouette(index: int, name: str) -> GroundTruth:
    import shapely

    geom = _silhouette_geometry(name)
    s = SUPERSAMPLE
    centres = (np.arange(IMAGE_SIZE * s) + 0.5) / s
    fine = np.zeros((IMAGE_SIZE * s, IMAGE_SIZE * s), dtype=bool)
    minx, miny, maxx, maxy = geom.bounds
    r0, r1 = int(miny * s), int(np.ceil(maxy * s)) + 1
    c0, c1 = int(minx * s), int(np.ceil(maxx * s)) + 1
    yy, xx = np.meshgrid(centres[r0:r1], centres[c0:c1], indexing="ij")
    shapely.prepare(geom)
    fine[r0:r1, c0:c1] = shapely.contains_xy(geom, xx, yy)
    rows, cols = np.nonzero(fine.any(axis=1))[0], np.nonzero(fine.any(axis=0))[0]
    bbox = (rows[0] / s, cols[0] / s, (rows[-1] + 1) / s, (cols[-1] + 1) / s)
    bbox = tuple(float(v) for v in bbox)
    return GroundTruth(f"gt{9 + index}_{name}", "silhouette", fine, bbox)


@cache
def ground_truth(name: str) -> GroundTruth:
    """The ground truth called ``name`` (see :data:`SHAPE_NAMES`)."""
    if name in BOXES:
        return _box(name)
    for i, n in enumerate(SILHOUETTES):
        if name == f"gt{9 + i}_{n}" or name == n:
            return _silhouette(i, n)
    from geoeval.errors import InputError

    raise InputError(f"unknown ground truth {name!r}; known: {', '.join(SHAPE_NAMES)}")


def ground_truths(names: tuple[str, ...] | None = None) -> list[GroundTruth]:
    """The requested ground truths (all 16 by default), in order."""
    return [ground_truth(n) for n in (names or SHAPE_NAMES)]
