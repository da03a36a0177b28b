"""The four alterations of Hemery et al. (2010), §3.2, drawn in batches.

Parameters (Hemery et al. 2010 call the vertical one ``X`` and the horizontal one ``Y``):

* ``translation (v, u)``: the object moves ``v`` pixels down and ``u`` right;
* ``scale (v, u)``: about the bounding-box centre, each horizontal edge moves
  out by ``v`` pixels (height ``h + 2v``) and each vertical edge by ``u``
  (width ``w + 2u``); negative values shrink;
* ``rotation (d,)``: ``d`` degrees counter-clockwise on screen about the
  bounding-box centre;
* ``perspective (v, u)``: the projective map taking the bounding box's corners
  to a quadrilateral whose top edge is ``v`` longer and bottom edge ``v``
  shorter, and whose left edge is ``u`` longer and right edge ``u`` shorter
  (each corner moves by ``v/2`` and ``u/2``; with ``2v`` the quadrilateral of a
  64-pixel box degenerates at ``|v| = |u| = 24``) (Hemery et al. (2010): "a
  positive value of x corresponds to an upscale of the top of the image and a
  downscale of the bottom").

With 1-pixel steps the grid spans ``-24..24`` on both axes (2,400 altered
results besides the identity) and ``-90..90`` degrees for rotation (180): 7,380
results per ground truth, 118,080 for the 16 (Hemery et al. 2010, §3.2).

An altered image is drawn by sending each output pixel centre through the
inverse map and reading the ground truth's supersampled raster (nearest fine
cell); outside the image is background. Translation and scale are separable
(one row map and one column map per alteration); rotation and perspective use
full coordinate maps, computed in chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geoeval.audit.shapes import IMAGE_SIZE, SUPERSAMPLE, GroundTruth
from geoeval.errors import InputError

ALTERATIONS: tuple[str, ...] = ("translation", "scale", "rotation", "perspective")
_TIE = 1e-7  # fine cells: offset used to read both sides of an exact boundary hit


@dataclass(frozen=True)
class Grid:
    """The parameter grid of one alteration.

    Attributes
    ----------
    alteration : str
        One of :data:`ALTERATIONS`.
    axis : numpy.ndarray
        Values along each parameter axis (symmetric about 0, which is included).
    params : numpy.ndarray
        ``(n, ndim)`` parameter rows in C order of the grid (``ndim`` 2, or 1 for
        rotation).
    """

    alteration: str
    axis: np.ndarray
    params: np.ndarray

    @property
    def ndim(self) -> int:
        return self.params.shape[1]

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.axis.size,) * self.ndim

    @property
    def centre(self) -> int:
        """Index of the 0 value on :attr:`axis`."""
        return int(np.flatnonzero(self.axis == 0)[0])


def make_grid(alteration: str, step: float = 1.0, amplitude: float = 24.0,
              angle_step: float = 1.0, angle_amplitude: float = 90.0) -> Grid:
    """Grid of ``alteration``: ``-amplitude..amplitude`` by ``step`` (rotation: degrees)."""
    if alteration not in ALTERATIONS:
        raise InputError(f"unknown alteration {alteration!r}; known: {', '.join(ALTERATIONS)}")
    a, s = (angle_amplitude, angle_step) if alteration == "rotation" else (amplitude, step)
    if s <= 0 or a <= 0:
        raise InputError(f"alteration step and amplitude must be positive, got {s}, {a}")
    half = np.arange(0.0, a + s / 2, s)
    axis = np.concatenate([-half[:0:-1], half])
    if alteration == "rotation":
        return Grid(alteration, axis, axis[:, None].copy())
    v, u = np.meshgrid(axis, axis, indexing="ij")
    return Grid(alteration, axis, np.c_[v.ravel(), u.ravel()])


def _homographies(gt: GroundTruth, params: np.ndarray) -> np.ndarray:
    """Per row of ``params``: the 8 coefficients mapping *altered* (x, y) to *source* (x, y)."""
    t, left, b, r = gt.bbox
    v, u = params[:, 0] / 2, params[:, 1] / 2
    src = np.array([(left, t), (r, t), (r, b), (left, b)], dtype=float)  # TL TR BR BL
    dst = np.stack([
        np.c_[left - v, t - u], np.c_[r + v, t + u], np.c_[r - v, b - u], np.c_[left + v, b + u],
    ], axis=1)  # (n, 4, 2)
    n = params.shape[0]
    a = np.zeros((n, 8, 8))
    rhs = np.zeros((n, 8))
    for k in range(4):  # x_src = (h0 x + h1 y + h2) / (h6 x + h7 y + 1), same for y with h3..h5
        x, y = dst[:, k, 0], dst[:, k, 1]
        xs, ys = src[k]
        a[:, 2 * k, 0], a[:, 2 * k, 1], a[:, 2 * k, 2] = x, y, 1
        a[:, 2 * k, 6], a[:, 2 * k, 7] = -x * xs, -y * xs
        a[:, 2 * k + 1, 3], a[:, 2 * k + 1, 4], a[:, 2 * k + 1, 5] = x, y, 1
        a[:, 2 * k + 1, 6], a[:, 2 * k + 1, 7] = -x * ys, -y * ys
        rhs[:, 2 * k], rhs[:, 2 * k + 1] = xs, ys
    return np.linalg.solve(a, rhs[..., None])[..., 0]


def corners(gt: GroundTruth, alteration: str, params: np.ndarray) -> np.ndarray:
    """Altered bounding-box corners ``(n, 4, 2)`` as (row, col): they enclose the altered object."""
    t, left, b, r = gt.bbox
    cy, cx = gt.centre
    base = np.array([(t, left), (t, r), (b, r), (b, left)], dtype=float)
    p = np.asarray(params, dtype=float)
    if alteration == "translation":
        return base[None] + p[:, None, :]
    if alteration == "scale":
        h, w = b - t, r - left
        fy, fx = (h + 2 * p[:, 0]) / h, (w + 2 * p[:, 1]) / w
        return np.stack([cy + (base[None, :, 0] - cy) * fy[:, None],
                         cx + (base[None, :, 1] - cx) * fx[:, None]], axis=2)
    if alteration == "rotation":
        th = np.deg2rad(p[:, 0])[:, None]
        dy, dx = base[None, :, 0] - cy, base[None, :, 1] - cx
        return np.stack([cy - np.sin(th) * dx + np.cos(th) * dy,
                         cx + np.cos(th) * dx + np.sin(th) * dy], axis=2)
    v, u = p[:, 0][:, None] / 2, p[:, 1][:, None] / 2
    rows = np.c_[t - u, t + u, b - u, b + u]
    cols = np.c_[left - v, r + v, r - v, left + v]
    return np.stack([rows + 0 * v, cols], axis=2)


def window(gt: GroundTruth, grid: Grid, margin: int = 2) -> tuple[int, int, int, int]:
    """``(r0, r1, c0, c1)``: a crop of the image holding the object under every alteration."""
    c = corners(gt, grid.alteration, grid.params)
    r0 = max(0, int(np.floor(c[..., 0].min())) - margin)
    r1 = min(IMAGE_SIZE, int(np.ceil(c[..., 0].max())) + margin)
    c0 = max(0, int(np.floor(c[..., 1].min())) - margin)
    c1 = min(IMAGE_SIZE, int(np.ceil(c[..., 1].max())) + margin)
    return r0, r1, c0, c1


def _lookup(fine: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    s = SUPERSAMPLE
    n = fine.shape[0]
    lim = float(n)  # non-finite coordinates (beyond a perspective's horizon) are outside
    ys = np.floor(np.nan_to_num(ys * s, nan=-1.0, posinf=lim, neginf=-1.0))
    xs = np.floor(np.nan_to_num(xs * s, nan=-1.0, posinf=lim, neginf=-1.0))
    ok = (ys >= 0) & (ys < lim) & (xs >= 0) & (xs < lim)
    fy = np.clip(ys, 0, n - 1).astype(np.int64)
    fx = np.clip(xs, 0, n - 1).astype(np.int64)
    return fine[fy, fx] & ok


def _lookup_closed(fine: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Like :func:`_lookup`, but a point within ``_TIE`` of a cell border reads both cells."""
    s, n = SUPERSAMPLE, fine.shape[0]
    with np.errstate(invalid="ignore"):
        fy, fx = ys * s, xs * s
        ok = (fy > -1) & (fy < n + 1) & (fx > -1) & (fx < n + 1)  # False for NaN
    fy, fx = np.where(ok, fy, -2.0), np.where(ok, fx, -2.0)
    out = np.zeros(fy.shape, dtype=bool)
    tie = None
    for sign in (-1.0, 1.0):
        iy, ix = np.floor(fy + sign * _TIE), np.floor(fx + sign * _TIE)
        if tie is None:
            inside = (iy >= 0) & (iy < n) & (ix >= 0) & (ix < n)
            out = fine[np.clip(iy, 0, n - 1).astype(np.intp), np.clip(ix, 0, n - 1).astype(np.intp)]
            out &= inside
            tie = np.nonzero((np.floor(fy + _TIE) != iy) | (np.floor(fx + _TIE) != ix))
        else:
            iy, ix = iy[tie], ix[tie]
            inside = (iy >= 0) & (iy < n) & (ix >= 0) & (ix < n)
            hit = fine[np.clip(iy, 0, n - 1).astype(np.intp), np.clip(ix, 0, n - 1).astype(np.intp)]
            out[tie] |= hit & inside
    return out


def render(gt: GroundTruth, alteration: str, params: np.ndarray,
           win: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """Altered masks ``(n, r1 − r0, c1 − c0)`` for the parameter rows ``params``.

    Parameters
    ----------
    gt : GroundTruth
    alteration : str
        One of :data:`ALTERATIONS`.
    params : numpy.ndarray
        ``(n, 2)`` (``(n, 1)`` for rotation) parameter rows.
    win : tuple of int, optional
        Crop ``(r0, r1, c0, c1)`` of the 256 × 256 image (default: all of it).
    """
    r0, r1, c0, c1 = win or (0, IMAGE_SIZE, 0, IMAGE_SIZE)
    p = np.asarray(params, dtype=float).reshape(len(params), -1)
    y = np.arange(r0, r1) + 0.5  # pixel centres
    x = np.arange(c0, c1) + 0.5
    cy, cx = gt.centre
    if alteration in ("translation", "scale"):
        if alteration == "translation":
            ys, xs = y[None] - p[:, :1], x[None] - p[:, 1:]
        else:
            t, left, b, r = gt.bbox
            h, w = b - t, r - left
            ys = cy + (y[None] - cy) * (h / (h + 2 * p[:, :1]))
            xs = cx + (x[None] - cx) * (w / (w + 2 * p[:, 1:]))
        return _lookup(gt.fine, ys[:, :, None], xs[:, None, :])
    if alteration == "rotation":
        th = np.deg2rad(p[:, 0])[:, None, None]
        dy, dx = (y - cy)[None, :, None], (x - cx)[None, None, :]
        ys = cy + np.sin(th) * dx + np.cos(th) * dy
        xs = cx + np.cos(th) * dx - np.sin(th) * dy
        return _lookup(gt.fine, ys, xs)
    if alteration == "perspective":
        h = _homographies(gt, p)[:, :, None, None]
        yy, xx = y[None, :, None], x[None, None, :]
        den = h[:, 6] * xx + h[:, 7] * yy + 1.0
        # the side of the horizon holding the object is where den has the sign it has at
        # the altered box's centre (the map sends the bounding box there)
        cen = corners(gt, alteration, p).mean(axis=1)  # (n, 2) row, col
        side = np.sign(h[:, 6, 0, 0] * cen[:, 1] + h[:, 7, 0, 0] * cen[:, 0] + 1.0)
        den = np.where(den * side[:, None, None] > 0, den, np.nan)
        xs = (h[:, 0] * xx + h[:, 1] * yy + h[:, 2]) / den
        ys = (h[:, 3] * xx + h[:, 4] * yy + h[:, 5]) / den
        # pixel centres often land exactly on a box edge; read both sides of the
        # point (closed rule) so that (v, u) and (-v, -u) stay point reflections
        return _lookup_closed(gt.fine, ys, xs)
    raise InputError(f"unknown alteration {alteration!r}; known: {', '.join(ALTERATIONS)}")
