/*
 * plot.h — the histogram pictures of `parprim histogram --plot`, drawn with cairo
 * (cairographics.org: a 2D library with text, lines and fills that writes raster images
 * and SVG): axes with numbers, axis labels, the scale named on the axis, and a legend
 * with one entry per channel.
 */
#ifndef PP_CLI_PLOT_H
#define PP_CLI_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cli_hist_plot {
  const uint64_t *counts;   /* channels x bins, channel by channel */
  size_t bins;
  int channels;             /* 1 to 4 */
  const char *const *names; /* one per channel: "grey", "red", ... */
  double lo, hi;            /* bin b covers [lo + b (hi - lo) / bins, lo + (b + 1) ...) */
  bool log;                 /* vertical axis log10(1 + count) instead of count */
  const char *title, *xlabel;
} cli_hist_plot;

/* Whether path names a picture the plot can be written as: .png, .svg, .ppm, .pgm, .pnm. */
bool cli_plot_extension_ok(const char *path);
/* Draws p into path (SVG for .svg, else a raster image through image_io.h), through a
 * temporary file (out_file.h). 0, or -1 with a message in err. */
int cli_plot_histogram(const char *path, const cli_hist_plot *p, char *err, size_t errlen);

/* Writes a caption into the bottom-left corner of an RGB picture (an nbody frame) and, when
 * bar_px > 0, a scale bar bar_px pixels long labelled bar_label into the bottom-right one,
 * in pale ink on a dark translucent band so either shows on any background; nothing on a
 * picture under 128 x 64. -1 when the image is not 3 channels or cairo fails (the picture
 * is then unchanged). */
struct cli_image;
int cli_plot_caption(struct cli_image *img, const char *caption, double bar_px,
                     const char *bar_label);
/* 1, 2 or 5 times a power of ten, giving about target steps over range (axis ticks,
 * scale bars). */
double cli_plot_nice_step(double range, int target);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_PLOT_H */
