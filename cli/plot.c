/*
 * plot.c — see plot.h.
 *
 * Each channel is drawn as the outline of its bars (a step line), not as a fill: outlines
 * of red, green and blue stay red, green and blue where they cross, where blended fills
 * mix into other colours. A single channel is filled as well. When there are more bins
 * than pixel columns, each column shows the largest of its bins, so a spike one bin wide
 * keeps its height. The linear scale (the default) puts every bar at its true height; the
 * log scale (log10(1 + count)) shows small counts beside a tall peak, and the axis says
 * which one is drawn.
 */
#define _POSIX_C_SOURCE 200809L

#include "plot.h"

#include "image_io.h"
#include "out_file.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define PLOT_W 800
#define PLOT_H 480
#define PLOT_LEFT 84
#define PLOT_RIGHT 24
#define PLOT_TOP 40
#define PLOT_BOTTOM 60
#define PLOT_FONT 13.0
#define PLOT_GAP 6 /* between the vertical axis and the first bin */

bool cli_plot_extension_ok(const char *path) {
  return cli_has_suffix(path, ".svg") || cli_image_format_of(path) != CLI_IMAGE_UNKNOWN;
}

double cli_plot_nice_step(double range, int target) {
  double raw = range / target;
  if (!(raw > 0) || !isfinite(raw)) return 1;
  double mag = pow(10, floor(log10(raw))), f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

typedef struct frame {
  double x0, y0, w, h; /* the plot area; y0 is its bottom */
  double ymax;         /* the value (count or log10(1 + count)) at the top */
  bool log;
} frame;

static double yval(const frame *f, double count) { return f->log ? log10(1 + count) : count; }
static double ypix(const frame *f, double count) { return f->y0 - yval(f, count) / f->ymax * f->h; }

static void text_at(cairo_t *cr, double x, double y, const char *s, double align_x,
                    double align_y) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_move_to(cr, x - e.x_bearing - align_x * e.width, y - e.y_bearing - align_y * e.height);
  cairo_show_text(cr, s);
}

static void count_label(double c, char *buf, size_t len) {
  if (c < 1e7)
    snprintf(buf, len, "%.0f", c);
  else
    snprintf(buf, len, "%.3g", c);
}

static void draw_axes(cairo_t *cr, const cli_hist_plot *p, const frame *f, uint64_t top) {
  char buf[64];
  cairo_set_line_width(cr, 1);
  /* horizontal grid and count ticks */
  /* log scale: the powers of ten up to the top; linear: multiples of a round step */
  double ystep = f->log ? 0 : cli_plot_nice_step(f->ymax, 5);
  for (double c = f->log ? 1 : 0; (f->log ? yval(f, c) : c) <= f->ymax * 1.0001;
       c = f->log ? c * 10 : c + ystep) {
    double y = ypix(f, c);
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, f->x0, floor(y) + 0.5);
    cairo_line_to(cr, f->x0 + f->w, floor(y) + 0.5);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    count_label(c, buf, sizeof buf);
    text_at(cr, f->x0 - PLOT_GAP - 6, y, buf, 1, 0.5);
  }
  /* value ticks */
  double range = p->hi - p->lo, step = cli_plot_nice_step(range, 8);
  cairo_set_source_rgb(cr, 0, 0, 0);
  for (double v = ceil(p->lo / step) * step; v <= p->hi + step * 1e-9; v += step) {
    double x = f->x0 + (v - p->lo) / range * f->w;
    cairo_move_to(cr, floor(x) + 0.5, f->y0);
    cairo_line_to(cr, floor(x) + 0.5, f->y0 + 5);
    cairo_stroke(cr);
    snprintf(buf, sizeof buf, "%g", fabs(v) < step * 1e-9 ? 0.0 : v);
    text_at(cr, x, f->y0 + 9, buf, 0.5, 0);
  }
  /* the frame's left and bottom edges; the left one stands PLOT_GAP pixels off the data,
   * so a spike in the first bin is not drawn over by it */
  cairo_move_to(cr, f->x0 - PLOT_GAP + 0.5, f->y0 - f->h);
  cairo_line_to(cr, f->x0 - PLOT_GAP + 0.5, f->y0 + 0.5);
  cairo_line_to(cr, f->x0 + f->w, f->y0 + 0.5);
  cairo_stroke(cr);
  /* labels: x below, y along the left edge, title above */
  text_at(cr, f->x0 + f->w / 2, PLOT_H - 8, p->xlabel ? p->xlabel : "value", 0.5, 1);
  cairo_save(cr);
  cairo_translate(cr, 16, f->y0 - f->h / 2);
  cairo_rotate(cr, -M_PI / 2);
  snprintf(buf, sizeof buf, "count (%s, largest %llu)",
           f->log ? "log scale: log10(1 + count)" : "linear scale", (unsigned long long)top);
  text_at(cr, 0, 0, buf, 0.5, 0.5);
  cairo_restore(cr);
  if (p->title) {
    cairo_save(cr);
    cairo_set_font_size(cr, PLOT_FONT + 2);
    text_at(cr, PLOT_W / 2.0, 12, p->title, 0.5, 0);
    cairo_restore(cr);
  }
}

/* The colour and dash of channel c out of n: grey alone; red, green, blue; alpha dashed. */
static void channel_style(cairo_t *cr, int c, int n) {
  static const double rgb[3][3] = {{0.85, 0.10, 0.10}, {0.05, 0.60, 0.10}, {0.10, 0.30, 0.95}};
  static const double dash[2] = {6, 4};
  bool alpha = (n == 2 && c == 1) || (n == 4 && c == 3);
  if (n <= 2 || alpha)
    cairo_set_source_rgb(cr, alpha ? 0.45 : 0.15, alpha ? 0.45 : 0.15, alpha ? 0.45 : 0.15);
  else
    cairo_set_source_rgb(cr, rgb[c][0], rgb[c][1], rgb[c][2]);
  cairo_set_dash(cr, dash, alpha ? 2 : 0, 0);
}

/* The outline of channel c's bars as one path, from the baseline back to it. */
static void channel_path(cairo_t *cr, const cli_hist_plot *p, const frame *f, int c) {
  const uint64_t *k = p->counts + (size_t)c * p->bins;
  const size_t cols = p->bins <= (size_t)f->w ? p->bins : (size_t)f->w;
  cairo_move_to(cr, f->x0, f->y0);
  for (size_t i = 0, b = 0; i < cols; i++) {
    size_t end = (i + 1) * p->bins / cols; /* bins [b, end) fall in column i */
    uint64_t m = 0;
    for (; b < end; b++) m = k[b] > m ? k[b] : m;
    double xa = f->x0 + (double)i * f->w / (double)cols, xb = f->x0 + (double)(i + 1) * f->w / (double)cols;
    double y = ypix(f, (double)m);
    cairo_line_to(cr, xa, y);
    cairo_line_to(cr, xb, y);
  }
  cairo_line_to(cr, f->x0 + f->w, f->y0);
}

static void draw_legend(cairo_t *cr, const cli_hist_plot *p, const frame *f) {
  const double row = PLOT_FONT + 6, width = 130, x = f->x0 + f->w - width - 8, y = f->y0 - f->h + 8;
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_rectangle(cr, x, y, width, row * p->channels + 8);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  for (int c = 0; c < p->channels; c++) {
    double yc = y + 4 + row * (c + 0.5);
    channel_style(cr, c, p->channels);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, x + 8, yc);
    cairo_line_to(cr, x + 40, yc);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, x + 48, yc, p->names[c], 0, 0.5);
  }
}

static void draw(cairo_t *cr, const cli_hist_plot *p) {
  uint64_t top = 0;
  for (size_t i = 0; i < p->bins * (size_t)p->channels; i++) top = p->counts[i] > top ? p->counts[i] : top;
  frame f = {PLOT_LEFT, PLOT_H - PLOT_BOTTOM, PLOT_W - PLOT_LEFT - PLOT_RIGHT,
             PLOT_H - PLOT_TOP - PLOT_BOTTOM, 1, p->log};
  if (p->log) {
    f.ymax = ceil(log10(1 + (double)(top ? top : 1)));
  } else {
    double step = cli_plot_nice_step(top ? (double)top : 1, 5);
    f.ymax = ceil((double)(top ? top : 1) / step) * step;
  }
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, PLOT_FONT);
  draw_axes(cr, p, &f, top);
  cairo_save(cr);
  cairo_rectangle(cr, f.x0, f.y0 - f.h - 2, f.w + 1, f.h + 2);
  cairo_clip(cr);
  if (p->channels == 1) {
    channel_path(cr, p, &f, 0);
    cairo_set_source_rgb(cr, 0.70, 0.70, 0.70);
    cairo_fill(cr);
  }
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
  for (int c = 0; c < p->channels; c++) {
    channel_path(cr, p, &f, c);
    channel_style(cr, c, p->channels);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
  }
  cairo_set_dash(cr, NULL, 0, 0);
  cairo_restore(cr);
  draw_legend(cr, p, &f);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len) {
  return fwrite(data, 1, len, (FILE *)closure) == len ? CAIRO_STATUS_SUCCESS
                                                      : CAIRO_STATUS_WRITE_ERROR;
}

static int plot_svg(const char *path, const cli_hist_plot *p, char *err, size_t errlen) {
  cli_out o;
  if (cli_out_open(&o, path, err, errlen) != 0) return -1;
  cairo_surface_t *s = cairo_svg_surface_create_for_stream(to_file, o.f, PLOT_W, PLOT_H);
  cairo_t *cr = cairo_create(s);
  draw(cr, p);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(s);
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(s);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS && !ferror(o.f)) {
    snprintf(err, errlen, "%s: cairo: %s", path, cairo_status_to_string(st));
    cli_out_abort(&o);
    return -1;
  }
  return cli_out_commit(&o, err, errlen); /* reports a write error with its reason */
}

static int plot_raster(const char *path, const cli_hist_plot *p, char *err, size_t errlen) {
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, PLOT_W, PLOT_H);
  cairo_t *cr = cairo_create(s);
  draw(cr, p);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  cli_image img;
  int rc = -1;
  if (st != CAIRO_STATUS_SUCCESS || cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    snprintf(err, errlen, "%s: cairo: %s", path,
             cairo_status_to_string(st != CAIRO_STATUS_SUCCESS ? st : cairo_surface_status(s)));
  } else if (cli_image_alloc(&img, PLOT_W, PLOT_H, 3) != 0) {
    snprintf(err, errlen, "%s: out of memory", path);
  } else {
    /* RGB24: one native 32-bit word per pixel, 0x00RRGGBB (cairo_format_t) */
    const unsigned char *data = cairo_image_surface_get_data(s);
    const int stride = cairo_image_surface_get_stride(s);
    for (size_t y = 0; y < PLOT_H; y++) {
      const uint32_t *row = (const uint32_t *)(const void *)(data + y * (size_t)stride);
      for (size_t x = 0; x < PLOT_W; x++) {
        uint8_t *px = img.pixels + (y * PLOT_W + x) * 3;
        px[0] = (uint8_t)(row[x] >> 16);
        px[1] = (uint8_t)(row[x] >> 8);
        px[2] = (uint8_t)row[x];
      }
    }
    rc = cli_image_write(path, &img, NULL, err, errlen);
    cli_image_free(&img);
  }
  cairo_surface_destroy(s);
  return rc;
}

int cli_plot_histogram(const char *path, const cli_hist_plot *p, char *err, size_t errlen) {
  if (!cli_plot_extension_ok(path)) {
    snprintf(err, errlen, "%s: unknown extension (.png, .svg, .ppm, .pgm, .pnm)", path);
    return -1;
  }
  return cli_has_suffix(path, ".svg") ? plot_svg(path, p, err, errlen)
                                 : plot_raster(path, p, err, errlen);
}

int cli_plot_caption(cli_image *img, const char *caption, double bar_px, const char *bar_label) {
  if (img->channels != 3 || img->width > 32767 || img->height > 32767) return -1;
  if (img->width < 128 || img->height < 64) return 0; /* no room for words */
  const int w = (int)img->width, h = (int)img->height;
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return -1;
  }
  /* the picture into the surface: one native 32-bit word per pixel, 0x00RRGGBB */
  cairo_surface_flush(s);
  unsigned char *data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  for (size_t y = 0; y < (size_t)h; y++) {
    uint32_t *row = (uint32_t *)(void *)(data + y * (size_t)stride);
    const uint8_t *px = img->pixels + y * (size_t)w * 3;
    for (size_t x = 0; x < (size_t)w; x++, px += 3)
      row[x] = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
  }
  cairo_surface_mark_dirty(s);
  cairo_t *cr = cairo_create(s);
  const double font = h >= 256 ? 13.0 : 9.0, band = font + 10;
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, font);
  cairo_set_source_rgba(cr, 0, 0, 0, 0.55);
  cairo_rectangle(cr, 0, h - band, w, band);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0.95, 0.95, 0.90);
  text_at(cr, 6, h - band / 2, caption, 0, 0.5);
  if (bar_px > 0 && bar_px < w / 2.0) {
    const double x1 = w - 8, x0 = x1 - bar_px, y = h - band / 2;
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, x0, y - 3);
    cairo_line_to(cr, x0, y + 3);
    cairo_move_to(cr, x0, y);
    cairo_line_to(cr, x1, y);
    cairo_move_to(cr, x1, y - 3);
    cairo_line_to(cr, x1, y + 3);
    cairo_stroke(cr);
    text_at(cr, x0 - 6, y, bar_label, 1, 0.5);
  }
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  if (st == CAIRO_STATUS_SUCCESS) {
    for (size_t y = 0; y < (size_t)h; y++) {
      const uint32_t *row = (const uint32_t *)(const void *)(data + y * (size_t)stride);
      uint8_t *px = img->pixels + y * (size_t)w * 3;
      for (size_t x = 0; x < (size_t)w; x++, px += 3) {
        px[0] = (uint8_t)(row[x] >> 16);
        px[1] = (uint8_t)(row[x] >> 8);
        px[2] = (uint8_t)row[x];
      }
    }
  }
  cairo_surface_destroy(s);
  return st == CAIRO_STATUS_SUCCESS ? 0 : -1;
}
