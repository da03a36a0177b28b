"""Precision × recall figures of a PASCAL VOC evaluation (PNG), one per class
(the curve, and the interpolated precision: its maximum at any higher recall).

matplotlib is imported here only (Agg backend, no display needed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from geoeval.challenges.voc import VocResult
from geoeval.outputs import atomic_path, ensure_folder


def plot_voc(result: VocResult, folder: str | Path) -> list[Path]:
    """Write one precision × recall plot per class (``<folder>/pr_<class>.png``).

    Files are written atomically; classes without ground truth are skipped.
    Returns the paths written.
    """
    import matplotlib  # deferred: only figures need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = ensure_folder(folder)
    written = []
    for name, cr in result.classes.items():
        if cr.ap is None:
            continue
        fig, ax = plt.subplots(figsize=(5, 4))
        ax.plot(cr.recall, cr.precision, drawstyle="steps-post", label="precision")
        if cr.precision.size:
            env = np.maximum.accumulate(cr.precision[::-1])[::-1]
            ax.plot(cr.recall, env, "--", label="interpolated (max to the right)")
        ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1.02), ylim=(0, 1.02),
               title=f"{name}: AP {cr.ap:.4f} (11-point {cr.ap11:.4f})")
        ax.legend(loc="lower left")
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
        target = out / f"pr_{safe}.png"
        try:
            with atomic_path(target) as tmp:
                fig.savefig(tmp, dpi=100)
        finally:
            plt.close(fig)
        written.append(target)
    return written
