"""Every ```python block of the README and docs/ runs from a checkout on the
bundled sample, or starts with a ``# template`` comment (then it must at least
compile): issue 35, item 9, as tests/test_docs_commands.py does for the console
blocks.

The blocks run in this interpreter (one namespace each, ``__name__ ==
"__main__"``), from a scratch folder holding a link to sample_data/, so that
what they write lands there. A number a block states in a comment after an
expression (``res.results["iou"].f1   # 0.741``), or after a ``print``, is checked
against the value, to the comment's last digit. Blocks that score the whole sample with MOM (its
Mallows score is the long step), write a page or a bootstrap, start a Dask
cluster, run the metric audit or the Mallows score of a whole matching are
``slow`` (CI's second pass).
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[str, str]]:
    """``(page:line, code)`` of every ```python block of the README and docs/."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{doc.name}:{line}", match.group(1)))
    return found


def is_template(code: str) -> bool:
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    return first.lower().startswith("# template")


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _strings(node: ast.AST | None) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)} if node is not None else set()


def slow(code: str) -> bool:
    """Whether a block takes seconds even on an idle machine (see the module's text)."""
    for call in (n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)):
        name = _name(call)
        keywords = {k.arg: k.value for k in call.keywords}
        if name in ("audit", "mallows_scores"):
            return True
        if name in ("score", "rank", "score_scenes"):
            chosen = keywords.get("matchers", keywords.get("matcher"))
            if chosen is None or "mom" in _strings(chosen):
                return True
            if {"html", "bootstrap", "mallows"} & set(keywords):
                return True
            if "dask" in _strings(keywords.get("engine")):
                return True
    return False


BLOCKS = python_blocks()
RUN = [(where, code) for where, code in BLOCKS if not is_template(code)]


def test_every_block_runs_or_is_a_template():
    assert len(BLOCKS) >= 18  # the pages' blocks are found
    assert RUN, "no block runs"


@pytest.mark.parametrize("code", [code for _, code in BLOCKS if is_template(code)],
                         ids=[where for where, code in BLOCKS if is_template(code)])
def test_template_block_compiles(code):
    compile(code, "<template>", "exec")


def claims(code: str) -> dict[int, list[tuple[float, float]]]:
    """Numbers stated in a line's trailing comment, by line, before any word
    (``# 0.741``, ``# [0.833, 0.874] around …``): ``(value, tolerance)``, the
    tolerance half a unit of the last digit (a whole unit when cut: ``0.657…``)."""
    out = {}
    for k, line in enumerate(code.splitlines(), start=1):
        if "#" not in line:
            continue
        comment = line.split("#", 1)[1].strip()
        head = re.match(r"^[\[\(\s\d.,\-…]+", comment)
        found = re.findall(r"(-?\d+(?:\.(\d+))?)(…?)", head.group(0)) if head else []
        if found:
            out[k] = [(float(number), 10.0 ** -len(decimals) * (1 if cut else 0.5))
                      for number, decimals, cut in found]
    return out


def _numbers(value) -> list[float]:
    if isinstance(value, (bool, np.bool_)):
        return []
    if isinstance(value, (int, float, np.integer, np.floating)):
        return [float(value)]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [x for v in value for x in _numbers(v)]
    return []


def _printed(statement: ast.stmt) -> bool:
    call = getattr(statement, "value", None)
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "print")


def run_block(where: str, code: str) -> None:
    """Run ``code`` statement by statement; the value of an expression, or the
    numbers a ``print`` writes, are checked against the numbers its line's comment
    states."""
    stated = claims(code)
    namespace = {"__name__": "__main__"}
    for statement in ast.parse(code, filename=where).body:
        wanted = stated.get(statement.end_lineno)
        if isinstance(statement, ast.Expr) and wanted and _printed(statement):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(ast.Module([statement], []), where, "exec"), namespace)
            print(out.getvalue(), end="")
            got = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", out.getvalue())]
        elif isinstance(statement, ast.Expr):
            value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)
            got = _numbers(value)
        else:
            exec(compile(ast.Module([statement], []), where, "exec"), namespace)
            continue
        for (number, tolerance), actual in zip(wanted or [], got, strict=False):
            assert math.isclose(actual, number, abs_tol=tolerance * (1 + 1e-9)), (
                f"{where}, line {statement.end_lineno}: {actual} is not {number}")


@pytest.mark.parametrize("code", [pytest.param(c, marks=pytest.mark.slow) if slow(c) else c
                                  for _, c in RUN], ids=[w for w, _ in RUN])
def test_block_runs_on_the_sample(code, request, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    run_block(request.node.callspec.id, code)


def test_claims_are_read_from_comments():
    assert claims("x   # 0.741\ny  # [0.833, 0.874] around F1 = 0.850\nz # 2.50 px\n"
                  "w  # 0.657…") == {
        1: [(0.741, 0.0005)], 2: [(0.833, 0.0005), (0.874, 0.0005)], 3: [(2.5, 0.005)],
        4: [(0.657, 0.001)]}
    assert claims("r.ranking  # ('A', 'B')\nq # eq. 12 per instance") == {}
    with pytest.raises(AssertionError, match="is not 0.75"):
        run_block("test", "x = 0.7407\nx   # 0.75")
    run_block("test", "x = 0.7407\nx   # 0.741")
    run_block("test", "print(3, round(0.61357, 4))   # 3 0.6136")
    with pytest.raises(AssertionError, match="is not 4"):
        run_block("test", "print(3, 5)   # 3 4")


def test_slow_blocks_are_the_heavy_ones():
    assert slow('geoeval.score("a.tif", "b.tif")')  # every matcher: MOM's Mallows score
    assert slow('geoeval.rank("a.tif", ["b.tif"])')  # rank's matcher is MOM by default
    assert slow('geoeval.score("a", "b", matchers=["iou"], html="r.html")')
    assert not slow('geoeval.score("a", "b", matchers=["bgm", "iou"])')
    assert not slow('geoeval.rank("a", ["b"], matchers="bgm")')
