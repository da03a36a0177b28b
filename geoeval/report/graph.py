"""The Hasse diagram of a ranking as a graph file (GraphML) for graph tools.

GraphML opens in yEd, Gephi, Cytoscape and networkx itself; each node carries
its indicators, its Hasse level (0 = best) and its final rank, each edge goes
from the worse item to the one that covers it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from geoeval.output_targets import output_target
from geoeval.outputs import atomic_path

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.ranking.api import RankingResult


def write_hasse_graphml(result: RankingResult, path: str | os.PathLike[str]) -> Path | str:
    """Write the Hasse diagram of ``result`` to ``path`` (GraphML), atomically.

    Indicators that are undefined for an item are left off its node (GraphML
    has no null); the final rank is the node attribute ``final_rank``.
    """
    import networkx as nx  # deferred: only this export and the figures need it

    graph = result.hasse()
    for name, attrs in graph.nodes(data=True):
        for key in [k for k, v in attrs.items() if v is None]:
            del attrs[key]
        attrs["final_rank"] = int(result.final_rank[name])
    target = output_target(path)
    with atomic_path(target) as tmp:
        nx.write_graphml(graph, tmp)
    return target
