/* dsort_rank.cu — the distributed sort's one per-rank search on the GPU: how many of a
 * rank's sorted keys lie below each probe of the exact split (src/dist/dist_sort.c).
 *
 * A key is placed by its order image (sort.cuh's pp_key_image: -0.0 as +0.0, every NaN the
 * largest, descending folded in), the image the local sort orders by, so the sorted keys'
 * images ascend. One thread per probe runs a binary search over the keys in global memory:
 * a round has at most a few thousand probes and each search about 30 dependent loads, so the
 * kernel is a few microseconds, next to the all-reduce that follows it. */
#include "sort.cuh"

#include "dsort_rank.h"

#define DSR_THREADS 128

template <typename U>
__global__ void __launch_bounds__(DSR_THREADS)
dsort_rank_kernel(const U *keys, size_t n, const uint64_t *query, size_t q, uint64_t *counts,
                  pp_key_order<U> o) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= q) return;
  const uint64_t v = query[i];
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if ((uint64_t)pp_key_image<U>(keys[mid], o) < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  counts[i] = lo;
}

extern "C" pp_status pp_cuda_dsort_rank(pp_context *ctx, pp_dtype key_t, pp_order order,
                                        const void *sorted, size_t n, const uint64_t *query,
                                        size_t q, uint64_t *counts) {
  if (q == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  if (q > (size_t)UINT_MAX * DSR_THREADS / 2)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: %zu split probes", q);
  const unsigned grid = (unsigned)((q + DSR_THREADS - 1) / DSR_THREADS);
  /* the keys as the sorts see them: unsigned words of their width (no values) */
  return pp_by_key_value(ctx, "pp_sort", key_t, NULL, 0, [&](auto u, auto, auto) {
    typedef decltype(u) U;
    dsort_rank_kernel<U><<<grid, DSR_THREADS, 0, pp_cuda(ctx)->stream>>>(
        (const U *)sorted, n, query, q, counts, pp_make_key_order<U>(key_t, order));
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
    return PP_OK;
  });
}
