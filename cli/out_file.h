/*
 * out_file.h — every file the `parprim` command writes goes through here.
 *
 * A write goes to a new temporary file in the target's folder (mkstemp), is flushed to
 * the disk (fsync, when it replaces a file) and only then renamed over the target:
 * rename(2) replaces a name atomically within one file system, so the target holds either
 * its old content or the complete new one, never a part (the pattern and the reason for
 * the fsync: the ext4 documentation's auto_da_alloc, and LWN's "ext4 and data loss",
 * 2009). A target that exists but may not be written (a read-only file) is refused, as
 * open(2) would refuse it. A write that fails (full disk, `ulimit -f`, an I/O
 * error) removes the temporary file and leaves an existing target untouched; the output
 * may therefore also be an input of the same command. Messages name the file and give
 * the system's reason (strerror).
 */
#ifndef PP_CLI_OUT_FILE_H
#define PP_CLI_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cli_out {
  FILE *f;     /* write here */
  char *tmp;   /* the temporary file */
  char *dest;  /* the target (a symbolic link's target, so the link stays) */
  int mode;    /* the target's permissions (its old ones, or 0666 less the umask) */
  int existed; /* whether a file was there: then it is synced before the rename */
} cli_out;

/* Whether a file can be written at path, checked before long work starts: path is not a
 * folder and its folder takes a new file (one is created and removed). 0, or -1 with a
 * message in err. */
int cli_out_check(const char *path, char *err, size_t errlen);
/* Opens the temporary file for path. 0, or -1 with a message in err. */
int cli_out_open(cli_out *o, const char *path, char *err, size_t errlen);
/* Flushes, syncs, closes and renames over the target. On failure removes the temporary
 * file and returns -1 with a message in err. Either way *o is released. */
int cli_out_commit(cli_out *o, char *err, size_t errlen);
/* Drops the temporary file (after a failed encoding); the target is untouched. */
void cli_out_abort(cli_out *o);

/* Writes bytes of data to path through the above. Returns 0, or 1 after a message on
 * stderr prefixed "parprim CMD: ". */
int cli_write_raw(const char *cmd, const char *path, const void *data, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_OUT_FILE_H */
