/*
 * fuzz_filter.c — libFuzzer harness for the parprim command's filter-file parser
 * (cli_filter_parse, cli/filter_file.h), on the input as the file's text.
 *
 * Checks the contract besides what the sanitizers catch: a failure leaves no weights and
 * says why; a success has dimensions within the limit and width * height finite float
 * weights.
 */
#include "filter_file.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* conv allows 4097 a side; a smaller limit keeps each run fast and the code the same */
#define FUZZ_MAX_SIDE 257

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_filter: %s\n", what);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cli_filter_weights f;
  char err[512] = "";
  if (cli_filter_parse((const char *)data, size, "input", FUZZ_MAX_SIDE, &f, err, sizeof err) != 0) {
    check(f.w == NULL && f.width == 0 && f.height == 0, "a failure left weights");
    check(err[0] != '\0', "a failure without a message");
    return 0;
  }
  check(f.width >= 1 && f.width <= FUZZ_MAX_SIDE && f.height >= 1 && f.height <= FUZZ_MAX_SIDE,
        "dimensions out of range");
  for (size_t i = 0; i < f.width * f.height; i++) check(isfinite(f.w[i]), "a weight not finite");
  free(f.w);
  return 0;
}
