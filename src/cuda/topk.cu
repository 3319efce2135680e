/* topk.cu — pp_topk and pp_topk_rows on the GPU: radix selection.
 *
 * Order. Every element gets a "composite" key: its ordered image (sort.cuh's rules: floats
 * by value with -0.0 == +0.0 and every NaN above +inf; signed with the sign bit flipped;
 * all bits inverted for the k smallest) in the high bits, and its index inverted in the
 * low IB bits (IB = 32 when the index fits, else 64). Composites are unique, and the k
 * largest composites are exactly the answer: the k largest (smallest) values, NaN counted
 * as largest, ties taken by lowest index, in order. Values are written from the input by
 * index, so a -0.0 stays -0.0 and a NaN keeps its payload.
 *
 * Selection. The composite is read from its top in digits of 11 bits (2048 bins). S_L is
 * the set of elements whose first L digits equal the chosen prefix d_1..d_L; S_0 is all.
 * A pass at level L reads a superset of S_{L-1} (the input filtered by prefix, or a buffer
 * holding S_{L-1}), writes out ("sure") the elements whose digit L is above d_L, histograms
 * digit L+1 over S_L (shared-memory counters, one atomic per distinct bin per warp via
 * __match_any_sync) and, when S_L is small enough, copies it to a buffer so that the next
 * pass reads |S_L| elements instead of n. The histogram gives d_{L+1}: the bin holding the
 * k_rem-th largest. When S_L fits in one block (FIN_SCAP), the selection finishes there:
 * one block sorts S_L and keeps its top k_rem. When the bin holding the k_rem-th is taken
 * whole, the next pass only writes.
 *
 * One array, n large: every pass is one multi-block launch; its last block (ticket)
 * resolves the digit and updates a small state in device memory, so the host queues all
 * passes without waiting (passes after the selection has finished return at once). For
 * f32 with random data: pass 1 reads n (histogram), pass 2 reads n (writes S_1, about a
 * sixteenth), pass 3 reads S_1, and the finishing block sorts a few thousand composites.
 * The k results are then sorted by composite: in the finishing block for small k, else
 * with pp_sort (sort.cu) — one sort of 64-bit composites, or for 128-bit composites a
 * sort by index followed by a stable sort of the values.
 *
 * Rows (and small arrays): one block per row does the same passes itself: the row is read
 * from global memory (re-reads mostly hit L2), S_L moves to shared memory as soon as it
 * fits, and the final candidates and sure elements are sorted in shared memory (bitonic).
 * Rows whose k does not fit shared memory fall back to the one-array path, row by row.
 *
 * Sampled threshold. Those passes cost a full histogram each; when k is
 * small beside n, a strided sample picks a threshold composite that a few times k
 * elements reach, one read of the input (or row) keeps those, and the passes above run on
 * them instead; when the sample misled (fewer than k, or more than the buffers, reach the
 * threshold) they run on the input as before. One array of n >= 2^22: one sample block,
 * a filter over the grid, the multi-block passes. Rows of cols >= 16384, and one array of
 * 16384 < n < 2^22 (as one row): a grid of (row, segment) blocks filters into slots of
 * their own, then the row kernel gathers each row's slots into shared memory (few rows
 * are cut into several segments, so that the grid fills the GPU). See "sampled threshold"
 * below.
 */
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* ---- keys -------------------------------------------------------------------------- */

template <typename T> struct key_of;
template <> struct key_of<uint8_t> {
  static constexpr int BITS = 8;
  static __device__ __forceinline__ uint64_t image(uint8_t x) { return x; }
};
template <> struct key_of<uint32_t> {
  static constexpr int BITS = 32;
  static __device__ __forceinline__ uint64_t image(uint32_t x) { return x; }
};
template <> struct key_of<int32_t> {
  static constexpr int BITS = 32;
  static __device__ __forceinline__ uint64_t image(int32_t x) {
    return (uint32_t)x ^ 0x80000000u;
  }
};
template <> struct key_of<uint64_t> {
  static constexpr int BITS = 64;
  static __device__ __forceinline__ uint64_t image(uint64_t x) { return x; }
};
template <> struct key_of<int64_t> {
  static constexpr int BITS = 64;
  static __device__ __forceinline__ uint64_t image(int64_t x) {
    return (uint64_t)x ^ 0x8000000000000000ull;
  }
};
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

template <typename T, int IB>
__global__ void __launch_bounds__(PASS_THREADS)
topk_pass_kernel(const T *in, size_t n, size_t k, uint64_t flip, sel_state<typename comp<T, IB>::CT> *st,
                 unsigned long long *hist, typename comp<T, IB>::CT *buf0,
                 typename comp<T, IB>::CT *buf1, size_t cap, size_t fin_scap,
                 typename comp<T, IB>::CT *sel, int hist_mode) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  extern __shared__ __align__(16) unsigned h[]; /* BINS, or HIST_COPIES x BINS (mode 2) */
  __shared__ unsigned scan_scratch[PASS_THREADS / PP_WARP];
  __shared__ unsigned long long base_sure, base_keep;
  __shared__ bool last;

  if (st->stop) return;
  const int L = st->level;
  const int src = st->src;
  const bool take_all = st->take_all != 0;
  const unsigned dsel = (unsigned)st->dsel;
  const CT prefix = st->prefix, mask = st->mask;
  const unsigned long long count_L = L == 0 ? n : st->count;
  const unsigned long long krem = L == 0 ? k : st->krem;
  const size_t items = src == 0 ? n : st->src_count;
  const CT *from = src == 1 ? buf0 : buf1;
  const int w = src == 1 ? 1 : 0; /* the buffer this pass may write */
  CT *to = w == 0 ? buf0 : buf1;
  const bool write_buf = L > 0 && !take_all && count_L <= cap;
  const bool need_hist = !take_all;

  const int copies = hist_mode == 2 ? HIST_COPIES : 1;
  if (need_hist)
    for (int b = threadIdx.x; b < BINS * copies; b += PASS_THREADS) h[b] = 0;
  __syncthreads();

  for (size_t tile = blockIdx.x; tile * PASS_TILE < items; tile += gridDim.x) {
    const size_t base = tile * PASS_TILE;
    CT e[PASS_ITEMS];
    bool sure[PASS_ITEMS], keep[PASS_ITEMS];
#pragma unroll
    for (int j = 0; j < PASS_ITEMS; j++) {
      const size_t i = base + (size_t)j * PASS_THREADS + threadIdx.x;
      const bool valid = i < items;
      if (src == 0)
        e[j] = valid ? C::make(in[i], i, flip) : (CT)0;
      else
        e[j] = valid ? from[i] : (CT)0;
      sure[j] = false;
      keep[j] = valid;
      if (L > 0 && valid) {
        const bool member = (e[j] & mask) == prefix;
        const unsigned dg = C::digit(e[j], L - 1);
        sure[j] = member && (dg > dsel || (take_all && dg == dsel));
        keep[j] = member && !take_all && dg == dsel;
      }
    }
    if (need_hist) {
#pragma unroll
      for (int j = 0; j < PASS_ITEMS; j++)
        hist_add(h, keep[j] ? C::digit(e[j], L) : 0u, keep[j], hist_mode);
    }
    /* block-aggregated appends: one atomic per tile for each list */
    unsigned mine = 0;
#pragma unroll
    for (int j = 0; j < PASS_ITEMS; j++)
      mine += (sure[j] ? 0x10000u : 0u) + ((write_buf && keep[j]) ? 1u : 0u);
    if (__syncthreads_or(mine != 0)) {
      unsigned total;
      unsigned off = block_exclusive_sum<PASS_THREADS>(mine, scan_scratch, &total);
      if (threadIdx.x == 0) {
        if (total >> 16) base_sure = atomicAdd(&st->nsel, (unsigned long long)(total >> 16));
        if (total & 0xFFFFu) base_keep = atomicAdd(&st->nbuf[w], (unsigned long long)(total & 0xFFFFu));
      }
      __syncthreads();
      unsigned long long ps = base_sure + (off >> 16), pk = base_keep + (off & 0xFFFFu);
#pragma unroll
      for (int j = 0; j < PASS_ITEMS; j++) {
        if (sure[j]) sel[ps++] = e[j];
        else if (write_buf && keep[j]) to[pk++] = e[j];
      }
      __syncthreads(); /* scan_scratch and the bases are reused by the next tile */
    }
  }

  if (need_hist) {
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += PASS_THREADS) {
      unsigned v = 0;
      for (int c = 0; c < copies; c++) v += h[c * BINS + b];
      if (v) atomicAdd(&hist[b], (unsigned long long)v);
    }
  }
  /* the last block to finish sees every block's counts and decides the next pass */
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&st->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (take_all) {
    if (threadIdx.x == 0) st->stop = 1;
    return;
  }
  if (write_buf && count_L <= fin_scap) {
    if (threadIdx.x == 0) {
      st->stop = 2;
      st->fin_buf = w;
      st->fin_count = count_L;
      st->fin_krem = krem;
    }
    return;
  }
  digit_pick p = pick_digit<PASS_THREADS>(
      [&](int b) { return __ldcg(&hist[b]); }, krem);
  if (threadIdx.x == 0) {
    st->ticket = 0;
    if (L > 0) {
      st->prefix = prefix | ((CT)dsel << C::lo(L - 1));
      st->mask = C::mask_upto(L);
    }
    st->dsel = (int)p.d;
    st->krem = krem - p.above;
    st->count = p.count;
    st->take_all = krem - p.above == p.count;
    st->level = L + 1;
    if (write_buf) {
      if (src > 0) st->nbuf[src - 1] = 0; /* it is written by the pass after next */
      st->src = w + 1;
      st->src_count = count_L;
    }
  }
}

/* One block: takes the top fin_krem of the buffered candidates (when the passes stopped
 * there), then, for small k, sorts all k and writes the outputs. */
template <typename T, int IB>
__global__ void __launch_bounds__(FIN_THREADS)
topk_finish_kernel(const T *in, size_t k, sel_state<typename comp<T, IB>::CT> *st,
                   const typename comp<T, IB>::CT *buf0, const typename comp<T, IB>::CT *buf1,
                   typename comp<T, IB>::CT *sel, bool small_k, T *vals, uint64_t *idxs) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  CT *s = reinterpret_cast<CT *>(smem_raw);
  const int stop = st->stop;
  if (stop == 3) return; /* the sampled path already wrote the outputs */
  if (stop == 2) {
    const CT *b = st->fin_buf == 0 ? buf0 : buf1;
    const unsigned m = (unsigned)st->fin_count;
    const unsigned long long krem = st->fin_krem, ns = k - krem;
    if (small_k) { /* sure elements and candidates together: one sort gives the answer */
      for (unsigned i = threadIdx.x; i < ns; i += FIN_THREADS) s[i] = sel[i];
      for (unsigned i = threadIdx.x; i < m; i += FIN_THREADS) s[ns + i] = b[i];
      __syncthreads();
      sort_and_write<T, IB, FIN_THREADS>(s, (unsigned)(ns + m), k, in, vals, idxs);
      return;
    }
    for (unsigned i = threadIdx.x; i < m; i += FIN_THREADS) s[i] = b[i];
    const unsigned n2 = pow2_at_least(m);
    for (unsigned i = m + threadIdx.x; i < n2; i += FIN_THREADS) s[i] = 0;
    __syncthreads();
    block_sort_desc<CT, FIN_THREADS>(s, n2);
    for (size_t i = threadIdx.x; i < krem; i += FIN_THREADS) sel[ns + i] = s[i];
    return;
  }
  if (small_k) {
    for (unsigned i = threadIdx.x; i < k; i += FIN_THREADS) s[i] = sel[i];
    __syncthreads();
    sort_and_write<T, IB, FIN_THREADS>(s, (unsigned)k, k, in, vals, idxs);
  }
}

/* ---- sampled threshold ------------------------------------------ */

/* k small beside n (one array, or each row): a strided sample chooses a threshold
 * composite T that about r n / S elements reach, one read of the input keeps the elements
 * >= T, and only those go on to the selection. The answer is exact whatever T is: every
 * element of the top k is >= the k-th largest composite, so when at least k candidates
 * reach T the top k of the candidates is the top k of the input. When fewer than k (or
 * more than the buffers hold) reach T, the selection runs on the input as if nothing had
 * happened. Since composites are unique, ties do not defeat the threshold: with all-equal
 * values T cuts by index, and the count stays near r n / S.
 *
 * Two routes use it:
 * - one array, n >= SAMPLED_MIN_N: one block samples (topk_sample_kernel), the grid
 *   filters into one buffer (topk_filter_kernel), one block decides (topk_decide_kernel),
 *   and the radix passes above run on the candidates (or on the input, as a fallback);
 * - rows with cols >= SEG_MIN_COLS, and one array of SMALL_N < n < SAMPLED_MIN_N (one row):
 *   each row is cut into P segments, one block per segment computes the row's threshold
 *   from the row's sample and writes the segment's candidates to a slot of its own
 *   (topk_seg_kernel: no global atomics, nothing to zero first), then one block per row
 *   gathers them into shared memory and finishes there (topk_rows_kernel with a gather
 *   source), or selects from the row itself when a slot overflowed or fewer than k came. */
/* one array: n >= SAMPLED_MIN_N takes the multi-block route, below it the segments */
#define SAMPLED_MIN_N PP_TOPK_SAMPLED_MIN_N
#define SAMPLED_K_RATIO 256
/* samples per thread of the one-array sample kernel, at most */
#define SAMPLE_GMAX 16
#define FILTER_THREADS 256
#define FILTER_UNROLL 4
/* candidates each warp of the filter stages in shared memory before one atomic moves them
 * out: the 2^28 filter's hundreds of thousands of candidates otherwise take one atomic on
 * one counter per warp ballot */
#define WSTAGE 256

/* Threshold of a sample: thread t reads the g composites at positions step j + step / 2
 * (j = t + THREADS q, q < g; S = THREADS g <= cols, step = cols / S) and keeps the largest;
 * the r-th largest of the THREADS maxima, found by a sort of them in s (THREADS
 * composites of shared memory), is returned to every thread. That value is at most the
 * r-th largest of the S samples (r groups have a maximum that reaches it, and each maximum
 * is a sample), so it never lets fewer elements through than the r-th sample would, and
 * it is that sample unless two of the top r samples share a thread (about r^2 / 2 THREADS
 * collisions for g > 1), which only lowers it a little. A sorted row's top samples lie in
 * distinct threads (j = S - 1, S - 2, ...). All threads call; s may be reused after. */
/* runs: the S samples are S / G runs of G = 32 / sizeof(T) adjacent elements (one 32-byte
 * sector when x is aligned), run p at the middle of the p-th of S / G equal parts; sample j
 * is element j % G of run j / G. A thread's g samples still lie in g distinct parts, and
 * the sectors read are G times fewer. */
template <typename T, int IB, int THREADS>
__device__ typename comp<T, IB>::CT sample_threshold(const T *x, size_t cols, uint64_t flip,
                                                     unsigned g, unsigned r, bool runs,
                                                     typename comp<T, IB>::CT *s) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  constexpr size_t G = 32 / sizeof(T);
  const size_t S = (size_t)THREADS * g, step = cols / S, rstep = cols / (S / G);
  CT best = 0; /* below every composite */
#pragma unroll 4
  for (unsigned q = 0; q < g; q++) {
    const size_t j = threadIdx.x + (size_t)THREADS * q;
    const size_t i = runs ? (rstep * (j / G) + (rstep - G) / 2) / G * G + j % G
                          : step * j + step / 2;
    const CT c = C::make(x[i], i, flip);
    best = c > best ? c : best;
  }
  s[threadIdx.x] = best;
  __syncthreads();
  block_sort_desc<CT, THREADS>(s, THREADS); /* ends with a barrier */
  const CT thr = s[r - 1];
  __syncthreads();
  return thr;
}

/* Candidate sinks of filter_range. push(pred, c) is called by all lanes of a warp (pred
 * per lane) and keeps c where pred holds; positions at or past cap are counted but not
 * written, so that an overflow is seen. */

/* A block's own slot in global memory, counted in shared memory. */
template <typename CT>
struct slot_sink {
  CT *buf;
  unsigned *counter; /* shared */
  unsigned cap;
  __device__ __forceinline__ void push(bool pred, CT c) {
    const unsigned ballot = __ballot_sync(0xffffffffu, pred);
    if (!ballot) return;
    const int lane = threadIdx.x % PP_WARP, leader = __ffs(ballot) - 1;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(counter, (unsigned)__popc(ballot));
    base = __shfl_sync(0xffffffffu, base, leader);
    const unsigned pos = base + (unsigned)__popc(ballot & ((1u << lane) - 1u));
    if (pred && pos < cap) buf[pos] = c;
  }
};

/* One buffer shared by the grid: each warp stages WSTAGE candidates in shared memory and
 * moves them out with one atomic on the global counter when full; flush_block moves what
 * is left with one atomic per block. */
template <typename CT>
struct stage_sink {
  CT *stage; /* this warp's WSTAGE entries */
  unsigned n; /* staged, the same in every lane */
  CT *buf;
  unsigned long long *counter; /* global */
  size_t cap;
  __device__ __forceinline__ void out(unsigned long long base) {
    for (unsigned i = threadIdx.x % PP_WARP; i < n; i += PP_WARP)
      if (base + i < cap) buf[base + i] = stage[i];
  }
  __device__ __forceinline__ void push(bool pred, CT c) {
    const unsigned ballot = __ballot_sync(0xffffffffu, pred);
    if (!ballot) return;
    const int lane = threadIdx.x % PP_WARP;
    if (n + PP_WARP > WSTAGE) { /* warp-uniform */
      unsigned long long base = 0;
      __syncwarp();
      if (lane == 0) base = atomicAdd(counter, (unsigned long long)n);
      base = __shfl_sync(0xffffffffu, base, 0);
      out(base);
      __syncwarp(); /* the stage is rewritten below */
      n = 0;
    }
    if (pred) stage[n + __popc(ballot & ((1u << lane) - 1u))] = c;
    n += (unsigned)__popc(ballot);
  }
  /* All threads of the block call, once, at the end. */
  template <int THREADS>
  __device__ __forceinline__ void flush_block() {
    __shared__ unsigned wn[THREADS / PP_WARP];
    __shared__ unsigned long long bbase;
    const int warp = threadIdx.x / PP_WARP;
    __syncwarp();
    if (threadIdx.x % PP_WARP == 0) wn[warp] = n;
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long total = 0;
      for (int w = 0; w < THREADS / PP_WARP; w++) total += wn[w];
      bbase = total ? atomicAdd(counter, total) : 0ull;
    }
    __syncthreads();
    unsigned long long base = bbase;
    for (int w = 0; w < warp; w++) base += wn[w];
    out(base);
  }
};

/* Element j of the 16-byte vector w (j < 16 / sizeof(T)). */
template <typename T>
__device__ __forceinline__ T elem_of(const uint4 &w, unsigned j) {
  const auto word = [&](unsigned q) {
    return (q & 2) ? ((q & 1) ? w.w : w.z) : ((q & 1) ? w.y : w.x);
  };
  T r;
  if constexpr (sizeof(T) == 4) {
    const uint32_t b = word(j);
    memcpy(&r, &b, 4);
  } else if constexpr (sizeof(T) == 8) {
    const uint64_t b = ((uint64_t)word(2 * j + 1) << 32) | word(2 * j);
    memcpy(&r, &b, 8);
  } else {
    static_assert(sizeof(T) == 1, "1, 4 or 8 bytes");
    const uint32_t b = word(j / 4) >> (8 * (j % 4));
    r = (T)(b & 0xFFu);
  }
  return r;
}

/* reach(x): whether the key of x (image ^ flip, as in the composite) may reach tk, the
 * threshold's key: true whenever it does (a superset: the caller tests the composite).
 * Integers compare keys; floats compare values with the threshold's value tv (the image's
 * inverse), one instruction: largest: !(x < tv), true for x >= tv (-0.0 == +0.0) and for
 * NaN (the largest key); smallest: the same on -x and -tv, true for x <= tv and, a
 * superset, for NaN. A NaN threshold passes everything. */
template <typename T, typename KT>
struct key_reaches {
  KT tk, fl;
  __device__ __forceinline__ key_reaches(KT tk_, uint64_t flip) : tk(tk_), fl((KT)flip) {}
  __device__ __forceinline__ bool operator()(T x) const {
    return (KT)((KT)key_of<T>::image(x) ^ fl) >= tk;
  }
};
template <typename KT>
struct key_reaches<float, KT> {
  uint32_t sg; /* sign bit flipped for the smallest (x -> -x, exact) */
  float tv;    /* the threshold's value, sign flipped alike */
  __device__ __forceinline__ key_reaches(KT tk, uint64_t flip) {
    const uint32_t k = (uint32_t)tk ^ (uint32_t)flip; /* the threshold's image */
    sg = flip ? 0x80000000u : 0u;
    tv = __uint_as_float(((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k) ^ sg);
  }
  __device__ __forceinline__ bool operator()(float x) const {
    return !(__uint_as_float(__float_as_uint(x) ^ sg) < tv);
  }
};
template <typename KT>
struct key_reaches<double, KT> {
  uint64_t sg;
  double tv;
  __device__ __forceinline__ key_reaches(KT tk, uint64_t flip) {
    const uint64_t k = (uint64_t)tk ^ flip;
    sg = flip ? 0x8000000000000000ull : 0ull;
    tv = __longlong_as_double(
        (long long)(((k & 0x8000000000000000ull) ? (k & 0x7FFFFFFFFFFFFFFFull) : ~k) ^ sg));
  }
  __device__ __forceinline__ bool operator()(double x) const {
    return !(__longlong_as_double((long long)((uint64_t)__double_as_longlong(x) ^ sg)) < tv);
  }
};

/* One read of x[0..n) (element i has index ibase + i): x[0..head) and the tail after the
 * nvec 16-byte vectors (x + head is 16-byte aligned, head <= n) are done by the first
 * warp of the block if edges, vectors tile0, tile0 + tstep, ... (tiles of THREADS x UNROLL
 * vectors) by the block, UNROLL loads in flight per thread. Elements whose composite is
 * >= thr go to sink (they are rare). The common test is one compare of the element's key
 * (key_reaches); only the elements that pass it build their composite. Every thread of
 * the block calls. */
template <typename T, int IB, int THREADS, int UNROLL, typename Sink>
__device__ __forceinline__ void filter_range(const T *x, size_t n, size_t head, size_t nvec,
                                             uint64_t flip, typename comp<T, IB>::CT thr,
                                             size_t ibase, Sink &sink, size_t tile0,
                                             size_t tstep, bool edges) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  constexpr int V = 16 / sizeof(T);
  union vec {
    uint4 u;
    T e[V];
  };
  static_assert(UNROLL * V <= 64, "one bit per element of a tile in 64 bits");
  typedef typename std::conditional<(key_of<T>::BITS <= 32), uint32_t, uint64_t>::type KT;
  const key_reaches<T, KT> reach((KT)(thr >> IB), flip);
  const uint4 *vin = reinterpret_cast<const uint4 *>(x + head);
  const size_t tile_v = (size_t)THREADS * UNROLL, i0 = ibase + head;
  /* the loop bound is uniform over the block, so whole warps reach the sink */
  for (size_t tile = tile0; tile * tile_v < nvec; tile += tstep) {
    const size_t q0 = tile * tile_v + threadIdx.x;
    vec v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const size_t q = q0 + (size_t)u * THREADS;
      v[u].u = q < nvec ? __ldcs(vin + q) : make_uint4(0u, 0u, 0u, 0u);
    }
    /* bit u V + j: element j of vector u may reach the threshold (its key does; a superset
     * of the candidates, since c >= thr needs key(c) >= key(thr)) */
    unsigned long long hits = 0;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const bool in_range = q0 + (size_t)u * THREADS < nvec;
#pragma unroll
      for (int j = 0; j < V; j++)
        hits |= (in_range && reach(v[u].e[j])) ? 1ull << (u * V + j) : 0ull;
    }
    /* rare (about one element in a hundred for the row cases): one hit per lane and round,
     * its composite tested exactly and kept */
    const size_t ib = i0 + q0 * V; /* index of element 0 of vector 0 */
    while (__any_sync(0xffffffffu, hits != 0)) {
      const bool has = hits != 0;
      const int b = has ? __ffsll((long long)hits) - 1 : 0;
      hits &= hits - 1;
      const int u = b / V, j = b % V;
      uint4 w = v[0].u; /* v[u] without indexing v at run time (it stays in registers) */
#pragma unroll
      for (int a = 1; a < UNROLL; a++)
        if (a == u) w = v[a].u;
      const CT c = C::make(elem_of<T>(w, (unsigned)j), ib + (size_t)u * THREADS * V + j, flip);
      sink.push(has && c >= thr, c);
    }
  }
  if (edges && threadIdx.x < PP_WARP) {
    /* head < V (or head == n < V) and the tail < V elements: at most 2V - 1 <= 31, one per
     * lane */
    const size_t tail0 = head + nvec * V, t = threadIdx.x;
    const bool valid = t < head + (n - tail0);
    const size_t i = t < head ? t : tail0 + (t - head);
    const CT c = valid ? C::make(x[i], ibase + i, flip) : (CT)0;
    sink.push(valid && c >= thr, c);
  }
}

/* One block: the threshold of S = FIN_THREADS g samples of the input. */
template <typename T, int IB>
__global__ void __launch_bounds__(FIN_THREADS)
topk_sample_kernel(const T *in, size_t n, unsigned g, unsigned r, bool runs, uint64_t flip,
                   sel_state<typename comp<T, IB>::CT> *st) {
  __shared__ typename comp<T, IB>::CT s[FIN_THREADS];
  const typename comp<T, IB>::CT thr = sample_threshold<T, IB, FIN_THREADS>(in, n, flip, g, r, runs, s);
  if (threadIdx.x == 0) st->thresh = thr;
}

/* The filter over one array, the grid sharing the tiles. */
template <typename T, int IB>
__global__ void __launch_bounds__(FILTER_THREADS)
topk_filter_kernel(const T *in, size_t n, size_t head, size_t nvec, uint64_t flip,
                   sel_state<typename comp<T, IB>::CT> *st, typename comp<T, IB>::CT *buf,
                   size_t cap) {
  typedef typename comp<T, IB>::CT CT;
  __shared__ CT stage[FILTER_THREADS / PP_WARP * WSTAGE];
  stage_sink<CT> sink = {stage + (threadIdx.x / PP_WARP) * WSTAGE, 0u, buf, &st->ncand, cap};
  filter_range<T, IB, FILTER_THREADS, FILTER_UNROLL>(in, n, head, nvec, flip, st->thresh, 0, sink,
                                                     blockIdx.x, gridDim.x, blockIdx.x == 0);
  sink.template flush_block<FILTER_THREADS>();
}

/* ---- segments: one block per (row, segment) ---------------------------------------- */

#define SEG_THREADS 256
#define SEG_UNROLL 4
/* rows at least this long take the segment route (when k is small enough beside them) */
#define SEG_MIN_COLS 16384
/* a segment is at least this long, and a multiple of SEG_ALIGN elements */
#define SEG_MIN_LEN 8192
#define SEG_ALIGN 256
/* temp memory for slots at most (rows are done in batches beyond it) */
#define SEG_SLOT_BYTES ((size_t)64 << 20)

/* Block (row, p) of rows x P: the row's threshold from its sample (the same in every block
 * of the row), then segment p of the row, [p seg_len, min(cols, (p + 1) seg_len)), filtered
 * into slot cand[blockIdx.x] (cap composites); counts[blockIdx.x] gets how many reached
 * the threshold, also past cap. */
template <typename T, int IB>
__global__ void __launch_bounds__(SEG_THREADS)
topk_seg_kernel(const T *in, size_t cols, unsigned P, size_t seg_len, uint64_t flip, unsigned g,
                unsigned r, bool runs, typename comp<T, IB>::CT *cand, unsigned *counts, unsigned cap) {
  typedef typename comp<T, IB>::CT CT;
  __shared__ CT s[SEG_THREADS];
  __shared__ unsigned cnt;
  const size_t row = blockIdx.x / P, s0 = (size_t)(blockIdx.x % P) * seg_len;
  const T *x = in + row * cols;
  const CT thr = sample_threshold<T, IB, SEG_THREADS>(x, cols, flip, g, r, runs, s);
  if (threadIdx.x == 0) cnt = 0;
  __syncthreads();
  const size_t n = cols - s0 < seg_len ? cols - s0 : seg_len;
  const T *xs = x + s0;
  size_t head = ((16 - (uintptr_t)xs % 16) % 16) / sizeof(T);
  if (head > n) head = n;
  slot_sink<CT> sink = {cand + (size_t)blockIdx.x * cap, &cnt, cap};
  filter_range<T, IB, SEG_THREADS, SEG_UNROLL>(xs, n, head, (n - head) / (16 / sizeof(T)), flip, thr,
                                               s0, sink, 0, 1, true);
  __syncthreads();
  if (threadIdx.x == 0) counts[blockIdx.x] = cnt;
}

/* One block, after the filter. With k <= m candidates and m <= fcap (small k only): sorts
 * them and writes the outputs, stop = 3 (the passes and the finishing block then return).
 * With k <= m <= cap: the passes take buf0 as their input (src 1, level 0). Otherwise
 * (the threshold missed): the state is left as it was, and the passes read the input. */
template <typename T, int IB>
__global__ void __launch_bounds__(FIN_THREADS)
topk_decide_kernel(const T *in, size_t k, sel_state<typename comp<T, IB>::CT> *st,
                   const typename comp<T, IB>::CT *buf0, size_t cap, unsigned fcap,
                   bool small_k, T *vals, uint64_t *idxs) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  CT *s = reinterpret_cast<CT *>(smem_raw);
  const unsigned long long m = st->ncand;
  if (m < k || m > cap) return; /* uniform over the block */
  if (small_k && m <= fcap) {
    for (unsigned i = threadIdx.x; i < m; i += FIN_THREADS) s[i] = buf0[i];
    __syncthreads();
    sort_and_write<T, IB, FIN_THREADS>(s, (unsigned)m, k, in, vals, idxs);
    if (threadIdx.x == 0) st->stop = 3;
    return;
  }
  if (threadIdx.x == 0) {
    st->src = 1;
    st->src_count = m;
  }
}

/* sel (sorted descending, 64-bit composites) to outputs */
template <typename T, int IB>
__global__ void topk_decode_kernel(const T *in, const typename comp<T, IB>::CT *sel, size_t k,
                                   T *vals, uint64_t *idxs) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < k;
       j += (size_t)gridDim.x * blockDim.x) {
    const uint64_t i = comp<T, IB>::index(sel[j]);
    vals[j] = in[i];
    if (idxs) idxs[j] = i;
  }
}

template <typename T, int IB>
__global__ void topk_extract_kernel(const typename comp<T, IB>::CT *sel, size_t k, uint64_t *ix) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < k;
       j += (size_t)gridDim.x * blockDim.x)
    ix[j] = comp<T, IB>::index(sel[j]);
}

template <typename T>
__global__ void topk_gather_kernel(const T *in, const uint64_t *ix, size_t k, T *vals,
                                   uint64_t *idxs) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < k;
       j += (size_t)gridDim.x * blockDim.x) {
    const uint64_t i = ix[j];
    vals[j] = in[i];
    if (idxs) idxs[j] = i;
  }
}

/* ==================================================================================== */
/* Rows: one block per row                                                               */
/* ==================================================================================== */

/* Appends e to list at a warp-aggregated position for each lane where pred holds. All
 * lanes of the warp call. */
template <typename CT>
__device__ __forceinline__ void warp_append(CT *list, unsigned *counter, bool pred, CT e) {
  const unsigned ballot = __ballot_sync(0xffffffffu, pred);
  if (!ballot) return;
  const int lane = threadIdx.x % PP_WARP, leader = __ffs(ballot) - 1;
  unsigned base = 0;
  if (lane == leader) base = atomicAdd(counter, (unsigned)__popc(ballot));
  base = __shfl_sync(0xffffffffu, base, leader);
  if (pred) list[base + __popc(ballot & ((1u << lane) - 1u))] = e;
}

#define ROW_UNROLL 8

/* Where a row's candidates come from (topk_seg_kernel): P slots of cap composites per
 * row, row r's at cand[(r P + p) cap], with their counts; cand NULL: none, the row is read. */
template <typename CT>
struct row_gather {
  const CT *cand;
  const unsigned *counts;
  unsigned P, cap;
};

/* Shared memory: BINS counters, then F (fcap composites: sure elements and, at the end,
 * the last candidates), then M (mcap composites: S_L once it fits, or the gathered
 * candidates). */
template <typename T, int IB, int THREADS>
__global__ void __launch_bounds__(THREADS)
topk_rows_kernel(const T *in, size_t cols, size_t k, uint64_t flip, T *vals, uint64_t *idxs,
                 unsigned fcap, unsigned mcap, int hist_mode, bool skip,
                 row_gather<typename comp<T, IB>::CT> src) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned *h = reinterpret_cast<unsigned *>(smem_raw);
  CT *F = reinterpret_cast<CT *>(smem_raw + BINS * sizeof(unsigned));
  CT *M = F + fcap;
  __shared__ unsigned nf, nm;
  __shared__ int gathered;

  const size_t row = blockIdx.x;
  const T *x = in + row * cols;
  T *vout = vals + row * k;
  uint64_t *iout = idxs ? idxs + row * k : NULL;

  int L = 0;
  CT prefix = 0, mask = 0;
  unsigned dsel = 0;
  bool take_all = false, in_m = false;
  unsigned long long krem = k, count = cols;
  size_t items = cols;
  if (threadIdx.x == 0) nf = 0;

  if (src.cand) {
    /* The row's slots: warp 0 turns their counts into offsets off[0..P] (in h, cleared by
     * the first pass below). With every count within its slot and k <= m <= mcap in all,
     * the m candidates are copied to M and the passes start from there; else they read
     * the row, as if there had been no sample. */
    const unsigned P = src.P;
    unsigned *off = h; /* P < BINS */
    const unsigned *cnt = src.counts + row * P;
    if (threadIdx.x < PP_WARP) {
      const int lane = threadIdx.x;
      unsigned carry = 0;
      bool fits = true;
      for (unsigned b = 0; b < P; b += PP_WARP) {
        const unsigned p = b + lane;
        const unsigned c = p < P ? cnt[p] : 0u;
        fits &= c <= src.cap;
        unsigned v = c <= src.cap ? c : 0u; /* so that the sum cannot wrap */
        const unsigned own = v;
#pragma unroll
        for (int d = 1; d < PP_WARP; d *= 2) {
          const unsigned y = __shfl_up_sync(0xffffffffu, v, d);
          if (lane >= d) v += y;
        }
        if (p < P) off[p] = carry + v - own;
        carry += __shfl_sync(0xffffffffu, v, PP_WARP - 1);
      }
      fits = __all_sync(0xffffffffu, fits);
      if (lane == 0) {
        off[P] = carry;
        gathered = fits && carry >= k && carry <= mcap;
      }
    }
    __syncthreads();
    if (gathered) {
      const unsigned m = off[P];
      const CT *slots = src.cand + row * P * (size_t)src.cap;
      for (unsigned i = threadIdx.x; i < m; i += THREADS) {
        unsigned lo = 0, hi = P; /* off[lo] <= i < off[hi] */
        while (hi - lo > 1) {
          const unsigned mid = (lo + hi) / 2;
          if (off[mid] <= i) lo = mid;
          else hi = mid;
        }
        M[i] = slots[(size_t)lo * src.cap + (i - off[lo])];
      }
      in_m = true;
      items = m;
      count = m;
    }
    __syncthreads(); /* off is read before the first pass clears h */
    if (skip && gathered) {
      /* The candidates lie above one threshold, so they often share their first digits
       * (random floats in [-1, 1), k a hundredth of the row: sign, exponent and the top
       * mantissa bits): a histogram of such a digit has one bin. The bits where some
       * candidate differs from M[0] give the first digit j0 worth a pass; the selection
       * starts there as if passes 1..j0 had chosen M[0]'s digits (every candidate is a
       * member, none is sure). */
      const unsigned m = items;
      const CT first = M[0];
      CT diff = 0;
      for (unsigned i = threadIdx.x; i < m; i += THREADS) diff |= M[i] ^ first;
      constexpr int W = (int)(sizeof(CT) / 4); /* 32-bit words of a composite */
      unsigned *dw = h;                         /* W words, cleared by the first pass */
      if (threadIdx.x < W) dw[threadIdx.x] = 0;
      __syncthreads();
#pragma unroll
      for (int w = 0; w < W; w++) {
        const unsigned v = __reduce_or_sync(0xffffffffu, (unsigned)(diff >> (16 * w) >> (16 * w)));
        if (threadIdx.x % PP_WARP == 0 && v) atomicOr(&dw[w], v);
      }
      __syncthreads();
      diff = 0;
#pragma unroll
      for (int w = 0; w < W; w++) diff |= (CT)dw[w] << (16 * w) << (16 * w);
      int j0 = 0;
      while (j0 < C::DIGITS - 1 && C::digit(diff, j0) == 0) j0++;
      if (j0 > 0) {
        L = j0;
        mask = C::mask_upto(j0 - 1);
        prefix = first & mask;
        dsel = C::digit(first, j0 - 1);
      }
      __syncthreads(); /* dw is read before the first pass clears h */
    }
  }

  for (;;) {
    /* S_L joins the sure elements in F when both fit: that pass ends the selection */
    const bool to_f = !take_all && (k - krem) + count <= fcap;
    const bool to_m = !to_f && !take_all && !in_m && count <= mcap;
    const bool need_hist = !to_f && !take_all;
    if (need_hist)
      for (int b = threadIdx.x; b < BINS; b += THREADS) h[b] = 0;
    if (threadIdx.x == 0) nm = 0;
    __syncthreads();
    for (size_t base = 0; base < items; base += (size_t)THREADS * ROW_UNROLL) {
      CT e[ROW_UNROLL];
#pragma unroll
      for (int j = 0; j < ROW_UNROLL; j++) {
        const size_t i = base + (size_t)j * THREADS + threadIdx.x;
        e[j] = i < items ? (in_m ? M[i] : C::make(x[i], i, flip)) : (CT)0;
      }
#pragma unroll
      for (int j = 0; j < ROW_UNROLL; j++) {
        const size_t i = base + (size_t)j * THREADS + threadIdx.x;
        const bool valid = i < items;
        bool sure = false, keep = valid;
        if (L > 0 && valid) {
          const bool member = (e[j] & mask) == prefix;
          const unsigned dg = C::digit(e[j], L - 1);
          sure = member && (dg > dsel || (take_all && dg == dsel));
          keep = member && !take_all && dg == dsel;
        }
        warp_append(F, &nf, sure || (to_f && keep), e[j]);
        if (to_m) warp_append(M, &nm, keep, e[j]);
        if (need_hist) hist_add(h, keep ? C::digit(e[j], L) : 0u, keep, hist_mode);
      }
    }
    __syncthreads();
    if (to_f || take_all) break;
    if (to_m) {
      in_m = true;
      items = count;
    }
    const digit_pick p = pick_digit<THREADS>([&](int b) { return (unsigned long long)h[b]; }, krem);
    if (L > 0) {
      prefix |= (CT)dsel << C::lo(L - 1);
      mask = C::mask_upto(L);
    }
    dsel = p.d;
    krem -= p.above;
    count = p.count;
    take_all = krem == count;
    L++;
  }
  __syncthreads();
  sort_and_write<T, IB, THREADS>(F, nf, k, x, vout, iout);
}

/* ==================================================================================== */
/* Host side                                                                             */
/* ==================================================================================== */

/* The knobs below keep the defaults written here unless a test or a probe sets them
 * through pp_test_control(PP_TESTCTL_TOPK_KNOB, ...) (src/core/testctl.h), to time the
 * routes side by side in one build. The library reads no environment variable for them.
 *
 * PP_TOPK_KNOB_HIST (0, 1, 2) overrides the histogram method; rows use 0 or 1 (their
 * shared memory has room for one copy of the counters). */
static int hist_mode(void) { return pp_topk_knob_value(PP_TOPK_KNOB_HIST, PP_TOPK_HIST, 0, 2); }
static int row_hist_mode(void) { return hist_mode() == 1 ? 1 : 0; }

/* PP_TOPK_KNOB_SAMPLED = 0 turns the sampled-threshold paths off at run time (to time the
 * radix-only code in the same build). */
static bool sampled_on(void) { return pp_topk_knob_value(PP_TOPK_KNOB_SAMPLED, 1, 0, 1) != 0; }

/* PP_TOPK_KNOB_SEG_BPS: the segment grid's blocks per SM when rows are few (default: as
 * many as are resident; 0 turns the segment route off, to time the other routes in the
 * same build); PP_TOPK_KNOB_GMAX: the one-array sample kernel's samples per thread at most
 * (1..16). */
#define SEG_BPS_AUTO 1000u
static unsigned seg_bps_env(void) {
  return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_SEG_BPS, (int)SEG_BPS_AUTO, 0, 64);
}
static unsigned sample_gmax(void) {
  return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_GMAX, SAMPLE_GMAX, 1, SAMPLE_GMAX);
}
/* PP_TOPK_KNOB_ROW_GMAX: samples per thread of the segment route for rows, at most
 * (1..16) */
static unsigned row_gmax(void) { return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_ROW_GMAX, 4, 1, 16); }
/* Samples in runs of one sector (sample_threshold); PP_TOPK_KNOB_RUNS = 0: one sample per
 * sector (to time both in one build). */
static bool sample_runs(void) { return pp_topk_knob_value(PP_TOPK_KNOB_RUNS, 1, 0, 1) != 0; }
/* The row kernel starts its passes over gathered candidates at the first digit where
 * they differ; PP_TOPK_KNOB_SKIP = 0 turns that off (to time both in one build). */
static bool row_skip(void) { return pp_topk_knob_value(PP_TOPK_KNOB_SKIP, 1, 0, 1) != 0; }

static inline uint64_t flip_of(int key_bits, bool largest) {
  if (largest) return 0;
  return key_bits == 64 ? ~0ull : ((1ull << key_bits) - 1);
}

static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Row kernel configuration for (cols, k) and composite size cs: false when k does not
 * fit shared memory. mcap_want > 0: M is that size (the gathered candidates, with room to
 * spare), so that more blocks share an SM; false when it does not fit. 0: M takes what
 * the budget leaves. */
struct rows_plan {
  int threads;
  unsigned fcap, mcap;
  size_t smem;
};

static bool plan_rows(size_t cols, size_t k, size_t cs, size_t mcap_want, rows_plan *p) {
  const size_t fcap = pow2_at_least(k + ROW_SMALL);
  const size_t hist = BINS * sizeof(unsigned);
  const bool big = cols >= 65536 || fcap * cs > 24 * 1024;
  const size_t budget = big ? 200 * 1024 : 56 * 1024;
  if (hist + fcap * cs > budget) return false;
  size_t mcap = (budget - hist - fcap * cs) / cs;
  if (mcap_want) {
    if (mcap_want > mcap) return false;
    mcap = mcap_want;
  }
  if (mcap > cols) mcap = cols;
  p->threads = big ? 1024 : 256;
  p->fcap = (unsigned)fcap;
  p->mcap = (unsigned)mcap;
  p->smem = hist + (fcap + mcap) * cs;
  return true;
}

template <typename T, int IB, int THREADS>
static pp_status launch_rows_t(pp_context *ctx, const char *fn, const T *in, size_t rows,
                               size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                               const rows_plan &p, row_gather<typename comp<T, IB>::CT> src) {
  pp_cuda_state *st = pp_cuda(ctx);
  void (*kern)(const T *, size_t, size_t, uint64_t, T *, uint64_t *, unsigned, unsigned, int, bool,
               row_gather<typename comp<T, IB>::CT>) = topk_rows_kernel<T, IB, THREADS>;
  static pp_fit_cache fit;
  PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, kern, p.smem), fn);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  for (size_t r0 = 0; r0 < rows; r0 += 0x7FFFFFFF) { /* grid x is at most 2^31 - 1 */
    const size_t nr = rows - r0 < 0x7FFFFFFF ? rows - r0 : 0x7FFFFFFF;
    row_gather<typename comp<T, IB>::CT> s = src;
    if (s.cand) {
      s.cand += r0 * s.P * (size_t)s.cap;
      s.counts += r0 * s.P;
    }
    kern<<<(unsigned)nr, THREADS, p.smem, st->stream>>>(in + r0 * cols, cols, k, flip,
                                                        vals + r0 * k, idxs ? idxs + r0 * k : NULL,
                                                        p.fcap, p.mcap, row_hist_mode(), row_skip(), s);
    PP_CUDA_LAUNCHED(ctx, fn);
  }
  return PP_OK;
}

template <typename T, int IB>
static pp_status launch_rows(pp_context *ctx, const char *fn, const T *in, size_t rows,
                             size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                             const rows_plan &p, row_gather<typename comp<T, IB>::CT> src) {
  if (p.threads == 1024)
    return launch_rows_t<T, IB, 1024>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, src);
  return launch_rows_t<T, IB, 256>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, src);
}

/* A sampled threshold for k of n with THREADS threads taking g samples each: the largest
 * g <= gmax with S = THREADS g <= n and r <= THREADS / 4 (few collisions of group maxima).
 * r = ceil(x + 4 sqrt(x) + 2), x = k S / n the expected samples among the top k: fewer
 * than k elements reach the r-th sample only far out in the tail (the count is about
 * Gamma(r) n / S; for x below 1, P ~ x^r / r!). m: the candidates expected, r n / S with
 * the collisions of the group maxima (about r^2 / 2 THREADS more ranks) added. */
struct sample_plan {
  unsigned g, r;
  double m;
};

static inline bool plan_sample(size_t n, size_t k, unsigned threads, unsigned gmax,
                               sample_plan *sp) {
  for (unsigned g = gmax; g >= 1; g /= 2) {
    const double S = (double)threads * g;
    if (S > (double)n) continue;
    const double x = (double)k * S / (double)n;
    const double r = ceil(x + 4.0 * sqrt(x) + 2.0);
    if (r > threads / 4) continue;
    sp->g = g;
    sp->r = (unsigned)r;
    sp->m = (r + (g > 1 ? r * r / (2.0 * threads) : 0.0)) * (double)n / S;
    return true;
  }
  return false;
}

/* The segment route (topk_seg_kernel, then topk_rows_kernel gathering): P segments per
 * row, slots of cap, rows in batches of `batch` (the slots' memory), the row kernel's
 * plan with M sized for twice the expected candidates. */
struct seg_plan {
  sample_plan s;
  unsigned P, cap;
  size_t seg_len, batch;
  rows_plan k2;
};

static bool plan_seg(size_t rows, size_t cols, size_t k, size_t cs, size_t es, bool one_array,
                     size_t blocks, const void *in, seg_plan *sp) {
  if (!sampled_on() || blocks == 0 || cols < SEG_MIN_COLS || cols > 0x7FFFFFFFull ||
      (uintptr_t)in % es != 0)
    return false;
  /* one array: a larger sample per block (its P blocks are the only ones); rows: 1024
   * samples, a quarter of a 32768-float row's sectors */
  if (!plan_sample(cols, k, SEG_THREADS, one_array ? 16 : row_gmax(), &sp->s)) return false;
  const double want = 2.0 * sp->s.m + 256.0;
  if (want > (double)cols / 2) return false;
  const size_t mcap = (size_t)want;
  if (mcap < k || !plan_rows(cols, k, cs, mcap, &sp->k2)) return false;
  /* few rows: split them so that one wave of resident blocks (blocks) has work, and no
   * second wave is started for a few */
  size_t P = blocks / rows;
  if (P > cols / SEG_MIN_LEN) P = cols / SEG_MIN_LEN;
  if (P < 1) P = 1;
  sp->seg_len = cols;
  if (P > 1) {
    sp->seg_len = align_up(pp_ceil_div(cols, P), SEG_ALIGN);
    P = pp_ceil_div(cols, sp->seg_len);
  }
  if (P >= BINS) return false; /* the gather keeps P + 1 offsets in the histogram */
  sp->P = (unsigned)P;
  /* a slot holds what the whole row is expected to give: a sorted row gives it all in one */
  sp->cap = (unsigned)(mcap < sp->seg_len ? mcap : sp->seg_len);
  size_t batch = SEG_SLOT_BYTES / (P * ((size_t)sp->cap * cs + sizeof(unsigned)));
  if (batch < 1) batch = 1;
  if (batch > rows) batch = rows;
  if (batch * P > 0x7FFFFFFFull) batch = 0x7FFFFFFFull / P;
  sp->batch = batch;
  return true;
}

/* Blocks of topk_seg_kernel resident per SM (PP_TOPK_KNOB_SEG_BPS overrides; 0: the
 * route is off). */
template <typename T, int IB>
static unsigned seg_blocks_per_sm(pp_cuda_state *st) {
  const unsigned env = seg_bps_env();
  if (env != SEG_BPS_AUTO) return env;
  static pp_fit_cache fit;
  return (unsigned)pp_fit_blocks(st, &fit, topk_seg_kernel<T, IB>, SEG_THREADS, 0, 4);
}

template <typename T, int IB>
static pp_status topk_segmented(pp_context *ctx, const char *fn, const T *in, size_t rows,
                                size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                                const seg_plan &sp) {
  typedef typename comp<T, IB>::CT CT;
  pp_cuda_state *cs = pp_cuda(ctx);
  const size_t nslot = sp.batch * sp.P;
  const size_t o_counts = align_up(nslot * sp.cap * sizeof(CT), 256);
  void *mem = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &mem, o_counts + nslot * sizeof(unsigned));
  if (s != PP_OK) return s;
  CT *cand = (CT *)mem;
  unsigned *counts = (unsigned *)((char *)mem + o_counts);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  cudaError_t e = cudaSuccess;
  for (size_t r0 = 0; r0 < rows && e == cudaSuccess && s == PP_OK; r0 += sp.batch) {
    const size_t nr = rows - r0 < sp.batch ? rows - r0 : sp.batch;
    topk_seg_kernel<T, IB><<<(unsigned)(nr * sp.P), SEG_THREADS, 0, cs->stream>>>(
        in + r0 * cols, cols, sp.P, sp.seg_len, flip, sp.s.g, sp.s.r, sample_runs(), cand, counts,
        sp.cap);
    e = cudaGetLastError();
    if (e == cudaSuccess) {
      const row_gather<CT> src = {cand, counts, sp.P, sp.cap};
      s = launch_rows<T, IB>(ctx, fn, in + r0 * cols, nr, cols, k, largest, vals + r0 * k,
                             idxs ? idxs + r0 * k : NULL, sp.k2, src);
    }
  }
  ctx->ops->temp_free(ctx, mem); /* stream-ordered: after the kernels */
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return s;
}

template <typename T, int IB>
static pp_status topk_array(pp_context *ctx, const char *fn, pp_dtype t, const T *in, size_t n,
                            size_t k, bool largest, T *vals, uint64_t *idxs) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  pp_cuda_state *cs = pp_cuda(ctx);
  const size_t fcap = FIN_BYTES / sizeof(CT), fin_scap = fcap / 2;
  const bool small_k = k <= fcap - fin_scap;
  size_t cap = n / 8;
  if (cap > ((size_t)1 << 27)) cap = (size_t)1 << 27;
  if (cap < fin_scap) cap = fin_scap;

  /* one scratch block: state | histograms (one per pass) | buf0 | buf1 | sel | indices */
  const int passes = C::DIGITS + 1;
  const size_t o_hist = 256, o_buf0 = align_up(o_hist + (size_t)passes * BINS * 8, 256);
  const size_t o_buf1 = align_up(o_buf0 + cap * sizeof(CT), 256);
  const size_t o_sel = align_up(o_buf1 + cap * sizeof(CT), 256);
  const size_t o_ix = align_up(o_sel + k * sizeof(CT), 256);
  static_assert(sizeof(sel_state<CT>) <= 256, "the state lies before the histograms");
  const bool wide_sort = !small_k && sizeof(CT) > 8;
  const size_t bytes = o_ix + (wide_sort ? k * 8 : 0);
  void *mem = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &mem, bytes);
  if (s != PP_OK) return s;
  char *base = (char *)mem;
  sel_state<CT> *state = (sel_state<CT> *)base;
  unsigned long long *hist = (unsigned long long *)(base + o_hist);
  CT *buf0 = (CT *)(base + o_buf0), *buf1 = (CT *)(base + o_buf1), *sel = (CT *)(base + o_sel);
  uint64_t *ix = (uint64_t *)(base + o_ix);

  cudaError_t e = cudaMemsetAsync(base, 0, o_buf0, cs->stream);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  const size_t tiles = pp_ceil_div(n, PASS_TILE);
  size_t grid = (size_t)cs->sm_count * PP_TOPK_BLOCKS_PER_SM;
  if (grid > tiles) grid = tiles;
  const int mode = hist_mode();
  const size_t hbytes = (mode == 2 ? HIST_COPIES : 1) * BINS * sizeof(unsigned);
  /* S = FIN_THREADS g samples, g <= SAMPLE_GMAX (16384): k <= n / 256 keeps r <= 98 and
   * r n / S far under n / 8, the buffer's capacity */
  sample_plan sp = {0, 0, 0.0};
  const bool sampled = sampled_on() && n >= SAMPLED_MIN_N && k <= n / SAMPLED_K_RATIO &&
                       (uintptr_t)in % sizeof(T) == 0 &&
                       plan_sample(n, k, FIN_THREADS, sample_gmax(), &sp);
  if (e == cudaSuccess && sampled) {
    topk_sample_kernel<T, IB><<<1, FIN_THREADS, 0, cs->stream>>>(in, n, sp.g, sp.r, sample_runs(),
                                                                  flip, state);
    e = cudaGetLastError();
    /* the elements before the first 16-byte boundary and after the last full vector are
     * done one by one */
    constexpr size_t V = 16 / sizeof(T);
    const size_t head = ((16 - (uintptr_t)in % 16) % 16) / sizeof(T);
    const size_t nvec = (n - head) / V;
    /* as many blocks as are resident at once: each then loops over an equal share of
     * tiles, with no second wave of stragglers */
    static pp_fit_cache filter_fit;
    const int filter_bps = pp_fit_blocks(cs, &filter_fit, topk_filter_kernel<T, IB>, FILTER_THREADS, 0, 4);
    size_t fgrid = (size_t)cs->sm_count * (size_t)filter_bps;
    const size_t ftiles = pp_ceil_div(nvec, (size_t)FILTER_THREADS * FILTER_UNROLL);
    if (fgrid > ftiles) fgrid = ftiles;
    if (e == cudaSuccess) {
      topk_filter_kernel<T, IB><<<(unsigned)fgrid, FILTER_THREADS, 0, cs->stream>>>(
          in, n, head, nvec, flip, state, buf0, cap);
      e = cudaGetLastError();
    }
    void (*dec)(const T *, size_t, sel_state<CT> *, const CT *, size_t, unsigned, bool, T *,
                uint64_t *) = topk_decide_kernel<T, IB>;
    static pp_fit_cache dec_fit;
    if (e == cudaSuccess) e = pp_fit_smem(cs, &dec_fit, dec, FIN_BYTES);
    if (e == cudaSuccess) {
      dec<<<1, FIN_THREADS, FIN_BYTES, cs->stream>>>(in, k, state, buf0, cap, (unsigned)fcap,
                                                     small_k, vals, idxs);
      e = cudaGetLastError();
    }
    /* the passes most likely read about r n / S candidates: fewer blocks clear and merge
     * histograms for nothing (a fallback to the input is still right, only slower) */
    size_t pgrid = pp_ceil_div(4 * (size_t)sp.m, PASS_TILE);
    if (pgrid < (size_t)cs->sm_count * 2) pgrid = (size_t)cs->sm_count * 2;
    if (grid > pgrid) grid = pgrid;
  }
  static pp_fit_cache pass_fit;
  if (e == cudaSuccess && hbytes > 48 * 1024) e = pp_fit_smem(cs, &pass_fit, topk_pass_kernel<T, IB>, hbytes);
  for (int p = 0; e == cudaSuccess && p < passes; p++) {
    topk_pass_kernel<T, IB><<<(unsigned)grid, PASS_THREADS, hbytes, cs->stream>>>(
        in, n, k, flip, state, hist + (size_t)p * BINS, buf0, buf1, cap, fin_scap, sel, mode);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    void (*fin)(const T *, size_t, sel_state<CT> *, const CT *, const CT *, CT *, bool, T *,
                uint64_t *) = topk_finish_kernel<T, IB>;
    static pp_fit_cache fin_fit;
    e = pp_fit_smem(cs, &fin_fit, fin, FIN_BYTES);
    if (e == cudaSuccess) {
      fin<<<1, FIN_THREADS, FIN_BYTES, cs->stream>>>(in, k, state, buf0, buf1, sel, small_k, vals,
                                                     idxs);
      e = cudaGetLastError();
    }
  }
  if (e != cudaSuccess) {
    ctx->ops->temp_free(ctx, mem);
    return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  }
  if (!small_k) {
    /* sel holds the k results in no order: sort them by composite */
    const unsigned g = (unsigned)(pp_ceil_div(k, 256) < 4096 ? pp_ceil_div(k, 256) : 4096);
    if (sizeof(CT) == 8) {
      s = pp_cuda_sort(ctx, PP_U64, sel, NULL, 0, k, PP_DESCENDING, PP_SORT_AUTO);
      if (s == PP_OK) {
        topk_decode_kernel<T, IB><<<g, 256, 0, cs->stream>>>(in, sel, k, vals, idxs);
        e = cudaGetLastError();
      }
    } else {
      /* index order first, so that the stable sort of the values keeps ties in it */
      topk_extract_kernel<T, IB><<<g, 256, 0, cs->stream>>>(sel, k, ix);
      e = cudaGetLastError();
      if (e == cudaSuccess) s = pp_cuda_sort(ctx, PP_U64, ix, NULL, 0, k, PP_ASCENDING, PP_SORT_AUTO);
      if (e == cudaSuccess && s == PP_OK) {
        topk_gather_kernel<T><<<g, 256, 0, cs->stream>>>(in, ix, k, vals, idxs);
        e = cudaGetLastError();
      }
      if (e == cudaSuccess && s == PP_OK)
        s = pp_cuda_sort(ctx, t, vals, idxs, idxs ? 8 : 0, k,
                         largest ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO);
    }
  }
  ctx->ops->temp_free(ctx, mem);
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return s;
}

/* One array (rowwise false: rows == 1) or rows of one type. */
template <typename T, int IB>
static pp_status topk_ib(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t, const T *in,
                         size_t rows, size_t cols, size_t k, bool largest, T *vals,
                         uint64_t *idxs) {
  typedef typename comp<T, IB>::CT CT;
  const size_t seg_blocks = (size_t)pp_cuda(ctx)->sm_count * seg_blocks_per_sm<T, IB>(pp_cuda(ctx));
  seg_plan sp;
  if (!rowwise && cols > SMALL_N) {
    if (cols < SAMPLED_MIN_N &&
        plan_seg(1, cols, k, sizeof(CT), sizeof(T), true, seg_blocks, in, &sp))
      return topk_segmented<T, IB>(ctx, fn, in, 1, cols, k, largest, vals, idxs, sp);
    return topk_array<T, IB>(ctx, fn, t, in, cols, k, largest, vals, idxs);
  }
  if (rowwise && plan_seg(rows, cols, k, sizeof(CT), sizeof(T), false, seg_blocks, in, &sp))
    return topk_segmented<T, IB>(ctx, fn, in, rows, cols, k, largest, vals, idxs, sp);
  rows_plan p;
  const row_gather<CT> none = {NULL, NULL, 0, 0};
  if (plan_rows(cols, k, sizeof(CT), 0, &p))
    return launch_rows<T, IB>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, none);
  /* k too large for one block's shared memory: the one-array path, row by row */
  for (size_t r = 0; r < rows; r++) {
    pp_status s = topk_array<T, IB>(ctx, fn, t, in + r * cols, cols, k, largest, vals + r * k,
                                    idxs ? idxs + r * k : NULL);
    if (s != PP_OK) return s;
  }
  return PP_OK;
}

template <typename T>
static pp_status topk_typed(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                            const void *in, size_t rows, size_t cols, size_t k, bool largest,
                            void *vals, uint64_t *idxs) {
  /* 32-bit inverted indices need every index below 2^32 - 1 (0 stays below them all) */
  if (cols < 0xFFFFFFFFull)
    return topk_ib<T, 32>(ctx, fn, rowwise, t, (const T *)in, rows, cols, k, largest, (T *)vals, idxs);
  return topk_ib<T, 64>(ctx, fn, rowwise, t, (const T *)in, rows, cols, k, largest, (T *)vals, idxs);
}

static pp_status topk_dispatch(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                               const void *in, size_t rows, size_t cols, size_t k, bool largest,
                               void *vals, uint64_t *idxs) {
  if (k == 0 || rows == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  return pp_by_dtype(ctx, fn, t, [&](auto x) {
    return topk_typed<decltype(x)>(ctx, fn, rowwise, t, in, rows, cols, k, largest, vals, idxs);
  });
}

pp_status pp_cuda_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                       bool largest, void *values_out, uint64_t *indices_out) {
  return topk_dispatch(ctx, "pp_topk", false, t, in, 1, n, k, largest, values_out, indices_out);
}

pp_status pp_cuda_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                            size_t cols, size_t k, bool largest, void *values_out,
                            uint64_t *indices_out) {
  return topk_dispatch(ctx, "pp_topk_rows", true, t, in, rows, cols, k, largest, values_out,
                       indices_out);
}
