"""Harness of the error corpus: run the ``geoeval`` command on a case and check what a
user would see.

Every case goes through :func:`run_cli`, which hashes every input before and after
the run (inputs must stay byte-identical) and returns exit code, stdout and stderr.
By default the command runs in this process (``geoeval.cli.main.main``, the function
the console script calls, with stdout and stderr captured and an escaping exception
printed as the traceback a process would show): a new Python process per case cost
about 0.45 s of CPU, most of the corpus's time. ``script=True`` (or
``GEOEVAL_TEST_CLI=script`` for every case, as CI's slow step does) runs the
installed console script instead.
:func:`assert_error` then checks a refused case: exit code 2, no traceback, at most
three lines on stderr, the file or option named, and no output left behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest


def _console_script() -> list[str]:
    """The installed ``geoeval`` script (next to this Python first, then PATH)."""
    beside = Path(sys.executable).with_name("geoeval")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("geoeval")
    if found is None:  # pragma: no cover - the project is always installed for the tests
        pytest.fail("the geoeval console script is not installed (pip install '.[test]')")
    return [found]


GEOEVAL = _console_script()


def tree_hashes(paths: Iterable[str | os.PathLike[str]]) -> dict[str, str]:
    """SHA-256 of every file under ``paths`` (files or folders), plus each file's mode."""
    out: dict[str, str] = {}
    for p in map(Path, paths):
        files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file()) \
            if p.is_dir() else []
        for f in files:
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest() + oct(f.stat().st_mode)
        if p.is_dir():
            out[str(p) + "/"] = " ".join(sorted(q.name for q in p.rglob("*")))
    return out


@dataclass(frozen=True)
class Run:
    """What one console-script run gave."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (f"geoeval {' '.join(self.args)}\nexit {self.code}\n--- stdout\n{self.stdout}"
                f"\n--- stderr\n{self.stderr}")


#: Run every case through the installed console script (CI's slow step sets it).
SCRIPT = os.environ.get("GEOEVAL_TEST_CLI", "") == "script"


def run_cli(*args: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]] = (),
            cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
            script: bool = False, columns: int | None = None) -> Run:
    """Run ``geoeval ARGS``; ``inputs`` (files or folders) must be unchanged afterwards.

    In this process unless ``script`` (or :data:`SCRIPT`): then the console script.
    ``columns`` sets ``COLUMNS`` for the run (by default: as set, else 100)."""
    argv = [str(a) for a in args]
    before = tree_hashes(inputs)
    run = (_run_script if script or SCRIPT else _run_here)(argv, cwd, timeout, columns)
    after = tree_hashes(inputs)
    assert after == before, f"an input changed:\n{run}"
    return run


def _run_script(argv: list[str], cwd: str | os.PathLike[str] | None, timeout: float,
                columns: int | None = None) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.setdefault("COLUMNS", "100")
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run(GEOEVAL + argv, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    return Run(tuple(argv), proc.returncode, proc.stdout, proc.stderr)


@contextlib.contextmanager
def _chdir(folder: str | os.PathLike[str] | None):
    """``contextlib.chdir`` (Python 3.11) for 3.10 too; ``None`` stays here."""
    before = os.getcwd()
    if folder is not None:
        os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _run_here(argv: list[str], cwd: str | os.PathLike[str] | None, timeout: float,
              columns: int | None = None) -> Run:
    """``main(argv)`` as the console script runs it (``sys.exit(main())``): its exit
    code, what it printed, and an exception it let escape printed as the traceback
    Python prints (exit 1), so that "no traceback" is checked the same way."""
    from geoeval.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in ("COLUMNS",)}
    os.environ.setdefault("COLUMNS", "100")
    if columns is not None:
        os.environ["COLUMNS"] = str(columns)
    saved_argv, sys.argv = sys.argv, [GEOEVAL[0], *argv]  # click names the program by it
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _chdir(cwd):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # what the interpreter would print, then exit 1
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        sys.argv = saved_argv
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Run(tuple(argv), int(code or 0), out.getvalue(), err.getvalue())


def assert_error(run: Run, *names: str, absent: Iterable[str | os.PathLike[str]] = (),
                 code: int = 2, max_lines: int = 3) -> None:
    """A refused case: exit ``code``, no traceback, a short message naming every one of
    ``names`` (a file, an option, a value), and none of the ``absent`` paths exists."""
    assert run.code == code, str(run)
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, str(run)
    # progress lines (`geoeval: reading`, printed once a step has run 3 s, as on a
    # loaded machine) are not part of the message
    lines = [line for line in run.stderr.strip().splitlines() if line.strip()
             and not (line.startswith("geoeval: ") and not line.startswith("geoeval: error"))]
    assert lines, f"no error message on stderr:\n{run}"
    assert len(lines) <= max_lines, f"{len(lines)} lines (at most {max_lines}):\n{run}"
    for name in names:
        assert str(name) in run.stderr, f"{name!r} not named:\n{run}"
    for path in absent:
        assert not Path(path).exists(), f"{path} was written:\n{run}"
    leftovers = [p for p in map(Path, absent) if p.parent.is_dir()
                 for q in p.parent.iterdir() if q.name.startswith(f".{p.name}.")]
    assert not leftovers, f"temporary files left: {leftovers}"


def assert_ok(run: Run) -> None:
    """A run that must succeed: exit 0 and no traceback."""
    assert run.code == 0, str(run)
    assert "Traceback" not in run.stderr, str(run)


@pytest.fixture()
def cli():
    """The :func:`run_cli` function, as a fixture."""
    return run_cli
