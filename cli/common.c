/*
 * common.c — the helpers every part of the `parprim` command shares (common.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"
#include "progress.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_usage_error(const char *cmd, void (*usage)(FILE *f), const char *fmt, const char *arg) {
  fprintf(stderr, "parprim %s: ", cmd);
  fprintf(stderr, fmt, arg);
  fputs("\n\n", stderr);
  usage(stderr);
  return 2;
}

void cli_verror(int *count, const char *cmd, const char *fmt, va_list ap) {
  fflush(stdout);
  fprintf(stderr, "parprim %s: error: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  ++*count;
}

int cli_call_failed(const char *cmd, pp_context *ctx, const char *what, pp_status s) {
  fprintf(stderr, "parprim %s: %s: %s: %s\n", cmd, what, pp_status_string(s), pp_last_error(ctx));
  return 1;
}

int cli_create(const char *cmd, pp_context **ctx, pp_backend backend) {
  pp_status s = pp_create(ctx, backend);
  if (s == PP_OK)
    return 0;
  fprintf(stderr, "parprim %s: backend %s: %s: %s\n", cmd, pp_backend_string(backend),
          pp_status_string(s), pp_last_error(NULL));
  return 1;
}

int cli_stage(const char *cmd, pp_context *ctx, const void *host, size_t bytes, void **dev) {
  pp_status s = pp_malloc(ctx, dev, bytes);
  if (s != PP_OK)
    return cli_call_failed(cmd, ctx, "pp_malloc", s);
  if ((s = pp_copy(ctx, *dev, host, bytes)) != PP_OK || (s = pp_synchronize(ctx)) != PP_OK) {
    (void)pp_free(ctx, *dev); /* already failing; its status adds nothing */
    *dev = NULL;
    return cli_call_failed(cmd, ctx, "copy to the device", s);
  }
  return 0;
}

int cli_scan_error(const cli_scan *sc, const char *fmt, const char *arg) {
  return cli_usage_error(sc->cmd, sc->usage, fmt, arg);
}

static bool takes_value(cli_opt_kind k) {
  return k != CLI_KIND_FLAG && k != CLI_KIND_SWITCH && k != CLI_KIND_QUIET;
}

/* The index in the table of the option arg is ("--name", or "--name=V" when it takes a
 * value, with *inline_val at V); -1 when none. */
static int find_option(const cli_scan *sc, const char *arg, const char **inline_val) {
  for (int k = 0; k < sc->nopts; k++) {
    const cli_option *o = &sc->opts[k];
    size_t len = strlen(o->name);
    *inline_val = NULL;
    if (strcmp(arg, o->name) == 0)
      return k;
    if (takes_value(o->kind) && strncmp(arg, o->name, len) == 0 && arg[len] == '=') {
      *inline_val = arg + len + 1;
      return k;
    }
  }
  return -1;
}

static int parse_number(const char *s, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v))
    return -1;
  *out = v;
  return 0;
}

/* Stores the value v of one of the common kinds; 0, or the usage error's exit code. */
static int store_option(const cli_scan *sc, const cli_option *o, const char *v) {
  switch (o->kind) {
  case CLI_KIND_FLAG:
    *(bool *)o->target = true;
    break;
  case CLI_KIND_QUIET:
    cli_progress_allow(false);
    break;
  case CLI_KIND_DTYPE:
    if (cli_parse_dtype(v, (pp_dtype *)o->target))
      return cli_scan_error(sc, "unknown type '%s' (u8, i32, u32, i64, u64, f32, f64)", v);
    break;
  case CLI_KIND_BACKEND:
    if (cli_parse_backend(v, (pp_backend *)o->target))
      return cli_scan_error(sc, "unknown backend '%s' (cpu, cuda, auto)", v);
    break;
  case CLI_KIND_NAME:
    if (!*v) {
      char msg[128];
      snprintf(msg, sizeof msg, "%s needs %s", o->name, o->text);
      return cli_scan_error(sc, "%s", msg);
    }
    *(const char **)o->target = v;
    break;
  case CLI_KIND_SIZE: {
    size_t *n = (size_t *)o->target;
    if (cli_parse_size(v, n) || *n < o->min || (o->max && *n > o->max))
      return cli_scan_error(sc, o->text, v);
    break;
  }
  case CLI_KIND_NUMBER:
    if (parse_number(v, (double *)o->target))
      return cli_scan_error(sc, o->text, v);
    break;
  case CLI_KIND_SWITCH:
  case CLI_KIND_VALUE:
    break;
  }
  if (o->given)
    *o->given = true;
  return 0;
}

/* An argument that is no option, for a command of one operand; 0 or the exit code. */
static int take_operand(const cli_scan *sc, const char *arg) {
  if (arg[0] == '-' && arg[1] != '\0')
    return cli_scan_error(sc, "unknown option '%s'", arg);
  if (*sc->operand)
    return cli_scan_error(sc, "unexpected argument '%s' (one input file)", arg);
  *sc->operand = arg;
  return 0;
}

/* At the end of argv: the operand, then the required options in table order. */
static int check_complete(const cli_scan *sc) {
  if (sc->operand && !*sc->operand)
    return cli_scan_error(sc, "%s", sc->no_operand);
  for (int k = 0; k < sc->nopts; k++)
    if (sc->opts[k].required && !((sc->seen >> k) & 1)) {
      char msg[128];
      snprintf(msg, sizeof msg, "%s is required", sc->opts[k].name);
      return cli_scan_error(sc, "%s", msg);
    }
  return 0;
}

int cli_scan_next(cli_scan *sc) {
  while (++sc->i < sc->argc) {
    const char *arg = sc->arg = sc->argv[sc->i], *v = NULL;
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 || strcmp(arg, "help") == 0) {
      sc->usage(stdout);
      sc->exit = 0;
      return CLI_SCAN_EXIT;
    }
    int k = find_option(sc, arg, &v);
    if (k < 0 && !sc->operand)
      return CLI_SCAN_OTHER;
    if (k < 0) {
      if ((sc->exit = take_operand(sc, arg)) != 0)
        return CLI_SCAN_EXIT;
      continue;
    }
    const cli_option *o = &sc->opts[k];
    if (takes_value(o->kind) && !v) {
      if (sc->i + 1 >= sc->argc) {
        sc->exit = cli_scan_error(sc, "%s needs a value", arg);
        return CLI_SCAN_EXIT;
      }
      v = sc->argv[++sc->i];
    }
    sc->val = v;
    if (k < 64)
      sc->seen |= UINT64_C(1) << k;
    if (o->kind == CLI_KIND_SWITCH || o->kind == CLI_KIND_VALUE)
      return o->id;
    if ((sc->exit = store_option(sc, o, v)) != 0)
      return CLI_SCAN_EXIT;
  }
  return (sc->exit = check_complete(sc)) != 0 ? CLI_SCAN_EXIT : CLI_SCAN_END;
}

int cli_scan_all(cli_scan *sc) {
  for (;;) {
    int got = cli_scan_next(sc);
    if (got == CLI_SCAN_END)
      return -1;
    if (got == CLI_SCAN_EXIT)
      return sc->exit;
  }
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cli_median(double *v, size_t n) {
  if (n == 0)
    return 0.0;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Parses digits in base 10 (or 16 after 0x) with nothing left over. */
static int parse_u64(const char *s, uint64_t *out, char **rest) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
    return -1;
  int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
  errno = 0;
  unsigned long long v = strtoull(s, rest, base);
  if (errno || *rest == s)
    return -1;
  *out = v;
  return 0;
}

static int shift_size(uint64_t k, size_t *out) {
  if (k >= sizeof(size_t) * 8)
    return -1;
  *out = (size_t)1 << k;
  return 0;
}

int cli_parse_size(const char *s, size_t *out) {
  uint64_t v = 0;
  char *rest = NULL;
  if (!s)
    return -1;
  if (strncmp(s, "2^", 2) == 0 || strncmp(s, "1<<", 3) == 0) {
    if (parse_u64(s + (s[0] == '2' ? 2 : 3), &v, &rest) || *rest)
      return -1;
    return shift_size(v, out);
  }
  if (parse_u64(s, &v, &rest))
    return -1;
  unsigned shift = 0;
  if (*rest == 'k' || *rest == 'K')
    shift = 10;
  else if (*rest == 'm' || *rest == 'M')
    shift = 20;
  else if (*rest == 'g' || *rest == 'G')
    shift = 30;
  else if (*rest)
    return -1;
  if (shift && rest[1])
    return -1;
  if (v > (UINT64_MAX >> shift) || (v << shift) > (uint64_t)SIZE_MAX)
    return -1;
  *out = (size_t)(v << shift);
  return 0;
}

const char *cli_op_string(pp_op op) {
  switch (op) {
  case PP_SUM:
    return "sum";
  case PP_MIN:
    return "min";
  case PP_MAX:
    return "max";
  }
  return "unknown";
}

/* The value in [0, count) that name() calls s, or -1: parprim.h numbers the values of
 * pp_backend, pp_dtype and pp_op from 0 without gaps. */
static int lookup(const char *s, int count, const char *(*name)(int)) {
  for (int v = 0; s && v < count; v++)
    if (strcmp(s, name(v)) == 0)
      return v;
  return -1;
}
static const char *backend_name(int v) { return pp_backend_string((pp_backend)v); }
static const char *dtype_name(int v) { return pp_dtype_string((pp_dtype)v); }
static const char *op_name(int v) { return cli_op_string((pp_op)v); }

int cli_parse_backend(const char *s, pp_backend *out) {
  int v = lookup(s, PP_BACKEND_CUDA + 1, backend_name);
  if (v >= 0)
    *out = (pp_backend)v;
  return v < 0 ? -1 : 0;
}

int cli_parse_dtype(const char *s, pp_dtype *out) {
  int v = lookup(s, PP_F64 + 1, dtype_name);
  if (v >= 0)
    *out = (pp_dtype)v;
  return v < 0 ? -1 : 0;
}

int cli_parse_op(const char *s, pp_op *out) {
  int v = lookup(s, PP_MAX + 1, op_name);
  if (v >= 0)
    *out = (pp_op)v;
  return v < 0 ? -1 : 0;
}

uint64_t cli_splitmix64(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* Float values are k * 2^-23 - 1 (or 2^-52 for f64): exact, in [-1, 1), no -0.0. */
static void store_random(pp_dtype t, void *dst, size_t i, uint64_t h) {
  switch (t) {
  case PP_U8:
    ((uint8_t *)dst)[i] = (uint8_t)(h >> 56);
    break;
  case PP_I32:
  case PP_U32: {
    uint32_t v = (uint32_t)(h >> 32);
    memcpy((char *)dst + i * 4, &v, 4);
    break;
  }
  case PP_I64:
  case PP_U64:
    memcpy((char *)dst + i * 8, &h, 8);
    break;
  case PP_F32:
    ((float *)dst)[i] = (float)((double)(h >> 40) * 0x1p-23 - 1.0);
    break;
  case PP_F64:
    ((double *)dst)[i] = (double)(h >> 11) * 0x1p-52 - 1.0;
    break;
  }
}

void cli_fill_random(pp_dtype t, void *dst, size_t count, uint64_t seed, uint64_t first) {
  uint64_t key = cli_splitmix64(seed);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count > 65536)
#endif
  for (size_t i = 0; i < count; i++)
    store_random(t, dst, i, cli_splitmix64(key + first + i));
}

/* Read through memcpy, so p need not be aligned (a reduce result may sit in a byte array). */
#define RETURN_AS_DOUBLE(type)                                                             \
  do {                                                                                     \
    type v_;                                                                               \
    memcpy(&v_, e, sizeof v_);                                                             \
    return (double)v_;                                                                     \
  } while (0)

double cli_value_at(pp_dtype t, const void *p, size_t i) {
  const unsigned char *e = (const unsigned char *)p + i * pp_dtype_size(t);
  switch (t) {
  case PP_U8: return *e;
  case PP_I32: RETURN_AS_DOUBLE(int32_t);
  case PP_U32: RETURN_AS_DOUBLE(uint32_t);
  case PP_I64: RETURN_AS_DOUBLE(int64_t);
  case PP_U64: RETURN_AS_DOUBLE(uint64_t);
  case PP_F32: RETURN_AS_DOUBLE(float);
  case PP_F64: RETURN_AS_DOUBLE(double);
  }
  return 0;
}

/* Every dtype but the 64-bit integers is exact in a double, so only those are read apart.
 * 9 and 17 significant digits are enough to read an f32 and an f64 back to the same value
 * (IEEE 754-2008, 5.12.2). */
void cli_format_value(pp_dtype t, const void *p, char *buf, size_t len) {
  if (t == PP_I64) {
    int64_t v;
    memcpy(&v, p, sizeof v);
    snprintf(buf, len, "%" PRId64, v);
  } else if (t == PP_U64) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    snprintf(buf, len, "%" PRIu64, v);
  } else if (t == PP_F32 || t == PP_F64) {
    snprintf(buf, len, "%.*g", t == PP_F32 ? 9 : 17, cli_value_at(t, p, 0));
  } else {
    snprintf(buf, len, "%" PRId64, (int64_t)cli_value_at(t, p, 0));
  }
}
