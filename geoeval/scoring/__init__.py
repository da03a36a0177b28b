"""Scoring: one scene, many scenes, each class, a contest. Writes nothing.

:func:`score` reads and scores one pair (:mod:`geoeval.scoring.scene`),
:func:`score_scenes` many (:mod:`geoeval.scoring.scenes`), per-class results
come from :mod:`geoeval.scoring.classes`, a contest ranking from
:func:`rank` (:mod:`geoeval.scoring.contest`). The outputs (GeoPackage, CSV,
figures) are :mod:`geoeval.report`'s; :func:`geoeval.score` ties them together.
"""

from geoeval.scoring.classes import PerClass, score_classes
from geoeval.scoring.contest import rank
from geoeval.scoring.result import REPORT_SCHEMA_VERSION, MatcherResult, ScoreResult, measure
from geoeval.scoring.scene import check_options, score, score_objects
from geoeval.scoring.scenes import ScenesResult, pair_scenes, score_scenes

__all__ = ["REPORT_SCHEMA_VERSION", "MatcherResult", "PerClass", "ScenesResult", "ScoreResult",
           "check_options", "measure", "pair_scenes", "rank", "score", "score_classes",
           "score_objects", "score_scenes"]
