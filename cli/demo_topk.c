/* demo_topk.c — the top-k rows of `parprim demo`: the 100 largest f32 of the input with
 * their indices, and the 16 smallest of each row of the u32 input taken as rows of 1000.
 * Values and indices must equal the CPU reference's exactly (ties go to the lowest index
 * on both backends). */
#include "demo_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct topk_args {
  pp_dtype t;
  size_t rows, cols, k; /* rows == 0: one array */
  bool largest;
  demo_buf vals; /* rows * k values, then rows * k uint64 indices */
} topk_args;

static size_t topk_nk(const topk_args *a) { return (a->rows ? a->rows : 1) * a->k; }

static pp_status call_topk(pp_context *ctx, const void *in, void *args) {
  topk_args *a = args;
  uint64_t *idx = (uint64_t *)((char *)a->vals.dev + topk_nk(a) * 8);
  if (a->rows)
    return pp_topk_rows(ctx, a->t, in, a->rows, a->cols, a->k, a->largest, a->vals.dev, idx);
  return pp_topk(ctx, a->t, in, a->cols, a->k, a->largest, a->vals.dev, idx);
}

static bool topk_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const topk_args *g = got, *w = want;
  const size_t nk = topk_nk(g), es = pp_dtype_size(t);
  (void)env;
  /* values live in the first nk * 8 bytes (room for any dtype), indices after */
  size_t bad = first_diff(g->vals.host, w->vals.host, nk, es);
  if (bad < nk) {
    report_element("topk value", t, bad, g->vals.host, w->vals.host);
    return false;
  }
  const uint64_t *gi = (const uint64_t *)((const char *)g->vals.host + nk * 8);
  const uint64_t *wi = (const uint64_t *)((const char *)w->vals.host + nk * 8);
  for (size_t j = 0; j < nk; j++)
    if (gi[j] != wi[j]) {
      fprintf(stderr, "parprim demo: topk index %zu: got %" PRIu64 ", cpu reference %" PRIu64 "\n", j,
              gi[j], wi[j]);
      return false;
    }
  return true;
}

static void demo_topk_case(demo_env *env, const char *name, pp_dtype t, size_t rows, size_t cols,
                           size_t k, bool largest) {
  if (k > cols || cols == 0) return;
  topk_args got = {.t = t, .rows = rows, .cols = cols, .k = k, .largest = largest}, want = got;
  demo_case c = {.prim = name, .t = t, .fn = call_topk, .same = topk_same,
                 .unit = "GB/s", .amount = (double)((rows ? rows : 1) * cols * pp_dtype_size(t))};
  demo_measure_bufs(env, &c, &got, &got.vals, &want, &want.vals, topk_nk(&got) * 16);
}

void pp_demo_topk(demo_env *env) {
  demo_topk_case(env, "topk 100 largest", PP_F32, 0, env->n, env->n < 100 ? env->n : 100, true);
  const size_t cols = 1000;
  if (env->n >= cols)
    demo_topk_case(env, "topk rows 16 smallest", PP_U32, env->n / cols, cols, 16, false);
}
