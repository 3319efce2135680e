/*
 * test_dist.c — distributed contexts: every global primitive on a distributed context
 * against the same primitive on one plain context over the concatenated data, and the
 * failure agreement.
 *
 * Run as one program per rank, e.g. `mpiexec -n 4 test_dist cpu` (ctest does 1..4 ranks on
 * the CPU backend) or `mpirun -np 4 test_dist cuda` on a machine with 4 GPUs; or, for CUDA
 * ranks as threads of one process (what `parprim --gpus N` does), `test_dist cuda threads 4`. Every rank
 * makes the whole global data set from the same seed, takes its slice for the case's size
 * layout (even, all on one rank, empty ranks, random), calls the distributed primitive on
 * its slice, and checks the result against the plain context's answer on the whole data:
 * bit for bit where the arithmetic is exact (integers, MIN/MAX, argreduce, top-k,
 * histograms), within stated bounds for float sums and N-body.
 *
 * Failure agreement: a bad argument, a value that differs across ranks, or an allocation
 * failing on one rank must fail the call on every rank with the same status and message,
 * leave every output untouched, hang no rank, and leave the context usable.
 *
 * Without MPI in the build (or, for cuda, without NCCL) the program checks that the
 * distributed constructors say so (PP_ERR_UNSUPPORTED naming what is missing) and ends.
 */
#include "harness.h"
#include "th_dist.h"
#include "../src/core/testctl.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#ifdef PP_HAVE_MPI
#include <mpi.h>
#endif
#if defined(PP_HAVE_MPI) && defined(PP_TEST_NCCL)
#include <cuda_runtime.h>
#include <nccl.h>
#endif

/* ---- reduce and argreduce -------------------------------------------------------------- */

static double abs_sum(pp_dtype t, const void *x, size_t lo, size_t hi) {
  double s = 0;
  for (size_t i = lo; i < hi; i++) {
    double v = fabs(as_d(t, x, i));
    if (isfinite(v)) s += v;
  }
  return s;
}

/* f32 / f64 sums: the distributed and the one-context results both approximate the exact
 * sum; each within a few roundings of the result plus pairwise summation's error. */
static bool sums_close(pp_dtype t, double got, double want, double scale) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (isinf(got) || isinf(want)) return got == want;
  double eps = t == PP_F32 ? FLT_EPSILON : DBL_EPSILON;
  return fabs(got - want) <= 8 * eps * (scale + fabs(want)) + 1e-300;
}

static void check_reduce_case(pp_context *ctx, pp_context *ref, pp_dtype t, int kind, int layout,
                              size_t N, int c) {
  if (!th_sampled()) return;
  const part d = part_make(t, kind, layout, N, 100 + (uint64_t)N * 7 + (uint64_t)kind);
  const size_t n = d.n;
  void *all = d.all;
  slice s = part_slice(ctx, &d, c);
  for (int op = PP_SUM; op <= PP_MAX; op++) {
    unsigned char got[8] = {0}, want[8] = {0};
    pp_status st = pp_reduce(ctx, (pp_op)op, t, s.arg, n, got);
    CHECK_STATUS(st, PP_OK, "pp_reduce op %d %s %s %s N=%zu: %s", op, type_name(t),
                 data_name[kind], layout_name[layout], N, pp_last_error(ctx));
    CHECK_STATUS(pp_reduce(ref, (pp_op)op, t, all, N, want), PP_OK, "reference reduce");
    bool ok = op == PP_SUM && is_float(t)
                  ? sums_close(t, as_d(t, got, 0), as_d(t, want, 0), abs_sum(t, all, 0, N))
                  : same_value(t, got, want);
    CHECK(ok, "pp_reduce op %d %s %s %s N=%zu: got %.17g want %.17g", op, type_name(t),
          data_name[kind], layout_name[layout], N, as_d(t, got, 0), as_d(t, want, 0));
  }
  for (int op = PP_MIN; op <= PP_MAX; op++) {
    unsigned char got[8] = {0}, want[8] = {0};
    uint64_t gi = 77, wi = 99;
    pp_status st = pp_argreduce(ctx, (pp_op)op, t, s.arg, n, got, &gi);
    CHECK_STATUS(st, PP_OK, "pp_argreduce op %d %s: %s", op, type_name(t), pp_last_error(ctx));
    CHECK_STATUS(pp_argreduce(ref, (pp_op)op, t, all, N, want, &wi), PP_OK, "reference");
    CHECK(same_value(t, got, want) && gi == wi,
          "pp_argreduce op %d %s %s %s N=%zu: got %.17g at %llu, want %.17g at %llu", op,
          type_name(t), data_name[kind], layout_name[layout], N, as_d(t, got, 0),
          (unsigned long long)gi, as_d(t, want, 0), (unsigned long long)wi);
  }
  slice_free(ctx, &s);
  free(all);
}

/* ---- scan ------------------------------------------------------------------------------ */

static void check_scan_case(pp_context *ctx, pp_context *ref, pp_dtype t, int kind, int layout,
                            size_t N, int c) {
  if (!th_sampled()) return;
  const part d = part_make(t, kind, layout, N, 300 + (uint64_t)N * 5 + (uint64_t)kind);
  const size_t es = d.es, off = d.off, n = d.n;
  void *want = th_xmalloc(N * es + 16);
  double *prefix_abs = th_xmalloc((N + 1) * sizeof(double));
  prefix_abs[0] = 0;
  for (size_t i = 0; i < N; i++) {
    double v = fabs(as_d(t, d.all, i));
    prefix_abs[i + 1] = prefix_abs[i] + (isfinite(v) ? v : 0);
  }
  for (int op = PP_SUM; op <= PP_MAX; op++) {
    for (int inclusive = 0; inclusive <= 1; inclusive++) {
      const bool in_place = ((c + op) & 1) != 0;
      slice in = part_slice(ctx, &d, c);
      slice out = in_place ? in : slice_make(ctx, NULL, n * es, c & 1);
      pp_status st = pp_scan(ctx, (pp_op)op, t, in.arg, out.arg, n, inclusive);
      CHECK_STATUS(st, PP_OK, "pp_scan op %d %s: %s", op, type_name(t), pp_last_error(ctx));
      CHECK_STATUS(pp_scan(ref, (pp_op)op, t, d.all, want, N, inclusive), PP_OK, "reference scan");
      slice_fetch(ctx, &out);
      size_t bad = 0, first_bad = 0;
      for (size_t i = 0; i < n; i++) {
        const char *g = (const char *)out.host + i * es, *w = (const char *)want + (off + i) * es;
        bool ok = op == PP_SUM && is_float(t)
                      ? sums_close(t, as_d(t, g, 0), as_d(t, w, 0), prefix_abs[off + i + 1])
                      : same_value(t, g, w);
        if (!ok && bad++ == 0) first_bad = i;
      }
      CHECK(bad == 0,
            "pp_scan op %d %s %s %s N=%zu %s%s: %zu of %zu wrong, first at local %zu (global "
            "%zu): got %.17g want %.17g",
            op, type_name(t), data_name[kind], layout_name[layout], N,
            inclusive ? "inclusive" : "exclusive", in_place ? " in place" : "", bad, n, first_bad,
            off + first_bad, bad ? as_d(t, out.host, first_bad) : 0.0,
            bad ? as_d(t, want, off + first_bad) : 0.0);
      if (!in_place) slice_free(ctx, &out);
      slice_free(ctx, &in);
    }
  }
  free(prefix_abs);
  free(want);
  free(d.all);
}

/* ---- histograms ------------------------------------------------------------------------ */

static void check_histogram_case(pp_context *ctx, pp_context *ref, pp_dtype t, int kind,
                                 int layout, size_t N, int c) {
  if (!th_sampled()) return;
  const part d = part_make(t, kind, layout, N, 500 + (uint64_t)N * 3 + (uint64_t)kind);
  const size_t n = d.n, bins = 1 + (size_t)(N % 37);
  void *all = d.all;
  slice s = part_slice(ctx, &d, c);
  double lo = t == PP_U8 ? 0 : -700, hi = t == PP_U8 ? 256 : 900;
  if (kind == DATA_SMALL) {
    lo = -2;
    hi = 3;
  }
  uint64_t *got = th_xmalloc(bins * 8), *want = th_xmalloc(bins * 8);
  CHECK_STATUS(pp_histogram_even(ctx, t, s.arg, n, bins, lo, hi, got), PP_OK,
               "pp_histogram_even %s: %s", type_name(t), pp_last_error(ctx));
  CHECK_STATUS(pp_histogram_even(ref, t, all, N, bins, lo, hi, want), PP_OK, "reference");
  CHECK(memcmp(got, want, bins * 8) == 0, "pp_histogram_even %s %s %s N=%zu bins=%zu differs",
        type_name(t), data_name[kind], layout_name[layout], N, bins);
  double *edges = th_xmalloc((bins + 1) * sizeof(double));
  for (size_t i = 0; i <= bins; i++) edges[i] = lo + (hi - lo) * ((double)i / (double)bins) * ((double)i / (double)bins);
  CHECK_STATUS(pp_histogram_range(ctx, t, s.arg, n, edges, bins, got), PP_OK,
               "pp_histogram_range %s: %s", type_name(t), pp_last_error(ctx));
  CHECK_STATUS(pp_histogram_range(ref, t, all, N, edges, bins, want), PP_OK, "reference");
  CHECK(memcmp(got, want, bins * 8) == 0, "pp_histogram_range %s %s %s N=%zu differs",
        type_name(t), data_name[kind], layout_name[layout], N);
  free(edges);
  free(got);
  free(want);
  slice_free(ctx, &s);
  free(all);
}

/* Each rank holds some rows of one image (the global image is the rows stacked in rank
 * order), with a pitch wider than the row. */
static void check_histogram_image(pp_context *ctx, pp_context *ref, int layout, size_t H, int c) {
  const size_t W = 13, channels = 1 + (size_t)(H % 4), pitch = W * channels + 5;
  size_t counts[64];
  layout_counts(layout, H, counts);
  const size_t off = my_offset(counts), h = counts[g_rank];
  uint8_t *img = make_data(PP_U8, DATA_RANDOM, H * pitch, 700 + H);
  slice s = slice_make(ctx, img + off * pitch, h * pitch, c & 1);
  uint64_t got[4 * 256], want[4 * 256];
  CHECK_STATUS(pp_histogram_image(ctx, s.arg, W, h, pitch, (int)channels, got), PP_OK,
               "pp_histogram_image: %s", pp_last_error(ctx));
  CHECK_STATUS(pp_histogram_image(ref, img, W, H, pitch, (int)channels, want), PP_OK, "reference");
  CHECK(memcmp(got, want, channels * 256 * 8) == 0,
        "pp_histogram_image %s H=%zu channels=%zu differs", layout_name[layout], H, channels);
  slice_free(ctx, &s);
  free(img);
}

/* ---- top-k ----------------------------------------------------------------------------- */

static void check_topk_case(pp_context *ctx, pp_context *ref, pp_dtype t, int kind, int layout,
                            size_t N, size_t k, bool largest, int c) {
  if (!th_sampled()) return;
  const part d = part_make(t, kind, layout, N, 900 + (uint64_t)N * 11 + (uint64_t)kind);
  const size_t n = d.n, es = d.es;
  void *all = d.all;
  slice s = part_slice(ctx, &d, c);
  void *gv = th_xmalloc(k * es + 16), *wv = th_xmalloc(k * es + 16);
  uint64_t *gi = th_xmalloc(k * 8 + 8), *wi = th_xmalloc(k * 8 + 8);
  pp_status st = pp_topk(ctx, t, s.arg, n, k, largest, gv, gi);
  CHECK_STATUS(st, PP_OK, "pp_topk %s k=%zu: %s", type_name(t), k, pp_last_error(ctx));
  CHECK_STATUS(pp_topk(ref, t, all, N, k, largest, wv, wi), PP_OK, "reference topk");
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < k && st == PP_OK; i++)
    if ((!same_value(t, (char *)gv + i * es, (char *)wv + i * es) || gi[i] != wi[i]) && bad++ == 0)
      first = i;
  CHECK(bad == 0,
        "pp_topk %s %s %s N=%zu k=%zu %s: %zu wrong, first at %zu: got %.17g@%llu want %.17g@%llu",
        type_name(t), data_name[kind], layout_name[layout], N, k, largest ? "largest" : "smallest",
        bad, first, bad ? as_d(t, gv, first) : 0.0, bad ? (unsigned long long)gi[first] : 0ull,
        bad ? as_d(t, wv, first) : 0.0, bad ? (unsigned long long)wi[first] : 0ull);
  /* indices may be NULL */
  if (k > 0) {
    st = pp_topk(ctx, t, s.arg, n, k, largest, gv, NULL);
    CHECK(st == PP_OK && same_value(t, gv, wv), "pp_topk without indices: %s", pp_last_error(ctx));
  }
  free(gv);
  free(wv);
  free(gi);
  free(wi);
  slice_free(ctx, &s);
  free(all);
}

/* ---- N-body ---------------------------------------------------------------------------- */

typedef struct system {
  float *a[7]; /* x, y, z, vx, vy, vz, mass */
  size_t n;
} system_t;

static system_t make_system(size_t N, uint64_t stream, bool coincident) {
  system_t s = {{0}, N};
  th_rng r = th_rng_make(stream);
  for (int k = 0; k < 7; k++) s.a[k] = th_xmalloc(N * sizeof(float) + 16);
  for (size_t i = 0; i < N; i++) {
    for (int k = 0; k < 3; k++) s.a[k][i] = (float)th_range(&r, -1, 1);
    for (int k = 3; k < 6; k++) s.a[k][i] = (float)th_range(&r, -0.1, 0.1);
    s.a[6][i] = (float)th_range(&r, 0.5, 1.5) / (float)N;
    if (coincident && i % 5 == 1) /* a body on top of its predecessor */
      for (int k = 0; k < 3; k++) s.a[k][i] = s.a[k][i - 1];
  }
  return s;
}

static pp_bodies bodies_of(system_t *s, size_t off, size_t n) {
  pp_bodies b = {s->a[0] + off, s->a[1] + off, s->a[2] + off, s->a[3] + off,
                 s->a[4] + off, s->a[5] + off, s->a[6] + off, n};
  return b;
}

static void free_system(system_t *s) {
  for (int k = 0; k < 7; k++) free(s->a[k]);
}

static double max_abs(const float *a, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
  return m;
}

static void check_nbody_case(pp_context *ctx, pp_context *ref, int layout, size_t N,
                             float softening, int c) {
  if (!th_sampled()) return;
  size_t counts[64];
  layout_counts(layout, N, counts);
  const size_t off = my_offset(counts), n = counts[g_rank];
  system_t all = make_system(N, 1100 + N, softening == 0.0f);
  system_t mine = make_system(N, 1100 + N, softening == 0.0f); /* advanced by the step test */
  pp_bodies b = bodies_of(&mine, off, n), B = bodies_of(&all, 0, N);
  (void)c;
  /* accel */
  float *ga = th_xmalloc(3 * n * sizeof(float) + 16), *wa = th_xmalloc(3 * N * sizeof(float) + 16);
  pp_status st = pp_nbody_accel(ctx, &b, softening, ga, ga + n, ga + 2 * n);
  CHECK_STATUS(st, PP_OK, "pp_nbody_accel: %s", pp_last_error(ctx));
  CHECK_STATUS(pp_nbody_accel(ref, &B, softening, wa, wa + N, wa + 2 * N), PP_OK, "reference");
  for (int k = 0; k < 3; k++) {
    double scale = max_abs(wa + k * N, N);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
      double g = ga[k * n + i], w = wa[k * N + off + i];
      if (!(fabs(g - w) <= 1e-4 * scale + 1e-6 * fabs(w))) bad++;
    }
    CHECK(bad == 0, "pp_nbody_accel %s N=%zu eps=%g axis %d: %zu of %zu off", layout_name[layout],
          N, (double)softening, k, bad, n);
  }
  /* energy */
  double gk = -1, gp = -1, wk = -2, wp = -2;
  st = pp_nbody_energy(ctx, &b, softening, &gk, &gp);
  CHECK_STATUS(st, PP_OK, "pp_nbody_energy: %s", pp_last_error(ctx));
  CHECK_STATUS(pp_nbody_energy(ref, &B, softening, &wk, &wp), PP_OK, "reference");
  CHECK(fabs(gk - wk) <= 1e-9 * fabs(wk) + 1e-300 && fabs(gp - wp) <= 1e-9 * fabs(wp) + 1e-300,
        "pp_nbody_energy %s N=%zu: got K %.17g U %.17g, want K %.17g U %.17g", layout_name[layout],
        N, gk, gp, wk, wp);
  /* a few steps */
  const size_t steps = 3;
  const float dt = 1e-3f;
  st = pp_nbody_step(ctx, &b, dt, softening, steps);
  CHECK_STATUS(st, PP_OK, "pp_nbody_step: %s", pp_last_error(ctx));
  CHECK_STATUS(pp_nbody_step(ref, &B, dt, softening, steps), PP_OK, "reference step");
  for (int k = 0; k < 6; k++) {
    double scale = max_abs(all.a[k], N);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
      if (!(fabs((double)mine.a[k][off + i] - all.a[k][off + i]) <= 1e-5 * scale + 1e-7))
        bad++;
    CHECK(bad == 0, "pp_nbody_step %s N=%zu array %d: %zu of %zu off", layout_name[layout], N, k,
          bad, n);
  }
  free(ga);
  free(wa);
  free_system(&all);
  free_system(&mine);
}

/* ---- failure agreement ----------------------------------------------------------------- */

/* Every rank's status and message, gathered, must be the same. */
static void check_same_everywhere(pp_context *ctx, pp_status st, pp_status want, const char *what,
                                  const char *fn) {
  const char *msg = pp_last_error(ctx);
  CHECK_STATUS(st, want, "%s: rank %d", what, g_rank);
  CHECK(th_names(msg, fn), "%s: the message names %s: \"%s\"", what, fn, msg);
#ifdef PP_HAVE_MPI
  char mine[512] = {0}, *all = th_xmalloc((size_t)g_p * 512);
  int sts[64];
  int s = (int)st;
  snprintf(mine, sizeof mine, "%s", msg);
  MPI_Allgather(mine, 512, MPI_CHAR, all, 512, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Allgather(&s, 1, MPI_INT, sts, 1, MPI_INT, MPI_COMM_WORLD);
  for (int q = 0; q < g_p; q++) {
    CHECK(sts[q] == s, "%s: rank %d got status %d, rank %d got %d", what, q, sts[q], g_rank, s);
    CHECK(strcmp(all + (size_t)q * 512, mine) == 0, "%s: rank %d says \"%s\", rank %d \"%s\"",
          what, q, all + (size_t)q * 512, g_rank, mine);
  }
  free(all);
#endif
}

/* The k-th allocation failing on the last rank, k = 1 .. 8 (host arrays, staging, scratch,
 * the backend's own, the communicator's), for each distributed primitive: every rank
 * reports the same status, nothing is written, nothing hangs, and the context stays usable
 * for the next round. Top-k with k = 8 and with 360000 candidates. */
enum { FC_REDUCE, FC_ARGREDUCE, FC_SCAN, FC_HISTOGRAM, FC_NBODY, FC_TOPK, FC_TOPK_BIG, FC_KINDS };
static const char *fc_name[FC_KINDS] = {"pp_reduce", "pp_argreduce", "pp_scan", "pp_histogram_even",
                                        "pp_nbody_accel", "pp_topk", "pp_topk"};

static pp_status fault_call(pp_context *ctx, int kind, float *x, size_t n, unsigned char *out,
                            size_t k) {
  switch (kind) {
  case FC_REDUCE: return pp_reduce(ctx, PP_SUM, PP_F32, x, n, out);
  case FC_ARGREDUCE: return pp_argreduce(ctx, PP_MAX, PP_F32, x, n, out, (uint64_t *)(out + 8));
  case FC_SCAN: return pp_scan(ctx, PP_SUM, PP_F32, x, (float *)out, n, false);
  case FC_HISTOGRAM: return pp_histogram_even(ctx, PP_F32, x, n, 64, 0.0, 100003.0, (uint64_t *)out);
  case FC_NBODY: {
    const size_t m = n / 4; /* x holds the bodies' x, y, z and mass one after the other */
    pp_bodies b = {x, x + m, x + 2 * m, NULL, NULL, NULL, x + 3 * m, m};
    float *a = (float *)out;
    return pp_nbody_accel(ctx, &b, 0.01f, a, a + m, a + 2 * m);
  }
  default: return pp_topk(ctx, PP_F32, x, n, k, true, (float *)out, (uint64_t *)(out + k * 4));
  }
}

static void check_fault_loop(pp_context *ctx) {
#ifdef PP_HAVE_MPI
  const bool me = g_rank == g_p - 1;
  for (int kind = 0; kind < FC_KINDS; kind++) {
    const bool big = kind == FC_TOPK_BIG;
    const size_t n = big ? 400000 / (size_t)g_p + 1 : 4000, k = big ? 360000 : 8;
    const size_t out_bytes = kind >= FC_TOPK ? k * 12 : kind == FC_HISTOGRAM ? 64 * 8 : n * 4 + 16;
    float *x = th_xmalloc(n * sizeof *x);
    unsigned char *out = th_xmalloc(out_bytes);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 7919 + (size_t)g_rank * 13) % 100003);
    for (int at = 1; at <= 8; at++) {
      memset(out, 0xA5, out_bytes);
      uint64_t before = 0, after = 0;
      pp_test_control(PP_TESTCTL_FAULTS_FIRED, &before);
      if (me) pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)at, 0);
      const pp_status st = fault_call(ctx, kind, x, n, out, k);
      if (me) pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
      pp_test_control(PP_TESTCTL_FAULTS_FIRED, &after);
      int fired = after > before, any = 0;
      MPI_Allreduce(&fired, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      char what[120];
      snprintf(what, sizeof what, "%s%s with allocation %d failing on rank %d", fc_name[kind],
               big ? " (k = 360000)" : "", at, g_p - 1);
      if (any) {
        check_same_everywhere(ctx, st, PP_ERR_OUT_OF_MEMORY, what, fc_name[kind]);
        bool untouched = true;
        for (size_t i = 0; i < out_bytes; i++) untouched = untouched && out[i] == 0xA5;
        CHECK(untouched, "%s: outputs written on failure", what);
      } else {
        CHECK_STATUS(st, PP_OK, "%s (no allocation failed): %s", what, pp_last_error(ctx));
      }
    }
    free(x);
    free(out);
  }
#else
  (void)ctx;
#endif
}

static void check_failures(pp_context *ctx) {
  const int bad_rank = g_p - 1; /* the last rank misbehaves */
  float data[64];
  for (int i = 0; i < 64; i++) data[i] = (float)i;
  const bool me = g_rank == bad_rank;

  /* a NULL input on one rank */
  float out = 12345.0f;
  pp_status st = pp_reduce(ctx, PP_SUM, PP_F32, me ? NULL : data, 64, &out);
  check_same_everywhere(ctx, st, PP_ERR_INVALID_ARGUMENT, "reduce with in NULL on one rank", "pp_reduce");
  CHECK(out == 12345.0f, "pp_reduce wrote its output on failure (%g)", (double)out);
  CHECK(me ? strstr(pp_last_error(ctx), "in") != NULL : 1, "the message names the argument");

  /* a bad op on one rank */
  uint64_t idx = 777;
  st = pp_argreduce(ctx, me ? PP_SUM : PP_MIN, PP_F32, data, 64, &out, &idx);
  check_same_everywhere(ctx, st, PP_ERR_INVALID_ARGUMENT, "argreduce with op SUM on one rank",
                        "pp_argreduce");
  CHECK(out == 12345.0f && idx == 777, "pp_argreduce wrote its outputs on failure");

  /* a value that must agree and does not (only with several ranks) */
  if (g_p > 1) {
    uint64_t counts[40];
    for (int i = 0; i < 40; i++) counts[i] = 4242;
    st = pp_histogram_even(ctx, PP_F32, data, 64, me ? 40 : 32, 0.0, 64.0, counts);
    check_same_everywhere(ctx, st, PP_ERR_INVALID_ARGUMENT, "bins differing across ranks",
                          "pp_histogram_even");
    CHECK(strstr(pp_last_error(ctx), "bins") != NULL, "the message names bins: %s",
          pp_last_error(ctx));
    bool untouched = true;
    for (int i = 0; i < 40; i++) untouched = untouched && counts[i] == 4242;
    CHECK(untouched, "pp_histogram_even wrote counts on failure");
    float sc[8];
    for (int i = 0; i < 8; i++) sc[i] = -5.0f;
    st = pp_scan(ctx, me ? PP_MAX : PP_SUM, PP_F32, data, sc, 8, true);
    check_same_everywhere(ctx, st, PP_ERR_INVALID_ARGUMENT, "scan op differing across ranks", "pp_scan");
    CHECK(sc[0] == -5.0f && sc[7] == -5.0f, "pp_scan wrote its output on failure");
  }

  /* k above the global n: every rank fails, whatever its own n */
  {
    float v[160]; /* room for k values and indices: only k is wrong */
    uint64_t vi[160];
    size_t total = (size_t)g_p * 2; /* each rank passes 2 */
    st = pp_topk(ctx, PP_F32, data, 2, total + 1, true, v, vi);
    check_same_everywhere(ctx, st, PP_ERR_INVALID_ARGUMENT, "topk with k > global n", "pp_topk");
    /* k within the global n but above this rank's n is fine */
    if (g_p > 1) {
      float w[4];
      uint64_t wi[4];
      st = pp_topk(ctx, PP_F32, data, 2, 3, true, w, wi);
      CHECK_STATUS(st, PP_OK, "topk with k > local n but <= global n: %s", pp_last_error(ctx));
    }
  }

  /* an impossible size on one rank: n * element size overflows */
  {
    double d = 1.0;
    st = pp_reduce(ctx, PP_SUM, PP_F64, data, me ? SIZE_MAX / 2 : 4, &d);
    check_same_everywhere(ctx, st, PP_ERR_OVERFLOW, "reduce with n overflowing on one rank", "pp_reduce");
    CHECK(d == 1.0, "pp_reduce wrote on failure");
  }

  /* an allocation failing on one rank (the staged copy of a host input, or top-k's
   * scratch): every rank reports it, nothing is written, nothing hangs */
  {
    float v[8];
    uint64_t vi[8];
    for (int i = 0; i < 8; i++) {
      v[i] = -1.0f;
      vi[i] = 5;
    }
    if (me) pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)1, 1);
    st = pp_topk(ctx, PP_F32, data, 64, 8, true, v, vi);
    if (me) pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
    check_same_everywhere(ctx, st, PP_ERR_OUT_OF_MEMORY, "topk with no memory on one rank", "pp_topk");
    bool untouched = true;
    for (int i = 0; i < 8; i++) untouched = untouched && v[i] == -1.0f && vi[i] == 5;
    CHECK(untouched, "pp_topk wrote its outputs on failure");
  }

  /* the context is usable afterwards */
  {
    float sum = 0;
    st = pp_reduce(ctx, PP_SUM, PP_F32, data, 64, &sum);
    CHECK(st == PP_OK && sum == 2016.0f * (float)g_p, "reduce after failures: %s, %g",
          pp_last_error(ctx), (double)sum);
  }
  /* pp_merge is not defined on a distributed context */
  {
    float m[4];
    st = pp_merge(ctx, PP_F32, data, 2, data + 2, 2, m, PP_ASCENDING);
    CHECK_STATUS(st, PP_ERR_UNSUPPORTED, "pp_merge on a distributed context");
    CHECK(th_names(pp_last_error(ctx), "pp_merge"), "pp_merge's message: %s", pp_last_error(ctx));
  }
  /* per-rank primitives stay per rank */
  {
    float sel[64];
    uint64_t cnt = 0;
    float v = 31.5f;
    st = pp_select(ctx, PP_F32, data, 64, PP_GT, &v, sel, &cnt);
    CHECK(st == PP_OK && cnt == 32 && sel[0] == 32.0f, "pp_select per rank: %s, %llu", pp_last_error(ctx),
          (unsigned long long)cnt);
  }
}

/* ---- contexts -------------------------------------------------------------------------- */

#if defined(PP_HAVE_MPI) && defined(PP_TEST_NCCL)
/* A communicator the program made itself (as a PyTorch or MPI+NCCL program has one):
 * parprim adopts it, runs on its GPU, and leaves it alive for its owner. */
static void check_adopt_nccl(void) {
  MPI_Comm node;
  int local = 0, gpus = 0, prev = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) return;
  cudaGetDevice(&prev);
  const int dev = local % gpus;
  ncclUniqueId uid;
  if (g_rank == 0) ncclGetUniqueId(&uid);
  MPI_Bcast(&uid, (int)sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
  cudaSetDevice(dev);
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, g_p, uid, g_rank);
  cudaSetDevice(prev);
  CHECK(r == ncclSuccess, "ncclCommInitRank: %s", ncclGetErrorString(r));
  if (r != ncclSuccess) return;
  pp_context *c = NULL;
  pp_status st = pp_create_from_comm(&c, PP_BACKEND_CUDA, &comm);
  CHECK_STATUS(st, PP_OK, "pp_create_from_comm(CUDA): %s", pp_last_error(NULL));
  if (st == PP_OK) {
    CHECK(pp_rank(c) == g_rank && pp_nranks(c) == g_p, "adopted NCCL ranks %d of %d", pp_rank(c),
          pp_nranks(c));
    int64_t x = -(int64_t)g_rank, mn = 1;
    uint64_t at = 99;
    st = pp_argreduce(c, PP_MIN, PP_I64, &x, 1, &mn, &at);
    CHECK(st == PP_OK && mn == -(int64_t)(g_p - 1) && at == (uint64_t)(g_p - 1),
          "argreduce on the adopted communicator: %lld at %llu (%s)", (long long)mn,
          (unsigned long long)at, pp_last_error(c));
    pp_destroy(c);
  }
  /* still the caller's: one more collective on it, then the owner destroys it */
  cudaSetDevice(dev);
  int *d = NULL, h = 1;
  cudaMalloc((void **)&d, sizeof *d);
  cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
  r = ncclAllReduce(d, d, 1, ncclInt32, ncclSum, comm, 0);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  CHECK(r == ncclSuccess && h == g_p, "the adopted communicator outlives the context: %d", h);
  cudaFree(d);
  ncclCommDestroy(comm);
  cudaSetDevice(prev);
}
#endif

static void check_contexts(pp_context *ctx) {
  CHECK(pp_nranks(ctx) == g_p && pp_rank(ctx) == g_rank, "rank %d of %d, want %d of %d",
        pp_rank(ctx), pp_nranks(ctx), g_rank, g_p);
  CHECK(pp_backend_of(ctx) == g_backend, "backend of the distributed context");
  CHECK(pp_rank(NULL) == 0 && pp_nranks(NULL) == 1, "rank and size of NULL");
  pp_context *plain = NULL;
  if (pp_create(&plain, g_backend) == PP_OK) {
    CHECK(pp_rank(plain) == 0 && pp_nranks(plain) == 1, "a plain context is rank 0 of 1");
    pp_destroy(plain);
  }
  pp_context *bad = (pp_context *)&bad;
  CHECK_STATUS(pp_create_dist(NULL, g_backend, NULL, 0, 0), PP_ERR_INVALID_ARGUMENT, "ctx NULL");
  CHECK_STATUS(pp_create_dist(&bad, (pp_backend)9, NULL, 0, 0), PP_ERR_INVALID_ARGUMENT, "backend 9");
  CHECK(bad == NULL, "*ctx is NULL after a failed pp_create_dist");
  CHECK_STATUS(pp_dist_id_create(g_backend, NULL), PP_ERR_INVALID_ARGUMENT, "id NULL");
  CHECK_STATUS(pp_create_from_comm(&bad, PP_BACKEND_AUTO, &bad), PP_ERR_INVALID_ARGUMENT,
               "create_from_comm with AUTO");
#ifdef PP_HAVE_MPI
  /* an explicit id: rank 0 makes it, MPI carries it */
  pp_dist_id id;
  memset(&id, 0, sizeof id);
  pp_status st = PP_OK;
  if (g_rank == 0) st = pp_dist_id_create(g_backend, &id);
  MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, MPI_COMM_WORLD);
  CHECK_STATUS(st, PP_OK, "pp_dist_id_create: %s", pp_last_error(NULL));
  if (st == PP_OK) {
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    pp_context *c2 = NULL;
    st = pp_create_dist(&c2, g_backend, &id, g_p, g_rank);
    CHECK_STATUS(st, PP_OK, "pp_create_dist with an id: %s", pp_last_error(NULL));
    if (st == PP_OK) {
      CHECK(pp_rank(c2) == g_rank && pp_nranks(c2) == g_p, "ranks of the id context");
      int32_t x = g_rank + 1, sum = 0;
      st = pp_reduce(c2, PP_SUM, PP_I32, &x, 1, &sum);
      CHECK(st == PP_OK && sum == g_p * (g_p + 1) / 2, "reduce on the id context: %d (%s)", sum,
            pp_last_error(c2));
      pp_destroy(c2);
    }
  }
  if (g_backend == PP_BACKEND_CPU) {
    /* a CPU id must match MPI_COMM_WORLD: a wrong nranks on one rank fails every rank */
    pp_context *c3 = NULL;
    pp_dist_id cid;
    CHECK_STATUS(pp_dist_id_create(PP_BACKEND_CPU, &cid), PP_OK, "cpu id");
    st = pp_create_dist(&c3, PP_BACKEND_CPU, &cid, g_rank == g_p - 1 ? g_p + 1 : g_p, g_rank);
    CHECK_STATUS(st, PP_ERR_INVALID_ARGUMENT, "a CPU id with the wrong nranks on one rank");
    CHECK(c3 == NULL && th_names(pp_last_error(NULL), "pp_create_dist"), "message: %s",
          pp_last_error(NULL));
    /* adopting a communicator: the even and the odd ranks, each their own group */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
    pp_context *c4 = NULL;
    st = pp_create_from_comm(&c4, PP_BACKEND_CPU, &half);
    CHECK_STATUS(st, PP_OK, "pp_create_from_comm: %s", pp_last_error(NULL));
    if (st == PP_OK) {
      int hr = 0, hp = 1;
      MPI_Comm_rank(half, &hr);
      MPI_Comm_size(half, &hp);
      CHECK(pp_rank(c4) == hr && pp_nranks(c4) == hp, "adopted ranks %d of %d, want %d of %d",
            pp_rank(c4), pp_nranks(c4), hr, hp);
      uint64_t x = (uint64_t)g_rank, sum = 0, want = 0;
      for (int q = g_rank % 2; q < g_p; q += 2) want += (uint64_t)q;
      st = pp_reduce(c4, PP_SUM, PP_U64, &x, 1, &sum);
      CHECK(st == PP_OK && sum == want, "reduce over half the ranks: %llu, want %llu (%s)",
            (unsigned long long)sum, (unsigned long long)want, pp_last_error(c4));
      pp_destroy(c4);
    }
    MPI_Comm_free(&half);
  }
#ifdef PP_TEST_NCCL
  if (g_backend == PP_BACKEND_CUDA) check_adopt_nccl();
#endif
#endif
}

/* ---- ranks as threads of one process (CUDA: `test_dist cuda threads N`) ------------------ */

#include <pthread.h>

/* What `parprim --gpus N` does: one thread per GPU, an id shared in memory. Each thread
 * checks a few global results against closed forms and records what it saw; main checks. */
typedef struct rank_thread {
  pp_dist_id id;
  int r, p;
  pp_status create, reduce, scan, topk, hist, bad;
  uint64_t sum, scan_bad, topk_bad, hist_bad;
  char bad_msg[512];
} rank_thread;

static void *rank_main(void *arg) {
  rank_thread *a = arg;
  pp_context *ctx = NULL;
  a->create = pp_create_dist(&ctx, PP_BACKEND_CUDA, &a->id, a->p, a->r);
  if (a->create != PP_OK) {
    snprintf(a->bad_msg, sizeof a->bad_msg, "%s", pp_last_error(NULL));
    return NULL;
  }
  size_t off = 0, N = 0;
  for (int q = 0; q < a->p; q++) {
    size_t nq = 100000 + 7919 * (size_t)q * (size_t)(q % 2); /* uneven */
    if (q < a->r) off += nq;
    N += nq;
  }
  const size_t n = 100000 + 7919 * (size_t)a->r * (size_t)(a->r % 2);
  uint64_t *x = th_xmalloc(n * 8);
  uint32_t *ones = th_xmalloc(n * 4);
  for (size_t i = 0; i < n; i++) {
    x[i] = off + i; /* the global index */
    ones[i] = 1;
  }
  a->reduce = pp_reduce(ctx, PP_SUM, PP_U64, x, n, &a->sum);
  a->scan = pp_scan(ctx, PP_SUM, PP_U32, ones, ones, n, true);
  for (size_t i = 0; i < n; i++) a->scan_bad += ones[i] != (uint32_t)(off + i + 1);
  uint64_t tv[5], ti[5];
  a->topk = pp_topk(ctx, PP_U64, x, n, 5, true, tv, ti);
  for (int i = 0; i < 5; i++) a->topk_bad += tv[i] != N - 1 - (size_t)i || ti[i] != N - 1 - (size_t)i;
  uint64_t counts[10] = {0};
  a->hist = pp_histogram_even(ctx, PP_U64, x, n, 10, 0.0, (double)N, counts);
  for (int b = 0; b < 10; b++) {
    uint64_t want = 0;
    for (size_t i = 0; i < N; i++) want += (size_t)((double)i * 10 / (double)N) == (size_t)b;
    a->hist_bad += counts[b] != want;
  }
  float f = 0;
  a->bad = pp_reduce(ctx, PP_SUM, PP_F32, a->r == a->p - 1 ? NULL : (const float *)x, 4, &f);
  snprintf(a->bad_msg, sizeof a->bad_msg, "%s", pp_last_error(ctx));
  free(x);
  free(ones);
  pp_destroy(ctx);
  return NULL;
}

static int run_threads(int p) {
  th_state_get()->backend_name = "cuda threads";
  pp_dist_id id;
  pp_status st = pp_dist_id_create(PP_BACKEND_CUDA, &id);
  if (st == PP_ERR_NO_DEVICE || st == PP_ERR_UNSUPPORTED) {
    printf("SKIP: %s\n", pp_last_error(NULL));
    return TH_SKIP_CODE;
  }
  CHECK_STATUS(st, PP_OK, "pp_dist_id_create(CUDA): %s", pp_last_error(NULL));
  if (p < 1 || p > 64) p = 2;
  rank_thread *a = calloc((size_t)p, sizeof *a);
  pthread_t *tid = calloc((size_t)p, sizeof *tid);
  for (int r = 0; r < p; r++) {
    a[r].id = id;
    a[r].r = r;
    a[r].p = p;
    pthread_create(&tid[r], NULL, rank_main, &a[r]);
  }
  for (int r = 0; r < p; r++) pthread_join(tid[r], NULL);
  if (a[0].create == PP_ERR_NO_DEVICE) {
    printf("SKIP: %s\n", a[0].bad_msg);
    free(a);
    free(tid);
    return TH_SKIP_CODE;
  }
  size_t N = 0;
  for (int q = 0; q < p; q++) N += 100000 + 7919 * (size_t)q * (size_t)(q % 2);
  for (int r = 0; r < p; r++) {
    CHECK_STATUS(a[r].create, PP_OK, "thread rank %d: pp_create_dist: %s", r, a[r].bad_msg);
    if (a[r].create != PP_OK) continue;
    CHECK(a[r].reduce == PP_OK && a[r].sum == (uint64_t)N * (N - 1) / 2, "rank %d: sum %llu",
          r, (unsigned long long)a[r].sum);
    CHECK(a[r].scan == PP_OK && a[r].scan_bad == 0, "rank %d: %llu scan outputs wrong", r,
          (unsigned long long)a[r].scan_bad);
    CHECK(a[r].topk == PP_OK && a[r].topk_bad == 0, "rank %d: top-k wrong", r);
    CHECK(a[r].hist == PP_OK && a[r].hist_bad == 0, "rank %d: histogram wrong", r);
    CHECK_STATUS(a[r].bad, PP_ERR_INVALID_ARGUMENT, "rank %d: NULL input on the last rank", r);
    CHECK(strcmp(a[r].bad_msg, a[0].bad_msg) == 0 && th_names(a[r].bad_msg, "pp_reduce"),
          "rank %d: message \"%s\", rank 0 \"%s\"", r, a[r].bad_msg, a[0].bad_msg);
  }
  free(a);
  free(tid);
  return th_finish(NULL);
}

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : getenv("PARPRIM_TEST_BACKEND");
  if (!name || !*name) name = "cpu";
  g_backend = strcmp(name, "cuda") == 0 ? PP_BACKEND_CUDA : PP_BACKEND_CPU;
  th_state_get()->backend_name = name;
  if (g_backend == PP_BACKEND_CUDA && !pp_has_cuda_backend()) {
    printf("SKIP: no CUDA backend in this build\n");
    return TH_SKIP_CODE;
  }
  if (g_backend == PP_BACKEND_CUDA && argc > 3 && strcmp(argv[2], "threads") == 0)
    return run_threads(atoi(argv[3]));
  pp_context *ctx = NULL;
  pp_status st = pp_create_dist(&ctx, g_backend, NULL, 0, 0);
  if (st == PP_ERR_UNSUPPORTED) {
    /* a build without the engine: the constructors must say what is missing */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pp_last_error(NULL));
    CHECK(th_names(msg, "pp_create_dist") && (strstr(msg, "MPI") || strstr(msg, "NCCL")),
          "an engine-less build names what is missing: \"%s\"", msg);
    pp_dist_id id;
    CHECK_STATUS(pp_dist_id_create(g_backend, &id), PP_ERR_UNSUPPORTED, "pp_dist_id_create");
    CHECK(th_names(pp_last_error(NULL), "pp_dist_id_create"), "pp_dist_id_create's message: %s",
          pp_last_error(NULL));
    printf("distributed engine not built: %s\n", msg);
    return th_finish(NULL);
  }
  if (g_backend == PP_BACKEND_CUDA && st == PP_ERR_NO_DEVICE) {
    printf("SKIP: no CUDA device (%s)\n", pp_last_error(NULL));
    return TH_SKIP_CODE;
  }
  if (st != PP_OK) {
    printf("FAIL: pp_create_dist(%s): %s: %s\n0 passed, 1 failed\n", name, pp_status_string(st),
           pp_last_error(NULL));
    return 1;
  }
  g_rank = pp_rank(ctx);
  g_p = pp_nranks(ctx);
  if (g_p > 64) {
    printf("FAIL: this test handles up to 64 ranks\n");
    return 1;
  }
#ifdef PP_HAVE_MPI
  {
    int wr = -1, wp = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &wp);
    CHECK(wr == g_rank && wp == g_p, "id NULL takes MPI_COMM_WORLD: rank %d of %d, MPI %d of %d",
          g_rank, g_p, wr, wp);
  }
#endif
  pp_context *ref = NULL;
  st = pp_create(&ref, g_backend);
  if (st != PP_OK) {
    printf("FAIL: pp_create(%s): %s\n0 passed, 1 failed\n", name, pp_last_error(NULL));
    return 1;
  }
  printf("backend %s, rank %d of %d\n", name, g_rank, g_p);
  fflush(stdout);

  check_contexts(ctx);

  static const size_t sizes[] = {0, 1, 5, 1000, 70001};
  int c = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int layout = 0; layout < LAYOUTS; layout++) {
      for (size_t ti = 0; ti < sizeof all_types / sizeof *all_types; ti++) {
        pp_dtype t = all_types[ti];
        for (int kind = 0; kind < DATA_KINDS; kind++) {
          if (kind == DATA_NAN && !is_float(t)) continue;
          /* the largest size with every layout and every type, one kind each */
          if (sizes[si] > 1000 && kind != (int)(ti + (size_t)layout) % DATA_KINDS) continue;
          check_reduce_case(ctx, ref, t, kind, layout, sizes[si], c);
          check_scan_case(ctx, ref, t, kind, layout, sizes[si], c);
          check_histogram_case(ctx, ref, t, kind, layout, sizes[si], c);
          size_t k = sizes[si] == 0 ? 0 : 1 + sizes[si] * (size_t)(kind + 1) / 7;
          if (k > sizes[si]) k = sizes[si];
          check_topk_case(ctx, ref, t, kind, layout, sizes[si], k, (c & 2) != 0, c);
          c++;
        }
      }
      check_histogram_image(ctx, ref, layout, sizes[si] % 97, c);
    }
  }
  /* top-k at k = n (everything, in order) and k = 1 */
  for (int layout = 0; layout < LAYOUTS; layout++) {
    check_topk_case(ctx, ref, PP_F32, DATA_SPECIAL, layout, 300, 300, true, c++);
    check_topk_case(ctx, ref, PP_I64, DATA_SMALL, layout, 300, 1, false, c++);
  }
  /* hundreds of thousands of candidates */
  check_topk_case(ctx, ref, PP_F32, DATA_SPECIAL, 0, 400000, 360000, true, c++);
  check_topk_case(ctx, ref, PP_I64, DATA_SMALL, LAYOUTS - 1, 400000, 360000, false, c++);
  check_fault_loop(ctx);
  static const size_t body_counts[] = {0, 1, 7, 300};
  for (size_t bi = 0; bi < sizeof body_counts / sizeof *body_counts; bi++)
    for (int layout = 0; layout < LAYOUTS; layout++) {
      check_nbody_case(ctx, ref, layout, body_counts[bi], 0.01f, c++);
      check_nbody_case(ctx, ref, layout, body_counts[bi], 0.0f, c++);
    }

  check_failures(ctx);

  pp_destroy(ref);
  return th_finish(ctx);
}
