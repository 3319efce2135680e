/*
 * demo_reduce.c — `parprim demo` rows for reduce and argreduce: scalar results straight
 * to host memory, float sums judged within the bound of a pairwise sum.
 */
#include "demo_impl.h"

#include "common.h"
#include "parprim.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    cli_format_value(t, g->value, a, sizeof a);
    cli_format_value(t, w->value, b, sizeof b);
    fprintf(stderr, "parprim demo: reduce %s %s: got %s, cpu reference %s\n",
            cli_op_string(g->op), pp_dtype_string(t), a, b);
  }
  return ok;
}

static bool argreduce_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const red_args *g = got, *w = want;
  (void)env;
  bool ok = memcmp(g->value, w->value, pp_dtype_size(t)) == 0 && g->index == w->index;
  if (!ok) {
    char a[64], b[64];
    cli_format_value(t, g->value, a, sizeof a);
    cli_format_value(t, w->value, b, sizeof b);
    fprintf(stderr,
            "parprim demo: argreduce %s %s: got %s at %" PRIu64 ", cpu reference %s at %" PRIu64
            "\n",
            cli_op_string(g->op), pp_dtype_string(t), a, g->index, b, w->index);
  }
  return ok;
}

static const pp_dtype reduce_types[] = {PP_F32, PP_I32, PP_U64, PP_F64, PP_U8};
#define N_REDUCE_TYPES (sizeof reduce_types / sizeof reduce_types[0])

/* Every reduce type under one op; both reduce and argreduce read n * size bytes. */
static void demo_reduce_op(demo_env *env, const char *prim, pp_op op, demo_fn fn,
                           demo_same_fn same) {
  char name[32];
  snprintf(name, sizeof name, "%s %s", prim, cli_op_string(op));
  for (size_t i = 0; i < N_REDUCE_TYPES; i++) {
    pp_dtype t = reduce_types[i];
    demo_case c = {.prim = name, .t = t, .fn = fn, .same = same, .unit = "GB/s",
                   .amount = (double)env->n * (double)pp_dtype_size(t)};
    red_args got = {.op = op, .n = env->n, .t = t}, want = got;
    demo_measure(env, &c, &got, &want);
  }
}

void pp_demo_reduce(demo_env *env) {
  demo_reduce_op(env, "reduce", PP_SUM, call_reduce, reduce_same);
  demo_reduce_op(env, "reduce", PP_MIN, call_reduce, reduce_same);
  demo_reduce_op(env, "reduce", PP_MAX, call_reduce, reduce_same);
}

void pp_demo_argreduce(demo_env *env) {
  demo_reduce_op(env, "argreduce", PP_MIN, call_argreduce, argreduce_same);
  demo_reduce_op(env, "argreduce", PP_MAX, call_argreduce, argreduce_same);
}
