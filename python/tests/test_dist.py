"""Distributed contexts: one rank of a group (pp_create_dist), where the build has them."""
import numpy as np
import pytest

import parprim


def test_plain_context_is_rank_0_of_1(ctx):
    assert ctx.rank == 0 and ctx.nranks == 1


def test_one_rank_group_on_the_cpu():
    try:
        ident = parprim.dist_id_create("cpu")
    except NotImplementedError as e:
        assert "pp_dist_id_create" in str(e)
        pytest.skip(f"this build has no distributed CPU contexts: {e}")
    assert len(ident) == 128
    try:
        c = parprim.Context("cpu", dist_id=ident, nranks=1, rank=0)
    except NotImplementedError as e:
        pytest.skip(f"this build cannot make a one-rank CPU group: {e}")
    assert c.rank == 0 and c.nranks == 1
    x = np.arange(100, dtype=np.float32)
    assert parprim.sum(x, ctx=c) == x.sum()
    np.testing.assert_array_equal(parprim.sort(x[::-1].copy(), ctx=c), x)
    v, i = parprim.topk(x, 3, ctx=c)
    np.testing.assert_array_equal(i, [99, 98, 97])


def test_bad_dist_id():
    with pytest.raises(ValueError, match="128 bytes"):
        parprim.Context("cpu", dist_id=b"short", nranks=1, rank=0)
