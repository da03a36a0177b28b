"""Property checks of the audit (Hemery et al. 2010, §3.1 and §3.3), on arrays of metric values.

Values are *dissimilarities* (0 = identical; similarities are turned round
first, :meth:`geoeval.measures.localization.Metric.as_dissimilarity`). A curve
is the array of a metric's values over an alteration grid, ``(n, n)`` for a
two-parameter alteration or ``(n,)`` for rotation, with the identity at index
``centre`` of every axis. Every check returns a bool (scale dependency a label)
and is written on plain arrays, so it can be tested on synthetic curves.
"""

from __future__ import annotations

import numpy as np

#: relative tolerance for "equal" values (symmetry, separation, triangle inequality)
EXACT_RTOL = 1e-9


def amplitude(values: np.ndarray) -> float:
    """Range ``max − min`` of the finite values (0 if none)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.max() - v.min()) if v.size else 0.0


def _close(a: np.ndarray, b: np.ndarray, tol: float | np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(invalid="ignore"):
        return (a == b) | (np.abs(a - b) <= tol)


def _tol(*arrays: np.ndarray, rtol: float = EXACT_RTOL) -> float:
    scale = max([1.0] + [float(np.abs(a[np.isfinite(a)]).max(initial=0.0)) for a in arrays])
    return rtol * scale


def symmetry(forward: np.ndarray, backward: np.ndarray) -> bool:
    """``M(I_gt, I_alt) = M(I_alt, I_gt)`` for every alteration (Hemery et al. 2010, §3.3)."""
    f, b = np.asarray(forward, float), np.asarray(backward, float)
    return bool(_close(f, b, _tol(f, b)).all())


def separation(values: np.ndarray, identical: np.ndarray) -> bool:
    """``M = 0`` exactly where the altered result equals the ground truth (Hemery et al., §3.3).

    ``identical`` flags the results equal to the ground truth in the metric's
    representation (the identity always is; e.g. a square rotated by 90° too).
    """
    v = np.asarray(values, float)
    ident = np.asarray(identical, bool)
    zero = np.abs(v) <= _tol(v)
    return bool(np.array_equal(zero, ident))


def triangle_inequality(d13: np.ndarray, d12: np.ndarray, d23: np.ndarray) -> bool:
    """``M(I_1, I_3) ≤ M(I_1, I_2) + M(I_2, I_3)`` on sampled triangles (Hemery et al., §3.3)."""
    a, b, c = (np.asarray(x, float) for x in (d13, d12, d23))
    with np.errstate(invalid="ignore"):
        ok = a <= b + c + _tol(a, b, c)
    return bool(ok.all())


def _flip_all(v: np.ndarray) -> np.ndarray:
    return v[tuple(slice(None, None, -1) for _ in range(v.ndim))]


def axial_symmetry(values: np.ndarray, rtol: float = 0.01) -> bool:
    """Opposite alterations penalised equally: ``M(X, Y) = M(−X, −Y)``, ``M(D) = M(−D)``.

    Equal within ``rtol`` times the curve's amplitude: rasterised silhouettes
    rotated by ``+D`` and ``−D`` are not exact mirror images
    (``docs/audit.md``).
    """
    v = np.asarray(values, float)
    return bool(_close(v, _flip_all(v), rtol * amplitude(v) + _tol(v)).all())


#: quadrant sets: ``"same-sign"`` is Hemery et al. (2010), §3.3 as written (X, Y both positive, and
#: "by adapting the criterion" both negative); ``"all"`` adds the mixed quadrants
QUADRANT_SETS = ("same-sign", "all")


def quadrants(values: np.ndarray, centre: int, which: str = "all") -> list[np.ndarray]:
    """The curve split at the identity into parts oriented outward (index 0 = identity).

    ``which="same-sign"`` keeps the quadrants where both parameters are positive
    or both negative (Hemery et al. 2010, §3.3), ``"all"`` all four; a one-parameter curve has
    two halves either way.
    """
    if which not in QUADRANT_SETS:
        raise ValueError(f"which must be one of {QUADRANT_SETS}, got {which!r}")
    v = np.asarray(values, float)
    c = centre
    if v.ndim == 1:
        return [v[c:], v[c::-1]]
    if which == "same-sign":
        return [v[c:, c:], v[c::-1, c::-1]]
    return [v[c:, c:], v[c::-1, c:], v[c:, c::-1], v[c::-1, c::-1]]


def strict_monotony(values: np.ndarray, centre: int, limit: int | None = None, *,
                    which: str = "same-sign", outer_edge: bool = False,
                    identical: np.ndarray | None = None) -> bool:
    """The further from the identity, the larger the value, strictly (Hemery et al. 2010, §3.3).

    Hemery et al.'s criterion with strict inequalities, in each quadrant oriented away
    from the identity: at every point where both steps exist,
    ``M(X, Y) < M(X+1, Y)`` **or** ``M(X, Y) < M(X, Y+1)``, and
    ``M(X, Y) < M(X+1, Y+1)``. One parameter: ``M(D) < M(D+1)``. ``limit``
    keeps the first ``limit`` steps only (rotation: up to 45° as in Hemery et al. 2010).

    ``which`` picks the quadrants (default ``"same-sign"``: Hemery et al. 2010 check X, Y > 0
    and, adapted, X, Y < 0, never the mixed ones); ``outer_edge=True`` also
    requires the single step along the grid's last row and column to increase
    (Hemery et al. 2010 check only points whose three successors exist). ``identical`` flags
    the results whose rendering equals the ground truth: such a successor is
    the identity again, not a stronger alteration, and is not required to
    score worse.
    """
    v = np.asarray(values, float)
    same = np.zeros(v.shape, bool) if identical is None else np.asarray(identical, bool)
    for q, i in zip(quadrants(v, centre, which), quadrants(same, centre, which), strict=True):
        i = i.astype(bool)
        if limit is not None:
            cut = tuple(slice(0, limit + 1) for _ in range(q.ndim))
            q, i = q[cut], i[cut]
        with np.errstate(invalid="ignore"):
            if q.ndim == 1:
                ok = bool(((q[1:] > q[:-1]) | i[1:]).all())
            else:
                inner = q[:-1, :-1]
                down, right, diag = (  # a successor scores worse, or is the identity again
                    (q[1:, :-1] > inner) | i[1:, :-1], (q[:-1, 1:] > inner) | i[:-1, 1:],
                    (q[1:, 1:] > inner) | i[1:, 1:],
                )
                ok = bool(((down | right) & diag).all())
                if outer_edge:
                    ok = ok and bool(((q[-1, 1:] > q[-1, :-1]) | i[-1, 1:]).all()
                                     and ((q[1:, -1] > q[:-1, -1]) | i[1:, -1]).all())
        if not ok:
            return False
    return True


def _jumps_along(q: np.ndarray, axis: int, threshold: float, ratio: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        d = np.abs(np.diff(q, axis=axis))
    d = np.where(np.isnan(d), 0.0, d)  # inf − inf: no change
    pad = [(0, 0)] * q.ndim
    pad_prev, pad_next = list(pad), list(pad)
    pad_prev[axis], pad_next[axis] = (1, 0), (0, 1)
    n = d.shape[axis]
    prev = np.take(np.pad(d, pad_prev, constant_values=np.nan), range(n), axis=axis)
    nxt = np.take(np.pad(d, pad_next, constant_values=np.nan), range(1, n + 1), axis=axis)
    with np.errstate(invalid="ignore"):
        return (d > threshold) & ~(d <= ratio * prev) & ~(d <= ratio * nxt)


def uniform_continuity(
    values: np.ndarray, centre: int, fraction: float = 1 / 8, ratio: float = 4.0, *,
    which: str = "same-sign",
) -> bool:
    """No gap between consecutive alterations (Hemery et al. 2010, §3.3).

    In each quadrant (oriented away from the identity; ``which`` as in
    :func:`strict_monotony`) and along each axis, a step
    ``|M(X+1) − M(X)|`` above ``fraction`` of the curve's amplitude is a
    discontinuity if it is also more than ``ratio`` times the previous and the
    next step on the same line (a step with no neighbour on one side is
    judged on the other; a steep but steady slope passes).
    """
    threshold = fraction * amplitude(values)
    for q in quadrants(values, centre, which):
        for axis in range(q.ndim):
            if q.shape[axis] > 1 and _jumps_along(q, axis, threshold, ratio).any():
                return False
    return True


def scale_dependency(small: np.ndarray, large: np.ndarray, rtol: float = 1e-3) -> str:
    """How a metric treats one alteration of a small and a large object (Hemery et al., §3.3).

    Returns ``"+"`` (the small object is always penalised more), ``"-"`` (always
    less), ``"+/-"`` (both happen) or ``"none"`` (equal everywhere, within
    ``rtol`` of the larger amplitude).
    """
    s, b = np.asarray(small, float), np.asarray(large, float)
    tol = rtol * max(amplitude(s), amplitude(b)) + _tol(s, b)
    with np.errstate(invalid="ignore"):
        d = s - b
        more, less = bool((d > tol).any()), bool((d < -tol).any())
    if more and less:
        return "+/-"
    return "+" if more else "-" if less else "none"


def shape_dependency(first: np.ndarray, second: np.ndarray, rtol: float = 1e-3) -> bool:
    """Whether two shapes of equal area and perimeter score differently (Hemery et al., §3.3)."""
    a, b = np.asarray(first, float), np.asarray(second, float)
    tol = rtol * max(amplitude(a), amplitude(b)) + _tol(a, b)
    return not bool(_close(a, b, tol).all())
