/*
 * bench_dist.c — `parprim bench --gpus N [sort reduce histogram topk scan nbody]`: each
 * distributed primitive on N GPUs of this node (a thread and a distributed CUDA context per
 * GPU, cli/gpus.c), against parprim on ONE GPU (a plain context, measured in the same run)
 * and, for sort, the CUB + NCCL sample sort of bench/peer_dist_sort.cu.
 *
 * Timing: every rank records CUDA events around the call on its own stream after a host
 * barrier; a run's time is the slowest rank's; the figure is the median of the runs after
 * one warm-up. Inputs are generated on the device before each run of an in-place sort (not
 * timed). Weak scaling: n keys per GPU, against one GPU sorting n; strong scaling: n in all,
 * against one GPU sorting n; the speed-up is the ratio of the throughputs.
 *
 * Checks: every sort's output is checked on the device (sorted on each rank, in order
 * across ranks, the same multiset of keys; pairs: each value still beside its key, equal
 * keys in global-index order); the peer's likewise. The other primitives are checked by
 * the distributed tests (tests/test_dist*.c), not here.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_dist.h"

#include "bench.h"
#include "common.h"
#include "gpu.h"
#include "gpus.h"
#ifdef PP_HAVE_CUDA
#include "peer_dist_sort.h"
#endif

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIST_DEFAULT_REPS 10
#define DIST_HUGE_REPS 2 /* the sort beyond one GPU: 1 warm-up and 2 runs at most */
#define DIST_MAX_GROUPS 8

typedef enum dkind {
  DK_SORT,
  DK_PAIRS,
  DK_STRONG,
  DK_REDUCE,
  DK_HISTOGRAM,
  DK_TOPK,
  DK_SCAN,
  DK_NBODY,
  DK_HUGE,
  DK_COUNT
} dkind;

typedef struct dcase_def {
  dkind kind;
  const char *group; /* the command-line name that selects it */
  const char *name;
  const char *dtype;
  int log2n;  /* default n: per GPU, or in all when total */
  bool total; /* strong scaling: n is the total */
  const char *unit;
} dcase_def;

/* In run order: the sort beyond one GPU last, once the other cases' buffers are gone. */
static const dcase_def defs[DK_COUNT] = {
    {DK_SORT, "sort", "sort keys, weak", "u32", 30, false, "Gkeys/s"},
    {DK_PAIRS, "sort", "sort pairs, weak", "u32/u32", 29, false, "Gpairs/s"},
    {DK_STRONG, "sort", "sort keys, strong", "u32", 30, true, "Gkeys/s"},
    {DK_REDUCE, "reduce", "reduce sum", "f32", 30, false, "GB/s"},
    {DK_HISTOGRAM, "histogram", "histogram 1024 bins", "f32", 30, false, "GB/s"},
    {DK_TOPK, "topk", "top-k 1000 largest", "f32", 30, false, "GB/s"},
    {DK_SCAN, "scan", "exclusive scan sum", "u32", 30, false, "GB/s"},
    {DK_NBODY, "nbody", "nbody accel", "f32", 20, true, "Ginter/s"},
    {DK_HUGE, "sort", "sort keys, beyond 1 GPU", "u32", 32, false, "Gkeys/s"},
};

typedef enum dfmt { DF_HUMAN, DF_CSV, DF_JSON } dfmt;

typedef struct dist_opts {
  int gpus, reps;
  dfmt fmt;
  size_t n; /* --n: 0 = each case's default */
  bool want[DK_COUNT];
} dist_opts;

void pp_bench_dist_usage(FILE *f) {
  fputs("usage: parprim bench --gpus N [sort|reduce|histogram|topk|scan|nbody ...] [--n SIZE]\n"
        "                     [--reps R] [--csv|--json]\n"
        "\n"
        "The distributed primitives on N GPUs of this node (one thread and one distributed\n"
        "CUDA context per GPU), each against parprim on one GPU in the same run, and sort\n"
        "against a CUB + NCCL sample sort. Default: all of them.\n"
        "  sort       u32 keys 2^30 per GPU (weak scaling, and the peer), u32/u32 pairs 2^29\n"
        "             per GPU, u32 keys 2^30 in all (strong scaling, and the peer), and with\n"
        "             2 GPUs or more 2^32 keys per GPU (more than one GPU sorts), checked\n"
        "  reduce     f32 sum, 2^30 per GPU          histogram  f32, 1024 bins, 2^30 per GPU\n"
        "  topk       f32, k = 1000, 2^30 per GPU    scan       u32 exclusive sum, 2^30 per GPU\n"
        "  nbody      accelerations of 2^20 bodies in all\n"
        "  --n SIZE   replaces every case's size (per GPU, or in all for the strong cases)\n"
        "  --reps R   timed runs per case (default 10; median of the slowest rank's times)\n"
        "Speed-up: throughput on N GPUs / throughput of parprim on one GPU.\n"
        "Exit: 0 ran and checked, 1 a failure, 2 usage, 77 no distributed CUDA context here.\n",
        f);
}

int pp_bench_dist_wanted(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--gpus") == 0 || strncmp(argv[i], "--gpus=", 7) == 0) return 1;
  return 0;
}

static int usage(const char *fmt, const char *arg) {
  return cli_usage_error("bench", pp_bench_dist_usage, fmt, arg);
}

static int parse(int argc, char **argv, dist_opts *o) {
  bool any = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int g = pp_gpus_parse(argc, argv, &i, &o->gpus);
    if (g < 0) return 2;
    if (g > 0) continue;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      pp_bench_dist_usage(stdout);
      return 1;
    }
    if (strcmp(a, "--csv") == 0 || strcmp(a, "--json") == 0) {
      o->fmt = a[2] == 'c' ? DF_CSV : DF_JSON;
      continue;
    }
    if (strcmp(a, "--n") == 0 || strcmp(a, "--reps") == 0 || strncmp(a, "--n=", 4) == 0 ||
        strncmp(a, "--reps=", 7) == 0) {
      const bool is_n = a[3] == '\0' || a[3] == '=';
      const char *v = strchr(a, '=');
      if (v) v++;
      else if (i + 1 < argc) v = argv[++i];
      else return usage("%s needs a value", a);
      size_t x = 0;
      if (cli_parse_size(v, &x) || x == 0 || (!is_n && x > 100000))
        return usage(is_n ? "bad size for --n: '%s'" : "bad count for --reps: '%s'", v);
      if (is_n) o->n = x;
      else o->reps = (int)x;
      continue;
    }
    bool known = false;
    for (int k = 0; k < DK_COUNT; k++)
      if (strcmp(a, defs[k].group) == 0) {
        o->want[k] = true;
        known = true;
      }
    if (!known) return usage("unknown argument '%s' with --gpus", a);
    any = true;
  }
  if (!any)
    for (int k = 0; k < DK_COUNT; k++) o->want[k] = true;
  return 0;
}

#ifndef PP_HAVE_CUDA

int pp_bench_dist_main(int argc, char **argv) {
  dist_opts o = {.gpus = 0, .reps = DIST_DEFAULT_REPS};
  int rc = parse(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : rc;
  fprintf(stderr, "parprim bench --gpus: this build has no CUDA backend\n");
  return 77;
}

#else

/* One case's results as the ranks leave them (rank 0 reads them after a barrier). */
typedef struct dist_shared {
  const dist_opts *o;
  int nranks;
  double *t; /* [reps][nranks] this case's times */
  int *fail; /* [nranks] a rank's failure in the current step */
  bench_dist_facts *in_facts, *out_facts; /* [nranks] */
  uint64_t *pairs_bad;                    /* [nranks] */
  uint32_t *first_val, *last_val;         /* [nranks] */
  size_t *m;                              /* [nranks] keys a rank holds after the peer */
  unsigned char peer_id[128];
  bool peer_ok;
  char peer_err[BENCH_DIST_ERR];
  int failures;
  bool header_done;
} dist_shared;

/* n of rank r: n per GPU (weak), or n in all split as evenly as it goes (strong) */
static size_t rank_n(const dcase_def *d, size_t n, int r, int p) {
  if (!d->total) return n;
  return n / (size_t)p + ((size_t)r < n % (size_t)p ? 1 : 0);
}

static size_t rank_first(const dcase_def *d, size_t n, int r, int p) {
  size_t first = 0;
  for (int q = 0; q < r; q++) first += rank_n(d, n, q, p);
  return first;
}

/* A rank's buffers for one case (device memory from pp_malloc on the context that runs). */
typedef struct dbufs {
  void *a, *b, *c; /* keys / input; values / output; top-k indices */
  void *body[10];  /* N-body: x y z vx vy vz mass ax ay az */
  size_t n;
} dbufs;

static void bufs_free(pp_context *ctx, dbufs *b) {
  if (b->a) pp_free(ctx, b->a);
  if (b->b) pp_free(ctx, b->b);
  if (b->c) pp_free(ctx, b->c);
  for (int i = 0; i < 10; i++)
    if (b->body[i]) pp_free(ctx, b->body[i]);
  memset(b, 0, sizeof *b);
}

/* Allocate and fill the inputs of kind k for n elements of the global sequence from first. */
static int bufs_make(pp_context *ctx, dkind k, size_t n, size_t first, void *stream, dbufs *b,
                     char *err) {
  memset(b, 0, sizeof *b);
  b->n = n;
  const size_t bytes = (n ? n : 1) * 4;
  pp_status s = PP_OK;
  if (k == DK_NBODY) {
    for (int i = 0; i < 10 && s == PP_OK; i++) s = pp_malloc(ctx, &b->body[i], bytes);
    for (int i = 0; i < 7 && s == PP_OK; i++) {
      const double lo = i < 3 ? -1.0 : i < 6 ? -0.01 : 0.5, hi = i < 3 ? 1.0 : i < 6 ? 0.01 : 1.5;
      if (bench_dist_fill(PP_F32, b->body[i], n, CLI_SEED + (uint64_t)i, first, lo, hi, stream, err))
        return -1;
    }
  } else {
    s = pp_malloc(ctx, &b->a, bytes);
    if (s == PP_OK && (k == DK_PAIRS || k == DK_SCAN)) s = pp_malloc(ctx, &b->b, bytes);
    if (s == PP_OK && k == DK_TOPK) s = pp_malloc(ctx, &b->b, 1000 * 4);
    if (s == PP_OK && k == DK_TOPK) s = pp_malloc(ctx, &b->c, 1000 * 8);
    if (s == PP_OK && (k == DK_REDUCE || k == DK_HISTOGRAM || k == DK_TOPK))
      if (bench_dist_fill(PP_F32, b->a, n, CLI_SEED, first, -1.0, 1.0, stream, err)) return -1;
    if (s == PP_OK && k == DK_SCAN)
      if (bench_dist_fill(PP_U32, b->a, n, CLI_SEED, first, 0, 0, stream, err)) return -1;
  }
  if (s != PP_OK) {
    snprintf(err, BENCH_DIST_ERR, "pp_malloc: %s (%s)", pp_status_string(s), pp_last_error(ctx));
    return -1;
  }
  return 0;
}

/* Before each run: a sort's input again (the sort works in place). */
static int prepare(dkind k, dbufs *b, size_t first, void *stream, char *err) {
  if (k != DK_SORT && k != DK_STRONG && k != DK_HUGE && k != DK_PAIRS) return 0;
  if (bench_dist_fill(PP_U32, b->a, b->n, CLI_SEED, first, 0, 0, stream, err)) return -1;
  if (k == DK_PAIRS && bench_dist_iota_u32((uint32_t *)b->b, b->n, first, stream, err)) return -1;
  return 0;
}

static pp_status call(pp_context *ctx, dkind k, dbufs *b) {
  switch (k) {
  case DK_SORT:
  case DK_STRONG:
  case DK_HUGE: return pp_sort(ctx, PP_U32, b->a, NULL, 0, b->n, NULL);
  case DK_PAIRS: return pp_sort(ctx, PP_U32, b->a, b->b, 4, b->n, NULL);
  case DK_REDUCE: {
    float out = 0;
    return pp_reduce(ctx, PP_SUM, PP_F32, b->a, b->n, &out);
  }
  case DK_HISTOGRAM: {
    uint64_t counts[1024];
    return pp_histogram_even(ctx, PP_F32, b->a, b->n, 1024, -1.0, 1.0, counts);
  }
  case DK_TOPK: return pp_topk(ctx, PP_F32, b->a, b->n, 1000, true, b->b, (uint64_t *)b->c);
  case DK_SCAN: return pp_scan(ctx, PP_SUM, PP_U32, b->a, b->b, b->n, false);
  case DK_NBODY: {
    float **f = (float **)b->body;
    pp_bodies bodies = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], b->n};
    return pp_nbody_accel(ctx, &bodies, 0.01f, f[7], f[8], f[9]);
  }
  default: return PP_ERR_INVALID_ARGUMENT;
  }
}

/* Every rank reports ok (0) or a failure; true on every rank when all passed. */
static bool all_ok(pp_gpus_team *team, dist_shared *sh, int rank, int failed) {
  sh->fail[rank] = failed;
  pp_gpus_barrier(team);
  bool ok = true;
  for (int q = 0; q < sh->nranks; q++) ok = ok && !sh->fail[q];
  pp_gpus_barrier(team); /* nobody rewrites fail[] before everyone has read it */
  return ok;
}

/* The median over runs of the slowest rank's time (rank 0, after the runs). */
static double slowest_median(const dist_shared *sh, int runs) {
  double *v = malloc(sizeof(double) * (size_t)(runs ? runs : 1));
  if (!v) return 0;
  for (int r = 0; r < runs; r++) {
    double worst = 0;
    for (int q = 0; q < sh->nranks; q++)
      if (sh->t[r * sh->nranks + q] > worst) worst = sh->t[r * sh->nranks + q];
    v[r] = worst;
  }
  double m = cli_median(v, (size_t)runs);
  free(v);
  return m;
}

/* Times `runs` runs (after one warm-up) of case k on every rank; with peer != NULL the
 * peer's sort instead of pp_sort. Returns 0, or -1 on every rank after any rank failed. */
static int time_runs(pp_gpus_team *team, dist_shared *sh, pp_context *ctx, int rank, dkind k,
                     dbufs *b, size_t first, void *stream, bench_gpu_timer *timer, int runs,
                     bench_peer_dist *peer, const uint32_t **peer_out, size_t *peer_m) {
  char err[BENCH_DIST_ERR] = "";
  for (int run = -1; run < runs; run++) {
    int failed = prepare(k, b, first, stream, err) || bench_gpu_stream_sync(stream);
    if (!all_ok(team, sh, rank, failed)) {
      if (failed) fprintf(stderr, "parprim bench: rank %d: %s %s\n", rank, err, bench_gpu_error());
      return -1;
    }
    double ms = 0;
    pp_status s = PP_OK;
    failed = bench_gpu_timer_start(timer, stream);
    if (!failed && peer) failed = bench_peer_dist_sort(peer, (uint32_t *)b->a, b->n, peer_out, peer_m, err);
    else if (!failed) s = call(ctx, k, b);
    failed = failed || s != PP_OK || bench_gpu_timer_stop(timer, stream) ||
             bench_gpu_timer_elapsed_ms(timer, &ms);
    if (s != PP_OK)
      snprintf(err, sizeof err, "%s: %s", pp_status_string(s), pp_last_error(ctx));
    if (run >= 0) sh->t[run * sh->nranks + rank] = ms;
    if (!all_ok(team, sh, rank, failed)) {
      if (failed) fprintf(stderr, "parprim bench: rank %d: %s %s\n", rank, err, failed && !err[0] ? bench_gpu_error() : "");
      return -1;
    }
  }
  return 0;
}

typedef struct row {
  const dcase_def *d;
  int gpus;
  size_t n_rank, n_total, n_one;
  double ms, one_ms, peer_ms;
  const char *check, *peer_check;
  double peer_phase[3]; /* rank 0's last peer sort: local sort, exchange, sort of what arrived */
} row;

static double rate(const dcase_def *d, size_t n, double ms) {
  if (ms <= 0) return 0;
  switch (d->kind) {
  case DK_NBODY: return (double)n * (double)n / (ms * 1e6);
  case DK_SCAN: return 8.0 * (double)n / (ms * 1e6);
  case DK_REDUCE:
  case DK_HISTOGRAM:
  case DK_TOPK: return 4.0 * (double)n / (ms * 1e6);
  default: return (double)n / (ms * 1e6);
  }
}

static void print_header(dist_shared *sh, pp_context *ctx) {
  pp_device_info info;
  memset(&info, 0, sizeof info);
  (void)pp_get_device_info(ctx, &info);
  char date[32] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  if (sh->o->fmt == DF_CSV) {
    printf("prim,dtype,gpus,n_per_gpu,n_total,ms,rate,unit,one_gpu_n,one_gpu_ms,speedup,peer,"
           "peer_ms,peer_over_ours,check,peer_check,device\n");
    return;
  }
  if (sh->o->fmt == DF_JSON) return;
  printf("parprim %s bench --gpus %d, %s\n", pp_version(), sh->nranks, date);
  printf("devices: %d x %s (sm_%d%d, %d SMs, %.1f GiB, driver %d.%d, runtime %d.%d)\n",
         sh->nranks, info.name, info.compute_major, info.compute_minor, info.multiprocessors,
         (double)info.global_mem_bytes / (1u << 30), info.driver_version / 1000,
         info.driver_version % 1000 / 10, info.runtime_version / 1000,
         info.runtime_version % 1000 / 10);
  printf("timing: CUDA events on each rank's stream after a host barrier; a run's time is the\n"
         "        slowest rank's; median of %d runs after 1 warm-up; seed 0x%" PRIx64 "\n",
         sh->o->reps, CLI_SEED);
  printf("speed-up: throughput on %d GPUs / parprim's on one GPU (same run); peer: CUB radix\n"
         "        sort + NCCL all-to-all-v + CUB radix sort, unbalanced (no rebalance);\n"
         "        n/GPU marked * is n in all (strong scaling)\n\n",
         sh->nranks);
  printf("%-24s %-8s %4s %7s %9s %10s %-8s %9s %8s %9s %8s %s\n", "primitive", "dtype", "GPUs",
         "n/GPU", "ms", "rate", "unit", "1-GPU ms", "speed-up", "peer ms", "vs peer", "check");
}

static void print_row(dist_shared *sh, const row *r, const char *device) {
  char nb[32], one[32] = "-", sp[32] = "-", pm[32] = "-", vp[32] = "-";
  const double ours = rate(r->d, r->n_total, r->ms);
  const double single = rate(r->d, r->n_one, r->one_ms);
  if (r->one_ms > 0) {
    snprintf(one, sizeof one, "%.3f", r->one_ms);
    snprintf(sp, sizeof sp, "%.2fx", ours / single);
  }
  if (r->peer_ms > 0) {
    snprintf(pm, sizeof pm, "%.3f", r->peer_ms);
    snprintf(vp, sizeof vp, "%.2fx", r->peer_ms / r->ms);
  }
  size_t n = r->d->total ? r->n_total : r->n_rank;
  int k = 0;
  while (k < 63 && ((size_t)1 << k) < n) k++;
  if (((size_t)1 << k) == n) snprintf(nb, sizeof nb, "2^%d%s", k, r->d->total ? "*" : "");
  else snprintf(nb, sizeof nb, "%zu%s", n, r->d->total ? "*" : "");
  const char *check = r->check ? r->check : "-";
  if (sh->o->fmt == DF_HUMAN) {
    printf("%-24s %-8s %4d %7s %9.3f %10.2f %-8s %9s %8s %9s %8s %s%s%s\n", r->d->name, r->d->dtype,
           r->gpus, nb, r->ms, ours, r->d->unit, one, sp, pm, vp, check,
           r->peer_check ? ", peer " : "", r->peer_check ? r->peer_check : "");
    /* where the peer's time goes: the bound of any sort that sorts, exchanges and sorts */
    if (r->peer_phase[0] > 0) {
      const double out_gb = 4.0 * (double)r->n_rank * (double)(r->gpus - 1) / r->gpus / 1e9;
      printf("%-24s   peer phases, rank 0, last run: local CUB sort %.3f ms, NCCL exchange "
             "%.3f ms (%.0f GB/s out of the GPU), CUB sort of what arrived %.3f ms\n",
             "", r->peer_phase[0], r->peer_phase[1], out_gb / (r->peer_phase[1] / 1e3),
             r->peer_phase[2]);
    }
  } else if (sh->o->fmt == DF_CSV) {
    printf("%s,%s,%d,%zu,%zu,%.4f,%.3f,%s,%zu,%.4f,%.3f,%s,%.4f,%.3f,%s,%s,%s\n", r->d->name,
           r->d->dtype, r->gpus, r->n_rank, r->n_total, r->ms, ours, r->d->unit, r->n_one,
           r->one_ms, r->one_ms > 0 ? ours / single : 0.0,
           r->peer_ms > 0 ? "cub+nccl" : "", r->peer_ms, r->peer_ms > 0 ? r->peer_ms / r->ms : 0.0,
           check, r->peer_check ? r->peer_check : "", device);
  } else {
    printf("{\"prim\":\"%s\",\"dtype\":\"%s\",\"gpus\":%d,\"n_per_gpu\":%zu,\"n_total\":%zu,"
           "\"ms\":%.4f,\"rate\":%.3f,\"unit\":\"%s\",\"one_gpu_n\":%zu,\"one_gpu_ms\":%.4f,"
           "\"speedup\":%.3f,\"peer\":\"%s\",\"peer_ms\":%.4f,\"peer_over_ours\":%.3f,"
           "\"check\":\"%s\",\"peer_check\":\"%s\",\"device\":\"%s\"}\n",
           r->d->name, r->d->dtype, r->gpus, r->n_rank, r->n_total, r->ms, ours, r->d->unit,
           r->n_one, r->one_ms, r->one_ms > 0 ? ours / single : 0.0,
           r->peer_ms > 0 ? "cub+nccl" : "", r->peer_ms,
           r->peer_ms > 0 ? r->peer_ms / r->ms : 0.0, check,
           r->peer_check ? r->peer_check : "", device);
  }
  fflush(stdout);
}

/* Rank 0: the sorted keys of every rank (facts in out_facts, input fingerprints in
 * in_facts) in order and complete. */
static const char *judge_sort(const dist_shared *sh, bool pairs, const size_t *held) {
  uint64_t fin = 0, fout = 0, unsorted = 0, bad = 0;
  int prev = -1;
  for (int q = 0; q < sh->nranks; q++) {
    fin += sh->in_facts[q].fingerprint;
    fout += sh->out_facts[q].fingerprint;
    unsorted += sh->out_facts[q].unsorted;
    if (pairs) bad += sh->pairs_bad[q];
    if (held[q] == 0) continue;
    if (prev >= 0) {
      const bench_dist_facts *a = &sh->out_facts[prev], *b = &sh->out_facts[q];
      if (a->last > b->first) unsorted++;
      if (pairs && a->last == b->first && sh->last_val[prev] >= sh->first_val[q]) bad++;
    }
    prev = q;
  }
  if (fin != fout) return "MISMATCH (keys lost or changed)";
  if (unsorted) return "MISMATCH (not sorted)";
  if (bad) return "MISMATCH (values or stability)";
  return "ok";
}

typedef struct rank_env {
  pp_gpus_team *team;
  dist_shared *sh;
  pp_context *ctx, *plain;
  int rank, p;
  void *stream;
  bench_gpu_timer *timer;
  bench_peer_dist *peer;
  size_t peer_n;
  char device[256];
} rank_env;

/* One case on every rank; rank 0 prints its row. Returns 0, or 1 after a failure. */
static int run_case(rank_env *e, const dcase_def *d) {
  dist_shared *sh = e->sh;
  const int rank = e->rank, p = e->p;
  const dkind k = d->kind;
  char err[BENCH_DIST_ERR] = "";
  const size_t n_arg = sh->o->n ? sh->o->n : (size_t)1 << d->log2n;
  const size_t n = rank_n(d, n_arg, rank, p), first = rank_first(d, n_arg, rank, p);
  size_t n_total = 0;
  for (int q = 0; q < p; q++) n_total += rank_n(d, n_arg, q, p);
  const int runs = k == DK_HUGE ? (sh->o->reps < DIST_HUGE_REPS ? sh->o->reps : DIST_HUGE_REPS)
                                : sh->o->reps;
  row r = {d, p, n, n_total, d->total ? n_arg : n, 0, 0, 0, NULL, NULL, {0, 0, 0}};

  if (k == DK_HUGE) {
    if (e->plain) { /* no one-GPU figure here: give its pool's memory back first */
      pp_destroy(e->plain);
      e->plain = NULL;
    }
    /* the keys, then the receive buffer and the local sort's scratch: about 3 n words at
       the peak (the send buffer is back in the pool by then) */
    size_t free_b = 0, total_b = 0;
    int small = p < 2 || bench_gpu_mem_info(&free_b, &total_b) || free_b / 4 < 3 * n + n / 4;
    if (!all_ok(e->team, sh, rank, small)) {
      if (rank == 0)
        fprintf(stderr, "parprim bench: %s skipped: %s\n", d->name,
                p < 2 ? "needs 2 GPUs or more" : "not enough free memory on some GPU");
      return 0;
    }
  }
  dbufs b;
  int failed = bufs_make(e->ctx, k, n, first, e->stream, &b, err) || bench_gpu_stream_sync(e->stream);
  if (!all_ok(e->team, sh, rank, failed)) {
    if (failed) fprintf(stderr, "parprim bench: rank %d: %s: %s\n", rank, d->name, err);
    bufs_free(e->ctx, &b);
    return 1;
  }
  int rc = 0;
  /* ours */
  if (time_runs(e->team, sh, e->ctx, rank, k, &b, first, e->stream, e->timer, runs, NULL, NULL, NULL))
    rc = 1;
  if (!rc && rank == 0) r.ms = slowest_median(sh, runs);
  const bool sorting = k == DK_SORT || k == DK_PAIRS || k == DK_STRONG || k == DK_HUGE;
  if (!rc && sorting) {
    failed = bench_dist_facts_u32((const uint32_t *)b.a, n, e->stream, &sh->out_facts[rank], err);
    if (!failed && k == DK_PAIRS)
      failed = bench_dist_pairs_check_u32((const uint32_t *)b.a, (const uint32_t *)b.b, n, CLI_SEED,
                                          e->stream, &sh->pairs_bad[rank], &sh->first_val[rank],
                                          &sh->last_val[rank], err);
    if (!failed) failed = prepare(k, &b, first, e->stream, err) ||
                          bench_dist_facts_u32((const uint32_t *)b.a, n, e->stream, &sh->in_facts[rank], err);
    sh->m[rank] = n;
    if (!all_ok(e->team, sh, rank, failed)) {
      if (failed) fprintf(stderr, "parprim bench: rank %d: %s: %s\n", rank, d->name, err);
      rc = 1;
    } else if (rank == 0) {
      r.check = judge_sort(sh, k == DK_PAIRS, sh->m);
    }
  }
  /* the peer: keys only */
  if (!rc && (k == DK_SORT || k == DK_STRONG) && sh->peer_ok) {
    if (e->peer && e->peer_n < n) {
      bench_peer_dist_destroy(e->peer);
      e->peer = NULL;
    }
    failed = 0;
    if (!e->peer) { /* a communicator needs an id of its own: rank 0 makes it */
      pp_gpus_barrier(e->team);
      if (rank == 0 && bench_peer_nccl_id(sh->peer_id, sh->peer_err)) sh->peer_ok = false;
      pp_gpus_barrier(e->team);
      failed = !sh->peer_ok || bench_peer_dist_create(&e->peer, sh->peer_id, p, rank, n, e->stream, err);
      if (!sh->peer_ok) snprintf(err, sizeof err, "%s", sh->peer_err);
      e->peer_n = n;
    }
    if (!all_ok(e->team, sh, rank, failed)) {
      if (failed) fprintf(stderr, "parprim bench: rank %d: the peer: %s\n", rank, err);
      bench_peer_dist_destroy(e->peer);
      e->peer = NULL;
      rc = 1;
    } else {
      const uint32_t *out = NULL;
      size_t m = 0;
      if (time_runs(e->team, sh, e->ctx, rank, k, &b, first, e->stream, e->timer, runs, e->peer, &out, &m))
        rc = 1;
      if (!rc && rank == 0) {
        r.peer_ms = slowest_median(sh, runs);
        if (bench_peer_dist_phases(e->peer, r.peer_phase, err)) r.peer_phase[0] = 0;
      }
      if (!rc) {
        failed = bench_dist_facts_u32(out, m, e->stream, &sh->out_facts[rank], err);
        sh->m[rank] = m;
        if (!all_ok(e->team, sh, rank, failed)) rc = 1;
        else if (rank == 0) {
          size_t held = 0;
          for (int q = 0; q < p; q++) held += sh->m[q];
          r.peer_check = held != n_total ? "MISMATCH (keys lost)" : judge_sort(sh, false, sh->m);
        }
      }
    }
  }
  if (k == DK_STRONG && e->peer) { /* the peer's buffers are not needed any more */
    bench_peer_dist_destroy(e->peer);
    e->peer = NULL;
  }
  /* one GPU: rank 0, a plain context, the same per-GPU size (weak) or total (strong) */
  pp_gpus_barrier(e->team);
  if (!rc && rank == 0 && k != DK_HUGE) {
    dbufs one;
    const dcase_def *dd = d;
    const size_t n_one = r.n_one;
    failed = bufs_make(e->plain, k, n_one, 0, e->stream, &one, err) || bench_gpu_stream_sync(e->stream);
    double *times = malloc(sizeof(double) * (size_t)runs);
    for (int run = -1; !failed && times && run < runs; run++) {
      double ms = 0;
      failed = prepare(k, &one, 0, e->stream, err) || bench_gpu_stream_sync(e->stream) ||
               bench_gpu_timer_start(e->timer, e->stream);
      pp_status s = failed ? PP_OK : call(e->plain, k, &one);
      failed = failed || s != PP_OK || bench_gpu_timer_stop(e->timer, e->stream) ||
               bench_gpu_timer_elapsed_ms(e->timer, &ms);
      if (s != PP_OK) snprintf(err, sizeof err, "%s: %s", pp_status_string(s), pp_last_error(e->plain));
      if (run >= 0) times[run] = ms;
    }
    if (failed || !times) {
      fprintf(stderr, "parprim bench: %s on one GPU: %s %s\n", dd->name, err, bench_gpu_error());
      rc = 1;
    } else {
      r.one_ms = cli_median(times, (size_t)runs);
    }
    free(times);
    bufs_free(e->plain, &one);
  }
  pp_gpus_barrier(e->team);
  bufs_free(e->ctx, &b);
  if (rank == 0) {
    if (r.check && strcmp(r.check, "ok") != 0) rc = 1;
    if (r.peer_check && strcmp(r.peer_check, "ok") != 0) rc = 1;
    if (r.ms > 0) print_row(sh, &r, e->device);
  }
  return rc;
}

static int rank_main(pp_gpus_team *team, pp_context *ctx, int rank, int nranks, void *arg) {
  dist_shared *sh = (dist_shared *)arg;
  rank_env e = {.team = team, .sh = sh, .ctx = ctx, .rank = rank, .p = nranks};
  char err[BENCH_DIST_ERR] = "";
  int dev = 0;
  int failed = bench_dist_device_of_rank(rank, &dev, err) || bench_dist_set_device(dev, err) ||
               bench_gpu_stream_create(&e.stream) || bench_gpu_timer_create(&e.timer);
  if (!failed && pp_set_stream(ctx, e.stream) != PP_OK) {
    snprintf(err, sizeof err, "pp_set_stream: %s", pp_last_error(ctx));
    failed = 1;
  }
  if (!failed && rank == 0) {
    pp_status s = pp_create(&e.plain, PP_BACKEND_CUDA);
    if (s == PP_OK) s = pp_set_stream(e.plain, e.stream);
    if (s != PP_OK) {
      snprintf(err, sizeof err, "the one-GPU context: %s", pp_last_error(e.plain));
      failed = 1;
    }
  }
  int rc = 1;
  if (all_ok(team, sh, rank, failed)) {
    pp_device_info info;
    memset(&info, 0, sizeof info);
    (void)pp_get_device_info(ctx, &info);
    snprintf(e.device, sizeof e.device, "%s", info.name);
    if (rank == 0) print_header(sh, ctx);
    rc = 0;
    for (int k = 0; k < DK_COUNT; k++)
      if (sh->o->want[k]) rc |= run_case(&e, &defs[k]);
  } else if (failed) {
    fprintf(stderr, "parprim bench: rank %d: %s %s\n", rank, err, bench_gpu_error());
  }
  bench_peer_dist_destroy(e.peer);
  if (e.plain) pp_destroy(e.plain);
  if (e.timer) bench_gpu_timer_destroy(e.timer);
  if (e.stream) {
    (void)pp_set_stream(ctx, NULL);
    bench_gpu_stream_destroy(e.stream);
  }
  return rc;
}

int pp_bench_dist_main(int argc, char **argv) {
  dist_opts o = {.gpus = 0, .reps = DIST_DEFAULT_REPS, .fmt = DF_HUMAN};
  int rc = parse(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : rc;
  if (o.gpus < 1) return usage("%s", "--gpus needs a number of GPUs");
  dist_shared sh;
  memset(&sh, 0, sizeof sh);
  sh.o = &o;
  sh.nranks = o.gpus;
  const size_t p = (size_t)o.gpus;
  sh.t = calloc((size_t)o.reps * p, sizeof(double));
  sh.fail = calloc(p, sizeof(int));
  sh.in_facts = calloc(p, sizeof(bench_dist_facts));
  sh.out_facts = calloc(p, sizeof(bench_dist_facts));
  sh.pairs_bad = calloc(p, sizeof(uint64_t));
  sh.first_val = calloc(p, sizeof(uint32_t));
  sh.last_val = calloc(p, sizeof(uint32_t));
  sh.m = calloc(p, sizeof(size_t));
  if (!sh.t || !sh.fail || !sh.in_facts || !sh.out_facts || !sh.pairs_bad || !sh.first_val ||
      !sh.last_val || !sh.m) {
    fprintf(stderr, "parprim bench: out of host memory\n");
    rc = 1;
  } else {
    sh.peer_ok = bench_peer_nccl_id(sh.peer_id, sh.peer_err) == 0;
    if (!sh.peer_ok && (o.want[DK_SORT] || o.want[DK_STRONG]))
      fprintf(stderr, "parprim bench: no CUB + NCCL peer: %s\n", sh.peer_err);
    rc = pp_gpus_run(o.gpus, rank_main, &sh);
  }
  free(sh.t);
  free(sh.fail);
  free(sh.in_facts);
  free(sh.out_facts);
  free(sh.pairs_bad);
  free(sh.first_val);
  free(sh.last_val);
  free(sh.m);
  return rc;
}

#endif /* PP_HAVE_CUDA */
