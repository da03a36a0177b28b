"""``geoeval boxes …`` reads its inputs from object storage and the web as from local
files (issue 41, items 1 and 7): every protocol's report is byte-identical apart
from the inputs' names, on a local S3-compatible server (moto, a process) and a
range-answering web server; every failure is one line, exit 2, the URL named without
its secrets, nothing written."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from geoeval.errors import InputError
from tests.corpus.conftest import run_cli
from tests.stores import SECRET, s3_server, web_server

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "boxes"
BUCKET = "boxes-bkt"
S3 = f"s3://{BUCKET}/boxes"


_uploaded: set[str] = set()


def _upload(server, *folders: str) -> None:
    """The sample folders ``folders`` under ``s3://boxes-bkt/boxes/``, each once (the
    server answers ~150 requests a second: only what this process's tests read)."""
    todo = [f for f in folders if f not in _uploaded]
    server.upload(BUCKET, {f"boxes/{p.relative_to(SAMPLE).as_posix()}": p
                           for f in todo for p in (SAMPLE / f).rglob("*") if p.is_file()})
    _uploaded.update(todo)


@pytest.fixture(scope="module")
def s3():
    """The bundled box samples under ``s3://boxes-bkt/boxes/``, and the server's
    environment in ``os.environ`` for the module."""
    with s3_server() as server:
        _uploaded.clear()
        _upload(server, "coco", "coco_segm", "crowdai", "dota", "neovision2", "voc")
        with server.environment():
            yield server


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    folder = tmp_path_factory.mktemp("www")
    shutil.copytree(SAMPLE, folder / "boxes")
    with web_server(folder) as server:
        yield server


#: One run of each protocol on the samples: its arguments below sample_data/boxes/
#: (and the options that make it), as docs/boxes.md runs them.
RUNS = {
    "coco": ["coco", "coco/instances.json", "coco/results.json", "--per-class"],
    "coco-segm": ["coco", "coco_segm/instances.json", "coco_segm/results.json",
                  "--iou-type", "segm"],
    "coco-boundary": ["coco", "coco_segm/instances.json", "coco_segm/results.json",
                      "--iou-type", "boundary"],
    "crowdai": ["crowdai", "crowdai/annotation.json", "crowdai/results.json"],
    "dota-task1": ["dota", "dota/labelTxt", "dota/det"],
    "dota-task2": ["dota", "dota/labelTxt", "dota/det", "--task", "2", "--metric", "area"],
    "voc-text": ["voc", "voc/gt", "voc/det"],
    "voc-xml": ["voc", "voc_xml/gt", "voc/det"],
    "voc-yolo": ["voc", "yolo/gt", "yolo/det", "--ref-format", "yolo", "--sub-format", "yolo",
                 "--image-size", "640,480", "--class-names", "yolo/classes.txt"],
    "robin": ["robin", "robin/gt", "robin/run1", "robin/run2", "robin/run3"],
    "robin-categories": ["robin-categories", "robin/gt", "robin/run1"],
    "neovision2": ["neovision2", "neovision2/truth", "neovision2/results"],
}


def _args(run: list[str], base: str) -> list[str]:
    """``run`` with its inputs (the arguments naming a sample) below ``base``."""
    return [f"{base}/{a}" if (SAMPLE / a).exists() and "/" in a else a for a in run]


def _report(run: list[str], base: str, tmp_path: Path) -> str:
    out = tmp_path / f"{abs(hash(base))}.json"
    r = run_cli("boxes", *_args(run, base), "--json", out, "--quiet")
    assert r.code == 0, r
    assert SECRET not in r.stdout + r.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", [n if n in ("coco", "dota-task1") else
                                  pytest.param(n, marks=pytest.mark.slow) for n in RUNS])
# COCO (a JSON file) and DOTA (folders) in the README's run; every protocol in CI's
def test_report_from_s3_is_the_local_report(s3, name, tmp_path):
    _upload(s3, *{a.split("/")[0] for a in RUNS[name] if "/" in a and (SAMPLE / a).exists()})
    local = _report(RUNS[name], str(SAMPLE), tmp_path)
    stored = _report(RUNS[name], S3, tmp_path)
    assert stored.replace(S3, str(SAMPLE)) == local
    if name in ("robin", "neovision2"):  # reports that name their inputs
        assert S3 in stored


@pytest.mark.parametrize("name", ["coco", "coco-segm", "crowdai"])
def test_report_from_the_web_is_the_local_report(web, name, tmp_path):
    """Files on the web (a signed URL's query string kept out of the report)."""
    run = RUNS[name]
    local = _report(run, str(SAMPLE), tmp_path)
    base = f"{web.url}/boxes"
    signed = [f"{a}?X-Amz-Signature={SECRET}" if a.startswith(base) else a
              for a in _args(run, base)]
    out = tmp_path / "web.json"
    r = run_cli("boxes", *signed, "--json", out, "--quiet")
    assert r.code == 0, r
    text = out.read_text(encoding="utf-8")
    assert SECRET not in text + r.stdout + r.stderr
    assert text.replace("?…", "").replace(base, str(SAMPLE)) == local


def test_api_reads_urls_in_memory(s3, monkeypatch):
    """The Python API takes URLs too; a COCO file is read into memory, never written to
    a temporary file first (the temporary folder is made unusable)."""
    import geoeval
    from geoeval.io.boxes import read_coco_pair

    monkeypatch.setattr(tempfile, "tempdir", "/nonexistent/geoeval-no-temp")
    gt, dt = read_coco_pair(f"{S3}/coco/instances.json", f"{S3}/coco/results.json")
    lgt, ldt = read_coco_pair(SAMPLE / "coco" / "instances.json",
                              SAMPLE / "coco" / "results.json")
    assert (gt.boxes == lgt.boxes).all() and (dt.scores == ldt.scores).all()
    assert dt.path == f"{S3}/coco/results.json"
    remote = geoeval.evaluate_dota(f"{S3}/dota/labelTxt", f"{S3}/dota/det")
    local = geoeval.evaluate_dota(SAMPLE / "dota" / "labelTxt", SAMPLE / "dota" / "det")
    assert remote.map == local.map


def _fails(args: list[str], tmp_path: Path) -> str:
    """The one line of a failed run (exit 2, no traceback, nothing written)."""
    out = tmp_path / "never.json"
    r = run_cli("boxes", *args, "--json", out)
    assert r.code == 2, r
    assert not out.exists()
    assert SECRET not in r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r
    return lines[0]


def test_missing_object_and_prefix(s3, tmp_path):
    line = _fails(["coco", f"{S3}/coco/none.json", f"{S3}/coco/results.json"], tmp_path)
    assert line == (f"geoeval: error: {S3}/coco/none.json: no such object (check the bucket "
                    "and key)")
    line = _fails(["dota", f"{S3}/dota/labelTxt", f"{S3}/dota/nothing-here"], tmp_path)
    assert line == (f"geoeval: error: {S3}/dota/nothing-here: no such object or prefix "
                    "(check the bucket and key)")
    line = _fails(["voc", "s3://no-such-bucket/gt", f"{S3}/voc/det"], tmp_path)
    assert line.startswith("geoeval: error: s3://no-such-bucket/gt: no such object")
    line = _fails(["coco", f"{S3}/coco", f"{S3}/coco/results.json"], tmp_path)
    assert line == (f"geoeval: error: {S3}/coco: a prefix (folder), where a JSON file is "
                    "expected")


def test_access_denied(s3, tmp_path, monkeypatch):
    """Without credentials the server answers access denied: one line, with what to do."""
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    for run in (["coco", f"{S3}/coco/instances.json", f"{S3}/coco/results.json"],
                ["dota", f"{S3}/dota/labelTxt", f"{S3}/dota/det"]):
        line = _fails(run, tmp_path)  # the object refused, or the prefix's first one
        assert line.startswith(f"geoeval: error: {run[1]}"), line
        assert ": access denied: check the credentials" in line, line


def test_anonymous_and_unreachable(s3, tmp_path, monkeypatch):
    """``AWS_NO_SIGN_REQUEST=YES`` reads without signing (this bucket is private: refused);
    an endpoint that does not answer is named, with what to check."""
    run = ["dota", f"{S3}/dota/labelTxt", f"{S3}/dota/det"]
    monkeypatch.setenv("AWS_NO_SIGN_REQUEST", "YES")
    assert ": access denied: check the credentials" in _fails(run, tmp_path)
    monkeypatch.delenv("AWS_NO_SIGN_REQUEST")
    out = tmp_path / "never.json"  # --anon: the same, from the command line
    r = run_cli("boxes", "--anon", *run, "--json", out)
    assert r.code == 2 and not out.exists(), r
    assert ": access denied: check the credentials" in r.stderr
    assert run_cli("boxes", *run, "--json", out).code == 0  # and not for the next run
    out.unlink()
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # no retries: the test is about the line
    line = _fails(run, tmp_path)
    assert line.startswith(f"geoeval: error: {S3}/dota/labelTxt: cannot reach the server"), line
    assert "AWS_ENDPOINT_URL" in line


def test_web_folders_are_refused(web, tmp_path):
    """The web has no listing: a folder given as a web URL is refused, a missing file named
    without the signature of its URL."""
    base = f"{web.url}/boxes"
    refusal = ("the web has no folders to list: name each file's URL, or put the files in "
               "object storage (s3://, gs://, az://)")
    line = _fails(["voc", f"{base}/voc/gt/", f"{base}/voc/det/"], tmp_path)
    assert line == f"geoeval: error: {base}/voc/gt/: {refusal}"
    line = _fails(["dota", f"{SAMPLE}/dota/labelTxt", f"{base}/dota/det"], tmp_path)
    assert line == f"geoeval: error: {base}/dota/det: {refusal}"
    listing = web.folder / "boxes" / "dota-listing"  # what a server answers for a folder
    listing.write_text("<!DOCTYPE html>\n<html><body><a href='P0001.txt'>P0001.txt</a>"
                       "</body></html>\n")
    line = _fails(["dota", f"{base}/dota-listing", f"{SAMPLE}/dota/det"], tmp_path)
    assert line == (f"geoeval: error: {base}/dota-listing: the server answered a web page (a "
                    f"folder's listing?), not a file: {refusal}")
    line = _fails(["coco", f"{base}/coco/", f"{base}/coco/results.json"], tmp_path)
    assert line == f"geoeval: error: {base}/coco/: a folder, where a JSON file is expected"
    line = _fails(["coco", f"{base}/coco/none.json?sig={SECRET}",
                   f"{base}/coco/results.json"], tmp_path)
    assert line == f"geoeval: error: {base}/coco/none.json?…: no such file on the server (404)"


def test_store_path_names_and_listing(s3):
    from geoeval.io.store_paths import StorePath, box_path

    root = box_path(f"{S3}/neovision2/truth")
    assert isinstance(root, StorePath) and root.is_dir() and str(root) == f"{S3}/neovision2/truth"
    files = root.rglob("*.csv")
    local = sorted((SAMPLE / "neovision2" / "truth").rglob("*.csv"))
    assert [f.relative_to(root).as_posix() for f in files] == [
        f.relative_to(SAMPLE / "neovision2" / "truth").as_posix() for f in local]
    assert files[0].read_bytes() == local[0].read_bytes()
    assert (files[0].name, files[0].stem, files[0].suffix) == (local[0].name, local[0].stem,
                                                               local[0].suffix)
    with pytest.raises(TypeError):  # never opened as a local file by mistake
        open(files[0], "rb")  # noqa: SIM115
    with pytest.raises(InputError, match="no such object or prefix"):
        from geoeval.io.boxes import read_boxes

        read_boxes(f"{S3}/voc/none")
