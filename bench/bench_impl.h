/*
 * bench_impl.h — the harness of `parprim bench` as its family files see it.
 *
 * bench.c owns the command line, the table of benchmarks and the shared machinery below
 * (working sets that rotate past the caches, the timing protocol, the report rows); one
 * file per primitive family (bench/bench_<family>.c) holds that family's run function,
 * listed in bench.c's bench_entries[]. Internal to the parprim command: not installed.
 */
#ifndef PP_BENCH_IMPL_H
#define PP_BENCH_IMPL_H

#include "bench.h"
#include "gpu.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIB ((size_t)1 << 20)
#define ROTATE_BYTES (256 * MIB) /* well above the largest L2 we target */
#define SLOT_ALIGN 256           /* pp_malloc's alignment, kept for every slot */
#define WARMUP_RUNS 3
#define MAX_LIST 16
#define ANCHOR_N ((size_t)1 << 28)          /* the size DESIGN.md's anchors are measured at */
#define P2(k) ((size_t)1 << (k))

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
  bool desc;  /* sort, merge: descending order */
  bool pairs; /* sort: key-value pairs (4-byte values) only */
  /* family parameters; 0 when not given (the family's defaults apply) */
  size_t k;      /* --k: topk's k */
  size_t bins;   /* --bins: histogram bin count */
  size_t filter; /* --filter: conv filter width (and height) */
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
  double bytes, ms;            /* ours: amount moved by the model (bytes, or keys when unit
                                  is Gkeys/s), median time */
  const char *peer;
  double peer_bytes, peer_ms;
  const char *check;           /* "ok", "MISMATCH", "unsupported", or "-" when there is
                                  nothing to compare */
  const char *unit;            /* rate unit of bytes / time; NULL: GB/s */
  bool ours_missing;           /* the backend returned PP_ERR_UNSUPPORTED: peer only */
  bool same_work;              /* the CPU peer does our work (std::sort), not a memcpy */
} bench_row;

/* `slots` copies of one n-element input, `stride` bytes apart; run i uses slot i % slots. */
typedef struct bench_ws {
  char *base;
  size_t slots, stride, bytes;
} bench_ws;

typedef enum alloc_result { ALLOC_OK, ALLOC_SKIP, ALLOC_FAIL } alloc_result;

/* One run on one slot. Returns PP_OK, PP_ERR_UNSUPPORTED (not reported: the caller says
 * "not implemented"), or another status after reporting it. */
typedef pp_status (*bench_call)(bench_env *env, void *arg, size_t slot);

typedef enum case_result { CASE_RAN, CASE_SKIPPED, CASE_FAILED } case_result;

/* Reporting. bench_note: a remark (stdout for the table, stderr beside CSV/JSON);
 * bench_fail: a failure, counted into the exit code; pp_ok/gpu_ok: report and count a
 * failed call, true when it succeeded. */
void bench_note(const bench_env *env, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bench_fail(bench_env *env, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
bool pp_ok(bench_env *env, pp_status s, const char *what);
bool gpu_ok(bench_env *env, int rc, const char *what);
const char *size_text(size_t n, char *buf, size_t len); /* "2^28" or a plain number */
double gbs(double bytes, double ms);
void print_row(bench_env *env, const bench_row *r);

/* Working sets: ws_alloc plans slots for `bytes` per input, pp_mallocs them and fills
 * them with random t (ws_alloc_fill: only when fill); fits() says (and notes) whether
 * `need` bytes fit where the backend allocates. */
size_t round_up(size_t x, size_t a);
void *ws_slot(const bench_ws *w, size_t slot);
bool fits(bench_env *env, const char *prim, size_t n, size_t need);
alloc_result ws_alloc_fill(bench_env *env, bench_ws *w, size_t bytes, bool fill, pp_dtype t,
                           uint64_t seed);
alloc_result ws_alloc(bench_env *env, bench_ws *w, size_t bytes, pp_dtype t, uint64_t seed);
void ws_free(bench_env *env, bench_ws *w);

/* Timing: warm-up, then env->o->reps timed runs (CUDA events on env->stream, or the
 * monotonic clock on the CPU), median to *median_ms. Run r uses slot WARMUP_RUNS + r;
 * last_slot() is the slot of the last timed run, whose result the check reads. */
bool bench_sync(bench_env *env);
pp_status bench_time_prep(bench_env *env, bench_call prep, bench_call call, void *arg,
                          double *median_ms);
pp_status bench_time(bench_env *env, bench_call call, void *arg, double *median_ms);
size_t last_slot(const bench_env *env);

/* Run functions of the family files: run every size of sizes[0..nsizes) (the entry's
 * defaults or --n), print one row per measurement; return 0, or 1 after a failure. */
typedef int (*bench_run_fn)(bench_env *env, const size_t *sizes, int nsizes);
int bench_run_histogram(bench_env *env, const size_t *sizes, int nsizes); /* bench_histogram.c */
int bench_run_topk(bench_env *env, const size_t *sizes, int nsizes);      /* bench_topk.c */
int bench_run_sgemm(bench_env *env, const size_t *sizes, int nsizes);     /* bench_sgemm.c */
int bench_run_conv(bench_env *env, const size_t *sizes, int nsizes);      /* bench_conv.c */
int bench_run_nbody(bench_env *env, const size_t *sizes, int nsizes);     /* bench_nbody.c */

#endif /* PP_BENCH_IMPL_H */
