"""Type hints for parprim. Arrays are any object with the buffer protocol, __dlpack__ or
__cuda_array_interface__ (NumPy, torch, CuPy, JAX, memoryview, ...); results come back in
the caller's framework, so they are typed as Any."""
from typing import Any, Literal, NamedTuple, Optional, Protocol, Sequence, Tuple, Union, overload

ArrayLike = Any
Stream = Union[int, Any]  # a cudaStream_t handle, or an object with .cuda_stream / .ptr
Cmp = Literal[">", ">=", "<", "<=", "==", "!=", "gt", "ge", "lt", "le", "eq", "ne"]
Op = Literal["sum", "min", "max"]
Algorithm = Literal["auto", "radix", "merge", "sample", "quick"]
Border = Literal["zero", "clamp", "mirror", "constant", "nearest"]

__version__: str
library_version: str
has_cuda: bool

class Context:
    def __init__(
        self,
        backend: Literal["auto", "cpu", "cuda"] = "auto",
        device: Optional[int] = None,
        *,
        dist_id: Optional[bytes] = None,
        nranks: int = 0,
        rank: int = 0,
        mpi: bool = False,
        comm: Optional[int] = None,
    ) -> None: ...
    @property
    def backend(self) -> str: ...
    @property
    def device(self) -> Optional[int]: ...
    @property
    def rank(self) -> int: ...
    @property
    def nranks(self) -> int: ...
    @property
    def cached_bytes(self) -> int: ...
    def synchronize(self) -> None: ...
    def empty_cache(self) -> None: ...
    def device_info(self) -> dict: ...

class Array:
    shape: Tuple[int, ...]
    dtype: str
    device: str
    data_ptr: int
    __cuda_array_interface__: dict
    __array_interface__: dict
    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

class TopK(NamedTuple):
    values: Any
    indices: Any

def default_context() -> Context: ...
def dist_id_create(backend: Literal["auto", "cpu", "cuda"] = "auto") -> bytes: ...

def sum(x: ArrayLike, *, out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
        stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def min(x: ArrayLike, *, out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
        stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def max(x: ArrayLike, *, out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
        stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def reduce(x: ArrayLike, op: Op = "sum", *, out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
           stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
class _ArgReduce(Protocol):
    """argmin and argmax: the index, or (value, index) with return_value=True."""
    @overload
    def __call__(self, x: ArrayLike, *, return_value: Literal[False] = False, ctx: Optional[Context] = None,
                 stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
    @overload
    def __call__(self, x: ArrayLike, *, return_value: Literal[True], ctx: Optional[Context] = None,
                 stream: Optional[Stream] = None, copy: bool = False) -> Tuple[Any, Any]: ...
argmin: _ArgReduce
argmax: _ArgReduce
def scan(x: ArrayLike, op: Op = "sum", *, inclusive: bool = True, out: Optional[ArrayLike] = None,
         ctx: Optional[Context] = None, stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def cumsum(x: ArrayLike, *, exclusive: bool = False, out: Optional[ArrayLike] = None,
           ctx: Optional[Context] = None, stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def select(x: ArrayLike, cmp: Cmp, value: Union[int, float], *, ctx: Optional[Context] = None,
           stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def select_flagged(x: ArrayLike, flags: ArrayLike, *, ctx: Optional[Context] = None,
                   stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def partition(x: ArrayLike, cmp: Cmp, value: Union[int, float], *, out: Optional[ArrayLike] = None,
              ctx: Optional[Context] = None, stream: Optional[Stream] = None,
              copy: bool = False) -> Tuple[Any, int]: ...
def sort(x: ArrayLike, *, values: Optional[ArrayLike] = None, descending: bool = False,
         algorithm: Algorithm = "auto", return_indices: bool = False,
         index_dtype: Literal["int64", "int32"] = "int64", out: Optional[ArrayLike] = None,
         values_out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
         stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def argsort(x: ArrayLike, *, descending: bool = False, algorithm: Algorithm = "auto",
            index_dtype: Literal["int64", "int32"] = "int64", ctx: Optional[Context] = None,
            stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def merge(a: ArrayLike, b: ArrayLike, *, descending: bool = False, out: Optional[ArrayLike] = None,
          ctx: Optional[Context] = None, stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def topk(x: ArrayLike, k: int, *, largest: bool = True, dim: int = -1, ctx: Optional[Context] = None,
         stream: Optional[Stream] = None, copy: bool = False) -> TopK: ...
def histogram(x: ArrayLike, bins: Union[int, ArrayLike, Sequence[float]],
              range: Optional[Tuple[float, float]] = None, *, out: Optional[ArrayLike] = None,
              ctx: Optional[Context] = None, stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def histogram_image(pixels: ArrayLike, *, out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
                    stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def matmul(a: ArrayLike, b: ArrayLike, *, trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0,
           out: Optional[ArrayLike] = None, ctx: Optional[Context] = None, stream: Optional[Stream] = None,
           copy: bool = False) -> Any: ...
def sgemm(a: ArrayLike, b: ArrayLike, c: ArrayLike, alpha: float = 1.0, beta: float = 0.0, *,
          trans_a: bool = False, trans_b: bool = False, ctx: Optional[Context] = None,
          stream: Optional[Stream] = None) -> Any: ...
def conv2d(image: ArrayLike, filter: ArrayLike, border: Border = "zero", *, out: Optional[ArrayLike] = None,
           ctx: Optional[Context] = None, stream: Optional[Stream] = None, copy: bool = False) -> Any: ...
def conv2d_separable(image: ArrayLike, row_filter: ArrayLike, col_filter: ArrayLike, border: Border = "zero", *,
                     out: Optional[ArrayLike] = None, ctx: Optional[Context] = None,
                     stream: Optional[Stream] = None, copy: bool = False) -> Any: ...

class NBody:
    arrays: Tuple[Any, ...]
    softening: float
    def __init__(self, x: ArrayLike, y: ArrayLike, z: ArrayLike, vx: ArrayLike, vy: ArrayLike, vz: ArrayLike,
                 mass: ArrayLike, *, softening: float = 0.01, ctx: Optional[Context] = None,
                 stream: Optional[Stream] = None) -> None: ...
    def accel(self) -> Tuple[Any, Any, Any]: ...
    def step(self, dt: float, steps: int = 1) -> None: ...
    def energy(self) -> Tuple[float, float]: ...
