/* demo_histogram.c — the histogram rows of `parprim demo`: even bins and uneven (range)
 * bins over the f32 input, and the u8 input taken as an RGBA image (or one grey row when n
 * is not a multiple of 4). Counts land in host memory and must equal the CPU reference's
 * exactly. */
#include "demo_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_EVEN_BINS 1024
#define DEMO_RANGE_BINS 100

typedef struct hist_args {
  int kind; /* 0 even, 1 range, 2 image */
  size_t n, bins, width, height;
  int channels;
  const double *edges;
  uint64_t counts[1024];
} hist_args;

static pp_status call_hist(pp_context *ctx, const void *in, void *args) {
  hist_args *a = args;
  switch (a->kind) {
  case 0: return pp_histogram_even(ctx, PP_F32, in, a->n, a->bins, -1.0, 1.0, a->counts);
  case 1: return pp_histogram_range(ctx, PP_F32, in, a->n, a->edges, a->bins, a->counts);
  default:
    return pp_histogram_image(ctx, in, a->width, a->height, a->width * (size_t)a->channels,
                              a->channels, a->counts);
  }
}

static bool hist_same(demo_env *env, pp_dtype t, const void *got, const void *want) {
  const hist_args *g = got, *w = want;
  (void)env;
  (void)t;
  for (size_t i = 0; i < g->bins; i++)
    if (g->counts[i] != w->counts[i]) {
      fprintf(stderr, "parprim demo: histogram bin %zu: got %" PRIu64 ", cpu reference %" PRIu64 "\n",
              i, g->counts[i], w->counts[i]);
      return false;
    }
  return true;
}

/* One row: got as set up (want a copy of it), over the input of t. */
static void measure_hist(demo_env *env, const char *prim, pp_dtype t, double amount,
                         hist_args *got, hist_args *want) {
  *want = *got;
  demo_case c = {.prim = prim, .t = t, .fn = call_hist, .same = hist_same, .amount = amount,
                 .unit = "GB/s"};
  demo_measure(env, &c, got, want);
}

void pp_demo_histogram(demo_env *env) {
  static hist_args got, want; /* 8 KiB of counts each: kept off the stack */
  double edges[DEMO_RANGE_BINS + 1];
  /* uneven edges over [-1, 1): bins grow quadratically away from -1 */
  for (int i = 0; i <= DEMO_RANGE_BINS; i++) {
    double u = (double)i / DEMO_RANGE_BINS;
    edges[i] = -1.0 + 2.0 * u * u;
  }
  const double f32_bytes = (double)env->n * 4.0;

  memset(&got, 0, sizeof got);
  got.kind = 0;
  got.n = env->n;
  got.bins = DEMO_EVEN_BINS;
  measure_hist(env, "histogram even", PP_F32, f32_bytes, &got, &want);

  got.kind = 1;
  got.bins = DEMO_RANGE_BINS;
  got.edges = edges;
  measure_hist(env, "histogram range", PP_F32, f32_bytes, &got, &want);

  got.kind = 2;
  got.channels = env->n % 4 == 0 ? 4 : 1;
  got.width = env->n / (size_t)got.channels;
  got.height = 1;
  got.bins = (size_t)got.channels * 256;
  got.edges = NULL;
  measure_hist(env, got.channels == 4 ? "histogram image rgba" : "histogram image", PP_U8,
               (double)env->n, &got, &want);
}
