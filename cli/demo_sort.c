/*
 * demo_sort.c — `parprim demo` rows for sort (keys and pairs) and merge.
 */
#include "demo_impl.h"

#include "common.h"
#include "parprim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==================================================================================== */
/* sort and merge                                                                       */
/* ==================================================================================== */

typedef struct sort_args {
  pp_dtype t;
  size_t n, vs;         /* vs: value size, 0 for keys only */
  pp_order order;
  const void *vals_src; /* this side's values before the sort */
  demo_buf keys, vals;
} sort_args;

/* In place: every call sorts a fresh copy of the input. */
static pp_status prep_sort(pp_context *ctx, const void *in, void *args) {
  sort_args *a = args;
  pp_status s = pp_copy(ctx, a->keys.dev, in, a->n * pp_dtype_size(a->t));
  if (s == PP_OK && a->vs)
    s = pp_copy(ctx, a->vals.dev, a->vals_src, a->n * a->vs);
  return s;
}

static pp_status call_sort(pp_context *ctx, const void *in, void *args) {
  sort_args *a = args;
  pp_sort_opts o = {a->order, PP_SORT_AUTO};
  (void)in;
  return pp_sort(ctx, a->t, a->keys.dev, a->vs ? a->vals.dev : NULL, a->vs, a->n, &o);
}

static pp_status fetch_sort(pp_context *ctx, const void *in, void *args) {
  sort_args *a = args;
  (void)in;
  pp_status s = buf_fetch(ctx, &a->keys, a->n * pp_dtype_size(a->t));
  if (s == PP_OK && a->vs)
    s = buf_fetch(ctx, &a->vals, a->n * a->vs);
  return s;
}

/* Both sides are stable sorts with the same order (-0.0 == +0.0, NaN last), so keys and
 * values agree bit for bit. */
static bool sort_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const sort_args *g = got, *w = want;
  size_t n = env->n, bad = first_diff(g->keys.host, w->keys.host, n, pp_dtype_size(t));
  if (bad < n) {
    report_element("sort keys", t, bad, g->keys.host, w->keys.host);
    return false;
  }
  bad = g->vs ? first_diff(g->vals.host, w->vals.host, n, g->vs) : n;
  if (bad < n)
    report_element("sort values (keys agree)", PP_U32, bad, g->vals.host, w->vals.host);
  return bad == n;
}

/* u32 values are the input positions, so a stability fault shows as a value mismatch. */
static void demo_sort_case(demo_env *env, const char *name, pp_dtype t, size_t vs) {
  size_t n = env->n, kbytes = n * pp_dtype_size(t);
  demo_case c = {.prim = name, .t = t, .fn = call_sort, .same = sort_same, .prep = prep_sort,
                 .fetch = fetch_sort, .unit = "Gkeys/s", .amount = (double)n};
  sort_args got = {.t = t, .n = n, .vs = vs, .order = PP_ASCENDING}, want = got;
  uint32_t *pos = NULL;
  void *pos_dev = NULL;
  bool ok = true;
  if (vs) {
    pos = malloc(n * sizeof *pos);
    for (size_t i = 0; pos && i < n; i++)
      pos[i] = (uint32_t)i;
    pos_dev = pos ? demo_stage(env, pos, n * sizeof *pos) : NULL;
    if (!pos)
      demo_error(env, "out of host memory for %zu values", n);
    got.vals_src = pos_dev;
    want.vals_src = pos;
    ok = pos_dev && buf_alloc(env, env->run, &got.vals, n * vs) &&
         buf_alloc(env, env->ref, &want.vals, n * vs);
  }
  if (ok)
    demo_measure_bufs(env, &c, &got, &got.keys, &want, &want.keys, kbytes);
  else
    demo_row(env, &c, -1, "ERROR");
  buf_free(env, env->run, &got.vals);
  buf_free(env, env->ref, &want.vals);
  demo_unstage(env, pos_dev);
  free(pos);
}

void pp_demo_sort(demo_env *env) {
  demo_sort_case(env, "sort keys", PP_U32, 0);
  demo_sort_case(env, "sort pairs", PP_F32, 4);
}

typedef struct merge_args {
  pp_dtype t;
  size_t na, nb;
  const void *src; /* this side's a (na elements) then b (nb) */
  demo_buf out;
} merge_args;

static pp_status call_merge(pp_context *ctx, const void *in, void *args) {
  merge_args *a = args;
  (void)in;
  const char *b = (const char *)a->src + a->na * pp_dtype_size(a->t);
  return pp_merge(ctx, a->t, a->src, a->na, b, a->nb, a->out.dev, PP_ASCENDING);
}

/* Stable on both sides (a before b on ties), so bit for bit. */
static bool merge_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const merge_args *g = got, *w = want;
  size_t n = env->n, bad = first_diff(g->out.host, w->out.host, n, pp_dtype_size(t));
  if (bad < n)
    report_element("merge", t, bad, g->out.host, w->out.host);
  return bad == n;
}

/* A sorted run of m floats from random x in [-1, 1): -1 + 2 (i + u_i) / m with
 * u_i = (x_i + 1) / 2 in [0, 1) grows with i; two runs interleave at random, with ties. */
static void sorted_run(const float *x, float *dst, size_t m) {
  for (size_t i = 0; i < m; i++)
    dst[i] = (float)(-1.0 + 2.0 * ((double)i + 0.5 * ((double)x[i] + 1.0)) / (double)m);
}

void pp_demo_merge(demo_env *env) {
  size_t n = env->n, na = n / 2, nb = n - na;
  demo_case c = {.prim = "merge", .t = PP_F32, .fn = call_merge, .same = merge_same,
                 .unit = "GB/s", .amount = 2.0 * (double)n * sizeof(float)};
  merge_args got = {.t = PP_F32, .na = na, .nb = nb}, want = got;
  demo_input *x = demo_get_input(env, PP_F32);
  float *src = x ? malloc(n * sizeof *src) : NULL;
  void *src_dev = NULL;
  if (src) {
    sorted_run(x->host, src, na);
    sorted_run((const float *)x->host + na, src + na, nb);
    src_dev = demo_stage(env, src, n * sizeof *src);
  } else if (x) {
    demo_error(env, "out of host memory for %zu floats", n);
  }
  got.src = src_dev;
  want.src = src;
  if (src_dev)
    demo_measure_bufs(env, &c, &got, &got.out, &want, &want.out, n * sizeof(float));
  else
    demo_row(env, &c, -1, "ERROR");
  demo_unstage(env, src_dev);
  free(src);
}
