/*
 * progress.h — one line of progress on stderr for work that takes more than about a
 * second (reading and sorting a large file, many N-body steps), redrawn in place with a
 * carriage return. Shown only when stderr is a terminal and not silenced (--quiet), so
 * logs and pipes get none of it.
 */
#ifndef PP_CLI_PROGRESS_H
#define PP_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether progress may be shown at all (false after --quiet). On by default. */
void cli_progress_allow(bool allow);
/* Starts a phase named what ("reading x.bin"); the line appears once the phase has
 * lasted a second. */
void cli_progress_begin(const char *what);
/* done of total (total 0: unknown), redrawn at most ten times a second. */
void cli_progress_update(double done, double total, const char *unit);
/* Ends the phase, clearing its line if one was drawn. */
void cli_progress_end(void);
/* A raw_file.h read-progress callback (arg unused). */
void cli_progress_bytes(void *arg, size_t done, size_t total);
/* cli_read_raw (raw_file.h) for `parprim CMD`, as the phase "parprim CMD: reading". */
int cli_progress_read_raw(const char *cmd, const char *path, size_t es, void **data,
                          size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* PP_CLI_PROGRESS_H */
