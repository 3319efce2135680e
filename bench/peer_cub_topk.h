/*
 * peer_cub_topk.h — cub::DeviceTopK as a peer of `parprim bench topk`, behind a C interface
 * (bench/peer_cub_topk.cu; built only with CUDA, so callers use it under #ifdef
 * PP_HAVE_CUDA).
 *
 * DeviceTopK came with CCCL 3.3, newer than the toolkit's own CCCL, so the peer is compiled
 * against newer CCCL headers (cmake/bench_peers.cmake: PP_CCCL_NEW_INCLUDE). Without them
 * the file compiles to stubs: bench_cub_topk_name() is NULL, bench_cub_topk_error() says
 * why, and every call fails.
 *
 * What it computes differs from pp_topk in two ways the bench states beside its figures:
 * the k results come in no particular order, and when several elements tie at the k-th
 * value which of them are returned may change from run to run. CUB implements only this
 * configuration today; it must be asked for explicitly
 * (cuda::execution::require(determinism::not_guaranteed, output_ordering::unsorted)).
 * pp_topk's are sorted and deterministic.
 *
 * Calls return 0, or -1 with bench_cub_topk_error() set. Streams are cudaStream_t as void *.
 */
#ifndef PP_BENCH_PEER_CUB_TOPK_H
#define PP_BENCH_PEER_CUB_TOPK_H

#include "parprim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "CUB DeviceTopK (CCCL x.y.z)", or NULL when this build has no DeviceTopK. */
const char *bench_cub_topk_name(void);
const char *bench_cub_topk_error(void);
/* Sizes and allocates the temporary storage for (t, n, k, largest, indices) so the timed
 * call only launches. */
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

#endif /* PP_BENCH_PEER_CUB_TOPK_H */
