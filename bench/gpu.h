/*
 * gpu.h — the CUDA side of the benchmark harness behind a C interface, so bench.c stays
 * C11 and builds without CUDA. bench/gpu.cu implements it with the CUDA runtime and CUB
 * (the peer we measure against); bench/gpu_none.c is the stand-in for builds without
 * CUDA, where bench_gpu_available() is 0 and everything else fails.
 *
 * Every int-returning call returns 0 on success and -1 on failure; then
 * bench_gpu_error() says what failed. Streams are cudaStream_t passed as void *.
 */
#ifndef PP_BENCH_GPU_H
#define PP_BENCH_GPU_H

#include "parprim.h"

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
/* Free the cached CUB temporary storage. */
void bench_gpu_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_GPU_H */
