/* sort_quick.cu — pp_sort with PP_SORT_QUICK on the GPU: a stable quicksort whose recursion
 * is driven from the device with dynamic parallelism (CDP2, CUDA 12 and later: no
 * device-side cudaDeviceSynchronize; children go to cudaStreamFireAndForget and
 * cudaStreamTailLaunch).
 *
 * Keys are compared as unsigned images (sort.cuh: floats, signed, descending); the stored
 * bits are what moves, values beside their keys.
 *
 * Stable three-way partition. A segment [start, start+len) is split around a pivot P into
 * the keys below P, equal to P and above P, each part in input order, written to the other
 * of two buffers (the caller's and one scratch buffer of n keys and n values): buffers
 * ping-pong by level, so level L's segments always live in buffer L % 2. Keys equal to P
 * are final after their partition: in the caller's buffer at once on odd levels, copied
 * there later (a COPY item) on even ones. Runs of equal keys are thus done in one step,
 * which keeps all-equal and few-distinct inputs O(n log n).
 * Each partition is block-cooperative and takes two passes over the keys, because a
 * stable three-way split must know where the parts begin before it writes anything:
 *   quick_count_kernel     per tile of QK_TILE keys: how many are below / equal to P
 *                          (ballots and a block reduction), then the tile's exclusive
 *                          prefix within its segment by decoupled look-back over the
 *                          earlier tiles of the segment; the last tile knows the totals;
 *   quick_partition_kernel per tile: each key's rank in its part from ballots and a block
 *                          scan, the keys (then the values) regrouped by part in shared
 *                          memory and written as three contiguous runs.
 * One count and one partition launch serve all segments of a level (tiles of all
 * segments are handed out in one sequence), so a level costs two launches however many
 * segments it has.
 *
 * Recursion on the device. The block that finishes a segment's last tile "emits" its two
 * children: a child of more than QK_SMALL keys becomes a segment of the next level (its
 * pivot the median of 32 stratified random samples, its tiles appended to the next
 * level's tile list); a smaller one becomes a LEAF item. The last block of the level's
 * partition grid then launches the next level: its count kernel into the fire-and-forget
 * stream and its partition kernel as a tail launch, which the device runtime starts only
 * once the launching grid and all its fire-and-forget work (that count kernel) are done.
 * The grid sizes come from the device: the host never learns how deep the recursion went.
 *
 * Depth limit and fallbacks. Every level nests one grid deeper, and CDP allows 24 levels
 * of nesting, so the recursion stops at PP_QUICK_MAX_LEVELS: a segment still larger than
 * QK_SMALL becomes a BIG item, sorted by one block (shared-memory sorts of QK_SMALL-key
 * chunks, then stable merge passes in global memory). A device-side launch that fails
 * (pending-launch pool full, nesting refused) turns the next level's segments into BIG
 * items too, so the result never depends on a launch succeeding.
 *
 * Leaves. After the recursion, in stream order (a grid completes only when its tail launch
 * and fire-and-forget work have), one host-launched kernel works through the item list:
 * LEAF: one block sorts up to QK_SMALL keys in shared memory (a stable odd-even
 * transposition sort of 8 keys per thread, then merge-path merges), COPY: a final run of
 * equal keys moved from scratch, BIG: the fallback above.
 *
 * Memory: the caller's arrays, one scratch copy of keys and values, and bookkeeping of a
 * few bytes per key (segments, tiles and items, bounded in quick_plan).
 */
#include "sort.cuh"

/* ---- tuning ----------------------------------------------------------------------------- */
#define QK_THREADS 256                   /* count and partition blocks */
#define QK_ITEMS 16                      /* keys per thread in a tile */
#define QK_TILE (QK_THREADS * QK_ITEMS)  /* 4096; tile counts must fit 15 bits (status word) */
#define QK_LEAF_THREADS 512              /* leaf block */
#define QK_LEAF_ITEMS 8                  /* keys per thread in a leaf sort; a power of two */
#define QK_SMALL (QK_LEAF_THREADS * QK_LEAF_ITEMS) /* 4096: the most keys a leaf sorts */
#define QK_ROOT_THREADS 1024             /* the root block writes the first level's tiles */
#define QK_SAMPLES 32                    /* pivot: median of one warp's samples */
#define QK_COPY_CHUNK 65536              /* keys per COPY item: spreads a long run over blocks */
/* Levels of the device recursion: PP_QUICK_MAX_LEVELS (tuning.h). */

static_assert(QK_TILE < (1 << 15), "a tile's counts are packed in 15-bit fields");
static_assert(QK_SMALL <= 65536, "leaf indices are 16-bit");
static_assert((QK_LEAF_ITEMS & (QK_LEAF_ITEMS - 1)) == 0, "merge widths are powers of two");

enum quick_item_kind { ITEM_LEAF = 0, ITEM_COPY = 1, ITEM_BIG = 2 };

struct quick_segment {
  unsigned long long start, len;
  unsigned long long pivot;    /* the pivot's key image, widened */
  unsigned long long total_lt; /* keys below / equal to the pivot: from the count kernel */
  unsigned long long total_eq;
  unsigned tile_base;          /* its first tile in its level's tile list */
  unsigned tiles_done;         /* partition tiles finished; the last one emits the children */
};

struct quick_item {
  unsigned long long start, len;
  unsigned kind;   /* quick_item_kind */
  unsigned parity; /* the buffer holding the keys: 0 the caller's, 1 scratch */
};

struct quick_level {
  unsigned nseg;        /* segments appended */
  unsigned ntiles;      /* tiles appended */
  unsigned count_next;  /* next tile for the count kernel (hand-out order = look-back order) */
  unsigned part_next;   /* next tile for the partition kernel */
  unsigned blocks_done; /* partition blocks finished: the last one launches the next level */
};

/* Zeroed by one memset before the root kernel: nothing else needs clearing. */
struct quick_header {
  quick_level level[PP_QUICK_MAX_LEVELS + 1];
  unsigned long long nitems;    /* items appended */
  unsigned long long item_next; /* next item for the leaf kernel */
};

/* Everything a kernel of the sort needs, passed by value from grid to grid. Per-level
 * arrays come in two copies: level L uses copy L % 2 while emitting into the other. */
template <typename U, typename V>
struct quick_args {
  U *keys[2];
  V *vals[2]; /* NULL for keys only */
  quick_header *hdr;
  quick_segment *seg[2];
  unsigned *tile_seg[2]; /* tile -> its segment */
  unsigned *status[2];   /* look-back words, see below */
  unsigned long long *excl_lt[2], *excl_eq[2]; /* a tile's prefix within its segment */
  quick_item *items;
  unsigned long long n;
  pp_key_order<U> order;
  unsigned count_blocks, part_blocks; /* grid caps (resident blocks) for device launches */
};

/* ---- small device helpers ------------------------------------------------------------ */

/* Loads through L2 only: data and bookkeeping written by other blocks of the launching
 * grid must not be served from a stale L1 line. */
__device__ __forceinline__ uint8_t qk_ldcg(const uint8_t *p) { return __ldcg(p); }
__device__ __forceinline__ uint32_t qk_ldcg(const uint32_t *p) { return __ldcg(p); }
__device__ __forceinline__ uint64_t qk_ldcg(const uint64_t *p) {
  return __ldcg((const unsigned long long *)p);
}

template <typename U>
__device__ __forceinline__ U qk_shfl(U v, int src) {
  if constexpr (sizeof(U) == 8)
    return (U)__shfl_sync(0xffffffffu, (unsigned long long)v, src);
  else
    return (U)__shfl_sync(0xffffffffu, (unsigned)v, src);
}

__device__ __forceinline__ unsigned long long qk_mix(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned qk_lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

/* ---- look-back status word of a count tile -------------------------------------------
 *   bits 31..30  0 nothing yet, AGG: the tile's own counts, INCL: its prefix is published
 *   bits 29..15  keys of the tile below the pivot; bits 14..0 keys equal to it
 * A tile's own counts fit the word, so publishing them is one relaxed store. Its prefix
 * (64-bit, segments may exceed 2^32 keys) goes to excl_lt/excl_eq, then a release store
 * of INCL; a reader that acquires INCL reads the prefix after it. */
#define QK_FLAG_AGG (pp_status_word<uint32_t>::AGGREGATE)
#define QK_FLAG_INCL (pp_status_word<uint32_t>::INCLUSIVE)

template <typename U, typename V>
__device__ __forceinline__ void quick_append_item(const quick_args<U, V> &a, unsigned long long start,
                                                  unsigned long long len, unsigned kind, unsigned parity) {
  const unsigned long long i = atomicAdd(&a.hdr->nitems, 1ull);
  quick_item it;
  it.start = start;
  it.len = len;
  it.kind = kind;
  it.parity = parity;
  a.items[i] = it;
}

/* A child segment [start, start+len) of level `level`, its keys in buffer level % 2: a new
 * segment of that level, a LEAF or a BIG item. Called by every thread of the block with
 * the same arguments. */
template <typename U, typename V>
__device__ void quick_emit(const quick_args<U, V> &a, unsigned level, unsigned long long start,
                           unsigned long long len) {
  __shared__ unsigned s_slot, s_base;
  const unsigned parity = level & 1;
  if (len == 0) return;
  if (len <= QK_SMALL || level >= PP_QUICK_MAX_LEVELS) {
    /* one key already in the caller's buffer is in its final place */
    if (threadIdx.x == 0 && !(len == 1 && parity == 0))
      quick_append_item(a, start, len, len <= QK_SMALL ? ITEM_LEAF : ITEM_BIG, parity);
    return;
  }
  const unsigned tiles = (unsigned)((len + QK_TILE - 1) / QK_TILE);
  if (threadIdx.x < PP_WARP) {
    /* one sample from each 32nd of the segment, at a hashed place in it: sorted and
     * reversed inputs get a near-exact median, and only keys placed against this very
     * hash (tests/test_sort_quick.c's median killer) make every split lopsided */
    const unsigned lane = threadIdx.x;
    const unsigned long long r =
        qk_mix(start ^ (len << 21) ^ ((unsigned long long)level << 58) ^ lane) % len;
    const unsigned long long pos = start + ((unsigned long long)lane * len + r) / QK_SAMPLES;
    const U v = pp_key_image(qk_ldcg(a.keys[parity] + pos), a.order);
    unsigned rank = 0;
#pragma unroll
    for (int j = 0; j < PP_WARP; j++) {
      const U o = qk_shfl(v, j);
      rank += (o < v) || (o == v && (unsigned)j < lane);
    }
    const unsigned who = __ballot_sync(0xffffffffu, rank == QK_SAMPLES / 2);
    const U pivot = qk_shfl(v, __ffs(who) - 1);
    if (lane == 0) {
      const unsigned slot = atomicAdd(&a.hdr->level[level].nseg, 1u);
      const unsigned base = atomicAdd(&a.hdr->level[level].ntiles, tiles);
      quick_segment s;
      s.start = start;
      s.len = len;
      s.pivot = (unsigned long long)pivot;
      s.total_lt = 0;
      s.total_eq = 0;
      s.tile_base = base;
      s.tiles_done = 0;
      a.seg[parity][slot] = s;
      s_slot = slot;
      s_base = base;
    }
  }
  __syncthreads();
  const unsigned slot = s_slot, base = s_base;
  for (unsigned t = threadIdx.x; t < tiles; t += blockDim.x) {
    a.tile_seg[parity][base + t] = slot;
    a.status[parity][base + t] = 0;
  }
  __syncthreads(); /* s_slot and s_base are reused by the next emit */
}

/* ---- the first level ------------------------------------------------------------------- */

template <typename U, typename V>
__global__ void __launch_bounds__(QK_ROOT_THREADS) quick_root_kernel(quick_args<U, V> a) {
  quick_emit(a, 0, 0, a.n);
}

/* ---- count pass -------------------------------------------------------------------------- */

/* Where a tile lies: its segment and its index within the segment. */
struct quick_tile_pos {
  unsigned long long start, len, pivot, off;
  unsigned tile, seg, local, tiles;
  unsigned cnt; /* keys in the tile: QK_TILE, or fewer in the segment's last */
};

template <typename U, typename V>
__device__ __forceinline__ quick_tile_pos quick_locate(const quick_args<U, V> &a, unsigned parity,
                                                       unsigned tile) {
  quick_tile_pos t;
  t.tile = tile;
  t.seg = qk_ldcg(a.tile_seg[parity] + tile);
  const quick_segment *s = a.seg[parity] + t.seg;
  t.start = qk_ldcg((const uint64_t *)&s->start);
  t.len = qk_ldcg((const uint64_t *)&s->len);
  t.pivot = qk_ldcg((const uint64_t *)&s->pivot);
  t.local = tile - qk_ldcg(&s->tile_base);
  t.off = (unsigned long long)t.local * QK_TILE;
  t.tiles = (unsigned)((t.len + QK_TILE - 1) / QK_TILE);
  const unsigned long long rest = t.len - t.off;
  t.cnt = rest < QK_TILE ? (unsigned)rest : QK_TILE;
  return t;
}

/* The block's next tile of the level from the level's counter *next (thread 0 draws it,
 * the block reads it from s_tile after a barrier) into *t; false when none is left. */
template <typename U, typename V>
__device__ __forceinline__ bool quick_next_tile(const quick_args<U, V> &a, unsigned parity,
                                                unsigned *next, unsigned ntiles, unsigned &s_tile,
                                                quick_tile_pos *t) {
  if (threadIdx.x == 0) s_tile = atomicAdd(next, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  if (tile >= ntiles) return false;
  *t = quick_locate(a, parity, tile);
  return true;
}

template <typename U, typename V>
__global__ void __launch_bounds__(QK_THREADS) quick_count_kernel(quick_args<U, V> a, unsigned level) {
  constexpr int WARPS = QK_THREADS / PP_WARP;
  __shared__ unsigned s_tile;
  __shared__ unsigned s_warp[WARPS];
  const unsigned p = level & 1, tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  quick_level *lv = &a.hdr->level[level];
  const unsigned ntiles = qk_ldcg(&lv->ntiles);
  for (;;) {
    quick_tile_pos t;
    if (!quick_next_tile(a, p, &lv->count_next, ntiles, s_tile, &t)) break;
    const U *src = a.keys[p] + t.start + t.off;
    const U piv = (U)t.pivot;
    unsigned packed = 0; /* below | equal << 16 */
#pragma unroll
    for (int k = 0; k < QK_ITEMS; k++) {
      const unsigned i = k * QK_THREADS + tid;
      if (i < t.cnt) {
        const U img = pp_key_image(qk_ldcg(src + i), a.order);
        packed += (img < piv) + ((unsigned)(img == piv) << 16);
      }
    }
#pragma unroll
    for (int d = PP_WARP / 2; d > 0; d /= 2) packed += __shfl_xor_sync(0xffffffffu, packed, d);
    if (lane == 0) s_warp[warp] = packed;
    __syncthreads();
    if (warp == 0) {
      unsigned agg = lane < WARPS ? s_warp[lane] : 0;
#pragma unroll
      for (int d = PP_WARP / 2; d > 0; d /= 2) agg += __shfl_xor_sync(0xffffffffu, agg, d);
      const unsigned own_lt = agg & 0xffffu, own_eq = agg >> 16;
      const unsigned word = (own_lt << 15) | own_eq;
      unsigned long long pre_lt = 0, pre_eq = 0;
      if (t.local > 0) {
        if (lane == 0) pp_st_relaxed(a.status[p] + t.tile, QK_FLAG_AGG | word);
        const long long first = (long long)t.tile - t.local; /* the segment's first tile */
        long long look = (long long)t.tile - 1;
        for (;;) {
          const long long tt = look - lane;
          /* past the segment's first tile (which always publishes INCL) nothing is read */
          const unsigned w = tt >= first ? pp_ld_acquire(a.status[p] + tt) : QK_FLAG_INCL;
          const unsigned incl = __ballot_sync(0xffffffffu, (w >> 30) == 2);
          const unsigned none = __ballot_sync(0xffffffffu, (w >> 30) == 0);
          /* the lanes that matter: up to and including the nearest INCL */
          const unsigned upto = incl ? ((incl & (0u - incl)) << 1) - 1u : 0xffffffffu;
          if (none & upto) {
            __nanosleep(32);
            continue;
          }
          unsigned long long lt = 0, eq = 0;
          if ((upto >> lane) & 1u) {
            lt = (w >> 15) & 0x7fffu;
            eq = w & 0x7fffu;
            if ((w >> 30) == 2 && tt >= first) {
              lt += pp_ld_relaxed((const uint64_t *)a.excl_lt[p] + tt);
              eq += pp_ld_relaxed((const uint64_t *)a.excl_eq[p] + tt);
            }
          }
#pragma unroll
          for (int d = PP_WARP / 2; d > 0; d /= 2) {
            lt += __shfl_xor_sync(0xffffffffu, lt, d);
            eq += __shfl_xor_sync(0xffffffffu, eq, d);
          }
          pre_lt += lt;
          pre_eq += eq;
          if (incl) break;
          look -= PP_WARP;
        }
      }
      if (lane == 0) {
        a.excl_lt[p][t.tile] = pre_lt;
        a.excl_eq[p][t.tile] = pre_eq;
        pp_st_release(a.status[p] + t.tile, QK_FLAG_INCL | word);
        if (t.local == t.tiles - 1) { /* the last tile knows the segment's totals */
          quick_segment *s = a.seg[p] + t.seg;
          s->total_lt = pre_lt + own_lt;
          s->total_eq = pre_eq + own_eq;
        }
      }
    }
    __syncthreads(); /* s_tile and s_warp are rewritten by the next tile */
  }
}

/* ---- partition pass ------------------------------------------------------------------------ */

template <typename U, typename V, bool HAS_V>
__global__ void __launch_bounds__(QK_THREADS) quick_partition_kernel(quick_args<U, V> a, unsigned level);

/* The last block of a level's partition grid: start the next level, or, if the device
 * runtime refuses a launch, hand its segments to the BIG fallback. */
template <typename U, typename V, bool HAS_V>
__device__ void quick_launch_next(const quick_args<U, V> &a, unsigned level) {
  __shared__ unsigned s_failed, s_nseg;
  const unsigned next = level + 1;
  if (threadIdx.x == 0) {
    const unsigned ntiles = next < PP_QUICK_MAX_LEVELS ? qk_ldcg(&a.hdr->level[next].ntiles) : 0;
    s_nseg = ntiles ? qk_ldcg(&a.hdr->level[next].nseg) : 0;
    cudaError_t e = cudaSuccess;
    if (ntiles) {
      const unsigned gc = ntiles < a.count_blocks ? ntiles : a.count_blocks;
      const unsigned gp = ntiles < a.part_blocks ? ntiles : a.part_blocks;
      quick_count_kernel<U, V><<<gc, QK_THREADS, 0, cudaStreamFireAndForget>>>(a, next);
      e = cudaGetLastError();
      /* the tail launch starts after this grid and the count kernel above are complete */
      if (e == cudaSuccess) {
        quick_partition_kernel<U, V, HAS_V><<<gp, QK_THREADS, 0, cudaStreamTailLaunch>>>(a, next);
        e = cudaGetLastError();
      }
    }
    s_failed = e != cudaSuccess;
  }
  __syncthreads();
  if (s_failed) {
    const unsigned q = next & 1;
    for (unsigned i = threadIdx.x; i < s_nseg; i += blockDim.x) {
      const quick_segment *s = a.seg[q] + i;
      quick_append_item(a, qk_ldcg((const uint64_t *)&s->start), qk_ldcg((const uint64_t *)&s->len),
                        ITEM_BIG, q);
    }
  }
}

template <typename U, typename V, bool HAS_V>
__global__ void __launch_bounds__(QK_THREADS) quick_partition_kernel(quick_args<U, V> a, unsigned level) {
  constexpr int WARPS = QK_THREADS / PP_WARP;
  constexpr int SCAN = QK_ITEMS * WARPS; /* one count per (item row, warp), in key order */
  static_assert(SCAN % PP_WARP == 0, "the scan gives each lane whole entries");
  constexpr size_t STAGE = sizeof(U) > sizeof(V) ? sizeof(U) : sizeof(V);
  __shared__ __align__(16) unsigned char s_stage[QK_TILE * STAGE];
  __shared__ unsigned s_cnt[SCAN];
  __shared__ unsigned s_tile, s_total, s_flag;
  U *const s_keys = reinterpret_cast<U *>(s_stage);
  V *const s_vals = reinterpret_cast<V *>(s_stage);
  const unsigned p = level & 1, q = p ^ 1;
  const unsigned tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  const unsigned below = qk_lanemask_lt();
  quick_level *lv = &a.hdr->level[level];
  const unsigned ntiles = qk_ldcg(&lv->ntiles);

  for (;;) {
    quick_tile_pos t;
    if (!quick_next_tile(a, p, &lv->part_next, ntiles, s_tile, &t)) break;
    const U piv = (U)t.pivot;
    const unsigned long long base = t.start + t.off;

    /* classes: 0 below, 1 equal, 2 above the pivot, 3 past the tile's end */
    U raw[QK_ITEMS];
    unsigned cls[QK_ITEMS], before[QK_ITEMS];
#pragma unroll
    for (int k = 0; k < QK_ITEMS; k++) {
      const unsigned i = k * QK_THREADS + tid;
      cls[k] = 3;
      raw[k] = 0;
      if (i < t.cnt) {
        raw[k] = qk_ldcg(a.keys[p] + base + i);
        const U img = pp_key_image(raw[k], a.order);
        cls[k] = img < piv ? 0 : img == piv ? 1 : 2;
      }
      const unsigned blt = __ballot_sync(0xffffffffu, cls[k] == 0);
      const unsigned beq = __ballot_sync(0xffffffffu, cls[k] == 1);
      before[k] = __popc(blt & below) | (__popc(beq & below) << 16);
      if (lane == 0) s_cnt[k * WARPS + warp] = __popc(blt) | (__popc(beq) << 16);
    }
    __syncthreads();
    if (warp == 0) { /* exclusive scan of the packed counts, SCAN / 32 entries per lane */
      constexpr int PER = SCAN / PP_WARP;
      unsigned v[PER], sum = 0;
#pragma unroll
      for (int e = 0; e < PER; e++) {
        v[e] = s_cnt[lane * PER + e];
        sum += v[e];
      }
      unsigned incl = sum;
#pragma unroll
      for (int d = 1; d < PP_WARP; d *= 2) {
        const unsigned y = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= (unsigned)d) incl += y;
      }
      unsigned run = incl - sum;
#pragma unroll
      for (int e = 0; e < PER; e++) {
        s_cnt[lane * PER + e] = run;
        run += v[e];
      }
      if (lane == PP_WARP - 1) s_total = incl;
    }
    __syncthreads();
    const unsigned tile_lt = s_total & 0xffffu, tile_eq = s_total >> 16;
    unsigned dest[QK_ITEMS];
#pragma unroll
    for (int k = 0; k < QK_ITEMS; k++) {
      const unsigned pre = s_cnt[k * WARPS + warp] + before[k];
      const unsigned lt_before = pre & 0xffffu, eq_before = pre >> 16;
      const unsigned pos = k * QK_THREADS + tid;
      dest[k] = cls[k] == 0   ? lt_before
                : cls[k] == 1 ? tile_lt + eq_before
                              : tile_lt + tile_eq + (pos - lt_before - eq_before);
      if (cls[k] != 3) s_keys[dest[k]] = raw[k];
    }
    /* where the three runs of this tile go */
    const unsigned long long ex_lt = qk_ldcg((const uint64_t *)a.excl_lt[p] + t.tile);
    const unsigned long long ex_eq = qk_ldcg((const uint64_t *)a.excl_eq[p] + t.tile);
    const quick_segment *seg = a.seg[p] + t.seg;
    const unsigned long long tot_lt = qk_ldcg((const uint64_t *)&seg->total_lt);
    const unsigned long long tot_eq = qk_ldcg((const uint64_t *)&seg->total_eq);
    const unsigned long long at_lt = t.start + ex_lt;
    const unsigned long long at_eq = t.start + tot_lt + ex_eq - tile_lt;
    const unsigned long long at_gt =
        t.start + tot_lt + tot_eq + (t.off - ex_lt - ex_eq) - tile_lt - tile_eq;
    __syncthreads();
    for (unsigned i = tid; i < t.cnt; i += QK_THREADS) {
      const unsigned long long g = i < tile_lt ? at_lt + i : i < tile_lt + tile_eq ? at_eq + i : at_gt + i;
      a.keys[q][g] = s_keys[i];
    }
    if constexpr (HAS_V) {
      __syncthreads(); /* the staging area now takes the values */
#pragma unroll
      for (int k = 0; k < QK_ITEMS; k++)
        if (cls[k] != 3) s_vals[dest[k]] = qk_ldcg(a.vals[p] + base + k * QK_THREADS + tid);
      __syncthreads();
      for (unsigned i = tid; i < t.cnt; i += QK_THREADS) {
        const unsigned long long g = i < tile_lt ? at_lt + i : i < tile_lt + tile_eq ? at_eq + i : at_gt + i;
        a.vals[q][g] = s_vals[i];
      }
    }

    /* the block that finishes a segment's last tile emits its children */
    __syncthreads();
    if (tid == 0) {
      __threadfence(); /* this tile's keys are visible before the ticket */
      s_flag = atomicAdd(&a.seg[p][t.seg].tiles_done, 1u) == t.tiles - 1;
    }
    __syncthreads();
    if (s_flag) {
      __threadfence(); /* and the other tiles' keys are seen after it */
      quick_emit(a, level + 1, t.start, tot_lt);
      if (q == 1 && tot_eq) { /* the equal run is final but in scratch: a COPY later */
        const unsigned long long chunks = (tot_eq + QK_COPY_CHUNK - 1) / QK_COPY_CHUNK;
        for (unsigned long long c = tid; c < chunks; c += QK_THREADS) {
          const unsigned long long off = c * QK_COPY_CHUNK;
          const unsigned long long len = tot_eq - off < QK_COPY_CHUNK ? tot_eq - off : QK_COPY_CHUNK;
          quick_append_item(a, t.start + tot_lt + off, len, ITEM_COPY, 1u);
        }
      }
      quick_emit(a, level + 1, t.start + tot_lt + tot_eq, t.len - tot_lt - tot_eq);
    }
    __syncthreads(); /* shared memory is reused by the next tile */
  }

  if (tid == 0) {
    __threadfence();
    s_flag = atomicAdd(&lv->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (s_flag) {
    __threadfence();
    quick_launch_next<U, V, HAS_V>(a, level);
  }
}

/* ---- leaves: sorts in one block --------------------------------------------------------- */

/* Shared memory of a leaf block: two buffers of images and of 16-bit indices. */
template <typename U>
constexpr size_t quick_leaf_smem() {
  return 2 * (size_t)QK_SMALL * sizeof(U) + 2 * (size_t)QK_SMALL * sizeof(unsigned short);
}

/* Stable sort of m <= QK_SMALL keys (and values) from src to dst at [start, start+m); src
 * and dst may be the same buffer. Images are sorted with their index in the chunk: an odd-
 * even transposition sort of each thread's QK_LEAF_ITEMS (adjacent swaps only, so stable),
 * then merge-path merges of runs of doubling width; then keys and values are gathered by
 * index. Padding past m has the largest image and the largest indices, so it stays behind
 * every real key. Every thread of the block calls it. */
template <typename U, typename V, bool HAS_V>
__device__ void quick_block_sort(const U *src_k, const V *src_v, U *dst_k, V *dst_v,
                                 unsigned long long start, unsigned m, pp_key_order<U> order,
                                 unsigned char *smem) {
  constexpr unsigned T = QK_LEAF_THREADS, I = QK_LEAF_ITEMS;
  /* buffer c of images at img + c * QK_SMALL, of indices at ix + c * QK_SMALL */
  U *const img = reinterpret_cast<U *>(smem);
  unsigned short *const ix = reinterpret_cast<unsigned short *>(smem + 2 * (size_t)QK_SMALL * sizeof(U));
  const unsigned tid = threadIdx.x;
  unsigned padded = I;
  while (padded < m) padded *= 2;
  for (unsigned i = tid; i < padded; i += T) {
    img[i] = i < m ? pp_key_image(src_k[start + i], order) : (U)~(U)0;
    ix[i] = (unsigned short)i;
  }
  __syncthreads();
  const unsigned o0 = tid * I;
  if (o0 < padded) {
    U k[I];
    unsigned short x[I];
#pragma unroll
    for (unsigned e = 0; e < I; e++) {
      k[e] = img[o0 + e];
      x[e] = ix[o0 + e];
    }
#pragma unroll
    for (unsigned r = 0; r < I; r++) {
#pragma unroll
      for (unsigned e = r & 1; e + 1 < I; e += 2) {
        if (k[e] > k[e + 1]) {
          const U tk = k[e];
          k[e] = k[e + 1];
          k[e + 1] = tk;
          const unsigned short tx = x[e];
          x[e] = x[e + 1];
          x[e + 1] = tx;
        }
      }
    }
#pragma unroll
    for (unsigned e = 0; e < I; e++) {
      img[o0 + e] = k[e];
      ix[o0 + e] = x[e];
    }
  }
  __syncthreads();
  unsigned cur = 0;
  for (unsigned w = I; w < padded; w *= 2) {
    if (o0 < padded) {
      const unsigned b = o0 & ~(2 * w - 1), diag = o0 - b;
      const U *A = img + cur * QK_SMALL + b, *B = A + w;
      const unsigned short *XA = ix + cur * QK_SMALL + b, *XB = XA + w;
      /* how many of the first diag outputs come from A; A first on ties */
      unsigned lo = diag > w ? diag - w : 0, hi = diag < w ? diag : w;
      while (lo < hi) {
        const unsigned mid = (lo + hi) / 2;
        if (A[mid] <= B[diag - 1 - mid])
          lo = mid + 1;
        else
          hi = mid;
      }
      unsigned i = lo, j = diag - lo;
      U *out = img + (cur ^ 1) * QK_SMALL + o0;
      unsigned short *xout = ix + (cur ^ 1) * QK_SMALL + o0;
#pragma unroll
      for (unsigned e = 0; e < I; e++) {
        const bool take_a = j >= w || (i < w && A[i] <= B[j]);
        out[e] = take_a ? A[i] : B[j];
        xout[e] = take_a ? XA[i] : XB[j];
        i += take_a;
        j += !take_a;
      }
    }
    __syncthreads();
    cur ^= 1;
  }
  U kk[I];
  V vv[I];
#pragma unroll
  for (unsigned e = 0; e < I; e++) {
    const unsigned o = e * T + tid;
    if (o < m) {
      const unsigned from = ix[cur * QK_SMALL + o];
      kk[e] = src_k[start + from];
      if (HAS_V) vv[e] = src_v[start + from];
    }
  }
  __syncthreads(); /* every read of src is done before dst (maybe the same) is written */
#pragma unroll
  for (unsigned e = 0; e < I; e++) {
    const unsigned o = e * T + tid;
    if (o < m) {
      dst_k[start + o] = kk[e];
      if (HAS_V) dst_v[start + o] = vv[e];
    }
  }
  __syncthreads(); /* shared memory is reused by the caller */
}

/* The fallback for a segment the recursion did not reduce to QK_SMALL keys: one block
 * sorts QK_SMALL-key chunks in shared memory, then merges runs of doubling width in
 * global memory, ping-ponging between the two buffers; the chunks are first written to
 * the buffer that makes the last merge land in the caller's. */
template <typename U, typename V, bool HAS_V>
__device__ void quick_big_sort(const quick_args<U, V> &a, unsigned long long start,
                               unsigned long long m, unsigned parity, unsigned char *smem) {
  constexpr unsigned T = QK_LEAF_THREADS, I = QK_LEAF_ITEMS;
  unsigned passes = 0;
  while (((unsigned long long)QK_SMALL << passes) < m) passes++;
  unsigned cur = passes & 1;
  for (unsigned long long c = 0; c < m; c += QK_SMALL) {
    const unsigned len = m - c < QK_SMALL ? (unsigned)(m - c) : QK_SMALL;
    quick_block_sort<U, V, HAS_V>(a.keys[parity], a.vals[parity], a.keys[cur], a.vals[cur], start + c,
                                  len, a.order, smem);
  }
  for (unsigned long long w = QK_SMALL; w < m; w *= 2) {
    const U *sk = a.keys[cur] + start;
    const V *sv = HAS_V ? a.vals[cur] + start : nullptr;
    U *dk = a.keys[cur ^ 1] + start;
    V *dv = HAS_V ? a.vals[cur ^ 1] + start : nullptr;
    for (unsigned long long o0 = (unsigned long long)threadIdx.x * I; o0 < m; o0 += (unsigned long long)T * I) {
      const unsigned long long b = o0 / (2 * w) * (2 * w);
      const unsigned long long a_end = b + w < m ? b + w : m, b_end = b + 2 * w < m ? b + 2 * w : m;
      const unsigned long long na = a_end - b, nb = b_end - a_end, diag = o0 - b;
      unsigned long long lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
      while (lo < hi) {
        const unsigned long long mid = (lo + hi) / 2;
        if (pp_key_image(sk[b + mid], a.order) <= pp_key_image(sk[a_end + diag - 1 - mid], a.order))
          lo = mid + 1;
        else
          hi = mid;
      }
      unsigned long long i = b + lo, j = a_end + (diag - lo);
      const unsigned outs = b_end - o0 < I ? (unsigned)(b_end - o0) : I;
      for (unsigned e = 0; e < outs; e++) {
        const bool take_a =
            j >= b_end || (i < a_end && pp_key_image(sk[i], a.order) <= pp_key_image(sk[j], a.order));
        const unsigned long long from = take_a ? i : j;
        dk[o0 + e] = sk[from];
        if (HAS_V) dv[o0 + e] = sv[from];
        i += take_a;
        j += !take_a;
      }
    }
    __syncthreads(); /* the block's writes are visible to its next pass */
    cur ^= 1;
  }
}

template <typename U, typename V, bool HAS_V>
__global__ void __launch_bounds__(QK_LEAF_THREADS) quick_leaf_kernel(quick_args<U, V> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned long long s_item;
  const unsigned long long nitems = a.hdr->nitems;
  for (;;) {
    if (threadIdx.x == 0) s_item = atomicAdd(&a.hdr->item_next, 1ull);
    __syncthreads();
    const unsigned long long idx = s_item;
    if (idx >= nitems) break;
    const quick_item it = a.items[idx];
    if (it.kind == ITEM_LEAF) {
      quick_block_sort<U, V, HAS_V>(a.keys[it.parity], a.vals[it.parity], a.keys[0], a.vals[0], it.start,
                                    (unsigned)it.len, a.order, smem);
    } else if (it.kind == ITEM_COPY) {
      for (unsigned long long i = threadIdx.x; i < it.len; i += QK_LEAF_THREADS) {
        a.keys[0][it.start + i] = a.keys[1][it.start + i];
        if (HAS_V) a.vals[0][it.start + i] = a.vals[1][it.start + i];
      }
    } else {
      quick_big_sort<U, V, HAS_V>(a, it.start, it.len, it.parity, smem);
    }
    __syncthreads(); /* s_item is rewritten */
  }
}

/* ---- host side ------------------------------------------------------------------------------ */

/* Bounds of the bookkeeping for n keys (each level's segments are disjoint and longer
 * than QK_SMALL; level L has at most 2^L of them; a finished segment appends at most two
 * LEAF/BIG items plus one COPY item per QK_COPY_CHUNK keys of its equal run, and at least
 * one key (the pivot's) is in that run). */
struct quick_plan {
  size_t seg_cap, tile_cap, item_cap;
};

static quick_plan quick_make_plan(size_t n) {
  quick_plan p;
  p.seg_cap = n / (QK_SMALL + 1) + 1;
  p.tile_cap = n / QK_TILE + p.seg_cap;
  size_t segs = 0;
  for (int d = 0; d < PP_QUICK_MAX_LEVELS; d++) {
    const size_t at_most = d < 40 ? (size_t)1 << d : p.seg_cap;
    segs += at_most < p.seg_cap ? at_most : p.seg_cap;
  }
  p.item_cap = 1 + 3 * segs + n / QK_COPY_CHUNK + 1;
  return p;
}

static bool quick_add(size_t *total, size_t bytes) {
  *total = (*total + 255) & ~(size_t)255;
  if (bytes > SIZE_MAX - 256 - *total) return false;
  *total += bytes;
  return true;
}

/* Blocks of `kernel` resident on the whole device (at least one). */
template <typename K>
static unsigned quick_resident(K kernel, int threads, size_t smem, pp_cuda_state *st, pp_fit_cache *fit) {
  return (unsigned)pp_fit_blocks(st, fit, kernel, threads, smem, 1) * (unsigned)st->sm_count;
}

template <typename U, typename V, bool HAS_V>
static pp_status quick_sort_typed(pp_context *ctx, U *keys, V *vals, size_t n, pp_key_order<U> order) {
  pp_cuda_state *st = pp_cuda(ctx);
  const quick_plan plan = quick_make_plan(n);
  if (plan.tile_cap > UINT32_MAX || plan.seg_cap > UINT32_MAX)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: n (%zu) is too large for PP_SORT_QUICK", n);
  const bool levels = n > QK_SMALL; /* else one leaf, in place */
  const size_t nb = n * sizeof(U); /* checked by the caller */
  size_t total = 0, off[16];
  int k = 0;
  bool ok = true;
  const size_t sizes[] = {
      sizeof(quick_header),
      plan.seg_cap * sizeof(quick_segment), plan.seg_cap * sizeof(quick_segment),
      plan.tile_cap * sizeof(unsigned), plan.tile_cap * sizeof(unsigned),
      plan.tile_cap * sizeof(unsigned), plan.tile_cap * sizeof(unsigned),
      plan.tile_cap * 8, plan.tile_cap * 8, plan.tile_cap * 8, plan.tile_cap * 8,
      plan.item_cap * sizeof(quick_item),
      levels ? nb : 0,
      levels && HAS_V ? n * sizeof(V) : 0};
  for (size_t s : sizes) {
    ok = ok && quick_add(&total, s);
    off[k++] = total - s;
  }
  if (HAS_V && n > SIZE_MAX / sizeof(V)) ok = false;
  if (!ok)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: scratch for n (%zu) overflows size_t", n);
  char *scratch = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&scratch, total);
  if (s != PP_OK) return s;

  quick_args<U, V> a;
  a.hdr = (quick_header *)(scratch + off[0]);
  a.seg[0] = (quick_segment *)(scratch + off[1]);
  a.seg[1] = (quick_segment *)(scratch + off[2]);
  a.tile_seg[0] = (unsigned *)(scratch + off[3]);
  a.tile_seg[1] = (unsigned *)(scratch + off[4]);
  a.status[0] = (unsigned *)(scratch + off[5]);
  a.status[1] = (unsigned *)(scratch + off[6]);
  a.excl_lt[0] = (unsigned long long *)(scratch + off[7]);
  a.excl_lt[1] = (unsigned long long *)(scratch + off[8]);
  a.excl_eq[0] = (unsigned long long *)(scratch + off[9]);
  a.excl_eq[1] = (unsigned long long *)(scratch + off[10]);
  a.items = (quick_item *)(scratch + off[11]);
  a.keys[0] = keys;
  a.keys[1] = levels ? (U *)(scratch + off[12]) : keys;
  a.vals[0] = vals;
  a.vals[1] = levels && HAS_V ? (V *)(scratch + off[13]) : vals;
  a.n = n;
  a.order = order;
  auto count = quick_count_kernel<U, V>;
  auto part = quick_partition_kernel<U, V, HAS_V>;
  auto leaf = quick_leaf_kernel<U, V, HAS_V>;
  static pp_fit_cache count_fit, part_fit, leaf_fit;
  a.count_blocks = quick_resident(count, QK_THREADS, 0, st, &count_fit);
  a.part_blocks = quick_resident(part, QK_THREADS, 0, st, &part_fit);
  const size_t leaf_smem = quick_leaf_smem<U>();
  cudaError_t e = pp_fit_smem(st, &leaf_fit, leaf, leaf_smem);
  const unsigned leaf_blocks = quick_resident(leaf, QK_LEAF_THREADS, leaf_smem, st, &leaf_fit);

  if (e == cudaSuccess) e = cudaMemsetAsync(a.hdr, 0, sizeof(quick_header), st->stream);
  if (e == cudaSuccess) {
    quick_root_kernel<U, V><<<1, QK_ROOT_THREADS, 0, st->stream>>>(a);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess && levels) {
    const size_t tiles = (n + QK_TILE - 1) / QK_TILE;
    count<<<(unsigned)(tiles < a.count_blocks ? tiles : a.count_blocks), QK_THREADS, 0, st->stream>>>(a, 0);
    e = cudaGetLastError();
    if (e == cudaSuccess) {
      part<<<(unsigned)(tiles < a.part_blocks ? tiles : a.part_blocks), QK_THREADS, 0, st->stream>>>(a, 0);
      e = cudaGetLastError();
    }
  }
  if (e == cudaSuccess) { /* after the whole recursion: stream order waits for its grids */
    leaf<<<leaf_blocks, QK_LEAF_THREADS, leaf_smem, st->stream>>>(a);
    e = cudaGetLastError();
  }
  if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  ctx->ops->temp_free(ctx, scratch);
  return s;
}

PP_SORT_ENTRY(pp_cuda_sort_quick, quick_sort_typed)
