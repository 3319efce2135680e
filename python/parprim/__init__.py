"""parprim: data-parallel primitives for NumPy, PyTorch, CuPy and JAX arrays.

Every function reads its array arguments in place (buffer protocol, DLPack, CUDA array
interface; torch tensors directly), runs on the GPU when the context is a CUDA one (host
arrays are staged), and returns its results in the caller's framework without a copy:
torch in, torch out; CuPy in, CuPy out; NumPy in, NumPy out; JAX in, JAX out.

    >>> import numpy as np, parprim
    >>> parprim.sort(np.array([3.0, -0.0, 1.0, 0.0], np.float32))
    array([-0., 0., 1., 3.], dtype=float32)

Work is queued on the caller's framework's current stream (or stream=); results that stay
on the device are not waited for. Errors raise ValueError (bad arguments, size overflow),
TypeError (dtypes), MemoryError, NotImplementedError (unsupported on this backend) or
RuntimeError (device errors), with the library's message.
"""
from __future__ import annotations

from ._parprim import (  # noqa: F401  (the public API is the extension's)
    Array,
    Context,
    TopK,
    argmax,
    argmin,
    conv2d,
    conv2d_separable,
    cumsum,
    default_context,
    dist_id_create,
    has_cuda,
    histogram,
    histogram_image,
    library_version,
    matmul,
    max,
    merge,
    min,
    partition,
    reduce,
    scan,
    select,
    select_flagged,
    sgemm,
    sort,
    sum,
)
from . import _parprim
from ._parprim import _bench_reduce_c  # noqa: F401  (scripts/bench_python.py: the C side of the call overhead)

__version__ = library_version

__all__ = [
    "Array", "Context", "NBody", "TopK", "argmax", "argmin", "argsort", "conv2d", "conv2d_separable",
    "cumsum", "default_context", "dist_id_create", "has_cuda", "histogram", "histogram_image", "matmul",
    "max", "merge", "min", "partition", "reduce", "scan", "select", "select_flagged", "sgemm", "sort",
    "sum", "topk",
]


def argsort(x, *, descending=False, algorithm="auto", index_dtype="int64", ctx=None, stream=None, copy=False):
    """Indices (int64, or int32 with index_dtype="int32") that sort x stably.

    Same order as ``np.argsort(x, kind="stable")``; floats: -0.0 == +0.0, NaN last.

        >>> parprim.argsort(np.array([3, 1, 2], np.int32))
        array([1, 2, 0])
    """
    return sort(x, descending=descending, algorithm=algorithm, return_indices=True,
                index_dtype=index_dtype, ctx=ctx, stream=stream, copy=copy)[1]


def topk(x, k, *, largest=True, dim=-1, ctx=None, stream=None, copy=False):
    """The k largest (smallest) values of x in order and their int64 indices: TopK(values, indices).

    Like torch.topk; a 2-D x gives the top k of each row (indices within the row).
    NaN counts as largest.

        >>> parprim.topk(np.array([1.0, 9.0, 5.0], np.float32), 2)
        parprim.TopK(values=array([9., 5.], dtype=float32), indices=array([1, 2]))
    """
    return _parprim.topk(x, k, largest=largest, dim=dim, ctx=ctx, stream=stream, copy=copy)


class NBody:
    """An N-body system (G = 1, Plummer softening) over seven float32 arrays of one length.

    The arrays are the caller's (NumPy, torch, CuPy, ...): step() advances them in place
    (kick-drift-kick leapfrog), accel() returns (ax, ay, az) in the same framework,
    energy() returns (kinetic, potential) as Python floats.

        >>> n = 4; rng = np.random.default_rng(1)
        >>> pos = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
        >>> vel = [np.zeros(n, np.float32) for _ in range(3)]
        >>> s = parprim.NBody(*pos, *vel, np.ones(n, np.float32), softening=0.1)
        >>> s.step(0.01, steps=10)
    """

    def __init__(self, x, y, z, vx, vy, vz, mass, *, softening=0.01, ctx=None, stream=None):
        self.arrays = (x, y, z, vx, vy, vz, mass)
        self.softening = float(softening)
        self.ctx = ctx
        self.stream = stream

    def accel(self):
        """Accelerations (ax, ay, az) of every body."""
        return _parprim._nbody("accel", *self.arrays, self.softening, ctx=self.ctx, stream=self.stream)

    def step(self, dt, steps=1):
        """Advance positions and velocities in place by `steps` leapfrog steps of dt."""
        _parprim._nbody("step", *self.arrays, self.softening, float(dt), int(steps), ctx=self.ctx, stream=self.stream)

    def energy(self):
        """(kinetic, potential) energy of the system, as floats."""
        return _parprim._nbody("energy", *self.arrays, self.softening, ctx=self.ctx, stream=self.stream)
