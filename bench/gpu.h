/*
 * gpu.h — the peers of the benchmark harness that are not C, behind a C interface, so
 * bench.c stays C11 and builds without CUDA:
 *  - the CUDA side: bench/gpu.cu implements it with the CUDA runtime and CUB (the peer
 *    we measure against); bench/gpu_none.c is the stand-in for builds without CUDA,
 *    where bench_gpu_available() is 0 and everything else fails;
 *  - the CPU peers that only C++ has (std::sort, std::stable_sort, std::merge), in
 *    bench/peer_std.cpp, present in every build.
 *
 * Every int-returning call returns 0 on success and -1 on failure; then
 * bench_gpu_error() says what failed (bench_std_* calls fail only on bad arguments).
 * Streams are cudaStream_t passed as void *.
 */
#ifndef PP_BENCH_GPU_H
#define PP_BENCH_GPU_H

#include "parprim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build has CUDA and a GPU is usable, else 0. */
int bench_gpu_available(void);
/* Text of the last failure; "" if none. */
const char *bench_gpu_error(void);
/* Name of the current device, or "" when there is none. */
const char *bench_gpu_name(void);
int bench_gpu_mem_info(size_t *free_bytes, size_t *total_bytes);

int bench_gpu_stream_create(void **stream); /* non-blocking with respect to stream 0 */
int bench_gpu_stream_destroy(void *stream);
int bench_gpu_stream_sync(void *stream);

/* A start/stop pair of CUDA events. */
typedef struct bench_gpu_timer bench_gpu_timer;
int bench_gpu_timer_create(bench_gpu_timer **timer);
void bench_gpu_timer_destroy(bench_gpu_timer *timer);
int bench_gpu_timer_start(bench_gpu_timer *timer, void *stream);
int bench_gpu_timer_stop(bench_gpu_timer *timer, void *stream);
/* Waits for the stop event, then gives stop - start. */
int bench_gpu_timer_elapsed_ms(bench_gpu_timer *timer, double *ms);

int bench_gpu_malloc(void **ptr, size_t bytes);
int bench_gpu_free(void *ptr);
/* cudaMemcpyAsync device to device on stream: the roofline reference. */
int bench_gpu_memcpy(void *dst, const void *src, size_t bytes, void *stream);

/* CUB peers. *_prepare sizes CUB's temporary storage for (t, op, n) and grows the one
 * cached allocation if needed; call it before timing so the timed call only launches.
 * bench_cub_reduce: cub::DeviceReduce::Sum/Min/Max, one element of t to d_out.
 * bench_cub_argreduce: cub::DeviceReduce::ArgMin/ArgMax (op MIN or MAX), one element of t
 * to d_value_out and an int64_t index to d_index_out. */
int bench_cub_reduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream);
int bench_cub_reduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_out,
                     void *stream);
int bench_cub_argreduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream);
int bench_cub_argreduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_value_out,
                        void *d_index_out, void *stream);

/* Scan: SUM is DeviceScan::ExclusiveSum / InclusiveSum; MIN and MAX are ExclusiveScan
 * (seeded with the identity: the largest / lowest value of t, +-inf for floats) and
 * InclusiveScan with cuda::minimum / cuda::maximum. d_out gets n elements of t. */
int bench_cub_scan_prepare(pp_dtype t, pp_op op, bool inclusive, size_t n, void *stream);
int bench_cub_scan(pp_dtype t, pp_op op, bool inclusive, const void *d_in, void *d_out,
                   size_t n, void *stream);
/* DeviceSelect::If and DevicePartition::If keeping x > *value (value: one element of t in
 * host memory, read at each call). The count goes to d_count as a uint64_t. Partition
 * writes the rejected elements in reverse order after the selected ones (CUB's layout,
 * not parprim's). */
int bench_cub_select_prepare(pp_dtype t, size_t n, void *stream);
int bench_cub_select(pp_dtype t, const void *value, const void *d_in, void *d_out,
                     uint64_t *d_count, size_t n, void *stream);
int bench_cub_partition_prepare(pp_dtype t, size_t n, void *stream);
int bench_cub_partition(pp_dtype t, const void *value, const void *d_in, void *d_out,
                        uint64_t *d_count, size_t n, void *stream);
/* DeviceSelect::Flagged over records of elem_size 1, 2, 4 or 8 bytes (copied as bits);
 * a record is kept where its flag byte is non-zero. */
int bench_cub_select_flagged_prepare(size_t elem_size, size_t n, void *stream);
int bench_cub_select_flagged(size_t elem_size, const void *d_in, const uint8_t *d_flags,
                             void *d_out, uint64_t *d_count, size_t n, void *stream);
/* DeviceRadixSort::SortKeys / SortPairs (or *Descending) in their DoubleBuffer form, the
 * fastest CUB offers: the keys start in d_keys[0] (values in d_values[0]) and both
 * buffers are overwritten; *current (0 or 1) says which holds the result. value_size is 0
 * (keys only, d_values ignored) or 4 (uint32_t values). */
int bench_cub_sort_prepare(pp_dtype key_t, size_t value_size, bool descending, size_t n,
                           void *stream);
int bench_cub_sort(pp_dtype key_t, void *const d_keys[2], void *const d_values[2],
                   size_t value_size, size_t n, bool descending, int *current, void *stream);
/* DeviceMergeSort::SortKeys of d_keys in place with cuda::std::less (greater when
 * descending), 32-bit counts below 2^32: the peer of the comparison sorts (PP_SORT_MERGE,
 * PP_SORT_SAMPLE, PP_SORT_QUICK). Stable. */
int bench_cub_merge_sort_prepare(pp_dtype key_t, bool descending, size_t n, void *stream);
int bench_cub_merge_sort(pp_dtype key_t, void *d_keys, size_t n, bool descending, void *stream);
/* DeviceMerge::MergeKeys of two sorted arrays with cuda::std::less (greater when
 * descending) into d_out (na + nb elements). CUB documents it as unstable, which only
 * shows for keys that compare equal with different bits (-0.0 and +0.0). */
int bench_cub_merge_prepare(pp_dtype t, bool descending, size_t na, size_t nb, void *stream);
int bench_cub_merge(pp_dtype t, bool descending, const void *d_a, size_t na, const void *d_b,
                    size_t nb, void *d_out, void *stream);

/* Free the cached CUB temporary storage. */
void bench_gpu_release(void);

/* ---- CPU peers: the C++ standard library (bench/peer_std.cpp), serial ---------------- */

/* Bytes of scratch bench_std_sort needs for pairs (0 for keys only). */
size_t bench_std_sort_scratch_bytes(pp_dtype key_t, size_t value_size, size_t n);
/* Keys only (values NULL): std::sort with std::less (std::greater when descending).
 * Pairs (value_size 4 or 8): std::stable_sort of (key, value) records packed into scratch
 * (bench_std_sort_scratch_bytes, 16-byte aligned) and unpacked again, so equal keys keep
 * their order, as parprim's and CUB's sorts do. The data must hold no NaN (std::sort
 * needs a strict weak order). */
int bench_std_sort(pp_dtype key_t, void *keys, void *values, size_t value_size, size_t n,
                   bool descending, void *scratch);
/* std::merge (stable: a before b on ties) of two sorted arrays into out. */
int bench_std_merge(pp_dtype t, bool descending, const void *a, size_t na, const void *b,
                    size_t nb, void *out);

/* ---- CPU peers: threaded libraries, built in when found (cmake/cpu_peers.cmake) ------
 * bench/peer_cpu_blas.cpp (OpenBLAS), peer_cpu_opencv.cpp (OpenCV), peer_cpu_par.cpp (the
 * standard library's parallel algorithms through TBB). Each library's *_name() is its
 * name and version, or NULL when this build lacks it; then every call of that library
 * returns -1. threads: the context's thread count, which each call imposes on the
 * library's own pool (openblas_set_num_threads, cv::setNumThreads, tbb::global_control),
 * so a peer never runs on more cores than parprim does. */
const char *bench_cpu_blas_name(void);
const char *bench_cpu_opencv_name(void);
const char *bench_cpu_tbb_name(void);

/* cblas_sgemm with pp_sgemm's arguments. */
int bench_cblas_sgemm(pp_layout layout, pp_trans ta, pp_trans tb, size_t m, size_t n, size_t k,
                      float alpha, const float *A, size_t lda, const float *B, size_t ldb,
                      float beta, float *C, size_t ldc, int threads);

/* cv::filter2D (correlation, anchor at the centre, as pp_conv2d) and cv::sepFilter2D on
 * CV_32F images with pp_conv2d's arguments (pitches in elements). Borders: PP_BORDER_MIRROR
 * is BORDER_REFLECT_101, PP_BORDER_CLAMP BORDER_REPLICATE, PP_BORDER_ZERO BORDER_CONSTANT
 * with 0. OpenCV switches to a DFT above 11 x 11 taps in filter2D, as it would for any
 * caller (so for 13 x 13 and larger). */
int bench_cv_filter2d(const float *src, size_t width, size_t height, size_t src_pitch,
                      const float *filter, size_t fw, size_t fh, pp_border border, float *dst,
                      size_t dst_pitch, int threads);
int bench_cv_sep_filter2d(const float *src, size_t width, size_t height, size_t src_pitch,
                          const float *row_filter, size_t row_len, const float *col_filter,
                          size_t col_len, pp_border border, float *dst, size_t dst_pitch,
                          int threads);
/* cv::calcHist of each of `channels` (1..4) interleaved u8 channels, 256 bins over
 * [0, 256): counts gets channels x 256 entries, channel after channel, as
 * pp_histogram_image writes them. */
int bench_cv_calc_hist(const uint8_t *pixels, size_t width, size_t height, size_t pitch_bytes,
                       int channels, uint64_t *counts, int threads);

/* std::execution::par versions of the std peers: std::sort (keys) and std::stable_sort
 * (pairs, packed as bench_std_sort does; same scratch), std::reduce (SUM), std::exclusive_scan
 * and std::inclusive_scan (SUM), std::copy_if keeping x > *value (value: one element of t),
 * std::copy of bytes (the parallel copy: the machine's memory bandwidth), and top-k as a
 * copy, std::nth_element and std::sort of the k first (values only, into values_out;
 * scratch: n elements of t). */
int bench_par_sort(pp_dtype key_t, void *keys, void *values, size_t value_size, size_t n,
                   bool descending, void *scratch, int threads);
int bench_par_reduce(pp_dtype t, const void *in, size_t n, void *out, int threads);
int bench_par_scan(pp_dtype t, bool inclusive, const void *in, void *out, size_t n, int threads);
int bench_par_select_gt(pp_dtype t, const void *value, const void *in, size_t n, void *out,
                        uint64_t *count, int threads);
int bench_par_copy(void *dst, const void *src, size_t bytes, int threads);
int bench_par_topk(pp_dtype t, const void *in, size_t n, size_t k, bool largest,
                   void *values_out, void *scratch, int threads);

/* The FP32 peak of the cores a context runs on, from what the machine reports: threads x
 * clock (GHz) x vector lanes (8 for AVX2, 16 for AVX-512 where the core has full-width
 * FMA units, 4 otherwise) x 2 FMA pipes x 2 flops per FMA. *how gets a one-line account of
 * the figures used; 0 when the clock is unknown. */
double bench_cpu_fp32_peak_gflops(int threads, char *how, size_t how_len);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_GPU_H */
