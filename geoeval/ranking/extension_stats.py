"""What the linear extensions of an order say about each item's rank
(:class:`ExtensionStats`), exact or sampled, and the caps of the methods that find it
(:mod:`geoeval.ranking.extensions_exact`, :mod:`geoeval.ranking.extensions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from geoeval.errors import CapacityError

DEFAULT_MAX_STATES = 2_000_000
DEFAULT_BATCHES = 50

# int64 holds every count while n! < 2**63, i.e. n <= 20
INT64_MAX_N = 20


class TooManyStates(CapacityError):
    """The order has more up-sets than the cap allows.

    ``method="auto"`` catches it and samples instead; with ``method="exact"`` it
    reaches the user, whose remedy is a larger ``max_states`` or sampling.
    """

    def __init__(self, states: int) -> None:
        super().__init__(
            f"exact rank counting needs more than {states} up-sets (the --max-states cap); "
            "raise --max-states or use --method mcmc (or auto)")
        self.states = states


@dataclass(frozen=True)
class ExtensionStats:
    """Rank statistics over the linear extensions of an order.

    Attributes
    ----------
    method : str
        ``"exact"`` (dynamic programming over up-sets) or ``"mcmc"``.
    n : int
        Number of items.
    linear_extensions : int or None
        Exact number of linear extensions; ``None`` when sampled.
    rank_frequencies : list of list
        ``rank_frequencies[a][r - 1]``: exact counts ``f_a(r)`` (ints) when exact;
        estimated probabilities ``f_a(r) / e(P)`` (floats) when sampled.
    states : int or None
        Number of up-sets visited by the exact method (``None`` if sampled).
    linear_extensions_estimate : float or None
        Estimated count when sampled (``None`` if not estimated or exact).
    linear_extensions_rse : float or None
        Relative standard error of that estimate (delta method).
    probability_se : ndarray or None
        Batch-means standard error of each estimated probability (sampled only).
    expected_rank_se : ndarray or None
        Batch-means standard error of each expected rank (sampled only).
    samples, burn_in, batches, seed : int or None
        Chain settings (sampled only). ``samples`` counts every step after burn-in.
    acceptance : float or None
        Fraction of post-burn-in steps that swapped two items.
    states_cap : int
        The cap on up-sets that decided between exact and sampled.
    """

    method: str
    n: int
    linear_extensions: int | None
    rank_frequencies: list[list[int]] | list[list[float]]
    states: int | None = None
    linear_extensions_estimate: float | None = None
    linear_extensions_rse: float | None = None
    probability_se: np.ndarray | None = None
    expected_rank_se: np.ndarray | None = None
    samples: int | None = None
    burn_in: int | None = None
    batches: int | None = None
    seed: int | None = None
    acceptance: float | None = None
    states_cap: int = DEFAULT_MAX_STATES
    notes: tuple[str, ...] = field(default=())

    @property
    def exact(self) -> bool:
        """True when counts are exact."""
        return self.method == "exact"

    def probabilities(self) -> np.ndarray:
        """``Pr(rank of a = r)`` as a float array ``(n, n)``."""
        if self.exact:
            total = self.linear_extensions or 1
            return np.array(
                [[float(Fraction(c, total)) for c in row] for row in self.rank_frequencies]
            ).reshape(self.n, self.n)
        return np.asarray(self.rank_frequencies, dtype=float).reshape(self.n, self.n)

    def cumulative(self) -> list[list[int]] | list[list[float]]:
        """Cumulative rank frequencies ``F_a(r) = Σ_{s ≤ r} f_a(s)`` (Özdemir et al. 2010, §4.3).

        Exact integers when exact, probabilities when sampled: those are rounded to
        12 decimals, so that the rounding of the float sums (``0.494 + 0.506`` giving
        ``0.9999999999999999``) cannot make ``F_a(r) < F_b(r) = 1`` and drop a
        comparison the order has (the estimates themselves differ by at least one
        chain step over the steps counted, far above 1e-12).
        """
        out = []
        for row in self.rank_frequencies:
            acc = 0
            cum = []
            for c in row:
                acc += c
                cum.append(acc if self.exact else round(acc, 12))
            out.append(cum)
        return out

    def expected_ranks(self) -> list[Fraction] | list[float]:
        """Expected rank ``Σ_r r f_a(r) / e(P)`` of every item (exact fractions if exact)."""
        if self.exact:
            total = self.linear_extensions or 1
            return [
                Fraction(sum((r + 1) * c for r, c in enumerate(row)), total)
                for row in self.rank_frequencies
            ]
        p = self.probabilities()
        return (p @ np.arange(1, self.n + 1, dtype=float)).tolist()
