"""GPU checks, by hand on the GPU machine: torch / CuPy / JAX arrays in and out, streams,
no copies. Skipped (visibly) without a CUDA build of parprim, a GPU, or the framework."""
import gc

import numpy as np
import pytest

import parprim

torch = pytest.importorskip("torch")

if not torch.cuda.is_available():
    pytest.skip("no GPU visible to torch", allow_module_level=True)
if not parprim.has_cuda or parprim.default_context().backend != "cuda":
    pytest.skip("parprim's default context is not a CUDA one (a CPU build, or PARPRIM_BACKEND=cpu)",
                allow_module_level=True)

DEV = "cuda"


def bits(t):
    return t.view(torch.int32 if t.element_size() == 4 else torch.int64).cpu()


@pytest.fixture
def x():
    g = torch.Generator(device=DEV).manual_seed(7)
    return torch.randn(100_003, device=DEV, generator=g)


def test_torch_in_torch_out(x):
    s = parprim.sort(x)
    assert isinstance(s, torch.Tensor) and s.is_cuda and s.dtype == torch.float32
    assert torch.equal(bits(s), bits(torch.sort(x, stable=True).values))
    assert torch.equal(parprim.argsort(x), torch.argsort(x, stable=True))
    keys, idx = parprim.sort(x, descending=True, return_indices=True)
    ref = torch.sort(x, descending=True, stable=True)
    assert torch.equal(keys, ref.values) and torch.equal(idx, ref.indices)
    total = parprim.sum(x)
    assert total.is_cuda and total.dim() == 0
    assert abs(total.item() - x.double().sum().item()) < 1e-3
    assert parprim.argmax(x).item() == torch.argmax(x).item()
    v, i = parprim.topk(x, 1000)
    rv = torch.topk(x, 1000)
    assert torch.equal(v, rv.values) and torch.equal(x[i], v)
    xi = (x * 1000).to(torch.int32)
    assert torch.equal(parprim.cumsum(xi), torch.cumsum(xi, 0, dtype=torch.int32))
    assert torch.equal(parprim.select(x, ">", 0.5), torch.masked_select(x, x > 0.5))
    h = parprim.histogram(x, 64, range=(-3.0, 3.0))
    assert h.is_cuda and h.dtype == torch.int64
    assert np.array_equal(h.cpu().numpy(), parprim.histogram(x.cpu().numpy(), 64, range=(-3.0, 3.0)))
    rows = x[:100_000].reshape(100, 1000)
    rv, ri = parprim.topk(rows, 10)
    assert torch.equal(rv, torch.topk(rows, 10).values)


def test_torch_dense(x):
    a = torch.randn(256, 128, device=DEV)
    b = torch.randn(128, 64, device=DEV)
    ref = (a.double() @ b.double()).float()
    assert torch.allclose(parprim.matmul(a, b), ref, atol=1e-3)
    assert torch.allclose(parprim.matmul(b.T, a.T), ref.T, atol=1e-3)  # column-major views in place
    img = torch.randn(300, 200, device=DEV)
    filt = torch.randn(5, 5, device=DEV)
    got = parprim.conv2d(img, filt, "mirror")
    assert np.allclose(got.cpu().numpy(), parprim.conv2d(img.cpu().numpy(), filt.cpu().numpy(), "mirror"), atol=1e-4)
    n = 1024
    arrays = [torch.randn(n, device=DEV) for _ in range(6)] + [torch.rand(n, device=DEV) + 0.5]
    s = parprim.NBody(*arrays, softening=0.05)
    ax, ay, az = s.accel()
    host = parprim.NBody(*[t.cpu().numpy() for t in arrays], softening=0.05)
    assert np.allclose(ax.cpu().numpy(), host.accel()[0], rtol=1e-3, atol=1e-3)
    ke, pe = s.energy()
    assert ke == pytest.approx(host.energy()[0], rel=1e-5)
    s.step(0.001, 3)  # in place on the tensors


def test_out_is_written_in_place_without_allocation(x):
    out = torch.empty_like(x)
    ptr = out.data_ptr()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    r = parprim.sort(x, out=out)
    assert r is out and r.data_ptr() == ptr
    assert torch.cuda.memory_allocated() == before
    assert torch.equal(out, torch.sort(x, stable=True).values)


def test_results_are_not_copied_by_torch(x):
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    y = parprim.cumsum(x)  # parprim's memory, handed to torch through DLPack
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before  # torch allocated nothing: no copy
    assert y.data_ptr() % 256 == 0
    del y


def test_work_is_ordered_on_the_current_torch_stream():
    n = 1 << 22
    x = torch.zeros(n, device=DEV)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        parprim.sum(x)  # the context moves to s here (pp_set_stream waits for the previous stream)
        torch.cuda._sleep(200_000_000)  # keeps s busy: a call on another stream would read zeros
        x.fill_(1.0)
        total = parprim.sum(x)
        prefix = parprim.cumsum(x)
        assert not s.query()  # queued, not waited for
    s.synchronize()
    assert total.item() == n
    assert prefix[-1].item() == n
    # stream= given explicitly
    s2 = torch.cuda.Stream()
    with torch.cuda.stream(s2):
        torch.cuda._sleep(200_000_000)
        x.fill_(2.0)
    total = parprim.sum(x, stream=s2)
    s2.synchronize()
    assert total.item() == 2 * n


def test_host_numpy_on_a_cuda_context():
    a = np.random.default_rng(3).standard_normal(1 << 16).astype(np.float32)
    got = parprim.sort(a)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, np.sort(a, kind="stable"))
    assert parprim.sum(np.ones(1000, np.float32)) == 1000


class CAIOnly:
    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def test_cuda_array_interface_and_array_results(x):
    r = parprim.sort(CAIOnly(x))
    assert isinstance(r, parprim.Array) and r.device == "cuda:0" and r.shape == (x.numel(),)
    t = torch.from_dlpack(r)
    assert t.data_ptr() == r.data_ptr == r.__cuda_array_interface__["data"][0]  # no copy
    assert torch.equal(t, torch.sort(x, stable=True).values)


def test_results_outlive_their_context(x):
    c = parprim.Context("cuda")
    y = parprim.sort(x, ctx=c)
    del c
    gc.collect()
    torch.cuda.synchronize()
    assert torch.equal(y, torch.sort(x, stable=True).values)


def test_memory_is_reused(x):
    c = parprim.Context("cuda")
    for _ in range(50):
        y = parprim.cumsum(x, ctx=c)
        del y
    assert c.cached_bytes <= 2 * x.numel() * 4 + (4 << 20)
    c.empty_cache()
    assert c.cached_bytes == 0


def test_large_argsort_device_indices():
    n = (1 << 20) + 7
    x = torch.randint(0, 1000, (n,), device=DEV, dtype=torch.int32)
    assert torch.equal(parprim.argsort(x), torch.argsort(x, stable=True))
    assert torch.equal(parprim.argsort(x, index_dtype="int32").long(), torch.argsort(x, stable=True))


def test_bench_helper(x):
    t = parprim._bench_reduce_c(x[:1024], 100)
    assert 0 < t < 1e-2


def test_cupy():
    cp = pytest.importorskip("cupy")
    a = cp.random.standard_normal(50_001, dtype=cp.float32)
    s = parprim.sort(a)
    assert isinstance(s, cp.ndarray)
    assert cp.array_equal(s, cp.sort(a))
    out = cp.empty_like(a)
    assert parprim.cumsum(a, out=out) is out
    with cp.cuda.Stream(non_blocking=True) as st:
        b = cp.ones(1 << 22, dtype=cp.float32)
        total = parprim.sum(b)
    st.synchronize()
    assert float(total) == 1 << 22


def test_jax():
    jnp = pytest.importorskip("jax.numpy")
    import jax
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    a = jnp.arange(1000, dtype=jnp.int32)[::-1]
    s = parprim.sort(a)
    assert isinstance(s, jax.Array)
    assert bool((s == jnp.arange(1000, dtype=jnp.int32)).all())
