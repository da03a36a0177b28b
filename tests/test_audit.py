"""The audit protocol: alterations, property checkers on synthetic curves, tables, end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from geoeval.audit import audit, summary
from geoeval.audit import properties as prop
from geoeval.audit import tables as tb
from geoeval.audit.alterations import make_grid, render, window
from geoeval.audit.compare import Cell, compare, geoeval_mark
from geoeval.audit.paper_tables import FINAL_SCORES, PAPER, PAPER_METRICS, paper_score_sums
from geoeval.audit.protocol import AuditResult, Curve, verdicts
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
    md = summary.markdown(r)
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


@pytest.mark.slow  # CPU budget of the README's command; CI runs it
def test_figures_written(small_audit, tmp_path):
    pytest.importorskip("matplotlib")
    from geoeval.report.audit_figures import write_figures

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


# ---------- issue 13: the audit against Hemery et al. (2010)'s own tables ----------


def test_paper_tables_transcription_matches_table_8():
    # 38 metrics x (3 + 5 + 4 + 5 + 5) property cells; the sums of the transcribed
    # marks reproduce Table 8's final scores (003 §4.6) for 36 of them
    assert len(PAPER) == 38 and sum(len(r) for m in PAPER.values() for r in m.values()) == 836
    sums = paper_score_sums()
    off = {m: (sums[m], FINAL_SCORES[m]) for m in PAPER_METRICS if sums[m] != FINAL_SCORES[m]}
    # ROB_loc: Table 4 marks axial symmetry and ✓+ only (2) but Table 8 prints 5;
    # Lq,3: Tables 6 and 7 give 4 stars each, Table 8 3 each (16 vs 14)
    assert off == {"rob_loc": (2, 5), "lq3": (16, 14)}
    # spot checks read off the tables
    assert PAPER["mar_gce"]["scale"] == {"strict_monotony": True, "uniform_continuity": True,
                                          "scale_dependency": "-", "shape_dependency": True}
    assert PAPER["fom"]["translation"]["scale_dependency"] == "+/-"
    assert PAPER["hau"]["translation"]["scale_dependency"] == "none"
    assert PAPER["hen1"]["rotation"] == {
        "axial_symmetry": False, "strict_monotony": False, "uniform_continuity": False,
        "scale_dependency": "none", "shape_dependency": False}


def test_paper_triangle_column_repeats_separation():
    # 003 §4.1: "when a metric satisfies the separation property, it also satisfies the
    # triangle inequality" -- in Table 3 the two columns are identical, row by row,
    # although e.g. DMoC (squared distances) cannot satisfy the triangle inequality
    assert all(PAPER[m]["distance"]["triangle"] == PAPER[m]["distance"]["separation"]
               for m in PAPER_METRICS)


def test_compare_counts_cells_by_hand():
    v = {g: {p: True for p in props} for g, props in tb.COLUMNS.items()}
    for g in ("translation", "scale", "rotation", "perspective"):
        v[g]["scale_dependency"] = "-"
    c = compare({"mar_gce": v, "iou": v})  # iou is not in the paper: skipped
    assert c.n == 22 and c.n_agree == 22 and c.rate == 1.0  # MAR_gce earns 22/22 in 003
    v2 = {g: dict(props) for g, props in v.items()}
    v2["distance"]["symmetry"] = {"holds": False}
    v2["scale"]["scale_dependency"] = "+/-"
    c2 = compare({"mar_gce": v2})
    assert c2.n_agree == 20
    assert [(d.group, d.prop) for d in c2.disagreements] == [
        ("distance", "symmetry"), ("scale", "scale_dependency")]
    assert c2.star_rate == 20 / 22
    assert "| 5 | MAR_gce | Scale dependency | ✓− | ✓+/− |" in c2.markdown()
    assert geoeval_mark("scale_dependency", None) == "none"
    assert Cell("pas", "scale", "scale_dependency", "+", "-").star_agree


def test_perspective_identity_renderings_do_not_break_monotony():
    # item 10: corners move by v/2, so (±1, 0) and (0, ±1) render exactly as the
    # ground truth; such a result is the identity again, not an alteration that
    # must score worse (003 §3.3; Table 7 gives PAS strict monotony)
    g = ground_truth("gt1")
    m = render(g, "perspective", np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert (m[1] == m[0]).all() and (m[2] == m[0]).all()
    r = audit(["pas"], ["perspective"], shapes=["gt1"], step=1, amplitude=4, triangles=0)
    assert r.verdicts["pas"]["perspective"]["strict_monotony"]["holds"]
    c = r.curves[("pas", "perspective", "gt1")]
    assert not prop.strict_monotony(c.forward, 4)  # without the identity flags it fails
    assert prop.strict_monotony(c.forward, 4, identical=c.identical)


def test_monotony_follows_003_protocol_as_written():
    # item 11, 003 §3.3: X, Y > 0 (and, adapted, X, Y < 0); at (X, Y):
    # M(X,Y) < M(X+1,Y) or M(X,Y) < M(X,Y+1), and M(X,Y) < M(X+1,Y+1)
    v = np.hypot(X, Y)
    flat_edge = v.copy()
    flat_edge[-1, :] = flat_edge[0, :] = v.max() + 1  # outer rows X = ±6 flat along Y
    assert prop.strict_monotony(flat_edge, C)  # only points with all three successors
    assert not prop.strict_monotony(flat_edge, C, outer_edge=True)  # the former rule
    mixed = v + 3 * (X * Y < 0) * (6 - np.abs(X))  # falls along X in the mixed quadrants
    assert prop.strict_monotony(mixed, C)
    assert not prop.strict_monotony(mixed, C, which="all")
    assert prop.uniform_continuity(mixed, C)
    gap = v + 5 * ((X < 0) & (Y > 2))  # a gap in a mixed quadrant only
    assert prop.uniform_continuity(gap, C) and not prop.uniform_continuity(gap, C, which="all")
    with pytest.raises(ValueError):
        prop.quadrants(v, C, "some")


def _synthetic_result(fwd: dict[str, np.ndarray], blind_rtol: float) -> AuditResult:
    curves = {}
    for (alt, shape), f in fwd.items():
        axis = AX if f.ndim == 2 else np.arange(-6.0, 7.0)
        curves[("m", alt, shape)] = Curve(axis, f, f, f, f == 0)
    return AuditResult(
        metrics=("m",), alterations=("translation", "rotation"), shapes=("gt1", "gt2"),
        settings={"quorum": 0.5, "axial_rtol": 0.01, "continuity_fraction": 1 / 8,
                  "continuity_ratio": 4.0, "blind_rtol": blind_rtol},
        curves=curves, triangles={})


def test_blind_verdict_tolerates_raster_noise():
    # item 11: a metric whose rotation curve only carries raster noise (here 0.5 % of
    # its response to translation) is blind to rotation: 003 leaves the row blank
    d = np.arange(-6.0, 7.0)
    noise = 0.005 * np.abs(d) / 6
    fwd = {("translation", "gt1"): np.hypot(X, Y) / 8.5, ("translation", "gt2"): np.hypot(X, Y) / 9,
           ("rotation", "gt1"): noise, ("rotation", "gt2"): 0.5 * noise}
    v = verdicts(_synthetic_result(fwd, 0.05), "m")
    assert tb.score(v, "rotation") == 0 and v["rotation"]["scale_dependency"] == "none"
    assert tb.score(v, "translation") == 4  # axial, monotony, continuity, scale "+"
    v0 = verdicts(_synthetic_result(fwd, 0.0), "m")  # zero tolerance: noise earns stars
    assert tb.score(v0, "rotation") >= 3


def test_hen1_is_blind_to_rotation_as_in_table_6():
    r = audit(["hen1"], ["rotation", "scale"], quick=True, shapes=["gt1", "gt2", "gt4", "gt5"],
              triangles=0)
    assert tb.score(r.verdicts["hen1"], "rotation") == 0  # 003 Table 6: HEN1 row blank
    assert r.verdicts["hen1"]["scale"]["uniform_continuity"]["holds"]  # Table 5: ✓


def test_formula_readings_follow_the_paper_verdicts():
    # item 12: KUL summed over the result contour (Table 3: not symmetric, separation,
    # triangle); BHA and JEN on dark contours over a bright background (Table 4: ✓−)
    from geoeval.measures.localization import METRICS

    assert METRICS["kul"].params == {"support": "result"}
    assert METRICS["bha"].params == {"levels": "background"}
    assert METRICS["jen"].params["levels"] == "background"
    r = audit(["kul", "bha", "jen"], ["translation", "scale"], quick=True,
              shapes=["gt1", "gt2", "gt4", "gt5"], triangles=8)
    kul = r.verdicts["kul"]["distance"]
    assert not kul["symmetry"]["holds"] and kul["separation"]["holds"] and kul["triangle"]["holds"]
    assert r.verdicts["bha"]["translation"]["scale_dependency"] == "-"
    assert r.verdicts["jen"]["translation"]["scale_dependency"] == "-"


def test_audit_reports_agreement_with_the_paper(small_audit):
    d = small_audit.to_dict()
    cmp = d["paper_comparison"]
    c = compare(small_audit.verdicts)
    assert cmp["cells"] == c.n == 4 * 22  # pas, hau, rob_loc, dmoc: all in 003
    assert cmp["agreeing"] == c.n_agree and cmp["rate"] == pytest.approx(c.rate)
    assert "agree with Hemery et al." in small_audit.to_markdown()


def test_recorded_causes_name_real_cells():
    from geoeval.audit.compare import CAUSES

    for m, g, p in CAUSES:
        assert m == "*" or m in PAPER
        assert g == "*" or g in tb.COLUMNS
        assert p == "*" or any(p in cols for cols in tb.COLUMNS.values())


def test_geoeval_audit_stays_callable_once_its_package_is_imported():
    """``import geoeval.audit.shapes`` binds ``geoeval.audit`` to the package (Python's
    import system does): calling it still runs the audit (docs/audit.md does both)."""
    import importlib

    import geoeval

    importlib.import_module("geoeval.audit.shapes")
    assert isinstance(geoeval.audit, type(importlib))
    with pytest.raises(ValueError, match="nope"):
        geoeval.audit(["pas"], ["nope"], quick=True)
