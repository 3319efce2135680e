/*
 * gpu.cu — bench/gpu.h on the CUDA runtime and CUB (CCCL 3).
 *
 * This file is the only place in parprim that calls CUB: CUB is the peer the benchmarks
 * measure against, never part of the library. Written C-style; the templates (and the
 * generic lambdas of by_dtype / by_count) only stamp out one CUB call per element type
 * and count width.
 */
#include "gpu.h"
#include "peer_common.cuh"

#include <cub/cub.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct bench_gpu_timer {
  cudaEvent_t start;
  cudaEvent_t stop;
};

static char g_error[512];
static char g_name[256];
/* One cached CUB temporary allocation, grown by the *_prepare calls, so the timed calls
 * never allocate. */
static peer_temp g_temp = {nullptr, 0};

static int fail(const char *what, cudaError_t e) {
  return peer_fail(g_error, sizeof g_error, what, e);
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

/* Calls f with a value of the C type of t (only its type matters). */
template <typename F> static cudaError_t by_dtype(pp_dtype t, F &&f) {
  switch (t) {
  case PP_U8: return f(uint8_t{});
  case PP_I32: return f(int32_t{});
  case PP_U32: return f(uint32_t{});
  case PP_I64: return f(int64_t{});
  case PP_U64: return f(uint64_t{});
  case PP_F32: return f(float{});
  case PP_F64: return f(double{});
  }
  return cudaErrorInvalidValue;
}

/* cudaFree synchronizes the device; that is why growing happens only in *_prepare. */
static int ensure_temp(size_t need) {
  return peer_temp_grow(&g_temp, need, g_error, sizeof g_error);
}

static int need_prepared(const char *fn) {
  if (g_temp.p)
    return 0;
  snprintf(g_error, sizeof g_error, "%s: call the matching *_prepare first", fn);
  return -1;
}

/* The two calls of every CUB peer below, after CUB's own two-call protocol: call(temp,
 * bytes) makes the CUB call. cub_prepare asks CUB for its temporary storage (temp ==
 * nullptr) and grows g_temp to it; cub_run makes the call on g_temp (fn names the entry
 * point when no *_prepare came first). what names the CUB call in errors. */
template <typename Call> static int cub_prepare(const char *what, Call &&call) {
  size_t need = 0;
  cudaError_t e = call(nullptr, need);
  if (e != cudaSuccess) {
    char w[192];
    snprintf(w, sizeof w, "%s (temp size query)", what);
    return fail(w, e);
  }
  return ensure_temp(need);
}

template <typename Call> static int cub_run(const char *fn, const char *what, Call &&call) {
  if (need_prepared(fn))
    return -1;
  size_t bytes = g_temp.bytes;
  return check(call(g_temp.p, bytes), what);
}

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
  return by_dtype(t, [&](auto type_tag) {
    return cub_reduce_t<decltype(type_tag)>(temp, temp_bytes, op, in, n, out, s);
  });
}

static cudaError_t cub_argreduce_any(pp_dtype t, void *temp, size_t &temp_bytes, pp_op op,
                                     const void *in, size_t n, void *val, void *idx,
                                     cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) {
    return cub_argreduce_t<decltype(type_tag)>(temp, temp_bytes, op, in, n, val, idx, s);
  });
}

extern "C" int bench_cub_reduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  return cub_prepare("cub::DeviceReduce", [&](void *temp, size_t &bytes) {
    return cub_reduce_any(t, temp, bytes, op, nullptr, n, nullptr, as_stream(stream));
  });
}

extern "C" int bench_cub_reduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_out,
                                void *stream) {
  return cub_run("bench_cub_reduce", "cub::DeviceReduce::Sum/Min/Max",
                 [&](void *temp, size_t &bytes) {
                   return cub_reduce_any(t, temp, bytes, op, d_in, n, d_out, as_stream(stream));
                 });
}

extern "C" int bench_cub_argreduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  return cub_prepare("cub::DeviceReduce::ArgMin/ArgMax", [&](void *temp, size_t &bytes) {
    return cub_argreduce_any(t, temp, bytes, op, nullptr, n, nullptr, nullptr, as_stream(stream));
  });
}

extern "C" int bench_cub_argreduce(pp_dtype t, pp_op op, const void *d_in, size_t n,
                                   void *d_value_out, void *d_index_out, void *stream) {
  return cub_run("bench_cub_argreduce", "cub::DeviceReduce::ArgMin/ArgMax",
                 [&](void *temp, size_t &bytes) {
                   return cub_argreduce_any(t, temp, bytes, op, d_in, n, d_value_out, d_index_out,
                                            as_stream(stream));
                 });
}

/* ---------------------------------------------------------------------------------- */
/* CUB peers of scan, select, partition, sort and merge                                */
/* ---------------------------------------------------------------------------------- */

/* Scan and radix sort take the item count's type as a template parameter and pick their
 * offset width from it. Callers of CUB pass an int almost always, so below 2^32 the peer
 * gets 32-bit offsets (CUB's fastest, and what its published numbers use); beyond, 64. */
template <typename F> static cudaError_t by_count(size_t n, F &&f) {
  if (n <= UINT32_MAX)
    return f(static_cast<uint32_t>(n));
  return f(static_cast<uint64_t>(n));
}

/* x > value, the predicate of the select and partition peers. */
template <typename T> struct greater_than {
  T value;
  __host__ __device__ bool operator()(const T &x) const { return x > value; }
};

template <typename T> static greater_than<T> predicate_from(const void *value) {
  greater_than<T> p;
  if (value)
    memcpy(&p.value, value, sizeof(T));
  else
    p.value = T{}; /* the temp-size query does not look at it */
  return p;
}

template <typename T>
static cudaError_t cub_scan_t(void *temp, size_t &temp_bytes, pp_op op, bool inclusive,
                              const void *in, void *out, size_t n, cudaStream_t s) {
  const T *d_in = static_cast<const T *>(in);
  T *d_out = static_cast<T *>(out);
  using lim = ::cuda::std::numeric_limits<T>;
  /* exclusive MIN/MAX start from the identity, as pp_scan's do */
  const T min_identity = lim::has_infinity ? lim::infinity() : lim::max();
  const T max_identity = lim::has_infinity ? -lim::infinity() : lim::lowest();
  return by_count(n, [&](auto count) -> cudaError_t {
    /* MIN and MAX: the generic scan with the operator and, exclusive, its identity */
    auto scan_with = [&](auto scan_op, T identity) -> cudaError_t {
      return inclusive ? cub::DeviceScan::InclusiveScan(temp, temp_bytes, d_in, d_out, scan_op,
                                                        count, s)
                       : cub::DeviceScan::ExclusiveScan(temp, temp_bytes, d_in, d_out, scan_op,
                                                        identity, count, s);
    };
    switch (op) {
    case PP_SUM:
      return inclusive ? cub::DeviceScan::InclusiveSum(temp, temp_bytes, d_in, d_out, count, s)
                       : cub::DeviceScan::ExclusiveSum(temp, temp_bytes, d_in, d_out, count, s);
    case PP_MIN: return scan_with(::cuda::minimum<>{}, min_identity);
    case PP_MAX: return scan_with(::cuda::maximum<>{}, max_identity);
    }
    return cudaErrorInvalidValue;
  });
}

static cudaError_t cub_scan_any(pp_dtype t, void *temp, size_t &temp_bytes, pp_op op,
                                bool inclusive, const void *in, void *out, size_t n,
                                cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) {
    return cub_scan_t<decltype(type_tag)>(temp, temp_bytes, op, inclusive, in, out, n, s);
  });
}

extern "C" int bench_cub_scan_prepare(pp_dtype t, pp_op op, bool inclusive, size_t n,
                                      void *stream) {
  return cub_prepare("cub::DeviceScan", [&](void *temp, size_t &bytes) {
    return cub_scan_any(t, temp, bytes, op, inclusive, nullptr, nullptr, n, as_stream(stream));
  });
}

extern "C" int bench_cub_scan(pp_dtype t, pp_op op, bool inclusive, const void *d_in,
                              void *d_out, size_t n, void *stream) {
  return cub_run("bench_cub_scan", "cub::DeviceScan", [&](void *temp, size_t &bytes) {
    return cub_scan_any(t, temp, bytes, op, inclusive, d_in, d_out, n, as_stream(stream));
  });
}

/* select (partition false) and partition share the predicate and the argument list. */
static cudaError_t cub_select_any(bool partition, pp_dtype t, void *temp, size_t &temp_bytes,
                                  const void *value, const void *in, void *out,
                                  uint64_t *count, size_t n, cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) -> cudaError_t {
    using T = decltype(type_tag);
    const T *d_in = static_cast<const T *>(in);
    T *d_out = static_cast<T *>(out);
    greater_than<T> pred = predicate_from<T>(value);
    if (partition) {
      /* DevicePartition::If picks 32-bit offsets from an int count, like by_count */
      if (n <= static_cast<size_t>(INT32_MAX))
        return cub::DevicePartition::If(temp, temp_bytes, d_in, d_out, count,
                                         static_cast<int32_t>(n), pred, s);
      return cub::DevicePartition::If(temp, temp_bytes, d_in, d_out, count,
                                       static_cast<int64_t>(n), pred, s);
    }
    return cub::DeviceSelect::If(temp, temp_bytes, d_in, d_out, count, static_cast<int64_t>(n),
                                 pred, s);
  });
}

static const char *select_name(bool partition) {
  return partition ? "cub::DevicePartition::If" : "cub::DeviceSelect::If";
}

static int select_prepare(bool partition, pp_dtype t, size_t n, void *stream) {
  return cub_prepare(select_name(partition), [&](void *temp, size_t &bytes) {
    return cub_select_any(partition, t, temp, bytes, nullptr, nullptr, nullptr, nullptr, n,
                          as_stream(stream));
  });
}

static int select_run(bool partition, const char *fn, pp_dtype t, const void *value,
                      const void *d_in, void *d_out, uint64_t *d_count, size_t n, void *stream) {
  return cub_run(fn, select_name(partition), [&](void *temp, size_t &bytes) {
    return cub_select_any(partition, t, temp, bytes, value, d_in, d_out, d_count, n,
                          as_stream(stream));
  });
}

extern "C" int bench_cub_select_prepare(pp_dtype t, size_t n, void *stream) {
  return select_prepare(false, t, n, stream);
}

extern "C" int bench_cub_select(pp_dtype t, const void *value, const void *d_in, void *d_out,
                                uint64_t *d_count, size_t n, void *stream) {
  return select_run(false, "bench_cub_select", t, value, d_in, d_out, d_count, n, stream);
}

extern "C" int bench_cub_partition_prepare(pp_dtype t, size_t n, void *stream) {
  return select_prepare(true, t, n, stream);
}

extern "C" int bench_cub_partition(pp_dtype t, const void *value, const void *d_in, void *d_out,
                                   uint64_t *d_count, size_t n, void *stream) {
  return select_run(true, "bench_cub_partition", t, value, d_in, d_out, d_count, n, stream);
}

template <typename R>
static cudaError_t cub_flagged_t(void *temp, size_t &temp_bytes, const void *in,
                                 const uint8_t *flags, void *out, uint64_t *count, size_t n,
                                 cudaStream_t s) {
  return cub::DeviceSelect::Flagged(temp, temp_bytes, static_cast<const R *>(in), flags,
                                    static_cast<R *>(out), count, static_cast<int64_t>(n), s);
}

static cudaError_t cub_flagged_any(size_t elem_size, void *temp, size_t &temp_bytes,
                                   const void *in, const uint8_t *flags, void *out,
                                   uint64_t *count, size_t n, cudaStream_t s) {
  switch (elem_size) {
  case 1:
    return cub_flagged_t<uint8_t>(temp, temp_bytes, in, flags, out, count, n, s);
  case 2:
    return cub_flagged_t<uint16_t>(temp, temp_bytes, in, flags, out, count, n, s);
  case 4:
    return cub_flagged_t<uint32_t>(temp, temp_bytes, in, flags, out, count, n, s);
  case 8:
    return cub_flagged_t<uint64_t>(temp, temp_bytes, in, flags, out, count, n, s);
  }
  return cudaErrorInvalidValue;
}

extern "C" int bench_cub_select_flagged_prepare(size_t elem_size, size_t n, void *stream) {
  return cub_prepare("cub::DeviceSelect::Flagged", [&](void *temp, size_t &bytes) {
    return cub_flagged_any(elem_size, temp, bytes, nullptr, nullptr, nullptr, nullptr, n,
                           as_stream(stream));
  });
}

extern "C" int bench_cub_select_flagged(size_t elem_size, const void *d_in,
                                        const uint8_t *d_flags, void *d_out, uint64_t *d_count,
                                        size_t n, void *stream) {
  return cub_run("bench_cub_select_flagged", "cub::DeviceSelect::Flagged",
                 [&](void *temp, size_t &bytes) {
                   return cub_flagged_any(elem_size, temp, bytes, d_in, d_flags, d_out, d_count,
                                          n, as_stream(stream));
                 });
}

/* The DoubleBuffer form lets CUB ping-pong between the two buffers the caller owns, so it
 * needs no copy of the keys in its temporary storage: CUB's fastest use of its sort. */
template <typename K>
static cudaError_t cub_sort_t(void *temp, size_t &temp_bytes, void *const keys[2],
                              void *const values[2], size_t value_size, size_t n,
                              bool descending, int *current, cudaStream_t s) {
  cub::DoubleBuffer<K> dk(static_cast<K *>(keys[0]), static_cast<K *>(keys[1]));
  cudaError_t e = cudaErrorInvalidValue;
  if (value_size == 0) {
    e = by_count(n, [&](auto count) {
      return descending ? cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, dk, count,
                                                                   0, int(sizeof(K) * 8), s)
                        : cub::DeviceRadixSort::SortKeys(temp, temp_bytes, dk, count, 0,
                                                         int(sizeof(K) * 8), s);
    });
  } else if (value_size == 4) {
    cub::DoubleBuffer<uint32_t> dv(static_cast<uint32_t *>(values[0]),
                                   static_cast<uint32_t *>(values[1]));
    e = by_count(n, [&](auto count) {
      return descending
                 ? cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, dk, dv, count, 0,
                                                             int(sizeof(K) * 8), s)
                 : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, dk, dv, count, 0,
                                                   int(sizeof(K) * 8), s);
    });
  }
  if (current)
    *current = dk.selector;
  return e;
}

static cudaError_t cub_sort_any(pp_dtype t, void *temp, size_t &temp_bytes, void *const keys[2],
                                void *const values[2], size_t value_size, size_t n,
                                bool descending, int *current, cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) {
    return cub_sort_t<decltype(type_tag)>(temp, temp_bytes, keys, values, value_size, n,
                                          descending, current, s);
  });
}

extern "C" int bench_cub_sort_prepare(pp_dtype key_t, size_t value_size, bool descending,
                                      size_t n, void *stream) {
  void *const none[2] = {nullptr, nullptr};
  return cub_prepare("cub::DeviceRadixSort", [&](void *temp, size_t &bytes) {
    return cub_sort_any(key_t, temp, bytes, none, none, value_size, n, descending, nullptr,
                        as_stream(stream));
  });
}

extern "C" int bench_cub_sort(pp_dtype key_t, void *const d_keys[2], void *const d_values[2],
                              size_t value_size, size_t n, bool descending, int *current,
                              void *stream) {
  return cub_run("bench_cub_sort", "cub::DeviceRadixSort", [&](void *temp, size_t &bytes) {
    return cub_sort_any(key_t, temp, bytes, d_keys, d_values, value_size, n, descending, current,
                        as_stream(stream));
  });
}

static cudaError_t cub_merge_sort_any(pp_dtype t, bool descending, void *temp,
                                      size_t &temp_bytes, void *keys, size_t n, cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) {
    using K = decltype(type_tag);
    K *d = static_cast<K *>(keys);
    return by_count(n, [&](auto count) {
      if (descending)
        return cub::DeviceMergeSort::SortKeys(temp, temp_bytes, d, count, ::cuda::std::greater<>{}, s);
      return cub::DeviceMergeSort::SortKeys(temp, temp_bytes, d, count, ::cuda::std::less<>{}, s);
    });
  });
}

extern "C" int bench_cub_merge_sort_prepare(pp_dtype key_t, bool descending, size_t n,
                                            void *stream) {
  return cub_prepare("cub::DeviceMergeSort::SortKeys", [&](void *temp, size_t &bytes) {
    return cub_merge_sort_any(key_t, descending, temp, bytes, nullptr, n, as_stream(stream));
  });
}

extern "C" int bench_cub_merge_sort(pp_dtype key_t, void *d_keys, size_t n, bool descending,
                                    void *stream) {
  return cub_run("bench_cub_merge_sort", "cub::DeviceMergeSort::SortKeys",
                 [&](void *temp, size_t &bytes) {
                   return cub_merge_sort_any(key_t, descending, temp, bytes, d_keys, n,
                                             as_stream(stream));
                 });
}

static cudaError_t cub_merge_any(pp_dtype t, bool descending, void *temp, size_t &temp_bytes,
                                 const void *a, size_t na, const void *b, size_t nb, void *out,
                                 cudaStream_t s) {
  return by_dtype(t, [&](auto type_tag) {
    using K = decltype(type_tag);
    const K *pa = static_cast<const K *>(a);
    const K *pb = static_cast<const K *>(b);
    K *po = static_cast<K *>(out);
    int64_t ca = static_cast<int64_t>(na), cb = static_cast<int64_t>(nb);
    if (descending)
      return cub::DeviceMerge::MergeKeys(temp, temp_bytes, pa, ca, pb, cb, po,
                                         ::cuda::std::greater<>{}, s);
    return cub::DeviceMerge::MergeKeys(temp, temp_bytes, pa, ca, pb, cb, po,
                                       ::cuda::std::less<>{}, s);
  });
}

extern "C" int bench_cub_merge_prepare(pp_dtype t, bool descending, size_t na, size_t nb,
                                       void *stream) {
  return cub_prepare("cub::DeviceMerge::MergeKeys", [&](void *temp, size_t &bytes) {
    return cub_merge_any(t, descending, temp, bytes, nullptr, na, nullptr, nb, nullptr,
                         as_stream(stream));
  });
}

extern "C" int bench_cub_merge(pp_dtype t, bool descending, const void *d_a, size_t na,
                               const void *d_b, size_t nb, void *d_out, void *stream) {
  return cub_run("bench_cub_merge", "cub::DeviceMerge::MergeKeys", [&](void *temp, size_t &bytes) {
    return cub_merge_any(t, descending, temp, bytes, d_a, na, d_b, nb, d_out, as_stream(stream));
  });
}

extern "C" void bench_gpu_release(void) { peer_temp_release(&g_temp); }
