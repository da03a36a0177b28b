"""Linear extensions of a finite order: exact counts and rank frequencies, or
Markov chain estimates when the order is too wide.

A linear extension lists the items best first, ``a_1, …, a_n``, never putting an
item above one that is strictly better (Özdemir et al. 2010, §4.3). The rank frequency
``f_a(r)`` is the number of linear extensions that give ``a`` rank ``r``
(Özdemir et al. 2010, eq. 19; Patil & Taillie 2004).

**Exact** (:func:`exact_rank_frequencies`). The first ``k`` items of a linear
extension form an *up-set* (closed upwards). With ``N(S)`` the number of ways
to list an up-set ``S`` as the top ``|S|`` ranks and ``B(T)`` the number of ways
to list the complement of ``T`` below it,

    ``N(S ∪ {a}) = Σ N(S)``  over up-sets ``S`` to which ``a`` can be added,
    ``f_a(r) = Σ_{|S| = r−1, S ∪ {a} up-set} N(S) · B(S ∪ {a})``,

and ``e(P) = N(all) = B(∅)``. Up-sets are bitmasks processed size by size with
numpy (int64 counts while ``n ≤ 20``, so ``n! < 2^63`` bounds every value;
Python integers beyond), so the work is ``O(#up-sets · n)`` vector operations.

**Sampled** (:func:`sample_rank_frequencies`). The adjacent-transposition chain
of Karzanov & Khachiyan (1991) with the position weights of Bubley & Dyer
(1999): pick a position ``i`` with probability ∝ ``i (n − i)``, flip a fair coin,
and on heads swap the items at ranks ``i`` and ``i + 1`` unless they are
comparable. The proposal is symmetric, so the chain is uniform on linear
extensions. Every step is counted (a lazy or rejected step repeats the state),
the occupation times of each item at each rank are accumulated exactly, and the
standard errors come from batch means. The number of linear extensions is
estimated by peeling maximal items: ``e(P) = e(P − m) · E[s]``, where ``s`` is
the number of places where ``m`` can be inserted into a uniform linear
extension of ``P − m`` (one chain per peeled item), until the rest is small
enough to count exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache

import numpy as np

from geoeval.errors import CapacityError, InputError
from geoeval.ranking.poset import Poset

DEFAULT_MAX_STATES = 2_000_000
DEFAULT_BATCHES = 50

# int64 holds every count while n! < 2**63, i.e. n <= 20
_INT64_MAX_N = 20


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


# ----------------------------------------------------------------------------- exact


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
    if n <= _INT64_MAX_N:
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


# ----------------------------------------------------------------------------- MCMC


def _initial_extension(poset: Poset) -> list[int]:
    """A linear extension, best first: sort by number of strictly better items."""
    above = poset.better.sum(axis=1)
    return np.argsort(above, kind="stable").tolist()


def default_burn_in(n: int) -> int:
    """Default burn-in: ``⌈n³ ln n⌉`` steps (the order of the Bubley–Dyer mixing
    time bound), at least 1,000."""
    return max(1000, math.ceil(n**3 * math.log(max(n, 2))))


def default_samples(n: int) -> int:
    """Default number of counted steps: ``max(200,000, 10 × burn-in)``."""
    return max(200_000, 10 * default_burn_in(n))


def _run_chain(
    poset: Poset,
    samples: int,
    burn_in: int,
    batches: int,
    rng: np.random.Generator,
    track: int = 0,
) -> tuple[np.ndarray, int, np.ndarray]:
    """Run the chain.

    Returns per-batch occupation counts ``(batches, n, n)`` (item, rank) over
    the counted steps, the number of accepted swaps, and per batch the mean of
    ``1 + min position of the items in the bitmask track`` (``n + 1`` if none),
    the number of places above all of them.
    """
    n = poset.n
    comp = [0] * n
    rel = poset.better | poset.better.T
    for a in range(n):
        m = 0
        for b in np.flatnonzero(rel[a]).tolist():
            m |= 1 << b
        comp[a] = m
    order = _initial_extension(poset)
    pos = [0] * n
    for i, a in enumerate(order):
        pos[a] = i
    tracked = [bool((track >> a) & 1) for a in range(n)]
    occ = np.zeros((batches, n, n), dtype=np.int64)
    slots = np.zeros(batches, dtype=float)
    batch_len = samples // batches
    top_now = min((pos[a] for a in range(n) if tracked[a]), default=n)
    if n < 2:
        occ[:, 0, 0] = batch_len
        slots[:] = top_now + 1
        return occ, 0, slots
    weights = np.array([i * (n - i) for i in range(1, n)], dtype=float)
    weights /= weights.sum()
    chunk = 1 << 16
    # mutable chain state shared with advance(): [top position of tracked items,
    # step since which it holds, accumulated slot-steps]
    top = [top_now, 1, 0]

    def advance(steps: int, record: list[int] | None, since: list[int]) -> int:
        """Run ``steps`` steps; record occupation in ``record`` (flat n*n) if given."""
        accepted = 0
        done = 0
        while done < steps:
            m = min(chunk, steps - done)
            # positions i (swap ranks i, i+1, 0-based) with Bubley–Dyer weights;
            # half of the draws are lazy (coin flip) and repeat the state
            moves = rng.choice(n - 1, size=m, p=weights)
            lazy = rng.random(m) < 0.5
            moves = np.where(lazy, -1, moves).tolist()
            for t, i in enumerate(moves):
                if i < 0:
                    continue
                x = order[i]
                y = order[i + 1]
                if (comp[x] >> y) & 1:
                    continue
                order[i] = y
                order[i + 1] = x
                pos[x] = i + 1
                pos[y] = i
                accepted += 1
                if record is not None:
                    now = done + t + 1  # the state after this step starts here
                    record[x * n + i] += now - since[x]
                    record[y * n + i + 1] += now - since[y]
                    since[x] = now
                    since[y] = now
                    if track and tracked[x] != tracked[y]:
                        new = top[0]
                        if tracked[x] and top[0] == i:
                            new = i + 1
                        elif tracked[y] and top[0] == i + 1:
                            new = i
                        if new != top[0]:
                            top[2] += (top[0] + 1) * (now - top[1])
                            top[0], top[1] = new, now
                elif track and tracked[x] != tracked[y]:
                    if tracked[x] and top[0] == i:
                        top[0] = i + 1
                    elif tracked[y] and top[0] == i + 1:
                        top[0] = i
            done += m
        return accepted

    advance(burn_in, None, [0] * n)
    accepted = 0
    for b in range(batches):
        record = [0] * (n * n)
        # steps are numbered 1..batch_len; the state after step s is observed at s
        since = [1] * n
        top[1], top[2] = 1, 0
        accepted += advance(batch_len, record, since)
        for x in range(n):
            record[x * n + pos[x]] += batch_len + 1 - since[x]
        occ[b] = np.array(record, dtype=np.int64).reshape(n, n)
        slots[b] = (top[2] + (top[0] + 1) * (batch_len + 1 - top[1])) / batch_len
    return occ, accepted, slots


def _symmetrise(prob: np.ndarray, ties: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Average the rows of tied (exchangeable) items: their exact rows are equal."""
    out = prob.copy()
    for group in ties:
        idx = list(group)
        out[..., idx, :] = out[..., idx, :].mean(axis=-2, keepdims=True)
    return out


def _batch_estimates(
    occ: np.ndarray, ties: tuple[tuple[int, ...], ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probabilities, their SE, expected-rank SE from per-batch occupations."""
    batches, n, _ = occ.shape
    per_batch = occ / occ.sum(axis=2, keepdims=True)
    per_batch = _symmetrise(per_batch, ties)
    prob = per_batch.mean(axis=0)
    if batches > 1:
        se = per_batch.std(axis=0, ddof=1) / math.sqrt(batches)
        er = per_batch @ np.arange(1, n + 1, dtype=float)
        er_se = er.std(axis=0, ddof=1) / math.sqrt(batches)
    else:
        se = np.full((n, n), np.nan)
        er_se = np.full(n, np.nan)
    return prob, se, er_se


def _sub_poset(poset: Poset, keep: list[int]) -> Poset:
    idx = np.array(keep, dtype=np.int64)
    better = poset.better[np.ix_(idx, idx)]
    where = {a: i for i, a in enumerate(keep)}
    ties = tuple(
        t for t in (tuple(where[a] for a in g if a in where) for g in poset.ties) if len(t) > 1
    )
    return Poset(tuple(poset.names[a] for a in keep), better, ties)


def sample_rank_frequencies(
    poset: Poset,
    *,
    samples: int | None = None,
    burn_in: int | None = None,
    batches: int = DEFAULT_BATCHES,
    seed: int = 0,
    estimate_count: bool = True,
    max_states: int = DEFAULT_MAX_STATES,
    try_exact_first: bool = True,
) -> ExtensionStats:
    """Estimate rank probabilities by the adjacent-transposition Markov chain.

    Parameters
    ----------
    poset : Poset
        The order (rank 1 = best).
    samples : int, optional
        Counted steps after burn-in (every step counts, accepted or not);
        default :func:`default_samples`. Rounded down to a multiple of ``batches``.
    burn_in : int, optional
        Discarded steps; default :func:`default_burn_in`.
    batches : int
        Number of batches for the batch-means standard errors.
    seed : int
        Seed of the numpy generator: same seed, same numbers.
    estimate_count : bool
        Also estimate ``e(P)`` by peeling maximal items (one more chain per
        peeled item, with ``samples`` steps each, until the rest has at
        most ``max_states`` up-sets and is counted exactly; see
        :func:`_estimate_count`).
    max_states : int
        Up-set cap for the exact tail of the count estimate.
    try_exact_first : bool
        Try counting the whole order exactly before peeling (skipped when the
        caller already knows it exceeds the cap).

    Returns
    -------
    ExtensionStats
        ``method="mcmc"``; ``rank_frequencies`` are probabilities.

    Notes
    -----
    Karzanov & Khachiyan (1991); Bubley & Dyer (1999), "Faster random
    generation of linear extensions", Discrete Math. 201, 81–88. Patil &
    Taillie (2004) suggest MCMC for large orders (Özdemir et al. 2010, §4.4).
    """
    n = poset.n
    if batches < 2:
        raise InputError(f"batches must be at least 2, got {batches}")
    burn = default_burn_in(n) if burn_in is None else int(burn_in)
    steps = default_samples(n) if samples is None else int(samples)
    if burn < 0 or steps < batches:
        raise InputError(f"need burn_in >= 0 and samples >= batches, got {burn}, {steps}")
    steps -= steps % batches
    rng = np.random.default_rng(seed)
    occ, accepted, _ = _run_chain(poset, steps, burn, batches, rng)
    prob, se, er_se = _batch_estimates(occ, poset.ties)
    notes: list[str] = []
    estimate = rse = None
    if estimate_count:
        estimate, rse, peeled = _estimate_count(
            poset,
            steps,
            burn,
            batches,
            rng,
            max_states,
            try_exact_first,
        )
        notes.append(
            f"count estimated by peeling {peeled} maximal item(s) by MCMC, the rest counted exactly"
        )
    return ExtensionStats(
        "mcmc",
        n,
        None,
        prob.tolist(),
        linear_extensions_estimate=estimate,
        linear_extensions_rse=rse,
        probability_se=se,
        expected_rank_se=er_se,
        samples=steps,
        burn_in=burn,
        batches=batches,
        seed=seed,
        acceptance=accepted / steps if steps else None,
        states_cap=max_states,
        notes=tuple(notes),
    )


def _peel_choice(poset: Poset) -> int:
    """The maximal item to peel, chosen from the order alone (never from noisy
    estimates): one with nothing below first (its factor is exact), else the
    one with the most items below; first in input order on ties."""
    maximal = [i for i in range(poset.n) if not poset.better[i].any()]
    below = poset.better.sum(axis=0)
    return max(maximal, key=lambda i: (int(below[i]) == 0, int(below[i]), -i))


def _estimate_count(
    poset: Poset,
    steps: int,
    burn: int,
    batches: int,
    rng: np.random.Generator,
    max_states: int,
    try_exact_first: bool,
) -> tuple[float, float, int]:
    """Estimate ``e(P)`` by peeling maximal items one by one.

    For a maximal ``m``, ``e(P) = e(P − m) · E[s(ω')]`` over uniform linear
    extensions ``ω'`` of ``P − m``, where ``s(ω')`` is the number of places
    above every item below ``m`` (the best rank among them, or ``|P|`` if ``m``
    has nothing below): each extension of ``P`` is one ``ω'`` with ``m``
    inserted in one of those places. One chain per peeled item estimates the
    mean (batch means for its standard error), until the rest has at most
    ``max_states`` up-sets and is counted exactly. Returns the estimate, its
    relative standard error (delta method) and the number of items peeled.
    """
    sub = poset
    estimate = 1.0
    var = 0.0
    peeled = 0
    while True:
        if peeled > 0 or try_exact_first:
            try:
                exact = count_linear_extensions(sub, max_states)
            except TooManyStates:
                pass
            else:
                return estimate * exact, math.sqrt(var), peeled
        m = _peel_choice(sub)
        rest = [i for i in range(sub.n) if i != m]
        below = sub.better[rest, m]
        sub = _sub_poset(sub, rest)
        track = sum(1 << i for i in np.flatnonzero(below).tolist())
        if track == 0:
            factor, se = float(sub.n + 1), 0.0
        else:
            _, _, slots = _run_chain(sub, steps - steps % batches, burn, batches, rng, track)
            factor = float(slots.mean())
            se = float(slots.std(ddof=1)) / math.sqrt(batches)
        estimate *= factor
        var += (se / factor) ** 2
        peeled += 1


# ----------------------------------------------------------------------------- dispatch


def rank_statistics(
    poset: Poset,
    *,
    method: str = "auto",
    max_states: int = DEFAULT_MAX_STATES,
    samples: int | None = None,
    burn_in: int | None = None,
    batches: int = DEFAULT_BATCHES,
    seed: int = 0,
    estimate_count: bool = True,
) -> ExtensionStats:
    """Rank frequencies of ``poset``: exact while the up-sets stay under the cap,
    else sampled (``method="auto"``); ``"exact"`` raises :class:`TooManyStates`
    beyond the cap; ``"mcmc"`` always samples.

    The method used is reported in the result (``method``), and when ``auto``
    fell back to sampling a note says why.
    """
    if method not in ("auto", "exact", "mcmc"):
        raise InputError(f"method must be 'auto', 'exact' or 'mcmc', got {method!r}")
    if method != "mcmc":
        try:
            return exact_rank_frequencies(poset, max_states)
        except TooManyStates:
            if method == "exact":
                raise
    stats = sample_rank_frequencies(
        poset,
        samples=samples,
        burn_in=burn_in,
        batches=batches,
        seed=seed,
        estimate_count=estimate_count,
        max_states=max_states,
        try_exact_first=method == "mcmc",
    )
    if method == "auto":
        note = f"more than {max_states} up-sets: sampled instead of counted"
        stats = replace(stats, notes=(note, *stats.notes))
    return stats
