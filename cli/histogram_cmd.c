/*
 * histogram_cmd.c — `parprim histogram`: the histogram of an image (PNG, JPEG, PGM/PPM, through
 * cli/image_io.h) or of a raw binary file of numbers, with per-channel statistics, a bar
 * chart in the terminal, --csv for the counts and --plot for a picture of them (plot.h).
 *
 *   parprim histogram IMAGE [--csv] [--plot out.png] [--backend B]
 *   parprim histogram FILE --type T --bins B [--lo L --hi H] [--csv] [--plot out.png]
 *
 * Images go through pp_histogram_image (counts[channel][256]); numbers through
 * pp_histogram_even over [L, H) (default: the finite minimum to just above the maximum,
 * so every finite value is counted).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "common.h"
#include "image_io.h"
#include "out_file.h"
#include "plot.h"
#include "progress.h"
#include "parprim.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_ROWS 32      /* terminal chart: the 256 values in 32 groups of 8 */
#define CHART_WIDTH 50     /* characters of the longest bar */

void pp_cli_histogram_usage(FILE *f) {
  fputs("usage: parprim histogram IMAGE [--csv] [--plot OUT] [--log] [--backend cpu|cuda|auto]\n"
        "       parprim histogram FILE --type T [--bins B] [--lo L --hi H] [--csv] [--plot OUT]\n"
        "                         [--log] [--quiet]\n"
        "\n"
        "Counts the values of an image (PNG, JPEG, PGM or PPM; 8 bits a sample, wider\n"
        "samples scaled) per channel with pp_histogram_image, or of a raw binary file of\n"
        "numbers of type T in B even bins over [L, H) with pp_histogram_even, and prints\n"
        "statistics and a bar chart.\n"
        "\n"
        "  --type T      u8, i32, u32, i64, u64, f32, f64: FILE is a raw array, not an image\n"
        "  --bins B      bin count for --type (default 64)\n"
        "  --lo L, --hi H  the range of the bins (default: the data's finite minimum and\n"
        "                just above its maximum); values outside and NaN are not counted\n"
        "  --csv         print the counts as CSV instead of the chart\n"
        "  --plot OUT    draw the histogram with axes and a legend into OUT: .png, .svg,\n"
        "                .ppm, .pgm or .pnm (checked before any work)\n"
        "  --log         plot counts on a log scale, log10(1 + count); the default is\n"
        "                linear, every bar at its true height (the plot names its scale)\n"
        "  --backend B   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --quiet       no progress line on stderr\n"
        "  -h, --help    this text\n"
        "\n"
        "Exit status: 0 done; 1 a file could not be read or written or the histogram failed;\n"
        "2 usage error.\n",
        f);
}

typedef struct hist_opts {
  const char *in, *plot;
  bool csv, log, have_type, have_lo, have_hi;
  pp_dtype type;
  size_t bins;
  double lo, hi;
  pp_backend backend;
} hist_opts;

/* -1 when parsed, else the exit code. */
static int parse(int argc, char **argv, hist_opts *o) {
  enum { OPT_PLOT };
  const cli_option options[] = {
      CLI_DTYPE("--type", &o->type, &o->have_type, CLI_OPTIONAL),
      CLI_SIZE("--bins", &o->bins, CLI_OPTIONAL, 1, 0, "--bins needs a positive count, not '%s'"),
      CLI_NUMBER("--lo", &o->lo, &o->have_lo, "--lo needs a finite number, not '%s'"),
      CLI_NUMBER("--hi", &o->hi, &o->have_hi, "--hi needs a finite number, not '%s'"),
      CLI_VALUE("--plot", OPT_PLOT),
      CLI_BACKEND("--backend", &o->backend),
      CLI_FLAG("--csv", &o->csv),
      CLI_FLAG("--log", &o->log),
      CLI_QUIET,
  };
  cli_scan sc = CLI_SCAN("histogram", pp_cli_histogram_usage, options, argc, argv, &o->in,
                         "no input file");
  int got;
  while ((got = cli_scan_next(&sc)) == OPT_PLOT) {
    if (!*sc.val) return cli_scan_error(&sc, "%s", "--plot needs a file name");
    if (!cli_plot_extension_ok(sc.val))
      return cli_scan_error(
          &sc, "--plot '%s': the name must end in .png, .svg, .ppm, .pgm or .pnm", sc.val);
    o->plot = sc.val;
  }
  if (got == CLI_SCAN_EXIT) return sc.exit;
  if (!o->have_type && (o->bins || o->have_lo || o->have_hi))
    return cli_scan_error(&sc, "%s", "--bins, --lo and --hi go with --type (images have 256 bins)");
  if (o->have_lo && o->have_hi && !(o->lo < o->hi))
    return cli_scan_error(&sc, "%s", "--lo must be below --hi");
  if (o->have_lo && o->have_hi && !isfinite(o->hi - o->lo))
    return cli_scan_error(&sc, "%s", "--hi - --lo must be a finite number (the bins' width)");
  if (!o->bins) o->bins = 64;
  return -1;
}

/* ---- statistics and charts ---------------------------------------------------------- */

/* Statistics of one channel of counts over the values lo + (i + 0.5) * step (the bin
 * centres; for images step 1 and lo -0.5, so the centres are the values). */
typedef struct chan_stats {
  uint64_t total;
  double min, max, mean, stddev, median;
  size_t mode;
} chan_stats;

static chan_stats stats_of(const uint64_t *c, size_t bins, double lo, double step) {
  chan_stats s = {0, 0, 0, 0, 0, 0, 0};
  double sum = 0, sum2 = 0;
  size_t first = bins, last = 0;
  for (size_t i = 0; i < bins; i++) {
    if (!c[i]) continue;
    double x = lo + ((double)i + 0.5) * step;
    s.total += c[i];
    sum += (double)c[i] * x;
    sum2 += (double)c[i] * x * x;
    if (first == bins) first = i;
    last = i;
    if (c[i] > c[s.mode]) s.mode = i;
  }
  if (!s.total) return s;
  s.min = lo + ((double)first + 0.5) * step;
  s.max = lo + ((double)last + 0.5) * step;
  s.mean = sum / (double)s.total;
  double var = sum2 / (double)s.total - s.mean * s.mean;
  s.stddev = var > 0 ? sqrt(var) : 0;
  uint64_t half = (s.total + 1) / 2, run = 0;
  for (size_t i = 0; i < bins; i++) {
    run += c[i];
    if (run >= half) {
      s.median = lo + ((double)i + 0.5) * step;
      break;
    }
  }
  return s;
}

/* Horizontal bars: bins merged into at most CHART_ROWS rows, scaled to the largest. */
static void print_chart(const char *title, const uint64_t *c, size_t bins, double lo,
                        double step) {
  size_t rows = bins < CHART_ROWS ? bins : CHART_ROWS;
  uint64_t merged[CHART_ROWS] = {0}, top = 0;
  for (size_t i = 0; i < bins; i++) merged[i * rows / bins] += c[i];
  for (size_t r = 0; r < rows; r++)
    if (merged[r] > top) top = merged[r];
  printf("%s\n", title);
  for (size_t r = 0; r < rows; r++) {
    size_t b0 = (r * bins + rows - 1) / rows, b1 = ((r + 1) * bins + rows - 1) / rows;
    double from = lo + (double)b0 * step, to = lo + (double)b1 * step;
    int len = top ? (int)((double)merged[r] / (double)top * CHART_WIDTH + 0.5) : 0;
    printf("  [%10.4g, %10.4g) %12" PRIu64 " |", from, to, merged[r]);
    for (int k = 0; k < len; k++) putchar('#');
    putchar('\n');
  }
}

static int write_plot(const hist_opts *o, const uint64_t *counts, size_t bins, int channels,
                      const char *const *names, double lo, double hi, const char *title,
                      const char *xlabel) {
  cli_hist_plot p = {counts, bins, channels, names, lo, hi, o->log, title, xlabel};
  char err[512];
  if (cli_plot_histogram(o->plot, &p, err, sizeof err) != 0) {
    fprintf(stderr, "parprim histogram: %s\n", err);
    return 1;
  }
  printf("plot written to %s\n", o->plot);
  return 0;
}

/* ---- the two inputs ----------------------------------------------------------------- */

static int do_image(pp_context *ctx, const hist_opts *o) {
  cli_image img;
  char err[512];
  if (cli_image_read(o->in, &img, err, sizeof err) != 0) {
    fprintf(stderr, "parprim histogram: %s\n", err);
    return 1;
  }
  uint64_t counts[4 * 256];
  double t0 = cli_now_ms();
  pp_status s = pp_histogram_image(ctx, img.pixels, img.width, img.height,
                                   img.width * (size_t)img.channels, img.channels, counts);
  double ms = cli_now_ms() - t0;
  if (s != PP_OK) {
    cli_image_free(&img);
    return cli_call_failed("histogram", ctx, "pp_histogram_image", s);
  }
  static const char *const names[4][4] = {
      {"grey"}, {"grey", "alpha"}, {"red", "green", "blue"}, {"red", "green", "blue", "alpha"}};
  const int ch = img.channels;
  if (o->csv) {
    printf("value");
    for (int c = 0; c < ch; c++) printf(",%s", names[ch - 1][c]);
    putchar('\n');
    for (int v = 0; v < 256; v++) {
      printf("%d", v);
      for (int c = 0; c < ch; c++) printf(",%" PRIu64, counts[c * 256 + v]);
      putchar('\n');
    }
  } else {
    printf("%s: %zu x %zu, %d channel%s, %.3f ms on %s (transfers included)\n", o->in, img.width,
           img.height, ch, ch > 1 ? "s" : "", ms, pp_backend_string(pp_backend_of(ctx)));
    printf("%-6s %12s %5s %5s %8s %8s %7s %5s\n", "channel", "pixels", "min", "max", "mean",
           "stddev", "median", "mode");
    for (int c = 0; c < ch; c++) {
      chan_stats st = stats_of(counts + c * 256, 256, -0.5, 1.0);
      printf("%-7s %12" PRIu64 " %5.0f %5.0f %8.2f %8.2f %7.0f %5zu\n", names[ch - 1][c], st.total,
             st.min, st.max, st.mean, st.stddev, st.median, st.mode);
    }
    for (int c = 0; c < ch; c++) {
      char title[64];
      snprintf(title, sizeof title, "\n%s:", names[ch - 1][c]);
      print_chart(title, counts + c * 256, 256, 0, 1);
    }
  }
  char title[512];
  snprintf(title, sizeof title, "%s: %zu x %zu, %d channel%s", o->in, img.width, img.height, ch,
           ch > 1 ? "s" : "");
  int rc = o->plot ? write_plot(o, counts, 256, ch, names[ch - 1], 0, 256, title,
                                "sample value (8 bits)")
                   : 0;
  cli_image_free(&img);
  return rc;
}

static int do_raw(pp_context *ctx, const hist_opts *o) {
  void *data;
  size_t bytes;
  int rc;
  rc = cli_progress_read_raw("histogram", o->in, pp_dtype_size(o->type), &data, &bytes);
  if (rc) return 1;
  const size_t n = bytes / pp_dtype_size(o->type);
  double lo = o->lo, hi = o->hi;
  if (!o->have_lo || !o->have_hi) { /* the finite range of the data */
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
      double v = cli_value_at(o->type, data, i);
      if (isfinite(v)) {
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
    }
    if (mn > mx) mn = mx = 0; /* nothing finite */
    if (!o->have_lo) lo = mn;
    if (!o->have_hi) hi = nextafter(mx > lo ? mx : lo, INFINITY);
    if (!(lo < hi) || !isfinite(hi)) {
      fprintf(stderr, "parprim histogram: no usable range [%g, %g); give --lo and --hi\n", lo, hi);
      free(data);
      return 1;
    }
  }
  uint64_t *counts = malloc(o->bins * sizeof *counts);
  if (!counts) {
    fprintf(stderr, "parprim histogram: out of memory for %zu bins\n", o->bins);
    free(data);
    return 1;
  }
  double t0 = cli_now_ms();
  pp_status s = pp_histogram_even(ctx, o->type, data, n, o->bins, lo, hi, counts);
  double ms = cli_now_ms() - t0;
  const double step = (hi - lo) / (double)o->bins;
  if (!isfinite(step)) {
    fprintf(stderr, "parprim histogram: the range [%g, %g) is too wide for a double\n", lo, hi);
    rc = 1;
  } else if (s != PP_OK) {
    rc = cli_call_failed("histogram", ctx, "pp_histogram_even", s);
  } else if (o->csv) {
    printf("bin,lo,hi,count\n");
    for (size_t b = 0; b < o->bins; b++)
      printf("%zu,%.17g,%.17g,%" PRIu64 "\n", b, lo + (double)b * step,
             b + 1 == o->bins ? hi : lo + (double)(b + 1) * step, counts[b]);
  } else {
    chan_stats st = stats_of(counts, o->bins, lo, step);
    printf("%s: %zu values of %s, %zu bins over [%g, %g), %.3f ms on %s (transfers included)\n",
           o->in, n, pp_dtype_string(o->type), o->bins, lo, hi, ms,
           pp_backend_string(pp_backend_of(ctx)));
    printf("counted %" PRIu64 " (%zu outside or NaN); by bin centres: mean %g, stddev %g, "
           "median %g, fullest bin %zu\n",
           st.total, n - (size_t)st.total, st.mean, st.stddev, st.median, st.mode);
    print_chart("", counts, o->bins, lo, step);
  }
  if (rc == 0 && o->plot) {
    static const char *const name[1] = {"count"};
    char title[512], xlabel[128];
    snprintf(title, sizeof title, "%s: %zu values of %s", o->in, n, pp_dtype_string(o->type));
    snprintf(xlabel, sizeof xlabel, "value (%zu bins of width %g)", o->bins, step);
    rc = write_plot(o, counts, o->bins, 1, name, lo, hi, title, xlabel);
  }
  free(counts);
  free(data);
  return rc;
}

int pp_cli_histogram_main(int argc, char **argv) {
  hist_opts o = {0};
  o.backend = PP_BACKEND_AUTO;
  int rc = parse(argc, argv, &o);
  if (rc >= 0) return rc;
  char err[512];
  if (o.plot && cli_out_check(o.plot, err, sizeof err) != 0) {
    fprintf(stderr, "parprim histogram: --plot: %s\n", err);
    return 1;
  }
  pp_context *ctx = NULL;
  pp_status s = pp_create(&ctx, o.backend);
  if (s != PP_OK) {
    fprintf(stderr, "parprim histogram: pp_create: %s: %s\n", pp_status_string(s),
            pp_last_error(NULL));
    return 1;
  }
  rc = o.have_type ? do_raw(ctx, &o) : do_image(ctx, &o);
  pp_destroy(ctx);
  return rc;
}
