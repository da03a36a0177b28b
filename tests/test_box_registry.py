"""The registry of box protocols (geoeval.challenges.registry).

A toy protocol registered in this test only becomes ``geoeval boxes toy`` (its
parameters as options, checked at the edge), ``geoeval.evaluate_toy`` and a JSON
report, with no other edit; every built-in entry's evaluator, tables, readers and
command resolve, and its parameters are the evaluator's keywords and its
command's options.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import geoeval
from geoeval.challenges import registry
from geoeval.errors import InputError
from geoeval.validate import Rule


@dataclass(frozen=True)
class ToyResult:
    """Counts boxes of the submission scored at least ``min_score``."""

    kept: int
    total: int
    mode: str
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"protocol": "toy", "kept": self.kept, "total": self.total, "mode": self.mode}


def evaluate_toy(reference, submission, *, min_score: float = 0.5, mode: str = "count",
                 above: bool = False) -> ToyResult:
    from geoeval.io.boxes import read_boxes

    ref = read_boxes(reference, side="reference")
    sub = read_boxes(submission, side="submission")
    kept = int((sub.scores > min_score if above else sub.scores >= min_score).sum())
    warn = ("toy: nothing kept",) if kept == 0 else ()
    return ToyResult(kept, len(sub) + 0 * len(ref), mode, warn)


def toy_tables(result: ToyResult) -> list:
    from rich.table import Table

    table = Table(title="toy protocol")
    table.add_column("kept")
    table.add_column("total")
    table.add_row(str(result.kept), str(result.total))
    return [table]


TOY = registry.BoxProtocol(
    "toy", evaluate_toy, toy_tables, "A toy protocol: detections above a score.",
    readers=("geoeval.io.boxes:read_boxes",),
    parameters=(
        registry.Option("min_score", 0.5, "Lowest score kept, 0 <= s <= 1.",
                        rule=Rule(low=0.0, high=1.0)),
        registry.Option("mode", "count", "What to report.", choices=("count", "share")),
        registry.Option("above", False, "Scores strictly above.")),
    api="evaluate_toy",
    examples=("$ geoeval boxes toy gt/ det/ --min-score 0.7",))


@pytest.fixture
def boxes(tmp_path):
    (tmp_path / "gt").mkdir()
    (tmp_path / "det").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("car 0 0 10 10\n")
    (tmp_path / "det" / "a.txt").write_text("car 0.9 0 0 10 10\ncar 0.6 1 1 9 9\n"
                                            "car 0.3 5 5 9 9\n")
    return tmp_path / "gt", tmp_path / "det"


def test_toy_protocol_through_the_api(boxes):
    with registry.registered(TOY):
        # the API name comes from the entry (wrapped: its warnings are Python warnings too)
        assert inspect.unwrap(geoeval.evaluate_toy) is evaluate_toy
        assert "evaluate_toy" in dir(geoeval)
        res = geoeval.evaluate_boxes("toy", *boxes, min_score=0.6)
        assert (res.kept, res.total) == (2, 3)
        assert geoeval.evaluate_boxes("toy", *boxes, min_score=0.6, above=True).kept == 1
        from geoeval.errors import GeoevalWarning

        with pytest.warns(GeoevalWarning, match="toy: nothing kept"):  # r.warnings, warned
            assert geoeval.evaluate_toy(*boxes, min_score=0.99).warnings
        with pytest.raises(InputError, match="min_score must be in"):
            geoeval.evaluate_boxes("toy", *boxes, min_score=2)
        with pytest.raises(InputError, match="mode must be one of count, share"):
            geoeval.evaluate_boxes("toy", *boxes, mode="x")
        with pytest.raises(InputError, match="unknown parameter 'alpha'"):
            geoeval.evaluate_boxes("toy", *boxes, alpha=1)
    globals_ = vars(geoeval)
    globals_.pop("evaluate_toy", None)  # cached by the first lookup
    assert "toy" not in registry.names()
    with pytest.raises(AttributeError):
        geoeval.evaluate_toy  # noqa: B018
    with pytest.raises(InputError, match="unknown box protocol 'toy'"):
        geoeval.evaluate_boxes("toy", *boxes)


#: Runs each argument list (JSON on argv) through geoeval's command line in one fresh
#: interpreter where the toy is registered before the command line is built (as a
#: plug-in registers at import time); prints each run's exit code, stdout and stderr.
DRIVER = """
import contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import test_box_registry as t
from geoeval.challenges import registry
registry.register(t.TOY)
from geoeval.cli.main import main
runs = []
for args in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    runs.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(runs))
"""


def _cli(runs: list[list[str]], cwd: Path) -> list[tuple[int, str, str]]:
    done = subprocess.run([sys.executable, "-c", DRIVER, str(Path(__file__).parent),
                           json.dumps(runs)], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return [tuple(r) for r in json.loads(done.stdout)]


def test_toy_protocol_through_the_cli_and_the_json_report(boxes, tmp_path):
    gt, det = (str(p) for p in boxes)
    ok, strict, bad_range, bad_choice, help_toy, help_boxes = _cli([
        ["boxes", "toy", gt, det, "--min-score", "0.6", "--mode", "share", "--json",
         "toy.json"],
        ["boxes", "toy", gt, det, "--strict", "--min-score", "1"],
        ["boxes", "toy", gt, det, "--min-score", "1.5"],
        ["boxes", "toy", gt, det, "--mode", "x"],
        ["boxes", "toy", "--help"],
        ["boxes", "--help"]], tmp_path)
    assert ok[0] == 0, ok[2]
    assert "toy protocol" in ok[1]
    report = json.loads((tmp_path / "toy.json").read_text())
    assert report == {"protocol": "toy", "kept": 2, "total": 3, "mode": "share"}
    assert strict[0] == 2 and "toy: nothing kept" in strict[2]
    # the parameter's rule and choices checked at the edge: one line, exit 2
    assert bad_range[0] == 2 and len(bad_range[2].strip().splitlines()) == 1
    assert "--min-score" in bad_range[2] and "must be in [0, 1]" in bad_range[2]
    assert bad_choice[0] == 2 and "'x' is not one of" in bad_choice[2]
    assert "--min-score" in help_toy[1]
    assert "geoeval boxes toy gt/ det/ --min-score 0.7" in help_toy[1]
    assert "toy" in help_boxes[1]


@pytest.mark.parametrize("name", registry.BUILTIN)
def test_builtin_entries_resolve_and_agree_with_their_functions(name):
    from geoeval.cli.boxes import _command_and_doc

    protocol = registry.get(name)
    evaluate = registry.resolve(protocol.evaluate)
    assert callable(registry.resolve(protocol.tables))
    assert all(callable(registry.resolve(r)) for r in protocol.readers)
    assert inspect.unwrap(getattr(geoeval, protocol.api)) is evaluate
    keywords = inspect.signature(evaluate).parameters
    for p in protocol.parameters:  # each parameter is a keyword of the evaluator ...
        assert p.keyword in keywords, (name, p.keyword)
        default = keywords[p.keyword].default
        assert default == p.default or (name.startswith("robin") and p.keyword == "preset")
    command, _ = _command_and_doc(protocol)
    from geoeval.cli.groups import with_groups

    options = {o for q in inspect.signature(with_groups(command)).parameters.values()
               for o in _option_names(q)}
    for p in protocol.parameters:  # ... and an option of its command
        assert p.option in options, (name, p.option)


def _option_names(param: inspect.Parameter) -> set[str]:
    meta = getattr(param.annotation, "__metadata__", ())
    names = {"--" + param.name.replace("_", "-")}
    for m in meta:
        names.update(o for o in (getattr(m, "param_decls", None) or ()) if o.startswith("--"))
        default = getattr(m, "default", None)
        if isinstance(default, str) and default.startswith("--"):
            names.add(default)
    return names


def test_registry_refuses_a_second_entry_of_a_name_and_reserved_options():
    with pytest.raises(ValueError, match="parameter 'strict' clashes"):
        registry.register(registry.BoxProtocol(
            "x", "m:f", "m:g", "t", parameters=(registry.Option("strict", False, "h"),)))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get("voc"))
    with pytest.raises(ValueError, match="API name 'evaluate_voc' is already taken"):
        registry.register(registry.BoxProtocol("voc2", "m:f", "m:g", "t",
                                               api="evaluate_voc"))


def test_option_checks():
    task = registry.Option("task", 1, "help", choices=(1, 2))
    assert task.check("2") == 2 and task.check(1) == 1
    with pytest.raises(InputError, match="task must be one of 1, 2, got 3"):
        task.check(3)
    flag = registry.Option("points", False, "help")
    with pytest.raises(InputError, match="must be true or false"):
        flag.check(np.float64(1.0))
