"""reduce, argmin/argmax, scan and cumsum against NumPy."""
import numpy as np
import pytest

import parprim
from conftest import DTYPES, FLOAT_DTYPES, INT_DTYPES, SIZES, random_array


def lowest(dt):
    dt = np.dtype(dt)
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


def highest(dt):
    dt = np.dtype(dt)
    return np.inf if dt.kind == "f" else np.iinfo(dt).max


def close_sum(got, x):
    ref = np.sum(x.astype(np.float64))
    assert abs(float(got) - ref) <= 1e-5 * np.sum(np.abs(x.astype(np.float64))) + 1e-6


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sum_min_max(rng, dtype, n):
    x = random_array(rng, n, dtype)
    s, lo, hi = parprim.sum(x), parprim.min(x), parprim.max(x)
    assert isinstance(s, np.generic) and s.dtype == np.dtype(dtype)
    if np.dtype(dtype).kind == "f":
        close_sum(s, x)
    else:
        assert s == np.sum(x, dtype=dtype)  # integer sums wrap in the dtype
    assert lo == (np.min(x) if n else highest(dtype))
    assert hi == (np.max(x) if n else lowest(dtype))
    assert parprim.reduce(x, "max") == hi


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_min_max_nan(dtype):
    x = np.array([np.nan, 3, -1, np.nan, 7], dtype)
    assert parprim.min(x) == -1 and parprim.max(x) == 7
    assert np.isnan(parprim.min(np.full(5, np.nan, dtype)))
    assert parprim.argmin(x) == 2 and parprim.argmax(x) == 4
    v, i = parprim.argmax(np.full(3, np.nan, dtype), return_value=True)
    assert np.isnan(v) and i == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 33, 1000])
def test_argmin_argmax(rng, dtype, n):
    x = random_array(rng, n, dtype, small=True)  # many ties: the first index wins
    i = parprim.argmin(x)
    assert isinstance(i, np.integer) and i.dtype == np.int64
    assert i == np.argmin(x) and parprim.argmax(x) == np.argmax(x)
    v, j = parprim.argmax(x, return_value=True)
    assert v == np.max(x) and j == np.argmax(x)


def test_argmin_signed_zero_ties():
    x = np.array([1.0, 0.0, -0.0, 2.0], np.float32)
    assert parprim.argmin(x) == 1
    assert parprim.argmin(np.array([-0.0, 0.0], np.float64)) == 0


def test_argreduce_empty():
    v, i = parprim.argmin(np.zeros(0, np.float32), return_value=True)
    assert v == np.inf and i == 0


def ref_scan(x, op, inclusive):
    dt = x.dtype
    if op == "sum":
        acc = np.cumsum(x, dtype=dt) if dt.kind != "f" else np.cumsum(x.astype(np.float64))
        ident = 0
    elif op == "min":
        acc, ident = np.minimum.accumulate(x) if len(x) else x.copy(), highest(dt)
    else:
        acc, ident = np.maximum.accumulate(x) if len(x) else x.copy(), lowest(dt)
    if inclusive:
        return acc
    out = np.empty(len(x), acc.dtype)
    if len(x):
        out[0] = ident
        out[1:] = acc[:-1]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["sum", "min", "max"])
@pytest.mark.parametrize("inclusive", [True, False])
def test_scan(rng, dtype, n, op, inclusive):
    x = random_array(rng, n, dtype)
    got = parprim.scan(x, op, inclusive=inclusive)
    assert got.dtype == x.dtype and got.shape == x.shape
    ref = ref_scan(x, op, inclusive)
    if op == "sum" and np.dtype(dtype).kind == "f":
        bound = 1e-5 * ref_scan(np.abs(x.astype(np.float64)), "sum", inclusive) + 1e-6
        assert np.all(np.abs(got.astype(np.float64) - ref) <= bound)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_cumsum(rng, dtype):
    x = random_array(rng, 5000, dtype)
    np.testing.assert_array_equal(parprim.cumsum(x), np.cumsum(x, dtype=dtype))
    ex = parprim.cumsum(x, exclusive=True)
    np.testing.assert_array_equal(ex[1:], np.cumsum(x, dtype=dtype)[:-1])
    assert ex[0] == 0


def test_scan_keeps_shape_and_writes_out(rng):
    x = random_array(rng, 12, np.int64).reshape(3, 4)
    out = np.zeros((3, 4), np.int64)
    r = parprim.cumsum(x, out=out)
    assert r is out
    np.testing.assert_array_equal(out.ravel(), np.cumsum(x.ravel()))
    y = x.copy()
    parprim.cumsum(y, out=y)  # in place
    np.testing.assert_array_equal(y, out)


def test_reduce_out(rng):
    x = random_array(rng, 100, np.int32)
    out = np.zeros(1, np.int32)
    assert parprim.sum(x, out=out) is out and out[0] == np.sum(x, dtype=np.int32)


def test_int_sum_wraps():
    x = np.array([np.iinfo(np.int32).max, 1], np.int32)
    assert parprim.sum(x) == np.iinfo(np.int32).min
    assert parprim.sum(np.array([255, 2], np.uint8)) == 1
