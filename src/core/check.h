/*
 * check.h — argument checks and data staging shared by the public entry points.
 *
 * Every check either returns PP_OK or records "pp_fn: what (value)" on the context and
 * returns the failing status, so an entry point is a list of PP_TRY(check...) lines
 * followed by staging and one backend call. Checks never write to outputs.
 */
#ifndef PP_CHECK_H
#define PP_CHECK_H

#include "internal.h"

#include <math.h>

#define PP_TRY(expr)                                                                        \
  do {                                                                                      \
    pp_status pp_try_s_ = (expr);                                                           \
    if (pp_try_s_ != PP_OK) return pp_try_s_;                                               \
  } while (0)

/* A NULL context cannot carry a message; the status alone reports it. */
static inline pp_status pp_check_ctx(const pp_context *ctx) {
  return ctx ? PP_OK : PP_ERR_INVALID_ARGUMENT;
}

static inline pp_status pp_check_ptr(pp_context *ctx, const char *fn, const char *name,
                                     const void *p) {
  return p ? PP_OK : pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
}

/* NULL is fine when nothing will be read or written through it. */
static inline pp_status pp_check_data(pp_context *ctx, const char *fn, const char *name,
                                      const void *p, size_t count) {
  return count == 0 ? PP_OK : pp_check_ptr(ctx, fn, name, p);
}

static inline pp_status pp_check_dtype(pp_context *ctx, const char *fn, const char *name,
                                       pp_dtype t) {
  return pp_dtype_size(t) ? PP_OK
                          : pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s (%d) is not a pp_dtype",
                                    fn, name, (int)t);
}

/* minmax_only: argreduce accepts only MIN and MAX. */
static inline pp_status pp_check_op(pp_context *ctx, const char *fn, pp_op op, bool minmax_only) {
  if (op == PP_MIN || op == PP_MAX || (op == PP_SUM && !minmax_only)) return PP_OK;
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: op (%d) is not %s", fn, (int)op,
                 minmax_only ? "PP_MIN or PP_MAX" : "a pp_op");
}

static inline pp_status pp_check_enum(pp_context *ctx, const char *fn, const char *name, int v,
                                      int count) {
  return (v >= 0 && v < count)
             ? PP_OK
             : pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s (%d) is out of range", fn, name, v);
}

/* *out = a * b, or PP_ERR_OVERFLOW naming what was being sized. */
static inline pp_status pp_check_mul(pp_context *ctx, const char *fn, const char *what, size_t a,
                                     size_t b, size_t *out) {
  *out = 0;
  if (b != 0 && a > SIZE_MAX / b)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: %s (%zu * %zu) overflows size_t", fn, what, a, b);
  *out = a * b;
  return PP_OK;
}

static inline pp_status pp_check_add(pp_context *ctx, const char *fn, const char *what, size_t a,
                                     size_t b, size_t *out) {
  *out = 0;
  if (a > SIZE_MAX - b)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: %s (%zu + %zu) overflows size_t", fn, what, a, b);
  *out = a + b;
  return PP_OK;
}

/* The checks of every entry point that reads n elements of one dtype from `in`; *bytes is
 * their size. */
static inline pp_status pp_check_typed_input(pp_context *ctx, const char *fn, pp_dtype t,
                                             const void *in, size_t n, size_t *bytes) {
  *bytes = 0;
  PP_TRY(pp_check_dtype(ctx, fn, "dtype", t));
  PP_TRY(pp_check_mul(ctx, fn, "n * element size", n, pp_dtype_size(t), bytes));
  return pp_check_data(ctx, fn, "in", in, n);
}

/* ---- overlap -------------------------------------------------------------------------- */

/* True when the byte ranges [p, p + pb) and [q, q + qb) share a byte; an empty range shares
 * none. Host and device pointers are compared alike: under CUDA's unified virtual
 * addressing (CUDA C Programming Guide, "Unified Virtual Address Space") host and device
 * allocations of one process never occupy the same addresses, so equal integers mean the
 * same memory. The differences are taken in the order that cannot wrap around. */
static inline bool pp_ranges_overlap(const void *p, size_t pb, const void *q, size_t qb) {
  if (pb == 0 || qb == 0) return false;
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return a <= b ? b - a < pb : a - b < qb;
}

/* The overlap rule of docs/API.md: an output shares no byte with any other argument, except
 * where an entry point allows the exact in-place form (see pp_check_alias). */
static inline pp_status pp_check_disjoint(pp_context *ctx, const char *fn, const char *out_name,
                                          const void *out, size_t out_bytes,
                                          const char *other_name, const void *other,
                                          size_t other_bytes) {
  if (!pp_ranges_overlap(out, out_bytes, other, other_bytes)) return PP_OK;
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s overlaps %s", fn, out_name, other_name);
}

/* out may be exactly in (same address, same size: the in-place form) or apart from it;
 * a partial overlap is rejected. */
static inline pp_status pp_check_alias(pp_context *ctx, const char *fn, const char *out_name,
                                       const void *out, size_t out_bytes, const char *in_name,
                                       const void *in, size_t in_bytes) {
  if (out == in && out_bytes == in_bytes) return PP_OK;
  if (!pp_ranges_overlap(out, out_bytes, in, in_bytes)) return PP_OK;
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %s overlaps %s (only %s == %s is allowed)",
                 fn, out_name, in_name, out_name, in_name);
}

static inline pp_status pp_not_implemented(pp_context *ctx, const char *fn) {
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: not implemented yet on the %s backend", fn,
                 ctx->ops->name);
}

/* ---- staging ------------------------------------------------------------------------ */

/* One data argument as the backend sees it. When the caller's memory is not usable by
 * the backend's kernels (host memory for the CUDA backend) or is not aligned to its
 * element, the data goes through backend scratch and is copied back afterwards. */
typedef struct pp_arg {
  void *user;   /* the caller's pointer */
  void *ptr;    /* what the backend gets */
  size_t bytes;
  bool staged;  /* ptr is scratch from temp_alloc */
  bool output;  /* copy back to user on finish */
} pp_arg;

/* PP_ARG_IN_COPY: an input the backend must get a copy of even where it could read the
 * caller's memory, because the call's output is that same memory (an in-place select):
 * the kernels then never read what they have already overwritten. */
typedef enum pp_arg_kind { PP_ARG_IN, PP_ARG_OUT, PP_ARG_INOUT, PP_ARG_IN_COPY } pp_arg_kind;

pp_status pp_arg_stage(pp_context *ctx, const char *fn, const char *name, pp_arg_kind kind,
                       const void *p, size_t bytes, size_t align, pp_arg *a);
/* Copy a staged output back and release its scratch; PP_OK for unstaged arguments. */
pp_status pp_arg_finish(pp_context *ctx, pp_arg *a);
/* Release scratch without copying back (error paths). */
void pp_arg_release(pp_context *ctx, pp_arg *a);

/* A small fixed set of arguments per call, finished or released together. */
#define PP_MAX_ARGS 10
typedef struct pp_args {
  pp_arg a[PP_MAX_ARGS];
  int count;
  const char *fn; /* the entry point: a backend failure's message is made to name it */
} pp_args;

/* Stage one more argument into set; returns its backend pointer through *ptr. */
pp_status pp_args_add(pp_context *ctx, pp_args *set, const char *fn, const char *name,
                      pp_arg_kind kind, const void *p, size_t bytes, size_t align, void **ptr);
/* After a successful backend call: copy outputs back (in order), release everything. On a
 * failed call: release everything, keep the failure status. */
pp_status pp_args_finish(pp_context *ctx, pp_args *set, pp_status backend_status);

/* Stage one argument inside an entry point whose pp_args set is `args` and whose running
 * status is `st`: later stages are skipped once one failed. */
#define PP_STAGE(kind, name, p, bytes, align, dst)                                          \
  do {                                                                                      \
    void *pp_stage_ptr_ = NULL;                                                             \
    if (st == PP_OK)                                                                        \
      st = pp_args_add(ctx, &args, fn, name, kind, p, bytes, align, &pp_stage_ptr_);        \
    dst = pp_stage_ptr_;                                                                    \
  } while (0)

/* Stage the body arrays of an N-body call (kind applies to all seven, or to the four
 * without velocity); sb gets the backend's view. */
#define PP_STAGE_BODIES(kind, b, bytes, sb, velocity)                                       \
  do {                                                                                      \
    sb.n = (b)->n;                                                                          \
    PP_STAGE(kind, "b->x", (b)->x, bytes, sizeof(float), sb.x);                             \
    PP_STAGE(kind, "b->y", (b)->y, bytes, sizeof(float), sb.y);                             \
    PP_STAGE(kind, "b->z", (b)->z, bytes, sizeof(float), sb.z);                             \
    PP_STAGE(kind, "b->mass", (b)->mass, bytes, sizeof(float), sb.mass);                    \
    if (velocity) {                                                                         \
      PP_STAGE(kind, "b->vx", (b)->vx, bytes, sizeof(float), sb.vx);                        \
      PP_STAGE(kind, "b->vy", (b)->vy, bytes, sizeof(float), sb.vy);                        \
      PP_STAGE(kind, "b->vz", (b)->vz, bytes, sizeof(float), sb.vz);                        \
    }                                                                                       \
  } while (0)

#endif /* PP_CHECK_H */
