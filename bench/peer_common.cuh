/*
 * peer_common.cuh — what the bench's CUB peers share (bench/gpu.cu, bench/peer_histogram.cu,
 * bench/peer_topk.cu, bench/peer_cub_topk.cu, bench/peer_dist_sort.cu): a failure's text,
 * cached temporary allocations, grown only by the *_prepare calls (cudaFree synchronises
 * the device) so that the timed calls never allocate, and freeing a list of buffers. It includes the CUDA runtime API alone, no CCCL
 * header: peer_cub_topk.cu, compiled against a newer CCCL than the rest, includes it too.
 * Internal to bench/.
 */
#ifndef PP_BENCH_PEER_COMMON_CUH
#define PP_BENCH_PEER_COMMON_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <initializer_list>

/* Writes "WHAT: TEXT (NAME)" into err (len bytes) and returns -1. */
static inline int peer_fail(char *err, size_t len, const char *what, cudaError_t e) {
  snprintf(err, len, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return -1;
}

struct peer_temp {
  void *p;
  size_t bytes;
};

/* At least `need` bytes (one when 0) in t; 0, or -1 with err set. */
static inline int peer_temp_grow(peer_temp *t, size_t need, char *err, size_t len) {
  if (need <= t->bytes && t->p) return 0;
  if (t->p) {
    cudaError_t e = cudaFree(t->p);
    t->p = nullptr;
    t->bytes = 0;
    if (e != cudaSuccess) return peer_fail(err, len, "cudaFree(CUB temp)", e);
  }
  const size_t bytes = need ? need : 1;
  cudaError_t e = cudaMalloc(&t->p, bytes);
  if (e != cudaSuccess) {
    t->p = nullptr;
    return peer_fail(err, len, "cudaMalloc(CUB temp)", e);
  }
  t->bytes = bytes;
  return 0;
}

static inline void peer_temp_release(peer_temp *t) {
  if (t->p) (void)cudaFree(t->p);
  t->p = nullptr;
  t->bytes = 0;
}

/* cudaFree of each (NULL ones included, which cudaFree takes); on the way out, where a
 * failure has no one left to report to. */
static inline void peer_cuda_free(std::initializer_list<void *> ptrs) {
  for (void *p : ptrs) (void)cudaFree(p);
}

#endif /* PP_BENCH_PEER_COMMON_CUH */
