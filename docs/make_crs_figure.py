"""docs/img/crs_areas.png: the sample's buildings placed at every latitude, their
total area as Web Mercator reports it and as geoeval measures it (local
Lambert azimuthal equal-area), against the true ellipsoidal area.

    python docs/make_crs_figure.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import shapely
from pyproj import Geod, Transformer

from geoeval.io import read
from geoeval.io.evaluation_crs import local_equal_area

ROOT = Path(__file__).resolve().parents[1]


def project(geoms: np.ndarray, src: object, dst: object) -> np.ndarray:
    t = Transformer.from_crs(src, dst, always_xy=True)
    return shapely.transform(geoms, lambda xy: np.column_stack(t.transform(*xy.T)))


def main() -> None:
    from matplotlib.figure import Figure

    ref = read(ROOT / "sample_data" / "reference.tif")
    geoms = ref.polygons
    centre = shapely.centroid(shapely.union_all(shapely.envelope(geoms)))
    local = shapely.transform(geoms, lambda xy: xy - [centre.x, centre.y])  # metres
    geod = Geod(ellps="WGS84")
    lats = np.arange(0.0, 76.0, 5.0)
    merc, ours = [], []
    for lat in lats:
        # the scene as it would be on the ground at this latitude (shapes in metres kept)
        laea = local_equal_area("EPSG:4326", (121.0, lat, 121.0, lat))
        ll = project(local, laea, "EPSG:4326")
        true = sum(abs(geod.geometry_area_perimeter(g)[0]) for g in ll)
        m = project(ll, "EPSG:4326", "EPSG:3857")
        merc.append(float(shapely.area(m).sum()) / true)
        back = local_equal_area("EPSG:4326", tuple(shapely.total_bounds(ll)))
        e = project(ll, "EPSG:4326", back)
        ours.append(float(shapely.area(e).sum()) / true)
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.subplots()
    ax.plot(lats, merc, "o-", color="#d62728", label="computed in Web Mercator (EPSG:3857)")
    ax.plot(lats, ours, "s-", color="#1f77b4",
            label="geoeval: local equal-area projection (default)")
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_yscale("log")
    ax.set_yticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    ax.minorticks_off()
    ax.set_xlabel("latitude of the scene (degrees)")
    ax.set_ylabel("total building area / true area")
    ax.set_title(f"The sample's {len(geoms):,} buildings placed at each latitude", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    out = ROOT / "docs" / "img" / "crs_areas.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}; max |geoeval - 1| = {max(abs(v - 1) for v in ours):.2e}, "
          f"Web Mercator at 60 N: {merc[list(lats).index(60.0)]:.2f}x")


if __name__ == "__main__":
    main()
