/*
 * demo.c — `parprim demo`: runs every implemented primitive on generated data on the
 * chosen backend and checks each result against the CPU backend.
 *
 * The CPU backend is the reference because it is the simplest correct implementation
 * we ship; on a machine without a GPU both sides run on it (two contexts), which still
 * exercises the whole API path. Adding a primitive: write its entry function and add it
 * to DEMO_ENTRIES (demo_impl.h).
 *
 * Array results are written to the backend's own memory (pp_malloc) and copied to the
 * host for the check after the timed calls, so the time is the primitive's, not the
 * copy's; scalar results (reduce) go straight to host memory.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "demo_impl.h"
#include "gpus.h"

#include "common.h"
#include "parprim.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_DEFAULT_N ((size_t)1 << 24)
#define DEMO_EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE */

/* ==================================================================================== */
/* Inputs, timing, rows                                                                 */
/* ==================================================================================== */

void demo_error(demo_env *env, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cli_verror(&env->errors, "demo", fmt, ap);
  va_end(ap);
}

static double input_sum_abs(pp_dtype t, const void *p, size_t n) {
  double s = 0.0;
  for (size_t i = 0; t == PP_F32 && i < n; i++)
    s += fabs((double)((const float *)p)[i]);
  for (size_t i = 0; t == PP_F64 && i < n; i++)
    s += fabs(((const double *)p)[i]);
  return s;
}

demo_input *demo_get_input(demo_env *env, pp_dtype t) {
  demo_input *in = &env->inputs[t];
  if (in->ready)
    return in;
  size_t bytes = env->n * pp_dtype_size(t);
  in->host = malloc(bytes);
  if (!in->host) {
    demo_error(env, "out of host memory for %zu bytes of %s", bytes, pp_dtype_string(t));
    return NULL;
  }
  cli_fill_random(t, in->host, env->n, CLI_SEED + (uint64_t)t, 0);
  in->sum_abs = input_sum_abs(t, in->host, env->n);
  pp_status s = pp_malloc(env->run, &in->dev, bytes);
  if (s == PP_OK)
    s = pp_copy(env->run, in->dev, in->host, bytes);
  if (s != PP_OK) {
    demo_error(env, "staging %s input: %s: %s", pp_dtype_string(t), pp_status_string(s),
               pp_last_error(env->run));
    if (in->dev)
      (void)pp_free(env->run, in->dev); /* already failing; its status adds nothing */
    free(in->host);
    memset(in, 0, sizeof *in);
    return NULL;
  }
  in->ready = true;
  return in;
}

static void demo_free_inputs(demo_env *env) {
  for (int t = 0; t < N_DTYPES; t++) {
    demo_input *in = &env->inputs[t];
    if (in->dev && pp_free(env->run, in->dev) != PP_OK)
      demo_error(env, "pp_free: %s", pp_last_error(env->run));
    free(in->host);
    memset(in, 0, sizeof *in);
  }
}

/* Wall clock around each call and a pp_synchronize, so each is timed finished. */
static pp_status demo_time(demo_env *env, const demo_case *c, const void *in, void *args,
                           double *ms) {
  double v[DEMO_REPS];
  for (int r = 0; r < DEMO_REPS; r++) {
    pp_status s = PP_OK;
    if (c->prep) {
      s = c->prep(env->run, in, args);
      if (s == PP_OK)
        s = pp_synchronize(env->run);
      if (s != PP_OK)
        return s;
    }
    double t0 = cli_now_ms();
    s = c->fn(env->run, in, args);
    if (s == PP_OK)
      s = pp_synchronize(env->run);
    if (s != PP_OK)
      return s;
    v[r] = cli_now_ms() - t0;
  }
  *ms = cli_median(v, DEMO_REPS);
  return PP_OK;
}

/* One side's result: where it is and how large, so that it can be fetched whole when the
 * case has no fetch of its own (out NULL: nothing to fetch). */
typedef struct demo_result {
  demo_buf *out;
  size_t bytes;
} demo_result;

static pp_status demo_fetch(pp_context *ctx, const demo_case *c, const void *in, void *args,
                            demo_result res) {
  if (c->fetch)
    return c->fetch(ctx, in, args);
  return res.out ? buf_fetch(ctx, res.out, res.bytes) : PP_OK;
}

/* prep, the call, fetch: one untimed run (the reference's). */
static pp_status demo_once(pp_context *ctx, const demo_case *c, const void *in, void *args,
                           demo_result res) {
  pp_status s = c->prep ? c->prep(ctx, in, args) : PP_OK;
  if (s == PP_OK)
    s = c->fn(ctx, in, args);
  if (s == PP_OK)
    s = demo_fetch(ctx, c, in, args, res);
  return s;
}

/* The primitive column fits the longest row name ("topk rows 16 smallest"). */
#define DEMO_PRIM_WIDTH 22

static void demo_header(void) {
  printf("%-*s %-5s %10s %-7s %10s %16s  %s\n", DEMO_PRIM_WIDTH, "primitive", "dtype", "n",
         "backend", "time ms", "throughput", "check");
}

/* ms < 0: no time to show. */
void demo_row(demo_env *env, const demo_case *c, double ms, const char *check) {
  char thr[32] = "-", tm[32] = "-";
  if (ms >= 0) {
    snprintf(tm, sizeof tm, "%.3f", ms);
    double rate = ms > 0 ? c->amount / (ms * 1e6) : 0.0;
    /* two decimals from 1 up, else three significant digits (CPU sorts: 0.0x Gkeys/s) */
    snprintf(thr, sizeof thr, rate >= 1.0 ? "%.2f %s" : "%.3g %s", rate, c->unit);
  }
  printf("%-*s %-5s %10zu %-7s %10s %16s  %s\n", DEMO_PRIM_WIDTH, c->prim, pp_dtype_string(c->t), env->n,
         pp_backend_string(pp_backend_of(env->run)), tm, thr, check);
  fflush(stdout);
}

/* Runs the case on the backend under test (timed) and on the reference, then lets
 * c->same judge; prints the row and counts the outcome. got/want are each side's args. */
static void measure(demo_env *env, const demo_case *c, void *got, demo_result got_res,
                    void *want, demo_result want_res) {
  const char *name = pp_dtype_string(c->t);
  demo_input *in = demo_get_input(env, c->t);
  double ms = -1;
  if (!in) {
    demo_row(env, c, -1, "ERROR");
    return;
  }
  pp_status s = demo_time(env, c, in->dev, got, &ms);
  if (s == PP_ERR_UNSUPPORTED) {
    env->unimplemented++;
    demo_row(env, c, -1, "not implemented");
    return;
  }
  if (s == PP_OK)
    s = demo_fetch(env->run, c, in->dev, got, got_res);
  if (s != PP_OK) {
    demo_error(env, "%s %s: %s: %s", c->prim, name, pp_status_string(s), pp_last_error(env->run));
    demo_row(env, c, -1, "ERROR");
    return;
  }
  s = demo_once(env->ref, c, in->host, want, want_res);
  if (s != PP_OK) {
    if (s != PP_ERR_UNSUPPORTED)
      demo_error(env, "%s %s on the cpu reference: %s: %s", c->prim, name, pp_status_string(s),
                 pp_last_error(env->ref));
    demo_row(env, c, ms, s == PP_ERR_UNSUPPORTED ? "no reference" : "ERROR");
    return;
  }
  bool ok = c->same(env, c->t, got, want);
  if (ok)
    env->ok++;
  else
    env->mismatches++;
  demo_row(env, c, ms, ok ? "OK" : "MISMATCH");
}

void demo_measure(demo_env *env, const demo_case *c, void *got, void *want) {
  const demo_result none = {NULL, 0};
  measure(env, c, got, none, want, none);
}

double as_double(pp_dtype t, const void *p) {
  if (t == PP_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  double d;
  memcpy(&d, p, 8);
  return d;
}

/* ==================================================================================== */
/* Array results: buffers on each side                                                   */
/* ==================================================================================== */

bool buf_alloc(demo_env *env, pp_context *ctx, demo_buf *b, size_t bytes) {
  pp_status s = pp_malloc(ctx, &b->dev, bytes ? bytes : 1);
  if (s != PP_OK) {
    demo_error(env, "pp_malloc of %zu bytes: %s: %s", bytes, pp_status_string(s),
               pp_last_error(ctx));
    return false;
  }
  b->host = pp_backend_of(ctx) == PP_BACKEND_CPU ? b->dev : malloc(bytes ? bytes : 1);
  if (!b->host)
    demo_error(env, "out of host memory for %zu bytes", bytes);
  return b->host != NULL;
}

pp_status buf_fetch(pp_context *ctx, demo_buf *b, size_t bytes) {
  return b->host == b->dev || bytes == 0 ? PP_OK : pp_copy(ctx, b->host, b->dev, bytes);
}

void buf_free(demo_env *env, pp_context *ctx, demo_buf *b) {
  if (b->host != b->dev)
    free(b->host);
  if (b->dev && pp_free(ctx, b->dev) != PP_OK)
    demo_error(env, "pp_free: %s", pp_last_error(ctx));
  b->dev = b->host = NULL;
}

/* A host array the backend under test reads from its own memory; NULL after an error. */
void *demo_stage(demo_env *env, const void *host, size_t bytes) {
  void *dev = NULL;
  pp_status s = pp_malloc(env->run, &dev, bytes ? bytes : 1);
  if (s == PP_OK)
    s = pp_copy(env->run, dev, host, bytes);
  if (s != PP_OK) {
    demo_error(env, "staging %zu bytes: %s: %s", bytes, pp_status_string(s),
               pp_last_error(env->run));
    if (dev)
      (void)pp_free(env->run, dev); /* already failing; its status adds nothing */
    return NULL;
  }
  return dev;
}

void demo_unstage(demo_env *env, void *dev) {
  if (dev && pp_free(env->run, dev) != PP_OK)
    demo_error(env, "pp_free: %s", pp_last_error(env->run));
}

/* Allocates out on both sides (got on the backend under test, want on the reference),
 * runs the case and frees them. A setup failure is an error row. */
void demo_measure_bufs(demo_env *env, const demo_case *c, void *got, demo_buf *got_buf,
                       void *want, demo_buf *want_buf, size_t bytes) {
  const demo_result got_res = {got_buf, bytes}, want_res = {want_buf, bytes};
  if (buf_alloc(env, env->run, got_buf, bytes) && buf_alloc(env, env->ref, want_buf, bytes))
    measure(env, c, got, got_res, want, want_res);
  else
    demo_row(env, c, -1, "ERROR");
  buf_free(env, env->run, got_buf);
  buf_free(env, env->ref, want_buf);
}

void report_element(const char *what, pp_dtype t, size_t i, const void *got,
                    const void *want) {
  char a[64], b[64];
  size_t es = pp_dtype_size(t);
  cli_format_value(t, (const char *)got + i * es, a, sizeof a);
  cli_format_value(t, (const char *)want + i * es, b, sizeof b);
  fprintf(stderr, "parprim demo: %s %s: index %zu: got %s, cpu reference %s\n", what,
          pp_dtype_string(t), i, a, b);
}

/* First i where n elements of size es differ, or n. */
size_t first_diff(const void *a, const void *b, size_t n, size_t es) {
  if (n == 0 || memcmp(a, b, n * es) == 0)
    return n;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0)
      return i;
  return n;
}

/* ==================================================================================== */
/* The table of primitives                                                              */
/* ==================================================================================== */

#define DEMO_ENTRY(name) pp_demo_##name,
static void (*const demo_entries[])(demo_env *env) = {DEMO_ENTRIES(DEMO_ENTRY)};
#undef DEMO_ENTRY

/* ==================================================================================== */
/* Command line                                                                         */
/* ==================================================================================== */

void pp_cli_demo_usage(FILE *f) {
  fputs("usage: parprim demo [--backend cpu|cuda|auto] [--n N]\n"
        "\n"
        "Runs every implemented primitive on random data (fixed seed) on the backend\n"
        "(default auto: CUDA when a GPU is usable) and checks each result against the CPU\n"
        "backend. Time is wall clock per call, median of 5; array results go to the\n"
        "backend's memory and are copied back for the check outside the clock, scalar\n"
        "ones to host memory. A primitive the backend does not implement yet is counted\n"
        "as \"not implemented\" and is no failure.\n"
        "Exits 1 when a check mismatches or a call fails, 77 (skip) when the backend\n"
        "asked for has no device here, else 0.\n"
        "\n"
        "  --backend B  cpu, cuda or auto (default auto)\n"
        "  --n N        elements per input (default 2^24); 1048576, 2^20, 1<<20, 1M, ...\n"
        "  --gpus N     the distributed primitives on N GPUs, checked against one GPU\n"
        "  -h, --help   this text\n",
        f);
}

/* Returns -1 when parsed, else the exit code (0 after help). */
static int demo_parse(int argc, char **argv, pp_backend *backend, size_t *n) {
  const cli_option options[] = {
      CLI_BACKEND("--backend", backend),
      CLI_SIZE("--n", n, CLI_OPTIONAL, 1, 0, "bad size for --n: '%s' (at least 1)"),
  };
  cli_scan sc = CLI_SCAN("demo", pp_cli_demo_usage, options, argc, argv, NULL, NULL);
  int got = cli_scan_next(&sc);
  if (got == CLI_SCAN_OTHER) return cli_scan_error(&sc, "unknown argument '%s'", sc.arg);
  return got == CLI_SCAN_EXIT ? sc.exit : -1;
}

/* Why AUTO did not pick CUDA, for the line that says both sides run on the CPU. */
static void explain_cpu_only(pp_backend asked) {
  if (asked == PP_BACKEND_CPU) {
    printf("note: --backend cpu: the backend under test is the CPU backend itself\n");
    return;
  }
  if (!pp_has_cuda_backend()) {
    printf("note: this build has no CUDA backend, so both sides run on the CPU backend\n");
    return;
  }
  pp_context *probe = NULL;
  pp_status s = pp_create(&probe, PP_BACKEND_CUDA);
  if (s == PP_OK) {
    printf("note: a GPU is usable but auto chose the CPU (PARPRIM_BACKEND set?); both sides "
           "run on the CPU backend\n");
    pp_destroy(probe);
    return;
  }
  printf("note: no usable GPU (%s), so both sides run on the CPU backend\n",
         pp_last_error(NULL));
}

/* 0 when both contexts exist; else the exit code: DEMO_EXIT_SKIP when the backend asked
 * for has no device here (ctest then reports a skip, not a failure), 1 otherwise. */
static int demo_open(demo_env *env, pp_backend backend) {
  pp_status s = pp_create(&env->run, backend);
  if (s == PP_ERR_NO_DEVICE) {
    printf("SKIP: %s: %s\n", pp_backend_string(backend), pp_last_error(NULL));
    return DEMO_EXIT_SKIP;
  }
  if (s != PP_OK) {
    fprintf(stderr, "parprim demo: pp_create(%s): %s: %s\n", pp_backend_string(backend),
            pp_status_string(s), pp_last_error(NULL));
    return 1;
  }
  s = pp_create(&env->ref, PP_BACKEND_CPU);
  if (s != PP_OK) {
    fprintf(stderr, "parprim demo: pp_create(cpu) for the reference: %s: %s\n",
            pp_status_string(s), pp_last_error(NULL));
    return 1;
  }
  return 0;
}

static void demo_intro(demo_env *env, pp_backend asked) {
  pp_device_info info;
  const char *name = "unknown device";
  if (pp_get_device_info(env->run, &info) == PP_OK)
    name = info.name;
  printf("parprim %s demo: n = %zu, running on %s (%s), checked against the cpu backend\n",
         pp_version(), env->n, pp_backend_string(pp_backend_of(env->run)), name);
  if (pp_backend_of(env->run) == PP_BACKEND_CPU)
    explain_cpu_only(asked);
  printf("\n");
}

int pp_cli_demo_main(int argc, char **argv) {
  if (pp_gpus_wanted(argc, argv)) /* --gpus N: the distributed primitives (dist_cmd.c) */
    return pp_cli_demo_gpus_main(argc, argv);
  pp_backend backend = PP_BACKEND_AUTO;
  demo_env env = {.n = DEMO_DEFAULT_N};
  int rc = demo_parse(argc, argv, &backend, &env.n);
  if (rc >= 0)
    return rc;
  rc = demo_open(&env, backend);
  if (rc == 0) {
    demo_intro(&env, backend);
    demo_header();
    for (size_t i = 0; i < sizeof demo_entries / sizeof demo_entries[0]; i++)
      demo_entries[i](&env);
    demo_free_inputs(&env);
    printf("\n%d OK, %d MISMATCH, %d not implemented, %d errors\n", env.ok, env.mismatches,
           env.unimplemented, env.errors);
    rc = env.mismatches || env.errors ? 1 : 0;
  }
  pp_destroy(env.ref);
  pp_destroy(env.run);
  return rc;
}
