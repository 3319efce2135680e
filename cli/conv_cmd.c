/*
 * conv_cmd.c — `parprim conv IN OUT --filter F [--border B] [--backend B]`: filters a
 * PGM/PPM image with pp_conv2d (or pp_conv2d_separable for the separable filters) and
 * writes PGM/PPM/PNG, chosen by OUT's extension (cli/image_io.h).
 *
 * Every channel is filtered on its own as an f32 plane of 0..255 values. Filters whose
 * weights sum to about 1 (blurs, sharpen) give pixel values: they are rounded and clamped
 * to 0..255. Filters whose weights sum to 0 (sobel, most edge detectors given as a FILE)
 * give signed responses: the picture shows their magnitude, scaled so that the strongest
 * response over the image is white.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include "bench.h"
#include "image_io.h"
#include "parprim.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONV_EXIT_USAGE 2
#define CONV_MAX_FILTER_SIDE 4097

void pp_cli_conv_usage(FILE *f) {
  fputs("usage: parprim conv IN OUT --filter F [--border zero|clamp|mirror] [--backend B]\n"
        "\n"
        "Filters the image IN (PGM or PPM) and writes OUT (.pgm, .ppm or .png), every\n"
        "channel separately, with pp_conv2d (correlation, filter centred at (w/2, h/2)).\n"
        "\n"
        "  --filter F    gauss:SIGMA  Gaussian blur, 2*ceil(3*SIGMA)+1 taps a side (separable)\n"
        "                box:N        N x N mean (separable)\n"
        "                sharpen      3x3: 5 in the centre, -1 at its four neighbours\n"
        "                sobel-x      3x3 horizontal gradient (edges shown as magnitude)\n"
        "                sobel-y      3x3 vertical gradient\n"
        "                FILE         a text file: width height, then height rows of width\n"
        "                             weights ('#' starts a comment)\n"
        "  --border B    outside the image: zero, clamp (default) or mirror\n"
        "  --backend B   cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
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

/* Reads "width height w00 w01 ..." with '#' comments. */
static bool read_filter_file(const char *path, conv_filter *f, char *err, size_t errlen) {
  FILE *in = fopen(path, "r");
  if (!in) {
    snprintf(err, errlen, "cannot open filter file '%s': %s", path, strerror(errno));
    return false;
  }
  double dims[2];
  size_t got = 0, need = 2;
  char tok[128];
  bool ok = true;
  while (ok && got < need && fscanf(in, "%127s", tok) == 1) {
    if (tok[0] == '#') { /* skip to the end of the line */
      int c;
      while ((c = fgetc(in)) != EOF && c != '\n') {}
      continue;
    }
    double v;
    if (!parse_number(tok, &v)) {
      snprintf(err, errlen, "'%s': '%s' is not a number", path, tok);
      ok = false;
    } else if (got < 2) {
      dims[got++] = v;
      if (got == 2) {
        if (dims[0] < 1 || dims[1] < 1 || dims[0] > CONV_MAX_FILTER_SIDE ||
            dims[1] > CONV_MAX_FILTER_SIDE || dims[0] != floor(dims[0]) ||
            dims[1] != floor(dims[1])) {
          snprintf(err, errlen, "'%s': width and height must be whole numbers 1..%d", path,
                   CONV_MAX_FILTER_SIDE);
          ok = false;
        } else {
          f->fw = (size_t)dims[0];
          f->fh = (size_t)dims[1];
          f->w = malloc(f->fw * f->fh * sizeof(float));
          need = 2 + f->fw * f->fh;
          if (!f->w) {
            snprintf(err, errlen, "out of memory");
            ok = false;
          }
        }
      }
    } else {
      f->w[got++ - 2] = (float)v;
    }
  }
  fclose(in);
  if (ok && got < need) {
    snprintf(err, errlen, "'%s': %zu weights expected, %zu found", path, need - 2,
             got > 2 ? got - 2 : 0);
    ok = false;
  }
  return ok;
}

static bool make_filter(const char *spec, conv_filter *f, char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  double v;
  if (strncmp(spec, "gauss:", 6) == 0 || strncmp(spec, "box:", 4) == 0) {
    bool gauss = spec[0] == 'g';
    const char *num = spec + (gauss ? 6 : 4);
    if (!parse_number(num, &v) || v <= 0 || v > (gauss ? 600 : CONV_MAX_FILTER_SIDE) ||
        (!gauss && v != floor(v))) {
      snprintf(err, errlen, "bad %s filter '%s' (%s)", gauss ? "gauss" : "box", spec,
               gauss ? "SIGMA > 0" : "N a whole number >= 1");
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
  return read_filter_file(spec, f, err, errlen);
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
    if (strcmp(a, "--filter") == 0 || strcmp(a, "--border") == 0 || strcmp(a, "--backend") == 0) {
      if (i + 1 >= argc) return usage_error("%s needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 'f') {
        spec = v;
      } else if (a[3] == 'o') { /* --border */
        if (strcmp(v, "zero") == 0) border = PP_BORDER_ZERO;
        else if (strcmp(v, "clamp") == 0) border = PP_BORDER_CLAMP;
        else if (strcmp(v, "mirror") == 0) border = PP_BORDER_MIRROR;
        else return usage_error("bad --border '%s' (zero, clamp or mirror)", v);
      } else if (bench_parse_backend(v, &backend)) {
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

  char err[512];
  conv_filter f;
  if (!make_filter(spec, &f, err, sizeof err)) {
    fprintf(stderr, "parprim conv: %s\n", err);
    free(f.w);
    free(f.row);
    return CONV_EXIT_USAGE;
  }
  cli_image img = {0}, out = {0};
  if (cli_image_read(paths[0], &img, err, sizeof err) != 0) {
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
    for (size_t c = 0; c < ch && s == PP_OK; c++) {
      for (size_t i = 0; i < px; i++) plane[i] = img.pixels[i * ch + c];
      double t = now_s();
      s = f.separable ? pp_conv2d_separable(ctx, plane, img.width, img.height, img.width, f.row,
                                            f.fw, f.row, f.fw, border, res + c * px, img.width)
                      : pp_conv2d(ctx, plane, img.width, img.height, img.width, f.w, f.fw, f.fh,
                                  border, res + c * px, img.width);
      busy += now_s() - t;
    }
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
      if (cli_image_write(paths[1], &out, err, sizeof err) != 0) {
        fprintf(stderr, "parprim conv: %s\n", err);
      } else {
        printf("%s: %zux%zu, %zu channel%s, %s filter %zux%zu%s, %s borders -> %s\n", paths[0],
               img.width, img.height, ch, ch == 1 ? "" : "s", spec, f.fw, f.fh,
               f.separable ? " (separable)" : "",
               border == PP_BORDER_ZERO ? "zero" : border == PP_BORDER_CLAMP ? "clamp" : "mirror",
               paths[1]);
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
