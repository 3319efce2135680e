"""histogram (even bins, edges) and histogram_image against NumPy."""
import numpy as np
import pytest

import parprim
from conftest import DTYPES, random_array


def ref_even(x, bins, lo, hi):
    """API.md's rule: lo <= x < hi, bin min(bins-1, floor((x - lo) * bins / (hi - lo))) in double."""
    d = x.astype(np.float64)
    d = d[(d >= lo) & (d < hi)]
    idx = np.minimum(bins - 1, np.floor((d - lo) * bins / (hi - lo)).astype(np.int64))
    return np.bincount(idx, minlength=bins).astype(np.int64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 1000, 65537])
@pytest.mark.parametrize("bins", [1, 7, 256, 1024])
def test_histogram_even(rng, dtype, n, bins):
    x = random_array(rng, n, dtype, small=True)  # integers in [0, 50]: some above hi
    lo, hi = (-150.0, 170.0) if np.dtype(dtype).kind == "f" else (3.0, 41.5)
    got = parprim.histogram(x, bins, range=(lo, hi))
    assert got.dtype == np.int64 and got.shape == (bins,)
    np.testing.assert_array_equal(got, ref_even(x, bins, lo, hi))


def test_histogram_matches_numpy_but_hi():
    # numpy counts values equal to hi in its last bin; parprim (API.md) does not
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, np.nan, -1.0], np.float32)
    np.testing.assert_array_equal(parprim.histogram(x, 2, range=(0, 2)), [2, 2])
    ref, _ = np.histogram(x[x < 2.0], 2, range=(0, 2))
    np.testing.assert_array_equal(parprim.histogram(x, 2, range=(0, 2)), ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_histogram_edges(rng, dtype):
    x = random_array(rng, 10000, dtype)
    edges = np.unique(random_array(rng, 40, np.float64)).astype(np.float64)
    got = parprim.histogram(x, edges)
    ref, _ = np.histogram(x[x.astype(np.float64) < edges[-1]], edges)
    np.testing.assert_array_equal(got, ref)
    # a plain list of edges is taken too
    np.testing.assert_array_equal(parprim.histogram(x, edges.tolist()), ref)


def test_histogram_out(rng):
    x = random_array(rng, 1000, np.float32)
    out = np.full(8, -1, np.int64)
    assert parprim.histogram(x, 8, range=(-100, 100), out=out) is out
    np.testing.assert_array_equal(out, ref_even(x, 8, -100, 100))


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("padded", [False, True])
def test_histogram_image(rng, channels, padded):
    h, w = 37, 53
    big = rng.integers(0, 256, (h, w + (9 if padded else 0), channels), dtype=np.uint8)
    img = big[:, :w]  # a view with padded rows: read in place through its row pitch
    got = parprim.histogram_image(img if channels > 1 else img[:, :, 0])
    assert got.shape == (channels, 256) and got.dtype == np.int64
    for c in range(channels):
        np.testing.assert_array_equal(got[c], np.bincount(img[:, :, c].ravel(), minlength=256))
