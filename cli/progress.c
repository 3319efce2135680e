/* progress.c — see progress.h. */
#define _POSIX_C_SOURCE 200809L

#include "progress.h"
#include "raw_file.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_DELAY_S 1.0 /* a phase shorter than this shows nothing */
#define PROGRESS_EVERY_S 0.1

static struct {
  bool allowed, tty_checked, tty, drawn;
  double start, last;
  char what[160];
} state = {true, false, false, false, 0, 0, ""};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool shown(void) {
  if (!state.tty_checked) {
    state.tty = isatty(STDERR_FILENO) == 1;
    state.tty_checked = true;
  }
  return state.allowed && state.tty;
}

void cli_progress_allow(bool allow) { state.allowed = allow; }

void cli_progress_begin(const char *what) {
  snprintf(state.what, sizeof state.what, "%s", what);
  state.start = now_s();
  state.last = 0;
  state.drawn = false;
}

void cli_progress_update(double done, double total, const char *unit) {
  if (!shown()) return;
  double t = now_s();
  if (t - state.start < PROGRESS_DELAY_S || t - state.last < PROGRESS_EVERY_S) return;
  state.last = t;
  double elapsed = t - state.start;
  if (total > 0 && done > 0 && done <= total) {
    double left = elapsed * (total - done) / done;
    fprintf(stderr, "\r\033[K%s: %.0f%% (%.4g of %.4g %s), %.0f s, about %.0f s left",
            state.what, 100.0 * done / total, done, total, unit, elapsed, left);
  } else {
    fprintf(stderr, "\r\033[K%s: %.4g %s, %.0f s", state.what, done, unit, elapsed);
  }
  fflush(stderr);
  state.drawn = true;
}

void cli_progress_end(void) {
  if (state.drawn) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  state.drawn = false;
}

void cli_progress_bytes(void *arg, size_t done, size_t total) {
  (void)arg;
  cli_progress_update((double)done / 1e6, (double)total / 1e6, "MB");
}

int cli_progress_read_raw(const char *cmd, const char *path, size_t es, void **data,
                          size_t *bytes) {
  char what[sizeof state.what];
  snprintf(what, sizeof what, "parprim %s: reading", cmd);
  cli_progress_begin(what);
  int rc = cli_read_raw(cmd, path, es, data, bytes, cli_progress_bytes, NULL);
  cli_progress_end();
  return rc;
}
