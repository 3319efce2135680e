/* topk.cuh — what the top-k kernels share: the composite order (the keys' ordered
 * images with the inverted index below them), the histogram and block building blocks,
 * and the selection state the multi-block passes keep in device memory. topk.cu says
 * how the selection works; only topk.cu and the topk_*.cuh files include this.
 */
#ifndef PP_CUDA_TOPK_CUH
#define PP_CUDA_TOPK_CUH

#include "common.cuh"

#include <stdint.h>
#include <type_traits>

#define DIGIT_BITS 11
#define BINS (1 << DIGIT_BITS)

/* multi-block passes */
#define PASS_THREADS PP_TOPK_THREADS
#define PASS_ITEMS PP_TOPK_ITEMS
#define PASS_TILE (PASS_THREADS * PASS_ITEMS)
/* the finishing block: 1024 threads sorting up to 64 KB of composites in shared memory */
#define FIN_THREADS 1024
#define FIN_BYTES (64 * 1024)
/* one array of at most this many elements goes to the row kernel (one block) */
#define SMALL_N 16384
/* candidates kept beside the sure elements when a row (or the finishing block) sorts */
#define ROW_SMALL 256

typedef unsigned __int128 u128;

/* ---- warp-aggregated appends --------------------------------------------------------- */

/* The start of this warp's run in an append to a list counted by *counter, where ballot
 * (not 0) holds the lanes that append: the lowest of them reserves the run with one
 * atomic and hands its start to every lane. All lanes of the warp call; a lane appends at
 * the start plus the appending lanes below it. */
__device__ __forceinline__ unsigned warp_append_base(unsigned *counter, unsigned ballot) {
  const int lane = threadIdx.x % PP_WARP, leader = __ffs(ballot) - 1;
  unsigned base = 0;
  if (lane == leader) base = atomicAdd(counter, (unsigned)__popc(ballot));
  return __shfl_sync(0xffffffffu, base, leader);
}

/* ---- keys -------------------------------------------------------------------------- */

/* The ordered image of an element, in the low BITS bits of a 64-bit word: sort.cuh's
 * pp_key_image (ascending) with the kind fixed at compile time. Written out per type
 * rather than through pp_key_image: ptxas scheduled the float kernels differently. */
/* unsigned integers: the value itself */
template <typename T> struct key_of {
  static_assert(std::is_unsigned<T>::value, "signed and float keys have their own images");
  static constexpr int BITS = 8 * (int)sizeof(T);
  static __device__ __forceinline__ uint64_t image(T x) { return x; }
};
/* signed integers (S, with U its unsigned twin): the sign bit flipped */
template <typename S, typename U> struct key_of_signed {
  static constexpr int BITS = 8 * (int)sizeof(S);
  static __device__ __forceinline__ uint64_t image(S x) { return (U)x ^ ((U)1 << (BITS - 1)); }
};
template <> struct key_of<int32_t> : key_of_signed<int32_t, uint32_t> {};
template <> struct key_of<int64_t> : key_of_signed<int64_t, uint64_t> {};
/* negative: all bits inverted; positive: sign bit set; -0.0 gets +0.0's image, NaN the
 * largest */
template <> struct key_of<float> {
  static constexpr int BITS = 32;
  static __device__ __forceinline__ uint64_t image(float x) {
    uint32_t u = __float_as_uint(x), mag = u & 0x7FFFFFFFu;
    uint32_t k = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    k = mag == 0 ? 0x80000000u : k;
    k = mag > 0x7F800000u ? 0xFFFFFFFFu : k;
    return k;
  }
};
template <> struct key_of<double> {
  static constexpr int BITS = 64;
  static __device__ __forceinline__ uint64_t image(double x) {
    uint64_t u = (uint64_t)__double_as_longlong(x), mag = u & 0x7FFFFFFFFFFFFFFFull;
    uint64_t k = (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    k = mag == 0 ? 0x8000000000000000ull : k;
    k = mag > 0x7FF0000000000000ull ? ~0ull : k;
    return k;
  }
};

/* The composite of one (T, IB): CT is 64 bits when key and index fit, else 128. */
template <typename T, int IB>
struct comp {
  static constexpr int KB = key_of<T>::BITS;
  static constexpr int CB = KB + IB; /* bits in use */
  static constexpr int DIGITS = (CB + DIGIT_BITS - 1) / DIGIT_BITS;
  typedef typename std::conditional<(CB <= 64), uint64_t, u128>::type CT;
  static constexpr uint64_t IMASK = IB == 64 ? ~0ull : 0xFFFFFFFFull;
  static constexpr uint64_t KMASK = KB == 64 ? ~0ull : ((1ull << KB) - 1);

  static __device__ __forceinline__ CT make(T x, uint64_t i, uint64_t flip) {
    return ((CT)(key_of<T>::image(x) ^ flip) << IB) | (CT)(~i & IMASK);
  }
  static __device__ __forceinline__ uint64_t index(CT c) { return ~(uint64_t)c & IMASK; }
  /* lowest bit of digit j (0 = the top digit) and its width */
  static __device__ __forceinline__ int lo(int j) {
    int l = CB - DIGIT_BITS * (j + 1);
    return l < 0 ? 0 : l;
  }
  static __device__ __forceinline__ unsigned digit(CT c, int j) {
    const int l = lo(j), w = CB - DIGIT_BITS * j - l;
    return (unsigned)(c >> l) & ((1u << w) - 1u);
  }
  /* the bits of digits 0..j-1 (0 for j == 0) */
  static __device__ __forceinline__ CT mask_upto(int j) {
    if (j == 0) return (CT)0;
    const int l = lo(j - 1);
    return l == 0 ? ~(CT)0 : ~(((CT)1 << l) - 1);
  }
};

/* ---- block building blocks -------------------------------------------------------- */

/* Histogram methods (chosen on the host, uniform in a launch): 0 plain shared atomics,
 * one counter per bin; 1 lanes with equal bins counted together (__match_any_sync), one
 * atomic per distinct bin per warp; 2 HIST_COPIES copies of the counters, lane l adding
 * to copy l % HIST_COPIES, so that lanes of one warp collide only within their copy (the
 * skewed bins of real data — a few float exponents — otherwise serialise). */
#define HIST_COPIES 8

__device__ __forceinline__ void hist_add(unsigned *h, unsigned bin, bool active, int mode) {
  if (mode == 1) {
    const unsigned act = __ballot_sync(0xffffffffu, active);
    if (active) {
      const unsigned same = __match_any_sync(act, bin);
      if ((int)(__ffs(same) - 1) == (int)(threadIdx.x % PP_WARP)) atomicAdd(&h[bin], __popc(same));
    }
  } else if (active) {
    const unsigned copy = mode == 2 ? (threadIdx.x % HIST_COPIES) * BINS : 0u;
    atomicAdd(&h[copy + bin], 1u);
  }
}

/* Exclusive sum over the block's threads; *total gets the block's sum. All threads call;
 * scratch holds THREADS / 32 words and may be reused after the next __syncthreads(). */
template <int THREADS>
__device__ __forceinline__ unsigned block_exclusive_sum(unsigned v, unsigned *scratch,
                                                        unsigned *total) {
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  unsigned x = v;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    unsigned y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == PP_WARP - 1) scratch[warp] = x;
  __syncthreads();
  unsigned before = 0, all = 0;
#pragma unroll
  for (int w = 0; w < THREADS / PP_WARP; w++) {
    const unsigned s = scratch[w];
    before += w < warp ? s : 0u;
    all += s;
  }
  *total = all;
  return before + x - v;
}

/* x from lane ^ m of the warp (64 or 128 bits) */
template <typename CT>
__device__ __forceinline__ CT shfl_xor_ct(CT x, int m) {
  if constexpr (sizeof(CT) == 8) {
    return (CT)__shfl_xor_sync(0xffffffffu, (unsigned long long)x, m);
  } else {
    const unsigned long long lo = __shfl_xor_sync(0xffffffffu, (unsigned long long)x, m);
    const unsigned long long hi = __shfl_xor_sync(0xffffffffu, (unsigned long long)(x >> 64), m);
    return ((CT)hi << 64) | (CT)lo;
  }
}

/* One bitonic compare-exchange of stride st < 32 between lanes: the lane with bit st clear
 * holds the lower position and keeps the larger when desc. */
template <typename CT>
__device__ __forceinline__ CT warp_cmpx(CT x, unsigned st, bool desc, unsigned lane) {
  const CT y = shfl_xor_ct(x, (int)st);
  const bool take_max = ((lane & st) == 0) == desc;
  return (x > y) == take_max ? x : y;
}

/* Bitonic steps of stride below 32 on s[0..n), inside warps: each warp takes 32-element
 * chunks, one element per lane, and exchanges through shuffles (no barrier between the
 * steps). size 0: every step of the sizes 2..min(n, 32); size >= 64: the strides 16..1 of
 * that size. The direction of position i in a step of size sz is descending when
 * (i & sz) == 0. */
template <typename CT, int THREADS>
__device__ __forceinline__ void warp_bitonic(CT *s, unsigned n, unsigned size) {
  const unsigned lane = threadIdx.x % PP_WARP;
  for (unsigned c = threadIdx.x / PP_WARP; c * PP_WARP < n; c += THREADS / PP_WARP) {
    const unsigned i = c * PP_WARP + lane;
    CT x = i < n ? s[i] : (CT)0; /* n < 32: the lanes past n only pair among themselves */
    if (size) {
      const bool desc = (i & size) == 0;
#pragma unroll
      for (unsigned st = PP_WARP / 2; st > 0; st >>= 1) x = warp_cmpx(x, st, desc, lane);
    } else if (n >= PP_WARP) {
#pragma unroll
      for (unsigned sz = 2; sz <= PP_WARP; sz <<= 1)
#pragma unroll
        for (unsigned st = sz / 2; st > 0; st >>= 1) x = warp_cmpx(x, st, (i & sz) == 0, lane);
    } else {
      for (unsigned sz = 2; sz <= n; sz <<= 1)
        for (unsigned st = sz / 2; st > 0; st >>= 1) x = warp_cmpx(x, st, (i & sz) == 0, lane);
    }
    if (i < n) s[i] = x;
  }
}

/* Sorts s[0..n) descending; n a power of two. Bitonic: log2(n)(log2(n)+1)/2 steps; those
 * of stride >= 32 go through shared memory (n/2 compare-exchanges spread over the block,
 * a barrier each), those below 32 through shuffles inside warps (one barrier for the
 * steps of one size): 15 barriers for n = 512 instead of 45. Ends with a barrier when
 * n > 1. */
template <typename CT, int THREADS>
__device__ __noinline__ void block_sort_desc(CT *s, unsigned n) {
  if (n < 2) return;
  warp_bitonic<CT, THREADS>(s, n, 0);
  __syncthreads();
  for (unsigned size = 2 * PP_WARP; size <= n; size <<= 1) {
    for (unsigned stride = size >> 1; stride >= PP_WARP; stride >>= 1) {
      for (unsigned t = threadIdx.x; t < n / 2; t += THREADS) {
        const unsigned i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool desc = (i & size) == 0;
        const CT a = s[i], b = s[j];
        if ((a < b) == desc) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncthreads();
    }
    warp_bitonic<CT, THREADS>(s, n, size);
    __syncthreads();
  }
}

static __host__ __device__ inline unsigned pow2_at_least(size_t n) {
  unsigned p = 1;
  while (p < n) p <<= 1;
  return p;
}

/* Pads s[count..pow2(count)) with 0 (below every composite: an index is never all ones),
 * sorts descending and writes the first k as values (read from the input by index) and
 * indices. */
template <typename T, int IB, int THREADS>
__device__ void sort_and_write(typename comp<T, IB>::CT *s, unsigned count, size_t k,
                               const T *in, T *vals, uint64_t *idxs) {
  typedef comp<T, IB> C;
  const unsigned n2 = pow2_at_least(count);
  for (unsigned i = count + threadIdx.x; i < n2; i += THREADS) s[i] = 0;
  __syncthreads();
  block_sort_desc<typename C::CT, THREADS>(s, n2);
  for (size_t j = threadIdx.x; j < k; j += THREADS) {
    const uint64_t i = C::index(s[j]);
    vals[j] = in[i];
    if (idxs) idxs[j] = i;
  }
}

/* The bin of hist (BINS counters, read with read()) that holds the krem-th largest:
 * returns it with the count above it and its own count. All threads call; the result is
 * valid in every thread. */
struct digit_pick {
  unsigned d;
  unsigned long long above, count;
};

template <int THREADS, typename Read>
__device__ digit_pick pick_digit(Read read, unsigned long long krem) {
  constexpr int PER = BINS / THREADS;
  __shared__ unsigned long long part[THREADS / PP_WARP];
  __shared__ digit_pick found;
  /* thread t owns the PER bins at descending positions [t*PER, t*PER + PER) */
  unsigned long long h[PER], mine = 0;
#pragma unroll
  for (int q = 0; q < PER; q++) {
    h[q] = read(BINS - 1 - (threadIdx.x * PER + q));
    mine += h[q];
  }
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  unsigned long long x = mine;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    unsigned long long y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == PP_WARP - 1) part[warp] = x;
  __syncthreads();
  unsigned long long before = x - mine;
  for (int w = 0; w < warp; w++) before += part[w];
#pragma unroll
  for (int q = 0; q < PER; q++) {
    if (before < krem && krem <= before + h[q]) {
      found.d = BINS - 1 - (threadIdx.x * PER + q);
      found.above = before;
      found.count = h[q];
    }
    before += h[q];
  }
  __syncthreads();
  digit_pick r = found;
  __syncthreads();
  return r;
}

/* ==================================================================================== */
/* One array: multi-block passes                                                         */
/* ==================================================================================== */

/* What the passes hand each other, in device memory (zeroed before the first pass). */
template <typename CT>
struct sel_state {
  CT prefix;             /* digits d_1..d_{L-1}: membership in S_{L-1} ... */
  CT mask;               /* ... is (c & mask) == prefix */
  unsigned long long krem; /* S_L: how many of it are still to be taken */
  unsigned long long count; /* |S_L| */
  unsigned long long src_count; /* entries of the buffer holding S_{L-1} */
  unsigned long long nsel;      /* sure elements written to sel */
  unsigned long long nbuf[2];   /* entries written to each buffer */
  unsigned long long fin_count, fin_krem; /* the finishing block's set and how many of it */
  int level;    /* L: digits chosen */
  int dsel;     /* d_L */
  int take_all; /* all of S_L is taken */
  int src;      /* where S_{L-1} is: 0 the input, 1 buf0, 2 buf1 */
  int stop;     /* 1: selection done (sel holds k); 2: finishable from buffer fin_buf */
  int fin_buf;
  unsigned ticket;
  /* sampled path: the threshold composite and the candidates at or
   * above it (counted past the buffer's capacity, so that an overflow is seen) */
  CT thresh;
  unsigned long long ncand;
};

#endif /* PP_CUDA_TOPK_CUH */
