"""geoeval's audit verdicts against the ones Hemery et al. (2010) publish, cell by cell.

:func:`compare` takes the verdicts of an audit run (``AuditResult.verdicts``)
and lines every property cell of Tables 3–7 up with the paper's
(:mod:`geoeval.audit.paper_tables`): 38 metrics × 22 cells = 836 cells when
every alteration was run. A cell agrees when the marks are the same: the
check mark of a boolean property, the label (``+``, ``−``, ``+/−``, none) of
scale dependency. :data:`CAUSES` explains the disagreements of the full run;
:meth:`Comparison.markdown` renders them (``docs/audit.md``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from geoeval.audit.paper_tables import PAPER, PAPER_METRICS, TABLE_NUMBERS, paper_star
from geoeval.audit.tables import COLUMNS, HEADERS


@dataclass(frozen=True)
class Cell:
    """One property cell: the paper's mark, geoeval's, and whether they agree."""

    metric: str
    group: str
    prop: str
    paper: Any
    geoeval: Any

    @property
    def agree(self) -> bool:
        return self.paper == self.geoeval

    @property
    def star_agree(self) -> bool:
        """Whether both award (or both withhold) the star, whatever the label."""
        return paper_star(self.prop, self.paper) == paper_star(self.prop, self.geoeval)


def geoeval_mark(prop: str, verdict: Any) -> Any:
    """A verdict of :func:`geoeval.audit.protocol.verdicts` as a paper cell (bool or label)."""
    if prop == "scale_dependency":
        return verdict if verdict in ("+", "-", "+/-") else "none"
    if isinstance(verdict, dict):
        return bool(verdict.get("holds"))
    return bool(verdict)


@dataclass
class Comparison:
    """All compared cells of one audit run."""

    cells: list[Cell]

    @property
    def n(self) -> int:
        return len(self.cells)

    @property
    def n_agree(self) -> int:
        return sum(c.agree for c in self.cells)

    @property
    def rate(self) -> float:
        """Share of the cells whose marks agree (NaN when nothing was compared)."""
        return self.n_agree / self.n if self.cells else float("nan")

    @property
    def star_rate(self) -> float:
        """Share of the cells that award or withhold the star alike."""
        return sum(c.star_agree for c in self.cells) / self.n if self.cells else float("nan")

    @property
    def disagreements(self) -> list[Cell]:
        return [c for c in self.cells if not c.agree]

    def by(self, key: str) -> dict[str, tuple[int, int]]:
        """``{value: (agreeing, compared)}`` by ``metric``, ``group`` or ``prop``."""
        tot, ok = Counter(), Counter()
        for c in self.cells:
            k = getattr(c, key)
            tot[k] += 1
            ok[k] += c.agree
        return {k: (ok[k], tot[k]) for k in tot}

    def markdown(self, labels: dict[str, str] | None = None,
                 causes: dict[tuple[str, str, str], str] | None = None) -> str:
        """The disagreements as a Markdown table, with their cause when known."""
        from geoeval.measures.localization.registry import METRICS

        causes = CAUSES if causes is None else causes
        lines = ["| Table | Metric | Property | 003 | geoeval | cause |",
                 "|---|---|---|---|---|---|"]
        for c in self.disagreements:
            label = (labels or {}).get(c.metric) or METRICS[c.metric].label
            lines.append(
                f"| {TABLE_NUMBERS[c.group]} | {label} | {HEADERS[c.prop]} | "
                f"{_show(c.prop, c.paper)} | {_show(c.prop, c.geoeval)} | "
                f"{cause_of(c, causes)} |"
            )
        return "\n".join(lines)


def _show(prop: str, v: Any) -> str:
    if prop == "scale_dependency":
        return {"+": "✓+", "-": "✓−", "+/-": "✓+/−"}.get(v, "–")
    return "✓" if v else "–"


def cause_of(cell: Cell, causes: dict[tuple[str, str, str], str] | None = None) -> str:
    """The recorded cause of a disagreement: exact key, then ``*`` wildcards."""
    causes = CAUSES if causes is None else causes
    for key in ((cell.metric, cell.group, cell.prop), (cell.metric, "*", cell.prop),
                ("*", cell.group, cell.prop), (cell.metric, cell.group, "*"),
                (cell.metric, "*", "*")):
        if key in causes:
            return causes[key]
    return ""


def compare(verdicts: dict[str, dict[str, dict[str, Any]]]) -> Comparison:
    """Line the audit's verdicts up with the paper's Tables 3–7.

    Parameters
    ----------
    verdicts : dict
        ``AuditResult.verdicts`` (``{metric: {group: {property: verdict}}}``);
        metrics the paper does not study, and groups not run, are skipped.

    Returns
    -------
    Comparison
    """
    cells = []
    for m in PAPER_METRICS:
        if m not in verdicts:
            continue
        for group, props in COLUMNS.items():
            if group not in verdicts[m]:
                continue
            for p in props:
                cells.append(Cell(m, group, p, PAPER[m][group][p],
                                  geoeval_mark(p, verdicts[m][group][p])))
    return Comparison(cells)


#: why a cell of the full run (``geoeval audit``, default settings) differs from
#: the paper; keys ``(metric, group, property)`` with ``*`` wildcards
CAUSES: dict[tuple[str, str, str], str] = {}
