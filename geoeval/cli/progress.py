"""Progress on the terminal: a live status line (with a bar of a count), plain lines on a
log or a pipe (delayed, throttled, with a heartbeat), or JSON lines for the QGIS plugin
(``GEOEVAL_PROGRESS=jsonl``). The time left in the texts is the library's
(:class:`geoeval.progress.TimeLeft`)."""

from __future__ import annotations

import os
import sys
from typing import Any


def progress_jsonl(text: str) -> None:
    """One machine-readable progress line on stderr (``GEOEVAL_PROGRESS=jsonl``):
    ``{"progress": TEXT, "step": STEP, "done": N, "total": M}``; ``step`` is the text
    before the first colon, ``done``/``total`` the first ``N/M`` count in the text
    (null when there is none). Read by the QGIS plugin (docs/qgis.md)."""
    import json

    done, total = _count(text)
    line = {"progress": text, "step": text.split(":")[0], "done": done, "total": total}
    print(json.dumps(line), file=sys.stderr, flush=True)


_COUNT = r"(\d[\d,]*)/(\d[\d,]*)"


def _count(text: str) -> tuple[int | None, int | None]:
    """The first ``N/M`` count of a progress text (``None, None`` when there is none)."""
    import re

    count = re.search(_COUNT, text)
    return ((int(count[1].replace(",", "")), int(count[2].replace(",", ""))) if count
            else (None, None))


def _CountBar() -> Any:  # noqa: N802 - a rich column, made when first needed
    """A rich bar column drawn only for a step with a count (no bar otherwise)."""
    from rich.progress import BarColumn
    from rich.text import Text

    class CountBar(BarColumn):
        def render(self, task: Any) -> Any:
            return super().render(task) if task.total is not None else Text("")

    return CountBar(bar_width=30)


class Progress:
    """Step texts on stderr: a live status line on a terminal (with a bar of the
    text's first ``N/M`` count when it has one, e.g. the Dask engine's ``scoring on
    the cluster: 37/120, about 40 s left (matching 12/48 partitions)``); otherwise (a
    log, a pipe) plain lines once the run has lasted ``delay`` seconds (a quick run, or an
    error, prints none; a step reported before then is printed when it is
    reached), then a new step at once, the same step at most every ``every``
    seconds, and, while a step runs without news, a line at least every
    ``heartbeat`` seconds saying how long it has run. Silent when ``quiet``. With
    the environment variable ``GEOEVAL_PROGRESS=jsonl`` every step is one JSON
    line instead (:func:`progress_jsonl`), even when ``quiet``."""

    def __init__(self, quiet: bool, first: str = "reading", every: float = 5.0,
                 delay: float = 3.0, heartbeat: float = 10.0, console: Any = None) -> None:
        import threading
        import time

        from geoeval.cli.printers import terminal

        self.console = console if console is not None else terminal(stderr=True)
        self.quiet, self.every, self.first, self.delay = quiet, every, first, delay
        self.heartbeat = heartbeat
        self._start = time.monotonic()
        self.jsonl = os.environ.get("GEOEVAL_PROGRESS", "").lower() == "jsonl"
        self.live = not quiet and not self.jsonl and self.console.is_terminal
        self._status: Any = None
        self._last_step, self._last_time = "", 0.0
        self._text, self._since, self._printed = "", self._start, 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Any = None

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import Progress as Bars
            from rich.progress import SpinnerColumn, TextColumn

            self._status = Bars(SpinnerColumn("dots"),
                                TextColumn("{task.description}", markup=False),
                                _CountBar(), console=self.console, transient=True)
            self._status.__enter__()
            self._task = self._status.add_task(self.first, total=None)
        else:
            self(self.first)
            if not self.quiet and not self.jsonl:
                import threading

                self._thread = threading.Thread(target=self._beat, daemon=True,
                                                name="geoeval-progress")
                self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._status is not None:
            self._status.__exit__(*exc)

    def _print(self, text: str, now: float) -> None:
        print(f"geoeval: {text}", file=sys.stderr, flush=True)
        self._printed = now

    def _beat(self) -> None:
        """The pending step once ``delay`` has passed, then a line every
        ``heartbeat`` seconds while no new one is printed."""
        import time

        while not self._stop.wait(0.25):
            with self._lock:
                now = time.monotonic()
                if now - self._start < self.delay or not self._text:
                    continue
                if self._printed < self._since:  # reported before the delay
                    self._print(self._text, now)
                    self._last_step, self._last_time = self._text.split(":")[0], now
                elif now - self._printed >= self.heartbeat:
                    self._print(f"{self._text} (still running, {now - self._since:.0f} s)",
                                now)

    def __call__(self, text: str) -> None:
        import time

        if self.jsonl:
            progress_jsonl(text)
            return
        if self.quiet:
            return
        if self._status is not None:
            done, total = _count(text)
            if total is None:  # no count: no bar (rich keeps a total once set)
                self._status.remove_task(self._task)
                self._task = self._status.add_task(text, total=None)
            else:
                self._status.update(self._task, description=text, completed=done,
                                    total=total)
            return
        with self._lock:
            step, now = text.split(":")[0], time.monotonic()
            if step != self._text.split(":")[0]:
                self._since = now
            self._text = text
            if now - self._start < self.delay:
                return
            if step != self._last_step or now - self._last_time >= self.every:
                self._print(text, now)
                self._last_step, self._last_time = step, now
