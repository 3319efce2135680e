/* dist_ops.c — the CPU backend's building blocks of the distributed algorithms (src/dist):
 * a double-accumulated f32 sum (a rank's partial of pp_reduce and pp_scan), a scan that
 * continues from the carry of the ranks before, an index map for top-k's candidates, and
 * the N-body pieces that let a rank's bodies feel every rank's (targets and sources apart).
 *
 * The scan from a carry is the local scan (scan.c) followed by one pass folding the carry
 * in front of every output: exact for integers (wrapping addition is associative) and for
 * MIN/MAX (NaN rules included); f64 sums round twice (the local prefix, then the sum with
 * the carry), one f64 rounding more than the one-context scan. f32 sums instead run from
 * the carry in double, as scan.c does (part totals in a first pass, then each part's
 * running sum from carry + the parts before it), so each output is rounded once. The CPU
 * backend is not the distributed layer's speed target; the CUDA backend folds the carry
 * into its single pass (src/cuda/scan.cu).
 *
 * N-body physics as in nbody.c (G = 1, Plummer softening, a body does not pull itself,
 * pairs at distance 0 left out when eps^2 is tiny); 1 / sqrtf here, where nbody.c uses its
 * Newton rsqrt, so results agree to a few ulp.
 */
#include "dist_ops.h"

#include <math.h>
#include <omp.h>

/* Same threshold as nbody.c and src/cuda/nbody.cuh. */
#define NB_EPS2_UNGUARDED 1e-18f
#define NB_PARALLEL_MIN 256

pp_status pp_cpu_dist_sum_f32(pp_context *ctx, const float *in, size_t n, double *sum) {
  (void)ctx;
  double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static) if (n >= PP_CPU_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) s += (double)in[i];
  *sum = s;
  return PP_OK;
}

/* acc is NaN until a number was seen (the float rules of pp_reduce). */
static inline double fmin_rule(double acc, double x) {
  if (isnan(x)) return acc;
  return isnan(acc) || x < acc || (x == acc && signbit(x)) ? x : acc;
}
static inline double fmax_rule(double acc, double x) {
  if (isnan(x)) return acc;
  return isnan(acc) || x > acc || (x == acc && !signbit(x)) ? x : acc;
}

/* out[i] = carry (+) out[i] for i >= first; exclusive scans then get out[0] = carry. */
#define PP_FOLD_INT(NAME, T, UT)                                                            \
  static void fold_##NAME(pp_op op, T *out, size_t n, T c, size_t first) {                  \
    _Pragma("omp parallel for schedule(static) if (n >= PP_CPU_PARALLEL_MIN)")              \
    for (size_t i = first; i < n; i++) {                                                    \
      T x = out[i];                                                                         \
      out[i] = op == PP_SUM ? (T)((UT)c + (UT)x) : op == PP_MIN ? (x < c ? x : c) : (x > c ? x : c); \
    }                                                                                       \
  }
PP_FOLD_INT(u8, uint8_t, uint32_t)
PP_FOLD_INT(i32, int32_t, uint32_t)
PP_FOLD_INT(u32, uint32_t, uint32_t)
PP_FOLD_INT(i64, int64_t, uint64_t)
PP_FOLD_INT(u64, uint64_t, uint64_t)

#define PP_FOLD_FLOAT(NAME, T)                                                              \
  static void fold_##NAME(pp_op op, T *out, size_t n, double c, size_t first) {             \
    _Pragma("omp parallel for schedule(static) if (n >= PP_CPU_PARALLEL_MIN)")              \
    for (size_t i = first; i < n; i++) {                                                    \
      double x = out[i];                                                                    \
      out[i] = (T)(op == PP_SUM ? c + x : op == PP_MIN ? fmin_rule(c, x) : fmax_rule(c, x)); \
    }                                                                                       \
  }
PP_FOLD_FLOAT(f32, float)
PP_FOLD_FLOAT(f64, double)

/* Parts of the f32 sum scan: like scan.c's, at most this many. */
#define SUM_MAX_PARTS 256

static void scan_f32_sum_from(const float *in, float *out, size_t n, bool inclusive, double c) {
  double total[SUM_MAX_PARTS];
  int parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  parts = parts < 1 ? 1 : parts > SUM_MAX_PARTS ? SUM_MAX_PARTS : parts;
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();
    size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);
    double acc = 0.0;
    if (np > 1) {
      for (size_t i = lo; i < hi; i++) acc += (double)in[i];
      total[p] = acc;
#pragma omp barrier
    }
    acc = c;
    for (size_t q = 0; q < p; q++) acc += total[q];
    for (size_t i = lo; i < hi; i++) { /* in[i] is read before out[i] is written */
      const double x = (double)in[i];
      if (!inclusive) out[i] = (float)acc;
      acc += x;
      if (inclusive) out[i] = (float)acc;
    }
  }
}

pp_status pp_cpu_dist_scan_from(pp_context *ctx, pp_op op, pp_dtype t, const void *in,
                                void *out, size_t n, bool inclusive, const void *carry) {
  if (carry && t == PP_F32 && op == PP_SUM) {
    double c;
    memcpy(&c, carry, sizeof c);
    scan_f32_sum_from((const float *)in, (float *)out, n, inclusive, c);
    return PP_OK;
  }
  pp_status s = pp_cpu_scan(ctx, op, t, in, out, n, inclusive);
  if (s != PP_OK || !carry || n == 0) return s;
  /* exclusive: out[0] holds the n == 0 identity, which the carry replaces */
  const size_t first = inclusive ? 0 : 1;
  switch (t) {
#define FOLD_CASE(DT, NAME, T)                                                              \
  case DT: {                                                                                \
    T c;                                                                                    \
    memcpy(&c, carry, sizeof c);                                                            \
    fold_##NAME(op, (T *)out, n, c, first);                                                 \
    if (!inclusive) ((T *)out)[0] = c;                                                      \
    break;                                                                                  \
  }
    FOLD_CASE(PP_U8, u8, uint8_t)
    FOLD_CASE(PP_I32, i32, int32_t)
    FOLD_CASE(PP_U32, u32, uint32_t)
    FOLD_CASE(PP_I64, i64, int64_t)
    FOLD_CASE(PP_U64, u64, uint64_t)
    FOLD_CASE(PP_F64, f64, double)
#undef FOLD_CASE
  case PP_F32: { /* MIN / MAX (SUM ran above) */
    float f;
    memcpy(&f, carry, sizeof f);
    const double c = f;
    fold_f32(op, (float *)out, n, c, first);
    if (!inclusive) ((float *)out)[0] = (float)c;
    break;
  }
  default: return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_scan: dtype (%d)", (int)t);
  }
  return PP_OK;
}

pp_status pp_cpu_dist_index_map(pp_context *ctx, const uint64_t *table, const uint64_t *idx,
                                size_t n, uint64_t add, uint64_t *out) {
  (void)ctx;
#pragma omp parallel for schedule(static) if (n >= PP_CPU_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) out[i] = (table ? table[idx[i]] : idx[i]) + add;
  return PP_OK;
}

/* ---- N-body ----------------------------------------------------------------------------- */

static inline void accel_target(const pp_bodies *s, float xi, float yi, float zi, float eps2,
                                bool guard, float *ax, float *ay, float *az) {
  const float *restrict x = s->x, *restrict y = s->y, *restrict z = s->z, *restrict m = s->mass;
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  for (size_t j = 0; j < s->n; j++) {
    const float dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
    const float d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;
    float inv = guard && !(d2 > 0.0f) ? 0.0f : 1.0f / sqrtf(r2);
    const float f = m[j] * inv * inv * inv;
    sx += dx * f;
    sy += dy * f;
    sz += dz * f;
  }
  *ax = sx;
  *ay = sy;
  *az = sz;
}

pp_status pp_cpu_dist_nbody_accel(pp_context *ctx, const pp_bodies *targets,
                                  const pp_bodies *sources, float softening, float *ax,
                                  float *ay, float *az) {
  (void)ctx;
  const float eps2 = softening * softening;
  const bool guard = !(eps2 >= NB_EPS2_UNGUARDED);
  const size_t n = targets->n;
#pragma omp parallel for schedule(static) if (n >= NB_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++)
    accel_target(sources, targets->x[i], targets->y[i], targets->z[i], eps2, guard, &ax[i],
                 &ay[i], &az[i]);
  return PP_OK;
}

/* The kick and drift of pp_nbody_step (nbody.c), on this rank's bodies. */
pp_status pp_cpu_dist_nbody_advance(pp_context *ctx, pp_bodies *b, const float *ax,
                                    const float *ay, const float *az, float h, float dt,
                                    bool close, bool open) {
  (void)ctx;
  pp_cpu_nbody_advance(b, ax, ay, az, h, dt, close, open);
  return PP_OK;
}

pp_status pp_cpu_dist_nbody_energy(pp_context *ctx, const pp_bodies *targets,
                                   const pp_bodies *sources, size_t self, float softening,
                                   double *kinetic, double *phi) {
  (void)ctx;
  const size_t n = targets->n, ns = sources->n;
  const double eps2 = (double)softening * (double)softening;
  double k = 0.0, u = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : k, u) if (n >= NB_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) {
    const double vx = targets->vx[i], vy = targets->vy[i], vz = targets->vz[i];
    const double xi = targets->x[i], yi = targets->y[i], zi = targets->z[i];
    k += 0.5 * (double)targets->mass[i] * (vx * vx + vy * vy + vz * vz);
    double p = 0.0;
    for (size_t j = 0; j < ns; j++) {
      const double dx = (double)sources->x[j] - xi, dy = (double)sources->y[j] - yi,
                   dz = (double)sources->z[j] - zi;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      if (j != self + i && r2 > 0.0) p += (double)sources->mass[j] / sqrt(r2);
    }
    u += (double)targets->mass[i] * p;
  }
  *kinetic = k;
  *phi = u;
  return PP_OK;
}
