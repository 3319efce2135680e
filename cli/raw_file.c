/* raw_file.c — see raw_file.h. */
#define _POSIX_C_SOURCE 200809L

#include "raw_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli_err.h"

/* fread in pieces of at most this many bytes: progress between them, and no single call
 * meets a platform's limit on one read */
#define RAW_IO_CHUNK ((size_t)64 << 20)

int cli_read_file(const char *path, void **data, size_t *bytes, cli_read_progress progress,
                  void *progress_arg, char *err, size_t errlen) {
  *data = NULL;
  *bytes = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cli_fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
    fclose(f);
    return cli_fail(err, errlen, "'%s' is a folder, not a file", path);
  }
  /* the size a regular file reports is a first guess; the buffer grows by halves past it */
  size_t expected = 0;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    if ((unsigned long long)st.st_size >= (unsigned long long)SIZE_MAX) {
      fclose(f);
      return cli_fail(err, errlen, "'%s' is too large for this machine", path);
    }
    expected = (size_t)st.st_size;
  }
  size_t cap = expected ? expected + 1 : 4096, got = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      return cli_fail(err, errlen, "'%s': out of host memory after %zu bytes", path, got);
    }
    if (got == cap - 1) { /* full but for the terminating zero: grow */
      size_t more = cap / 2 > RAW_IO_CHUNK ? RAW_IO_CHUNK : cap / 2;
      unsigned char *bigger = cap > SIZE_MAX - more ? NULL : realloc(buf, cap + more);
      if (!bigger) free(buf);
      buf = bigger;
      cap += more;
      continue;
    }
    size_t want = cap - 1 - got < RAW_IO_CHUNK ? cap - 1 - got : RAW_IO_CHUNK;
    size_t r = fread(buf + got, 1, want, f);
    got += r;
    if (progress) progress(progress_arg, got, expected);
    if (r < want) break;
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    return cli_fail(err, errlen, "reading '%s': %s", path, strerror(e));
  }
  fclose(f);
  buf[got] = 0;
  *data = buf;
  *bytes = got;
  return 0;
}

int cli_read_raw(const char *cmd, const char *path, size_t es, void **data, size_t *bytes,
                 cli_read_progress progress, void *progress_arg) {
  char err[512];
  if (cli_read_file(path, data, bytes, progress, progress_arg, err, sizeof err) != 0) {
    fprintf(stderr, "parprim %s: %s\n", cmd, err);
    return 1;
  }
  if (*bytes % es != 0) {
    fprintf(stderr,
            "parprim %s: '%s' has %zu bytes, not a multiple of the element size (%zu): "
            "wrong --type, or not a raw array?\n",
            cmd, path, *bytes, es);
    free(*data);
    *data = NULL;
    *bytes = 0;
    return 1;
  }
  return 0;
}
