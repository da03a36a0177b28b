"""Exact counts of linear extensions and rank frequencies, by up-sets.

The first ``k`` items of a linear extension form an *up-set* (closed upwards). With
``N(S)`` the number of ways to list an up-set ``S`` as the top ``|S|`` ranks and ``B(T)``
the number of ways to list the complement of ``T`` below it,

    ``N(S ∪ {a}) = Σ N(S)``  over up-sets ``S`` to which ``a`` can be added,
    ``f_a(r) = Σ_{|S| = r−1, S ∪ {a} up-set} N(S) · B(S ∪ {a})``,

and ``e(P) = N(all) = B(∅)`` (rank frequencies: Özdemir et al. 2010, eq. 19; Patil &
Taillie 2004). Up-sets are bitmasks processed size by size with numpy (int64 counts
while ``n ≤ 20``, so ``n! < 2^63`` bounds every value; Python integers beyond), so the
work is ``O(#up-sets · n)`` vector operations.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from geoeval.ranking.extension_stats import (
    DEFAULT_MAX_STATES,
    INT64_MAX_N,
    ExtensionStats,
    TooManyStates,
)
from geoeval.ranking.poset import Poset


def _primes_below(limit: int, count: int) -> tuple[int, ...]:
    """The ``count`` largest primes below ``limit`` (sieve, then trial division)."""
    root = math.isqrt(limit) + 1
    sieve = np.ones(root + 1, dtype=bool)
    sieve[:2] = False
    for p in range(2, math.isqrt(root) + 1):
        if sieve[p]:
            sieve[p * p :: p] = False
    small = np.flatnonzero(sieve)
    out: list[int] = []
    c = limit - 1
    while len(out) < count:
        if np.all(c % small[small * small <= c]):
            out.append(c)
        c -= 1
    return tuple(out)


@cache
def _moduli_for(n: int) -> tuple[int, ...] | None:
    """``None`` when plain int64 is exact (``n! < 2**63``), else enough primes
    below ``2**31`` that their product exceeds ``n!`` (every count is at most
    ``n!``). Below ``2**31`` a product of two residues stays under ``2**62``, and
    a sum of up to ``2**32`` reduced products cannot overflow int64 either."""
    if n <= INT64_MAX_N:
        return None
    bits = math.lgamma(n + 1) / math.log(2)
    return _primes_below(1 << 31, math.ceil(bits / 30) + 1)


def _crt(residues: np.ndarray, moduli: tuple[int, ...] | None) -> int:
    """Exact integer from its residues (Chinese remainder theorem)."""
    if moduli is None:
        return int(residues.reshape(-1)[0])
    total, prod = 0, 1
    for r, p in zip(residues.tolist(), moduli, strict=True):
        # x ≡ total (mod prod), x ≡ r (mod p)
        t = ((r - total) * pow(prod, -1, p)) % p
        total += prod * t
        prod *= p
    return total


class _Counter:
    """Exact counting on int64 arrays of shape ``(states, lanes)``: one lane
    holding the count itself while ``n ≤ 20``, else one lane per prime modulus."""

    def __init__(self, n: int) -> None:
        self.moduli = _moduli_for(n)
        lanes = 1 if self.moduli is None else len(self.moduli)
        self.lanes = lanes
        self.mod = None if self.moduli is None else np.array(self.moduli, dtype=np.int64)

    def reduce(self, x: np.ndarray) -> np.ndarray:
        return x if self.mod is None else x % self.mod

    def ones(self, size: int) -> np.ndarray:
        return np.ones((size, self.lanes), dtype=np.int64)

    def zeros(self, size: int) -> np.ndarray:
        return np.zeros((size, self.lanes), dtype=np.int64)

    def value(self, residues: np.ndarray) -> int:
        return _crt(residues, self.moduli)


def _up_masks(poset: Poset, dtype: type | np.dtype) -> list[object]:
    """For each item, the bitmask of items strictly better than it."""
    masks: list[object] = []
    for a in range(poset.n):
        m = 0
        for b in np.flatnonzero(poset.better[a]).tolist():
            m |= 1 << b
        masks.append(np.uint64(m) if dtype == np.uint64 else m)
    return masks


def _bit(a: int, dtype: type | np.dtype) -> object:
    return np.uint64(1 << a) if dtype == np.uint64 else 1 << a


def width(poset: Poset) -> int:
    """Size of the largest antichain (Dilworth: ``n`` minus a maximum matching
    of the bipartite graph of strict relations)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    if poset.n == 0:
        return 0
    match = maximum_bipartite_matching(csr_matrix(poset.better), perm_type="column")
    return poset.n - int((match >= 0).sum())


def _forward(
    poset: Poset, counter: _Counter, max_states: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    n = poset.n
    # every subset of an antichain generates a distinct up-set: 2^width states at least
    w = width(poset)
    if w >= 63 or 2**w > max_states:
        raise TooManyStates(max_states)
    mdtype = np.uint64 if n <= 64 else object
    up = _up_masks(poset, mdtype)
    levels = [np.zeros(1, dtype=mdtype)]
    forward = [counter.ones(1)]
    total = 1
    for _ in range(n):
        masks, counts = levels[-1], forward[-1]
        kids, contrib = [], []
        generated = 0
        for a in range(n):
            bit = _bit(a, mdtype)
            sel = ((masks & bit) == 0) & ((masks & up[a]) == up[a])
            if sel.any():
                kids.append(masks[sel] | bit)
                contrib.append(counts[sel])
                # each up-set of size k + 1 arises at most k + 1 <= n times: a
                # lower bound on the new states, checked before memory grows
                generated += kids[-1].size
                if total + -(-generated // n) > max_states:
                    raise TooManyStates(max_states)
        children = np.concatenate(kids)
        values = np.concatenate(contrib)
        order = np.argsort(children, kind="stable")
        children, values = children[order], values[order]
        uniq, start = np.unique(children, return_index=True)
        total += uniq.size
        if total > max_states:
            raise TooManyStates(max_states)
        levels.append(uniq)
        forward.append(counter.reduce(np.add.reduceat(values, start, axis=0)))
    return levels, forward


def exact_rank_frequencies(poset: Poset, max_states: int = DEFAULT_MAX_STATES) -> ExtensionStats:
    """Exact number of linear extensions and rank frequencies ``f_a(r)``.

    Parameters
    ----------
    poset : Poset
        The order (rank 1 = best).
    max_states : int
        Cap on the number of up-sets; :class:`TooManyStates` is raised beyond it.

    Returns
    -------
    ExtensionStats
        ``method="exact"``, Python-int counts.

    Notes
    -----
    ``f_a(r) = Σ N(S) B(S ∪ {a})`` over up-sets ``S`` of size ``r − 1`` to which
    ``a`` can be added (Özdemir et al. 2010, eq. 19 counted by dynamic programming; see the
    module docstring). Counts are int64 while ``n ≤ 20`` (``n! < 2^63``); beyond,
    they are computed modulo enough primes below ``2^31`` that their product
    exceeds ``n!`` and rebuilt exactly by the Chinese remainder theorem.

    Examples
    --------
    >>> p = Poset.from_relations("abcd", [(0, 1), (2, 3)])  # two 2-chains
    >>> exact_rank_frequencies(p).linear_extensions
    6
    """
    n = poset.n
    if n == 0:
        return ExtensionStats("exact", 0, 1, [], states=1, states_cap=max_states)
    counter = _Counter(n)
    levels, forward = _forward(poset, counter, max_states)
    mdtype = levels[0].dtype if levels[0].dtype != object else object
    up = _up_masks(poset, mdtype)
    residues = np.zeros((n, n, counter.lanes), dtype=np.int64)
    back_next = counter.ones(1)  # B(all) = 1
    for k in range(n - 1, -1, -1):
        masks, nxt, fwd = levels[k], levels[k + 1], forward[k]
        back = counter.zeros(masks.size)
        for a in range(n):
            bit = _bit(a, mdtype)
            sel = ((masks & bit) == 0) & ((masks & up[a]) == up[a])
            if not sel.any():
                continue
            b = back_next[np.searchsorted(nxt, masks[sel] | bit)]
            back[sel] += b
            residues[a, k] = counter.reduce(counter.reduce(fwd[sel] * b).sum(axis=0))
        back_next = counter.reduce(back)
    total = counter.value(back_next[0])
    freq = [[counter.value(residues[a, k]) for k in range(n)] for a in range(n)]
    states = int(sum(lv.size for lv in levels))
    return ExtensionStats("exact", n, total, freq, states=states, states_cap=max_states)


def count_linear_extensions(poset: Poset, max_states: int = DEFAULT_MAX_STATES) -> int:
    """Exact number of linear extensions ``e(P)`` (forward pass only)."""
    if poset.n == 0:
        return 1
    counter = _Counter(poset.n)
    _, forward = _forward(poset, counter, max_states)
    return counter.value(forward[-1][0])
