/*
 * gpu_none.c — bench/gpu.h for builds without CUDA: no GPU is ever available, so
 * bench.c takes its CPU paths; every other call fails with a clear message.
 */
#include "gpu.h"

static const char no_cuda[] = "this build of parprim has no CUDA";

/* Every stub fails; its arguments go through the variadic part, which uses them (so
 * -Wunused-parameter stays quiet without a (void) line for each). */
static int none_used(int unused, ...) { return unused - 1; }
#define NONE(...) none_used(0, __VA_ARGS__)

int bench_gpu_available(void) { return 0; }
const char *bench_gpu_error(void) { return no_cuda; }
const char *bench_gpu_name(void) { return ""; }

int bench_gpu_mem_info(size_t *free_bytes, size_t *total_bytes) {
  return NONE(free_bytes, total_bytes);
}

int bench_gpu_stream_create(void **stream) {
  return NONE(stream);
}

int bench_gpu_stream_destroy(void *stream) {
  return NONE(stream);
}

int bench_gpu_stream_sync(void *stream) {
  return NONE(stream);
}

int bench_gpu_timer_create(bench_gpu_timer **timer) {
  return NONE(timer);
}

void bench_gpu_timer_destroy(bench_gpu_timer *timer) { (void)timer; }

int bench_gpu_timer_start(bench_gpu_timer *timer, void *stream) {
  return NONE(timer, stream);
}

int bench_gpu_timer_stop(bench_gpu_timer *timer, void *stream) {
  return NONE(timer, stream);
}

int bench_gpu_timer_elapsed_ms(bench_gpu_timer *timer, double *ms) {
  return NONE(timer, ms);
}

int bench_gpu_malloc(void **ptr, size_t bytes) {
  return NONE(ptr, bytes);
}

int bench_gpu_free(void *ptr) {
  return NONE(ptr);
}

int bench_gpu_memcpy(void *dst, const void *src, size_t bytes, void *stream) {
  return NONE(dst, src, bytes, stream);
}

int bench_cub_reduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  return NONE(t, op, n, stream);
}

int bench_cub_reduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_out,
                     void *stream) {
  return NONE(t, op, d_in, n, d_out, stream);
}

int bench_cub_argreduce_prepare(pp_dtype t, pp_op op, size_t n, void *stream) {
  return NONE(t, op, n, stream);
}

int bench_cub_argreduce(pp_dtype t, pp_op op, const void *d_in, size_t n, void *d_value_out,
                        void *d_index_out, void *stream) {
  return NONE(t, op, d_in, n, d_value_out, d_index_out, stream);
}

int bench_cub_scan_prepare(pp_dtype t, pp_op op, bool inclusive, size_t n, void *stream) {
  return NONE(t, op, inclusive, n, stream);
}

int bench_cub_scan(pp_dtype t, pp_op op, bool inclusive, const void *d_in, void *d_out,
                   size_t n, void *stream) {
  return NONE(t, op, inclusive, d_in, d_out, n, stream);
}

int bench_cub_select_prepare(pp_dtype t, size_t n, void *stream) {
  return NONE(t, n, stream);
}

int bench_cub_select(pp_dtype t, const void *value, const void *d_in, void *d_out,
                     uint64_t *d_count, size_t n, void *stream) {
  return NONE(t, value, d_in, d_out, d_count, n, stream);
}

int bench_cub_partition_prepare(pp_dtype t, size_t n, void *stream) {
  return NONE(t, n, stream);
}

int bench_cub_partition(pp_dtype t, const void *value, const void *d_in, void *d_out,
                        uint64_t *d_count, size_t n, void *stream) {
  return NONE(t, value, d_in, d_out, d_count, n, stream);
}

int bench_cub_select_flagged_prepare(size_t elem_size, size_t n, void *stream) {
  return NONE(elem_size, n, stream);
}

int bench_cub_select_flagged(size_t elem_size, const void *d_in, const uint8_t *d_flags,
                             void *d_out, uint64_t *d_count, size_t n, void *stream) {
  return NONE(elem_size, d_in, d_flags, d_out, d_count, n, stream);
}

int bench_cub_sort_prepare(pp_dtype key_t, size_t value_size, bool descending, size_t n,
                           void *stream) {
  return NONE(key_t, value_size, descending, n, stream);
}

int bench_cub_sort(pp_dtype key_t, void *const d_keys[2], void *const d_values[2],
                   size_t value_size, size_t n, bool descending, int *current, void *stream) {
  return NONE(key_t, d_keys, d_values, value_size, n, descending, current, stream);
}

int bench_cub_merge_sort_prepare(pp_dtype key_t, bool descending, size_t n, void *stream) {
  return NONE(key_t, descending, n, stream);
}

int bench_cub_merge_sort(pp_dtype key_t, void *d_keys, size_t n, bool descending, void *stream) {
  return NONE(key_t, d_keys, n, descending, stream);
}

int bench_cub_merge_prepare(pp_dtype t, bool descending, size_t na, size_t nb, void *stream) {
  return NONE(t, descending, na, nb, stream);
}

int bench_cub_merge(pp_dtype t, bool descending, const void *d_a, size_t na, const void *d_b,
                    size_t nb, void *d_out, void *stream) {
  return NONE(t, descending, d_a, na, d_b, nb, d_out, stream);
}

void bench_gpu_release(void) {}
