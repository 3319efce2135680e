/*
 * bench.c — `parprim bench`: times parprim against its peer in the same process.
 *
 * Protocol (DESIGN.md, "Benchmarks"): per primitive and size, warm up, then time each of
 * >= 20 runs (default 30) on its own and report the median. On CUDA the clock is a pair
 * of CUDA events on a stream this harness creates and sets on the context, and the peer
 * (CUB, cudaMemcpyAsync) runs on the same stream over the same buffers. On the CPU the
 * clock is CLOCK_MONOTONIC around the call, and the peer is a memcpy of the same bytes,
 * which is the bandwidth a one-pass primitive can hope for.
 *
 * Inputs are random (fixed seed), generated on the host once and copied with pp_copy.
 * Inputs smaller than 256 MiB are replicated into several slots that the runs rotate
 * over, so no run reads its input from a warm L2 (50-60 MB on H100/H200) or CPU cache.
 *
 * Adding a primitive: write its run function and add it to bench_entries[].
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "gpu.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define MIB ((size_t)1 << 20)
#define ROTATE_BYTES (256 * MIB) /* well above the largest L2 we target */
#define SLOT_ALIGN 256           /* pp_malloc's alignment, kept for every slot */
#define FILL_CHUNK (16 * MIB)    /* host staging for input generation */
#define WARMUP_RUNS 3
#define DEFAULT_REPS 30
#define PROTOCOL_MIN_REPS 20
#define BENCH_EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define MAX_LIST 16
#define CPU_DEFAULT_MAX_N ((size_t)1 << 29) /* 2^30 runs on the CPU only when asked for */

/* ==================================================================================== */
/* Helpers shared with cli/                                                             */
/* ==================================================================================== */

double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, size_t n) {
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

int bench_parse_size(const char *s, size_t *out) {
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

int bench_parse_backend(const char *s, pp_backend *out) {
  static const pp_backend all[] = {PP_BACKEND_AUTO, PP_BACKEND_CPU, PP_BACKEND_CUDA};
  for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(s, pp_backend_string(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  return -1;
}

int bench_parse_dtype(const char *s, pp_dtype *out) {
  static const pp_dtype all[] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64};
  for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(s, pp_dtype_string(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  return -1;
}

const char *bench_op_string(pp_op op) {
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

int bench_parse_op(const char *s, pp_op *out) {
  static const pp_op all[] = {PP_SUM, PP_MIN, PP_MAX};
  for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(s, bench_op_string(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  return -1;
}

static uint64_t splitmix64(uint64_t x) {
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

void bench_fill_random(pp_dtype t, void *dst, size_t count, uint64_t seed, uint64_t first) {
  uint64_t key = splitmix64(seed);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count > 65536)
#endif
  for (size_t i = 0; i < count; i++)
    store_random(t, dst, i, splitmix64(key + first + i));
}

void bench_format_value(pp_dtype t, const void *p, char *buf, size_t len) {
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

/* ==================================================================================== */
/* Options, environment, reporting                                                      */
/* ==================================================================================== */

typedef enum bench_fmt { FMT_HUMAN, FMT_CSV, FMT_JSON } bench_fmt;

typedef struct bench_opts {
  const char *prims[MAX_LIST];
  int nprims;
  size_t sizes[MAX_LIST];
  int nsizes;
  int reps;
  bench_fmt fmt;
  pp_backend backend;
  bool has_dtype, has_op;
  pp_dtype dtype;
  pp_op op;
} bench_opts;

typedef struct bench_env {
  const bench_opts *o;
  pp_context *ctx;
  bool cuda; /* the context runs on CUDA: event timing and the CUB peers */
  void *stream;
  bench_gpu_timer *timer;
  pp_device_info dev;
  int failures;
  bool csv_header_done;
} bench_env;

/* One measured line: ours against the peer on the same inputs. */
typedef struct bench_row {
  const char *prim;
  const char *op;
  pp_dtype t;
  size_t n;
  const char *bytes_model;
  double bytes, ms;            /* ours: bytes moved by the model, median time */
  const char *peer;
  double peer_bytes, peer_ms;
  const char *check;           /* "ok", "MISMATCH", or "-" when there is nothing to compare */
} bench_row;

static FILE *note_stream(const bench_env *env) {
  /* machine-readable output stays parseable: notes go beside it, not into it */
  return env->o->fmt == FMT_HUMAN ? stdout : stderr;
}

static void bench_note(const bench_env *env, const char *fmt, ...) {
  va_list ap;
  FILE *f = note_stream(env);
  va_start(ap, fmt);
  fputs("  note: ", f);
  vfprintf(f, fmt, ap);
  fputc('\n', f);
  va_end(ap);
}

static void bench_fail(bench_env *env, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fputs("parprim bench: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  env->failures++;
}

static bool pp_ok(bench_env *env, pp_status s, const char *what) {
  if (s == PP_OK)
    return true;
  bench_fail(env, "%s: %s: %s", what, pp_status_string(s), pp_last_error(env->ctx));
  return false;
}

static bool gpu_ok(bench_env *env, int rc, const char *what) {
  if (rc == 0)
    return true;
  bench_fail(env, "%s: %s", what, bench_gpu_error());
  return false;
}

static const char *size_text(size_t n, char *buf, size_t len) {
  if (n && (n & (n - 1)) == 0) {
    int k = 0;
    while (((size_t)1 << k) != n)
      k++;
    snprintf(buf, len, "2^%d", k);
  } else {
    snprintf(buf, len, "%zu", n);
  }
  return buf;
}

static double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

/* On CUDA the peer did the same work, so the time ratio is the speed-up; on the CPU the
 * peer is memcpy, a bandwidth ceiling, so the bandwidth ratio is the fraction reached. */
static double row_ratio(const bench_env *env, const bench_row *r) {
  if (env->cuda)
    return r->ms > 0 ? r->peer_ms / r->ms : 0.0;
  double peer = gbs(r->peer_bytes, r->peer_ms);
  return peer > 0 ? gbs(r->bytes, r->ms) / peer : 0.0;
}

static const char *ratio_kind(const bench_env *env) {
  return env->cuda ? "peer_time/our_time" : "our_gbs/peer_gbs";
}

static void csv_text(const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, stdout);
    return;
  }
  putchar('"');
  for (; *s; s++) {
    if (*s == '"')
      putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static void json_text(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void print_row_human(const bench_env *env, const bench_row *r) {
  char nb[32];
  printf("%-10s %-4s %-5s %7s %11.4f %9.1f | %-10s %11.4f %9.1f | %7.3f  %s\n", r->prim, r->op,
         pp_dtype_string(r->t), size_text(r->n, nb, sizeof nb), r->ms, gbs(r->bytes, r->ms),
         r->peer, r->peer_ms, gbs(r->peer_bytes, r->peer_ms), row_ratio(env, r), r->check);
}

static void print_row_csv(bench_env *env, const bench_row *r) {
  if (!env->csv_header_done) {
    puts("primitive,op,dtype,n,bytes,bytes_model,backend,device,reps,time_ms,gbs,peer,"
         "peer_time_ms,peer_gbs,ratio,ratio_kind,check");
    env->csv_header_done = true;
  }
  printf("%s,%s,%s,%zu,%.0f,", r->prim, r->op, pp_dtype_string(r->t), r->n, r->bytes);
  csv_text(r->bytes_model);
  printf(",%s,", pp_backend_string(pp_backend_of(env->ctx)));
  csv_text(env->dev.name);
  printf(",%d,%.6f,%.3f,%s,%.6f,%.3f,%.4f,%s,%s\n", env->o->reps, r->ms, gbs(r->bytes, r->ms),
         r->peer, r->peer_ms, gbs(r->peer_bytes, r->peer_ms), row_ratio(env, r),
         ratio_kind(env), r->check);
}

static void print_row_json(const bench_env *env, const bench_row *r) {
  printf("{\"primitive\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,\"bytes\":%.0f,"
         "\"bytes_model\":",
         r->prim, r->op, pp_dtype_string(r->t), r->n, r->bytes);
  json_text(r->bytes_model);
  printf(",\"backend\":\"%s\",\"device\":", pp_backend_string(pp_backend_of(env->ctx)));
  json_text(env->dev.name);
  printf(",\"reps\":%d,\"time_ms\":%.6f,\"gbs\":%.3f,\"peer\":\"%s\",\"peer_time_ms\":%.6f,"
         "\"peer_gbs\":%.3f,\"ratio\":%.4f,\"ratio_kind\":\"%s\",\"check\":\"%s\"}\n",
         env->o->reps, r->ms, gbs(r->bytes, r->ms), r->peer, r->peer_ms,
         gbs(r->peer_bytes, r->peer_ms), row_ratio(env, r), ratio_kind(env), r->check);
}

static void print_row(bench_env *env, const bench_row *r) {
  switch (env->o->fmt) {
  case FMT_HUMAN:
    print_row_human(env, r);
    break;
  case FMT_CSV:
    print_row_csv(env, r);
    break;
  case FMT_JSON:
    print_row_json(env, r);
    break;
  }
  fflush(stdout);
}

/* ==================================================================================== */
/* Memory: working sets that rotate past the caches                                     */
/* ==================================================================================== */

/* `slots` copies of one n-element input, `stride` bytes apart; run i uses slot i % slots. */
typedef struct bench_ws {
  char *base;
  size_t slots, stride, bytes;
} bench_ws;

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* 0 when the working set for `bytes` per input cannot even be sized. */
static size_t ws_plan(size_t bytes, size_t *slots, size_t *stride) {
  *stride = round_up(bytes, SLOT_ALIGN);
  *slots = bytes >= ROTATE_BYTES ? 1 : ROTATE_BYTES / *stride + 1;
  if (*stride < bytes || *slots > SIZE_MAX / *stride)
    return 0;
  return *slots * *stride;
}

static void *ws_slot(const bench_ws *w, size_t slot) {
  return w->base + (slot % w->slots) * w->stride;
}

/* Available memory where the backend allocates: device memory on CUDA, MemAvailable on
 * the CPU; 0 when unknown (then only allocation failures skip a size). */
static size_t available_bytes(bench_env *env) {
  if (env->cuda) {
    size_t free_b = 0, total_b = 0;
    return bench_gpu_mem_info(&free_b, &total_b) == 0 ? free_b : 0;
  }
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return (size_t)kib * 1024;
}

static bool fits(bench_env *env, const char *prim, size_t n, size_t need) {
  size_t avail = available_bytes(env);
  /* headroom for the library's and CUB's temporaries and, on the CPU, everything else */
  if (avail == 0 || need <= avail / 10 * 8)
    return true;
  char nb[32];
  bench_note(env, "%s n=%s skipped: needs %.2f GiB, %.2f GiB available", prim,
             size_text(n, nb, sizeof nb), (double)need / (1u << 30),
             (double)avail / (1u << 30));
  return false;
}

/* Generates the whole working set (padding too) in host chunks, so host memory stays
 * small however large the input is. */
static bool ws_fill(bench_env *env, bench_ws *w, pp_dtype t, uint64_t seed) {
  size_t es = pp_dtype_size(t);
  size_t total = w->bytes / es, chunk = FILL_CHUNK / es;
  void *host = malloc((total < chunk ? total : chunk) * es);
  if (!host) {
    bench_fail(env, "out of host memory staging the input");
    return false;
  }
  bool ok = true;
  for (size_t first = 0; ok && first < total; first += chunk) {
    size_t cnt = total - first < chunk ? total - first : chunk;
    bench_fill_random(t, host, cnt, seed, first);
    ok = pp_ok(env, pp_copy(env->ctx, w->base + first * es, host, cnt * es), "pp_copy (input)");
  }
  free(host);
  return ok;
}

typedef enum alloc_result { ALLOC_OK, ALLOC_SKIP, ALLOC_FAIL } alloc_result;

static alloc_result ws_alloc(bench_env *env, bench_ws *w, size_t bytes, pp_dtype t,
                             uint64_t seed) {
  w->bytes = ws_plan(bytes, &w->slots, &w->stride);
  void *p = NULL;
  pp_status s = pp_malloc(env->ctx, &p, w->bytes);
  if (s == PP_ERR_OUT_OF_MEMORY) {
    bench_note(env, "skipped: pp_malloc of %.2f GiB failed (%s)", (double)w->bytes / (1u << 30),
               pp_last_error(env->ctx));
    return ALLOC_SKIP;
  }
  if (!pp_ok(env, s, "pp_malloc (input)"))
    return ALLOC_FAIL;
  w->base = p;
  return ws_fill(env, w, t, seed) ? ALLOC_OK : ALLOC_FAIL;
}

static void ws_free(bench_env *env, bench_ws *w) {
  if (w->base)
    pp_ok(env, pp_free(env->ctx, w->base), "pp_free");
  w->base = NULL;
}

/* ==================================================================================== */
/* Timing                                                                               */
/* ==================================================================================== */

/* One run on one slot. Returns PP_OK, PP_ERR_UNSUPPORTED (not reported: the caller says
 * "not implemented"), or another status after reporting it. */
typedef pp_status (*bench_call)(bench_env *env, void *arg, size_t slot);

static bool bench_sync(bench_env *env) {
  if (env->cuda)
    return gpu_ok(env, bench_gpu_stream_sync(env->stream), "stream synchronize");
  return pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize");
}

static pp_status time_one(bench_env *env, bench_call call, void *arg, size_t slot, double *ms) {
  if (!env->cuda) {
    double t0 = bench_now_ms();
    pp_status s = call(env, arg, slot);
    if (s == PP_OK && !pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize"))
      s = PP_ERR_DEVICE;
    *ms = bench_now_ms() - t0;
    return s;
  }
  if (!gpu_ok(env, bench_gpu_timer_start(env->timer, env->stream), "event record"))
    return PP_ERR_DEVICE;
  pp_status s = call(env, arg, slot);
  if (s != PP_OK)
    return s;
  if (!gpu_ok(env, bench_gpu_timer_stop(env->timer, env->stream), "event record") ||
      !gpu_ok(env, bench_gpu_timer_elapsed_ms(env->timer, ms), "event elapsed time"))
    return PP_ERR_DEVICE;
  return PP_OK;
}

/* Warm-up, then reps timed runs over slots WARMUP_RUNS, WARMUP_RUNS+1, ...; ours and the
 * peer get the same sequence, so they read the same slots and end on the same one. */
static pp_status bench_time(bench_env *env, bench_call call, void *arg, double *median_ms) {
  int reps = env->o->reps;
  double *ms = malloc((size_t)reps * sizeof *ms);
  if (!ms) {
    bench_fail(env, "out of host memory");
    return PP_ERR_OUT_OF_MEMORY;
  }
  pp_status s = PP_OK;
  for (size_t w = 0; s == PP_OK && w < WARMUP_RUNS; w++)
    s = call(env, arg, w);
  if (s == PP_OK && !bench_sync(env))
    s = PP_ERR_DEVICE;
  for (int r = 0; s == PP_OK && r < reps; r++)
    s = time_one(env, call, arg, WARMUP_RUNS + (size_t)r, &ms[r]);
  if (s == PP_OK)
    *median_ms = bench_median(ms, (size_t)reps);
  free(ms);
  return s;
}

/* ==================================================================================== */
/* reduce and argreduce                                                                 */
/* ==================================================================================== */

typedef enum case_result { CASE_RAN, CASE_SKIPPED, CASE_FAILED } case_result;

typedef struct red_case {
  pp_op op;
  pp_dtype t;
  size_t n;
  bench_ws in, dst;         /* dst: target of the CPU memcpy peer */
  void *out, *peer_out;     /* one element of t each, pp_malloc'd */
  void *idx, *peer_idx;     /* argreduce: uint64_t ours, int64_t CUB's */
} red_case;

static pp_status call_reduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s = pp_reduce(env->ctx, c->op, c->t, ws_slot(&c->in, slot), c->n, c->out);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_reduce");
  return s;
}

static pp_status call_argreduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s =
      pp_argreduce(env->ctx, c->op, c->t, ws_slot(&c->in, slot), c->n, c->out, c->idx);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_argreduce");
  return s;
}

static pp_status call_cub_reduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_cub_reduce(c->t, c->op, ws_slot(&c->in, slot), c->n, c->peer_out, env->stream);
  return gpu_ok(env, rc, "CUB reduce") ? PP_OK : PP_ERR_DEVICE;
}

static pp_status call_cub_argreduce(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_cub_argreduce(c->t, c->op, ws_slot(&c->in, slot), c->n, c->peer_out,
                               c->peer_idx, env->stream);
  return gpu_ok(env, rc, "CUB argreduce") ? PP_OK : PP_ERR_DEVICE;
}

static void parallel_memcpy(void *dst, const void *src, size_t bytes) {
#ifdef _OPENMP
  int parts = omp_get_max_threads();
  size_t chunk = round_up((bytes + (size_t)parts - 1) / (size_t)parts, 4096);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < parts; i++) {
    size_t off = (size_t)i * chunk;
    if (off < bytes)
      memcpy((char *)dst + off, (const char *)src + off, bytes - off < chunk ? bytes - off : chunk);
  }
#else
  memcpy(dst, src, bytes);
#endif
}

static pp_status call_host_memcpy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  (void)env;
  parallel_memcpy(ws_slot(&c->dst, slot), ws_slot(&c->in, slot), c->n * pp_dtype_size(c->t));
  return PP_OK;
}

static bool alloc_small(bench_env *env, void **p, size_t bytes) {
  return pp_ok(env, pp_malloc(env->ctx, p, bytes), "pp_malloc (output)");
}

static void free_small(bench_env *env, void **p) {
  if (*p)
    pp_ok(env, pp_free(env->ctx, *p), "pp_free");
  *p = NULL;
}

static void red_teardown(bench_env *env, red_case *c) {
  ws_free(env, &c->in);
  ws_free(env, &c->dst);
  free_small(env, &c->out);
  free_small(env, &c->peer_out);
  free_small(env, &c->idx);
  free_small(env, &c->peer_idx);
}

static case_result red_setup(bench_env *env, red_case *c, const char *prim) {
  size_t es = pp_dtype_size(c->t), slots, stride;
  if (c->n > SIZE_MAX / es) {
    bench_note(env, "%s n=%zu skipped: n * %zu overflows size_t", prim, c->n, es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * es, &slots, &stride);
  if (ws == 0 || ws > SIZE_MAX / 2) {
    bench_note(env, "%s n=%zu skipped: too large", prim, c->n);
    return CASE_SKIPPED;
  }
  /* the CPU memcpy peer needs a target as large as the input */
  if (!fits(env, prim, c->n, env->cuda ? ws : 2 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc(env, &c->in, c->n * es, c->t, BENCH_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK && !env->cuda)
    a = ws_alloc(env, &c->dst, c->n * es, c->t, BENCH_SEED); /* pre-faults every page */
  if (a != ALLOC_OK)
    return a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bool ok = alloc_small(env, &c->out, 8) && alloc_small(env, &c->peer_out, 8) &&
            alloc_small(env, &c->idx, 8) && alloc_small(env, &c->peer_idx, 8);
  return ok ? CASE_RAN : CASE_FAILED;
}

/* Our result against CUB's. Float SUM orders differ, so they agree to within the bound
 * of a pairwise sum over values in [-1, 1): n * eps * (log2 n + 2). */
static bool values_agree(pp_dtype t, pp_op op, size_t n, const void *a, const void *b) {
  if (op == PP_SUM && (t == PP_F32 || t == PP_F64)) {
    double x, y, eps = t == PP_F32 ? 0x1p-24 : 0x1p-53;
    if (t == PP_F32) {
      float fx, fy;
      memcpy(&fx, a, 4);
      memcpy(&fy, b, 4);
      x = fx;
      y = fy;
    } else {
      memcpy(&x, a, 8);
      memcpy(&y, b, 8);
    }
    return fabs(x - y) <= (double)n * eps * (log2((double)n + 1) + 2);
  }
  return memcmp(a, b, pp_dtype_size(t)) == 0; /* inputs have no NaN and no -0.0 */
}

/* After both timed loops ended on the same slot, compare their outputs. */
static const char *red_check(bench_env *env, red_case *c, const char *prim, bool arg) {
  unsigned char ours[8], peer[8];
  uint64_t idx = 0;
  int64_t peer_idx = 0;
  size_t es = pp_dtype_size(c->t);
  if (!pp_ok(env, pp_copy(env->ctx, ours, c->out, es), "pp_copy (result)") ||
      !pp_ok(env, pp_copy(env->ctx, peer, c->peer_out, es), "pp_copy (CUB result)") ||
      (arg && (!pp_ok(env, pp_copy(env->ctx, &idx, c->idx, 8), "pp_copy (index)") ||
               !pp_ok(env, pp_copy(env->ctx, &peer_idx, c->peer_idx, 8), "pp_copy (CUB index)"))))
    return "-";
  bool same = values_agree(c->t, c->op, c->n, ours, peer) && (!arg || (int64_t)idx == peer_idx);
  if (same)
    return "ok";
  char a[64], b[64];
  bench_format_value(c->t, ours, a, sizeof a);
  bench_format_value(c->t, peer, b, sizeof b);
  bench_fail(env, "%s %s %s n=%zu: parprim gives %s (index %" PRIu64 "), CUB %s (index %" PRId64
                  ")",
             prim, bench_op_string(c->op), pp_dtype_string(c->t), c->n, a, idx, b, peer_idx);
  return "MISMATCH";
}

static bool red_prepare_peer(bench_env *env, red_case *c, bool arg) {
  if (!env->cuda)
    return true;
  int rc = arg ? bench_cub_argreduce_prepare(c->t, c->op, c->n, env->stream)
               : bench_cub_reduce_prepare(c->t, c->op, c->n, env->stream);
  return gpu_ok(env, rc, "CUB temp storage");
}

static case_result red_measure(bench_env *env, red_case *c, const char *prim, bool arg) {
  bench_row r = {.prim = prim, .op = bench_op_string(c->op), .t = c->t, .n = c->n,
                 .bytes_model = "reads n*size", .check = "-"};
  r.bytes = r.peer_bytes = (double)c->n * (double)pp_dtype_size(c->t);
  pp_status s = bench_time(env, arg ? call_argreduce : call_reduce, c, &r.ms);
  if (s == PP_ERR_UNSUPPORTED) {
    char nb[32];
    bench_note(env, "%s %s %s n=%s: not implemented on the %s backend", prim, r.op,
               pp_dtype_string(c->t), size_text(c->n, nb, sizeof nb),
               pp_backend_string(pp_backend_of(env->ctx)));
    return CASE_SKIPPED;
  }
  if (s != PP_OK || !red_prepare_peer(env, c, arg))
    return CASE_FAILED;
  bench_call peer = !env->cuda ? call_host_memcpy : arg ? call_cub_argreduce : call_cub_reduce;
  if (bench_time(env, peer, c, &r.peer_ms) != PP_OK)
    return CASE_FAILED;
  r.peer = env->cuda ? "CUB" : "memcpy";
  if (!env->cuda)
    r.peer_bytes *= 2; /* memcpy reads and writes */
  else
    r.check = red_check(env, c, prim, arg);
  print_row(env, &r);
  return CASE_RAN;
}

static case_result red_case_run(bench_env *env, const char *prim, bool arg, pp_op op,
                                pp_dtype t, size_t n) {
  red_case c = {.op = op, .t = t, .n = n};
  case_result res = red_setup(env, &c, prim);
  if (res == CASE_RAN)
    res = red_measure(env, &c, prim, arg);
  red_teardown(env, &c);
  return res;
}

static int run_reduce(bench_env *env, const size_t *sizes, int nsizes) {
  static const pp_dtype others[] = {PP_I32, PP_U32, PP_I64, PP_U64, PP_F64, PP_U8};
  const bench_opts *o = env->o;
  pp_op op = o->has_op ? o->op : PP_SUM;
  pp_dtype first = o->has_dtype ? o->dtype : PP_F32;
  size_t largest = 0;
  for (int i = 0; i < nsizes; i++)
    if (red_case_run(env, "reduce", false, op, first, sizes[i]) == CASE_RAN && sizes[i] > largest)
      largest = sizes[i];
  /* the other types at 2^28 (the size the targets are set at) when it is in the list, and
     at the largest size */
  size_t anchor = (size_t)1 << 28;
  bool anchor_listed = false;
  for (int i = 0; i < nsizes; i++) anchor_listed |= sizes[i] == anchor && anchor != largest;
  for (size_t k = 0; !o->has_dtype && largest && k < sizeof others / sizeof others[0]; k++) {
    if (anchor_listed) red_case_run(env, "reduce", false, op, others[k], anchor);
    red_case_run(env, "reduce", false, op, others[k], largest);
  }
  return 0;
}

static int run_argreduce(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  if (o->has_op && o->op == PP_SUM) {
    bench_note(env, "argreduce skipped: --op sum does not apply (min or max)");
    return 0;
  }
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int k = PP_MIN; k <= PP_MAX; k++) {
    if (o->has_op && o->op != (pp_op)k)
      continue;
    for (int i = 0; i < nsizes; i++)
      red_case_run(env, "argreduce", true, (pp_op)k, t, sizes[i]);
  }
  return 0;
}

/* ==================================================================================== */
/* memcpy: the roofline reference                                                       */
/* ==================================================================================== */

static pp_status call_pp_copy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  pp_status s = pp_copy(env->ctx, ws_slot(&c->dst, slot), ws_slot(&c->in, slot),
                        c->n * pp_dtype_size(c->t));
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, "pp_copy");
  return s;
}

static pp_status call_cuda_memcpy(bench_env *env, void *arg, size_t slot) {
  red_case *c = arg;
  int rc = bench_gpu_memcpy(ws_slot(&c->dst, slot), ws_slot(&c->in, slot),
                            c->n * pp_dtype_size(c->t), env->stream);
  return gpu_ok(env, rc, "cudaMemcpyAsync") ? PP_OK : PP_ERR_DEVICE;
}

static case_result memcpy_case(bench_env *env, pp_dtype t, size_t n) {
  red_case c = {.op = PP_SUM, .t = t, .n = n};
  size_t es = pp_dtype_size(t), slots, stride;
  size_t ws = n <= SIZE_MAX / es ? ws_plan(n * es, &slots, &stride) : 0;
  if (ws == 0 || ws > SIZE_MAX / 2) {
    bench_note(env, "memcpy n=%zu skipped: too large", n);
    return CASE_SKIPPED;
  }
  if (!fits(env, "memcpy", n, 2 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc(env, &c.in, n * es, t, BENCH_SEED);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c.dst, n * es, t, BENCH_SEED + 1);
  case_result res = a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bench_row r = {.prim = "memcpy", .op = "copy", .t = t, .n = n,
                 .bytes_model = "reads+writes 2*n*size", .check = "-",
                 .peer = env->cuda ? "cudaMemcpy" : "memcpy"};
  r.bytes = r.peer_bytes = 2.0 * (double)n * (double)es;
  if (res == CASE_RAN && (bench_time(env, call_pp_copy, &c, &r.ms) != PP_OK ||
                          bench_time(env, env->cuda ? call_cuda_memcpy : call_host_memcpy, &c,
                                     &r.peer_ms) != PP_OK))
    res = CASE_FAILED;
  if (res == CASE_RAN)
    print_row(env, &r);
  red_teardown(env, &c);
  return res;
}

static int run_memcpy(bench_env *env, const size_t *sizes, int nsizes) {
  pp_dtype t = env->o->has_dtype ? env->o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++)
    memcpy_case(env, t, sizes[i]);
  return 0;
}

/* ==================================================================================== */
/* The table of benchmarks                                                              */
/* ==================================================================================== */

typedef struct bench_entry {
  const char *name;
  int (*run)(bench_env *env, const size_t *sizes, int nsizes);
  const char *bytes_model;
  const char *peer_cuda, *peer_cpu;
  size_t sizes[MAX_LIST]; /* defaults, 0-terminated */
} bench_entry;

#define P2(k) ((size_t)1 << (k))

static const bench_entry bench_entries[] = {
    {"reduce", run_reduce, "reads n*size", "CUB DeviceReduce::Sum/Min/Max",
     "memcpy of the same bytes", {P2(20), P2(24), P2(28), P2(30)}},
    {"argreduce", run_argreduce, "reads n*size", "CUB DeviceReduce::ArgMin/ArgMax",
     "memcpy of the same bytes", {P2(20), P2(24), P2(28)}},
    {"memcpy", run_memcpy, "reads+writes 2*n*size (n elements of --dtype, default f32)",
     "cudaMemcpyAsync device to device", "OpenMP-parallel memcpy", {P2(20), P2(24), P2(28)}},
};

#define N_ENTRIES (sizeof bench_entries / sizeof bench_entries[0])

static const bench_entry *find_entry(const char *name) {
  for (size_t i = 0; i < N_ENTRIES; i++)
    if (strcmp(bench_entries[i].name, name) == 0)
      return &bench_entries[i];
  return NULL;
}

/* ==================================================================================== */
/* Command line                                                                         */
/* ==================================================================================== */

void pp_bench_usage(FILE *f) {
  fputs("usage: parprim bench [primitive ...] [options]\n"
        "\n"
        "Times parprim against its peer in the same process: on CUDA, CUB (or\n"
        "cudaMemcpyAsync) on the same stream with CUDA events; on the CPU, memcpy of the\n"
        "same bytes as the bandwidth ceiling. Median of the timed runs after warm-up.\n"
        "\n"
        "primitives:",
        f);
  for (size_t i = 0; i < N_ENTRIES; i++)
    fprintf(f, " %s", bench_entries[i].name);
  fputs(" (default: all)\n"
        "\n"
        "options:\n"
        "  --n N        size in elements; repeat for several sizes. N may be 1048576,\n"
        "               0x100000, 2^20, 1<<20 or 1M. Default: 2^20 2^24 2^28, plus 2^30\n"
        "               for reduce (2^30 on the CPU backend only when asked for)\n"
        "  --reps R     timed runs per measurement (default 30; the protocol wants >= 20)\n"
        "  --csv        CSV with a header line instead of the table\n"
        "  --json       one JSON object per line instead of the table\n"
        "  --backend B  cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --dtype T    u8 i32 u32 i64 u64 f32 f64; reduce default: f32 at every size,\n"
        "               then the other types (sum) at the largest size\n"
        "  --op OP      sum, min or max (reduce default sum; argreduce: min and max)\n"
        "  -h, --help   this text\n"
        "\n"
        "Ratio: on CUDA peer time / our time (> 1: parprim is faster); on the CPU our GB/s\n"
        "/ memcpy GB/s, with memcpy counting bytes read + written.\n"
        "Exit: 0 all ran and agreed with the peer, 1 a call failed or a result disagreed,\n"
        "2 usage, 77 (skip) the backend asked for has no device here.\n",
        f);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("parprim bench: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n\n", stderr);
  pp_bench_usage(stderr);
  return 2;
}

/* Matches "--name V" and "--name=V"; returns 1 and sets *val, 0 on no match, -1 when the
 * value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val) {
  size_t len = strlen(name);
  if (strncmp(argv[*i], name, len) != 0)
    return 0;
  if (argv[*i][len] == '=') {
    *val = argv[*i] + len + 1;
    return 1;
  }
  if (argv[*i][len] != '\0')
    return 0;
  if (*i + 1 >= argc)
    return -1;
  *val = argv[++*i];
  return 1;
}

/* 0: parsed, 1: help printed, 2: usage error (reported). */
static int parse_valued(bench_opts *o, const char *flag, const char *v) {
  size_t n = 0;
  if (strcmp(flag, "--n") == 0) {
    if (bench_parse_size(v, &n) || n == 0)
      return usage_error("bad size for --n: '%s'", v);
    if (o->nsizes == MAX_LIST)
      return usage_error("too many --n (at most 16), at '%s'", v);
    o->sizes[o->nsizes++] = n;
  } else if (strcmp(flag, "--reps") == 0) {
    if (bench_parse_size(v, &n) || n == 0 || n > 100000)
      return usage_error("bad count for --reps: '%s'", v);
    o->reps = (int)n;
  } else if (strcmp(flag, "--backend") == 0) {
    if (bench_parse_backend(v, &o->backend))
      return usage_error("unknown backend '%s' (cpu, cuda, auto)", v);
  } else if (strcmp(flag, "--dtype") == 0) {
    if (bench_parse_dtype(v, &o->dtype))
      return usage_error("unknown dtype '%s' (u8 i32 u32 i64 u64 f32 f64)", v);
    o->has_dtype = true;
  } else if (strcmp(flag, "--op") == 0) {
    if (bench_parse_op(v, &o->op))
      return usage_error("unknown op '%s' (sum, min, max)", v);
    o->has_op = true;
  }
  return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o) {
  static const char *const valued[] = {"--n", "--reps", "--backend", "--dtype", "--op"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "help") == 0) {
      pp_bench_usage(stdout);
      return 1;
    }
    if (strcmp(a, "--csv") == 0 || strcmp(a, "--json") == 0) {
      o->fmt = a[2] == 'c' ? FMT_CSV : FMT_JSON;
      continue;
    }
    int matched = 0;
    for (size_t k = 0; !matched && k < sizeof valued / sizeof valued[0]; k++) {
      matched = opt_value(argc, argv, &i, valued[k], &v);
      if (matched < 0)
        return usage_error("%s needs a value", valued[k]);
      if (matched && parse_valued(o, valued[k], v))
        return 2;
    }
    if (matched)
      continue;
    if (a[0] == '-')
      return usage_error("unknown option '%s'", a);
    if (!find_entry(a))
      return usage_error("unknown primitive '%s'", a);
    if (o->nprims == MAX_LIST)
      return usage_error("too many primitives, at '%s'", a);
    o->prims[o->nprims++] = a;
  }
  return 0;
}

/* 0 when ready; else the exit code: BENCH_EXIT_SKIP when the backend asked for has no
 * device here (so ctest reports a skip, not a failure), 1 otherwise. */
static int env_open(bench_env *env, const bench_opts *o) {
  memset(env, 0, sizeof *env);
  env->o = o;
  pp_status s = pp_create(&env->ctx, o->backend);
  if (s == PP_ERR_NO_DEVICE) {
    printf("SKIP: %s: %s\n", pp_backend_string(o->backend), pp_last_error(NULL));
    return BENCH_EXIT_SKIP;
  }
  if (s != PP_OK) {
    fprintf(stderr, "parprim bench: pp_create(%s): %s: %s\n", pp_backend_string(o->backend),
            pp_status_string(s), pp_last_error(NULL));
    return 1;
  }
  env->cuda = pp_backend_of(env->ctx) == PP_BACKEND_CUDA;
  if (pp_get_device_info(env->ctx, &env->dev) != PP_OK) {
    fprintf(stderr, "parprim bench: pp_get_device_info: %s\n", pp_last_error(env->ctx));
    snprintf(env->dev.name, sizeof env->dev.name, "unknown");
  }
  if (!env->cuda)
    return 0;
  if (!bench_gpu_available()) {
    fprintf(stderr, "parprim bench: the context runs on CUDA but the harness cannot reach the "
                    "GPU: %s\n",
            bench_gpu_error());
    return 1;
  }
  bool ok = gpu_ok(env, bench_gpu_stream_create(&env->stream), "stream create") &&
            pp_ok(env, pp_set_stream(env->ctx, env->stream), "pp_set_stream") &&
            gpu_ok(env, bench_gpu_timer_create(&env->timer), "event create");
  return ok ? 0 : 1;
}

static void env_close(bench_env *env) {
  if (env->ctx)
    pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize");
  if (env->stream) {
    /* the context must let go of the stream before it is destroyed */
    pp_ok(env, pp_set_stream(env->ctx, NULL), "pp_set_stream(NULL)");
    gpu_ok(env, bench_gpu_stream_destroy(env->stream), "stream destroy");
  }
  bench_gpu_timer_destroy(env->timer);
  if (env->cuda)
    bench_gpu_release();
  pp_destroy(env->ctx);
  env->ctx = NULL;
}

static void print_header(const bench_env *env) {
  const pp_device_info *d = &env->dev;
  char date[32] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm))
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  printf("parprim %s bench, %s, backend %s\n", pp_version(), date,
         pp_backend_string(pp_backend_of(env->ctx)));
  printf("device: %s", d->name);
  if (env->cuda)
    printf(" (sm_%d%d, %d SMs, %.1f GiB, peak %.0f GB/s, driver %d.%d, runtime %d.%d)",
           d->compute_major, d->compute_minor, d->multiprocessors,
           (double)d->global_mem_bytes / (1u << 30), d->peak_bandwidth_gbs,
           d->driver_version / 1000, d->driver_version % 1000 / 10, d->runtime_version / 1000,
           d->runtime_version % 1000 / 10);
  else
    printf(" (%d threads)", d->multiprocessors);
  printf("\ntiming: %s, median of %d runs after %d warm-up; inputs below 256 MiB rotate over "
         "copies\n        totalling > 256 MiB; random data, seed 0x%" PRIx64 "\n",
         env->cuda ? "CUDA events on a private stream set with pp_set_stream"
                   : "CLOCK_MONOTONIC around each call",
         env->o->reps, WARMUP_RUNS, BENCH_SEED);
  printf("ratio: %s\n",
         env->cuda ? "peer time / our time (> 1: parprim is faster)"
                   : "our GB/s / memcpy GB/s (memcpy GB/s counts bytes read + written)");
}

static void print_section(const bench_env *env, const bench_entry *e) {
  if (env->o->fmt != FMT_HUMAN)
    return;
  printf("\n%s — bytes model: %s; peer: %s\n", e->name, e->bytes_model,
         env->cuda ? e->peer_cuda : e->peer_cpu);
  printf("%-10s %-4s %-5s %7s %11s %9s | %-10s %11s %9s | %7s  %s\n", "primitive", "op", "dtype",
         "n", "time ms", "GB/s", "peer", "time ms", "GB/s", "ratio", "check");
}

/* The sizes for one entry: --n as given, else its defaults, where the CPU leaves out the
 * ones that would take minutes and tens of GiB. */
static int entry_sizes(const bench_env *env, const bench_entry *e, size_t *out) {
  const bench_opts *o = env->o;
  if (o->nsizes) {
    memcpy(out, o->sizes, (size_t)o->nsizes * sizeof *out);
    return o->nsizes;
  }
  int k = 0;
  for (int i = 0; i < MAX_LIST && e->sizes[i]; i++) {
    char nb[32];
    if (!env->cuda && e->sizes[i] > CPU_DEFAULT_MAX_N)
      bench_note(env, "%s n=%s skipped on the CPU backend (ask for it with --n)", e->name,
                 size_text(e->sizes[i], nb, sizeof nb));
    else
      out[k++] = e->sizes[i];
  }
  return k;
}

static void run_entries(bench_env *env) {
  const bench_opts *o = env->o;
  size_t nprims = o->nprims ? (size_t)o->nprims : N_ENTRIES;
  for (size_t i = 0; i < nprims; i++) {
    const bench_entry *e = o->nprims ? find_entry(o->prims[i]) : &bench_entries[i];
    size_t sizes[MAX_LIST];
    print_section(env, e);
    int ns = entry_sizes(env, e, sizes);
    e->run(env, sizes, ns);
  }
}

int pp_bench_main(int argc, char **argv) {
  bench_opts o = {.reps = DEFAULT_REPS, .fmt = FMT_HUMAN, .backend = PP_BACKEND_AUTO};
  int rc = parse_args(argc, argv, &o);
  if (rc)
    return rc == 1 ? 0 : rc;
  bench_env env;
  rc = env_open(&env, &o);
  if (rc) {
    env_close(&env);
    return rc;
  }
  if (o.fmt == FMT_HUMAN)
    print_header(&env);
  if (o.reps < PROTOCOL_MIN_REPS)
    bench_note(&env, "--reps %d is below the protocol's 20 runs; fine for a try, not for a "
                     "result",
               o.reps);
  run_entries(&env);
  env_close(&env);
  return env.failures ? 1 : 0;
}
