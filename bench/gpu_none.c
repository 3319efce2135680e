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

int bench_cub_scan_prepare(pp_dtype t, pp_op op, bool inclusive, size_t n, void *stream) {
  (void)t;
  (void)op;
  (void)inclusive;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_scan(pp_dtype t, pp_op op, bool inclusive, const void *d_in, void *d_out,
                   size_t n, void *stream) {
  (void)t;
  (void)op;
  (void)inclusive;
  (void)d_in;
  (void)d_out;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_select_prepare(pp_dtype t, size_t n, void *stream) {
  (void)t;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_select(pp_dtype t, const void *value, const void *d_in, void *d_out,
                     uint64_t *d_count, size_t n, void *stream) {
  (void)t;
  (void)value;
  (void)d_in;
  (void)d_out;
  (void)d_count;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_partition_prepare(pp_dtype t, size_t n, void *stream) {
  (void)t;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_partition(pp_dtype t, const void *value, const void *d_in, void *d_out,
                        uint64_t *d_count, size_t n, void *stream) {
  (void)t;
  (void)value;
  (void)d_in;
  (void)d_out;
  (void)d_count;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_select_flagged_prepare(size_t elem_size, size_t n, void *stream) {
  (void)elem_size;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_select_flagged(size_t elem_size, const void *d_in, const uint8_t *d_flags,
                             void *d_out, uint64_t *d_count, size_t n, void *stream) {
  (void)elem_size;
  (void)d_in;
  (void)d_flags;
  (void)d_out;
  (void)d_count;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_sort_prepare(pp_dtype key_t, size_t value_size, bool descending, size_t n,
                           void *stream) {
  (void)key_t;
  (void)value_size;
  (void)descending;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_sort(pp_dtype key_t, void *const d_keys[2], void *const d_values[2],
                   size_t value_size, size_t n, bool descending, int *current, void *stream) {
  (void)key_t;
  (void)d_keys;
  (void)d_values;
  (void)value_size;
  (void)n;
  (void)descending;
  (void)current;
  (void)stream;
  return none();
}

int bench_cub_merge_sort_prepare(pp_dtype key_t, bool descending, size_t n, void *stream) {
  (void)key_t;
  (void)descending;
  (void)n;
  (void)stream;
  return none();
}

int bench_cub_merge_sort(pp_dtype key_t, void *d_keys, size_t n, bool descending, void *stream) {
  (void)key_t;
  (void)d_keys;
  (void)n;
  (void)descending;
  (void)stream;
  return none();
}

int bench_cub_merge_prepare(pp_dtype t, bool descending, size_t na, size_t nb, void *stream) {
  (void)t;
  (void)descending;
  (void)na;
  (void)nb;
  (void)stream;
  return none();
}

int bench_cub_merge(pp_dtype t, bool descending, const void *d_a, size_t na, const void *d_b,
                    size_t nb, void *d_out, void *stream) {
  (void)t;
  (void)descending;
  (void)d_a;
  (void)na;
  (void)d_b;
  (void)nb;
  (void)d_out;
  (void)stream;
  return none();
}

void bench_gpu_release(void) {}
