"""geoeval.arrays: the sort-based distinct values equal numpy.unique's."""

from __future__ import annotations

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
