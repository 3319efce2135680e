/* sort_sample.cu — pp_sort with PP_SORT_SAMPLE on the GPU: a stable sample sort, laid out
 * in the textbook layout (choose samples, sort them, count per bucket, prefix sum,
 * scatter into buckets, sort each bucket: Leischner, Osipov & Sanders, "GPU sample sort",
 * 2010), made device-wide and balanced.
 *
 *  1. ssort_splitter_kernel (one block): one sample from each of S strata of the array
 *     (S the block-sort chunk, thousands: oversampling of 66 or more per bucket), at a
 *     pseudo-random place in its stratum, so sorted, periodic and skewed inputs are sampled
 *     evenly; block-sorted; B-1 splitters taken at regular quantiles of the samples and
 *     laid out as a search tree in level order (the paper's layout), which the steps below
 *     descend with one shared-memory load per level and few bank conflicts.
 *  2. Buckets. A key goes to interval bucket 2i when s_i < key < s_(i+1), or to equality
 *     bucket 2i-1 when key == s_i (images compared): 2B-1 buckets in key order. A value
 *     frequent enough to matter is picked as a splitter, often several times; all its
 *     copies then land in one equality bucket, which needs no sorting, and the interval
 *     buckets stay near n/B keys on few-distinct or heavily repeated inputs.
 *  3. ssort_count_kernel: per tile of the array, the count of each bucket (shared-memory
 *     counters; a warp whose keys share a bucket adds once), into a [bucket][tile] matrix,
 *     and each bucket's total.
 *  4. ssort_scan_kernel (one block per bucket): the bucket's start (totals of the buckets
 *     before it), then its row of the matrix scanned: where each tile's keys of the bucket
 *     go. Bucket-major order is what makes the scatter stable.
 *  5. ssort_scatter_kernel: each tile again, sub-tile by sub-tile in order; the keys of a
 *     sub-tile are ranked within their bucket (per-warp counters, lanes with the same
 *     bucket found by nine ballots, ranks in index order), staged in shared memory grouped
 *     by bucket, and written so that each bucket's run is contiguous (coalesced).
 *  6. ssort_plan_kernel (one block): the buckets become the segments of the segmented
 *     merge sort (sort_block.cuh): every non-empty bucket, its rounds, listed by rounds.
 *     Equality buckets are only copied back.
 *  7. The segmented merge sort sorts each interval bucket: buckets of up to a chunk in one
 *     block sort, larger ones (sampling is never exact) by merge rounds within the bucket.
 * The merge rounds launched are an upper bound that holds for any input (one bucket of
 * all n keys); rounds in which no bucket merges any more find nothing to do. So the sort
 * never reads anything back to the host, and a bucket that sampling failed to split is
 * sorted correctly, only slower.
 */
#include "sort_block.cuh"

#define SSORT_THREADS 256
#define SSORT_WARPS (SSORT_THREADS / PP_WARP)
#define SSORT_MAX_SPLITTERS 255
#define SSORT_ID_SPACE 512 /* bucket ids 0 .. 2*255, and the padding id */
#define SSORT_PAD_BUCKET 511
/* Rows of the count matrix are at most this long, and at most SSORT_TILES_PER_SM per SM:
 * enough blocks of the count and scatter kernels for every SM; more tiles only add to the
 * count matrix, which is written, scanned and read once per tile and bucket. Larger arrays
 * get longer tiles. */
#define SSORT_MAX_TILES 4096
#define SSORT_TILES_PER_SM 8
#define SSORT_COUNT_UNROLL 4

/* Keys per thread of a scatter sub-tile: 256 x 16 four-byte or 256 x 12 eight-byte keys,
 * so that the staged keys or values, the bucket ids and the per-bucket offsets fit in the
 * 48 KB of static shared memory. */
__host__ __device__ constexpr int ssort_items(int key_bytes, int value_bytes) {
  return (key_bytes > value_bytes ? key_bytes : value_bytes) <= 4 ? 16 : 12;
}

/* ---- buckets ---------------------------------------------------------------------------- */

/* The splitters are kept as a search tree in level order (Eytzinger layout, as in
 * Leischner, Osipov & Sanders): tree[1] is the root, node j has children 2j and 2j + 1,
 * and an in-order walk of nodes 1 .. 255 gives the 255 splitter slots sorted (the slots
 * from `splitters` on repeat the last splitter). The nodes of one level are contiguous, so
 * the lanes of a warp that reach different nodes of a level read different banks in the
 * upper levels, where a sorted array read by halving puts every candidate of a step in
 * the same bank. Node j at level l (2^l <= j < 2^(l+1)) holds sorted slot
 * (2(j - 2^l) + 1) * 2^(7-l) - 1. */
__host__ __device__ __forceinline__ unsigned ssort_tree_slot(unsigned j) {
  unsigned l = 0;
  while ((2u << l) <= j) l++;
  return ((2 * (j - (1u << l)) + 1) << (7 - l)) - 1;
}

/* Bucket of a key image: eight steps down the tree (go right where node <= img) end at
 * leaf 256 + p, p the number of slots <= img; the last node passed on the right is the
 * largest of them, slot p - 1, which tells the equality bucket without another load.
 * Slots past the splitters repeat the last one, so p is clamped to `splitters` and that
 * node is still the last splitter. */
template <typename U>
__host__ __device__ __forceinline__ unsigned ssort_bucket(U img, const U *tree, unsigned splitters) {
  unsigned j = 1;
  U last = 0;
  for (int level = 0; level < 8; level++) { /* unrolled by the compiler */
    const U s = tree[j];
    const bool right = s <= img;
    last = right ? s : last;
    j = 2 * j + (right ? 1u : 0u);
  }
  unsigned p = j - 256;
  p = p < splitters ? p : splitters;
  return p && last == img ? 2 * p - 1 : 2 * p;
}

/* The lanes of the warp with the same 9-bit bucket id: one ballot per bit. */
__device__ __forceinline__ unsigned ssort_peers(unsigned d) {
  unsigned peers = MSORT_FULL_MASK;
#pragma unroll
  for (int bit = 0; bit < 9; bit++) {
    const bool set = (d >> bit) & 1u;
    const unsigned ones = __ballot_sync(MSORT_FULL_MASK, set);
    peers &= set ? ones : ~ones;
  }
  return peers;
}

__device__ __forceinline__ unsigned ssort_hash(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* ---- 1. splitters ------------------------------------------------------------------------ */

template <int KIND, typename U>
__device__ __forceinline__ void ssort_splitter_body(const U *keys, unsigned long long n, int samples,
                                                    unsigned splitters, U *sp_out,
                                                    pp_key_order<U> o, U *sk) {
  constexpr int ITEMS = msort_cfg<U, uint32_t, false>::ITEMS;
  const int tid = threadIdx.x;
  /* sample j from stratum [j * n / samples, (j + 1) * n / samples): the bounds in double
     (no 64-bit division), then kept inside the array and non-empty; the place in the
     stratum is the hash scaled to its length. All of the thread's loads are issued before
     the first store, so they are in flight together. */
  const double step = (double)n / (double)samples;
  U x[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const int j = i * MSORT_THREADS + tid;
    if (j < samples) {
      unsigned long long lo = (unsigned long long)((double)j * step);
      unsigned long long hi = (unsigned long long)((double)(j + 1) * step);
      lo = lo < n ? lo : n - 1;
      hi = hi > lo ? (hi < n ? hi : n) : lo + 1;
      const unsigned long long w = hi - lo;
      const unsigned len = w < 0xffffffffull ? (unsigned)w : 0xffffffffu;
      x[i] = keys[lo + __umulhi(ssort_hash((unsigned)j), len)];
    }
  }
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const int j = i * MSORT_THREADS + tid;
    if (j < samples) sk[j] = x[i];
  }
  __syncthreads();
  U key[ITEMS];
  int pos[ITEMS];
  int cnt;
  bool images;
  msort_block_sort<KIND, U, MSORT_THREADS, ITEMS, false>(sk, nullptr, samples, o, key, pos, &cnt, &images);
  __syncthreads();
  /* the sorted samples' images */
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    if (i < cnt) sk[tid * ITEMS + i] = images ? key[i] : msort_image<KIND>(key[i], o);
  __syncthreads();
  /* node tid of the search tree: sorted slot i is the sample at quantile (i + 1) / B, the
     slots past the splitters repeat the last; node 0 is not used */
  if (tid < 256) {
    unsigned i = tid ? ssort_tree_slot((unsigned)tid) : 0u;
    i = i < splitters ? i : splitters - 1;
    sp_out[tid] = sk[(size_t)(i + 1) * (unsigned)samples / (splitters + 1)];
  }
}

/* Dynamic shared memory: SSORT_SPLITTER_SMEM(U) bytes, the samples. */
#define SSORT_SPLITTER_SMEM(U) ((size_t)msort_cfg<U, uint32_t, false>::CHUNK * sizeof(U))
template <typename U>
__global__ void __launch_bounds__(MSORT_THREADS)
ssort_splitter_kernel(const U *keys, unsigned long long n, int samples, unsigned splitters,
                      U *sp_out, pp_key_order<U> o) {
  extern __shared__ __align__(16) unsigned char smem[];
  U *sk = reinterpret_cast<U *>(smem);
  MSORT_WITH_KIND(U, o, ssort_splitter_body<KIND>(keys, n, samples, splitters, sp_out, o, sk));
}

/* ---- 3. counts ---------------------------------------------------------------------------- */

template <int KIND, typename U>
__device__ __forceinline__ void ssort_count_body(const U *keys, unsigned long long n,
                                                 unsigned long long tile_len, unsigned tiles,
                                                 const U *sp_in, unsigned splitters,
                                                 unsigned long long *counts,
                                                 unsigned long long *totals, pp_key_order<U> o,
                                                 U *sp, unsigned *hist) {
  const int tid = threadIdx.x, lane = tid % PP_WARP;
  sp[tid] = sp_in[tid];
  hist[tid] = 0;
  hist[tid + SSORT_THREADS] = 0;
  __syncthreads();
  const unsigned t = blockIdx.x;
  const unsigned long long begin = (unsigned long long)t * tile_len;
  const unsigned long long end = n - begin < tile_len ? n : begin + tile_len;
  for (unsigned long long base = begin; base < end; base += SSORT_THREADS * SSORT_COUNT_UNROLL) {
    U k[SSORT_COUNT_UNROLL];
#pragma unroll
    for (int u = 0; u < SSORT_COUNT_UNROLL; u++) {
      const unsigned long long i = base + (unsigned long long)(u * SSORT_THREADS + tid);
      k[u] = i < end ? keys[i] : (U)0;
    }
#pragma unroll
    for (int u = 0; u < SSORT_COUNT_UNROLL; u++) {
      const bool ok = base + (unsigned long long)(u * SSORT_THREADS + tid) < end;
      const unsigned b = ssort_bucket(msort_image<KIND>(k[u], o), sp, splitters);
      /* sorted or few-distinct input puts a whole warp on one counter, and same-address
         shared atomics serialise: then one lane adds for all */
      const unsigned mask = __ballot_sync(MSORT_FULL_MASK, ok);
      if (mask == 0) continue;
      const int leader = __ffs(mask) - 1;
      const unsigned b0 = __shfl_sync(MSORT_FULL_MASK, b, leader);
      if (__all_sync(MSORT_FULL_MASK, !ok || b == b0)) {
        if (lane == leader) atomicAdd(&hist[b0], (unsigned)__popc(mask));
      } else if (ok) {
        atomicAdd(&hist[b], 1u);
      }
    }
  }
  __syncthreads();
  const unsigned nb = 2 * splitters + 1;
  for (unsigned b = tid; b < nb; b += SSORT_THREADS) {
    const unsigned c = hist[b];
    counts[(size_t)b * tiles + t] = c;
    if (c) atomicAdd(&totals[b], (unsigned long long)c);
  }
}

/* Eight blocks per SM: the whole grid (SSORT_TILES_PER_SM blocks per SM) in one wave. */
template <typename U>
__global__ void __launch_bounds__(SSORT_THREADS, SSORT_TILES_PER_SM)
ssort_count_kernel(const U *keys, unsigned long long n, unsigned long long tile_len,
                   unsigned tiles, const U *sp_in, unsigned splitters,
                   unsigned long long *counts, unsigned long long *totals, pp_key_order<U> o) {
  __shared__ U sp[256];
  __shared__ unsigned hist[SSORT_ID_SPACE];
  MSORT_WITH_KIND(U, o, ssort_count_body<KIND>(keys, n, tile_len, tiles, sp_in, splitters, counts,
                                               totals, o, sp, hist));
}

/* ---- 4. offsets --------------------------------------------------------------------------- */

__global__ void __launch_bounds__(MSORT_THREADS)
ssort_scan_kernel(unsigned long long *counts, unsigned tiles, const unsigned long long *totals,
                  unsigned long long *bstart) {
  __shared__ unsigned long long ws[MSORT_THREADS / PP_WARP];
  const unsigned b = blockIdx.x, tid = threadIdx.x;
  unsigned long long before = 0;
  for (unsigned j = tid; j < b; j += MSORT_THREADS) before += totals[j];
  unsigned long long start;
  msort_block_exclusive_scan<MSORT_THREADS>(before, ws, &start);
  unsigned long long *row = counts + (size_t)b * tiles, carry = start;
  for (unsigned c = 0; c < tiles; c += MSORT_THREADS) {
    const unsigned j = c + tid;
    const unsigned long long v = j < tiles ? row[j] : 0ull;
    unsigned long long all;
    const unsigned long long ex = msort_block_exclusive_scan<MSORT_THREADS>(v, ws, &all);
    if (j < tiles) row[j] = carry + ex;
    carry += all;
  }
  if (tid == 0) bstart[b] = start;
}

/* ---- 5. scatter ----------------------------------------------------------------------------- */

template <typename U, typename V, bool HAS_V>
__device__ __forceinline__ void ssort_scatter_body(const U *ks, const V *vs, U *kd, V *vd,
                                                   unsigned long long n, unsigned long long tile_len,
                                                   unsigned tiles, const U *sp_in, unsigned splitters,
                                                   const unsigned long long *offsets,
                                                   pp_key_order<U> o) {
  constexpr int ITEMS = ssort_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  constexpr int SUB = SSORT_THREADS * ITEMS;
  constexpr size_t XBYTES = (size_t)SUB * (HAS_V && sizeof(V) > sizeof(U) ? sizeof(V) : sizeof(U));
  constexpr size_t HBYTES = (size_t)SSORT_WARPS * SSORT_ID_SPACE * sizeof(unsigned);
  __shared__ __align__(16) unsigned char s_buf[XBYTES > HBYTES ? XBYTES : HBYTES];
  __shared__ uint16_t s_bkt[SUB];                       /* bucket of each staged slot */
  __shared__ unsigned long long s_off[SSORT_ID_SPACE];  /* next global position per bucket */
  __shared__ unsigned long long s_base[SSORT_ID_SPACE]; /* global position of slot 0 */
  __shared__ U sp[256];
  __shared__ unsigned s_scan[8];
  unsigned(*whist)[SSORT_ID_SPACE] = reinterpret_cast<unsigned(*)[SSORT_ID_SPACE]>(s_buf);
  U *xk = reinterpret_cast<U *>(s_buf);
  V *xv = reinterpret_cast<V *>(s_buf);
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  const unsigned below = (1u << lane) - 1u;
  const unsigned t = blockIdx.x, nb = 2 * splitters + 1;
  /* thread tid owns buckets b0 and b0 + 1 in the scans below */
  const unsigned b0 = 2 * (unsigned)tid;

  sp[tid] = sp_in[tid];
  for (unsigned b = tid; b < SSORT_ID_SPACE; b += SSORT_THREADS)
    s_off[b] = b < nb ? offsets[(size_t)b * tiles + t] : 0ull;
  const unsigned long long begin = (unsigned long long)t * tile_len;
  const unsigned long long end = n - begin < tile_len ? n : begin + tile_len;

  for (unsigned long long sub = begin; sub < end; sub += SUB) {
    const unsigned valid = end - sub < (unsigned long long)SUB ? (unsigned)(end - sub) : (unsigned)SUB;
    __syncthreads(); /* the previous sub-tile is written out */
    for (int i = tid; i < SSORT_WARPS * SSORT_ID_SPACE / 4; i += SSORT_THREADS)
      reinterpret_cast<uint4 *>(s_buf)[i] = make_uint4(0u, 0u, 0u, 0u);
    __syncthreads();

    /* warp-striped: item i of lane l in warp w is key w*32*ITEMS + i*32 + l of the sub-tile */
    const unsigned idx0 = (unsigned)(warp * PP_WARP * ITEMS + lane);
    U key[ITEMS];
    V val[ITEMS];
    unsigned packed[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const unsigned idx = idx0 + i * PP_WARP;
      key[i] = idx < valid ? ks[sub + idx] : (U)0;
      if constexpr (HAS_V) val[i] = idx < valid ? vs[sub + idx] : (V)0;
    }
    /* rank among the warp's keys of the same bucket, in index order: the lowest lane of
       each group adds the group to the warp's counter and hands out the old value */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const unsigned idx = idx0 + i * PP_WARP;
      const unsigned d =
          idx < valid ? ssort_bucket(pp_key_image(key[i], o), sp, splitters) : SSORT_PAD_BUCKET;
      const unsigned peers = ssort_peers(d);
      const int leader = __ffs(peers) - 1;
      unsigned old = 0;
      if (lane == leader) old = atomicAdd(&whist[warp][d], (unsigned)__popc(peers));
      old = __shfl_sync(MSORT_FULL_MASK, old, leader);
      packed[i] = ((old + (unsigned)__popc(peers & below)) << 9) | d;
    }
    __syncthreads();
    /* per bucket: the counts of the warps before each warp, and the sub-tile's count
       (the thread's two counters of a warp are one 8-byte access: no bank conflict) */
    unsigned c0 = 0, c1 = 0;
#pragma unroll
    for (int w = 0; w < SSORT_WARPS; w++) {
      uint2 *h = reinterpret_cast<uint2 *>(&whist[w][b0]);
      const uint2 x = *h;
      *h = make_uint2(c0, c1);
      c0 += x.x;
      c1 += x.y;
    }
    /* the buckets' first slots in the sub-tile grouped by bucket */
    const unsigned f0 = pp_block_exclusive_sum256<SSORT_THREADS>(c0 + c1, s_scan), f1 = f0 + c0;
#pragma unroll
    for (int w = 0; w < SSORT_WARPS; w++) {
      uint2 *h = reinterpret_cast<uint2 *>(&whist[w][b0]);
      const uint2 x = *h;
      *h = make_uint2(x.x + f0, x.y + f1);
    }
    /* modular arithmetic: adding a slot index (>= the bucket's first) is exact */
    s_base[b0] = s_off[b0] - f0;
    s_base[b0 + 1] = s_off[b0 + 1] - f1;
    s_off[b0] += c0;
    s_off[b0 + 1] += c1;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const unsigned d = packed[i] & (SSORT_ID_SPACE - 1);
      packed[i] = ((whist[warp][d] + (packed[i] >> 9)) << 9) | d; /* slot < 4096 */
    }
    __syncthreads(); /* whist is read; the staged keys take its place */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      xk[packed[i] >> 9] = key[i];
      s_bkt[packed[i] >> 9] = (uint16_t)(packed[i] & (SSORT_ID_SPACE - 1));
    }
    __syncthreads();
    for (unsigned j = tid; j < valid; j += SSORT_THREADS) kd[s_base[s_bkt[j]] + j] = xk[j];
    if constexpr (HAS_V) {
      __syncthreads(); /* the keys are read; the values take their place */
#pragma unroll
      for (int i = 0; i < ITEMS; i++) xv[packed[i] >> 9] = val[i];
      __syncthreads();
      for (unsigned j = tid; j < valid; j += SSORT_THREADS) vd[s_base[s_bkt[j]] + j] = xv[j];
    }
  }
}

/* Keys only: four blocks per SM (64 registers per thread; one-byte keys, which are widened
 * to compare, three); pairs, which hold the values too, as many as their registers allow. */
template <typename U>
__global__ void __launch_bounds__(SSORT_THREADS, sizeof(U) == 1 ? 3 : 4)
ssort_scatter_keys_kernel(const U *ks, U *kd, unsigned long long n, unsigned long long tile_len,
                          unsigned tiles, const U *sp_in, unsigned splitters,
                          const unsigned long long *offsets, pp_key_order<U> o) {
  ssort_scatter_body<U, uint32_t, false>(ks, nullptr, kd, nullptr, n, tile_len, tiles, sp_in, splitters,
                                         offsets, o);
}
template <typename U, typename V>
__global__ void __launch_bounds__(SSORT_THREADS)
ssort_scatter_pairs_kernel(const U *ks, const V *vs, U *kd, V *vd, unsigned long long n,
                           unsigned long long tile_len, unsigned tiles, const U *sp_in,
                           unsigned splitters, const unsigned long long *offsets, pp_key_order<U> o) {
  ssort_scatter_body<U, V, true>(ks, vs, kd, vd, n, tile_len, tiles, sp_in, splitters, offsets, o);
}

/* ---- 6. buckets to segments ---------------------------------------------------------------- */

__global__ void __launch_bounds__(MSORT_THREADS)
ssort_plan_kernel(const unsigned long long *bstart, const unsigned long long *totals, unsigned nb,
                  unsigned tile, unsigned chunk, msort_plan *plan, msort_seg *segs) {
  static_assert(MSORT_THREADS >= SSORT_ID_SPACE, "one thread per bucket");
  static_assert(MSORT_THREADS <= 1024, "bucket numbers fit the low 10 bits of a list key");
  /* per bucket, its list key: (MSORT_MAX_ROUNDS - rounds) * 1024 + bucket, empty buckets
     (MSORT_MAX_ROUNDS + 1) * 1024 + bucket; ascending keys are the list order */
  __shared__ __align__(16) unsigned s_key[MSORT_THREADS];
  __shared__ unsigned s_round_tiles[MSORT_MAX_ROUNDS]; /* merge tiles of the buckets with r rounds */
  __shared__ unsigned s_by_slot[MSORT_THREADS];        /* merge tiles, in list order */
  __shared__ unsigned s_chunks_by_slot[MSORT_THREADS]; /* chunks, in list order */
  __shared__ unsigned s_ws[MSORT_THREADS / PP_WARP];
  const unsigned b = threadIdx.x;
  const unsigned long long len = b < nb ? totals[b] : 0ull;
  const unsigned tiles = (unsigned)((len + tile - 1) / tile);
  const unsigned chunks = (unsigned)((len + chunk - 1) / chunk);
  const bool copy = b & 1; /* equality bucket */
  const int rounds = !copy && chunks > 1 ? (int)msort_ceil_log2(chunks) : 0;
  const unsigned key = (unsigned)(len ? MSORT_MAX_ROUNDS - rounds : MSORT_MAX_ROUNDS + 1) * 1024u + b;
  s_key[b] = key;
  if (b < MSORT_MAX_ROUNDS) s_round_tiles[b] = 0;
  s_by_slot[b] = 0;
  s_chunks_by_slot[b] = 0;
  __syncthreads();
  if (len && rounds > 0) atomicAdd(&s_round_tiles[rounds], tiles);
  /* list position: more rounds first, then bucket order; the keys are distinct */
  unsigned slot = 0;
  const uint4 *k4 = reinterpret_cast<const uint4 *>(s_key);
#pragma unroll 8
  for (unsigned j = 0; j < MSORT_THREADS / 4; j++) {
    const uint4 k = k4[j];
    slot += (k.x < key) + (k.y < key) + (k.z < key) + (k.w < key);
  }
  if (len) {
    s_by_slot[slot] = tiles;
    s_chunks_by_slot[slot] = chunks;
  }
  const unsigned count = (unsigned)__syncthreads_count(len != 0);
  unsigned total, total_chunks;
  const unsigned first = msort_block_exclusive_scan<MSORT_THREADS>(s_by_slot[b], s_ws, &total);
  const unsigned first_chunk =
      msort_block_exclusive_scan<MSORT_THREADS>(s_chunks_by_slot[b], s_ws, &total_chunks);
  s_by_slot[b] = first; /* now: first tile and chunk of the segment in slot b */
  s_chunks_by_slot[b] = first_chunk;
  __syncthreads();
  if (len) {
    msort_seg s;
    s.start = bstart[b];
    s.len = len;
    s.first_tile = s_by_slot[slot];
    s.first_chunk = s_chunks_by_slot[slot];
    s.rounds = (unsigned)rounds;
    s.copy_only = copy;
    segs[slot] = s;
  }
  if (b < MSORT_MAX_ROUNDS) { /* tiles still merging in round b: of the buckets with more rounds */
    unsigned active = 0;
    for (unsigned r = b + 1; r < MSORT_MAX_ROUNDS; r++) active += s_round_tiles[r];
    plan->active[b] = active;
  }
  if (b == 0) {
    plan->count = count;
    plan->tiles = total;
    plan->chunks = total_chunks;
  }
}

/* ---- host side -------------------------------------------------------------------------------- */

/* acc += b, false on overflow */
static bool ssort_add(size_t *acc, size_t b) {
  if (*acc > SIZE_MAX - b) return false;
  *acc += b;
  return true;
}

template <typename U, typename V, bool HAS_V>
static pp_status ssort_sort(pp_context *ctx, U *keys, V *values, size_t n, pp_key_order<U> o) {
  typedef msort_cfg<U, V, HAS_V> C;
  constexpr int SUB = SSORT_THREADS * ssort_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  constexpr int SAMPLES = msort_cfg<U, uint32_t, false>::CHUNK;
  if (n <= (size_t)C::CHUNK) return msort_one_tile<U, V, HAS_V>(ctx, keys, values, (unsigned)n, o);
  pp_cuda_state *st = pp_cuda(ctx);

  /* about two buckets per chunk, so most buckets are one block sort */
  const size_t chunks = (n + C::CHUNK - 1) / C::CHUNK;
  size_t buckets = 2 * chunks;
  buckets = buckets < 2 ? 2 : buckets > SSORT_MAX_SPLITTERS + 1 ? SSORT_MAX_SPLITTERS + 1 : buckets;
  const unsigned splitters = (unsigned)buckets - 1, nb = 2 * splitters + 1;
  const int samples = n < (size_t)SAMPLES ? (int)n : SAMPLES;
  size_t max_tiles = (size_t)(st->sm_count > 0 ? st->sm_count : 1) * SSORT_TILES_PER_SM;
  max_tiles = max_tiles < SSORT_MAX_TILES ? max_tiles : SSORT_MAX_TILES;
  const size_t subs = (n + (size_t)SUB * max_tiles - 1) / ((size_t)SUB * max_tiles);
  const size_t tile_len = (size_t)SUB * subs;
  const size_t ctiles = (n + tile_len - 1) / tile_len; /* <= SSORT_MAX_TILES */
  const size_t seg_tiles = (n + C::TILE - 1) / C::TILE + nb; /* bound of the segments' tiles */
  if (seg_tiles >= 0xffffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: n (%zu) needs more tiles than the sample sort counts", n);

  /* scratch: plan, segments, splits, count matrix, totals, starts, splitters, keys, values */
  size_t total = 0, off[9];
  const size_t parts[9] = {sizeof(msort_plan),
                           SSORT_ID_SPACE * sizeof(msort_seg),
                           (seg_tiles + 1) * sizeof(unsigned long long),
                           (size_t)nb * ctiles * sizeof(unsigned long long),
                           SSORT_ID_SPACE * sizeof(unsigned long long),
                           SSORT_ID_SPACE * sizeof(unsigned long long),
                           256 * sizeof(U),
                           n * sizeof(U), /* checked by the caller */
                           HAS_V ? n * sizeof(V) : 0};
  bool ok = true;
  for (int i = 0; i < 9; i++) {
    off[i] = total;
    ok = ok && ssort_add(&total, parts[i]) && ssort_add(&total, 255);
    total &= ~(size_t)255;
  }
  if (!ok) return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: scratch for n (%zu) overflows size_t", n);
  char *scratch = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&scratch, total);
  if (s != PP_OK) return s;
  msort_plan *plan = (msort_plan *)(scratch + off[0]);
  msort_seg *segs = (msort_seg *)(scratch + off[1]);
  unsigned long long *splits = (unsigned long long *)(scratch + off[2]);
  unsigned long long *counts = (unsigned long long *)(scratch + off[3]);
  unsigned long long *totals = (unsigned long long *)(scratch + off[4]);
  unsigned long long *bstart = (unsigned long long *)(scratch + off[5]);
  U *sp = (U *)(scratch + off[6]);
  U *k1 = (U *)(scratch + off[7]);
  V *v1 = HAS_V ? (V *)(scratch + off[8]) : NULL;

  s = msort_allow_smem(ctx, (const void *)ssort_splitter_kernel<U>, SSORT_SPLITTER_SMEM(U));
  if (s != PP_OK) {
    ctx->ops->temp_free(ctx, scratch);
    return s;
  }
  cudaError_t e = cudaMemsetAsync(totals, 0, SSORT_ID_SPACE * sizeof(unsigned long long), st->stream);
  if (e == cudaSuccess) {
    ssort_splitter_kernel<U><<<1, MSORT_THREADS, SSORT_SPLITTER_SMEM(U), st->stream>>>(keys, n, samples,
                                                                                   splitters, sp, o);
    ssort_count_kernel<U><<<(unsigned)ctiles, SSORT_THREADS, 0, st->stream>>>(
        keys, n, tile_len, (unsigned)ctiles, sp, splitters, counts, totals, o);
    ssort_scan_kernel<<<nb, MSORT_THREADS, 0, st->stream>>>(counts, (unsigned)ctiles, totals, bstart);
    if constexpr (HAS_V)
      ssort_scatter_pairs_kernel<U, V><<<(unsigned)ctiles, SSORT_THREADS, 0, st->stream>>>(
          keys, values, k1, v1, n, tile_len, (unsigned)ctiles, sp, splitters, counts, o);
    else
      ssort_scatter_keys_kernel<U><<<(unsigned)ctiles, SSORT_THREADS, 0, st->stream>>>(
          keys, k1, n, tile_len, (unsigned)ctiles, sp, splitters, counts, o);
    ssort_plan_kernel<<<1, MSORT_THREADS, 0, st->stream>>>(bstart, totals, nb, (unsigned)C::TILE,
                                                           (unsigned)C::CHUNK, plan,
                                                           segs);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    msort_job<U, V> job;
    job.k0 = keys;
    job.k1 = k1;
    job.v0 = values;
    job.v1 = v1;
    job.src = 1;
    job.plan = plan;
    job.segs = segs;
    job.splits = splits;
    job.max_tiles = seg_tiles;
    job.rounds = msort_ceil_log2(chunks); /* a bucket holds at most all n keys */
    job.order = o;
    s = msort_segments<U, V, HAS_V>(ctx, job);
  } else {
    s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  }
  ctx->ops->temp_free(ctx, scratch);
  return s;
}

PP_SORT_ENTRY(pp_cuda_sort_sample, ssort_sort)
