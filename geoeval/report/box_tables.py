"""Terminal tables (rich) of the box protocols: VOC, COCO, ROBIN, Neovision2, DOTA.

Each function returns the renderables the CLI prints, in order (tables and
plain lines); undefined values are shown as ``–`` (:func:`geoeval.report.tables.fmt`).
"""

from __future__ import annotations

from typing import Any

from geoeval.report.explain import plural
from geoeval.report.tables import fmt as cell


def _table(title: str, columns: tuple[str, ...], left: str | None = None) -> Any:
    from rich.table import Table

    table = Table(title=title, min_width=min(len(title) + 4, 80))  # the title on one line
    for col in columns:
        table.add_column(col, justify="left" if col == (left or columns[0]) else "right")
    return table


def _line(text: str) -> Any:
    from rich.text import Text

    return Text(text)


def voc_tables(result: Any) -> list[Any]:
    """Per-class AP and AP 11-pt, then mAP (Everingham et al. 2010)."""
    table = _table(f"PASCAL VOC, IoU >= {result.iou_threshold:g}"
                   + (" (+1 areas)" if result.plus_one else ""),
                   ("class", "reference", "submitted", "TP", "FP", "AP", "AP 11-pt"))
    for name, c in result.classes.items():
        table.add_row(name, str(c.n_reference), str(c.n_submission), str(c.tp), str(c.fp),
                      cell(c.ap), cell(c.ap11))
    table.add_section()
    table.add_row("mAP", "", "", "", "", cell(result.map), cell(result.map11))
    return [table]


def coco_tables(result: Any, per_class: bool = False) -> list[Any]:
    """The twelve COCOeval numbers (undefined shown as ``–``), optionally per-class AP,
    AP50, AP75."""
    from geoeval.challenges.coco import STAT_NAMES

    what = {"bbox": "boxes", "segm": "masks", "boundary": "masks"}[result.iou_type]
    ratio = (f", dilation ratio {result.dilation_ratio:g}" if result.iou_type == "boundary"
             else "")
    table = _table(f"COCO {result.iou_type}: {result.n_images} images, {result.n_reference} "
                   f"reference {what}, {result.n_submission} submitted{ratio}",
                   ("measure", "value"))
    for name in STAT_NAMES:
        table.add_row(name, cell(result.stats[name]))
    out = [table]
    if per_class:
        pc = _table("per-class AP (IoU .50:.95, all areas, 100 detections)",
                    ("class", "id", "reference", "AP", "AP50", "AP75"))
        for name, c in result.per_class.items():
            pc.add_row(name, str(c["category_id"]), str(c["n_reference"]),
                       *(cell(c[k]) for k in ("ap", "ap50", "ap75")))
        out.append(pc)
    return out


def robin_tables(result: Any) -> list[Any]:
    """ROBIN detection: each run's counts, precision and recall; R*, P*, EER, AUC;
    each category as a detector when scored (D'Angelo et al. 2006, §4.2.4)."""
    table = _table(f"ROBIN detection (ε = {', '.join(f'{e:g}' for e in result.eps)})",
                   ("run", "TP", "N", "N*", "precision", "recall", "difficult images"))
    for run in result.runs:
        table.add_row(_short_path(run.path), str(run.tp), str(run.n), str(run.n_star),
                      cell(run.precision), cell(run.recall), str(int(run.difficult.sum())))
    out = [table, _line(f"R* {cell(result.r_star)}   P* {cell(result.p_star)}   "
                        f"EER {cell(result.eer)}   AUC {cell(result.auc)}   (from "
                        f"{result.curve_source}, {len(result.curve)} point(s))")]
    if result.categories:
        per = _table("Each category as a detector (§4.2.4)",
                     ("category", "TP", "N", "N*", "precision", "recall", "R*", "P*", "EER",
                      "AUC"))
        for name, c in result.categories.items():
            per.add_row(name, str(c.tp), str(c.n), str(c.n_star), cell(c.precision),
                        cell(c.recall), cell(c.r_star), cell(c.p_star), cell(c.eer),
                        cell(c.auc))
        out.append(per)
    return out


def robin_category_tables(result: Any) -> list[Any]:
    """ROBIN categorisation: confusion matrices η as given and at maximal and
    minimal uncertainty; D, U, D*, U*, EDU, rejection rates and ERR."""
    run = result.runs[0]
    out = [_confusion_table("η(c, c*) of the labels as given: rows reference c*, "
                            "columns output c", run)]
    titles = {"max_uncertainty": "at maximal uncertainty (§4.3.1)",
              "min_uncertainty": "at minimal uncertainty (§4.2.1, the point of D*)"}
    for key, at in result.confusion_at.items():
        where = (f"μ = {at.threshold:g}" if at.threshold is not None
                 else f"run {at.run}" if at.run is not None else "labels as given")
        out.append(_confusion_table(f"η(c, c*) {titles[key]}: {where}, D "
                                    f"{cell(at.matrix.discrimination)}, U "
                                    f"{cell(at.matrix.uncertainty)}", at.matrix))
    out.append(_line(f"D {cell(result.discrimination)}   U {cell(result.uncertainty)}   "
                     f"D* {cell(result.d_star)}   U* {cell(result.u_star)}   "
                     f"EDU {cell(result.edu)}"))
    out.append(_line(f"rejection {cell(run.rejection)}   false rejection "
                     f"{cell(run.false_rejection)}   ERR {cell(result.err)}"))
    return out


def _confusion_table(title: str, run: Any) -> Any:
    """``run.confusion`` as a table (rows reference categories, columns outputs)."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("c* \\ c")
    for o in run.outputs:
        table.add_column(o, justify="right")
    for c in run.categories:
        table.add_row(c, *(cell(run.confusion[c][o], 3) for o in run.outputs))
    return table


def neovision2_tables(result: Any) -> list[Any]:
    """NMOTDA, its sequence mean and median, reference (ground-truth) objects, missed,
    false positives (FP) and Az per class, for all sequences and each domain
    (Ekambaram et al. 2012)."""
    out: list[Any] = []
    for name, scores in {"all": result.overall, **result.domains}.items():
        table = _table(f"Neovision2 — {name} ({scores.n_frames} frames)",
                       ("class", "NMOTDA", "seq. mean", "seq. median", "ref. objects", "missed",
                        "FP", "Az"))
        table.columns[0].no_wrap = True
        rows = [(cls, s, scores.roc[cls].az) for cls, s in scores.classes.items()]
        rows.append(("detection only", scores.detection_only, scores.roc_detection_only.az))
        for label, s, az in rows:
            table.add_row(label, cell(s.nmotda), cell(s.sequence_mean), cell(s.sequence_median),
                          str(s.n_reference), str(s.missed), str(s.false_positives), cell(az))
        out.append(table)
        out.append(_line(f"NMOTDA over classes: weighted mean {cell(scores.weighted_mean)}   "
                         f"mean {cell(scores.mean)}   median {cell(scores.median)}"))
    return out


def dota_tables(result: Any) -> list[Any]:
    """Per-class counts and AP, mAP; then the row of the papers' tables (AP in %, classes
    by their abbreviations, Xia et al. 2018, Table 2)."""
    from geoeval.challenges.dota import ABBREVIATIONS

    boxes = "oriented" if result.task == 1 else "horizontal"
    metric = "11-point AP" if result.metric == "voc07" else "every-point AP"
    table = _table(f"DOTA-v{result.version} task {result.task} ({boxes} boxes), {metric}, "
                   f"IoU > 0.5: {len(result.reference.images)} images",
                   ("class", "reference", "difficult", "submitted", "TP", "FP", "AP"))
    for name, c in result.classes.items():
        table.add_row(name, str(c.n_reference), str(c.n_difficult), str(c.n_submission),
                      str(c.tp), str(c.fp), cell(c.ap))
    table.add_section()
    table.add_row("mAP", "", "", "", "", "", cell(result.map))
    paper = _table("AP (%) as in the papers' tables",
                   ("", *(ABBREVIATIONS[k] for k in result.classes), "mAP"))
    paper.add_row(f"task {result.task}",
                  *(_percent(c.ap) for c in result.classes.values()), _percent(result.map))
    return [table, paper]


def _percent(value: float | None) -> str:
    return cell(None if value is None else 100 * value, 2)


def _short_path(path: str) -> str:
    """A run's folder or file for a table cell: its last two parts (``…/det/run2``)."""
    parts = str(path).replace("\\", "/").rstrip("/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else str(path)


def crowdai_tables(result: Any) -> list[Any]:
    """The building-polygon table as the papers lay it out: mask AP and AR (in %), then
    Boundary AP, IoU and C-IoU (in %), N-ratio, max tangent angle error (degrees) and
    PoLiS (pixels), one row for the submission."""
    from rich import box

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}"

    s, r = result.stats, result.recall_at_iou
    first = _table(f"{result.name}: CrowdAI mapping challenge, {result.n_images:,} "
                   f"{plural(result.n_images, 'tile', 'tiles')}, "
                   "mask AP and AR (%)",
                   ("AP", "AP50", "AP75", "APS", "APM", "APL",
                    "AR", "AR50", "AR75", "ARS", "ARM", "ARL"))
    first.box, first.padding = box.SIMPLE_HEAD, (0, 0)
    for column in first.columns:
        column.justify, column.min_width = "right", 5
    first.add_row(*(pct(v) for v in (s["AP"], s["AP50"], s["AP75"], s["APs"], s["APm"],
                                     s["APl"], s["AR100"], r["AR50"], r["AR75"], s["ARs"],
                                     s["ARm"], s["ARl"])))
    p = result.polygons
    second = _table(f"{result.name}: boundary and polygon quality",
                    ("method", "AP boundary", "IoU", "C-IoU", "N ratio", "MTA", "PoLiS"))
    second.box = box.SIMPLE_HEAD
    second.add_row(result.name, pct(result.boundary_stats["AP"]), pct(p.iou), pct(p.ciou),
                   cell(p.n_ratio, 2), "–" if p.mta is None else f"{p.mta:.1f}°",
                   cell(p.polis, 3))
    out = [first, second]
    if p.unavailable:
        out.append(_line(f"IoU, C-IoU, N ratio, MTA, PoLiS: {p.unavailable}."))
    def n(count: int, one: str, many: str) -> str:
        return f"{count:,} {plural(count, one, many)}"

    out.append(_line(
        f"AR is AR100; AR50, AR75 at IoU .5, .75 (frame-field learning's eval_coco). IoU, "
        f"C-IoU, N ratio over {n(p.iou_images, 'tile', 'tiles')} with predictions "
        f"(PolyWorld); MTA over {n(p.mta_polygons, 'predicted polygon', 'predicted polygons')} "
        f"(frame-field learning); PoLiS over {n(p.polis_pairs, 'pair', 'pairs')} in "
        f"{n(p.polis_images, 'tile', 'tiles')} (HiSup). Which script each number "
        "equals, and its quirks: docs/crowdai.md."))
    return out
