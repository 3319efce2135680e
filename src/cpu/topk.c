/* topk.c — pp_topk and pp_topk_rows on the CPU (OpenMP).
 *
 * Order (API.md, and the GPU backend's): each element has an ordered image K of its
 * width — floats by value with -0.0 == +0.0 and every NaN above +inf, signed integers
 * with the sign bit flipped — inverted when the k smallest are asked for. The answer is
 * the k largest K in decreasing order, ties taken by lowest index and kept in index
 * order: the first k of a stable sort. Values are copied from the input, so their bits
 * (a -0.0, a NaN's payload) are kept.
 *
 * Method: radix selection of the threshold, 8 bits at a time from the top: each pass
 * histograms the next digit of the elements that share the digits chosen so far (one
 * histogram per thread, added up), and keeps the digit holding the krem-th largest. After
 * the last digit the threshold T is exact and krem says how many elements equal to T are
 * taken. An ordered gather then collects every K > T and the first krem K == T (per-part
 * counts give each part its output offsets), and the k (key, index) pairs are sorted.
 * One array runs each pass over all threads; rows run one row per thread.
 */
#include "cpu.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define TOPK_MAX_PARTS 64

typedef struct topk_pair {
  uint64_t key, idx;
} topk_pair;

/* decreasing key, then increasing index */
static int pair_cmp(const void *a, const void *b) {
  const topk_pair *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The value's order key (cpu.h) widened to 64 bits: composites put it above the index. */
static inline uint64_t image_u8(uint8_t x) { return pp_cpu_okey_u8(x); }
static inline uint64_t image_u32(uint32_t x) { return pp_cpu_okey_u32(x); }
static inline uint64_t image_i32(int32_t x) { return pp_cpu_okey_i32((uint32_t)x); }
static inline uint64_t image_u64(uint64_t x) { return pp_cpu_okey_u64(x); }
static inline uint64_t image_i64(int64_t x) { return pp_cpu_okey_i64((uint64_t)x); }
static inline uint64_t image_f32(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return pp_cpu_okey_f32(u);
}
static inline uint64_t image_f64(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return pp_cpu_okey_f64(u);
}

/* Threshold search and gather over x[0..n) with `parts` threads (1: the caller's thread
 * only). pairs gets the k selected (key, index) in no particular order. */
#define PP_CPU_TOPK(NAME, T, KB)                                                            \
  static inline uint64_t key_##NAME(T v, uint64_t flip) { return image_##NAME(v) ^ flip; }  \
                                                                                            \
  static void select_##NAME(const T *x, size_t n, size_t k, uint64_t flip, int parts,       \
                            topk_pair *pairs) {                                             \
    uint64_t prefix = 0, mask = 0;                                                          \
    size_t krem = k;                                                                        \
    size_t hist[TOPK_MAX_PARTS][256];                                                       \
    size_t gt[TOPK_MAX_PARTS], eq[TOPK_MAX_PARTS];                                          \
    for (int shift = (KB) - 8; shift >= 0; shift -= 8) {                                    \
      _Pragma("omp parallel num_threads(parts) if (parts > 1)")                             \
      {                                                                                     \
        size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();        \
        size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);      \
        size_t *h = hist[p];                                                                \
        memset(h, 0, 256 * sizeof *h);                                                      \
        for (size_t i = lo; i < hi; i++) {                                                  \
          uint64_t key = key_##NAME(x[i], flip);                                            \
          if ((key & mask) == prefix) h[(key >> shift) & 255]++;                            \
        }                                                                                   \
        if (p == 0) parts = (int)np;                                                        \
      }                                                                                     \
      for (int q = 1; q < parts; q++)                                                       \
        for (int d = 0; d < 256; d++) hist[0][d] += hist[q][d];                             \
      int d = 255;                                                                          \
      while (hist[0][d] < krem) krem -= hist[0][d--];                                       \
      prefix |= (uint64_t)d << shift;                                                       \
      mask |= (uint64_t)255 << shift;                                                       \
    }                                                                                       \
    /* prefix is now the threshold: take every key above it and the first krem equal */     \
    const uint64_t thr = prefix;                                                            \
    _Pragma("omp parallel num_threads(parts) if (parts > 1)")                               \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      size_t g = 0, e = 0;                                                                  \
      for (size_t i = lo; i < hi; i++) {                                                    \
        uint64_t key = key_##NAME(x[i], flip);                                              \
        g += key > thr;                                                                     \
        e += key == thr;                                                                    \
      }                                                                                     \
      gt[p] = g;                                                                            \
      eq[p] = e;                                                                            \
      _Pragma("omp barrier")                                                                \
      size_t gpos = 0, erank = 0;                                                           \
      for (size_t q = 0; q < p; q++) {                                                      \
        gpos += gt[q];                                                                      \
        erank += eq[q];                                                                     \
      }                                                                                     \
      for (size_t i = lo; i < hi; i++) {                                                    \
        uint64_t key = key_##NAME(x[i], flip);                                              \
        if (key > thr) {                                                                    \
          pairs[gpos].key = key;                                                            \
          pairs[gpos++].idx = i;                                                            \
        } else if (key == thr && erank < krem) {                                            \
          pairs[k - krem + erank].key = key;                                                \
          pairs[k - krem + erank++].idx = i;                                                \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
                                                                                            \
  static void finish_##NAME(const T *x, size_t k, topk_pair *pairs, T *vals,                \
                            uint64_t *idxs) {                                               \
    qsort(pairs, k, sizeof *pairs, pair_cmp);                                               \
    for (size_t j = 0; j < k; j++) {                                                        \
      vals[j] = x[pairs[j].idx];                                                            \
      if (idxs) idxs[j] = pairs[j].idx;                                                     \
    }                                                                                       \
  }                                                                                         \
                                                                                            \
  static pp_status topk_##NAME(pp_context *ctx, const char *fn, const void *in, size_t rows, \
                               size_t cols, size_t k, bool largest, void *values_out,      \
                               uint64_t *indices_out) {                                    \
    const uint64_t flip = largest ? 0 : ((KB) == 64 ? ~0ull : (1ull << (KB)) - 1);          \
    const T *x = in;                                                                        \
    T *vals = values_out;                                                                   \
    if (rows == 1) {                                                                        \
      topk_pair *pairs = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(k * sizeof *pairs);   \
      if (!pairs)                                                                           \
        return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no memory for %zu results", fn, k);  \
      int parts = cols >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;                       \
      if (parts > TOPK_MAX_PARTS) parts = TOPK_MAX_PARTS;                                   \
      if (parts < 1) parts = 1;                                                             \
      select_##NAME(x, cols, k, flip, parts, pairs);                                        \
      finish_##NAME(x, k, pairs, vals, indices_out);                                        \
      free(pairs);                                                                          \
      return PP_OK;                                                                         \
    }                                                                                       \
    int failed = 0;                                                                         \
    _Pragma("omp parallel if (rows > 1 && rows * cols >= PP_CPU_PARALLEL_MIN)")             \
    {                                                                                       \
      topk_pair *pairs = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(k * sizeof *pairs);   \
      if (!pairs) {                                                                         \
        _Pragma("omp atomic write")                                                         \
        failed = 1;                                                                         \
      }                                                                                     \
      /* every thread's allocation is known before any row is written: a failure anywhere \
         leaves all of values_out and indices_out as they were */                          \
      _Pragma("omp barrier")                                                                \
      int any_failed;                                                                       \
      _Pragma("omp atomic read")                                                            \
      any_failed = failed;                                                                  \
      _Pragma("omp for schedule(dynamic, 1)")                                               \
      for (size_t r = 0; r < rows; r++) {                                                   \
        if (any_failed) continue;                                                           \
        select_##NAME(x + r * cols, cols, k, flip, 1, pairs);                               \
        finish_##NAME(x + r * cols, k, pairs, vals + r * k,                                 \
                      indices_out ? indices_out + r * k : NULL);                            \
      }                                                                                     \
      free(pairs);                                                                          \
    }                                                                                       \
    if (failed) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no memory for %zu results", fn, k); \
    return PP_OK;                                                                           \
  }

PP_CPU_TOPK(u8, uint8_t, 8)
PP_CPU_TOPK(i32, int32_t, 32)
PP_CPU_TOPK(u32, uint32_t, 32)
PP_CPU_TOPK(i64, int64_t, 64)
PP_CPU_TOPK(u64, uint64_t, 64)
PP_CPU_TOPK(f32, float, 32)
PP_CPU_TOPK(f64, double, 64)

static pp_status topk_any(pp_context *ctx, const char *fn, pp_dtype t, const void *in,
                          size_t rows, size_t cols, size_t k, bool largest, void *values_out,
                          uint64_t *indices_out) {
  if (k == 0 || rows == 0) return PP_OK;
  switch (t) {
  case PP_U8: return topk_u8(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_I32: return topk_i32(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_U32: return topk_u32(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_I64: return topk_i64(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_U64: return topk_u64(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_F32: return topk_f32(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  case PP_F64: return topk_f64(ctx, fn, in, rows, cols, k, largest, values_out, indices_out);
  }
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: dtype (%d)", fn, (int)t);
}

pp_status pp_cpu_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                      bool largest, void *values_out, uint64_t *indices_out) {
  return topk_any(ctx, "pp_topk", t, in, 1, n, k, largest, values_out, indices_out);
}

pp_status pp_cpu_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                           size_t cols, size_t k, bool largest, void *values_out,
                           uint64_t *indices_out) {
  return topk_any(ctx, "pp_topk_rows", t, in, rows, cols, k, largest, values_out, indices_out);
}
