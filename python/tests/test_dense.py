"""matmul / sgemm against np.matmul, N-body against a float64 NumPy reference."""
import numpy as np
import pytest

import parprim

def assert_gemm_close(got, ref, k):
    assert got.shape == ref.shape
    if ref.size == 0:
        return
    tol = 1e-5 * max(k, 1) * (np.abs(ref).max() + 1)
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 5, 3), (64, 48, 80), (0, 3, 4), (3, 0, 2), (2, 3, 0)])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_matmul(rng, m, n, k, trans_a, trans_b):
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    ref = (a.T if trans_a else a).astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    got = parprim.matmul(a, b, trans_a=trans_a, trans_b=trans_b)
    assert got.shape == (m, n) and got.dtype == np.float32
    assert_gemm_close(got, ref, k)
    # the transposed views (column-major arrays) are read in place
    assert_gemm_close(parprim.matmul(a.T, b.T, trans_a=not trans_a, trans_b=not trans_b), ref, k)


def test_matmul_alpha_out_and_padded_rows(rng):
    big = rng.standard_normal((30, 50)).astype(np.float32)
    a = big[:20, :16]  # leading dimension 50
    b = rng.standard_normal((16, 8)).astype(np.float32)
    out = np.zeros((20, 8), np.float32)
    assert parprim.matmul(a, b, alpha=2.5, out=out) is out
    assert_gemm_close(out, 2.5 * (a.astype(np.float64) @ b), 16)


def test_sgemm_beta(rng):
    a = rng.standard_normal((9, 6)).astype(np.float32)
    b = rng.standard_normal((6, 4)).astype(np.float32)
    c = rng.standard_normal((9, 4)).astype(np.float32)
    ref = 0.5 * (a.astype(np.float64) @ b) - 2.0 * c
    assert parprim.sgemm(a, b, c, 0.5, -2.0) is c
    assert_gemm_close(c, ref, 6)
    nan_c = np.full((9, 4), np.nan, np.float32)  # beta == 0: c is not read
    parprim.sgemm(a, b, nan_c)
    assert_gemm_close(nan_c, a.astype(np.float64) @ b, 6)


def test_matmul_shape_mismatch():
    with pytest.raises(ValueError, match="op\\(a\\)"):
        parprim.matmul(np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match="float32"):
        parprim.matmul(np.zeros((2, 2), np.float64), np.zeros((2, 2), np.float64))


def nbody_accel_ref(pos, m, eps):
    d = pos[None, :, :] - pos[:, None, :]  # d[i, j] = x_j - x_i
    r2 = (d ** 2).sum(-1) + eps ** 2
    inv3 = np.where(r2 > 0, r2, 1) ** -1.5
    np.fill_diagonal(inv3, 0)
    return (d * (m[None, :, None] * inv3[:, :, None])).sum(1)


def make_bodies(rng, n):
    pos = rng.standard_normal((n, 3))
    vel = 0.1 * rng.standard_normal((n, 3))
    m = rng.random(n) + 0.5
    arrays = [pos[:, i].astype(np.float32) for i in range(3)] + [vel[:, i].astype(np.float32) for i in range(3)]
    return arrays + [m.astype(np.float32)]


@pytest.mark.parametrize("n", [1, 2, 100, 300])
def test_nbody(rng, n):
    eps = 0.1
    arrays = make_bodies(rng, n)
    s = parprim.NBody(*arrays, softening=eps)
    pos = np.stack(arrays[:3], 1).astype(np.float64)
    vel = np.stack(arrays[3:6], 1).astype(np.float64)
    m = arrays[6].astype(np.float64)
    ax, ay, az = s.accel()
    ref = nbody_accel_ref(pos, m, eps)
    np.testing.assert_allclose(np.stack([ax, ay, az], 1), ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max() + 1e-6)
    ke, pe = s.energy()
    d = np.sqrt(((pos[None] - pos[:, None]) ** 2).sum(-1) + eps ** 2)
    iu = np.triu_indices(n, 1)
    assert ke == pytest.approx(0.5 * (m[:, None] * vel ** 2).sum(), rel=1e-6)
    assert pe == pytest.approx(-(m[:, None] * m[None, :] / d)[iu].sum(), rel=1e-5, abs=1e-9)
    # kick-drift-kick leapfrog, in float64
    dt, steps = 0.01, 5
    a = nbody_accel_ref(pos, m, eps)
    for _ in range(steps):
        vel += 0.5 * dt * a
        pos += dt * vel
        a = nbody_accel_ref(pos, m, eps)
        vel += 0.5 * dt * a
    s.step(dt, steps)
    np.testing.assert_allclose(np.stack(arrays[:3], 1), pos, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(np.stack(arrays[3:6], 1), vel, rtol=1e-3, atol=1e-3)


def test_nbody_mismatched_lengths():
    a = [np.zeros(4, np.float32)] * 6 + [np.zeros(3, np.float32)]
    with pytest.raises(ValueError, match="mass"):
        parprim.NBody(*a).accel()
