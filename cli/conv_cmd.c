/*
 * conv_cmd.c — `parprim conv IN OUT --filter F [--border B] [--backend B]`: filters a
 * PNG, JPEG, PGM or PPM image with pp_conv2d (or pp_conv2d_separable for the separable
 * filters) and writes PNG/PGM/PPM, chosen by OUT's extension (cli/image_io.h).
 *
 * Every channel is filtered on its own as an f32 plane of 0..255 values. Filters whose
 * weights sum to about 1 (blurs, sharpen) give pixel values: they are rounded and clamped
 * to 0..255. Filters whose weights sum to 0 (sobel, most edge detectors given as a FILE)
 * give signed responses: the picture shows their magnitude, scaled so that the strongest
 * response over the image is white.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "common.h"
#include "filter_file.h"
#include "image_io.h"
#include "out_file.h"
#include "progress.h"
#include "raw_file.h"
#include "parprim.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define CONV_EXIT_USAGE 2
#define CONV_MAX_FILTER_SIDE 4097
#define CONV_MAX_SIGMA 600 /* 3601 taps a side */

void pp_cli_conv_usage(FILE *f) {
  fputs("usage: parprim conv IN OUT --filter F [--border zero|clamp|mirror] [--backend B]\n"
        "                     [--quiet]\n"
        "\n"
        "Filters the image IN (PNG, JPEG, PGM or PPM) and writes OUT (.png, .pgm, .ppm or\n"
        ".pnm), every channel separately, with pp_conv2d (correlation, filter centred at\n"
        "(w/2, h/2)). A colour image written to .pgm is converted to grey (BT.601 luma);\n"
        "alpha is kept in PNG only. OUT may be IN: it is replaced only once written whole.\n"
        "\n"
        "  --filter F    gauss:SIGMA  Gaussian blur, 2*ceil(3*SIGMA)+1 taps a side, SIGMA\n"
        "                             up to 600 (separable)\n"
        "                box:N        N x N mean, N up to 4097 (separable)\n"
        "                sharpen      3x3: 5 in the centre, -1 at its four neighbours\n"
        "                sobel-x      3x3 horizontal gradient (edges shown as magnitude)\n"
        "                sobel-y      3x3 vertical gradient\n"
        "                FILE         a text file: width height, then height rows of width\n"
        "                             weights ('#' starts a comment)\n"
        "  --border B    outside the image: zero, clamp (default) or mirror\n"
        "  --backend B   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --quiet       no progress line on stderr\n"
        "\n"
        "Weights summing to about 1 give pixel values (rounded, clamped to 0..255); weights\n"
        "summing to 0 give signed responses, drawn as their magnitude scaled to 0..255.\n",
        f);
}

typedef struct conv_filter {
  size_t fw, fh;
  float *w;        /* fw * fh weights, row by row (2D filters) */
  float *row;      /* separable filters: row_len = fw, col = row (square) */
  bool separable;
} conv_filter;

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "parprim conv: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  pp_cli_conv_usage(stderr);
  return CONV_EXIT_USAGE;
}

static bool parse_number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return errno == 0 && end != s && *end == '\0' && isfinite(*v);
}

/* A filter file (filter_file.h). A name that is no file gets the list of the built-in
 * filters, in case it was meant as one of them; *usage is set then. */
static bool read_filter_file(const char *path, conv_filter *f, bool *usage, char *err,
                             size_t errlen) {
  void *text = NULL;
  size_t len = 0;
  struct stat st;
  if (stat(path, &st) != 0 && errno == ENOENT) {
    *usage = true;
    snprintf(err, errlen,
             "--filter '%s': no such file, and not a built-in filter (gauss:SIGMA, box:N, "
             "sharpen, sobel-x, sobel-y)",
             path);
    return false;
  }
  if (cli_read_file(path, &text, &len, NULL, NULL, err, errlen) != 0) return false;
  cli_filter_weights fw;
  int rc = cli_filter_parse(text, len, path, CONV_MAX_FILTER_SIDE, &fw, err, errlen);
  free(text);
  if (rc != 0) return false;
  f->fw = fw.width;
  f->fh = fw.height;
  f->w = fw.w;
  return true;
}

static bool make_filter(const char *spec, conv_filter *f, bool *usage, char *err,
                        size_t errlen) {
  memset(f, 0, sizeof *f);
  *usage = false;
  double v;
  if (strncmp(spec, "gauss:", 6) == 0 || strncmp(spec, "box:", 4) == 0) {
    bool gauss = spec[0] == 'g';
    const char *num = spec + (gauss ? 6 : 4);
    if (!parse_number(num, &v) || v <= 0 || v > (gauss ? CONV_MAX_SIGMA : CONV_MAX_FILTER_SIDE) ||
        (!gauss && v != floor(v))) {
      *usage = true;
      if (gauss)
        snprintf(err, errlen, "bad gauss filter '%s' (SIGMA a number in (0, %d]: %d taps a side at most)",
                 spec, CONV_MAX_SIGMA, 2 * 3 * CONV_MAX_SIGMA + 1);
      else
        snprintf(err, errlen, "bad box filter '%s' (N a whole number 1..%d)", spec,
                 CONV_MAX_FILTER_SIDE);
      return false;
    }
    size_t k = gauss ? 2 * (size_t)ceil(3 * v) + 1 : (size_t)v;
    f->fw = f->fh = k;
    f->separable = true;
    f->row = malloc(k * sizeof(float));
    if (!f->row) {
      snprintf(err, errlen, "out of memory");
      return false;
    }
    double sum = 0;
    for (size_t i = 0; i < k; i++) {
      double d = (double)i - (double)(k / 2);
      double w = gauss ? exp(-d * d / (2 * v * v)) : 1.0;
      f->row[i] = (float)w;
      sum += w;
    }
    for (size_t i = 0; i < k; i++) f->row[i] = (float)(f->row[i] / sum);
    return true;
  }
  static const float sharpen[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
  static const float sobel_x[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
  static const float sobel_y[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1};
  const float *fixed = strcmp(spec, "sharpen") == 0   ? sharpen
                       : strcmp(spec, "sobel-x") == 0 ? sobel_x
                       : strcmp(spec, "sobel-y") == 0 ? sobel_y
                                                      : NULL;
  if (fixed) {
    f->fw = f->fh = 3;
    f->w = malloc(sizeof sharpen);
    if (!f->w) {
      snprintf(err, errlen, "out of memory");
      return false;
    }
    memcpy(f->w, fixed, sizeof sharpen);
    return true;
  }
  return read_filter_file(spec, f, usage, err, errlen);
}

static double filter_sum(const conv_filter *f) {
  double s = 0;
  if (f->separable) {
    for (size_t i = 0; i < f->fw; i++) s += f->row[i];
    return s * s;
  }
  for (size_t i = 0; i < f->fw * f->fh; i++) s += f->w[i];
  return s;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int pp_cli_conv_main(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL}, *spec = NULL;
  pp_border border = PP_BORDER_CLAMP;
  pp_backend backend = PP_BACKEND_AUTO;
  int npaths = 0;
  for (int i = argc > 0 && strcmp(argv[0], "conv") == 0 ? 1 : 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      pp_cli_conv_usage(stdout);
      return 0;
    }
    if (strcmp(a, "--quiet") == 0) {
      cli_progress_allow(false);
    } else if (strcmp(a, "--filter") == 0 || strcmp(a, "--border") == 0 ||
               strcmp(a, "--backend") == 0) {
      if (i + 1 >= argc) return usage_error("%s needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 'f') {
        spec = v;
      } else if (a[3] == 'o') { /* --border */
        if (strcmp(v, "zero") == 0) border = PP_BORDER_ZERO;
        else if (strcmp(v, "clamp") == 0) border = PP_BORDER_CLAMP;
        else if (strcmp(v, "mirror") == 0) border = PP_BORDER_MIRROR;
        else return usage_error("bad --border '%s' (zero, clamp or mirror)", v);
      } else if (cli_parse_backend(v, &backend)) {
        return usage_error("bad --backend '%s' (cpu, cuda or auto)", v);
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option '%s'", a);
    } else if (npaths < 2) {
      paths[npaths++] = a;
    } else {
      return usage_error("unexpected argument '%s'", a);
    }
  }
  if (npaths < 2) return usage_error("%s", "IN and OUT are required");
  if (!spec) return usage_error("%s", "--filter is required");
  if (cli_image_format_of(paths[1]) == CLI_IMAGE_UNKNOWN)
    return usage_error("OUT '%s' needs the extension .png, .pgm, .ppm or .pnm", paths[1]);

  char err[512];
  conv_filter f;
  bool usage = false;
  if (!make_filter(spec, &f, &usage, err, sizeof err)) {
    fprintf(stderr, "parprim conv: %s\n", err);
    free(f.w);
    free(f.row);
    return usage ? CONV_EXIT_USAGE : 1;
  }
  cli_image img = {0}, out = {0};
  if (cli_out_check(paths[1], err, sizeof err) != 0 ||
      cli_image_read(paths[0], &img, err, sizeof err) != 0) {
    fprintf(stderr, "parprim conv: %s\n", err);
    free(f.w);
    free(f.row);
    return 1;
  }
  int rc = 1;
  pp_context *ctx = NULL;
  size_t px = img.width * img.height, ch = (size_t)img.channels;
  float *plane = malloc(px * sizeof(float)), *res = malloc(ch * px * sizeof(float));
  pp_status s = pp_create(&ctx, backend);
  if (s != PP_OK) {
    fprintf(stderr, "parprim conv: pp_create: %s (%s)\n", pp_status_string(s), pp_last_error(NULL));
  } else if (!plane || !res || cli_image_alloc(&out, img.width, img.height, img.channels) != 0) {
    fprintf(stderr, "parprim conv: out of memory for a %zux%zu image\n", img.width, img.height);
  } else {
    double t0 = now_s(), busy = 0;
    s = PP_OK;
    cli_progress_begin("parprim conv: filtering");
    for (size_t c = 0; c < ch && s == PP_OK; c++) {
      for (size_t i = 0; i < px; i++) plane[i] = img.pixels[i * ch + c];
      double t = now_s();
      s = f.separable ? pp_conv2d_separable(ctx, plane, img.width, img.height, img.width, f.row,
                                            f.fw, f.row, f.fw, border, res + c * px, img.width)
                      : pp_conv2d(ctx, plane, img.width, img.height, img.width, f.w, f.fw, f.fh,
                                  border, res + c * px, img.width);
      busy += now_s() - t;
      cli_progress_update((double)(c + 1), (double)ch, "channels");
    }
    cli_progress_end();
    if (s != PP_OK) {
      fprintf(stderr, "parprim conv: %s: %s\n", pp_status_string(s), pp_last_error(ctx));
    } else {
      /* signed responses (weights summing to 0) are drawn as magnitude, max -> 255 */
      bool magnitude = fabs(filter_sum(&f)) < 1e-3;
      double scale = 1.0;
      if (magnitude) {
        double peak = 0;
        for (size_t i = 0; i < ch * px; i++) peak = fmax(peak, fabs((double)res[i]));
        scale = peak > 0 ? 255.0 / peak : 1.0;
      }
      for (size_t c = 0; c < ch; c++)
        for (size_t i = 0; i < px; i++) {
          double v = res[c * px + i];
          v = magnitude ? fabs(v) * scale : v;
          v = isnan(v) ? 0 : v < 0 ? 0 : v > 255 ? 255 : v;
          out.pixels[i * ch + c] = (uint8_t)lround(v);
        }
      int converted = 0;
      if (cli_image_write(paths[1], &out, &converted, err, sizeof err) != 0) {
        fprintf(stderr, "parprim conv: %s\n", err);
      } else {
        printf("%s: %zux%zu, %zu channel%s, %s filter %zux%zu%s, %s borders -> %s%s\n", paths[0],
               img.width, img.height, ch, ch == 1 ? "" : "s", spec, f.fw, f.fh,
               f.separable ? " (separable)" : "",
               border == PP_BORDER_ZERO ? "zero" : border == PP_BORDER_CLAMP ? "clamp" : "mirror",
               paths[1],
               !converted      ? ""
               : ch >= 3 && cli_image_format_of(paths[1]) == CLI_IMAGE_PGM ? " (converted to grey)"
                               : " (alpha dropped)");
        printf("backend %s: %.3f ms in the convolution calls (transfers included), %.3f ms in all\n",
               pp_backend_string(pp_backend_of(ctx)), busy * 1e3, (now_s() - t0) * 1e3);
        rc = 0;
      }
    }
  }
  pp_destroy(ctx);
  cli_image_free(&img);
  cli_image_free(&out);
  free(plane);
  free(res);
  free(f.w);
  free(f.row);
  return rc;
}
