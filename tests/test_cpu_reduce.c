/*
 * test_cpu_reduce.c — the CPU backend's streamed MIN/MAX reduce (src/cpu/reduce.c) where
 * its float fold decides things after the pass: which zero a zero result is (-0.0 below
 * +0.0, whichever lane or thread saw it), and whether a result equal to the identity
 * (+inf for MIN, -inf for MAX) is a number or the NaN of an input without numbers. Each
 * case places the one element that decides (a -0.0 among +0.0s, a number among NaNs, an
 * extreme among ordinary values) at the start, inside the vector body, at a stream's or
 * a thread's border, in the scalar tail and at the end, at sizes around the one-thread
 * limit (65536) and the fold's steps, from 64-byte aligned and one-element-off inputs,
 * with 1 to 3 threads, and compares the result's bits with a serial reference written
 * here. i64 and u64 take the same placements (with AVX2 the three 8-byte types share one
 * vector pass, and u64 compares with its sign bits flipped).
 *
 * Usage: test_cpu_reduce [cpu|cuda]   (the CUDA backend is covered by test_reduce; this
 * program skips it). PARPRIM_TEST_QUICK=1 runs one and two threads, not three.
 */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <omp.h>

static th_rng rng;
static uint64_t next_u64(void) { return th_next(&rng); }

/* Fillings: every element `base` but the one at `at`, which is `one`; or random values. */
typedef enum fill {
  F_RANDOM,   /* numbers of both signs, some zeros of both signs, some NaN (floats) */
  F_ONE,      /* base everywhere, one at `at` */
  F_COUNT
} fill;

/* ---- floats ---------------------------------------------------------------------------- */

/* MIN/MAX as API.md states them: NaN ignored, -0.0 below +0.0, NaN when no number,
 * +inf / -inf when n == 0. */
#define REF_FLOAT(NAME, T, INF)                                                             \
  static T ref_min_##NAME(const T *x, size_t n) {                                           \
    T r = INF;                                                                              \
    int any = 0;                                                                            \
    for (size_t i = 0; i < n; i++) {                                                        \
      if (isnan(x[i])) continue;                                                            \
      if (x[i] < r || (x[i] == r && signbit(x[i]))) r = x[i];                               \
      any = 1;                                                                              \
    }                                                                                       \
    return n > 0 && !any ? (T)NAN : r;                                                      \
  }                                                                                         \
  static T ref_max_##NAME(const T *x, size_t n) {                                           \
    T r = -INF;                                                                             \
    int any = 0;                                                                            \
    for (size_t i = 0; i < n; i++) {                                                        \
      if (isnan(x[i])) continue;                                                            \
      if (x[i] > r || (x[i] == r && !signbit(x[i]))) r = x[i];                              \
      any = 1;                                                                              \
    }                                                                                       \
    return n > 0 && !any ? (T)NAN : r;                                                      \
  }                                                                                         \
  static int same_##NAME(T a, T b) {                                                        \
    return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0;                             \
  }                                                                                         \
  static void fill_##NAME(T *x, size_t n, fill f, T base, T one, size_t at) {               \
    for (size_t i = 0; i < n; i++) {                                                        \
      if (f == F_ONE) {                                                                     \
        x[i] = i == at ? one : base;                                                        \
        continue;                                                                           \
      }                                                                                     \
      const uint64_t r = next_u64();                                                        \
      x[i] = r % 16 == 0   ? (T)NAN                                                         \
             : r % 16 == 1 ? (T)0.0                                                         \
             : r % 16 == 2 ? (T)-0.0                                                        \
                           : (T)((double)(int64_t)(r >> 20) * 0x1p-30);                     \
    }                                                                                       \
  }                                                                                         \
  static void check_##NAME(pp_context *ctx, T *buf, size_t n, size_t off, fill f, T base,   \
                           T one, size_t at, int threads) {                                 \
    T *x = buf + off;                                                                       \
    fill_##NAME(x, n, f, base, one, at);                                                    \
    for (int k = 0; k < 2; k++) {                                                           \
      const pp_op op = k ? PP_MAX : PP_MIN;                                                 \
      T got;                                                                                \
      memset(&got, 0x5a, sizeof got);                                                       \
      CHECK_STATUS(pp_reduce(ctx, op, PP_##NAME##_TYPE, x, n, &got), PP_OK, "pp_reduce");   \
      const T want = k ? ref_max_##NAME(x, n) : ref_min_##NAME(x, n);                       \
      CHECK(same_##NAME(got, want),                                                         \
            #NAME " %s n=%zu off=%zu fill=%d base=%g one=%g at=%zu threads=%d: got %g "     \
                  "(sign %d) want %g (sign %d)",                                            \
            k ? "max" : "min", n, off, (int)f, (double)base, (double)one, at, threads,      \
            (double)got, signbit(got) != 0, (double)want, signbit(want) != 0);              \
    }                                                                                       \
  }

#define PP_f32_TYPE PP_F32
#define PP_f64_TYPE PP_F64
REF_FLOAT(f32, float, INFINITY)
REF_FLOAT(f64, double, INFINITY)

/* The deciding element against each background, at position at. */
#define FLOAT_CASES(NAME, T, TMAX, TDENORM)                                                 \
  static void cases_##NAME(pp_context *ctx, T *buf, size_t n, size_t off, size_t at,       \
                           int threads) {                                                   \
    const T nan = (T)NAN, inf = (T)INFINITY;                                                \
    const T pair[][2] = {                                                                   \
        {0.0, -0.0},    {-0.0, 0.0},     {nan, 1.5},      {nan, -2.5},      {nan, inf},     \
        {nan, -inf},    {nan, 0.0},      {nan, -0.0},     {nan, nan},       {inf, nan},     \
        {-inf, nan},    {inf, -inf},     {-inf, inf},     {TMAX, -TMAX},    {-TMAX, TMAX},  \
        {1.0, TDENORM}, {1.0, -TDENORM}, {TDENORM, -0.0}, {-TDENORM, 0.0},  {1.0, 1.0},     \
    };                                                                                      \
    for (size_t p = 0; p < sizeof pair / sizeof pair[0]; p++)                               \
      check_##NAME(ctx, buf, n, off, F_ONE, pair[p][0], pair[p][1], at, threads);           \
    if (at == 0) check_##NAME(ctx, buf, n, off, F_RANDOM, 0, 0, 0, threads);                \
  }
FLOAT_CASES(f32, float, FLT_MAX, 0x1p-149f)
FLOAT_CASES(f64, double, DBL_MAX, 0x1p-1074)

/* ---- 8-byte integers ------------------------------------------------------------------- */

#define INT_CASES(NAME, T, PPT, TMIN, TMAX)                                                 \
  static void cases_##NAME(pp_context *ctx, T *buf, size_t n, size_t off, size_t at,       \
                           int threads) {                                                   \
    /* the last two straddle the sign bit, which the u64 fold flips to compare signed */    \
    const T pair[][2] = {{0, TMIN},        {0, TMAX},        {TMAX, TMIN},                 \
                         {TMIN, TMAX},     {5, 5},           {TMAX / 2, TMAX / 2 + 1},     \
                         {TMAX / 2 + 1, TMAX / 2}};                                        \
    T *x = buf + off;                                                                       \
    for (size_t p = 0; p <= sizeof pair / sizeof pair[0] - (at != 0); p++) {                \
      const int random = p == sizeof pair / sizeof pair[0]; /* once, with at == 0 */        \
      for (size_t i = 0; i < n; i++)                                                        \
        x[i] = random ? (T)next_u64() : i == at ? pair[p][1] : pair[p][0];                  \
      T mn = TMAX, mx = TMIN;                                                               \
      for (size_t i = 0; i < n; i++) {                                                      \
        mn = x[i] < mn ? x[i] : mn;                                                         \
        mx = x[i] > mx ? x[i] : mx;                                                         \
      }                                                                                     \
      T got_min = 1, got_max = 1;                                                           \
      CHECK_STATUS(pp_reduce(ctx, PP_MIN, PPT, x, n, &got_min), PP_OK, "pp_reduce");        \
      CHECK_STATUS(pp_reduce(ctx, PP_MAX, PPT, x, n, &got_max), PP_OK, "pp_reduce");        \
      CHECK(got_min == mn && got_max == mx,                                                 \
            #NAME " n=%zu off=%zu case=%zu at=%zu threads=%d: min %s, max %s", n, off, p,   \
            at, threads, got_min == mn ? "ok" : "wrong", got_max == mx ? "ok" : "wrong");   \
    }                                                                                       \
  }
INT_CASES(i64, int64_t, PP_I64, INT64_MIN, INT64_MAX)
INT_CASES(u64, uint64_t, PP_U64, 0, UINT64_MAX)

/* ---- driver ---------------------------------------------------------------------------- */

/* Where the deciding element goes in x[0, n) split among `threads` parts: the ends, each
 * part's first and last element, the middle of a part (inside the vector body) and the
 * last few (the scalar tail of the last part). */
static size_t placements(size_t n, int threads, size_t *at) {
  size_t k = 0;
  if (n == 0) return 0;
  at[k++] = 0;
  at[k++] = n - 1;
  at[k++] = n / 2;
  at[k++] = n > 3 ? n - 3 : 0;
  const size_t parts = n >= 65536 ? (size_t)threads : 1;
  for (size_t p = 1; p < parts; p++) {
    const size_t b = (n / parts) * p + (p < n % parts ? p : n % parts);
    at[k++] = b - 1;
    at[k++] = b;
    at[k++] = b + (n / parts) / 4; /* a stream's border inside the part */
  }
  return k;
}

static void run_cases(pp_context *ctx) {
  /* around the fold's steps (32 f64, 64 f32 elements a step of four streams), the
   * one-thread limit, and a size whose parts end in a tail */
  static const size_t sizes[] = {0,     1,     2,     7,     31,    32,     33,     63,
                                 64,    65,    127,   128,   129,   1000,   65535,  65536,
                                 65537, 100003};
  rng = th_rng_make(1);
  const int max_threads = th_quick() ? 2 : 3;
  size_t most = 0;
  for (size_t i = 0; i < TH_COUNT(sizes); i++) most = sizes[i] > most ? sizes[i] : most;
  /* the aligned case starts at the first 64-byte boundary inside buf, the other one
   * element past it */
  double *buf = th_xmalloc((most + 8) * sizeof(double));
  double *base64 = (double *)(void *)((((uintptr_t)buf) + 63) & ~(uintptr_t)63);
  size_t at[64];
  for (int threads = 1; threads <= max_threads; threads++) {
    omp_set_num_threads(threads);
    for (size_t s = 0; s < TH_COUNT(sizes); s++) {
      const size_t n = sizes[s], k = placements(n, threads, at);
      for (size_t off = 0; off < 2; off++) {
        for (size_t j = 0; j < (k ? k : 1); j++) {
          if (n >= 65536 && (j & 1) != off) continue; /* large: each placement once */
          const size_t a = k ? at[j] : 0;
          cases_f64(ctx, base64, n, off, a, threads);
          cases_f32(ctx, (float *)(void *)base64, n, off, a, threads);
          cases_i64(ctx, (int64_t *)(void *)base64, n, off, a, threads);
          cases_u64(ctx, (uint64_t *)(void *)base64, n, off, a, threads);
        }
      }
    }
  }
  free(buf);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  if (pp_backend_of(ctx) == PP_BACKEND_CPU) {
    run_cases(ctx);
    return th_finish(ctx);
  }
  printf("SKIP: CPU backend only\n");
  pp_destroy(ctx);
  return TH_SKIP_CODE;
}
