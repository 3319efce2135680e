/*
 * demo_scan.c — `parprim demo` rows for scan, select, select_flagged and partition.
 */
#include "demo_impl.h"

#include "common.h"
#include "parprim.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==================================================================================== */
/* scan                                                                                 */
/* ==================================================================================== */

typedef struct scan_args {
  pp_op op;
  pp_dtype t;
  size_t n;
  bool inclusive;
  demo_buf out;
} scan_args;

static pp_status call_scan(pp_context *ctx, const void *in, void *args) {
  scan_args *a = args;
  return pp_scan(ctx, a->op, a->t, in, a->out.dev, a->n, a->inclusive);
}

/* Integers and MIN/MAX exactly. A float SUM may be off by (ceil(log2(n+1)) + 32) * eps *
 * the sum of |x| up to i on each side, so twice that between the two. */
static bool scan_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const scan_args *g = got, *w = want;
  size_t n = env->n, bad = n;
  if (g->op == PP_SUM && (t == PP_F32 || t == PP_F64)) {
    double eps = t == PP_F32 ? FLT_EPSILON : DBL_EPSILON;
    double k = 2.0 * (ceil(log2((double)n + 1.0)) + 32.0) * eps, abs_prefix = 0.0;
    const void *x = env->inputs[t].host;
    for (size_t i = 0; i < n && bad == n; i++) {
      abs_prefix += fabs(as_double(t, (const char *)x + i * pp_dtype_size(t)));
      double gi = as_double(t, (const char *)g->out.host + i * pp_dtype_size(t));
      double wi = as_double(t, (const char *)w->out.host + i * pp_dtype_size(t));
      if (!(fabs(gi - wi) <= k * abs_prefix))
        bad = i;
    }
  } else {
    bad = first_diff(g->out.host, w->out.host, n, pp_dtype_size(t));
  }
  if (bad < n)
    report_element(g->inclusive ? "scan inclusive" : "scan exclusive", t, bad, g->out.host,
                   w->out.host);
  return bad == n;
}

static void demo_scan_case(demo_env *env, const char *name, pp_op op, pp_dtype t,
                           bool inclusive) {
  size_t bytes = env->n * pp_dtype_size(t);
  demo_case c = {.prim = name, .t = t, .fn = call_scan, .same = scan_same,
                 .unit = "GB/s", .amount = 2.0 * (double)bytes};
  scan_args got = {.op = op, .t = t, .n = env->n, .inclusive = inclusive}, want = got;
  demo_measure_bufs(env, &c, &got, &got.out, &want, &want.out, bytes);
}

void pp_demo_scan(demo_env *env) {
  demo_scan_case(env, "scan ex sum", PP_SUM, PP_U32, false);
  demo_scan_case(env, "scan in sum", PP_SUM, PP_F32, true);
}

/* ==================================================================================== */
/* select, select_flagged, partition                                                    */
/* ==================================================================================== */

typedef struct split_args {
  pp_dtype t;
  size_t n;
  bool partition;
  const uint8_t *flags; /* select_flagged: this side's flags */
  float value;          /* select, partition: keep x > value (f32) */
  demo_buf out;
  uint64_t count; /* host memory */
} split_args;

static pp_status call_select(pp_context *ctx, const void *in, void *args) {
  split_args *a = args;
  return pp_select(ctx, a->t, in, a->n, PP_GT, &a->value, a->out.dev, &a->count);
}

static pp_status call_select_flagged(pp_context *ctx, const void *in, void *args) {
  split_args *a = args;
  return pp_select_flagged(ctx, pp_dtype_size(a->t), in, a->flags, a->n, a->out.dev, &a->count);
}

static pp_status call_partition(pp_context *ctx, const void *in, void *args) {
  split_args *a = args;
  return pp_partition(ctx, a->t, in, a->n, PP_GT, &a->value, a->out.dev, &a->count);
}

/* Only what the call wrote: the kept elements, or all n for a partition. */
static pp_status fetch_split(pp_context *ctx, const void *in, void *args) {
  split_args *a = args;
  (void)in;
  size_t kept = a->count < a->n ? (size_t)a->count : a->n;
  return buf_fetch(ctx, &a->out, (a->partition ? a->n : kept) * pp_dtype_size(a->t));
}

static bool split_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const split_args *g = got, *w = want;
  (void)env;
  const char *what = g->partition ? "partition" : g->flags ? "select_flagged" : "select";
  if (g->count != w->count) {
    fprintf(stderr, "parprim demo: %s %s: count %" PRIu64 ", cpu reference %" PRIu64 "\n", what,
            pp_dtype_string(t), g->count, w->count);
    return false;
  }
  size_t n = g->partition ? g->n : (size_t)g->count;
  size_t bad = first_diff(g->out.host, w->out.host, n, pp_dtype_size(t));
  if (bad < n)
    report_element(what, t, bad, g->out.host, w->out.host);
  return bad == n;
}

static void demo_split_case(demo_env *env, const char *name, demo_fn fn, bool partition,
                            const uint8_t *flags_run, const uint8_t *flags_ref) {
  demo_case c = {.prim = name, .t = PP_F32, .fn = fn, .same = split_same, .fetch = fetch_split,
                 .unit = "Gelem/s", .amount = (double)env->n};
  split_args got = {.t = PP_F32, .n = env->n, .partition = partition, .flags = flags_run,
                    .value = 0.0f},
             want = got;
  want.flags = flags_ref;
  demo_measure_bufs(env, &c, &got, &got.out, &want, &want.out, env->n * sizeof(float));
}

void pp_demo_select(demo_env *env) {
  demo_split_case(env, "select x>0", call_select, false, NULL, NULL);
}

void pp_demo_partition(demo_env *env) {
  demo_split_case(env, "partition x>0", call_partition, true, NULL, NULL);
}

/* f32 records kept where a random flag (the top bit of a random byte) is 1. */
void pp_demo_select_flagged(demo_env *env) {
  demo_case row = {.prim = "select_flagged", .t = PP_F32, .unit = "Gelem/s"};
  demo_input *bytes = demo_get_input(env, PP_U8);
  uint8_t *flags = bytes ? malloc(env->n) : NULL;
  void *flags_dev = NULL;
  if (flags) {
    for (size_t i = 0; i < env->n; i++)
      flags[i] = (uint8_t)(((const uint8_t *)bytes->host)[i] >> 7);
    flags_dev = demo_stage(env, flags, env->n);
  } else if (bytes) {
    demo_error(env, "out of host memory for %zu flags", env->n);
  }
  if (flags_dev)
    demo_split_case(env, "select_flagged", call_select_flagged, false, flags_dev, flags);
  else
    demo_row(env, &row, -1, "ERROR");
  demo_unstage(env, flags_dev);
  free(flags);
}
