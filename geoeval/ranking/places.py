"""What decided each place of a ranking: why an entry is above the next one.

Every two neighbours of the final ranking are ordered by exactly one of
(Özdemir et al. 2010, §4.3; Patil & Taillie 2004):

* ``"dominance"``: the upper one is at least as good on every indicator and
  better on one;
* ``"crf"``: a round of the cumulative rank frequency operator put it above
  (``round`` says which);
* ``"expected rank"``: the CRF operator stopped before a ranking and the
  fallback ordered them by expected rank in its last round;
* ``"tie-break"``: the order left them level and the tie-break column
  (detection accuracy by default, higher first) told them apart;
* ``"name"``: level, and the tie-break column equal, undefined or missing.

The last two are tie-breakers: the indicators did not decide the place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The criteria that are tie-breakers, not the indicators' order.
TIE_BREAKERS = ("tie-break", "name")


@dataclass(frozen=True)
class Place:
    """One entry's place and what put it above the next entry.

    Attributes
    ----------
    rank : int
        The final rank (1 = best).
    name : str
    next : str or None
        The entry ranked just below (None for the last).
    decided_by : str or None
        ``"dominance"``, ``"crf"``, ``"expected rank"``, ``"tie-break"`` or
        ``"name"`` (module docstring); None for the last entry.
    crf_round : int or None
        The CRF round that ordered the two (``decided_by == "crf"``).
    """

    rank: int
    name: str
    next: str | None
    decided_by: str | None
    crf_round: int | None = None

    @property
    def by_tie_breaker(self) -> bool:
        """Whether a tie-breaker, not the indicators, put the entry above the next."""
        return self.decided_by in TIE_BREAKERS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``rank``, ``name``, ``next``, ``decided_by``, ``crf_round``."""
        return {"rank": self.rank, "name": self.name, "next": self.next,
                "decided_by": self.decided_by, "crf_round": self.crf_round}


def decided_by(result: Any, a: str, b: str) -> tuple[str, int | None]:
    """What puts ``a`` above ``b`` in a ranking (module docstring) and the CRF
    round when a round did.

    Parameters
    ----------
    result : RankingResult
    a, b : str
        Two entries, ``a`` ranked above ``b``.

    Returns
    -------
    (str, int or None)
    """
    idx = {n: k for k, n in enumerate(result.names)}
    i, j = idx[a], idx[b]
    if result.poset.better[j, i]:
        return "dominance", None
    for rd in result.rounds:
        if rd.poset.better[j, i]:
            return "crf", rd.round
    if any(a in t["items"] and b in t["items"] for t in result.ties):
        col = result.tie_break
        if col is not None and result.values[a].get(col) != result.values[b].get(col):
            return "tie-break", None
        return "name", None
    return "expected rank", None


def places(result: Any) -> list[Place]:
    """Every entry of the final ranking, best first, with what put it above the
    next one (:func:`decided_by`)."""
    names = list(result.ranking)
    out = []
    for k, name in enumerate(names):
        nxt = names[k + 1] if k + 1 < len(names) else None
        by, rnd = decided_by(result, name, nxt) if nxt is not None else (None, None)
        out.append(Place(k + 1, name, nxt, by, rnd))
    return out
