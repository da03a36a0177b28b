"""Draw the figure of docs/geometry-measures.md from the sample data.

    python docs/make_geometry_figure.py

docs/img/geometry_measures.png: PoLiS and Boundary IoU of every building matched
by the IoU matcher (IoU ≥ 0.5) in two sample submissions, the near-perfect one and
the shifted one.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import geoeval  # noqa: E402
from geoeval.scoring.scene import read_reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_data"
OUT = ROOT / "docs" / "img"
SUBS = {"s1_near_perfect.tif": "near perfect (s1)", "s8_shifted.tif": "shifted (s8)"}


def main() -> None:
    ref = read_reference(DATA / "reference.tif")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    for (name, label), colour in zip(SUBS.items(), ("tab:blue", "tab:orange"), strict=True):
        res = geoeval.score(ref, DATA / "submissions" / name, matchers=["iou"],
                            geometry_measures=["polis", "boundary_iou"])
        g = res.geometry
        polis = g.polis["iou"].values
        biou = g.boundary_iou["iou"].values
        ax1.hist(polis, bins=np.linspace(0, 2.5, 51), alpha=0.6, color=colour,
                 label=f"{label}: median {np.nanmedian(polis):.2f} m, n = {polis.size}")
        ax2.hist(biou, bins=np.linspace(0, 1, 51), alpha=0.6, color=colour,
                 label=f"{label}: median {np.nanmedian(biou):.2f}")
    ax1.set(xlabel="PoLiS distance (m; 0 is best)", ylabel="matched buildings",
            title="PoLiS (Avbelj et al. 2015)")
    ax2.set(xlabel="Boundary IoU (1 is best)", ylabel="matched buildings",
            title="Boundary IoU (Cheng et al. 2021)")
    for ax in (ax1, ax2):
        ax.legend(fontsize=8, loc="upper center")
    fig.suptitle("Per matched building (IoU matcher, IoU ≥ 0.5), 0.6 m pixels", fontsize=10)
    OUT.mkdir(exist_ok=True)
    fig.savefig(OUT / "geometry_measures.png", dpi=110)


if __name__ == "__main__":
    main()
