/*
 * raw_file.h — whole files into memory, for the commands that take a raw binary array
 * (`parprim sort`, `topk`, `histogram --type`) and for the image and filter readers.
 * Files are read until their end, not for the size stat() reports, so pipes and /proc
 * files (which report size 0) are read whole too.
 */
#ifndef PP_CLI_RAW_FILE_H
#define PP_CLI_RAW_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Told of the bytes read so far and the file's expected size (0 when unknown), so a
 * long read can show its progress. */
typedef void (*cli_read_progress)(void *arg, size_t done, size_t total);

/* Reads the file at path into *data (malloc'd, never NULL on success, also for an empty
 * file, with a zero byte after the end so text can be parsed in place) and its size into
 * *bytes. progress may be NULL. 0, or -1 with a message in err naming the file. */
int cli_read_file(const char *path, void **data, size_t *bytes, cli_read_progress progress,
                  void *progress_arg, char *err, size_t errlen);

/* cli_read_file for a raw array of elements of es bytes: the size must be a multiple of
 * es. Returns 0, or 1 after a message on stderr prefixed "parprim CMD: ". */
int cli_read_raw(const char *cmd, const char *path, size_t es, void **data, size_t *bytes,
                 cli_read_progress progress, void *progress_arg);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_RAW_FILE_H */
