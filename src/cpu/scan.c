/* scan.c — pp_scan, pp_select, pp_select_flagged and pp_partition on the CPU (OpenMP).
 *
 * All four are two passes over contiguous parts, one part per thread: pass 1 reduces (or
 * counts) each part; after a barrier each thread folds the totals of the parts before its
 * own into a carry (an output offset), and pass 2 scans (or copies) its part from there.
 * Reading the input twice is cheaper than writing the output twice (scan, then add the
 * carry). Below PP_CPU_PARALLEL_MIN one thread runs pass 2 alone. Indices and counts are
 * size_t throughout, so inputs beyond 2^32 elements work.
 *
 * Semantics (API.md):
 *  - inclusive out[i] is pp_reduce(in[0..i]); exclusive out[0] is pp_reduce's n == 0
 *    identity and out[i] the inclusive result at i - 1;
 *  - integer SUM wraps: it runs in the unsigned type of the same width;
 *  - f32 SUM runs in double (part totals, carries and running sums) and each output is
 *    rounded once, so the error stays near one f32 rounding for any n below ~2^29;
 *  - f64 SUM is compensated (Neumaier), which keeps the error near one rounding of the
 *    result where a plain running sum would grow with i;
 *  - float MIN/MAX order -0.0 below +0.0 and ignore NaN, as pp_reduce does (reduce.c keeps
 *    its helpers static, so the two small ones are repeated below);
 *  - select keeps x when the C comparison (x cmp value) holds: that is exactly "NaN
 *    compares false except under PP_NE" and -0.0 == +0.0.
 */
#include "cpu.h"

#include <math.h>
#include <omp.h>
#include <string.h>

/* Part totals live on the stack; more threads than this only get this many parts. */
#define SCAN_MAX_PARTS 256

static int scan_parts(size_t n) {
  int parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  return parts < 1 ? 1 : parts > SCAN_MAX_PARTS ? SCAN_MAX_PARTS : parts;
}

/* ---- accumulators --------------------------------------------------------------------- */

#define ACC_ADD(a, x) ((a) + (x)) /* integer sums: a is unsigned, so this wraps */
#define ACC_MIN(a, x) ((x) < (a) ? (x) : (a))
#define ACC_MAX(a, x) ((x) > (a) ? (x) : (a))
#define ACC_WIDEN(a, x) ((a) + (double)(x))
#define ACC_SELF(a) (a)

/* acc is NaN until a number was seen, so an all-NaN prefix scans to NaN. */
#define PP_FLOAT_ORDER(NAME, T)                                                             \
  static inline T min_##NAME(T acc, T x) {                                                  \
    if (isnan(x)) return acc;                                                               \
    return isnan(acc) || x < acc || (x == acc && signbit(x)) ? x : acc;                     \
  }                                                                                         \
  static inline T max_##NAME(T acc, T x) {                                                  \
    if (isnan(x)) return acc;                                                               \
    return isnan(acc) || x > acc || (x == acc && !signbit(x)) ? x : acc;                    \
  }

PP_FLOAT_ORDER(f32, float)
PP_FLOAT_ORDER(f64, double)

/* Neumaier's compensated sum: c gathers what each addition rounds away, also when the
 * addend is larger than the running sum. */
typedef struct kahan {
  double s, c;
} kahan;
static const kahan kahan_zero = {0.0, 0.0};

static inline kahan kahan_add(kahan a, double x) {
  double t = a.s + x;
  a.c += fabs(a.s) >= fabs(x) ? (a.s - t) + x : (x - t) + a.s;
  a.s = t;
  return a;
}

/* Once s is infinite or NaN (an inf or NaN input, or overflow) it stays so and c holds
 * inf - inf garbage: s alone is the answer. */
static inline double kahan_value(kahan a) { return isfinite(a.s) ? a.s + a.c : a.s; }

static inline kahan kahan_merge(kahan a, kahan b) {
  return kahan_add(kahan_add(a, b.s), isfinite(b.s) ? b.c : 0.0);
}

/* ---- scan ----------------------------------------------------------------------------- */

/* One scan per (dtype, op): ACC is the running state, ZERO its start (the identity, or
 * NaN for float MIN/MAX), ADD folds in an element, MERGE folds in another part's total,
 * OUT turns the state into an element, EMPTY is the exclusive scan's out[0]. Elements are
 * loaded before out[i] is stored, so in == out works. */
#define PP_CPU_SCAN(NAME, T, ACC, ZERO, EMPTY, ADD, MERGE, OUT)                             \
  static void scan_##NAME(const T *in, T *out, size_t n, bool inclusive) {                  \
    ACC total[SCAN_MAX_PARTS];                                                              \
    int parts = scan_parts(n);                                                              \
    _Pragma("omp parallel num_threads(parts) if (parts > 1)")                               \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      ACC acc = ZERO;                                                                       \
      if (np > 1) {                                                                         \
        for (size_t i = lo; i < hi; i++) acc = ADD(acc, in[i]);                             \
        total[p] = acc;                                                                     \
        _Pragma("omp barrier")                                                              \
        acc = ZERO;                                                                         \
        for (size_t q = 0; q < p; q++) acc = MERGE(acc, total[q]);                          \
      }                                                                                     \
      if (inclusive) {                                                                      \
        for (size_t i = lo; i < hi; i++) {                                                  \
          T x = in[i];                                                                      \
          acc = ADD(acc, x);                                                                \
          out[i] = (T)OUT(acc);                                                             \
        }                                                                                   \
      } else {                                                                              \
        for (size_t i = lo; i < hi; i++) {                                                  \
          T x = in[i];                                                                      \
          out[i] = (T)OUT(acc);                                                             \
          acc = ADD(acc, x);                                                                \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    if (!inclusive && n > 0) out[0] = (T)(EMPTY);                                           \
  }

#define PP_CPU_SCAN_INT(NAME, T, UT, T_LOWEST, T_HIGHEST)                                   \
  PP_CPU_SCAN(NAME##_sum, T, UT, 0, 0, ACC_ADD, ACC_ADD, ACC_SELF)                          \
  PP_CPU_SCAN(NAME##_min, T, T, T_HIGHEST, T_HIGHEST, ACC_MIN, ACC_MIN, ACC_SELF)           \
  PP_CPU_SCAN(NAME##_max, T, T, T_LOWEST, T_LOWEST, ACC_MAX, ACC_MAX, ACC_SELF)

PP_CPU_SCAN_INT(u8, uint8_t, uint8_t, 0, UINT8_MAX)
PP_CPU_SCAN_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
PP_CPU_SCAN_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
PP_CPU_SCAN_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
PP_CPU_SCAN_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)

PP_CPU_SCAN(f32_sum, float, double, 0.0, 0.0, ACC_WIDEN, ACC_ADD, ACC_SELF)
PP_CPU_SCAN(f32_min, float, float, NAN, INFINITY, min_f32, min_f32, ACC_SELF)
PP_CPU_SCAN(f32_max, float, float, NAN, -INFINITY, max_f32, max_f32, ACC_SELF)
PP_CPU_SCAN(f64_sum, double, kahan, kahan_zero, 0.0, kahan_add, kahan_merge, kahan_value)
PP_CPU_SCAN(f64_min, double, double, NAN, INFINITY, min_f64, min_f64, ACC_SELF)
PP_CPU_SCAN(f64_max, double, double, NAN, -INFINITY, max_f64, max_f64, ACC_SELF)

#define SCAN_CASE(DT, NAME)                                                                 \
  case DT:                                                                                  \
    (op == PP_SUM ? scan_##NAME##_sum : op == PP_MIN ? scan_##NAME##_min : scan_##NAME##_max)( \
        in, out, n, inclusive);                                                             \
    break;

pp_status pp_cpu_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                      size_t n, bool inclusive) {
  switch (t) {
    SCAN_CASE(PP_U8, u8)
    SCAN_CASE(PP_I32, i32)
    SCAN_CASE(PP_U32, u32)
    SCAN_CASE(PP_I64, i64)
    SCAN_CASE(PP_U64, u64)
    SCAN_CASE(PP_F32, f32)
    SCAN_CASE(PP_F64, f64)
  default: return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_scan: dtype (%d)", (int)t);
  }
  return PP_OK;
}

/* ---- select and partition ------------------------------------------------------------- */

/* The part's first output slot for kept elements (and, for a partition, for the others)
 * from the per-part counts. */
static void part_offsets(const size_t *kept, size_t p, size_t np, size_t lo, size_t *before,
                         size_t *total, size_t *rest) {
  *before = 0;
  *total = 0;
  for (size_t q = 0; q < np; q++) {
    if (q < p) *before += kept[q];
    *total += kept[q];
  }
  *rest = *total + (lo - *before); /* the rejected elements of earlier parts come first */
}

/* pass 1 counts, pass 2 copies. Only kept elements are stored by select, so out past the
 * count is left alone; a serial select needs no counting pass. in and out never overlap
 * here: for an in-place call src/core passes a private copy of the input, since a part
 * stores its kept elements into an earlier part's range, which that part may not have read
 * yet, and a partition stores its rejected elements ahead of its own reads. */
#define PP_CPU_SELECT(NAME, T)                                                              \
  static inline bool keep_##NAME(T x, T v, pp_cmp cmp) {                                    \
    switch (cmp) {                                                                          \
    case PP_GT: return x > v;                                                               \
    case PP_GE: return x >= v;                                                              \
    case PP_LT: return x < v;                                                               \
    case PP_LE: return x <= v;                                                              \
    case PP_EQ: return x == v;                                                              \
    default: return x != v;                                                                 \
    }                                                                                       \
  }                                                                                         \
  static void select_##NAME(const T *in, size_t n, pp_cmp cmp, T v, T *out, uint64_t *count, \
                            bool partition) {                                               \
    size_t kept[SCAN_MAX_PARTS];                                                            \
    int parts = scan_parts(n);                                                              \
    _Pragma("omp parallel num_threads(parts) if (parts > 1)")                               \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      size_t before = 0, total = 0, rest = 0;                                               \
      bool counted = np > 1 || partition;                                                   \
      if (counted) {                                                                        \
        size_t mine = 0;                                                                    \
        for (size_t i = lo; i < hi; i++) mine += keep_##NAME(in[i], v, cmp);                \
        kept[p] = mine;                                                                     \
        _Pragma("omp barrier")                                                              \
        part_offsets(kept, p, np, lo, &before, &total, &rest);                              \
      }                                                                                     \
      T *yes = out + before, *no = out + rest;                                              \
      for (size_t i = lo; i < hi; i++) {                                                    \
        T x = in[i];                                                                        \
        if (keep_##NAME(x, v, cmp))                                                         \
          *yes++ = x;                                                                       \
        else if (partition)                                                                 \
          *no++ = x;                                                                        \
      }                                                                                     \
      if (!counted) total = (size_t)(yes - out);                                            \
      if (p == 0) *count = total;                                                           \
    }                                                                                       \
  }

PP_CPU_SELECT(u8, uint8_t)
PP_CPU_SELECT(i32, int32_t)
PP_CPU_SELECT(u32, uint32_t)
PP_CPU_SELECT(i64, int64_t)
PP_CPU_SELECT(u64, uint64_t)
PP_CPU_SELECT(f32, float)
PP_CPU_SELECT(f64, double)

#define SELECT_CASE(DT, NAME, T)                                                            \
  case DT: {                                                                                \
    T v;                                                                                    \
    memcpy(&v, value, sizeof v);                                                            \
    select_##NAME(in, n, cmp, v, out, count, partition);                                    \
    break;                                                                                  \
  }

static pp_status select_like(pp_context *ctx, const char *fn, pp_dtype t, const void *in,
                             size_t n, pp_cmp cmp, const void *value, void *out,
                             uint64_t *count, bool partition) {
  switch (t) {
    SELECT_CASE(PP_U8, u8, uint8_t)
    SELECT_CASE(PP_I32, i32, int32_t)
    SELECT_CASE(PP_U32, u32, uint32_t)
    SELECT_CASE(PP_I64, i64, int64_t)
    SELECT_CASE(PP_U64, u64, uint64_t)
    SELECT_CASE(PP_F32, f32, float)
    SELECT_CASE(PP_F64, f64, double)
  default: return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: dtype (%d)", fn, (int)t);
  }
  return PP_OK;
}

pp_status pp_cpu_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                        const void *value, void *out, uint64_t *count) {
  return select_like(ctx, "pp_select", t, in, n, cmp, value, out, count, false);
}

pp_status pp_cpu_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                           const void *value, void *out, uint64_t *count_true) {
  return select_like(ctx, "pp_partition", t, in, n, cmp, value, out, count_true, true);
}

/* Called with a constant es for the common record sizes, so that memcpy becomes one
 * load and one store instead of a library call per record. */
static inline void copy_flagged(const uint8_t *in, const uint8_t *flags, size_t lo, size_t hi,
                                uint8_t *dst, size_t es) {
  for (size_t i = lo; i < hi; i++) {
    if (flags[i]) {
      memcpy(dst, in + i * es, es);
      dst += es;
    }
  }
}

pp_status pp_cpu_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                                const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  (void)ctx;
  const size_t es = elem_size;
  size_t kept[SCAN_MAX_PARTS];
  int parts = scan_parts(n);
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();
    size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);
    size_t mine = 0;
    for (size_t i = lo; i < hi; i++) mine += flags[i] != 0;
    kept[p] = mine;
#pragma omp barrier
    size_t before, total, rest;
    part_offsets(kept, p, np, lo, &before, &total, &rest);
    uint8_t *dst = (uint8_t *)out + before * es;
    const uint8_t *src = in;
    switch (es) {
    case 1: copy_flagged(src, flags, lo, hi, dst, 1); break;
    case 2: copy_flagged(src, flags, lo, hi, dst, 2); break;
    case 4: copy_flagged(src, flags, lo, hi, dst, 4); break;
    case 8: copy_flagged(src, flags, lo, hi, dst, 8); break;
    case 16: copy_flagged(src, flags, lo, hi, dst, 16); break;
    default: copy_flagged(src, flags, lo, hi, dst, es); break;
    }
    if (p == 0) *count = total;
  }
  return PP_OK;
}
