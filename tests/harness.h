/*
 * harness.h — the small test harness shared by parprim's test programs (header only).
 *
 * A test program does:
 *     pp_context *ctx = th_init(argc, argv);   // backend from argv[1] / PARPRIM_TEST_BACKEND
 *     ... CHECK(cond, "fmt", ...) ...
 *     return th_finish(ctx);                   // prints "N passed, N failed"
 *
 * A CUDA run without a usable GPU exits 77 (ctest's SKIP_RETURN_CODE) after printing
 * "SKIP: no CUDA device" and never prints the pass/fail line, so a skip cannot be read
 * as a pass.
 */
#ifndef PARPRIM_TEST_HARNESS_H
#define PARPRIM_TEST_HARNESS_H

#include "parprim.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TH_SKIP_CODE 77
/* Enough failure lines to diagnose; a systematic bug would otherwise flood the log. */
#define TH_MAX_PRINTED 200

#if defined(__GNUC__)
#define TH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TH_PRINTF(f, a)
#endif

typedef struct th_state {
  long passed;
  long failed;
  const char *backend_name;
} th_state;

/* Function-local static: one instance per test program without an unused-variable
 * warning in programs that include the header but use little of it. */
static inline th_state *th_state_get(void) {
  static th_state s = {0, 0, "cpu"};
  return &s;
}

static inline int th_vcheck(int ok, const char *file, int line, const char *fmt, va_list ap) {
  th_state *st = th_state_get();
  if (ok) {
    st->passed++;
    return 1;
  }
  st->failed++;
  if (st->failed <= TH_MAX_PRINTED) {
    fprintf(stdout, "FAIL %s:%d [%s]: ", file, line, st->backend_name);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    if (st->failed == TH_MAX_PRINTED) fprintf(stdout, "(further failures are counted, not printed)\n");
    fflush(stdout);
  }
  return 0;
}

static inline int th_check(int ok, const char *file, int line, const char *fmt, ...) TH_PRINTF(4, 5);
static inline int th_check(int ok, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = th_vcheck(ok, file, line, fmt, ap);
  va_end(ap);
  return r;
}

/* CHECK(cond, fmt, ...): counts a pass or a failure; evaluates to 1 when cond held. */
#define CHECK(cond, ...) th_check((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

static inline int th_check_status(pp_status got, pp_status want, const char *file, int line,
                                  const char *fmt, ...) TH_PRINTF(5, 6);
static inline int th_check_status(pp_status got, pp_status want, const char *file, int line,
                                  const char *fmt, ...) {
  if (got == want) return th_check(1, file, line, "%s", "");
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return th_check(0, file, line, "%s: status %d (%s), want %d (%s)", what, (int)got,
                  pp_status_string(got), (int)want, pp_status_string(want));
}

/* CHECK_STATUS(got, want, fmt, ...): status equality with both names in the message. */
#define CHECK_STATUS(got, want, ...) th_check_status((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/* True when msg mentions fn as a whole identifier, so "pp_select" is not satisfied by a
 * message about "pp_select_flagged". */
static inline int th_names(const char *msg, const char *fn) {
  if (!msg || !fn || !*fn) return 0;
  size_t len = strlen(fn);
  for (const char *p = strstr(msg, fn); p; p = strstr(p + 1, fn)) {
    char before = p == msg ? ' ' : p[-1];
    char after = p[len];
    int id_before = before == '_' || (before >= 'a' && before <= 'z') ||
                    (before >= 'A' && before <= 'Z') || (before >= '0' && before <= '9');
    int id_after = after == '_' || (after >= 'a' && after <= 'z') ||
                   (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9');
    if (!id_before && !id_after) return 1;
  }
  return 0;
}

/* Leave a failure from pp_malloc on ctx, so that a later check that pp_last_error names
 * some other function proves the message came from that call and not an older one. */
static inline void th_poison_error(pp_context *ctx) {
  if (ctx) (void)pp_malloc(ctx, NULL, 16);
}

/* ---- deterministic data ------------------------------------------------------------- */

typedef struct th_rng {
  uint64_t s;
} th_rng;

/* PARPRIM_TEST_SEED overrides the seed, to vary data without editing a test. */
static inline th_rng th_rng_make(uint64_t stream) {
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  const char *env = getenv("PARPRIM_TEST_SEED");
  if (env && *env) seed = strtoull(env, NULL, 0);
  th_rng r = {seed ^ (stream * 0xD1B54A32D192ED03ull)};
  return r;
}

/* splitmix64 */
static inline uint64_t th_next(th_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n); n == 0 gives 0. The slight modulo bias does not matter for tests. */
static inline uint64_t th_below(th_rng *r, uint64_t n) { return n ? th_next(r) % n : 0; }

/* Uniform in [0, 1) with 53 random bits. */
static inline double th_unit(th_rng *r) { return (double)(th_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in [lo, hi). */
static inline double th_range(th_rng *r, double lo, double hi) {
  return lo + (hi - lo) * th_unit(r);
}

/* ---- memory ------------------------------------------------------------------------- */

/* Host allocation that ends the program on failure: a test cannot go on without it. */
static inline void *th_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stdout, "FATAL: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* Memory from pp_malloc ("device side" on CUDA); a failure counts and ends the program,
 * since every later check would fail for the same reason. */
static inline void *th_dev_alloc(pp_context *ctx, size_t bytes) {
  void *p = NULL;
  pp_status s = pp_malloc(ctx, &p, bytes);
  if (s != PP_OK || (bytes && !p)) {
    th_check(0, __FILE__, __LINE__, "pp_malloc(%zu) failed: %s (%s)", bytes, pp_status_string(s),
             pp_last_error(ctx));
    th_state *st = th_state_get();
    fprintf(stdout, "%ld passed, %ld failed\n", st->passed, st->failed);
    exit(1);
  }
  return p;
}

static inline void th_dev_free(pp_context *ctx, void *p) {
  pp_status s = pp_free(ctx, p);
  if (s != PP_OK)
    th_check(0, __FILE__, __LINE__, "pp_free failed: %s (%s)", pp_status_string(s),
             pp_last_error(ctx));
}

/* Copies with pp_copy; counts a failure (and only a failure) so the data checks that
 * follow are not blamed for a broken copy. */
static inline int th_copy(pp_context *ctx, void *dst, const void *src, size_t bytes) {
  pp_status s = pp_copy(ctx, dst, src, bytes);
  if (s == PP_OK) return 1;
  return th_check(0, __FILE__, __LINE__, "pp_copy(%zu bytes) failed: %s (%s)", bytes,
                  pp_status_string(s), pp_last_error(ctx));
}

/* TH_PTRS(a, b, c) passes a list of pointers as (array, count), so one call can give back
 * every buffer a case made: TH_FREE(host, want, got). */
#define TH_PTRS(...)                                                                           \
  (void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *)
static inline void th_free_all(void *const *ptrs, size_t n) {
  for (size_t i = 0; i < n; i++) free(ptrs[i]);
}
#define TH_FREE(...) th_free_all(TH_PTRS(__VA_ARGS__))

/* A pp_malloc buffer holding a copy of host data. */
static inline void *th_dev_from_host(pp_context *ctx, const void *host, size_t bytes) {
  void *d = th_dev_alloc(ctx, bytes);
  if (bytes) th_copy(ctx, d, host, bytes);
  return d;
}

/* ---- quick mode --------------------------------------------------------------------- */

/* PARPRIM_TEST_QUICK=1 (set by check-gpu.sh for the runs under compute-sanitizer, whose
 * racecheck and synccheck replay every shared-memory access at a hundred times the cost):
 * each program keeps every code path (every dtype, every kernel route, tiles and their
 * partial tails) but fewer repetitions of it and smaller largest inputs. */
static inline int th_quick(void) {
  static int quick = -1;
  if (quick < 0) {
    const char *e = getenv("PARPRIM_TEST_QUICK");
    quick = e && *e && *e != '0';
  }
  return quick;
}

/* PARPRIM_TEST_SAMPLE=K (check-gpu.sh sets it for racecheck and synccheck): one in K of
 * the generated cases that pass through th_sampled() runs, the others are left out and
 * counted; th_finish says how many. Deterministic (a call counter), so every rank of a
 * distributed test leaves out the same cases. */
static inline unsigned long *th_sampled_out(void) {
  static unsigned long out = 0;
  return &out;
}
static inline unsigned long th_sample_every(void) {
  static unsigned long every = 0;
  if (!every) {
    const char *e = getenv("PARPRIM_TEST_SAMPLE");
    long k = e && *e ? strtol(e, NULL, 10) : 1;
    every = k > 1 ? (unsigned long)k : 1;
  }
  return every;
}
static inline int th_sampled(void) {
  static unsigned long calls = 0;
  if (calls++ % th_sample_every() == 0) return 1;
  ++*th_sampled_out();
  return 0;
}

/* ---- start and end ------------------------------------------------------------------ */

static inline pp_context *th_init(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : getenv("PARPRIM_TEST_BACKEND");
  if (!name || !*name) name = "cpu";
  pp_backend b;
  if (strcmp(name, "cpu") == 0) {
    b = PP_BACKEND_CPU;
  } else if (strcmp(name, "cuda") == 0) {
    b = PP_BACKEND_CUDA;
  } else {
    fprintf(stderr, "usage: %s [cpu|cuda]   (default: $PARPRIM_TEST_BACKEND, else cpu)\n",
            argc > 0 ? argv[0] : "test");
    exit(2);
  }
  th_state_get()->backend_name = b == PP_BACKEND_CPU ? "cpu" : "cuda";
  pp_context *ctx = NULL;
  pp_status s = pp_create(&ctx, b);
  if (b == PP_BACKEND_CUDA && s == PP_ERR_NO_DEVICE) {
    printf("SKIP: no CUDA device\n");
    fprintf(stderr, "(%s)\n", pp_last_error(NULL));
    exit(TH_SKIP_CODE);
  }
  if (s != PP_OK || !ctx) {
    printf("FAIL: pp_create(%s) returned %s: %s\n", name, pp_status_string(s), pp_last_error(NULL));
    printf("0 passed, 1 failed\n");
    exit(1);
  }
  CHECK(pp_backend_of(ctx) == b, "pp_backend_of gives %d for a %s context", (int)pp_backend_of(ctx),
        name);
  printf("backend %s\n", name);
  fflush(stdout);
  return ctx;
}

/* Prints the final line and gives the exit status for main. */
static inline int th_finish(pp_context *ctx) {
  if (ctx) {
    pp_status s = pp_synchronize(ctx);
    CHECK(s == PP_OK, "final pp_synchronize: %s (%s)", pp_status_string(s), pp_last_error(ctx));
    pp_destroy(ctx);
  }
  th_state *st = th_state_get();
  if (*th_sampled_out())
    printf("sampled: %lu generated cases left out (PARPRIM_TEST_SAMPLE)\n", *th_sampled_out());
  printf("%ld passed, %ld failed\n", st->passed, st->failed);
  fflush(stdout);
  return st->failed ? 1 : 0;
}

/* A program whose steps each need only the context: main() is
 *     static const th_step steps[] = {test_a, test_b, ...};
 *     return th_run(argc, argv, steps, TH_COUNT(steps));
 * which runs them in order between th_init and th_finish. */
typedef void (*th_step)(pp_context *ctx);
#define TH_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* PARPRIM_TEST_STEPS=K[,K...] runs only those steps (1-based), e.g. to put one step of a
 * program under a compute-sanitizer tool that another step's kernels trip up; the steps
 * left out are named, so a partial run never reads as a whole one. */
static inline int th_step_wanted(size_t i) {
  const char *e = getenv("PARPRIM_TEST_STEPS");
  if (!e || !*e) return 1;
  for (const char *p = e; *p;) {
    char *end = NULL;
    unsigned long k = strtoul(p, &end, 10);
    if (end == p) break;
    if (k == i + 1) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

static inline int th_run(int argc, char **argv, const th_step *steps, size_t n_steps) {
  pp_context *ctx = th_init(argc, argv);
  for (size_t i = 0; i < n_steps; i++) {
    if (th_step_wanted(i)) steps[i](ctx);
    else printf("step %zu of %zu left out (PARPRIM_TEST_STEPS)\n", i + 1, n_steps);
  }
  return th_finish(ctx);
}

#endif /* PARPRIM_TEST_HARNESS_H */
