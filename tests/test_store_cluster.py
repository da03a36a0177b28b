"""A cluster that shares no disk with the client (issue 41, item 4): the inputs only in
an object store, the workers in their own folders and mount namespaces (the client's
folder does not exist for them), reading their partitions and writing the objects
dataset through the store; the report byte for byte the local engine's on the same
URLs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.separate_cluster import can_separate, separate_cluster
from tests.stores import SECRET, s3_server

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not can_separate(), reason="needs unshare --mount (root)")]

ROOT = Path(__file__).resolve().parents[1]


def _layers(folder: Path) -> tuple[Path, Path]:
    """Two GeoParquet layers of a few thousand buildings, one CRS, several row groups."""
    import geopandas as gpd
    import shapely

    rng = np.random.default_rng(41)
    n = 3000
    gx, gy = np.meshgrid(np.arange(60), np.arange(50))
    cx, cy = gx.ravel()[:n] * 25.0, gy.ravel()[:n] * 25.0
    w, h = rng.uniform(6, 14, n), rng.uniform(6, 14, n)
    ref = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    keep = rng.random(n) > 0.07
    dx, dy = rng.normal(0, 1.0, n), rng.normal(0, 1.0, n)
    sub = shapely.box(cx - w / 2 + dx, cy - h / 2 + dy, cx + w / 2 + dx, cy + h / 2 + dy)[keep]
    paths = []
    for name, geoms in (("ref", ref), ("sub", sub)):
        p = folder / f"{name}.parquet"
        gpd.GeoDataFrame({"id": np.arange(len(geoms))}, geometry=geoms,
                         crs="EPSG:32631").to_parquet(p, row_group_size=500)
        paths.append(p)
    return paths[0], paths[1]


def _geoeval(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "geoeval.cli", "score", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def test_dask_workers_read_and_write_through_the_store_only(tmp_path):
    private = tmp_path / "client"  # the client's folder: its inputs, temporaries, outputs
    private.mkdir()
    (private / "tmp").mkdir()
    ref, sub = _layers(private)
    with s3_server() as s3:
        s3.upload("geodata", {"in/ref.parquet": ref, "in/sub.parquet": sub})
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(s3.environ, TMPDIR=str(private / "tmp"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                            env.get("PYTHONPATH")])))
        urls = ["s3://geodata/in/ref.parquet", "s3://geodata/in/sub.parquet"]
        with separate_cluster(private, s3.environ) as cluster:
            dask = _geoeval([*urls, "-m", "bgm", "-m", "iou", "--engine", "dask",
                             "--scheduler", cluster.address, "--json", "dask.json",
                             "--objects", "s3://geodata/out/objects/"], env, private)
            assert dask.returncode == 0, dask.stderr[-3000:]
            assert "in the client" not in dask.stderr, dask.stderr  # by partitions
        local = _geoeval([*urls, "-m", "bgm", "-m", "iou", "--json", "local.json",
                          "--objects", "s3://geodata/out/objects-local/"], env, private)
        assert local.returncode == 0, local.stderr[-3000:]
        client = s3.client()
        keys = sorted(o["Key"] for o in client.list_objects_v2(
            Bucket="geodata", Prefix="out/objects/")["Contents"])
        local_keys = sorted(o["Key"] for o in client.list_objects_v2(
            Bucket="geodata", Prefix="out/objects-local/")["Contents"])
    a = (private / "dask.json").read_bytes()
    b = (private / "local.json").read_bytes()
    assert a.replace(b"out/objects/", b"X") == b.replace(b"out/objects-local/", b"X")
    assert json.loads(a)["results"]["bgm"]["f1"] > 0.8
    assert any(k.endswith(".parquet") for k in keys) and local_keys
    for text in (dask.stdout, dask.stderr, local.stdout, local.stderr, a.decode()):
        assert SECRET not in text
