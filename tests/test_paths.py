"""geoeval.io.paths: the names the readers give GDAL, pyogrio and pyarrow for a user's
files, and errors.printable for names that are not UTF-8."""

from __future__ import annotations

import os

import pytest

from geoeval.errors import InputError, printable, sendable
from geoeval.io.paths import _changed_on_the_way, local_path

NAMES = ["/d/b;c.gpkg", "/d/b!c.fgb", "/d/b\tc.gpkg", "/d/b\nc.gpkg", "/d/b\rc.gpkg",
         "/d/b.zip", "/d/B.ZIP", "/d/b?c.gpkg", "/d/b#c.gpkg", "/d/GPKG:x.gpkg",
         "/d/GTIFF_RAW:r.tif", "/d/x y.gpkg", "/d/%3B.gpkg", "/d/b@c:d.gpkg", "/d/é.gpkg",
         "/d/a;b/c.shp"]


@pytest.mark.parametrize("name", NAMES)
def test_the_rule_is_pyogrios(name):
    """Without importing pyogrio (which imports geopandas), every name pyogrio's own
    parsing would change is caught (a few more are linked too: harmless)."""
    from pyogrio.util import vsi_path

    if vsi_path(name) != name:
        assert _changed_on_the_way(name)
    if name in ("/d/x y.gpkg", "/d/GPKG:x.gpkg", "/d/é.gpkg", "/d/b?c.gpkg"):
        assert not _changed_on_the_way(name)


def test_plain_names_are_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "GTIFF_RAW:ref.tif").write_bytes(b"x")
    assert local_path("GTIFF_RAW:ref.tif") == str(tmp_path / "GTIFF_RAW:ref.tif")


def test_gdal_virtual_files_are_gdals_names():
    """``/vsi…`` names that are no local file go to GDAL as they are (an absolute path
    would fold ``https://`` into ``https:/``); a raster in GDAL's memory is read."""
    import numpy as np
    from rasterio.io import MemoryFile
    from rasterio.transform import from_origin

    from geoeval.io import read

    url = "/vsicurl/https://example.org/a;b.tif"
    assert local_path(url) == url
    labels = np.zeros((8, 8), np.int32)
    labels[2:5, 2:5] = 3
    with MemoryFile() as memory:
        with memory.open(driver="GTiff", width=8, height=8, count=1, dtype="int32",
                         crs="EPSG:32631", transform=from_origin(500000, 8, 1, 1)) as dst:
            dst.write(labels, 1)
        assert local_path(memory.name) == memory.name
        assert read(memory.name, input_type="raster").ids.tolist() == [3]


def test_other_names_are_links_with_their_sidecars(tmp_path):
    for ext in (".shp", ".shx", ".dbf", ".prj"):
        (tmp_path / f"my ref;x{ext}").write_bytes(ext.encode())
    (tmp_path / "my ref;y.shp").write_bytes(b"other")
    link = local_path(tmp_path / "my ref;x.shp")
    assert os.path.basename(link) == "layer.shp" and not _changed_on_the_way(link)
    folder = os.path.dirname(link)
    assert sorted(os.listdir(folder)) == ["layer.dbf", "layer.prj", "layer.shp", "layer.shx"]
    assert open(os.path.join(folder, "layer.prj"), "rb").read() == b".prj"
    assert local_path(tmp_path / "my ref;x.shp") == link  # made once
    odd = tmp_path / os.fsdecode(b"r\xe9f.tif")
    odd.write_bytes(b"tif")
    assert open(local_path(odd), "rb").read() == b"tif"


def test_printable():
    assert printable(os.fsdecode(b"r\xe9f.tif")) == "r\\xe9f.tif"
    assert printable("réf ✓") == "réf ✓"
    assert printable("\ud800x") == "\\ud800x"  # a surrogate of another origin
    assert str(InputError("no such file", os.fsdecode(b"a\xff"))) == "a\\xff: no such file"


def test_sendable_drops_the_library_error():
    """A GeoevalError raised in place of a library's error reaches another process
    without it (GDAL's errors cannot be unpickled: Dask sent a plain Exception)."""
    import pickle

    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("no")

    @sendable
    def task():
        try:
            raise Unpicklable()
        except Unpicklable:
            raise InputError("cannot read", "t.gpkg") from None

    with pytest.raises(InputError) as info:
        task()
    assert info.value.__context__ is None
    back = pickle.loads(pickle.dumps(info.value))
    assert isinstance(back, InputError) and str(back) == "t.gpkg: cannot read"
