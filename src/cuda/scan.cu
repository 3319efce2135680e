/* scan.cu — pp_scan, pp_select, pp_select_flagged and pp_partition on the GPU.
 *
 * Every call is one pass over the data with decoupled look-back (Merrill & Garland,
 * "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016): each block scans one
 * tile in registers and shared memory, publishes the tile's aggregate, and its first warp
 * then reads the descriptors of the preceding tiles 32 at a time, adding aggregates until
 * it meets a tile that has published its inclusive prefix. Tile = blockIdx.x: blocks are
 * dispatched in index order (CUB's single-pass kernels rely on the same), so a tile's
 * predecessors are running or done. Compaction and partition are the same pass: the flags
 * are counted instead of values summed.
 *
 * Scan tiles ("striped vectors"): a tile is VECS segments of THREADS 16-byte vectors;
 * thread t holds vector t of each segment in registers, so every load and store is one
 * fully coalesced 16-byte access per thread and no shared-memory transpose is needed. The
 * order of the tile's elements is segment, warp, lane, element of the vector; the block
 * scan therefore scans each thread's vector serially, each segment's thread totals with
 * warp shuffles, and the VECS x WARPS warp totals (32 or 64 values) in one more warp scan.
 *
 * Select and partition tiles have the same layout but are copied into shared memory by
 * cp.async: after the look-back the block packs the kept elements (and, for partition,
 * the rejected ones) back into that buffer, shifted so that they sit on the output's
 * 16-byte grid, and writes them out as whole 16-byte vectors. The comparison is chosen
 * once per vector (a uniform switch), not evaluated as a set of outcomes per element.
 *
 * What was tried on the H100 and lost (docs/benchmarks/h100-scan.md): a resident grid
 * walking the tiles with 1-3 tiles in flight per block through cp.async (0.60-0.69x CUB
 * for the scan at 2^28: every round of the wave waits on its slowest block), and staging
 * the scan's tile through shared memory (0.945x against 0.994x from registers).
 *
 * Descriptors carry the call's epoch in their status word, so stale ones from earlier
 * calls read as "not yet published" and nothing has to be cleared between launches.
 *
 * Arithmetic (API.md): integer sums wrap in the type (accumulated in the unsigned type of
 * the same width); float MIN/MAX follow pp_reduce (NaN only when the whole prefix is NaN,
 * -0.0 below +0.0), so the exclusive scan's first element is the n == 0 identity; f32 SUM
 * is accumulated in double throughout (tile and carry) and rounded once per output, so
 * element i is the correctly rounded double prefix sum: partial sums past 2^24 and
 * intermediate overflow behave as in the CPU backend (tests/test_scan.c states and checks
 * the bound).
 */
#include "arith.cuh"
#include "common.cuh"
#include "cuda_backend.h"

#include <string.h>
#include <type_traits>

/* ---- tile shapes (one table) -------------------------------------------------------------
 * Threads per block, 16-byte vectors per thread per tile, and the blocks per SM each kernel
 * is compiled for (caps its registers). */
#define SCAN_THREADS 256 /* scan: 32 KB tiles, 4 blocks per SM (64 registers) */
#define SCAN_VECS 8
#define SCAN_MIN_BLOCKS 4
#define SELECT_THREADS 256 /* select, partition: 16 KB tiles in shared memory, 5 per SM */
#define SELECT_VECS 4
#define SELECT_MIN_BLOCKS 5
#define FLAG_THREADS 256 /* select_flagged: 64 KB of flags per tile */
#define FLAG_VECS 4
#define FLAG_MIN_BLOCKS 5
#define COUNT_THREADS 256 /* partition's counting pass: 8 vectors in flight per thread */
#define COUNT_UNROLL 8

#define SCAN_WARPS (SCAN_THREADS / PP_WARP)
#define SELECT_WARPS (SELECT_THREADS / PP_WARP)
#define SELECT_TILE_VECS (SELECT_THREADS * SELECT_VECS)
/* select packs its output into the tile's buffer shifted to the output's 16-byte grid:
 * up to 3 vectors more than the tile */
#define SELECT_STAGE_VECS (SELECT_TILE_VECS + 4)
#define FLAG_TILE (FLAG_THREADS * FLAG_VECS * 16)

/* Narrow status words hold the epoch in 30 bits; after that many calls they are cleared. */
#define EPOCH_LIMIT (1u << 30)
/* scratch offset of the partition count accumulator (reduce.cu uses [0, 8) and [256, ..)) */
#define COUNT_ACC_OFFSET 64

enum { ST_INVALID = 0, ST_AGGREGATE = 1, ST_PREFIX = 2 };

/* ---- descriptors ------------------------------------------------------------------------
 * One status word and one value, published together by a single store so that a reader
 * never sees a status with another tile's value. 4-byte values share an 8-byte word with
 * (epoch << 2 | status); 8-byte values use a 16-byte pair {status word, value}. */
template <typename C, bool WIDE = (sizeof(C) == 8)>
struct desc;

template <typename C>
struct desc<C, false> {
  static_assert(sizeof(C) == 4, "narrow descriptors hold 4-byte values");
  static __device__ __forceinline__ void publish(void *base, size_t tile, uint32_t epoch,
                                                 int status, C v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    unsigned long long w = ((unsigned long long)((epoch << 2) | (uint32_t)status) << 32) | bits;
    unsigned long long *p = (unsigned long long *)base + tile;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
  }
  /* true when tile's descriptor belongs to this call; then *status and *v are set */
  static __device__ __forceinline__ bool poll(const void *base, size_t tile, uint32_t epoch,
                                              int *status, C *v) {
    const unsigned long long *p = (const unsigned long long *)base + tile;
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    uint32_t tag = (uint32_t)(w >> 32), bits = (uint32_t)w;
    memcpy(v, &bits, 4);
    *status = (int)(tag & 3u);
    return (tag >> 2) == epoch && (tag & 3u) != ST_INVALID;
  }
};

template <typename C>
struct desc<C, true> {
  static __device__ __forceinline__ void publish(void *base, size_t tile, uint32_t epoch,
                                                 int status, C v) {
    unsigned long long tag = ((unsigned long long)epoch << 2) | (unsigned)status, bits;
    memcpy(&bits, &v, 8);
    unsigned long long *p = (unsigned long long *)base + 2 * tile;
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(tag), "l"(bits)
                 : "memory");
  }
  static __device__ __forceinline__ bool poll(const void *base, size_t tile, uint32_t epoch,
                                              int *status, C *v) {
    const unsigned long long *p = (const unsigned long long *)base + 2 * tile;
    unsigned long long tag, bits;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(tag), "=l"(bits)
                 : "l"(p)
                 : "memory");
    memcpy(v, &bits, 8);
    *status = (int)(tag & 3u);
    return (tag >> 2) == epoch && (tag & 3u) != ST_INVALID;
  }
};

/* Called by all lanes of one warp: publish this tile's aggregate, wait for and combine
 * the preceding tiles' values, publish the inclusive prefix. Returns the exclusive prefix
 * (the identity for tile 0) in every lane. CombC: identity() and combine() of the carry.
 * Lane l reads tiles newest - l*K - k, k < K, each round trip, nearest first; K = 1: wider
 * rounds (2 or 4 tiles a lane) cost every thread registers and measured slower on the
 * H200. */
template <typename CombC>
__device__ __forceinline__ typename CombC::Acc
look_back(void *descs, size_t tile, uint32_t epoch, typename CombC::Acc aggregate) {
  typedef typename CombC::Acc C;
  typedef desc<C> D;
  constexpr int K = 1;
  const int lane = threadIdx.x % PP_WARP;
  if (tile == 0) {
    if (lane == 0) D::publish(descs, 0, epoch, ST_PREFIX, aggregate);
    return CombC::identity();
  }
  if (lane == 0) D::publish(descs, tile, epoch, ST_AGGREGATE, aggregate);
  C acc = CombC::identity();
  long long newest = (long long)tile - 1;
  for (;;) {
    int status[K];
    C v[K];
    bool ok[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
      const long long t = newest - lane * K - k;
      status[k] = ST_PREFIX; /* before tile 0: nothing to add */
      v[k] = CombC::identity();
      ok[k] = t < 0 || D::poll(descs, (size_t)t, epoch, &status[k], &v[k]);
    }
    for (;;) {
      bool all = true;
#pragma unroll
      for (int k = 0; k < K; k++) all = all && ok[k];
      if (__all_sync(0xffffffffu, all)) break;
      __nanosleep(16);
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
      if (status[k] == ST_PREFIX) first = k;
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
  if (lane == 0) D::publish(descs, tile, epoch, ST_PREFIX, CombC::combine(acc, aggregate));
  return acc;
}

/* ---- copies into shared memory --------------------------------------------------------- */

extern __shared__ uint4 pp_stage[]; /* select: SELECT_STAGE_VECS vectors */

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, uint64_t policy) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(s),
               "l"(gmem), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}
/* inputs are read once: first out of L2 */
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

/* ---- scan operators ----------------------------------------------------------------------
 * T the element, L what a tile computes in, C what is carried between tiles. */
template <typename T, typename L, typename C>
struct scan_sum {
  typedef T Elem;
  typedef L Local;
  typedef C Carry;
  static __device__ L id_local() { return L(0); }
  static __device__ C id_carry() { return C(0); }
  static __device__ L add_local(L a, L b) { return a + b; }
  static __device__ C add_carry(C a, C b) { return a + b; }
  static __device__ T first() { return T(0); } /* exclusive scan's element 0 */
};

/* Float identity is NaN ("nothing yet"); the exclusive scan's first element is the n == 0
 * result of pp_reduce (+inf for MIN, -inf for MAX). u8 works in 32 bits for shuffles. */
template <typename T, bool IS_MIN>
struct scan_minmax {
  typedef T Elem;
  typedef typename std::conditional<sizeof(T) < 4, uint32_t, T>::type Local;
  typedef Local Carry;
  static __device__ Local id_local() {
    if constexpr (is_float<T>()) return Local(NAN);
    return IS_MIN ? Local(limits<T>::highest()) : Local(limits<T>::lowest());
  }
  static __device__ Carry id_carry() { return id_local(); }
  static __device__ Local add_local(Local a, Local b) {
    return IS_MIN ? min_rule(a, b) : max_rule(a, b);
  }
  static __device__ Carry add_carry(Carry a, Carry b) { return add_local(a, b); }
  static __device__ T first() { return IS_MIN ? limits<T>::highest() : limits<T>::lowest(); }
};

/* Adapters to the Op::identity/combine shape of common.cuh. */
template <typename Op>
struct local_of {
  typedef typename Op::Local Acc;
  static __device__ Acc identity() { return Op::id_local(); }
  static __device__ Acc combine(Acc a, Acc b) { return Op::add_local(a, b); }
};
template <typename Op>
struct carry_of {
  typedef typename Op::Carry Acc;
  static __device__ Acc identity() { return Op::id_carry(); }
  static __device__ Acc combine(Acc a, Acc b) { return Op::add_carry(a, b); }
};
struct count_sum {
  typedef unsigned long long Acc;
  static __device__ Acc identity() { return 0; }
  static __device__ Acc combine(Acc a, Acc b) { return a + b; }
};
struct u32_sum {
  typedef uint32_t Acc;
  static __device__ Acc identity() { return 0; }
  static __device__ Acc combine(Acc a, Acc b) { return a + b; }
};

/* ---- tile loads and stores ------------------------------------------------------------- */

template <typename T>
union vec16 {
  uint4 raw;
  T e[16 / sizeof(T)];
};

/* Vector v of this thread: its first element's index, and how many of its elements are
 * inside [0, n). */
template <typename T>
__device__ __forceinline__ size_t vec_first(size_t tile_base, int v) {
  return tile_base + ((size_t)v * SCAN_THREADS + threadIdx.x) * (16 / sizeof(T));
}
__device__ __forceinline__ int vec_count(size_t first, size_t n, int per_vec) {
  return first >= n ? 0 : (n - first >= (size_t)per_vec ? per_vec : (int)(n - first));
}

/* Whole-tile loads go through 16-byte streaming loads when the data is 16-byte aligned;
 * the last tile and unaligned data go element by element (missing elements are left
 * unset: callers mask them with the counts). */
template <typename T, int V>
__device__ __forceinline__ void load_tile(const T *in, size_t n, size_t base, bool vector_ok,
                                          vec16<T> (&x)[V], int (&cnt)[V]) {
  constexpr int VW = 16 / sizeof(T);
#pragma unroll
  for (int v = 0; v < V; v++) {
    size_t first = vec_first<T>(base, v);
    cnt[v] = vec_count(first, n, VW);
    x[v].raw = make_uint4(0, 0, 0, 0);
    if (vector_ok) {
      x[v].raw = __ldcs(reinterpret_cast<const uint4 *>(in + first)); /* read once */
    } else {
#pragma unroll
      for (int c = 0; c < VW; c++)
        if (c < cnt[v]) x[v].e[c] = in[first + c];
    }
  }
}

/* The scan of a tile's N warp totals (segment-major), by one whole warp: lane l takes
 * entries [l*K, l*K+K). Every lane gets the tile total; prefix_of(e) gives entry e's
 * exclusive prefix (e the same in all lanes). */
template <typename Comb, int N_TOTALS>
struct totals_scan {
  static constexpr int TOTALS_PER_LANE = (N_TOTALS + PP_WARP - 1) / PP_WARP;
  typedef typename Comb::Acc A;
  A pre[TOTALS_PER_LANE];
  A total;
  __device__ __forceinline__ void run(const A *totals) {
    const int lane = threadIdx.x % PP_WARP;
    A loc[TOTALS_PER_LANE];
    A s = Comb::identity();
#pragma unroll
    for (int k = 0; k < TOTALS_PER_LANE; k++) {
      int e = lane * TOTALS_PER_LANE + k;
      loc[k] = e < N_TOTALS ? totals[e] : Comb::identity();
      s = Comb::combine(s, loc[k]);
    }
    A inc = pp_warp_scan_inclusive<Comb>(s);
    A exc = pp_shfl<PP_SHFL_UP>(inc, 1);
    if (lane == 0) exc = Comb::identity();
#pragma unroll
    for (int k = 0; k < TOTALS_PER_LANE; k++) {
      pre[k] = exc;
      exc = Comb::combine(exc, loc[k]);
    }
    total = pp_shfl<PP_SHFL_IDX>(inc, PP_WARP - 1);
  }
  __device__ __forceinline__ A prefix_of(int e) const {
    A mine = pre[0];
#pragma unroll
    for (int k = 1; k < TOTALS_PER_LANE; k++)
      if (k == e % TOTALS_PER_LANE) mine = pre[k];
    return pp_shfl<PP_SHFL_IDX>(mine, e / TOTALS_PER_LANE);
  }
  /* store every entry's prefix (lanes write their own entries) */
  __device__ __forceinline__ void store(A *prefix) const {
    const int lane = threadIdx.x % PP_WARP;
#pragma unroll
    for (int k = 0; k < TOTALS_PER_LANE; k++) {
      int e = lane * TOTALS_PER_LANE + k;
      if (e < N_TOTALS) prefix[e] = pre[k];
    }
  }
};

/* ---- scan kernel ----------------------------------------------------------------------- */

/* Shared memory of one tile's block scan. */
template <typename C>
struct scan_smem {
  C warp_total[SCAN_VECS * SCAN_WARPS];
  C warp_prefix[SCAN_VECS * SCAN_WARPS];
  C tile_prefix;
};

/* Scan one tile whose data this thread already holds in x (see load_tile) and store it.
 * Starts and ends with every thread of the block in step (two barriers inside). */
template <typename Op>
__device__ __forceinline__ void scan_tile(typename Op::Elem *out, size_t n, size_t tile,
                                          bool aligned, bool inclusive, void *descs,
                                          uint32_t epoch,
                                          const vec16<typename Op::Elem> (&x)[SCAN_VECS],
                                          const int (&cnt)[SCAN_VECS],
                                          scan_smem<typename Op::Carry> &sm) {
  typedef typename Op::Elem T;
  typedef typename Op::Local L;
  typedef typename Op::Carry C;
  constexpr int VW = 16 / sizeof(T);
  constexpr int TILE = SCAN_THREADS * SCAN_VECS * VW;
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  const size_t base = tile * TILE;
  const bool full = n - base >= (size_t)TILE;

  /* each vector's total, then each segment's exclusive prefix within the warp */
  L lane_prefix[SCAN_VECS];
#pragma unroll
  for (int v = 0; v < SCAN_VECS; v++) {
    L s = Op::id_local();
#pragma unroll
    for (int c = 0; c < VW; c++)
      if (c < cnt[v]) s = Op::add_local(s, L(x[v].e[c]));
    L inc = pp_warp_scan_inclusive<local_of<Op>>(s);
    L exc = pp_shfl<PP_SHFL_UP>(inc, 1);
    lane_prefix[v] = lane == 0 ? Op::id_local() : exc;
    if (lane == PP_WARP - 1) sm.warp_total[v * SCAN_WARPS + warp] = C(inc);
  }
  __syncthreads();

  if (warp == 0) {
    totals_scan<carry_of<Op>, SCAN_VECS * SCAN_WARPS> ts;
    ts.run(sm.warp_total);
    ts.store(sm.warp_prefix);
    C p = look_back<carry_of<Op>>(descs, tile, epoch, ts.total);
    if (lane == 0) sm.tile_prefix = p;
  }
  __syncthreads();

#pragma unroll
  for (int v = 0; v < SCAN_VECS; v++) {
    /* one rounding of the carried prefix into the tile's type, then local additions */
    L b = Op::add_local(L(Op::add_carry(sm.tile_prefix, sm.warp_prefix[v * SCAN_WARPS + warp])),
                        lane_prefix[v]);
    L run = Op::id_local();
    vec16<T> y;
#pragma unroll
    for (int c = 0; c < VW; c++) {
      L next = Op::add_local(run, L(x[v].e[c]));
      y.e[c] = T(Op::add_local(b, inclusive ? next : run));
      run = next;
    }
    size_t first = vec_first<T>(base, v);
    if (!inclusive && first == 0) y.e[0] = Op::first();
    if (aligned && full) {
      __stcs(reinterpret_cast<uint4 *>(out + first), y.raw); /* written once: evict first */
    } else {
#pragma unroll
      for (int c = 0; c < VW; c++)
        if (c < cnt[v]) out[first + c] = y.e[c];
    }
  }
}

/* One tile per block. */
template <typename Op>
__global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
scan_kernel(const typename Op::Elem *in, typename Op::Elem *out, size_t n, bool aligned,
            bool inclusive, void *descs, uint32_t epoch) {
  typedef typename Op::Elem T;
  constexpr int TILE = SCAN_THREADS * SCAN_VECS * (16 / sizeof(T));
  __shared__ scan_smem<typename Op::Carry> sm;
  const size_t tile = blockIdx.x;
  vec16<T> x[SCAN_VECS];
  int cnt[SCAN_VECS];
  load_tile<T, SCAN_VECS>(in, n, tile * TILE, aligned && n - tile * TILE >= (size_t)TILE, x, cnt);
  scan_tile<Op>(out, n, tile, aligned, inclusive, descs, epoch, x, cnt, sm);
}

/* ---- select / partition ------------------------------------------------------------------ */

/* The comparisons of API.md, one functor each; NaN makes every one false but !=. The kernels
 * switch on the comparison once per vector (a uniform branch), not per element. */
struct cmp_gt { template <typename T> static __device__ bool test(T x, T v) { return x > v; } };
struct cmp_ge { template <typename T> static __device__ bool test(T x, T v) { return x >= v; } };
struct cmp_lt { template <typename T> static __device__ bool test(T x, T v) { return x < v; } };
struct cmp_le { template <typename T> static __device__ bool test(T x, T v) { return x <= v; } };
struct cmp_eq { template <typename T> static __device__ bool test(T x, T v) { return x == v; } };
struct cmp_ne { template <typename T> static __device__ bool test(T x, T v) { return !(x == v); } };

template <typename T>
struct cmp_pred {
  T value;
  pp_cmp cmp;
};

template <typename Cmp, typename T>
__device__ __forceinline__ uint32_t keep_bits_with(const vec16<T> &x, T value) {
  uint32_t bits = 0;
#pragma unroll
  for (int c = 0; c < 16 / (int)sizeof(T); c++) bits |= Cmp::test(x.e[c], value) ? 1u << c : 0u;
  return bits;
}

/* Bit c set when element c of the vector is kept (elements past the valid ones too:
 * callers mask them). */
template <typename T>
__device__ __forceinline__ uint32_t keep_bits(const vec16<T> &x, cmp_pred<T> p) {
  switch (p.cmp) {
  case PP_GT: return keep_bits_with<cmp_gt>(x, p.value);
  case PP_GE: return keep_bits_with<cmp_ge>(x, p.value);
  case PP_LT: return keep_bits_with<cmp_lt>(x, p.value);
  case PP_LE: return keep_bits_with<cmp_le>(x, p.value);
  case PP_EQ: return keep_bits_with<cmp_eq>(x, p.value);
  default: return keep_bits_with<cmp_ne>(x, p.value);
  }
}

__device__ __forceinline__ uint32_t low_bits(int count) {
  return count >= 32 ? 0xffffffffu : (1u << count) - 1u;
}

/* Block-wide ranks of the kept elements: kept[v] has bit c set when element c of vector v
 * is kept. Fills rank_base[v] (the block-local rank of the vector's first kept element)
 * and returns the tile's kept count. Each warp scans the warp totals itself, so one
 * barrier suffices. */
template <int THREADS, int V>
__device__ __forceinline__ uint32_t rank_kept(const uint32_t (&kept)[V], uint32_t (&rank_base)[V],
                                              uint32_t *warp_total) {
  constexpr int WARPS = THREADS / PP_WARP;
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
#pragma unroll
  for (int v = 0; v < V; v++) {
    uint32_t c = __popc(kept[v]);
    uint32_t inc = pp_warp_scan_inclusive<u32_sum>(c);
    rank_base[v] = inc - c;
    if (lane == PP_WARP - 1) warp_total[v * WARPS + warp] = inc;
  }
  __syncthreads();
  totals_scan<u32_sum, V * WARPS> ts;
  ts.run(warp_total);
#pragma unroll
  for (int v = 0; v < V; v++) rank_base[v] += ts.prefix_of(v * WARPS + warp);
  return ts.total;
}

/* One run of consecutive output elements out[g0, g0 + count), held in shared memory from
 * element smem0*VW + (g0 + phase) % VW on, where phase places out's elements on the
 * 16-byte grid: element g sits in vector (g + phase) / VW. */
struct out_run {
  size_t g0;
  uint32_t count;
  uint32_t smem0; /* the first vector in shared memory */
  size_t q0;      /* the first vector of out */
  uint32_t vectors;
};

__device__ __forceinline__ out_run make_run(size_t g0, uint32_t count, uint32_t smem0, int phase,
                                            int VW) {
  out_run r;
  r.g0 = g0;
  r.count = count;
  r.smem0 = smem0;
  r.q0 = (g0 + (size_t)phase) / (size_t)VW;
  r.vectors = count ? (uint32_t)((g0 + count - 1 + (size_t)phase) / (size_t)VW - r.q0 + 1) : 0u;
  return r;
}

/* Vector j of a run: a 16-byte streaming store when it is whole and out is aligned to its
 * elements, else element by element. */
template <typename T>
__device__ __forceinline__ void write_run_vector(T *out, int phase, bool out_vec, const out_run &r,
                                                 uint32_t j, const uint4 *stage) {
  constexpr int VW = 16 / sizeof(T);
  const long long gq = (long long)((r.q0 + j) * VW) - phase; /* out element of lane 0 */
  const long long lo = (long long)r.g0, hi = lo + r.count;
  vec16<T> y;
  y.raw = stage[r.smem0 + j];
  if (out_vec && gq >= lo && gq + VW <= hi) {
    __stcs(reinterpret_cast<uint4 *>(out + gq), y.raw);
  } else {
#pragma unroll
    for (int c = 0; c < VW; c++)
      if (gq + c >= lo && gq + c < hi) out[gq + c] = y.e[c];
  }
}

/* Copy the select tile at in[base ...] (of in[0, n)) into shared memory: vector v of
 * thread t to stage[v*THREADS + t], by 16-byte cp.async when the tile is whole and in is
 * 16-byte aligned, else element by element (elements past n are left unset: consumers
 * mask them). Ends with the block in step. */
template <typename T>
__device__ __forceinline__ void fetch_tile(const T *in, size_t n, size_t base, bool in_vec,
                                           uint4 *stage) {
  constexpr int VW = 16 / sizeof(T);
  if (in_vec && n - base >= (size_t)SELECT_TILE_VECS * VW) {
    const uint64_t policy = evict_first_policy();
#pragma unroll
    for (int v = 0; v < SELECT_VECS; v++) {
      const int i = v * SELECT_THREADS + threadIdx.x;
      cp_async16(stage + i, in + base + (size_t)i * VW, policy);
    }
  } else {
#pragma unroll
    for (int v = 0; v < SELECT_VECS; v++) {
      const int i = v * SELECT_THREADS + threadIdx.x;
      const size_t first = base + (size_t)i * VW;
      T *dst = reinterpret_cast<T *>(stage + i);
#pragma unroll
      for (int c = 0; c < VW; c++)
        if (first + c < n) dst[c] = in[first + c];
    }
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
}

/* PARTITION: the kept elements go to out[prefix ...], the others to
 * out[*true_total + (elements before them that were not kept) ...]. Otherwise only the
 * kept ones are written and the last tile writes *count. out_phase: see out_run. */
template <typename T, bool PARTITION>
__global__ void __launch_bounds__(SELECT_THREADS, SELECT_MIN_BLOCKS)
select_kernel(const T *in, size_t n, cmp_pred<T> pred, T *out, int out_phase, bool out_vec,
              uint64_t *count, const uint64_t *true_total, size_t num_tiles, bool in_vec,
              void *descs, uint32_t epoch) {
  constexpr int VW = 16 / sizeof(T);
  constexpr int V = SELECT_VECS;
  constexpr uint32_t TILE = (uint32_t)SELECT_TILE_VECS * VW;
  __shared__ uint32_t warp_total[V * SELECT_WARPS];
  __shared__ unsigned long long tile_prefix;
  const int warp = threadIdx.x / PP_WARP;
  const size_t total_true = PARTITION ? *true_total : 0;
  const size_t tile = blockIdx.x;
  const size_t base = tile * TILE;
  const uint32_t valid = n - base >= TILE ? TILE : (uint32_t)(n - base);
  uint4 *stage = pp_stage;
  fetch_tile(in, n, base, in_vec, stage);

  vec16<T> x[V];
  uint32_t kept[V], rank_base[V];
#pragma unroll
  for (int v = 0; v < V; v++) {
    const uint32_t i = v * SELECT_THREADS + threadIdx.x;
    x[v].raw = stage[i];
    const int cnt = i * VW >= valid ? 0 : valid - i * VW >= (uint32_t)VW ? VW : (int)(valid - i * VW);
    kept[v] = keep_bits(x[v], pred) & low_bits(cnt);
  }
  const uint32_t tile_kept = rank_kept<SELECT_THREADS, V>(kept, rank_base, warp_total);
  if (warp == 0) {
    unsigned long long p = look_back<count_sum>(descs, tile, epoch, tile_kept);
    if (threadIdx.x == 0) tile_prefix = p;
  }
  __syncthreads(); /* the prefix is known, every thread holds its vectors */

  /* pack the tile into its own buffer, shifted to the output's 16-byte grid */
  const size_t prefix = tile_prefix;
  const int ph_t = (int)((prefix + out_phase) % VW);
  const size_t false_base = total_true + (base - prefix); /* out index of the first rejected */
  const uint32_t f_smem0 = (ph_t + tile_kept + VW - 1) / VW; /* vector where they start */
  const int ph_f = (int)((false_base + out_phase) % VW);
  T *packed = reinterpret_cast<T *>(stage);
#pragma unroll
  for (int v = 0; v < V; v++) {
    const uint32_t pos0 = (v * SELECT_THREADS + threadIdx.x) * VW;
    uint32_t r = rank_base[v];
#pragma unroll
    for (int c = 0; c < VW; c++) {
      if (kept[v] >> c & 1u) {
        packed[ph_t + r] = x[v].e[c];
        r++;
      } else if (PARTITION && pos0 + c < valid) {
        packed[f_smem0 * VW + ph_f + (pos0 + c - r)] = x[v].e[c];
      }
    }
  }
  __syncthreads();

  const out_run kr = make_run(prefix, tile_kept, 0, out_phase, VW);
  const out_run fr = PARTITION ? make_run(false_base, valid - tile_kept, f_smem0, out_phase, VW)
                               : make_run(0, 0, 0, 0, VW);
  for (uint32_t j = threadIdx.x; j < kr.vectors + fr.vectors; j += SELECT_THREADS) {
    if (j < kr.vectors)
      write_run_vector(out, out_phase, out_vec, kr, j, stage);
    else
      write_run_vector(out, out_phase, out_vec, fr, j - kr.vectors, stage);
  }
  if (!PARTITION && tile == num_tiles - 1 && threadIdx.x == 0) *count = prefix + tile_kept;
}

/* Partition needs the number of kept elements before it can place the first rejected
 * one: a counting pass (a read of the input, shaped like pp_reduce's: one wave of blocks,
 * each over one contiguous range, COUNT_UNROLL loads in flight per thread) writes it to
 * *count_true. */
template <typename T>
__device__ __forceinline__ uint32_t count_share(const T *__restrict__ in, size_t n,
                                                cmp_pred<T> pred) {
  constexpr int VW = 16 / sizeof(T);
  uint32_t mine = 0;
  size_t head = ((16 - (reinterpret_cast<uintptr_t>(in) & 15)) & 15) / sizeof(T);
  if (reinterpret_cast<uintptr_t>(in) % sizeof(T)) head = n; /* not on its own grid */
  if (head > n) head = n;
  const size_t nvec = (n - head) / VW;
  const size_t tail_begin = head + nvec * VW;
  /* head and tail elements (fewer than VW each, or all of an unaligned array) */
  for (size_t i = (size_t)blockIdx.x * COUNT_THREADS + threadIdx.x; i < head + (n - tail_begin);
       i += (size_t)gridDim.x * COUNT_THREADS) {
    vec16<T> x;
    x.raw = make_uint4(0, 0, 0, 0);
    x.e[0] = in[i < head ? i : tail_begin + (i - head)];
    mine += keep_bits(x, pred) & 1u;
  }
  const uint4 *__restrict__ body = reinterpret_cast<const uint4 *>(in + head);
  const size_t step = (size_t)COUNT_THREADS * COUNT_UNROLL;
  const size_t steps = pp_ceil_div_dev(nvec, step);
  const size_t first = steps / gridDim.x * blockIdx.x + min((size_t)blockIdx.x, steps % gridDim.x);
  const size_t last = first + steps / gridDim.x + (blockIdx.x < steps % gridDim.x ? 1 : 0);
  for (size_t s = first; s < last; s++) {
    const size_t b = s * step + threadIdx.x;
    vec16<T> x[COUNT_UNROLL];
    if (b + (COUNT_UNROLL - 1) * COUNT_THREADS < nvec) { /* every load before the first use */
#pragma unroll
      for (int u = 0; u < COUNT_UNROLL; u++) x[u].raw = __ldcs(body + b + u * COUNT_THREADS);
#pragma unroll
      for (int u = 0; u < COUNT_UNROLL; u++) mine += __popc(keep_bits(x[u], pred));
    } else {
      for (int u = 0; u < COUNT_UNROLL; u++)
        if (b + u * COUNT_THREADS < nvec) {
          x[0].raw = __ldcs(body + b + u * COUNT_THREADS);
          mine += __popc(keep_bits(x[0], pred));
        }
    }
  }
  return mine;
}

template <typename T>
__global__ void __launch_bounds__(COUNT_THREADS)
count_kernel(const T *in, size_t n, cmp_pred<T> pred, uint64_t *count_true,
             unsigned long long *acc, unsigned *done) {
  const uint32_t mine = count_share(in, n, pred);
  unsigned long long block = pp_block_reduce<count_sum, COUNT_THREADS>((unsigned long long)mine);
  if (threadIdx.x == 0) atomicAdd(acc, block);
  if (pp_last_block_done(done) && threadIdx.x == 0) *count_true = atomicExch(acc, 0ull);
}

/* ---- select_flagged: records of any size ----------------------------------------------
 * A tile covers FLAG_TILE flags (one 16-byte vector of flags per thread per segment); the
 * kept records' tile positions are packed in shared memory, then the block copies them
 * word by word (W: the widest word dividing the record), consecutive threads writing
 * consecutive words. */
template <typename W>
__global__ void __launch_bounds__(FLAG_THREADS, FLAG_MIN_BLOCKS)
flagged_kernel(const W *in, size_t words_per_record, const uint8_t *flags, size_t n, W *out,
               uint64_t *count, size_t num_tiles, bool aligned, void *descs, uint32_t epoch) {
  extern __shared__ uint16_t which[]; /* FLAG_TILE entries: dynamic, as it may pass 48 KB */
  __shared__ uint32_t warp_total[FLAG_VECS * FLAG_THREADS / PP_WARP];
  __shared__ unsigned long long tile_prefix;

  const int warp = threadIdx.x / PP_WARP;
  const size_t tile = blockIdx.x; /* blocks are dispatched in index order */
  const size_t base = tile * FLAG_TILE;
  const bool full = n - base >= (size_t)FLAG_TILE;

  uint32_t kept[FLAG_VECS], rank_base[FLAG_VECS];
#pragma unroll
  for (int v = 0; v < FLAG_VECS; v++) {
    const size_t first = base + (size_t)(v * FLAG_THREADS + threadIdx.x) * 16;
    const int cnt = vec_count(first, n, 16);
    vec16<uint8_t> f;
    f.raw = make_uint4(0, 0, 0, 0);
    if (aligned && full) {
      f.raw = __ldcs(reinterpret_cast<const uint4 *>(flags + first));
    } else {
#pragma unroll
      for (int c = 0; c < 16; c++)
        if (c < cnt) f.e[c] = flags[first + c];
    }
    kept[v] = 0;
#pragma unroll
    for (int c = 0; c < 16; c++)
      if (f.e[c] != 0) kept[v] |= 1u << c;
  }
  const uint32_t tile_kept = rank_kept<FLAG_THREADS, FLAG_VECS>(kept, rank_base, warp_total);
  if (warp == 0) {
    unsigned long long p = look_back<count_sum>(descs, tile, epoch, tile_kept);
    if (threadIdx.x == 0) tile_prefix = p;
  }
#pragma unroll
  for (int v = 0; v < FLAG_VECS; v++) {
    const uint32_t pos0 = (uint32_t)(v * FLAG_THREADS + threadIdx.x) * 16;
    uint32_t m = kept[v];
    uint32_t r = rank_base[v];
    while (m) {
      int c = __ffs(m) - 1;
      which[r++] = (uint16_t)(pos0 + c);
      m &= m - 1;
    }
  }
  __syncthreads();

  const size_t prefix = tile_prefix;
  const size_t words = (size_t)tile_kept * words_per_record;
  for (size_t k = threadIdx.x; k < words; k += FLAG_THREADS) {
    size_t rec = k / words_per_record, w = k - rec * words_per_record;
    out[(prefix + rec) * words_per_record + w] = in[(base + which[rec]) * words_per_record + w];
  }
  if (tile == num_tiles - 1 && threadIdx.x == 0) *count = prefix + tile_kept;
}

static_assert(FLAG_TILE <= 65536, "tile positions fit uint16_t");

/* ---- host side ------------------------------------------------------------------------ */

/* The look-back buffer for `tiles` tiles and this call's epoch. */
static pp_status lookback_begin(pp_context *ctx, const char *fn, size_t tiles, void **descs,
                                uint32_t *epoch) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (tiles > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n needs %zu tiles, more than a grid holds",
                   fn, tiles);
  size_t need = tiles * 16;
  if (need > st->lookback_bytes) {
    size_t bytes = need < 2 * st->lookback_bytes ? 2 * st->lookback_bytes : need;
    if (bytes < ((size_t)1 << 20)) bytes = (size_t)1 << 20;
    if (st->lookback) {
      PP_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream), fn);
      cudaFree(st->lookback);
      st->lookback = NULL;
      st->lookback_bytes = 0;
    }
    cudaError_t e = cudaMalloc(&st->lookback, bytes);
    if (e != cudaSuccess) {
      st->lookback = NULL;
      return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
    }
    st->lookback_bytes = bytes;
    st->lookback_epoch = 0;
    PP_CUDA_TRY(ctx, cudaMemsetAsync(st->lookback, 0, bytes, st->stream), fn);
  }
  if (++st->lookback_epoch >= EPOCH_LIMIT) { /* every status word could now be ambiguous */
    PP_CUDA_TRY(ctx, cudaMemsetAsync(st->lookback, 0, st->lookback_bytes, st->stream), fn);
    st->lookback_epoch = 1;
  }
  *descs = st->lookback;
  *epoch = st->lookback_epoch;
  return PP_OK;
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

template <typename Op>
static pp_status launch_scan(pp_context *ctx, const void *in, void *out, size_t n,
                             bool inclusive) {
  typedef typename Op::Elem T;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tile = (size_t)SCAN_THREADS * SCAN_VECS * (16 / sizeof(T)),
               tiles = pp_ceil_div(n, tile);
  void *descs;
  uint32_t epoch;
  pp_status s = lookback_begin(ctx, "pp_scan", tiles, &descs, &epoch);
  if (s != PP_OK) return s;
  scan_kernel<Op><<<(unsigned)tiles, SCAN_THREADS, 0, st->stream>>>(
      (const T *)in, (T *)out, n, aligned16(in) && aligned16(out), inclusive, descs, epoch);
  PP_CUDA_LAUNCHED(ctx, "pp_scan");
  return PP_OK;
}

template <typename T, typename SumL, typename SumC>
static pp_status scan_typed(pp_context *ctx, pp_op op, const void *in, void *out, size_t n,
                            bool inclusive) {
  switch (op) {
  case PP_SUM: return launch_scan<scan_sum<T, SumL, SumC>>(ctx, in, out, n, inclusive);
  case PP_MIN: return launch_scan<scan_minmax<T, true>>(ctx, in, out, n, inclusive);
  case PP_MAX: return launch_scan<scan_minmax<T, false>>(ctx, in, out, n, inclusive);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_scan: op (%d)", (int)op);
}

pp_status pp_cuda_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                       size_t n, bool inclusive) {
  if (n == 0) return PP_OK;
  PP_CUDA_TRY(ctx, cudaSetDevice(pp_cuda(ctx)->device), "pp_scan");
  switch (t) {
  case PP_U8: return scan_typed<uint8_t, uint32_t, uint32_t>(ctx, op, in, out, n, inclusive);
  case PP_I32: return scan_typed<int32_t, uint32_t, uint32_t>(ctx, op, in, out, n, inclusive);
  case PP_U32: return scan_typed<uint32_t, uint32_t, uint32_t>(ctx, op, in, out, n, inclusive);
  case PP_I64: return scan_typed<int64_t, uint64_t, uint64_t>(ctx, op, in, out, n, inclusive);
  case PP_U64: return scan_typed<uint64_t, uint64_t, uint64_t>(ctx, op, in, out, n, inclusive);
  case PP_F32: return scan_typed<float, double, double>(ctx, op, in, out, n, inclusive);
  case PP_F64: return scan_typed<double, double, double>(ctx, op, in, out, n, inclusive);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_scan: dtype (%d)", (int)t);
}

/* The counting pass of partition: one wave of blocks. */
template <typename T>
static pp_status launch_count(pp_context *ctx, const T *in, size_t n, cmp_pred<T> pred,
                              uint64_t *count, const char *fn) {
  static int per_sm = 0; /* a benign race writes the same value */
  pp_cuda_state *st = pp_cuda(ctx);
  if (per_sm == 0) {
    int b = 0;
    PP_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, count_kernel<T>,
                                                                   COUNT_THREADS, 0),
                fn);
    per_sm = b < 1 ? 1 : b;
  }
  const size_t want = pp_ceil_div(n / (16 / sizeof(T)) + 1, (size_t)COUNT_THREADS * COUNT_UNROLL);
  const size_t wave = (size_t)st->sm_count * (size_t)per_sm;
  const unsigned grid = (unsigned)(want < wave ? want : wave);
  char *scratch = (char *)st->scratch;
  count_kernel<T><<<grid, COUNT_THREADS, 0, st->stream>>>(
      in, n, pred, count, (unsigned long long *)(scratch + COUNT_ACC_OFFSET), (unsigned *)scratch);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

template <typename T, bool PARTITION>
static pp_status launch_select(pp_context *ctx, const char *fn, const T *in, size_t n,
                               cmp_pred<T> pred, T *out, uint64_t *count) {
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tile = (size_t)SELECT_TILE_VECS * (16 / sizeof(T)), tiles = pp_ceil_div(n, tile);
  void *descs;
  uint32_t epoch;
  pp_status s = lookback_begin(ctx, fn, tiles, &descs, &epoch);
  if (s != PP_OK) return s;
  if (PARTITION) {
    s = launch_count<T>(ctx, in, n, pred, count, fn);
    if (s != PP_OK) return s;
  }
  /* out's elements on the 16-byte grid: element g is in vector (g + phase) / VW */
  const bool out_vec = (uintptr_t)out % sizeof(T) == 0;
  const int phase = out_vec ? (int)((uintptr_t)out % 16 / sizeof(T)) : 0;
  select_kernel<T, PARTITION><<<(unsigned)tiles, SELECT_THREADS, SELECT_STAGE_VECS * 16,
                                st->stream>>>(in, n, pred, out, phase, out_vec, count,
                                              PARTITION ? count : NULL, tiles, aligned16(in),
                                              descs, epoch);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

template <typename T>
static pp_status select_typed(pp_context *ctx, const char *fn, bool partition, const void *in,
                              size_t n, pp_cmp cmp, const void *value, void *out,
                              uint64_t *count) {
  cmp_pred<T> pred;
  memcpy(&pred.value, value, sizeof(T)); /* value is host memory (API.md) */
  pred.cmp = cmp;
  return partition ? launch_select<T, true>(ctx, fn, (const T *)in, n, pred, (T *)out, count)
                   : launch_select<T, false>(ctx, fn, (const T *)in, n, pred, (T *)out, count);
}

static pp_status select_like(pp_context *ctx, const char *fn, bool partition, pp_dtype t,
                             const void *in, size_t n, pp_cmp cmp, const void *value, void *out,
                             uint64_t *count) {
  PP_CUDA_TRY(ctx, cudaSetDevice(pp_cuda(ctx)->device), fn);
  if (n == 0) {
    PP_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, sizeof *count, pp_cuda(ctx)->stream), fn);
    return PP_OK;
  }
  switch (t) {
  case PP_U8: return select_typed<uint8_t>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_I32: return select_typed<int32_t>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_U32: return select_typed<uint32_t>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_I64: return select_typed<int64_t>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_U64: return select_typed<uint64_t>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_F32: return select_typed<float>(ctx, fn, partition, in, n, cmp, value, out, count);
  case PP_F64: return select_typed<double>(ctx, fn, partition, in, n, cmp, value, out, count);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: dtype (%d)", fn, (int)t);
}

pp_status pp_cuda_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                         const void *value, void *out, uint64_t *count) {
  return select_like(ctx, "pp_select", false, t, in, n, cmp, value, out, count);
}

pp_status pp_cuda_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                            const void *value, void *out, uint64_t *count_true) {
  return select_like(ctx, "pp_partition", true, t, in, n, cmp, value, out, count_true);
}

template <typename W>
static pp_status launch_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tiles = pp_ceil_div(n, (size_t)FLAG_TILE);
  void *descs;
  uint32_t epoch;
  pp_status s = lookback_begin(ctx, "pp_select_flagged", tiles, &descs, &epoch);
  if (s != PP_OK) return s;
  const size_t smem = FLAG_TILE * sizeof(uint16_t);
  static bool smem_set = false; /* a benign race sets the same attribute */
  if (!smem_set) {
    PP_CUDA_TRY(ctx, cudaFuncSetAttribute(flagged_kernel<W>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                "pp_select_flagged");
    smem_set = true;
  }
  flagged_kernel<W><<<(unsigned)tiles, FLAG_THREADS, smem, st->stream>>>(
      (const W *)in, elem_size / sizeof(W), flags, n, (W *)out, count, tiles, aligned16(flags),
      descs, epoch);
  PP_CUDA_LAUNCHED(ctx, "pp_select_flagged");
  return PP_OK;
}

pp_status pp_cuda_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                 const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  static const char fn[] = "pp_select_flagged";
  PP_CUDA_TRY(ctx, cudaSetDevice(pp_cuda(ctx)->device), fn);
  if (n == 0) {
    PP_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, sizeof *count, pp_cuda(ctx)->stream), fn);
    return PP_OK;
  }
  /* the widest word that divides the record and both pointers' alignment */
  uintptr_t a = (uintptr_t)in | (uintptr_t)out | (uintptr_t)elem_size;
  if (a % 16 == 0) return launch_flagged<uint4>(ctx, elem_size, in, flags, n, out, count);
  if (a % 8 == 0) return launch_flagged<uint64_t>(ctx, elem_size, in, flags, n, out, count);
  if (a % 4 == 0) return launch_flagged<uint32_t>(ctx, elem_size, in, flags, n, out, count);
  if (a % 2 == 0) return launch_flagged<uint16_t>(ctx, elem_size, in, flags, n, out, count);
  return launch_flagged<uint8_t>(ctx, elem_size, in, flags, n, out, count);
}
