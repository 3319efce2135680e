/* peer_topk.cu — CUB full sorts as the top-k peers of `parprim bench topk` (see
 * peer_topk.h). */
#include "peer_topk.h"
#include "peer_common.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <stdint.h>
#include <stdio.h>

static char g_err[256];
static peer_temp g_temp;    /* CUB's temporary storage */
static peer_temp g_offsets; /* rows + 1 int segment offsets */

static int fail(const char *what, cudaError_t e) { return peer_fail(g_err, sizeof g_err, what, e); }

extern "C" const char *bench_topk_error(void) { return g_err; }

__global__ void fill_offsets(int *o, size_t rows, size_t cols) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= rows;
       i += (size_t)gridDim.x * blockDim.x)
    o[i] = (int)(i * cols);
}

/* temp (NULL: size query) for one array or for rows */
template <typename K>
static cudaError_t run(void *temp, size_t &bytes, const void *in, void *out, size_t n, size_t rows,
                       cudaStream_t s) {
  if (rows == 0)
    return cub::DeviceRadixSort::SortKeysDescending(temp, bytes, (const K *)in, (K *)out, (int)n, 0,
                                                    (int)(sizeof(K) * 8), s);
  return cub::DeviceSegmentedSort::SortKeysDescending(temp, bytes, (const K *)in, (K *)out, (int)n,
                                                      (int)rows, (const int *)g_offsets.p,
                                                      (const int *)g_offsets.p + 1, s);
}

static cudaError_t run_t(pp_dtype t, void *temp, size_t &bytes, const void *in, void *out,
                         size_t n, size_t rows, cudaStream_t s) {
  switch (t) {
  case PP_U8: return run<uint8_t>(temp, bytes, in, out, n, rows, s);
  case PP_I32: return run<int32_t>(temp, bytes, in, out, n, rows, s);
  case PP_U32: return run<uint32_t>(temp, bytes, in, out, n, rows, s);
  case PP_I64: return run<int64_t>(temp, bytes, in, out, n, rows, s);
  case PP_U64: return run<uint64_t>(temp, bytes, in, out, n, rows, s);
  case PP_F32: return run<float>(temp, bytes, in, out, n, rows, s);
  case PP_F64: return run<double>(temp, bytes, in, out, n, rows, s);
  }
  return cudaErrorInvalidValue;
}

extern "C" int bench_topk_cub_prepare(pp_dtype t, size_t n, size_t rows, void *stream) {
  if (n > (size_t)INT32_MAX) {
    snprintf(g_err, sizeof g_err, "CUB peer: n = %zu is beyond its int sizes", n);
    return -1;
  }
  cudaStream_t s = (cudaStream_t)stream;
  if (rows) {
    const size_t cols = n / rows;
    if (peer_temp_grow(&g_offsets, (rows + 1) * sizeof(int), g_err, sizeof g_err) != 0)
      return -1;
    fill_offsets<<<(unsigned)((rows + 256) / 256), 256, 0, s>>>((int *)g_offsets.p, rows, cols);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return fail("segment offsets", e);
  }
  size_t bytes = 0;
  cudaError_t e = run_t(t, NULL, bytes, NULL, NULL, n, rows, s);
  if (e != cudaSuccess) return fail("CUB size query", e);
  return peer_temp_grow(&g_temp, bytes, g_err, sizeof g_err);
}

extern "C" int bench_topk_cub_sort(pp_dtype t, const void *d_in, void *d_out, size_t n,
                                   void *stream) {
  size_t bytes = g_temp.bytes;
  cudaError_t e = run_t(t, g_temp.p, bytes, d_in, d_out, n, 0, (cudaStream_t)stream);
  return e == cudaSuccess ? 0 : fail("cub::DeviceRadixSort::SortKeysDescending", e);
}

extern "C" int bench_topk_cub_segsort(pp_dtype t, const void *d_in, void *d_out, size_t rows,
                                      size_t cols, void *stream) {
  size_t bytes = g_temp.bytes;
  cudaError_t e = run_t(t, g_temp.p, bytes, d_in, d_out, rows * cols, rows, (cudaStream_t)stream);
  return e == cudaSuccess ? 0 : fail("cub::DeviceSegmentedSort::SortKeysDescending", e);
}

extern "C" void bench_topk_release(void) {
  peer_temp_release(&g_temp);
  peer_temp_release(&g_offsets);
}
