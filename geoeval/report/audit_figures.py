"""Curves of metric value against alteration, like Hemery et al. (2010), Figs. 6 and 9–11 (PNG).

* ``diagonal_<alteration>.png``: one panel per metric, the value along the
  diagonal ``alt_X_X`` (rotation: ``D``) for the small and the large square
  (``gt1``, ``gt2``) as in Figs. 8–11;
* ``surface_<alteration>.png``: one panel per metric, the value over the whole
  ``(X, Y)`` grid of ``gt1`` as an image, the 2-D view of Fig. 6.

matplotlib is imported here only (Agg backend, no display needed).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from geoeval.measures.localization.registry import METRICS
from geoeval.outputs import atomic_path, ensure_folder

#: Unit of each alteration's parameters (Hemery et al. 2010, §3.2).
_UNITS = {"translation": "px", "scale": "px", "rotation": "°", "perspective": "px"}


def _save(fig, path: Path) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=80, format="png")


def write_figures(result, directory: str | os.PathLike) -> list[Path]:
    """Write the curve figures of an :class:`~geoeval.audit.AuditResult`; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = ensure_folder(directory)
    shapes = [s for s in ("gt1", "gt2") if s in result.shapes] or [result.shapes[0]]
    n = len(result.metrics)
    cols = min(6, n)
    rows = math.ceil(n / cols)
    paths = []
    for alt in result.alterations:
        fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.0 * rows), squeeze=False)
        for ax, name in zip(axes.flat, result.metrics, strict=False):
            for shape, style in zip(shapes, ("-", "--"), strict=False):
                c = result.curves[(name, alt, shape)]
                y = c.raw if c.raw.ndim == 1 else np.diagonal(c.raw)
                ax.plot(c.axis, y, style, lw=1, label=shape)
            ax.set_title(METRICS[name].label, fontsize=8)
            ax.tick_params(labelsize=6)
            ax.set_xlabel(f"{alt} step ({_UNITS.get(alt, 'steps')})", fontsize=6)
            ax.set_ylabel("metric value", fontsize=6)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=6)
        fig.suptitle(f"{alt}: value along the diagonal (solid {shapes[0]}"
                     + (f", dashed {shapes[1]})" if len(shapes) > 1 else ")"), fontsize=9)
        fig.tight_layout()
        p = out_dir / f"diagonal_{alt}.png"
        _save(fig, p)
        plt.close(fig)
        paths.append(p)
        if alt == "rotation":
            continue
        fig, axes = plt.subplots(rows, cols, figsize=(2.2 * cols, 2.2 * rows), squeeze=False)
        for ax, name in zip(axes.flat, result.metrics, strict=False):
            c = result.curves[(name, alt, shapes[0])]
            a = c.axis
            v = np.where(np.isfinite(c.raw), c.raw, np.nan)
            image = ax.imshow(v, origin="lower", extent=(a[0], a[-1], a[0], a[-1]),
                              cmap="viridis")
            bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
            bar.ax.tick_params(labelsize=5)
            bar.set_label("metric value", fontsize=6)
            ax.set_title(METRICS[name].label, fontsize=8)
            ax.tick_params(labelsize=6)
            unit = _UNITS.get(alt, "steps")
            ax.set_xlabel(f"Y ({unit})", fontsize=6)
            ax.set_ylabel(f"X ({unit})", fontsize=6)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.suptitle(f"{alt} of {shapes[0]}: value over (X vertical, Y horizontal)", fontsize=9)
        fig.tight_layout()
        p = out_dir / f"surface_{alt}.png"
        _save(fig, p)
        plt.close(fig)
        paths.append(p)
    return paths
