/* scan.cu — pp_scan, pp_select, pp_select_flagged and pp_partition on the GPU.
 *
 * Every call is one pass over the data with decoupled look-back (Merrill & Garland,
 * "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016): each block takes one
 * tile (tile = blockIdx.x: blocks are dispatched in index order, so the tiles before it are
 * running or done), scans it in registers and shared memory, publishes the tile's
 * aggregate, and its first warp then reads the descriptors of the preceding tiles 32 at a
 * time, adding aggregates until it meets a tile that has published its inclusive prefix.
 * Compaction is the same pass: the flags are counted instead of values summed, and the
 * kept elements are packed in shared memory and written out contiguously. Partition
 * counts first and then places without a look-back (see part_count_kernel).
 *
 * What the look-back costs is not the waiting but the polling: without any waiting (a
 * diagnostic build) the scan streams at the speed of a copy. Each tile's descriptor has an
 * L2 line of its own (PP_LOOKBACK_STRIDE), so that the polls of the ~500 tiles in flight
 * do not queue at the few L2 slices holding packed descriptors, and a warp sleeps before
 * its first poll and between polls; the scan also publishes its aggregate before its block
 * scan, so its successors find it sooner.
 *
 * Tile layout ("striped vectors"): a tile is VECS segments of THREADS 16-byte vectors;
 * thread t holds vector t of each segment, so every load and store is one fully
 * coalesced 16-byte access per thread and no shared-memory transpose is needed. The order
 * of the tile's elements is segment, warp, lane, element of the vector; the block scan
 * therefore scans each thread's vector serially, each segment's thread totals with warp
 * shuffles, and the VECS x WARPS warp totals (32 values) in one more warp scan.
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
#include "dispatch.cuh"
#include "launch.cuh"
#include "lookback.cuh"

#include <string.h>

#include <cmath>
#include <limits>
#include <type_traits>

/* Tile sizes and blocks per SM: tuning.h. PP_PARTITION_VECS sets the tile of both of
 * partition's passes. The scan's loads and stores of the data are streaming
 * (evict-first): it is read and written once; so are the loads of the other passes,
 * except partition's counting pass, whose data is read again. */
#define SCAN_THREADS PP_SCAN_THREADS
#define SCAN_VECS PP_SCAN_VECS
#define SELECT_VECS PP_SELECT_VECS
#define PARTITION_VECS PP_PARTITION_VECS
#define FLAG_VECS PP_FLAG_VECS
#define SCAN_WARPS (SCAN_THREADS / PP_WARP)
/* bytes of one tile of V vectors per thread */
#define TILE_BYTES(V) (SCAN_THREADS * (V) * 16)

/* The tile of this block: tile = blockIdx.x, since blocks are dispatched in index order
 * (the tiles before it are running or done, so its look-back makes progress). The
 * look-back header's tile counter stays in the kernels' parameters, unused. */
__device__ __forceinline__ size_t next_tile(unsigned *, size_t) { return blockIdx.x; }

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
 * unset: callers mask them with the counts). STREAM false: the vectors are cached in L2
 * like any load, for data that is read again soon. */
template <typename T, int V, bool STREAM = true>
__device__ __forceinline__ void load_tile(const T *in, size_t n, size_t base, bool vector_ok,
                                          pp_vec16<T> (&x)[V], int (&cnt)[V]) {
  constexpr int VW = 16 / sizeof(T);
#pragma unroll
  for (int v = 0; v < V; v++) {
    size_t first = vec_first<T>(base, v);
    cnt[v] = vec_count(first, n, VW);
    x[v].raw = make_uint4(0, 0, 0, 0);
    if (vector_ok) {
      x[v].raw = STREAM ? __ldcs(reinterpret_cast<const uint4 *>(in + first))
                        : __ldcg(reinterpret_cast<const uint4 *>(in + first));
    } else {
#pragma unroll
      for (int c = 0; c < VW; c++)
        if (c < cnt[v]) x[v].e[c] = in[first + c];
    }
  }
}

/* The scan of a tile's V x WARPS warp totals (segment-major), by one whole warp: lane l
 * takes entries [l*K, l*K+K). Every lane gets the tile total; prefix_of(e) gives entry e's
 * exclusive prefix (e the same in all lanes). */
template <typename Comb, int V>
struct totals_scan {
  static constexpr int N_TOTALS = V * SCAN_WARPS;
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
};

/* ---- scan kernel ----------------------------------------------------------------------- */

/* Shared memory of one tile's block scan. */
template <typename C>
struct scan_smem {
  C warp_total[SCAN_VECS * SCAN_WARPS];
  C warp_sum[SCAN_WARPS];
  C tile_prefix;
};

/* Scan one tile whose data this thread already holds in x (see load_tile) and store it.
 * Starts and ends with every thread of the block in step (two barriers inside).
 * SEEDED: the scan continues one over elements before in[0] (a distributed scan's lower
 * ranks, src/dist/dist_reduce.c) whose total is seed: every tile folds it in front of its
 * prefix, and an exclusive scan's out[0] is the seed itself. The look-back chain stays
 * local; only the outputs see the seed. */
template <typename Op, bool SEEDED>
__device__ __forceinline__ void scan_tile(typename Op::Elem *out, size_t n, size_t tile,
                                          bool aligned, bool inclusive, void *descs,
                                          uint32_t epoch,
                                          const pp_vec16<typename Op::Elem> (&x)[SCAN_VECS],
                                          const int (&cnt)[SCAN_VECS],
                                          scan_smem<typename Op::Carry> &sm,
                                          typename Op::Carry seed) {
  typedef typename Op::Elem T;
  typedef typename Op::Local L;
  typedef typename Op::Carry C;
  constexpr int VW = 16 / sizeof(T);
  constexpr int TILE = SCAN_THREADS * SCAN_VECS * VW;
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  const size_t base = tile * TILE;
  const bool full = n - base >= (size_t)TILE;

  L lane_prefix[SCAN_VECS];
  /* The tile's total first (thread sums, one warp reduction, one barrier), so that its
   * aggregate is out before the block scan; warp 0 then scans its own vectors while the
   * aggregates of the tiles before it arrive, and every warp scans the segment totals
   * itself after the look-back (no third barrier). */
  L vsum[SCAN_VECS];
  L all = Op::id_local();
#pragma unroll
  for (int v = 0; v < SCAN_VECS; v++) {
    L s = Op::id_local();
#pragma unroll
    for (int c = 0; c < VW; c++)
      if (c < cnt[v]) s = Op::add_local(s, L(x[v].e[c]));
    vsum[v] = s;
    all = Op::add_local(all, s);
  }
  all = pp_warp_allreduce<local_of<Op>>(all);
  if (lane == 0) sm.warp_sum[warp] = C(all);
  __syncthreads();
  C aggregate = Op::id_carry();
  if (warp == 0) {
    aggregate = lane < SCAN_WARPS ? sm.warp_sum[lane] : Op::id_carry();
    aggregate = pp_warp_allreduce<carry_of<Op>>(aggregate);
    if (lane == 0) pp_look_back_publish<carry_of<Op>>(descs, tile, epoch, aggregate);
  }
#pragma unroll
  for (int v = 0; v < SCAN_VECS; v++) {
    L inc = pp_warp_scan_inclusive<local_of<Op>>(vsum[v]);
    L exc = pp_shfl<PP_SHFL_UP>(inc, 1);
    lane_prefix[v] = lane == 0 ? Op::id_local() : exc;
    if (lane == PP_WARP - 1) sm.warp_total[v * SCAN_WARPS + warp] = C(inc);
  }
  if (warp == 0) {
    C p = pp_look_back_wait<carry_of<Op>>(descs, tile, epoch, aggregate);
    if (lane == 0) sm.tile_prefix = SEEDED ? Op::add_carry(seed, p) : p;
  }
  __syncthreads();
  totals_scan<carry_of<Op>, SCAN_VECS> ts;
  ts.run(sm.warp_total);

#pragma unroll
  for (int v = 0; v < SCAN_VECS; v++) {
    /* one rounding of the carried prefix into the tile's type, then local additions */
    const C seg_prefix = ts.prefix_of(v * SCAN_WARPS + warp);
    L b = Op::add_local(L(Op::add_carry(sm.tile_prefix, seg_prefix)), lane_prefix[v]);
    L run = Op::id_local();
    pp_vec16<T> y;
#pragma unroll
    for (int c = 0; c < VW; c++) {
      L next = Op::add_local(run, L(x[v].e[c]));
      y.e[c] = T(Op::add_local(b, inclusive ? next : run));
      run = next;
    }
    size_t first = vec_first<T>(base, v);
    if (!SEEDED && !inclusive && first == 0) y.e[0] = Op::first();
    if (aligned && full) {
      __stcs(reinterpret_cast<uint4 *>(out + first), y.raw);
    } else {
#pragma unroll
      for (int c = 0; c < VW; c++)
        if (c < cnt[v]) out[first + c] = y.e[c];
    }
  }
}

/* One tile per block. */
template <typename Op, bool SEEDED>
__global__ void __launch_bounds__(SCAN_THREADS, PP_SCAN_MIN_BLOCKS)
scan_kernel(const typename Op::Elem *in, typename Op::Elem *out, size_t n, size_t num_tiles,
            bool aligned, bool inclusive, void *descs, unsigned *counter, uint32_t epoch,
            typename Op::Carry seed) {
  typedef typename Op::Elem T;
  constexpr int TILE = SCAN_THREADS * SCAN_VECS * (16 / sizeof(T));
  __shared__ scan_smem<typename Op::Carry> sm;
  const size_t tile = next_tile(counter, num_tiles);
  pp_vec16<T> x[SCAN_VECS];
  int cnt[SCAN_VECS];
  load_tile<T, SCAN_VECS>(in, n, tile * TILE, aligned && n - tile * TILE >= (size_t)TILE, x, cnt);
  scan_tile<Op, SEEDED>(out, n, tile, aligned, inclusive, descs, epoch, x, cnt, sm, seed);
}

/* ---- select / partition kernel ------------------------------------------------------------ */

/* x cmp value as a set of accepted outcomes {x < v, x == v, x > v, unordered}, so one
 * kernel serves every comparison without a branch per element. NaN is unordered: false
 * for every comparison but NE. */
template <typename T>
struct cmp_pred {
  T value;
  unsigned accept;
  __device__ __forceinline__ bool operator()(T x) const {
    unsigned o = x < value ? 0u : x == value ? 1u : x > value ? 2u : 3u;
    return (accept >> o) & 1u;
  }
};

/* A flag keeps its record when it is not zero. */
struct flag_set {
  __device__ __forceinline__ bool operator()(uint8_t f) const { return f != 0; }
};

static unsigned accept_set(pp_cmp cmp) {
  enum { LT = 1, EQ = 2, GT = 4, UN = 8 };
  switch (cmp) {
  case PP_GT: return GT;
  case PP_GE: return GT | EQ;
  case PP_LT: return LT;
  case PP_LE: return LT | EQ;
  case PP_EQ: return EQ;
  case PP_NE: return LT | GT | UN;
  }
  return 0;
}

/* Block-wide ranks of the kept elements: kept[v] has bit c set when element c of vector v
 * is kept. Fills rank_base[v] (the block-local rank of the vector's first kept element)
 * and returns the tile's kept count. Each warp scans the 32 warp totals itself, so no
 * second barrier is needed before the shared-memory scatter. */
template <int V>
__device__ __forceinline__ uint32_t rank_kept(const uint32_t (&kept)[V], uint32_t (&rank_base)[V],
                                              uint32_t *warp_total) {
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
#pragma unroll
  for (int v = 0; v < V; v++) {
    uint32_t c = __popc(kept[v]);
    uint32_t inc = pp_warp_scan_inclusive<u32_sum>(c);
    rank_base[v] = inc - c;
    if (lane == PP_WARP - 1) warp_total[v * SCAN_WARPS + warp] = inc;
  }
  __syncthreads();
  totals_scan<u32_sum, V> ts;
  ts.run(warp_total);
#pragma unroll
  for (int v = 0; v < V; v++) rank_base[v] += ts.prefix_of(v * SCAN_WARPS + warp);
  return ts.total;
}

/* kept[v]: bit c set when element c of vector v is inside the tile (cnt) and keep()
 * accepts it. */
template <typename T, int V, typename Keep>
__device__ __forceinline__ void keep_bits(Keep keep, const pp_vec16<T> (&x)[V],
                                          const int (&cnt)[V], uint32_t (&kept)[V]) {
#pragma unroll
  for (int v = 0; v < V; v++) {
    kept[v] = 0;
#pragma unroll
    for (int c = 0; c < 16 / (int)sizeof(T); c++)
      if (c < cnt[v] && keep(x[v].e[c])) kept[v] |= 1u << c;
  }
}

/* This block's tile of TILE elements: its index (next_tile), its first element, and
 * whether it is whole. */
template <int TILE>
struct tile_place {
  size_t tile, base;
  bool full;
  __device__ __forceinline__ tile_place(unsigned *counter, size_t num_tiles, size_t n)
      : tile(next_tile(counter, num_tiles)), base(tile * TILE), full(n - base >= (size_t)TILE) {}
};

/* Loads the tile at base (x, cnt: load_tile), marks the elements keep() accepts (bit c of
 * kept[v]: element c of vector v) and ranks them (rank_base: rank_kept); the first warp
 * then looks back for the kept count of the tiles before this one and leaves it in
 * tile_prefix (shared: read it after the next barrier) while the other warps go on to
 * pack the tile. Returns the tile's kept count. */
template <typename T, int V, typename Keep>
__device__ __forceinline__ uint32_t load_kept(const T *in, size_t n, size_t base, bool vector_ok,
                                              Keep keep, pp_vec16<T> (&x)[V], int (&cnt)[V],
                                              uint32_t (&kept)[V], uint32_t (&rank_base)[V],
                                              uint32_t *warp_total, void *descs, size_t tile,
                                              uint32_t epoch, unsigned long long &tile_prefix) {
  load_tile<T, V>(in, n, base, vector_ok, x, cnt);
  keep_bits<T, V>(keep, x, cnt, kept);
  const uint32_t tile_kept = rank_kept(kept, rank_base, warp_total);
  if (threadIdx.x / PP_WARP == 0) {
    unsigned long long p = pp_look_back<count_sum>(descs, tile, epoch, tile_kept);
    if (threadIdx.x == 0) tile_prefix = p;
  }
  return tile_kept;
}

/* The kept elements go to out[prefix ...], in order; the last tile writes *count. */
template <typename T>
__global__ void __launch_bounds__(SCAN_THREADS, PP_SELECT_MIN_BLOCKS)
select_kernel(const T *in, size_t n, cmp_pred<T> pred, T *out, uint64_t *count,
              size_t num_tiles, bool aligned, void *descs, unsigned *counter, uint32_t epoch) {
  constexpr int V = SELECT_VECS;
  constexpr int VW = 16 / sizeof(T);
  constexpr int TILE = SCAN_THREADS * V * VW;
  __shared__ T packed[TILE];
  __shared__ uint32_t warp_total[V * SCAN_WARPS];
  __shared__ unsigned long long tile_prefix;

  const tile_place<TILE> at(counter, num_tiles, n);
  const size_t tile = at.tile;
  pp_vec16<T> x[V];
  int cnt[V];
  uint32_t kept[V], rank_base[V];
  const uint32_t tile_kept = load_kept<T, V>(in, n, at.base, aligned && at.full, pred, x, cnt,
                                              kept, rank_base, warp_total, descs, tile, epoch,
                                              tile_prefix);
#pragma unroll
  for (int v = 0; v < V; v++) {
#pragma unroll
    for (int c = 0; c < VW; c++) {
      uint32_t before = rank_base[v] + __popc(kept[v] & ((1u << c) - 1u));
      if (kept[v] & (1u << c)) packed[before] = x[v].e[c];
    }
  }
  __syncthreads();

  const size_t prefix = tile_prefix;
  for (uint32_t k = threadIdx.x; k < tile_kept; k += SCAN_THREADS) out[prefix + k] = packed[k];
  if (tile == num_tiles - 1 && threadIdx.x == 0) *count = prefix + tile_kept;
}

/* ---- partition: a counting pass, then a placing pass, by warps -------------------------
 * Element i, when rejected, belongs at count_true + (rejected before i), so nothing
 * rejected can be placed before every element has been looked at: a counting pass reads
 * the input first (docs/benchmarks/h100-scan.md, "Partition: the bound of a stable
 * split"). That pass can leave more than the total: the pass after it needs no look-back
 * between its workers if it knows, per contiguous chunk of the input, the kept count
 * before the chunk. Reduce-then-scan (Merrill & Grimshaw, "Parallel Scan for Stream
 * Architectures", 2009), whose reduce is the count partition needs anyway.
 *
 * The worker of both passes is a warp, not a block. The input is cut into subtiles of
 * 32 lanes x WV 16-byte vectors (part_shape), vector j of lane l at
 * element (j*32 + l) * VW, so every load is one coalesced 512-byte warp access. Warp w of
 * the grid owns the contiguous chunk of chunk_subs subtiles from w * chunk_subs (the last
 * chunk may be shorter); there is one chunk per warp of a full wave of placing blocks.
 * The counting pass leaves each chunk's kept count in chunk_count[w] and each block's
 * total in block_end[b], and its last block scans only the block totals into block ends
 * (a few a thread); a placing warp adds the counts of its block's chunks up to its own to
 * the end of the block before (one load a lane and a warp reduce), which is where its
 * chunk ends. The placing warp then walks its chunk from the last subtile
 * to the first (it reads first what the counting pass read last, which L2 may still
 * hold), with the next subtile's loads in flight while it places the current one, and
 * with no block barrier and no block scan:
 *   - one warp scan ranks the whole subtile: each lane's per-vector kept counts are packed
 *     into fields of one or two words (a field sums at most 32 x VW, so none carries into
 *     the next), and the Hillis-Steele scan of those words scans every vector at once;
 *   - a scatter into the warp's own stage in shared memory puts the kept part and the
 *     rejected part each at its destination's 16-byte phase;
 *   - both parts leave the stage as 16-byte stores, single elements only at their ends.
 *
 * The predicate is an interval: keep = (lo <= x <= hi) xor inv, two comparisons per
 * element (make_ival turns each pp_cmp into one, exactly). Subtile indices are 32-bit in
 * the placing pass (partition_typed checks that they fit). */
#define PART_WARPS (SCAN_THREADS / PP_WARP)

/* x cmp value as (lo <= x <= hi) != inv: an empty interval (lo > hi) keeps nothing, or
 * everything when inverted. NaN x fails both comparisons, so only an inverted interval
 * (NE) keeps it. */
template <typename T>
struct ival_pred {
  T lo, hi;
  bool inv;
  __device__ __forceinline__ bool operator()(T x) const { return ((x >= lo) & (x <= hi)) != inv; }
};

/* The interval of x cmp v (API.md: NaN compares false except under NE; -0.0 == +0.0).
 * x > v is x >= the next value above v (for floats nextafter: x > -0.0 is x >= the
 * smallest subnormal, which -0.0 and +0.0 both fail); none above the largest value (+inf,
 * or the integer maximum) and none at all for a NaN v. != is == inverted, so a NaN v
 * keeps everything and a NaN x is kept against any v. */
template <typename T>
static ival_pred<T> make_ival(pp_cmp cmp, const void *value) {
  typedef std::numeric_limits<T> L;
  T v, top, bottom;
  memcpy(&v, value, sizeof v); /* value is host memory (API.md) */
  bool none = false;
  if constexpr (is_float<T>()) {
    top = L::infinity();
    bottom = -L::infinity();
    none = std::isnan(v);
  } else {
    top = L::max();
    bottom = L::lowest();
  }
  /* the neighbour of v toward `to` (v != to) */
  auto step = [](T a, T to) -> T {
    if constexpr (is_float<T>())
      return std::nextafter(a, to);
    else
      return a < to ? T(a + 1) : T(a - 1);
  };
  ival_pred<T> p;
  p.lo = bottom;
  p.hi = top;
  p.inv = false;
  switch (cmp) {
  case PP_GT:
    none = none || v == top;
    if (!none) p.lo = step(v, top);
    break;
  case PP_GE: p.lo = v; break;
  case PP_LT:
    none = none || v == bottom;
    if (!none) p.hi = step(v, bottom);
    break;
  case PP_LE: p.hi = v; break;
  case PP_EQ: p.lo = p.hi = v; break;
  case PP_NE:
    p.lo = p.hi = v;
    p.inv = true;
    break;
  }
  if (none) {
    p.lo = top;
    p.hi = bottom;
  }
  return p;
}

/* The shapes of a subtile of T: VW elements a vector, SUB a subtile; a lane's kept bits
 * (WV x VW of them) in Bits; its per-vector counts in fields of FB bits, FPW a word, NW
 * words. */
template <typename T>
struct part_shape {
  /* u8 takes half the vectors: 64 elements a lane left the placing pass short of
     registers (it spilled), 32 do not */
  static constexpr int WV = sizeof(T) == 1 ? PARTITION_VECS / 2 : PARTITION_VECS;
  static constexpr int VW = 16 / (int)sizeof(T);
  static constexpr int SUB = PP_WARP * WV * VW;
  typedef typename std::conditional<(WV * VW > 32), uint64_t, uint32_t>::type Bits;
  static constexpr int FB = PP_WARP * VW < 256 ? 8 : 16;
  static constexpr int FPW = 32 / FB;
  static constexpr int NW = (WV + FPW - 1) / FPW;
  static constexpr uint32_t FMASK = (1u << FB) - 1u;
  /* a warp's stage: the subtile, both parts' phases (under VW each) and the padding of
     the kept part to whole vectors, so at most SUB + 3 VW elements are written or read
     as whole vectors; one vector more keeps it a multiple of 16 bytes with room */
  static constexpr int STAGE = SUB + 4 * VW;
  static_assert(WV >= 1 && SUB * (int)sizeof(T) == PP_WARP * WV * 16, "subtile bytes");
  static_assert(WV * VW <= 64, "a lane's kept bits fit one Bits word");
  /* field j of the words w */
  static __device__ __forceinline__ uint32_t field(const uint32_t (&w)[NW], int j) {
    return (w[j / FPW] >> (FB * (j % FPW))) & FMASK;
  }
};

/* The kept bits of one vector's first cnt elements. */
template <typename T, typename Pred>
__device__ __forceinline__ uint32_t part_bits(Pred pred, const pp_vec16<T> &x, int cnt) {
  constexpr int VW = 16 / (int)sizeof(T);
  uint32_t b = 0;
#pragma unroll
  for (int c = 0; c < VW; c++) b |= (uint32_t)pred(x.e[c]) << c;
  return cnt >= VW ? b : b & ((1u << cnt) - 1u);
}

/* The inclusive scan of the g counts c[] in place, by one block; *total: the sum. */
__device__ __forceinline__ void scan_counts(unsigned long long *c, unsigned g,
                                                  uint64_t *total) {
  __shared__ unsigned long long warp_sum[SCAN_WARPS];
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  const unsigned per = (g + SCAN_THREADS - 1) / SCAN_THREADS;
  const unsigned lo = threadIdx.x * per < g ? threadIdx.x * per : g;
  const unsigned hi = lo + per < g ? lo + per : g;
  unsigned long long s = 0;
  for (unsigned i = lo; i < hi; i++) s += __ldcg(c + i); /* other blocks wrote them: L2 */
  const unsigned long long inc = pp_warp_scan_inclusive<count_sum>(s);
  if (lane == PP_WARP - 1) warp_sum[warp] = inc;
  __syncthreads();
  unsigned long long run = inc - s;
  for (int w = 0; w < warp; w++) run += warp_sum[w];
  for (unsigned i = lo; i < hi; i++) {
    run += __ldcg(c + i);
    c[i] = run;
  }
  if (threadIdx.x == SCAN_THREADS - 1) *total = run;
}

/* Warp w counts the kept elements of chunk w into chunk_count[w], block b their sum over
 * its warps into block_end[b]; the last block to finish turns the block totals into block
 * ends and writes their total to *count_true. Its loads stay
 * in L2 for the placing pass; two subtiles' loads (four of u8) are in flight at once.
 *
 * The placing pass is launched as its programmatic dependent (launch.cuh), and every
 * block lets it start at once. Its blocks are launched only when every block of this grid
 * has started and triggered, so they take what is left of the SMs (or what this grid's
 * finished blocks leave) and never keep a counting block from starting; each of them
 * waits for this grid's completion before it reads what this pass writes. They load their
 * first subtile meanwhile, and start placing as soon as this grid is done, without a
 * launch in between. */
template <typename T, typename Pred>
__global__ void __launch_bounds__(SCAN_THREADS, PP_PARTITION_MIN_BLOCKS)
part_count_kernel(const T *in, size_t n, Pred pred, bool aligned, size_t chunk_subs,
                  unsigned nchunks, unsigned long long *chunk_count,
                  unsigned long long *block_end, uint64_t *count_true, unsigned *done) {
  typedef part_shape<T> S;
  constexpr int WV = S::WV, VW = S::VW, SUB = S::SUB;
  const int lane = threadIdx.x % PP_WARP;
  const unsigned w = blockIdx.x * PART_WARPS + threadIdx.x / PP_WARP;
  const size_t subs = pp_ceil_div_dev(n, SUB);
  const size_t first = (size_t)w * chunk_subs; /* past subs for warps without a chunk */
  const size_t last = first + chunk_subs < subs ? first + chunk_subs : subs;
  constexpr int IN_FLIGHT = 2 * PARTITION_VECS / WV; /* subtiles: 2, or 4 of u8's */
  pp_pdl_trigger();
  unsigned long long mine = 0;
  for (size_t s = first; s < last; s += IN_FLIGHT) {
    pp_vec16<T> x[IN_FLIGHT][WV];
    int cnt[IN_FLIGHT][WV];
#pragma unroll
    for (int k = 0; k < IN_FLIGHT; k++) {
      const size_t base = (s + k) * SUB;
      const bool vec_ok = aligned && n - base >= (size_t)SUB;
#pragma unroll
      for (int j = 0; j < WV; j++) {
        const size_t f = base + (size_t)(j * PP_WARP + lane) * VW;
        cnt[k][j] = s + k < last ? vec_count(f, n, VW) : 0; /* nothing past the chunk */
        x[k][j].raw = make_uint4(0, 0, 0, 0);
        if (s + k >= last) continue;
        if (vec_ok) {
          x[k][j].raw = __ldcg(reinterpret_cast<const uint4 *>(in + f));
        } else {
#pragma unroll
          for (int c = 0; c < VW; c++)
            if (c < cnt[k][j]) x[k][j].e[c] = in[f + c];
        }
      }
    }
    uint32_t c = 0;
#pragma unroll
    for (int k = 0; k < IN_FLIGHT; k++)
#pragma unroll
      for (int j = 0; j < WV; j++) c += __popc(part_bits<T>(pred, x[k][j], cnt[k][j]));
    mine += c;
  }
  mine = pp_warp_reduce<count_sum>(mine); /* 0 in a warp without a chunk */
  __shared__ unsigned long long warp_count[PART_WARPS];
  if (lane == 0) {
    if (w < nchunks) chunk_count[w] = mine;
    warp_count[threadIdx.x / PP_WARP] = mine;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long b = 0;
    for (int i = 0; i < PART_WARPS; i++) b += warp_count[i];
    block_end[blockIdx.x] = b; /* fenced before the ticket in pp_last_block_done */
  }
  if (pp_last_block_done(done)) scan_counts(block_end, gridDim.x, count_true);
}

/* The subtile at base into x: whole aligned subtiles as 16-byte streaming loads; the
 * array's last subtile and unaligned input element by element through the warp's stage
 * (zero past n), so that the rare path adds few registers to the loop. Starts and ends
 * with the warp's lanes in step. */
template <typename T>
__device__ __forceinline__ void part_load(const T *in, size_t n, size_t base, bool vec_ok,
                                          pp_vec16<T> (&x)[part_shape<T>::WV], T *sm) {
  typedef part_shape<T> S;
  const int lane = threadIdx.x % PP_WARP;
  if (vec_ok) {
#pragma unroll
    for (int j = 0; j < S::WV; j++)
      x[j].raw = __ldcs(
          reinterpret_cast<const uint4 *>(in + base + (size_t)(j * PP_WARP + lane) * S::VW));
  } else {
    for (int k = lane; k < S::SUB; k += PP_WARP) sm[k] = base + k < n ? in[base + k] : T(0);
    __syncwarp();
#pragma unroll
    for (int j = 0; j < S::WV; j++)
      x[j].raw = reinterpret_cast<const uint4 *>(sm)[j * PP_WARP + lane];
    __syncwarp();
  }
}

/* Warp w places chunk w, subtile by subtile from its end: the kept elements of a subtile
 * go to out[kp ...] (kp: kept elements before it), the rejected ones to
 * out[count_true + (rejected before it) ...]. It may start before the counting pass has
 * finished (see part_count_kernel): it loads its first subtile (in, which that pass does
 * not write), and only after pp_pdl_wait reads the chunk ends and the count and writes
 * out. A warp without a chunk returns at once; warp 0 of block 0 always has one, so the
 * grid cannot complete before the counting pass has. */
template <typename T, typename Pred>
__global__ void __launch_bounds__(SCAN_THREADS, PP_PARTITION_MIN_BLOCKS)
part_place_kernel(const T *in, size_t n, Pred pred, T *out, const uint64_t *count_true,
                  const unsigned long long *chunk_count, const unsigned long long *block_end,
                  size_t chunk_subs, unsigned nchunks,
                  bool aligned) {
  typedef part_shape<T> S;
  typedef typename S::Bits Bits;
  constexpr int WV = S::WV, VW = S::VW, SUB = S::SUB, NW = S::NW;
  __shared__ __align__(16) T stage[PART_WARPS][S::STAGE];
  const int lane = threadIdx.x % PP_WARP, wid = threadIdx.x / PP_WARP;
  const unsigned w = blockIdx.x * PART_WARPS + wid;
  if (w >= nchunks) return; /* whole warps; no block barrier below */
  T *sm = stage[wid];
  const uint32_t subs = (uint32_t)pp_ceil_div_dev(n, SUB);
  const uint32_t first = w * (uint32_t)chunk_subs;
  uint32_t s = (first + (uint32_t)chunk_subs < subs ? first + (uint32_t)chunk_subs : subs) - 1;

  pp_vec16<T> x[WV];
  part_load<T>(in, n, (size_t)s * SUB, aligned && n - (size_t)s * SUB >= (size_t)SUB, x, sm);
  pp_pdl_wait(); /* the counting pass has completed: its writes below are visible */
  const size_t total_true = *count_true;
  /* kept elements before the end of subtile s: those of the blocks before this one and of
     this block's chunks up to w (b0 + lane <= w < nchunks) */
  const unsigned b0 = blockIdx.x * PART_WARPS;
  const unsigned long long mine = lane <= wid ? chunk_count[b0 + lane] : 0;
  size_t end = pp_warp_allreduce<count_sum>(mine) + (blockIdx.x ? block_end[blockIdx.x - 1] : 0);
  for (;;) {
    /* subtile s - 1 is whole (only the array's last one is not) */
    pp_vec16<T> nx[WV];
    if (s > first) part_load<T>(in, n, (size_t)(s - 1) * SUB, aligned, nx, sm);

    const size_t base = (size_t)s * SUB;
    const uint32_t valid = n - base >= (size_t)SUB ? (uint32_t)SUB : (uint32_t)(n - base);
    Bits bits = 0;
    uint32_t pk[NW];
#pragma unroll
    for (int q = 0; q < NW; q++) pk[q] = 0;
#pragma unroll
    for (int j = 0; j < WV; j++) {
      const int rem = (int)valid - (j * PP_WARP + lane) * VW;
      const uint32_t b = part_bits<T>(pred, x[j], rem < 0 ? 0 : rem);
      bits |= (Bits)b << (VW * j);
      pk[j / S::FPW] |= (uint32_t)__popc(b) << (S::FB * (j % S::FPW));
    }
    /* the counts' fields scanned across the lanes all at once */
    uint32_t exc[NW], tot[NW];
#pragma unroll
    for (int q = 0; q < NW; q++) {
      uint32_t inc = pp_warp_scan_inclusive<u32_sum>(pk[q]);
      tot[q] = __shfl_sync(0xffffffffu, inc, PP_WARP - 1);
      exc[q] = inc - pk[q];
    }
    uint32_t K = 0; /* kept elements of the subtile */
#pragma unroll
    for (int j = 0; j < WV; j++) K += S::field(tot, j);
    const uint32_t R = valid - K;
    const size_t kp = end - K;                  /* kept elements before this subtile */
    const size_t rg = total_true + (base - kp); /* where its first rejected one goes */
    /* 16-byte phase of each part's destination (out need only be aligned to T) */
    const uint32_t sk = (uint32_t)((uintptr_t)(out + kp) / sizeof(T)) & (VW - 1);
    const uint32_t sr = (uint32_t)((uintptr_t)(out + rg) / sizeof(T)) & (VW - 1);
    const uint32_t nvk = (sk + K + VW - 1) / VW, nvr = (sr + R + VW - 1) / VW;
    const uint32_t rbase = nvk * VW + sr;
    /* Scatter: the kept element of subtile rank r to sm[sk + r], the rejected one of rank
       r to sm[rbase + r]. Elements past n (last subtile only) follow every valid one and
       land past the rejected part, inside the stage's slack; they are never stored. */
    uint32_t before = 0; /* kept elements of the vectors j' < j of every lane */
#pragma unroll
    for (int j = 0; j < WV; j++) {
      const uint32_t r0 = before + S::field(exc, j);
      before += S::field(tot, j);
      uint32_t kpos = sk + r0;
      uint32_t rpos = rbase + (uint32_t)(j * PP_WARP + lane) * VW - r0;
#pragma unroll
      for (int c = 0; c < VW; c++) {
        const uint32_t k = (uint32_t)(bits >> (VW * j + c)) & 1u;
        sm[k ? kpos : rpos] = x[j].e[c];
        kpos += k;
        rpos += k ^ 1u;
      }
    }
    __syncwarp();
    const uint4 *sv = reinterpret_cast<const uint4 *>(sm);
    T *const ok = out + kp - sk; /* 16-byte aligned */
    T *const orj = out + rg - sr;
    for (uint32_t q = lane; q < nvk + nvr; q += PP_WARP) {
      const bool isk = q < nvk;
      const uint32_t lo = VW * (isk ? q : q - nvk);
      const uint32_t a = isk ? sk : sr;
      const uint32_t b = a + (isk ? K : R);
      T *g = (isk ? ok : orj) + lo;
      pp_vec16<T> v;
      v.raw = sv[q];
      if (lo >= a && lo + VW <= b) {
        *reinterpret_cast<uint4 *>(g) = v.raw;
      } else {
#pragma unroll
        for (int c = 0; c < VW; c++)
          if (lo + c >= a && lo + c < b) g[c] = v.e[c];
      }
    }
    __syncwarp(); /* every lane has read the stage before the next scatter */
    end = kp;
    if (s == first) break;
    s--;
#pragma unroll
    for (int j = 0; j < WV; j++) x[j] = nx[j];
  }
}

/* ---- select_flagged: records of any size ----------------------------------------------
 * A tile covers TILE_BYTES(V) flags (one 16-byte vector of flags per thread per segment);
 * the kept records' tile positions are packed in shared memory, then the block copies
 * them word by word (W: the widest word dividing the record), consecutive threads
 * writing consecutive words. V is chosen per call from n (launch_flagged): large tiles
 * when there are enough of them to fill the GPU, smaller ones below. */

/* Word k of dst, for k from this thread's index in steps of the block, is next()'s value
 * (next is called in order, once per word below `words`). Each thread gathers
 * PP_FLAG_COPY_BYTES of words (2 to 8 words) before it stores them: the loads of a batch
 * are independent, so they are in flight together rather than one round trip per word. */
template <typename W, typename I, typename Next>
__device__ __forceinline__ void copy_batched(I words, W *dst, Next next) {
  constexpr int U = PP_FLAG_COPY_BYTES / (int)sizeof(W) < 2   ? 2
                    : PP_FLAG_COPY_BYTES / (int)sizeof(W) > 8 ? 8
                                                               : PP_FLAG_COPY_BYTES / (int)sizeof(W);
  for (I k0 = threadIdx.x; k0 < words; k0 += (I)U * SCAN_THREADS) {
    W v[U];
#pragma unroll
    for (int u = 0; u < U; u++)
      if (k0 + (I)u * SCAN_THREADS < words) v[u] = next();
#pragma unroll
    for (int u = 0; u < U; u++)
      if (k0 + (I)u * SCAN_THREADS < words) dst[k0 + (I)u * SCAN_THREADS] = v[u];
  }
}

template <typename W, int V>
__global__ void __launch_bounds__(SCAN_THREADS, PP_FLAG_MIN_BLOCKS)
flagged_kernel(const W *in, size_t words_per_record, const uint8_t *flags, size_t n, W *out,
               uint64_t *count, size_t num_tiles, bool aligned, void *descs, unsigned *counter,
               uint32_t epoch) {
  constexpr int TILE = TILE_BYTES(V);
  static_assert(TILE <= 65536, "tile positions fit uint16_t");
  extern __shared__ uint16_t which[]; /* TILE entries: dynamic, as it may pass 48 KB */
  __shared__ uint32_t warp_total[V * SCAN_WARPS];
  __shared__ unsigned long long tile_prefix;

  const tile_place<TILE> at(counter, num_tiles, n);
  const size_t tile = at.tile, base = at.base;
  pp_vec16<uint8_t> f[V];
  int cnt[V];
  uint32_t kept[V], rank_base[V];
  const uint32_t tile_kept =
      load_kept<uint8_t, V>(flags, n, base, aligned && at.full, flag_set(), f, cnt, kept,
                            rank_base, warp_total, descs, tile, epoch, tile_prefix);
#pragma unroll
  for (int v = 0; v < V; v++) {
    const uint32_t pos0 = (uint32_t)vec_first<uint8_t>(0, v);
    uint32_t m = kept[v];
    uint32_t r = rank_base[v];
    while (m) {
      int c = __ffs(m) - 1;
      which[r++] = (uint16_t)(pos0 + c);
      m &= m - 1;
    }
  }
  __syncthreads();

  /* the kept records go to out[prefix, prefix + tile_kept), in order */
  const size_t prefix = tile_prefix;
  const size_t wpr = words_per_record;
  const W *src = in + base * wpr;
  W *dst = out + prefix * wpr;
  if (wpr == 1) { /* one word a record: output word k is record which[k] */
    uint32_t k = threadIdx.x;
    copy_batched<W>(tile_kept, dst, [&]() {
      const W w = src[which[k]];
      k += SCAN_THREADS;
      return w;
    });
  } else { /* word w of record rec: rec and w are stepped by the block's width */
    const size_t step_rec = SCAN_THREADS / wpr, step_word = SCAN_THREADS % wpr;
    size_t rec = threadIdx.x / wpr, w = threadIdx.x % wpr;
    copy_batched<W>((size_t)tile_kept * wpr, dst, [&]() {
      const W x = src[(size_t)which[rec] * wpr + w];
      rec += step_rec;
      w += step_word;
      if (w >= wpr) {
        w -= wpr;
        rec++;
      }
      return x;
    });
  }
  if (tile == num_tiles - 1 && threadIdx.x == 0) *count = prefix + tile_kept;
}


/* ---- host side ------------------------------------------------------------------------ */

/* The look-back buffer for `tiles` tiles and this call's epoch. */
static pp_status lookback_begin(pp_context *ctx, const char *fn, size_t tiles, void **descs,
                                unsigned **counter, uint32_t *epoch) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (tiles > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n needs %zu tiles, more than a grid holds",
                   fn, tiles);
  size_t need = PP_LOOKBACK_HEADER + tiles * PP_DESC_WIDE_SLOT;
  if (need > st->lookback_bytes) {
    size_t bytes = need < 2 * st->lookback_bytes ? 2 * st->lookback_bytes : need;
    if (bytes < ((size_t)1 << 20)) bytes = (size_t)1 << 20;
    if (st->lookback) {
      PP_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream), fn);
      cudaFree(st->lookback);
      st->lookback = NULL;
      st->lookback_bytes = 0;
    }
    cudaError_t e = pp_alloc_fails(PP_ALLOC_DEVICE) ? cudaErrorMemoryAllocation : cudaMalloc(&st->lookback, bytes);
    if (e != cudaSuccess) {
      st->lookback = NULL;
      return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
    }
    st->lookback_bytes = bytes;
    st->lookback_epoch = 0;
    PP_CUDA_TRY(ctx, cudaMemsetAsync(st->lookback, 0, bytes, st->stream), fn);
  }
  if (++st->lookback_epoch >= PP_DESC_EPOCH_LIMIT) { /* every status word could now be ambiguous */
    PP_CUDA_TRY(ctx, cudaMemsetAsync(st->lookback, 0, st->lookback_bytes, st->stream), fn);
    st->lookback_epoch = 1;
  }
  *counter = (unsigned *)st->lookback;
  *descs = (char *)st->lookback + PP_LOOKBACK_HEADER;
  *epoch = st->lookback_epoch;
  return PP_OK;
}

static bool aligned16(const void *a, const void *b) {
  return (((uintptr_t)a | (uintptr_t)b) & 15u) == 0;
}

/* The carry of dist_scan_from (host memory): a double for f32 SUM, else one element. */
template <typename Op>
static typename Op::Carry read_carry(const void *carry) {
  typedef typename Op::Elem T;
  typedef typename Op::Carry C;
  if constexpr (std::is_same<T, float>::value && std::is_same<C, double>::value) {
    double d;
    memcpy(&d, carry, sizeof d);
    return d;
  } else {
    T v;
    memcpy(&v, carry, sizeof v);
    return C(v);
  }
}

template <typename Op>
static pp_status launch_scan(pp_context *ctx, const void *in, void *out, size_t n,
                             bool inclusive, const void *carry) {
  typedef typename Op::Elem T;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tile = TILE_BYTES(SCAN_VECS) / sizeof(T), tiles = pp_ceil_div(n, tile);
  void *descs;
  unsigned *counter;
  uint32_t epoch;
  pp_status s = lookback_begin(ctx, "pp_scan", tiles, &descs, &counter, &epoch);
  if (s != PP_OK) return s;
  size_t grid = tiles;
  if (carry)
    scan_kernel<Op, true><<<(unsigned)grid, SCAN_THREADS, 0, st->stream>>>(
        (const T *)in, (T *)out, n, tiles, aligned16(in, out), inclusive, descs, counter, epoch,
        read_carry<Op>(carry));
  else
    scan_kernel<Op, false><<<(unsigned)grid, SCAN_THREADS, 0, st->stream>>>(
        (const T *)in, (T *)out, n, tiles, aligned16(in, out), inclusive, descs, counter, epoch,
        typename Op::Carry());
  PP_CUDA_LAUNCHED(ctx, "pp_scan");
  return PP_OK;
}

template <typename T, typename SumL, typename SumC>
static pp_status scan_typed(pp_context *ctx, pp_op op, const void *in, void *out, size_t n,
                            bool inclusive, const void *carry) {
  switch (op) {
  case PP_SUM: return launch_scan<scan_sum<T, SumL, SumC>>(ctx, in, out, n, inclusive, carry);
  case PP_MIN: return launch_scan<scan_minmax<T, true>>(ctx, in, out, n, inclusive, carry);
  case PP_MAX: return launch_scan<scan_minmax<T, false>>(ctx, in, out, n, inclusive, carry);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_scan: op (%d)", (int)op);
}

/* dist_scan_from of the backend table (internal.h); carry NULL is pp_scan. */
pp_status pp_cuda_scan_from(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                            size_t n, bool inclusive, const void *carry) {
  if (n == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, "pp_scan"));
  return pp_by_dtype(ctx, "pp_scan", t, [&](auto x) {
    typedef decltype(x) T;
    typedef typename pp_sum_acc<T>::type A;
    return scan_typed<T, A, A>(ctx, op, in, out, n, inclusive, carry);
  });
}

pp_status pp_cuda_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                       size_t n, bool inclusive) {
  return pp_cuda_scan_from(ctx, op, t, in, out, n, inclusive, NULL);
}

template <typename T>
static cmp_pred<T> make_pred(pp_cmp cmp, const void *value) {
  cmp_pred<T> pred;
  memcpy(&pred.value, value, sizeof(T)); /* value is host memory (API.md) */
  pred.accept = accept_set(cmp);
  return pred;
}

template <typename T>
static pp_status select_typed(pp_context *ctx, const void *in, size_t n, pp_cmp cmp,
                              const void *value, void *out, uint64_t *count) {
  static const char fn[] = "pp_select";
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tiles = pp_ceil_div(n, TILE_BYTES(SELECT_VECS) / sizeof(T));
  /* the look-back state first: it may need an allocation, and a failed call must not have
     written the count yet */
  void *descs = NULL;
  unsigned *counter = NULL;
  uint32_t epoch = 0;
  pp_status s = lookback_begin(ctx, fn, tiles, &descs, &counter, &epoch);
  if (s != PP_OK) return s;
  select_kernel<T><<<(unsigned)tiles, SCAN_THREADS, 0, st->stream>>>(
      (const T *)in, n, make_pred<T>(cmp, value), (T *)out, count, tiles, aligned16(in, in),
      descs, counter, epoch);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

/* The chunks of a partition (see part_count_kernel): one per warp of a full wave of
 * placing blocks, as many as the scratch's partials hold at most with a block end for
 * every PART_WARPS of them. */
#define PART_MAX_CHUNKS                                                                      \
  ((PP_CUDA_SCRATCH_BYTES - PP_SCRATCH_PARTIALS) / sizeof(unsigned long long) /            \
   (PART_WARPS + 1) * PART_WARPS)

template <typename T>
static pp_status partition_typed(pp_context *ctx, const void *in, size_t n, pp_cmp cmp,
                                 const void *value, void *out, uint64_t *count_true) {
  typedef ival_pred<T> Pred;
  static pp_fit_cache fit;
  pp_cuda_state *st = pp_cuda(ctx);
  const int per_sm = pp_fit_blocks(st, &fit, part_place_kernel<T, Pred>, SCAN_THREADS, 0,
                                   PP_PARTITION_MIN_BLOCKS);
  const size_t subs = pp_ceil_div(n, part_shape<T>::SUB);
  size_t wave = (size_t)per_sm * (size_t)st->sm_count * PART_WARPS;
  if (wave > PART_MAX_CHUNKS) wave = PART_MAX_CHUNKS;
  if (wave < 1) wave = 1;
  const size_t chunk_subs = pp_ceil_div(subs, wave);
  const size_t chunks = pp_ceil_div(subs, chunk_subs); /* at most wave, none empty */
  /* the placing pass counts subtiles in 32 bits, up to a chunk past the last one */
  if (subs + chunk_subs > (size_t)UINT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                   "pp_partition: n needs %zu subtiles of %d elements, more than 32-bit "
                   "indices hold", subs, part_shape<T>::SUB);
  const unsigned blocks = (unsigned)pp_ceil_div(chunks, PART_WARPS);
  const Pred pred = make_ival<T>(cmp, value);
  const bool aligned = aligned16(in, in);
  char *scratch = (char *)st->scratch;
  unsigned long long *chunk_count = (unsigned long long *)(scratch + PP_SCRATCH_PARTIALS);
  unsigned long long *block_end = chunk_count + chunks; /* blocks <= chunks / PART_WARPS + 1 */
  part_count_kernel<T, Pred><<<blocks, SCAN_THREADS, 0, st->stream>>>(
      (const T *)in, n, pred, aligned, chunk_subs, (unsigned)chunks, chunk_count, block_end,
      count_true,
      (unsigned *)(scratch + PP_SCRATCH_COUNTER));
  PP_CUDA_LAUNCHED(ctx, "pp_partition");
  static pp_pdl_cache dependent;
  PP_CUDA_TRY(ctx,
              pp_launch_dependent(st, &dependent, part_place_kernel<T, Pred>, blocks,
                                  SCAN_THREADS, (const T *)in, n, pred, (T *)out, count_true,
                                  chunk_count, block_end, chunk_subs, (unsigned)chunks,
                                  aligned),
              "pp_partition");
  return PP_OK;
}

static pp_status select_like(pp_context *ctx, const char *fn, bool partition, pp_dtype t,
                             const void *in, size_t n, pp_cmp cmp, const void *value, void *out,
                             uint64_t *count) {
  PP_TRY(pp_cuda_use_device(ctx, fn));
  if (n == 0) {
    PP_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, sizeof *count, pp_cuda(ctx)->stream), fn);
    return PP_OK;
  }
  return pp_by_dtype(ctx, fn, t, [&](auto x) {
    typedef decltype(x) T;
    return partition ? partition_typed<T>(ctx, in, n, cmp, value, out, count)
                     : select_typed<T>(ctx, in, n, cmp, value, out, count);
  });
}

pp_status pp_cuda_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                         const void *value, void *out, uint64_t *count) {
  return select_like(ctx, "pp_select", false, t, in, n, cmp, value, out, count);
}

pp_status pp_cuda_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                            const void *value, void *out, uint64_t *count_true) {
  return select_like(ctx, "pp_partition", true, t, in, n, cmp, value, out, count_true);
}

template <typename W, int V>
static pp_status launch_flagged_tiles(pp_context *ctx, size_t elem_size, const void *in,
                                      const uint8_t *flags, size_t n, void *out,
                                      uint64_t *count) {
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t tiles = pp_ceil_div(n, (size_t)TILE_BYTES(V));
  void *descs;
  unsigned *counter;
  uint32_t epoch;
  pp_status s = lookback_begin(ctx, "pp_select_flagged", tiles, &descs, &counter, &epoch);
  if (s != PP_OK) return s;
  const size_t smem = TILE_BYTES(V) * sizeof(uint16_t);
  static pp_fit_cache fit;
  PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, flagged_kernel<W, V>, smem), "pp_select_flagged");
  flagged_kernel<W, V><<<(unsigned)tiles, SCAN_THREADS, smem, st->stream>>>(
      (const W *)in, elem_size / sizeof(W), flags, n, (W *)out, count, tiles,
      aligned16(flags, flags), descs, counter, epoch);
  PP_CUDA_LAUNCHED(ctx, "pp_select_flagged");
  return PP_OK;
}

/* The tile: PP_FLAG_VECS vectors of flags per thread when that still gives every SM
 * PP_FLAG_TILES_PER_SM tiles, else half or a quarter of that (at least one vector). */
template <typename W>
static pp_status launch_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  constexpr int V2 = FLAG_VECS / 2 > 0 ? FLAG_VECS / 2 : 1, V4 = V2 / 2 > 0 ? V2 / 2 : 1;
  const size_t want = (size_t)pp_cuda(ctx)->sm_count * PP_FLAG_TILES_PER_SM;
  if (pp_ceil_div(n, (size_t)TILE_BYTES(FLAG_VECS)) >= want)
    return launch_flagged_tiles<W, FLAG_VECS>(ctx, elem_size, in, flags, n, out, count);
  if (pp_ceil_div(n, (size_t)TILE_BYTES(V2)) >= want)
    return launch_flagged_tiles<W, V2>(ctx, elem_size, in, flags, n, out, count);
  return launch_flagged_tiles<W, V4>(ctx, elem_size, in, flags, n, out, count);
}

pp_status pp_cuda_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                 const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  static const char fn[] = "pp_select_flagged";
  PP_TRY(pp_cuda_use_device(ctx, fn));
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
