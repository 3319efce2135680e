/* common.cuh — warp and block building blocks that every primitive's kernels reuse.
 *
 * Written C-style: free __device__ functions and plain structs. Templates appear only to
 * stamp out one version per element/accumulator type and per combining operator. An
 * operator is a struct with static functions:
 *   Acc identity();             the value that changes nothing
 *   Acc combine(Acc a, Acc b);  associative (and here also commutative)
 */
#ifndef PP_CUDA_COMMON_CUH
#define PP_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tuning.h"
#include "vec.cuh"

#define PP_WARP 32

static inline size_t pp_ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
__device__ __forceinline__ size_t pp_ceil_div_dev(size_t a, size_t b) { return (a + b - 1) / b; }

/* Shuffles of any 4-byte-multiple plain type, word by word (doubles, 64-bit integers,
 * value/index pairs). */
enum pp_shfl_kind { PP_SHFL_DOWN, PP_SHFL_UP, PP_SHFL_XOR, PP_SHFL_IDX };

/* A plain value as its 4-byte words: what the shuffles and the cg load move one by one. */
template <typename T>
union pp_words {
  static_assert(sizeof(T) % 4 == 0, "a whole number of 4-byte words");
  static constexpr int N = sizeof(T) / 4;
  T t;
  int w[N];
};

template <pp_shfl_kind K, typename T>
__device__ __forceinline__ T pp_shfl(T v, int arg) {
  pp_words<T> u;
  u.t = v;
#pragma unroll
  for (int i = 0; i < pp_words<T>::N; i++) {
    if (K == PP_SHFL_DOWN) u.w[i] = __shfl_down_sync(0xffffffffu, u.w[i], arg);
    if (K == PP_SHFL_UP) u.w[i] = __shfl_up_sync(0xffffffffu, u.w[i], arg);
    if (K == PP_SHFL_XOR) u.w[i] = __shfl_xor_sync(0xffffffffu, u.w[i], arg);
    if (K == PP_SHFL_IDX) u.w[i] = __shfl_sync(0xffffffffu, u.w[i], arg);
  }
  return u.t;
}

template <typename T>
__device__ __forceinline__ T pp_shfl_down(T v, int offset) {
  return pp_shfl<PP_SHFL_DOWN>(v, offset);
}

/* Load through L2 only (ld.global.cg), word by word: for values other blocks of the same
 * launch wrote, which this SM's L1 must not serve stale. */
template <typename T>
__device__ __forceinline__ T pp_load_cg(const T *p) {
  pp_words<T> u;
  const int *src = reinterpret_cast<const int *>(p);
#pragma unroll
  for (int i = 0; i < pp_words<T>::N; i++) u.w[i] = __ldcg(src + i);
  return u.t;
}

/* Result valid in lane 0. */
template <typename Op, typename Acc>
__device__ __forceinline__ Acc pp_warp_reduce(Acc v) {
#pragma unroll
  for (int offset = PP_WARP / 2; offset > 0; offset /= 2) v = Op::combine(v, pp_shfl_down(v, offset));
  return v;
}

/* Result in every lane. */
template <typename Op, typename Acc>
__device__ __forceinline__ Acc pp_warp_allreduce(Acc v) {
#pragma unroll
  for (int m = PP_WARP / 2; m > 0; m /= 2) v = Op::combine(v, pp_shfl<PP_SHFL_XOR>(v, m));
  return v;
}

/* Inclusive scan across the warp's lanes in lane order (Hillis-Steele: log2(32) steps). */
template <typename Op, typename Acc>
__device__ __forceinline__ Acc pp_warp_scan_inclusive(Acc v) {
  const int lane = threadIdx.x % PP_WARP;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    Acc up = pp_shfl<PP_SHFL_UP>(v, d);
    if (lane >= d) v = Op::combine(up, v);
  }
  return v;
}

/* Result valid in thread 0. Every thread of the block must call it; it may be called
 * again after a __syncthreads(). */
template <typename Op, int THREADS, typename Acc>
__device__ __forceinline__ Acc pp_block_reduce(Acc v) {
  static_assert(THREADS % PP_WARP == 0 && THREADS <= 1024, "whole warps");
  constexpr int WARPS = THREADS / PP_WARP;
  __shared__ Acc warp_partial[WARPS];
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  v = pp_warp_reduce<Op>(v);
  if (WARPS == 1) return v;
  if (lane == 0) warp_partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < WARPS ? warp_partial[lane] : Op::identity();
    v = pp_warp_reduce<Op>(v);
  }
  return v;
}

/* "Am I the last block to finish?" — the single-pass pattern: each block publishes its
 * partial, fences, and takes a ticket; the block that draws the last ticket sees every
 * partial and finishes the job, then returns the counter to zero for the next launch on
 * the stream. Call from all threads after thread 0 has stored the block's partial. */
__device__ __forceinline__ bool pp_last_block_done(unsigned *counter) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence(); /* the partial is visible device-wide before the ticket */
    unsigned ticket = atomicAdd(counter, 1u);
    last = ticket == gridDim.x - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  if (last) __threadfence(); /* and the other blocks' partials are seen after it */
  return last;
}

#endif /* PP_CUDA_COMMON_CUH */
