"""Dominance order, Hasse diagram, levels and rank intervals (004 §4.3, eq. 16–18)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from geoeval.ranking.poset import (
    Poset,
    check_strict_order,
    cover_relation,
    dominance,
    transitive_closure,
)


def brute_intervals(poset: Poset) -> list[tuple[int, int]]:
    """Best and worst rank over all linear extensions, by enumerating permutations."""
    n = poset.n
    best, worst = [n + 1] * n, [0] * n
    for perm in itertools.permutations(range(n)):
        if any(poset.better[perm[i], perm[j]] for i in range(n) for j in range(i + 1, n)):
            continue
        for r, a in enumerate(perm, start=1):
            best[a] = min(best[a], r)
            worst[a] = max(worst[a], r)
    return list(zip(best, worst, strict=True))


def test_dominance_hand_case() -> None:
    # A=(.9,.5,.7) B=(.8,.4,.6) < A; C=(.5,.9,.8) incomparable with A, B; D = B (tied)
    v = np.array([[0.9, 0.5, 0.7], [0.8, 0.4, 0.6], [0.5, 0.9, 0.8], [0.8, 0.4, 0.6]])
    lt = dominance(v)
    expected = np.zeros((4, 4), dtype=bool)
    expected[1, 0] = expected[3, 0] = True
    np.testing.assert_array_equal(lt, expected)
    p = Poset.from_values("ABCD", v)
    assert p.ties == ((1, 3),)
    assert p.upper_set(1) == [0] and p.lower_set(0) == [1, 3]
    # tied items are not ordered: B and D both have A above and nothing below
    assert p.rank_intervals() == [(1, 2), (2, 4), (1, 4), (2, 4)]
    assert p.hasse_edges() == [(1, 0), (3, 0)]
    assert p.levels() == [[0, 2], [1, 3]]


def test_equal_in_one_indicator_still_dominates() -> None:
    lt = dominance(np.array([[0.5, 0.5], [0.5, 0.6]]))
    assert lt[0, 1] and not lt[1, 0]


def test_cover_relation_of_chain_and_b3() -> None:
    chain = Poset.from_relations("abcd", [(0, 1), (1, 2), (2, 3)])
    assert chain.better.sum() == 6  # closed transitively
    assert chain.hasse_edges() == [(0, 1), (1, 2), (2, 3)]
    assert chain.is_linear()
    assert chain.levels() == [[3], [2], [1], [0]]
    # Boolean lattice B3: 12 covers, 19 strict relations
    pairs = [(i, j) for i in range(8) for j in range(8) if i != j and i & j == i]
    b3 = Poset.from_relations([f"s{i}" for i in range(8)], pairs)
    assert b3.better.sum() == 19
    assert len(b3.hasse_edges()) == 12
    assert [sorted(lv) for lv in b3.levels()] == [[7], [3, 5, 6], [1, 2, 4], [0]]


def test_hasse_graph() -> None:
    p = Poset.from_relations("abc", [(0, 1), (1, 2)])
    g = p.hasse_graph({"a": {"precision": 0.1}})
    assert sorted(g.edges) == [("a", "b"), ("b", "c")]
    assert g.nodes["a"]["precision"] == 0.1 and g.nodes["c"]["level"] == 0


def test_rank_intervals_match_brute_force_on_random_orders() -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        # coarse values in 2-3 indicators: ties and equal coordinates happen
        v = rng.integers(0, 4, size=(n, int(rng.integers(2, 4)))) / 4
        p = Poset.from_values([str(i) for i in range(n)], v)
        check_strict_order(p.better)
        assert p.rank_intervals() == brute_intervals(p)
        # covers: no strict relation passes through a third item
        cov = cover_relation(p.better)
        assert np.array_equal(transitive_closure(cov), p.better)


def test_levels_are_longest_chains_from_top() -> None:
    # N poset: a<b, c<b, c<d
    p = Poset.from_relations("abcd", [(0, 1), (2, 1), (2, 3)])
    assert p.levels() == [[1, 3], [0, 2]]
    assert not p.is_linear() and not p.is_linear_up_to_ties()


def test_invalid_relations() -> None:
    with pytest.raises(ValueError, match="irreflexive"):
        Poset.from_relations("ab", [(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="2-D"):
        dominance(np.zeros(3))
