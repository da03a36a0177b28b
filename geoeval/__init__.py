"""geoeval: exact evaluation and fair ranking of object detectors.

The public API (the CLI calls only these). Imports are lazy so that
``geoeval score`` on two rasters never pays for geopandas, POT or matplotlib.

>>> import geoeval
>>> result = geoeval.score("reference.tif", "submission.tif")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "GeoevalError": "geoeval.errors",
    "InputError": "geoeval.errors",
    "ObjectSet": "geoeval.objects",
    "LabelGrid": "geoeval.objects",
    "read": "geoeval.io",
    "read_pair": "geoeval.io",
    "compute_overlap": "geoeval.overlap",
    "match": "geoeval.matching",
    "score": "geoeval.scoring",
    "score_objects": "geoeval.scoring",
    "ScoreResult": "geoeval.scoring",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'geoeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
