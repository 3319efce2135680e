/*
 * demo.c — `parprim demo`: runs every implemented primitive on generated data on the
 * chosen backend and checks each result against the CPU backend.
 *
 * The CPU backend is the reference because it is the simplest correct implementation
 * we ship; on a machine without a GPU both sides run on it (two contexts), which still
 * exercises the whole API path. Adding a primitive: write its entry function and add it
 * to demo_entries[].
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "bench.h"
#include "parprim.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_REPS 5 /* median of a few: the first call also loads kernels */
#define DEMO_DEFAULT_N ((size_t)1 << 24)
#define DEMO_EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define N_DTYPES (PP_F64 + 1)

/* One generated input, kept for every primitive that reads this dtype. */
typedef struct demo_input {
  bool ready;
  void *host; /* the reference reads host memory directly */
  void *dev;  /* the same bytes in pp_malloc memory of the backend under test */
  double sum_abs;
} demo_input;

typedef struct demo_env {
  pp_context *run; /* backend under test */
  pp_context *ref; /* CPU backend: the reference */
  size_t n;
  demo_input inputs[N_DTYPES];
  int ok, mismatches, unimplemented, errors;
} demo_env;

/* ==================================================================================== */
/* Inputs, timing, rows                                                                 */
/* ==================================================================================== */

static void demo_error(demo_env *env, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fputs("parprim demo: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  env->errors++;
}

static double input_sum_abs(pp_dtype t, const void *p, size_t n) {
  double s = 0.0;
  for (size_t i = 0; t == PP_F32 && i < n; i++)
    s += fabs((double)((const float *)p)[i]);
  for (size_t i = 0; t == PP_F64 && i < n; i++)
    s += fabs(((const double *)p)[i]);
  return s;
}

static demo_input *demo_get_input(demo_env *env, pp_dtype t) {
  demo_input *in = &env->inputs[t];
  if (in->ready)
    return in;
  size_t bytes = env->n * pp_dtype_size(t);
  in->host = malloc(bytes);
  if (!in->host) {
    demo_error(env, "out of host memory for %zu bytes of %s", bytes, pp_dtype_string(t));
    return NULL;
  }
  bench_fill_random(t, in->host, env->n, BENCH_SEED + (uint64_t)t, 0);
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

/* One call of a primitive on ctx, reading `in`; results go to host memory in args. */
typedef pp_status (*demo_fn)(pp_context *ctx, const void *in, void *args);
/* Whether the args the backend under test filled (got) match the reference's (want). */
typedef bool (*demo_same_fn)(demo_env *env, pp_dtype t, const void *got, const void *want);

/* What one row runs, and how its throughput is counted: amount / time, in `unit`
 * (e.g. bytes read and "GB/s", or elements and "Gelem/s"; both are per 1e9). */
typedef struct demo_case {
  const char *prim;
  pp_dtype t;
  demo_fn fn;
  demo_same_fn same;
  double amount;
  const char *unit;
} demo_case;

/* Wall clock around calls that write host outputs, so each returns finished. */
static pp_status demo_time(demo_env *env, demo_fn fn, const void *in, void *args, double *ms) {
  double v[DEMO_REPS];
  for (int r = 0; r < DEMO_REPS; r++) {
    double t0 = bench_now_ms();
    pp_status s = fn(env->run, in, args);
    if (s == PP_OK)
      s = pp_synchronize(env->run);
    if (s != PP_OK)
      return s;
    v[r] = bench_now_ms() - t0;
  }
  *ms = bench_median(v, DEMO_REPS);
  return PP_OK;
}

static void demo_header(void) {
  printf("%-14s %-5s %10s %-7s %10s %16s  %s\n", "primitive", "dtype", "n", "backend",
         "time ms", "throughput", "check");
}

/* ms < 0: no time to show. */
static void demo_row(demo_env *env, const demo_case *c, double ms, const char *check) {
  char thr[32] = "-", tm[32] = "-";
  if (ms >= 0) {
    snprintf(tm, sizeof tm, "%.3f", ms);
    snprintf(thr, sizeof thr, "%.2f %s", ms > 0 ? c->amount / (ms * 1e6) : 0.0, c->unit);
  }
  printf("%-14s %-5s %10zu %-7s %10s %16s  %s\n", c->prim, pp_dtype_string(c->t), env->n,
         pp_backend_string(pp_backend_of(env->run)), tm, thr, check);
  fflush(stdout);
}

/* Runs the case on the backend under test (timed) and on the reference, then lets
 * c->same judge; prints the row and counts the outcome. got/want are each side's args. */
static void demo_measure(demo_env *env, const demo_case *c, void *got, void *want) {
  const char *name = pp_dtype_string(c->t);
  demo_input *in = demo_get_input(env, c->t);
  double ms = -1;
  if (!in) {
    demo_row(env, c, -1, "ERROR");
    return;
  }
  pp_status s = demo_time(env, c->fn, in->dev, got, &ms);
  if (s == PP_ERR_UNSUPPORTED) {
    env->unimplemented++;
    demo_row(env, c, -1, "not implemented");
    return;
  }
  if (s != PP_OK) {
    demo_error(env, "%s %s: %s: %s", c->prim, name, pp_status_string(s), pp_last_error(env->run));
    demo_row(env, c, -1, "ERROR");
    return;
  }
  s = c->fn(env->ref, in->host, want);
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

static double as_double(pp_dtype t, const void *p) {
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
/* reduce and argreduce                                                                 */
/* ==================================================================================== */

typedef struct red_args {
  pp_op op;
  size_t n;
  pp_dtype t;
  unsigned char value[8];
  uint64_t index;
} red_args;

static pp_status call_reduce(pp_context *ctx, const void *in, void *args) {
  red_args *a = args;
  return pp_reduce(ctx, a->op, a->t, in, a->n, a->value);
}

static pp_status call_argreduce(pp_context *ctx, const void *in, void *args) {
  red_args *a = args;
  return pp_argreduce(ctx, a->op, a->t, in, a->n, a->value, &a->index);
}

/* Integers and MIN/MAX are exact. A float SUM may differ by the bound the API promises,
 * that of pairwise summation, plus the final rounding of each side. */
static bool reduce_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const red_args *g = got, *w = want;
  bool ok;
  double x = 0, y = 0;
  if (g->op == PP_SUM && (t == PP_F32 || t == PP_F64)) {
    double eps = t == PP_F32 ? 0x1p-24 : 0x1p-53;
    x = as_double(t, g->value);
    y = as_double(t, w->value);
    double tol = eps * (env->inputs[t].sum_abs * (log2((double)env->n + 1) + 2) + 2 * fabs(y));
    ok = fabs(x - y) <= tol;
  } else {
    ok = memcmp(g->value, w->value, pp_dtype_size(t)) == 0;
  }
  if (!ok) {
    char a[64], b[64];
    bench_format_value(t, g->value, a, sizeof a);
    bench_format_value(t, w->value, b, sizeof b);
    fprintf(stderr, "parprim demo: reduce %s %s: got %s, cpu reference %s\n",
            bench_op_string(g->op), pp_dtype_string(t), a, b);
  }
  return ok;
}

static bool argreduce_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const red_args *g = got, *w = want;
  (void)env;
  bool ok = memcmp(g->value, w->value, pp_dtype_size(t)) == 0 && g->index == w->index;
  if (!ok) {
    char a[64], b[64];
    bench_format_value(t, g->value, a, sizeof a);
    bench_format_value(t, w->value, b, sizeof b);
    fprintf(stderr,
            "parprim demo: argreduce %s %s: got %s at %" PRIu64 ", cpu reference %s at %" PRIu64
            "\n",
            bench_op_string(g->op), pp_dtype_string(t), a, g->index, b, w->index);
  }
  return ok;
}

static const pp_dtype reduce_types[] = {PP_F32, PP_I32, PP_U64, PP_F64, PP_U8};
#define N_REDUCE_TYPES (sizeof reduce_types / sizeof reduce_types[0])

/* Every reduce type under one op; both reduce and argreduce read n * size bytes. */
static void demo_reduce_op(demo_env *env, const char *prim, pp_op op, demo_fn fn,
                           demo_same_fn same) {
  char name[32];
  snprintf(name, sizeof name, "%s %s", prim, bench_op_string(op));
  for (size_t i = 0; i < N_REDUCE_TYPES; i++) {
    pp_dtype t = reduce_types[i];
    demo_case c = {.prim = name, .t = t, .fn = fn, .same = same, .unit = "GB/s",
                   .amount = (double)env->n * (double)pp_dtype_size(t)};
    red_args got = {.op = op, .n = env->n, .t = t}, want = got;
    demo_measure(env, &c, &got, &want);
  }
}

static void demo_reduce(demo_env *env) {
  demo_reduce_op(env, "reduce", PP_SUM, call_reduce, reduce_same);
  demo_reduce_op(env, "reduce", PP_MIN, call_reduce, reduce_same);
  demo_reduce_op(env, "reduce", PP_MAX, call_reduce, reduce_same);
}

static void demo_argreduce(demo_env *env) {
  demo_reduce_op(env, "argreduce", PP_MIN, call_argreduce, argreduce_same);
  demo_reduce_op(env, "argreduce", PP_MAX, call_argreduce, argreduce_same);
}

/* ==================================================================================== */
/* The table of primitives                                                              */
/* ==================================================================================== */

typedef struct demo_entry {
  const char *name;
  void (*run)(demo_env *env);
} demo_entry;

static const demo_entry demo_entries[] = {
    {"reduce", demo_reduce},
    {"argreduce", demo_argreduce},
};

/* ==================================================================================== */
/* Command line                                                                         */
/* ==================================================================================== */

void pp_cli_demo_usage(FILE *f) {
  fputs("usage: parprim demo [--backend cpu|cuda|auto] [--n N]\n"
        "\n"
        "Runs every implemented primitive on random data (fixed seed) on the backend\n"
        "(default auto: CUDA when a GPU is usable) and checks each result against the CPU\n"
        "backend. Time is wall clock per call, median of 5, outputs in host memory.\n"
        "Exits 1 when a check mismatches or a call fails, 77 (skip) when the backend\n"
        "asked for has no device here.\n"
        "\n"
        "  --backend B  cpu, cuda or auto (default auto)\n"
        "  --n N        elements per input (default 2^24); 1048576, 2^20, 1<<20, 1M, ...\n"
        "  -h, --help   this text\n",
        f);
}

static int demo_usage_error(const char *fmt, const char *arg) {
  fputs("parprim demo: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n\n", stderr);
  pp_cli_demo_usage(stderr);
  return 2;
}

/* Returns -1 when parsed, else the exit code (0 after help). */
static int demo_parse(int argc, char **argv, pp_backend *backend, size_t *n) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "help") == 0) {
      pp_cli_demo_usage(stdout);
      return 0;
    }
    bool is_backend = strcmp(a, "--backend") == 0, is_n = strcmp(a, "--n") == 0;
    const char *v = NULL;
    if (strncmp(a, "--backend=", 10) == 0)
      v = a + 10, is_backend = true;
    else if (strncmp(a, "--n=", 4) == 0)
      v = a + 4, is_n = true;
    else if (is_backend || is_n) {
      if (i + 1 >= argc)
        return demo_usage_error("%s needs a value", a);
      v = argv[++i];
    } else {
      return demo_usage_error("unknown argument '%s'", a);
    }
    if (is_backend && bench_parse_backend(v, backend))
      return demo_usage_error("unknown backend '%s' (cpu, cuda, auto)", v);
    if (is_n && (bench_parse_size(v, n) || *n == 0))
      return demo_usage_error("bad size for --n: '%s' (at least 1)", v);
  }
  return -1;
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
      demo_entries[i].run(&env);
    demo_free_inputs(&env);
    printf("\n%d OK, %d MISMATCH, %d not implemented, %d errors\n", env.ok, env.mismatches,
           env.unimplemented, env.errors);
    rc = env.mismatches || env.errors ? 1 : 0;
  }
  pp_destroy(env.ref);
  pp_destroy(env.run);
  return rc;
}
