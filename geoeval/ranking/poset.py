"""The dominance order of indicator vectors and its Hasse diagram.

Submissions carry ``p`` indicators, all higher-is-better. ``a ≤ b`` iff every
indicator of ``a`` is ≤ that of ``b``; ``a < b`` iff moreover the vectors differ
(Özdemir et al. 2010, §4.3; Patil & Taillie 2004). Two submissions with *identical* vectors are
**tied**: neither is strictly better, so they are incomparable elements of the
order (an antichain of identical elements) and every linear extension may put
them either way round. The relation is stored as a boolean matrix ``better``
with ``better[i, j]`` true iff ``j`` is strictly better than ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from geoeval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx


def dominance(values: np.ndarray) -> np.ndarray:
    """Strict dominance matrix of indicator vectors (all higher-is-better).

    Parameters
    ----------
    values : ndarray, shape (n, p)
        One row of indicators per item.

    Returns
    -------
    ndarray of bool, shape (n, n)
        ``out[i, j]`` is true iff ``values[i] <= values[j]`` component-wise and
        the two rows differ, i.e. item ``j`` is strictly better than item ``i``
        (Özdemir et al. 2010, §4.3: ``a < a'``). Identical rows are tied: not ordered.

    Examples
    --------
    >>> dominance(np.array([[0.1, 0.2], [0.3, 0.4], [0.1, 0.2]])).astype(int)
    array([[0, 1, 0],
           [0, 0, 0],
           [0, 1, 0]])
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise InputError(f"values must be 2-D (items x indicators), got shape {v.shape}")
    le = np.all(v[:, None, :] <= v[None, :, :], axis=2)
    lt = np.any(v[:, None, :] < v[None, :, :], axis=2)
    return le & lt


def dominance_exact(vectors: Sequence[Sequence[object]]) -> np.ndarray:
    """:func:`dominance` for vectors of arbitrary comparable numbers (Python ints,
    fractions) compared exactly, as the cumulative rank frequencies of the CRF
    operator are. Loops over pairs: meant for the few dozen items of a contest."""
    n = len(vectors)
    out = np.zeros((n, n), dtype=bool)
    for i in range(n):
        vi = vectors[i]
        for j in range(n):
            if i != j:
                vj = vectors[j]
                out[i, j] = all(x <= y for x, y in zip(vi, vj, strict=True)) and any(
                    x < y for x, y in zip(vi, vj, strict=True)
                )
    return out


def transitive_closure(better: np.ndarray) -> np.ndarray:
    """Transitive closure of a strict relation given as a boolean matrix (Warshall)."""
    closure = np.array(better, dtype=bool, copy=True)
    for k in range(closure.shape[0]):
        closure |= closure[:, k : k + 1] & closure[k : k + 1, :]
    return closure


def cover_relation(better: np.ndarray) -> np.ndarray:
    """Cover relation (edges of the Hasse diagram) of a strict order.

    ``j`` covers ``i`` iff ``i < j`` and no ``k`` has ``i < k < j`` (Özdemir et al. 2010, §4.3).
    """
    lt = np.asarray(better, dtype=bool)
    m = lt.astype(np.int64)
    through = (m @ m) > 0
    return lt & ~through


def check_strict_order(better: np.ndarray) -> None:
    """Raise ``ValueError`` unless ``better`` is irreflexive and transitive."""
    lt = np.asarray(better, dtype=bool)
    if lt.ndim != 2 or lt.shape[0] != lt.shape[1]:
        raise InputError(f"relation must be a square matrix, got shape {lt.shape}")
    if np.any(np.diag(lt)):
        raise InputError("relation is not irreflexive")
    if np.any(lt & lt.T):
        raise InputError("relation is not antisymmetric")
    if not np.array_equal(transitive_closure(lt), lt):
        raise InputError("relation is not transitive")


@dataclass(frozen=True)
class Poset:
    """A finite strict partial order on named items.

    Attributes
    ----------
    names : tuple of str
        Item names, in input order (indices refer to this order).
    better : ndarray of bool, shape (n, n)
        ``better[i, j]``: item ``j`` is strictly better than item ``i``.
    ties : tuple of tuple of int
        Groups (size ≥ 2) of items that are tied (identical vectors); tied items
        are incomparable in ``better``.
    """

    names: tuple[str, ...]
    better: np.ndarray
    ties: tuple[tuple[int, ...], ...] = field(default=())

    @classmethod
    def from_values(cls, names: Sequence[str], values: np.ndarray) -> Poset:
        """Dominance order of indicator vectors (higher-is-better), ties found."""
        v = np.asarray(values, dtype=float)
        return cls(tuple(names), dominance(v), _tie_groups([tuple(row) for row in v.tolist()]))

    @classmethod
    def from_exact_vectors(cls, names: Sequence[str], vectors: Sequence[Sequence[object]]) -> Poset:
        """Dominance order of exact vectors (e.g. cumulative rank frequencies)."""
        return cls(tuple(names), dominance_exact(vectors), _tie_groups([tuple(v) for v in vectors]))

    @classmethod
    def from_relations(cls, names: Sequence[str], pairs: Sequence[tuple[int, int]]) -> Poset:
        """Order generated by ``(worse, better)`` index pairs (transitively closed)."""
        n = len(names)
        lt = np.zeros((n, n), dtype=bool)
        for worse, better in pairs:
            lt[worse, better] = True
        lt = transitive_closure(lt)
        check_strict_order(lt)
        return cls(tuple(names), lt)

    @property
    def n(self) -> int:
        """Number of items."""
        return len(self.names)

    @property
    def covers(self) -> np.ndarray:
        """Cover matrix: ``covers[i, j]`` iff ``j`` covers ``i`` (Hasse edge)."""
        return cover_relation(self.better)

    def hasse_edges(self) -> list[tuple[int, int]]:
        """Hasse edges as ``(worse, better)`` index pairs, sorted."""
        i, j = np.nonzero(self.covers)
        return sorted(zip(i.tolist(), j.tolist(), strict=True))

    def upper_set(self, a: int) -> list[int]:
        """``U_a = {x : x > a}`` (Özdemir et al. 2010, eq. 16): items strictly better than ``a``."""
        return np.flatnonzero(self.better[a]).tolist()

    def lower_set(self, a: int) -> list[int]:
        """``L_a = {x : x < a}`` (Özdemir et al. 2010, eq. 17): items strictly worse than ``a``."""
        return np.flatnonzero(self.better[:, a]).tolist()

    def rank_intervals(self) -> list[tuple[int, int]]:
        """Rank interval ``|U_a| + 1 ≤ r ≤ |S| − |L_a|`` of every item, rank 1 = best.

        Özdemir et al. (2010), eq. 18 (Patil & Taillie 2004): the best and worst rank that some
        linear extension gives the item.
        """
        up = self.better.sum(axis=1)
        low = self.better.sum(axis=0)
        return [(int(u) + 1, self.n - int(d)) for u, d in zip(up, low, strict=True)]

    def levels(self) -> list[list[int]]:
        """Items in levels, best first: level 0 holds the maximal items, and an
        item's level is the length of the longest chain above it."""
        n = self.n
        level = np.zeros(n, dtype=np.int64)
        # process in order of decreasing |U_a| reversed: items with fewer betters first
        order = np.argsort(self.better.sum(axis=1), kind="stable")
        cov = self.covers
        for a in order.tolist():
            above = np.flatnonzero(cov[a])
            level[a] = 0 if above.size == 0 else int(level[above].max()) + 1
        return [np.flatnonzero(level == k).tolist() for k in range(int(level.max(initial=-1)) + 1)]

    def is_linear(self) -> bool:
        """True iff every two items are comparable (a chain; no ties)."""
        n = self.n
        comparable = self.better | self.better.T
        return bool(np.all(comparable | np.eye(n, dtype=bool)))

    def is_linear_up_to_ties(self) -> bool:
        """True iff every two items are comparable or tied (a weak order)."""
        n = self.n
        ok = self.better | self.better.T | np.eye(n, dtype=bool)
        for group in self.ties:
            idx = np.array(group)
            ok[np.ix_(idx, idx)] = True
        return bool(np.all(ok))

    def hasse_graph(self, attributes: dict[str, dict[str, object]] | None = None) -> nx.DiGraph:
        """The Hasse diagram as a ``networkx.DiGraph`` with edges worse → better.

        Nodes are the item names; ``attributes`` (name → dict) are attached to
        the nodes; each node also gets its ``level`` (0 = best).
        """
        import networkx as nx  # deferred: only needed for the graph view

        g = nx.DiGraph()
        level_of = {a: k for k, items in enumerate(self.levels()) for a in items}
        for a, name in enumerate(self.names):
            attrs = dict((attributes or {}).get(name, {}))
            g.add_node(name, level=level_of[a], **attrs)
        g.add_edges_from((self.names[i], self.names[j]) for i, j in self.hasse_edges())
        return g


def _tie_groups(rows: Sequence[tuple[object, ...]]) -> tuple[tuple[int, ...], ...]:
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(row, []).append(i)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)
