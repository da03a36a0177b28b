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
from dataclasses import replace

import numpy as np

from geoeval.errors import InputError
from geoeval.ranking.extension_stats import (
    DEFAULT_BATCHES,
    DEFAULT_MAX_STATES,
    ExtensionStats,
    TooManyStates,
)
from geoeval.ranking.extensions_exact import (
    count_linear_extensions,
    exact_rank_frequencies,
    width,
)
from geoeval.ranking.poset import Poset

__all__ = ["DEFAULT_BATCHES", "DEFAULT_MAX_STATES", "ExtensionStats", "TooManyStates",
           "count_linear_extensions", "exact_rank_frequencies", "rank_statistics",
           "sample_rank_frequencies", "width"]


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
