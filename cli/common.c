/*
 * common.c — the helpers every part of the `parprim` command shares (common.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <errno.h>
#include <inttypes.h>
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

double cli_value_at(pp_dtype t, const void *p, size_t i) {
  switch (t) {
  case PP_U8: return ((const uint8_t *)p)[i];
  case PP_I32: return ((const int32_t *)p)[i];
  case PP_U32: return ((const uint32_t *)p)[i];
  case PP_I64: return (double)((const int64_t *)p)[i];
  case PP_U64: return (double)((const uint64_t *)p)[i];
  case PP_F32: return ((const float *)p)[i];
  case PP_F64: return ((const double *)p)[i];
  }
  return 0;
}

void cli_format_value(pp_dtype t, const void *p, char *buf, size_t len) {
  union {
    uint8_t u8;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  } v;
  memcpy(&v, p, pp_dtype_size(t));
  switch (t) {
  case PP_U8:
    snprintf(buf, len, "%u", (unsigned)v.u8);
    break;
  case PP_I32:
    snprintf(buf, len, "%" PRId32, v.i32);
    break;
  case PP_U32:
    snprintf(buf, len, "%" PRIu32, v.u32);
    break;
  case PP_I64:
    snprintf(buf, len, "%" PRId64, v.i64);
    break;
  case PP_U64:
    snprintf(buf, len, "%" PRIu64, v.u64);
    break;
  case PP_F32:
    snprintf(buf, len, "%.9g", (double)v.f32);
    break;
  case PP_F64:
    snprintf(buf, len, "%.17g", v.f64);
    break;
  }
}
