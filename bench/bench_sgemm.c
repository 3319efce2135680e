/*
 * bench_sgemm.c — `parprim bench sgemm`: pp_sgemm against cuBLAS (CUDA) or a naive triple
 * loop (CPU), square m = n = k, row-major, alpha = 1, beta = 0.
 *
 * Rate: TFLOP/s, counting 2*m*n*k flops (the row's bytes field holds flops / 1000, so the
 * harness's "per 1e9" rate column reads in TFLOP/s). Every size gets an NN row; the size
 * 4096 (on the CPU the largest size run) also gets NT, TN and TT rows, so a transposed
 * operand's cost shows beside the plain case.
 *
 * CUDA: the peer is cublasSgemm with CUBLAS_PEDANTIC_MATH (real FP32, no TF32) on the
 * harness's stream, over the same slots. Inputs and outputs rotate over slots like every
 * bench family (at 1024^3 the 4 MB operands would otherwise sit in L2 for both sides).
 * CPU: the peer is OpenBLAS's cblas_sgemm (bench/peer_cpu_blas.cpp) on the context's
 * thread count, timed like ours; a note gives both rates against the cores' FP32 peak.
 * Without OpenBLAS in the build, the textbook i-j-p triple loop, timed over 3 runs
 * without warm-up (one run takes seconds at 1024^3, so more runs would add minutes and no
 * information), up to n = 1024.
 *
 * Check: ||ours - peer|| / ||peer|| over the whole C (Frobenius) must be below 1e-5 (plain
 * FP32 lands near 1e-7; TF32 would show near 1e-4), and 64 sampled elements of both must
 * be within (k + 3) * eps * sum|a*b| of a double-precision dot product.
 */
#include "bench_impl.h"
#ifdef PP_HAVE_CUDA
#include "peer_sgemm.h"
#endif

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SG_CPU_PEER_RUNS 3
#define SG_SAMPLES 64
#define SG_REL_TOL 1e-5

typedef struct sg_case {
  size_t n;
  pp_trans ta, tb;
  bench_ws a, b, c, pc; /* c: ours, pc: the peer's */
} sg_case;

static const char *trans_name(pp_trans ta, pp_trans tb) {
  static const char *names[2][2] = {{"NN", "NT"}, {"TN", "TT"}};
  return names[ta == PP_TRANS][tb == PP_TRANS];
}

static pp_status call_ours(bench_env *env, void *arg, size_t slot) {
  sg_case *c = arg;
  pp_status s = pp_sgemm(env->ctx, PP_ROW_MAJOR, c->ta, c->tb, c->n, c->n, c->n, 1.0f,
                         ws_slot(&c->a, slot), c->n, ws_slot(&c->b, slot), c->n, 0.0f,
                         ws_slot(&c->c, slot), c->n);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED) pp_ok(env, s, "pp_sgemm");
  return s;
}

/* The textbook loop: one dot product per element of C, op() through indices. */
static void naive_sgemm(size_t n, pp_trans ta, pp_trans tb, const float *A, const float *B,
                        float *C) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      float s = 0.0f;
      for (size_t p = 0; p < n; p++)
        s += A[ta == PP_TRANS ? p * n + i : i * n + p] * B[tb == PP_TRANS ? j * n + p : p * n + j];
      C[i * n + j] = s;
    }
}

static pp_status call_cblas(bench_env *env, void *arg, size_t slot) {
  sg_case *c = arg;
  if (bench_cblas_sgemm(PP_ROW_MAJOR, c->ta, c->tb, c->n, c->n, c->n, 1.0f, ws_slot(&c->a, slot),
                        c->n, ws_slot(&c->b, slot), c->n, 0.0f, ws_slot(&c->pc, slot), c->n,
                        env->dev.multiprocessors) != 0) {
    bench_fail(env, "cblas_sgemm: sizes past its 32-bit integers");
    return PP_ERR_INVALID_ARGUMENT;
  }
  return PP_OK;
}

#ifdef PP_HAVE_CUDA
static pp_status call_cublas(bench_env *env, void *arg, size_t slot) {
  sg_case *c = arg;
  int rc = bench_cublas_sgemm(PP_ROW_MAJOR, c->ta, c->tb, c->n, c->n, c->n, 1.0f,
                              ws_slot(&c->a, slot), c->n, ws_slot(&c->b, slot), c->n, 0.0f,
                              ws_slot(&c->pc, slot), c->n, env->stream);
  if (rc != 0) {
    bench_fail(env, "%s", bench_cublas_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}
#endif

/* The CPU peer's median over a few runs on successive slots, ending on last_slot(). */
static bool time_naive(bench_env *env, sg_case *c, double *ms) {
  double v[SG_CPU_PEER_RUNS];
  size_t last = last_slot(env);
  for (int r = 0; r < SG_CPU_PEER_RUNS; r++) {
    size_t slot = last + 1 - SG_CPU_PEER_RUNS + (size_t)r;
    double t0 = cli_now_ms();
    naive_sgemm(c->n, c->ta, c->tb, ws_slot(&c->a, slot), ws_slot(&c->b, slot),
                ws_slot(&c->pc, slot));
    v[r] = cli_now_ms() - t0;
  }
  *ms = cli_median(v, SG_CPU_PEER_RUNS);
  return true;
}

/* Element (i, j) in double and its error bound, from host copies of the operands. */
static void sample_ref(const sg_case *c, const float *A, const float *B, size_t i, size_t j,
                       double *ref, double *bound) {
  size_t n = c->n;
  double r = 0.0, s = 0.0;
  for (size_t p = 0; p < n; p++) {
    double x = A[c->ta == PP_TRANS ? p * n + i : i * n + p];
    double y = B[c->tb == PP_TRANS ? j * n + p : p * n + j];
    r += x * y;
    s += fabs(x * y);
  }
  *ref = r;
  *bound = (double)(n + 3) * FLT_EPSILON * s + FLT_MIN;
}

static const char *sg_check(bench_env *env, sg_case *c, const bench_row *r) {
  size_t n = c->n, bytes = n * n * sizeof(float), slot = last_slot(env);
  const char *verdict = "-";
  float *A = NULL, *B = NULL, *ours = NULL, *peer = NULL;
  if (!(A = malloc(bytes)) || !(B = malloc(bytes)) || !(ours = malloc(bytes)) ||
      !(peer = malloc(bytes))) {
    bench_note(env, "check skipped: no host memory");
    goto done;
  }
  if (!pp_ok(env, pp_copy(env->ctx, A, ws_slot(&c->a, slot), bytes), "pp_copy (A)") ||
      !pp_ok(env, pp_copy(env->ctx, B, ws_slot(&c->b, slot), bytes), "pp_copy (B)") ||
      !pp_ok(env, pp_copy(env->ctx, ours, ws_slot(&c->c, slot), bytes), "pp_copy (C)") ||
      !pp_ok(env, pp_copy(env->ctx, peer, ws_slot(&c->pc, slot), bytes), "pp_copy (peer C)")) {
    verdict = "ERROR";
    goto done;
  }
  double diff = 0.0, norm = 0.0;
  for (size_t e = 0; e < n * n; e++) {
    double d = (double)ours[e] - (double)peer[e];
    diff += d * d;
    norm += (double)peer[e] * peer[e];
  }
  double rel = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
  if (!(rel <= SG_REL_TOL)) {
    bench_fail(env, "sgemm %s n=%zu: ||ours - peer|| / ||peer|| = %.3g (limit %.0e)", r->op, n,
               rel, SG_REL_TOL);
    verdict = "MISMATCH";
    goto done;
  }
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  for (int q = 0; q < SG_SAMPLES; q++) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    size_t i = (size_t)(h >> 33) % n, j = (size_t)(h >> 13) % n;
    double ref, bound;
    sample_ref(c, A, B, i, j, &ref, &bound);
    double eo = fabs(ours[i * n + j] - ref), ep = fabs(peer[i * n + j] - ref);
    if (!(eo <= bound) || !(ep <= bound)) {
      bench_fail(env, "sgemm %s n=%zu: C(%zu,%zu) ours %.9g peer %.9g reference %.9g (bound %.3g)",
                 r->op, n, i, j, (double)ours[i * n + j], (double)peer[i * n + j], ref, bound);
      verdict = "MISMATCH";
      goto done;
    }
  }
  verdict = "ok";
done:
  free(A);
  free(B);
  free(ours);
  free(peer);
  return verdict;
}

static case_result sg_run_case(bench_env *env, size_t n, pp_trans ta, pp_trans tb) {
  size_t bytes = n * n * sizeof(float);
  if (!fits(env, "sgemm", n, 4 * bytes)) return CASE_SKIPPED;
  sg_case c;
  memset(&c, 0, sizeof c);
  c.n = n;
  c.ta = ta;
  c.tb = tb;
  case_result res = CASE_FAILED;
  alloc_result ar = ws_alloc(env, &c.a, bytes, PP_F32, CLI_SEED + n);
  if (ar == ALLOC_OK) ar = ws_alloc(env, &c.b, bytes, PP_F32, CLI_SEED + 7 * n + 1);
  if (ar == ALLOC_OK) ar = ws_alloc_fill(env, &c.c, bytes, false, PP_F32, 0);
  if (ar == ALLOC_OK) ar = ws_alloc_fill(env, &c.pc, bytes, false, PP_F32, 0);
  if (ar != ALLOC_OK) {
    res = ar == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
    goto done;
  }

  double flops = 2.0 * (double)n * (double)n * (double)n;
  bench_row r = {.prim = "sgemm", .op = trans_name(ta, tb), .t = PP_F32, .n = n,
                 .bytes_model = "2*n^3 flops / 1000 (rate in TFLOP/s)", .bytes = flops / 1e3,
                 .peer_bytes = flops / 1e3, .unit = "TFLOP/s", .same_work = true, .check = "-"};
  pp_status s = bench_time(env, call_ours, &c, &r.ms);
  if (s == PP_ERR_UNSUPPORTED) {
    r.ours_missing = true;
  } else if (s != PP_OK) {
    goto done;
  }
#ifdef PP_HAVE_CUDA
  if (env->cuda) {
    r.peer = "cuBLAS";
    if (bench_time(env, call_cublas, &c, &r.peer_ms) != PP_OK) goto done;
  }
#endif
  if (!env->cuda && bench_cpu_blas_name()) {
    r.peer = "OpenBLAS";
    if (bench_time(env, call_cblas, &c, &r.peer_ms) != PP_OK) goto done;
    char how[160];
    double peak = bench_cpu_fp32_peak_gflops(env->dev.multiprocessors, how, sizeof how);
    if (peak > 0)
      bench_note(env, "  sgemm %s n=%zu: ours %.1f GFLOP/s, %s %.1f GFLOP/s; FP32 peak %.0f GFLOP/s"
                 " = %s", r.op, n, flops / r.ms / 1e6, bench_cpu_blas_name(),
                 flops / r.peer_ms / 1e6, peak, how);
  } else if (!env->cuda) {
    r.peer = "naive loop";
    if (n > 1024) {
      bench_note(env, "sgemm %s n=%zu: ours %.3f ms, %.3f TFLOP/s; no CPU peer above 1024 (the "
                 "naive loop would take minutes)", r.op, n, r.ms, flops / r.ms / 1e9);
      goto done_ok;
    }
    if (!time_naive(env, &c, &r.peer_ms)) goto done;
  }
  if (!r.ours_missing) r.check = sg_check(env, &c, &r);
  print_row(env, &r);
done_ok:
  res = CASE_RAN;
done:
  bench_ws *const ws[] = {&c.a, &c.b, &c.c, &c.pc};
  ws_free_list(env, ws, COUNT_OF(ws));
  return res;
}

int bench_run_sgemm(bench_env *env, const size_t *sizes, int nsizes) {
  size_t trans_n = 4096;
  if (!env->cuda && !bench_cpu_blas_name())
    bench_note(env, "sgemm: OpenBLAS is not in this build; the CPU peer is a naive loop");
  if (!env->cuda) { /* the CPU gets the transposed rows at its largest size */
    trans_n = 0;
    for (int i = 0; i < nsizes; i++)
      if (sizes[i] > trans_n && sizes[i] <= 1024) trans_n = sizes[i];
  }
  int failed = 0;
  for (int i = 0; i < nsizes; i++) {
    if (sg_run_case(env, sizes[i], PP_NO_TRANS, PP_NO_TRANS) == CASE_FAILED) failed = 1;
    if (sizes[i] != trans_n) continue;
    if (sg_run_case(env, sizes[i], PP_NO_TRANS, PP_TRANS) == CASE_FAILED) failed = 1;
    if (sg_run_case(env, sizes[i], PP_TRANS, PP_NO_TRANS) == CASE_FAILED) failed = 1;
    if (sg_run_case(env, sizes[i], PP_TRANS, PP_TRANS) == CASE_FAILED) failed = 1;
  }
#ifdef PP_HAVE_CUDA
  if (env->cuda) bench_cublas_release();
#endif
  return failed;
}
