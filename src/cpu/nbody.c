/* nbody.c — pp_nbody_accel, pp_nbody_step and pp_nbody_energy on the CPU (OpenMP).
 *
 * All-pairs, one target body per iteration of a parallel loop; the inner loop runs over
 * the source bodies in the caller's structure of arrays with no branch (the guard below
 * is a select), so the compiler vectorises it under `omp simd` (the reduction clause
 * allows it to keep one partial sum per SIMD lane).
 *
 * Physics, shared with the CUDA backend (src/cuda/nbody.cu says it in full): G = 1,
 * a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2); a body does not act on
 * itself, and pairs at distance 0 with eps = 0 are left out. For eps^2 at or above
 * NB_EPS2_UNGUARDED the own term of a body is 0 * (finite) = 0 by itself, so only the
 * guarded loop (tiny or zero softening) pays for the distance > 0 select. Accelerations are
 * accumulated in float, energies in double. pp_nbody_step is kick-drift-kick leapfrog
 * with h = dt / 2: a = F(x); repeat { v += h a; x += dt v; a = F(x); v += h a; }.
 */
#include "cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Same threshold as src/cuda/nbody.cuh. */
#define NB_EPS2_UNGUARDED 1e-18f
/* Below this many bodies (n^2 / 2^16 pair evaluations) the threads are not woken. */
#define NB_PARALLEL_MIN 256

/* 1 / sqrt(x) for a normal x > 0, in arithmetic the compiler vectorises: the integer
 * first guess (the exponent halved and negated; relative error < 3.5%) and three Newton
 * steps, which square the error each (3.5e-2, 1.8e-3, 5e-6, 4e-11), so the result is
 * within a few ulp. sqrtf cannot serve here: under the default -fmath-errno GCC keeps it
 * scalar (a sqrtss and a libm call per element, to set EDOM), which leaves the loop
 * slower than a serial one. x = 0, denormals and inf give garbage: the unguarded loop never
 * sees them (eps^2 >= 1e-18 keeps r^2 normal), the guarded one selects r^2 = 0 away and
 * lifts denormals into the normal range first (rsqrt_any). */
static inline float rsqrt_newton(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits = UINT32_C(0x5f375a86) - (bits >> 1);
  float y;
  memcpy(&y, &bits, sizeof y);
  const float hx = 0.5f * x;
  y = y * (1.5f - hx * y * y);
  y = y * (1.5f - hx * y * y);
  y = y * (1.5f - hx * y * y);
  return y;
}

/* 1 / sqrt(x) for any finite x > 0: a denormal x (two bodies closer than ~1e-19 with no
 * softening) is scaled by 2^64 into the normal range, which is exact, and the result by
 * 2^32 back, also exact. Both are selects, so the loop still vectorises. */
static inline float rsqrt_any(float x) {
  const bool tiny = x < 0x1p-126f;
  return rsqrt_newton(tiny ? x * 0x1p64f : x) * (tiny ? 0x1p32f : 1.0f);
}

/* The acceleration of body i from every body. `guard` is a constant at each call site, so
 * the select disappears from the unguarded loop. */
static inline void accel_one(const pp_bodies *b, size_t i, float eps2, bool guard, float *ax,
                             float *ay, float *az) {
  const float *restrict x = b->x, *restrict y = b->y, *restrict z = b->z, *restrict m = b->mass;
  const float xi = x[i], yi = y[i], zi = z[i];
  float sx = 0.0f, sy = 0.0f, sz = 0.0f;
  const size_t n = b->n;
#pragma omp simd reduction(+ : sx, sy, sz)
  for (size_t j = 0; j < n; j++) {
    const float dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
    const float d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;
    float inv = guard ? rsqrt_any(r2) : rsqrt_newton(r2);
    if (guard) inv = d2 > 0.0f ? inv : 0.0f; /* distance 0: no pull */
    const float s = m[j] * inv * inv * inv;
    sx += dx * s;
    sy += dy * s;
    sz += dz * s;
  }
  ax[i] = sx;
  ay[i] = sy;
  az[i] = sz;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NB_HAVE_AVX2_PATH 1

/* The unguarded loop of accel_one for AVX2 + FMA cores, eight sources per step: the
 * hardware's reciprocal square root estimate (vrsqrtps, relative error below 1.5 * 2^-12
 * on Intel and AMD parts) and one Newton step y (3/2 - r^2 y^2 / 2), which squares the
 * error to a few ulp, instead of the integer guess and three steps above (the
 * approach of the N-body kernels in GPU Gems 3 ch. 31, which use the GPU's rsqrt). The
 * few sources past the last multiple of eight take the portable loop's arithmetic. */
__attribute__((target("avx2,fma"))) static void accel_one_avx2(const pp_bodies *b, size_t i,
                                                               float eps2, float *ax, float *ay,
                                                               float *az) {
  const float *x = b->x, *y = b->y, *z = b->z, *m = b->mass;
  const size_t n = b->n;
  const __m256 xi = _mm256_set1_ps(x[i]), yi = _mm256_set1_ps(y[i]), zi = _mm256_set1_ps(z[i]);
  const __m256 e2 = _mm256_set1_ps(eps2), three_halves = _mm256_set1_ps(1.5f),
               half = _mm256_set1_ps(0.5f);
  __m256 sx = _mm256_setzero_ps(), sy = _mm256_setzero_ps(), sz = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(x + j), xi);
    const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(y + j), yi);
    const __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(z + j), zi);
    const __m256 r2 = _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dz, dz, e2)));
    __m256 inv = _mm256_rsqrt_ps(r2);
    const __m256 t = _mm256_mul_ps(_mm256_mul_ps(half, r2), _mm256_mul_ps(inv, inv));
    inv = _mm256_mul_ps(inv, _mm256_sub_ps(three_halves, t));
    const __m256 s =
        _mm256_mul_ps(_mm256_loadu_ps(m + j), _mm256_mul_ps(inv, _mm256_mul_ps(inv, inv)));
    sx = _mm256_fmadd_ps(dx, s, sx);
    sy = _mm256_fmadd_ps(dy, s, sy);
    sz = _mm256_fmadd_ps(dz, s, sz);
  }
  float lx[8], ly[8], lz[8];
  _mm256_storeu_ps(lx, sx);
  _mm256_storeu_ps(ly, sy);
  _mm256_storeu_ps(lz, sz);
  float rx = 0.0f, ry = 0.0f, rz = 0.0f;
  for (int k = 0; k < 8; k++) rx += lx[k], ry += ly[k], rz += lz[k];
  for (; j < n; j++) {
    const float dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
    const float inv = rsqrt_newton(dx * dx + dy * dy + dz * dz + eps2);
    const float s = m[j] * inv * inv * inv;
    rx += dx * s, ry += dy * s, rz += dz * s;
  }
  ax[i] = rx;
  ay[i] = ry;
  az[i] = rz;
}
#endif

/* Targets in chunks the threads take dynamically: a thread that loses its core (other
 * processes on the machine) holds the others up by one chunk, not by its whole share. */
#define NB_CHUNK 32

static void accel_all(const pp_bodies *b, float softening, float *ax, float *ay, float *az) {
  const float eps2 = softening * softening;
  const bool guard = !(eps2 >= NB_EPS2_UNGUARDED);
  const size_t n = b->n;
  if (guard) {
#pragma omp parallel for schedule(dynamic, NB_CHUNK) if (n >= NB_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) accel_one(b, i, eps2, true, ax, ay, az);
    return;
  }
#ifdef NB_HAVE_AVX2_PATH
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
#pragma omp parallel for schedule(dynamic, NB_CHUNK) if (n >= NB_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) accel_one_avx2(b, i, eps2, ax, ay, az);
    return;
  }
#endif
#pragma omp parallel for schedule(dynamic, NB_CHUNK) if (n >= NB_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) accel_one(b, i, eps2, false, ax, ay, az);
}

pp_status pp_cpu_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                             float *ay, float *az) {
  (void)ctx;
  accel_all(b, softening, ax, ay, az);
  return PP_OK;
}

/* close: v += h a; open: v += h a, then x += dt v (see the header comment). */
void pp_cpu_nbody_advance(pp_bodies *b, const float *ax, const float *ay, const float *az,
                          float h, float dt, bool close, bool open) {
  const size_t n = b->n;
#pragma omp parallel for schedule(static) if (n >= PP_CPU_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) {
    float u = b->vx[i], v = b->vy[i], w = b->vz[i];
    if (close) {
      u += h * ax[i];
      v += h * ay[i];
      w += h * az[i];
    }
    if (open) {
      u += h * ax[i];
      v += h * ay[i];
      w += h * az[i];
      b->x[i] += dt * u;
      b->y[i] += dt * v;
      b->z[i] += dt * w;
    }
    b->vx[i] = u;
    b->vy[i] = v;
    b->vz[i] = w;
  }
}

pp_status pp_cpu_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening,
                            size_t steps) {
  const size_t n = b->n;
  if (n == 0 || steps == 0) return PP_OK;
  float *a = NULL;
  /* 3n floats: n * 4 bytes was checked by the caller; 3x more may still overflow */
  if (n > SIZE_MAX / (3 * sizeof(float)))
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_nbody_step: scratch for n (%zu) overflows", n);
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&a, 3 * n * sizeof(float));
  if (s != PP_OK) return pp_fail(ctx, s, "pp_nbody_step: %s", ctx->error);
  float *ax = a, *ay = a + n, *az = a + 2 * n;
  const float h = 0.5f * dt;
  accel_all(b, softening, ax, ay, az);
  for (size_t k = 0; k < steps; k++) {
    pp_cpu_nbody_advance(b, ax, ay, az, h, dt, k > 0, true);
    accel_all(b, softening, ax, ay, az);
  }
  pp_cpu_nbody_advance(b, ax, ay, az, h, dt, true, false);
  ctx->ops->temp_free(ctx, a);
  return PP_OK;
}

/* sum over j > i of m_j / sqrt(|x_j - x_i|^2 + eps^2), pairs at distance 0 left out. */
static double phi_above(const pp_bodies *b, size_t i, double eps2) {
  const float *restrict x = b->x, *restrict y = b->y, *restrict z = b->z, *restrict m = b->mass;
  const double xi = x[i], yi = y[i], zi = z[i];
  double phi = 0.0;
  const size_t n = b->n;
#pragma omp simd reduction(+ : phi)
  for (size_t j = i + 1; j < n; j++) {
    const double dx = (double)x[j] - xi, dy = (double)y[j] - yi, dz = (double)z[j] - zi;
    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
    const double inv = r2 > 0.0 ? 1.0 / sqrt(r2) : 0.0;
    phi += (double)m[j] * inv;
  }
  return phi;
}

pp_status pp_cpu_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening,
                              double *kinetic, double *potential) {
  (void)ctx;
  const size_t n = b->n;
  const double eps2 = (double)softening * (double)softening;
  double k = 0.0, u = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : k) if (n >= PP_CPU_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) {
    const double vx = b->vx[i], vy = b->vy[i], vz = b->vz[i];
    k += 0.5 * (double)b->mass[i] * (vx * vx + vy * vy + vz * vz);
  }
  /* row i holds n - 1 - i pairs: dynamic chunks even the triangle out */
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : u) if (n >= NB_PARALLEL_MIN)
  for (size_t i = 0; i < n; i++) u += (double)b->mass[i] * phi_above(b, i, eps2);
  *kinetic = k;
  *potential = -u;
  return PP_OK;
}
