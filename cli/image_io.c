/*
 * image_io.c — PGM/PPM reading, PGM/PPM/PNG writing for the parprim command.
 *
 * PNG is written with deflate's "stored" blocks: a valid zlib stream that needs no
 * compressor, at the price of files about as large as the raw pixels (plus one filter
 * byte per row and 5 bytes per 64 KiB). Good enough for frames and plots, and it keeps
 * the command free of library dependencies.
 */
#include "image_io.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

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

/* ---- PGM / PPM reading ---------------------------------------------------------------- */

/* Skips whitespace and '#' comments; false at end of file. */
static bool pnm_skip(FILE *f) {
  int c;
  while ((c = fgetc(f)) != EOF) {
    if (c == '#') {
      while ((c = fgetc(f)) != EOF && c != '\n') {
      }
    } else if (!isspace(c)) {
      ungetc(c, f);
      return true;
    }
  }
  return false;
}

/* A decimal header field or ASCII sample no larger than max. */
static bool pnm_number(FILE *f, unsigned long max, unsigned long *out) {
  if (!pnm_skip(f)) return false;
  unsigned long v = 0;
  int c, digits = 0;
  while ((c = fgetc(f)) != EOF && isdigit(c)) {
    if (v > (max - (unsigned long)(c - '0')) / 10) return false;
    v = v * 10 + (unsigned long)(c - '0');
    digits++;
  }
  if (c != EOF) ungetc(c, f);
  *out = v;
  return digits > 0;
}

int cli_image_read(const char *path, cli_image *img, char *err, size_t errlen) {
  memset(img, 0, sizeof *img);
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "%s: %s", path, strerror(errno));
  char magic[2] = {0, 0};
  unsigned long w = 0, h = 0, maxval = 0;
  int rc = -1;
  if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P' ||
      (magic[1] != '2' && magic[1] != '3' && magic[1] != '5' && magic[1] != '6')) {
    rc = fail(err, errlen, "%s: not a PGM/PPM file (P2, P3, P5 or P6)", path);
    goto done;
  }
  if (!pnm_number(f, 1ul << 24, &w) || !pnm_number(f, 1ul << 24, &h) ||
      !pnm_number(f, 65535, &maxval) || w == 0 || h == 0 || maxval == 0) {
    rc = fail(err, errlen, "%s: bad header (width, height 1..2^24, maxval 1..65535)", path);
    goto done;
  }
  int channels = (magic[1] == '3' || magic[1] == '6') ? 3 : 1;
  bool ascii = magic[1] == '2' || magic[1] == '3';
  if (cli_image_alloc(img, w, h, channels) != 0) {
    rc = fail(err, errlen, "%s: %lux%lu image does not fit in memory", path, w, h);
    goto done;
  }
  size_t count = (size_t)w * h * (size_t)channels;
  if (!ascii && fgetc(f) == EOF) { /* the single whitespace byte after maxval */
    rc = fail(err, errlen, "%s: no pixel data", path);
    goto done;
  }
  for (size_t i = 0; i < count; i++) {
    unsigned long v = 0;
    if (ascii) {
      if (!pnm_number(f, maxval, &v)) {
        rc = fail(err, errlen, "%s: sample %zu missing or above maxval %lu", path, i, maxval);
        goto done;
      }
    } else {
      int hi = fgetc(f), lo = maxval > 255 ? fgetc(f) : 0;
      if (hi == EOF || lo == EOF) {
        rc = fail(err, errlen, "%s: truncated pixel data (%zu of %zu samples)", path, i, count);
        goto done;
      }
      v = maxval > 255 ? ((unsigned long)hi << 8 | (unsigned long)lo) : (unsigned long)hi;
      if (v > maxval) v = maxval;
    }
    img->pixels[i] = (uint8_t)((v * 255 + maxval / 2) / maxval);
  }
  rc = 0;
done:
  fclose(f);
  if (rc != 0) cli_image_free(img);
  return rc;
}

/* ---- writing ---------------------------------------------------------------------------- */

static uint32_t crc_table[256];

static void crc_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

/* A PNG chunk is written in pieces (IDAT streams rows); the CRC covers type and data. */
typedef struct png_out {
  FILE *f;
  uint32_t crc;
  bool ok;
} png_out;

static void put(png_out *o, const void *p, size_t n) {
  if (o->ok && fwrite(p, 1, n, o->f) != n) o->ok = false;
}

static void put_be32(png_out *o, uint32_t v) {
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  put(o, b, 4);
}

static void chunk_begin(png_out *o, const char *type, uint32_t len) {
  put_be32(o, len);
  put(o, type, 4);
  o->crc = crc_update(0xffffffffu, (const uint8_t *)type, 4);
}

static void chunk_data(png_out *o, const void *p, size_t n) {
  put(o, p, n);
  o->crc = crc_update(o->crc, p, n);
}

static void chunk_end(png_out *o) { put_be32(o, o->crc ^ 0xffffffffu); }

static int write_png(FILE *f, const cli_image *img) {
  static bool crc_ready = false;
  if (!crc_ready) {
    crc_init();
    crc_ready = true;
  }
  static const uint8_t colour_type[5] = {0, 0, 4, 2, 6};
  size_t row = img->width * (size_t)img->channels + 1; /* filter byte + samples */
  size_t raw = row * img->height;                      /* the zlib payload */
  size_t blocks = raw / 65535 + (raw % 65535 != 0) + (raw == 0);
  size_t idat = 2 + raw + 5 * blocks + 4;
  if (img->width > 0x7fffffffu || img->height > 0x7fffffffu || idat > 0x7fffffffu) return -1;

  png_out o = {f, 0, true};
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  put(&o, sig, 8);
  uint8_t ihdr[13] = {0};
  for (int i = 0; i < 4; i++) {
    ihdr[i] = (uint8_t)(img->width >> (24 - 8 * i));
    ihdr[4 + i] = (uint8_t)(img->height >> (24 - 8 * i));
  }
  ihdr[8] = 8; /* bit depth */
  ihdr[9] = colour_type[img->channels];
  chunk_begin(&o, "IHDR", 13);
  chunk_data(&o, ihdr, 13);
  chunk_end(&o);

  /* One IDAT holding a zlib stream of stored blocks over the filtered rows. */
  chunk_begin(&o, "IDAT", (uint32_t)idat);
  static const uint8_t zhdr[2] = {0x78, 0x01};
  chunk_data(&o, zhdr, 2);
  uint32_t a = 1, b = 0; /* Adler-32 of the payload */
  size_t left_in_block = 0, done = 0;
  for (size_t y = 0; y <= img->height && raw; y++) {
    if (y == img->height) break;
    const uint8_t zero = 0;
    const uint8_t *px = img->pixels + y * (row - 1);
    for (size_t i = 0; i < row; i++) {
      if (left_in_block == 0) {
        size_t len = raw - done < 65535 ? raw - done : 65535;
        uint8_t bh[5] = {(uint8_t)(done + len == raw), (uint8_t)len, (uint8_t)(len >> 8),
                         (uint8_t)~len, (uint8_t)(~len >> 8)};
        chunk_data(&o, bh, 5);
        left_in_block = len;
      }
      /* runs of samples up to the end of the row or of the block */
      const uint8_t *p = i == 0 ? &zero : px + i - 1;
      size_t n = i == 0 ? 1 : row - i;
      if (n > left_in_block) n = left_in_block;
      chunk_data(&o, p, n);
      for (size_t j = 0; j < n; j++) {
        a = (a + p[j]) % 65521u;
        b = (b + a) % 65521u;
      }
      left_in_block -= n;
      done += n;
      i += n - 1;
    }
  }
  if (raw == 0) {
    static const uint8_t empty[5] = {1, 0, 0, 0xff, 0xff};
    chunk_data(&o, empty, 5);
  }
  uint8_t ad[4] = {(uint8_t)(b >> 8), (uint8_t)b, (uint8_t)(a >> 8), (uint8_t)a};
  chunk_data(&o, ad, 4);
  chunk_end(&o);

  chunk_begin(&o, "IEND", 0);
  chunk_end(&o);
  return o.ok ? 0 : -1;
}

static int write_pnm(FILE *f, const cli_image *img) {
  if (fprintf(f, "P%c\n%zu %zu\n255\n", img->channels == 1 ? '5' : '6', img->width,
              img->height) < 0)
    return -1;
  size_t bytes = img->width * img->height * (size_t)img->channels;
  return fwrite(img->pixels, 1, bytes, f) == bytes ? 0 : -1;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  if (n < m) return false;
  for (size_t i = 0; i < m; i++)
    if (tolower((unsigned char)s[n - m + i]) != suffix[i]) return false;
  return true;
}

int cli_image_write(const char *path, const cli_image *img, char *err, size_t errlen) {
  bool png = ends_with(path, ".png");
  bool pnm = ends_with(path, ".pgm") || ends_with(path, ".ppm") || ends_with(path, ".pnm");
  if (!png && !pnm) return fail(err, errlen, "%s: unknown extension (.png, .pgm, .ppm)", path);
  if (!img->pixels || img->channels < 1 || img->channels > 4)
    return fail(err, errlen, "%s: no image to write", path);
  if (pnm && img->channels != 1 && img->channels != 3)
    return fail(err, errlen, "%s: PGM/PPM hold 1 or 3 channels, not %d", path, img->channels);
  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, errlen, "%s: %s", path, strerror(errno));
  int rc = png ? write_png(f, img) : write_pnm(f, img);
  if (fclose(f) != 0) rc = -1;
  if (rc != 0) {
    remove(path);
    return fail(err, errlen, "%s: write failed%s", path,
                png ? " (or the image is too large for one PNG chunk)" : "");
  }
  return 0;
}
