/*
 * peer_common.cuh — what the bench's CUB peers share (bench/gpu.cu, bench/peer_histogram.cu):
 * a failure's text, and one cached temporary allocation per peer file, grown only by the
 * *_prepare calls (cudaFree synchronises the device) so that the timed calls never
 * allocate. Internal to bench/.
 */
#ifndef PP_BENCH_PEER_COMMON_CUH
#define PP_BENCH_PEER_COMMON_CUH

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>

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

#endif /* PP_BENCH_PEER_COMMON_CUH */
