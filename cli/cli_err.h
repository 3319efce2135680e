/*
 * cli_err.h — the one way the command's readers and writers report a failure: a
 * printf-style message into the caller's buffer (which may be NULL) and -1. A header of its
 * own, so the file readers stay free of the rest of the command (the fuzzing harnesses link
 * each reader alone).
 */
#ifndef PP_CLI_ERR_H
#define PP_CLI_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int cli_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline int cli_fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

#endif /* PP_CLI_ERR_H */
