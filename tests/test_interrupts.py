"""Ctrl-C and SIGTERM stop a run (geoeval.cancel): exit 130 / 143, the one line
``geoeval: interrupted; no output was written``, nothing written, no temporary file
and no process left.

Fast: the mechanism in this process (a signal raises in the main thread, a deferred
block, the late signal of a run that is committing its outputs, a pool's workers
stopped at once). Slow: the installed console script on the bundled sample, stopped
mid-run by SIGINT to its process group (what a terminal's Ctrl-C sends) or SIGTERM to
its process id (``kill PID``) — ``score``, ``rank`` with the Mallows process pool,
``--engine dask`` (started and while starting), ``audit`` — and by a real Ctrl-C typed
on a pseudo-terminal; and SIGTERM while the outputs are being written.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from run_check import MESSAGE, SAMPLE, SUBMISSIONS, alive, ctrl_c, screen_lines, stop_at

from geoeval import cancel

REF = SAMPLE / "reference.tif"
#: seconds from the signal to the exit: cancel.GRACE, plus exiting, on a loaded machine
PROMPT = 5.0


# ---------------------------------------------------------------- fast: the mechanism
def _signal_soon(signum: int, delay: float = 0.05) -> None:
    threading.Timer(delay, os.kill, (os.getpid(), signum)).start()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_raises_in_the_main_thread_and_sets_the_exit_code(capsys, signum, code):
    before = signal.getsignal(signum)
    with cancel.handled() as run:
        with pytest.raises(cancel.Interrupted) as caught:
            _signal_soon(signum)
            time.sleep(5)
        assert caught.value.signum == signum and isinstance(caught.value, KeyboardInterrupt)
        assert run.report() == code
    assert capsys.readouterr().err == MESSAGE + "\n"
    assert signal.getsignal(signum) == before  # the handlers are restored


def test_a_deferred_block_is_not_cut_and_the_signal_stops_the_run_after_it(capsys):
    steps = []
    with cancel.handled() as run, pytest.raises(cancel.Interrupted):
        with cancel.deferred():
            _signal_soon(signal.SIGINT)
            time.sleep(0.15)
            steps.append("the block ended")
        steps.append("not reached")
    assert steps == ["the block ended"] and run.signum == signal.SIGINT
    run.report()


def test_a_signal_once_the_outputs_are_committed_does_not_stop_the_run():
    with cancel.handled() as run:
        cancel.finishing()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler ran: nothing raised
    assert not run.stopped and run.late == signal.SIGTERM


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_an_interrupted_process_pool_stops_its_workers_at_once():
    import multiprocessing as mp

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with cancel.process_pool(2, mp.get_context("fork")) as pool:
            futures = [pool.submit(_sleep, 30) for _ in range(4)]
            while not pool._processes or len(pool._processes) < 2:  # noqa: SLF001
                time.sleep(0.01)
            workers = list(pool._processes)  # noqa: SLF001
            time.sleep(0.2)
            raise KeyboardInterrupt
    assert time.monotonic() - start < 10
    time.sleep(0.1)
    assert not [p for p in workers if alive(p)]
    assert all(f.cancelled() or f.done() for f in futures)


def test_the_hard_stop_removes_what_the_run_registered(tmp_path):
    tmp, staging, made = tmp_path / ".r.json.x", tmp_path / ".objs.partial", tmp_path / "new"
    tmp.write_text("{")
    (staging / "p").mkdir(parents=True)
    made.mkdir()
    for path, kind in ((tmp, "file"), (staging, "tree"), (made, "folder")):
        cancel.track(path, kind)
    cancel.sweep()
    assert sorted(os.listdir(tmp_path)) == []


# ---------------------------------------------------------------- slow: the console script
def _check(res, signum: int, folder: Path) -> None:
    assert res.code == 128 + signum, res.stderr
    assert res.messages() == [MESSAGE], res.stderr  # no traceback, no worker's log
    assert res.stdout == ""
    assert sorted(os.listdir(folder)) == [], "an output or a temporary file was left"
    assert res.after < PROMPT, f"stopped {res.after:.1f} s after the signal"
    assert not res.left(), f"processes left: {res.left()}"


SIGNALS = [pytest.param(signal.SIGINT, True, id="SIGINT-to-the-group"),
           pytest.param(signal.SIGTERM, False, id="SIGTERM-to-the-process")]


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "to_group"), SIGNALS)
@pytest.mark.parametrize("matchers", [("bgm", "iou"), ("mom",)], ids=["threads", "mom-pool"])
def test_score_stops(tmp_path, signum, to_group, matchers):
    """bgm and iou: the overlap's threads; mom: its Mallows score's process pool (the
    issue's SIGTERM left two of its processes running)."""
    pool = matchers == ("mom",)
    res = stop_at(["score", REF, SUBMISSIONS / "s4_fragmented.tif",
                   *[a for m in matchers for a in ("-m", m)], "-j", "2", "--json", "r.json",
                   "--html", "r.html", "--csv-dir", "tables"],
                  tmp_path, signum, step="Mallows score" if pool else "matching",
                  children=2 if pool else 0, to_group=to_group)
    _check(res, signum, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "to_group"), SIGNALS)
def test_rank_stops_with_its_mallows_pool(tmp_path, signum, to_group):
    res = stop_at(["rank", REF, SUBMISSIONS / "s1_near_perfect.tif",
                   SUBMISSIONS / "s2_misses.tif", "-m", "mom", "-j", "2", "--json", "a.json",
                   "--html", "a.html", "--figure", "a.png"],
                  tmp_path, signum, step="scoring", children=2, to_group=to_group)
    assert len(res.pids) >= 2  # the pool's workers were running
    _check(res, signum, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "to_group"), SIGNALS)
def test_a_dask_run_stops_with_its_local_cluster(tmp_path, signum, to_group):
    res = stop_at(["score", REF, SUBMISSIONS / "s4_fragmented.tif", "--engine", "dask",
                   "-j", "2", "-m", "mom", "--json", "r.json", "--objects", "objs"],
                  tmp_path, signum, step="reading", children=2, to_group=to_group)
    _check(res, signum, tmp_path)


@pytest.mark.slow
def test_a_dask_run_stopped_while_its_cluster_starts(tmp_path):
    """The cluster is started whole (its start is not cut), then closed."""
    res = stop_at(["score", REF, SUBMISSIONS / "s4_fragmented.tif", "--engine", "dask",
                   "-j", "2", "--json", "r.json"], tmp_path, signal.SIGINT,
                  step="starting the dask engine")
    assert res.code == 130 and res.messages() == [MESSAGE], res.stderr
    assert sorted(os.listdir(tmp_path)) == [] and not res.left()


@pytest.mark.slow
def test_audit_stops(tmp_path):
    res = stop_at(["audit", "--json", "a.json", "--markdown", "a.md"], tmp_path,
                  signal.SIGINT, step="auditing")
    _check(res, signal.SIGINT, tmp_path)


@pytest.mark.slow
def test_ctrl_c_on_a_terminal(tmp_path):
    """The issue's case: ``rank`` with its outputs, Ctrl-C typed while the Mallows pool
    runs. The progress line is taken down and the message stays on screen."""
    code, shown, after, seen = ctrl_c(
        ["rank", REF, SUBMISSIONS / "s1_near_perfect.tif", SUBMISSIONS / "s2_misses.tif",
         "-m", "mom", "-j", "2", "--json", "a.json", "--html", "a.html", "--figure", "a.png"],
        tmp_path, children=2)
    assert code == 130, shown[-2000:]
    assert screen_lines(shown)[-1] == MESSAGE, shown[-2000:]
    assert shown.count(MESSAGE) == 1 and "Traceback" not in shown
    assert after < PROMPT
    assert sorted(os.listdir(tmp_path)) == []
    time.sleep(0.2)
    assert not [p for p in seen if alive(p)]


@pytest.mark.slow
@pytest.mark.parametrize("staged", [".r.html.", ".objs.geoeval-partial"])
def test_sigterm_while_the_outputs_are_written_leaves_nothing(tmp_path, staged):
    """SIGTERM the moment a temporary output appears beside its target."""
    import subprocess

    from run_check import GEOEVAL, environment

    proc = subprocess.Popen(
        GEOEVAL + ["score", str(REF), str(SUBMISSIONS / "s4_fragmented.tif"), "-m", "bgm",
                   "--json", "r.json", "--html", "r.html", "--objects", "objs", "-q"],
        cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while proc.poll() is None and not any(n.startswith(staged) for n in os.listdir(tmp_path)):
        time.sleep(0.002)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    lines = [x for x in err.decode().splitlines() if not x.startswith('{"progress"')]
    assert proc.returncode == 143 and lines == [MESSAGE], err.decode()
    assert sorted(os.listdir(tmp_path)) == []


def test_an_interrupt_raised_where_python_drops_exceptions_is_raised_again(capsys):
    """A signal handled inside a ``__del__`` (or a fork hook, as ``os.fork`` runs
    logging's): Python would print "Exception ignored" and go on; the run stops."""

    class Dropped:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs here, in a __del__

    with cancel.handled() as run:
        with pytest.raises(cancel.Interrupted):
            Dropped()
            time.sleep(5)
        run.report()
    assert "Exception ignored" not in capsys.readouterr().err
