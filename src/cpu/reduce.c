/* reduce.c — pp_reduce and pp_argreduce on the CPU (OpenMP).
 *
 * The rules of API.md, and how they are met here:
 *  - integer SUM wraps in the type: sums run in the unsigned type of the same width, where
 *    wrapping is defined (u8 too: its sum mod 256 is the same whatever the order, and byte
 *    lanes keep all 32 of an AVX2 register's lanes busy where a wider sum would use 4);
 *  - f32 SUM is accumulated in double, so its error is far inside that of pairwise
 *    summation (sixteen independent lanes per thread keep it at memory speed);
 *  - float MIN/MAX ignore NaN: NaN in the accumulator means "nothing seen yet", so an
 *    all-NaN input gives NaN; -0.0 is ordered below +0.0 so that the result does not
 *    depend on how the pass was split among threads;
 *  - argreduce keeps the first index on ties: each thread takes one contiguous part and
 *    the parts are combined in order with a strict comparison.
 */
#include "cpu.h"

#include <float.h>
#include <math.h>
#include <omp.h>

/* ---- integers ------------------------------------------------------------------------ */

#define PP_CPU_INT_REDUCE(NAME, T, SUM_T, T_LOWEST, T_HIGHEST)                              \
  static void reduce_##NAME(pp_op op, const void *in_, size_t n, void *out_) {              \
    const T *in = in_;                                                                      \
    T *out = out_;                                                                          \
    if (op == PP_SUM) {                                                                     \
      SUM_T s = 0;                                                                          \
      _Pragma("omp parallel for simd reduction(+ : s) schedule(static) if (n >= PP_CPU_PARALLEL_MIN)") \
      for (size_t i = 0; i < n; i++) s += (SUM_T)in[i];                                     \
      *out = (T)s;                                                                          \
    } else if (op == PP_MIN) {                                                              \
      T m = T_HIGHEST;                                                                      \
      _Pragma("omp parallel for simd reduction(min : m) schedule(static) if (n >= PP_CPU_PARALLEL_MIN)") \
      for (size_t i = 0; i < n; i++) m = in[i] < m ? in[i] : m;                             \
      *out = m;                                                                             \
    } else {                                                                                \
      T m = T_LOWEST;                                                                       \
      _Pragma("omp parallel for simd reduction(max : m) schedule(static) if (n >= PP_CPU_PARALLEL_MIN)") \
      for (size_t i = 0; i < n; i++) m = in[i] > m ? in[i] : m;                             \
      *out = m;                                                                             \
    }                                                                                       \
  }

PP_CPU_INT_REDUCE(u8, uint8_t, uint8_t, 0, UINT8_MAX)
PP_CPU_INT_REDUCE(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
PP_CPU_INT_REDUCE(u32, uint32_t, uint32_t, 0, UINT32_MAX)
PP_CPU_INT_REDUCE(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX) PP_CPU_INT_REDUCE(u64, uint64_t, uint64_t, 0, UINT64_MAX)

/* ---- floats -------------------------------------------------------------------------- */

/* acc is NaN until a number was seen. Every f32 value is exact in double. */
static inline double float_min(double acc, double x) {
  if (isnan(x)) return acc;
  if (isnan(acc) || x < acc || (x == acc && signbit(x))) return x;
  return acc;
}

static inline double float_max(double acc, double x) {
  if (isnan(x)) return acc;
  if (isnan(acc) || x > acc || (x == acc && !signbit(x))) return x;
  return acc;
}

/* Sixteen independent double sums per thread: one running sum would make the add latency
 * the limit (about one element per cycle); independent lanes become plain vector adds,
 * no fast-math needed, and the loop runs at memory speed. */
#define PP_CPU_SUM_LANES 16
#define PP_CPU_FLOAT_SUM(NAME, T)                                                           \
  static double sum_part_##NAME(const T *x, size_t n) {                                     \
    double lane[PP_CPU_SUM_LANES] = {0};                                                    \
    size_t i = 0;                                                                           \
    for (; i + PP_CPU_SUM_LANES <= n; i += PP_CPU_SUM_LANES)                                \
      for (int j = 0; j < PP_CPU_SUM_LANES; j++) lane[j] += (double)x[i + j];               \
    double s = 0.0;                                                                         \
    for (; i < n; i++) s += (double)x[i];                                                   \
    for (int j = 0; j < PP_CPU_SUM_LANES; j++) s += lane[j];                                \
    return s;                                                                               \
  }                                                                                         \
  static double sum_##NAME(const T *in, size_t n) {                                         \
    size_t parts = n >= PP_CPU_PARALLEL_MIN ? (size_t)pp_cpu_threads() : 1;                 \
    double s = 0.0;                                                                         \
    _Pragma("omp parallel for reduction(+ : s) schedule(static) if (parts > 1)")            \
    for (size_t p = 0; p < parts; p++) {                                                    \
      size_t lo = pp_cpu_part_begin(n, p, parts), hi = pp_cpu_part_begin(n, p + 1, parts);  \
      s += sum_part_##NAME(in + lo, hi - lo);                                               \
    }                                                                                       \
    return s;                                                                               \
  }

PP_CPU_FLOAT_SUM(f32, float)
PP_CPU_FLOAT_SUM(f64, double)

#define PP_CPU_FLOAT_REDUCE(NAME, T)                                                        \
  static void reduce_##NAME(pp_op op, const void *in_, size_t n, void *out_) {              \
    const T *in = in_;                                                                      \
    T *out = out_;                                                                          \
    if (op == PP_SUM) {                                                                     \
      *out = (T)sum_##NAME(in, n);                                                          \
      return;                                                                               \
    }                                                                                       \
    double best = NAN;                                                                      \
    _Pragma("omp parallel if (n >= PP_CPU_PARALLEL_MIN)")                                   \
    {                                                                                       \
      double mine = NAN;                                                                    \
      _Pragma("omp for schedule(static) nowait")                                            \
      for (size_t i = 0; i < n; i++)                                                        \
        mine = op == PP_MIN ? float_min(mine, in[i]) : float_max(mine, in[i]);              \
      _Pragma("omp critical(pp_cpu_float_reduce)")                                          \
      best = op == PP_MIN ? float_min(best, mine) : float_max(best, mine);                  \
    }                                                                                       \
    if (n == 0) best = op == PP_MIN ? INFINITY : -INFINITY;                                 \
    *out = (T)best;                                                                         \
  }

PP_CPU_FLOAT_REDUCE(f32, float)
PP_CPU_FLOAT_REDUCE(f64, double)

#define BY_DTYPE(F)                                                                         \
  {[PP_U8] = F##_u8,   [PP_I32] = F##_i32, [PP_U32] = F##_u32, [PP_I64] = F##_i64,           \
   [PP_U64] = F##_u64, [PP_F32] = F##_f32, [PP_F64] = F##_f64}

pp_status pp_cpu_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                        void *out) {
  static void (*const table[PP_CPU_DTYPES])(pp_op, const void *, size_t, void *) =
      BY_DTYPE(reduce);
  if (!pp_cpu_dtype_ok(t)) return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_reduce: dtype (%d)", (int)t);
  table[t](op, in, n, out);
  return PP_OK;
}

/* ---- argreduce ----------------------------------------------------------------------- */

#define PP_MAX_PARTS 256
#define PP_NOT_NAN(x) 0
#define PP_IS_NAN(x) isnan(x)

/* Each part finds its best (value, index) with a strict comparison, so its first index
 * wins ties; parts are then combined in index order the same way. */
#define PP_CPU_ARGREDUCE(NAME, T, IS_NAN, T_LOWEST, T_HIGHEST)                              \
  static void argreduce_##NAME(pp_op op, const void *in_, size_t n, void *value_,          \
                               uint64_t *index) {                                           \
    const T *in = in_;                                                                      \
    T *value = value_;                                                                      \
    int parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;                            \
    if (parts > PP_MAX_PARTS) parts = PP_MAX_PARTS;                                         \
    T part_v[PP_MAX_PARTS];                                                                 \
    uint64_t part_i[PP_MAX_PARTS];                                                          \
    bool part_found[PP_MAX_PARTS];                                                          \
    _Pragma("omp parallel num_threads(parts)")                                              \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      bool found = false;                                                                   \
      T v = 0;                                                                              \
      uint64_t at = 0;                                                                      \
      for (size_t i = lo; i < hi; i++) {                                                    \
        T x = in[i];                                                                        \
        if (IS_NAN(x)) continue;                                                            \
        if (!found || (op == PP_MIN ? x < v : x > v)) {                                     \
          found = true;                                                                     \
          v = x;                                                                            \
          at = i;                                                                           \
        }                                                                                   \
      }                                                                                     \
      part_v[p] = v;                                                                        \
      part_i[p] = at;                                                                       \
      part_found[p] = found;                                                                \
      if (p == 0) parts = (int)np; /* the team may be smaller than asked */                 \
    }                                                                                       \
    bool found = false;                                                                     \
    T v = op == PP_MIN ? T_HIGHEST : T_LOWEST;                                              \
    uint64_t at = 0;                                                                        \
    for (int p = 0; p < parts; p++) {                                                       \
      if (part_found[p] && (!found || (op == PP_MIN ? part_v[p] < v : part_v[p] > v))) {    \
        found = true;                                                                       \
        v = part_v[p];                                                                      \
        at = part_i[p];                                                                     \
      }                                                                                     \
    }                                                                                       \
    if (!found && n > 0) v = in[0]; /* all NaN: NaN at index 0 */                           \
    *value = v;                                                                             \
    *index = at;                                                                            \
  }

PP_CPU_ARGREDUCE(u8, uint8_t, PP_NOT_NAN, 0, UINT8_MAX)
PP_CPU_ARGREDUCE(i32, int32_t, PP_NOT_NAN, INT32_MIN, INT32_MAX)
PP_CPU_ARGREDUCE(u32, uint32_t, PP_NOT_NAN, 0, UINT32_MAX)
PP_CPU_ARGREDUCE(i64, int64_t, PP_NOT_NAN, INT64_MIN, INT64_MAX)
PP_CPU_ARGREDUCE(u64, uint64_t, PP_NOT_NAN, 0, UINT64_MAX)
PP_CPU_ARGREDUCE(f32, float, PP_IS_NAN, -INFINITY, INFINITY)
PP_CPU_ARGREDUCE(f64, double, PP_IS_NAN, -INFINITY, INFINITY)

pp_status pp_cpu_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                           void *value_out, uint64_t *index_out) {
  static void (*const table[PP_CPU_DTYPES])(pp_op, const void *, size_t, void *, uint64_t *) =
      BY_DTYPE(argreduce);
  if (!pp_cpu_dtype_ok(t))
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_argreduce: dtype (%d)", (int)t);
  table[t](op, in, n, value_out, index_out);
  return PP_OK;
}
