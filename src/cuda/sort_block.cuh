/* sort_block.cuh — what the merge sort (sort_merge.cu) and the sample sort (sort_sample.cu)
 * share: the tile sizes, a stable block-level sort of one tile in shared memory, and the
 * "segmented merge sort" that both end with. Private to those two files.
 *
 * Keys are compared by their unsigned image (sort.cuh: API.md's float order, descending
 * inverted); the stored bits are what moves.
 *
 * Block sort. A block of MSORT_THREADS threads sorts a tile of up to THREADS * ITEMS keys:
 * the tile is staged in shared memory, each thread takes ITEMS consecutive keys and sorts
 * them in registers by odd-even transposition (adjacent swaps of strictly greater images
 * only, so it is stable), then log2(THREADS) rounds merge pairs of neighbouring runs: each
 * thread finds where its ITEMS outputs start by a merge-path binary search in shared memory
 * and merges them serially, ties taken from the left run (stable). ITEMS is odd, so the
 * threads' strided accesses ITEMS keys apart fall in distinct banks. Pairs carry the
 * key's position in the tile (16 bits) instead of the value; values are gathered once at
 * the end.
 *
 * Segmented merge sort. The arrays hold segments (the whole array for the merge sort, the
 * buckets for the sample sort) to be sorted each on its own. A segment is cut into tiles
 * of the block-sort size T, each sorted by one block (chunk pass); then round r merges
 * neighbouring runs of T << r keys within each segment, one output tile of T per block:
 * a partition kernel finds where each tile's output starts in its two runs (merge path,
 * binary search in global memory), and the merge kernel loads the tile's slices of both
 * runs into shared memory with coalesced loads, merges as in the block sort, and writes
 * the tile back through shared memory. A segment of L keys needs ceil(log2(ceil(L / T)))
 * rounds; it ping-pongs between the caller's arrays (buffer 0) and scratch (buffer 1),
 * starting in the buffer that makes it end in buffer 0. Segments are listed by rounds,
 * most first, so the tiles still merging in round r are a prefix of the tile list.
 */
#ifndef PP_CUDA_SORT_BLOCK_CUH
#define PP_CUDA_SORT_BLOCK_CUH

#include "sort.cuh"

#include <stdint.h>

/* ---- tiles ----------------------------------------------------------------------------- */

#define MSORT_THREADS 512
#define MSORT_MAX_ROUNDS 48 /* tiles < 2^32 need at most 32 */
#define MSORT_FULL_MASK 0xffffffffu

/* Keys per thread of the block sort and of the merge tiles: odd (bank-conflict-free strided
 * accesses), and small enough that the tile's shared memory stays within the 48 KB of
 * static shared memory: keys plus 16-bit positions in the block sort, keys or values in
 * the merge. 17 x 512 = 8704 four-byte keys make 2^28 keys 30841 tiles, 15 merge rounds
 * (CUB's merge sort tile, 256 x 17, needs 16). */
__host__ __device__ constexpr int msort_items(int key_bytes, int value_bytes) {
  return value_bytes == 0 ? (key_bytes <= 4 ? 17 : 9) : (key_bytes <= 4 && value_bytes == 4 ? 11 : 9);
}

template <typename U, typename V, bool HAS_V>
struct msort_cfg {
  static constexpr int ITEMS = msort_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  static constexpr int TILE = MSORT_THREADS * ITEMS;
  /* block sort: keys, then the 16-bit positions (pairs); later the values */
  static constexpr size_t SORT_SMEM_KEYS = (size_t)TILE * sizeof(U) + (HAS_V ? (size_t)TILE * 2 : 0);
  static constexpr size_t SORT_SMEM_VALS = HAS_V ? (size_t)TILE * sizeof(V) : 0;
  static constexpr size_t SORT_SMEM = SORT_SMEM_KEYS > SORT_SMEM_VALS ? SORT_SMEM_KEYS : SORT_SMEM_VALS;
  /* merge: keys, later the values, in the same space */
  static constexpr size_t MERGE_SMEM =
      (size_t)TILE * (HAS_V && sizeof(V) > sizeof(U) ? sizeof(V) : sizeof(U));
  static_assert(TILE <= 65536, "positions in a tile are 16-bit");
  static_assert(SORT_SMEM <= 48 * 1024 - 512 && MERGE_SMEM <= 48 * 1024 - 512, "static shared memory");
};

/* ---- segments ---------------------------------------------------------------------------- */

struct msort_seg {
  unsigned long long start; /* first key of the segment in the arrays */
  unsigned long long len;
  unsigned first_tile; /* tiles of the segments listed before it */
  unsigned rounds;     /* merge rounds it needs */
  unsigned copy_only;  /* 1: already in order (all keys equal): its tiles are copied */
  unsigned pad_;
};

struct msort_plan {
  unsigned count;                    /* segments */
  unsigned tiles;                    /* tiles of all segments */
  unsigned active[MSORT_MAX_ROUNDS]; /* tiles of the segments with rounds > r */
};

/* What the segmented merge sort is asked to do. k0/v0 are the caller's arrays (where the
 * result ends), k1/v1 scratch of the same size; src says where the segments are before
 * the chunk pass (0: k0, 1: k1). plan and segs are device memory, filled by a kernel
 * queued before; splits has room for max_tiles + 1 entries. */
template <typename U, typename V>
struct msort_job {
  U *k0, *k1;
  V *v0, *v1;
  int src;
  const msort_plan *plan;
  const msort_seg *segs;
  unsigned long long *splits;
  size_t max_tiles;   /* upper bound of plan->tiles, for grid sizes */
  unsigned rounds;    /* merge rounds launched: upper bound of every segment's rounds */
  pp_key_order<U> order;
};

/* Defined in sort_merge.cu for U in {uint8_t, uint32_t, uint64_t} and V in {uint32_t,
 * uint64_t} (V unused when !HAS_V). */
template <typename U, typename V, bool HAS_V>
pp_status msort_segments(pp_context *ctx, const msort_job<U, V> &job);
/* Sorts n <= msort_cfg<U, V, HAS_V>::TILE keys in place with one block. */
template <typename U, typename V, bool HAS_V>
pp_status msort_one_tile(pp_context *ctx, U *keys, V *values, unsigned n, pp_key_order<U> order);

/* ---- block-level building blocks -------------------------------------------------------- */

__host__ __device__ inline unsigned msort_ceil_log2(unsigned long long x) {
  unsigned r = 0;
  while (r < 64 && ((unsigned long long)1 << r) < x) r++;
  return r;
}

template <typename U>
__device__ __forceinline__ U msort_all_ones() {
  return (U)~(U)0;
}

/* Global to shared memory without a register in between (cp.async, sm_80+): the thread's
 * ITEMS loads are all in flight at once, and the registers stay free for the merge. 4- and
 * 8-byte elements; 1-byte keys go through registers. The caller waits (msort_stage_wait)
 * and then passes a barrier. */
template <typename T>
__device__ __forceinline__ void msort_copy_async(T *smem_dst, const T *src) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async copies 4, 8 or 16 bytes");
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem_dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"((int)sizeof(T))
               : "memory");
}
__device__ __forceinline__ void msort_stage_wait() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/* sh[i] = i < la ? a[i] : bm[i] for i < len, striped over the block (coalesced). */
template <typename T, int THREADS, int ITEMS>
__device__ __forceinline__ void msort_stage(T *sh, const T *a, const T *bm, int la, int len) {
  const int tid = threadIdx.x;
  if constexpr (sizeof(T) >= 4) {
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) msort_copy_async(sh + i, (i < la ? a : bm) + i);
    }
    msort_stage_wait();
  } else {
    T x[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) x[it] = (i < la ? a : bm)[i];
    }
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) sh[i] = x[it];
    }
  }
}

/* Exclusive prefix sum over the block (THREADS a multiple of 32); *total gets the sum of
 * all. warp_sums holds THREADS/32 entries. Every thread must call it; it ends with a
 * barrier, so warp_sums may be reused at once. */
template <int THREADS, typename T>
__device__ __forceinline__ T msort_block_exclusive_scan(T v, T *warp_sums, T *total) {
  constexpr int WARPS = THREADS / PP_WARP;
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  T x = v;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    const T y = __shfl_up_sync(MSORT_FULL_MASK, x, d);
    if (lane >= d) x += y;
  }
  if (lane == PP_WARP - 1) warp_sums[warp] = x;
  __syncthreads();
  T before = 0, all = 0;
#pragma unroll
  for (int w = 0; w < WARPS; w++) {
    const T s = warp_sums[w];
    before += w < warp ? s : (T)0;
    all += s;
  }
  *total = all;
  __syncthreads();
  return before + x - v;
}

/* ---- images kept instead of keys ---------------------------------------------------------
 * A tile whose keys hold no -0.0 and no NaN (the only keys whose image does not give back
 * their bits) is sorted on the images themselves: one compare per comparison instead of
 * recomputing two images, and one register per key instead of two. */

/* pp_key_special and pp_key_from_image (sort.cuh) tell which keys that is and give the
 * keys back. */

/* What a comparison sees: the stored value itself when it is an image (IMG), else the
 * image of the key stored. */
template <bool IMG, typename U>
__device__ __forceinline__ U msort_cmp(U x, pp_key_order<U> o) {
  if constexpr (IMG) {
    (void)o;
    return x;
  } else {
    return pp_key_image(x, o);
  }
}

/* Merge path in shared memory: the number of keys of a[0, la) among the first d outputs of
 * the stable merge of a and b (ties from a). */
template <bool IMG, typename U>
__device__ __forceinline__ int msort_split_shared(const U *a, int la, const U *b, int lb, int d,
                                                  pp_key_order<U> o) {
  int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (msort_cmp<IMG>(a[mid], o) <= msort_cmp<IMG>(b[d - 1 - mid], o))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Merges up to ITEMS outputs serially from a[ia, la) and b[ib, lb) (shared memory); cnt
 * outputs are produced. pos[i] receives the output's position in the staged tile (a at
 * [0, ..), b at b_off + ..) when WANT_POS. */
template <bool IMG, typename U, int ITEMS, bool WANT_POS>
__device__ __forceinline__ void msort_serial_merge(const U *a, int ia, int la, const U *b, int ib,
                                                   int lb, int b_off, int cnt, pp_key_order<U> o,
                                                   U (&key)[ITEMS], int (&pos)[ITEMS]) {
  U ka = ia < la ? a[ia] : (U)0, kb = ib < lb ? b[ib] : (U)0;
  U ga = msort_cmp<IMG>(ka, o), gb = msort_cmp<IMG>(kb, o);
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    if (i < cnt) {
      const bool take_a = ib >= lb || (ia < la && ga <= gb);
      key[i] = take_a ? ka : kb;
      if (WANT_POS) pos[i] = take_a ? ia : b_off + ib;
      if (take_a) {
        ia++;
        ka = ia < la ? a[ia] : (U)0;
        ga = msort_cmp<IMG>(ka, o);
      } else {
        ib++;
        kb = ib < lb ? b[ib] : (U)0;
        gb = msort_cmp<IMG>(kb, o);
      }
    }
  }
}

/* The block sort's rounds: runs of ITEMS keys, one per thread, in key[] (images when IMG),
 * cnt of them valid, merged pairwise through sk until the tile is one run. */
template <bool IMG, typename U, int THREADS, int ITEMS, bool WANT_POS>
__device__ __forceinline__ void msort_block_rounds(U *sk, uint16_t *spos, int valid,
                                                   pp_key_order<U> o, U (&key)[ITEMS],
                                                   int (&pos)[ITEMS], int *cnt_io) {
  const int tid = threadIdx.x, base = tid * ITEMS;
  int cnt = *cnt_io;
  for (int span = 1; span < THREADS && span * ITEMS < valid; span *= 2) {
    __syncthreads(); /* the previous round's reads are done */
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (i < cnt) {
        sk[base + i] = key[i];
        if (WANT_POS) spos[base + i] = (uint16_t)pos[i];
      }
    __syncthreads();
    const int g0 = tid & ~(2 * span - 1); /* first thread of the pair of runs */
    const int ps = g0 * ITEMS, run = span * ITEMS;
    int la = valid - ps, lb = valid - ps - run;
    la = la < 0 ? 0 : la > run ? run : la;
    lb = lb < 0 ? 0 : lb > run ? run : lb;
    const int d = (tid - g0) * ITEMS;
    cnt = la + lb - d;
    cnt = cnt < 0 ? 0 : cnt > ITEMS ? ITEMS : cnt;
    if (cnt > 0) {
      const U *a = sk + ps, *b = sk + ps + run;
      const int ia = msort_split_shared<IMG>(a, la, b, lb, d, o);
      int sp[ITEMS];
      msort_serial_merge<IMG, U, ITEMS, WANT_POS>(a, ia, la, b, d - ia, lb, run, cnt, o, key, sp);
      if (WANT_POS) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
          if (i < cnt) pos[i] = spos[ps + sp[i]];
      }
    }
  }
  *cnt_io = cnt;
}

/* Odd-even transposition sort of the thread's ITEMS keys by g (adjacent swaps of strictly
 * greater images only: stable); key and pos move along when given (RAW, WANT_POS). */
template <bool RAW, bool WANT_POS, typename U, int ITEMS>
__device__ __forceinline__ void msort_thread_sort(U (&g)[ITEMS], U (&key)[ITEMS], int (&pos)[ITEMS]) {
#pragma unroll
  for (int r = 0; r < ITEMS; r++) {
#pragma unroll
    for (int j = r & 1; j + 1 < ITEMS; j += 2) {
      if (g[j] > g[j + 1]) {
        const U x = g[j];
        g[j] = g[j + 1];
        g[j + 1] = x;
        if (RAW) {
          const U k = key[j];
          key[j] = key[j + 1];
          key[j + 1] = k;
        }
        if (WANT_POS) {
          const int q = pos[j];
          pos[j] = pos[j + 1];
          pos[j + 1] = q;
        }
      }
    }
  }
}

/* The block sort. On entry sk[0, valid) holds the tile's keys in input order (and the
 * caller has passed a barrier after writing them). On return the thread holds outputs
 * tid*ITEMS + i of the sorted tile for i < *cnt in key[i] — the keys' images if *images,
 * else the keys — and (WANT_POS) the input position of each in pos[i]; sk and spos may be
 * overwritten at once after a barrier. spos (WANT_POS only) has room for THREADS*ITEMS
 * 16-bit entries. Padding after the last key takes the largest image: being last in input
 * order too, the stable sort keeps it behind every key. */
template <typename U, int THREADS, int ITEMS, bool WANT_POS>
__device__ __forceinline__ void msort_block_sort(U *sk, uint16_t *spos, int valid,
                                                 pp_key_order<U> o, U (&key)[ITEMS],
                                                 int (&pos)[ITEMS], int *cnt_out, bool *images) {
  const int tid = threadIdx.x, base = tid * ITEMS;
  int special = 0;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const int p = base + i;
    key[i] = p < valid ? sk[p] : (U)0;
    special |= p < valid && pp_key_special(key[i], o);
    pos[i] = p;
  }
  int cnt = valid - base;
  cnt = cnt < 0 ? 0 : cnt > ITEMS ? ITEMS : cnt;
  if (__syncthreads_or(special)) {
    U img[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) img[i] = base + i < valid ? pp_key_image(key[i], o) : msort_all_ones<U>();
    msort_thread_sort<true, WANT_POS>(img, key, pos);
    msort_block_rounds<false, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
    *images = false;
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) key[i] = base + i < valid ? pp_key_image(key[i], o) : msort_all_ones<U>();
    msort_thread_sort<false, WANT_POS>(key, key, pos);
    msort_block_rounds<true, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
    *images = true;
  }
  *cnt_out = cnt;
}

#endif /* PP_CUDA_SORT_BLOCK_CUH */
