/* merge.cu — pp_merge on the GPU: merge path (Green, McColl & Bader, "GPU merge path",
 * 2012), one kernel launch.
 *
 * The output is cut into tiles of TILE elements. Output position k splits the inputs at
 * (i, k - i): i elements of a and k - i of b make up out[0, k). The split is the first i
 * for which a[i] does NOT come before b[k-1-i], where a[i] comes before b[j] when
 * image(a[i]) <= image(b[j]) — ties go to a, which makes the merge stable (sort.cuh gives
 * the images: API.md's float order, descending inverted).
 *
 * Each block finds the splits at both ends of its tile itself (warps 0 and 1, a 32-way
 * search: ~log33(n) rounds of global loads instead of log2(n), and no separate partition
 * launch), loads its slices of a and b into shared memory with coalesced reads, lets
 * each thread find its own split inside the tile by binary search in shared memory and
 * merge ITEMS elements sequentially, and writes the tile back through shared memory so the
 * stores are coalesced too.
 */
#include "sort.cuh"

#ifndef PP_MERGE_THREADS
#define PP_MERGE_THREADS 256
#endif
#ifndef PP_MERGE_ITEMS
#define PP_MERGE_ITEMS 15 /* odd: the strided shared-memory writes hit distinct banks */
#endif
#ifndef PP_MERGE_ITEMS_64
#define PP_MERGE_ITEMS_64 11
#endif
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

template <typename U, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
merge_kernel(const U *__restrict__ a, size_t na, const U *__restrict__ b, size_t nb,
             U *__restrict__ out, pp_key_order<U> order) {
  constexpr int TILE = THREADS * ITEMS;
  static_assert(THREADS >= 2 * PP_WARP, "two warps search the tile's ends");
  __shared__ U sh[TILE];
  __shared__ size_t s_split[2];
  const int tid = threadIdx.x, warp = tid / PP_WARP;
  const size_t n = na + nb;
  const size_t k0 = (size_t)blockIdx.x * TILE;
  const size_t k1 = n - k0 < (size_t)TILE ? n : k0 + TILE;
  if (warp < 2) {
    const size_t i = merge_path_warp(a, na, b, nb, warp ? k1 : k0, order);
    if (tid % PP_WARP == 0) s_split[warp] = i;
  }
  __syncthreads();
  const size_t i0 = s_split[0], i1 = s_split[1];
  const int la = (int)(i1 - i0), lb = (int)((k1 - i1) - (k0 - i0)), len = la + lb;
  const U *as = a + i0, *bs = b + (k0 - i0);
  /* shared: a's slice in [0, la), b's in [la, len) */
  for (int x = tid; x < len; x += THREADS) sh[x] = x < la ? as[x] : bs[x - la];
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
  for (int x = tid; x < len; x += THREADS) out[k0 + x] = sh[x];
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
  merge_kernel<U, PP_MERGE_THREADS, ITEMS><<<(unsigned)tiles, PP_MERGE_THREADS, 0, st->stream>>>(
      (const U *)a, na, (const U *)b, nb, (U *)out, pp_make_key_order<U>(t, order));
  PP_CUDA_LAUNCHED(ctx, "pp_merge");
  return PP_OK;
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
