/*
 * image_io.c — see image_io.h: PNG through libpng (its low-level interface, so the stored
 * sample values come through as stored, with no gamma conversion: a histogram counts
 * what the file holds), JPEG through libjpeg, PGM/PPM by hand.
 *
 * Both libraries report errors through a callback that must not return; the decoders
 * longjmp back to the function that called setjmp, which frees what the job holds. All
 * state that changes after setjmp lives in a job struct reached through a pointer, so no
 * local of the setjmp frame is clobbered (C11 7.13.2.1).
 */
#include "image_io.h"

#include <ctype.h>
#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli_err.h"

int cli_image_alloc(cli_image *img, size_t width, size_t height, int channels) {
  memset(img, 0, sizeof *img);
  if (channels < 1 || channels > 4) return -1;
  size_t row = width * (size_t)channels;
  if (width && row / width != (size_t)channels) return -1;
  size_t bytes = row * height;
  if (row && bytes / row != height) return -1;
  img->pixels = calloc(bytes ? bytes : 1, 1);
  if (!img->pixels) return -1;
  img->width = width;
  img->height = height;
  img->channels = channels;
  return 0;
}

void cli_image_free(cli_image *img) {
  free(img->pixels);
  memset(img, 0, sizeof *img);
}

/* width * height * channels within CLI_IMAGE_MAX_BYTES, without overflow. */
static bool size_ok(size_t w, size_t h, size_t ch) {
  return w && h && w <= CLI_IMAGE_MAX_BYTES / ch && h <= CLI_IMAGE_MAX_BYTES / (w * ch);
}

/* ---- PGM / PPM ------------------------------------------------------------------------ */

typedef struct mem_in {
  const uint8_t *p;
  size_t len, pos;
} mem_in;

static int mem_get(mem_in *m) { return m->pos < m->len ? m->p[m->pos++] : EOF; }

/* Skips whitespace and '#' comments (to the end of their line); false at the end. */
static bool pnm_skip(mem_in *m) {
  int c;
  while ((c = mem_get(m)) != EOF) {
    if (c == '#') {
      while ((c = mem_get(m)) != EOF && c != '\n') {
      }
    } else if (!isspace(c)) {
      m->pos--;
      return true;
    }
  }
  return false;
}

enum { PNM_OK = 0, PNM_MISSING = -1, PNM_ABOVE = -2 };

/* A decimal header field or ASCII sample. Digits accumulate in 64 bits and stop as soon
 * as the value passes max (max <= 2^24, so v * 10 + 9 cannot overflow): a sample above
 * maxval is reported as such, never wrapped. */
static int pnm_number(mem_in *m, unsigned long max, unsigned long *out) {
  if (!pnm_skip(m)) return PNM_MISSING;
  uint64_t v = 0;
  int c, digits = 0;
  while ((c = mem_get(m)) != EOF && c >= '0' && c <= '9') {
    v = v * 10 + (uint64_t)(c - '0');
    digits++;
    if (v > max) return PNM_ABOVE;
  }
  if (c != EOF) m->pos--;
  if (!digits) return PNM_MISSING;
  *out = (unsigned long)v;
  return PNM_OK;
}

static int pnm_decode(const uint8_t *data, size_t len, const char *name, cli_image *img,
                      char *err, size_t errlen) {
  mem_in m = {data, len, 2};
  const char kind = (char)data[1];
  unsigned long w = 0, h = 0, maxval = 0;
  if (pnm_number(&m, 1ul << 24, &w) || pnm_number(&m, 1ul << 24, &h) ||
      pnm_number(&m, 65535, &maxval) || w == 0 || h == 0 || maxval == 0)
    return cli_fail(err, errlen, "%s: bad PGM/PPM header (width, height 1..2^24, maxval 1..65535)",
                name);
  const int channels = (kind == '3' || kind == '6') ? 3 : 1;
  const bool ascii = kind == '2' || kind == '3';
  if (!size_ok(w, h, (size_t)channels))
    return cli_fail(err, errlen, "%s: %lux%lu image is larger than %zu bytes", name, w, h,
                CLI_IMAGE_MAX_BYTES);
  const size_t count = (size_t)w * h * (size_t)channels;
  const size_t bps = maxval > 255 ? 2 : 1;
  if (!ascii) {
    int c = mem_get(&m); /* exactly one whitespace byte after maxval */
    if (c == EOF || !isspace(c)) return cli_fail(err, errlen, "%s: no pixel data after the header", name);
    if (len - m.pos < count * bps)
      return cli_fail(err, errlen, "%s: truncated pixel data (%zu of %zu samples)", name,
                  (len - m.pos) / bps, count);
  } else if ((len - m.pos + 1) / 2 < count) { /* every ASCII sample takes a digit and a space */
    return cli_fail(err, errlen, "%s: truncated: room for at most %zu of %zu samples", name,
                (len - m.pos + 1) / 2, count);
  }
  if (cli_image_alloc(img, w, h, channels) != 0)
    return cli_fail(err, errlen, "%s: %lux%lu image does not fit in memory", name, w, h);
  for (size_t i = 0; i < count; i++) {
    unsigned long v = 0;
    if (ascii) {
      int r = pnm_number(&m, maxval, &v);
      if (r != PNM_OK) {
        cli_image_free(img);
        return r == PNM_ABOVE
                   ? cli_fail(err, errlen, "%s: sample %zu above maxval %lu", name, i, maxval)
                   : cli_fail(err, errlen, "%s: sample %zu missing or not a number", name, i);
      }
    } else {
      v = bps == 2 ? (unsigned long)data[m.pos] << 8 | data[m.pos + 1] : data[m.pos];
      m.pos += bps;
      if (v > maxval) {
        cli_image_free(img);
        return cli_fail(err, errlen, "%s: sample %zu (%lu) above maxval %lu", name, i, v, maxval);
      }
    }
    img->pixels[i] = (uint8_t)((v * 255 + maxval / 2) / maxval);
  }
  return 0;
}

/* ---- PNG -------------------------------------------------------------------------------- */

typedef struct png_job {
  mem_in in;
  FILE *out;
  const char *name;
  char *err;
  size_t errlen;
  cli_image *img;
  png_bytep *rows;
  uint8_t *row; /* encoding: one converted row */
} png_job;

static void png_job_error(png_structp png, png_const_charp msg) {
  png_job *j = png_get_error_ptr(png);
  cli_fail(j->err, j->errlen, "%s: PNG: %s", j->name, msg);
  png_longjmp(png, 1);
}

/* Warnings (an unknown or damaged ancillary chunk) do not change the pixels. */
static void png_job_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static void png_job_read(png_structp png, png_bytep out, size_t n) {
  png_job *j = png_get_io_ptr(png);
  if (n > j->in.len - j->in.pos) png_error(png, "truncated file");
  memcpy(out, j->in.p + j->in.pos, n);
  j->in.pos += n;
}

/* Deflate expands at most 1032 times (zlib's technical details, "maximum compression
 * factor"), and a PNG sample grows at most 32 times on the way to 8-bit RGBA (1-bit
 * palette indices): an image claiming more pixels than that is truncated for sure, and
 * is refused before its buffer is allocated. */
#define PNG_MAX_EXPANSION ((size_t)1032 * 32)

static void png_decode_body(png_structp png, png_infop info, png_job *j) {
  png_set_read_fn(png, j, png_job_read);
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, ctype = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &ctype, NULL, NULL, NULL);
  if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_scale_16(png); /* round(v * 255 / 65535) */
  (void)png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int ch = png_get_channels(png, info);
  if (ch < 1 || ch > 4 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != (size_t)w * (size_t)ch)
    png_error(png, "unexpected pixel layout after conversion to 8 bits");
  if (!size_ok(w, h, (size_t)ch) || (size_t)w * h * (size_t)ch / PNG_MAX_EXPANSION > j->in.len)
    png_error(png, "image too large for its file or for memory");
  if (cli_image_alloc(j->img, w, h, ch) != 0) png_error(png, "out of memory");
  j->rows = malloc(h * sizeof *j->rows);
  if (!j->rows) png_error(png, "out of memory");
  for (size_t y = 0; y < h; y++) j->rows[y] = j->img->pixels + y * (size_t)w * (size_t)ch;
  png_read_image(png, j->rows);
}

typedef void (*png_body)(png_structp png, png_infop info, png_job *j);

/* Runs body (the decoder's with write false, the encoder's with write true) with libpng's
 * errors caught: png_job_error long-jumps back here. 0, or -1 with the message in j->err. */
static int png_run(png_job *j, bool write, png_body body) {
  png_structp png =
      write ? png_create_write_struct(PNG_LIBPNG_VER_STRING, j, png_job_error, png_job_warning)
            : png_create_read_struct(PNG_LIBPNG_VER_STRING, j, png_job_error, png_job_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  int rc = 0;
  if (!info)
    rc = cli_fail(j->err, j->errlen, "%s: out of memory for the PNG %s", j->name,
                  write ? "encoder" : "decoder");
  else if (setjmp(png_jmpbuf(png)) == 0)
    body(png, info, j);
  else
    rc = -1;
  if (write)
    png_destroy_write_struct(&png, &info);
  else
    png_destroy_read_struct(&png, &info, NULL);
  return rc;
}

static int png_decode(const uint8_t *data, size_t len, const char *name, cli_image *img,
                      char *err, size_t errlen) {
  png_job j = {{data, len, 0}, NULL, name, err, errlen, img, NULL, NULL};
  int rc = png_run(&j, false, png_decode_body);
  free(j.rows);
  if (rc != 0) cli_image_free(img);
  return rc;
}

static void png_encode_body(png_structp png, png_infop info, png_job *j) {
  static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                               PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  const cli_image *img = j->img;
  if (img->width > PNG_UINT_31_MAX || img->height > PNG_UINT_31_MAX)
    png_error(png, "image too large for PNG");
  png_init_io(png, j->out);
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8,
               types[img->channels], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const size_t pitch = img->width * (size_t)img->channels;
  for (size_t y = 0; y < img->height; y++) png_write_row(png, img->pixels + y * pitch);
  png_write_end(png, info);
}

static int png_encode(FILE *f, const cli_image *img, const char *name, char *err,
                      size_t errlen) {
  png_job j = {{NULL, 0, 0}, f, name, err, errlen, (cli_image *)img, NULL, NULL};
  return png_run(&j, true, png_encode_body);
}

/* ---- JPEG ------------------------------------------------------------------------------- */

typedef struct jpeg_job {
  struct jpeg_error_mgr mgr; /* first, so the library's pointer to it is one to the job */
  jmp_buf jump;
  const char *name;
  char *err;
  size_t errlen;
  cli_image *img;
} jpeg_job;

static void jpeg_job_error(j_common_ptr c) {
  jpeg_job *j = (jpeg_job *)c->err;
  char msg[JMSG_LENGTH_MAX];
  (*c->err->format_message)(c, msg);
  cli_fail(j->err, j->errlen, "%s: JPEG: %s", j->name, msg);
  longjmp(j->jump, 1);
}

/* A warning is corrupt data (most often a truncated file, whose missing rows libjpeg
 * fills with grey): refused, rather than counted as pixels. Trace messages are ignored. */
static void jpeg_job_message(j_common_ptr c, int level) {
  if (level < 0) jpeg_job_error(c);
}

/* Memory libjpeg may take for whole-image buffers (progressive files): beyond it, it
 * reports an error instead of allocating what a corrupt header asks. */
#define JPEG_MAX_MEMORY (512L << 20)

static void jpeg_decode_body(struct jpeg_decompress_struct *d, const uint8_t *data, size_t len,
                             jpeg_job *j) {
  jpeg_create_decompress(d);
  d->mem->max_memory_to_use = JPEG_MAX_MEMORY;
  jpeg_mem_src(d, data, (unsigned long)len);
  jpeg_read_header(d, TRUE);
  d->out_color_space = d->num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_calc_output_dimensions(d);
  const int ch = d->out_color_components;
  if ((ch != 1 && ch != 3) || !size_ok(d->output_width, d->output_height, (size_t)ch)) {
    cli_fail(j->err, j->errlen, "%s: JPEG of %ux%u with %d channels is not supported", j->name,
         (unsigned)d->output_width, (unsigned)d->output_height, ch);
    longjmp(j->jump, 1);
  }
  jpeg_start_decompress(d);
  if (cli_image_alloc(j->img, d->output_width, d->output_height, ch) != 0) {
    cli_fail(j->err, j->errlen, "%s: out of memory", j->name);
    longjmp(j->jump, 1);
  }
  const size_t pitch = (size_t)d->output_width * (size_t)ch;
  while (d->output_scanline < d->output_height) {
    JSAMPROW row = j->img->pixels + (size_t)d->output_scanline * pitch;
    jpeg_read_scanlines(d, &row, 1);
  }
  jpeg_finish_decompress(d);
}

static int jpeg_decode(const uint8_t *data, size_t len, const char *name, cli_image *img,
                       char *err, size_t errlen) {
  struct jpeg_decompress_struct d;
  jpeg_job j;
  memset(&d, 0, sizeof d);
  memset(&j, 0, sizeof j);
  d.err = jpeg_std_error(&j.mgr);
  j.mgr.error_exit = jpeg_job_error;
  j.mgr.emit_message = jpeg_job_message;
  j.name = name;
  j.err = err;
  j.errlen = errlen;
  j.img = img;
  int rc = 0;
  if (setjmp(j.jump) == 0)
    jpeg_decode_body(&d, data, len, &j);
  else
    rc = -1;
  jpeg_destroy_decompress(&d);
  if (rc != 0) cli_image_free(img);
  return rc;
}

/* ---- the entry points ------------------------------------------------------------------- */

int cli_image_decode(const uint8_t *data, size_t len, const char *name, cli_image *img,
                     char *err, size_t errlen) {
  static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  memset(img, 0, sizeof *img);
  if (len >= 8 && memcmp(data, png_sig, 8) == 0) return png_decode(data, len, name, img, err, errlen);
  if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
    return jpeg_decode(data, len, name, img, err, errlen);
  if (len >= 2 && data[0] == 'P' &&
      (data[1] == '2' || data[1] == '3' || data[1] == '5' || data[1] == '6'))
    return pnm_decode(data, len, name, img, err, errlen);
  return cli_fail(err, errlen, "%s: not a PNG, JPEG, PGM or PPM file%s", name,
              len == 0 ? " (empty)" : "");
}

bool cli_has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  if (n < m) return false;
  for (size_t i = 0; i < m; i++)
    if (tolower((unsigned char)s[n - m + i]) != suffix[i]) return false;
  return true;
}

cli_image_format cli_image_format_of(const char *path) {
  if (cli_has_suffix(path, ".png")) return CLI_IMAGE_PNG;
  if (cli_has_suffix(path, ".pgm")) return CLI_IMAGE_PGM;
  if (cli_has_suffix(path, ".ppm")) return CLI_IMAGE_PPM;
  if (cli_has_suffix(path, ".pnm")) return CLI_IMAGE_PNM;
  return CLI_IMAGE_UNKNOWN;
}

/* P5 or P6, one row at a time through a converted row. */
static int pnm_encode(FILE *f, bool grey, const cli_image *img, const char *name,
                      char *err, size_t errlen) {
  const int in_ch = img->channels, out_ch = grey ? 1 : 3;
  uint8_t *row = malloc(img->width * 3 + 1);
  if (!row) return cli_fail(err, errlen, "%s: out of memory", name);
  int rc = fprintf(f, "P%c\n%zu %zu\n255\n", grey ? '5' : '6', img->width, img->height) < 0;
  for (size_t y = 0; !rc && y < img->height; y++) {
    const uint8_t *p = img->pixels + y * img->width * (size_t)in_ch;
    for (size_t x = 0; x < img->width; x++, p += in_ch) {
      if (in_ch >= 3 && grey) /* luma, ITU-R BT.601 */
        row[x] = (uint8_t)((299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u);
      else if (in_ch >= 3)
        memcpy(row + 3 * x, p, 3);
      else if (grey)
        row[x] = p[0];
      else
        row[3 * x] = row[3 * x + 1] = row[3 * x + 2] = p[0];
    }
    size_t bytes = img->width * (size_t)out_ch;
    rc = fwrite(row, 1, bytes, f) != bytes;
  }
  free(row);
  return rc ? cli_fail(err, errlen, "%s: write failed", name) : 0;
}

int cli_image_encode(FILE *f, cli_image_format fmt, const cli_image *img, const char *name,
                     int *converted, char *err, size_t errlen) {
  if (converted) *converted = 0;
  if (!img->pixels || img->channels < 1 || img->channels > 4)
    return cli_fail(err, errlen, "%s: no image to write", name);
  if (fmt == CLI_IMAGE_PNG) return png_encode(f, img, name, err, errlen);
  if (fmt != CLI_IMAGE_PGM && fmt != CLI_IMAGE_PPM && fmt != CLI_IMAGE_PNM)
    return cli_fail(err, errlen, "%s: unknown extension (.png, .pgm, .ppm, .pnm)", name);
  const bool grey = fmt == CLI_IMAGE_PGM || (fmt == CLI_IMAGE_PNM && img->channels <= 2);
  if (converted) *converted = img->channels == 2 || img->channels == 4 || (grey && img->channels == 3);
  return pnm_encode(f, grey, img, name, err, errlen);
}
