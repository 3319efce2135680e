/* filter_file.c — see filter_file.h. */
#include "filter_file.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_err.h"

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

typedef struct scanner {
  const char *p;
  size_t len, pos, line;
  char tok[CLI_FILTER_MAX_TOKEN + 1];
  size_t toklen, tokline;
} scanner;

enum { TOKEN_OK = 0, TOKEN_END = 1, TOKEN_TOO_LONG = -1 };

/* The next token, skipping white space and comments; never split: a longer one is an
 * error. */
static int next_token(scanner *s) {
  for (;;) {
    while (s->pos < s->len && is_space(s->p[s->pos]))
      if (s->p[s->pos++] == '\n') s->line++;
    if (s->pos < s->len && s->p[s->pos] == '#') {
      while (s->pos < s->len && s->p[s->pos] != '\n') s->pos++;
      continue;
    }
    break;
  }
  if (s->pos >= s->len) return TOKEN_END;
  s->toklen = 0;
  s->tokline = s->line;
  while (s->pos < s->len && !is_space(s->p[s->pos]) && s->p[s->pos] != '#') {
    if (s->toklen == CLI_FILTER_MAX_TOKEN) return TOKEN_TOO_LONG;
    s->tok[s->toklen++] = s->p[s->pos++];
  }
  s->tok[s->toklen] = '\0';
  return TOKEN_OK;
}

/* The token as a finite number within float's range (a value too small for a float
 * becomes 0 or a subnormal, as any decimal rounds). */
static int token_value(const scanner *s, const char *name, double *v, char *err,
                       size_t errlen) {
  char *end = NULL;
  errno = 0;
  *v = strtod(s->tok, &end);
  if (end != s->tok + s->toklen || s->toklen == 0 || isnan(*v))
    return cli_fail(err, errlen, "%s:%zu: '%s' is not a number", name, s->tokline, s->tok);
  if (!isfinite(*v) || fabs(*v) > FLT_MAX)
    return cli_fail(err, errlen, "%s:%zu: '%s' does not fit in a float (magnitude at most %g)",
                name, s->tokline, s->tok, (double)FLT_MAX);
  return 0;
}

int cli_filter_parse(const char *text, size_t len, const char *name, size_t max_side,
                     cli_filter_weights *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  scanner s;
  memset(&s, 0, sizeof s);
  s.p = text;
  s.len = len;
  s.line = 1;
  double dims[2];
  for (int k = 0; k < 2; k++) {
    int t = next_token(&s);
    if (t == TOKEN_TOO_LONG)
      return cli_fail(err, errlen, "%s:%zu: a token longer than %d characters", name, s.tokline,
                  CLI_FILTER_MAX_TOKEN);
    if (t == TOKEN_END)
      return k == 0 ? cli_fail(err, errlen, "%s is empty: expected width, height, then the weights",
                           name)
                    : cli_fail(err, errlen, "%s: a width but no height", name);
    if (token_value(&s, name, &dims[k], err, errlen) != 0) return -1;
    if (dims[k] < 1 || dims[k] > (double)max_side || dims[k] != floor(dims[k]))
      return cli_fail(err, errlen, "%s:%zu: %s '%s' is not a whole number 1..%zu", name,
                  s.tokline, k ? "height" : "width", s.tok, max_side);
  }
  const size_t w = (size_t)dims[0], h = (size_t)dims[1], count = w * h;
  float *weights = malloc(count * sizeof *weights);
  if (!weights) return cli_fail(err, errlen, "%s: out of memory for %zu weights", name, count);
  size_t got = 0;
  for (;;) {
    int t = next_token(&s);
    if (t == TOKEN_END) break;
    double v = 0;
    if (t == TOKEN_TOO_LONG) {
      cli_fail(err, errlen, "%s:%zu: a token longer than %d characters", name, s.tokline,
           CLI_FILTER_MAX_TOKEN);
    } else if (got == count) {
      cli_fail(err, errlen, "%s:%zu: more than the %zu weights of a %zux%zu filter ('%s')", name,
           s.tokline, count, w, h, s.tok);
    } else if (token_value(&s, name, &v, err, errlen) == 0) {
      weights[got++] = (float)v;
      continue;
    }
    free(weights);
    return -1;
  }
  if (got < count) {
    free(weights);
    return cli_fail(err, errlen, "%s: %zu weights expected for %zux%zu, %zu found", name, count, w,
                h, got);
  }
  out->width = w;
  out->height = h;
  out->w = weights;
  return 0;
}
