/* demo_sgemm.c — the sgemm entry of `parprim demo`: square products of side
 * s = min(1024, floor(sqrt(n / 2))) taken from the f32 input (A is its first s*s
 * elements, B the next s*s), row-major NN and column-major TN ("TNc") with alpha = 0.5, checked
 * against the CPU backend by the relative Frobenius norm of the difference (plain FP32 in
 * two summation orders differs near 1e-7; 1e-5 is the limit). Throughput in GFLOP/s
 * (2*s^3 flops). */
#include "demo_impl.h"

#include <math.h>
#include <stdio.h>

#define SGEMM_DEMO_MAX_SIDE 1024
#define SGEMM_DEMO_REL_TOL 1e-5

/* The two forms of the product: row-major NN, column-major TN with alpha = 0.5. */
typedef struct sgemm_form {
  pp_layout layout;
  pp_trans ta;
  float alpha;
  const char *name;
} sgemm_form;

static const sgemm_form sgemm_forms[2] = {{PP_ROW_MAJOR, PP_NO_TRANS, 1.0f, "NN"},
                                          {PP_COL_MAJOR, PP_TRANS, 0.5f, "TNc"}};

typedef struct sgemm_args {
  const sgemm_form *form;
  size_t s;
  demo_buf c;
} sgemm_args;

static pp_status call_sgemm(pp_context *ctx, const void *in, void *args) {
  sgemm_args *a = args;
  const float *A = in, *B = (const float *)in + a->s * a->s;
  return pp_sgemm(ctx, a->form->layout, a->form->ta, PP_NO_TRANS, a->s, a->s, a->s,
                  a->form->alpha, A, a->s, B, a->s, 0.0f, a->c.dev, a->s);
}

static bool sgemm_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const sgemm_args *g = got, *w = want;
  const float *x = g->c.host, *y = w->c.host;
  double diff = 0.0, norm = 0.0;
  (void)env;
  (void)t;
  for (size_t i = 0; i < g->s * g->s; i++) {
    double d = (double)x[i] - (double)y[i];
    diff += d * d;
    norm += (double)y[i] * y[i];
  }
  double rel = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
  if (rel <= SGEMM_DEMO_REL_TOL) return true;
  fprintf(stderr, "parprim demo: sgemm %zu^3: ||got - cpu|| / ||cpu|| = %.3g (limit %.0e)\n",
          g->s, rel, SGEMM_DEMO_REL_TOL);
  return false;
}

void pp_demo_sgemm(demo_env *env) {
  size_t s = (size_t)floor(sqrt((double)env->n / 2.0));
  if (s > SGEMM_DEMO_MAX_SIDE) s = SGEMM_DEMO_MAX_SIDE;
  if (s == 0) return; /* n < 2: no square fits */
  static char names[2][32];
  for (int i = 0; i < 2; i++) {
    snprintf(names[i], sizeof names[i], "sgemm %s %zu", sgemm_forms[i].name, s);
    demo_case c = {.prim = names[i], .t = PP_F32, .fn = call_sgemm, .same = sgemm_same,
                   .unit = "GFLOP/s", .amount = 2.0 * (double)s * (double)s * (double)s};
    sgemm_args got = {&sgemm_forms[i], s, {0}}, want = got;
    demo_measure_bufs(env, &c, &got, &got.c, &want, &want.c, s * s * sizeof(float));
  }
}
