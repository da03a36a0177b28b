"""The ``geoeval`` console script run as a user runs it, stopped mid-run by a signal, a
closed pipe or a terminal's Ctrl-C; and the processes it left, by process id.

Imported by the test modules (as ``dask_cluster`` is). Every run is the installed
console script of this Python (the one ``tests/corpus`` drives), in a session of its
own, with ``GEOEVAL_PROGRESS=jsonl`` so that its steps can be followed on stderr
(one JSON object a line, kept apart from what it prints for the user).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.corpus.conftest import GEOEVAL

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
SUBMISSIONS = SAMPLE / "submissions"
MESSAGE = "geoeval: interrupted; no output was written"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    # PYTHONFAULTHANDLER: a run that does not stop in time is aborted with every
    # thread's stack on stderr, to see where it was
    env.update({"COLUMNS": "100", "GEOEVAL_PROGRESS": "jsonl", "PYTHONFAULTHANDLER": "1",
                **extra})
    return env


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].decode().split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def descendants(pid: int) -> set[int]:
    """Process ids of every living descendant of ``pid``."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None and fields[0] != "Z":
            parent[int(entry)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        pid = todo.pop()
        kids = [c for c, p in parent.items() if p == pid]
        found.update(kids)
        todo += kids
    return found


def group(pgid: int) -> set[int]:
    """Living processes of process group ``pgid``."""
    return {int(e) for e in os.listdir("/proc") if e.isdigit()
            and (fields := _stat(int(e))) is not None and fields[0] != "Z"
            and int(fields[2]) == pgid}


@dataclass
class Stopped:
    """A run stopped by a signal: what it printed and which processes it had."""

    code: int
    stdout: str
    stderr: str
    after: float  # seconds from the signal to the exit
    pids: set[int] = field(default_factory=set)  # every descendant seen during the run
    pgid: int = 0

    def messages(self) -> list[str]:
        """stderr without the progress lines (JSON objects)."""
        return [line for line in self.stderr.splitlines()
                if line.strip() and not line.startswith('{"progress"')]

    def left(self) -> set[int]:
        """Processes of the run still alive (its descendants, its process group)."""
        time.sleep(0.2)  # the kernel reparents and reaps
        return {p for p in self.pids if alive(p)} | group(self.pgid)


def stop_at(args: list[str], cwd: Path, signum: int, *, step: str = "",
            children: int = 0, to_group: bool = True, timeout: float = 600,
            within: float = 5.0) -> Stopped:
    """Run ``geoeval ARGS`` in ``cwd``; once a progress line whose step starts with
    ``step`` was printed and the run has at least ``children`` descendant processes,
    send ``signum`` (to its process group, as a terminal does, or to its process id
    only, as ``kill PID`` does); return when it has ended. Not ended ``within``
    seconds, it is aborted (SIGABRT: its threads' stacks on stderr, exit -6)."""
    proc = subprocess.Popen(GEOEVAL + [str(a) for a in args], cwd=cwd, env=environment(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    lines: list[str] = []
    out: list[bytes] = []
    readers = [threading.Thread(target=lambda: lines.extend(
                   x.decode(errors="replace") for x in proc.stderr), daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)]
    for r in readers:
        r.start()
    seen: set[int] = set()
    start = time.monotonic()

    def reached() -> bool:
        steps = [json.loads(x)["step"] for x in list(lines) if x.startswith('{"progress"')]
        return any(s.startswith(step) for s in steps) and len(seen) >= children

    while proc.poll() is None and not reached():
        seen |= descendants(proc.pid)
        assert time.monotonic() - start < timeout, "the run never reached the step"
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before the signal:\n{''.join(lines)}"
    seen |= descendants(proc.pid)
    (os.killpg if to_group else os.kill)(proc.pid, signum)
    sent = time.monotonic()
    try:
        proc.wait(timeout=within)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGABRT)
    proc.wait(timeout=120)
    after = time.monotonic() - sent
    for r in readers:
        r.join(10)
    return Stopped(proc.returncode, b"".join(out).decode(errors="replace"), "".join(lines),
                   after, seen, proc.pid)


def ctrl_c(args: list[str], cwd: Path, *, children: int = 1,
           timeout: float = 600) -> tuple[int, str, float, set[int]]:
    """Run ``geoeval ARGS`` on a terminal (a pseudo-terminal: live progress line) and
    type Ctrl-C once it has ``children`` descendant processes. Returns the exit code,
    everything the terminal showed (escape sequences included), the seconds from
    Ctrl-C to the exit, and the processes seen."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        env = environment()
        env.pop("GEOEVAL_PROGRESS")
        os.execve(GEOEVAL[0], GEOEVAL + [str(a) for a in args], env)
    shown = bytearray()
    seen: set[int] = set()
    start = time.monotonic()
    status = None

    def drain(wait: float) -> bool:
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # EIO: the terminal's other side is closed
                return False
            shown.extend(data)
            return bool(data)
        return True

    while len(seen) < children:
        seen |= descendants(pid)
        assert time.monotonic() - start < timeout, "the run never started its workers"
        drain(0.02)
    os.write(fd, b"\x03")  # the terminal turns it into SIGINT for the foreground job
    sent = time.monotonic()
    while status is None:
        open_ = drain(0.05)
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif not open_ and time.monotonic() - sent > 120:  # pragma: no cover
            os.kill(pid, signal.SIGKILL)
    while drain(0.05):
        pass
    os.close(fd)
    return (os.waitstatus_to_exitcode(status), shown.decode(errors="replace"),
            time.monotonic() - sent, seen)


def screen_lines(shown: str) -> list[str]:
    """The lines a terminal ends up showing: carriage returns and erase-line and
    cursor-up sequences applied, other escape sequences dropped."""
    lines: list[str] = [""]
    for token in re.split(r"(\x1b\[[0-9;?]*[A-Za-z]|\r\n|\n|\r)", shown):
        if token in ("\r\n", "\n"):
            lines.append("")
        elif token == "\r":
            lines[-1] = ""  # the next text overwrites the line (erased by \x1b[2K anyway)
        elif token.startswith("\x1b["):
            if token.endswith("K"):
                lines[-1] = ""
            elif token.endswith("A") and len(lines) > 1:
                lines.pop()
        else:
            lines[-1] += token
    return [line for line in lines if line.strip()]
