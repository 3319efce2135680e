/* topk_rows.cuh — one block per row: the selection passes in shared memory, the final
 * candidates sorted there (bitonic), from the row itself or from the candidates the
 * segment kernels gathered.
 */
#ifndef PP_CUDA_TOPK_ROWS_CUH
#define PP_CUDA_TOPK_ROWS_CUH

#include "topk.cuh"

/* ==================================================================================== */
/* Rows: one block per row                                                               */
/* ==================================================================================== */

/* Appends e to list at a warp-aggregated position for each lane where pred holds. All
 * lanes of the warp call. */
template <typename CT>
__device__ __forceinline__ void warp_append(CT *list, unsigned *counter, bool pred, CT e) {
  const unsigned ballot = __ballot_sync(0xffffffffu, pred);
  if (!ballot) return;
  const unsigned base = warp_append_base(counter, ballot);
  const int lane = threadIdx.x % PP_WARP;
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

#endif /* PP_CUDA_TOPK_ROWS_CUH */
