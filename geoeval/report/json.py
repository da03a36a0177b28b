"""The JSON report: stable keys (``docs/report.md``), NaN written as null, atomic."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.report.atomic import write_text


def _clean(value: Any) -> Any:
    """JSON-safe copy: numpy scalars to Python, NaN/inf to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(report: dict[str, Any]) -> str:
    """The report as indented JSON text (strict: no NaN)."""
    return json.dumps(_clean(report), indent=2, allow_nan=False) + "\n"


def write_json(path: str | Path, report: dict[str, Any]) -> None:
    """Write a report to ``path`` atomically."""
    write_text(path, dumps(report))
