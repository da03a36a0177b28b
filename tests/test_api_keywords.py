"""One name for the matchers across the Python API (``matchers=``, as the CLI's repeated
``-m/--matcher``), the former ``geoeval.rank(matcher=...)`` still working with a
DeprecationWarning, and a mistyped keyword pointing at the one meant."""

from __future__ import annotations

import warnings

import pytest
from shapely import box

import geoeval
from geoeval.errors import InputError

SQUARES = [box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)]


@pytest.fixture(scope="module")
def contest():
    ref = geoeval.ObjectSet.from_geometries(SQUARES)
    a = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10), *SQUARES[1:]])
    b = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)])
    return ref, [a, b]


@pytest.mark.parametrize(("given", "meant"), [
    ("matcher", "matchers"), ("iou_treshold", "iou_threshold"),
    ("gpkg_macher", "gpkg_matcher"), ("bootstrp", "bootstrap")])
def test_score_names_the_keyword_meant(contest, given, meant):
    ref, (a, _) = contest
    with pytest.raises(InputError, match=f"unknown keyword {given!r}: did you mean {meant}=\\?"):
        geoeval.score(ref, a, **{given: "bgm"})


def test_rank_takes_matchers_as_score_does(contest):
    ref, subs = contest
    r = geoeval.rank(ref, subs, names=["A", "B"], matchers="bgm")
    assert r.matcher == "bgm" and r.ranking == ("A", "B")
    assert geoeval.rank(ref, subs, names=["A", "B"], matchers=["bgm"]).values == r.values
    assert geoeval.scoring.rank(ref, subs, names=["A", "B"], matchers="bgm").values == r.values
    with pytest.raises(InputError, match=r"ranks by one matcher.*got 2 \(bgm, iou\): give one"):
        geoeval.rank(ref, subs, matchers=["bgm", "iou"])
    with pytest.raises(InputError, match=r"unknown keyword 'nmaes': did you mean names=\?"):
        geoeval.rank(ref, subs, nmaes=["A", "B"], matchers="bgm")


@pytest.mark.parametrize("rank", [geoeval.rank, geoeval.scoring.rank])
def test_the_former_matcher_keyword_still_works_with_a_warning(contest, rank):
    ref, subs = contest
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = rank(ref, subs, names=["A", "B"], matcher="hoover")
    deprecated = [w for w in caught if w.category is DeprecationWarning]
    assert len(deprecated) == 1 and "use matchers=" in str(deprecated[0].message)
    assert deprecated[0].filename == __file__  # pointing at the caller's line
    assert old.matcher == "hoover"
    assert old.values == rank(ref, subs, names=["A", "B"], matchers="hoover").values
    with pytest.raises(InputError, match="matcher='hoover' and matchers='iou' given; give "
                                         "matchers= only"):
        rank(ref, subs, matcher="hoover", matchers="iou")
