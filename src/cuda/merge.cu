/* merge.cu — pp_merge on the GPU: merge path (Green, McColl & Bader, "GPU merge path",
 * 2012).
 *
 * The output is cut into tiles of TILE elements. Output position k splits the inputs at
 * (i, k - i): i elements of a and k - i of b make up out[0, k). The split is the first i
 * for which a[i] does NOT come before b[k-1-i], where a[i] comes before b[j] when
 * image(a[i]) <= image(b[j]) — ties go to a, which makes the merge stable (sort.cuh gives
 * the images: API.md's float order, descending inverted).
 *
 * Finding the splits. With few tiles (one wave: at most two per multiprocessor) each block
 * finds the splits at both ends of its tile itself (warps 0 and 1, a 32-way search:
 * ~log33(n) rounds of global loads) and the merge is one launch. With more tiles that search would sit in
 * every block's critical path (~6 dependent DRAM round trips at 2^28, while the block's
 * own data moves in ~2 us), so a small partition kernel first finds all tiles+1 splits by
 * binary search, one thread each, and every block reads its two.
 *
 * Each block then loads its slices of a and b into shared memory with coalesced reads, all
 * of a thread's loads issued before the first is stored (enough bytes in flight to keep
 * HBM busy), lets each thread find its own split inside the tile by binary search in
 * shared memory and merge ITEMS elements sequentially, and writes the tile back through
 * shared memory so the stores are coalesced too.
 */
#include "sort.cuh"

#ifndef PP_MERGE_THREADS
#define PP_MERGE_THREADS 512
#endif
#ifndef PP_MERGE_ITEMS
#define PP_MERGE_ITEMS 15 /* odd: the strided shared-memory writes hit distinct banks */
#endif
#ifndef PP_MERGE_ITEMS_64
#define PP_MERGE_ITEMS_64 7 /* the same ~60 bytes per thread as 15 four-byte items */
#endif
/* Tiles per multiprocessor up to which each block searches its own splits (one launch:
 * at 2^20 f32, 137 tiles, one wave, the extra launch would cost more than it saves). */
#ifndef PP_MERGE_FUSED_TILES_PER_SM
#define PP_MERGE_FUSED_TILES_PER_SM 2
#endif
/* Blocks per multiprocessor the registers must allow: 3 x 512 threads keeps 48 warps
 * resident, enough loads in flight to cover DRAM latency (45 registers would allow 2). */
#ifndef PP_MERGE_MIN_BLOCKS
#define PP_MERGE_MIN_BLOCKS 3
#endif
#define PARTITION_THREADS 256
#define FULL_MASK 0xffffffffu

/* a[i] is output before b[j] */
template <typename U>
__device__ __forceinline__ bool a_first(U a, U b, pp_key_order<U> order) {
  return pp_key_image(a, order) <= pp_key_image(b, order);
}

/* The split of out[0, k): called by a whole warp, same arguments in every lane. The
 * predicate a_first(a[m], b[k-1-m]) holds for m below the split and fails from it on, so
 * 32 probes spread over [lo, hi) narrow the range 33-fold per round. */
template <typename U>
__device__ __forceinline__ size_t merge_path_warp(const U *__restrict__ a, size_t na,
                                                  const U *__restrict__ b, size_t nb, size_t k,
                                                  pp_key_order<U> order) {
  const int lane = threadIdx.x % PP_WARP;
  size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na; /* the split lies in [lo, hi] */
  while (hi - lo > PP_WARP) {
    const size_t span = hi - lo; /* < 2^58: the products below cannot overflow */
    const size_t m = lo + (size_t)(lane + 1) * span / (PP_WARP + 1); /* lo <= m < hi */
    const bool p = a_first(__ldg(a + m), __ldg(b + (k - 1 - m)), order);
    const int c = __popc(__ballot_sync(FULL_MASK, p)); /* probes 0..c-1 hold */
    const size_t new_lo = c ? lo + (size_t)c * span / (PP_WARP + 1) + 1 : lo;
    hi = c < PP_WARP ? lo + (size_t)(c + 1) * span / (PP_WARP + 1) : hi;
    lo = new_lo;
  }
  const size_t m = lo + lane;
  const bool p = m < hi && a_first(__ldg(a + m), __ldg(b + (k - 1 - m)), order);
  return lo + __popc(__ballot_sync(FULL_MASK, p));
}

/* The split of out[0, k) by plain binary search: one thread, log2 rounds. */
template <typename U>
__device__ __forceinline__ size_t merge_path_thread(const U *__restrict__ a, size_t na,
                                                    const U *__restrict__ b, size_t nb, size_t k,
                                                    pp_key_order<U> order) {
  size_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
  while (lo < hi) {
    const size_t m = lo + (hi - lo) / 2;
    if (a_first(__ldg(a + m), __ldg(b + (k - 1 - m)), order))
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* splits[t] = the split of out[0, min(t * TILE, n)) for t = 0..tiles. */
template <typename U>
__global__ void __launch_bounds__(PARTITION_THREADS)
merge_partition_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
                       size_t tile, size_t tiles, size_t *__restrict__ splits,
                       pp_key_order<U> order) {
  const size_t t = (size_t)blockIdx.x * PARTITION_THREADS + threadIdx.x;
  if (t > tiles) return;
  const size_t n = na + nb, k = t * tile < n ? t * tile : n; /* t * tile <= n + tile */
  splits[t] = merge_path_thread(a, na, b, nb, k, order);
}

/* One tile of the output. splits is NULL when the block searches its own splits. */
template <typename U, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, PP_MERGE_MIN_BLOCKS)
merge_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
             const size_t *__restrict__ splits, U *__restrict__ out, pp_key_order<U> order) {
  constexpr int TILE = THREADS * ITEMS;
  static_assert(THREADS >= 2 * PP_WARP, "two warps search the tile's ends");
  __shared__ U sh[TILE];
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
      const size_t i = merge_path_warp(a, na, b, nb, warp ? k1 : k0, order);
      if (tid % PP_WARP == 0) s_split[warp] = i;
    }
    __syncthreads();
    i0 = s_split[0];
    i1 = s_split[1];
  }
  const int la = (int)(i1 - i0), lb = (int)((k1 - i1) - (k0 - i0)), len = la + lb;
  const U *as = a + i0, *bs = b + (k0 - i0);
  /* shared: a's slice in [0, la), b's in [la, len). Every load of the thread is issued
     before the first store: ITEMS independent requests in flight per thread. */
  {
    U r[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (x < len) r[it] = x < la ? as[x] : bs[x - la];
    }
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int x = it * THREADS + tid;
      if (x < len) sh[x] = r[it];
    }
  }
  __syncthreads();

  const int d = tid * ITEMS < len ? tid * ITEMS : len;
  int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (a_first(sh[mid], sh[la + d - 1 - mid], order))
      lo = mid + 1;
    else
      hi = mid;
  }
  int ia = lo, ib = d - lo;
  U va = ia < la ? sh[ia] : (U)0, vb = ib < lb ? sh[la + ib] : (U)0;
  U res[ITEMS];
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    if (d + it < len) {
      const bool take_a = ib >= lb || (ia < la && a_first(va, vb, order));
      res[it] = take_a ? va : vb;
      if (take_a) {
        ia++;
        va = ia < la ? sh[ia] : (U)0;
      } else {
        ib++;
        vb = ib < lb ? sh[la + ib] : (U)0;
      }
    }
  }
  __syncthreads(); /* every thread has read its inputs; the outputs overwrite them */
#pragma unroll
  for (int it = 0; it < ITEMS; it++)
    if (d + it < len) sh[d + it] = res[it];
  __syncthreads();
  U *tile_out = out + k0;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * THREADS + tid;
    if (x < len) tile_out[x] = sh[x];
  }
}

template <typename U, int ITEMS>
static pp_status merge_typed(pp_context *ctx, pp_dtype t, const void *a, size_t na,
                             const void *b, size_t nb, void *out, pp_order order) {
  pp_cuda_state *st = pp_cuda(ctx);
  constexpr size_t TILE = (size_t)PP_MERGE_THREADS * ITEMS;
  const size_t n = na + nb;
  const size_t tiles = (n + TILE - 1) / TILE;
  if (tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_merge: na + nb (%zu) needs more tiles than a grid holds", n);
  const pp_key_order<U> o = pp_make_key_order<U>(t, order);
  const U *ua = (const U *)a, *ub = (const U *)b;
  auto kernel = merge_kernel<U, PP_MERGE_THREADS, ITEMS>;
  if (tiles <= (size_t)st->sm_count * PP_MERGE_FUSED_TILES_PER_SM) {
    kernel<<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(ua, na, ub, nb, NULL, (U *)out, o);
    PP_CUDA_LAUNCHED(ctx, "pp_merge");
    return PP_OK;
  }
  size_t *splits = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&splits, (tiles + 1) * sizeof(size_t));
  if (s != PP_OK) return s;
  const size_t pgrid = (tiles + 1 + PARTITION_THREADS - 1) / PARTITION_THREADS;
  merge_partition_kernel<U><<<(unsigned)pgrid, PARTITION_THREADS, 0, st->stream>>>(
      ua, na, ub, nb, TILE, tiles, splits, o);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    kernel<<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(ua, na, ub, nb, splits, (U *)out, o);
    e = cudaGetLastError();
  }
  ctx->ops->temp_free(ctx, splits);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, "pp_merge", __FILE__, __LINE__);
}

pp_status pp_cuda_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                        const void *b, size_t nb, void *out, pp_order order) {
  if (na + nb == 0) return PP_OK;
  pp_cuda_state *st = pp_cuda(ctx);
  PP_CUDA_TRY(ctx, cudaSetDevice(st->device), "pp_merge");
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
