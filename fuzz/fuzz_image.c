/*
 * fuzz_image.c — libFuzzer harness for the parprim command's image decoder
 * (cli_image_decode: PNG through libpng, JPEG through libjpeg, PGM/PPM by hand).
 *
 * Besides what the sanitizers catch, each input checks the decoder's contract: a failure
 * leaves the image empty with a message; a success has sane dimensions whose every pixel
 * is readable; and a decoded image written as PNG and decoded again comes back byte for
 * byte (PNG is lossless for 1 to 4 channels of 8 bits).
 */
#define _POSIX_C_SOURCE 200809L

#include "image_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUND_TRIP_MAX_BYTES ((size_t)1 << 20) /* larger images: decode only, for speed */

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_image: %s\n", what);
    abort();
  }
}

static void round_trip(const cli_image *img) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  check(f != NULL, "open_memstream failed");
  char err[512] = "";
  int converted = -1;
  int rc = cli_image_encode(f, CLI_IMAGE_PNG, img, "round-trip", &converted, err, sizeof err);
  check(fclose(f) == 0, "closing the memory stream failed");
  check(rc == 0, err);
  check(converted == 0, "PNG encoding reported a conversion");
  cli_image back;
  rc = cli_image_decode((const uint8_t *)buf, len, "round-trip", &back, err, sizeof err);
  check(rc == 0, "the PNG just written does not decode");
  check(back.width == img->width && back.height == img->height &&
            back.channels == img->channels,
        "the PNG round trip changed the image's shape");
  check(memcmp(back.pixels, img->pixels, img->width * img->height * (size_t)img->channels) == 0,
        "the PNG round trip changed pixels");
  cli_image_free(&back);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned pixel_sum; /* keeps the read of every pixel */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cli_image img;
  char err[512] = "";
  if (cli_image_decode(data, size, "input", &img, err, sizeof err) != 0) {
    check(img.pixels == NULL && img.width == 0 && img.height == 0, "a failure left pixels");
    check(err[0] != '\0', "a failure without a message");
    return 0;
  }
  check(img.pixels != NULL && img.width > 0 && img.height > 0, "an empty image decoded");
  check(img.channels >= 1 && img.channels <= 4, "channels out of 1..4");
  const size_t bytes = img.width * img.height * (size_t)img.channels;
  check(bytes / img.width / img.height == (size_t)img.channels && bytes <= CLI_IMAGE_MAX_BYTES,
        "an image beyond CLI_IMAGE_MAX_BYTES");
  unsigned sum = 0; /* every byte is read, so ASan sees a short buffer */
  for (size_t i = 0; i < bytes; i++) sum += img.pixels[i];
  pixel_sum = sum;
  if (bytes <= ROUND_TRIP_MAX_BYTES) round_trip(&img);
  cli_image_free(&img);
  return 0;
}
