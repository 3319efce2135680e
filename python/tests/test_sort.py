"""sort, argsort, pairs and merge against NumPy's stable sort."""
import numpy as np
import pytest

import parprim
from conftest import DTYPES, FLOAT_DTYPES, SIZES, random_array

ALGORITHMS = ["auto", "radix", "merge", "sample", "quick"]


def stable_order(x, descending):
    """np.argsort(kind="stable"), or its descending twin that keeps ties in input order
    (NaN first, as the contract puts it)."""
    if not descending:
        return np.argsort(x, kind="stable")
    n = len(x)
    return (n - 1 - np.argsort(x[::-1], kind="stable"))[::-1]


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()  # -0.0 / +0.0 positions and NaN kept exactly


def special_floats(rng, dtype, n):
    pool = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0], dtype)
    return np.where(rng.random(n) < 0.5, rng.choice(pool, n), random_array(rng, n, dtype)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_keys(rng, dtype, n, descending):
    x = random_array(rng, n, dtype, small=True)
    same_bits(parprim.sort(x, descending=descending), x[stable_order(x, descending)])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_float_order_rules(rng, dtype, descending):
    x = special_floats(rng, dtype, 3000)
    order = stable_order(x, descending)
    same_bits(parprim.sort(x, descending=descending), x[order])
    np.testing.assert_array_equal(parprim.argsort(x, descending=descending), order)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", [np.uint32, np.float32, np.int64, np.float64])
def test_sort_algorithms(rng, algorithm, dtype):
    x = special_floats(rng, dtype, 5000) if np.dtype(dtype).kind == "f" else random_array(rng, 5000, dtype, small=True)
    for descending in (False, True):
        order = stable_order(x, descending)
        same_bits(parprim.sort(x, algorithm=algorithm, descending=descending), x[order])
        keys, idx = parprim.sort(x, algorithm=algorithm, descending=descending, return_indices=True)
        np.testing.assert_array_equal(idx, order)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 1000])
def test_argsort(rng, dtype, n):
    x = random_array(rng, n, dtype, small=True)
    idx = parprim.argsort(x)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, np.argsort(x, kind="stable"))
    idx32 = parprim.argsort(x, index_dtype="int32")
    assert idx32.dtype == np.int32
    np.testing.assert_array_equal(idx32, np.argsort(x, kind="stable"))


@pytest.mark.parametrize("vdtype", [np.int32, np.uint32, np.float32, np.int64, np.uint64, np.float64])
@pytest.mark.parametrize("kdtype", [np.uint8, np.int32, np.float32, np.uint64, np.float64])
def test_sort_pairs(rng, kdtype, vdtype):
    x = random_array(rng, 2000, kdtype, small=True)
    v = random_array(rng, 2000, vdtype)
    keys, vals = parprim.sort(x, values=v)
    order = stable_order(x, False)
    same_bits(keys, x[order])
    same_bits(vals, v[order])
    vout = np.empty_like(v)
    kout = np.empty_like(x)
    k2, v2 = parprim.sort(x, values=v, descending=True, out=kout, values_out=vout)
    assert k2 is kout and v2 is vout
    order = stable_order(x, True)
    same_bits(kout, x[order])
    same_bits(vout, v[order])


def test_sort_in_place(rng):
    x = random_array(rng, 777, np.float32)
    ref = np.sort(x, kind="stable")
    assert parprim.sort(x, out=x) is x
    same_bits(x, ref)


def test_sort_flattens(rng):
    x = random_array(rng, 12, np.int32).reshape(3, 4)
    np.testing.assert_array_equal(parprim.sort(x), np.sort(x.ravel()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", [(0, 0), (0, 5), (7, 0), (1000, 333), (31, 2049)])
@pytest.mark.parametrize("descending", [False, True])
def test_merge(rng, dtype, sizes, descending):
    a = random_array(rng, sizes[0], dtype, small=True)
    b = random_array(rng, sizes[1], dtype, small=True)
    a = a[stable_order(a, descending)]
    b = b[stable_order(b, descending)]
    both = np.concatenate([a, b])
    same_bits(parprim.merge(a, b, descending=descending), both[stable_order(both, descending)])


def test_merge_is_stable_on_signed_zeros():
    a = np.array([-0.0, 0.0, 1.0], np.float32)
    b = np.array([0.0, -0.0, 1.0], np.float32)
    same_bits(parprim.merge(a, b), np.array([-0.0, 0.0, 0.0, -0.0, 1.0, 1.0], np.float32))


def test_merge_out(rng):
    a, b = np.arange(5, dtype=np.int64), np.arange(3, dtype=np.int64)
    out = np.zeros(8, np.int64)
    assert parprim.merge(a, b, out=out) is out
    np.testing.assert_array_equal(out, [0, 0, 1, 1, 2, 2, 3, 4])
