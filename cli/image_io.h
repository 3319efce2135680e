/*
 * image_io.h — reading and writing the images of the `parprim` command (histogram,
 * conv, nbody frames), with no library beyond libc:
 *  - read:  PGM (P2, P5) and PPM (P3, P6), maxval 1..65535 (16-bit samples are scaled
 *           to 8 bits, rounding to nearest);
 *  - write: PGM/PPM (P5/P6) and PNG (8-bit grey, grey+alpha, RGB, RGBA; deflate "stored"
 *           blocks, so no zlib is needed: the files are larger than a compressing
 *           writer's, and every viewer opens them).
 * The format to write is chosen by the file name's extension (.pgm, .ppm, .pnm, .png).
 */
#ifndef PP_CLI_IMAGE_IO_H
#define PP_CLI_IMAGE_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An 8-bit image, rows packed (pitch = width * channels), channels 1 (grey), 2 (grey +
 * alpha), 3 (RGB) or 4 (RGBA). */
typedef struct cli_image {
  size_t width, height;
  int channels;
  uint8_t *pixels;
} cli_image;

/* Each returns 0 on success, -1 with a message in err (naming the file and what is
 * wrong) otherwise; on failure *img is left empty. */
int cli_image_read(const char *path, cli_image *img, char *err, size_t errlen);
/* PGM/PPM take 1 or 3 channels; PNG 1 to 4. */
int cli_image_write(const char *path, const cli_image *img, char *err, size_t errlen);
/* Allocates width * height * channels zeroed bytes; -1 on overflow or no memory. */
int cli_image_alloc(cli_image *img, size_t width, size_t height, int channels);
void cli_image_free(cli_image *img);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_IMAGE_IO_H */
