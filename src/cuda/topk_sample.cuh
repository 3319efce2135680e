/* topk_sample.cuh — the sampled threshold: a strided sample picks a composite that a few
 * times k elements reach, and one read of the input keeps those (one array: sample,
 * filter and decide kernels; rows: one block per (row, segment)).
 */
#ifndef PP_CUDA_TOPK_SAMPLE_CUH
#define PP_CUDA_TOPK_SAMPLE_CUH

#include "topk.cuh"

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
    const unsigned base = warp_append_base(counter, ballot);
    const int lane = threadIdx.x % PP_WARP;
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
  typedef pp_vec16<T> vec;
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
      v[u].raw = q < nvec ? __ldcs(vin + q) : make_uint4(0u, 0u, 0u, 0u);
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
      uint4 w = v[0].raw; /* v[u] without indexing v at run time (it stays in registers) */
#pragma unroll
      for (int a = 1; a < UNROLL; a++)
        if (a == u) w = v[a].raw;
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
  const size_t head = pp_split16(xs, n).head;
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

#endif /* PP_CUDA_TOPK_SAMPLE_CUH */
