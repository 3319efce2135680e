/*
 * fuzz_raw.c — libFuzzer harness for the parprim command's file reader (cli_read_file and
 * cli_read_raw, cli/raw_file.h), through a real file: the input is written to a
 * temporary file, read back, and must come back byte for byte with a zero byte after it,
 * with progress reports that only grow and end at the file's size.
 */
#define _POSIX_C_SOURCE 200809L

#include "raw_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_raw: %s\n", what);
    abort();
  }
}

static void remove_file(void) { unlink(path); }

typedef struct seen {
  size_t last, total, calls;
} seen;

static void progress(void *arg, size_t done, size_t total) {
  seen *s = arg;
  check(done >= s->last, "progress went backwards");
  s->last = done;
  s->total = total;
  s->calls++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/fuzz_raw.XXXXXX");
    int fd = mkstemp(path);
    check(fd >= 0, "mkstemp failed");
    close(fd);
    atexit(remove_file);
  }
  FILE *f = fopen(path, "wb");
  check(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "writing the input failed");

  void *got = NULL;
  size_t len = 0;
  seen s = {0, 0, 0};
  char err[512];
  check(cli_read_file(path, &got, &len, progress, &s, err, sizeof err) == 0, err);
  check(got != NULL && len == size, "a file read back with another size");
  check(size == 0 || memcmp(got, data, size) == 0, "a file read back with other bytes");
  check(((const char *)got)[len] == '\0', "no zero byte after the data");
  check(s.calls > 0 && s.last == size && s.total == size, "progress did not end at the size");
  free(got);

  /* as a raw array of 1, 2, 4 or 8-byte elements, when the size allows (else a message) */
  const size_t es = (size_t)1 << (size ? data[0] % 4 : 0);
  if (size % es == 0) {
    check(cli_read_raw("fuzz", path, es, &got, &len, NULL, NULL) == 0, "cli_read_raw failed");
    check(len == size && (size == 0 || memcmp(got, data, size) == 0), "cli_read_raw differs");
    free(got);
  }
  return 0;
}
