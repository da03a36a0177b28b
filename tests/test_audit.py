"""The audit protocol: alterations, property checkers on synthetic curves, tables, end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from geoeval.audit import audit
from geoeval.audit import properties as prop
from geoeval.audit import tables as tb
from geoeval.audit.alterations import make_grid, render, window
from geoeval.audit.protocol import AuditResult
from geoeval.audit.shapes import SHAPE_NAMES, ground_truth
from geoeval.errors import InputError

AX = np.arange(-6.0, 7.0)
X, Y = np.meshgrid(AX, AX, indexing="ij")
C = 6  # index of 0


# ---------- grids and alterations ----------
def test_full_grid_counts_match_the_paper():
    per_gt = sum(make_grid(k).params.shape[0] - 1 for k in
                 ("translation", "scale", "rotation", "perspective"))
    assert per_gt == 7380
    assert per_gt * len(SHAPE_NAMES) == 118_080


def test_alterations_of_a_box_are_exact():
    g = ground_truth("gt1")  # rows/cols 96..160
    full = render(g, "translation", np.zeros((1, 2)))[0]
    assert full.sum() == 64 * 64 and full[96:160, 96:160].all()
    moved = render(g, "translation", np.array([[3.0, -5.0]]))[0]
    np.testing.assert_array_equal(moved, np.roll(full, (3, -5), axis=(0, 1)))
    sc = render(g, "scale", np.array([[2.0, -3.0]]))[0]
    rows, cols = np.nonzero(sc.any(axis=1))[0], np.nonzero(sc.any(axis=0))[0]
    assert (rows[0], rows[-1] + 1, cols[0], cols[-1] + 1) == (94, 162, 99, 157)
    assert sc.sum() == 68 * 58
    plus = render(g, "rotation", np.array([[17.0]]))[0]
    minus = render(g, "rotation", np.array([[-17.0]]))[0]
    np.testing.assert_array_equal(plus, minus[:, ::-1])  # mirror images about x = 128
    np.testing.assert_array_equal(render(g, "rotation", np.array([[90.0]]))[0], full)
    p = render(g, "perspective", np.array([[8.0, 0.0]]))[0]
    rows = np.nonzero(p.any(axis=1))[0]
    assert p[rows[-1]].sum() < 64 < p[rows[0]].sum()  # top widened, bottom narrowed
    q = render(g, "perspective", np.array([[7.0, 3.0], [-7.0, -3.0]]))
    np.testing.assert_array_equal(q[0], q[1][::-1, ::-1])


def test_window_holds_every_altered_object():
    g = ground_truth("gt9_car")
    grid = make_grid("rotation", angle_step=15)
    r0, r1, c0, c1 = window(g, grid)
    full = render(g, "rotation", grid.params)
    assert full.sum() == full[:, r0:r1, c0:c1].sum()


def test_bad_alteration_names():
    with pytest.raises(InputError, match="unknown alteration"):
        make_grid("shear")
    with pytest.raises(InputError, match="unknown ground truth"):
        ground_truth("gt99")


# ---------- property checkers on synthetic metric curves ----------
def test_symmetry_and_separation_checkers():
    v = np.hypot(X, Y)
    assert prop.symmetry(v, v.copy())
    assert not prop.symmetry(v, v * 1.01)
    ident = (X == 0) & (Y == 0)
    assert prop.separation(v, ident)
    assert not prop.separation(np.maximum(v - 1, 0), ident)  # zero for altered results
    assert not prop.separation(v + 1, ident)  # M(I_gt, I_gt) != 0
    assert prop.separation(np.zeros(3), np.ones(3, bool))


def test_triangle_checker():
    a, b = np.array([4.0]), np.array([2.0])
    assert prop.triangle_inequality(a, b, b)  # |x|: 4 <= 2 + 2
    assert not prop.triangle_inequality(a**2, b**2, b**2)  # squared: 16 > 8


def test_axial_symmetry_checker():
    assert prop.axial_symmetry(np.abs(X) + 2 * np.abs(Y))
    assert prop.axial_symmetry(X * Y)  # point symmetric
    assert not prop.axial_symmetry(np.abs(X) + 0.5 * X * (X > 0))
    assert prop.axial_symmetry(np.abs(AX) + 0.001 * (AX > 0), rtol=0.01)  # within tolerance


def test_strict_monotony_checker():
    assert prop.strict_monotony(np.hypot(X, Y), C)
    assert not prop.strict_monotony(np.minimum(np.abs(X) + np.abs(Y), 5), C)  # plateau
    # "or" rule: growing along one axis is enough when the diagonal grows too
    w = np.where((np.abs(X) == 0) | (np.abs(X) == 6), 1.0, -0.5)  # falls along Y inside
    assert prop.strict_monotony(10 * np.abs(X) + w * np.abs(Y), C)
    d = np.arange(-90.0, 91.0, 5.0)
    rises_then_falls = np.sin(np.deg2rad(2 * np.abs(d)))  # peaks at 45°
    c = int(np.flatnonzero(d == 0)[0])
    assert not prop.strict_monotony(rises_then_falls, c)
    assert prop.strict_monotony(rises_then_falls, c, limit=9)  # up to 45°


def test_uniform_continuity_checker():
    assert prop.uniform_continuity(np.abs(AX), C)
    assert prop.uniform_continuity(100 * np.abs(AX), C)  # steep but steady
    assert not prop.uniform_continuity(np.abs(AX) + 10 * (np.abs(AX) >= 4), C)  # gap
    assert not prop.uniform_continuity((AX != 0).astype(float), C)  # jump at the identity
    assert not prop.uniform_continuity(np.hypot(X, Y) + 20 * (X >= 3), C)
    assert prop.uniform_continuity(np.hypot(X, Y), C)


def test_scale_and_shape_dependency_checkers():
    base = np.hypot(X, Y)
    assert prop.scale_dependency(2 * base, base) == "+"
    assert prop.scale_dependency(base, 2 * base) == "-"
    assert prop.scale_dependency(base * (1 + 0.5 * np.sign(X)), base) == "+/-"
    assert prop.scale_dependency(base, base.copy()) == "none"
    assert prop.shape_dependency(base, base + X**2)
    assert not prop.shape_dependency(base, base.copy())


# ---------- tables ----------
def _fake_result(verdict_sets: dict[str, dict]) -> AuditResult:
    r = AuditResult(metrics=tuple(verdict_sets), alterations=("translation", "scale",
                    "rotation", "perspective"), shapes=("gt1",), settings={
                        "step": 1, "angle_step": 1, "quorum": 0.75}, curves={}, triangles={})
    r.verdicts = verdict_sets
    return r


def _all(holds: bool, scale_dep: str) -> dict:
    h = {"holds": holds}
    out = {"distance": {k: h for k in ("symmetry", "separation", "triangle")}}
    for a in ("translation", "scale", "rotation", "perspective"):
        g = {k: h for k in tb.COLUMNS[a] if k not in ("scale_dependency", "shape_dependency")}
        g["scale_dependency"] = scale_dep
        g["shape_dependency"] = holds
        out[a] = g
    return out


def test_table_layout_and_scores():
    r = _fake_result({"pas": _all(True, "+"), "hen1": _all(False, "+/-")})
    assert tb.headers(r, "distance") == ["Metric", "Representation", "Symmetry",
                                         "Separation", "Triangle inequality", "Score"]
    assert tb.headers(r, "scale")[2:] == ["Strict monotony", "Uniform continuity",
                                          "Scale dependency", "Shape dependency", "Score"]
    rows = tb.table_rows(r, "translation")
    assert rows[0] == ["PAS", "Mask", "✓", "✓", "✓", "✓+", "✓", "★★★★★"]
    assert rows[1] == ["HEN1", "Mask", "", "", "", "✓+/−", "", ""]
    syn = tb.synthesis_rows(r)
    assert syn[0] == ["PAS", "Mask", "★★★", "★★★★★", "★★★★", "★★★★★", "★★★★★", "22"]
    assert syn[1][-1] == "0"
    assert tb.headers(r, "synthesis")[-1] == "Final score (/22)"
    md = tb.markdown(r)
    order = [md.index(f"Table {i}") for i in range(3, 9)]
    assert order == sorted(order)


# ---------- end to end (quick, few metrics) ----------
@pytest.fixture(scope="module")
def small_audit():
    return audit(["pas", "hau", "rob_loc", "dmoc"], quick=True,
                 shapes=["gt1", "gt2", "gt4", "gt5"], triangles=8)


def test_quick_audit_end_to_end(small_audit):
    r = small_audit
    assert r.n_results == 4 * (3 * 168 + 36)
    pas = r.verdicts["pas"]
    assert all(pas["distance"][k]["holds"] for k in ("symmetry", "separation", "triangle"))
    t = pas["translation"]
    assert t["strict_monotony"]["holds"] and t["uniform_continuity"]["holds"]
    assert t["scale_dependency"] == "+"  # a shift hurts a small square more (003 Table 4)
    assert r.verdicts["hau"]["translation"]["scale_dependency"] == "none"  # 003 Table 4
    assert tb.score(r.verdicts["rob_loc"], "scale") == 0  # blind to scaling (003 Table 5)
    assert not r.verdicts["dmoc"]["distance"]["triangle"]["holds"]  # squared distance
    assert not r.verdicts["dmoc"]["distance"]["symmetry"]["holds"]
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["max_score"] == 22 and d["metrics"]["pas"]["final_score"] >= 18


def test_figures_written(small_audit, tmp_path):
    pytest.importorskip("matplotlib")
    from geoeval.audit.figures import write_figures

    paths = write_figures(small_audit, tmp_path)
    names = sorted(p.name for p in paths)
    assert "diagonal_rotation.png" in names and "surface_translation.png" in names
    assert all(p.stat().st_size > 1000 for p in paths)


def test_cli_audit(tmp_path):
    from geoeval.cli.main import main

    out, md = tmp_path / "a.json", tmp_path / "a.md"
    rc = main(["audit", "--metric", "pas", "--alteration", "translation", "--quick",
               "--json", str(out), "--markdown", str(md)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["alterations"] == ["translation"]
    assert "pas" in data["metrics"] and "### Table 4" in md.read_text()
    assert main(["audit", "--metric", "nope", "--quick"]) == 2
