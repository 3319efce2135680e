"""conv2d and conv2d_separable against scipy.ndimage.correlate: API.md's ZERO / CLAMP /
MIRROR borders are scipy's constant (cval 0) / nearest / mirror."""
import numpy as np
import pytest

import parprim

scipy_ndimage = pytest.importorskip("scipy.ndimage")

MODES = {"zero": "constant", "clamp": "nearest", "mirror": "mirror"}


def ref_correlate(img, filt, border):
    return scipy_ndimage.correlate(img.astype(np.float64), filt.astype(np.float64), mode=MODES[border], cval=0.0)


@pytest.mark.parametrize("border", list(MODES))
@pytest.mark.parametrize("h,w", [(1, 1), (1, 9), (8, 1), (17, 23), (64, 70)])
@pytest.mark.parametrize("fh,fw", [(1, 1), (3, 3), (5, 3), (1, 7), (9, 9)])
def test_conv2d(rng, border, h, w, fh, fw):
    img = rng.standard_normal((h, w)).astype(np.float32)
    filt = rng.standard_normal((fh, fw)).astype(np.float32)
    got = parprim.conv2d(img, filt, border)
    assert got.shape == (h, w) and got.dtype == np.float32
    np.testing.assert_allclose(got, ref_correlate(img, filt, border), rtol=1e-4, atol=1e-4 * np.abs(filt).sum())


@pytest.mark.parametrize("border", list(MODES))
def test_conv2d_filter_wider_than_image(rng, border):
    img = rng.standard_normal((3, 4)).astype(np.float32)
    filt = rng.standard_normal((9, 11)).astype(np.float32)
    np.testing.assert_allclose(parprim.conv2d(img, filt, border), ref_correlate(img, filt, border), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("border", list(MODES) + ["constant", "nearest"])
def test_conv2d_separable(rng, border):
    img = rng.standard_normal((40, 33)).astype(np.float32)
    row = rng.standard_normal(5).astype(np.float32)
    col = rng.standard_normal(7).astype(np.float32)
    mode = {"constant": "zero", "nearest": "clamp"}.get(border, border)
    ref = ref_correlate(img, np.outer(col, row), mode)
    np.testing.assert_allclose(parprim.conv2d_separable(img, row, col, border), ref, rtol=1e-4, atol=1e-3)


def test_conv2d_pitched_in_and_out(rng):
    big = rng.standard_normal((20, 40)).astype(np.float32)
    img = big[2:18, 3:30]
    out_big = np.zeros((16, 64), np.float32)
    out = out_big[:, :27]
    filt = np.ones((3, 3), np.float32) / 9
    assert parprim.conv2d(img, filt, "clamp", out=out) is out
    np.testing.assert_allclose(out, ref_correlate(img, filt, "clamp"), rtol=1e-5, atol=1e-5)
    assert np.all(out_big[:, 27:] == 0)  # nothing written past the row
