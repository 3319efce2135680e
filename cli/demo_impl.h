/*
 * demo_impl.h — the machinery of `parprim demo` as its family files see it.
 *
 * cli/demo.c owns the command line, the generated inputs and the table of entries; each
 * family's entries live in its own file (cli/demo_<family>.c) and use what is declared
 * here: a demo_case is timed on the backend under test, run once on the CPU reference
 * context, and its `same` function judges the two results.
 */
#ifndef PP_DEMO_IMPL_H
#define PP_DEMO_IMPL_H

#include "parprim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEMO_REPS 5 /* median of a few: the first call also loads kernels */
#define N_DTYPES (PP_F64 + 1)

/* One generated input, kept for every primitive that reads this dtype. */
typedef struct demo_input {
  bool ready;
  void *host; /* the reference reads host memory directly */
  void *dev;  /* the same bytes in pp_malloc memory of the backend under test */
  double sum_abs;
} demo_input;

typedef struct demo_env {
  pp_context *run; /* backend under test */
  pp_context *ref; /* CPU backend: the reference */
  size_t n;
  demo_input inputs[N_DTYPES];
  int ok, mismatches, unimplemented, errors;
} demo_env;

/* One call of a primitive on ctx, reading `in`; results go to host memory in args. */
typedef pp_status (*demo_fn)(pp_context *ctx, const void *in, void *args);
/* Whether the args the backend under test filled (got) match the reference's (want). */
typedef bool (*demo_same_fn)(demo_env *env, pp_dtype t, const void *got, const void *want);

/* What one row runs, and how its throughput is counted: amount / time, in `unit`
 * (e.g. bytes read and "GB/s", or elements and "Gelem/s"; both are per 1e9).
 * prep (optional) runs before every call, outside the clock (sort refills its keys);
 * fetch (optional) brings array results to host memory once the timed calls are done;
 * without it demo_measure_bufs brings each side's whole result buffer. */
typedef struct demo_case {
  const char *prim;
  pp_dtype t;
  demo_fn fn;
  demo_same_fn same;
  double amount;
  const char *unit;
  demo_fn prep, fetch;
} demo_case;

/* An array result of one side: `dev` in that context's memory (pp_malloc), `host` where
 * the check reads it: the same memory when the context is the CPU backend. */
typedef struct demo_buf {
  void *dev, *host;
} demo_buf;

/* Reports an error (counted in env->errors) on stderr. */
void demo_error(demo_env *env, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The random env->n-element input of t (host copy and backend copy), made on first use;
 * NULL after an error. */
demo_input *demo_get_input(demo_env *env, pp_dtype t);
/* One table row; ms < 0: no time to show. */
void demo_row(demo_env *env, const demo_case *c, double ms, const char *check);
/* Times c on the backend under test with got, runs it once on the reference with want,
 * judges with c->same, prints the row and counts the outcome. */
void demo_measure(demo_env *env, const demo_case *c, void *got, void *want);
/* demo_measure with one array result per side allocated (bytes) around it and, unless c
 * has a fetch of its own, copied whole to host memory after the calls. */
void demo_measure_bufs(demo_env *env, const demo_case *c, void *got, demo_buf *got_buf,
                       void *want, demo_buf *want_buf, size_t bytes);
bool buf_alloc(demo_env *env, pp_context *ctx, demo_buf *b, size_t bytes);
pp_status buf_fetch(pp_context *ctx, demo_buf *b, size_t bytes);
void buf_free(demo_env *env, pp_context *ctx, demo_buf *b);
/* A host array copied into the backend under test's memory; NULL after an error. */
void *demo_stage(demo_env *env, const void *host, size_t bytes);
void demo_unstage(demo_env *env, void *dev);
double as_double(pp_dtype t, const void *p); /* f32 or f64 element */
void report_element(const char *what, pp_dtype t, size_t i, const void *got, const void *want);
size_t first_diff(const void *a, const void *b, size_t n, size_t es);

/* The entries, in the order of the report: X(name) for each void pp_demo_name(demo_env *),
 * which lives in its family's file. demo.c makes its table from this list. */
#define DEMO_ENTRIES(X)                                                                    \
  X(reduce) X(argreduce)                           /* cli/demo_reduce.c */                 \
  X(scan) X(select) X(select_flagged) X(partition) /* cli/demo_scan.c */                   \
  X(sort) X(merge)                                 /* cli/demo_sort.c */                   \
  X(histogram) X(topk) X(sgemm) X(conv) X(nbody)   /* cli/demo_<name>.c */

#define DEMO_DECLARE(name) void pp_demo_##name(demo_env *env);
DEMO_ENTRIES(DEMO_DECLARE)
#undef DEMO_DECLARE

#endif /* PP_DEMO_IMPL_H */
