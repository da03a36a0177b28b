"""Progress texts and their time left: one rule for every long step.

A step reports ``done/total`` units of work (instances, parts, pieces, partitions);
:class:`TimeLeft` turns that into ``, about N s left`` from the throughput measured
since the first :data:`WARM_UP` units were done (their start-up costs left out: no
guess before), once :data:`MEASURED` seconds of it are measured, and only while a
second or more is left. The in-memory engine's steps (:mod:`geoeval.scoring.scene`)
and the Dask engine's one count on the cluster (:class:`geoeval.engine.gather.Meter`)
use it alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Units of work done before the throughput is measured (they carry start-up costs).
WARM_UP = 3
#: Seconds of measured throughput before a time left is shown.
MEASURED = 1.0


class TimeLeft:
    """The time left of one count of work (module docstring).

    ``fraction`` (the share of the work done, when units differ in cost, e.g. the
    Mallows score's instances weighted by their pixels) replaces ``done / total``
    in the estimate. A count that starts again from 0 (a new sub-step) starts a new
    measure. ``warm_up`` is the number of units left out of the measure (default
    :data:`WARM_UP`); 0 for a few long units of the same cost (the submissions of a
    contest, read after the reference), measured from the report of 0 done.

    Examples
    --------
    >>> clock = iter([0.0, 1.0, 2.0, 3.0]).__next__
    >>> t = TimeLeft(clock=clock)
    >>> [t.text(d, 10) for d in (3, 4, 5, 10)]  # 1 unit a second once 3 are done
    ['', ', about 6 s left', ', about 5 s left', '']
    >>> t = TimeLeft(clock=iter([0.0, 20.0]).__next__, warm_up=0)
    >>> [t.text(d, 4) for d in (0, 1)]  # 20 s for the first of 4: 60 s for the rest
    ['', ', about 60 s left']
    """

    def __init__(self, clock: Callable[[], float] | None = None,
                 warm_up: int = WARM_UP) -> None:
        self.clock = clock  # default: time.monotonic, looked up at each call
        self.warm_up = warm_up  # 0: units without start-up costs, measured from the start
        self.base: tuple[float, float] | None = None  # (time, fraction) once warmed up

    def text(self, done: int, total: int, fraction: float | None = None) -> str:
        """``, about N s left`` for ``done`` of ``total`` units, or nothing. Without
        ``fraction`` the units are counted (a total that changes on the way, e.g. once a
        run knows its number of partitions, keeps the measured rate)."""
        now = (self.clock or time.monotonic)()
        if done == 0:
            self.base = (now, 0.0) if self.warm_up == 0 else None
            return ""
        if total <= 0:
            return ""
        at = float(done) if fraction is None else fraction
        if self.base is None:
            if done >= min(self.warm_up, total):
                self.base = (now, at)
            return ""
        since, start = now - self.base[0], self.base[1]
        if at <= start or since < MEASURED or done >= total:
            return ""
        rest = (total - done) if fraction is None else (1 - fraction)
        left = since * rest / (at - start)
        return f", about {left:.0f} s left" if left >= 1 else ""
