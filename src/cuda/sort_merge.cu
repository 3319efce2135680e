/* sort_merge.cu — pp_sort with PP_SORT_MERGE on the GPU: a device-wide stable merge sort,
 * and the segmented merge sort that the sample sort (sort_sample.cu) ends with.
 *
 * The merge sort is the segmented merge sort (sort_block.cuh) of one segment, the whole
 * array: one block sorts each chunk of C keys in shared memory, then ceil(log2(n / C))
 * rounds merge neighbouring sorted runs with merge path (Green, McColl & Bader, 2012), one
 * output tile per block. Keys ping-pong between the caller's array and one scratch array;
 * the chunk pass writes to the one that makes the last round end in the caller's array, so
 * no copy back is needed. n <= C is one block and one launch, with no scratch.
 *
 * Kernels: msort_chunk_kernel (block sort of every chunk), and per round
 * msort_split_kernel (where each output tile starts in its two input runs: in rounds of a
 * few thousand tiles eight lanes per tile, a 9-way search in global memory, merge_path.cuh;
 * in larger ones a binary search by one thread) and msort_merge_kernel (one tile: slices of both
 * runs into shared memory with coalesced loads, each thread's start by binary search in
 * shared memory, ITEMS outputs merged serially and branch-free, written back through
 * shared memory, 16 bytes per store where the output is aligned). Every round moves the
 * whole array twice through memory, so the chunk is as large as shared memory and
 * registers allow for two blocks per SM: fewer rounds; for the plain sort of 4-byte keys
 * (not the sample sort's buckets) it is twice that, one block of 1024 threads per SM. The
 * chunk and merge kernels are persistent (a grid of a few blocks per SM walks the tiles), so
 * that rounds in which few segments still merge (the sample sort's buckets) cost a short
 * launch rather than a grid of blocks with nothing to do.
 */
#include "merge_path.cuh"
#include "sort_block.cuh"

/* Blocks per SM the registers must allow. The block sort of 512 threads: two (64 registers)
 * for keys; pairs carry keys and positions (two per item) and get the registers of one
 * block rather than spill; of 1024 threads: one (64 registers). The merge of 256 threads:
 * four (64 registers) for four-byte keys, so that some block is always loading; three (85)
 * for the rest, which need more. */
template <typename U, typename V, bool HAS_V, int CT = MSORT_THREADS>
__host__ __device__ constexpr int msort_chunk_min_blocks() {
  return HAS_V || CT > MSORT_THREADS ? 1 : 2;
}
template <typename U, typename V, bool HAS_V>
__host__ __device__ constexpr int msort_merge_min_blocks() {
  return !HAS_V && sizeof(U) == 4 ? 4 : 3;
}
#define MSORT_SPLIT_THREADS 256
/* Lanes that search one tile's split together (merge_path.cuh) while a round has at most
 * MSORT_SPLIT_GROUP_TILES tiles: its splits are then a few thousand chains of dependent
 * DRAM loads, which eight-way probes shorten threefold. With more tiles the searches
 * together load more than they wait, and one thread's binary search, the fewest loads,
 * is faster (at 2^28 keys, 31775 tiles, the eight-way search made the whole sort slower:
 * docs/benchmarks/h200-2026-11-29.md). */
#define MSORT_SPLIT_LANES 8
#define MSORT_SPLIT_GROUP_TILES 4096

/* Block-sort threads of the plain merge sort of 4-byte keys without values (not of the
 * sample sort's buckets): PP_MSORT_CHUNK_THREADS (tuning.h). */

/* ---- one tile: block sort from global to global -------------------------------------------- */

/* Sorts src[0, valid) into dst[0, valid) (dst may be src: every load precedes every store). */
template <int KIND, typename U, typename V, bool HAS_V, int CT = MSORT_THREADS>
__device__ __forceinline__ void msort_tile(const U *src_k, U *dst_k, const V *src_v, V *dst_v,
                                           int valid, pp_key_order<U> o, unsigned char *smem) {
  typedef msort_cfg<U, V, HAS_V, CT> C;
  constexpr int ITEMS = C::ITEMS, THREADS = CT;
  U *sk = reinterpret_cast<U *>(smem);
  uint16_t *spos = reinterpret_cast<uint16_t *>(smem + C::SORT_KEYS_BYTES);
  V *sv = reinterpret_cast<V *>(smem);
  const int tid = threadIdx.x, base = tid * ITEMS;
  msort_stage<U, THREADS, ITEMS>(sk, src_k, src_k, valid, valid);
  __syncthreads();
  U key[ITEMS];
  int pos[ITEMS];
  int cnt;
  bool images;
  msort_block_sort<KIND, U, THREADS, ITEMS, HAS_V>(sk, spos, valid, o, key, pos, &cnt, &images);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    if (i < cnt) sk[base + i] = images ? msort_from_image<KIND>(key[i], o) : key[i];
  __syncthreads();
  msort_store<U, THREADS, ITEMS>(dst_k, sk, valid);
  if constexpr (HAS_V) {
    __syncthreads(); /* the keys are read; the values take their place */
    msort_stage<V, THREADS, ITEMS>(sv, src_v, src_v, valid, valid);
    __syncthreads();
    V val[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (i < cnt) val[i] = sv[pos[i]];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (i < cnt) sv[base + i] = val[i];
    __syncthreads();
    msort_store<V, THREADS, ITEMS>(dst_v, sv, valid);
  }
}

template <typename U, typename V, bool HAS_V>
__global__ void __launch_bounds__(MSORT_THREADS, 1)
msort_one_tile_kernel(U *keys, V *values, int n, pp_key_order<U> o) {
  extern __shared__ __align__(16) unsigned char smem[];
  MSORT_WITH_KIND(U, o, msort_tile<KIND, U, V, HAS_V>(keys, keys, values, values, n, o, smem));
}

/* ---- the segmented merge sort ---------------------------------------------------------------- */

/* The segment holding merge tile t (CHUNK: chunk t): the last one whose first tile (chunk)
 * is <= t (no segment is empty). */
template <bool CHUNK>
__device__ __forceinline__ unsigned msort_find_seg(const msort_seg *segs, unsigned count, unsigned t) {
  unsigned lo = 0, hi = count - 1;
  while (lo < hi) {
    const unsigned mid = (lo + hi + 1) / 2;
    if ((CHUNK ? segs[mid].first_chunk : segs[mid].first_tile) <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Chunk t of the chunk pass: its segment, the position of its first key in the arrays, and
 * its number of keys. */
struct msort_chunk_pos {
  const msort_seg *seg;
  unsigned long long off;
  int valid;
};
template <int CHUNK>
__device__ __forceinline__ msort_chunk_pos msort_chunk_at(const msort_seg *segs, unsigned count, unsigned t) {
  const msort_seg *sg = segs + msort_find_seg<true>(segs, count, t);
  const unsigned long long first = (unsigned long long)(t - sg->first_chunk) * CHUNK, rest = sg->len - first;
  return {sg, sg->start + first, rest < (unsigned long long)CHUNK ? (int)rest : CHUNK};
}

template <int KIND, typename U, typename V, bool HAS_V, int CT>
__device__ __forceinline__ void msort_chunk_body(U *k0, U *k1, V *v0, V *v1, int src,
                                                 const msort_plan *plan, const msort_seg *segs,
                                                 pp_key_order<U> o, unsigned char *smem) {
  typedef msort_cfg<U, V, HAS_V, CT> C;
  const unsigned chunks = plan->chunks, count = plan->count;
  const U *ks = src ? k1 : k0;
  const V *vs = src ? v1 : v0;
  for (unsigned t = blockIdx.x; t < chunks; t += gridDim.x) {
    __syncthreads(); /* the previous chunk is done with shared memory */
    const msort_chunk_pos c = msort_chunk_at<C::CHUNK>(segs, count, t);
    const msort_seg *sg = c.seg;
    const unsigned long long off = c.off;
    const int valid = c.valid;
    if (sg->copy_only) { /* in order already: only moved to the caller's arrays */
      if (src) {
        for (int x = threadIdx.x; x < valid; x += CT) {
          k0[off + x] = ks[off + x];
          if constexpr (HAS_V) v0[off + x] = vs[off + x];
        }
      }
      continue;
    }
    /* the buffer from which its rounds end in buffer 0 */
    U *kd = (sg->rounds & 1) ? k1 : k0;
    V *vd = (sg->rounds & 1) ? v1 : v0;
    if constexpr (CT > MSORT_THREADS) {
      /* one block per SM: nothing else on the SM runs while this block stages its chunk, so
         the block's next chunk goes to L2 now and its loads then hit L2 */
      const unsigned tn = t + gridDim.x;
      if (tn < chunks) {
        const msort_chunk_pos cn = msort_chunk_at<C::CHUNK>(segs, count, tn);
        const size_t bytes = (size_t)cn.valid * sizeof(U);
        const uintptr_t p0 = (uintptr_t)(ks + cn.off); /* one address in each line */
        const int lines = (int)((p0 + bytes + 127) / 128 - p0 / 128);
        if (!cn.seg->copy_only)
          for (int l = threadIdx.x; l < lines; l += CT)
            asm volatile("prefetch.global.L2 [%0];\n" ::"l"(l ? (p0 & ~(uintptr_t)127) + (uintptr_t)l * 128
                                                                : p0));
      }
    }
    msort_tile<KIND, U, V, HAS_V, CT>(ks + off, kd + off, HAS_V ? vs + off : nullptr,
                                      HAS_V ? vd + off : nullptr, valid, o, smem);
  }
}

template <typename U, typename V, bool HAS_V, int CT>
__global__ void __launch_bounds__(CT, (msort_chunk_min_blocks<U, V, HAS_V, CT>()))
msort_chunk_kernel(U *k0, U *k1, V *v0, V *v1, int src, const msort_plan *plan,
                   const msort_seg *segs, pp_key_order<U> o) {
  extern __shared__ __align__(16) unsigned char smem[];
  MSORT_WITH_KIND(U, o, msort_chunk_body<KIND, U, V, HAS_V, CT>(k0, k1, v0, v1, src, plan, segs, o, smem));
}

/* Output tile t when runs of tile << r keys merge: its segment, its pair of runs [ps, ps +
 * la) and [ps + la, ps + la + lb) (relative to the segment's start), its first output q
 * (same), and its outputs' indices [d0, d1) within the pair. A pair spans 2^(r+1) tiles, so
 * it starts at the tile index with the low r+1 bits cleared (r < 32: a segment has < 2^32
 * tiles). Merge round r has runs of chunk << r = tile << (r + MSORT_CHUNK_LOG2) keys. */
struct msort_tile_pos {
  unsigned long long seg_start, ps, la, lb, d0, d1, q;
  unsigned rounds;
};

__device__ __forceinline__ msort_tile_pos msort_locate(const msort_seg *segs, unsigned count,
                                                       unsigned t, unsigned r, unsigned tile) {
  const msort_seg *sg = segs + msort_find_seg<false>(segs, count, t);
  msort_tile_pos p;
  const unsigned k = t - sg->first_tile, kp = k & ~((2u << r) - 1u);
  const unsigned long long len = sg->len, w = (unsigned long long)tile << r;
  p.seg_start = sg->start;
  p.rounds = sg->rounds;
  p.q = (unsigned long long)k * tile;
  p.ps = (unsigned long long)kp * tile;
  p.la = len - p.ps < w ? len - p.ps : w;
  const unsigned long long rest = len - p.ps - p.la;
  p.lb = rest < w ? rest : w;
  p.d0 = p.q - p.ps;
  p.d1 = p.d0 + tile < p.la + p.lb ? p.d0 + tile : p.la + p.lb;
  return p;
}

/* msort_le as the comparer of merge_path_split (merge_path.cuh). */
template <int KIND, typename U>
struct msort_le_fn {
  pp_key_order<U> o;
  __device__ __forceinline__ bool operator()(U x, U y) const { return msort_le<KIND>(x, y, o); }
};

/* splits[t] for the round's active tiles, G lanes per tile (a warp takes 32 / G tiles at a
 * time; the loop is uniform over the warp, whose lanes all vote). */
template <unsigned G, typename U>
__device__ __forceinline__ void msort_split_grouped(const U *k0, const U *k1, const msort_seg *segs,
                                                    unsigned long long *splits, unsigned r,
                                                    unsigned tile, unsigned chunk_log2,
                                                    pp_key_order<U> o, unsigned active,
                                                    unsigned count) {
  constexpr unsigned PER_WARP = PP_WARP / G;
  const size_t warps = (size_t)gridDim.x * (MSORT_SPLIT_THREADS / PP_WARP);
  const unsigned lane = threadIdx.x % PP_WARP;
  for (size_t w = (size_t)blockIdx.x * (MSORT_SPLIT_THREADS / PP_WARP) + threadIdx.x / PP_WARP;
       w * PER_WARP < active; w += warps) {
    const size_t t = w * PER_WARP + lane / G;
    const bool live = t < active; /* else it votes, locating the warp's first tile */
    const msort_tile_pos p =
        msort_locate(segs, count, (unsigned)(live ? t : w * PER_WARP), r + chunk_log2, tile);
    const U *a = ((p.rounds - r) & 1 ? k1 : k0) + p.seg_start + p.ps;
    size_t split;
    MSORT_WITH_KIND(U, o,
                    split = merge_path_split<G>(a, p.la, a + p.la, p.lb, p.d0, live, msort_le_fn<KIND, U>{o}));
    if (live && lane % G == 0) splits[t] = split;
  }
}

/* splits[t] for the round's active tiles, by one thread per tile (G == 1) */
template <unsigned G, typename U>
__global__ void __launch_bounds__(MSORT_SPLIT_THREADS)
msort_split_kernel(const U *k0, const U *k1, const msort_plan *plan, const msort_seg *segs,
                   unsigned long long *splits, unsigned r, unsigned tile, unsigned chunk_log2,
                   pp_key_order<U> o) {
  const unsigned active = plan->active[r], count = plan->count;
  if constexpr (G == 1) {
    for (unsigned t = blockIdx.x * MSORT_SPLIT_THREADS + threadIdx.x; t < active;
         t += gridDim.x * MSORT_SPLIT_THREADS) {
      const msort_tile_pos p = msort_locate(segs, count, t, r + chunk_log2, tile);
      const U *a = ((p.rounds - r) & 1 ? k1 : k0) + p.seg_start + p.ps;
      const unsigned long long lo = p.d0 > p.lb ? p.d0 - p.lb : 0, hi = p.d0 < p.la ? p.d0 : p.la;
      unsigned long long split;
      MSORT_WITH_KIND(U, o,
                      split = merge_path_split_one<false>(a, a + p.la, p.d0, lo, hi, msort_le_fn<KIND, U>{o}));
      splits[t] = split;
    }
  } else {
    msort_split_grouped<G>(k0, k1, segs, splits, r, tile, chunk_log2, o, active, count);
  }
}

/* The thread's outputs of a merge tile staged in sk: a at [0, la), b at [la, len), sk[len]
 * readable; d its first output, cnt how many. */
template <int KIND, bool HAS_V, typename U, int ITEMS>
__device__ __forceinline__ void msort_merge_outputs(const U *sk, int la, int len, int d, int cnt,
                                                    pp_key_order<U> o, U (&key)[ITEMS],
                                                    int (&pos)[ITEMS]) {
  const int ia = msort_split_shared<false, KIND>(sk, la, sk + la, len - la, d, o);
  msort_serial_merge<false, KIND, HAS_V, false>(sk, ia, la, la + d - ia, len, cnt, o, key, pos);
}

/* A float's bits are a NaN. */
template <typename U>
__device__ __forceinline__ bool msort_is_nan(U raw) {
  constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
  constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
  return (U)(raw & (U)~SIGN) > EXP;
}

template <int KIND, typename U, typename V, bool HAS_V, int CT>
__device__ __forceinline__ void msort_merge_body(U *k0, U *k1, V *v0, V *v1, const msort_plan *plan,
                                                 const msort_seg *segs,
                                                 const unsigned long long *splits, unsigned r,
                                                 pp_key_order<U> o, unsigned char *smem) {
  typedef msort_cfg<U, V, HAS_V, CT> C;
  constexpr int ITEMS = C::ITEMS, THREADS = MSORT_MERGE_THREADS;
  U *sk = reinterpret_cast<U *>(smem);
  V *sv = reinterpret_cast<V *>(smem);
  const int tid = threadIdx.x;
  const unsigned active = plan->active[r], count = plan->count;
  for (unsigned t = blockIdx.x; t < active; t += gridDim.x) {
    __syncthreads(); /* the previous tile is done with shared memory */
    unsigned long long off_a, off_b, off_out;
    int la, len;
    bool from1;
    {
      const msort_tile_pos p = msort_locate(segs, count, t, r + C::CHUNK_LOG2, C::TILE);
      from1 = (p.rounds - r) & 1;
      const unsigned long long i0 = splits[t];
      /* the next tile is in the same pair unless this one ends it */
      const unsigned long long i1 = p.d1 == p.la + p.lb ? p.la : splits[t + 1];
      la = (int)(i1 - i0);
      len = (int)(p.d1 - p.d0);
      /* a's slice starts at i0 of the first run; b's at d0 - i0 of the second, and
         element i >= la of the staged tile is b's slice at i - la */
      off_a = p.seg_start + p.ps + i0;
      off_b = p.seg_start + p.ps + p.la + (p.d0 - i0) - (unsigned long long)la;
      off_out = p.seg_start + p.q;
    }
    const int lb = len - la;
    const U *ks = from1 ? k1 : k0;
    msort_stage<U, THREADS, ITEMS>(sk, ks + off_a, ks + off_b, la, len);
    __syncthreads();
    const int d = tid * ITEMS < len ? tid * ITEMS : len;
    const int cnt = len - d < ITEMS ? len - d : ITEMS;
    U key[ITEMS];
    int pos[ITEMS];
    if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT) {
      /* the runs are sorted, so a NaN would be at one end of a slice (last ascending, first
         descending): without one, a compare is the float compare alone (uniform branch) */
      const bool nan = (la > 0 && (msort_is_nan(sk[0]) | msort_is_nan(sk[la - 1]))) ||
                       (lb > 0 && (msort_is_nan(sk[la]) | msort_is_nan(sk[len - 1])));
      if (nan)
        msort_merge_outputs<KIND, HAS_V>(sk, la, len, d, cnt, o, key, pos);
      else
        msort_merge_outputs<KIND | MSORT_NONAN, HAS_V>(sk, la, len, d, cnt, o, key, pos);
    } else {
      msort_merge_outputs<KIND, HAS_V>(sk, la, len, d, cnt, o, key, pos);
    }
    __syncthreads(); /* every thread has read its inputs; the outputs take their place */
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
      if (i < cnt) sk[d + i] = key[i];
    __syncthreads();
    msort_store<U, THREADS, ITEMS>((from1 ? k0 : k1) + off_out, sk, len);
    if constexpr (HAS_V) {
      const V *vs = from1 ? v1 : v0;
      __syncthreads(); /* the keys are read; the values take their place */
      msort_stage<V, THREADS, ITEMS>(sv, vs + off_a, vs + off_b, la, len);
      __syncthreads();
      V val[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (i < cnt) val[i] = sv[pos[i]];
      __syncthreads();
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (i < cnt) sv[d + i] = val[i];
      __syncthreads();
      msort_store<V, THREADS, ITEMS>((from1 ? v0 : v1) + off_out, sv, len);
    }
  }
}

template <typename U, typename V, bool HAS_V, int CT>
__global__ void __launch_bounds__(MSORT_MERGE_THREADS, (msort_merge_min_blocks<U, V, HAS_V>()))
msort_merge_kernel(U *k0, U *k1, V *v0, V *v1, const msort_plan *plan, const msort_seg *segs,
                   const unsigned long long *splits, unsigned r, pp_key_order<U> o) {
  extern __shared__ __align__(16) unsigned char smem[];
  MSORT_WITH_KIND(U, o,
                  msort_merge_body<KIND, U, V, HAS_V, CT>(k0, k1, v0, v1, plan, segs, splits, r, o, smem));
}

/* The plan of the plain merge sort: one segment, the whole array. */
__global__ void msort_single_plan_kernel(msort_plan *plan, msort_seg *segs, unsigned long long n,
                                         unsigned tiles, unsigned chunks, unsigned rounds) {
  const unsigned r = threadIdx.x;
  if (r < MSORT_MAX_ROUNDS) plan->active[r] = r < rounds ? tiles : 0u;
  if (r == 0) {
    plan->count = 1;
    plan->tiles = tiles;
    plan->chunks = chunks;
    msort_seg s;
    s.start = 0;
    s.len = n;
    s.first_tile = 0;
    s.first_chunk = 0;
    s.rounds = rounds;
    s.copy_only = 0;
    segs[0] = s;
  }
}

/* ---- host side ---------------------------------------------------------------------------- */

pp_status msort_allow_smem(pp_context *ctx, const void *kernel, size_t smem) {
  PP_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
              "pp_sort");
  PP_CUDA_TRY(ctx,
              cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   (int)cudaSharedmemCarveoutMaxShared),
              "pp_sort");
  return PP_OK;
}

template <typename U, typename V, bool HAS_V>
pp_status msort_one_tile(pp_context *ctx, U *keys, V *values, unsigned n, pp_key_order<U> order) {
  constexpr size_t SMEM = msort_cfg<U, V, HAS_V>::SORT_SMEM;
  auto kernel = msort_one_tile_kernel<U, V, HAS_V>;
  pp_status s = msort_allow_smem(ctx, (const void *)kernel, SMEM);
  if (s != PP_OK) return s;
  kernel<<<1, MSORT_THREADS, SMEM, pp_cuda(ctx)->stream>>>(keys, values, (int)n, order);
  PP_CUDA_LAUNCHED(ctx, "pp_sort");
  return PP_OK;
}

/* The chunk pass (block sorts of CT threads) and the merge rounds. */
template <typename U, typename V, bool HAS_V, int CT>
static pp_status msort_segments_ct(pp_context *ctx, const msort_job<U, V> &job) {
  typedef msort_cfg<U, V, HAS_V, CT> C;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t sms = (size_t)st->sm_count;
  const size_t max_tiles = job.max_tiles ? job.max_tiles : 1;

  auto chunk = msort_chunk_kernel<U, V, HAS_V, CT>;
  pp_status s = msort_allow_smem(ctx, (const void *)chunk, C::SORT_SMEM);
  if (s != PP_OK) return s;
  static pp_fit_cache chunk_fit;
  size_t grid = sms * (size_t)pp_fit_blocks(st, &chunk_fit, chunk, CT, C::SORT_SMEM, 1);
  grid = grid < max_tiles ? grid : max_tiles;
  chunk<<<(unsigned)grid, CT, C::SORT_SMEM, st->stream>>>(job.k0, job.k1, job.v0, job.v1, job.src, job.plan,
                                                          job.segs, job.order);
  PP_CUDA_LAUNCHED(ctx, "pp_sort");

  auto merge = msort_merge_kernel<U, V, HAS_V, CT>;
  s = msort_allow_smem(ctx, (const void *)merge, C::MERGE_SMEM);
  if (s != PP_OK) return s;
  static pp_fit_cache merge_fit;
  size_t mgrid = sms * (size_t)pp_fit_blocks(st, &merge_fit, merge, MSORT_MERGE_THREADS, C::MERGE_SMEM, 1);
  mgrid = mgrid < max_tiles ? mgrid : max_tiles;
  const bool grouped = max_tiles <= MSORT_SPLIT_GROUP_TILES;
  const size_t lanes = grouped ? MSORT_SPLIT_LANES : 1;
  size_t sgrid = (max_tiles * lanes + MSORT_SPLIT_THREADS - 1) / MSORT_SPLIT_THREADS;
  sgrid = sgrid < sms * 8 ? sgrid : sms * 8;
  auto split = grouped ? msort_split_kernel<MSORT_SPLIT_LANES, U> : msort_split_kernel<1, U>;
  for (unsigned r = 0; r < job.rounds; r++) {
    split<<<(unsigned)sgrid, MSORT_SPLIT_THREADS, 0, st->stream>>>(
        job.k0, job.k1, job.plan, job.segs, job.splits, r, (unsigned)C::TILE, (unsigned)C::CHUNK_LOG2,
        job.order);
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
    merge<<<(unsigned)mgrid, MSORT_MERGE_THREADS, C::MERGE_SMEM, st->stream>>>(
        job.k0, job.k1, job.v0, job.v1, job.plan, job.segs, job.splits, r, job.order);
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
  }
  return PP_OK;
}

template <typename U, typename V, bool HAS_V>
pp_status msort_segments(pp_context *ctx, const msort_job<U, V> &job) {
  return msort_segments_ct<U, V, HAS_V, MSORT_THREADS>(ctx, job);
}

static size_t msort_align(size_t x) { return (x + 255) & ~(size_t)255; }

/* The merge sort of n keys (more than one chunk of MSORT_THREADS) with block sorts of CT
 * threads. */
template <typename U, typename V, bool HAS_V, int CT>
static pp_status msort_sort_ct(pp_context *ctx, U *keys, V *values, size_t n, pp_key_order<U> order) {
  typedef msort_cfg<U, V, HAS_V, CT> C;
  const size_t tiles = (n + C::TILE - 1) / C::TILE, chunks = (n + C::CHUNK - 1) / C::CHUNK;
  if (tiles >= 0xffffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: n (%zu) needs more tiles than the merge sort counts", n);
  const unsigned rounds = msort_ceil_log2(chunks);

  /* scratch: the plan and its one segment, the splits, the keys' and values' second buffers
     (n * sizeof(U) and n * sizeof(V) were checked by the caller) */
  const size_t off_segs = msort_align(sizeof(msort_plan));
  const size_t off_splits = off_segs + msort_align(sizeof(msort_seg));
  const size_t off_keys = off_splits + msort_align((tiles + 1) * sizeof(unsigned long long));
  const size_t key_bytes = msort_align(n * sizeof(U));
  const size_t val_bytes = HAS_V ? n * sizeof(V) : 0;
  if (key_bytes < n * sizeof(U) || off_keys > SIZE_MAX - key_bytes ||
      off_keys + key_bytes > SIZE_MAX - val_bytes)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: scratch for n (%zu) overflows size_t", n);
  char *scratch = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&scratch, off_keys + key_bytes + val_bytes);
  if (s != PP_OK) return s;

  msort_job<U, V> job;
  job.k0 = keys;
  job.k1 = (U *)(scratch + off_keys);
  job.v0 = values;
  job.v1 = HAS_V ? (V *)(scratch + off_keys + key_bytes) : NULL;
  job.src = 0;
  job.plan = (const msort_plan *)scratch;
  job.segs = (const msort_seg *)(scratch + off_segs);
  job.splits = (unsigned long long *)(scratch + off_splits);
  job.max_tiles = tiles;
  job.rounds = rounds;
  job.order = order;
  msort_single_plan_kernel<<<1, 64, 0, pp_cuda(ctx)->stream>>>(
      (msort_plan *)scratch, (msort_seg *)(scratch + off_segs), (unsigned long long)n,
      (unsigned)tiles, (unsigned)chunks, rounds);
  cudaError_t e = cudaGetLastError();
  s = e == cudaSuccess ? msort_segments_ct<U, V, HAS_V, CT>(ctx, job)
                       : pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  ctx->ops->temp_free(ctx, scratch);
  return s;
}

/* 4-byte keys alone take chunks of PP_MSORT_CHUNK_THREADS threads once they fill half a
 * wave of them (one block per SM); below that, chunks of 512 keep more SMs busy. */
template <typename U, typename V, bool HAS_V>
static pp_status msort_sort(pp_context *ctx, U *keys, V *values, size_t n, pp_key_order<U> order) {
  if (n <= (size_t)msort_cfg<U, V, HAS_V>::CHUNK)
    return msort_one_tile<U, V, HAS_V>(ctx, keys, values, (unsigned)n, order);
  if constexpr (sizeof(U) == 4 && !HAS_V && PP_MSORT_CHUNK_THREADS != MSORT_THREADS) {
    typedef msort_cfg<U, V, HAS_V, PP_MSORT_CHUNK_THREADS> W;
    if (n >= (size_t)pp_cuda(ctx)->sm_count * W::CHUNK / 2)
      return msort_sort_ct<U, V, HAS_V, PP_MSORT_CHUNK_THREADS>(ctx, keys, values, n, order);
  }
  return msort_sort_ct<U, V, HAS_V, MSORT_THREADS>(ctx, keys, values, n, order);
}

PP_SORT_ENTRY(pp_cuda_sort_merge, msort_sort)

/* for the sample sort (sort_sample.cu): each key word U with no values, 4- and 8-byte values */
#define MSORT_INSTANTIATE(U, V, HV)                                                              \
  template pp_status msort_segments<U, V, HV>(pp_context *, const msort_job<U, V> &);             \
  template pp_status msort_one_tile<U, V, HV>(pp_context *, U *, V *, unsigned, pp_key_order<U>);
#define MSORT_INSTANTIATE_KEY(U)                                                                 \
  MSORT_INSTANTIATE(U, uint32_t, false)                                                          \
  MSORT_INSTANTIATE(U, uint32_t, true)                                                           \
  MSORT_INSTANTIATE(U, uint64_t, true)
MSORT_INSTANTIATE_KEY(uint8_t)
MSORT_INSTANTIATE_KEY(uint32_t)
MSORT_INSTANTIATE_KEY(uint64_t)
