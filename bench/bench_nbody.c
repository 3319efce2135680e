/*
 * bench_nbody.c — `parprim bench nbody`: one force evaluation, pp_nbody_accel, against
 * the all-pairs kernel in the style of GPU Gems 3 ch. 31 (bench/peer_nbody.cu) on CUDA,
 * and against a serial all-pairs loop on the CPU (n <= 16384 unless --n asks).
 *
 * Rate: n^2 interactions per evaluation, in G interactions/s (the row's "bytes" are
 * interactions); a note after each row gives TFLOP/s at the customary 20 flops per
 * interaction. Ours reads the caller's structure of arrays and packs them itself (inside
 * the clock); the peer gets its native float4 array ready-made.
 *
 * Inputs: a uniform cube [-1, 1)^3 with masses 1/n and softening 0.01 (fixed seed). The
 * work is compute-bound (n^2 interactions on 16n bytes), so the inputs are not rotated
 * through slots as the memory-bound benchmarks' are: every run reads the same arrays.
 * Check: every body's acceleration against the peer's, |ours - peer| <= 1e-3 |peer| +
 * 1e-4 mean |peer| (both accumulate n terms in float).
 */
#include "bench_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PP_HAVE_CUDA
#include "peer_nbody.h"
#endif

#define NB_SOFTENING 0.01f
#define NB_CPU_PEER_MAX ((size_t)16384)
#define NB_FLOPS 20.0

/* The FP32 rate the cores reach in practice, beside the nominal peak the formula gives:
 * every thread runs FMA_CHAINS independent chains of full-width multiply-adds (more than
 * the two pipes x four cycles of latency a core needs in flight), nothing else. A virtual
 * machine's cores can run below the clock it reports, or share their units with another
 * tenant's; this says how far. 0 where there is no such loop (not x86 with GCC or clang). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <omp.h>
#if defined(__clang__)
#define FMA_CONTRACT
#else
#define FMA_CONTRACT optimize("fp-contract=fast")
#endif
#define FMA_CHAINS 12
#define FMA_ITERS 20000000L
typedef float fma_v16 __attribute__((vector_size(64)));
typedef float fma_v8 __attribute__((vector_size(32)));
#define FMA_LOOP(name, V, isa)                                                          \
  __attribute__((target(isa), FMA_CONTRACT, noinline)) static float name(long iters,   \
                                                                          float mul) {  \
    V a[FMA_CHAINS];                                                                    \
    const V zero = {0}, m = zero + mul, c = zero + 1e-7f;                              \
    for (int k = 0; k < FMA_CHAINS; k++) a[k] = zero + (1.0f + (float)k * 1e-3f);      \
    for (long i = 0; i < iters; i++)                                                    \
      for (int k = 0; k < FMA_CHAINS; k++) a[k] = a[k] * m + c;                         \
    float s = 0.0f;                                                                     \
    for (int k = 0; k < FMA_CHAINS; k++)                                                \
      for (int l = 0; l < (int)(sizeof(V) / sizeof(float)); l++) s += a[k][l];          \
    return s;                                                                           \
  }
FMA_LOOP(fma_loop16, fma_v16, "avx512f")
FMA_LOOP(fma_loop8, fma_v8, "avx2,fma")

/* The rate depends on the thread count alone, not on the case's size: it is timed on the
 * first call for a thread count and the figure kept for the run's later sizes. The caller
 * times one thread too: N threads that reach less than N times one thread's rate share
 * FMA units (a virtual machine's vCPUs may be hyperthreads of fewer physical cores, whatever
 * topology it reports), and the peak that counts is that of the cores they share. */
static double cpu_fma_gflops(int threads) {
  static int timed_threads[2] = {0, 0};
  static double timed_rate[2] = {0.0, 0.0};
  const int slot = threads == 1;
  if (threads == timed_threads[slot]) return timed_rate[slot];
  __builtin_cpu_init();
  int lanes = __builtin_cpu_supports("avx512f") && __builtin_cpu_is("intel") ? 16
              : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 8 : 0;
  if (!lanes || threads < 1) return 0.0;
  double best = 0.0;
  volatile float sink = 0.0f, mul_v = 0.9999999f;
  volatile long iters_v = FMA_ITERS; /* opaque: the compiler must not fold the loop */
  const long iters = iters_v;
  const float mul = mul_v;
  for (int round = 0; round < 3; round++) {
    float s = 0.0f;
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : s)
    s += lanes == 16 ? fma_loop16(iters, mul) : fma_loop8(iters, mul);
    double t = omp_get_wtime() - t0;
    sink += s;
    double rate = (double)threads * (double)iters * FMA_CHAINS * lanes * 2.0 / t / 1e9;
    if (rate > best) best = rate;
  }
  timed_threads[slot] = threads;
  timed_rate[slot] = best;
  return best;
}
#else
static double cpu_fma_gflops(int threads) {
  (void)threads;
  return 0.0;
}
#endif

typedef struct nb_case {
  size_t n;
  pp_bodies b;            /* x, y, z, mass in pp_malloc memory; no velocities */
  float *soa;             /* the block behind b */
  float *acc;             /* ours: ax, ay, az, n each */
  float *pos4, *acc4;     /* the peer's float4 arrays */
  bool peer_runs;
} nb_case;

static pp_status call_ours(bench_env *env, void *arg, size_t slot) {
  nb_case *c = arg;
  (void)slot;
  pp_status s = pp_nbody_accel(env->ctx, &c->b, NB_SOFTENING, c->acc, c->acc + c->n,
                               c->acc + 2 * c->n);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED) pp_ok(env, s, "pp_nbody_accel");
  return s;
}

#ifdef PP_HAVE_CUDA
static pp_status call_gems(bench_env *env, void *arg, size_t slot) {
  nb_case *c = arg;
  (void)slot;
  if (bench_peer_nbody_accel(c->pos4, c->acc4, c->n, NB_SOFTENING, env->stream) == 0)
    return PP_OK;
  bench_fail(env, "%s", bench_peer_nbody_error());
  return PP_ERR_DEVICE;
}
#endif

/* The CPU peer: the textbook double loop, one thread, float. */
static pp_status call_serial(bench_env *env, void *arg, size_t slot) {
  nb_case *c = arg;
  (void)env;
  (void)slot;
  const float eps2 = NB_SOFTENING * NB_SOFTENING;
  const float *p = c->pos4;
  for (size_t i = 0; i < c->n; i++) {
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (size_t j = 0; j < c->n; j++) {
      float dx = p[4 * j] - p[4 * i], dy = p[4 * j + 1] - p[4 * i + 1],
            dz = p[4 * j + 2] - p[4 * i + 2];
      float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + eps2);
      float s = p[4 * j + 3] * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    c->acc4[4 * i] = ax;
    c->acc4[4 * i + 1] = ay;
    c->acc4[4 * i + 2] = az;
    c->acc4[4 * i + 3] = 0.0f;
  }
  return PP_OK;
}

static void nb_teardown(bench_env *env, nb_case *c) {
  void *bufs[4] = {c->soa, c->acc, c->pos4, c->acc4};
  for (int i = 0; i < 4; i++)
    if (bufs[i]) pp_ok(env, pp_free(env->ctx, bufs[i]), "pp_free");
}

static bool nb_alloc(bench_env *env, float **p, size_t floats) {
  void *q = NULL;
  bool ok = pp_ok(env, pp_malloc(env->ctx, &q, floats * sizeof(float)), "pp_malloc");
  *p = q;
  return ok;
}

static case_result nb_setup(bench_env *env, nb_case *c) {
  const size_t n = c->n;
  if (n > SIZE_MAX / (16 * sizeof(float))) {
    bench_note(env, "nbody n=%zu skipped: too large", n);
    return CASE_SKIPPED;
  }
  if (!fits(env, "nbody", n, 14 * n * sizeof(float))) return CASE_SKIPPED;
  float *host = malloc(8 * n * sizeof(float));
  if (!host) {
    bench_fail(env, "out of host memory for %zu bodies", n);
    return CASE_FAILED;
  }
  float *soa = host, *aos = host + 4 * n;
  cli_fill_random(PP_F32, soa, 3 * n, CLI_SEED + 10, 0);
  for (size_t i = 0; i < n; i++) {
    soa[3 * n + i] = 1.0f / (float)n;
    for (int k = 0; k < 4; k++) aos[4 * i + (size_t)k] = soa[(size_t)k * n + i];
  }
  bool ok = nb_alloc(env, &c->soa, 4 * n) && nb_alloc(env, &c->acc, 3 * n) &&
            nb_alloc(env, &c->pos4, 4 * n) && nb_alloc(env, &c->acc4, 4 * n) &&
            pp_ok(env, pp_copy(env->ctx, c->soa, soa, 4 * n * sizeof(float)), "pp_copy") &&
            pp_ok(env, pp_copy(env->ctx, c->pos4, aos, 4 * n * sizeof(float)), "pp_copy");
  free(host);
  c->b.x = c->soa;
  c->b.y = c->soa + n;
  c->b.z = c->soa + 2 * n;
  c->b.mass = c->soa + 3 * n;
  c->b.n = n;
  return ok ? CASE_RAN : CASE_FAILED;
}

/* Ours against the peer's last result, body by body. */
static const char *nb_check(bench_env *env, nb_case *c) {
  const size_t n = c->n;
  float *ours = malloc(3 * n * sizeof(float)), *peer = malloc(4 * n * sizeof(float));
  const char *verdict = "MISMATCH";
  if (!ours || !peer) {
    bench_fail(env, "out of host memory for the check");
  } else if (pp_ok(env, pp_copy(env->ctx, ours, c->acc, 3 * n * sizeof(float)), "pp_copy") &&
             pp_ok(env, pp_copy(env->ctx, peer, c->acc4, 4 * n * sizeof(float)), "pp_copy")) {
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
      mean += sqrt((double)peer[4 * i] * peer[4 * i] + (double)peer[4 * i + 1] * peer[4 * i + 1] +
                   (double)peer[4 * i + 2] * peer[4 * i + 2]);
    mean /= (double)(n ? n : 1);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++) {
      double d2 = 0.0, p2 = 0.0;
      for (int k = 0; k < 3; k++) {
        double d = (double)ours[(size_t)k * n + i] - peer[4 * i + (size_t)k];
        d2 += d * d;
        p2 += (double)peer[4 * i + (size_t)k] * peer[4 * i + (size_t)k];
      }
      if (!(sqrt(d2) <= 1e-3 * sqrt(p2) + 1e-4 * mean)) bad = i;
    }
    if (bad < n) {
      fprintf(stderr, "parprim bench: nbody n=%zu body %zu: ours (%.7g %.7g %.7g) peer (%.7g %.7g %.7g)\n",
              n, bad, (double)ours[bad], (double)ours[n + bad], (double)ours[2 * n + bad],
              (double)peer[4 * bad], (double)peer[4 * bad + 1], (double)peer[4 * bad + 2]);
      env->failures++;
    } else {
      verdict = "ok";
    }
  }
  free(ours);
  free(peer);
  return verdict;
}

int bench_run_nbody(bench_env *env, const size_t *sizes, int nsizes) {
  for (int si = 0; si < nsizes; si++) {
    nb_case c;
    memset(&c, 0, sizeof c);
    c.n = sizes[si];
    c.peer_runs = env->cuda || c.n <= NB_CPU_PEER_MAX;
    bench_row r = {.prim = "nbody", .op = "accel", .t = PP_F32, .n = c.n,
                   .bytes_model = "n^2 interactions per force evaluation", .check = "-",
                   .unit = "Ginter/s", .same_work = true,
                   .peer = env->cuda ? "GPU Gems 3" : c.peer_runs ? "serial loop" : "none"};
    r.bytes = r.peer_bytes = (double)c.n * (double)c.n;
    case_result res = nb_setup(env, &c);
    bench_call peer = call_serial;
#ifdef PP_HAVE_CUDA
    if (env->cuda) peer = call_gems;
#endif
    if (res == CASE_RAN && c.peer_runs && bench_time(env, peer, &c, &r.peer_ms) != PP_OK)
      res = CASE_FAILED;
    if (res == CASE_RAN) {
      pp_status s = bench_time(env, call_ours, &c, &r.ms);
      if (s == PP_ERR_UNSUPPORTED) {
        r.ours_missing = true;
        r.check = "unsupported";
      } else if (s != PP_OK) {
        res = CASE_FAILED;
      } else if (c.peer_runs) {
        r.check = nb_check(env, &c);
      }
    }
    if (res == CASE_RAN) {
      print_row(env, &r);
      char nb[32];
      if (!r.ours_missing)
        bench_note(env, "nbody n=%s: %.3g TFLOP/s ours, %.3g TFLOP/s %s (%.0f flops per interaction)",
                   size_text(c.n, nb, sizeof nb), r.bytes * NB_FLOPS / (r.ms * 1e9),
                   r.peer_ms > 0 ? r.peer_bytes * NB_FLOPS / (r.peer_ms * 1e9) : 0.0, r.peer,
                   NB_FLOPS);
      if (!r.ours_missing && !env->cuda) { /* the CPU's bound: its FP32 peak */
        char how[160];
        double peak = bench_cpu_fp32_peak_gflops(env->dev.multiprocessors, how, sizeof how);
        const double ours = r.bytes * NB_FLOPS / (r.ms * 1e6);
        if (peak > 0)
          bench_note(env, "nbody n=%s: ours %.1f GFLOP/s = %.1f%% of the FP32 peak %.0f GFLOP/s = %s",
                     size_text(c.n, nb, sizeof nb), ours, 100.0 * ours / peak, peak, how);
        const double fma = cpu_fma_gflops(env->dev.multiprocessors);
        if (fma > 0)
          bench_note(env, "nbody n=%s: a loop of nothing but full-width FMAs on the same %d threads "
                     "reaches %.1f GFLOP/s (%.1f%% of that peak); ours is %.1f%% of it",
                     size_text(c.n, nb, sizeof nb), env->dev.multiprocessors, fma,
                     peak > 0 ? 100.0 * fma / peak : 0.0, 100.0 * ours / fma);
        const double one = env->dev.multiprocessors > 1 ? cpu_fma_gflops(1) : 0.0;
        if (fma > 0 && one > 0)
          bench_note(env, "nbody n=%s: one thread alone reaches %.1f GFLOP/s in that loop, so the %d "
                     "threads together give %.1f threads' worth of FMA units",
                     size_text(c.n, nb, sizeof nb), one, env->dev.multiprocessors, fma / one);
      }
      if (!c.peer_runs)
        bench_note(env, "nbody n=%zu: the serial peer runs up to n = %zu only", c.n,
                   NB_CPU_PEER_MAX);
    }
    nb_teardown(env, &c);
  }
  return env->failures ? 1 : 0;
}
