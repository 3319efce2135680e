"""How arrays come in (buffer protocol, DLPack versioned and legacy, CUDA array interface)
and go out (out=, the caller's framework), non-contiguous input, threads."""
import array
import gc
import threading

import numpy as np
import pytest

import parprim


class DLPackOnly:
    """Exposes nothing but DLPack 1.x: __dlpack__ with max_version and __dlpack_device__."""

    def __init__(self, a):
        self._a = a
        self.capsules = []
        self.calls = []

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"stream": stream, "max_version": max_version})
        cap = self._a.__dlpack__(max_version=max_version) if max_version else self._a.__dlpack__()
        self.capsules.append(cap)
        return cap

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class LegacyDLPack:
    """A producer from before DLPack 1.0: no max_version keyword, unversioned capsules."""

    def __init__(self, a):
        self._a = a
        self.capsules = []

    def __dlpack__(self, stream=None):
        cap = self._a.__dlpack__()
        self.capsules.append(cap)
        return cap

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class FakeCudaArray:
    """Claims device memory through __cuda_array_interface__ only."""

    def __init__(self, n=4):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (0x10000, False),
                                         "version": 3, "strides": None, "stream": None}


def test_dlpack_versioned(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    src = DLPackOnly(x)
    got = parprim.sort(src)
    assert isinstance(got, np.ndarray)  # a host producer parprim does not know: NumPy out
    np.testing.assert_array_equal(got, np.sort(x))
    assert src.calls[0]["max_version"] == (1, 1) and src.calls[0]["stream"] is None
    assert "used_dltensor_versioned" in repr(src.capsules[0])  # consumed, renamed


def test_dlpack_legacy(rng):
    x = rng.integers(0, 100, 500).astype(np.int64)
    src = LegacyDLPack(x)
    assert parprim.sum(src) == x.sum()
    assert "used_dltensor" in repr(src.capsules[-1]) and "versioned" not in repr(src.capsules[-1])


def test_dlpack_keeps_producer_alive_and_releases_it(rng):
    x = rng.standard_normal(100).astype(np.float64)
    src = DLPackOnly(x)
    before = len(gc.get_referrers(x))
    for _ in range(50):
        parprim.cumsum(src)
    src.capsules.clear()
    gc.collect()
    assert len(gc.get_referrers(x)) == before  # every consumed capsule's deleter ran


def test_buffer_protocol_objects():
    assert parprim.sum(bytearray(b"\x01\x02\x03")) == 6
    mv = memoryview(np.arange(10, dtype=np.float32).tobytes()).cast("f")
    assert parprim.sum(mv) == 45.0
    assert parprim.max(array.array("d", [1.5, -2.0, 9.25])) == 9.25
    assert parprim.min(array.array("i", [4, -7, 2])) == -7
    np.testing.assert_array_equal(parprim.sort(array.array("q", [3, 1, 2])), [1, 2, 3])


def test_buffer_out_is_written(rng):
    x = rng.integers(0, 9, 16).astype(np.int32)
    out = bytearray(16 * 4)
    parprim.cumsum(x, out=memoryview(out).cast("i"))
    np.testing.assert_array_equal(np.frombuffer(out, np.int32), np.cumsum(x))


def test_cuda_array_interface_refused_on_cpu(ctx):
    if ctx.backend != "cpu":
        pytest.skip("the refusal is a CPU-context rule; this run has a CUDA context")
    with pytest.raises(ValueError, match="CUDA device memory.*cpu backend"):
        parprim.sum(FakeCudaArray())


def test_stream_refused_on_cpu(ctx):
    if ctx.backend != "cpu":
        pytest.skip("the refusal is a CPU-context rule; this run has a CUDA context")
    with pytest.raises(ValueError, match="stream= needs a CUDA context"):
        parprim.sum(np.ones(3, np.float32), stream=5)


def test_not_an_array():
    with pytest.raises(TypeError, match="buffer protocol, __dlpack__ or __cuda_array_interface__"):
        parprim.sum([1, 2, 3])
    with pytest.raises(TypeError):
        parprim.sum(object())


def test_non_contiguous(rng):
    x = rng.standard_normal(100).astype(np.float32)
    v = x[::3]
    with pytest.raises(ValueError, match="not contiguous.*copy=True"):
        parprim.sort(v)
    np.testing.assert_array_equal(parprim.sort(v, copy=True), np.sort(v))
    np.testing.assert_allclose(parprim.cumsum(x[::-1], copy=True), np.cumsum(x[::-1].astype(np.float64)), atol=1e-4)
    t = rng.standard_normal((4, 5)).astype(np.float32).T
    with pytest.raises(ValueError, match="not contiguous"):
        parprim.sum(t)
    assert parprim.sum(t, copy=True) == pytest.approx(float(t.sum()), rel=1e-5)
    with pytest.raises(ValueError, match="out is not contiguous"):
        parprim.cumsum(x[:50], out=np.zeros(100, np.float32)[::2])
    dl = DLPackOnly(v)  # a strided DLPack host producer: copied through NumPy
    np.testing.assert_array_equal(parprim.sort(dl, copy=True), np.sort(v))


def test_out_errors_leave_out_untouched(rng):
    x = rng.integers(0, 100, 10).astype(np.int32)
    out = np.full(10, 7, np.int64)
    with pytest.raises(TypeError, match="out has dtype int64; int32 needed"):
        parprim.sort(x, out=out)
    out32 = np.full(9, 7, np.int32)
    with pytest.raises(ValueError, match="out has 9 elements"):
        parprim.cumsum(x, out=out32)
    ro = np.full(10, 7, np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        parprim.cumsum(x, out=ro)
    hist = np.full(4, 7, np.int64)
    with pytest.raises(ValueError, match="pp_histogram_even"):
        parprim.histogram(x, 4, range=(5, 5), out=hist)  # the library refuses lo >= hi
    for o in (out, out32, ro, hist):
        assert np.all(o == 7)


def test_read_only_input_is_fine():
    x = np.arange(5, dtype=np.int32)
    x.flags.writeable = False
    np.testing.assert_array_equal(parprim.cumsum(x), np.cumsum(x))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float16, np.complex64, np.bool_])
def test_unsupported_dtypes(dtype):
    with pytest.raises(TypeError, match="parprim takes uint8, int32"):
        parprim.sort(np.zeros(4, dtype))


def test_results_outlive_their_context(rng):
    c = parprim.Context("cpu")
    x = rng.standard_normal(1000).astype(np.float32)
    y = parprim.sort(x, ctx=c)
    del c
    gc.collect()
    np.testing.assert_array_equal(y, np.sort(x))


def test_context_object():
    c = parprim.Context("cpu")
    assert c.backend == "cpu" and c.device is None and c.rank == 0 and c.nranks == 1
    c.synchronize()
    info = c.device_info()
    assert info["multiprocessors"] >= 1
    assert "parprim.Context(backend='cpu'" in repr(c)
    with pytest.raises(ValueError, match="backend must be"):
        parprim.Context("tpu")
    with pytest.raises(TypeError, match="ctx must be a parprim.Context"):
        parprim.sum(np.ones(2, np.float32), ctx="cpu")


def test_threads_share_a_context(rng):
    """A lock per context: threads calling at once each get their own right answer."""
    data = [rng.standard_normal(20000).astype(np.float32) for _ in range(8)]
    errors = []

    def work(x):
        try:
            for _ in range(5):
                np.testing.assert_array_equal(parprim.sort(x), np.sort(x))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_zero_dim_input():
    assert parprim.sum(np.array(5, np.int32)) == 5


def test_jax_in_jax_out():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a = jnp.asarray(np.random.default_rng(5).standard_normal(1000).astype(np.float32))
    s = parprim.sort(a)
    assert isinstance(s, jax.Array)
    np.testing.assert_array_equal(np.asarray(s), np.sort(np.asarray(a)))
    v, i = parprim.topk(a, 5)
    assert isinstance(v, jax.Array)
    np.testing.assert_array_equal(np.asarray(v), np.sort(np.asarray(a))[::-1][:5])
    with pytest.raises(ValueError, match="read-only"):  # JAX arrays are immutable
        parprim.cumsum(a, out=jnp.zeros(1000, jnp.float32))
