/*
 * cli_testimg.c — test images for the parprim command's image tests (tests/cli_images.cmake),
 * written with the reference encoders (libpng, libjpeg) and by hand for PGM/PPM, each with
 * what the command must read from it, computed here from the pixels themselves:
 *
 *   test_cli_imgen make DIR       writes DIR/NAME.{png,jpg,pgm,ppm} and, for each lossless
 *                                 one, DIR/NAME.csv: the histogram `parprim histogram
 *                                 NAME --csv` must print; for the JPEGs (baseline and
 *                                 progressive), DIR/NAME.src.ppm or .pgm: the pixels they
 *                                 were encoded from
 *   test_cli_imgen cmp A B TOL    compares two 8-bit binary PGM/PPM files: same size and
 *                                 channels, no sample further apart than TOL; exit 0 or 1
 *   test_cli_imgen noise F W H    a W x H PGM of random bytes (incompressible)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h> /* after stdio.h and stddef.h, which it needs */
#include <png.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next_u32(void) { /* xorshift64* (Vigna 2016) */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

static void die(const char *what, const char *path) {
  fprintf(stderr, "test_cli_imgen: %s: %s\n", what, path);
  exit(1);
}

/* 16 bits to 8, rounding to nearest: what every reader of the command must give. */
static unsigned to8(unsigned v, unsigned maxval) {
  return (unsigned)((double)v * 255.0 / maxval + 0.5);
}

static void write_csv(const char *dir, const char *name, const char *header,
                      const unsigned *vals8, size_t n, int ch) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.csv", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) die("cannot write", path);
  uint64_t counts[4][256];
  memset(counts, 0, sizeof counts);
  for (size_t i = 0; i < n; i++) counts[i % (size_t)ch][vals8[i]]++;
  fprintf(f, "value,%s\n", header);
  for (int v = 0; v < 256; v++) {
    fprintf(f, "%d", v);
    for (int c = 0; c < ch; c++) fprintf(f, ",%llu", (unsigned long long)counts[c][v]);
    fprintf(f, "\n");
  }
  fclose(f);
}

/* A PNG of w x h with samples[] (ch per pixel, `depth` bits each; palette: indices). */
static void write_png(const char *path, unsigned w, unsigned h, int ctype, int depth,
                      const unsigned *samples, int ch, int interlace, const png_color *pal,
                      int npal, const png_byte *trns, int ntrns) {
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write", path);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) die("libpng failed", path);
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, depth, ctype,
               interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (pal) png_set_PLTE(png, info, pal, npal);
  if (trns) png_set_tRNS(png, info, trns, ntrns, NULL);
  png_write_info(png, info);
  size_t rowbytes = ((size_t)w * (size_t)ch * (size_t)depth + 7) / 8;
  png_bytep *rows = malloc(h * sizeof *rows);
  png_bytep data = calloc(h, rowbytes);
  for (unsigned y = 0; y < h; y++) {
    rows[y] = data + y * rowbytes;
    for (unsigned i = 0; i < w * (unsigned)ch; i++) {
      unsigned v = samples[(size_t)y * w * (size_t)ch + i];
      if (depth == 16) {
        rows[y][2 * i] = (png_byte)(v >> 8);
        rows[y][2 * i + 1] = (png_byte)v;
      } else if (depth == 8) {
        rows[y][i] = (png_byte)v;
      } else { /* packed, most significant bits first */
        unsigned per = 8u / (unsigned)depth, shift = 8u - (unsigned)depth * (1 + i % per);
        rows[y][i / per] |= (png_byte)(v << shift);
      }
    }
  }
  png_write_image(png, rows);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  free(rows);
  free(data);
  if (fclose(f) != 0) die("write failed", path);
}

static void write_pnm(const char *path, const char *magic, unsigned w, unsigned h,
                      unsigned maxval, const unsigned *s, int ch) {
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write", path);
  int ascii = magic[1] == '2' || magic[1] == '3';
  fprintf(f, "%s\n# written by test_cli_imgen\n%u %u\n# maxval next\n%u\n", magic, w, h, maxval);
  for (size_t i = 0; i < (size_t)w * h * (size_t)ch; i++) {
    if (ascii)
      fprintf(f, "%u%c", s[i], i % 12 == 11 ? '\n' : ' ');
    else if (maxval > 255)
      fprintf(f, "%c%c", (int)(s[i] >> 8), (int)(s[i] & 255));
    else
      fputc((int)s[i], f);
  }
  if (fclose(f) != 0) die("write failed", path);
}

static void write_jpeg(const char *path, unsigned w, unsigned h, const unsigned *s, int ch,
                       int progressive) {
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write", path);
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr jerr;
  c.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = w;
  c.image_height = h;
  c.input_components = ch;
  c.in_color_space = ch == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  for (int i = 0; i < c.num_components; i++) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  if (progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  JSAMPLE *row = malloc((size_t)w * (size_t)ch);
  while (c.next_scanline < h) {
    for (size_t i = 0; i < (size_t)w * (size_t)ch; i++)
      row[i] = (JSAMPLE)s[(size_t)c.next_scanline * w * (size_t)ch + i];
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  free(row);
  if (fclose(f) != 0) die("write failed", path);
}

static const char *headers[5] = {"", "grey", "grey,alpha", "red,green,blue", "red,green,blue,alpha"};

/* One lossless case: random samples below 2^depth, the file, and the expected CSV. */
static void lossless(const char *dir, const char *name, const char *ext, int ctype, int depth,
                     int ch, int interlace) {
  const unsigned w = 37, h = 23, n = w * h * (unsigned)ch, maxval = (1u << depth) - 1;
  unsigned *s = malloc(n * sizeof *s), *v8 = malloc(n * sizeof *v8);
  for (unsigned i = 0; i < n; i++) {
    s[i] = next_u32() & maxval;
    if (i < 8 && depth == 16) s[i] = 257u * (i + 3) + (i % 2 ? 129u : 128u); /* rounding edges */
    v8[i] = depth == 8 ? s[i] : to8(s[i], maxval);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
  if (strcmp(ext, "png") == 0)
    write_png(path, w, h, ctype, depth, s, ch, interlace, NULL, 0, NULL, 0);
  else
    write_pnm(path, ctype == 2 ? (ch == 1 ? "P2" : "P3") : (ch == 1 ? "P5" : "P6"), w, h, maxval, s, ch);
  write_csv(dir, name, headers[ch], v8, n, ch);
  free(s);
  free(v8);
}

static void palette_case(const char *dir, int with_alpha) {
  const unsigned w = 19, h = 11, n = w * h;
  png_color pal[16];
  png_byte trns[16];
  for (int i = 0; i < 16; i++) {
    pal[i].red = (png_byte)(next_u32() & 255);
    pal[i].green = (png_byte)(next_u32() & 255);
    pal[i].blue = (png_byte)(next_u32() & 255);
    trns[i] = (png_byte)(next_u32() & 255);
  }
  const int ch = with_alpha ? 4 : 3;
  unsigned *idx = malloc(n * sizeof *idx), *v8 = malloc(n * (size_t)ch * sizeof *v8);
  for (unsigned i = 0; i < n; i++) {
    idx[i] = next_u32() & 15;
    v8[i * ch] = pal[idx[i]].red;
    v8[i * ch + 1] = pal[idx[i]].green;
    v8[i * ch + 2] = pal[idx[i]].blue;
    if (with_alpha) v8[i * ch + 3] = trns[idx[i]];
  }
  char path[4096];
  const char *name = with_alpha ? "palette4_trns" : "palette4";
  snprintf(path, sizeof path, "%s/%s.png", dir, name);
  write_png(path, w, h, PNG_COLOR_TYPE_PALETTE, 4, idx, 1, 0, pal, 16,
            with_alpha ? trns : NULL, with_alpha ? 16 : 0);
  write_csv(dir, name, headers[ch], v8, n * (unsigned)ch, ch);
  free(idx);
  free(v8);
}

/* A smooth picture (JPEG keeps it within a few levels at quality 100) and its source. */
static void jpeg_case(const char *dir, int ch) {
  const unsigned w = 48, h = 32;
  unsigned *s = malloc((size_t)w * h * (size_t)ch * sizeof *s);
  for (unsigned y = 0; y < h; y++)
    for (unsigned x = 0; x < w; x++)
      for (int c = 0; c < ch; c++)
        s[((size_t)y * w + x) * (size_t)ch + (size_t)c] = (x * 4 + y * 2 + (unsigned)c * 60) % 200 + 20;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.jpg", dir, ch == 1 ? "grey" : "colour");
  write_jpeg(path, w, h, s, ch, 0);
  snprintf(path, sizeof path, "%s/%s_progressive.jpg", dir, ch == 1 ? "grey" : "colour");
  write_jpeg(path, w, h, s, ch, 1);
  snprintf(path, sizeof path, "%s/%s.src.%s", dir, ch == 1 ? "grey" : "colour", ch == 1 ? "pgm" : "ppm");
  write_pnm(path, ch == 1 ? "P5" : "P6", w, h, 255, s, ch);
  free(s);
}

/* A header number of a PGM/PPM, after white space and '#' comments. */
static unsigned header_number(FILE *f) {
  int c;
  while ((c = fgetc(f)) == '#' || c == ' ' || c == '\t' || c == '\n' || c == '\r')
    if (c == '#')
      while ((c = fgetc(f)) != EOF && c != '\n') {
      }
  unsigned v = 0;
  for (; c >= '0' && c <= '9'; c = fgetc(f)) v = v * 10 + (unsigned)(c - '0');
  return v; /* the one white space byte after it is consumed */
}

/* An 8-bit binary PGM/PPM: w, h, channels and the samples (malloc'd). */
static unsigned char *read_pnm8(const char *path, unsigned *w, unsigned *h, int *ch) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot read", path);
  char magic[3] = {0};
  if (fread(magic, 1, 2, f) != 2 || (strcmp(magic, "P5") && strcmp(magic, "P6")))
    die("not an 8-bit binary PGM/PPM", path);
  *w = header_number(f);
  *h = header_number(f);
  if (header_number(f) != 255 || *w == 0 || *h == 0) die("not an 8-bit binary PGM/PPM", path);
  *ch = magic[1] == '5' ? 1 : 3;
  size_t n = (size_t)*w * *h * (size_t)*ch;
  unsigned char *p = malloc(n);
  if (fread(p, 1, n, f) != n) die("truncated", path);
  fclose(f);
  return p;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "make") == 0) {
    const char *d = argv[2];
    lossless(d, "g8", "png", PNG_COLOR_TYPE_GRAY, 8, 1, 0);
    lossless(d, "g1", "png", PNG_COLOR_TYPE_GRAY, 1, 1, 0);
    lossless(d, "g4", "png", PNG_COLOR_TYPE_GRAY, 4, 1, 0);
    lossless(d, "ga8", "png", PNG_COLOR_TYPE_GRAY_ALPHA, 8, 2, 0);
    lossless(d, "rgb8", "png", PNG_COLOR_TYPE_RGB, 8, 3, 0);
    lossless(d, "rgba8", "png", PNG_COLOR_TYPE_RGB_ALPHA, 8, 4, 0);
    lossless(d, "rgb8_adam7", "png", PNG_COLOR_TYPE_RGB, 8, 3, 1);
    lossless(d, "g16", "png", PNG_COLOR_TYPE_GRAY, 16, 1, 0);
    lossless(d, "ga16", "png", PNG_COLOR_TYPE_GRAY_ALPHA, 16, 2, 0);
    lossless(d, "rgb16", "png", PNG_COLOR_TYPE_RGB, 16, 3, 0);
    lossless(d, "rgba16_adam7", "png", PNG_COLOR_TYPE_RGB_ALPHA, 16, 4, 1);
    palette_case(d, 0);
    palette_case(d, 1);
    /* PGM/PPM: ctype 2 asks for ASCII (P2/P3), anything else for binary (P5/P6) */
    lossless(d, "p2_8", "pgm", 2, 8, 1, 0);
    lossless(d, "p3_16", "ppm", 2, 16, 3, 0);
    lossless(d, "p5_16", "pgm", 0, 16, 1, 0);
    lossless(d, "p6_8", "ppm", 0, 8, 3, 0);
    jpeg_case(d, 1);
    jpeg_case(d, 3);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "cmp") == 0) {
    unsigned wa, ha, wb, hb;
    int ca, cb;
    unsigned char *a = read_pnm8(argv[2], &wa, &ha, &ca), *b = read_pnm8(argv[3], &wb, &hb, &cb);
    if (wa != wb || ha != hb || ca != cb) {
      printf("%s is %ux%ux%d, %s is %ux%ux%d\n", argv[2], wa, ha, ca, argv[3], wb, hb, cb);
      free(a);
      free(b);
      return 1;
    }
    int worst = 0, tol = atoi(argv[4]);
    for (size_t i = 0; i < (size_t)wa * ha * (size_t)ca; i++) {
      int d = abs((int)a[i] - (int)b[i]);
      worst = d > worst ? d : worst;
    }
    printf("largest difference %d (tolerance %d)\n", worst, tol);
    free(a);
    free(b);
    return worst <= tol ? 0 : 1;
  }
  if (argc == 5 && strcmp(argv[1], "noise") == 0) {
    unsigned w = (unsigned)atoi(argv[3]), h = (unsigned)atoi(argv[4]);
    unsigned *s = malloc((size_t)w * h * sizeof *s);
    for (size_t i = 0; i < (size_t)w * h; i++) s[i] = next_u32() & 255;
    write_pnm(argv[2], "P5", w, h, 255, s, 1);
    free(s);
    return 0;
  }
  fprintf(stderr, "usage: test_cli_imgen make DIR | cmp A B TOL | noise FILE W H\n");
  return 2;
}
