"""The iterated cumulative rank frequency (CRF) operator of Patil & Taillie (2004).

Round ``k`` replaces every item's indicators by its cumulative rank frequencies
``F_a(1), …, F_a(n)`` in the order of round ``k − 1`` (Özdemir et al. 2010, §4.3): ``a`` is better
than ``b`` in round ``k`` iff ``F_a(r) ≥ F_b(r)`` for every ``r`` and the two
vectors differ (Özdemir et al. 2010, §4.3). The operator keeps every strict comparison of the
previous round (``a > b`` puts ``a`` above ``b`` in every linear extension, so
``F_a ≥ F_b`` with a strict inequality at ``a``'s top rank), and adds new ones;
it is repeated until the order is linear up to ties (a weak order: every two
items comparable or tied), or until it stops changing, or until a round limit.

Remaining ties are broken by detection accuracy (higher first), then by name.
If the order did not become linear up to ties, the stated fallback orders the
items by expected rank in the last round, then by accuracy, then by name
(expected rank respects the last order: ``a > b`` gives ``a`` a smaller one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from geoeval.errors import InputError
from geoeval.ranking.extensions import ExtensionStats
from geoeval.ranking.poset import Poset

DEFAULT_MAX_ROUNDS = 20

FALLBACK = "expected rank in the last round, then accuracy, then name"


def fallback(tie_break: str | None) -> str:
    """The fallback's order in words, naming the tie-break column it uses
    (:data:`FALLBACK` with the default ``accuracy``; ``then name`` alone when there
    is no tie-break column).

    >>> fallback("runtime")
    'expected rank in the last round, then runtime, then name'
    >>> fallback(None)
    'expected rank in the last round, then name'
    """
    then = f", then {tie_break}" if tie_break else ""
    return f"expected rank in the last round{then}, then name"


@dataclass(frozen=True)
class CRFRound:
    """One application of the CRF operator.

    Attributes
    ----------
    round : int
        1 for the first application (built from the indicator order's ranks).
    poset : Poset
        The order of this round (dominance of the previous round's ``F``).
    stats : ExtensionStats
        Linear extensions of this round's order.
    """

    round: int
    poset: Poset
    stats: ExtensionStats


@dataclass(frozen=True)
class CRFOutcome:
    """Result of :func:`iterate_crf`.

    Attributes
    ----------
    rounds : tuple of CRFRound
        Every round computed (possibly none, if the order was already a weak order).
    converged : bool
        True iff the last order is linear up to ties.
    stop_reason : str
        ``"linear"``, ``"linear up to ties"``, ``"no change"`` or ``"round limit"``.
    """

    rounds: tuple[CRFRound, ...]
    converged: bool
    stop_reason: str


def crf_vectors(stats: ExtensionStats) -> list[list[object]]:
    """Cumulative rank frequencies ``F_a(r) = Σ_{s ≤ r} f_a(s)`` (Özdemir et al. 2010, §4.3), the
    indicators of the next round (exact ints if counted, probabilities if sampled)."""
    return stats.cumulative()


def crf_step(poset: Poset, stats: ExtensionStats) -> Poset:
    """One CRF round: the dominance order of the cumulative rank frequencies.

    Items whose cumulative vectors are identical are tied (incomparable).
    """
    return Poset.from_exact_vectors(poset.names, crf_vectors(stats))


def iterate_crf(
    poset: Poset,
    stats: ExtensionStats,
    count: Callable[[Poset], ExtensionStats],
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> CRFOutcome:
    """Apply the CRF operator until the order is linear up to ties.

    Parameters
    ----------
    poset, stats : Poset, ExtensionStats
        The indicator order and its rank statistics.
    count : callable
        Rank statistics of an order (exact or sampled), used for every round.
    max_rounds : int
        Round limit (≥ 0). Beyond it, or when a round adds no comparison, the
        outcome is not converged and the caller applies the fallback
        (:data:`FALLBACK`).

    Returns
    -------
    CRFOutcome

    Notes
    -----
    Patil & Taillie (2004), §5 (cumulative rank frequency operator); Özdemir et al. (2010), §4.3.
    """
    if max_rounds < 0:
        raise InputError(f"max_rounds must be >= 0, got {max_rounds}")
    rounds: list[CRFRound] = []
    current, current_stats = poset, stats
    while True:
        if current.is_linear():
            return CRFOutcome(tuple(rounds), True, "linear")
        if current.is_linear_up_to_ties():
            return CRFOutcome(tuple(rounds), True, "linear up to ties")
        if len(rounds) >= max_rounds:
            return CRFOutcome(tuple(rounds), False, "round limit")
        nxt = crf_step(current, current_stats)
        if (nxt.better == current.better).all():
            return CRFOutcome(tuple(rounds), False, "no change")
        nxt_stats = count(nxt)
        rounds.append(CRFRound(len(rounds) + 1, nxt, nxt_stats))
        current, current_stats = nxt, nxt_stats


def _accuracy_key(value: float | None) -> tuple[int, float]:
    """Sort key: higher accuracy first, undefined last."""
    return (1, 0.0) if value is None else (0, -float(value))


def final_order(
    poset: Poset,
    stats: ExtensionStats,
    converged: bool,
    accuracy: Sequence[float | None] | None,
) -> tuple[list[int], list[dict[str, object]]]:
    """The final ranking (indices, best first) and the ties that were broken.

    Parameters
    ----------
    poset, stats : Poset, ExtensionStats
        The last round's order and statistics.
    converged : bool
        Whether the order is linear up to ties. If so, items are sorted by the
        number of items strictly above them; otherwise by expected rank
        (:data:`FALLBACK`).
    accuracy : sequence of float or None, optional
        Detection accuracy of every item (tie-breaker; None if undefined).

    Returns
    -------
    order : list of int
        Item indices, best first.
    ties : list of dict
        One entry per group of items the order left tied, with ``items`` (names
        in final order), ``by`` (``"accuracy"``, ``"name"`` or ``"accuracy, then
        name"``) and the accuracies used.
    """
    n = poset.n
    acc = list(accuracy) if accuracy is not None else [None] * n
    if converged:
        primary: list[object] = [int(x) for x in poset.better.sum(axis=1)]
    else:
        primary = list(stats.expected_ranks())
    order = sorted(range(n), key=lambda a: (primary[a], _accuracy_key(acc[a]), poset.names[a]))
    ties: list[dict[str, object]] = []
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and primary[order[stop]] == primary[order[start]]:
            stop += 1
        group = order[start:stop]
        if len(group) > 1:
            keys = [_accuracy_key(acc[a]) for a in group]
            distinct = len(set(keys))
            if accuracy is None or distinct == 1:
                by = "name"
            elif distinct == len(group):
                by = "accuracy"
            else:
                by = "accuracy, then name"
            ties.append(
                {
                    "items": [poset.names[a] for a in group],
                    "by": by,
                    "accuracy": [acc[a] for a in group] if accuracy is not None else None,
                }
            )
        start = stop
    return order, ties
