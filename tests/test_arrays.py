"""geoeval.arrays: the sort-based distinct values equal numpy.unique's."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from geoeval.arrays import has_duplicates, unique

_dtypes = st.sampled_from([np.int8, np.int64, np.uint32, np.uint64, np.bool_, np.float64,
                           np.float32, "U3", "S2"])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=_dtypes, shape=hnp.array_shapes(min_dims=1, max_dims=2,
                                                              min_side=0, max_side=30))
def test_unique_is_numpy_unique(data, dtype, shape):
    a = data.draw(hnp.arrays(np.dtype(dtype), shape))
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    assert has_duplicates(a) == (want.size != a.size)


def test_unique_of_lists_and_empty():
    assert unique([3, 1, 3]).tolist() == [1, 3]
    assert unique(np.zeros(0, np.uint32)).dtype == np.uint32
    assert unique([]).size == 0 and not has_duplicates([])
    assert has_duplicates(np.array([2**63 - 1, 5, 2**63 - 1]))
    assert not has_duplicates(np.arange(10**5))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.uint8, np.int16, np.uint32, np.int64,
                                              np.uint64]),
       n_ids=st.integers(1, 300), n_values=st.sampled_from([0, 10, 5000, 9000]),
       spread=st.sampled_from([1, 3, 1000]), absent=st.booleans())
def test_label_index_is_a_binary_search(data, dtype, n_ids, n_values, spread, absent):
    # the table path (many values, ids packed in a range) and the binary search agree,
    # values missing from the ids or outside their range included
    from geoeval.grid import label_index

    info = np.iinfo(dtype)
    span = min(n_ids * spread, int(info.max) - int(info.min))
    lo = data.draw(st.integers(int(info.min), int(info.max) - span))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ids = np.array(sorted({lo + int(x) for x in rng.integers(0, span + 1, n_ids)}), dtype=dtype)
    values = ids[rng.integers(0, ids.size, n_values)]
    if absent and n_values:  # a gap between ids if there is one, else past the last
        exact = [int(v) for v in ids]  # Python integers: uint64 differences exact
        gaps = [a + 1 for a, b in itertools.pairwise(exact) if b - a > 1]
        miss = gaps[0] if gaps else min(exact[-1] + 1, int(info.max))
        values[rng.integers(0, n_values)] = dtype(miss)
    want = np.searchsorted(ids, values)
    got = label_index(ids.astype(np.int64) if dtype != np.uint64 else ids, values)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from([np.uint8, np.int16, np.uint32, np.int64, np.uint64]),
       data=st.data())
def test_lookup_finds_what_a_binary_search_finds(dtype, data):
    # table (small ranges) and binary search (wide ones), values absent, outside the
    # range, at the dtype's limits
    from geoeval.arrays import lookup

    info = np.iinfo(dtype)
    ints = st.integers(int(info.min), int(info.max))
    near = st.integers(max(int(info.min), -40), min(int(info.max), 40))
    ids = np.array(sorted(data.draw(st.sets(st.one_of(near, ints), min_size=1, max_size=50))),
                   dtype=dtype)
    values = np.array(data.draw(st.lists(st.one_of(near, ints), max_size=60)), dtype=dtype)
    pos, found = lookup(ids, values)
    ref = np.minimum(np.searchsorted(ids, values), ids.size - 1)
    assert np.array_equal(found, ids[ref] == values)
    assert np.array_equal(pos[found], ref[found])
    assert ((0 <= pos) & (pos < ids.size)).all()
