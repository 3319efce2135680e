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

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_PLOT_H */
