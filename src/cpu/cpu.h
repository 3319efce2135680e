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

/* Whether t is one of pp_dtype's values: the dispatch tables are indexed by it. */
#define PP_CPU_DTYPES 7
static inline bool pp_cpu_dtype_ok(pp_dtype t) { return (unsigned)t < PP_CPU_DTYPES; }

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
#define PP_CPU_LDST(W, T)                                                                   \
  static inline T pp_cpu_ld_##W(const void *p, size_t i) {                                  \
    T v;                                                                                    \
    memcpy(&v, (const unsigned char *)p + i * sizeof v, sizeof v);                          \
    return v;                                                                               \
  }                                                                                         \
  static inline void pp_cpu_st_##W(void *p, size_t i, T v) {                                \
    memcpy((unsigned char *)p + i * sizeof v, &v, sizeof v);                                \
  }
PP_CPU_LDST(u32, uint32_t)
PP_CPU_LDST(u64, uint64_t)

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

/* The entry points of the backend's table (backend.c) are declared with the type of their
 * slot in pp_backend_ops (src/core/internal.h), so each definition is checked against the
 * table's signature and the parameter lists are written once. */
#define PP_CPU_ENTRY(slot, fn) extern __typeof__(*((pp_backend_ops *)0)->slot) fn
PP_CPU_ENTRY(reduce, pp_cpu_reduce); /* reduce.c */
PP_CPU_ENTRY(argreduce, pp_cpu_argreduce);
PP_CPU_ENTRY(scan, pp_cpu_scan); /* scan.c */
PP_CPU_ENTRY(select, pp_cpu_select); PP_CPU_ENTRY(partition, pp_cpu_partition);
PP_CPU_ENTRY(select_flagged, pp_cpu_select_flagged);
PP_CPU_ENTRY(sort, pp_cpu_sort); PP_CPU_ENTRY(merge, pp_cpu_merge); /* sort.c */
PP_CPU_ENTRY(sort_copy, pp_cpu_sort_copy); PP_CPU_ENTRY(merge_pairs, pp_cpu_merge_pairs); /* sort.c */
PP_CPU_ENTRY(histogram_even, pp_cpu_histogram_even); /* histogram.c */
PP_CPU_ENTRY(histogram_range, pp_cpu_histogram_range);
PP_CPU_ENTRY(histogram_image, pp_cpu_histogram_image);
PP_CPU_ENTRY(topk, pp_cpu_topk); PP_CPU_ENTRY(topk_rows, pp_cpu_topk_rows); /* topk.c */
PP_CPU_ENTRY(sgemm, pp_cpu_sgemm); /* sgemm.c */
PP_CPU_ENTRY(conv2d, pp_cpu_conv2d); /* conv.c */
PP_CPU_ENTRY(conv2d_separable, pp_cpu_conv2d_separable);
PP_CPU_ENTRY(nbody_accel, pp_cpu_nbody_accel); /* nbody.c */
PP_CPU_ENTRY(nbody_step, pp_cpu_nbody_step); PP_CPU_ENTRY(nbody_energy, pp_cpu_nbody_energy);

/* sort_merge.c, sort_sample.c, sort_quick.c: the other algorithms of pp_sort, called by
 * pp_cpu_sort for n >= 2, with its contract less the algo argument */
typedef pp_status pp_cpu_sort_algo_fn(pp_context *ctx, pp_dtype key_t, void *keys,
                                      void *values, size_t value_size, size_t n,
                                      pp_order order);
extern pp_cpu_sort_algo_fn pp_cpu_sort_merge, pp_cpu_sort_sample, pp_cpu_sort_quick;

/* nbody.c: the kick (close: v += h a) and the kick-then-drift (open: v += h a,
 * x += dt v) of the leapfrog, shared by pp_nbody_step and the distributed step. */
void pp_cpu_nbody_advance(pp_bodies *b, const float *ax, const float *ay, const float *az,
                          float h, float dt, bool close, bool open);

#endif /* PP_CPU_H */
