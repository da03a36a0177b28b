"""Locations: local paths and URLs read once (geoeval.locations), and real reads
from a local S3-compatible server and a range-answering web server, both processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from geoeval.locations import Location, gdal_options, is_url, locate, redact
from tests.stores import SECRET, s3_server, web_server

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


@pytest.mark.parametrize("text, scheme, bucket, key, gdal, url", [
    ("s3://b/k/ref.tif", "s3", "b", "k/ref.tif", "/vsis3/b/k/ref.tif", "s3://b/k/ref.tif"),
    ("gs://b/ref.gpkg", "gs", "b", "ref.gpkg", "/vsigs/b/ref.gpkg", "gs://b/ref.gpkg"),
    ("gcs://b/ref.gpkg", "gs", "b", "ref.gpkg", "/vsigs/b/ref.gpkg", "gs://b/ref.gpkg"),
    ("az://c/d/x.parquet", "az", "c", "d/x.parquet", "/vsiaz/c/d/x.parquet", "az://c/d/x.parquet"),
    ("abfs://c@acct.dfs.core.windows.net/x.tif", "az", "c", "x.tif", "/vsiaz/c/x.tif",
     "az://c/x.tif"),
    ("https://h:8080/a/ref.tif", "https", "h:8080", "a/ref.tif",
     "/vsicurl/https://h:8080/a/ref.tif", "https://h:8080/a/ref.tif"),
    ("/vsis3/b/ref.tif", "s3", "b", "ref.tif", "/vsis3/b/ref.tif", "s3://b/ref.tif"),
    ("/vsicurl/http://h/ref.tif", "http", "h", "ref.tif", "/vsicurl/http://h/ref.tif",
     "http://h/ref.tif"),
    ("/vsimem/x.tif", "vsi", "", "", "/vsimem/x.tif", "/vsimem/x.tif"),
    ("scenes/ref.tif", "", "", "", "scenes/ref.tif", "scenes/ref.tif"),
    ("s3:local-file-with-colon.tif", "", "", "", "s3:local-file-with-colon.tif",
     "s3:local-file-with-colon.tif"),
])
def test_locate(text, scheme, bucket, key, gdal, url):
    loc = locate(text)
    assert (loc.scheme, loc.bucket, loc.key, loc.gdal, loc.url) == (scheme, bucket, key, gdal,
                                                                    url)
    assert is_url(text) == (scheme not in ("", "vsi"))
    assert locate(Path("a/b.tif")) == Location("a/b.tif", "")


def test_child_and_name():
    assert locate("s3://b/tiles/").child("t1.gpkg").url == "s3://b/tiles/t1.gpkg"
    assert locate("s3://b/tiles/t1.gpkg").name == "t1.gpkg"
    assert locate("https://h/d/x.tif?sig=1").child("y.tif").url == "https://h/d/x.tif/y.tif"


@pytest.mark.parametrize("text, shown", [
    ("https://u:pw@h/x.tif", "https://u@h/x.tif"),
    ("https://h/x.tif?X-Amz-Signature=abc&X-Amz-Credential=AKIA", "https://h/x.tif?…"),
    ("error reading /vsicurl/https://h/x.tif?sv=2024&sig=SECRET: HTTP 403",
     "error reading /vsicurl/https://h/x.tif?… HTTP 403"),
    ("s3://bucket/key.tif", "s3://bucket/key.tif"),
    ("plain words, no URL", "plain words, no URL"),
])
def test_redact(text, shown):
    assert redact(text) == shown
    assert "SECRET" not in redact(text) and "pw" not in redact(text).replace("https", "")


def test_gdal_options_translate_the_aws_endpoint():
    o = gdal_options({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000/"})
    assert o["AWS_S3_ENDPOINT"] == "127.0.0.1:9000"
    assert (o["AWS_HTTPS"], o["AWS_VIRTUAL_HOSTING"]) == ("NO", "FALSE")
    o = gdal_options({"AWS_ENDPOINT_URL": "https://minio.example.org",
                      "AWS_ENDPOINT_URL_S3": "https://s3.example.org:9443"})
    assert (o["AWS_S3_ENDPOINT"], o["AWS_HTTPS"]) == ("s3.example.org:9443", "YES")
    # GDAL's own spelling, when given, wins; no endpoint, nothing about it
    assert "AWS_S3_ENDPOINT" not in gdal_options({"AWS_ENDPOINT_URL": "http://a:1",
                                                  "AWS_S3_ENDPOINT": "b:2"})
    assert "AWS_S3_ENDPOINT" not in gdal_options({})
    assert gdal_options({}, anon=True)["AWS_NO_SIGN_REQUEST"] == "YES"
    assert gdal_options({"GDAL_HTTP_MAX_RETRY": "7"}).get("GDAL_HTTP_MAX_RETRY") is None
    assert gdal_options({})["GDAL_HTTP_MAX_RETRY"] == "3"  # 4 attempts
    assert gdal_options({"AWS_MAX_ATTEMPTS": "1"})["GDAL_HTTP_MAX_RETRY"] == "0"
    assert gdal_options({"AWS_MAX_ATTEMPTS": "x"})["GDAL_HTTP_MAX_RETRY"] == "3"


#: Reads the sample through each library from the URLs given, with nothing but the
#: standard environment: prints what it read, as JSON.
READER = """
import json, sys
import numpy as np, pyarrow.parquet as pq, pyogrio, rasterio
from geoeval.locations import arrow_filesystem, configure_gdal, locate
configure_gdal()
raster, layer, parquet = (locate(t) for t in sys.argv[1:4])
with rasterio.open(raster.gdal) as ds:
    a = ds.read(1)
info = pyogrio.read_info(layer.gdal)
fs, path = arrow_filesystem(parquet)
table = pq.read_table(path, filesystem=fs)
print(json.dumps({"shape": list(a.shape), "sum": int(a.astype(np.int64).sum()),
                  "features": int(info["features"]), "rows": table.num_rows}))
"""


def _local_truth(parquet: Path) -> dict:
    import numpy as np
    import pyarrow.parquet as pq
    import pyogrio
    import rasterio

    with rasterio.open(SAMPLE / "reference.tif") as ds:
        a = ds.read(1)
    return {"shape": list(a.shape), "sum": int(a.astype(np.int64).sum()),
            "features": int(pyogrio.read_info(SAMPLE / "reference.gpkg")["features"]),
            "rows": pq.read_metadata(parquet).num_rows}


def _parquet(tmp_path: Path) -> Path:
    import geopandas

    out = tmp_path / "ref.parquet"
    geopandas.read_file(SAMPLE / "reference.gpkg").to_parquet(out)
    return out


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GDAL_", "CPL_"))}
    return subprocess.run([sys.executable, "-c", READER, *args], capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(ROOT), **env}, cwd=ROOT, timeout=120)


@pytest.mark.slow  # the S3 server's start-up: about 10 s
def test_read_from_an_s3_compatible_store(tmp_path):
    """The AWS tools' variables alone (AWS_ENDPOINT_URL, keys, region) reach GDAL in
    rasterio's and pyogrio's copies and Arrow's S3 file system alike."""
    parquet = _parquet(tmp_path)
    with s3_server() as s3:
        s3.upload("geo", {"ref.tif": SAMPLE / "reference.tif",
                          "layers/ref.gpkg": SAMPLE / "reference.gpkg",
                          "ref.parquet": parquet})
        run = _run(["s3://geo/ref.tif", "/vsis3/geo/layers/ref.gpkg", "s3://geo/ref.parquet"],
                   s3.environ)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == _local_truth(parquet)
    assert SECRET not in run.stdout + run.stderr


def test_read_from_the_web_by_ranges(tmp_path):
    """A COG-like GeoTIFF and a GeoPackage over HTTP: GDAL asks for ranges, and reads
    less than the file to learn its size and CRS."""
    import pyogrio
    import rasterio

    from geoeval.locations import configure_gdal

    folder = tmp_path / "www"
    folder.mkdir()
    (folder / "ref.tif").write_bytes((SAMPLE / "reference.tif").read_bytes())
    (folder / "ref.gpkg").write_bytes((SAMPLE / "reference.gpkg").read_bytes())
    configure_gdal()
    with web_server(folder) as web:
        with rasterio.open(locate(f"{web.url}/ref.tif?sig=SECRET").gdal) as ds:
            shape, crs = ds.shape, ds.crs
        header = web.bytes_sent()
        assert 0 < header < (folder / "ref.tif").stat().st_size
        assert pyogrio.read_info(locate(f"{web.url}/ref.gpkg").gdal)["features"] == 3000
    with rasterio.open(SAMPLE / "reference.tif") as ds:
        assert (shape, crs) == (ds.shape, ds.crs)
