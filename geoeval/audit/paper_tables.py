"""The verdicts Hemery et al. (2010) publish in their Tables 3–8, transcribed cell by cell.

Hemery, Laurent, Emile & Rosenberger, "Comparative study of localization
metrics for the evaluation of image interpretation systems", J. Electron.
Imaging 19(2) 023017 (2010), §4, Tables 3 (distance), 4 (translation),
5 (scale), 6 (rotation), 7 (perspective) and 8 (synthesis).

Each row lists the property cells of one metric in the column order of
:data:`geoeval.audit.tables.COLUMNS`, one token per cell:

* ``x`` the paper's check mark (✓), ``.`` an empty cell;
* scale dependency: ``+`` (✓+, the small object is penalised more), ``-``
  (✓−), ``~`` (✓+/−) or ``.`` (no dependency).

The transcription reads the check marks, not the star scores: in the
published tables the star counts do not always match the marks of their own
row (e.g. Table 7 gives PAS four stars for five marks), while Table 8's final
scores (:data:`FINAL_SCORES`) do match the sums of the marks for most metrics
(:func:`paper_score_sums` lets the tests list the exceptions).
"""

from __future__ import annotations

from typing import Any

from geoeval.audit.tables import COLUMNS

#: registry names of the 38 metrics of the paper, in its row order
PAPER_METRICS: tuple[str, ...] = (
    "rob_loc", "rob_com", "rob_cor", "err_loc", "err_sous", "err_sur", "snr", "rms", "lq1",
    "lq3", "kul", "bha", "jen", "dmoy", "dmoc", "fom", "hau", "bad1", "bad2", "bad3", "odi1",
    "odi2", "udi1", "udi2", "pas", "hen1", "hen2", "yas1", "yas2", "yas3", "mar_gce",
    "mar_lce", "ham", "haf1", "haf2", "vin", "p_px", "r_px",
)

# One row per metric; its cells in Tables 3 to 7, the tables separated by "|", each in
# the column order of geoeval.audit.tables.COLUMNS:
#   Table 3 (distance): symmetry, separation, triangle inequality;
#   Tables 4 (translation), 6 (rotation) and 7 (perspective): axial symmetry, strict
#   monotony, uniform continuity, scale dependency, shape dependency;
#   Table 5 (scale): strict monotony, uniform continuity, scale dependency, shape dependency.
#         T3    | T4        | T5      | T6        | T7
_CELLS = """
rob_loc   . . . | x . . + . | . . . . | . . . . . | . . . . .
rob_com   x . . | . . . . . | x x + . | x . x ~ . | . . . ~ x
rob_cor   x . . | . . . . . | . x + x | x . x . x | x . x + x
err_loc   x x x | x . . - x | . . - x | x . x - . | x . x - x
err_sous  . x x | x . . ~ x | . . ~ x | x . x ~ . | x . x ~ x
err_sur   . x x | x . . - x | . . - x | x . x - . | . . x - x
snr       . . . | x . . + x | . . + x | x . . + . | x . . + x
rms       x x x | x . . - x | . . - x | x . x - x | x . . - x
lq1       x x x | x . . - x | . . - x | x . x - x | x . x - x
lq3       x x x | x . . - x | . . - x | x . x - x | x . x - x
kul       . x x | x . . - x | . . - x | x . x - x | x . x - x
bha       x . . | x . . - x | x x - x | x . . ~ x | . . . . .
jen       . x x | x . . - x | . . - x | x . x - x | x . x - x
dmoy      . x x | x x x - x | x x ~ x | x x x - . | . . x ~ x
dmoc      . x x | x x x - x | x x ~ x | x x x - . | . . x ~ x
fom       . x x | x x x ~ x | x x ~ x | x x x - x | x . x ~ x
hau       x x x | x x x . . | x x . . | x . x - . | x x x . .
bad1      x x x | x . x - x | . x ~ x | x x x - x | . . x ~ x
bad2      x x x | x . . + x | . x + x | x x x - . | . . x + x
bad3      x x x | x . . + x | . x + x | x x x ~ x | . . x + x
odi1      . x x | x . . ~ x | . . ~ x | x x x - x | . . x ~ x
odi2      . x x | x . . - x | . . ~ x | x x x - x | . . x ~ x
udi1      . x x | x . . ~ x | . . ~ x | x x x - x | x . x ~ x
udi2      . x x | x . . - x | . . ~ x | x x x - x | . . x ~ x
pas       x x x | x x x + x | x x + x | x x x ~ . | x x x + x
hen1      . . . | . . . . . | x x ~ x | . . . . . | . . . . .
hen2      . x x | x x x + x | x x + x | x x x ~ . | x x x + x
yas1      . . . | x x x + x | . x + x | x x x ~ . | x x x + x
yas2      . . . | x x x - x | . x - x | x x x - . | x x x - x
yas3      . . . | x x x - x | . x - x | x x x - . | x x x - x
mar_gce   x x x | x x x - x | x x - x | x x x - x | x x x - x
mar_lce   x x x | x x x - x | x x - x | x x x - x | x x x - x
ham       x x x | x . x - x | . x - x | x x x - . | x x x - x
haf1      x x x | x x . + x | . . ~ x | x x x - . | x x x + x
haf2      . x x | x x . - x | x . - x | x x x - . | x x x - x
vin       x x x | x x x - x | x x - x | x x x - . | x x x - x
p_px      . . . | x x x + x | . x + x | x x x ~ . | x x x + x
r_px      . . . | x x x + x | . x + x | x x x ~ . | x x x + x
"""

#: Table 8's final scores (out of 22), as printed
FINAL_SCORES: dict[str, int] = dict(zip(PAPER_METRICS, (
    5, 7, 11, 15, 10, 13, 10, 15, 16, 14, 15, 10, 15, 16, 16, 17, 14, 16, 16, 16, 12, 13, 13,
    13, 20, 3, 19, 16, 17, 17, 22, 22, 19, 17, 18, 21, 16, 16,
), strict=True))

TABLE_NUMBERS = {"distance": 3, "translation": 4, "scale": 5, "rotation": 6, "perspective": 7}
_SCALE = {"+": "+", "-": "-", "~": "+/-", ".": "none"}


def _parse() -> dict[str, dict[str, dict[str, Any]]]:
    """``_CELLS`` read into ``{metric: {group: {property: value}}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for line in _CELLS.strip().splitlines():
        name, first = line.split(maxsplit=1)
        tables = first.split("|")
        if len(tables) != len(COLUMNS):  # pragma: no cover - guarded by the tests
            raise ValueError(f"{name}: {len(tables)} tables")
        for (group, cols), text in zip(COLUMNS.items(), tables, strict=True):
            cells = text.split()
            if len(cells) != len(cols):  # pragma: no cover - guarded by the tests
                raise ValueError(f"Table {TABLE_NUMBERS[group]}, {name}: {len(cells)} cells")
            out.setdefault(name, {})[group] = {
                col: _SCALE[tok] if col == "scale_dependency" else tok == "x"
                for col, tok in zip(cols, cells, strict=True)
            }
    return out


#: ``PAPER[metric][group][property]``: bool, or for scale dependency
#: ``"+"``, ``"-"``, ``"+/-"``, ``"none"`` (the audit's own labels)
PAPER: dict[str, dict[str, dict[str, Any]]] = _parse()


def paper_star(prop: str, value: Any) -> bool:
    """Whether a transcribed cell earns its star (scale dependency: ``+`` or ``-`` only)."""
    if prop == "scale_dependency":
        return value in ("+", "-")
    return bool(value)


def paper_score_sums() -> dict[str, int]:
    """Per metric, the stars its transcribed marks earn (to compare with :data:`FINAL_SCORES`)."""
    return {
        m: sum(paper_star(p, v) for g in PAPER[m].values() for p, v in g.items())
        for m in PAPER_METRICS
    }
