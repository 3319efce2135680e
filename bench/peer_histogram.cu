/*
 * peer_histogram.cu — bench/peer_histogram.h on CUB's DeviceHistogram (CCCL 3): the peer
 * of `parprim bench histogram`. Only bench/ calls CUB; the library never does.
 *
 * Levels are given to CUB in the sample's own precision where that is what a CUB user
 * writes (float levels for float samples, int levels for u8 images), double otherwise.
 * With power-of-two bin counts over [-1, 1) (the bench's choice) CUB's float arithmetic
 * and parprim's double rule put every sample in the same bin.
 */
#include "peer_histogram.h"
#include "peer_common.cuh"

#include <cub/device/device_histogram.cuh>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdio>

static char g_error[512];
static peer_temp g_temp = {nullptr, 0};

static int fail(const char *what, cudaError_t e) {
  return peer_fail(g_error, sizeof g_error, what, e);
}

static int too_big(size_t n, size_t bins) {
  if (n <= (size_t)INT_MAX && bins < (size_t)INT_MAX) return 0;
  snprintf(g_error, sizeof g_error, "CUB histogram peer: n (%zu) or bins (%zu) beyond int", n,
           bins);
  return -1;
}

static cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

/* The level type a CUB user picks for samples of T. */
template <typename T> struct level_of { typedef double type; };
template <> struct level_of<float> { typedef float type; };
template <> struct level_of<uint8_t> { typedef int type; };

template <typename T>
static cudaError_t even_t(void *temp, size_t &bytes, const void *in, size_t n, size_t bins,
                          double lo, double hi, int32_t *counts, cudaStream_t s) {
  typedef typename level_of<T>::type L;
  return cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const T *>(in), counts,
                                             (int)bins + 1, (L)lo, (L)hi, (int)n, s);
}

template <typename T>
static cudaError_t range_t(void *temp, size_t &bytes, const void *in, size_t n, size_t bins,
                          const double *levels, int32_t *counts, cudaStream_t s) {
  return cub::DeviceHistogram::HistogramRange(temp, bytes, static_cast<const T *>(in), counts,
                                              (int)bins + 1, levels, (int)n, s);
}

#define BY_DTYPE(t, CALL)                                                                   \
  switch (t) {                                                                              \
  case PP_U8: return CALL(uint8_t);                                                         \
  case PP_I32: return CALL(int32_t);                                                        \
  case PP_U32: return CALL(uint32_t);                                                       \
  case PP_I64: return CALL(int64_t);                                                        \
  case PP_U64: return CALL(uint64_t);                                                       \
  case PP_F32: return CALL(float);                                                          \
  case PP_F64: return CALL(double);                                                         \
  }                                                                                         \
  return cudaErrorInvalidValue;

static cudaError_t even_any(pp_dtype t, void *temp, size_t &bytes, const void *in, size_t n,
                            size_t bins, double lo, double hi, int32_t *counts, cudaStream_t s) {
#define EVEN_CALL(T) even_t<T>(temp, bytes, in, n, bins, lo, hi, counts, s)
  BY_DTYPE(t, EVEN_CALL)
#undef EVEN_CALL
}

static cudaError_t range_any(pp_dtype t, void *temp, size_t &bytes, const void *in, size_t n,
                             size_t bins, const double *levels, int32_t *counts, cudaStream_t s) {
#define RANGE_CALL(T) range_t<T>(temp, bytes, in, n, bins, levels, counts, s)
  BY_DTYPE(t, RANGE_CALL)
#undef RANGE_CALL
}

static int grow(size_t need) {
  return peer_temp_grow(&g_temp, need, g_error, sizeof g_error);
}

extern "C" int bench_cub_histogram_even_prepare(pp_dtype t, size_t n, size_t bins, double lo,
                                                double hi, void *stream) {
  if (too_big(n, bins)) return -1;
  size_t need = 0;
  cudaError_t e = even_any(t, nullptr, need, nullptr, n, bins, lo, hi, nullptr, as_stream(stream));
  if (e != cudaSuccess) return fail("cub::DeviceHistogram::HistogramEven (size)", e);
  return grow(need);
}

extern "C" int bench_cub_histogram_even(pp_dtype t, const void *d_in, size_t n, size_t bins,
                                        double lo, double hi, int32_t *d_counts, void *stream) {
  if (too_big(n, bins)) return -1;
  size_t bytes = g_temp.bytes;
  cudaError_t e = even_any(t, g_temp.p, bytes, d_in, n, bins, lo, hi, d_counts, as_stream(stream));
  return e == cudaSuccess ? 0 : fail("cub::DeviceHistogram::HistogramEven", e);
}

extern "C" int bench_cub_histogram_range_prepare(pp_dtype t, size_t n, size_t bins,
                                                 const double *d_levels, void *stream) {
  if (too_big(n, bins)) return -1;
  size_t need = 0;
  cudaError_t e = range_any(t, nullptr, need, nullptr, n, bins, d_levels, nullptr, as_stream(stream));
  if (e != cudaSuccess) return fail("cub::DeviceHistogram::HistogramRange (size)", e);
  return grow(need);
}

extern "C" int bench_cub_histogram_range(pp_dtype t, const void *d_in, size_t n, size_t bins,
                                         const double *d_levels, int32_t *d_counts,
                                         void *stream) {
  if (too_big(n, bins)) return -1;
  size_t bytes = g_temp.bytes;
  cudaError_t e = range_any(t, g_temp.p, bytes, d_in, n, bins, d_levels, d_counts, as_stream(stream));
  return e == cudaSuccess ? 0 : fail("cub::DeviceHistogram::HistogramRange", e);
}

extern "C" const char *bench_cub_histogram_error(void) { return g_error; }

extern "C" void bench_cub_histogram_release(void) { peer_temp_release(&g_temp); }
