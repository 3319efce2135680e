/*
 * test_nbody.c — pp_nbody_accel, pp_nbody_step and pp_nbody_energy against serial double
 * references written here, plus the physics an integrator must get right.
 *
 * Usage: test_nbody [cpu|cuda]
 *
 * Definitions checked (API.md: G = 1, Plummer softening eps):
 *   a_i = sum_{j != i} m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 *   K = sum_i m_i |v_i|^2 / 2,   U = -sum_{i<j} m_i m_j / sqrt(|x_j - x_i|^2 + eps^2)
 * and, with eps = 0, a pair at distance 0 contributes nothing (to a and to U) instead of
 * inf or NaN. pp_nbody_step is kick-drift-kick leapfrog (h = dt / 2).
 *
 * Accuracy contract (written down here): accelerations are accumulated in float, so body
 * i may be off by tol(n) * S_i, S_i = sum_j |m_j| |x_j - x_i| / (r^2 + eps^2)^(3/2) (the
 * sum of the magnitudes of its terms), tol(n) = 1e-5 * (1 + sqrt(n) / 16): a random-walk
 * bound with ~10x headroom. Energies are accumulated in double: relative 1e-10.
 *
 * Physics: Newton's third law (sum m_i a_i = 0 to rounding), momentum conserved by the
 * integrator, a two-body circular orbit against its analytic period 2 pi sqrt(d^3 / M),
 * and the relative energy drift of a Plummer sphere (16384 bodies, 1000 steps on CUDA;
 * 512 bodies on the CPU) below 1e-3. Every call rotates over the placements: host or
 * pp_malloc memory, at offset 0 or 1 element (not 16-byte aligned).
 * PARPRIM_TEST_SEED varies the data.
 */
#include "harness.h"
#include "../src/core/testctl.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int g_cuda;

/* ---- bodies in host memory ------------------------------------------------------------ */

typedef struct hbodies {
  float *x, *y, *z, *vx, *vy, *vz, *m;
  size_t n;
} hbodies;

static hbodies hb_alloc(size_t n) {
  hbodies h;
  float *block = th_xmalloc(7 * (n ? n : 1) * sizeof(float));
  size_t s = n ? n : 1;
  h.x = block;
  h.y = block + s;
  h.z = block + 2 * s;
  h.vx = block + 3 * s;
  h.vy = block + 4 * s;
  h.vz = block + 5 * s;
  h.m = block + 6 * s;
  h.n = n;
  memset(block, 0, 7 * s * sizeof(float));
  return h;
}

static void hb_free(hbodies *h) { free(h->x); }

static float **hb_field(hbodies *h, int f) {
  float **fields[7] = {&h->x, &h->y, &h->z, &h->vx, &h->vy, &h->vz, &h->m};
  return fields[f];
}

/* n bodies at rest at the origin, the first two the analytic pair: m0 = 2 at 0, m1 = 1 at
 * (3, 4, 0), so r = 5. */
static hbodies hb_pair(size_t n) {
  hbodies h = hb_alloc(n);
  h.m[0] = 2.0f;
  h.m[1] = 1.0f;
  h.x[1] = 3.0f;
  h.y[1] = 4.0f;
  return h;
}

/* Uniform in a cube of half-width `half`, masses in [0.5, 1.5) / n, velocities in +-vmax. */
static hbodies hb_random(size_t n, double half, double vmax, uint64_t stream) {
  th_rng r = th_rng_make(stream);
  hbodies h = hb_alloc(n);
  for (size_t i = 0; i < n; i++) {
    h.x[i] = (float)th_range(&r, -half, half);
    h.y[i] = (float)th_range(&r, -half, half);
    h.z[i] = (float)th_range(&r, -half, half);
    h.vx[i] = (float)th_range(&r, -vmax, vmax);
    h.vy[i] = (float)th_range(&r, -vmax, vmax);
    h.vz[i] = (float)th_range(&r, -vmax, vmax);
    h.m[i] = (float)(th_range(&r, 0.5, 1.5) / (double)n);
  }
  return h;
}

/* A Plummer sphere in N-body units (G = M = 1, E = -1/4; Aarseth, Henon & Wielen 1974):
 * radius from the cumulative mass, isotropic directions, speeds by rejection from
 * q^2 (1 - q^2)^(7/2). The 1% outermost mass is not drawn (r < ~23 scale radii). */
static hbodies hb_plummer(size_t n, uint64_t stream) {
  th_rng r = th_rng_make(stream);
  hbodies h = hb_alloc(n);
  const double a = 3.0 * M_PI / 16.0; /* scale radius for E = -1/4 */
  for (size_t i = 0; i < n; i++) {
    double x1 = th_range(&r, 1e-6, 0.99);
    double rad = 1.0 / sqrt(pow(x1, -2.0 / 3.0) - 1.0);
    double cz = th_range(&r, -1, 1), ph = th_range(&r, 0, 2 * M_PI), sz = sqrt(1 - cz * cz);
    double q, g;
    do {
      q = th_unit(&r);
      g = th_range(&r, 0, 0.1);
    } while (g > q * q * pow(1.0 - q * q, 3.5));
    double v = q * sqrt(2.0) * pow(1.0 + rad * rad, -0.25);
    double cv = th_range(&r, -1, 1), pv = th_range(&r, 0, 2 * M_PI), sv = sqrt(1 - cv * cv);
    h.x[i] = (float)(a * rad * sz * cos(ph));
    h.y[i] = (float)(a * rad * sz * sin(ph));
    h.z[i] = (float)(a * rad * cz);
    h.vx[i] = (float)(v * sv * cos(pv) / sqrt(a));
    h.vy[i] = (float)(v * sv * sin(pv) / sqrt(a));
    h.vz[i] = (float)(v * cv / sqrt(a));
    h.m[i] = (float)(1.0 / (double)n);
  }
  return h;
}

/* ---- placements ------------------------------------------------------------------------- */

enum { AT_HOST, AT_DEV, AT_HOST_ODD, AT_DEV_ODD, N_PLACES };
static const char *place_name(int p) {
  static const char *names[] = {"host", "device", "host+1", "device+1"};
  return names[p];
}

/* n floats at a placement; base is what to free. */
typedef struct placed {
  float *p;
  void *base;
  int where;
} placed;

static placed place_floats(pp_context *ctx, int where, const float *src, size_t n) {
  placed q;
  size_t off = (where == AT_HOST_ODD || where == AT_DEV_ODD) ? 1 : 0;
  size_t bytes = (n + off) * sizeof(float);
  q.where = where;
  q.base = (where == AT_DEV || where == AT_DEV_ODD) ? th_dev_alloc(ctx, bytes) : th_xmalloc(bytes);
  q.p = (float *)q.base + off;
  if (src && n) th_copy(ctx, q.p, src, n * sizeof(float));
  return q;
}

static void fetch_floats(pp_context *ctx, float *dst, const placed *q, size_t n) {
  if (n) th_copy(ctx, dst, q->p, n * sizeof(float));
}

static void free_placed(pp_context *ctx, placed *q) {
  if (q->where == AT_DEV || q->where == AT_DEV_ODD)
    th_dev_free(ctx, q->base);
  else
    free(q->base);
}

/* All seven arrays of h at one placement. */
typedef struct pbodies {
  placed f[7];
  pp_bodies b;
} pbodies;

static pbodies place_bodies(pp_context *ctx, int where, hbodies *h) {
  pbodies pb;
  for (int f = 0; f < 7; f++) pb.f[f] = place_floats(ctx, where, *hb_field(h, f), h->n);
  pb.b.x = pb.f[0].p;
  pb.b.y = pb.f[1].p;
  pb.b.z = pb.f[2].p;
  pb.b.vx = pb.f[3].p;
  pb.b.vy = pb.f[4].p;
  pb.b.vz = pb.f[5].p;
  pb.b.mass = pb.f[6].p;
  pb.b.n = h->n;
  return pb;
}

static void fetch_bodies(pp_context *ctx, hbodies *h, pbodies *pb) {
  for (int f = 0; f < 7; f++) fetch_floats(ctx, *hb_field(h, f), &pb->f[f], h->n);
}

static void free_bodies(pp_context *ctx, pbodies *pb) {
  for (int f = 0; f < 7; f++) free_placed(ctx, &pb->f[f]);
}

/* ---- references (double) ------------------------------------------------------------------ */

/* a of body i and S_i, the sum of its terms' magnitudes. */
static void ref_accel(const hbodies *h, float soft, size_t i, double a[3], double *mag) {
  const double eps2 = (double)soft * (double)soft;
  a[0] = a[1] = a[2] = 0.0;
  *mag = 0.0;
  for (size_t j = 0; j < h->n; j++) {
    if (j == i) continue;
    double dx = (double)h->x[j] - h->x[i], dy = (double)h->y[j] - h->y[i],
           dz = (double)h->z[j] - h->z[i];
    double d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;
    if (d2 == 0.0) continue; /* itself, or coincident: no direction, no pull */
    double inv3 = 1.0 / (r2 * sqrt(r2)), s = (double)h->m[j] * inv3;
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
    *mag += fabs(s) * sqrt(d2);
  }
}

static void ref_energy(const hbodies *h, float soft, double *k, double *u) {
  const double eps2 = (double)soft * (double)soft;
  *k = *u = 0.0;
  for (size_t i = 0; i < h->n; i++) {
    double vx = h->vx[i], vy = h->vy[i], vz = h->vz[i];
    *k += 0.5 * h->m[i] * (vx * vx + vy * vy + vz * vz);
    for (size_t j = i + 1; j < h->n; j++) {
      double dx = (double)h->x[j] - h->x[i], dy = (double)h->y[j] - h->y[i],
             dz = (double)h->z[j] - h->z[i];
      double r2 = dx * dx + dy * dy + dz * dz + eps2;
      if (r2 > 0.0) *u -= (double)h->m[i] * h->m[j] / sqrt(r2);
    }
  }
}

static double acc_tol(size_t n) { return 1e-5 * (1.0 + sqrt((double)n) / 16.0); }

/* ---- calls at a placement ------------------------------------------------------------------ */

/* pp_nbody_accel of h at `where`; the results to host ax/ay/az. */
static pp_status run_accel(pp_context *ctx, int where, hbodies *h, float soft, float *ax, float *ay,
                           float *az) {
  pbodies pb = place_bodies(ctx, where, h);
  placed o[3];
  float *dst[3] = {ax, ay, az};
  for (int k = 0; k < 3; k++) o[k] = place_floats(ctx, where, dst[k], h->n); /* sentinels in */
  th_poison_error(ctx);
  pp_status s = pp_nbody_accel(ctx, &pb.b, soft, o[0].p, o[1].p, o[2].p);
  for (int k = 0; k < 3; k++) {
    fetch_floats(ctx, dst[k], &o[k], h->n);
    free_placed(ctx, &o[k]);
  }
  free_bodies(ctx, &pb);
  return s;
}

static pp_status run_step(pp_context *ctx, int where, hbodies *h, float dt, float soft,
                          size_t steps) {
  pbodies pb = place_bodies(ctx, where, h);
  th_poison_error(ctx);
  pp_status s = pp_nbody_step(ctx, &pb.b, dt, soft, steps);
  fetch_bodies(ctx, h, &pb);
  free_bodies(ctx, &pb);
  return s;
}

static pp_status run_energy(pp_context *ctx, int where, hbodies *h, float soft, double *k,
                            double *u) {
  pbodies pb = place_bodies(ctx, where, h);
  th_poison_error(ctx);
  pp_status s = pp_nbody_energy(ctx, &pb.b, soft, k, u);
  free_bodies(ctx, &pb);
  return s;
}

/* Compares accelerations of `count` bodies (every `stride`-th) with the reference. */
static void check_accel(const char *what, const hbodies *h, float soft, const float *ax,
                        const float *ay, const float *az, size_t stride) {
  const double tol = acc_tol(h->n);
  size_t bad = 0;
  for (size_t i = 0; i < h->n; i += stride) {
    double a[3], mag;
    ref_accel(h, soft, i, a, &mag);
    double ex = ax[i] - a[0], ey = ay[i] - a[1], ez = az[i] - a[2];
    double err = sqrt(ex * ex + ey * ey + ez * ez);
    if (!(err <= tol * mag + 1e-30)) {
      if (bad++ < 3)
        CHECK(0, "%s: n=%zu eps=%g body %zu: got (%.9g %.9g %.9g), want (%.9g %.9g %.9g), "
              "err %.3g > %.3g",
              what, h->n, (double)soft, i, (double)ax[i], (double)ay[i], (double)az[i], a[0], a[1],
              a[2], err, tol * mag);
    }
  }
  CHECK(bad == 0, "%s: n=%zu eps=%g: %zu bodies off", what, h->n, (double)soft, bad);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_bad_args(pp_context *ctx) {
  hbodies h = hb_random(8, 1, 1, 1);
  float ax[8], ay[8], az[8], keep[8];
  for (int i = 0; i < 8; i++) ax[i] = ay[i] = az[i] = keep[i] = -7.0f;
  pp_bodies b = {h.x, h.y, h.z, h.vx, h.vy, h.vz, h.m, 8};
  const float bad_soft[] = {-1.0f, NAN, INFINITY};
  for (int k = 0; k < 3; k++) {
    th_poison_error(ctx);
    CHECK_STATUS(pp_nbody_accel(ctx, &b, bad_soft[k], ax, ay, az), PP_ERR_INVALID_ARGUMENT,
                 "accel softening %g", (double)bad_soft[k]);
    CHECK(th_names(pp_last_error(ctx), "pp_nbody_accel"), "error text '%s'", pp_last_error(ctx));
    CHECK_STATUS(pp_nbody_step(ctx, &b, 0.01f, bad_soft[k], 1), PP_ERR_INVALID_ARGUMENT,
                 "step softening %g", (double)bad_soft[k]);
    double kk = -7, uu = -7;
    CHECK_STATUS(pp_nbody_energy(ctx, &b, bad_soft[k], &kk, &uu), PP_ERR_INVALID_ARGUMENT,
                 "energy softening %g", (double)bad_soft[k]);
    CHECK(kk == -7 && uu == -7, "energy wrote on a bad softening");
  }
  CHECK(memcmp(ax, keep, sizeof ax) == 0 && memcmp(az, keep, sizeof az) == 0,
        "accel wrote on failure");
  CHECK_STATUS(pp_nbody_accel(ctx, NULL, 0.1f, ax, ay, az), PP_ERR_INVALID_ARGUMENT, "b NULL");
  CHECK_STATUS(pp_nbody_accel(ctx, &b, 0.1f, ax, NULL, az), PP_ERR_INVALID_ARGUMENT, "ay NULL");
  pp_bodies nomass = b;
  nomass.mass = NULL;
  CHECK_STATUS(pp_nbody_accel(ctx, &nomass, 0.1f, ax, ay, az), PP_ERR_INVALID_ARGUMENT,
               "mass NULL");
  pp_bodies novel = b;
  novel.vy = NULL;
  CHECK_STATUS(pp_nbody_step(ctx, &novel, 0.1f, 0.1f, 1), PP_ERR_INVALID_ARGUMENT, "vy NULL");
  double kk;
  CHECK_STATUS(pp_nbody_energy(ctx, &b, 0.1f, &kk, NULL), PP_ERR_INVALID_ARGUMENT,
               "potential NULL");
  float x0 = h.x[3];
  const float bad_dt[] = {NAN, INFINITY, -INFINITY};
  for (int k = 0; k < 3; k++) {
    th_poison_error(ctx);
    CHECK_STATUS(pp_nbody_step(ctx, &b, bad_dt[k], 0.1f, 3), PP_ERR_INVALID_ARGUMENT, "dt %g",
                 (double)bad_dt[k]);
    CHECK(th_names(pp_last_error(ctx), "pp_nbody_step"), "error text '%s'", pp_last_error(ctx));
  }
  CHECK(h.x[3] == x0, "step moved bodies on failure");
  /* the context stays usable */
  CHECK_STATUS(pp_nbody_accel(ctx, &b, 0.1f, ax, ay, az), PP_OK, "accel after failures");
  hb_free(&h);
}

static void test_accel_random(pp_context *ctx) {
  static const size_t sizes[] = {0, 1, 2, 3, 31, 127, 128, 129, 511, 512, 513, 1000, 2049, 4099};
  static const float softs[] = {0.05f, 0.0f, 1e-12f, 1.0f};
  int call = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (size_t k = 0; k < sizeof softs / sizeof softs[0]; k++) {
      size_t n = sizes[si];
      if (th_quick() && n > 1000) continue; /* quick: the tiles' edges, not the big grids */
      hbodies h = hb_random(n, 1.0, 0.0, 100 + si * 7 + k);
      size_t s = n ? n : 1;
      float *a = th_xmalloc(3 * s * sizeof(float));
      for (size_t i = 0; i < 3 * s; i++) a[i] = NAN;
      int where = call++ % N_PLACES;
      pp_status st = run_accel(ctx, where, &h, softs[k], a, a + s, a + 2 * s);
      if (CHECK_STATUS(st, PP_OK, "accel n=%zu eps=%g %s: %s", n, (double)softs[k],
                       place_name(where), pp_last_error(ctx))) {
        char what[64];
        snprintf(what, sizeof what, "accel random %s", place_name(where));
        check_accel(what, &h, softs[k], a, a + s, a + 2 * s, 1);
      }
      /* Newton's third law: the mass-weighted accelerations cancel */
      if (n == 4099) {
        double px = 0, py = 0, pz = 0, scale = 0;
        for (size_t i = 0; i < n; i++) {
          px += (double)h.m[i] * a[i];
          py += (double)h.m[i] * a[s + i];
          pz += (double)h.m[i] * a[2 * s + i];
          scale += (double)h.m[i] * sqrt((double)a[i] * a[i] + (double)a[s + i] * a[s + i] +
                                         (double)a[2 * s + i] * a[2 * s + i]);
        }
        double net = sqrt(px * px + py * py + pz * pz);
        CHECK(net <= 1e-5 * scale, "sum m a = %.3g, sum m |a| = %.3g (eps %g)", net, scale,
              (double)softs[k]);
      }
      free(a);
      hb_free(&h);
    }
}

/* Sizes where the GPU splits the source bodies over many blocks; every 37th body checked. */
static void test_accel_large(pp_context *ctx) {
  const size_t sizes_gpu[] = {16389, 70001}, sizes_cpu[] = {9001}, sizes_quick[] = {4099, 2051};
  const size_t *sizes = th_quick() ? sizes_quick : g_cuda ? sizes_gpu : sizes_cpu;
  size_t count = g_cuda || th_quick() ? 2 : 1;
  for (size_t si = 0; si < count; si++) {
    size_t n = sizes[si];
    hbodies h = hb_plummer(n, 200 + si);
    float *a = th_xmalloc(3 * n * sizeof(float));
    int where = (int)(si % 2) ? AT_HOST : AT_DEV;
    pp_status st = run_accel(ctx, where, &h, 0.01f, a, a + n, a + 2 * n);
    if (CHECK_STATUS(st, PP_OK, "accel n=%zu: %s", n, pp_last_error(ctx)))
      check_accel("accel plummer", &h, 0.01f, a, a + n, a + 2 * n, 37);
    free(a);
    hb_free(&h);
  }
}

static void test_accel_special(pp_context *ctx) {
  /* everything at one point: every pair has dx = 0, so a = 0 exactly (with eps = 0 too) */
  {
    hbodies h = hb_random(300, 1, 0, 3);
    for (size_t i = 0; i < h.n; i++) h.x[i] = h.y[i] = h.z[i] = 0.25f;
    float a[900];
    for (int k = 0; k < 2; k++) {
      float soft = k ? 0.0f : 0.1f;
      for (int i = 0; i < 900; i++) a[i] = NAN;
      CHECK_STATUS(run_accel(ctx, k ? AT_DEV : AT_HOST, &h, soft, a, a + 300, a + 600), PP_OK,
                   "coincident eps %g", (double)soft);
      int zero = 1;
      for (int i = 0; i < 900; i++) zero &= a[i] == 0.0f;
      CHECK(zero, "all bodies at one point, eps %g: accelerations not all 0", (double)soft);
    }
    hb_free(&h);
  }
  /* a coincident pair among others with eps = 0: no NaN, the pair left out */
  {
    hbodies h = hb_random(200, 1, 0, 4);
    h.x[17] = h.x[150];
    h.y[17] = h.y[150];
    h.z[17] = h.z[150];
    float a[600];
    CHECK_STATUS(run_accel(ctx, AT_HOST_ODD, &h, 0.0f, a, a + 200, a + 400), PP_OK, "pair");
    check_accel("coincident pair, eps 0", &h, 0.0f, a, a + 200, a + 400, 1);
    hb_free(&h);
  }
  /* massless bodies pull nothing */
  {
    hbodies h = hb_random(130, 1, 0, 5);
    for (size_t i = 0; i < h.n; i++) h.m[i] = 0.0f;
    float a[390];
    CHECK_STATUS(run_accel(ctx, AT_DEV_ODD, &h, 0.01f, a, a + 130, a + 260), PP_OK, "massless");
    int zero = 1;
    for (int i = 0; i < 390; i++) zero &= a[i] == 0.0f;
    CHECK(zero, "massless bodies: accelerations not all 0");
    hb_free(&h);
  }
  /* two bodies, analytic: m0 = 2 at 0, m1 = 1 at (3, 4, 0), r = 5; eps 0 and eps 1 */
  {
    hbodies h = hb_pair(2);
    for (int k = 0; k < 2; k++) {
      float soft = (float)k;
      double r3 = pow(25.0 + soft * soft, 1.5);
      float a[6];
      CHECK_STATUS(run_accel(ctx, AT_HOST, &h, soft, a, a + 2, a + 4), PP_OK, "two bodies");
      const double want[6] = {3 / r3, -6 / r3, 4 / r3, -8 / r3, 0, 0};
      for (int i = 0; i < 6; i++)
        CHECK(fabs(a[i] - want[i]) <= 1e-6 * fabs(want[i]) + 1e-12,
              "two bodies eps %g: component %d got %.9g want %.9g", (double)soft, i, (double)a[i],
              want[i]);
    }
    hb_free(&h);
  }
  /* one body: no force; far-apart bodies with tiny softening (guarded path) */
  {
    hbodies h = hb_random(1, 1, 0, 6);
    float a[3] = {NAN, NAN, NAN};
    CHECK_STATUS(run_accel(ctx, AT_DEV, &h, 0.0f, a, a + 1, a + 2), PP_OK, "one body");
    CHECK(a[0] == 0.0f && a[1] == 0.0f && a[2] == 0.0f, "one body: a = (%g %g %g)", (double)a[0],
          (double)a[1], (double)a[2]);
    hb_free(&h);
    hbodies w = hb_random(257, 1000.0, 0, 7);
    float b[771];
    CHECK_STATUS(run_accel(ctx, AT_HOST, &w, 1e-20f, b, b + 257, b + 514), PP_OK, "wide");
    check_accel("wide cube, eps 1e-20", &w, 1e-20f, b, b + 257, b + 514, 1);
    hb_free(&w);
  }
}

static void test_energy(pp_context *ctx) {
  static const size_t sizes[] = {0, 1, 2, 3, 129, 1000, 2049};
  int call = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (int k = 0; k < 2; k++) {
      size_t n = sizes[si];
      if (th_quick() && n > 1000) continue;
      float soft = k ? 0.0f : 0.02f;
      hbodies h = hb_random(n, 1.0, 1.0, 300 + si * 3 + (size_t)k);
      double kk = NAN, uu = NAN, rk, ru;
      int where = call++ % N_PLACES;
      pp_status st = run_energy(ctx, where, &h, soft, &kk, &uu);
      ref_energy(&h, soft, &rk, &ru);
      if (CHECK_STATUS(st, PP_OK, "energy n=%zu %s: %s", n, place_name(where), pp_last_error(ctx))) {
        CHECK(fabs(kk - rk) <= 1e-10 * fabs(rk), "kinetic n=%zu: %.17g want %.17g", n, kk, rk);
        CHECK(fabs(uu - ru) <= 1e-10 * fabs(ru), "potential n=%zu eps %g: %.17g want %.17g", n,
              (double)soft, uu, ru);
      }
      hb_free(&h);
    }
  /* output in device memory; the analytic pair m0 m1 / r = 2 / 5; a coincident pair with
   * eps = 0 is left out */
  hbodies h = hb_pair(3);
  h.m[2] = 4.0f; /* body 2 sits on body 0 */
  h.vx[2] = 0.5f;
  double *dev = th_dev_alloc(ctx, 2 * sizeof(double));
  pbodies pb = place_bodies(ctx, AT_DEV, &h);
  CHECK_STATUS(pp_nbody_energy(ctx, &pb.b, 0.0f, dev, dev + 1), PP_OK, "energy to device");
  double e[2] = {NAN, NAN};
  th_copy(ctx, e, dev, sizeof e);
  CHECK(e[0] == 0.5 * 4 * 0.25, "kinetic %.17g want 0.5", e[0]);
  CHECK(fabs(e[1] - (-2.0 / 5 - 4.0 / 5)) <= 1e-15, "potential %.17g want -1.2", e[1]);
  free_bodies(ctx, &pb);
  th_dev_free(ctx, dev);
  hb_free(&h);
}

/* KDK leapfrog in double with the reference accelerations. */
static void ref_step(hbodies *h, double *s, float dt, float soft, size_t steps) {
  size_t n = h->n;
  double *a = th_xmalloc(3 * n * sizeof(double));
  hbodies tmp = hb_alloc(n);
  double hh = 0.5 * dt;
  for (size_t k = 0; k <= steps; k++) {
    for (size_t i = 0; i < n; i++) {
      tmp.x[i] = (float)s[i];
      tmp.y[i] = (float)s[n + i];
      tmp.z[i] = (float)s[2 * n + i];
      tmp.m[i] = h->m[i];
    }
    for (size_t i = 0; i < n; i++) {
      double mag;
      ref_accel(&tmp, soft, i, a + 3 * i, &mag);
    }
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 3; c++) {
        double *v = &s[(3 + (size_t)c) * n + i];
        if (k > 0) *v += hh * a[3 * i + (size_t)c];
        if (k < steps) {
          *v += hh * a[3 * i + (size_t)c];
          s[(size_t)c * n + i] += dt * *v;
        }
      }
  }
  hb_free(&tmp);
  free(a);
}

static void test_step(pp_context *ctx) {
  /* steps == 0 and n == 1 */
  {
    hbodies h = hb_random(50, 1, 1, 8), g = hb_random(50, 1, 1, 8);
    CHECK_STATUS(run_step(ctx, AT_DEV, &h, 0.01f, 0.1f, 0), PP_OK, "steps 0");
    CHECK(memcmp(h.x, g.x, 7 * 50 * sizeof(float)) == 0, "steps 0 changed the bodies");
    hb_free(&h);
    hb_free(&g);
    hbodies one = hb_random(1, 1, 1, 9);
    float x0 = one.x[0], vx = one.vx[0];
    CHECK_STATUS(run_step(ctx, AT_HOST, &one, 0.01f, 0.0f, 100), PP_OK, "one body");
    CHECK(fabs(one.x[0] - (x0 + 1.0 * vx)) <= 1e-5, "one body drifted to %.9g, want %.9g",
          (double)one.x[0], x0 + 1.0 * vx);
    CHECK(one.vx[0] == vx, "one body's velocity changed");
    hb_free(&one);
  }
  /* 20 steps of 300 bodies against the double integrator */
  {
    const size_t n = 300, steps = 20;
    const float dt = 1e-3f, soft = 0.05f;
    hbodies h = hb_random(n, 1.0, 0.5, 10);
    double *s = th_xmalloc(6 * n * sizeof(double));
    for (int f = 0; f < 6; f++)
      for (size_t i = 0; i < n; i++) s[(size_t)f * n + i] = (*hb_field(&h, f))[i];
    ref_step(&h, s, dt, soft, steps);
    /* two calls of 7 and 13 steps: a call ends on a full kick, the next starts afresh */
    CHECK_STATUS(run_step(ctx, AT_HOST_ODD, &h, dt, soft, 7), PP_OK, "step 7");
    CHECK_STATUS(run_step(ctx, AT_DEV, &h, dt, soft, 13), PP_OK, "step 13");
    double worst_x = 0, worst_v = 0;
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 3; c++) {
        double ex = fabs((*hb_field(&h, c))[i] - s[(size_t)c * n + i]);
        double ev = fabs((*hb_field(&h, 3 + c))[i] - s[(size_t)(3 + c) * n + i]);
        worst_x = ex > worst_x ? ex : worst_x;
        worst_v = ev > worst_v ? ev : worst_v;
      }
    CHECK(worst_x <= 2e-5 && worst_v <= 2e-3, "20 steps: position off by %.3g, velocity by %.3g",
          worst_x, worst_v);
    free(s);
    hb_free(&h);
  }
}

static void momentum(const hbodies *h, double p[3], double *scale) {
  p[0] = p[1] = p[2] = *scale = 0;
  for (size_t i = 0; i < h->n; i++) {
    p[0] += (double)h->m[i] * h->vx[i];
    p[1] += (double)h->m[i] * h->vy[i];
    p[2] += (double)h->m[i] * h->vz[i];
    *scale += (double)h->m[i] * sqrt((double)h->vx[i] * h->vx[i] + (double)h->vy[i] * h->vy[i] +
                                     (double)h->vz[i] * h->vz[i]);
  }
}

static void test_momentum(pp_context *ctx) {
  size_t n = g_cuda ? 4000 : 1000;
  hbodies h = hb_plummer(n, 11);
  for (size_t i = 0; i < n; i++) h.vx[i] += 0.3f; /* a net drift */
  double p0[3], p1[3], s0, s1;
  momentum(&h, p0, &s0);
  CHECK_STATUS(run_step(ctx, AT_DEV, &h, 1e-3f, 0.02f, 100), PP_OK, "momentum run");
  momentum(&h, p1, &s1);
  double d = sqrt((p1[0] - p0[0]) * (p1[0] - p0[0]) + (p1[1] - p0[1]) * (p1[1] - p0[1]) +
                  (p1[2] - p0[2]) * (p1[2] - p0[2]));
  CHECK(d <= 1e-5 * s0, "momentum changed by %.3g (scale %.3g) over 100 steps", d, s0);
  hb_free(&h);
}

/* Two equal masses (M = 1) a distance d = 1 apart on a circular orbit: period 2 pi. */
static void test_two_body_orbit(pp_context *ctx) {
  hbodies h = hb_alloc(2);
  h.m[0] = h.m[1] = 0.5f;
  h.x[0] = 0.5f;
  h.x[1] = -0.5f;
  h.vy[0] = 0.5f; /* v^2 / r = (0.25) / 0.5 = 0.5 = m / d^2 */
  h.vy[1] = -0.5f;
  const size_t per = 4000;
  const double period = 2.0 * M_PI * sqrt(1.0 / 1.0);
  const float dt = (float)(period / per);
  double k0, u0, k1, u1;
  CHECK_STATUS(run_energy(ctx, AT_HOST, &h, 0.0f, &k0, &u0), PP_OK, "orbit energy");
  CHECK(fabs(k0 + u0 - (-0.125)) <= 1e-7, "orbit E0 %.9g, want -1/8", k0 + u0);
  /* quarter, half, full period: where body 0 must be */
  const size_t marks[3] = {per / 4, per / 4, per / 2};
  const double want[3][2] = {{0.0, 0.5}, {-0.5, 0.0}, {0.5, 0.0}};
  for (int q = 0; q < 3; q++) {
    CHECK_STATUS(run_step(ctx, q == 1 ? AT_DEV : AT_HOST, &h, dt, 0.0f, marks[q]), PP_OK,
                 "orbit steps");
    double ex = h.x[0] - want[q][0], ey = h.y[0] - want[q][1];
    CHECK(sqrt(ex * ex + ey * ey) <= 2e-3, "orbit mark %d: body 0 at (%.6f, %.6f), want (%g, %g)",
          q, (double)h.x[0], (double)h.y[0], want[q][0], want[q][1]);
    CHECK(fabs(h.x[0] + h.x[1]) <= 1e-5 && fabs(h.y[0] + h.y[1]) <= 1e-5,
          "orbit mark %d: centre of mass moved", q);
  }
  CHECK_STATUS(run_energy(ctx, AT_DEV_ODD, &h, 0.0f, &k1, &u1), PP_OK, "orbit energy after");
  CHECK(fabs((k1 + u1) - (k0 + u0)) <= 1e-5, "orbit energy %.9g -> %.9g", k0 + u0, k1 + u1);
  hb_free(&h);
}

static void test_plummer_drift(pp_context *ctx) {
  /* quick: the CPU's size and fewer steps (the drift bound holds a fortiori) */
  const size_t n = g_cuda && !th_quick() ? 16384 : 512, steps = th_quick() ? 200 : 1000;
  const float dt = 1e-3f, soft = 0.05f;
  hbodies h = hb_plummer(n, 12);
  pbodies pb = place_bodies(ctx, AT_DEV, &h);
  double k0, u0, k1, u1;
  CHECK_STATUS(pp_nbody_energy(ctx, &pb.b, soft, &k0, &u0), PP_OK, "plummer E0");
  pp_status s = pp_nbody_step(ctx, &pb.b, dt, soft, steps);
  CHECK_STATUS(s, PP_OK, "plummer %zu steps: %s", steps, pp_last_error(ctx));
  CHECK_STATUS(pp_nbody_energy(ctx, &pb.b, soft, &k1, &u1), PP_OK, "plummer E1");
  double e0 = k0 + u0, e1 = k1 + u1, drift = fabs(e1 - e0) / fabs(e0);
  printf("plummer n=%zu: E0 %.6f (K %.6f U %.6f), after %zu steps of %g: E %.6f, drift %.3g\n", n,
         e0, k0, u0, steps, (double)dt, e1, drift);
  CHECK(e0 < -0.2 && e0 > -0.3, "plummer E0 %.6f, want about -0.25", e0);
  CHECK(drift < 1e-3, "plummer energy drift %.3g >= 1e-3", drift);
  CHECK(fabs(2 * k0 + u0) < 0.1 * fabs(u0), "plummer not near virial equilibrium: 2K+U = %.4g",
        2 * k0 + u0);
  free_bodies(ctx, &pb);
  hb_free(&h);
}

/* No softening and r^2 below FLT_MIN (a denormal): the reciprocal square roots of both
 * backends need a normal argument, and took such pairs for garbage or for coincident
 * ones. The pull must match m / r^2 from the same float inputs, within the few float
 * roundings of a denormal r^2 (its spacing, 2^-149, is ~1e-5 of these r^2). */
static void test_accel_tiny_separation(pp_context *ctx) {
  /* along x: 1e-20 apart (r^2 = 1e-40), masses 1e-33: a = 1e7 */
  /* along y and z: r = 5e-21 (r^2 = 2.5e-41), masses 1e-36: a = 4e4 split 3 : 4 */
  const float pos[2][3][2] = {{{0.0f, 1e-20f}, {0.0f, 0.0f}, {0.0f, 0.0f}},
                              {{0.5f, 0.5f}, {0.0f, 3e-21f}, {0.0f, 4e-21f}}};
  const float mass[2] = {1e-33f, 1e-36f};
  const double tol[2] = {1e-4, 1e-3};
  for (int c = 0; c < 2; c++) {
    for (int where = AT_HOST; where < N_PLACES; where++) {
      hbodies h = hb_alloc(2);
      for (int i = 0; i < 2; i++) {
        h.x[i] = pos[c][0][i];
        h.y[i] = pos[c][1][i];
        h.z[i] = pos[c][2][i];
        h.m[i] = mass[c];
      }
      float a[6];
      for (int i = 0; i < 6; i++) a[i] = NAN;
      CHECK_STATUS(run_accel(ctx, where, &h, 0.0f, a, a + 2, a + 4), PP_OK, "tiny separation");
      const double dx = (double)h.x[1] - h.x[0], dy = (double)h.y[1] - h.y[0],
                   dz = (double)h.z[1] - h.z[0];
      const double r2 = dx * dx + dy * dy + dz * dz, k = (double)mass[c] / (r2 * sqrt(r2));
      const double want[3] = {dx * k, dy * k, dz * k};
      for (int i = 0; i < 2; i++)
        for (int d = 0; d < 3; d++) {
          const double w = i ? -want[d] : want[d], g = a[2 * d + i];
          CHECK(fabs(g - w) <= tol[c] * fabs(w), /* w == 0: exactly 0 */
                "tiny separation case %d place %d: a%c[%d] = %.9g, want %.9g", c, where, "xyz"[d],
                i, g, w);
        }
      hb_free(&h);
    }
  }
}

/* pp_nbody_step's scratch allocation failing: OUT_OF_MEMORY, a message that names
 * pp_nbody_step, and the bodies as they were. (The first allocation of the call fails:
 * on the CPU that is the acceleration scratch itself.) */
static void test_step_alloc_failure(pp_context *ctx) {
  hbodies h = hb_random(16, 1, 1, 8);
  hbodies keep = hb_alloc(16);
  memcpy(keep.x, h.x, 7 * 16 * sizeof(float));
  pp_bodies b = {h.x, h.y, h.z, h.vx, h.vy, h.vz, h.m, 16};
  uint64_t fired0 = 0, fired1 = 0;
  pp_test_control(PP_TESTCTL_FAULTS_FIRED, &fired0);
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)1, 0);
  th_poison_error(ctx);
  pp_status s = pp_nbody_step(ctx, &b, 0.001f, 0.01f, 3);
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
  pp_test_control(PP_TESTCTL_FAULTS_FIRED, &fired1);
  const char *msg = pp_last_error(ctx);
  if (!g_cuda)
    CHECK(fired1 > fired0 && s == PP_ERR_OUT_OF_MEMORY,
          "pp_nbody_step with its allocation failed: fired %d, %s", (int)(fired1 > fired0),
          pp_status_string(s));
  if (s != PP_OK) {
    CHECK(s == PP_ERR_OUT_OF_MEMORY && strncmp(msg, "pp_nbody_step: ", 15) == 0,
          "pp_nbody_step failed allocation: %s, message \"%s\"", pp_status_string(s), msg);
    CHECK(memcmp(keep.x, h.x, 7 * 16 * sizeof(float)) == 0,
          "pp_nbody_step wrote the bodies although it failed");
  }
  hb_free(&h);
  hb_free(&keep);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  test_accel_tiny_separation(ctx);
  test_step_alloc_failure(ctx);
  g_cuda = pp_backend_of(ctx) == PP_BACKEND_CUDA;
  test_bad_args(ctx);
  test_accel_random(ctx);
  test_accel_special(ctx);
  test_accel_large(ctx);
  test_energy(ctx);
  test_step(ctx);
  test_momentum(ctx);
  test_two_body_orbit(ctx);
  test_plummer_drift(ctx);
  return th_finish(ctx);
}
