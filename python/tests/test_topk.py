"""topk and topk over rows against a NumPy sort (NaN counts as largest)."""
import numpy as np
import pytest

import parprim
from conftest import DTYPES, random_array


def check_topk(x, k, largest, values, indices):
    ref = np.sort(x, kind="stable")  # NaN last: the largest
    ref = ref[::-1][:k] if largest else ref[:k]
    assert values.dtype == x.dtype and indices.dtype == np.int64
    np.testing.assert_array_equal(values, ref)
    assert len(set(indices.tolist())) == k  # k distinct positions ...
    np.testing.assert_array_equal(x[indices], values)  # ... holding those values


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", [(0, 0), (1, 1), (100, 0), (100, 100), (1000, 10), (5000, 257)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(rng, dtype, n, k, largest):
    x = random_array(rng, n, dtype)
    r = parprim.topk(x, k, largest=largest)
    assert isinstance(r, parprim.TopK)
    values, indices = r
    assert r.values is values and r.indices is indices
    check_topk(x, k, largest, values, indices)


def test_topk_nan_largest():
    x = np.array([1.0, np.nan, 5.0, -np.inf], np.float32)
    v, i = parprim.topk(x, 2)
    assert np.isnan(v[0]) and v[1] == 5.0 and list(i) == [1, 2]
    v, i = parprim.topk(x, 2, largest=False)
    assert list(v) == [-np.inf, 1.0] and list(i) == [3, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64, np.float64])
@pytest.mark.parametrize("rows,cols,k", [(1, 10, 3), (17, 100, 10), (64, 33, 33), (5, 0, 0), (0, 8, 2)])
def test_topk_rows(rng, dtype, rows, cols, k):
    x = random_array(rng, rows * cols, dtype).reshape(rows, cols)
    values, indices = parprim.topk(x, k)
    assert values.shape == (rows, k) and indices.shape == (rows, k)
    for r in range(rows):
        check_topk(x[r], k, True, values[r], indices[r])
    values, indices = parprim.topk(x, k, largest=False, dim=1)
    for r in range(rows):
        check_topk(x[r], k, False, values[r], indices[r])


def test_topk_bad_k():
    with pytest.raises(ValueError, match="k"):
        parprim.topk(np.zeros(10, np.float32), 12)
    with pytest.raises(ValueError):
        parprim.topk(np.zeros(10, np.float32), -1)
    with pytest.raises(ValueError, match="dim"):
        parprim.topk(np.zeros((2, 3), np.float32), 1, dim=0)
