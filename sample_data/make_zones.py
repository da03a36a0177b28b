"""Write sample_data/zones.gpkg: three north-south strips over the sample scene
(west, centre, east), for `geoeval score --zones` (docs/strata.md).

    python sample_data/make_zones.py
"""

from pathlib import Path

import geopandas as gpd
from shapely import box

HERE = Path(__file__).resolve().parent
LEFT, BOTTOM, RIGHT, TOP = 569800.0, 1449599.2, 570800.8, 1450600.0  # reference.tif bounds


def main() -> None:
    step = (RIGHT - LEFT) / 3
    strips = [box(LEFT + k * step, BOTTOM, LEFT + (k + 1) * step, TOP) for k in range(3)]
    frame = gpd.GeoDataFrame({"NAME": ["west", "centre", "east"]}, geometry=strips,
                             crs="EPSG:32651")
    frame.to_file(HERE / "zones.gpkg", layer="zones", driver="GPKG")


if __name__ == "__main__":
    main()
