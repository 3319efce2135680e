/* raw_file.c — see raw_file.h. */
#define _POSIX_C_SOURCE 200809L

#include "raw_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* stdio calls of at most this many bytes, so no single call meets a platform's limit on
 * one read or write */
#define RAW_IO_CHUNK ((size_t)64 << 20)

int cli_read_raw(const char *cmd, const char *path, size_t es, void **data, size_t *bytes) {
  *data = NULL;
  *bytes = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "parprim %s: cannot open '%s': %s\n", cmd, path, strerror(errno));
    return 1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "parprim %s: '%s' is not a regular file\n", cmd, path);
    fclose(f);
    return 1;
  }
  if ((unsigned long long)st.st_size > (unsigned long long)SIZE_MAX) {
    fprintf(stderr, "parprim %s: '%s' is too large for this machine\n", cmd, path);
    fclose(f);
    return 1;
  }
  size_t size = (size_t)st.st_size;
  if (size % es != 0) {
    fprintf(stderr,
            "parprim %s: '%s' has %zu bytes, not a multiple of the element size (%zu): "
            "wrong --type, or not a raw array?\n",
            cmd, path, size, es);
    fclose(f);
    return 1;
  }
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) {
    fprintf(stderr, "parprim %s: out of host memory for %zu bytes\n", cmd, size);
    fclose(f);
    return 1;
  }
  size_t got = 0;
  while (got < size) {
    size_t want = size - got < RAW_IO_CHUNK ? size - got : RAW_IO_CHUNK;
    size_t r = fread(buf + got, 1, want, f);
    got += r;
    if (r < want) break;
  }
  if (got != size) {
    fprintf(stderr, "parprim %s: reading '%s': %s\n", cmd, path,
            ferror(f) ? strerror(errno) : "the file got shorter while being read");
    free(buf);
    fclose(f);
    return 1;
  }
  fclose(f);
  *data = buf;
  *bytes = size;
  return 0;
}

int cli_write_raw(const char *cmd, const char *path, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "parprim %s: cannot create '%s': %s\n", cmd, path, strerror(errno));
    return 1;
  }
  const unsigned char *p = data;
  size_t done = 0;
  while (done < bytes) {
    size_t want = bytes - done < RAW_IO_CHUNK ? bytes - done : RAW_IO_CHUNK;
    size_t w = fwrite(p + done, 1, want, f);
    done += w;
    if (w < want) break;
  }
  int bad = done != bytes || ferror(f);
  int err = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    fprintf(stderr, "parprim %s: writing '%s': %s\n", cmd, path, strerror(err));
    return 1;
  }
  return 0;
}
