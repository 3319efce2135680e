/* peer_topk.cu — CUB full sorts as the top-k peers of `parprim bench topk` (see
 * peer_topk.h). */
#include "peer_topk.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <stdint.h>
#include <stdio.h>

static char g_err[256];
static void *g_temp = NULL;
static size_t g_temp_bytes = 0;
static int *g_offsets = NULL; /* rows + 1 segment offsets */
static size_t g_offsets_rows = 0, g_offsets_cols = 0;

static int fail(const char *what, cudaError_t e) {
  snprintf(g_err, sizeof g_err, "%s: %s", what, cudaGetErrorString(e));
  return -1;
}

extern "C" const char *bench_topk_error(void) { return g_err; }

static int grow(size_t bytes) {
  if (bytes <= g_temp_bytes) return 0;
  if (g_temp) cudaFree(g_temp);
  g_temp = NULL;
  g_temp_bytes = 0;
  cudaError_t e = cudaMalloc(&g_temp, bytes);
  if (e != cudaSuccess) return fail("cudaMalloc (CUB temporary storage)", e);
  g_temp_bytes = bytes;
  return 0;
}

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
                                                      (int)rows, g_offsets, g_offsets + 1, s);
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
    if (rows + 1 > g_offsets_rows + 1 || !g_offsets || cols != g_offsets_cols) {
      if (g_offsets) cudaFree(g_offsets);
      g_offsets = NULL;
      cudaError_t e = cudaMalloc(&g_offsets, (rows + 1) * sizeof(int));
      if (e != cudaSuccess) return fail("cudaMalloc (segment offsets)", e);
      g_offsets_rows = rows;
      g_offsets_cols = cols;
    }
    fill_offsets<<<(unsigned)((rows + 256) / 256), 256, 0, s>>>(g_offsets, rows, cols);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return fail("segment offsets", e);
  }
  size_t bytes = 0;
  cudaError_t e = run_t(t, NULL, bytes, NULL, NULL, n, rows, s);
  if (e != cudaSuccess) return fail("CUB size query", e);
  return grow(bytes);
}

extern "C" int bench_topk_cub_sort(pp_dtype t, const void *d_in, void *d_out, size_t n,
                                   void *stream) {
  size_t bytes = g_temp_bytes;
  cudaError_t e = run_t(t, g_temp, bytes, d_in, d_out, n, 0, (cudaStream_t)stream);
  return e == cudaSuccess ? 0 : fail("cub::DeviceRadixSort::SortKeysDescending", e);
}

extern "C" int bench_topk_cub_segsort(pp_dtype t, const void *d_in, void *d_out, size_t rows,
                                      size_t cols, void *stream) {
  size_t bytes = g_temp_bytes;
  cudaError_t e = run_t(t, g_temp, bytes, d_in, d_out, rows * cols, rows, (cudaStream_t)stream);
  return e == cudaSuccess ? 0 : fail("cub::DeviceSegmentedSort::SortKeysDescending", e);
}

extern "C" void bench_topk_release(void) {
  if (g_temp) cudaFree(g_temp);
  if (g_offsets) cudaFree(g_offsets);
  g_temp = NULL;
  g_offsets = NULL;
  g_temp_bytes = g_offsets_rows = g_offsets_cols = 0;
}
