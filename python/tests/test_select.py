"""select, select_flagged and partition against NumPy masks."""
import operator

import numpy as np
import pytest

import parprim
from conftest import DTYPES, SIZES, random_array

CMPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("cmp", list(CMPS))
def test_select_partition(rng, dtype, n, cmp):
    x = random_array(rng, n, dtype, small=True)
    value = 25
    mask = CMPS[cmp](x, np.array(value, dtype))
    got = parprim.select(x, cmp, value)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x[mask])
    part, count = parprim.partition(x, cmp, value)
    assert count == int(mask.sum())
    np.testing.assert_array_equal(part, np.concatenate([x[mask], x[~mask]]))


def test_select_names_and_nan():
    x = np.array([1.0, np.nan, 3.0, np.nan], np.float32)
    np.testing.assert_array_equal(parprim.select(x, "gt", 2), [3.0])
    assert len(parprim.select(x, "==", np.nan)) == 0  # NaN compares false ...
    assert len(parprim.select(x, "!=", 5.0)) == 4  # ... except under !=


def test_select_64bit_exact():
    big = 2**64 - 1
    x = np.array([big, big - 1, 0], np.uint64)
    np.testing.assert_array_equal(parprim.select(x, "==", big), [big])
    y = np.array([2**53 + 1, 2**53], np.int64)  # not representable in a double
    np.testing.assert_array_equal(parprim.select(y, "==", 2**53 + 1), [2**53 + 1])


@pytest.mark.parametrize("flag_dtype", [np.bool_, np.uint8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_select_flagged(rng, flag_dtype, dtype):
    x = random_array(rng, 1001, dtype)
    flags = rng.integers(0, 2, 1001).astype(flag_dtype)
    np.testing.assert_array_equal(parprim.select_flagged(x, flags), x[flags.astype(bool)])


def test_select_empty():
    got = parprim.select(np.zeros(0, np.int32), ">", 0)
    assert got.shape == (0,) and got.dtype == np.int32


def test_partition_out(rng):
    x = random_array(rng, 100, np.float64)
    out = np.empty_like(x)
    r, count = parprim.partition(x, "<", 0.0, out=out)
    assert r is out and count == int((x < 0).sum())
    np.testing.assert_array_equal(out, np.concatenate([x[x < 0], x[x >= 0]]))
