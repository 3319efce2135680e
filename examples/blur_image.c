/* blur_image.c — a Gaussian blur of a gray image: two 1-D passes (pp_conv2d_separable),
 * the edge pixels repeated beyond the border.
 *
 *   blur_image in.pgm out.pgm [SIGMA]   (a colour PPM is blurred as gray; SIGMA 2 by default)
 *   blur_image out.pgm                  (blurs a generated test card)
 */
#include "pnm.h"
#include <math.h>
#include <parprim.h>

/* the largest difference between two neighbouring pixels: a blur can only lower it */
static float steepest(const float *p, size_t w, size_t h) {
  float m = 0;
  for (size_t i = 0; i < w * h; i++) {
    if (i % w + 1 < w) m = fmaxf(m, fabsf(p[i + 1] - p[i]));
    if (i + w < w * h) m = fmaxf(m, fabsf(p[i + w] - p[i]));
  }
  return m;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: %s [IN.pgm] OUT.pgm [SIGMA]\n", argv[0]);
    return 2;
  }
  const float sigma = argc == 4 ? (float)atof(argv[3]) : 2.0f;
  if (!(sigma > 0 && sigma <= 100)) {
    fprintf(stderr, "SIGMA (pixels) must be in (0, 100]\n");
    return 2;
  }
  image img = {256, 256, 1, NULL};
  if (argc == 2) { /* a bright square and diagonal stripes on a dark ground */
    img.pixels = malloc(256 * 256);
    for (size_t i = 0; img.pixels && i < 256 * 256; i++) {
      size_t x = i % 256, y = i / 256, square = x > 64 && x < 192 && y > 64 && y < 192;
      img.pixels[i] = (unsigned char)(square ? 230 : (x + y) % 32 < 16 ? 90 : 20);
    }
  } else if (pnm_read(argv[1], &img) != 0) {
    fprintf(stderr, "%s: not a readable 8-bit PGM/PPM file\n", argv[1]);
    return 1;
  }
  const size_t w = img.width, h = img.height, n = w * h;
  const int radius = (int)ceilf(3 * sigma); /* the Gaussian beyond 3 sigma is negligible */
  float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  float *taps = malloc((2 * (size_t)radius + 1) * sizeof *taps), total = 0;
  if (!img.pixels || !in || !out || !taps) return 1;
  for (size_t i = 0; i < n; i++) { /* colour to gray with the Rec. 601 weights */
    const unsigned char *p = img.pixels + i * (size_t)img.channels;
    in[i] = img.channels == 3 ? 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2] : p[0];
  }
  for (int t = -radius; t <= radius; t++) {
    taps[t + radius] = expf(-(float)(t * t) / (2 * sigma * sigma));
    total += taps[t + radius];
  }
  for (int t = 0; t <= 2 * radius; t++) taps[t] /= total; /* keep the brightness */

  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  pp_status s = pp_conv2d_separable(ctx, in, w, h, w, taps, 2 * (size_t)radius + 1, taps,
                                    2 * (size_t)radius + 1, PP_BORDER_CLAMP, out, w);
  if (s != PP_OK) fprintf(stderr, "pp_conv2d_separable: %s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  if (s != PP_OK) return 1;

  image gray = {w, h, 1, img.pixels}; /* the input's bytes are not needed any more */
  for (size_t i = 0; i < n; i++) gray.pixels[i] = (unsigned char)fminf(255, fmaxf(0, out[i] + 0.5f));
  float before = steepest(in, w, h), after = steepest(out, w, h);
  printf("%zu x %zu, sigma %.2f: steepest step %.1f before, %.1f after\n", w, h, sigma, before,
         after);
  if (pnm_write(argv[argc == 2 ? 1 : 2], &gray) != 0) {
    perror(argv[argc == 2 ? 1 : 2]);
    return 1;
  }
  free(in), free(out), free(taps), free(img.pixels);
  return after <= before + 1e-3f ? 0 : 1;
}
