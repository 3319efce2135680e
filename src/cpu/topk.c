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
 *
 * Fast path for one large array (the radix passes read it KB/8 + 2 times): a threshold
 * from a sample, one pass, and the exact selection among few candidates. TOPK_SAMPLES
 * keys at pseudo-random places (one per stratum) give T, the r-th largest sample, with r
 * a few standard deviations above the expected count of samples among the top k
 * (k S / n + 4 sqrt(k S / n) + 8), so the set C = {K >= T} holds the top k but with
 * negligible probability, and about n r / S elements. One pass (all threads, each in its
 * own part, in index order) gathers C as (key, index) pairs; blocks of TOPK_BLOCK elements
 * with no key >= T (nearly all of them) cost one vectorised compare. When |C| >= k the
 * answer is exactly the top k of C (every element outside C is below every element of
 * C), found by the radix selection above run on C's keys; when |C| < k, or a thread's C
 * outgrows its buffer (many equal keys at T), the radix passes run as before. This is the
 * sampling idea of Floyd and Rivest's SELECT (CACM 18(3), 1975) with one sample.
 */
#include "cpu.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define TOPK_MAX_PARTS 64
#define TOPK_SAMPLES 16384
#define TOPK_FAST_MIN ((size_t)1 << 18) /* n below this: the radix passes are cheap enough */
#define TOPK_BLOCK 64

typedef struct topk_pair {
  uint64_t key, idx;
} topk_pair;

/* decreasing key, then increasing index */
static int pair_cmp(const void *a, const void *b) {
  const topk_pair *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The r-th largest (r >= 1) of keys[0..m) of `bits` significant bits: radix selection,
 * 8 bits a pass (the same digit walk as select_* below). */
static uint64_t keys_kth(const uint64_t *keys, size_t m, size_t r, int bits) {
  uint64_t prefix = 0, mask = 0;
  size_t hist[256];
  for (int shift = bits - 8; shift >= 0; shift -= 8) {
    memset(hist, 0, sizeof hist);
    for (size_t i = 0; i < m; i++)
      if ((keys[i] & mask) == prefix) hist[(keys[i] >> shift) & 255]++;
    int d = 255;
    while (hist[d] < r) r -= hist[d--];
    prefix |= (uint64_t)d << shift;
    mask |= (uint64_t)255 << shift;
  }
  return prefix;
}

/* The k best of m candidate pairs c (in index order, m >= k) into out: every key above
 * the k-th largest, then the first of those equal to it. */
static void pairs_select(const topk_pair *c, size_t m, size_t k, int bits, uint64_t *scratch,
                         topk_pair *out) {
  for (size_t i = 0; i < m; i++) scratch[i] = c[i].key;
  const uint64_t thr = keys_kth(scratch, m, k, bits);
  size_t o = 0;
  for (size_t i = 0; i < m; i++)
    if (c[i].key > thr) out[o++] = c[i];
  for (size_t i = 0; i < m && o < k; i++)
    if (c[i].key == thr) out[o++] = c[i];
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

/* May the key of v (xor flip) be >= thr? Exact for integers. Floats take the key's
 * branch-free part (flip the sign bit, or every bit of a negative) and answer yes for the
 * values where the full key differs (-0.0 and NaN), so the answer is never a wrong no:
 * the fast path's block test, which stays vectorisable where the full key's selects did
 * not vectorise. */
static inline int hit_u8(uint8_t v, uint8_t flip, uint8_t thr) { return (uint8_t)(v ^ flip) >= thr; }
static inline int hit_u32(uint32_t v, uint32_t flip, uint32_t thr) { return (v ^ flip) >= thr; }
static inline int hit_i32(int32_t v, uint32_t flip, uint32_t thr) {
  return ((uint32_t)v ^ UINT32_C(0x80000000) ^ flip) >= thr;
}
static inline int hit_u64(uint64_t v, uint64_t flip, uint64_t thr) { return (v ^ flip) >= thr; }
static inline int hit_i64(int64_t v, uint64_t flip, uint64_t thr) {
  return ((uint64_t)v ^ UINT64_C(0x8000000000000000) ^ flip) >= thr;
}
static inline int hit_f32(float v, uint32_t flip, uint32_t thr) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  const uint32_t k = b ^ ((uint32_t)((int32_t)b >> 31) | UINT32_C(0x80000000));
  const int special = (b & UINT32_C(0x7fffffff)) > UINT32_C(0x7f800000) || b == UINT32_C(0x80000000);
  return ((k ^ flip) >= thr) | special;
}
static inline int hit_f64(double v, uint64_t flip, uint64_t thr) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  const uint64_t k = b ^ ((uint64_t)((int64_t)b >> 63) | UINT64_C(0x8000000000000000));
  const int special = (b & UINT64_C(0x7fffffffffffffff)) > UINT64_C(0x7ff0000000000000) ||
                      b == UINT64_C(0x8000000000000000);
  return ((k ^ flip) >= thr) | special;
}

/* Threshold search and gather over x[0..n) with `parts` threads (1: the caller's thread
 * only). pairs gets the k selected (key, index) in no particular order. */
#define PP_CPU_TOPK(NAME, T, KT, KB)                                                        \
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
  /* The sampled fast path (header comment); false: not taken, pairs untouched. */         \
  static bool fast_##NAME(const T *x, size_t n, size_t k, uint64_t flip, int parts,         \
                          topk_pair *pairs) {                                               \
    if (n < TOPK_FAST_MIN) return false;                                                    \
    const double expect = (double)TOPK_SAMPLES * (double)k / (double)n;                     \
    const size_t r = (size_t)(expect + 4.0 * sqrt(expect) + 8.0);                           \
    if (r >= TOPK_SAMPLES / 8) return false; /* k a large share of n */                     \
    const size_t stride = n / TOPK_SAMPLES;                                                 \
    const size_t cap = (size_t)(2.0 * (double)n * (double)r / TOPK_SAMPLES / parts) + 4096; \
    uint64_t *samples = malloc(TOPK_SAMPLES * sizeof *samples);                             \
    topk_pair *cand = malloc((size_t)parts * cap * sizeof *cand);                           \
    if (!samples || !cand) {                                                                \
      free(samples);                                                                        \
      free(cand);                                                                           \
      return false;                                                                         \
    }                                                                                       \
    for (size_t j = 0; j < TOPK_SAMPLES; j++) {                                             \
      size_t off = (size_t)((j * UINT64_C(2654435761)) % stride);                           \
      samples[j] = key_##NAME(x[pp_cpu_part_begin(n, j, TOPK_SAMPLES) + off], flip);        \
    }                                                                                       \
    const uint64_t thr = keys_kth(samples, TOPK_SAMPLES, r, KB);                            \
    size_t count[TOPK_MAX_PARTS];                                                           \
    int overflow = 0, used = parts;                                                         \
    _Pragma("omp parallel num_threads(parts) if (parts > 1)")                               \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      topk_pair *mine = cand + p * cap;                                                     \
      size_t c = 0;                                                                         \
      if (p == 0) used = (int)np;                                                           \
      for (size_t i = lo; i < hi; i += TOPK_BLOCK) {                                        \
        const size_t e = hi - i < TOPK_BLOCK ? hi : i + TOPK_BLOCK;                         \
        int any = 0;                                                                        \
        _Pragma("omp simd reduction(| : any)")                                              \
        for (size_t j = i; j < e; j++) any |= hit_##NAME(x[j], (KT)flip, (KT)thr);          \
        if (!any) continue;                                                                 \
        for (size_t j = i; j < e && c <= cap; j++) {                                        \
          const uint64_t key = key_##NAME(x[j], flip);                                      \
          if (key < thr) continue;                                                          \
          if (c == cap) {                                                                   \
            c = cap + 1;                                                                    \
            break;                                                                          \
          }                                                                                 \
          mine[c].key = key;                                                                \
          mine[c++].idx = j;                                                                \
        }                                                                                   \
        if (c > cap) break;                                                                 \
      }                                                                                     \
      if (c > cap) {                                                                        \
        _Pragma("omp atomic write")                                                         \
        overflow = 1;                                                                       \
      }                                                                                     \
      count[p] = c;                                                                         \
    }                                                                                       \
    size_t m = 0;                                                                           \
    if (!overflow)                                                                          \
      for (int q = 0; q < used; q++) { /* the parts back to back, in index order */         \
        memmove(cand + m, cand + (size_t)q * cap, count[q] * sizeof *cand);                 \
        m += count[q];                                                                      \
      }                                                                                     \
    const bool taken = !overflow && m >= k;                                                 \
    if (taken) {                                                                            \
      uint64_t *keys = m <= TOPK_SAMPLES ? samples : malloc(m * sizeof *keys);              \
      if (keys) {                                                                           \
        pairs_select(cand, m, k, KB, keys, pairs);                                          \
        if (keys != samples) free(keys);                                                    \
      }                                                                                     \
      free(samples);                                                                        \
      free(cand);                                                                           \
      return keys != NULL;                                                                  \
    }                                                                                       \
    free(samples);                                                                          \
    free(cand);                                                                             \
    return false;                                                                           \
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
      if (!fast_##NAME(x, cols, k, flip, parts, pairs))                                     \
        select_##NAME(x, cols, k, flip, parts, pairs);                                      \
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

/* name, element type, key type of its width (the fast path compares in it, which
 * vectorises where 64-bit compares would not), key bits */
PP_CPU_TOPK(u8, uint8_t, uint8_t, 8)
PP_CPU_TOPK(i32, int32_t, uint32_t, 32)
PP_CPU_TOPK(u32, uint32_t, uint32_t, 32)
PP_CPU_TOPK(i64, int64_t, uint64_t, 64)
PP_CPU_TOPK(u64, uint64_t, uint64_t, 64)
PP_CPU_TOPK(f32, float, uint32_t, 32)
PP_CPU_TOPK(f64, double, uint64_t, 64)

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
