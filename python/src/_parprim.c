/*
 * _parprim.c — parprim for Python: a CPython extension module in C11 over libparprim.
 *
 * What it adds to the C library is the bridge to Python's array world, without copies:
 *  - Input: an argument is read in place through the first protocol it offers, in this
 *    order: a torch tensor's own accessors (the fast path: torch's __dlpack__ is Python
 *    code and costs more than the whole call should), the buffer protocol (NumPy,
 *    memoryview, bytearray), __dlpack__ / __dlpack_device__ (versioned capsules
 *    negotiated with max_version, legacy ones otherwise), __cuda_array_interface__ v3.
 *  - Output: memory from the context (pp_malloc, recycled through a small per-context
 *    cache: cudaFree synchronises the whole device, which a call must not do) exported as
 *    a DLPack capsule and handed to the caller's framework's from_dlpack; host results go
 *    to NumPy. out= writes into the caller's array instead.
 *  - Streams: work goes on the stream the caller's framework is using (torch's or CuPy's
 *    current stream), on stream= when given, else on the legacy default stream, which
 *    every blocking stream is ordered with; DLPack producers are told that stream.
 *  - Threads: one context is used by one thread at a time, so each context has a lock,
 *    taken with the GIL released; the GIL is never held while the library runs.
 *
 * Memory lifetime: an exported block holds a reference on the context's C state (not on
 * the Python object), so a consumer may free it from any thread, with or without the GIL,
 * and the context outlives every array it allocated.
 */
#include "module.h"

PyTypeObject *ppy_TopKType;

PyDoc_STRVAR(sort_doc,
             "sort(x, *, values=None, descending=False, algorithm='auto', return_indices=False,\n"
             "     index_dtype='int64', out=None, values_out=None, ctx=None, stream=None, copy=False)\n\n"
             "Stable sort of x (flattened). Floats: -0.0 == +0.0, NaN last (first when descending).\n"
             "values= sorts (keys, values) pairs (values of 4 or 8 bytes) and returns both;\n"
             "return_indices=True returns (sorted, indices) like torch.sort.\n"
             "algorithm: 'auto', 'radix', 'merge', 'sample' or 'quick'. out=x sorts in place.\n\n"
             "    >>> parprim.sort(np.array([3, 1, 2], np.int32))\n"
             "    array([1, 2, 3], dtype=int32)\n");

PyDoc_STRVAR(histogram_doc,
             "histogram(x, bins, range=None, *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Counts (int64) of x in bins. bins an int: even bins over range=(lo, hi), where x counts\n"
             "when lo <= x < hi (values equal to hi are not counted, unlike numpy's last bin).\n"
             "bins an array of bins+1 increasing edges: x counts in bin i when edges[i] <= x < edges[i+1].\n"
             "NaN is never counted.\n\n"
             "    >>> parprim.histogram(np.array([0.5, 1.5, 1.7], np.float32), 2, range=(0, 2))\n"
             "    array([1, 2])\n");

/* ------------------------------------------------------------------------------------ */
/* The module                                                                           */
/* ------------------------------------------------------------------------------------ */

#define KW (PyCFunction)(void (*)(void))
#define ARGS_KW METH_VARARGS | METH_KEYWORDS
#define COMMON_DOC "ctx= picks a parprim.Context, stream= a CUDA stream (int or object with .cuda_stream / .ptr),\n" \
                   "copy=True copies a non-contiguous input instead of refusing it.\n\n"

PyDoc_STRVAR(sum_doc,
             "sum(x, *, out=None, ctx=None, stream=None, copy=False)\n\nSum of all elements, in x's dtype (integers wrap).\n"
             "The result stays on x's device: a 0-d tensor for torch / CuPy / JAX, a NumPy scalar for NumPy.\n" COMMON_DOC
             "    >>> parprim.sum(np.arange(5, dtype=np.int32))\n    np.int32(10)\n");

PyDoc_STRVAR(min_doc,
             "min(x, *, out=None, ctx=None, stream=None, copy=False)\n\nSmallest element; NaN ignored unless all are NaN;\n"
             "empty x gives the largest value of the dtype (+inf).\n\n    >>> parprim.min(np.array([3., 1.], np.float32))\n    np.float32(1.0)\n");

PyDoc_STRVAR(max_doc,
             "max(x, *, out=None, ctx=None, stream=None, copy=False)\n\nLargest element; NaN ignored unless all are NaN;\n"
             "empty x gives the lowest value of the dtype (-inf).\n\n    >>> parprim.max(np.array([3., 1.], np.float32))\n    np.float32(3.0)\n");

PyDoc_STRVAR(reduce_doc,
             "reduce(x, op='sum', *, out=None, ctx=None, stream=None, copy=False)\n\nop: 'sum', 'min' or 'max'.\n\n"
             "    >>> parprim.reduce(np.array([1, 5], np.uint32), 'max')\n    np.uint32(5)\n");

PyDoc_STRVAR(argmin_doc,
             "argmin(x, *, return_value=False, ctx=None, stream=None, copy=False)\n\nIndex (int64) of the first smallest element\n"
             "(-0.0 ties with +0.0, NaN ignored); with return_value=True, (value, index).\n\n"
             "    >>> parprim.argmin(np.array([3., 1., 1.], np.float32))\n    np.int64(1)\n");

PyDoc_STRVAR(argmax_doc,
             "argmax(x, *, return_value=False, ctx=None, stream=None, copy=False)\n\nIndex (int64) of the first largest element;\n"
             "with return_value=True, (value, index).\n\n    >>> parprim.argmax(np.array([3., 7.], np.float32))\n    np.int64(1)\n");

PyDoc_STRVAR(scan_doc,
             "scan(x, op='sum', *, inclusive=True, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Prefix sum / min / max over x in memory order (the result has x's shape). Exclusive scans start\n"
             "from the identity of op. out=x scans in place.\n\n"
             "    >>> parprim.scan(np.array([3, 1, 2], np.int32), 'max')\n    array([3, 3, 3], dtype=int32)\n");

PyDoc_STRVAR(cumsum_doc,
             "cumsum(x, *, exclusive=False, out=None, ctx=None, stream=None, copy=False)\n\nInclusive (or exclusive) prefix sum.\n\n"
             "    >>> parprim.cumsum(np.array([1, 2, 3], np.int32))\n    array([1, 3, 6], dtype=int32)\n");

PyDoc_STRVAR(select_doc,
             "select(x, cmp, value, *, ctx=None, stream=None, copy=False)\n\nThe elements of x with (x cmp value), in order.\n"
             "cmp: '>', '>=', '<', '<=', '==', '!=' (or 'gt', ...). NaN compares false except under '!='.\n"
             "The count is needed on the host to size the result, so this call waits for the device.\n\n"
             "    >>> parprim.select(np.array([1, 5, 3], np.int32), '>', 2)\n    array([5, 3], dtype=int32)\n");

PyDoc_STRVAR(select_flagged_doc,
             "select_flagged(x, flags, *, ctx=None, stream=None, copy=False)\n\nThe elements of x whose flag (bool or uint8) is set.\n\n"
             "    >>> parprim.select_flagged(np.array([1, 2, 3], np.int32), np.array([True, False, True]))\n"
             "    array([1, 3], dtype=int32)\n");

PyDoc_STRVAR(partition_doc,
             "partition(x, cmp, value, *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Stable split: (array of the matching elements then the others, number matching).\n\n"
             "    >>> parprim.partition(np.array([1, 5, 3], np.int32), '>', 2)\n    (array([5, 3, 1], dtype=int32), 2)\n");

PyDoc_STRVAR(merge_doc,
             "merge(a, b, *, descending=False, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Merge two sorted arrays of one dtype; stable (a before b on ties).\n\n"
             "    >>> parprim.merge(np.array([1, 4], np.int32), np.array([2, 3], np.int32))\n    array([1, 2, 3, 4], dtype=int32)\n");

PyDoc_STRVAR(topk_doc,
             "topk(x, k, *, largest=True, dim=-1, ctx=None, stream=None, copy=False)\n\n"
             "The k largest (smallest) values in order and their int64 indices, as TopK(values, indices), like\n"
             "torch.topk. 2-D x: top-k of each row (indices within the row). NaN counts as largest.\n\n"
             "    >>> parprim.topk(np.array([1., 9., 5.], np.float32), 2)\n"
             "    parprim.TopK(values=array([9., 5.], dtype=float32), indices=array([1, 2]))\n");

PyDoc_STRVAR(histogram_image_doc,
             "histogram_image(pixels, *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "Per-channel 256-bin counts (channels, 256) of a uint8 (height, width[, channels]) image, 1..4\n"
             "interleaved channels; rows may be padded (a slice of a wider image).\n\n"
             "    >>> parprim.histogram_image(np.zeros((2, 2, 3), np.uint8))[:, 0]\n    array([4, 4, 4])\n");

PyDoc_STRVAR(matmul_doc,
             "matmul(a, b, *, trans_a=False, trans_b=False, alpha=1.0, out=None, ctx=None, stream=None, copy=False)\n\n"
             "alpha * op(a) @ op(b) in float32 (plain FP32 arithmetic). Row- and column-major inputs (a.T) are\n"
             "read in place.\n\n    >>> parprim.matmul(np.eye(2, dtype=np.float32), np.ones((2, 3), np.float32)).shape\n    (2, 3)\n");

PyDoc_STRVAR(sgemm_doc,
             "sgemm(a, b, c, alpha=1.0, beta=0.0, *, trans_a=False, trans_b=False, ctx=None, stream=None)\n\n"
             "CBLAS SGEMM in place: c = alpha * op(a) @ op(b) + beta * c (c is not read when beta == 0).\n"
             "Returns c.\n\n    >>> c = np.ones((2, 2), np.float32)\n"
             "    >>> parprim.sgemm(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32), c, 1.0, 1.0)[0]\n"
             "    array([2., 1.], dtype=float32)\n");

PyDoc_STRVAR(conv2d_doc,
             "conv2d(image, filter, border='zero', *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "2-D correlation (filter not flipped, centred at (fh//2, fw//2)) of a float32 image (height, width).\n"
             "border: 'zero' (scipy 'constant'), 'clamp' ('nearest') or 'mirror' (without repeating the edge).\n\n"
             "    >>> parprim.conv2d(np.ones((4, 4), np.float32), np.ones((3, 3), np.float32), 'clamp')[0, 0]\n"
             "    np.float32(9.0)\n");

PyDoc_STRVAR(conv2d_separable_doc,
             "conv2d_separable(image, row_filter, col_filter, border='zero', *, out=None, ctx=None, stream=None, copy=False)\n\n"
             "conv2d with the filter outer(col_filter, row_filter), in two 1-D passes.\n\n"
             "    >>> parprim.conv2d_separable(np.ones((4, 4), np.float32), [1, 1, 1], [1, 1, 1], 'clamp')[0, 0]\n"
             "    np.float32(9.0)\n");

/* {name, py_<name>, METH_VARARGS | METH_KEYWORDS, <name>_doc} */
#define METHOD(name) {#name, KW py_##name, ARGS_KW, name##_doc}

static PyMethodDef methods[] = {
    METHOD(sum), METHOD(min), METHOD(max), METHOD(reduce), METHOD(argmin), METHOD(argmax),
    METHOD(scan), METHOD(cumsum), METHOD(select), METHOD(select_flagged), METHOD(partition),
    METHOD(sort), METHOD(merge), METHOD(topk), METHOD(histogram), METHOD(histogram_image),
    METHOD(matmul), METHOD(sgemm), METHOD(conv2d), METHOD(conv2d_separable),
    {"_nbody", KW py_nbody, ARGS_KW, "_nbody(op, x, y, z, vx, vy, vz, mass, softening, dt=0, steps=1): see parprim.NBody"},
    {"_bench_reduce_c", KW py_bench_reduce_c, ARGS_KW,
     "_bench_reduce_c(x, iters=1000, *, ctx=None) -> seconds per pp_reduce(SUM) call, timed in a C loop"},
    {"default_context", (PyCFunction)py_default_context, METH_NOARGS,
     "default_context() -> the Context calls use when given no ctx= and no device array\n\n"
     "    >>> parprim.default_context().nranks\n    1\n"},
    {"dist_id_create", (PyCFunction)py_dist_id_create, METH_VARARGS,
     "dist_id_create(backend='auto') -> bytes: the 128-byte id one rank makes and hands to every rank\n"
     "for Context(dist_id=..., nranks=..., rank=...). NotImplementedError names what a build lacks\n"
     "(MPI for 'cpu', NCCL for 'cuda').\n\n"
     "    >>> ident = parprim.dist_id_create('cpu')  # doctest: +SKIP\n"
     "    >>> ctx = parprim.Context('cpu', dist_id=ident, nranks=4, rank=0)  # doctest: +SKIP\n"},
    {NULL, NULL, 0, NULL}};

static PyStructSequence_Field topk_fields[] = {{"values", "the k largest (smallest) values, in order"},
                                               {"indices", "their int64 indices"},
                                               {NULL, NULL}};
static PyStructSequence_Desc topk_desc = {"parprim.TopK", "topk's result: (values, indices)", topk_fields, 2};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "parprim._parprim",
                                       "parprim's C extension: see the parprim package.", -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__parprim(void) {
  if (PyType_Ready(&ppy_ContextType) < 0 || PyType_Ready(&ppy_ArrayType) < 0) return NULL;
  ppy_TopKType = PyStructSequence_NewType(&topk_desc);
  if (!ppy_TopKType) return NULL;
  PyObject *m = PyModule_Create(&moduledef);
  if (!m) return NULL;
  if (PyModule_AddObjectRef(m, "Context", (PyObject *)&ppy_ContextType) ||
      PyModule_AddObjectRef(m, "Array", (PyObject *)&ppy_ArrayType) ||
      PyModule_AddObjectRef(m, "TopK", (PyObject *)ppy_TopKType) ||
      PyModule_AddStringConstant(m, "library_version", pp_version()) ||
      PyModule_AddObjectRef(m, "has_cuda", pp_has_cuda_backend() ? Py_True : Py_False)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
