/*
 * image_io.h — the images of the `parprim` command (histogram, conv, nbody frames).
 *
 * PNG goes through libpng and JPEG through libjpeg(-turbo): the reference codecs, kept up
 * by their projects and packaged by every distribution, so the command never carries a
 * codec of its own. PGM/PPM are simple enough to read and write here (Netpbm's format
 * pages: netpbm.sourceforge.net/doc/pgm.html, ppm.html).
 *
 *  - decode: PNG (1, 2, 4, 8 or 16 bits; grey, grey + alpha, RGB, RGBA, palette;
 *            interlaced or not), JPEG (grey or colour), PGM/PPM (P2, P3, P5, P6, maxval
 *            1..65535). Samples wider than 8 bits are scaled to 8, rounding to nearest.
 *            A PNM sample above maxval is an error, not clamped.
 *  - encode: PNG (8-bit, zlib-compressed, 1 to 4 channels) and PGM/PPM (P5/P6, 8-bit).
 *            The format is chosen by the file name's extension. Writing a PGM from a
 *            colour image converts it to grey (luma, ITU-R BT.601 weights) and drops any
 *            alpha; a PPM from a grey image repeats the grey in R, G and B.
 *
 * This file reads and writes memory and FILE streams only; paths are opened in
 * image_file.c (through the safe writes of out_file.h), so the decoder can be fuzzed on
 * its own.
 */
#ifndef PP_CLI_IMAGE_IO_H
#define PP_CLI_IMAGE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* The largest decoded image accepted, in bytes (a 16384 x 16384 RGBA picture): a corrupt
 * header cannot make the decoder ask for more. */
#define CLI_IMAGE_MAX_BYTES ((size_t)1 << 30)

typedef enum cli_image_format {
  CLI_IMAGE_UNKNOWN = 0,
  CLI_IMAGE_PNG,
  CLI_IMAGE_JPEG,
  CLI_IMAGE_PGM,
  CLI_IMAGE_PPM,
  CLI_IMAGE_PNM /* .pnm: PGM for grey, PPM for colour */
} cli_image_format;

/* Each returns 0 on success, -1 with a message in err (naming `name`, the file, and what
 * is wrong) otherwise; on failure *img is left empty. */
/* Decodes len bytes holding a PNG, JPEG, PGM or PPM file (told apart by their first
 * bytes, not by name). */
int cli_image_decode(const uint8_t *data, size_t len, const char *name, cli_image *img,
                     char *err, size_t errlen);
/* The format an output file name asks for, by its extension (case-insensitive): .png,
 * .pgm, .ppm, .pnm; CLI_IMAGE_UNKNOWN for anything else (JPEG is read, not written). */
cli_image_format cli_image_format_of(const char *path);
/* Whether s ends with suffix (given in lower case), ignoring the case of s. */
bool cli_has_suffix(const char *s, const char *suffix);
/* Writes img to f in fmt (PNG, PGM, PPM or PNM), converting channels as said above.
 * Sets *converted when the file holds fewer channels than img (colour to grey, alpha
 * dropped). */
int cli_image_encode(FILE *f, cli_image_format fmt, const cli_image *img, const char *name,
                     int *converted, char *err, size_t errlen);

/* Paths (image_file.c): cli_image_read reads the whole file (until end of file, so pipes
 * and /proc files work) and decodes it; cli_image_write encodes into a temporary file
 * beside path and renames it over path only once complete (out_file.h), so a failed
 * write never harms an existing file, and the output may be the input. */
int cli_image_read(const char *path, cli_image *img, char *err, size_t errlen);
int cli_image_write(const char *path, const cli_image *img, int *converted, char *err,
                    size_t errlen);

/* Allocates width * height * channels zeroed bytes; -1 on overflow or no memory. */
int cli_image_alloc(cli_image *img, size_t width, size_t height, int channels);
void cli_image_free(cli_image *img);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_IMAGE_IO_H */
