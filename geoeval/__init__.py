"""geoeval: exact evaluation and fair ranking of object detectors.

The public API (the CLI calls only these). Imports are lazy so that
``geoeval score`` on two rasters never pays for geopandas, POT or matplotlib.

Files in (``geoeval.score("reference.tif", "submission.tif")``) or objects
already read, as here: two reference squares, one detection of the first.

>>> import geoeval
>>> from shapely import box
>>> ref = geoeval.ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10)])
>>> sub = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)])
>>> result = geoeval.score(ref, sub, matchers=["bgm"])
>>> result.results["bgm"].precision, result.results["bgm"].recall
(1.0, 0.5)
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from geoeval._version import __version__  # noqa: F401 (geoeval.__version__)
from geoeval.challenges import registry as _boxes

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "GeoevalError": "geoeval.errors",
    "GeoevalWarning": "geoeval.errors",
    "InputError": "geoeval.errors",
    "NotHeldError": "geoeval.errors",
    "ObjectSet": "geoeval.objects",
    "LabelGrid": "geoeval.grid",
    "read": "geoeval.io",
    "read_pair": "geoeval.io",
    "compute_overlap": "geoeval.overlap",
    "match": "geoeval.matching",
    "score": "geoeval.api",
    "score_objects": "geoeval.scoring",
    "ScoreResult": "geoeval.scoring",
    "write_gpkg": "geoeval.report.gpkg",
    "write_csv": "geoeval.report.csv",
    "save_status_figure": "geoeval.report.status_figure",
    "object_tables": "geoeval.report.objects",
    "write_report": "geoeval.report.json_report",
    "score_scenes": "geoeval.api",
    "pair_scenes": "geoeval.scoring",
    "ScenesResult": "geoeval.scoring",
    "mallows_scores": "geoeval.measures.mallows",
    "MallowsResult": "geoeval.measures.mallows",
    "audit": "geoeval.audit",
    "AuditResult": "geoeval.audit",
    "LOCALIZATION_METRICS": "geoeval.measures.localization",
    "rank": "geoeval.api",
    "rank_table": "geoeval.ranking.api",
    "rank_indicators": "geoeval.ranking.api",
    "RankingResult": "geoeval.ranking.api",
    "robin_measures": "geoeval.challenges.robin",
    "read_neovision2": "geoeval.io.neovision2",
    "BoxSet": "geoeval.io.boxes",
    "read_boxes": "geoeval.io.boxes",
    "VocResult": "geoeval.challenges.voc",
    "CocoResult": "geoeval.challenges.coco",
    "DotaResult": "geoeval.challenges.dota",
    "CrowdaiResult": "geoeval.challenges.crowdai",
    "Outlines": "geoeval.io.boxes",
    "evaluate_boxes": "geoeval.challenges.registry",
}
# the box protocols' evaluators (evaluate_voc, evaluate_coco, evaluate_robin,
# robin_categories, evaluate_neovision2, evaluate_dota, evaluate_crowdai, and any protocol
# registered later) are named by their registry entries (geoeval.challenges.registry)

__all__ = sorted([*_EXPORTS, *(p.api for p in map(_boxes.get, _boxes.names()) if p.api)])

#: Public functions whose result carries ``warnings`` (and every box protocol's
#: evaluator): each is also given as a Python warning (:class:`geoeval.GeoevalWarning`),
#: as geopandas gives its own.
_WARN: frozenset[str] = frozenset({"score", "score_objects", "score_scenes", "rank",
                                   "evaluate_boxes"})


def _warning(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, its result's warnings also given with :func:`warnings.warn`."""
    from geoeval.errors import emit

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        emit(result)
        return result

    return call


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        warns = name in _WARN
    else:
        protocol = _boxes.by_api(name)
        if protocol is None:
            raise AttributeError(f"module 'geoeval' has no attribute {name!r}")
        value = _boxes.resolve(protocol.evaluate)
        warns = True  # a box protocol's result carries its readers' warnings
    if warns:
        value = _warning(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    apis = {p.api for p in map(_boxes.get, _boxes.names()) if p.api}
    return sorted(set(globals()) | set(_EXPORTS) | apis)
