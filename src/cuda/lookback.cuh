/* lookback.cuh — decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan
 * with Decoupled Look-back", 2016): the status words tiles publish and poll, and the
 * memory accesses they are published and polled with.
 *
 * A tile publishes its own aggregate as soon as it has it, and its inclusive prefix once
 * it knows it; a tile looking back adds its predecessors' values until it meets a
 * published prefix. The value travels in the same word (or the same vector store) as its
 * flag, so a reader that sees the flag sees the value, and relaxed accesses at GPU scope
 * suffice (PTX ISA, "Memory Consistency Model": a relaxed load is not served from a stale
 * L1 line and is not hoisted out of a spin loop; a relaxed store reaches other SMs without
 * a fence). Where a value does not fit beside its flag (the quicksort's 64-bit prefixes),
 * the flag is stored with release after the value and loaded with acquire before it.
 *
 * Two encodings, one per kind of value:
 *  - flag words (pp_status_word): two flag bits above a count, for the radix sort's
 *    per-digit counts (sort_onesweep.cuh) and the quicksort's tile counts
 *    (sort_quick.cu); a buffer is zeroed before the tiles that use it start;
 *  - epoch-tagged tile descriptors (pp_tile_desc): any 4- or 8-byte carry with a status
 *    and the call's epoch, for scan, select, partition and flagged select (scan.cu), so
 *    that nothing is cleared between launches: a stale descriptor reads as unpublished.
 */
#ifndef PP_CUDA_LOOKBACK_CUH
#define PP_CUDA_LOOKBACK_CUH

#include "common.cuh"

#include <stdint.h>
#include <string.h>

/* ---- accesses ------------------------------------------------------------------------- */

/* Relaxed at GPU scope: the load is not served from a stale L1 line and cannot be hoisted
 * out of a spin loop; the store becomes visible to other SMs without a fence.
 * Acquire and release, for the flag of a value published beside it: acquire orders the
 * reader's later loads of the value after the flag, release the writer's earlier stores of
 * it before. One PTX instruction each: NAME(p) loads, NAME(p, v) stores; REG is the asm
 * register constraint of the type ("r" 32-bit, "l" 64-bit). */
#define PP_PTX_LOAD(name, sem, T, ptx_type, reg)                                            \
  __device__ __forceinline__ T name(const T *p) {                                           \
    T v;                                                                                    \
    asm volatile("ld." sem ".gpu." ptx_type " %0, [%1];" : "=" reg(v) : "l"(p) : "memory");  \
    return v;                                                                               \
  }
#define PP_PTX_STORE(name, sem, T, ptx_type, reg)                                           \
  __device__ __forceinline__ void name(T *p, T v) {                                         \
    asm volatile("st." sem ".gpu." ptx_type " [%0], %1;" ::"l"(p), reg(v) : "memory");      \
  }
PP_PTX_LOAD(pp_ld_relaxed, "relaxed", uint32_t, "u32", "r")
PP_PTX_LOAD(pp_ld_relaxed, "relaxed", uint64_t, "u64", "l")
PP_PTX_STORE(pp_st_relaxed, "relaxed", uint32_t, "u32", "r")
PP_PTX_STORE(pp_st_relaxed, "relaxed", uint64_t, "u64", "l")
PP_PTX_LOAD(pp_ld_acquire, "acquire", uint32_t, "u32", "r")
PP_PTX_STORE(pp_st_release, "release", uint32_t, "u32", "r")
#undef PP_PTX_LOAD
#undef PP_PTX_STORE

/* ---- flag words: the radix sort's digit counts and the quicksort's tile counts ----------
 * One word per (tile, digit) or per tile: the top two bits say what the rest holds.
 *   0          nothing published yet
 *   AGGREGATE  the tile's own count
 *   INCLUSIVE  the count in this tile and all tiles before it (the quicksort publishes its
 *              64-bit prefix beside the word, then the flag with a release store)
 * The value shares the word with its flag, so one relaxed store publishes both and a
 * reader that sees the flag sees the value: no fence is needed. 32-bit words hold values
 * below 2^30; the host picks 64-bit words when the padded key count could reach that. */
template <typename S> struct pp_status_word {
  static constexpr int SHIFT = (int)sizeof(S) * 8 - 2;
  static constexpr S AGGREGATE = (S)1 << SHIFT;
  static constexpr S INCLUSIVE = (S)2 << SHIFT;
  static constexpr S VALUE = ((S)1 << SHIFT) - 1;
};

/* ---- epoch-tagged tile descriptors: the scans ------------------------------------------
 * Their global-space accesses are written inline: through helper functions ptxas
 * scheduled the scans' polling loops differently.
 * The look-back buffer: the tile counter, then one descriptor slot per tile. */
#define PP_LOOKBACK_HEADER 256
/* Bytes from one tile's descriptor to the next: PP_LOOKBACK_STRIDE (tuning.h). */
#define PP_DESC_NARROW_SLOT (PP_LOOKBACK_STRIDE > 8 ? PP_LOOKBACK_STRIDE : 8)
#define PP_DESC_WIDE_SLOT (PP_LOOKBACK_STRIDE > 16 ? PP_LOOKBACK_STRIDE : 16)
/* Narrow status words hold the epoch in 30 bits; after that many calls they are cleared. */
#define PP_DESC_EPOCH_LIMIT (1u << 30)

enum { PP_DESC_INVALID = 0, PP_DESC_AGGREGATE = 1, PP_DESC_PREFIX = 2 };

/* ---- descriptors ------------------------------------------------------------------------
 * One status word and one value, published together by a single store so that a reader
 * never sees a status with another tile's value. 4-byte values share an 8-byte word with
 * (epoch << 2 | status); 8-byte values use a 16-byte pair {status word, value}. */
template <typename C, bool WIDE = (sizeof(C) == 8)>
struct pp_tile_desc;

template <typename C>
struct pp_tile_desc<C, false> {
  static_assert(sizeof(C) == 4, "narrow descriptors hold 4-byte values");
  static __device__ __forceinline__ void publish(void *base, size_t tile, uint32_t epoch,
                                                 int status, C v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    unsigned long long w = ((unsigned long long)((epoch << 2) | (uint32_t)status) << 32) | bits;
    unsigned long long *p = (unsigned long long *)((char *)base + tile * PP_DESC_NARROW_SLOT);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
  }
  /* true when tile's descriptor belongs to this call; then *status and *v are set */
  static __device__ __forceinline__ bool poll(const void *base, size_t tile, uint32_t epoch,
                                              int *status, C *v) {
    const unsigned long long *p =
        (const unsigned long long *)((const char *)base + tile * PP_DESC_NARROW_SLOT);
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    uint32_t tag = (uint32_t)(w >> 32), bits = (uint32_t)w;
    memcpy(v, &bits, 4);
    *status = (int)(tag & 3u);
    return (tag >> 2) == epoch && (tag & 3u) != PP_DESC_INVALID;
  }
};

template <typename C>
struct pp_tile_desc<C, true> {
  static __device__ __forceinline__ void publish(void *base, size_t tile, uint32_t epoch,
                                                 int status, C v) {
    unsigned long long tag = ((unsigned long long)epoch << 2) | (unsigned)status, bits;
    memcpy(&bits, &v, 8);
    unsigned long long *p = (unsigned long long *)((char *)base + tile * PP_DESC_WIDE_SLOT);
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(tag), "l"(bits)
                 : "memory");
  }
  static __device__ __forceinline__ bool poll(const void *base, size_t tile, uint32_t epoch,
                                              int *status, C *v) {
    const unsigned long long *p =
        (const unsigned long long *)((const char *)base + tile * PP_DESC_WIDE_SLOT);
    unsigned long long tag, bits;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(tag), "=l"(bits)
                 : "l"(p)
                 : "memory");
    memcpy(v, &bits, 8);
    *status = (int)(tag & 3u);
    return (tag >> 2) == epoch && (tag & 3u) != PP_DESC_INVALID;
  }
};

/* Descriptors per lane and round, and the sleeps between polls: PP_LOOKBACK_* (tuning.h). */

/* One thread: publish this tile's aggregate (tile 0: its inclusive prefix). */
template <typename CombC>
__device__ __forceinline__ void pp_look_back_publish(void *descs, size_t tile, uint32_t epoch,
                                                  typename CombC::Acc aggregate) {
  typedef pp_tile_desc<typename CombC::Acc> D;
  D::publish(descs, tile, epoch, tile == 0 ? PP_DESC_PREFIX : PP_DESC_AGGREGATE, aggregate);
}

/* Called by all lanes of one warp once the aggregate is published: wait for and combine
 * the preceding tiles' values, publish the inclusive prefix. Returns the exclusive prefix
 * (the identity for tile 0) in every lane. CombC: identity() and combine() of the carry. */
template <typename CombC>
__device__ __forceinline__ typename CombC::Acc
pp_look_back_wait(void *descs, size_t tile, uint32_t epoch, typename CombC::Acc aggregate) {
  typedef typename CombC::Acc C;
  typedef pp_tile_desc<C> D;
  constexpr int K = PP_LOOKBACK_PER_LANE;
  const int lane = threadIdx.x % PP_WARP;
  if (tile == 0) return CombC::identity();
  if (PP_LOOKBACK_FIRST_SLEEP > 0) __nanosleep(PP_LOOKBACK_FIRST_SLEEP);
  C acc = CombC::identity();
  long long newest = (long long)tile - 1;
  for (;;) {
    /* lane l reads tiles newest - l*K - k, k < K: nearest first */
    int status[K];
    C v[K];
    bool ok[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
      const long long t = newest - lane * K - k;
      status[k] = PP_DESC_PREFIX; /* before tile 0: nothing to add */
      v[k] = CombC::identity();
      ok[k] = t < 0 || D::poll(descs, (size_t)t, epoch, &status[k], &v[k]);
    }
    for (;;) {
      bool all = true;
#pragma unroll
      for (int k = 0; k < K; k++) all = all && ok[k];
      if (__all_sync(0xffffffffu, all)) break;
      __nanosleep(PP_LOOKBACK_SLEEP);
#pragma unroll
      for (int k = 0; k < K; k++) {
        const long long t = newest - lane * K - k;
        if (!ok[k]) ok[k] = D::poll(descs, (size_t)t, epoch, &status[k], &v[k]);
      }
    }
    /* this lane's nearest prefix, then the warp's */
    int first = K;
#pragma unroll
    for (int k = K - 1; k >= 0; k--)
      if (status[k] == PP_DESC_PREFIX) first = k;
    const unsigned lanes = __ballot_sync(0xffffffffu, first < K);
    const int stop_lane = lanes ? __ffs(lanes) - 1 : PP_WARP;
    /* entries nearer than the nearest prefix, and the prefix itself, contribute */
    C mine = CombC::identity();
#pragma unroll
    for (int k = 0; k < K; k++)
      if (lane < stop_lane || (lane == stop_lane && k <= first)) mine = CombC::combine(mine, v[k]);
    acc = CombC::combine(pp_warp_allreduce<CombC>(mine), acc);
    if (lanes) break;
    newest -= PP_WARP * K;
  }
  if (lane == 0) D::publish(descs, tile, epoch, PP_DESC_PREFIX, CombC::combine(acc, aggregate));
  return acc;
}

/* Both, by all lanes of one warp. */
template <typename CombC>
__device__ __forceinline__ typename CombC::Acc
pp_look_back(void *descs, size_t tile, uint32_t epoch, typename CombC::Acc aggregate) {
  if (threadIdx.x % PP_WARP == 0) pp_look_back_publish<CombC>(descs, tile, epoch, aggregate);
  return pp_look_back_wait<CombC>(descs, tile, epoch, aggregate);
}

#endif /* PP_CUDA_LOOKBACK_CUH */
