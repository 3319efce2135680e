import os

import numpy as np
import pytest

import parprim

# every dtype the C API takes, as NumPy dtypes
DTYPES = [np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
INT_DTYPES = [np.uint8, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
SIZES = [0, 1, 31, 32, 33, 1000, 4097]


def random_array(rng, n, dtype, small=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = (0, 50) if small else (info.min, info.max)
    return rng.integers(lo, hi, size=n, dtype=dtype, endpoint=True)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def ctx():
    """The context the tests run on: the default one (ctest sets PARPRIM_BACKEND=cpu)."""
    return parprim.default_context()


def backend_name():
    return parprim.default_context().backend


def expect_backend():
    want = os.environ.get("PARPRIM_BACKEND")
    return want
