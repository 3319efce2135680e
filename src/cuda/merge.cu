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
 * tiles+1 splits by binary search, one thread each, and every block reads its two.
 *
 * One tile: the block loads its slices of a and b into shared memory with coalesced reads
 * (all of a thread's loads issued before the first is stored, enough bytes in flight to
 * keep HBM busy), each thread finds its own split inside the tile by binary search in
 * shared memory and merges ITEMS elements sequentially (branch-free: one shared load per
 * element), and the tile goes back through shared memory so that the stores are coalesced,
 * 16 bytes per thread where the output is aligned. Every tile but the last is full and
 * runs without bounds checks.
 */
#include "sort.cuh"

#include <type_traits>

/* Tiles, blocks per SM and the sampled search: PP_MERGE_* (tuning.h). From
 * PP_MERGE_SAMPLED_FROM keys on, the partition kernel's binary searches begin on samples
 * of a and b (every TILE / 2 keys, gathered by merge_sample_kernel), which stay in L2, and
 * end within one sample interval of the keys themselves. */
#define PARTITION_THREADS 256
#define FULL_MASK 0xffffffffu

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

/* The split of out[0, k): called by a whole warp, same arguments in every lane. The
 * predicate merge_le(a[m], b[k-1-m]) holds for m below the split and fails from it on, so
 * 32 probes spread over [lo, hi) narrow the range 33-fold per round. */
template <typename U, int KIND, bool DESC>
__device__ __forceinline__ size_t merge_path_warp(const U *__restrict__ a, size_t na,
                                                  const U *__restrict__ b, size_t nb, size_t k) {
  const int lane = threadIdx.x % PP_WARP;
  size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na; /* the split lies in [lo, hi] */
  while (hi - lo > PP_WARP) {
    const size_t span = hi - lo; /* < 2^58: the products below cannot overflow */
    const size_t m = lo + (size_t)(lane + 1) * span / (PP_WARP + 1); /* lo <= m < hi */
    const bool p = merge_le<U, KIND, DESC>(__ldg(a + m), __ldg(b + (k - 1 - m)));
    const int c = __popc(__ballot_sync(FULL_MASK, p)); /* probes 0..c-1 hold */
    const size_t new_lo = c ? lo + (size_t)c * span / (PP_WARP + 1) + 1 : lo;
    hi = c < PP_WARP ? lo + (size_t)(c + 1) * span / (PP_WARP + 1) : hi;
    lo = new_lo;
  }
  const size_t m = lo + lane;
  const bool p = m < hi && merge_le<U, KIND, DESC>(__ldg(a + m), __ldg(b + (k - 1 - m)));
  return lo + __popc(__ballot_sync(FULL_MASK, p));
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
  while (lo < hi) {
    const size_t m = lo + (hi - lo) / 2;
    if (merge_le<U, KIND, DESC>(__ldg(a + m), __ldg(b + (k - 1 - m))))
      lo = m + 1;
    else
      hi = m;
  }
  splits[t] = lo;
}

/* One tile whose slices are a[0, la) and b[0, lb) (already offset), la + lb <= TILE
 * (== TILE when FULL), merged into tile_out[0, la + lb). sh holds TILE + 16 bytes. */
template <typename U, int KIND, bool DESC, int THREADS, int ITEMS, bool FULL>
__device__ __forceinline__ void merge_tile(U *sh, const U *__restrict__ as, const U *__restrict__ bs,
                                           int la, int lb, U *__restrict__ tile_out, bool vector_out) {
  constexpr int TILE = THREADS * ITEMS;
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
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    if (FULL || d + it < len) {
      /* bitwise, not short-circuit: no branch per element */
      const bool take_b = (ib < len) & ((ia >= la) | !merge_le<U, KIND, DESC>(va, vb));
      r[it] = take_b ? vb : va;
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
    if (FULL || d + it < len) sh[d + it] = r[it];
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
}

/* One tile of the output. splits is NULL when the block searches its own splits.
 * vector_out: out is 16-byte aligned, so full tiles are stored as 16-byte vectors. */
template <typename U, int KIND, bool DESC, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, PP_MERGE_MIN_BLOCKS)
merge_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
             const size_t *__restrict__ splits, U *__restrict__ out, bool vector_out) {
  constexpr int TILE = THREADS * ITEMS;
  static_assert(THREADS >= 2 * PP_WARP, "two warps search the tile's ends");
  __shared__ __align__(16) U sh[TILE + 16 / sizeof(U)];
  __shared__ size_t s_split[2];
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
  if (la + lb == TILE)
    merge_tile<U, KIND, DESC, THREADS, ITEMS, true>(sh, as, bs, la, lb, out + k0, vector_out);
  else
    merge_tile<U, KIND, DESC, THREADS, ITEMS, false>(sh, as, bs, la, lb, out + k0, vector_out);
}

template <typename U, int KIND, bool DESC, int ITEMS>
static pp_status merge_launch(pp_context *ctx, const U *a, size_t na, const U *b, size_t nb, U *out) {
  pp_cuda_state *st = pp_cuda(ctx);
  constexpr size_t TILE = (size_t)PP_MERGE_THREADS * ITEMS;
  const size_t n = na + nb;
  const size_t tiles = (n + TILE - 1) / TILE;
  if (tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_merge: na + nb (%zu) needs more tiles than a grid holds", n);
  const bool vector_out = (reinterpret_cast<uintptr_t>(out) & 15) == 0;
  auto kernel = merge_kernel<U, KIND, DESC, PP_MERGE_THREADS, ITEMS>;
  if (tiles <= (size_t)st->sm_count * PP_MERGE_FUSED_TILES_PER_SM) {
    kernel<<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(a, na, b, nb, NULL, out, vector_out);
    PP_CUDA_LAUNCHED(ctx, "pp_merge");
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
  const size_t pgrid = (tiles + 1 + PARTITION_THREADS - 1) / PARTITION_THREADS;
  merge_partition_kernel<U, KIND, DESC><<<(unsigned)pgrid, PARTITION_THREADS, 0, st->stream>>>(
      a, na, b, nb, TILE, tiles, splits, sa, sb, S);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    kernel<<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(a, na, b, nb, splits, out, vector_out);
    e = cudaGetLastError();
  }
  ctx->ops->temp_free(ctx, splits);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, "pp_merge", __FILE__, __LINE__);
}

/* One instantiation per key width x kind x direction (1-byte keys are only unsigned). */
template <typename U, int ITEMS>
static pp_status merge_typed(pp_context *ctx, pp_dtype t, const void *a, size_t na,
                             const void *b, size_t nb, void *out, pp_order order) {
  const U *ua = (const U *)a, *ub = (const U *)b;
  U *uo = (U *)out;
  const bool desc = order == PP_DESCENDING;
  if constexpr (sizeof(U) > 1) {
    switch (pp_key_kind_of(t)) {
    case PP_KEY_SIGNED:
      return desc ? merge_launch<U, PP_KEY_SIGNED, true, ITEMS>(ctx, ua, na, ub, nb, uo)
                  : merge_launch<U, PP_KEY_SIGNED, false, ITEMS>(ctx, ua, na, ub, nb, uo);
    case PP_KEY_FLOAT:
      return desc ? merge_launch<U, PP_KEY_FLOAT, true, ITEMS>(ctx, ua, na, ub, nb, uo)
                  : merge_launch<U, PP_KEY_FLOAT, false, ITEMS>(ctx, ua, na, ub, nb, uo);
    default: break;
    }
  }
  return desc ? merge_launch<U, PP_KEY_UNSIGNED, true, ITEMS>(ctx, ua, na, ub, nb, uo)
              : merge_launch<U, PP_KEY_UNSIGNED, false, ITEMS>(ctx, ua, na, ub, nb, uo);
}

pp_status pp_cuda_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                        const void *b, size_t nb, void *out, pp_order order) {
  if (na + nb == 0) return PP_OK;
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, "pp_merge"));
  const size_t es = pp_dtype_size(key_t);
  if (na == 0 || nb == 0) { /* nothing to interleave */
    PP_CUDA_TRY(ctx,
                cudaMemcpyAsync(out, na ? a : b, (na + nb) * es, cudaMemcpyDeviceToDevice, st->stream),
                "pp_merge");
    return PP_OK;
  }
  switch (es) {
  case 1: return merge_typed<uint8_t, PP_MERGE_ITEMS>(ctx, key_t, a, na, b, nb, out, order);
  case 4: return merge_typed<uint32_t, PP_MERGE_ITEMS>(ctx, key_t, a, na, b, nb, out, order);
  case 8: return merge_typed<uint64_t, PP_MERGE_ITEMS_64>(ctx, key_t, a, na, b, nb, out, order);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_merge: key_t (%d)", (int)key_t);
}
