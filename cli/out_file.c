/* out_file.c — see out_file.h. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli_err.h"

/* fwrite in pieces of at most this many bytes, so no single call meets a platform's
 * limit on one write */
#define OUT_IO_CHUNK ((size_t)64 << 20)

/* A write beyond RLIMIT_FSIZE raises SIGXFSZ, whose default action ends the process with
 * the temporary file left behind; ignored, the write fails with EFBIG and is cleaned up
 * like any other failed write (POSIX, write(2)). */
static void ignore_sigxfsz(void) {
  static bool done = false;
  if (done) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(SIGXFSZ, &sa, NULL);
  done = true;
}

/* The path written: a symbolic link's target, so that the link itself stays. */
static char *destination(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    char *real = realpath(path, NULL);
    if (real) return real;
  }
  return strdup(path);
}

/* A temporary file beside dest ("dest.XXXXXX"), opened for writing. */
static int make_temp(const char *dest, char **tmp, int *fd, char *err, size_t errlen) {
  size_t len = strlen(dest) + sizeof ".XXXXXX";
  *tmp = malloc(len);
  if (!*tmp) return cli_fail(err, errlen, "%s: out of memory", dest);
  snprintf(*tmp, len, "%s.XXXXXX", dest);
  *fd = mkstemp(*tmp);
  if (*fd < 0) {
    int e = errno;
    free(*tmp);
    *tmp = NULL;
    return cli_fail(err, errlen, "cannot write '%s': %s", dest, strerror(e));
  }
  return 0;
}

/* A target that is a folder, or a file this process may not write, is refused. */
static int target_ok(const char *path, char *err, size_t errlen) {
  struct stat st;
  if (!*path) return cli_fail(err, errlen, "an output file name is empty");
  if (stat(path, &st) != 0) return 0; /* a new file */
  if (S_ISDIR(st.st_mode)) return cli_fail(err, errlen, "cannot write '%s': it is a folder", path);
  if (access(path, W_OK) != 0)
    return cli_fail(err, errlen, "cannot write '%s': %s", path, strerror(errno));
  return 0;
}

int cli_out_check(const char *path, char *err, size_t errlen) {
  if (target_ok(path, err, errlen) != 0) return -1;
  char *dest = destination(path), *tmp = NULL;
  int fd = -1;
  if (!dest) return cli_fail(err, errlen, "%s: out of memory", path);
  int rc = make_temp(dest, &tmp, &fd, err, errlen);
  if (rc == 0) {
    close(fd);
    unlink(tmp);
  }
  free(tmp);
  free(dest);
  return rc;
}

int cli_out_open(cli_out *o, const char *path, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  ignore_sigxfsz();
  if (target_ok(path, err, errlen) != 0) return -1;
  o->dest = destination(path);
  if (!o->dest) return cli_fail(err, errlen, "%s: out of memory", path);
  struct stat st;
  if (stat(o->dest, &st) == 0) {
    o->mode = (int)(st.st_mode & 07777);
    o->existed = 1;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    o->mode = (int)(0666 & ~mask);
  }
  int fd = -1;
  if (make_temp(o->dest, &o->tmp, &fd, err, errlen) != 0) {
    free(o->dest);
    o->dest = NULL;
    return -1;
  }
  (void)fchmod(fd, (mode_t)o->mode); /* mkstemp makes 0600 */
  o->f = fdopen(fd, "wb");
  if (!o->f) {
    int e = errno;
    close(fd);
    cli_out_abort(o);
    return cli_fail(err, errlen, "cannot write '%s': %s", path, strerror(e));
  }
  return 0;
}

void cli_out_abort(cli_out *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->dest);
  memset(o, 0, sizeof *o);
}

/* fsync of the folder, so the rename itself is on the disk too (best effort: not every
 * file system lets a folder be opened or synced). */
static void sync_folder(const char *dest) {
  char *dir = strdup(dest);
  if (!dir) return;
  char *slash = strrchr(dir, '/');
  const char *name = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
  int fd = open(name, O_RDONLY);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(dir);
}

int cli_out_commit(cli_out *o, char *err, size_t errlen) {
  int e = 0;
  if (ferror(o->f)) e = errno ? errno : EIO;
  if (!e && fflush(o->f) != 0) e = errno;
  /* a new file puts no old content at risk: no fsync (nbody writes many frames) */
  if (!e && o->existed && fsync(fileno(o->f)) != 0 && errno != EINVAL) e = errno;
  int closed = fclose(o->f);
  o->f = NULL;
  if (!e && closed != 0) e = errno;
  if (!e && rename(o->tmp, o->dest) != 0) e = errno;
  if (e) {
    cli_fail(err, errlen, "writing '%s': %s (the file was left as it was)", o->dest, strerror(e));
    cli_out_abort(o);
    return -1;
  }
  if (o->existed) sync_folder(o->dest);
  free(o->tmp);
  o->tmp = NULL; /* renamed: nothing to remove */
  cli_out_abort(o);
  return 0;
}

int cli_write_raw(const char *cmd, const char *path, const void *data, size_t bytes) {
  char err[512];
  cli_out o;
  if (cli_out_open(&o, path, err, sizeof err) != 0) {
    fprintf(stderr, "parprim %s: %s\n", cmd, err);
    return 1;
  }
  const unsigned char *p = data;
  for (size_t done = 0; done < bytes;) {
    size_t want = bytes - done < OUT_IO_CHUNK ? bytes - done : OUT_IO_CHUNK;
    size_t w = fwrite(p + done, 1, want, o.f);
    done += w;
    if (w < want) break; /* ferror is set: commit reports it */
  }
  if (cli_out_commit(&o, err, sizeof err) != 0) {
    fprintf(stderr, "parprim %s: %s\n", cmd, err);
    return 1;
  }
  return 0;
}
