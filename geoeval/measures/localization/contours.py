"""Contour metrics of Hemery et al. (2010), Table 2 (inputs: contour images, 1 = contour pixel).

Notation (Hemery et al. 2010, Table 1): ``I_gt^c``, ``I_l^c`` the contour pixels of the
reference and of the result, ``card(I)`` the pixels of the common support,
``d(k, X)`` the Euclidean distance from pixel ``k`` to the nearest pixel of
``X``. Contour images are read as grey-level images ``gI(k)``: 1 on the contour
and 0 elsewhere; the three divergences (Kullback, Bhattacharyya, Jensen) need a
positive background, so they read it as ``eps`` (default ``1e-3``; see
``docs/localization.md``). Every metric here is a dissimilarity (0 = identical)
except SNR and FOM, which are similarities (SNR = +inf, FOM = 1 when identical).
"""

from __future__ import annotations

import numpy as np

from geoeval.errors import InputError
from geoeval.measures.localization._wrap import pair_metric, safe_div
from geoeval.measures.localization.pairs import ContourPair

#: grey level of non-contour pixels in the divergences (KUL, BHA, JEN)
EPS = 1e-3


def _xor(p: ContourPair) -> np.ndarray:
    return p.n_ref + p.n_res - 2 * p.n_both


def _classes(p: ContourPair) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pixel counts of (contour in both, reference only, result only, neither)."""
    both = p.n_both
    return both, p.n_ref - both, p.n_res - both, p.n_pixels - p.n_ref - p.n_res + both


@pair_metric("contour", "Dissimilarity in ``[0, 1]``.")
def localization_error(pair: ContourPair) -> np.ndarray:
    """ErrLoc: share of the image where the two contour images disagree.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``ErrLoc = card(I_{gt\\l}^c ∪ I_{l\\gt}^c) / card(I)``.

    References
    ----------
    Chabrier, PhD thesis (2005); Baddeley (1992); Hemery et al. (2010), Table 2.
    """
    return _xor(pair) / pair.n_pixels


@pair_metric("contour", "Dissimilarity in ``[0, 1]``; NaN for an empty reference contour.")
def under_detection_error(pair: ContourPair) -> np.ndarray:
    """ErrSous: share of the reference contour missing from the result.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``ErrSous = card(I_{gt\\l}^c) / card(I_gt^c)``.

    References
    ----------
    Chabrier (2005); Hemery et al. (2010), Table 2.
    """
    return safe_div(pair.n_ref - pair.n_both, pair.n_ref)


@pair_metric("contour", "Dissimilarity in ``[0, 1]``.")
def over_detection_error(pair: ContourPair) -> np.ndarray:
    """ErrSur: result contour pixels off the reference contour, per non-contour pixel.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``ErrSur = card(I_{l\\gt}^c) / (card(I) − card(I_gt^c))``.

    References
    ----------
    Chabrier (2005); Hemery et al. (2010), Table 2.
    """
    return safe_div(pair.n_res - pair.n_both, pair.n_pixels - pair.n_ref)


@pair_metric("contour", "Similarity ``≥ 0``; +inf when the contour images are identical.")
def signal_to_noise_ratio(pair: ContourPair) -> np.ndarray:
    """SNR of the result contour image against the reference (a **similarity**).

    Notes
    -----
    Hemery et al. (2010), Table 2 prints ``[1/card(I) Σ_k gI_l(k)² / (gI_gt(k) − gI_l(k))²]^{1/2}``,
    whose terms are ``0/0`` or ``1/0`` for binary images; geoeval uses the usual
    ratio of sums ``SNR = [Σ_k gI_l(k)² / Σ_k (gI_gt(k) − gI_l(k))²]^{1/2}``
    ``= [card(I_l^c) / card(I_gt^c Δ I_l^c)]^{1/2}`` (``docs/localization.md``).

    References
    ----------
    Coquin, Bolon & Chehadeh (1997); Wilson, Baddeley & Owens (1997).
    """
    return np.sqrt(safe_div(pair.n_res, _xor(pair), empty=np.inf))


@pair_metric("contour", "Dissimilarity in ``[0, 1]``.")
def root_mean_square(pair: ContourPair) -> np.ndarray:
    """rms: root mean square difference of the two contour images.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``rms = [1/card(I) Σ_k (gI_gt(k) − gI_l(k))²]^{1/2}``.

    References
    ----------
    Coquin et al. (1997); Wilson et al. (1997).
    """
    return np.sqrt(_xor(pair) / pair.n_pixels)


@pair_metric("contour", "Dissimilarity in ``[0, 1]``.")
def lq_distance(pair: ContourPair, q: float = 1.0) -> np.ndarray:
    """Lq distance between the two contour images.

    Parameters
    ----------
    q : float
        Exponent (Hemery et al. 2010 use 1 and 3).

    Notes
    -----
    Hemery et al. (2010), Table 2: ``L_q = [1/card(I) Σ_k |gI_l(k) − gI_gt(k)|^q]^{1/q}``.

    References
    ----------
    Coquin et al. (1997); Wilson et al. (1997).
    """
    return (_xor(pair) / pair.n_pixels) ** (1.0 / q)


@pair_metric("contour", "Dissimilarity ``≥ 0``.")
def kullback_distance(pair: ContourPair, eps: float = EPS, support: str = "image") -> np.ndarray:
    """KUL: symmetric Kullback divergence of the contour grey-level images.

    Parameters
    ----------
    eps : float
        Grey level of non-contour pixels (keeps the logarithm finite).
    support : {"image", "result"}
        Pixels summed over: every pixel of the result image (``"image"``,
        symmetric, a multiple of ErrLoc) or the result's contour pixels
        ``I_l^c`` (``"result"``, not symmetric: only result contour pixels off
        the reference contour count). Hemery et al. (2010), Table 3 finds KUL not symmetric but
        with separation and triangle inequality, which only the second reading
        gives; the audit registry uses it (``docs/localization.md``).

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``KUL = 1/card(I) Σ_k (gI_l(k) − gI_gt(k)) log(gI_l(k) / gI_gt(k))``,
    the sum over all pixels of the result image (Table 1: ``I_l`` is the result
    image). With grey levels 1 and ``eps`` every disagreeing pixel adds
    ``(1 − eps) ln(1/eps)``.

    References
    ----------
    Basseville, Signal Process. 18(4) 1989; Chabrier (2005).
    """
    if support not in ("image", "result"):
        raise InputError(f"support must be 'image' or 'result', got {support!r}")
    count = _xor(pair) if support == "image" else pair.n_res - pair.n_both
    return count * (1 - eps) * np.log(1 / eps) / pair.n_pixels


@pair_metric("contour", "Not 0 for identical images (Hemery et al. 2010, Table 3: no separation).")
def bhattacharyya_distance(pair: ContourPair, eps: float = EPS, levels: str = "contour"
                           ) -> np.ndarray:
    """BHA: Bhattacharyya distance of the contour grey-level images.

    Parameters
    ----------
    eps : float
        The low grey level.
    levels : {"contour", "background"}
        Which pixels are bright (grey level 1): the contour pixels, the
        background at ``eps`` (``"contour"``), or the background, the contour
        drawn dark at ``eps`` (``"background"``, black lines on white). See
        ``docs/localization.md`` for the reading the audit uses.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``BHA = −log(1/card(I) Σ_k [gI_gt(k) gI_l(k)]^{1/2})``.

    References
    ----------
    Basseville (1989); Chabrier (2005).
    """
    n11, n10, n01, n00 = _classes(pair)
    on, off = _levels_of(levels, eps)
    s = n11 * on + np.sqrt(on * off) * (n10 + n01) + n00 * off
    return -np.log(s / pair.n_pixels)


def _levels_of(levels: str, eps: float) -> tuple[float, float]:
    """Grey levels ``(contour, background)`` of a contour image read as a grey image."""
    if levels == "contour":
        return 1.0, eps
    if levels == "background":
        return eps, 1.0
    raise InputError(f"levels must be 'contour' or 'background', got {levels!r}")


def _renyi(counts: tuple[np.ndarray, ...], levels: tuple[float, ...], alpha: float) -> np.ndarray:
    s = sum(n * g**alpha for n, g in zip(counts, levels, strict=True))
    return np.log2(s) / (1 - alpha)


@pair_metric("contour", "0 for identical images; not symmetric.")
def jensen_distance(pair: ContourPair, alpha: float = 3.0, eps: float = EPS,
                    levels: str = "contour") -> np.ndarray:
    """JEN: Jensen-like divergence built on Rényi entropies of order ``alpha``.

    Parameters
    ----------
    alpha : float
        Order of the Rényi entropy (Hemery et al. 2010: 3).
    eps : float
        The low grey level.
    levels : {"contour", "background"}
        Bright contour on a dark background, or the reverse (as in
        :func:`bhattacharyya_distance`).

    Notes
    -----
    Hemery et al. (2010), Table 2: ``JEN = J((I_gt + I_l)/2, I_gt)`` with
    ``J(I_1, I_2) = H_α(√(I_1 I_2)) − (H_α(I_1) + H_α(I_2))/2`` and
    ``H_α(I) = 1/(1 − α) log2 Σ_k gI(k)^α`` (pixelwise products and means).

    References
    ----------
    Basseville (1989); Chabrier (2005).
    """
    counts = _classes(pair)
    on, off = _levels_of(levels, eps)
    g = (on, on), (on, off), (off, on), (off, off)  # (gt, l) per class
    a = tuple((x + y) / 2 for x, y in g)
    b = tuple(x for x, _ in g)
    ab = tuple(np.sqrt(x * y) for x, y in zip(a, b, strict=True))
    return _renyi(counts, ab, alpha) - (_renyi(counts, a, alpha) + _renyi(counts, b, alpha)) / 2


@pair_metric("contour", "Dissimilarity in pixels; NaN for an empty result contour.")
def mean_distance(pair: ContourPair) -> np.ndarray:
    """DMoy: mean distance from the result contour to the reference contour.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``DMoy = 1/card(I_l^c) Σ_{k ∈ I_l^c} d(k, I_gt^c)``.

    References
    ----------
    Peli & Malah, Comput. Graph. Image Process. 20 (1982).

    Examples
    --------
    >>> a = np.zeros((5, 5), bool); a[1, :] = True
    >>> b = np.zeros((5, 5), bool); b[3, :] = True
    >>> mean_distance(a, b)
    2.0
    """
    return safe_div(pair.sum_over_res(pair.d_res_to_ref), pair.n_res)


@pair_metric("contour", "Dissimilarity in squared pixels; NaN for an empty result contour.")
def mean_squared_distance(pair: ContourPair) -> np.ndarray:
    """DMoC: mean squared distance from the result contour to the reference contour.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``DMoC = 1/card(I_l^c) Σ_{k ∈ I_l^c} d(k, I_gt^c)²``.

    References
    ----------
    Peli & Malah (1982).
    """
    return safe_div(pair.sum_over_res(pair.d_res_to_ref**2), pair.n_res)


@pair_metric("contour", "Similarity in ``(0, 1]``.")
def figure_of_merit(pair: ContourPair, alpha: float = 1 / 9) -> np.ndarray:
    """FOM: Pratt's figure of merit (a **similarity**, 1 = identical).

    Parameters
    ----------
    alpha : float
        Scaling constant (Pratt: 1/9).

    Notes
    -----
    Hemery et al. (2010), eq. 5–6: ``FOM = 1/MP Σ_{k ∈ I_l^c} 1/(1 + α d(k, I_gt^c)²)``,
    ``MP = max(card(I_gt^c), card(I_l^c))``.

    References
    ----------
    Pratt, Faugeras & Gagalowicz, IEEE Trans. SMC 8(11) 1978; Hemery et al. (2010), eq. 5.
    """
    s = pair.sum_over_res(1.0 / (1.0 + alpha * pair.d_res_to_ref**2))
    return safe_div(s, np.maximum(pair.n_ref, pair.n_res))


@pair_metric("contour", "Dissimilarity in pixels; +inf if one contour is empty.")
def hausdorff_distance(pair: ContourPair) -> np.ndarray:
    """HAU: Hausdorff distance between the two contours.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``HAU = max(h(I_gt, I_l), h(I_l, I_gt))`` with
    ``h(I_1, I_2) = max_{k ∈ I_1^c} d(k, I_2^c)``.

    References
    ----------
    Baddeley (1992); Beauchemin, Thomson & Edwards, Can. J. Remote Sens. 24(1) 1998.
    """
    h1 = pair.max_over(pair.d_res_to_ref, pair.res_pts)
    h2 = pair.max_over(pair.d_ref_to_res, pair.ref_pts)
    out = np.maximum(h1, h2)
    empty = (pair.n_ref == 0) | (pair.n_res == 0)
    out[empty] = np.inf
    return out


@pair_metric("contour", "Dissimilarity in pixels.")
def baddeley_distance(pair: ContourPair, p: float = 2.0) -> np.ndarray:
    """BAD: Baddeley's distance, summed over the union of the two contours.

    Parameters
    ----------
    p : float
        Exponent ``P ≥ 1`` (Hemery et al. 2010 use 1, 2, 3).

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``BAD = [1/card(I) Σ_{k ∈ I_gt^c ∪ I_l^c} |d(k, I_gt^c) − d(k, I_l^c)|^P]^{1/P}``.
    On the union one of the two distances is 0, so the sum is
    ``Σ_{I_l^c} d(k, I_gt^c)^P + Σ_{I_gt^c} d(k, I_l^c)^P``. (Baddeley's original
    sums over all pixels with a cut-off; geoeval follows the Hemery et al. (2010) table.)

    References
    ----------
    Baddeley, "An error metric for binary images" (1992); Wilson et al. (1997).
    """
    s = pair.sum_over_res(pair.d_res_to_ref**p) + pair.sum_over_ref(pair.d_ref_to_res**p)
    return (s / pair.n_pixels) ** (1.0 / p)


@pair_metric("contour", "Dissimilarity; 0 when no result contour pixel lies off the "
             "reference contour.")
def odet_over_detection(pair: ContourPair, n: float = 1.0, d_th: float = 5.0) -> np.ndarray:
    """ODI_n: Odet's over-detection error (result contour pixels off the reference).

    Parameters
    ----------
    n : float
        Exponent (Hemery et al. 2010: 1 and 2).
    d_th : float
        Distance scale (Hemery et al. 2010: 5 pixels).

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``ODI_n = 1/card(I_{l\\gt}^c) Σ_{k ∈ I_{l\\gt}^c} (d(k, I_gt^c)/d_Th)^n``.

    References
    ----------
    Odet, Belaroussi & Benoit-Cattin, ICIP 2002.
    """
    s = pair.sum_over_res((pair.d_res_to_ref / d_th) ** n)
    return safe_div(s, pair.n_res - pair.n_both, empty=0.0)


@pair_metric("contour", "Dissimilarity; 0 when every reference contour pixel is on the "
             "result contour.")
def odet_under_detection(pair: ContourPair, n: float = 1.0, d_th: float = 5.0) -> np.ndarray:
    """UDI_n: Odet's under-detection error (reference contour pixels off the result).

    Parameters
    ----------
    n, d_th : float
        As in :func:`odet_over_detection`.

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``UDI_n = 1/card(I_{gt\\l}^c) Σ_{k ∈ I_{gt\\l}^c} (d(k, I_l^c)/d_Th)^n``,
    which is ODI_n with the two contours exchanged: ``UDI_n(I_gt, I_l) = ODI_n(I_l, I_gt)``.

    References
    ----------
    Odet et al. (2002).
    """
    return odet_over_detection.core(pair.swapped(), n=n, d_th=d_th)
