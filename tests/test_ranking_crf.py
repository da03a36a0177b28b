"""The iterated cumulative rank frequency operator (Patil & Taillie 2004; SPEC §4)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from geoeval.ranking.api import rank_indicators
from geoeval.ranking.crf import FALLBACK, crf_step, final_order, iterate_crf
from geoeval.ranking.extensions import exact_rank_frequencies
from geoeval.ranking.poset import Poset


def table(rows: dict[str, tuple[float, float, float]]) -> dict[str, dict[str, float]]:
    return {n: {"precision": p, "recall": r, "accuracy": a} for n, (p, r, a) in rows.items()}


# a 4-chain A > B > C > D and an item X incomparable with all of them
CHAIN_PLUS_ONE = table(
    {
        "A": (0.9, 0.9, 0.9),
        "B": (0.8, 0.8, 0.8),
        "C": (0.7, 0.7, 0.7),
        "D": (0.6, 0.6, 0.6),
        "X": (0.95, 0.5, 0.65),
    }
)


def test_two_rounds_hand_checked() -> None:
    r = rank_indicators(CHAIN_PLUS_ONE)
    # round 0: X can sit at any of the 5 places of the chain: 5 extensions.
    assert r.linear_extensions == 5
    assert r.rank_frequencies == {
        "A": [4, 1, 0, 0, 0],
        "B": [0, 3, 2, 0, 0],
        "C": [0, 0, 2, 3, 0],
        "D": [0, 0, 0, 1, 4],
        "X": [1, 1, 1, 1, 1],
    }
    # cumulative F: A 4,5,5,5,5 ≥ X 1,2,3,4,5 ≥ D 0,0,0,1,5; X vs B (0,3,5,5,5) and
    # C (0,0,2,5,5) cross. Round 1: A > X > D added, X still free w.r.t. B and C.
    r1 = r.rounds[0]
    assert r1.round == 1 and r1.stats.linear_extensions == 3
    assert [(r1.poset.names[i], r1.poset.names[j]) for i, j in r1.poset.hasse_edges()] == [
        ("B", "A"),
        ("C", "B"),
        ("D", "C"),
        ("D", "X"),
        ("X", "A"),
    ]
    # X at rank 2, 3 or 4: F_X = 0,1,2,3,3; B: f = 0,2,1,0,0 → F_B = 0,2,3,3,3 ≥ F_X;
    # C: f = 0,0,1,2,0 → F_C = 0,0,1,3,3 ≤ F_X. Round 2 is linear: A B X C D.
    assert r1.stats.rank_frequencies[4] == [0, 1, 1, 1, 0]
    assert r1.stats.rank_frequencies[1] == [0, 2, 1, 0, 0]
    assert r1.stats.rank_frequencies[2] == [0, 0, 1, 2, 0]
    assert len(r.rounds) == 2 and r.rounds[1].poset.is_linear()
    assert r.converged and r.stop_reason == "linear"
    assert r.ranking == ("A", "B", "X", "C", "D")
    assert r.ties == ()


def test_tie_broken_by_accuracy() -> None:
    # two 2-chains a < b, c < d: b, d symmetric (F = 3,5,6,6) and a, c symmetric:
    # round 1 is the weak order {b, d} > {a, c}; accuracy orders inside each tie
    rows = table(
        {
            "b": (0.9, 0.5, 0.70),
            "a": (0.8, 0.4, 0.60),
            "d": (0.5, 0.9, 0.80),
            "c": (0.4, 0.8, 0.65),
        }
    )
    r = rank_indicators(rows)
    assert r.linear_extensions == 6
    assert r.rank_frequencies["b"] == [3, 2, 1, 0] == r.rank_frequencies["d"]
    assert len(r.rounds) == 1 and r.converged and r.stop_reason == "linear up to ties"
    assert r.rounds[0].poset.ties == ((0, 2), (1, 3))
    assert r.ranking == ("d", "b", "c", "a")
    assert r.ties_broken_by_accuracy == [["d", "b"], ["c", "a"]]
    assert [t["by"] for t in r.ties] == ["accuracy", "accuracy"]


def test_identical_vectors_broken_by_name() -> None:
    rows = table({"zeta": (0.5, 0.5, 0.5), "alpha": (0.5, 0.5, 0.5), "top": (0.9, 0.9, 0.9)})
    r = rank_indicators(rows)
    assert r.linear_extensions == 2 and r.rounds == ()
    assert r.ranking == ("top", "alpha", "zeta")
    assert r.ties[0] == {"items": ["alpha", "zeta"], "by": "name", "accuracy": [0.5, 0.5]}
    assert r.ties_broken_by_accuracy == []


def test_round_limit_fallback_by_expected_rank() -> None:
    rows = table(
        {
            "A": (0.9, 0.9, 0.9),
            "B": (0.8, 0.8, 0.8),
            "C": (0.7, 0.7, 0.7),
            "D": (0.6, 0.6, 0.6),
            "X": (0.95, 0.5, 0.65),
        }
    )
    r = rank_indicators(rows, max_rounds=0)
    assert not r.converged and r.stop_reason == "round limit" and r.rounds == ()
    # expected ranks: A 6/5, B 12/5, X 3, C 18/5, D 24/5
    assert r.ranking == ("A", "B", "X", "C", "D")
    assert any(FALLBACK in n for n in r.notes)
    assert r.to_dict()["fallback"] == FALLBACK
    # one round is not enough either (round 1 is not linear)
    r1 = rank_indicators(rows, max_rounds=1)
    assert not r1.converged and len(r1.rounds) == 1 and r1.ranking == ("A", "B", "X", "C", "D")


def test_fallback_ties_by_accuracy() -> None:
    # two 2-chains without CRF rounds: E[rank] ties b = d = 5/3, a = c = 10/3
    p = Poset.from_relations("abcd", [(0, 1), (2, 3)])
    st = exact_rank_frequencies(p)
    assert st.expected_ranks() == [Fraction(10, 3), Fraction(5, 3)] * 2
    order, ties = final_order(p, st, False, [0.1, 0.2, 0.4, 0.3])
    assert [p.names[a] for a in order] == ["d", "b", "c", "a"]  # d 0.3 > b 0.2
    assert [t["by"] for t in ties] == ["accuracy", "accuracy"]
    order, ties = final_order(p, st, False, None)
    assert [p.names[a] for a in order] == ["b", "d", "a", "c"]
    assert [t["by"] for t in ties] == ["name", "name"]


def test_crf_refines_the_order_on_random_orders() -> None:
    rng = np.random.default_rng(99)
    for _ in range(30):
        n = int(rng.integers(3, 8))
        v = rng.random((n, 3)).round(1)
        p = Poset.from_values([f"s{i}" for i in range(n)], v)
        st = exact_rank_frequencies(p)
        nxt = crf_step(p, st)
        # every strict comparison survives the operator
        assert np.all(nxt.better[p.better])
        out = iterate_crf(p, st, exact_rank_frequencies, max_rounds=20)
        last = out.rounds[-1].poset if out.rounds else p
        assert out.converged == last.is_linear_up_to_ties()
        assert np.all(last.better[p.better])


@pytest.mark.parametrize("samples", [5_000, 200_000])
def test_sampled_rounds_keep_every_dominance(samples: int) -> None:
    """With sampled rank frequencies the CRF rounds compare float cumulative sums;
    ``0.494 + 0.506`` is ``0.9999999999999999``, which once made ``F_s3(4) < F_s0(4)
    = 1`` and dropped s3 > s0: the final order put s4 above s3, which dominates it.
    Every dominance of the indicators holds in the final order, at any chain length."""
    from geoeval.ranking.api import rank_indicators

    table = {"s0": {"p": 0.4, "r": 0.6, "a": 0.6}, "s1": {"p": 0.0, "r": 0.0, "a": 1.0},
             "s2": {"p": 0.8, "r": 1.0, "a": 0.6}, "s3": {"p": 0.8, "r": 0.2, "a": 0.4},
             "s4": {"p": 0.8, "r": 0.0, "a": 0.2}}
    r = rank_indicators(table, tie_break=None, method="mcmc", samples=samples, burn_in=500)
    pos = {n: k for k, n in enumerate(r.ranking)}
    for worse, better in r.hasse_edges():
        assert pos[better] < pos[worse], (better, worse, r.ranking)
    assert r.ranking[0] == "s2" and r.ranking[-2:] == ("s0", "s4")
