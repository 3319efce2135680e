/*
 * gpu.cu — bench/gpu.h on the CUDA runtime and CUB (CCCL 3).
 *
 * This file is the only place in parprim that calls CUB: CUB is the peer the benchmarks
 * measure against, never part of the library. Written C-style; the templates only stamp
 * out one CUB call per element type.
 */
#include "gpu.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

struct bench_gpu_timer {
  cudaEvent_t start;
  cudaEvent_t stop;
};

static char g_error[512];
static char g_name[256];
/* One cached CUB temporary allocation, grown by the *_prepare calls, so the timed calls
 * never allocate. */
static void *g_temp = nullptr;
static size_t g_temp_bytes = 0;

static int fail(const char *what, cudaError_t e) {
  snprintf(g_error, sizeof g_error, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  return -1;
}

static int check(cudaError_t e, const char *what) { return e == cudaSuccess ? 0 : fail(what, e); }

static cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

extern "C" int bench_gpu_available(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    fail("cudaGetDeviceCount", e);
    (void)cudaGetLastError(); /* a missing driver must not poison later calls */
    return 0;
  }
  return count > 0;
}

extern "C" const char *bench_gpu_error(void) { return g_error; }

extern "C" const char *bench_gpu_name(void) {
  int dev = 0;
  cudaDeviceProp prop;
  if (check(cudaGetDevice(&dev), "cudaGetDevice") ||
      check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties"))
    return "";
  snprintf(g_name, sizeof g_name, "%s", prop.name);
  return g_name;
}

extern "C" int bench_gpu_mem_info(size_t *free_bytes, size_t *total_bytes) {
  return check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

extern "C" int bench_gpu_stream_create(void **stream) {
  cudaStream_t s = nullptr;
  if (check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"))
    return -1;
  *stream = s;
  return 0;
}

extern "C" int bench_gpu_stream_destroy(void *stream) {
  return check(cudaStreamDestroy(as_stream(stream)), "cudaStreamDestroy");
}

extern "C" int bench_gpu_stream_sync(void *stream) {
  return check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

extern "C" int bench_gpu_timer_create(bench_gpu_timer **timer) {
  bench_gpu_timer *t = static_cast<bench_gpu_timer *>(calloc(1, sizeof *t));
  if (!t) {
    snprintf(g_error, sizeof g_error, "bench_gpu_timer_create: out of host memory");
    return -1;
  }
  if (check(cudaEventCreate(&t->start), "cudaEventCreate(start)")) {
    free(t);
    return -1;
  }
  if (check(cudaEventCreate(&t->stop), "cudaEventCreate(stop)")) {
    (void)cudaEventDestroy(t->start);
    free(t);
    return -1;
  }
  *timer = t;
  return 0;
}

extern "C" void bench_gpu_timer_destroy(bench_gpu_timer *timer) {
  if (!timer)
    return;
  (void)cudaEventDestroy(timer->start);
  (void)cudaEventDestroy(timer->stop);
  free(timer);
}

extern "C" int bench_gpu_timer_start(bench_gpu_timer *timer, void *stream) {
  return check(cudaEventRecord(timer->start, as_stream(stream)), "cudaEventRecord(start)");
}

extern "C" int bench_gpu_timer_stop(bench_gpu_timer *timer, void *stream) {
  return check(cudaEventRecord(timer->stop, as_stream(stream)), "cudaEventRecord(stop)");
}

extern "C" int bench_gpu_timer_elapsed_ms(bench_gpu_timer *timer, double *ms) {
  float f = 0.0f;
  if (check(cudaEventSynchronize(timer->stop), "cudaEventSynchronize") ||
      check(cudaEventElapsedTime(&f, timer->start, timer->stop), "cudaEventElapsedTime"))
    return -1;
  *ms = f;
  return 0;
}

extern "C" int bench_gpu_malloc(void **ptr, size_t bytes) {
  return check(cudaMalloc(ptr, bytes), "cudaMalloc");
}

extern "C" int bench_gpu_free(void *ptr) { return check(cudaFree(ptr), "cudaFree"); }

extern "C" int bench_gpu_memcpy(void *dst, const void *src, size_t bytes, void *stream) {
  return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)),
               "cudaMemcpyAsync");
}

/* ---------------------------------------------------------------------------------- */
/* CUB                                                                                 */
/* ---------------------------------------------------------------------------------- */

template <typename T>
static cudaError_t cub_reduce_t(void *temp, size_t &temp_bytes, pp_op op, const void *in,
                                size_t n, void *out, cudaStream_t s) {
  const T *d_in = static_cast<const T *>(in);
  T *d_out = static_cast<T *>(out);
  switch (op) {
  case PP_SUM:
    return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n, s);
  case PP_MIN:
    return cub::DeviceReduce::Min(temp, temp_bytes, d_in, d_out, n, s);
  case PP_MAX:
    return cub::DeviceReduce::Max(temp, temp_bytes, d_in, d_out, n, s);
  }
  return cudaErrorInvalidValue;
}

/* The two-output ArgMin/ArgMax of CCCL 3 (the KeyValuePair form is deprecated). */
template <typename T>
static cudaError_t cub_argreduce_t(void *temp, size_t &temp_bytes, pp_op op, const void *in,
                                   size_t n, void *value_out, void *index_out,
                                   cudaStream_t s) {
  const T *d_in = static_cast<const T *>(in);
  T *d_val = static_cast<T *>(value_out);
  int64_t *d_idx = static_cast<int64_t *>(index_out);
  int64_t items = static_cast<int64_t>(n);
  switch (op) {
  case PP_MIN:
    return cub::DeviceReduce::ArgMin(temp, temp_bytes, d_in, d_val, d_idx, items, s);
  case PP_MAX:
    return cub::DeviceReduce::ArgMax(temp, temp_bytes, d_in, d_val, d_idx, items, s);
  case PP_SUM:
    break;
  }
  return cudaErrorInvalidValue;
}

static cudaError_t cub_reduce_any(pp_dtype t, void *temp, size_t &temp_bytes, pp_op op,
                                  const void *in, size_t n, void *out, cudaStream_t s) {
  switch (t) {
  case PP_U8:
    return cub_reduce_t<uint8_t>(temp, temp_bytes, op, in, n, out, s);
  case PP_I32:
    return cub_reduce_t<int32_t>(temp, temp_bytes, op, in, n, out, s);
  case PP_U32:
    return cub_reduce_t<uint32_t>(temp, temp_bytes, op, in, n, out, s);
  case PP_I64:
    return cub_reduce_t<int64_t>(temp, temp_bytes, op, in, n, out, s);
  case PP_U64:
    return cub_reduce_t<uint64_t>(temp, temp_bytes, op, in, n, out, s);
  case PP_F32:
    return cub_reduce_t<float>(temp, temp_bytes, op, in, n, out, s);
  case PP_F64:
    return cub_reduce_t<double>(temp, temp_bytes, op, in, n, out, s);
  }
  return cudaErrorInvalidValue;
}

static cudaError_t cub_argreduce_any(pp_dtype t, void *temp, size_t &temp_bytes, pp_op op,
                                     const void *in, size_t n, void *val, void *idx,
                                     cudaStream_t s) {
  switch (t) {
  case PP_U8:
    return cub_argreduce_t<uint8_t>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_I32:
    return cub_argreduce_t<int32_t>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_U32:
    return cub_argreduce_t<uint32_t>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_I64:
    return cub_argreduce_t<int64_t>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_U64:
    return cub_argreduce_t<uint64_t>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_F32:
    return cub_argreduce_t<float>(temp, temp_bytes, op, in, n, val, idx, s);
  case PP_F64:
    return cub_argreduce_t<double>(temp, temp_bytes, op, in, n, val, idx, s);
  }
  return cudaErrorInvalidValue;
}

/* cudaFree synchronizes the device; that is why growing happens only in *_prepare. */
static int ensure_temp(size_t need) {
  if (need <= g_temp_bytes && g_temp)
    return 0;
  if (g_temp && check(cudaFree(g_temp), "cudaFree(CUB temp)"))
    return -1;
  g_temp = nullptr;
  g_temp_bytes = 0;
  size_t bytes = need ? need : 1;
  if (check(cudaMalloc(&g_temp, bytes), "cudaMalloc(CUB temp)"))
    return -1;
  g_temp_bytes = bytes;
  return 0;
}

static int need_prepared(const char *fn) {
  if (g_temp)
    return 0;
  snprintf(g_error, sizeof g_error, "%s: call the matching *_prepare first", fn);
  return -1;
}

extern "C" int bench_cub_reduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  size_t need = 0;
  cudaError_t e = cub_reduce_any(t, nullptr, need, op, nullptr, n, nullptr, as_stream(stream));
  if (e != cudaSuccess)
    return fail("cub::DeviceReduce (temp size query)", e);
  return ensure_temp(need);
}

extern "C" int bench_cub_reduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_out,
                                void *stream) {
  if (need_prepared("bench_cub_reduce"))
    return -1;
  size_t bytes = g_temp_bytes;
  return check(cub_reduce_any(t, g_temp, bytes, op, d_in, n, d_out, as_stream(stream)),
               "cub::DeviceReduce::Sum/Min/Max");
}

extern "C" int bench_cub_argreduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  size_t need = 0;
  cudaError_t e =
      cub_argreduce_any(t, nullptr, need, op, nullptr, n, nullptr, nullptr, as_stream(stream));
  if (e != cudaSuccess)
    return fail("cub::DeviceReduce::ArgMin/ArgMax (temp size query)", e);
  return ensure_temp(need);
}

extern "C" int bench_cub_argreduce(pp_dtype t, pp_op op, const void *d_in, size_t n,
                                   void *d_value_out, void *d_index_out, void *stream) {
  if (need_prepared("bench_cub_argreduce"))
    return -1;
  size_t bytes = g_temp_bytes;
  return check(cub_argreduce_any(t, g_temp, bytes, op, d_in, n, d_value_out, d_index_out,
                                 as_stream(stream)),
               "cub::DeviceReduce::ArgMin/ArgMax");
}

extern "C" void bench_gpu_release(void) {
  if (g_temp)
    (void)cudaFree(g_temp);
  g_temp = nullptr;
  g_temp_bytes = 0;
}
