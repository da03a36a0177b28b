"""Linear extensions: known counts, rank frequencies against brute force, the sampler."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from geoeval.ranking.extensions import (
    TooManyStates,
    count_linear_extensions,
    exact_rank_frequencies,
    rank_statistics,
    sample_rank_frequencies,
)
from geoeval.ranking.poset import Poset


def names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


def brute(poset: Poset) -> tuple[int, list[list[int]]]:
    """Count linear extensions and rank frequencies by enumerating permutations
    (best first; an item may not sit above one strictly better than it)."""
    n = poset.n
    freq = [[0] * n for _ in range(n)]
    total = 0
    for perm in itertools.permutations(range(n)):
        if any(poset.better[perm[i], perm[j]] for i in range(n) for j in range(i + 1, n)):
            continue
        total += 1
        for r, a in enumerate(perm):
            freq[a][r] += 1
    return total, freq


def grid(rows: int, cols: int) -> Poset:
    idx = lambda r, c: r * cols + c  # noqa: E731
    pairs = [(idx(r, c), idx(r, c + 1)) for r in range(rows) for c in range(cols - 1)]
    pairs += [(idx(r, c), idx(r + 1, c)) for r in range(rows - 1) for c in range(cols)]
    return Poset.from_relations(names(rows * cols), pairs)


KNOWN = {
    "antichain of 6": (Poset.from_relations(names(6), []), 720),
    "chain of 6": (Poset.from_relations(names(6), [(i, i + 1) for i in range(5)]), 1),
    "two 2-chains": (Poset.from_relations(names(4), [(0, 1), (2, 3)]), 6),
    "N": (Poset.from_relations(names(4), [(0, 1), (2, 1), (2, 3)]), 5),
    "Boolean lattice B3": (
        Poset.from_relations(
            names(8), [(i, j) for i in range(8) for j in range(8) if i != j and i & j == i]
        ),
        48,
    ),
    "3 x 3 grid": (grid(3, 3), 42),
}


@pytest.mark.parametrize("case", sorted(KNOWN))
def test_known_counts(case: str) -> None:
    poset, expected = KNOWN[case]
    stats = exact_rank_frequencies(poset)
    assert stats.linear_extensions == expected
    assert count_linear_extensions(poset) == expected
    # every row of f sums to e(P); every column too (each rank holds one item)
    f = np.array(stats.rank_frequencies, dtype=object)
    assert all(sum(row) == expected for row in stats.rank_frequencies)
    assert all(sum(f[:, r]) == expected for r in range(poset.n))


def test_known_counts_against_brute_force() -> None:
    for poset, expected in KNOWN.values():
        total, freq = brute(poset)
        assert total == expected
        assert exact_rank_frequencies(poset).rank_frequencies == freq


@pytest.mark.parametrize("n", [0, 1, 12, 20])
def test_antichain_is_n_factorial(n: int) -> None:
    stats = exact_rank_frequencies(Poset.from_relations(names(n), []))
    assert stats.linear_extensions == math.factorial(n)
    if n:
        assert stats.rank_frequencies[0] == [math.factorial(n - 1)] * n
        assert stats.states == 2**n


def test_long_chain_uses_python_int_masks() -> None:
    stats = exact_rank_frequencies(Poset.from_relations(names(70), [(i, i + 1) for i in range(69)]))
    assert stats.linear_extensions == 1 and stats.states == 71
    assert stats.rank_frequencies[69][0] == 1 and stats.rank_frequencies[0][69] == 1


def test_big_counts_exact_beyond_int64() -> None:
    # 11 disjoint 2-chains: (22)! / 2^11 extensions, far beyond 2^63
    p = Poset.from_relations(names(22), [(2 * i, 2 * i + 1) for i in range(11)])
    stats = exact_rank_frequencies(p)
    assert stats.linear_extensions == math.factorial(22) // 2**11
    # the top of a chain is at rank 1 in a 1/11 share of the extensions
    assert stats.rank_frequencies[1][0] * 11 == stats.linear_extensions


def test_random_orders_against_brute_force() -> None:
    rng = np.random.default_rng(2004)
    for trial in range(60):
        n = int(rng.integers(2, 8))
        if trial % 2:
            v = rng.integers(0, 5, size=(n, int(rng.integers(2, 4)))) / 5  # ties happen
            p = Poset.from_values(names(n), v)
        else:
            pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.35]
            perm = rng.permutation(n)  # relation not aligned with the index order
            p = Poset.from_relations(names(n), [(int(perm[i]), int(perm[j])) for i, j in pairs])
        total, freq = brute(p)
        stats = exact_rank_frequencies(p)
        assert stats.linear_extensions == total
        assert stats.rank_frequencies == freq
        # rank frequencies vanish exactly outside the rank interval (eq. 18)
        for a, (lo, hi) in enumerate(p.rank_intervals()):
            nz = [r + 1 for r, c in enumerate(freq[a]) if c]
            assert (min(nz), max(nz)) == (lo, hi)


def test_identical_vectors_are_an_antichain() -> None:
    # two identical submissions below a better one: both orders of the tie count
    p = Poset.from_values(["best", "t1", "t2"], np.array([[0.9, 0.9], [0.5, 0.5], [0.5, 0.5]]))
    stats = exact_rank_frequencies(p)
    assert stats.linear_extensions == 2
    assert stats.rank_frequencies == [[2, 0, 0], [0, 1, 1], [0, 1, 1]]


def test_cap_raises_and_auto_falls_back() -> None:
    p = Poset.from_relations(names(10), [])  # 1024 up-sets
    with pytest.raises(TooManyStates):
        exact_rank_frequencies(p, max_states=1000)
    assert exact_rank_frequencies(p, max_states=1024).linear_extensions == math.factorial(10)
    with pytest.raises(TooManyStates):
        rank_statistics(p, method="exact", max_states=100)
    st = rank_statistics(p, method="auto", max_states=100, samples=20_000, burn_in=2000, seed=3)
    assert st.method == "mcmc" and st.linear_extensions is None
    assert "sampled instead of counted" in st.notes[0]


def test_sampler_within_reported_error_of_exact() -> None:
    # a moderate order: 3 x 3 grid plus three free items and a 2-chain (n = 14)
    g = grid(3, 3)
    n = 14
    better = np.zeros((n, n), dtype=bool)
    better[:9, :9] = g.better
    better[12, 13] = True
    p = Poset(tuple(names(n)), better)
    exact = exact_rank_frequencies(p)
    # cap 40 up-sets: the count estimate must peel several items by MCMC
    st = sample_rank_frequencies(p, samples=400_000, burn_in=20_000, seed=11, max_states=40)
    assert st.method == "mcmc" and st.samples == 400_000 and st.batches == 50
    pe = exact.probabilities()
    ps = st.probabilities()
    se = st.probability_se
    # every estimate within 4.5 reported standard errors (or a hair when SE is 0)
    assert np.all(np.abs(ps - pe) <= 4.5 * se + 1e-3)
    # and on the whole the z-scores look like standard normals
    z = (ps - pe)[se > 0] / se[se > 0]
    assert 0.5 < float(np.sqrt(np.mean(z**2))) < 1.6
    er = np.array([float(x) for x in exact.expected_ranks()])
    assert np.all(np.abs(np.array(st.expected_ranks()) - er) <= 4.5 * st.expected_rank_se)
    # the count estimate (peeling maximal items) within 3 relative SE
    assert st.linear_extensions_estimate is not None
    rel = st.linear_extensions_estimate / exact.linear_extensions - 1
    assert 0 < st.linear_extensions_rse < 0.05 and abs(rel) <= 3 * st.linear_extensions_rse
    assert "peeling" in st.notes[0]
    # ranks outside the rank interval are never visited
    for a, (lo, hi) in enumerate(p.rank_intervals()):
        assert np.all(ps[a, : lo - 1] == 0) and np.all(ps[a, hi:] == 0)


def test_sampler_is_seeded_and_counts_every_step() -> None:
    p = Poset.from_relations(names(5), [(0, 1)])
    a = sample_rank_frequencies(p, samples=10_000, burn_in=100, seed=5, estimate_count=False)
    b = sample_rank_frequencies(p, samples=10_000, burn_in=100, seed=5, estimate_count=False)
    c = sample_rank_frequencies(p, samples=10_000, burn_in=100, seed=6, estimate_count=False)
    assert a.rank_frequencies == b.rank_frequencies
    assert a.rank_frequencies != c.rank_frequencies
    # occupation shares of each item sum to 1 over ranks, and of each rank over items
    pa = a.probabilities()
    np.testing.assert_allclose(pa.sum(axis=1), 1.0)
    np.testing.assert_allclose(pa.sum(axis=0), 1.0)
    # half of the steps are lazy: acceptance below 1/2
    assert 0 < a.acceptance < 0.5


def test_sampler_symmetrises_tied_items() -> None:
    v = np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5], [0.5, 0.5]])
    p = Poset.from_values(names(4), v)
    st = sample_rank_frequencies(p, samples=5_000, burn_in=100, seed=1, estimate_count=False)
    assert st.rank_frequencies[2] == st.rank_frequencies[3]


def test_width_against_brute_force_and_cap_gate() -> None:
    from geoeval.ranking.extensions import width

    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(1, 8))
        p = Poset.from_values(names(n), rng.integers(0, 4, size=(n, 2)))
        comparable = p.better | p.better.T
        best = max(
            len(sub)
            for k in range(1, n + 1)
            for sub in itertools.combinations(range(n), k)
            if not comparable[np.ix_(sub, sub)].any()
        )
        assert width(p) == best
    # a 12-antichain has 4096 up-sets: refused at once below that cap, counted at it
    p12 = Poset.from_relations(names(12), [])
    with pytest.raises(TooManyStates):
        count_linear_extensions(p12, max_states=4095)
    assert count_linear_extensions(p12, max_states=4096) == math.factorial(12)
