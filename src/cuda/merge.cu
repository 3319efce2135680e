/* merge.cu — pp_merge on the GPU: merge path (Green, McColl & Bader, "GPU merge path",
 * 2012).
 *
 * The output is cut into tiles of TILE elements. Output position k splits the inputs at
 * (i, k - i): i elements of a and k - i of b make up out[0, k). The split is the first i
 * for which a[i] does NOT come before b[k-1-i], where a[i] comes before b[j] when
 * image(a[i]) <= image(b[j]) — ties go to a, which makes the merge stable.
 *
 * Comparing. The order is sort.cuh's (API.md's float order, descending inverted), but the
 * merge compares values and never needs the images themselves, so it compares the way the
 * hardware does: integers as they are (signed or not), floats with a float compare, which
 * already treats -0.0 as +0.0, plus one test that puts NaN above everything. The kind and
 * the direction are template parameters: each compare is two or three instructions, not
 * the two image computations (~16 instructions) it took before, and the merge loop is
 * what every element passes through.
 *
 * Finding the splits. With few tiles (one wave: at most two per multiprocessor) each block
 * finds the splits at both ends of its tile itself (warps 0 and 1, a 32-way search:
 * ~log33(n) rounds of global loads) and the merge is one launch. With more tiles that
 * search would sit in every block's critical path (~6 dependent DRAM round trips at 2^28,
 * while the block's own data moves in ~2 us), so a small partition kernel first finds all
 * tiles+1 splits and every block reads its two. Up to a few tens of millions of keys the
 * splits are few and each search is latency-bound: eight lanes search each split, a 9-way
 * search (merge_path.cuh). Above that, one thread each by binary search, which issues
 * fewer loads, its first probes on samples of a and b that stay in L2.
 *
 * One tile: the block loads its slices of a and b into shared memory with coalesced reads
 * (all of a thread's loads issued before the first is stored, enough bytes in flight to
 * keep HBM busy), each thread finds its own split inside the tile by binary search in
 * shared memory and merges ITEMS elements sequentially (branch-free: one shared load per
 * element), and the tile goes back through shared memory so that the stores are coalesced,
 * 16 bytes per thread where the output is aligned. Every tile but the last is full and
 * runs without bounds checks.
 *
 * Pairs (merge_pairs: the distributed sort's merge of sorted runs of key-value pairs). The
 * keys merge as above, and each output also records where its key sat in the tile's shared
 * copy (a's slice, then b's): that position is the merge's own cursor, so knowing it costs
 * one register per item and no compare. The values then take the keys' path once more:
 * a's and b's value slices of the tile are loaded coalesced into shared memory in the same
 * layout, and output x of the tile is the value at its recorded position, stored coalesced.
 * The values reuse the keys' shared memory, so a block holds the wider of the two tiles
 * plus two bytes per element for the positions. The keys-only kernels are the same
 * templates with the value steps compiled out.
 */
#include "merge_path.cuh"
#include "sort.cuh"

#include <type_traits>

/* Tiles, blocks per SM and the sampled search: PP_MERGE_* (tuning.h). From
 * PP_MERGE_SAMPLED_FROM keys on, the partition kernel's binary searches begin on samples
 * of a and b (every TILE / 2 keys, gathered by merge_sample_kernel), which stay in L2, and
 * end within one sample interval of the keys themselves. */
#define PARTITION_THREADS 256
/* Up to MERGE_GROUP_SEARCH_TILES tiles (about 2^25 four-byte keys in tiles of 256 x 17),
 * and below PP_MERGE_SAMPLED_FROM keys, the partition searches each split with
 * MERGE_GROUP_LANES lanes (merge_partition_group_kernel); with more, one thread a split,
 * since there the splits are many and the G-way search's extra loads cost more than its
 * shorter chains save. Counted in tiles, not keys: the search's work is per split. */
#define MERGE_GROUP_LANES 8
#define MERGE_GROUP_SEARCH_TILES 8192
/* Items per thread of merge_pairs, by the wider of key and value (4 or 8 bytes). Each item
 * holds its key and its position until the tile's keys are stored, so the items are fewer
 * than pp_merge's (PP_MERGE_ITEMS, PP_MERGE_ITEMS_64) to stay within the registers that
 * PP_MERGE_MIN_BLOCKS leaves without spilling; odd, as there, for the strided shared
 * stores. Shared memory per block: the wider tile plus the 2-byte positions (at most
 * (8 + 2) * 7 * PP_MERGE_THREADS + 16 bytes, for 8-byte words). */
#define MERGE_PAIRS_ITEMS_4 9
#define MERGE_PAIRS_ITEMS_8 7

/* x may be output before y: image(x) <= image(y) in the order of API.md (KIND is a
 * pp_key_kind), on the stored bits. Descending compares the other way round. */
template <typename U, int KIND, bool DESC>
__device__ __forceinline__ bool merge_le(U x, U y) {
  if constexpr (DESC) {
    const U t = x;
    x = y;
    y = t;
  }
  if constexpr (KIND == PP_KEY_FLOAT) {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8, "f32 or f64");
    if constexpr (sizeof(U) == 4) {
      const float fx = __uint_as_float((unsigned)x), fy = __uint_as_float((unsigned)y);
      return fx <= fy || fy != fy; /* -0.0 == +0.0 by the compare; NaN last, equal to NaN */
    } else {
      const double fx = __longlong_as_double((long long)x), fy = __longlong_as_double((long long)y);
      return fx <= fy || fy != fy;
    }
  } else if constexpr (KIND == PP_KEY_SIGNED) {
    typedef typename std::make_signed<U>::type S;
    return (S)x <= (S)y;
  } else {
    return x <= y;
  }
}

/* merge_le as the comparer of merge_path_split (merge_path.cuh). */
template <typename U, int KIND, bool DESC>
struct merge_le_fn {
  __device__ __forceinline__ bool operator()(U x, U y) const { return merge_le<U, KIND, DESC>(x, y); }
};

/* The split of out[0, k): called by a whole warp, same arguments in every lane, 32 probes
 * a round (merge_path.cuh). */
template <typename U, int KIND, bool DESC>
__device__ __forceinline__ size_t merge_path_warp(const U *__restrict__ a, size_t na,
                                                  const U *__restrict__ b, size_t nb, size_t k) {
  return merge_path_split<PP_WARP>(a, na, b, nb, k, true, merge_le_fn<U, KIND, DESC>());
}

/* The samples of the partition (PP_MERGE_SAMPLED_FROM): sa[c] = a[c * S] for c < ceil(na / S),
 * sb[c] = b[(c + 1) * S - 1] for c < floor(nb / S). */
template <typename U>
__global__ void __launch_bounds__(PARTITION_THREADS)
merge_sample_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb, size_t S,
                    U *__restrict__ sa, U *__restrict__ sb) {
  const size_t c = (size_t)blockIdx.x * PARTITION_THREADS + threadIdx.x;
  if (c < (na + S - 1) / S) sa[c] = a[c * S];
  if (c < nb / S) sb[c] = b[(c + 1) * S - 1];
}

/* splits[t] = the split of out[0, min(t * TILE, n)) for t = 0..tiles, by binary search, one
 * thread each. With samples (sa, sb: see merge_sample_kernel; S divides TILE), the search
 * first narrows the range to one sample interval: for k a multiple of S, the predicate at
 * m = c * S compares a[c * S] = sa[c] with b[k - 1 - c * S] = sb[k / S - c - 1], both
 * samples, which L2 holds (2n / S words in all), where the plain search's first probes are
 * scattered keys, each a DRAM round trip. */
template <typename U, int KIND, bool DESC>
__global__ void __launch_bounds__(PARTITION_THREADS)
merge_partition_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
                       size_t tile, size_t tiles, size_t *__restrict__ splits, const U *__restrict__ sa,
                       const U *__restrict__ sb, size_t S) {
  const size_t t = (size_t)blockIdx.x * PARTITION_THREADS + threadIdx.x;
  if (t > tiles) return;
  const size_t n = na + nb, k = t * tile < n ? t * tile : n; /* t * tile <= n + tile */
  size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
  if (sa && lo < hi && k % S == 0) {
    /* the sampled m = c * S in [lo, hi): c in [clo, chi); find the first c at which the
       predicate fails */
    const size_t clo = (lo + S - 1) / S, chi = (hi + S - 1) / S, kS = k / S;
    size_t cl = clo, ch = chi;
    while (cl < ch) {
      const size_t cm = cl + (ch - cl) / 2;
      if (merge_le<U, KIND, DESC>(sa[cm], sb[kS - cm - 1]))
        cl = cm + 1;
      else
        ch = cm;
    }
    if (cl > clo) lo = (cl - 1) * S + 1; /* the predicate holds at (cl - 1) * S */
    if (cl < chi) hi = cl * S;           /* and fails at cl * S */
  }
  splits[t] = merge_path_split_one<true>(a, b, k, lo, hi, merge_le_fn<U, KIND, DESC>());
}

/* merge_partition_kernel by MERGE_GROUP_LANES lanes a split (merge_path.cuh), without
 * samples: up to MERGE_GROUP_SEARCH_TILES tiles the splits are too few to keep the memory
 * system busy, and each is a chain of dependent DRAM round trips; the G-way search makes
 * the chain log(G+1)(n) long instead of log2(n). */
template <typename U, int KIND, bool DESC>
__global__ void __launch_bounds__(PARTITION_THREADS)
merge_partition_group_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
                             size_t tile, size_t tiles, size_t *__restrict__ splits) {
  const size_t t = ((size_t)blockIdx.x * PARTITION_THREADS + threadIdx.x) / MERGE_GROUP_LANES;
  const bool live = t <= tiles; /* the whole warp searches: groups past the end vote */
  const size_t n = na + nb, k = live && t * tile < n ? t * tile : n; /* t * tile <= n + tile */
  const size_t i = merge_path_split<MERGE_GROUP_LANES>(a, na, b, nb, k, live, merge_le_fn<U, KIND, DESC>());
  if (live && threadIdx.x % MERGE_GROUP_LANES == 0) splits[t] = i;
}

/* The values that travel with the keys (merge_pairs), VT their word (uint32_t or uint64_t):
 * a, b and out as the keys' (offset to the tile by merge_block); src and sh in shared
 * memory: src[x] = the position in the tile's shared copy of output x's key, and sh the
 * tile's values in that layout (it may share the keys' memory). For pp_merge (VT void)
 * there is nothing, and every value step below is compiled out. */
template <typename VT>
struct merge_vals {
  const VT *a, *b;
  VT *out;
  uint16_t *src;
  VT *sh;
};
template <>
struct merge_vals<void> {};

/* One tile whose slices are a[0, la) and b[0, lb) (already offset), la + lb <= TILE
 * (== TILE when FULL), merged into tile_out[0, la + lb), with the values of v (see
 * merge_vals). sh holds TILE + 16 bytes. */
template <typename U, int KIND, bool DESC, int THREADS, int ITEMS, bool FULL, typename VT>
__device__ __forceinline__ void merge_tile(U *sh, const U *__restrict__ as, const U *__restrict__ bs,
                                           int la, int lb, U *__restrict__ tile_out, bool vector_out,
                                           merge_vals<VT> v) {
  constexpr int TILE = THREADS * ITEMS;
  constexpr bool HAS_V = !std::is_void<VT>::value;
  const int tid = threadIdx.x;
  const int len = FULL ? TILE : la + lb;
  /* shared: a's slice in [0, la), b's in [la, len). Every load of the thread is issued
     before the first store: ITEMS independent requests in flight per thread. */
  const U *bs_shifted = bs - la; /* b's slice indexed by x in [la, len) */
  U r[ITEMS];
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * THREADS + tid;
    if (FULL || x < len) r[it] = (x < la ? as : bs_shifted)[x];
  }
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * THREADS + tid;
    if (FULL || x < len) sh[x] = r[it];
  }
  __syncthreads();

  /* this thread's ITEMS outputs start at d: its split of the tile's two runs */
  const int d = FULL || tid * ITEMS < len ? tid * ITEMS : len;
  int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (merge_le<U, KIND, DESC>(sh[mid], sh[la + d - 1 - mid]))
      lo = mid + 1;
    else
      hi = mid;
  }
  /* ia, ib: the next element of each run, as indices into sh. A thread never takes more
     than its ITEMS, so neither passes its run's end (la, len); the element at a run's end
     is read but not used (sh has room for index TILE). */
  int ia = lo, ib = la + d - lo;
  U va = sh[ia], vb = sh[ib];
  int from[HAS_V ? ITEMS : 1]; /* pairs: where r[it] sat in sh */
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    if (FULL || d + it < len) {
      /* bitwise, not short-circuit: no branch per element */
      const bool take_b = (ib < len) & ((ia >= la) | !merge_le<U, KIND, DESC>(va, vb));
      r[it] = take_b ? vb : va;
      if constexpr (HAS_V) from[it] = take_b ? ib : ia;
      ia += !take_b;
      ib += take_b;
      const U next = sh[take_b ? ib : ia];
      va = take_b ? va : next;
      vb = take_b ? next : vb;
    }
  }
  __syncthreads(); /* every thread has read its inputs; the outputs overwrite them */
#pragma unroll
  for (int it = 0; it < ITEMS; it++)
    if (FULL || d + it < len) {
      sh[d + it] = r[it];
      if constexpr (HAS_V) v.src[d + it] = (uint16_t)from[it];
    }
  __syncthreads();
  if (FULL && vector_out) {
    constexpr int VECS = TILE * (int)sizeof(U) / 16;
    static_assert(TILE * sizeof(U) % 16 == 0, "a full tile is whole 16-byte vectors");
    const uint4 *src = reinterpret_cast<const uint4 *>(sh);
    uint4 *dst = reinterpret_cast<uint4 *>(tile_out);
#pragma unroll
    for (int i = 0; i < (VECS + THREADS - 1) / THREADS; i++) {
      const int v = i * THREADS + tid;
      if (VECS % THREADS == 0 || v < VECS) dst[v] = src[v];
    }
  } else {
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (FULL || x < len) tile_out[x] = sh[x];
    }
  }
  if constexpr (HAS_V) {
    /* the values: loaded coalesced in sh's input layout (a's slice, then b's), the loads
       issued before the barrier that lets them overwrite the keys, then gathered through
       src and stored coalesced */
    VT rv[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (FULL || x < len) rv[it] = x < la ? v.a[x] : v.b[x - la];
    }
    __syncthreads(); /* every key of the tile is stored: v.sh may overwrite sh */
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (FULL || x < len) v.sh[x] = rv[it];
    }
    __syncthreads();
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (FULL || x < len) v.out[x] = v.sh[v.src[x]];
    }
  }
}

/* One tile of the output (the body of merge_kernel and merge_pairs_kernel). splits is NULL
 * when the block searches its own splits. vector_out: out is 16-byte aligned, so full
 * tiles are stored as 16-byte vectors. sh: TILE + 16 bytes of shared memory; v: the whole
 * arrays of values (merge_vals), offset here to the tile. */
template <typename U, int KIND, bool DESC, int THREADS, int ITEMS, typename VT>
__device__ __forceinline__ void merge_block(U *sh, size_t *s_split, const U *__restrict__ a, size_t na,
                                            const U *__restrict__ b, size_t nb,
                                            const size_t *__restrict__ splits, U *__restrict__ out,
                                            bool vector_out, merge_vals<VT> v) {
  constexpr int TILE = THREADS * ITEMS;
  static_assert(THREADS >= 2 * PP_WARP, "two warps search the tile's ends");
  const int tid = threadIdx.x, warp = tid / PP_WARP;
  const size_t n = na + nb;
  const size_t k0 = (size_t)blockIdx.x * TILE;
  const size_t k1 = n - k0 < (size_t)TILE ? n : k0 + TILE;
  size_t i0, i1;
  if (splits) { /* the same two words for every thread: broadcast loads */
    i0 = splits[blockIdx.x];
    i1 = splits[blockIdx.x + 1];
  } else {
    if (warp < 2) {
      const size_t i = merge_path_warp<U, KIND, DESC>(a, na, b, nb, warp ? k1 : k0);
      if (tid % PP_WARP == 0) s_split[warp] = i;
    }
    __syncthreads();
    i0 = s_split[0];
    i1 = s_split[1];
  }
  const int la = (int)(i1 - i0), lb = (int)((k1 - i1) - (k0 - i0));
  const U *as = a + i0, *bs = b + (k0 - i0);
  if constexpr (!std::is_void<VT>::value) {
    v.a += i0;
    v.b += k0 - i0;
    v.out += k0;
  }
  if (la + lb == TILE)
    merge_tile<U, KIND, DESC, THREADS, ITEMS, true>(sh, as, bs, la, lb, out + k0, vector_out, v);
  else
    merge_tile<U, KIND, DESC, THREADS, ITEMS, false>(sh, as, bs, la, lb, out + k0, vector_out, v);
}

template <typename U, int KIND, bool DESC, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, PP_MERGE_MIN_BLOCKS)
merge_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
             const size_t *__restrict__ splits, U *__restrict__ out, bool vector_out) {
  __shared__ __align__(16) U sh[THREADS * ITEMS + 16 / sizeof(U)];
  __shared__ size_t s_split[2];
  merge_block<U, KIND, DESC, THREADS, ITEMS>(sh, s_split, a, na, b, nb, splits, out, vector_out,
                                             merge_vals<void>{});
}

/* merge_kernel with values (VT: uint32_t or uint64_t). One shared block holds the keys'
 * tile, then the values' (the wider of the two), and after it the positions. */
template <typename U, typename VT, int KIND, bool DESC, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, PP_MERGE_MIN_BLOCKS)
merge_pairs_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
                   const size_t *__restrict__ splits, U *__restrict__ out, bool vector_out,
                   const VT *__restrict__ va, const VT *__restrict__ vb, VT *__restrict__ vout) {
  constexpr int TILE = THREADS * ITEMS;
  static_assert(TILE <= 65536, "a position in the tile fits in 16 bits");
  constexpr size_t KEY_BYTES = (TILE + 16 / sizeof(U)) * sizeof(U), VAL_BYTES = TILE * sizeof(VT);
  constexpr size_t SRC_AT = ((KEY_BYTES > VAL_BYTES ? KEY_BYTES : VAL_BYTES) + 15) & ~(size_t)15;
  __shared__ __align__(16) unsigned char sm[SRC_AT + TILE * sizeof(uint16_t)];
  __shared__ size_t s_split[2];
  const merge_vals<VT> v = {va, vb, vout, reinterpret_cast<uint16_t *>(sm + SRC_AT),
                            reinterpret_cast<VT *>(sm)};
  merge_block<U, KIND, DESC, THREADS, ITEMS>(reinterpret_cast<U *>(sm), s_split, a, na, b, nb, splits,
                                             out, vector_out, v);
}

/* The merge of a and b (with the values va and vb into vout when VT is not void), named fn
 * in errors. */
template <typename U, typename VT, int KIND, bool DESC, int ITEMS>
static pp_status merge_launch(pp_context *ctx, const char *fn, const U *a, size_t na, const U *b,
                              size_t nb, U *out, const void *va, const void *vb, void *vout) {
  pp_cuda_state *st = pp_cuda(ctx);
  constexpr size_t TILE = (size_t)PP_MERGE_THREADS * ITEMS;
  const size_t n = na + nb;
  const size_t tiles = (n + TILE - 1) / TILE;
  if (tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: na + nb (%zu) needs more tiles than a grid holds", fn, n);
  const bool vector_out = (reinterpret_cast<uintptr_t>(out) & 15) == 0;
  auto launch = [&](const size_t *splits) {
    if constexpr (std::is_void<VT>::value)
      merge_kernel<U, KIND, DESC, PP_MERGE_THREADS, ITEMS>
          <<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(a, na, b, nb, splits, out, vector_out);
    else
      merge_pairs_kernel<U, VT, KIND, DESC, PP_MERGE_THREADS, ITEMS><<<(unsigned)tiles, PP_MERGE_THREADS, 0,
                                                                      st->stream>>>(
          a, na, b, nb, splits, out, vector_out, static_cast<const VT *>(va), static_cast<const VT *>(vb),
          static_cast<VT *>(vout));
  };
  if (tiles <= (size_t)st->sm_count * PP_MERGE_FUSED_TILES_PER_SM) {
    launch(NULL);
    PP_CUDA_LAUNCHED(ctx, fn);
    return PP_OK;
  }
  /* scratch: the splits, then (sampled) the samples, at most n / S + 1 of a and b together
     (S = TILE / 2 >= 2, so no overflow) */
  constexpr size_t S = TILE / 2;
  static_assert(TILE % 2 == 0, "samples every TILE / 2 keys");
  const bool sampled = n >= PP_MERGE_SAMPLED_FROM;
  const size_t nsa = (na + S - 1) / S, nsb = nb / S;
  const size_t split_bytes = ((tiles + 1) * sizeof(size_t) + 15) & ~(size_t)15;
  size_t *splits = NULL;
  pp_status s =
      ctx->ops->temp_alloc(ctx, (void **)&splits, split_bytes + (sampled ? (nsa + nsb) * sizeof(U) : 0));
  if (s != PP_OK) return s;
  U *sa = sampled ? reinterpret_cast<U *>(reinterpret_cast<char *>(splits) + split_bytes) : NULL;
  U *sb = sampled ? sa + nsa : NULL;
  if (sampled) {
    const size_t ns = nsa > nsb ? nsa : nsb;
    merge_sample_kernel<U><<<(unsigned)((ns + PARTITION_THREADS - 1) / PARTITION_THREADS), PARTITION_THREADS, 0,
                             st->stream>>>(a, na, b, nb, S, sa, sb);
  }
  if (!sampled && tiles <= MERGE_GROUP_SEARCH_TILES) {
    const size_t pgrid = ((tiles + 1) * MERGE_GROUP_LANES + PARTITION_THREADS - 1) / PARTITION_THREADS;
    merge_partition_group_kernel<U, KIND, DESC><<<(unsigned)pgrid, PARTITION_THREADS, 0, st->stream>>>(
        a, na, b, nb, TILE, tiles, splits);
  } else {
    const size_t pgrid = (tiles + 1 + PARTITION_THREADS - 1) / PARTITION_THREADS;
    merge_partition_kernel<U, KIND, DESC><<<(unsigned)pgrid, PARTITION_THREADS, 0, st->stream>>>(
        a, na, b, nb, TILE, tiles, splits, sa, sb, S);
  }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    launch(splits);
    e = cudaGetLastError();
  }
  ctx->ops->temp_free(ctx, splits);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
}

/* One instantiation per key width x kind x direction (1-byte keys are only unsigned), and
 * per value word VT (void: keys alone). */
template <typename U, typename VT, int ITEMS>
static pp_status merge_typed(pp_context *ctx, const char *fn, pp_dtype t, const void *a, size_t na,
                             const void *b, size_t nb, void *out, pp_order order, const void *va,
                             const void *vb, void *vout) {
  const U *ua = (const U *)a, *ub = (const U *)b;
  U *uo = (U *)out;
  const bool desc = order == PP_DESCENDING;
#define MERGE_LAUNCH(KIND, DESC) \
  merge_launch<U, VT, KIND, DESC, ITEMS>(ctx, fn, ua, na, ub, nb, uo, va, vb, vout)
  if constexpr (sizeof(U) > 1) {
    switch (pp_key_kind_of(t)) {
    case PP_KEY_SIGNED: return desc ? MERGE_LAUNCH(PP_KEY_SIGNED, true) : MERGE_LAUNCH(PP_KEY_SIGNED, false);
    case PP_KEY_FLOAT: return desc ? MERGE_LAUNCH(PP_KEY_FLOAT, true) : MERGE_LAUNCH(PP_KEY_FLOAT, false);
    default: break;
    }
  }
  return desc ? MERGE_LAUNCH(PP_KEY_UNSIGNED, true) : MERGE_LAUNCH(PP_KEY_UNSIGNED, false);
#undef MERGE_LAUNCH
}

/* Copies of the side that is not empty (keys, and values when vs > 0): nothing to
 * interleave. */
static pp_status merge_one_side(pp_context *ctx, const char *fn, size_t es, const void *a, size_t na,
                                const void *b, size_t nb, void *out, size_t vs, const void *va,
                                const void *vb, void *vout) {
  cudaStream_t stream = pp_cuda(ctx)->stream;
  PP_CUDA_TRY(ctx, cudaMemcpyAsync(out, na ? a : b, (na + nb) * es, cudaMemcpyDeviceToDevice, stream), fn);
  if (vs)
    PP_CUDA_TRY(ctx, cudaMemcpyAsync(vout, na ? va : vb, (na + nb) * vs, cudaMemcpyDeviceToDevice, stream),
                fn);
  return PP_OK;
}

pp_status pp_cuda_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                        const void *b, size_t nb, void *out, pp_order order) {
  static const char fn[] = "pp_merge";
  if (na + nb == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const size_t es = pp_dtype_size(key_t);
  if (na == 0 || nb == 0) return merge_one_side(ctx, fn, es, a, na, b, nb, out, 0, NULL, NULL, NULL);
  switch (es) {
  case 1: return merge_typed<uint8_t, void, PP_MERGE_ITEMS>(ctx, fn, key_t, a, na, b, nb, out, order,
                                                            NULL, NULL, NULL);
  case 4: return merge_typed<uint32_t, void, PP_MERGE_ITEMS>(ctx, fn, key_t, a, na, b, nb, out, order,
                                                             NULL, NULL, NULL);
  case 8: return merge_typed<uint64_t, void, PP_MERGE_ITEMS_64>(ctx, fn, key_t, a, na, b, nb, out, order,
                                                                NULL, NULL, NULL);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: key_t (%d)", fn, (int)key_t);
}

/* Pairs of key word U: the items per thread follow the wider of key and value. */
template <typename U>
static pp_status merge_pairs_typed(pp_context *ctx, const char *fn, pp_dtype t, const void *ka,
                                   const void *va, size_t na, const void *kb, const void *vb,
                                   size_t nb, void *kout, void *vout, size_t vs, pp_order order) {
  if (vs == 4)
    return merge_typed<U, uint32_t, sizeof(U) <= 4 ? MERGE_PAIRS_ITEMS_4 : MERGE_PAIRS_ITEMS_8>(
        ctx, fn, t, ka, na, kb, nb, kout, order, va, vb, vout);
  return merge_typed<U, uint64_t, MERGE_PAIRS_ITEMS_8>(ctx, fn, t, ka, na, kb, nb, kout, order, va, vb,
                                                       vout);
}

pp_status pp_cuda_merge_pairs(pp_context *ctx, pp_dtype key_t, const void *ka, const void *va,
                              size_t na, const void *kb, const void *vb, size_t nb, void *kout,
                              void *vout, size_t value_size, pp_order order) {
  static const char fn[] = "pp_merge_pairs";
  if (na + nb == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const size_t es = pp_dtype_size(key_t);
  if (na == 0 || nb == 0)
    return merge_one_side(ctx, fn, es, ka, na, kb, nb, kout, value_size, va, vb, vout);
  switch (es) {
  case 1: return merge_pairs_typed<uint8_t>(ctx, fn, key_t, ka, va, na, kb, vb, nb, kout, vout,
                                            value_size, order);
  case 4: return merge_pairs_typed<uint32_t>(ctx, fn, key_t, ka, va, na, kb, vb, nb, kout, vout,
                                             value_size, order);
  case 8: return merge_pairs_typed<uint64_t>(ctx, fn, key_t, ka, va, na, kb, vb, nb, kout, vout,
                                             value_size, order);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: key_t (%d)", fn, (int)key_t);
}
