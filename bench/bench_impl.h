/*
 * bench_impl.h — the harness of `parprim bench` as its family files see it.
 *
 * bench.c owns the command line, the table of benchmarks and the report rows;
 * bench_harness.c the machinery below (working sets that rotate past the caches, the
 * timing protocol, one measurement against the peer, the checks' host-side helpers); one
 * file per primitive family (bench/bench_<family>.c) holds that family's run functions,
 * listed in bench.c's bench_entries[]. The parsers, the random data and value formatting
 * come from cli/common.h. Internal to the parprim command: not installed.
 */
#ifndef PP_BENCH_IMPL_H
#define PP_BENCH_IMPL_H

#include "bench.h"
#include "common.h"
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
#define FILL_CHUNK (16 * MIB) /* host staging for input generation */

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
/* ws_free of each of ws[0..n): a case's teardown lists its working sets once. */
void ws_free_list(bench_env *env, bench_ws *const *ws, size_t n);
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Timing: warm-up, then env->o->reps timed runs (CUDA events on env->stream, or the
 * monotonic clock on the CPU), median to *median_ms. Run r uses slot WARMUP_RUNS + r;
 * last_slot() is the slot of the last timed run, whose result the check reads. */
bool bench_sync(bench_env *env);
pp_status bench_time_prep(bench_env *env, bench_call prep, bench_call call, void *arg,
                          double *median_ms);
pp_status bench_time(bench_env *env, bench_call call, void *arg, double *median_ms);
size_t last_slot(const bench_env *env);

/* Working-set internals the families size their cases with: ws_plan gives the bytes of
 * the slots for `bytes` per input (0 when it cannot be sized); flat_alloc one pp_malloc'd
 * buffer (filled with random t when fill is set); alloc_small/free_small the few bytes of
 * a result (free_small also takes NULL); parallel_memcpy a host copy with all threads. */
size_t ws_plan(size_t bytes, size_t *slots, size_t *stride);
alloc_result flat_alloc(bench_env *env, void **p, size_t bytes, bool fill, pp_dtype t,
                        uint64_t seed);
bool alloc_small(bench_env *env, void **p, size_t bytes);
void free_small(bench_env *env, void **p);
void free_small_list(bench_env *env, void **const *p, size_t n); /* free_small of each */
void parallel_memcpy(void *dst, const void *src, size_t bytes);

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

/* Ours, then the peer, then the check; prints the row. A backend without the primitive
 * still gets the peer timed: the row then shows what there is to match. */
case_result measure_case(bench_env *env, bench_row *r, const case_hooks *h, void *arg);
/* Our calls report every status but PP_OK and PP_ERR_UNSUPPORTED (see bench_call);
 * gpu_status reports a failed harness GPU call and gives PP_ERR_DEVICE. */
pp_status ours_status(bench_env *env, pp_status s, const char *fn);
pp_status gpu_status(bench_env *env, int rc, const char *what);
/* Copy inside the backend's memory on the harness's stream (CUDA) or with all threads. */
pp_status refill(bench_env *env, void *dst, const void *src, size_t bytes);
/* A malloc'd host copy of `bytes` at src (backend memory), or NULL after saying why. */
void *host_copy(bench_env *env, const void *src, size_t bytes, const char *what);
bool fetch_count(bench_env *env, const uint64_t *src, uint64_t *count);
/* Reports a disagreement with the peer (a failure: exit 1) and returns "MISMATCH". */
const char *mismatch(bench_env *env, const bench_row *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
bool is_float(pp_dtype t);
/* Element i of base as text, for mismatch reports. */
const char *elem_text(pp_dtype t, const void *base, size_t i, char *buf, size_t len);
/* First i where the keys differ (-0.0 == +0.0), where elements of size es differ, where
 * keys[i] is out of order after keys[i-1]; n when there is none. */
size_t first_key_difference(pp_dtype t, const void *a, const void *b, size_t n);
size_t first_difference(const void *a, const void *b, size_t n, size_t es);
size_t first_unsorted(pp_dtype t, const void *keys, size_t n, bool desc);
/* Ours (n keys of r->t in backend memory) sorted and equal to the peer's keys (-0.0 ==
 * +0.0): "ok", "MISMATCH" after reporting it, "-" when no host copy could be made, or
 * "unsupported" when ours is missing (r->ours_missing). */
const char *check_sorted_keys(bench_env *env, const bench_row *r, const void *ours,
                              const void *peer, size_t n, bool desc);

/* Stamps out one typed statement per dtype: the dtypes and their C types are listed once
 * (BENCH_DTYPES), and DTYPE_SWITCH makes one case of a switch on t from each. */
#define BENCH_DTYPES(X, A)                                                                     \
  X(A, PP_U8, uint8_t) X(A, PP_I32, int32_t) X(A, PP_U32, uint32_t) X(A, PP_I64, int64_t)      \
  X(A, PP_U64, uint64_t) X(A, PP_F32, float) X(A, PP_F64, double)
#define DTYPE_CASE_(STMT, e, T)                                                                \
  case e:                                                                                      \
    STMT(T);                                                                                   \
    break;
#define DTYPE_SWITCH(t, STMT)                                                                  \
  switch (t) { BENCH_DTYPES(DTYPE_CASE_, STMT) }

/* Run functions of the family files: run every size of sizes[0..nsizes) (the entry's
 * defaults or --n), print one row per measurement; return 0, or 1 after a failure. */
typedef int (*bench_run_fn)(bench_env *env, const size_t *sizes, int nsizes);
int bench_run_reduce(bench_env *env, const size_t *sizes, int nsizes);    /* bench_reduce.c */
int bench_run_argreduce(bench_env *env, const size_t *sizes, int nsizes); /* bench_reduce.c */
int bench_run_memcpy(bench_env *env, const size_t *sizes, int nsizes);    /* bench_reduce.c */
int bench_run_scan(bench_env *env, const size_t *sizes, int nsizes);      /* bench_scan.c */
int bench_run_select(bench_env *env, const size_t *sizes, int nsizes);    /* bench_scan.c */
int bench_run_select_flagged(bench_env *env, const size_t *sizes, int nsizes); /* bench_scan.c */
int bench_run_partition(bench_env *env, const size_t *sizes, int nsizes); /* bench_scan.c */
int bench_run_sort(bench_env *env, const size_t *sizes, int nsizes);      /* bench_sort.c */
int bench_run_merge(bench_env *env, const size_t *sizes, int nsizes);     /* bench_merge.c */
int bench_run_histogram(bench_env *env, const size_t *sizes, int nsizes); /* bench_histogram.c */
int bench_run_topk(bench_env *env, const size_t *sizes, int nsizes);      /* bench_topk.c */
int bench_run_sgemm(bench_env *env, const size_t *sizes, int nsizes);     /* bench_sgemm.c */
int bench_run_conv(bench_env *env, const size_t *sizes, int nsizes);      /* bench_conv.c */
int bench_run_nbody(bench_env *env, const size_t *sizes, int nsizes);     /* bench_nbody.c */

#endif /* PP_BENCH_IMPL_H */
