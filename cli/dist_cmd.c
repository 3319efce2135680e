/*
 * dist_cmd.c — `--gpus N` for `parprim sort FILE` and `parprim demo`: the same jobs on N
 * GPUs of this node through distributed contexts (a thread per GPU, gpus.c).
 *
 * sort: the file is read whole into host memory and split into N contiguous slices, one
 * per rank (the first n % N ranks one element longer); each rank copies its slice to its
 * GPU, sorts globally with pp_sort and copies its share of the result back into the same
 * place, so the host buffer then holds the whole sorted file, written through the
 * command's safe writes (out_file.h).
 *
 * demo: each distributed primitive on random data (fixed seed; each rank generates its
 * slice of one global sequence), checked against a plain CUDA context's result over the
 * whole sequence (rank 0 computes it). A primitive the library does not implement on
 * distributed contexts yet counts as "not implemented", as in the one-context demo.
 */
#define _POSIX_C_SOURCE 200809L

#include "gpus.h"
#include "out_file.h"
#include "raw_file.h"

#include "common.h"
#include "parprim.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_gpus_wanted(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--gpus") == 0 || strncmp(argv[i], "--gpus=", 7) == 0) return 1;
  return 0;
}

/* Slice r of n elements over p ranks. */
static size_t slice_n(size_t n, int r, int p) {
  return n / (size_t)p + ((size_t)r < n % (size_t)p ? 1 : 0);
}
static size_t slice_first(size_t n, int r, int p) {
  return (n / (size_t)p) * (size_t)r + ((size_t)r < n % (size_t)p ? (size_t)r : n % (size_t)p);
}

/* ---- parprim sort FILE --gpus N ----------------------------------------------------------- */

typedef struct sort_job {
  unsigned char *data;
  size_t n, es;
  pp_dtype type;
  bool desc;
  double *ms; /* [ranks] */
  int *failed;
} sort_job;

static int sort_rank(pp_gpus_team *team, pp_context *ctx, int rank, int p, void *arg) {
  sort_job *j = (sort_job *)arg;
  const size_t n = slice_n(j->n, rank, p), first = slice_first(j->n, rank, p);
  unsigned char *host = j->data + first * j->es;
  void *dev = NULL;
  pp_status s = n ? pp_malloc(ctx, &dev, n * j->es) : PP_OK;
  if (s == PP_OK && n) s = pp_copy(ctx, dev, host, n * j->es);
  if (s == PP_OK) s = pp_synchronize(ctx);
  if (s != PP_OK)
    fprintf(stderr, "parprim sort: rank %d: to the GPU: %s: %s\n", rank, pp_status_string(s),
            pp_last_error(ctx));
  /* every rank calls pp_sort (collective) even after a local failure: the failure is then
     agreed on inside it; a rank that could not stage passes its host slice instead */
  pp_gpus_barrier(team);
  const pp_sort_opts opts = {j->desc ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO};
  const double t0 = cli_now_ms();
  pp_status ss = pp_sort(ctx, j->type, s == PP_OK ? dev : (void *)host, NULL, 0, n, &opts);
  if (ss == PP_OK) ss = pp_synchronize(ctx);
  j->ms[rank] = cli_now_ms() - t0;
  if (ss != PP_OK)
    fprintf(stderr, "parprim sort: rank %d: pp_sort: %s: %s\n", rank, pp_status_string(ss),
            pp_last_error(ctx));
  if (ss == PP_OK && s == PP_OK && n) {
    ss = pp_copy(ctx, host, dev, n * j->es);
    if (ss != PP_OK)
      fprintf(stderr, "parprim sort: rank %d: from the GPU: %s: %s\n", rank, pp_status_string(ss),
              pp_last_error(ctx));
  }
  if (dev) (void)pp_free(ctx, dev);
  j->failed[rank] = s != PP_OK || ss != PP_OK;
  return j->failed[rank];
}

/* Returns -1 when argv is parsed into the arguments, else the exit code. */
static int sort_gpus_parse(int argc, char **argv, int *gpus, const char **in, const char **out,
                           pp_dtype *type, bool *desc) {
  bool have_type = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int g = pp_gpus_parse(argc, argv, &i, gpus);
    if (g < 0) return 2;
    if (g > 0) continue;
    if (strcmp(a, "--desc") == 0) {
      *desc = true;
    } else if (strcmp(a, "--quiet") == 0) {
      /* nothing to quiet: no progress line here */
    } else if (strcmp(a, "--type") == 0 || strcmp(a, "--out") == 0 ||
               strncmp(a, "--type=", 7) == 0 || strncmp(a, "--out=", 6) == 0) {
      const bool is_type = a[2] == 't';
      const char *v = strchr(a, '=');
      if (v) v++;
      else if (i + 1 < argc) v = argv[++i];
      else {
        fprintf(stderr, "parprim sort: %s needs a value\n", a);
        return 2;
      }
      if (is_type) {
        if (cli_parse_dtype(v, type)) {
          fprintf(stderr, "parprim sort: unknown type '%s' (u8, i32, u32, i64, u64, f32, f64)\n", v);
          return 2;
        }
        have_type = true;
      } else {
        if (!*v) {
          fprintf(stderr, "parprim sort: --out needs a file name\n");
          return 2;
        }
        *out = v;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "parprim sort: '%s' is not an option of sort --gpus (FILE --type T "
                      "[--desc] [--out FILE] --gpus N)\n", a);
      return 2;
    } else if (*in) {
      fprintf(stderr, "parprim sort: unexpected argument '%s' (one input file)\n", a);
      return 2;
    } else {
      *in = a;
    }
  }
  if (!*in || !have_type) {
    fprintf(stderr, "parprim sort: %s\n", !*in ? "no input FILE" : "--type is required");
    return 2;
  }
  return -1;
}

int pp_cli_sort_gpus_main(int argc, char **argv) {
  int gpus = 0;
  const char *in = NULL, *out = NULL;
  pp_dtype type = PP_U8;
  bool desc = false;
  int rc = sort_gpus_parse(argc, argv, &gpus, &in, &out, &type, &desc);
  if (rc >= 0) return rc;
  char *default_out = NULL;
  if (!out) {
    const size_t len = strlen(in) + sizeof ".sorted";
    default_out = malloc(len);
    if (!default_out) {
      fprintf(stderr, "parprim sort: out of host memory\n");
      return 1;
    }
    snprintf(default_out, len, "%s.sorted", in);
    out = default_out;
  }
  char err[512];
  if (cli_out_check(out, err, sizeof err) != 0) {
    fprintf(stderr, "parprim sort: %s\n", err);
    free(default_out);
    return 1;
  }
  const size_t es = pp_dtype_size(type);
  void *data = NULL;
  size_t bytes = 0;
  rc = cli_read_raw("sort", in, es, &data, &bytes, NULL, NULL);
  sort_job j = {data, bytes / es, es, type, desc, calloc((size_t)gpus, sizeof(double)),
                calloc((size_t)gpus, sizeof(int))};
  if (rc == 0 && (!j.ms || !j.failed)) {
    fprintf(stderr, "parprim sort: out of host memory\n");
    rc = 1;
  }
  if (rc == 0) rc = pp_gpus_run(gpus, sort_rank, &j);
  if (rc == 0) {
    double worst = 0;
    for (int r = 0; r < gpus; r++) worst = j.ms[r] > worst ? j.ms[r] : worst;
    printf("sorted %zu %s elements %s in %.3f ms (%.1f M elements/s) on %d GPUs (cuda, "
           "distributed; the slowest rank's time)\n",
           j.n, pp_dtype_string(type), desc ? "descending" : "ascending", worst,
           worst > 0 ? (double)j.n / (worst * 1e3) : 0.0, gpus);
    rc = cli_write_raw("sort", out, data, bytes);
    if (rc == 0) printf("wrote %s\n", out);
  }
  free(j.ms);
  free(j.failed);
  free(data);
  free(default_out);
  return rc;
}

/* ---- parprim demo --gpus N ---------------------------------------------------------------- */

enum { D_SORT, D_PAIRS, D_REDUCE, D_SCAN, D_HISTOGRAM, D_TOPK, D_COUNT };
static const char *const demo_names[D_COUNT] = {
    "sort u32 keys", "sort f32 pairs (stable)", "reduce f32 sum", "exclusive scan u32",
    "histogram f32 1024 bins", "top-k f32 k=100"};

#define DEMO_K 100
#define DEMO_BINS 1024

typedef struct demo_job {
  size_t n; /* in all */
  /* the global inputs and the plain context's results (rank 0 fills them) */
  uint32_t *u32, *u32_sorted, *scan;
  float *f32, *f32_sorted, topk[DEMO_K];
  uint64_t *idx_sorted, hist[DEMO_BINS], topk_idx[DEMO_K];
  double sum;
  int ref_failed;
  int *result; /* [D_COUNT][ranks]: 0 ok, 1 mismatch, 2 unsupported, 3 error */
  double *ms;  /* [D_COUNT][ranks] */
} demo_job;

/* The plain context's results over the whole sequence (rank 0). */
static int demo_reference(demo_job *j) {
  pp_context *plain = NULL;
  pp_status s = pp_create(&plain, PP_BACKEND_CUDA);
  const size_t n = j->n;
  memcpy(j->u32_sorted, j->u32, n * 4);
  memcpy(j->f32_sorted, j->f32, n * 4);
  for (size_t i = 0; i < n; i++) j->idx_sorted[i] = i;
  float sum = 0;
  if (s == PP_OK) s = pp_sort(plain, PP_U32, j->u32_sorted, NULL, 0, n, NULL);
  if (s == PP_OK) s = pp_sort(plain, PP_F32, j->f32_sorted, j->idx_sorted, 8, n, NULL);
  if (s == PP_OK) s = pp_reduce(plain, PP_SUM, PP_F32, j->f32, n, &sum);
  if (s == PP_OK) s = pp_scan(plain, PP_SUM, PP_U32, j->u32, j->scan, n, false);
  if (s == PP_OK) s = pp_histogram_even(plain, PP_F32, j->f32, n, DEMO_BINS, -1.0, 1.0, j->hist);
  if (s == PP_OK) s = pp_topk(plain, PP_F32, j->f32, n, DEMO_K, true, j->topk, j->topk_idx);
  if (s != PP_OK)
    fprintf(stderr, "parprim demo: the one-GPU reference: %s: %s\n", pp_status_string(s),
            pp_last_error(plain));
  j->sum = sum;
  pp_destroy(plain);
  return s != PP_OK;
}

static int demo_rank(pp_gpus_team *team, pp_context *ctx, int rank, int p, void *arg) {
  demo_job *j = (demo_job *)arg;
  if (rank == 0) j->ref_failed = demo_reference(j);
  pp_gpus_barrier(team);
  if (j->ref_failed) return 1;
  const size_t n = slice_n(j->n, rank, p), off = slice_first(j->n, rank, p);
  uint32_t *u = malloc((n ? n : 1) * 4), *u2 = malloc((n ? n : 1) * 4);
  float *f = malloc((n ? n : 1) * 4), vals[DEMO_K];
  uint64_t *idx = malloc((n ? n : 1) * 8), hist[DEMO_BINS], tidx[DEMO_K];
  if (!u || !u2 || !f || !idx) {
    /* the other ranks would wait for this one in the first collective: nothing can release
       them, so the process ends here */
    fprintf(stderr, "parprim demo: rank %d: out of host memory\n", rank);
    exit(1);
  }
  int rc = 0;
  for (int d = 0; d < D_COUNT; d++) {
    int *res = &j->result[d * p + rank];
    pp_status s = PP_OK;
    memcpy(u, j->u32 + off, n * 4);
    memcpy(f, j->f32 + off, n * 4);
    for (size_t i = 0; i < n; i++) idx[i] = off + i;
    float sum = 0;
    const double t0 = cli_now_ms();
    switch (d) {
    case D_SORT: s = pp_sort(ctx, PP_U32, u, NULL, 0, n, NULL); break;
    case D_PAIRS: s = pp_sort(ctx, PP_F32, f, idx, 8, n, NULL); break;
    case D_REDUCE: s = pp_reduce(ctx, PP_SUM, PP_F32, f, n, &sum); break;
    case D_SCAN: s = pp_scan(ctx, PP_SUM, PP_U32, u, u2, n, false); break;
    case D_HISTOGRAM: s = pp_histogram_even(ctx, PP_F32, f, n, DEMO_BINS, -1.0, 1.0, hist); break;
    default: s = pp_topk(ctx, PP_F32, f, n, DEMO_K, true, vals, tidx); break;
    }
    j->ms[d * p + rank] = cli_now_ms() - t0;
    bool same = true;
    if (s == PP_OK) {
      switch (d) {
      case D_SORT: same = memcmp(u, j->u32_sorted + off, n * 4) == 0; break;
      case D_PAIRS:
        same = memcmp(f, j->f32_sorted + off, n * 4) == 0 &&
               memcmp(idx, j->idx_sorted + off, n * 8) == 0;
        break;
      case D_REDUCE: /* the order of the additions differs: float rounding only */
        same = fabs((double)sum - j->sum) <= 1e-4 * ((double)j->n + fabs(j->sum));
        break;
      case D_SCAN: same = memcmp(u2, j->scan + off, n * 4) == 0; break;
      case D_HISTOGRAM: same = memcmp(hist, j->hist, sizeof hist) == 0; break;
      default: same = memcmp(vals, j->topk, sizeof vals) == 0; break;
      }
    }
    *res = s == PP_OK ? (same ? 0 : 1) : s == PP_ERR_UNSUPPORTED ? 2 : 3;
    if (s != PP_OK && s != PP_ERR_UNSUPPORTED)
      fprintf(stderr, "parprim demo: rank %d: %s: %s: %s\n", rank, demo_names[d],
              pp_status_string(s), pp_last_error(ctx));
  }
  free(u);
  free(u2);
  free(f);
  free(idx);
  return rc;
}

int pp_cli_demo_gpus_main(int argc, char **argv) {
  int gpus = 0;
  size_t n = (size_t)1 << 24;
  for (int i = 1; i < argc; i++) {
    int g = pp_gpus_parse(argc, argv, &i, &gpus);
    if (g < 0) return 2;
    if (g > 0) continue;
    const char *a = argv[i], *v = NULL;
    if (strcmp(a, "--n") == 0 && i + 1 < argc) v = argv[++i];
    else if (strncmp(a, "--n=", 4) == 0) v = a + 4;
    if (!v || cli_parse_size(v, &n) || n == 0) {
      fprintf(stderr, "parprim demo: with --gpus N, give only --n N (elements in all): '%s'\n", a);
      return 2;
    }
  }
  demo_job j;
  memset(&j, 0, sizeof j);
  j.n = n;
  j.u32 = malloc(n * 4);
  j.u32_sorted = malloc(n * 4);
  j.scan = malloc(n * 4);
  j.f32 = malloc(n * 4);
  j.f32_sorted = malloc(n * 4);
  j.idx_sorted = malloc(n * 8);
  j.result = calloc((size_t)D_COUNT * (size_t)gpus, sizeof(int));
  j.ms = calloc((size_t)D_COUNT * (size_t)gpus, sizeof(double));
  int rc = 0;
  if (!j.u32 || !j.u32_sorted || !j.scan || !j.f32 || !j.f32_sorted || !j.idx_sorted ||
      !j.result || !j.ms) {
    fprintf(stderr, "parprim demo: out of host memory for n = %zu\n", n);
    rc = 1;
  }
  if (rc == 0) {
    cli_fill_random(PP_U32, j.u32, n, CLI_SEED, 0);
    cli_fill_random(PP_F32, j.f32, n, CLI_SEED + 1, 0);
    printf("parprim %s demo --gpus %d: n = %zu in all, each primitive on %d distributed CUDA "
           "contexts,\nchecked against one plain CUDA context over all n elements\n\n",
           pp_version(), gpus, n, gpus);
    rc = pp_gpus_run(gpus, demo_rank, &j);
  }
  if (rc == 0 || rc == 1) {
    int ok = 0, bad = 0, unimpl = 0, errors = 0;
    printf("%-26s %10s  %s\n", "primitive", "ms (max)", "result");
    for (int d = 0; d < D_COUNT && j.result; d++) {
      int worst = 0;
      double ms = 0;
      for (int r = 0; r < gpus; r++) {
        worst = j.result[d * gpus + r] > worst ? j.result[d * gpus + r] : worst;
        ms = j.ms[d * gpus + r] > ms ? j.ms[d * gpus + r] : ms;
      }
      static const char *const text[] = {"OK", "MISMATCH", "not implemented", "error"};
      printf("%-26s %10.3f  %s\n", demo_names[d], ms, text[worst]);
      ok += worst == 0;
      bad += worst == 1;
      unimpl += worst == 2;
      errors += worst == 3;
    }
    printf("\n%d OK, %d MISMATCH, %d not implemented, %d errors\n", ok, bad, unimpl, errors);
    rc = bad || errors || rc ? 1 : 0;
  }
  free(j.u32);
  free(j.u32_sorted);
  free(j.scan);
  free(j.f32);
  free(j.f32_sorted);
  free(j.idx_sorted);
  free(j.result);
  free(j.ms);
  return rc;
}
