"""The test suite's CPU budget: CPU time per test, per file and per process.

``python -m pytest -q --cpu-report`` (or ``GEOEVAL_CPU_REPORT=20`` in the environment,
as CI sets it for the README's command) ends the run with the CPU time (user + system)
of the whole command and its top consumers: files (their tests plus their collection,
i.e. importing the module in every process that collects it) and single tests. A test's
time counts its set-up and tear-down (fixtures it is the first or last to use) and the
processes it started and waited for (console scripts, process pools, Dask workers).

Why CPU and not wall time: the README's command must finish in under two minutes on two
idle cores, but the machines that run the suite are often shared, and wall time there
says nothing. The CPU of the whole command (every xdist worker, the controller, their
children) divided by two is the wall time two idle cores need, so the budget is
:data:`BUDGET` seconds of CPU, two minutes' worth of two cores less a margin. The report
only prints (timings vary by machine and load); nothing fails on it.
"""

from __future__ import annotations

import os
import resource
from collections import defaultdict
from typing import Any

import pytest

#: CPU seconds (user + system, every process) the README's command may use.
BUDGET = 190.0
#: Environment variable that turns the report on (its value: how many rows).
ENV = "GEOEVAL_CPU_REPORT"


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its children it waited for (user + system)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("geoeval").addoption(
        "--cpu-report", type=int, nargs="?", const=20, default=None, metavar="N",
        help=f"print the CPU time of the run and its N biggest files and tests "
             f"(default 20; also ${ENV}=N)")


def pytest_configure(config: pytest.Config) -> None:
    rows = config.getoption("cpu_report", None)
    if rows is None and os.environ.get(ENV, "").strip():
        rows = int(os.environ[ENV])
    if rows:
        config.pluginmanager.register(CpuReport(config, rows), "geoeval-cpu-report")


class CpuReport:
    """Records CPU per test and per collected file in every process; the controller
    gathers the workers' records (``workeroutput``) and prints the report."""

    def __init__(self, config: pytest.Config, rows: int) -> None:
        self.config = config
        self.rows = rows
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        self.started = sum(_cpu())  # interpreter, pytest and plugins up to here
        self.tests: dict[str, list[float]] = {}  # node id -> [own, children]
        self.collected: dict[str, float] = defaultdict(float)  # file -> CPU to collect it
        self.workers: list[dict[str, Any]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
        before = _cpu()
        yield
        after = _cpu()
        self.tests[item.nodeid] = [after[0] - before[0], after[1] - before[1]]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        before = _cpu()
        yield
        after = _cpu()
        where = collector.nodeid.split("::")[0] or "(session)"
        self.collected[where] += sum(after) - sum(before)

    def record(self) -> dict[str, Any]:
        own, kids = _cpu()
        return {"worker": self.worker or "main", "total": own + kids, "started": self.started,
                "tests": self.tests, "collected": dict(self.collected)}

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.worker is not None:  # an xdist worker: hand the record to the controller
            self.config.workeroutput["geoeval_cpu"] = self.record()  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        out = getattr(node, "workeroutput", {}).get("geoeval_cpu")
        if out is not None:
            self.workers.append(out)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.worker is not None:
            return
        if self.workers:  # the controller's own CPU, then its workers' (with their children;
            own, kids = _cpu()  # counted by the system once they ended, else as they reported)
            total = own + max(kids, sum(w["total"] for w in self.workers))
            records = self.workers
        else:
            me = self.record()
            total, records = me["total"], [me]
        write = terminalreporter.write_line
        terminalreporter.section("CPU time (user + system, every process)")
        write(report(records, total, self.rows))


def report(records: list[dict[str, Any]], total: float, rows: int) -> str:
    """The report's text from the processes' records."""
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for rec in records:
        for node, (own, kids) in rec["tests"].items():
            row = per_file[node.split("::")[0]]
            row[0] += own + kids
            row[2] += kids
            row[3] += 1
        for where, cpu in rec["collected"].items():
            per_file[where][1] += cpu
    tests = sorted(((own + kids, node) for rec in records
                    for node, (own, kids) in rec["tests"].items()), reverse=True)
    started = sum(rec["started"] for rec in records)
    in_tests = sum(cpu for cpu, _ in tests)
    collecting = sum(row[1] for row in per_file.values())
    lines = [f"{total:.1f} s CPU in all (budget {BUDGET:.0f} s: two idle cores under two "
             f"minutes); {len(records)} process(es) starting {started:.1f} s, collecting "
             f"{collecting:.1f} s, running {len(tests)} tests {in_tests:.1f} s"]
    if total > BUDGET:
        lines.append(f"OVER BUDGET by {total - BUDGET:.1f} s: make the tests below cheaper, or "
                     "mark what a fast test already covers in small as slow")
    lines.append(f"{'CPU s':>7} {'collect':>7} {'subproc':>7} {'tests':>5}  file")
    files = sorted(per_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for where, (run, coll, kids, n) in files[:rows]:
        lines.append(f"{run + coll:7.1f} {coll:7.1f} {kids:7.1f} {n:5d}  {where}")
    lines.append(f"{'CPU s':>7}  test")
    lines += [f"{cpu:7.2f}  {node}" for cpu, node in tests[:rows]]
    return "\n".join(lines)
