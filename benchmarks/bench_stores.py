"""Data where it lives: a region of a large layer on the web, a COG's window, and a
layer from an object store, each against the same work on local files, same run.

1. **A region of a GeoParquet layer on the web.** A synthetic city
   (``benchmarks/scale.py``) of N buildings, Hilbert-sorted, written as GeoParquet
   with a GeoParquet 1.1 ``bbox`` covering column in row groups of 10 000, served
   by ``tests/range_server.py`` (HTTP range requests, bytes counted). The region:
   a square of 1 % of the layer's area in its middle. Measured: the bytes the
   server sent for ``geoeval.score(URL_ref, URL_sub, region=…)`` against the
   compressed size of the row groups whose bounds meet the region plus each file's
   footer (target ≤ 1.2×), and the time against the same region cut to local files
   first and scored (target ≤ 1.5×).
2. **A COG label raster's window.** Both sides rasterised to a tiled, compressed
   Cloud-Optimised GeoTIFF; the region's window: bytes sent against the
   compressed size of the blocks the region's window covers (target ≤ 2×).
3. **From an object store** (moto's S3 server, a process): the whole layers scored
   from ``s3://`` URLs against the same files read locally (``--engine local``;
   ``--engine dask`` with ``--dask``).

Each measurement is a fresh process; best of ``--repeat``.

    python benchmarks/bench_stores.py --n 1000000 [--repeat 3] [--keep DIR] [--dask]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from scale import city  # noqa: E402

GROUP = 10_000

SCORE = r'''
import json, sys, time
t = time.perf_counter()
import geoeval
ref, sub, region, engine = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
kw = {"region": tuple(region)} if region else {}
res = geoeval.score(ref, sub, matchers=["iou"], engine=engine, n_jobs=2, **kw)
r = res.results["iou"]
print(json.dumps({"wall": time.perf_counter() - t, "f1": r.f1,
                  "n": [res.summary.reference.objects, res.summary.submission.objects]}))
'''


def write_layers(folder: Path, n: int) -> tuple[Path, Path, tuple[float, ...]]:
    """The city's two sides as Hilbert-sorted GeoParquet files with a bbox covering
    column, row groups of :data:`GROUP`."""
    import geopandas as gpd
    import shapely

    from geoeval.engine.hilbert import hilbert_keys

    ref, sub = city(n)
    bounds = tuple(shapely.total_bounds(np.concatenate([ref, sub])))
    paths = []
    for name, geoms in (("ref", ref), ("sub", sub)):
        keys = hilbert_keys(shapely.bounds(geoms), bounds)
        order = np.argsort(keys, kind="stable")
        frame = gpd.GeoDataFrame({"id": np.arange(len(geoms))[order]},
                                 geometry=geoms[order], crs="EPSG:32651")
        path = folder / f"{name}.parquet"
        frame.to_parquet(path, write_covering_bbox=True, row_group_size=GROUP)
        paths.append(path)
    return paths[0], paths[1], bounds


def middle(bounds: tuple[float, ...], share: float) -> tuple[float, float, float, float]:
    """A square of ``share`` of the area of ``bounds``, in its middle."""
    x0, y0, x1, y1 = bounds
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half = np.sqrt(share * (x1 - x0) * (y1 - y0)) / 2
    return (cx - half, cy - half, cx + half, cy + half)


def needed_bytes(path: Path, region: tuple[float, ...]) -> tuple[int, int, int]:
    """The compressed bytes of the row groups whose bbox statistics meet ``region``,
    the footer's bytes, and the file's size."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    meta = f.metadata
    total = 0
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        stat = {}
        for i in range(rg.num_columns):
            col = rg.column(i)
            stat[col.path_in_schema] = col.statistics
        xmin, ymin = stat["bbox.xmin"].min, stat["bbox.ymin"].min
        xmax, ymax = stat["bbox.xmax"].max, stat["bbox.ymax"].max
        if xmin <= region[2] and xmax >= region[0] and ymin <= region[3] and ymax >= region[1]:
            total += sum(rg.column(i).total_compressed_size for i in range(rg.num_columns))
    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(size - 8)
        footer = int.from_bytes(fh.read(4), "little") + 8
    return total, footer, size


def cut(path: Path, region: tuple[float, ...], out: Path) -> None:
    """``path`` cut to ``region`` by the representative-point rule, written locally."""
    import geopandas as gpd
    import shapely

    frame = gpd.read_parquet(path)
    pts = shapely.point_on_surface(frame.geometry.values)
    keep = shapely.intersects(shapely.box(*region), pts)
    frame[keep].drop(columns=["bbox"], errors="ignore").to_parquet(
        out, write_covering_bbox=True, row_group_size=GROUP)


def run(args: list[str], env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", SCORE, *args], capture_output=True,
                          text=True, env=env, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"failed: {args}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best(n: int, fn) -> tuple[float, dict]:
    outs = [fn() for _ in range(n)]
    return min(o["wall"] for o in outs), outs[0]


def web_region(folder: Path, ref: Path, sub: Path, bounds: tuple[float, ...],
               repeat: int) -> dict:
    from tests.stores import web_server

    region = middle(bounds, 0.01)
    need = [needed_bytes(p, region) for p in (ref, sub)]
    cuts = folder / "cut"
    cuts.mkdir(exist_ok=True)
    cut(ref, region, cuts / "ref.parquet")
    cut(sub, region, cuts / "sub.parquet")
    with web_server(folder) as web:
        urls = [f"{web.url}/{p.name}" for p in (ref, sub)]
        web.reset()
        first = run([*urls, json.dumps(region), "local"])
        sent = web.bytes_sent()
        t_web, _ = best(repeat, lambda: run([*urls, json.dumps(region), "local"]))
    t_cut, local = best(repeat, lambda: run([str(cuts / "ref.parquet"),
                                             str(cuts / "sub.parquet"), "null", "local"]))
    assert first["f1"] == local["f1"] and first["n"] == local["n"], (first, local)
    wanted = sum(a + b for a, b, _ in need)
    return {"region_share": 0.01, "bytes_sent": sent, "row_groups_plus_footers": wanted,
            "files": sum(s for *_, s in need), "bytes_ratio": sent / wanted,
            "t_web": t_web, "t_cut_local": t_cut, "time_ratio": t_web / t_cut,
            "objects": first["n"]}


def cog_window(folder: Path, ref: Path, bounds: tuple[float, ...]) -> dict:
    """A COG label raster of the reference; bytes sent for the region's window."""
    import geopandas as gpd
    import rasterio
    from rasterio import features
    from rasterio.transform import from_origin

    from tests.stores import web_server

    frame = gpd.read_parquet(ref)
    x0, y0, x1, y1 = bounds
    step = 2.0  # 1 M buildings: 15 000² pixels, 0.9 GB of labels
    width, height = int(np.ceil((x1 - x0) / step)), int(np.ceil((y1 - y0) / step))
    transform = from_origin(x0, y1, step, step)
    labels = features.rasterize(zip(frame.geometry.values, frame["id"].to_numpy() + 1,
                                    strict=True), out_shape=(height, width),
                                transform=transform, dtype="uint32")
    path = folder / "ref_cog.tif"
    with rasterio.open(path, "w", driver="COG", width=width, height=height, count=1,
                       dtype="uint32", crs="EPSG:32651", transform=transform,
                       compress="deflate", blocksize=512) as dst:
        dst.write(labels, 1)
    region = middle(bounds, 0.01)
    with rasterio.open(path) as src:
        win = src.window(*region).round_offsets().round_lengths()
        r0, c0 = int(win.row_off) // 512, int(win.col_off) // 512
        r1 = (int(win.row_off + win.height) - 1) // 512
        c1 = (int(win.col_off + win.width) - 1) // 512
        sizes = [src.block_size(1, r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)]
    with web_server(folder) as web:
        web.reset()
        out = run([f"{web.url}/ref_cog.tif", f"{web.url}/ref_cog.tif", json.dumps(region),
                   "local"])
        sent = web.bytes_sent()
    return {"bytes_sent": sent, "window_blocks": sum(sizes), "blocks": len(sizes),
            "bytes_ratio": sent / sum(sizes), "file": path.stat().st_size, "f1": out["f1"]}


def s3_whole(folder: Path, ref: Path, sub: Path, repeat: int, engine: str) -> dict:
    from tests.stores import s3_server

    with s3_server() as s3:
        s3.upload("bench", {"ref.parquet": ref, "sub.parquet": sub})
        env = dict(os.environ, **s3.environ)
        t_s3, a = best(repeat, lambda: run(["s3://bench/ref.parquet", "s3://bench/sub.parquet",
                                            "null", engine], env))
    t_local, b = best(repeat, lambda: run([str(ref), str(sub), "null", engine]))
    assert a["f1"] == b["f1"], (a, b)
    return {"engine": engine, "t_s3": t_s3, "t_local": t_local, "ratio": t_s3 / t_local}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--dask", action="store_true", help="also the Dask engine from S3")
    a = ap.parse_args()
    folder = a.keep or Path(tempfile.mkdtemp(prefix="bench-stores-"))
    folder.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    ref, sub, bounds = write_layers(folder, a.n)
    print(f"# {a.n:,} buildings written in {time.perf_counter() - t:.0f} s", flush=True)
    print(json.dumps({"web_region": web_region(folder, ref, sub, bounds, a.repeat)}), flush=True)
    print(json.dumps({"cog_window": cog_window(folder, ref, bounds)}), flush=True)
    print(json.dumps({"s3_whole": s3_whole(folder, ref, sub, a.repeat, "local")}), flush=True)
    if a.dask:
        print(json.dumps({"s3_whole": s3_whole(folder, ref, sub, a.repeat, "dask")}),
              flush=True)


if __name__ == "__main__":
    main()
