/* pnm.h — the smallest image files there are: binary PGM (P5, gray) and PPM (P6, RGB),
 * 8 bits per sample. A header of text, then the pixels row by row. Enough for the examples,
 * which stay free of image libraries; `parprim` itself reads PNG and JPEG too. */
#ifndef EXAMPLES_PNM_H
#define EXAMPLES_PNM_H

#include <stdio.h>
#include <stdlib.h>

typedef struct image {
  size_t width, height;
  int channels; /* 1: gray (PGM), 3: RGB (PPM) */
  unsigned char *pixels; /* width * channels bytes per row, no padding */
} image;

/* one header field; '#' starts a comment running to the end of the line */
static inline int pnm_field(FILE *f, size_t *v) {
  int c;
  while ((c = fgetc(f)) == '#' || c == ' ' || c == '\t' || c == '\r' || c == '\n')
    if (c == '#')
      while ((c = fgetc(f)) != '\n' && c != EOF) {
      }
  if (c == EOF || ungetc(c, f) == EOF) return 0;
  return fscanf(f, "%zu", v) == 1;
}

/* 0 on success; on failure *img is untouched */
static inline int pnm_read(const char *path, image *img) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char magic[3] = {0};
  size_t w, h, maxval, bytes = 0;
  int ok = fread(magic, 1, 2, f) == 2 && magic[0] == 'P' && (magic[1] == '5' || magic[1] == '6') &&
           pnm_field(f, &w) && pnm_field(f, &h) && pnm_field(f, &maxval) && maxval == 255 &&
           w > 0 && h > 0 && fgetc(f) != EOF; /* one whitespace byte ends the header */
  int channels = magic[1] == '6' ? 3 : 1;
  unsigned char *px = NULL;
  if (ok) {
    bytes = w * h * (size_t)channels;
    px = malloc(bytes);
    ok = px && fread(px, 1, bytes, f) == bytes;
  }
  fclose(f);
  if (!ok) {
    free(px);
    return -1;
  }
  *img = (image){w, h, channels, px};
  return 0;
}

static inline int pnm_write(const char *path, const image *img) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t bytes = img->width * img->height * (size_t)img->channels;
  int ok = fprintf(f, "P%c\n%zu %zu\n255\n", img->channels == 3 ? '6' : '5', img->width,
                   img->height) > 0 &&
           fwrite(img->pixels, 1, bytes, f) == bytes;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

#endif
