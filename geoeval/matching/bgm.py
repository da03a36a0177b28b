"""Maximum-weight bipartite graph matching (BGM).

Jiang, Marti, Irniger & Bunke (2006), as adapted in Özdemir et al. (2010), §4.1.1:
one-to-one matching maximising the total overlap ``Σ C_ij``; background
excluded. Its score is eq. 1, computed in :mod:`geoeval.measures.counts`.
"""

from __future__ import annotations

from geoeval.matching.assignment import max_weight_matching
from geoeval.matching.build import from_edges
from geoeval.matching.result import Matching
from geoeval.overlap import Overlap


def match_bgm(overlap: Overlap) -> Matching:
    """One-to-one matching of maximum total overlap (Hungarian, per component).

    Parameters
    ----------
    overlap : Overlap

    Returns
    -------
    Matching
        One-to-one instances only.

    Notes
    -----
    Maximise ``Σ C_ij z_ij`` subject to every object in at most one pair
    (Özdemir et al. 2010, §4.1.1). Components that are already one-to-one are
    taken without a solver; the rest go to SciPy's ``linear_sum_assignment``.
    """
    chosen = max_weight_matching(
        overlap.rows, overlap.cols, overlap.weights, overlap.n_reference, overlap.n_submission
    )
    return from_edges(overlap, chosen, "bgm")
