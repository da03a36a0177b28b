"""geoeval's command line as the plugin sees it: options, command, progress, errors.

Plain Python (no QGIS import), so that the same code is tested outside QGIS.
The plugin never imports geoeval into QGIS's interpreter: it runs geoeval's own
``geoeval`` console script in geoeval's environment, as the GRASS, SAGA and
Orfeo ToolBox providers run their tools, exchanging files and reading the
machine-readable progress lines that ``GEOEVAL_PROGRESS=jsonl`` makes geoeval
write on stderr (one JSON object per line: ``progress``, ``step``, ``done``,
``total``).

Each :class:`Option` is one Processing parameter and the CLI flag it becomes,
with the CLI's default; ``tests/test_qgis_plugin.py`` checks every flag and
default against ``geoeval score --help`` / ``geoeval rank --help``'s own
declarations, so the dialog cannot drift from the command.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

#: Matchers of ``geoeval score`` (``--matcher``), in the CLI's order.
MATCHERS = ("bgm", "hoover", "mom", "iou")
#: Geometry measures of ``--measures``.
MEASURES = ("pq", "clinton", "polis", "boundary-iou")

#: Environment variables of QGIS's own Python, GDAL and PROJ that must not reach
#: geoeval's interpreter (OSGeo4W and the macOS bundle set them): geoeval's
#: rasterio/pyogrio/pyproj wheels carry their own GDAL and PROJ data.
FOREIGN_ENV = ("PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONEXECUTABLE",
               "PYTHONUSERBASE", "GDAL_DATA", "GDAL_DRIVER_PATH", "PROJ_LIB", "PROJ_DATA",
               "GEOTIFF_CSV")


@dataclass(frozen=True)
class Option:
    """One Processing parameter of an algorithm and the CLI flag it is passed as.

    ``kind``: ``double``, ``int``, ``bool``, ``string``, ``enum`` (one of
    ``choices``), ``enums`` (several, the flag repeated), ``list`` (several,
    comma-separated), ``crs`` or ``switch`` (``choices`` are the flags).
    ``default`` is the CLI's; ``None`` means the option is not passed unless set.
    """

    name: str
    flag: str
    kind: str
    default: Any
    description: str
    help: str
    choices: tuple[str, ...] = ()
    advanced: bool = True

    @property
    def optional(self) -> bool:
        return self.default is None or self.kind in ("enums", "list")

    def args(self, value: Any) -> list[str]:
        """The CLI arguments for ``value`` (nothing when it is the CLI's default)."""
        if value is None or value == "" or value == [] or value == self.default:
            return []
        if self.kind == "bool":
            return [self.flag] if value else []
        if self.kind == "switch":
            return [str(value)]
        if self.kind == "enums":
            if set(value) == set(self.default or ()):
                return []
            return [a for v in value for a in (self.flag, str(v))]
        if self.kind == "list":
            return [self.flag, ",".join(str(v) for v in value)]
        if self.kind == "double":
            return [self.flag, repr(float(value))]
        return [self.flag, str(value)]


_READERS = (
    Option("BAND", "--band", "int", 1, "Raster band holding the labels",
           "Band of a raster input holding the object labels (1 = the first)."),
    Option("BACKGROUND", "--background", "int", 0, "Raster background label",
           "Label of raster pixels that belong to no object."),
    Option("ID_FIELD", "--id-field", "string", None, "Field with object ids",
           "Vector field with object ids (both inputs); default: the feature ids."),
    Option("REF_ID_FIELD", "--ref-id-field", "string", None, "Reference field with object ids",
           "Field with the reference's object ids, when it differs from the submission's "
           "(instead of the field for both inputs)."),
    Option("SUB_ID_FIELD", "--sub-id-field", "string", None,
           "Submission field with object ids",
           "Field with the submission's object ids (every submission's, for a ranking), "
           "when it differs from the reference's."),
    Option("EVAL_CRS", "--eval-crs", "crs", None, "CRS for areas and distances",
           "Projected CRS to compute areas and distances in. Default: the reference's; a "
           "geographic or Mercator one is replaced by a local equal-area projection, with a "
           "warning."),
)

_THRESHOLDS = (
    Option("HOOVER_THRESHOLD", "--hoover-threshold", "double", 0.6, "Hoover threshold T",
           "Hoover et al. (1996): two objects match when each covers at least T of the "
           "other; 0.5 < T <= 1.", advanced=False),
    Option("IOU_THRESHOLD", "--iou-threshold", "double", 0.5, "IoU matcher threshold",
           "Minimum intersection over union of a one-to-one match, 0 < t <= 1.", advanced=False),
    Option("MIN_OVERLAP", "--min-overlap", "double", None, "MOM minimum overlap",
           "MOM (Özdemir et al. 2010): minimum overlap as a fraction of the smaller object."),
    Option("RESOLUTION", "--resolution", "double", None, "Mallows grid step",
           "Grid step in CRS units for the Mallows score of two vector layers; default: a "
           "tenth of the median reference object's side."),
)

SCORE_OPTIONS: tuple[Option, ...] = (
    Option("MATCHERS", "--matcher", "enums", MATCHERS, "Matchers",
           "Matchers to run: bgm (bipartite graph matching), hoover (Hoover et al. 1996), "
           "mom (Özdemir et al. 2010), iou (one-to-one at an IoU threshold).",
           MATCHERS, advanced=False),
    *_THRESHOLDS,
    Option("MALLOWS", "--mallows", "bool", False, "Mallows score for every matcher",
           "Also compute the Mallows score (Özdemir et al. 2010, eq. 12) for the instances of "
           "the other matchers (always computed for MOM)."),
    Option("APPROXIMATE", "", "switch", None, "Mallows: pool large instances",
           "--approximate pools large instances into blocks, --exact never does. Default: "
           "exact up to the announced size, pooled and flagged beyond.",
           ("--approximate", "--exact")),
    *_READERS,
    Option("CLASS_FIELD", "--class-field", "string", None, "Class field",
           "Vector field with object classes: each class is also scored on its own.",
           advanced=False),
    Option("CRS", "--crs", "crs", None, "CRS of inputs without one",
           "CRS of vector inputs that have none (a Shapefile without .prj)."),
    Option("SIZE_BINS", "--size-bins", "string", None, "Size bins",
           "Also score by object size: 'coco' (32², 96² pixels) or increasing area edges in "
           "square CRS units, e.g. 100,900."),
    Option("ZONE_FIELD", "--zone-field", "string", None, "Zone field",
           "Field of the zones layer naming the zones (default: the feature number)."),
    Option("BOOTSTRAP", "--bootstrap", "int", None, "Bootstrap replicates",
           "Spatial block bootstrap replicates: confidence intervals for every measure."),
    Option("CONFIDENCE", "--confidence", "double", 0.95, "Bootstrap confidence",
           "Coverage of the bootstrap intervals, 0 < c < 1."),
    Option("SEED", "--seed", "int", 0, "Bootstrap seed",
           "Seed of the bootstrap draws (same seed, same intervals)."),
    Option("BLOCK_SIZE", "--block-size", "double", None, "Bootstrap block side",
           "Bootstrap block side in CRS units (default: a tenth of the reference bounds)."),
    Option("BREAKDOWN", "--breakdown", "bool", False, "Error breakdown",
           "What fixing misses, false alarms, merges, splits or localisation would gain "
           "(TIDE-style, Bolya et al. 2020).", advanced=False),
    Option("MEASURES", "--measures", "list", None, "Geometry measures",
           "Geometry measures: pq (Kirillov et al. 2019), clinton (Clinton et al. 2010), "
           "polis (Avbelj et al. 2015), boundary-iou (Cheng et al. 2021).", MEASURES),
    Option("BOUNDARY_WIDTH", "--boundary-width", "double", None, "Boundary IoU band width",
           "Boundary IoU band width in CRS units (default: 2 % of each reference object's "
           "bounding-box diagonal, at least one pixel)."),
    Option("GPKG_MATCHER", "--gpkg-matcher", "enum", None, "Matcher shown in the layers",
           "Matcher whose result the status layers show (default: mom when it ran, else the "
           "first matcher run).", MATCHERS),
    Option("JOBS", "--jobs", "int", None, "Processes",
           "Processes for the Mallows score (default: every core)."),
)

RANK_OPTIONS: tuple[Option, ...] = (
    Option("MATCHER", "--matcher", "enum", "mom", "Matcher",
           "Matcher whose precision, recall and accuracy are the indicators (Özdemir et al. "
           "2010, §4.3).", MATCHERS, advanced=False),
    *_THRESHOLDS,
    *_READERS,
    Option("METHOD", "--method", "enum", "auto", "Linear extensions",
           "auto, exact (enumerate the up-sets) or mcmc (sample linear extensions).",
           ("auto", "exact", "mcmc")),
    Option("MAX_STATES", "--max-states", "int", 2_000_000, "Up-set cap for exact",
           "Largest number of up-sets the exact method enumerates."),
    Option("SAMPLES", "--samples", "int", None, "MCMC steps counted",
           "MCMC steps counted (mcmc)."),
    Option("BURN_IN", "--burn-in", "int", None, "MCMC steps discarded",
           "MCMC steps discarded (mcmc)."),
    Option("SEED", "--seed", "int", 0, "MCMC seed", "Seed of the MCMC sampler."),
    Option("MAX_ROUNDS", "--max-rounds", "int", 20, "CRF round limit",
           "Round limit of the iterated cumulative rank frequency."),
    Option("BOOTSTRAP", "--bootstrap", "int", None, "Bootstrap replicates",
           "Spatial block bootstrap replicates: how often each submission takes each rank."),
    Option("CONFIDENCE", "--confidence", "double", 0.95, "Bootstrap confidence",
           "Coverage of the bootstrap intervals, 0 < c < 1."),
    Option("BLOCK_SIZE", "--block-size", "double", None, "Bootstrap block side",
           "Bootstrap block side in CRS units (default: a tenth of the reference bounds)."),
    Option("JOBS", "--jobs", "int", None, "Processes",
           "Processes for the Mallows score (default: every core)."),
)


def cli_args(options: tuple[Option, ...], values: dict[str, Any]) -> list[str]:
    """The CLI arguments of the parameter ``values`` (by parameter name)."""
    return [a for o in options for a in o.args(values.get(o.name))]


def flag_parameters(options: tuple[Option, ...]) -> dict[str, str]:
    """CLI flag -> parameter name, to name the parameter in a CLI message."""
    out = {o.flag: o.name for o in options if o.flag}
    out.update({c: o.name for o in options if o.kind == "switch" for c in o.choices})
    return out


# --- finding the command ------------------------------------------------------------


class GeoevalError(Exception):
    """geoeval failed (or was not found): ``str(error)`` is one line for the log."""


class Cancelled(Exception):
    """The run was cancelled and its process ended."""


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """QGIS's environment without its Python/GDAL/PROJ variables (:data:`FOREIGN_ENV`)."""
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_ENV}
    env.update(extra or {})
    return env


def find_command(setting: str | None = None) -> str | None:
    """The ``geoeval`` console script: the provider setting (a file, or a folder
    holding it), else ``$GEOEVAL_COMMAND``, else ``geoeval`` on ``PATH``."""
    for given in (setting, os.environ.get("GEOEVAL_COMMAND")):
        if given:
            given = os.path.expanduser(given)
            if os.path.isdir(given):
                return shutil.which("geoeval", path=given)
            return given if os.path.isfile(given) else None
    return shutil.which("geoeval")


def version(command: str, timeout: float = 60.0) -> str:
    """``geoeval --version``'s version, or :class:`GeoevalError` saying why not."""
    try:
        proc = subprocess.run([command, "--version"], capture_output=True, text=True,
                              env=clean_env(), timeout=timeout, **_no_window())
    except (OSError, subprocess.SubprocessError) as exc:
        raise GeoevalError(f"{command} --version failed: {exc}") from None
    text = proc.stdout.strip()
    if proc.returncode != 0 or not text.startswith("geoeval "):
        last = (proc.stderr.strip().splitlines() or [text or f"exit code {proc.returncode}"])[-1]
        raise GeoevalError(f"{command} --version failed: {last}")
    return text.split()[1]


def _no_window() -> dict[str, Any]:
    """Windows: no console window, and a process group that can be stopped together."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NO_WINDOW
                | subprocess.CREATE_NEW_PROCESS_GROUP}
    return {}


# --- running it ---------------------------------------------------------------------


class Stages:
    """Overall progress (0-100) from geoeval's steps: each expected step gets a
    share of the bar in proportion to its weight (default 1), a step's
    ``done/total`` count fills its share; steps not in the plan leave the bar where
    it is. Never goes backwards."""

    def __init__(self, plan: list[str], weights: dict[str, float] | None = None) -> None:
        self.plan = plan
        weight = [(weights or {}).get(step, 1.0) for step in plan]
        total = sum(weight) or 1.0
        self.start = {}
        self.share = {}
        done = 0.0
        for k, step in enumerate(plan):  # (no zip(strict=): QGIS 3.22 may run Python 3.9)
            self.start[step], self.share[step] = 100.0 * done / total, 100.0 * weight[k] / total
            done += weight[k]
        self.percent = 0.0

    def update(self, step: str, done: int | None, total: int | None) -> float:
        if step in self.start:
            within = done / total if done is not None and total else 0.0
            self.percent = max(self.percent,
                               self.start[step] + self.share[step] * min(within, 1.0))
        return self.percent


#: The Mallows score of an instance set takes several times its matching (rasterising
#: and solving each instance): its share of the bar.
MALLOWS_WEIGHT = 4.0


def score_stages(matchers: list[str] | tuple[str, ...], mallows: bool = False) -> Stages:
    """The steps ``geoeval score`` reports, in order (see geoeval.scoring.scene): the
    Mallows score follows MOM's matching, and every matcher's with ``--mallows``."""
    plan = ["reading", "overlap"]
    for m in matchers:
        plan.append(f"matching ({m})")
        if m == "mom" or mallows:
            plan.append(f"Mallows score ({m})")
    plan.append("writing the GeoPackage")
    return Stages(plan, {p: MALLOWS_WEIGHT for p in plan if p.startswith("Mallows")})


def rank_plan() -> list[str]:
    """The steps ``geoeval rank`` reports, in order (see geoeval.scoring.contest);
    ``scoring: NAME (k/n)`` fills the middle share submission by submission."""
    return ["reading the reference", "scoring", "ranking"]


def run(command: str, args: list[str], feedback: Any, stages: Stages, *,
        rename: dict[str, str] | None = None, flags: dict[str, str] | None = None,
        poll: float = 0.1) -> None:
    """Run ``command args`` with ``GEOEVAL_PROGRESS=jsonl`` and report to ``feedback``
    (a ``QgsProcessingFeedback`` or anything with its methods).

    Progress lines drive ``setProgress`` and ``setProgressText`` (a new step at
    once, its counts every two seconds); warnings go to ``pushWarning``, other
    lines to ``pushDebugInfo``. ``feedback.isCanceled()`` is checked every ``poll``
    seconds: the process (and its worker processes) is then terminated and
    :class:`Cancelled` raised. A non-zero exit raises :class:`GeoevalError`
    with the CLI's one-line message, temporary paths replaced by their names in
    ``rename`` and a CLI flag followed by its parameter name from ``flags``.
    """
    # COLUMNS: rich wraps messages at the width; a warning stays one line
    env = clean_env({"GEOEVAL_PROGRESS": "jsonl", "PYTHONUNBUFFERED": "1",
                     "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "10000"})
    feedback.pushCommandInfo(" ".join([command, *args]))
    extra = {} if sys.platform == "win32" else {"start_new_session": True}
    try:
        proc = subprocess.Popen([command, *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env, text=True, encoding="utf-8", errors="replace",
                                **extra, **_no_window())
    except OSError as exc:
        raise GeoevalError(f"cannot start {command}: {exc.strerror or exc}") from None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    messages: list[str] = []
    shown = _Shown()
    finished = False
    while not finished:
        if feedback.isCanceled():
            _stop(proc)
            reader.join(timeout=5)
            proc.stderr.close()
            raise Cancelled()
        try:
            line = lines.get(timeout=poll)
        except queue.Empty:
            continue
        while line is not None:
            _report(line, feedback, stages, shown, messages)
            try:
                line = lines.get_nowait()
            except queue.Empty:
                break
        else:
            finished = True
    code = proc.wait()
    proc.stderr.close()
    if code != 0:
        raise GeoevalError(error_line(messages, code, rename or {}, flags or {}))
    feedback.setProgress(100.0)


class _Shown:
    """The step text last shown, and when: a new step is shown at once, counts of
    the same step at most every ``every`` seconds (the log stays readable)."""

    def __init__(self, every: float = 2.0) -> None:
        self.step: str | None = None
        self.time = 0.0
        self.every = every

    def due(self, step: str) -> bool:
        now = time.monotonic()
        if step != self.step or now - self.time >= self.every:
            self.step, self.time = step, now
            return True
        return False


def _report(line: str, feedback: Any, stages: Stages, shown: _Shown,
            messages: list[str]) -> None:
    record = None
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
    if isinstance(record, dict) and "progress" in record:
        step = str(record.get("step") or record["progress"])
        feedback.setProgress(stages.update(step, record.get("done"), record.get("total")))
        if shown.due(step):
            feedback.setProgressText(str(record["progress"]))
        return
    if not line.strip():
        return
    messages.append(line)
    if line.startswith("warning:"):
        feedback.pushWarning(line)
    elif "error:" not in line:  # an error line becomes the exception's message
        feedback.pushDebugInfo(line)


def error_line(messages: list[str], code: int, rename: dict[str, str],
               flags: dict[str, str]) -> str:
    """The CLI's one-line message (its last ``error:`` line, else its last line)."""
    errors = [m for m in messages if "error:" in m]
    text = (errors or messages or [f"geoeval stopped with exit code {code}"])[-1].strip()
    for path, name in sorted(rename.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, name)
    hint = text.find(" (see 'geoeval ")
    if hint >= 0:
        text = text[:hint]
    for flag, name in flags.items():
        if f"'{flag}'" in text:
            text += f" (parameter {name})"
            break
    return text


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """End geoeval and the worker processes it started (its process group)."""
    if proc.poll() is not None:
        return
    try:
        if sys.platform == "win32":
            proc.send_signal(signal.CTRL_BREAK_EVENT)
        else:
            os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + grace
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        try:
            if sys.platform == "win32":
                proc.kill()
            else:
                os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


def rank_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per submission of a ``geoeval rank`` JSON report, in rank order: rank,
    name, the indicators, the rank interval (the possible ranks), the expected rank
    of the deciding CRF round and the share of the orderings the indicators allow
    that rank it first (the columns of ``geoeval rank``'s table)."""
    values = report.get("submissions") or {}
    intervals = report.get("rank_intervals") or {}
    expected = report.get("deciding_expected_ranks") or report.get("expected_ranks") or {}
    frequencies = report.get("rank_frequencies") or {}
    rows = []
    for r, name in enumerate(report.get("ranking") or [], start=1):
        lo, hi = intervals.get(name, (None, None))
        row = {"rank": r, "name": name}
        row.update({k: values.get(name, {}).get(k) for k in report.get("indicators") or []})
        freq = [f for f in frequencies.get(name) or [] if f is not None]
        row.update(interval_low=lo, interval_high=hi, expected_rank=expected.get(name),
                   first_in_orderings=freq[0] / sum(freq) if freq and sum(freq) else None)
        rows.append(row)
    return rows
