/* topk_pass.cuh — the one-array radix selection: the multi-block pass kernel (histogram,
 * sure elements, the next candidate set, the digit resolved by the last block), the
 * finishing block, and the kernels that turn the sorted selection into the outputs.
 */
#ifndef PP_CUDA_TOPK_PASS_CUH
#define PP_CUDA_TOPK_PASS_CUH

#include "topk.cuh"

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

#endif /* PP_CUDA_TOPK_PASS_CUH */
