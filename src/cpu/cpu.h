/* cpu.h — what the CPU backend's files share. */
#ifndef PP_CPU_H
#define PP_CPU_H

#include "../core/internal.h"

#include <string.h>

/* Below this many elements, waking threads costs more than it saves. */
#define PP_CPU_PARALLEL_MIN 65536

/* OpenMP threads a parallel region gets. */
int pp_cpu_threads(void);

/* [begin, end) of part t of n elements split into parts contiguous pieces, the first
 * n % parts one longer; written so that no product can overflow. */
static inline size_t pp_cpu_part_begin(size_t n, size_t t, size_t parts) {
  return (n / parts) * t + (t < n % parts ? t : n % parts);
}

/* x rounded up to whole 64-byte cache lines: where a sub-buffer of one scratch block starts. */
#define PP_CPU_ALIGN64(x) (((x) + 63) & ~(size_t)63)

/* Threads for n elements when each thread should get at least min_part of them: one below
 * PP_CPU_PARALLEL_MIN. */
static inline int pp_cpu_threads_for(size_t n, size_t min_part) {
  if (n < PP_CPU_PARALLEL_MIN) return 1;
  const size_t most = n / min_part;
  const int threads = pp_cpu_threads();
  return (size_t)threads > most ? (int)most : threads;
}

/* Elements of 1, 4 or 8 bytes at index i of an array that may be unaligned (the sorts
 * take the caller's pointers as they come); memcpy compiles to one plain load or store. */
static inline uint8_t pp_cpu_ld_u8(const void *p, size_t i) { return ((const uint8_t *)p)[i]; }
static inline void pp_cpu_st_u8(void *p, size_t i, uint8_t v) { ((uint8_t *)p)[i] = v; }
static inline uint32_t pp_cpu_ld_u32(const void *p, size_t i) {
  uint32_t v;
  memcpy(&v, (const unsigned char *)p + i * sizeof v, sizeof v);
  return v;
}
static inline void pp_cpu_st_u32(void *p, size_t i, uint32_t v) {
  memcpy((unsigned char *)p + i * sizeof v, &v, sizeof v);
}
static inline uint64_t pp_cpu_ld_u64(const void *p, size_t i) {
  uint64_t v;
  memcpy(&v, (const unsigned char *)p + i * sizeof v, sizeof v);
  return v;
}
static inline void pp_cpu_st_u64(void *p, size_t i, uint64_t v) {
  memcpy((unsigned char *)p + i * sizeof v, &v, sizeof v);
}

/* Order keys (sort.c, topk.c): an unsigned image of a key's bits whose unsigned order is
 * API.md's order of the values: signed integers with the sign bit flipped; floats by value
 * with -0.0 == +0.0 and every NaN above +inf (all NaNs one key). */
static inline uint8_t pp_cpu_okey_u8(uint8_t b) { return b; }
static inline uint32_t pp_cpu_okey_u32(uint32_t b) { return b; }
static inline uint64_t pp_cpu_okey_u64(uint64_t b) { return b; }
static inline uint32_t pp_cpu_okey_i32(uint32_t b) { return b ^ UINT32_C(0x80000000); }
static inline uint64_t pp_cpu_okey_i64(uint64_t b) { return b ^ UINT64_C(0x8000000000000000); }

/* Written without branches: random signs would mispredict half the time in the hot loops.
 * Negative floats have every bit flipped, others only the sign; then -0.0 (whose flip is
 * just below +0.0's key) takes +0.0's key, and any NaN the largest key. */
static inline uint32_t pp_cpu_okey_f32(uint32_t b) {
  const uint32_t sign = UINT32_C(0x80000000);
  uint32_t k = b ^ (((uint32_t)0 - (b >> 31)) | sign);
  k = b == sign ? sign : k;
  return (b & ~sign) > UINT32_C(0x7f800000) ? UINT32_MAX : k;
}

static inline uint64_t pp_cpu_okey_f64(uint64_t b) {
  const uint64_t sign = UINT64_C(0x8000000000000000);
  uint64_t k = b ^ (((uint64_t)0 - (b >> 63)) | sign);
  k = b == sign ? sign : k;
  return (b & ~sign) > UINT64_C(0x7ff0000000000000) ? UINT64_MAX : k;
}

pp_status pp_cpu_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                        void *out);
pp_status pp_cpu_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                           void *value_out, uint64_t *index_out);

/* scan.c */
pp_status pp_cpu_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                      size_t n, bool inclusive);
pp_status pp_cpu_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                        const void *value, void *out, uint64_t *count);
pp_status pp_cpu_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, size_t n, void *out, uint64_t *count);
pp_status pp_cpu_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                           const void *value, void *out, uint64_t *count_true);

/* sort.c */
pp_status pp_cpu_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                      size_t value_size, size_t n, pp_order order, pp_sort_algo algo);
pp_status pp_cpu_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na,
                       const void *b, size_t nb, void *out, pp_order order);
/* sort_merge.c, sort_sample.c, sort_quick.c: the other algorithms of pp_sort, called by
   pp_cpu_sort for n >= 2; same contract as the radix sort */
pp_status pp_cpu_sort_merge(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                            size_t value_size, size_t n, pp_order order);
pp_status pp_cpu_sort_sample(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                             size_t value_size, size_t n, pp_order order);
pp_status pp_cpu_sort_quick(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                            size_t value_size, size_t n, pp_order order);

/* histogram.c */
pp_status pp_cpu_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                size_t bins, double lo, double hi, uint64_t *counts);
pp_status pp_cpu_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                 const double *edges, size_t bins, uint64_t *counts);
pp_status pp_cpu_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width,
                                 size_t height, size_t pitch_bytes, int channels,
                                 uint64_t *counts);
/* topk.c */
pp_status pp_cpu_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                      bool largest, void *values_out, uint64_t *indices_out);
pp_status pp_cpu_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                           size_t cols, size_t k, bool largest, void *values_out,
                           uint64_t *indices_out);
/* sgemm.c */
pp_status pp_cpu_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                       size_t n, size_t k, float alpha, const float *A, size_t lda,
                       const float *B, size_t ldb, float beta, float *C, size_t ldc);
/* conv.c */
pp_status pp_cpu_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                        size_t src_pitch, const float *filter, size_t fw, size_t fh,
                        pp_border border, float *dst, size_t dst_pitch);
pp_status pp_cpu_conv2d_separable(pp_context *ctx, const float *src, size_t width,
                                  size_t height, size_t src_pitch, const float *row_filter,
                                  size_t row_len, const float *col_filter, size_t col_len,
                                  pp_border border, float *dst, size_t dst_pitch);
/* nbody.c */
/* The kick (close: v += h a) and the kick-then-drift (open: v += h a, x += dt v) of the
 * leapfrog, shared by pp_nbody_step and the distributed step. */
void pp_cpu_nbody_advance(pp_bodies *b, const float *ax, const float *ay, const float *az,
                          float h, float dt, bool close, bool open);
pp_status pp_cpu_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                             float *ay, float *az);
pp_status pp_cpu_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening,
                            size_t steps);
pp_status pp_cpu_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening,
                              double *kinetic, double *potential);

#endif /* PP_CPU_H */
