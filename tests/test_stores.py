"""geoeval.io.stores: files in an object store (a local S3-compatible server) and on
the web (a range-answering server), each a process: opened, read, listed, globbed,
and every failure one line naming the URL without its secrets."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from geoeval.errors import InputError
from geoeval.io import stores
from geoeval.io.locations import locate
from tests.stores import SECRET, s3_server, web_server


@pytest.fixture(scope="module")
def s3():
    with s3_server() as server:
        c = server.client()
        c.create_bucket(Bucket="bkt")
        for key, body in {"d/a.json": b'{"a": 1}', "d/b.gpkg": b"x" * 100,
                          "d/sub/c.gpkg": b"yy", "d/_meta": b"", "d/.hidden": b"",
                          "t/2024/x.gpkg": b"1", "t/2025/y.gpkg": b"2",
                          "t/2025/z.tif": b"3"}.items():
            c.put_object(Bucket="bkt", Key=key, Body=body)
        with server.environment():
            yield server


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web")
    (folder / "data.bin").write_bytes(bytes(range(256)) * 40)
    with web_server(folder) as server:
        yield server


def test_store_kind_read_open_list(s3):
    assert stores.kind(locate("s3://bkt/d/a.json")) == "file"
    assert stores.kind(locate("s3://bkt/d")) == "folder"
    assert stores.kind(locate("s3://bkt/d/none.json")) == "missing"
    assert stores.read_bytes(locate("s3://bkt/d/a.json")) == b'{"a": 1}'
    with stores.open_input(locate("s3://bkt/d/b.gpkg")) as f:
        f.seek(90)
        assert f.read(20) == b"x" * 10
    assert stores.size(locate("s3://bkt/d/b.gpkg")) == 100
    names = [x.url for x in stores.list_files(locate("s3://bkt/d/"))]
    assert names == ["s3://bkt/d/a.json", "s3://bkt/d/b.gpkg"]  # hidden and sub-folder out
    deep = [x.url for x in stores.list_files(locate("s3://bkt/d"), recursive=True)]
    assert deep == ["s3://bkt/d/a.json", "s3://bkt/d/b.gpkg", "s3://bkt/d/sub/c.gpkg"]
    every = [x.url for x in stores.list_files(locate("s3://bkt/d"), hidden=True)]
    assert every == ["s3://bkt/d/.hidden", "s3://bkt/d/_meta", "s3://bkt/d/a.json",
                     "s3://bkt/d/b.gpkg"]  # as a local folder's listing gives them


def test_glob(s3):
    assert [x.url for x in stores.glob("s3://bkt/d/*.gpkg")] == ["s3://bkt/d/b.gpkg"]
    assert [x.url for x in stores.glob("s3://bkt/t/20*/*.gpkg")] == [
        "s3://bkt/t/2024/x.gpkg", "s3://bkt/t/2025/y.gpkg"]
    assert stores.glob("s3://bkt/t/*.gpkg") == []  # * does not cross a /
    assert stores.is_pattern("s3://bkt/t/*.gpkg") and not stores.is_pattern("s3://bkt/t/")


@pytest.mark.parametrize("url, words", [
    ("s3://bkt/d/none.json", "no such object"),
    ("s3://no-bucket/d/a.json", "no such object"),
])
def test_store_failures(s3, url, words):
    with pytest.raises(InputError) as err:
        stores.read_bytes(locate(url))
    assert str(err.value) == f"{url}: {words} (check the bucket and key)"


def test_store_denied_and_unreachable(s3, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(InputError, match=r"^s3://bkt/d/a.json: access denied: .*--anon"):
        stores.read_bytes(locate("s3://bkt/d/a.json"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # no retries: the test is about the line
    with pytest.raises(InputError, match=r"^s3://bkt/d/a.json: cannot reach the server"):
        stores.kind(locate("s3://bkt/d/a.json"))


def test_web_ranges_and_failures(web):
    url = web.url + "/data.bin?X-Amz-Signature=" + SECRET
    web.reset()
    with stores.open_input(locate(url)) as f:
        assert f.size() == 10240
        f.seek(5000)
        assert f.read(16) == (bytes(range(256)) * 40)[5000:5016]
    assert web.bytes_sent() == 16  # one range, nothing more
    assert stores.read_bytes(locate(url)) == bytes(range(256)) * 40
    with pytest.raises(InputError) as err:
        stores.read_bytes(locate(web.url + "/none.bin?sig=" + SECRET))
    assert str(err.value) == f"{web.url}/none.bin?…: no such file on the server (404)"
    with pytest.raises(InputError, match="web has no folders"):
        stores.list_files(locate(web.url + "/"))


def test_web_without_ranges(tmp_path):
    """A server that ignores Range (Python's own http.server) is refused, not read
    whole behind the reader's back."""
    import subprocess
    import sys

    from tests.stores import _free_port, _stop, _wait_until

    (tmp_path / "f.bin").write_bytes(b"z" * 1000)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "-b",
                             "127.0.0.1", "-d", str(tmp_path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/f.bin"
        _wait_until(lambda: urllib.request.urlopen(url, timeout=2), proc, "http.server")
        with stores.open_input(locate(url)) as f, pytest.raises(
                InputError, match="does not answer range requests"):
            f.read(10)
    finally:
        _stop(proc)


def test_local(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    assert stores.kind(locate(str(tmp_path))) == "folder"
    assert stores.read_bytes(locate(str(tmp_path / "x.json"))) == b"{}"
    assert [Path(x.text).name for x in stores.list_files(locate(str(tmp_path)))] == ["x.json"]
    with pytest.raises(InputError, match="no such file or folder"):
        stores.read_bytes(locate(str(tmp_path / "none.json")))
