/*
 * peer_topk.h — the CUB peers of `parprim bench topk`, behind a C interface (built only
 * with CUDA, so callers use it under #ifdef PP_HAVE_CUDA). Two files implement it:
 *
 * bench/peer_topk.cu, full sorts: the first k of a descending sort are the answer. One
 * array: cub::DeviceRadixSort::SortKeysDescending of all n keys. Rows:
 * cub::DeviceSegmentedSort::SortKeysDescending with one segment per row. Both leave the
 * sorted keys in d_out (n elements). Calls return 0, or -1 with bench_topk_error() set.
 *
 * bench/peer_cub_topk.cu, cub::DeviceTopK. It came with CCCL 3.3, newer than the
 * toolkit's own CCCL, so that file is compiled against newer CCCL headers
 * (cmake/bench_peers.cmake: PP_CCCL_NEW_INCLUDE). Without them it compiles to stubs:
 * bench_cub_topk_name() is NULL, bench_cub_topk_error() says why, and every call fails.
 * What it computes differs from pp_topk in two ways the bench states beside its figures:
 * the k results come in no particular order, and when several elements tie at the k-th
 * value which of them are returned may change from run to run. CUB implements only this
 * configuration today; it must be asked for explicitly
 * (cuda::execution::require(determinism::not_guaranteed, output_ordering::unsorted)).
 * pp_topk's are sorted and deterministic. Calls return 0, or -1 with
 * bench_cub_topk_error() set.
 *
 * Both size and cache their temporary storage in *_prepare, so the timed call only
 * launches. Streams are cudaStream_t as void *.
 */
#ifndef PP_BENCH_PEER_TOPK_H
#define PP_BENCH_PEER_TOPK_H

#include "parprim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *bench_topk_error(void);
/* rows == 0: one array of n; else rows segments of n / rows */
int bench_topk_cub_prepare(pp_dtype t, size_t n, size_t rows, void *stream);
int bench_topk_cub_sort(pp_dtype t, const void *d_in, void *d_out, size_t n, void *stream);
int bench_topk_cub_segsort(pp_dtype t, const void *d_in, void *d_out, size_t rows, size_t cols,
                           void *stream);
void bench_topk_release(void);

/* cub::DeviceTopK. "CUB DeviceTopK (CCCL x.y.z)", or NULL when this build has none. */
const char *bench_cub_topk_name(void);
const char *bench_cub_topk_error(void);
/* Sizes and allocates the temporary storage for (t, n, k, largest, indices). */
int bench_cub_topk_prepare(pp_dtype t, size_t n, size_t k, bool largest, bool indices,
                           void *stream);
/* The k largest (MaxPairs / MaxKeys) or smallest (MinPairs / MinKeys) of d_in[0..n) into
 * d_values (k elements of t). d_indices: NULL for keys only, else k uint64_t positions in
 * d_in, paired with the values (the input values are the keys, a counting iterator the
 * values), the same outputs pp_topk writes. */
int bench_cub_topk(pp_dtype t, const void *d_in, size_t n, size_t k, bool largest,
                   void *d_values, uint64_t *d_indices, void *stream);
void bench_cub_topk_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_TOPK_H */
