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

from geoeval.audit.alterations import KINDS
from geoeval.measures.localization.registry import METRICS
from geoeval.outputs import clean

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
    return ["distance"] + [k for k in KINDS if k in result.alterations]


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


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown(result: Any) -> str:
    """Tables 3–8 as Markdown, with the run's settings."""
    s = result.settings
    out = [
        f"Audit of {len(result.metrics)} metrics on {len(result.shapes)} ground truths, "
        f"alterations: {', '.join(result.alterations)}; {result.n_results:,} altered results "
        f"per metric; steps {s['step']:g} px / {s['angle_step']:g}°; quorum "
        f"{s['quorum']:g}; {result.seconds:.1f} s.",
        "",
    ]
    for g in groups_of(result):
        out += [f"### {TITLES[g]}", "", _md_table(headers(result, g), table_rows(result, g)), ""]
    out += ["### Table 8 — synthesis", "",
            _md_table(headers(result, "synthesis"), synthesis_rows(result)), ""]
    cmp = paper_comparison(result)
    if cmp["cells"]:
        out += [f"{cmp['agreeing']} of {cmp['cells']} property cells "
                f"({100 * cmp['rate']:.1f} %) agree with Hemery et al. (2010), Tables 3–7.", ""]
    return "\n".join(out)


def paper_comparison(result: Any) -> dict[str, Any]:
    """Agreement of the run's property cells with the paper's Tables 3–7 (:mod:`.compare`)."""
    from geoeval.audit.compare import compare

    c = compare(result.verdicts)
    return {"cells": c.n, "agreeing": c.n_agree, "rate": c.rate if c.n else None}


def result_dict(result: Any) -> dict[str, Any]:
    """JSON-ready audit summary: settings, per-metric verdicts, scores (``docs/audit.md``)."""
    metrics = {}
    for name in result.metrics:
        m, v = METRICS[name], result.verdicts[name]
        scores = {g: score(v, g) for g in groups_of(result)}
        metrics[name] = {
            "label": m.label, "representation": m.representation, "kind": m.kind,
            "verdicts": clean(v), "scores": scores, "final_score": sum(scores.values()),
        }
    return {
        "settings": clean(dict(result.settings)),
        "alterations": list(result.alterations),
        "shapes": list(result.shapes),
        "n_results": result.n_results,
        "seconds": round(result.seconds, 3),
        "max_score": sum(MAX_SCORE[g] for g in groups_of(result)),
        "paper_comparison": paper_comparison(result),
        "metrics": metrics,
    }
