/*
 * peer_histogram.h — CUB's DeviceHistogram as the peer of `parprim bench histogram`, behind
 * a C interface (bench/peer_histogram.cu; only in builds with CUDA, so callers guard with
 * PP_HAVE_CUDA).
 *
 * Each *_prepare sizes CUB's temporary storage for the call and grows one cached
 * allocation; call it before timing so the timed call only launches. Counters are int32
 * (CUB's usual CounterT); the bench compares them with ours after the run. n must be
 * below 2^31 (CUB's int offsets). Return 0 on success, -1 on failure, then
 * bench_cub_histogram_error() says why.
 */
#ifndef PP_BENCH_PEER_HISTOGRAM_H
#define PP_BENCH_PEER_HISTOGRAM_H

#include "parprim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* HistogramEven over n samples of t with bins + 1 levels evenly spaced over [lo, hi),
 * counters int32 (d_counts: bins of them). u8 images of one channel use t = PP_U8. */
int bench_cub_histogram_even_prepare(pp_dtype t, size_t n, size_t bins, double lo, double hi,
                                     void *stream);
int bench_cub_histogram_even(pp_dtype t, const void *d_in, size_t n, size_t bins, double lo,
                             double hi, int32_t *d_counts, void *stream);
/* HistogramRange with bins + 1 increasing levels (double, device memory). */
int bench_cub_histogram_range_prepare(pp_dtype t, size_t n, size_t bins, const double *d_levels,
                                      void *stream);
int bench_cub_histogram_range(pp_dtype t, const void *d_in, size_t n, size_t bins,
                              const double *d_levels, int32_t *d_counts, void *stream);

const char *bench_cub_histogram_error(void);
/* Frees the cached temporary storage. */
void bench_cub_histogram_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_HISTOGRAM_H */
