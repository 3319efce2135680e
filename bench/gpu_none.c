/*
 * gpu_none.c — bench/gpu.h for builds without CUDA: no GPU is ever available, so
 * bench.c takes its CPU paths; every other call fails with a clear message.
 */
#include "gpu.h"

static const char no_cuda[] = "this build of parprim has no CUDA";

static int none(void) { return -1; }

int bench_gpu_available(void) { return 0; }
const char *bench_gpu_error(void) { return no_cuda; }
const char *bench_gpu_name(void) { return ""; }

int bench_gpu_mem_info(size_t *free_bytes, size_t *total_bytes) {
  (void)free_bytes;
  (void)total_bytes;
  return none();
}

int bench_gpu_stream_create(void **stream) {
  (void)stream;
  return none();
}

int bench_gpu_stream_destroy(void *stream) {
  (void)stream;
  return none();
}

int bench_gpu_stream_sync(void *stream) {
  (void)stream;
  return none();
}

int bench_gpu_timer_create(bench_gpu_timer **timer) {
  (void)timer;
  return none();
}

void bench_gpu_timer_destroy(bench_gpu_timer *timer) { (void)timer; }

int bench_gpu_timer_start(bench_gpu_timer *timer, void *stream) {
  (void)timer;
  (void)stream;
  return none();
}

int bench_gpu_timer_stop(bench_gpu_timer *timer, void *stream) {
  (void)timer;
  (void)stream;
  return none();
}

int bench_gpu_timer_elapsed_ms(bench_gpu_timer *timer, double *ms) {
  (void)timer;
  (void)ms;
  return none();
}

int bench_gpu_malloc(void **ptr, size_t bytes) {
  (void)ptr;
  (void)bytes;
  return none();
}

int bench_gpu_free(void *ptr) {
  (void)ptr;
  return none();
}

int bench_gpu_memcpy(void *dst, const void *src, size_t bytes, void *stream) {
  (void)dst;
  (void)src;
  (void)bytes;
  (void)stream;
  return none();
}

int bench_cub_reduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  (void)t;
  (void)op;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_reduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_out,
                     void *stream) {
  (void)t;
  (void)op;
  (void)d_in;
  (void)n;
  (void)d_out;
  (void)stream;
  return none();
}

int bench_cub_argreduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  (void)t;
  (void)op;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_argreduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_value_out,
                        void *d_index_out, void *stream) {
  (void)t;
  (void)op;
  (void)d_in;
  (void)n;
  (void)d_value_out;
  (void)d_index_out;
  (void)stream;
  return none();
}

void bench_gpu_release(void) {}
