"""A run's cancellation: Ctrl-C and SIGTERM stop it at once, cleanly.

The command line opens :func:`handled` around a run. Within it, the first
SIGINT or SIGTERM raises :class:`Interrupted` (a ``KeyboardInterrupt``) in the
main thread, so the run unwinds through its ``finally`` blocks: the output run
removes its temporary files (:mod:`geoeval.outputs`), the pools below stop
their workers (:func:`process_pool`, :func:`threads`), a Dask cluster started
for the run is closed, the progress line is taken down. The command then
(:meth:`Run.report`) kills any process the run started that is still there,
removes any temporary file or staging folder it registered (:func:`track`),
prints one line, :data:`MESSAGE`, and exits with ``128 + the signal's
number`` (130, 143), as a shell reports a process stopped by it.

Should the run not have unwound :data:`GRACE` seconds after the signal (a call
that does not return to Python, a cluster slow to close), or a second signal
come, it is stopped hard (:meth:`Run.stop_hard`): the same, then the process
exits at once. Where a signal must not cut a block (starting a cluster that must
then be closed), :func:`deferred` holds it to the block's end; once the outputs
are being moved into place (:func:`finishing`), it no longer stops the run,
whose outputs are complete a moment later.

Worker processes never get Ctrl-C (a terminal sends it to every process of the
job): their parent stops them (:func:`worker_setup`, :func:`children_ignore_interrupt`).
Without :func:`handled` (geoeval used as a library) nothing here changes how
signals behave; the pools still stop their workers on ``KeyboardInterrupt``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from geoeval import streams

if TYPE_CHECKING:  # the process pool (and multiprocessing) only when one is made
    from concurrent.futures import ProcessPoolExecutor

#: The one line an interrupted command prints on stderr.
MESSAGE = "geoeval: interrupted; no output was written"
#: Seconds from the first signal to a hard stop, if the run has not unwound by then.
GRACE = 2.0
#: Seconds a hard stop waits, instead, for a failed run to delete what it put in object
#: storage (:func:`cleaning`); a second signal still stops it at once.
CLEANING_GRACE = 30.0
#: The signals that stop a run.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by signal ``signum`` (SIGINT or SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(signum: int) -> int:
    """The exit code of a run stopped by ``signum``: ``128 + signum`` (SIGINT 130, SIGTERM 143)."""
    return 128 + int(signum)


# --- what an interrupted run removes ---------------------------------------------------
_DEBRIS: dict[str, str] = {}  # path -> "file" | "tree" | "folder"
_DEBRIS_LOCK = threading.Lock()


def track(path: str | os.PathLike[str], kind: str = "file") -> None:
    """Register a temporary ``path`` of the run: a ``"file"``, a staging folder
    (``"tree"``, removed whole) or an output ``"folder"`` the run created (removed
    if empty). An interrupted run removes what is still registered (:func:`sweep`)."""
    with _DEBRIS_LOCK:
        _DEBRIS[os.path.abspath(path)] = kind


def untrack(path: str | os.PathLike[str]) -> None:
    """``path`` was moved into place or removed: nothing left to clean."""
    with _DEBRIS_LOCK:
        _DEBRIS.pop(os.path.abspath(path), None)


def sweep() -> None:
    """Remove every registered path: files and staging folders, then created
    folders (deepest first, only if empty)."""
    with _DEBRIS_LOCK:
        items = sorted(_DEBRIS.items(), key=lambda kv: (kv[1] == "folder", -len(kv[0])))
        _DEBRIS.clear()
    for path, kind in items:
        with contextlib.suppress(OSError):
            if kind == "file":
                os.unlink(path)
            elif kind == "tree":
                shutil.rmtree(path)
            else:
                os.rmdir(path)


# --- the run -------------------------------------------------------------------------
#: Seconds within which the same signal again is the relayed copy of the first.
_RELAYED = 0.5


class Run:
    """The signal state of one :func:`handled` run.

    Python runs a signal's handler in the main thread, between two of its
    instructions; a signal the kernel gives to another thread does not wake the
    main thread if it waits on a lock (as ``distributed`` does, 10 s at a time). So
    the handler's C part also writes the signal's number to a pipe
    (``signal.set_wakeup_fd``), read by a thread (:func:`_relay`) that starts the
    clock of the hard stop and, if the main thread has not handled the signal a
    moment later, sends it to the main thread itself (:meth:`_relayed`).
    """

    def __init__(self) -> None:
        self.since = _boot_clock()  # the run's processes started after this
        self.signum: int | None = None  # the signal that stopped the run
        self.late: int | None = None  # a signal that came once the run was finishing
        self.finishing = False
        self.deferring = 0  # depth of deferred() blocks
        self.pending: int | None = None  # a signal that came in one
        self._first = 0.0  # when the main thread handled it
        self._swallowed = False  # Interrupted raised where Python drops exceptions
        self._timer: threading.Timer | None = None
        self._grace = GRACE  # seconds from the signal to the hard stop
        self._lock = threading.Lock()  # guards _timer and _grace
        self._done = threading.Lock()  # held by whoever prints the line
        self._main = threading.main_thread().ident

    @property
    def stopped(self) -> bool:
        """Whether a signal stopped the run."""
        return self.signum is not None

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.finishing:
            self.late = signum
            return
        first = self.signum or self.pending
        if self._swallowed:  # raised where Python drops exceptions: raise it again here
            self._swallowed = False
            raise Interrupted(first or signum)
        if first is not None:
            if signum == first and time.monotonic() - self._first < _RELAYED:
                return  # the relayed copy of the first
            self.stop_hard()  # a second signal: stop now
            return
        self._first = time.monotonic()
        logging.disable(logging.CRITICAL)  # no library's log lines after ours
        self._arm()
        if self.deferring:
            self.pending = signum
            return
        self.signum = signum
        raise Interrupted(signum)

    def _arm(self) -> None:
        """Start the clock of the hard stop (once)."""
        with self._lock:
            if self._timer is not None:
                return
            self._timer = threading.Timer(self._grace, self.stop_hard)
            self._timer.daemon = True
            self._timer.start()

    def _wait_longer(self, seconds: float) -> None:
        """The hard stop waits ``seconds`` from now if a signal started its clock, and
        from the signal if one comes (:func:`cleaning`)."""
        with self._lock:
            self._grace = max(self._grace, seconds)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = threading.Timer(seconds, self.stop_hard)
                self._timer.daemon = True
                self._timer.start()

    def _relayed(self, signum: int) -> None:
        """``signum`` came, to whichever thread (see the class's text)."""
        if self.finishing:
            return
        self._arm()
        time.sleep(0.05)
        unhandled = self.signum is None and self.pending is None
        if (unhandled or self._swallowed) and not self.finishing:
            with contextlib.suppress(OSError, ValueError):
                signal.pthread_kill(self._main, signum)

    def _unraisable(self, previous: Any) -> Any:
        """A ``sys.unraisablehook``: an :class:`Interrupted` raised where Python drops
        exceptions (a fork or ``atexit`` hook, a ``__del__``, a weakref callback) is
        not printed and is raised again in the main thread's next instruction."""

        def hook(info: Any) -> None:
            if isinstance(info.exc_value, Interrupted):
                # the relay sends it again, once this frame is left (raised here, it
                # would be dropped again)
                self._swallowed = True
                with contextlib.suppress(OSError):
                    os.write(_relay_fd(), bytes([info.exc_value.signum]))
                return
            previous(info)

        return hook

    def report(self) -> int:
        """Print :data:`MESSAGE` (once) and return the exit code."""
        if self._timer is not None:
            self._timer.cancel()
        # blocks only while a hard stop (which then ends the process) holds it
        self._done.acquire()
        kill_children(self.since, keep=_helpers())  # any the run's own cleanup missed
        sweep()
        streams.say(MESSAGE)
        return exit_code(self.signum or signal.SIGINT)

    def stop_hard(self) -> None:
        """Kill the processes the run started, remove its temporary files, print
        the line and exit now."""
        if not self._done.acquire(blocking=False):
            return  # the main thread is printing it
        streams.mute()  # a live progress line is not drawn again over the message
        kill_children(self.since)
        sweep()
        streams.say(MESSAGE)
        os._exit(exit_code(self.signum or self.pending or signal.SIGINT))


_RUN: Run | None = None
_RELAY: list[int] = []  # the write end of the relay's pipe, once it runs


def _relay(fd: int) -> None:
    """The thread (one per process) reading the numbers of the signals that came."""
    while data := os.read(fd, 64):
        run = _RUN
        signum = next((s for s in reversed(data) if s in SIGNALS), None)
        if run is not None and signum is not None:
            run._relayed(signum)


def _relay_fd() -> int:
    """The write end of the relay's pipe (the relay started on first use)."""
    if not _RELAY:
        read, write = os.pipe()
        os.set_blocking(write, False)
        threading.Thread(target=_relay, args=(read,), name="geoeval-signals",
                         daemon=True).start()
        _RELAY.append(write)
    return _RELAY[0]


@contextlib.contextmanager
def handled() -> Iterator[Run]:
    """SIGINT and SIGTERM stop the run within the block (see the module's text);
    the previous handlers are restored after it. Off the main thread (where
    Python cannot set handlers) the block runs with the signals as they were."""
    global _RUN
    run = Run()
    if threading.current_thread() is not threading.main_thread():
        yield run
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    outer, _RUN = _RUN, run
    logs = logging.root.manager.disable  # the level logging.disable() set
    wakeup = signal.set_wakeup_fd(_relay_fd())
    unraisable, sys.unraisablehook = sys.unraisablehook, run._unraisable(sys.unraisablehook)
    try:
        for s in SIGNALS:
            signal.signal(s, run._on_signal)
        yield run
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        sys.unraisablehook = unraisable
        signal.set_wakeup_fd(wakeup)
        logging.disable(logs)
        _RUN = outer
        if run._timer is not None:
            run._timer.cancel()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A block a signal must not cut (it starts something that must then be
    stopped, e.g. a Dask cluster): a signal within it stops the run at its end.
    The hard stop's clock still starts at the signal."""
    run = _RUN
    if run is None:
        yield
        return
    run.deferring += 1
    try:
        yield
    finally:
        run.deferring -= 1
        if not run.deferring and run.pending is not None:
            run.signum, run.pending = run.pending, None
            raise Interrupted(run.signum)


@contextlib.contextmanager
def cleaning(seconds: float = CLEANING_GRACE) -> Iterator[None]:
    """A failed run's cleanup that talks to a store (deleting the objects it put
    there: :mod:`geoeval.store_outputs`): a signal does not cut it (held to the
    block's end, as in :func:`deferred`), and the hard stop waits for it, up to
    ``seconds``, rather than :data:`GRACE`; a second signal still stops at once."""
    run = _RUN
    if run is None:
        yield
        return
    run._wait_longer(seconds)
    with deferred():
        yield


def finishing() -> None:
    """The run's outputs are being moved into place: a signal from now on no longer
    stops it (it ends a moment later, its outputs complete)."""
    if _RUN is not None:
        _RUN.finishing = True


# --- processes and threads -----------------------------------------------------------
def _boot_clock() -> float | None:
    """Seconds since the system started (the clock of /proc's process start times)."""
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    return None if clock is None else time.clock_gettime(clock)


def children(since: float | None = None) -> list[int]:
    """Process ids of every living descendant of this process, or of those started
    ``since`` (a :func:`_boot_clock` reading) when given (Linux: from /proc;
    elsewhere the processes :mod:`multiprocessing` started)."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:  # pragma: no cover - not Linux
        import multiprocessing

        return [p.pid for p in multiprocessing.active_children() if p.pid]
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    started: dict[int, float] = {}
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z":
            parent[int(entry)] = int(fields[1])
            started[int(entry)] = int(fields[19]) / tick
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [c for c, p in parent.items() if p == pid]
        found += kids
        todo += kids
    # start times are counted in ticks: one tick of margin
    return [p for p in found if since is None or started[p] >= since - 1 / tick]


def _helpers() -> set[int]:
    """Processes of :mod:`multiprocessing` that end with this one and must outlive the
    run: its resource tracker (killed, it would be started again at exit to release
    the run's semaphores, and complain of names it never saw)."""
    from multiprocessing import resource_tracker

    pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    return {pid} if pid else set()


def kill_children(since: float | None = None,
                  keep: set[int] | frozenset[int] = frozenset()) -> None:
    """SIGKILL every descendant of this process (started ``since``, see
    :func:`children`) but those in ``keep``."""
    for pid in children(since):
        if pid not in keep:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def worker_setup() -> None:
    """Start of a worker process: Ctrl-C is its parent's to handle, SIGTERM ends it,
    and (Linux) it is killed if its parent dies without stopping it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL))
        if os.getppid() == 1:  # the parent died before prctl
            os._exit(1)


@contextlib.contextmanager
def process_pool(jobs: int, mp_context: Any = None) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` of ``jobs`` workers (set up by :func:`worker_setup`),
    shut down at the end of the block; if the block fails or is interrupted, its
    workers are stopped at once, mid-task, and the queued tasks dropped."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=mp_context,
                               initializer=worker_setup)
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Drop ``pool``'s queued tasks and end its worker processes now."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(1.0)
            if p.is_alive():
                p.kill()


@contextlib.contextmanager
def threads(jobs: int) -> Iterator[ThreadPoolExecutor]:
    """A ``ThreadPoolExecutor`` of ``jobs`` threads whose queued tasks are dropped if
    the block fails or is interrupted (the running ones end, the rest never start)."""
    pool = ThreadPoolExecutor(jobs)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


@contextlib.contextmanager
def children_ignore_interrupt() -> Iterator[None]:
    """Programs :mod:`multiprocessing` starts by ``spawn`` or ``forkserver`` within
    the block (e.g. the workers of a Dask ``LocalCluster``, from any of its threads)
    start with SIGINT blocked, so a Ctrl-C at the terminal, which reaches every
    process of the job, never interrupts them: this process stops them. This
    process's own signals are untouched. (The mask is set around the call that
    starts them, ``multiprocessing.util.spawnv_passfds``; a program inherits it.)"""
    from multiprocessing import util

    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    spawn = util.spawnv_passfds

    def spawn_blocked(*args: Any, **kwargs: Any) -> Any:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return spawn(*args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    util.spawnv_passfds = spawn_blocked
    try:
        yield
    finally:
        util.spawnv_passfds = spawn
