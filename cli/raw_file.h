/*
 * raw_file.h — whole raw binary arrays in and out of files, for the commands that take
 * one (`parprim sort`, `topk`, `histogram --type`). Messages go to stderr, prefixed with
 * "parprim CMD: " and naming the file and what is wrong.
 */
#ifndef PP_CLI_RAW_FILE_H
#define PP_CLI_RAW_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the regular file at path into *data (malloc'd, never NULL on success, also for an
 * empty file) and its size into *bytes, which must be a multiple of the element size es.
 * Returns 0, or 1 after a message. */
int cli_read_raw(const char *cmd, const char *path, size_t es, void **data, size_t *bytes);
/* Creates (or truncates) path and writes bytes of data. Returns 0, or 1 after a message. */
int cli_write_raw(const char *cmd, const char *path, const void *data, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_RAW_FILE_H */
