"""The run's standard streams: a reader that stops reading is no error, and
standard output can be one of the run's outputs.

``geoeval score … --json r.json | head -3``: ``head`` closes the pipe after three
lines. Within :func:`guarded` (the command line), the first write that finds
stdout's (or stderr's) reader gone turns the stream into a sink: the rest of
what is printed there is dropped quietly, and the run goes on to write its
files. (Python ignores SIGPIPE, so the closed pipe is a ``BrokenPipeError``
here, handled once for every writer; the stream's descriptor then points at
``os.devnull``, so nothing fails when the interpreter flushes it at exit.)

An output given as ``-`` (:mod:`geoeval.outputs`) takes standard output with
:func:`claim_stdout`: until :func:`release_stdout`, ``sys.stdout`` is a sink, so
the tables a command prints never interleave with the report, which is copied
to the real standard output when the run's outputs are committed
(:func:`copy_file`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

_CHUNK = 1 << 20
_MUTED = threading.Event()  # set by mute(): the guarded streams drop every write
_STDERR: list[Any] = []  # the stderr guarded() found (what say() writes to)


class _Guard:
    """A stream whose closed pipe is quiet: once its reader is gone, writes are dropped."""

    def __init__(self, stream: Any, owner: _Guard | None = None) -> None:
        self._stream = stream
        self._owner = owner  # the text stream whose ``.buffer`` this is
        self._broken = False

    @property
    def broken(self) -> bool:
        """Whether the reader has gone."""
        return self._owner.broken if self._owner is not None else self._broken

    def _break(self) -> None:
        if self._owner is not None:
            self._owner._break()
            return
        self._broken = True
        with contextlib.suppress(Exception):  # later writes, and the flush at exit, go nowhere
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        with contextlib.suppress(Exception):
            self._stream.flush()  # the buffered rest, into the sink

    def write(self, data: Any) -> int:
        if not self.broken and not _MUTED.is_set():
            try:
                return self._stream.write(data)
            except BrokenPipeError:
                self._break()
        return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._break()

    @property
    def buffer(self) -> _Guard:
        return _Guard(self._stream.buffer, owner=self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """Within the block, a closed pipe on stdout or stderr stops the printing there
    quietly (see the module's text); the streams are flushed and restored after it."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = guards = _Guard(saved[0]), _Guard(saved[1])
    _STDERR.append(saved[1])
    try:
        yield
    finally:
        for guard in guards:
            with contextlib.suppress(Exception):
                guard.flush()
        sys.stdout, sys.stderr = saved
        _STDERR.pop()
        _MUTED.clear()


def mute() -> None:
    """From now on, nothing printed on the guarded streams reaches them (a run being
    stopped: no progress line is drawn again over its last message, :func:`say`)."""
    _MUTED.set()


def say(line: str) -> None:
    """Print ``line`` on stderr, muted or not, on a line of its own: on a terminal,
    over the progress line that may be there, with the cursor shown again (a
    progress display hides it). A reader gone is no error."""
    # stderr itself, not what a live display may have put in its place
    stream = _STDERR[-1] if _STDERR else sys.stderr
    with contextlib.suppress(Exception):
        terminal = stream.isatty()
        stream.write(("\r\x1b[2K" if terminal else "") + line
                     + ("\x1b[?25h" if terminal else "") + "\n")
        stream.flush()


def claim_stdout() -> IO[Any]:
    """Take standard output for an output: returns the stream to write it to, and
    ``sys.stdout`` is a sink until :func:`release_stdout` (tables are not printed)."""
    stream = sys.stdout
    with contextlib.suppress(Exception):
        stream.flush()
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed at release
    return stream


def release_stdout(stream: IO[Any]) -> None:
    """Give standard output back (``stream`` is what :func:`claim_stdout` returned)."""
    sink, sys.stdout = sys.stdout, stream
    if sink is not stream:
        with contextlib.suppress(Exception):
            sink.close()


def copy_file(path: str | os.PathLike[str], stream: IO[Any]) -> None:
    """Copy the file at ``path`` to ``stream`` (its bytes to a binary buffer when the
    stream has one, else as UTF-8 text); a reader gone meanwhile is no error."""
    with contextlib.suppress(Exception):
        stream.flush()
    binary = getattr(stream, "buffer", None)
    with contextlib.suppress(BrokenPipeError), \
            open(path, "rb" if binary is not None else "r", encoding=None if binary is not None
                 else "utf-8") as src:
        shutil.copyfileobj(src, binary if binary is not None else stream, _CHUNK)
        (binary if binary is not None else stream).flush()


def write_special(path: str | os.PathLike[str], source: str | os.PathLike[str]) -> None:
    """Write the file ``source`` into ``path``, a FIFO, a device or a descriptor
    (``/dev/stderr``), opened for appending, never replaced; a reader gone
    meanwhile is no error."""
    with contextlib.suppress(BrokenPipeError), open(source, "rb") as src, \
            open(path, "ab") as dst:
        shutil.copyfileobj(src, dst, _CHUNK)
