/* nbody.c — pp_nbody_accel, pp_nbody_step and pp_nbody_energy on the CPU (OpenMP).
 *
 * All-pairs over chunks of target bodies that the threads take dynamically. On x86 with
 * AVX2 + FMA or AVX-512 (chosen at run time), the common case (softening not tiny) runs
 * nbody_simd.h: four targets per pass over the sources, the hardware's reciprocal square
 * root estimate and one Newton step. Elsewhere, and for the guarded case, one target per
 * iteration: the inner loop runs over the source bodies in the caller's structure of
 * arrays with no branch (the guard below is a select), so the compiler vectorises it under
 * `omp simd` (the reduction clause allows it to keep one partial sum per SIMD lane).
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
#define NB_HAVE_SIMD_PATHS 1
#if defined(__clang__)
#define NB_CONTRACT /* clang contracts a * b + c within a statement by default */
#else
#define NB_CONTRACT optimize("fp-contract=fast")
#endif

/* The unguarded loop for AVX2 + FMA and for AVX-512 cores, one source (nbody_simd.h)
 * stamped out per instruction set and chosen at run time; fp-contract lets the compiler
 * fuse each a * b + c of the vector code into one multiply-add. */
typedef float nb_v8 __attribute__((vector_size(8 * sizeof(float))));
typedef float nb_v16 __attribute__((vector_size(16 * sizeof(float))));

#define NB_FN accel_block_avx2
#define NB_TARGET __attribute__((target("avx2,fma"), NB_CONTRACT))
#define NB_VEC nb_v8
#define NB_W 8
#define NB_RSQRT(v) ((nb_v8)_mm256_rsqrt_ps((__m256)(v)))
#include "nbody_simd.h"
#undef NB_FN
#undef NB_TARGET
#undef NB_VEC
#undef NB_W
#undef NB_RSQRT

#define NB_FN accel_block_avx512
#define NB_TARGET __attribute__((target("avx512f,avx2,fma"), NB_CONTRACT))
#define NB_VEC nb_v16
#define NB_W 16
#define NB_RSQRT(v) ((nb_v16)_mm512_rsqrt14_ps((__m512)(v)))
#include "nbody_simd.h"
#undef NB_FN
#undef NB_TARGET
#undef NB_VEC
#undef NB_W
#undef NB_RSQRT
#endif

/* Targets in chunks the threads take dynamically: a thread that loses its core (other
 * processes on the machine) holds the others up by one chunk, not by its whole share. */
#define NB_CHUNK 32

/* The unguarded loop over targets [i0, i1) in the portable arithmetic. */
static void accel_block_portable(const pp_bodies *b, size_t i0, size_t i1, float eps2,
                                 float *ax, float *ay, float *az) {
  for (size_t i = i0; i < i1; i++) accel_one(b, i, eps2, false, ax, ay, az);
}

typedef void (*nb_block_fn)(const pp_bodies *, size_t, size_t, float, float *, float *,
                            float *);

/* The widest unguarded loop this CPU runs. */
static nb_block_fn accel_block_pick(void) {
#ifdef NB_HAVE_SIMD_PATHS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return accel_block_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return accel_block_avx2;
#endif
  return accel_block_portable;
}

static void accel_all(const pp_bodies *b, float softening, float *ax, float *ay, float *az) {
  const float eps2 = softening * softening;
  const bool guard = !(eps2 >= NB_EPS2_UNGUARDED);
  const size_t n = b->n;
  if (guard) {
#pragma omp parallel for schedule(dynamic, NB_CHUNK) if (n >= NB_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) accel_one(b, i, eps2, true, ax, ay, az);
    return;
  }
  const nb_block_fn block = accel_block_pick();
  const size_t chunks = (n + NB_CHUNK - 1) / NB_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n >= NB_PARALLEL_MIN)
  for (size_t c = 0; c < chunks; c++) {
    const size_t i0 = c * NB_CHUNK, i1 = i0 + NB_CHUNK < n ? i0 + NB_CHUNK : n;
    block(b, i0, i1, eps2, ax, ay, az);
  }
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
