/*
 * bench.c — `parprim bench`: times parprim against its peer in the same process.
 *
 * Protocol (DESIGN.md, "Benchmarks"): per primitive and size, warm up, then time each of
 * >= 20 runs (default 30) on its own and report the median. On CUDA the clock is a pair
 * of CUDA events on a stream this harness creates and sets on the context, and the peer
 * (CUB, cudaMemcpyAsync) runs on the same stream over the same buffers. On the CPU the
 * clock is CLOCK_MONOTONIC around the call; the peer of a one-pass primitive (reduce,
 * scan, select, partition) is a memcpy of its input, the bandwidth it can hope for, and
 * the peers of sort and merge are std::sort / std::stable_sort / std::merge
 * (peer_std.cpp), which do the same work.
 *
 * Inputs are random (fixed seed), generated on the host once and copied with pp_copy.
 * Inputs and outputs smaller than 256 MiB are replicated into several slots that the runs
 * rotate over, so no run reads its input from a warm L2 (50-60 MB on H100/H200) or CPU
 * cache. Sort is the exception: it works in place, so every run first gets a fresh copy of
 * the unsorted keys, outside the clock (bench_time_prep).
 *
 * Every measurement checks its result: on CUDA against CUB's, on the CPU against a
 * serial reference here or the std:: peer's output. A primitive the backend does not
 * implement yet (PP_ERR_UNSUPPORTED) gets a row that says "unsupported" beside the
 * peer's time; that is not a failure.
 *
 * Adding a primitive: write its run function and add it to bench_entries[].
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "gpu.h"
#include "bench_impl.h"
#include "bench_dist.h"
#include "progress.h" /* cli/progress.h: a progress line on stderr */

#include <errno.h>
#include <float.h>
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

#define FILL_CHUNK (16 * MIB)    /* host staging for input generation */
#define DEFAULT_REPS 30
#define PROTOCOL_MIN_REPS 20
#define BENCH_EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE */
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

static FILE *note_stream(const bench_env *env) {
  /* machine-readable output stays parseable: notes go beside it, not into it */
  return env->o->fmt == FMT_HUMAN ? stdout : stderr;
}

void bench_note(const bench_env *env, const char *fmt, ...) {
  va_list ap;
  FILE *f = note_stream(env);
  cli_progress_end();
  va_start(ap, fmt);
  fputs("  note: ", f);
  vfprintf(f, fmt, ap);
  fputc('\n', f);
  va_end(ap);
}

void bench_fail(bench_env *env, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fputs("parprim bench: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  env->failures++;
}

bool pp_ok(bench_env *env, pp_status s, const char *what) {
  if (s == PP_OK)
    return true;
  bench_fail(env, "%s: %s: %s", what, pp_status_string(s), pp_last_error(env->ctx));
  return false;
}

bool gpu_ok(bench_env *env, int rc, const char *what) {
  if (rc == 0)
    return true;
  bench_fail(env, "%s: %s", what, bench_gpu_error());
  return false;
}

const char *size_text(size_t n, char *buf, size_t len) {
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

double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

static const char *row_unit(const bench_row *r) { return r->unit ? r->unit : "GB/s"; }

/* When the peer did the same work (CUB, std::sort), the time ratio is the speed-up; when
 * it is memcpy, a bandwidth ceiling, the bandwidth ratio is the fraction reached. */
static bool ratio_by_time(const bench_env *env, const bench_row *r) {
  return env->cuda || r->same_work;
}

static double row_ratio(const bench_env *env, const bench_row *r) {
  if (ratio_by_time(env, r))
    return r->ms > 0 ? r->peer_ms / r->ms : 0.0;
  double peer = gbs(r->peer_bytes, r->peer_ms);
  return peer > 0 ? gbs(r->bytes, r->ms) / peer : 0.0;
}

static const char *ratio_kind(const bench_env *env, const bench_row *r) {
  return ratio_by_time(env, r) ? "peer_time/our_time" : "our_gbs/peer_gbs";
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

#define HUMAN_COLUMNS "%-14s %-10s %-5s %7s %11s %9s | %-16s %11s %9s | %7s  %s\n"

/* One decimal from 100 up, else three significant digits (CPU sorts run at 0.0x Gkeys/s). */
static const char *rate_text(double v, char *buf, size_t len) {
  snprintf(buf, len, v >= 100.0 ? "%.1f" : "%.3g", v);
  return buf;
}

/* Our columns print as "-" (CSV: empty, JSON: null) when the backend lacks the primitive. */
static void print_row_human(const bench_env *env, const bench_row *r) {
  char nb[32], ms[32] = "-", rate[32] = "-", pms[32], prate[32], ratio[32] = "-";
  if (!r->ours_missing) {
    snprintf(ms, sizeof ms, "%.4f", r->ms);
    rate_text(gbs(r->bytes, r->ms), rate, sizeof rate);
    snprintf(ratio, sizeof ratio, "%.3f", row_ratio(env, r));
  }
  snprintf(pms, sizeof pms, "%.4f", r->peer_ms);
  rate_text(gbs(r->peer_bytes, r->peer_ms), prate, sizeof prate);
  printf(HUMAN_COLUMNS, r->prim, r->op, pp_dtype_string(r->t), size_text(r->n, nb, sizeof nb),
         ms, rate, r->peer, pms, prate, ratio, r->check);
}

static void print_row_csv(bench_env *env, const bench_row *r) {
  if (!env->csv_header_done) {
    puts("primitive,op,dtype,n,bytes,bytes_model,backend,device,reps,time_ms,gbs,peer,"
         "peer_time_ms,peer_gbs,ratio,ratio_kind,check,unit");
    env->csv_header_done = true;
  }
  printf("%s,%s,%s,%zu,%.0f,", r->prim, r->op, pp_dtype_string(r->t), r->n, r->bytes);
  csv_text(r->bytes_model);
  printf(",%s,", pp_backend_string(pp_backend_of(env->ctx)));
  csv_text(env->dev.name);
  if (r->ours_missing)
    printf(",%d,,,", env->o->reps);
  else
    printf(",%d,%.6f,%.3f,", env->o->reps, r->ms, gbs(r->bytes, r->ms));
  printf("%s,%.6f,%.3f,", r->peer, r->peer_ms, gbs(r->peer_bytes, r->peer_ms));
  if (!r->ours_missing)
    printf("%.4f", row_ratio(env, r));
  printf(",%s,%s,%s\n", ratio_kind(env, r), r->check, row_unit(r));
}

static void print_row_json(const bench_env *env, const bench_row *r) {
  printf("{\"primitive\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,\"bytes\":%.0f,"
         "\"bytes_model\":",
         r->prim, r->op, pp_dtype_string(r->t), r->n, r->bytes);
  json_text(r->bytes_model);
  printf(",\"backend\":\"%s\",\"device\":", pp_backend_string(pp_backend_of(env->ctx)));
  json_text(env->dev.name);
  if (r->ours_missing)
    printf(",\"reps\":%d,\"time_ms\":null,\"gbs\":null", env->o->reps);
  else
    printf(",\"reps\":%d,\"time_ms\":%.6f,\"gbs\":%.3f", env->o->reps, r->ms,
           gbs(r->bytes, r->ms));
  printf(",\"peer\":\"%s\",\"peer_time_ms\":%.6f,\"peer_gbs\":%.3f,\"ratio\":", r->peer,
         r->peer_ms, gbs(r->peer_bytes, r->peer_ms));
  if (r->ours_missing)
    printf("null");
  else
    printf("%.4f", row_ratio(env, r));
  printf(",\"ratio_kind\":\"%s\",\"check\":\"%s\",\"unit\":\"%s\"}\n", ratio_kind(env, r),
         r->check, row_unit(r));
}

void print_row(bench_env *env, const bench_row *r) {
  static unsigned rows_done = 0;
  cli_progress_end(); /* the row replaces the progress line */
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
  cli_progress_update(++rows_done, 0, "rows measured");
}

/* ==================================================================================== */
/* Memory: working sets that rotate past the caches                                     */
/* ==================================================================================== */

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* 0 when the working set for `bytes` per input cannot even be sized. */
static size_t ws_plan(size_t bytes, size_t *slots, size_t *stride) {
  *stride = round_up(bytes, SLOT_ALIGN);
  *slots = bytes >= ROTATE_BYTES ? 1 : ROTATE_BYTES / *stride + 1;
  if (*stride < bytes || *slots > SIZE_MAX / *stride)
    return 0;
  return *slots * *stride;
}

void *ws_slot(const bench_ws *w, size_t slot) {
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

bool fits(bench_env *env, const char *prim, size_t n, size_t need) {
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

/* Plans and allocates the slots; fills them with random t when fill is set. */
alloc_result ws_alloc_fill(bench_env *env, bench_ws *w, size_t bytes, bool fill,
                           pp_dtype t, uint64_t seed) {
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
  return !fill || ws_fill(env, w, t, seed) ? ALLOC_OK : ALLOC_FAIL;
}

alloc_result ws_alloc(bench_env *env, bench_ws *w, size_t bytes, pp_dtype t,
                      uint64_t seed) {
  return ws_alloc_fill(env, w, bytes, true, t, seed);
}

void ws_free(bench_env *env, bench_ws *w) {
  if (w->base)
    pp_ok(env, pp_free(env->ctx, w->base), "pp_free");
  w->base = NULL;
}

/* ==================================================================================== */
/* Timing                                                                               */
/* ==================================================================================== */

bool bench_sync(bench_env *env) {
  if (env->cuda)
    return gpu_ok(env, bench_gpu_stream_sync(env->stream), "stream synchronize");
  return pp_ok(env, pp_synchronize(env->ctx), "pp_synchronize");
}

/* prep (may be NULL) runs first, outside the clock: on the CPU it has returned before the
 * clock starts; on CUDA it is queued on the stream before the start event, so the event
 * is reached only once prep's work is done. */
static pp_status time_one(bench_env *env, bench_call prep, bench_call call, void *arg,
                          size_t slot, double *ms) {
  if (prep) {
    pp_status s = prep(env, arg, slot);
    if (s != PP_OK)
      return s;
  }
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
 * peer get the same sequence, so they read the same slots and end on the same one
 * (last_slot). prep, when not NULL, runs before every run (warm-up too) outside the clock. */
pp_status bench_time_prep(bench_env *env, bench_call prep, bench_call call, void *arg,
                          double *median_ms) {
  int reps = env->o->reps;
  double *ms = malloc((size_t)reps * sizeof *ms);
  if (!ms) {
    bench_fail(env, "out of host memory");
    return PP_ERR_OUT_OF_MEMORY;
  }
  pp_status s = PP_OK;
  for (size_t w = 0; s == PP_OK && w < WARMUP_RUNS; w++) {
    if (prep)
      s = prep(env, arg, w);
    if (s == PP_OK)
      s = call(env, arg, w);
  }
  if (s == PP_OK && !bench_sync(env))
    s = PP_ERR_DEVICE;
  for (int r = 0; s == PP_OK && r < reps; r++)
    s = time_one(env, prep, call, arg, WARMUP_RUNS + (size_t)r, &ms[r]);
  if (s == PP_OK)
    *median_ms = bench_median(ms, (size_t)reps);
  free(ms);
  return s;
}

pp_status bench_time(bench_env *env, bench_call call, void *arg, double *median_ms) {
  return bench_time_prep(env, NULL, call, arg, median_ms);
}

/* The slot both timed loops of a measurement end on: the check reads their last runs. */
size_t last_slot(const bench_env *env) {
  return WARMUP_RUNS + (size_t)env->o->reps - 1;
}

/* ==================================================================================== */
/* reduce and argreduce                                                                 */
/* ==================================================================================== */

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
/* What the newer families share: one measurement, host copies, typed loops             */
/* ==================================================================================== */

/* What one measurement runs. The prep calls (optional) run before every run outside the
 * clock. peer_ready sizes CUB's temporary storage (NULL on the CPU). check runs after both
 * timed loops: it compares the last runs' results, fills in byte counts that depend on the
 * data (select's count), and returns the check column; it is called also when ours is
 * missing, to fill in the peer's side. */
typedef struct case_hooks {
  bench_call ours_prep, ours, peer_prep, peer;
  bool (*peer_ready)(bench_env *env, void *arg);
  const char *(*check)(bench_env *env, void *arg, bench_row *r);
} case_hooks;

/* Ours, then the peer, then the check. A backend without the primitive still gets the
 * peer timed: the row then shows what there is to match. */
static case_result measure_case(bench_env *env, bench_row *r, const case_hooks *h, void *arg) {
  pp_status s = bench_time_prep(env, h->ours_prep, h->ours, arg, &r->ms);
  if (s == PP_ERR_UNSUPPORTED)
    r->ours_missing = true;
  else if (s != PP_OK)
    return CASE_FAILED;
  if (h->peer_ready && !h->peer_ready(env, arg))
    return CASE_FAILED;
  if (bench_time_prep(env, h->peer_prep, h->peer, arg, &r->peer_ms) != PP_OK)
    return CASE_FAILED;
  r->check = h->check(env, arg, r);
  print_row(env, r);
  return CASE_RAN;
}

/* Our calls report every status but PP_OK and PP_ERR_UNSUPPORTED (see bench_call). */
static pp_status ours_status(bench_env *env, pp_status s, const char *fn) {
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
    pp_ok(env, s, fn);
  return s;
}

static pp_status gpu_status(bench_env *env, int rc, const char *what) {
  return gpu_ok(env, rc, what) ? PP_OK : PP_ERR_DEVICE;
}

/* Copy inside the backend's memory on the harness's stream (CUDA) or with all threads. */
static pp_status refill(bench_env *env, void *dst, const void *src, size_t bytes) {
  if (env->cuda)
    return gpu_status(env, bench_gpu_memcpy(dst, src, bytes, env->stream), "refill copy");
  parallel_memcpy(dst, src, bytes);
  return PP_OK;
}

/* A host copy of `bytes` at src (backend memory), or NULL after saying why. */
static void *host_copy(bench_env *env, const void *src, size_t bytes, const char *what) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    bench_note(env, "check skipped: no host memory for %s (%.2f GiB)", what,
               (double)bytes / (1u << 30));
    return NULL;
  }
  if (bytes && !pp_ok(env, pp_copy(env->ctx, p, src, bytes), what)) {
    free(p);
    return NULL;
  }
  return p;
}

static bool fetch_count(bench_env *env, const uint64_t *src, uint64_t *count) {
  return pp_ok(env, pp_copy(env->ctx, count, src, sizeof *count), "pp_copy (count)");
}

/* Reports a disagreement with the peer (a failure: exit 1) and returns the check text. */
static const char *mismatch(bench_env *env, const bench_row *r, const char *fmt, ...) {
  char detail[512], nb[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  bench_fail(env, "%s %s %s n=%s: %s", r->prim, r->op, pp_dtype_string(r->t),
             size_text(r->n, nb, sizeof nb), detail);
  return "MISMATCH";
}

static bool is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }

/* Element i as text, for mismatch reports. */
static const char *elem_text(pp_dtype t, const void *base, size_t i, char *buf, size_t len) {
  bench_format_value(t, (const char *)base + i * pp_dtype_size(t), buf, len);
  return buf;
}

/* Stamps out one typed statement per dtype. */
#define DTYPE_SWITCH(t, STMT)                                                                  \
  switch (t) {                                                                                 \
  case PP_U8:                                                                                  \
    STMT(uint8_t);                                                                             \
    break;                                                                                     \
  case PP_I32:                                                                                 \
    STMT(int32_t);                                                                             \
    break;                                                                                     \
  case PP_U32:                                                                                 \
    STMT(uint32_t);                                                                            \
    break;                                                                                     \
  case PP_I64:                                                                                 \
    STMT(int64_t);                                                                             \
    break;                                                                                     \
  case PP_U64:                                                                                 \
    STMT(uint64_t);                                                                            \
    break;                                                                                     \
  case PP_F32:                                                                                 \
    STMT(float);                                                                               \
    break;                                                                                     \
  case PP_F64:                                                                                 \
    STMT(double);                                                                              \
    break;                                                                                     \
  }

/* Bits of element i with -0.0 read as +0.0: the sorts treat the two as equal, so their
 * relative order is free (CUB's radix sort puts -0.0 first, parprim's stable sort keeps
 * input order). NaN keeps its bits. */
static uint64_t key_bits(pp_dtype t, const void *base, size_t i) {
  size_t es = pp_dtype_size(t);
  uint64_t bits = 0;
  memcpy(&bits, (const char *)base + i * es, es); /* little-endian hosts */
  if (t == PP_F32 && bits == UINT64_C(0x80000000))
    bits = 0;
  if (t == PP_F64 && bits == UINT64_C(0x8000000000000000))
    bits = 0;
  return bits;
}

/* First i where the keys differ (-0.0 == +0.0), or n. */
static size_t first_key_difference(pp_dtype t, const void *a, const void *b, size_t n) {
  if (memcmp(a, b, n * pp_dtype_size(t)) == 0)
    return n;
  for (size_t i = 0; i < n; i++)
    if (key_bits(t, a, i) != key_bits(t, b, i))
      return i;
  return n;
}

/* First i where bytes of element size es differ, or n. */
static size_t first_difference(const void *a, const void *b, size_t n, size_t es) {
  if (memcmp(a, b, n * es) == 0)
    return n;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0)
      return i;
  return n;
}

/* First i with keys[i] out of order after keys[i-1], or n. The generated data hold no NaN,
 * which the comparison would let pass. */
static size_t first_unsorted(pp_dtype t, const void *keys, size_t n, bool desc) {
#define UNSORTED(T)                                                                            \
  {                                                                                            \
    const T *k = keys;                                                                         \
    for (size_t i = 1; i < n; i++)                                                             \
      if (desc ? k[i] > k[i - 1] : k[i] < k[i - 1])                                            \
        return i;                                                                              \
  }
  DTYPE_SWITCH(t, UNSORTED)
#undef UNSORTED
  return n;
}

/* ==================================================================================== */
/* scan, select, select_flagged, partition: one pass over rotating slots               */
/* ==================================================================================== */

typedef struct pass_case {
  pp_dtype t;
  size_t n, es;               /* elements, and their size (select_flagged: record size) */
  pp_op op;                   /* scan */
  bool inclusive;             /* scan */
  unsigned char value[8];     /* select, partition: keep x > value */
  bench_ws in, flags, out;    /* flags: select_flagged only */
  bench_ws peer_out;          /* CUB's output, or the CPU memcpy's target */
  uint64_t *count, *peer_count; /* pp_malloc'd */
} pass_case;

/* Half the random data passes: x > 0 for floats and signed types (uniform around 0), the
 * middle of the range for unsigned ones. */
static const char *threshold_for(pp_dtype t, void *value) {
  uint64_t half = 0;
  memset(value, 0, 8);
  switch (t) {
  case PP_U8:
    half = UINT8_MAX / 2;
    break;
  case PP_U32:
    half = UINT32_MAX / 2;
    break;
  case PP_U64:
    half = UINT64_MAX / 2;
    break;
  default:
    return "x>0"; /* zero bits are 0 and +0.0 */
  }
  memcpy(value, &half, pp_dtype_size(t)); /* little-endian hosts */
  return "x>max/2";
}

static pp_status call_scan(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_scan(env->ctx, c->op, c->t, ws_slot(&c->in, slot), ws_slot(&c->out, slot),
                             c->n, c->inclusive),
                     "pp_scan");
}

static pp_status call_select(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_select(env->ctx, c->t, ws_slot(&c->in, slot), c->n, PP_GT, c->value,
                               ws_slot(&c->out, slot), c->count),
                     "pp_select");
}

static pp_status call_select_flagged(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_select_flagged(env->ctx, c->es, ws_slot(&c->in, slot),
                                       ws_slot(&c->flags, slot), c->n, ws_slot(&c->out, slot),
                                       c->count),
                     "pp_select_flagged");
}

static pp_status call_partition(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return ours_status(env,
                     pp_partition(env->ctx, c->t, ws_slot(&c->in, slot), c->n, PP_GT, c->value,
                                  ws_slot(&c->out, slot), c->count),
                     "pp_partition");
}

static pp_status call_cub_scan(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_scan(c->t, c->op, c->inclusive, ws_slot(&c->in, slot),
                                   ws_slot(&c->peer_out, slot), c->n, env->stream),
                    "CUB scan");
}

static pp_status call_cub_select(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_select(c->t, c->value, ws_slot(&c->in, slot),
                                     ws_slot(&c->peer_out, slot), c->peer_count, c->n,
                                     env->stream),
                    "CUB select");
}

static pp_status call_cub_select_flagged(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_select_flagged(c->es, ws_slot(&c->in, slot),
                                             ws_slot(&c->flags, slot),
                                             ws_slot(&c->peer_out, slot), c->peer_count, c->n,
                                             env->stream),
                    "CUB select flagged");
}

static pp_status call_cub_partition(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  return gpu_status(env,
                    bench_cub_partition(c->t, c->value, ws_slot(&c->in, slot),
                                        ws_slot(&c->peer_out, slot), c->peer_count, c->n,
                                        env->stream),
                    "CUB partition");
}

static pp_status call_pass_memcpy(bench_env *env, void *arg, size_t slot) {
  pass_case *c = arg;
  (void)env;
  parallel_memcpy(ws_slot(&c->peer_out, slot), ws_slot(&c->in, slot), c->n * c->es);
  return PP_OK;
}

static bool scan_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_scan_prepare(c->t, c->op, c->inclusive, c->n, env->stream),
                "CUB temp storage");
}

static bool select_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_select_prepare(c->t, c->n, env->stream), "CUB temp storage");
}

static bool select_flagged_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_select_flagged_prepare(c->es, c->n, env->stream),
                "CUB temp storage");
}

static bool partition_ready(bench_env *env, void *arg) {
  pass_case *c = arg;
  return gpu_ok(env, bench_cub_partition_prepare(c->t, c->n, env->stream), "CUB temp storage");
}

/* ---- host references (the CPU backend's check) --------------------------------------- */

/* Integer scans wrap in t: summed in the unsigned type of the same width. */
#define SCAN_INT_REF(T, U, LOWEST, HIGHEST)                                                    \
  {                                                                                            \
    const T *x = in;                                                                           \
    T *y = out;                                                                                \
    T acc = op == PP_MIN ? (T)(HIGHEST) : op == PP_MAX ? (T)(LOWEST) : (T)0;                   \
    for (size_t i = 0; i < n; i++) {                                                           \
      T v = x[i];                                                                              \
      T next = op == PP_SUM   ? (T)(U)((U)acc + (U)v)                                          \
               : op == PP_MIN ? (v < acc ? v : acc)                                            \
                              : (v > acc ? v : acc);                                           \
      y[i] = inclusive ? next : acc;                                                           \
      acc = next;                                                                              \
    }                                                                                          \
  }

/* Float sums run compensated (Neumaier) in double: the reference must be far more
 * accurate than the tolerance the results are held to. */
#define SCAN_FLOAT_REF(T)                                                                      \
  {                                                                                            \
    const T *x = in;                                                                           \
    T *y = out;                                                                                \
    double sum = 0.0, comp = 0.0;                                                              \
    T m = op == PP_MIN ? (T)INFINITY : (T)-INFINITY;                                           \
    for (size_t i = 0; i < n; i++) {                                                           \
      T v = x[i];                                                                              \
      if (op == PP_SUM) {                                                                      \
        T before = (T)(sum + comp);                                                            \
        double s2 = sum + (double)v;                                                           \
        comp += fabs(sum) >= fabs((double)v) ? (sum - s2) + (double)v : ((double)v - s2) + sum; \
        sum = s2;                                                                              \
        y[i] = inclusive ? (T)(sum + comp) : before;                                           \
      } else {                                                                                 \
        T next = op == PP_MIN ? (v < m ? v : m) : (v > m ? v : m);                             \
        y[i] = inclusive ? next : m;                                                           \
        m = next;                                                                              \
      }                                                                                        \
    }                                                                                          \
  }

static void scan_reference(pp_dtype t, pp_op op, bool inclusive, const void *in, void *out,
                           size_t n) {
  switch (t) {
  case PP_U8:
    SCAN_INT_REF(uint8_t, uint8_t, 0, UINT8_MAX)
    break;
  case PP_I32:
    SCAN_INT_REF(int32_t, uint32_t, INT32_MIN, INT32_MAX)
    break;
  case PP_U32:
    SCAN_INT_REF(uint32_t, uint32_t, 0, UINT32_MAX)
    break;
  case PP_I64:
    SCAN_INT_REF(int64_t, uint64_t, INT64_MIN, INT64_MAX)
    break;
  case PP_U64:
    SCAN_INT_REF(uint64_t, uint64_t, 0, UINT64_MAX)
    break;
  case PP_F32:
    SCAN_FLOAT_REF(float)
    break;
  case PP_F64:
    SCAN_FLOAT_REF(double)
    break;
  }
}

#undef SCAN_INT_REF
#undef SCAN_FLOAT_REF

/* First i where a float SUM scan is off by more than (ceil(log2(n+1)) + 32) * eps * the
 * sum of |x| up to i, times factor (2 when both sides are approximations), or n. */
static size_t scan_float_mismatch(pp_dtype t, const void *in, const void *got, const void *want,
                                  size_t n, double factor) {
  double eps = t == PP_F32 ? FLT_EPSILON : DBL_EPSILON;
  double k = (ceil(log2((double)n + 1.0)) + 32.0) * eps * factor;
  double abs_prefix = 0.0;
#define FLOAT_MISMATCH(T)                                                                      \
  {                                                                                            \
    const T *x = in, *g = got, *w = want;                                                      \
    for (size_t i = 0; i < n; i++) {                                                           \
      abs_prefix += fabs((double)x[i]);                                                        \
      if (!(fabs((double)g[i] - (double)w[i]) <= k * abs_prefix))                              \
        return i;                                                                              \
    }                                                                                          \
  }
  if (t == PP_F32)
    FLOAT_MISMATCH(float)
  else
    FLOAT_MISMATCH(double)
#undef FLOAT_MISMATCH
  return n;
}

/* mask[i] = x[i] > *value */
static void greater_mask(pp_dtype t, const void *in, size_t n, const void *value, uint8_t *mask) {
#define GT_MASK(T)                                                                             \
  {                                                                                            \
    const T *x = in;                                                                           \
    T v;                                                                                       \
    memcpy(&v, value, sizeof v);                                                               \
    for (size_t i = 0; i < n; i++)                                                             \
      mask[i] = x[i] > v;                                                                      \
  }
  DTYPE_SWITCH(t, GT_MASK)
#undef GT_MASK
}

/* The kept records in order, then (partition) the others in order; returns the count. */
static uint64_t split_reference(const void *in, const uint8_t *mask, size_t n, size_t es,
                                bool with_rest, void *out) {
  const char *x = in;
  char *y = out;
  uint64_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (mask[i])
      memcpy(y + kept++ * es, x + i * es, es);
  size_t rest = (size_t)kept;
  for (size_t i = 0; with_rest && i < n; i++)
    if (!mask[i])
      memcpy(y + rest++ * es, x + i * es, es);
  return kept;
}

/* The CPU backend's expected output of select / select_flagged / partition for the last
 * slot: computed here from a host copy of the input (and flags). NULL when no copy. */
static void *split_expected(bench_env *env, pass_case *c, bool with_rest, uint64_t *count) {
  size_t slot = last_slot(env), bytes = c->n * c->es;
  void *in = host_copy(env, ws_slot(&c->in, slot), bytes, "pp_copy (input)");
  uint8_t *mask = c->flags.base ? host_copy(env, ws_slot(&c->flags, slot), c->n, "pp_copy (flags)")
                                : malloc(c->n ? c->n : 1);
  void *want = malloc(bytes ? bytes : 1);
  if (in && mask && want) {
    if (!c->flags.base)
      greater_mask(c->t, in, c->n, c->value, mask);
    *count = split_reference(in, mask, c->n, c->es, with_rest, want);
  } else {
    if (in && !want)
      bench_note(env, "check skipped: no host memory for the reference");
    free(want);
    want = NULL;
  }
  free(in);
  free(mask);
  return want;
}

/* ---- checks ---------------------------------------------------------------------------- */

static const char *scan_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  size_t slot = last_slot(env), bytes = c->n * c->es;
  bool fsum = c->op == PP_SUM && is_float(c->t);
  void *got = host_copy(env, ws_slot(&c->out, slot), bytes, "pp_copy (result)");
  void *in = NULL, *want = NULL;
  /* the CPU reference needs the input, and so does the float tolerance */
  if (got && (!env->cuda || fsum))
    in = host_copy(env, ws_slot(&c->in, slot), bytes, "pp_copy (input)");
  bool have_in = in || (env->cuda && !fsum);
  if (got && have_in && env->cuda) {
    want = host_copy(env, ws_slot(&c->peer_out, slot), bytes, "pp_copy (CUB result)");
  } else if (got && have_in) {
    want = malloc(bytes ? bytes : 1);
    if (want)
      scan_reference(c->t, c->op, c->inclusive, in, want, c->n);
    else
      bench_note(env, "check skipped: no host memory for the reference");
  }
  const char *res = "-";
  if (want) {
    size_t bad = fsum ? scan_float_mismatch(c->t, in, got, want, c->n, env->cuda ? 2.0 : 1.0)
                      : first_difference(got, want, c->n, c->es);
    res = "ok";
    if (bad < c->n) {
      char a[64], b[64];
      res = mismatch(env, r, "index %zu: parprim %s, %s %s%s", bad,
                     elem_text(c->t, got, bad, a, sizeof a), env->cuda ? "CUB" : "reference",
                     elem_text(c->t, want, bad, b, sizeof b),
                     fsum ? " (beyond the float tolerance)" : "");
    }
  }
  free(in);
  free(got);
  free(want);
  return res;
}

static double select_bytes(const pass_case *c, uint64_t count) {
  double flags = c->flags.base ? (double)c->n : 0.0;
  return (double)c->n * (double)c->es + flags + (double)count * (double)c->es;
}

/* select and select_flagged: the count exactly, then the kept records bit for bit. */
static const char *select_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  size_t slot = last_slot(env);
  uint64_t want_count = 0, got_count = 0;
  if (env->cuda) {
    if (!fetch_count(env, c->peer_count, &want_count))
      return "-";
    r->peer_bytes = select_bytes(c, want_count);
  }
  if (r->ours_missing)
    return "unsupported";
  if (!fetch_count(env, c->count, &got_count))
    return "-";
  r->bytes = select_bytes(c, got_count);
  void *want = env->cuda ? host_copy(env, ws_slot(&c->peer_out, slot),
                                     (size_t)want_count * c->es, "pp_copy (CUB result)")
                         : split_expected(env, c, false, &want_count);
  if (!want)
    return "-";
  const char *res = "ok";
  if (got_count != want_count) {
    res = mismatch(env, r, "count %" PRIu64 ", %s %" PRIu64, got_count,
                   env->cuda ? "CUB" : "reference", want_count);
  } else {
    void *got = host_copy(env, ws_slot(&c->out, slot), (size_t)got_count * c->es,
                          "pp_copy (result)");
    size_t bad = got ? first_difference(got, want, (size_t)got_count, c->es) : (size_t)got_count;
    if (!got)
      res = "-";
    else if (bad < got_count)
      res = mismatch(env, r, "kept record %zu differs (count %" PRIu64 " agrees)", bad, got_count);
    free(got);
  }
  free(want);
  return res;
}

/* The matching part exactly; the rest exactly too, read backwards on CUDA, where CUB
 * writes it in reverse. */
static const char *partition_check(bench_env *env, void *arg, bench_row *r) {
  pass_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  size_t slot = last_slot(env), n = c->n, es = c->es;
  uint64_t want_count = 0, got_count = 0;
  if (!fetch_count(env, c->count, &got_count) ||
      (env->cuda && !fetch_count(env, c->peer_count, &want_count)))
    return "-";
  void *want = env->cuda ? host_copy(env, ws_slot(&c->peer_out, slot), n * es,
                                     "pp_copy (CUB result)")
                         : split_expected(env, c, true, &want_count);
  void *got = want ? host_copy(env, ws_slot(&c->out, slot), n * es, "pp_copy (result)") : NULL;
  const char *res = got ? "ok" : "-";
  if (got && got_count != want_count) {
    res = mismatch(env, r, "count_true %" PRIu64 ", %s %" PRIu64, got_count,
                   env->cuda ? "CUB" : "reference", want_count);
  } else if (got) {
    size_t kept = (size_t)got_count, bad = first_difference(got, want, kept, es);
    if (bad < kept)
      res = mismatch(env, r, "matching element %zu differs", bad);
    for (size_t j = 0; bad == kept && j < n - kept; j++) {
      size_t w = env->cuda ? n - 1 - j : kept + j;
      if (memcmp((char *)got + (kept + j) * es, (char *)want + w * es, es) != 0) {
        res = mismatch(env, r, "non-matching element %zu (index %zu) differs", j, kept + j);
        break;
      }
    }
  }
  free(got);
  free(want);
  return res;
}

/* ---- setup and the entries ---------------------------------------------------------- */

static void pass_teardown(bench_env *env, pass_case *c) {
  ws_free(env, &c->in);
  ws_free(env, &c->flags);
  ws_free(env, &c->out);
  ws_free(env, &c->peer_out);
  free_small(env, (void **)&c->count);
  free_small(env, (void **)&c->peer_count);
}

/* Random 0/1 flags (the top bit of random bytes), over every slot and the padding. */
static bool ws_fill_flags(bench_env *env, bench_ws *w) {
  size_t chunk = FILL_CHUNK;
  uint8_t *host = malloc(w->bytes < chunk ? w->bytes : chunk);
  bool ok = host != NULL;
  if (!ok)
    bench_fail(env, "out of host memory staging the flags");
  for (size_t first = 0; ok && first < w->bytes; first += chunk) {
    size_t cnt = w->bytes - first < chunk ? w->bytes - first : chunk;
    bench_fill_random(PP_U8, host, cnt, BENCH_SEED + 99, first);
    for (size_t i = 0; i < cnt; i++)
      host[i] >>= 7;
    ok = pp_ok(env, pp_copy(env->ctx, w->base + first, host, cnt), "pp_copy (flags)");
  }
  free(host);
  return ok;
}

/* Input (and flags) slots, and rotating output slots for ours and the peer. Outputs are
 * filled too: that touches every page on the CPU before the clock runs, and a stale
 * output can never pass for a result. */
static case_result pass_setup(bench_env *env, pass_case *c, const char *prim, bool flagged) {
  size_t slots, stride, fslots, fstride;
  if (c->n > SIZE_MAX / c->es) {
    bench_note(env, "%s n=%zu skipped: n * %zu overflows size_t", prim, c->n, c->es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * c->es, &slots, &stride);
  size_t fws = flagged ? ws_plan(c->n, &fslots, &fstride) : 0;
  if (ws == 0 || ws > SIZE_MAX / 4 || (flagged && (fws == 0 || fws > SIZE_MAX / 4))) {
    bench_note(env, "%s n=%zu skipped: too large", prim, c->n);
    return CASE_SKIPPED;
  }
  if (!fits(env, prim, c->n, 3 * ws + fws))
    return CASE_SKIPPED;
  pp_dtype fill_t = c->t;
  alloc_result a = ws_alloc(env, &c->in, c->n * c->es, fill_t, BENCH_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK && flagged) {
    a = ws_alloc(env, &c->flags, c->n, PP_U8, BENCH_SEED);
    if (a == ALLOC_OK && !ws_fill_flags(env, &c->flags))
      a = ALLOC_FAIL;
  }
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->out, c->n * c->es, fill_t, BENCH_SEED + 7);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->peer_out, c->n * c->es, fill_t, BENCH_SEED + 8);
  if (a != ALLOC_OK)
    return a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
  bool ok = alloc_small(env, (void **)&c->count, 8) && alloc_small(env, (void **)&c->peer_count, 8);
  return ok ? CASE_RAN : CASE_FAILED;
}

/* The row a pass case starts from; the check fills in what depends on the data. */
static bench_row pass_row(const bench_env *env, const pass_case *c, const char *prim,
                          const char *op, const char *model, double bytes) {
  bench_row r = {.prim = prim, .op = op, .t = c->t, .n = c->n, .bytes_model = model,
                 .check = "-", .peer = env->cuda ? "CUB" : "memcpy"};
  r.bytes = bytes;
  /* the CPU peer copies the input: it reads and writes n*size bytes */
  r.peer_bytes = env->cuda ? bytes : 2.0 * (double)c->n * (double)c->es;
  return r;
}

static case_result pass_case_run(bench_env *env, pass_case *c, bench_row *r, const case_hooks *h,
                                 bool flagged) {
  case_result res = pass_setup(env, c, r->prim, flagged);
  if (res == CASE_RAN)
    res = measure_case(env, r, h, c);
  pass_teardown(env, c);
  return res;
}

static int run_scan(bench_env *env, const size_t *sizes, int nsizes) {
  static const char *const names[3][2] = {
      {"ex-sum", "in-sum"}, {"ex-min", "in-min"}, {"ex-max", "in-max"}};
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_U32;
  pp_op op = o->has_op ? o->op : PP_SUM;
  for (int i = 0; i < nsizes; i++)
    for (int inc = 0; inc < 2; inc++) {
      pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t), .op = op,
                     .inclusive = inc == 1};
      case_hooks h = {.ours = call_scan, .peer = env->cuda ? call_cub_scan : call_pass_memcpy,
                      .peer_ready = env->cuda ? scan_ready : NULL, .check = scan_check};
      bench_row r = pass_row(env, &c, "scan", names[op][inc], "reads+writes 2*n*size",
                             2.0 * (double)c.n * (double)c.es);
      pass_case_run(env, &c, &r, &h, false);
    }
  return 0;
}

static int run_select_like(bench_env *env, const size_t *sizes, int nsizes, bool partition) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t)};
    const char *op = threshold_for(t, c.value);
    case_hooks h = {.ours = partition ? call_partition : call_select,
                    .peer = !env->cuda ? call_pass_memcpy
                            : partition ? call_cub_partition
                                        : call_cub_select,
                    .peer_ready = !env->cuda ? NULL : partition ? partition_ready : select_ready,
                    .check = partition ? partition_check : select_check};
    /* select's bytes depend on the count: the check fills them in */
    bench_row r = partition ? pass_row(env, &c, "partition", op, "reads+writes 2*n*size",
                                       2.0 * (double)c.n * (double)c.es)
                            : pass_row(env, &c, "select", op, "reads n*size, writes count*size",
                                       (double)c.n * (double)c.es);
    pass_case_run(env, &c, &r, &h, false);
  }
  return 0;
}

static int run_select(bench_env *env, const size_t *sizes, int nsizes) {
  return run_select_like(env, sizes, nsizes, false);
}

static int run_partition(bench_env *env, const size_t *sizes, int nsizes) {
  return run_select_like(env, sizes, nsizes, true);
}

/* Records of --dtype's size (f32 by default), moved as bits. */
static int run_select_flagged(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    pass_case c = {.t = t, .n = sizes[i], .es = pp_dtype_size(t)};
    case_hooks h = {.ours = call_select_flagged,
                    .peer = env->cuda ? call_cub_select_flagged : call_pass_memcpy,
                    .peer_ready = env->cuda ? select_flagged_ready : NULL,
                    .check = select_check};
    bench_row r = pass_row(env, &c, "select_flagged", "flags",
                           "reads n*size + n flag bytes, writes count*size",
                           (double)c.n * (double)(c.es + 1));
    pass_case_run(env, &c, &r, &h, true);
  }
  return 0;
}

/* ==================================================================================== */
/* sort: in place, so every run starts from a fresh copy of the unsorted input          */
/* ==================================================================================== */

typedef struct sort_case {
  pp_dtype t;
  size_t n, ks, vs;                  /* key size; value size, 0 for keys only */
  bool desc;
  pp_sort_algo algo;                 /* AUTO: the radix sort, CUB's radix sort as the peer;
                                        the comparison sorts: CUB's merge sort (keys only) */
  void *keys_src, *vals_src;         /* the unsorted input, never written after setup */
  void *keys, *vals;                 /* ours, sorted in place */
  void *peer_keys[2], *peer_vals[2]; /* CUB's double buffer; the CPU peer sorts [0] */
  int peer_current;                  /* which of CUB's buffers holds its result */
  void *scratch;                     /* CPU pairs peer: packed records */
} sort_case;

/* One pp_malloc'd buffer; filled with random t when fill is set. */
static alloc_result flat_alloc(bench_env *env, void **p, size_t bytes, bool fill, pp_dtype t,
                               uint64_t seed) {
  pp_status s = pp_malloc(env->ctx, p, bytes ? bytes : 1);
  if (s == PP_ERR_OUT_OF_MEMORY) {
    bench_note(env, "skipped: pp_malloc of %.2f GiB failed (%s)", (double)bytes / (1u << 30),
               pp_last_error(env->ctx));
    return ALLOC_SKIP;
  }
  if (!pp_ok(env, s, "pp_malloc"))
    return ALLOC_FAIL;
  bench_ws w = {.base = *p, .slots = 1, .stride = bytes, .bytes = bytes};
  return !fill || ws_fill(env, &w, t, seed) ? ALLOC_OK : ALLOC_FAIL;
}

static pp_status sort_refill(bench_env *env, sort_case *c, void *keys, void *vals) {
  pp_status s = refill(env, keys, c->keys_src, c->n * c->ks);
  if (s == PP_OK && c->vs)
    s = refill(env, vals, c->vals_src, c->n * c->vs);
  return s;
}

static pp_status prep_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  return sort_refill(env, c, c->keys, c->vals);
}

static pp_status prep_peer_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  return sort_refill(env, c, c->peer_keys[0], c->peer_vals[0]);
}

static pp_status call_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  pp_sort_opts o = {c->desc ? PP_DESCENDING : PP_ASCENDING, c->algo};
  (void)slot;
  return ours_status(env, pp_sort(env->ctx, c->t, c->keys, c->vs ? c->vals : NULL, c->vs, c->n, &o),
                     "pp_sort");
}

/* CUB sorts out of place between the two buffers of its DoubleBuffer (keys start in
 * [0]); only the sort is timed, as for ours, and the refill of [0] happens outside the
 * clock. CUB's temporary storage was sized before (sort_ready). */
static pp_status call_cub_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  if (c->algo != PP_SORT_AUTO) { /* in place in [0] */
    c->peer_current = 0;
    return gpu_status(env, bench_cub_merge_sort(c->t, c->peer_keys[0], c->n, c->desc, env->stream),
                      "CUB merge sort");
  }
  return gpu_status(env,
                    bench_cub_sort(c->t, c->peer_keys, c->peer_vals, c->vs, c->n, c->desc,
                                   &c->peer_current, env->stream),
                    "CUB radix sort");
}

static pp_status call_std_sort(bench_env *env, void *arg, size_t slot) {
  sort_case *c = arg;
  (void)slot;
  if (bench_std_sort(c->t, c->peer_keys[0], c->vs ? c->peer_vals[0] : NULL, c->vs, c->n,
                     c->desc, c->scratch) == 0)
    return PP_OK;
  bench_fail(env, "std::sort peer: unsupported key type or value size");
  return PP_ERR_INVALID_ARGUMENT;
}

static bool sort_ready(bench_env *env, void *arg) {
  sort_case *c = arg;
  if (c->algo != PP_SORT_AUTO)
    return gpu_ok(env, bench_cub_merge_sort_prepare(c->t, c->desc, c->n, env->stream),
                  "CUB merge sort temp storage");
  return gpu_ok(env, bench_cub_sort_prepare(c->t, c->vs, c->desc, c->n, env->stream),
                "CUB temp storage");
}

/* Ours must be sorted and hold the peer's keys (-0.0 == +0.0) and, for pairs, its values
 * bit for bit: both sorts are stable, and the generated keys hold no -0.0, the one case
 * where two stable sorts could place equal keys' values differently. */
static const char *sort_check(bench_env *env, void *arg, bench_row *r) {
  sort_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  int cur = env->cuda ? c->peer_current : 0;
  size_t n = c->n, bad;
  char a[64], b[64];
  void *got = host_copy(env, c->keys, n * c->ks, "pp_copy (keys)");
  void *want = got ? host_copy(env, c->peer_keys[cur], n * c->ks, "pp_copy (peer keys)") : NULL;
  const char *res = want ? "ok" : "-";
  if (want && (bad = first_unsorted(c->t, got, n, c->desc)) < n)
    res = mismatch(env, r, "not sorted: index %zu holds %s after %s", bad,
                   elem_text(c->t, got, bad, a, sizeof a), elem_text(c->t, got, bad - 1, b, sizeof b));
  else if (want && (bad = first_key_difference(c->t, got, want, n)) < n)
    res = mismatch(env, r, "key %zu: parprim %s, %s %s", bad, elem_text(c->t, got, bad, a, sizeof a),
                   r->peer, elem_text(c->t, want, bad, b, sizeof b));
  free(got);
  free(want);
  if (c->vs && strcmp(res, "ok") == 0) {
    got = host_copy(env, c->vals, n * c->vs, "pp_copy (values)");
    want = got ? host_copy(env, c->peer_vals[cur], n * c->vs, "pp_copy (peer values)") : NULL;
    if (!want)
      res = "-";
    else if ((bad = first_difference(got, want, n, c->vs)) < n)
      res = mismatch(env, r, "keys agree, value %zu differs", bad);
    free(got);
    free(want);
  }
  return res;
}

static void sort_teardown(bench_env *env, sort_case *c) {
  void **all[] = {&c->keys_src, &c->vals_src, &c->keys, &c->vals, &c->peer_keys[0],
                  &c->peer_keys[1], &c->peer_vals[0], &c->peer_vals[1], &c->scratch};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    free_small(env, all[i]);
}

/* Only the input is generated: every other buffer is written by the refill (or the peer)
 * in the warm-up before any timed run reads it. */
static case_result sort_setup(bench_env *env, sort_case *c) {
  size_t rec = c->ks + c->vs, n = c->n;
  size_t scratch = !env->cuda && c->vs ? bench_std_sort_scratch_bytes(c->t, c->vs, n) : 0;
  if (n > SIZE_MAX / 8 / rec || scratch > SIZE_MAX / 2) {
    bench_note(env, "sort n=%zu skipped: too large", n);
    return CASE_SKIPPED;
  }
  /* input, ours, and the peer's one (CPU) or two (CUB) buffers */
  if (!fits(env, "sort", n, (env->cuda ? 4 : 3) * n * rec + scratch))
    return CASE_SKIPPED;
  pp_dtype vt = c->vs == 8 ? PP_U64 : PP_U32;
  alloc_result a = flat_alloc(env, &c->keys_src, n * c->ks, true, c->t, BENCH_SEED + (uint64_t)c->t);
  if (a == ALLOC_OK)
    a = flat_alloc(env, &c->keys, n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK)
    a = flat_alloc(env, &c->peer_keys[0], n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK && env->cuda)
    a = flat_alloc(env, &c->peer_keys[1], n * c->ks, false, c->t, 0);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->vals_src, n * c->vs, true, vt, BENCH_SEED + 50);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->vals, n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && c->vs)
    a = flat_alloc(env, &c->peer_vals[0], n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && c->vs && env->cuda)
    a = flat_alloc(env, &c->peer_vals[1], n * c->vs, false, vt, 0);
  if (a == ALLOC_OK && scratch)
    a = flat_alloc(env, &c->scratch, scratch, false, PP_U8, 0);
  return a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
}

static case_result sort_case_run(bench_env *env, pp_dtype t, size_t vs, size_t n, bool desc,
                                 pp_sort_algo algo) {
  static const char *const ops[2][2] = {{"keys", "keys-desc"}, {"pairs", "pairs-desc"}};
  /* the comparison sorts, keys only: [algo - PP_SORT_MERGE][desc] */
  static const char *const algo_ops[3][2] = {
      {"merge", "merge-desc"}, {"sample", "sample-desc"}, {"quick", "quick-desc"}};
  const bool radix = algo == PP_SORT_AUTO;
  sort_case c = {.t = t, .n = n, .ks = pp_dtype_size(t), .vs = vs, .desc = desc, .algo = algo};
  bench_row r = {.prim = "sort", .op = radix ? ops[vs != 0][desc] : algo_ops[algo - PP_SORT_MERGE][desc],
                 .t = t, .n = n, .bytes_model = "n keys per run", .check = "-", .unit = "Gkeys/s",
                 .same_work = true,
                 .peer = env->cuda ? (radix ? "CUB" : "CUB merge sort")
                                   : vs ? "std::stable_sort" : "std::sort"};
  r.bytes = r.peer_bytes = (double)n; /* the rate counts keys */
  case_hooks h = {.ours_prep = prep_sort, .ours = call_sort, .peer_prep = prep_peer_sort,
                  .peer = env->cuda ? call_cub_sort : call_std_sort,
                  .peer_ready = env->cuda ? sort_ready : NULL, .check = sort_check};
  case_result res = sort_setup(env, &c);
  if (res == CASE_RAN)
    res = measure_case(env, &r, &h, &c);
  sort_teardown(env, &c);
  return res;
}

/* Default: u32 keys (the anchor) at every size, then f32 keys, u64 keys and u32/u32 pairs
 * up to 2^28, where they would only add minutes beyond. --dtype / --pairs pick one.
 * Then the comparison sorts (merge, sample, quick: keys only, u32 and f32 or --dtype) at
 * 2^24 and 2^28 (or the sizes given), against CUB's merge sort. */
static int run_sort(bench_env *env, const size_t *sizes, int nsizes) {
  typedef struct sort_variant {
    pp_dtype t;
    size_t vs;
  } sort_variant;
  static const sort_variant defaults[] = {{PP_U32, 0}, {PP_F32, 0}, {PP_U64, 0}, {PP_U32, 4}};
  const bench_opts *o = env->o;
  bool chosen = o->has_dtype || o->pairs;
  sort_variant one = {o->has_dtype ? o->dtype : PP_U32, o->pairs ? 4 : 0};
  size_t nv = chosen ? 1 : sizeof defaults / sizeof defaults[0];
  for (size_t v = 0; v < nv; v++) {
    sort_variant var = chosen ? one : defaults[v];
    for (int i = 0; i < nsizes; i++) {
      if (!chosen && v > 0 && !o->nsizes && sizes[i] > ANCHOR_N)
        continue;
      sort_case_run(env, var.t, var.vs, sizes[i], o->desc, PP_SORT_AUTO);
    }
  }
  static const pp_sort_algo algos[] = {PP_SORT_MERGE, PP_SORT_SAMPLE, PP_SORT_QUICK};
  static const pp_dtype algo_types[] = {PP_U32, PP_F32};
  for (size_t a = 0; a < sizeof algos / sizeof algos[0] && !o->pairs; a++)
    for (size_t v = 0; v < (o->has_dtype ? 1 : sizeof algo_types / sizeof algo_types[0]); v++)
      for (int i = 0; i < nsizes; i++) {
        if (!o->nsizes && sizes[i] != P2(24) && sizes[i] != P2(28))
          continue;
        sort_case_run(env, o->has_dtype ? o->dtype : algo_types[v], 0, sizes[i], o->desc, algos[a]);
      }
  return 0;
}

/* ==================================================================================== */
/* merge: two sorted halves of n                                                        */
/* ==================================================================================== */

typedef struct merge_case {
  pp_dtype t;
  size_t n, na, nb, es;
  bool desc;
  bench_ws in, out, peer_out; /* in: per slot, a (na elements) then b (nb), each sorted */
} merge_case;

/* Element j of a sorted run of `count` values: x = (k + u_k) / count with k = j (count-1-j
 * when descending) and u_k uniform in [0, 1) is monotone in j, and so is its image in t:
 * -1 + 2x for floats, x spread over the whole range for integers. Runs from two seeds
 * interleave at random, with ties where images round together. */
static void store_sorted(pp_dtype t, void *dst, size_t i, size_t j, size_t count, uint64_t key,
                         bool desc) {
  size_t k = desc ? count - 1 - j : j, es = pp_dtype_size(t);
  double u = (double)(splitmix64(key + k) >> 11) * 0x1p-53;
  double x = ((double)k + u) / (double)count;
  if (t == PP_F32) {
    ((float *)dst)[i] = (float)(2.0 * x - 1.0);
  } else if (t == PP_F64) {
    ((double *)dst)[i] = 2.0 * x - 1.0;
  } else {
    int bits = (int)es * 8;
    double top = ldexp(1.0, bits), scaled = ldexp(x, bits);
    uint64_t v = scaled >= top ? UINT64_MAX >> (64 - bits) : (uint64_t)scaled;
    if (t == PP_I32 || t == PP_I64)
      v ^= UINT64_C(1) << (bits - 1); /* bits of v - 2^(bits-1): the same order, signed */
    memcpy((char *)dst + i * es, &v, es); /* little-endian hosts */
  }
}

/* Every slot gets its own pair of runs; generated in host chunks like ws_fill. */
static bool ws_fill_sorted(bench_env *env, merge_case *c) {
  size_t es = c->es, chunk = FILL_CHUNK / es, longest = c->na > c->nb ? c->na : c->nb;
  void *host = malloc((longest < chunk ? longest : chunk) * es + 1);
  if (!host) {
    bench_fail(env, "out of host memory staging the input");
    return false;
  }
  bool ok = true;
  for (size_t slot = 0; ok && slot < c->in.slots; slot++)
    for (int part = 0; ok && part < 2; part++) {
      size_t count = part ? c->nb : c->na;
      char *base = (char *)ws_slot(&c->in, slot) + (part ? c->na * es : 0);
      uint64_t key = splitmix64(BENCH_SEED + 2 * (uint64_t)slot + (uint64_t)part);
      for (size_t first = 0; ok && first < count; first += chunk) {
        size_t cnt = count - first < chunk ? count - first : chunk;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (cnt > 65536)
#endif
        for (size_t i = 0; i < cnt; i++)
          store_sorted(c->t, host, i, first + i, count, key, c->desc);
        ok = pp_ok(env, pp_copy(env->ctx, base + first * es, host, cnt * es), "pp_copy (input)");
      }
    }
  free(host);
  return ok;
}

static pp_status call_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  return ours_status(env,
                     pp_merge(env->ctx, c->t, in, c->na, in + c->na * c->es, c->nb,
                              ws_slot(&c->out, slot), c->desc ? PP_DESCENDING : PP_ASCENDING),
                     "pp_merge");
}

static pp_status call_cub_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  return gpu_status(env,
                    bench_cub_merge(c->t, c->desc, in, c->na, in + c->na * c->es, c->nb,
                                    ws_slot(&c->peer_out, slot), env->stream),
                    "CUB merge");
}

static pp_status call_std_merge(bench_env *env, void *arg, size_t slot) {
  merge_case *c = arg;
  const char *in = ws_slot(&c->in, slot);
  if (bench_std_merge(c->t, c->desc, in, c->na, in + c->na * c->es, c->nb,
                      ws_slot(&c->peer_out, slot)) == 0)
    return PP_OK;
  bench_fail(env, "std::merge peer: unsupported type");
  return PP_ERR_INVALID_ARGUMENT;
}

static bool merge_ready(bench_env *env, void *arg) {
  merge_case *c = arg;
  return gpu_ok(env, bench_cub_merge_prepare(c->t, c->desc, c->na, c->nb, env->stream),
                "CUB temp storage");
}

/* Sorted, and the peer's keys (-0.0 == +0.0: CUB's merge is not stable). */
static const char *merge_check(bench_env *env, void *arg, bench_row *r) {
  merge_case *c = arg;
  if (r->ours_missing)
    return "unsupported";
  size_t slot = last_slot(env), n = c->n, bad;
  char a[64], b[64];
  void *got = host_copy(env, ws_slot(&c->out, slot), n * c->es, "pp_copy (result)");
  void *want = got ? host_copy(env, ws_slot(&c->peer_out, slot), n * c->es, "pp_copy (peer result)")
                   : NULL;
  const char *res = want ? "ok" : "-";
  if (want && (bad = first_unsorted(c->t, got, n, c->desc)) < n)
    res = mismatch(env, r, "not sorted: index %zu holds %s after %s", bad,
                   elem_text(c->t, got, bad, a, sizeof a), elem_text(c->t, got, bad - 1, b, sizeof b));
  else if (want && (bad = first_key_difference(c->t, got, want, n)) < n)
    res = mismatch(env, r, "index %zu: parprim %s, %s %s", bad, elem_text(c->t, got, bad, a, sizeof a),
                   r->peer, elem_text(c->t, want, bad, b, sizeof b));
  free(got);
  free(want);
  return res;
}

static case_result merge_setup(bench_env *env, merge_case *c) {
  size_t slots, stride;
  if (c->n > SIZE_MAX / c->es) {
    bench_note(env, "merge n=%zu skipped: n * %zu overflows size_t", c->n, c->es);
    return CASE_SKIPPED;
  }
  size_t ws = ws_plan(c->n * c->es, &slots, &stride);
  if (ws == 0 || ws > SIZE_MAX / 3) {
    bench_note(env, "merge n=%zu skipped: too large", c->n);
    return CASE_SKIPPED;
  }
  if (!fits(env, "merge", c->n, 3 * ws))
    return CASE_SKIPPED;
  alloc_result a = ws_alloc_fill(env, &c->in, c->n * c->es, false, c->t, 0);
  if (a == ALLOC_OK && !ws_fill_sorted(env, c))
    a = ALLOC_FAIL;
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->out, c->n * c->es, c->t, BENCH_SEED + 7);
  if (a == ALLOC_OK)
    a = ws_alloc(env, &c->peer_out, c->n * c->es, c->t, BENCH_SEED + 8);
  return a == ALLOC_OK ? CASE_RAN : a == ALLOC_SKIP ? CASE_SKIPPED : CASE_FAILED;
}

static int run_merge(bench_env *env, const size_t *sizes, int nsizes) {
  const bench_opts *o = env->o;
  pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  for (int i = 0; i < nsizes; i++) {
    size_t n = sizes[i];
    merge_case c = {.t = t, .n = n, .na = n / 2, .nb = n - n / 2, .es = pp_dtype_size(t),
                    .desc = o->desc};
    bench_row r = {.prim = "merge", .op = o->desc ? "desc" : "asc", .t = t, .n = n,
                   .bytes_model = "reads+writes 2*n*size", .check = "-", .same_work = true,
                   .peer = env->cuda ? "CUB" : "std::merge"};
    r.bytes = r.peer_bytes = 2.0 * (double)n * (double)c.es;
    case_hooks h = {.ours = call_merge, .peer = env->cuda ? call_cub_merge : call_std_merge,
                    .peer_ready = env->cuda ? merge_ready : NULL, .check = merge_check};
    case_result res = merge_setup(env, &c);
    if (res == CASE_RAN)
      measure_case(env, &r, &h, &c);
    ws_free(env, &c.in);
    ws_free(env, &c.out);
    ws_free(env, &c.peer_out);
  }
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
  const char *unit;       /* rate column; NULL: GB/s */
  size_t cpu_max_n;       /* default sizes above this are left out on the CPU; 0: CPU_DEFAULT_MAX_N */
} bench_entry;

static const bench_entry bench_entries[] = {
    {"reduce", run_reduce, "reads n*size", "CUB DeviceReduce::Sum/Min/Max",
     "memcpy of the same bytes", {P2(20), P2(24), P2(28), P2(30)}, NULL, 0},
    {"argreduce", run_argreduce, "reads n*size", "CUB DeviceReduce::ArgMin/ArgMax",
     "memcpy of the same bytes", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"memcpy", run_memcpy, "reads+writes 2*n*size (n elements of --dtype, default f32)",
     "cudaMemcpyAsync device to device", "OpenMP-parallel memcpy", {P2(20), P2(24), P2(28)},
     NULL, 0},
    {"scan", run_scan, "reads+writes 2*n*size; ex- exclusive, in- inclusive",
     "CUB DeviceScan::ExclusiveSum/InclusiveSum (min, max: ExclusiveScan/InclusiveScan)",
     "memcpy of the input bytes", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"select", run_select, "reads n*size, writes count*size; keeps x > 0 (unsigned: x > max/2)",
     "CUB DeviceSelect::If", "memcpy of the input bytes", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"select_flagged", run_select_flagged,
     "reads n*size + n flag bytes, writes count*size; random 0/1 flags",
     "CUB DeviceSelect::Flagged", "memcpy of the input bytes", {P2(20), P2(24), P2(28)}, NULL,
     0},
    {"partition", run_partition, "reads+writes 2*n*size; x > 0 first (unsigned: x > max/2)",
     "CUB DevicePartition::If (rejected part reversed)", "memcpy of the input bytes",
     {P2(20), P2(24), P2(28)}, NULL, 0},
    {"sort", run_sort, "n keys per run (rate in Gkeys/s); fresh unsorted keys every run",
     "CUB DeviceRadixSort::SortKeys/SortPairs, DoubleBuffer form; merge/sample/quick rows: "
     "CUB DeviceMergeSort::SortKeys",
     "std::sort (pairs: std::stable_sort), one thread", {P2(20), P2(24), P2(28), P2(30)},
     "Gkeys/s", P2(24)},
    {"merge", run_merge, "reads+writes 2*n*size; n = na + nb, na = n/2, both sorted",
     "CUB DeviceMerge::MergeKeys", "std::merge, one thread", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"histogram", bench_run_histogram,
     "reads n*size; even bins over the data's range, 8-bit images: 256 bins",
     "CUB DeviceHistogram::HistogramEven / HistogramRange", "serial histogram", {P2(20), P2(24), P2(28)}, NULL,
     0},
    {"topk", bench_run_topk, "reads n*size; rate in GB/s of the input", "CUB DeviceRadixSort (full sort)",
     "serial heap selection (f32 only)", {P2(20), P2(28)}, NULL, P2(24)},
    {"sgemm", bench_run_sgemm, "n = m = k; 2*n^3 flops, bytes column = flops/1000 (rate in TFLOP/s)",
     "cublasSgemm (CUBLAS_PEDANTIC_MATH)", "naive triple loop (n <= 1024)",
     {1000, 1024, 4096, 4097, 8192}, "TFLOP/s", 1024},
    {"conv", bench_run_conv, "n = pixels of a square f32 image; reads+writes 8*n; filters 3,5,9,15, 2D and separable",
     "cudaMemcpyAsync of the image", "memcpy of the image", {P2(26)}, "GB/s", 0},
    {"nbody", bench_run_nbody, "n bodies; n^2 interactions per force evaluation",
     "tiled kernel in the style of GPU Gems 3 ch. 31", "serial all-pairs (n <= 16384)",
     {16384, 65536, 262144}, "Ginter/s", 16384},
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
        "input as the bandwidth ceiling, or for sort and merge std::sort,\n"
        "std::stable_sort and std::merge. Median of the timed runs after warm-up. Every\n"
        "result is checked against the peer's (CPU: a serial reference).\n"
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
        "               for reduce and sort (2^30 on the CPU backend only when asked for)\n"
        "  --reps R     timed runs per measurement (default 30; the protocol wants >= 20)\n"
        "  --csv        CSV with a header line instead of the table\n"
        "  --json       one JSON object per line instead of the table\n"
        "  --quiet      no progress line on stderr (drawn only when it is a terminal)\n"
        "  --backend B  cpu, cuda or auto (default auto: CUDA when a GPU is usable)\n"
        "  --dtype T    u8 i32 u32 i64 u64 f32 f64; reduce default: f32 at every size,\n"
        "               then the other types (sum) at the largest size\n"
        "  --op OP      sum, min or max (reduce default sum; argreduce: min and max;\n"
        "               scan: default sum, exclusive and inclusive rows)\n"
        "  --desc       sort and merge in descending order\n"
        "  --pairs      sort: key-value pairs (4-byte values) only\n"
        "  --k K        topk: k (default: the issue's cases)\n"
        "  --bins B     histogram: bin count (default: 256, 1024, 65536, 2^20)\n"
        "  --filter F   conv: filter width = height (default: 3, 5, 9, 15)\n"
        "  --gpus N     the distributed primitives on N GPUs (parprim bench --gpus N --help)\n"
        "  -h, --help   this text\n"
        "\n"
        "Defaults per primitive: scan u32; select, select_flagged, partition, merge f32;\n"
        "sort u32 keys at every size (2^30 too; the CPU stops at 2^24 unless --n asks),\n"
        "then f32 keys, u64 keys and u32/u32 pairs up to 2^28. --dtype picks the type\n"
        "(the key type of sort, the record size of select_flagged).\n"
        "\n"
        "Ratio: peer time / our time (> 1: parprim is faster) on CUDA, and on the CPU for\n"
        "sort and merge (std:: peers); for the other CPU rows our GB/s / memcpy GB/s, with\n"
        "memcpy counting bytes read + written. A row whose check says \"unsupported\"\n"
        "shows the peer only: the backend does not implement that primitive yet.\n"
        "Exit: 0 all ran and agreed with the peer (unsupported rows included), 1 a call\n"
        "failed or a result disagreed, 2 usage, 77 (skip) the backend asked for has no\n"
        "device here.\n",
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
  } else if (strcmp(flag, "--k") == 0 || strcmp(flag, "--bins") == 0 ||
             strcmp(flag, "--filter") == 0) {
    if (bench_parse_size(v, &n) || n == 0)
      return usage_error("bad value for %s", flag);
    *(flag[2] == 'k' ? &o->k : flag[2] == 'b' ? &o->bins : &o->filter) = n;
  } else if (strcmp(flag, "--op") == 0) {
    if (bench_parse_op(v, &o->op))
      return usage_error("unknown op '%s' (sum, min, max)", v);
    o->has_op = true;
  }
  return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o) {
  static const char *const valued[] = {"--n",  "--reps", "--backend", "--dtype",
                                       "--op", "--k",    "--bins",    "--filter"};
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
    if (strcmp(a, "--quiet") == 0) {
      cli_progress_allow(false);
      continue;
    }
    if (strcmp(a, "--desc") == 0 || strcmp(a, "--pairs") == 0) {
      *(a[2] == 'd' ? &o->desc : &o->pairs) = true;
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
                   : "our GB/s / memcpy GB/s (memcpy GB/s counts bytes read + written);\n"
                     "       sort, merge: std:: time / our time");
}

static void print_section(const bench_env *env, const bench_entry *e) {
  if (env->o->fmt != FMT_HUMAN)
    return;
  const char *unit = e->unit ? e->unit : "GB/s";
  printf("\n%s — bytes model: %s; peer: %s\n", e->name, e->bytes_model,
         env->cuda ? e->peer_cuda : e->peer_cpu);
  printf(HUMAN_COLUMNS, "primitive", "op", "dtype", "n", "time ms", unit, "peer", "time ms", unit,
         "ratio", "check");
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
  size_t cpu_max = e->cpu_max_n ? e->cpu_max_n : CPU_DEFAULT_MAX_N;
  for (int i = 0; i < MAX_LIST && e->sizes[i]; i++) {
    char nb[32];
    if (!env->cuda && e->sizes[i] > cpu_max)
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
  if (pp_bench_dist_wanted(argc, argv)) /* --gpus N: the distributed bench, bench_dist.c */
    return pp_bench_dist_main(argc, argv);
  bench_opts o = {.reps = DEFAULT_REPS, .fmt = FMT_HUMAN, .backend = PP_BACKEND_AUTO};
  int rc = parse_args(argc, argv, &o);
  if (rc)
    return rc == 1 ? 0 : rc;
  bench_env env;
  cli_progress_begin("parprim bench");
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
