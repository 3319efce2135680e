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
 * This file is the driver: the command line, the environment (context, stream, timer), the
 * report rows and the table of benchmarks. The machinery every family runs on is in
 * bench_harness.c (bench_impl.h); each family's run functions are in bench_<family>.c.
 * Adding a primitive: write its run function in a family file and add it to
 * bench_entries[].
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "bench_impl.h"
#include "bench_dist.h"
#include "progress.h" /* cli/progress.h: a progress line on stderr */

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEFAULT_REPS 30
#define PROTOCOL_MIN_REPS 20
#define BENCH_EXIT_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define CPU_DEFAULT_MAX_N ((size_t)1 << 29) /* 2^30 runs on the CPU only when asked for */

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
  cli_verror(&env->failures, "bench", fmt, ap);
  va_end(ap);
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

/* The columns of the CSV and JSON rows, in order: the CSV header and the JSON keys. */
static const char *const row_keys[] = {
    "primitive", "op", "dtype", "n", "bytes", "bytes_model", "backend", "device", "reps",
    "time_ms", "gbs", "peer", "peer_time_ms", "peer_gbs", "ratio", "ratio_kind", "check",
    "unit"};
#define N_ROW_KEYS (sizeof row_keys / sizeof row_keys[0])

/* How a cell is written: a name as it is (JSON: quoted), free text quoted where the
 * format needs it (csv_text, json_text), a number as it is, or a missing number of ours
 * (the backend lacks the primitive): empty in CSV, null in JSON. */
typedef enum { CELL_NAME, CELL_TEXT, CELL_NUMBER, CELL_MISSING } cell_kind;
typedef struct row_cell {
  cell_kind kind;
  const char *text;
} row_cell;

static void print_cell(bool csv, const row_cell *c) {
  if (c->kind == CELL_TEXT)
    (csv ? csv_text : json_text)(c->text);
  else if (c->kind == CELL_MISSING)
    fputs(csv ? "" : "null", stdout);
  else if (c->kind == CELL_NAME && !csv)
    printf("\"%s\"", c->text);
  else
    fputs(c->text, stdout);
}

static void print_row_machine(bench_env *env, const bench_row *r) {
  const bool csv = env->o->fmt == FMT_CSV;
  const cell_kind ours = r->ours_missing ? CELL_MISSING : CELL_NUMBER;
  char num[8][32];
  snprintf(num[0], sizeof num[0], "%zu", r->n);
  snprintf(num[1], sizeof num[1], "%.0f", r->bytes);
  snprintf(num[2], sizeof num[2], "%d", env->o->reps);
  snprintf(num[3], sizeof num[3], "%.6f", r->ms);
  snprintf(num[4], sizeof num[4], "%.3f", gbs(r->bytes, r->ms));
  snprintf(num[5], sizeof num[5], "%.6f", r->peer_ms);
  snprintf(num[6], sizeof num[6], "%.3f", gbs(r->peer_bytes, r->peer_ms));
  snprintf(num[7], sizeof num[7], "%.4f", r->ours_missing ? 0.0 : row_ratio(env, r));
  const row_cell cells[N_ROW_KEYS] = {
      {CELL_NAME, r->prim}, {CELL_NAME, r->op}, {CELL_NAME, pp_dtype_string(r->t)},
      {CELL_NUMBER, num[0]}, {CELL_NUMBER, num[1]}, {CELL_TEXT, r->bytes_model},
      {CELL_NAME, pp_backend_string(pp_backend_of(env->ctx))}, {CELL_TEXT, env->dev.name},
      {CELL_NUMBER, num[2]}, {ours, num[3]}, {ours, num[4]}, {CELL_NAME, r->peer},
      {CELL_NUMBER, num[5]}, {CELL_NUMBER, num[6]}, {ours, num[7]},
      {CELL_NAME, ratio_kind(env, r)}, {CELL_NAME, r->check}, {CELL_NAME, row_unit(r)}};
  if (csv && !env->csv_header_done) {
    for (size_t k = 0; k < N_ROW_KEYS; k++)
      printf("%s%s", k ? "," : "", row_keys[k]);
    putchar('\n');
    env->csv_header_done = true;
  }
  if (!csv)
    putchar('{');
  for (size_t k = 0; k < N_ROW_KEYS; k++) {
    if (k)
      putchar(',');
    if (!csv)
      printf("\"%s\":", row_keys[k]);
    print_cell(csv, &cells[k]);
  }
  puts(csv ? "" : "}");
}

void print_row(bench_env *env, const bench_row *r) {
  static unsigned rows_done = 0;
  cli_progress_end(); /* the row replaces the progress line */
  switch (env->o->fmt) {
  case FMT_HUMAN:
    print_row_human(env, r);
    break;
  case FMT_CSV:
  case FMT_JSON:
    print_row_machine(env, r);
    break;
  }
  fflush(stdout);
  cli_progress_update(++rows_done, 0, "rows measured");
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
    {"reduce", bench_run_reduce, "reads n*size", "CUB DeviceReduce::Sum/Min/Max",
     "memcpy of the same bytes; then std::reduce (par) when built in", {P2(20), P2(24), P2(28), P2(30)}, NULL, 0},
    {"argreduce", bench_run_argreduce, "reads n*size", "CUB DeviceReduce::ArgMin/ArgMax",
     "memcpy of the same bytes", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"memcpy", bench_run_memcpy, "reads+writes 2*n*size (n elements of --dtype, default f32)",
     "cudaMemcpyAsync device to device", "OpenMP-parallel memcpy", {P2(20), P2(24), P2(28)},
     NULL, 0},
    {"scan", bench_run_scan, "reads+writes 2*n*size; ex- exclusive, in- inclusive",
     "CUB DeviceScan::ExclusiveSum/InclusiveSum (min, max: ExclusiveScan/InclusiveScan)",
     "memcpy of the input bytes; then std::exclusive_scan / inclusive_scan (par) when built in", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"select", bench_run_select, "reads n*size, writes count*size; keeps x > 0 (unsigned: x > max/2)",
     "CUB DeviceSelect::If",
     "memcpy of the input bytes; then std::copy_if (par) when built in", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"select_flagged", bench_run_select_flagged,
     "reads n*size + n flag bytes, writes count*size; random 0/1 flags",
     "CUB DeviceSelect::Flagged", "memcpy of the input bytes", {P2(20), P2(24), P2(28)}, NULL,
     0},
    {"partition", bench_run_partition, "reads+writes 2*n*size; x > 0 first (unsigned: x > max/2)",
     "CUB DevicePartition::If (rejected part reversed)", "memcpy of the input bytes",
     {P2(20), P2(24), P2(28)}, NULL, 0},
    {"sort", bench_run_sort, "n keys per run (rate in Gkeys/s); fresh unsorted keys every run",
     "CUB DeviceRadixSort::SortKeys/SortPairs, DoubleBuffer form; merge/sample/quick rows: "
     "CUB DeviceMergeSort::SortKeys",
     "std::sort (pairs: std::stable_sort), one thread; then std::execution::par (TBB) when built in", {P2(20), P2(24), P2(28), P2(30)},
     "Gkeys/s", P2(24)},
    {"merge", bench_run_merge, "reads+writes 2*n*size; n = na + nb, na = n/2, both sorted",
     "CUB DeviceMerge::MergeKeys", "std::merge, one thread", {P2(20), P2(24), P2(28)}, NULL, 0},
    {"histogram", bench_run_histogram,
     "reads n*size; even bins over the data's range, 8-bit images: 256 bins",
     "CUB DeviceHistogram::HistogramEven / HistogramRange",
     "serial histogram; image rows: OpenCV calcHist when built in", {P2(20), P2(24), P2(28)}, NULL,
     0},
    {"topk", bench_run_topk, "reads n*size; rate in GB/s of the input", "CUB DeviceRadixSort (full sort)",
     "serial heap selection (f32 only); then std::nth_element + sort (par) when built in",
     {P2(20), P2(28)}, NULL, P2(24)},
    {"sgemm", bench_run_sgemm, "n = m = k; 2*n^3 flops, bytes column = flops/1000 (rate in TFLOP/s)",
     "cublasSgemm (CUBLAS_PEDANTIC_MATH)", "OpenBLAS cblas_sgemm when built in, else a naive triple loop (n <= 1024)",
     {1000, 1024, 4096, 4097, 8192}, "TFLOP/s", 1024},
    {"conv", bench_run_conv, "n = pixels of a square f32 image; reads+writes 8*n; filters 3,5,9,15, 2D and separable",
     "cudaMemcpyAsync of the image",
     "OpenCV filter2D / sepFilter2D when built in, else memcpy of the image", {P2(26)}, "GB/s", 0},
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

void pp_cli_bench_usage(FILE *f) {
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
        "  --k K        topk: k (default: 100 up to 2^22, else 10, 1000, 100000)\n"
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

/* -1 when parsed, else the exit code (0 after help). */
static int parse_args(int argc, char **argv, bench_opts *o) {
  enum { OPT_CSV, OPT_JSON, OPT_N, OPT_REPS, OPT_DTYPE, OPT_OP };
  const cli_option options[] = {
      CLI_VALUE("--n", OPT_N),
      CLI_VALUE("--reps", OPT_REPS),
      CLI_BACKEND("--backend", &o->backend),
      CLI_VALUE("--dtype", OPT_DTYPE),
      CLI_VALUE("--op", OPT_OP),
      CLI_SIZE("--k", &o->k, CLI_OPTIONAL, 1, 0, "bad value for --k"),
      CLI_SIZE("--bins", &o->bins, CLI_OPTIONAL, 1, 0, "bad value for --bins"),
      CLI_SIZE("--filter", &o->filter, CLI_OPTIONAL, 1, 0, "bad value for --filter"),
      CLI_SWITCH("--csv", OPT_CSV),
      CLI_SWITCH("--json", OPT_JSON),
      CLI_FLAG("--desc", &o->desc),
      CLI_FLAG("--pairs", &o->pairs),
      CLI_QUIET,
  };
  cli_scan sc = CLI_SCAN("bench", pp_cli_bench_usage, options, argc, argv, NULL, NULL);
  for (int got; (got = cli_scan_next(&sc)) != CLI_SCAN_END;) {
    const char *v = sc.val, *a = sc.arg;
    size_t n = 0;
    switch (got) {
    case CLI_SCAN_EXIT:
      return sc.exit;
    case OPT_CSV:
    case OPT_JSON:
      o->fmt = got == OPT_CSV ? FMT_CSV : FMT_JSON;
      break;
    case OPT_N:
      if (cli_parse_size(v, &n) || n == 0)
        return cli_scan_error(&sc, "bad size for --n: '%s'", v);
      if (o->nsizes == MAX_LIST)
        return cli_scan_error(&sc, "too many --n (at most 16), at '%s'", v);
      o->sizes[o->nsizes++] = n;
      break;
    case OPT_REPS:
      if (cli_parse_size(v, &n) || n == 0 || n > 100000)
        return cli_scan_error(&sc, "bad count for --reps: '%s'", v);
      o->reps = (int)n;
      break;
    case OPT_DTYPE:
      if (cli_parse_dtype(v, &o->dtype))
        return cli_scan_error(&sc, "unknown dtype '%s' (u8 i32 u32 i64 u64 f32 f64)", v);
      o->has_dtype = true;
      break;
    case OPT_OP:
      if (cli_parse_op(v, &o->op))
        return cli_scan_error(&sc, "unknown op '%s' (sum, min, max)", v);
      o->has_op = true;
      break;
    default: /* a primitive, or no option of bench */
      if (a[0] == '-')
        return cli_scan_error(&sc, "unknown option '%s'", a);
      if (!find_entry(a))
        return cli_scan_error(&sc, "unknown primitive '%s'", a);
      if (o->nprims == MAX_LIST)
        return cli_scan_error(&sc, "too many primitives, at '%s'", a);
      o->prims[o->nprims++] = a;
    }
  }
  return -1;
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
         env->o->reps, WARMUP_RUNS, CLI_SEED);
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

int pp_cli_bench_main(int argc, char **argv) {
  if (pp_bench_dist_wanted(argc, argv)) /* --gpus N: the distributed bench, bench_dist.c */
    return pp_bench_dist_main(argc, argv);
  bench_opts o = {.reps = DEFAULT_REPS, .fmt = FMT_HUMAN, .backend = PP_BACKEND_AUTO};
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
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
