"""Standard output and pipes (geoeval.streams, geoeval.outputs): ``-`` is standard
output for the text reports, special files (``/dev/stdout``, a FIFO) are written in
place, and a reader that stops reading (``| head -1``) costs no output file.

Fast: in this process (``main()``, as the console script calls it), on an 8 x 8
scene. Slow: the installed console script in real pipelines.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from run_check import GEOEVAL, SAMPLE, SUBMISSIONS, environment

from tests.corpus.conftest import assert_ok, run_cli
from tests.corpus.test_outputs import _raster, _scene


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("scene")
    ref, sub = _scene()
    return _raster(d / "ref.tif", ref), _raster(d / "sub.tif", sub)


def _report(text: str) -> dict:
    report = json.loads(text)
    assert report["results"]["bgm"]["precision"] == 1.0  # the scene's hand-worked values
    assert report["results"]["bgm"]["accuracy"] == pytest.approx(2 / 3)
    return report


# ---------------------------------------------------------------- fast: in this process
def test_json_to_standard_output_is_the_report_alone(scene, tmp_path):
    run = run_cli("score", *scene, "-m", "bgm", "--json", "-", "--csv-dir", "t", cwd=tmp_path)
    assert_ok(run)
    _report(run.stdout)  # no table around it
    assert sorted(os.listdir(tmp_path)) == ["t"] and len(os.listdir(tmp_path / "t")) == 4
    assert run.stderr.strip().splitlines()[-1] == "wrote t/ (4 files)"


def test_dev_stdout_is_standard_output(scene, tmp_path):
    run = run_cli("score", *scene, "-m", "bgm", "--json", "/dev/stdout", cwd=tmp_path)
    assert_ok(run)
    _report(run.stdout)
    assert os.listdir(tmp_path) == []


def test_a_fifo_is_written_in_place(scene, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    run = run_cli("score", *scene, "-m", "bgm", "-q", "--json", fifo)
    reader.join(60)
    assert_ok(run)
    _report(got[0].decode())
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still the FIFO, not a file renamed over it
    assert os.listdir(tmp_path) == ["report.fifo"]


def test_a_failed_run_writes_nothing_to_standard_output(scene, tmp_path):
    bad = tmp_path / "sub.tif"
    bad.write_bytes(b"II*\x00 not a GeoTIFF")  # refused once the outputs are claimed
    run = run_cli("score", scene[0], bad, "-m", "bgm", "--json", "-", cwd=tmp_path)
    assert run.code == 2 and run.stdout == "", str(run)
    assert "sub.tif" in run.stderr


def test_a_closed_pipe_is_quiet_and_the_rest_is_dropped():
    from geoeval import streams

    read, write = os.pipe()
    stream = io.TextIOWrapper(os.fdopen(write, "wb"), encoding="utf-8")
    os.close(read)  # the reader has gone
    guard = streams._Guard(stream)
    guard.write("a table\n")
    guard.flush()  # EPIPE: quiet
    assert guard.broken
    guard.write("more\n")
    guard.buffer.write(b"bytes too\n")
    guard.flush()
    stream.close()  # its descriptor now points at os.devnull: nothing fails


# ---------------------------------------------------------------- slow: real pipelines
def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command`` in bash; prints geoeval's exit code (``PIPESTATUS``) last on stderr."""
    return subprocess.run(["bash", "-c", command + '; echo "status=${PIPESTATUS[0]}" >&2'],
                          cwd=cwd, env=environment(GEOEVAL_PROGRESS=""), capture_output=True,
                          text=True, timeout=600)


def _clean(stderr: str) -> list[str]:
    """geoeval's messages on stderr (progress lines, printed after 3 s, left out),
    checked free of tracebacks and of Python's complaints at exit."""
    lines = stderr.strip().splitlines()
    assert lines[-1] == "status=0", stderr
    assert not any(w in stderr for w in ("Traceback", "Exception ignored", "BrokenPipe",
                                         "Broken pipe")), stderr
    return [line for line in lines[:-1] if not line.startswith("geoeval: ")]


@pytest.mark.slow
def test_head_keeps_every_output_of_score(tmp_path):
    geoeval = " ".join(GEOEVAL)
    res = _shell(f"{geoeval} score {SAMPLE / 'reference.tif'} "
                 f"{SUBMISSIONS / 's4_fragmented.tif'} -m bgm -m iou --json r.json "
                 "--html r.html --csv-dir t | head -3", tmp_path)
    assert len(res.stdout.splitlines()) == 3
    assert _clean(res.stderr) == ["wrote t/ (4 files), r.html, r.json"]
    json.loads((tmp_path / "r.json").read_text())
    assert (tmp_path / "r.html").read_text().rstrip().endswith("</html>")


@pytest.mark.slow
def test_head_keeps_every_output_of_rank(tmp_path):
    geoeval = " ".join(GEOEVAL)
    res = _shell(f"{geoeval} rank {SAMPLE / 'reference.tif'} "
                 f"{SUBMISSIONS / 's1_near_perfect.tif'} {SUBMISSIONS / 's2_misses.tif'} "
                 "-m bgm --json a.json --html p.html | head -2", tmp_path)
    assert len(res.stdout.splitlines()) == 2
    assert _clean(res.stderr) == ["wrote p.html, a.json"]
    assert json.loads((tmp_path / "a.json").read_text())["matcher"] == "bgm"


@pytest.mark.slow
def test_a_reader_gone_before_the_first_line_costs_nothing(scene, tmp_path):
    """The reader closes the pipe at once: every line geoeval prints meets EPIPE."""
    proc = subprocess.Popen(GEOEVAL + ["score", *map(str, scene), "-m", "bgm", "--json",
                                       "r.json", "--csv-dir", "t"], cwd=tmp_path,
                            env=environment(GEOEVAL_PROGRESS=""), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(120) == 0, err
    assert [x for x in err.splitlines() if not x.startswith("geoeval: ")] == [
        "wrote t/ (4 files), r.json"], err
    _report((tmp_path / "r.json").read_text())


@pytest.mark.slow
def test_standard_output_through_the_console_script(scene, tmp_path):
    geoeval = " ".join(GEOEVAL)
    ref, sub = scene
    # '-' and /dev/stdout into a pipe: the report alone, parsed
    for target in ("-", "/dev/stdout"):
        res = _shell(f"{geoeval} score {ref} {sub} -m bgm --json {target} | cat", tmp_path)
        assert _clean(res.stderr) == []
        _report(res.stdout)
    # /dev/stdout sent to a file by the shell: written into it, not renamed over it
    res = _shell(f"{geoeval} score {ref} {sub} -m bgm --json /dev/stdout > out.json",
                 tmp_path)
    _clean(res.stderr)
    _report((tmp_path / "out.json").read_text())
    # head closes the pipe on the report itself: the HTML page is still written
    res = _shell(f"{geoeval} score {ref} {sub} -m bgm --json - --html r.html | head -1",
                 tmp_path)
    assert res.stdout == "{\n"
    assert _clean(res.stderr) == ["wrote r.html"]
    # a FIFO, read by cat
    os.mkfifo(tmp_path / "fifo")
    res = _shell(f"cat fifo > got.json & {geoeval} score {ref} {sub} -m bgm -q "
                 "--json fifo; wait", tmp_path)
    _clean(res.stderr)
    _report((tmp_path / "got.json").read_text())
    assert sorted(os.listdir(tmp_path)) == ["fifo", "got.json", "out.json", "r.html"]

