"""A paired spatial block bootstrap of a contest: how sure is the ranking?

Every submission is resampled with the same blocks in a replicate (one block
grid over the reference, one set of draws: a paired bootstrap, so a
submission's luck with a block is shared by all), and each replicate's
indicators (precision, recall, accuracy of one matcher, as the Hasse ranking
uses) are rebuilt from per-block sums (:mod:`geoeval.scoring.bootstrap`).

In each replicate the dominance order of the indicators (Özdemir et al.
2010, §4.3: ``j`` dominates ``i`` when it is at least as good on every
indicator and better on one) gives each submission a rank interval
``[1 + #dominating it, n - #dominated by it]``, the ranks it takes in the
linear extensions of that order. Over the replicates:

* ``undominated``: the share of replicates in which no submission dominates it
  (it could be ranked first: a dominance, not a probability of winning);
* ``rank_interval``: the ``(1 - c)/2`` quantile of its best rank and the
  ``(1 + c)/2`` quantile of its worst rank;
* ``dominance``: for each pair, the share of replicates in which one
  dominates the other; ``robust_edges`` those at or above the confidence.

An undefined indicator (NaN) in a replicate dominates nothing and is dominated
by nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.objects import ObjectSet
from geoeval.scoring.bootstrap import (
    block_grid,
    block_statistics,
    block_weights,
    check_bootstrap,
    replicate_measures,
)


def replicate_dominance(values: np.ndarray) -> np.ndarray:
    """``dom[r, i, j]``: submission ``j`` dominates ``i`` in replicate ``r``.

    ``values`` has shape ``(replicates, submissions, indicators)``, higher is better.
    """
    a = values[:, :, None, :]
    b = values[:, None, :, :]
    with np.errstate(invalid="ignore"):
        return np.all(a <= b, axis=3) & np.any(a < b, axis=3)


def contest_bootstrap(reference: ObjectSet, results: dict[str, Any], matcher: str,
                      indicators: tuple[str, ...], *, n: int, seed: int = 0,
                      confidence: float = 0.95, block_size: float | None = None
                      ) -> dict[str, Any]:
    """The contest's paired bootstrap (module docstring) as the ranking JSON's
    ``bootstrap`` object.

    Parameters
    ----------
    reference : ObjectSet
    results : dict of str to ScoreResult
        Each submission's scored scene (against ``reference``), in contest order.
    matcher : str
    indicators : tuple of str
        The ranking's indicators (``precision``, ``recall``, ``accuracy``).
    n, seed, confidence, block_size
        As in :func:`geoeval.scoring.bootstrap.bootstrap_scene`.
    """
    check_bootstrap(n, confidence, seed, block_size)
    grid = block_grid(reference, reference, block_size)
    weights = block_weights(grid.n_blocks, n, seed)
    rb = grid.block_of(reference)
    names = list(results)
    vals = np.empty((n, len(names), len(indicators)))
    for k, name in enumerate(names):
        res = results[name]
        r = res.results[matcher]
        stats = block_statistics(r, res.overlap, rb, grid.block_of(res.submission),
                                 grid.n_blocks)
        reps = replicate_measures(matcher, stats, weights, r.mallows is not None)
        for q, ind in enumerate(indicators):
            vals[:, k, q] = reps[ind]
    dom = replicate_dominance(vals)
    m = len(names)
    best = 1 + dom.sum(axis=2)
    worst = m - dom.sum(axis=1)
    alpha = (1 - confidence) / 2
    lo = np.quantile(best, alpha, axis=0, method="lower")
    hi = np.quantile(worst, 1 - alpha, axis=0, method="higher")
    freq = dom.mean(axis=0)  # freq[i, j]: j dominates i
    robust = [[names[j], names[i]] for i in range(m) for j in range(m)
              if i != j and freq[i, j] >= confidence]
    return {
        "n": n, "seed": seed, "confidence": confidence, "block_size": grid.size,
        "blocks": [grid.nx, grid.ny], "block_rule": grid.rule, "matcher": matcher,
        "indicators": list(indicators), "paired": True,
        "undominated": {nm: float(np.mean(best[:, k] == 1)) for k, nm in enumerate(names)},
        "rank_interval": {nm: [int(lo[k]), int(hi[k])] for k, nm in enumerate(names)},
        "dominance": {names[j]: {names[i]: float(freq[i, j]) for i in range(m) if i != j}
                      for j in range(m)},
        "robust_edges": robust,
    }
