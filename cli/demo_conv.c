/* demo_conv.c — the conv entries of `parprim demo`: the f32 input viewed as an image
 * (width sqrt(n) rounded down, as many full rows as fit), filtered with a 5x5 Gaussian and
 * mirror borders through pp_conv2d, and with a 15-tap Gaussian row and column and clamp
 * borders through pp_conv2d_separable. The result must match the CPU reference within the
 * rounding of float accumulation: (taps + 16) * FLT_EPSILON * max|x| * sum|f|, both sides. */
#include "demo_impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

typedef struct conv_args {
  size_t w, h, k;
  bool separable;
  pp_border border;
  float filter[15 * 15], row[15];
  double bound; /* largest difference two correct results may show */
  demo_buf out;
} conv_args;

static pp_status call_conv(pp_context *ctx, const void *in, void *args) {
  conv_args *a = args;
  if (a->separable)
    return pp_conv2d_separable(ctx, in, a->w, a->h, a->w, a->row, a->k, a->row, a->k, a->border,
                               a->out.dev, a->w);
  return pp_conv2d(ctx, in, a->w, a->h, a->w, a->filter, a->k, a->k, a->border, a->out.dev,
                   a->w);
}

static bool conv_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const conv_args *g = got, *w = want;
  (void)env;
  (void)t;
  const float *a = g->out.host, *b = w->out.host;
  for (size_t i = 0; i < g->w * g->h; i++)
    if (!(fabs((double)a[i] - (double)b[i]) <= g->bound)) {
      fprintf(stderr, "parprim demo: conv %zux%zu%s: pixel (%zu,%zu): got %.9g, cpu reference %.9g\n",
              g->k, g->k, g->separable ? " separable" : "", i % g->w, i / g->w, (double)a[i],
              (double)b[i]);
      return false;
    }
  return true;
}

static void demo_conv_case(demo_env *env, const char *name, size_t k, bool separable,
                           pp_border border) {
  demo_input *in = demo_get_input(env, PP_F32);
  if (!in) return;
  size_t w = (size_t)sqrt((double)env->n);
  while (w > 1 && w * w > env->n) w--;
  conv_args a = {.w = w, .h = env->n / w, .k = k, .separable = separable, .border = border};
  double sigma = (double)k / 6.0, sum = 0, sum_abs = 0, max_abs = 0;
  for (size_t i = 0; i < k; i++) {
    double d = (double)i - (double)(k / 2);
    sum += a.row[i] = (float)exp(-d * d / (2 * sigma * sigma));
  }
  for (size_t i = 0; i < k; i++) a.row[i] = (float)(a.row[i] / sum);
  for (size_t y = 0; y < k; y++)
    for (size_t x = 0; x < k; x++) sum_abs += fabs(a.filter[y * k + x] = a.row[y] * a.row[x]);
  const float *x = in->host;
  for (size_t i = 0; i < a.w * a.h; i++) max_abs = fmax(max_abs, fabs((double)x[i]));
  a.bound = 2.0 * (double)(k * k + 16) * FLT_EPSILON * max_abs * sum_abs * 1.01;
  size_t bytes = a.w * a.h * sizeof(float);
  demo_case c = {.prim = name, .t = PP_F32, .fn = call_conv, .same = conv_same, .unit = "GB/s",
                 .amount = 2.0 * (double)bytes};
  conv_args want = a;
  demo_measure_bufs(env, &c, &a, &a.out, &want, &want.out, bytes);
}

void pp_demo_conv(demo_env *env) {
  if (env->n < 1) return;
  demo_conv_case(env, "conv 5x5 mirror", 5, false, PP_BORDER_MIRROR);
  demo_conv_case(env, "conv sep15 clamp", 15, true, PP_BORDER_CLAMP);
}
