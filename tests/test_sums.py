"""Exact sums (:mod:`geoeval.sums`) and per-object lists that merge
(:mod:`geoeval.matching.lists`): what makes a scene's report the same number for
number whatever the order of its terms and the parts it was solved in."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.sums import ExactSum, as_float, exact_sum, exact_sums

FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@settings(max_examples=300, deadline=None)
@given(st.lists(FINITE, max_size=40), st.integers(0, 40), st.randoms(use_true_random=False))
def test_exact_sum_is_fsum_whatever_the_order_and_the_parts(values, cut, rnd):
    """The correctly rounded sum (math.fsum, an independent method), for any order of the
    terms and any cut into two parts added afterwards."""
    want = math.fsum(values)
    if math.isinf(want) or math.isnan(want):
        return  # fsum overflows; the exact sum does not (its float is then inf)
    assert float(exact_sum(values)) == want
    shuffled = list(values)
    rnd.shuffle(shuffled)
    cut = min(cut, len(values))
    assert float(exact_sum(shuffled[:cut]) + exact_sum(shuffled[cut:])) == want


def test_last_digit_of_a_float_sum_is_gone():
    """A float sum depends on how it is cut: ten times 0.1 summed whole is
    0.9999999999999999, summed as two halves 1.0. The exact sums agree, and equal
    math.fsum's correctly rounded 1.0."""
    v = [0.1] * 10
    halves = sum(v[:5]) + sum(v[5:])
    assert sum(v) != halves
    assert float(exact_sum(v)) == float(exact_sum(v[:5]) + exact_sum(v[5:])) == 1.0
    rng = np.random.default_rng(1)
    w = rng.uniform(0, 200, 3000).round(2) * 0.36
    parts = np.array_split(w, 7)
    assert float(sum((exact_sum(p) for p in parts), ExactSum())) == math.fsum(w.tolist())


def test_pixels_are_counted_and_multiplied_once():
    """Areas on a label grid: integer pixel counts, times the pixel area once."""
    pa = 0.36
    counts = np.array([3, 5, 11, 7])
    got = exact_sum(counts * pa, unit=pa)
    assert got.units == 26 and float(got) == 26 * pa
    assert float(exact_sum(counts[:2] * pa, pa) + exact_sum(counts[2:] * pa, pa)) == 26 * pa
    with pytest.raises(ValueError, match="units"):
        exact_sum([1.0]) + got
    assert float(ExactSum() + got) == 26 * pa  # zero takes any unit


def test_special_values_and_empty():
    assert float(exact_sum([])) == 0.0
    assert math.isnan(float(exact_sum([1.0, np.nan])))
    assert float(exact_sum([np.inf, 1.0])) == math.inf
    assert float(exact_sum([1e308, 1e308, -1e308])) == 1e308  # no overflow inside
    assert float(exact_sum([5e-324, 5e-324])) == 1e-323  # subnormals


def test_grouped_sums_and_object_tables():
    rng = np.random.default_rng(4)
    v = rng.normal(0, 1e4, 500) * 10.0 ** rng.integers(-5, 5, 500)
    g = rng.integers(0, 9, 500)
    got = exact_sums(v, g, 10)
    assert [float(x) for x in got] == [math.fsum(v[g == k].tolist()) for k in range(10)]
    table = np.empty((2, 2), dtype=object)
    table[:] = [[1, exact_sum([0.1, 0.2])], [ExactSum(), 3]]
    assert as_float(table).tolist() == [[1.0, math.fsum([0.1, 0.2])], [0.0, 3.0]]


def test_match_lists_of_parts_concatenate_to_the_whole_scene():
    """Lists built on disjoint parts of a scene (objects at their layer positions),
    concatenated, are the lists of the whole scene: instances by smallest reference
    position, members in order, missed and false alarms by position."""
    from geoeval.matching import match
    from geoeval.matching.lists import MatchLists
    from geoeval.objects import ObjectSet
    from geoeval.overlap import compute_overlap

    x = np.arange(12) * 10.0
    ref = shapely.box(x, 0, x + 6, 6)
    # a split (two pieces of ref 1), a merge (one detection over refs 4 and 5), a miss
    sub = np.concatenate([shapely.box(x[[0, 2, 3, 7, 8]] + 1, 0, x[[0, 2, 3, 7, 8]] + 7, 6),
                          [shapely.box(10, 0, 13, 6), shapely.box(13, 0, 16, 6),
                           shapely.box(40, 1, 56, 5), shapely.box(200, 0, 201, 1)]])
    ids_r = np.arange(12) + 100
    ids_s = np.arange(sub.size) + 500
    whole = compute_overlap(ObjectSet.from_geometries(ref, ids=ids_r),
                            ObjectSet.from_geometries(sub, ids=ids_s))
    m = match(whole, "mom")
    want = MatchLists.of(m, ids_r, ids_s)
    parts = []
    for rpos, spos in ((np.arange(0, 6), np.array([0, 1, 2, 5, 6, 7])),
                       (np.arange(6, 12), np.array([3, 4, 8]))):
        ov = compute_overlap(ObjectSet.from_geometries(ref[rpos], ids=ids_r[rpos]),
                             ObjectSet.from_geometries(sub[spos], ids=ids_s[spos]))
        parts.append(MatchLists.of(match(ov, "mom"), ids_r[rpos], ids_s[spos], None,
                                   rpos, spos))
    got = MatchLists.concat(parts[::-1])
    for name in ("ref_ids", "sub_ids", "missed", "missed_ids", "false_alarms",
                 "false_alarm_ids"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    for name in ("ref_ptr", "ref_idx", "sub_ptr", "sub_idx", "overlap", "kind"):
        assert np.array_equal(getattr(got.instances, name), getattr(want.instances, name))
    assert got.missed_ids.tolist() == [106, 109, 110, 111] and len(got) == 7
