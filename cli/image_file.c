/*
 * image_file.c — images from and to paths: image_io.c's codecs over raw_file.h's whole-file
 * reads and out_file.h's safe writes.
 */
#define _POSIX_C_SOURCE 200809L

#include "image_io.h"
#include "out_file.h"
#include "raw_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_image_read(const char *path, cli_image *img, char *err, size_t errlen) {
  memset(img, 0, sizeof *img);
  void *data = NULL;
  size_t len = 0;
  if (cli_read_file(path, &data, &len, NULL, NULL, err, errlen) != 0) return -1;
  int rc = cli_image_decode(data, len, path, img, err, errlen);
  free(data);
  return rc;
}

int cli_image_write(const char *path, const cli_image *img, int *converted, char *err,
                    size_t errlen) {
  cli_image_format fmt = cli_image_format_of(path);
  if (fmt == CLI_IMAGE_UNKNOWN) {
    snprintf(err, errlen, "%s: unknown extension (.png, .pgm, .ppm, .pnm)", path);
    return -1;
  }
  cli_out o;
  if (cli_out_open(&o, path, err, errlen) != 0) return -1;
  if (cli_image_encode(o.f, fmt, img, path, converted, err, errlen) != 0) {
    if (ferror(o.f)) /* the encoder's message is generic: give the system's reason */
      snprintf(err, errlen, "writing '%s': %s (the file was left as it was)", path,
               strerror(errno ? errno : EIO));
    cli_out_abort(&o);
    return -1;
  }
  return cli_out_commit(&o, err, errlen);
}
