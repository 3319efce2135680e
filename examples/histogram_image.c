/* histogram_image.c — the histogram of each channel of an image, with a few statistics.
 *
 *   histogram_image photo.ppm      (binary PGM or PPM)
 *   histogram_image                (a generated colour gradient)
 */
#include "pnm.h"
#include <parprim.h>

int main(int argc, char **argv) {
  image img;
  if (argc > 1) {
    if (pnm_read(argv[1], &img) != 0) {
      fprintf(stderr, "%s: not a readable 8-bit PGM/PPM file\n", argv[1]);
      return 1;
    }
  } else { /* red rises left to right, green top to bottom, blue along the diagonal */
    img = (image){320, 240, 3, malloc(320 * 240 * 3)};
    for (size_t i = 0; img.pixels && i < img.width * img.height; i++) {
      size_t x = i % img.width, y = i / img.width;
      unsigned char *p = img.pixels + 3 * i;
      p[0] = (unsigned char)(x * 255 / (img.width - 1));
      p[1] = (unsigned char)(y * 255 / (img.height - 1));
      p[2] = (unsigned char)((x + y) / 2);
    }
  }
  uint64_t counts[3 * 256];
  pp_context *ctx;
  if (!img.pixels || pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  pp_status s = pp_histogram_image(ctx, img.pixels, img.width, img.height,
                                   img.width * (size_t)img.channels, img.channels, counts);
  if (s != PP_OK) fprintf(stderr, "pp_histogram_image: %s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  if (s != PP_OK) return 1;

  const size_t npix = img.width * img.height;
  const char *names[3] = {img.channels == 3 ? "red" : "gray", "green", "blue"};
  printf("%zu x %zu pixels, %d channel(s)\n", img.width, img.height, img.channels);
  for (int c = 0; c < img.channels; c++) {
    const uint64_t *h = counts + 256 * c;
    uint64_t total = 0, below = 0, bucket[8] = {0}, most = 1;
    double sum = 0;
    int median = -1;
    for (int v = 0; v < 256; v++) {
      total += h[v];
      sum += (double)v * (double)h[v];
      bucket[v / 32] += h[v]; /* 8 bars of 32 levels each */
      below += h[v];
      if (median < 0 && 2 * below >= npix) median = v;
    }
    for (int b = 0; b < 8; b++) most = bucket[b] > most ? bucket[b] : most;
    printf("\n%s: mean %.1f, median %d\n", names[c], sum / (double)npix, median);
    for (int b = 0; b < 8; b++)
      printf("  %3d-%3d %8llu %.*s\n", 32 * b, 32 * b + 31, (unsigned long long)bucket[b],
             (int)(40 * bucket[b] / most), "########################################");
    /* every pixel is counted once per channel */
    if (total != npix) {
      fprintf(stderr, "%s: %llu counts for %zu pixels\n", names[c], (unsigned long long)total,
              npix);
      return 1;
    }
  }
  free(img.pixels);
  return 0;
}
