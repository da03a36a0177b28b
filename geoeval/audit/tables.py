"""Tables 3–8 of Hemery et al. (2010) from an audit result: marks, stars, final score out of 22.

Scores (Hemery et al. 2010, §4): one star per property that holds. Distance (Table 3):
symmetry, separation, triangle inequality (3). Translation, rotation and
perspective (Tables 4, 6, 7): axial symmetry, strict monotony, uniform
continuity, scale dependency, shape dependency (5 each); scale (Table 5): the
same without axial symmetry (4). A scale dependency counts when it is ``+`` or
``−`` (not ``+/−``, not none). Final score (Table 8): the sum, 22 at most.
"""

from __future__ import annotations

from typing import Any

from geoeval.audit.alterations import ALTERATIONS
from geoeval.measures.localization.registry import METRICS

COLUMNS: dict[str, tuple[str, ...]] = {
    "distance": ("symmetry", "separation", "triangle"),
    "translation": ("axial_symmetry", "strict_monotony", "uniform_continuity",
                    "scale_dependency", "shape_dependency"),
    "scale": ("strict_monotony", "uniform_continuity", "scale_dependency", "shape_dependency"),
    "rotation": ("axial_symmetry", "strict_monotony", "uniform_continuity",
                 "scale_dependency", "shape_dependency"),
    "perspective": ("axial_symmetry", "strict_monotony", "uniform_continuity",
                    "scale_dependency", "shape_dependency"),
}
HEADERS = {
    "symmetry": "Symmetry", "separation": "Separation", "triangle": "Triangle inequality",
    "axial_symmetry": "Axial symmetry", "strict_monotony": "Strict monotony",
    "uniform_continuity": "Uniform continuity", "scale_dependency": "Scale dependency",
    "shape_dependency": "Shape dependency",
}
TITLES = {
    "distance": "Table 3 — distance properties",
    "translation": "Table 4 — translation",
    "scale": "Table 5 — scale",
    "rotation": "Table 6 — rotation",
    "perspective": "Table 7 — perspective",
}
MAX_SCORE = {g: len(c) for g, c in COLUMNS.items()}  # 3 + 5 + 4 + 5 + 5 = 22
_SCALE_MARK = {"+": "✓+", "-": "✓−", "+/-": "✓+/−", "none": "", None: ""}


def holds(value: Any) -> bool:
    """Whether one verdict earns its star."""
    if isinstance(value, dict):
        return bool(value.get("holds"))
    if isinstance(value, str):
        return value in ("+", "-")
    return bool(value)


def mark(prop: str, value: Any) -> str:
    """Table cell: ✓, ✓+, ✓−, ✓+/− or empty."""
    if prop == "scale_dependency":
        return _SCALE_MARK[value]
    return "✓" if holds(value) else ""


def score(verdicts: dict[str, Any], group: str) -> int:
    """Stars of one group."""
    return sum(holds(verdicts[group][p]) for p in COLUMNS[group])


def stars(n: int) -> str:
    return "★" * n


def groups_of(result: Any) -> list[str]:
    return ["distance"] + [k for k in ALTERATIONS if k in result.alterations]


def table_rows(result: Any, group: str) -> list[list[str]]:
    """Rows ``[metric, representation, marks…, score]`` of one of Tables 3–7."""
    rows = []
    for name in result.metrics:
        m, v = METRICS[name], result.verdicts[name]
        cells = [mark(p, v[group][p]) for p in COLUMNS[group]]
        rows.append([m.label, m.representation.capitalize(), *cells, stars(score(v, group))])
    return rows


def synthesis_rows(result: Any) -> list[list[str]]:
    """Rows of Table 8: stars per group and the final score."""
    rows = []
    for name in result.metrics:
        m, v = METRICS[name], result.verdicts[name]
        per = [score(v, g) for g in groups_of(result)]
        rows.append([m.label, m.representation.capitalize(), *map(stars, per), str(sum(per))])
    return rows


def headers(result: Any, group: str) -> list[str]:
    if group == "synthesis":
        return ["Metric", "Representation", *(g.capitalize() for g in groups_of(result)),
                f"Final score (/{sum(MAX_SCORE[g] for g in groups_of(result))})"]
    return ["Metric", "Representation", *(HEADERS[p] for p in COLUMNS[group]), "Score"]
