"""Rank submissions with Hasse diagrams (Özdemir et al. 2010, §4.3; Patil & Taillie 2004).

- :mod:`~geoeval.ranking.poset`: dominance order, cover relation (Hasse
  diagram), levels, upper/lower sets, rank intervals.
- :mod:`~geoeval.ranking.extensions`: linear extensions, exact (dynamic
  programming over up-sets) or sampled (adjacent-transposition chain).
- :mod:`~geoeval.ranking.crf`: the iterated cumulative rank frequency operator.
- :mod:`~geoeval.ranking.api`: ``rank_table``, ``rank_indicators`` (ranking a contest
  from files is :func:`geoeval.rank`).
"""

from __future__ import annotations

from geoeval.ranking.api import RankingResult, rank_indicators, rank_table
from geoeval.ranking.extensions import (
    ExtensionStats,
    count_linear_extensions,
    exact_rank_frequencies,
    rank_statistics,
    sample_rank_frequencies,
)
from geoeval.ranking.poset import Poset, dominance

__all__ = [
    "ExtensionStats",
    "Poset",
    "RankingResult",
    "count_linear_extensions",
    "dominance",
    "exact_rank_frequencies",
    "rank_indicators",
    "rank_statistics",
    "rank_table",
    "sample_rank_frequencies",
]
