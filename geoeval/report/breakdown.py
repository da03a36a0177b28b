"""The error breakdown as a terminal table and as a bar figure.

What each row means is in :mod:`geoeval.measures.breakdown` and ``docs/breakdown.md``
(TIDE's oracle deltas, Bolya et al. 2020, on match instances).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geoeval.matching import registry
from geoeval.measures.breakdown import ERROR_TYPES
from geoeval.report.explain import and_list
from geoeval.report.tables import accuracy_label, fmt

#: Short row labels (the table fits 80 columns).
FIGURE_ROWS = {"missed": "misses", "false_alarm": "false alarms",
               "merge": "merges (under-detection)", "split": "splits (over-detection)",
               "localisation": "one-to-one (localisation)"}
ROWS = {"missed": "misses", "false_alarm": "false alarms", "merge": "merges (under)",
        "split": "splits (over)", "localisation": "localisation", "all": "all fixed"}


def one_to_one_words(name: str, missed: int, false_alarms: int) -> str | None:
    """Why a one-to-one matcher's breakdown has no merges or splits, and where those
    errors went (None for a matcher that forms them, or one not registered).

    A one-to-one matcher (bgm, iou) pairs a detection with one reference at most:
    a detection covering several reference objects is matched to one of them and the
    others are *missed*; the extra pieces of a split are *false alarms* (Özdemir et
    al. 2010, §4.1). Its "0 merges" is so by definition, not a finding.

    >>> print(one_to_one_words("bgm", 1164, 0))  # doctest: +NORMALIZE_WHITESPACE
    bgm is one-to-one, so it forms no merges or splits: a detection covering several
    reference objects is matched to one of them and the others count as misses (among
    the 1,164 here), the extra pieces of a split as false alarms (among the 0); hoover
    and mom credit merges and splits (Özdemir et al. 2010, §4.1)
    """
    if name not in registry.names() or not registry.get(name).one_to_one:
        return None
    many = [n for n in registry.names() if not registry.get(n).one_to_one]
    credit = (f"; {and_list(many)} {'credit' if len(many) > 1 else 'credits'} merges and "
              "splits" if many else "")
    return (f"{name} is one-to-one, so it forms no merges or splits: a detection covering "
            "several reference objects is matched to one of them and the others count as "
            f"misses (among the {missed:,} here), the extra pieces of a split as false alarms "
            f"(among the {false_alarms:,}){credit} (Özdemir et al. 2010, §4.1)")


def breakdown_tables(summaries: dict[str, Any]) -> list[Any]:
    """One table per matcher: rows the error types, columns F1 and the matcher's
    accuracy now, if that type were fixed and the gain. ``summaries`` are a result's
    (:func:`geoeval.report.summaries.summaries`: the report's ``breakdown`` object, the
    same for a local and a partitioned Dask run)."""
    if summaries.get("breakdown") is None:
        return []
    tables = []
    for name, b in summaries["breakdown"].items():
        tables.append(breakdown_table(name, b))
        if b.get("class_confusion") is not None:
            tables.append(class_confusion_table(name, b["class_confusion"]))
    return tables


def class_confusion_table(name: str, cc: dict[str, Any]):
    """Per class: F1 and accuracy now, if every matched submitted object had its
    reference's class, and the gain."""
    from rich.table import Table

    title = f"{name}: class confusion ({cc['count']} submitted object(s) of another class)"
    table = Table(title=title, title_style="bold", min_width=min(len(title) + 2, 80))
    for col in ("class", "F1 now", "if fixed", "F1 gain", "acc. now", "if fixed", "acc. gain"):
        table.add_column(col, justify="left" if col == "class" else "right")
    for c, v in cc["classes"].items():
        table.add_row(c[:16], fmt(v["now"]["f1"]), fmt(v["fixed"]["f1"]),
                      _signed(v["gain"]["f1"]), fmt(v["now"]["accuracy"]),
                      fmt(v["fixed"]["accuracy"]), _signed(v["gain"]["accuracy"]))
    return table


def breakdown_table(name: str, b: dict[str, Any]):
    """The breakdown of one matcher, from the report's ``breakdown.<matcher>`` object
    (:meth:`geoeval.measures.breakdown.Breakdown.to_dict`; see :func:`breakdown_tables`)."""
    from rich.table import Table

    now, errors = b["now"], b["errors"]
    # an accuracy with no breakdown (BGM's area ratio, or undefined) gets no columns of
    # dashes: the caption says why
    show_acc = now["accuracy"] is not None or any(
        errors[t]["fixed"]["accuracy"] is not None for t in (*ERROR_TYPES, "all"))
    if show_acc:
        caption = f"accuracy: {accuracy_label(name)}"
    elif registry.accuracy_rule(name) == registry.MATCHED_AREA:
        caption = (f"{name}'s accuracy ({accuracy_label(name)}: matched area over the area of "
                   "all objects) has no breakdown: a fixed matching does not give that area")
    else:
        caption = f"{name}'s accuracy ({accuracy_label(name)}) is undefined here"
    words = one_to_one_words(name, errors["missed"]["count"], errors["false_alarm"]["count"])
    if words is not None:  # its "0 merges" is a definition, not a finding: no count shown
        caption += f"; {words}"
    title = f"{name}: what fixing each error type would gain"
    table = Table(title=title, title_style="bold", caption=caption)
    table.add_column("error", style="bold")
    table.add_column("count", justify="right")
    table.add_column("F1 if fixed", justify="right")
    table.add_column("F1 gain", justify="right")
    if show_acc:
        table.add_column("acc. if fixed", justify="right")
        table.add_column("acc. gain", justify="right")

    def accuracy(*cells: str) -> tuple[str, ...]:
        return cells if show_acc else ()

    table.add_row("now", "", fmt(now["f1"]), "", *accuracy(fmt(now["accuracy"]), ""),
                  end_section=True)
    for t in (*ERROR_TYPES, "all"):
        e = errors[t]
        count = ("" if t == "all" else
                 "–" if words is not None and t in ("merge", "split") else str(e["count"]))
        table.add_row(ROWS[t], count, fmt(e["fixed"]["f1"]),
                      _signed(e["gain"]["f1"]),
                      *accuracy(fmt(e["fixed"]["accuracy"]), _signed(e["gain"]["accuracy"])),
                      end_section=t == ERROR_TYPES[-1])
    return table


def _signed(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:+.4f}"


def save_breakdown_figure(result: Any, path: str | Path, *, matcher: str | None = None,
                          dpi: int = 150) -> Path | str:
    """Horizontal bars of the gain per error type: F1 and the matcher's accuracy.

    ``matcher`` defaults to ``mom`` when it ran, else the first matcher; ``path``
    is ``.png`` or ``.svg``, written atomically. Gains below zero are red.
    """
    from geoeval.errors import OutputError
    from geoeval.output_targets import output_target, suffix_of
    from geoeval.outputs import atomic_path
    from geoeval.report.status_figure import FORMATS

    target = output_target(path)
    form = FORMATS.get(suffix_of(target))
    if form is None:
        raise OutputError("breakdown figure must be .png or .svg", target)
    fig = breakdown_figure(result, matcher=matcher)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=form, dpi=dpi)
    return target


def breakdown_figure(result: Any, *, matcher: str | None = None) -> Any:
    """The figure :func:`save_breakdown_figure` saves, as a matplotlib ``Figure``."""
    import numpy as np
    from matplotlib.figure import Figure  # deferred: heavy, figures only
    from matplotlib.ticker import MaxNLocator

    from geoeval.errors import InputError

    if result.breakdown is None:
        raise InputError("no error breakdown was computed (breakdown=True)")
    from geoeval.report.objects import choose_matcher

    matcher = choose_matcher(result, matcher)
    b = result.breakdown[matcher]
    panels = [("f1", "F1")]
    if b.now["accuracy"] is not None:
        panels.append(("accuracy", f"accuracy ({accuracy_label(matcher)})"))
    labels = [f"{b.errors[t]} {FIGURE_ROWS[t]}" for t in ERROR_TYPES]
    fig = Figure(figsize=(5.6 * len(panels), 3.9), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)
    y = np.arange(len(ERROR_TYPES))
    for ax, (key, what) in zip(axes[0], panels, strict=True):
        gains = np.array([np.nan if (g := b.gain(t, key)) is None else g for t in ERROR_TYPES])
        colours = ["#c0392b" if g < 0 else "#2c7fb8" for g in np.nan_to_num(gains)]
        ax.barh(y, np.nan_to_num(gains), color=colours)
        span = max(float(np.nanmax(np.abs(gains))) if np.isfinite(gains).any() else 0.0, 1e-3)
        for yi, g in zip(y, gains, strict=True):
            text = "–" if g != g else f"{g:+.4f}"
            ax.text((0 if g != g else g) + (span * 0.02 if not g < 0 else -span * 0.02), yi,
                    text, va="center", ha="left" if not g < 0 else "right", fontsize=9)
        ax.axvline(0, color="black", linewidth=0.8)
        lo = min(0.0, float(np.nanmin(gains)) if np.isfinite(gains).any() else 0.0)
        ax.set_xlim(lo - 0.25 * span * (lo < 0), span * 1.3)
        now = b.now[key]
        ax.set_title(f"{what}: now {fmt(now, 3)}, all fixed {fmt(b.fixed['all'][key], 3)}",
                     fontsize=10)
        ax.set_xlabel(f"gain in {what.split(' (')[0]}")
        ax.grid(axis="x", alpha=0.3)
        if not np.isfinite(gains).any():
            ax.text(0.5, 0.5, f"undefined: {what.split(' (')[0]} is null now", ha="center",
                    va="center", transform=ax.transAxes, fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(4))
    axes[0][0].set_yticks(y, labels)
    axes[0][0].invert_yaxis()
    sub = Path(str(result.submission.path)).name if result.submission.path else "submission"
    fig.suptitle(f"Error breakdown ({matcher}) of {sub}\ngain if one error type were fixed",
                 fontsize=11)
    if any((g := b.gain(t, k)) is not None and g < 0 for t in ERROR_TYPES for k, _ in panels):
        fig.supxlabel("red: fixing that type lowers the measure (precision, eq. 14 "
                 "of Özdemir et al. 2010, counts every piece of a split as a detection)",
                      fontsize=8)
    return fig
