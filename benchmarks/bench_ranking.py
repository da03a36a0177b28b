"""Speed of exact ranking: linear extensions by dynamic programming over up-sets.

Run: ``python benchmarks/bench_ranking.py``. Prints, for each case, the number of
up-sets (states), the number of linear extensions, the time of the vectorised
exact count + rank frequencies, the time of the whole ranking (CRF rounds
included), and as a baseline the same dynamic programme written with a Python
dict (checked to give identical numbers). A sampled case shows the Markov chain
speed beyond the cap.

Cases
-----
- a 16-element antichain: 2^16 = 65,536 up-sets, 16! extensions;
- 30 submissions with a realistic precision/recall trade-off: each has a skill
  ``q`` and an operating point ``θ`` on a concave front (recall ``q sin θ``,
  precision ``q (1 + cos θ) / 2``) plus Gaussian noise, accuracy ``0.5 + 0.4 q``
  plus noise; seeded;
- a 24-element antichain above the default cap: sampled.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from geoeval.ranking.api import rank_indicators
from geoeval.ranking.extensions import (
    exact_rank_frequencies,
    rank_statistics,
)
from geoeval.ranking.poset import Poset


def dict_dp(poset: Poset) -> tuple[int, list[list[int]], int]:
    """Baseline: the same DP over up-sets with a Python dict and Python ints."""
    n = poset.n
    up = [sum(1 << b for b in np.flatnonzero(poset.better[a]).tolist()) for a in range(n)]
    levels: list[dict[int, int]] = [{0: 1}]
    for _ in range(n):
        nxt: dict[int, int] = {}
        for s, c in levels[-1].items():
            for a in range(n):
                bit = 1 << a
                if not s & bit and s & up[a] == up[a]:
                    nxt[s | bit] = nxt.get(s | bit, 0) + c
        levels.append(nxt)
    freq = [[0] * n for _ in range(n)]
    back_next = {(1 << n) - 1: 1}
    for k in range(n - 1, -1, -1):
        back: dict[int, int] = {}
        for s, c in levels[k].items():
            total = 0
            for a in range(n):
                bit = 1 << a
                if not s & bit and s & up[a] == up[a]:
                    b = back_next[s | bit]
                    total += b
                    freq[a][k] += c * b
            back[s] = total
        back_next = back
    return back_next[0], freq, sum(len(lv) for lv in levels)


def contest(seed: int = 0, n: int = 30) -> dict[str, dict[str, float]]:
    """Seeded contest with a precision/recall trade-off (see module docstring)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.7, 1.0, n)
    theta = rng.uniform(0.15, 1.4, n)
    recall = q * np.sin(theta) + rng.normal(0, 0.02, n)
    precision = q * (1 + np.cos(theta)) / 2 + rng.normal(0, 0.02, n)
    accuracy = 0.5 + 0.4 * q + rng.normal(0, 0.05, n)
    v = np.clip(np.c_[precision, recall, accuracy], 0, 1).round(4)
    return {
        f"team{i:02d}": {"precision": p, "recall": r, "accuracy": a}
        for i, (p, r, a) in enumerate(v.tolist())
    }


def timed(fn, repeat: int = 3):  # noqa: ANN001, ANN201
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def exact_case(label: str, poset: Poset, scores: dict | None) -> None:
    t_np, st = timed(lambda: exact_rank_frequencies(poset))
    t_dict, (count, freq, states) = timed(lambda: dict_dp(poset), repeat=1)
    assert count == st.linear_extensions and freq == st.rank_frequencies and states == st.states
    print(f"\n== {label}: n = {poset.n}")
    print(f"   up-sets (states)          {st.states:,}")
    print(f"   linear extensions         {st.linear_extensions:,}  (~{st.linear_extensions:.3e})")
    print(f"   exact DP, numpy (best/3)  {t_np:.3f} s")
    print(f"   baseline dict DP          {t_dict:.3f} s   (identical counts: yes)")
    if scores is not None:
        t_rank, r = timed(lambda: rank_indicators(scores), repeat=1)
        rounds = [(rd.stats.states, rd.stats.linear_extensions) for rd in r.rounds]
        print(
            f"   whole ranking (CRF)       {t_rank:.3f} s, {len(r.rounds)} round(s), "
            f"converged={r.converged} ({r.stop_reason})"
        )
        print(f"   per round (states, e(P))  {rounds}")
        print(
            f"   Hasse edges {len(r.hasse_edges())}, levels {len(r.levels())}, "
            f"ties broken {len(r.ties)}"
        )
        print(f"   top 5                     {', '.join(r.ranking[:5])}")


def main() -> int:
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    names16 = [f"x{i}" for i in range(16)]
    exact_case("16-element antichain", Poset.from_relations(names16, []), None)
    scores = contest(0)
    names = list(scores)
    v = np.array([[scores[n][k] for k in ("precision", "recall", "accuracy")] for n in names])
    exact_case(
        "30 submissions, precision/recall trade-off (seed 0)", Poset.from_values(names, v), scores
    )
    for seed in (1, 2):
        s = contest(seed)
        nm = list(s)
        vv = np.array([[s[n][k] for k in ("precision", "recall", "accuracy")] for n in nm])
        p = Poset.from_values(nm, vv)
        t, st = timed(lambda p=p: exact_rank_frequencies(p))
        print(f"   seed {seed}: states {st.states:,}, e(P) ~{st.linear_extensions:.3e}, {t:.3f} s")
    p24 = Poset.from_relations([f"x{i}" for i in range(24)], [])
    t, st = timed(lambda: rank_statistics(p24, samples=2_000_000, seed=0), repeat=1)
    err = np.abs(st.probabilities() - 1 / 24).max()
    print("\n== 24-element antichain, above the 2,000,000 cap: sampled")
    print(
        f"   chain: {st.samples:,} counted steps + {st.burn_in:,} burn-in, "
        f"acceptance {st.acceptance:.3f}, {t:.2f} s (incl. count estimate)"
    )
    print(f"   max |p - 1/24| = {err:.4f}, max SE = {float(st.probability_se.max()):.4f}")
    print(
        f"   e(P) estimate {st.linear_extensions_estimate:.4e} "
        f"(rel. SE {st.linear_extensions_rse:.3f}); exact 24! = {math.factorial(24):.4e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
