/* backend.cu — the CUDA backend's table: device selection, the stream, memory, pointer
 * queries and stream-ordered temp storage. The primitives live in one .cu per family. */
#include "cuda_backend.h"
#include "dsort_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pp_cuda_dist_core_ops(pp_backend_ops &o); /* dist_ops.cu: the dist-core entries */

pp_status pp_cuda_fail(pp_context *ctx, cudaError_t e, const char *what, const char *file,
                       int line) {
  cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
  pp_status s = e == cudaErrorMemoryAllocation ? PP_ERR_OUT_OF_MEMORY : PP_ERR_DEVICE;
  const char *base = strrchr(file, '/');
  return pp_fail(ctx, s, "%s: CUDA error %s (%s) at %s:%d", what, cudaGetErrorName(e),
                 cudaGetErrorString(e), base ? base + 1 : file, line);
}

/* Every entry point makes the context's device current, so contexts on different GPUs
 * can be used from one thread. */
static inline cudaError_t use_device(pp_context *ctx) { return cudaSetDevice(pp_cuda(ctx)->device); }

static void release_state(pp_cuda_state *st) {
  for (int i = 0; i < 2; i++) {
    if (st->pinned[i]) cudaFreeHost(st->pinned[i]);
    if (st->pinned_free[i]) cudaEventDestroy(st->pinned_free[i]);
  }
  if (st->pinned_small) cudaFreeHost(st->pinned_small);
  if (st->small_done) cudaEventDestroy(st->small_done);
  if (st->lookback) cudaFree(st->lookback);
  if (st->scratch) cudaFree(st->scratch);
  if (st->pool) cudaMemPoolDestroy(st->pool);
  if (st->own_stream) cudaStreamDestroy(st->own_stream);
  free(st);
}

static pp_status make_pool(pp_context *ctx, pp_cuda_state *st) {
  int supported = 0;
  cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, st->device);
  if (!supported) return PP_OK; /* temp_alloc falls back to cudaMalloc */
  cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = st->device;
  PP_CUDA_TRY(ctx, cudaMemPoolCreate(&st->pool, &props), "pp_create");
  /* keep freed temp memory in the pool: repeated calls then never reach cudaMalloc */
  uint64_t keep = UINT64_MAX;
  PP_CUDA_TRY(ctx, cudaMemPoolSetAttribute(st->pool, cudaMemPoolAttrReleaseThreshold, &keep),
              "pp_create");
  return PP_OK;
}

static pp_status cuda_init(pp_context *ctx) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return pp_fail(ctx, PP_ERR_NO_DEVICE, "pp_create: no usable CUDA device (%s)",
                   e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  }
  pp_cuda_state *st = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (pp_cuda_state *)calloc(1, sizeof *st);
  if (!st) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_create: no memory for the CUDA state");
  ctx->impl = st;
  pp_status s = PP_OK;
  if ((e = cudaGetDevice(&st->device)) != cudaSuccess || (e = cudaSetDevice(st->device)) != cudaSuccess ||
      (e = cudaFree(0)) != cudaSuccess) { /* cudaFree(0) creates the primary context now */
    s = pp_cuda_fail(ctx, e, "pp_create", __FILE__, __LINE__);
    s = s == PP_ERR_DEVICE ? PP_ERR_NO_DEVICE : s;
  }
  if (s == PP_OK) {
    cudaDeviceGetAttribute(&st->sm_count, cudaDevAttrMultiProcessorCount, st->device);
    cudaDeviceGetAttribute(&st->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                           st->device);
    /* a blocking stream: it waits for the legacy default stream, so data a caller
       produced there without synchronising is complete before we read it */
    e = cudaStreamCreateWithFlags(&st->own_stream, cudaStreamDefault);
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_create", __FILE__, __LINE__);
    st->stream = st->own_stream;
  }
  if (s == PP_OK) s = make_pool(ctx, st);
  if (s == PP_OK && (e = pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation : cudaMalloc(&st->scratch, PP_CUDA_SCRATCH_BYTES)) != cudaSuccess)
    s = pp_cuda_fail(ctx, e, "pp_create", __FILE__, __LINE__);
  if (s == PP_OK && (e = cudaMemset(st->scratch, 0, PP_CUDA_SCRATCH_BYTES)) != cudaSuccess)
    s = pp_cuda_fail(ctx, e, "pp_create", __FILE__, __LINE__);
  if (s != PP_OK) {
    release_state(st);
    ctx->impl = NULL;
  }
  return s;
}

static void cuda_fini(pp_context *ctx) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (!st) return;
  cudaSetDevice(st->device);
  cudaStreamSynchronize(st->stream);
  release_state(st);
  ctx->impl = NULL;
}

static pp_status cuda_device_info(pp_context *ctx, pp_device_info *info) {
  pp_cuda_state *st = pp_cuda(ctx);
  cudaDeviceProp p;
  PP_CUDA_TRY(ctx, cudaGetDeviceProperties(&p, st->device), "pp_get_device_info");
  snprintf(info->name, sizeof info->name, "%s", p.name);
  info->compute_major = p.major;
  info->compute_minor = p.minor;
  info->multiprocessors = p.multiProcessorCount;
  info->global_mem_bytes = p.totalGlobalMem;
  info->l2_bytes = (size_t)p.l2CacheSize;
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, st->device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, st->device);
  /* double data rate: two transfers per clock */
  info->peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  cudaDriverGetVersion(&info->driver_version);
  cudaRuntimeGetVersion(&info->runtime_version);
  return PP_OK;
}

static pp_status cuda_set_stream(pp_context *ctx, void *stream) {
  pp_cuda_state *st = pp_cuda(ctx);
  cudaStream_t next = stream ? (cudaStream_t)stream : st->own_stream;
  if (next == st->stream) return PP_OK;
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_set_stream");
  /* temp memory and the scratch counters are ordered on the old stream */
  PP_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream), "pp_set_stream");
  st->stream = next;
  return PP_OK;
}

static pp_status cuda_synchronize(pp_context *ctx) {
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_synchronize");
  PP_CUDA_TRY(ctx, cudaStreamSynchronize(pp_cuda(ctx)->stream), "pp_synchronize");
  return PP_OK;
}

/* An allocation's outcome: OUT_OF_MEMORY when the device is full, DEVICE for anything
 * else, with the size in the message; the error is cleared so the context stays usable. */
static pp_status alloc_result(pp_context *ctx, cudaError_t e, const char *what, size_t bytes) {
  if (e == cudaSuccess) return PP_OK;
  cudaGetLastError();
  return pp_fail(ctx, e == cudaErrorMemoryAllocation ? PP_ERR_OUT_OF_MEMORY : PP_ERR_DEVICE,
                 "%s: cannot allocate %zu bytes on the device (%s)", what, bytes,
                 cudaGetErrorString(e));
}

static pp_status cuda_mem_alloc(pp_context *ctx, void **ptr, size_t bytes) {
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_malloc");
  return alloc_result(ctx, pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation : cudaMalloc(ptr, bytes), "pp_malloc", bytes);
}

static pp_status cuda_mem_free(pp_context *ctx, void *ptr) {
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_free");
  PP_CUDA_TRY(ctx, cudaFree(ptr), "pp_free");
  return PP_OK;
}

enum where { WHERE_PAGEABLE, WHERE_HOST, WHERE_DEVICE };

/* Kernels on this context's device may use device memory of that device and managed
 * memory; everything else (pageable or pinned host memory, another GPU's memory) is
 * reached by copies, which are faster than zero-copy reads for anything read twice. */
static enum where where_is(pp_context *ctx, const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return WHERE_PAGEABLE;
  }
  if (a.type == cudaMemoryTypeUnregistered) return WHERE_PAGEABLE;
  if (a.type == cudaMemoryTypeManaged) return WHERE_DEVICE;
  if (a.type == cudaMemoryTypeDevice && a.device == pp_cuda(ctx)->device) return WHERE_DEVICE;
  return WHERE_HOST;
}

static bool cuda_accessible(pp_context *ctx, const void *p) {
  return where_is(ctx, p) == WHERE_DEVICE;
}

/* Pageable copies of at least this many bytes go through our pinned buffers, in chunks of
 * PINNED_CHUNK; smaller ones are left to the driver, whose own staging is as fast there. */
#define PINNED_MIN ((size_t)4 << 20)
#define PINNED_CHUNK ((size_t)16 << 20)

/* false when pinned memory cannot be had; the copy is then left to the driver */
static bool pinned_ready(pp_cuda_state *st) {
  for (int i = 0; i < 2; i++) {
    if (!st->pinned[i] && (pp_alloc_fails(PP_ALLOC_PINNED) || cudaHostAlloc(&st->pinned[i], PINNED_CHUNK, cudaHostAllocPortable) !=
                              cudaSuccess)) {
      cudaGetLastError();
      st->pinned[i] = NULL;
      return false;
    }
    if (!st->pinned_free[i] &&
        cudaEventCreateWithFlags(&st->pinned_free[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      st->pinned_free[i] = NULL;
      return false;
    }
  }
  return true;
}

/* Pageable host -> device: while the copy engine moves chunk k from one pinned buffer,
 * the CPU fills the other with chunk k+1. Returns once src has been read entirely; the
 * last transfers stay queued on the stream. */
static pp_status upload_pageable(pp_context *ctx, char *dst, const char *src, size_t bytes) {
  pp_cuda_state *st = pp_cuda(ctx);
  for (size_t off = 0, k = 0; off < bytes; off += PINNED_CHUNK, k++) {
    size_t len = bytes - off < PINNED_CHUNK ? bytes - off : PINNED_CHUNK;
    int b = (int)(k & 1);
    PP_CUDA_TRY(ctx, cudaEventSynchronize(st->pinned_free[b]), "pp_copy");
    pp_host_memcpy(st->pinned[b], src + off, len);
    PP_CUDA_TRY(ctx, cudaMemcpyAsync(dst + off, st->pinned[b], len, cudaMemcpyHostToDevice,
                                     st->stream), "pp_copy");
    PP_CUDA_TRY(ctx, cudaEventRecord(st->pinned_free[b], st->stream), "pp_copy");
  }
  return PP_OK;
}

/* Device -> pageable host: the copy engine fills one pinned buffer with chunk k+1 while
 * the CPU drains chunk k from the other. */
static pp_status download_pageable(pp_context *ctx, char *dst, const char *src, size_t bytes) {
  pp_cuda_state *st = pp_cuda(ctx);
  size_t chunks = (bytes + PINNED_CHUNK - 1) / PINNED_CHUNK;
  for (size_t k = 0; k <= chunks; k++) {
    if (k < chunks) { /* queue chunk k; its buffer was drained in iteration k-1 */
      size_t off = k * PINNED_CHUNK, len = bytes - off < PINNED_CHUNK ? bytes - off : PINNED_CHUNK;
      int b = (int)(k & 1);
      PP_CUDA_TRY(ctx, cudaMemcpyAsync(st->pinned[b], src + off, len, cudaMemcpyDeviceToHost,
                                       st->stream), "pp_copy");
      PP_CUDA_TRY(ctx, cudaEventRecord(st->pinned_free[b], st->stream), "pp_copy");
    }
    if (k > 0) { /* drain chunk k-1 */
      size_t off = (k - 1) * PINNED_CHUNK;
      size_t len = bytes - off < PINNED_CHUNK ? bytes - off : PINNED_CHUNK;
      int b = (int)((k - 1) & 1);
      PP_CUDA_TRY(ctx, cudaEventSynchronize(st->pinned_free[b]), "pp_copy");
      pp_host_memcpy(dst + off, st->pinned[b], len);
    }
  }
  return PP_OK;
}

/* Reads back to the host of at most this many bytes go through pinned_small. */
#define SMALL_READ ((size_t)64 << 10)

/* false when the small pinned buffer or its event cannot be had; reads then go through
 * the driver's staging */
static bool small_ready(pp_cuda_state *st) {
  if (!st->pinned_small && (pp_alloc_fails(PP_ALLOC_PINNED) ||
                            cudaHostAlloc(&st->pinned_small, SMALL_READ, cudaHostAllocPortable) !=
                                cudaSuccess)) {
    cudaGetLastError();
    st->pinned_small = NULL;
    return false;
  }
  if (!st->small_done &&
      cudaEventCreateWithFlags(&st->small_done, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    st->small_done = NULL;
    return false;
  }
  return true;
}

static pp_status cuda_copy(pp_context *ctx, void *dst, const void *src, size_t bytes);

/* Waits for the open read, if any, and hands its bytes to the caller's memory. */
static pp_status cuda_read_end(pp_context *ctx) {
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t bytes = st->read_bytes;
  if (bytes == 0) return PP_OK;
  st->read_bytes = 0;
  PP_CUDA_TRY(ctx, cudaEventSynchronize(st->small_done), "pp_copy");
  pp_host_memcpy(st->read_dst, st->pinned_small, bytes);
  return PP_OK;
}

/* A short read is queued into pinned_small behind an event; a long one (or one without
 * the buffer) is an ordinary copy, done when this returns. */
static pp_status cuda_read_begin(pp_context *ctx, void *dst, const void *src, size_t bytes) {
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(cuda_read_end(ctx)); /* one read open at a time */
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_copy");
  if (bytes == 0 || bytes > SMALL_READ || !small_ready(st)) return cuda_copy(ctx, dst, src, bytes);
  PP_CUDA_TRY(ctx, cudaMemcpyAsync(st->pinned_small, src, bytes, cudaMemcpyDefault, st->stream),
              "pp_copy");
  PP_CUDA_TRY(ctx, cudaEventRecord(st->small_done, st->stream), "pp_copy");
  st->read_dst = dst;
  st->read_bytes = bytes;
  return PP_OK;
}

static pp_status cuda_copy(pp_context *ctx, void *dst, const void *src, size_t bytes) {
  pp_cuda_state *st = pp_cuda(ctx);
  PP_CUDA_TRY(ctx, use_device(ctx), "pp_copy");
  enum where wd = where_is(ctx, dst), ws = where_is(ctx, src);
  /* a short read into pageable memory: the small pinned buffer (docs/benchmarks has the
     round trips of both ways) */
  if (wd == WHERE_PAGEABLE && ws != WHERE_PAGEABLE && bytes > 0 && bytes <= SMALL_READ &&
      small_ready(st)) {
    PP_TRY(cuda_read_begin(ctx, dst, src, bytes));
    return cuda_read_end(ctx);
  }
  if (bytes >= PINNED_MIN && (wd == WHERE_PAGEABLE) != (ws == WHERE_PAGEABLE) &&
      pinned_ready(st)) {
    if (ws == WHERE_PAGEABLE) return upload_pageable(ctx, (char *)dst, (const char *)src, bytes);
    return download_pageable(ctx, (char *)dst, (const char *)src, bytes);
  }
  PP_CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st->stream), "pp_copy");
  /* the contract: a call whose output is host memory returns once it is written */
  if (wd != WHERE_DEVICE) PP_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream), "pp_copy");
  return PP_OK;
}

static pp_status cuda_temp_alloc(pp_context *ctx, void **ptr, size_t bytes) {
  pp_cuda_state *st = pp_cuda(ctx);
  PP_CUDA_TRY(ctx, use_device(ctx), "scratch");
  cudaError_t e = pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation
                  : st->pool ? cudaMallocFromPoolAsync(ptr, bytes, st->pool, st->stream)
                           : cudaMalloc(ptr, bytes);
  return alloc_result(ctx, e, "scratch", bytes);
}

static void cuda_temp_free(pp_context *ctx, void *ptr) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (st->pool)
    cudaFreeAsync(ptr, st->stream);
  else
    cudaFree(ptr);
}

/* Filled field by field: C++17 has no designated initializers, and unset entries must be
 * NULL ("not implemented on this backend"). */
static pp_backend_ops cuda_ops_table(void) {
  pp_backend_ops o;
  memset(&o, 0, sizeof o);
  o.name = "cuda";
  o.init = cuda_init;
  o.fini = cuda_fini;
  o.device_info = cuda_device_info;
  o.set_stream = cuda_set_stream;
  o.synchronize = cuda_synchronize;
  o.mem_alloc = cuda_mem_alloc;
  o.mem_free = cuda_mem_free;
  o.copy = cuda_copy;
  o.read_begin = cuda_read_begin;
  o.read_end = cuda_read_end;
  o.accessible = cuda_accessible;
  o.temp_alloc = cuda_temp_alloc;
  o.temp_free = cuda_temp_free;
  o.reduce = pp_cuda_reduce;
  o.argreduce = pp_cuda_argreduce;
  o.scan = pp_cuda_scan;
  o.select = pp_cuda_select;
  o.select_flagged = pp_cuda_select_flagged;
  o.partition = pp_cuda_partition;
  o.sort = pp_cuda_sort;
  o.merge = pp_cuda_merge;
  o.sort_copy = pp_cuda_sort_copy;
  o.merge_pairs = pp_cuda_merge_pairs;
  /* histogram */
  o.histogram_even = pp_cuda_histogram_even;
  o.histogram_range = pp_cuda_histogram_range;
  o.histogram_image = pp_cuda_histogram_image;
  /* topk */
  o.topk = pp_cuda_topk;
  o.topk_rows = pp_cuda_topk_rows;
  /* sgemm */
  o.sgemm = pp_cuda_sgemm;
  /* conv */
  o.conv2d = pp_cuda_conv2d;
  o.conv2d_separable = pp_cuda_conv2d_separable;
  /* nbody */
  o.nbody_accel = pp_cuda_nbody_accel;
  o.nbody_step = pp_cuda_nbody_step;
  o.nbody_energy = pp_cuda_nbody_energy;
  /* dist-sort */
  o.dsort_rank = pp_cuda_dsort_rank;
  /* dist-core */
  pp_cuda_dist_core_ops(o);
  return o;
}

extern "C" const pp_backend_ops pp_cuda_ops = cuda_ops_table();
