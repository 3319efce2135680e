/*
 * test_cpu_conv_stream.c — pp_conv2d and pp_conv2d_separable on an image whose output is
 * larger than 16 MiB, where the CPU backend writes whole output tiles with non-temporal
 * stores, row by row wherever the output row starts 16-byte aligned (src/cpu/conv.c,
 * conv_stream). Runs on every backend; the size is what selects the CPU's streamed path.
 *
 * Usage: test_cpu_conv_stream [cpu|cuda]
 *
 * Each case takes one output placement: a pitch of a multiple of 4 floats at an aligned
 * base (every row streamed), an odd pitch (one row in four starts aligned, so streamed and
 * ordinary rows alternate within one band), and a base one float off (no row streamed).
 * Filters: 3 x 3 (the CPU's band specialised for it), 5 x 5 (the general band), separable
 * 3 + 3 (specialised) and 7 + 5; every border. The data are small integers, so every sum is
 * exact in float and the result must equal the reference bit for bit; the floats between
 * a row's width and its pitch, and one past the last row, must keep their sentinel.
 */
#include "harness.h"

#define W 2053 /* W * H * 4 bytes = 16.8 MB, past the CPU backend's 16 MiB threshold */
#define H 2051
#define SENTINEL -12345.0f

/* Source index of coordinate i under border b (n >= 2), or -1 for ZERO outside: written as
 * the walk the rule describes, one reflection at a time (i is at most a few pixels out). */
static long border_index(long i, long n, pp_border b) {
  if (i >= 0 && i < n) return i;
  if (b == PP_BORDER_ZERO) return -1;
  if (b == PP_BORDER_CLAMP) return i < 0 ? 0 : n - 1;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/* out = src (*) f, the fw x fh integer filter, in exact integer arithmetic. */
static void reference(const float *src, const int *f, long fw, long fh, pp_border b, int *out) {
  for (long y = 0; y < H; y++)
    for (long x = 0; x < W; x++) {
      long sum = 0;
      for (long dy = 0; dy < fh; dy++) {
        long sy = border_index(y + dy - fh / 2, H, b);
        for (long dx = 0; dx < fw && sy >= 0; dx++) {
          long sx = border_index(x + dx - fw / 2, W, b);
          if (sx >= 0) sum += (long)f[dy * fw + dx] * (long)src[sy * W + sx];
        }
      }
      out[y * W + x] = (int)sum;
    }
}

typedef struct placement {
  size_t offset, pitch; /* floats */
  const char *name;
} placement;

static const placement places[] = {
    {0, W + 3, "aligned base, pitch a multiple of 4"}, /* W + 3 = 2056 */
    {0, W, "aligned base, odd pitch"},
    {1, W + 3, "base one float off"},
};

/* One case: row_len x col_len as two 1-D filters (separable) or their outer product. */
static void run_case(pp_context *ctx, th_rng *r, const float *src, int *ref, size_t rl,
                     size_t cl, bool separable, pp_border b, const placement *p) {
  int fi[7 * 7], ri[7], ci[7];
  float row[7], col[7], outer[7 * 7];
  for (size_t i = 0; i < rl; i++) ri[i] = (int)th_below(r, 7) - 3, row[i] = (float)ri[i];
  for (size_t i = 0; i < cl; i++) ci[i] = (int)th_below(r, 7) - 3, col[i] = (float)ci[i];
  for (size_t y = 0; y < cl; y++)
    for (size_t x = 0; x < rl; x++) fi[y * rl + x] = ci[y] * ri[x], outer[y * rl + x] = (float)fi[y * rl + x];
  reference(src, fi, (long)rl, (long)cl, b, ref);

  const size_t total = p->offset + H * p->pitch + 1;
  float *block = NULL;
  if (!CHECK_STATUS(pp_malloc(ctx, (void **)&block, total * sizeof(float)), PP_OK, "pp_malloc"))
    return;
  float *host = th_xmalloc(total * sizeof(float));
  for (size_t i = 0; i < total; i++) host[i] = SENTINEL;
  CHECK_STATUS(pp_copy(ctx, block, host, total * sizeof(float)), PP_OK, "pp_copy in");
  float *dst = block + p->offset;
  pp_status st = separable ? pp_conv2d_separable(ctx, src, W, H, W, row, rl, col, cl, b, dst, p->pitch)
                           : pp_conv2d(ctx, src, W, H, W, outer, rl, cl, b, dst, p->pitch);
  const char *bn = b == PP_BORDER_ZERO ? "zero" : b == PP_BORDER_CLAMP ? "clamp" : "mirror";
  if (CHECK_STATUS(st, PP_OK, "%s %zux%zu %s, %s (%s)", separable ? "separable" : "conv2d", rl,
                   cl, bn, p->name, pp_last_error(ctx)) &&
      CHECK_STATUS(pp_copy(ctx, host, block, total * sizeof(float)), PP_OK, "pp_copy out")) {
    long wrong = 0, first = -1, touched = 0;
    for (size_t y = 0; y < H; y++) {
      const float *got = host + p->offset + y * p->pitch;
      for (size_t x = 0; x < W; x++)
        if (got[x] != (float)ref[y * W + x] && wrong++ == 0) first = (long)(y * W + x);
      for (size_t x = W; x < p->pitch; x++) touched += got[x] != SENTINEL;
    }
    touched += host[total - 1] != SENTINEL;
    if (p->offset) touched += host[0] != SENTINEL;
    CHECK(wrong == 0, "%s %zux%zu %s, %s: %ld pixels differ, first (%ld, %ld): %g want %d",
          separable ? "separable" : "conv2d", rl, cl, bn, p->name, wrong, first % W, first / W,
          wrong ? (double)host[p->offset + (size_t)(first / W) * p->pitch + (size_t)(first % W)] : 0.0,
          wrong ? ref[first] : 0);
    CHECK(touched == 0, "%s %zux%zu %s, %s: %ld floats outside the rows written",
          separable ? "separable" : "conv2d", rl, cl, bn, p->name, touched);
  }
  free(host);
  pp_free(ctx, block);
}

static void test_streamed_outputs(pp_context *ctx) {
  th_rng r = th_rng_make(11);
  float *src = th_xmalloc((size_t)W * H * sizeof(float));
  int *ref = th_xmalloc((size_t)W * H * sizeof(int));
  for (size_t i = 0; i < (size_t)W * H; i++) src[i] = (float)((int)th_below(&r, 17) - 8);
  static const pp_border borders[] = {PP_BORDER_ZERO, PP_BORDER_CLAMP, PP_BORDER_MIRROR};
  static const struct {
    size_t rl, cl;
    bool separable;
  } filters[] = {{3, 3, false}, {5, 5, false}, {3, 3, true}, {7, 5, true}};
  size_t k = 0;
  for (size_t bi = 0; bi < 3; bi++)
    for (size_t fi = 0; fi < sizeof filters / sizeof filters[0]; fi++, k++)
      run_case(ctx, &r, src, ref, filters[fi].rl, filters[fi].cl, filters[fi].separable,
               borders[bi], &places[k % sizeof places / sizeof places[0]]);
  free(src);
  free(ref);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  test_streamed_outputs(ctx);
  return th_finish(ctx);
}
