/*
 * peer_topk.h — the CUB peers of `parprim bench topk`, behind a C interface (bench/
 * peer_topk.cu; built only with CUDA, so callers use it under #ifdef PP_HAVE_CUDA).
 *
 * CUB has no top-k: the peers sort everything and the first k of the result are the
 * answer. One array: cub::DeviceRadixSort::SortKeysDescending of all n keys. Rows:
 * cub::DeviceSegmentedSort::SortKeysDescending with one segment per row. Both leave the
 * sorted keys in d_out (n elements); temporary storage is sized by *_prepare and cached,
 * so the timed call only launches. Calls return 0, or -1 with bench_topk_error() set.
 */
#ifndef PP_BENCH_PEER_TOPK_H
#define PP_BENCH_PEER_TOPK_H

#include "parprim.h"

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_TOPK_H */
