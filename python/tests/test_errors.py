"""Bad arguments: the right exception, the library's message, nothing written."""
import numpy as np
import pytest

import parprim


def test_library_messages_become_value_errors():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match=r"pp_topk: k \(12\) > n \(10\)"):
        parprim.topk(x, 12)
    with pytest.raises(ValueError, match="pp_histogram_even"):
        parprim.histogram(x, 0, range=(0, 1))
    with pytest.raises(ValueError, match="pp_histogram_range"):
        parprim.histogram(x, np.array([0.0, 2.0, 1.0]))  # edges not increasing


def test_enumerations_by_name():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        parprim.sort(x, algorithm="bogo")
    with pytest.raises(ValueError, match="cmp must be one of"):
        parprim.select(x, "=>", 1)
    with pytest.raises(ValueError, match="op must be one of"):
        parprim.scan(x, "prod")
    with pytest.raises(ValueError, match="border must be one of"):
        parprim.conv2d(np.zeros((3, 3), np.float32), np.ones((3, 3), np.float32), "wrap")
    with pytest.raises(ValueError, match="index_dtype must be one of"):
        parprim.argsort(x, index_dtype="int16")


def test_values_must_fit_the_dtype():
    with pytest.raises(ValueError, match="out of range for uint8"):
        parprim.select(np.zeros(3, np.uint8), ">", 300)
    with pytest.raises(ValueError, match="out of range for uint32"):
        parprim.partition(np.zeros(3, np.uint32), "<", -1)
    with pytest.raises(TypeError, match="must be an integer for int32"):
        parprim.select(np.zeros(3, np.int32), ">", 1.5)


def test_mismatches():
    with pytest.raises(TypeError, match="b has dtype int64; int32 needed"):
        parprim.merge(np.zeros(2, np.int32), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="values has 3 elements"):
        parprim.sort(np.zeros(4, np.int32), values=np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="4- or 8-byte"):
        parprim.sort(np.zeros(4, np.int32), values=np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="flags has 2 elements"):
        parprim.select_flagged(np.zeros(3, np.int32), np.zeros(2, np.bool_))
    with pytest.raises(TypeError, match="flags must be bool or uint8"):
        parprim.select_flagged(np.zeros(3, np.int32), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="range="):
        parprim.histogram(np.zeros(3, np.float32), 4)
    with pytest.raises(ValueError, match="exclude each other"):
        parprim.sort(np.zeros(3, np.int32), values=np.zeros(3, np.int32), return_indices=True)
    with pytest.raises(TypeError, match="bool"):
        parprim.sum(np.zeros(3, np.bool_))


def test_nothing_written_on_failure():
    x = np.arange(10, dtype=np.float32)
    hist = np.full(3, 9, np.int64)
    with pytest.raises(ValueError):
        parprim.histogram(x, 3, range=(1.0, 0.0), out=hist)
    assert np.all(hist == 9)
    c = np.full((2, 2), 9, np.float32)
    with pytest.raises(ValueError):
        parprim.sgemm(np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32), c)
    assert np.all(c == 9)
    img_out = np.full((4, 4), 9, np.float32)
    with pytest.raises(ValueError, match="pp_conv2d"):
        parprim.conv2d(np.zeros((4, 4), np.float32), np.zeros((0, 3), np.float32), out=img_out)
    assert np.all(img_out == 9)


def test_status_mapping_not_implemented():
    """UNSUPPORTED becomes NotImplementedError: a distributed CUDA id needs CUDA and NCCL."""
    try:
        ident = parprim.dist_id_create("cuda")
    except NotImplementedError as e:
        assert "pp_dist_id_create" in str(e)
    else:
        assert isinstance(ident, bytes) and len(ident) == 128


def test_context_stays_usable_after_errors():
    x = np.arange(5, dtype=np.int32)
    for _ in range(3):
        with pytest.raises(ValueError):
            parprim.topk(x, 6)
        assert parprim.sum(x) == 10
