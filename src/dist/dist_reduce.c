/*
 * dist_reduce.c — pp_reduce, pp_argreduce and pp_scan on a distributed context.
 *
 * Reduce and argreduce: each rank reduces its own data with the backend's primitive, and
 * the p partials travel in the agreement record itself (dist_internal.h), so the call
 * costs one local pass plus one small host all-gather, which carries each rank's status
 * too: a rank whose arguments failed its checks skips the local pass (it touches none of
 * them) and reports; the local passes write nothing the caller sees. Every rank then combines the same p partials in rank order on the host, so
 * every rank holds the same bits. The rules of API.md hold across ranks:
 *  - integer SUM wraps in the type (two's complement addition of the partials);
 *  - f32 SUM: each rank's partial is its sum accumulated in double (dist_sum_f32), and the
 *    partials are added with Neumaier's compensated summation (Neumaier 1974), so the
 *    error is that of the ranks' double sums plus one rounding to f32; f64 SUM combines
 *    the ranks' f64 results the same way;
 *  - float MIN/MAX ignore NaN unless every element is NaN, and order -0.0 below +0.0;
 *    ranks with n_r == 0 take no part (their partial is the n == 0 identity, which is
 *    not an element);
 *  - argreduce's ties go to the first global index: partials are compared strictly and
 *    visited in rank order, and a rank's local index becomes off_r + index.
 *
 * Scan: the global sequence's scan on every rank's slice. A scan's output at a rank's
 * first element needs the total of every rank before it, which exists only once those
 * ranks have read all their data, so a one-pass scan is impossible across ranks. The two
 * plans (Merrill & Garland 2016, §3, on the same trade-off between blocks of one GPU):
 *  - scan locally, exchange the totals, then add the carry: reads and writes the data
 *    twice (16 bytes per u32 element);
 *  - reduce locally (4 bytes per u32 element), exchange the totals, then scan starting
 *    from the carry (8 bytes): 12 bytes per element, 1.5x a one-GPU scan's traffic.
 * The second is taken: dist_scan_from is the backend's single-pass scan with the carry
 * folded into every tile's prefix. On p GPUs the best speed-up is then p / 1.5 at equal
 * per-GPU bandwidth (2.67x on 4; docs/distributed.md has the arithmetic). The carry of
 * f32 SUM is carried in double, as inside the one-GPU scan.
 */
#include "dist_internal.h"

#include <math.h>
#include <string.h>

/* ---- scalar helpers: a value of any dtype held as its bits in a uint64_t -------------- */

static uint64_t bits_of(const void *p, size_t es) {
  uint64_t b = 0;
  memcpy(&b, p, es); /* little-endian: the low bytes */
  return b;
}

static double as_double(pp_dtype t, uint64_t b) {
  if (t == PP_F32) {
    float f;
    uint32_t u = (uint32_t)b;
    memcpy(&f, &u, 4);
    return f;
  }
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static uint64_t from_double(pp_dtype t, double d) {
  if (t == PP_F32) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

static bool is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }
static bool is_signed(pp_dtype t) { return t == PP_I32 || t == PP_I64; }

static int64_t as_signed(pp_dtype t, uint64_t b) {
  return t == PP_I32 ? (int64_t)(int32_t)(uint32_t)b : (int64_t)b;
}

/* -1, 0, 1 as a < b, a == b, a > b for two non-NaN values of t (-0.0 == +0.0). */
static int compare(pp_dtype t, uint64_t a, uint64_t b) {
  if (is_float(t)) {
    double x = as_double(t, a), y = as_double(t, b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (is_signed(t)) {
    int64_t x = as_signed(t, a), y = as_signed(t, b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

static bool is_nan_bits(pp_dtype t, uint64_t b) { return is_float(t) && isnan(as_double(t, b)); }

/* pp_reduce's n == 0 result of MIN (the largest value) or MAX (the lowest). */
static uint64_t empty_minmax(pp_dtype t, pp_op op) {
  const bool mn = op == PP_MIN;
  switch (t) {
  case PP_U8: return mn ? UINT8_MAX : 0;
  case PP_I32: return (uint32_t)(mn ? INT32_MAX : INT32_MIN);
  case PP_U32: return mn ? UINT32_MAX : 0;
  case PP_I64: return (uint64_t)(mn ? INT64_MAX : INT64_MIN);
  case PP_U64: return mn ? UINT64_MAX : 0;
  case PP_F32:
  case PP_F64: return from_double(t, mn ? INFINITY : -INFINITY);
  }
  return 0;
}

/* Neumaier's compensated sum of doubles, in the order given. */
typedef struct csum {
  double s, c;
} csum;
static void csum_add(csum *a, double x) {
  double t = a->s + x;
  a->c += fabs(a->s) >= fabs(x) ? (a->s - t) + x : (x - t) + a->s;
  a->s = t;
}
static double csum_value(csum a) { return isfinite(a.s) ? a.s + a.c : a.s; }

static uint64_t truncate_bits(uint64_t b, size_t es) {
  return es >= 8 ? b : b & ((UINT64_C(1) << (8 * es)) - 1);
}

/* Combine op over the listed values (bits of t; for f32 SUM, bits of doubles) of the
 * ranks whose `used` flag is set, in rank order. MIN/MAX: NaN ignored, -0.0 below +0.0;
 * *found says whether any number was seen. */
static uint64_t combine(pp_op op, pp_dtype t, bool wide, const uint64_t *v, const bool *used,
                        int p, bool *found) {
  const size_t es = pp_dtype_size(t);
  *found = false;
  if (op == PP_SUM) {
    *found = true;
    if (is_float(t)) {
      csum s = {0.0, 0.0};
      for (int q = 0; q < p; q++)
        if (used[q]) csum_add(&s, wide ? as_double(PP_F64, v[q]) : as_double(t, v[q]));
      return from_double(t, csum_value(s));
    }
    uint64_t s = 0;
    for (int q = 0; q < p; q++)
      if (used[q]) s += v[q];
    return truncate_bits(s, es);
  }
  uint64_t best = 0;
  for (int q = 0; q < p; q++) {
    if (!used[q] || is_nan_bits(t, v[q])) continue;
    if (!*found) {
      best = v[q];
      *found = true;
      continue;
    }
    int c = compare(t, v[q], best);
    if (c == 0 && is_float(t)) { /* -0.0 against +0.0: MIN takes -0.0, MAX +0.0 */
      bool neg = signbit(as_double(t, v[q]));
      if (op == PP_MIN ? neg : !neg) best = v[q];
    } else if (op == PP_MIN ? c < 0 : c > 0) {
      best = v[q];
    }
  }
  return best;
}

/* ---- reduce ----------------------------------------------------------------------------- */

/* This rank's partial: the backend's reduce (f32 SUM: its double sum) of in[0, n), as bits
 * in *bits. */
static pp_status local_reduce(pp_context *ctx, const char *fn, pp_op op, pp_dtype t,
                              const void *in, size_t n, bool wide, uint64_t *bits) {
  const size_t es = pp_dtype_size(t), out_bytes = wide ? sizeof(double) : es;
  *bits = 0;
  if (wide && !ctx->ops->dist_sum_f32) return pp_not_implemented(ctx, fn);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  void *dres = NULL;
  if (st == PP_OK) st = ctx->ops->temp_alloc(ctx, &dres, sizeof(uint64_t));
  if (st == PP_OK)
    st = wide ? ctx->ops->dist_sum_f32(ctx, (const float *)din, n, (double *)dres)
              : ctx->ops->reduce(ctx, op, t, din, n, dres);
  unsigned char host[8] = {0};
  if (st == PP_OK) st = ctx->ops->copy(ctx, host, dres, out_bytes);
  if (dres) ctx->ops->temp_free(ctx, dres);
  st = pp_args_finish(ctx, &args, st);
  if (st == PP_OK) *bits = bits_of(host, out_bytes);
  return st;
}

/* Write one host value to the caller's out (any memory). */
static pp_status write_out(pp_context *ctx, void *out, const void *value, size_t bytes) {
  return ctx->ops->copy(ctx, out, value, bytes);
}

pp_status pp_dist_reduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                         const void *in, size_t n, void *out) {
  static const char fn[] = "pp_reduce";
  const bool wide = op == PP_SUM && t == PP_F32;
  uint64_t partial = 0;
  pp_status st = checked;
  if (st == PP_OK) st = local_reduce(ctx, fn, op, t, in, n, wide, &partial);
  const pp_dist_val mine[] = {{NULL, n}, {NULL, partial}, {"op", (uint64_t)op},
                              {"dtype", (uint64_t)t}};
  PP_TRY(pp_dist_agree(ctx, fn, st, mine, 4));

  const int p = ctx->dist->nranks;
  uint64_t v[p > 0 ? p : 1];
  bool used[p > 0 ? p : 1];
  size_t total = 0;
  for (int q = 0; q < p; q++) {
    v[q] = pp_dist_value(ctx, q, 1);
    used[q] = pp_dist_value(ctx, q, 0) > 0;
    total += (size_t)pp_dist_value(ctx, q, 0);
  }
  bool found;
  uint64_t r = combine(op, t, wide, v, used, p, &found);
  if (op != PP_SUM && !found) /* no number: n == 0 gives the identity, all NaN gives NaN */
    r = total == 0 ? empty_minmax(t, op) : from_double(t, NAN);
  unsigned char host[8];
  memcpy(host, &r, sizeof host);
  return write_out(ctx, out, host, pp_dtype_size(t));
}

/* ---- argreduce -------------------------------------------------------------------------- */

pp_status pp_dist_argreduce(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                            const void *in, size_t n, void *value_out, uint64_t *index_out) {
  static const char fn[] = "pp_argreduce";
  const size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = checked;
  const void *din;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  void *dres = NULL; /* value (8 bytes), then index */
  if (st == PP_OK) st = ctx->ops->temp_alloc(ctx, &dres, 2 * sizeof(uint64_t));
  if (st == PP_OK)
    st = ctx->ops->argreduce(ctx, op, t, din, n, dres, (uint64_t *)dres + 1);
  uint64_t host[2] = {0, 0};
  if (st == PP_OK) st = ctx->ops->copy(ctx, host, dres, sizeof host);
  if (dres) ctx->ops->temp_free(ctx, dres);
  st = pp_args_finish(ctx, &args, st);
  const pp_dist_val mine[] = {{NULL, n}, {NULL, bits_of(host, es)}, {NULL, host[1]},
                              {"op", (uint64_t)op}, {"dtype", (uint64_t)t}};
  PP_TRY(pp_dist_agree(ctx, fn, st, mine, 5));

  /* the best (value, global index): numbers beat NaN, strictly better values win, ties
   * keep the earlier rank (its indices are lower) */
  const int p = ctx->dist->nranks;
  bool have = false, have_number = false;
  uint64_t best = empty_minmax(t, op), at = 0, off = 0;
  for (int q = 0; q < p; q++) {
    const uint64_t nq = pp_dist_value(ctx, q, 0), vq = pp_dist_value(ctx, q, 1);
    const uint64_t iq = off + pp_dist_value(ctx, q, 2);
    off += nq;
    if (nq == 0) continue;
    const bool nan = is_nan_bits(t, vq);
    if (!have) { /* the first non-empty rank: a number, or all NaN (NaN at its index 0) */
      have = true;
      have_number = !nan;
      best = vq;
      at = iq;
    } else if (!nan) {
      int c = have_number ? compare(t, vq, best) : 0;
      if (!have_number || (op == PP_MIN ? c < 0 : c > 0)) {
        have_number = true;
        best = vq;
        at = iq;
      }
    }
  }
  unsigned char value[8];
  memcpy(value, &best, sizeof value);
  PP_TRY(write_out(ctx, value_out, value, es));
  return write_out(ctx, index_out, &at, sizeof at);
}

/* ---- scan ------------------------------------------------------------------------------- */

pp_status pp_dist_scan(pp_context *ctx, pp_status checked, pp_op op, pp_dtype t,
                       const void *in, void *out, size_t n, bool inclusive) {
  static const char fn[] = "pp_scan";
  if (checked == PP_OK && !ctx->ops->dist_scan_from) checked = pp_not_implemented(ctx, fn);
  const size_t es = pp_dtype_size(t), bytes = n * es;
  const bool wide = op == PP_SUM && t == PP_F32;

  /* stage, then this rank's total in the carry's type (f32 SUM: double) */
  pp_args args = {0};
  pp_status st = checked;
  const void *din = NULL;
  void *dout = NULL;
  if (in == out) {
    PP_STAGE(PP_ARG_INOUT, "in/out", in, bytes, es, dout);
    din = dout;
  } else {
    PP_STAGE(PP_ARG_IN, "in", in, bytes, es, din);
    PP_STAGE(PP_ARG_OUT, "out", out, bytes, es, dout);
  }
  uint64_t partial = 0;
  if (st == PP_OK && n > 0) {
    void *dres = NULL;
    st = ctx->ops->temp_alloc(ctx, &dres, sizeof(uint64_t));
    if (st == PP_OK)
      st = wide ? ctx->ops->dist_sum_f32(ctx, (const float *)din, n, (double *)dres)
                : ctx->ops->reduce(ctx, op, t, din, n, dres);
    unsigned char host[8] = {0};
    if (st == PP_OK) st = ctx->ops->copy(ctx, host, dres, wide ? 8 : es);
    if (dres) ctx->ops->temp_free(ctx, dres);
    partial = bits_of(host, wide ? 8 : es);
  }
  const pp_dist_val mine[] = {{NULL, n}, {NULL, partial}, {"op", (uint64_t)op},
                              {"dtype", (uint64_t)t}, {"inclusive", (uint64_t)inclusive}};
  st = pp_dist_agree(ctx, fn, st, mine, 5);
  if (st != PP_OK) {
    pp_args_finish(ctx, &args, st); /* releases the staging, writes nothing */
    return st;
  }

  /* the carry: everything on the ranks before this one */
  const int p = ctx->dist->nranks, me = ctx->dist->rank;
  uint64_t v[p > 0 ? p : 1];
  bool used[p > 0 ? p : 1];
  size_t before = 0;
  for (int q = 0; q < p; q++) {
    v[q] = pp_dist_value(ctx, q, 1);
    used[q] = q < me && pp_dist_value(ctx, q, 0) > 0;
    if (q < me) before += (size_t)pp_dist_value(ctx, q, 0);
  }
  uint64_t carry = 0;
  if (wide) { /* kept in double, as the one-GPU scan carries it */
    csum s = {0.0, 0.0};
    for (int q = 0; q < me; q++)
      if (used[q]) csum_add(&s, as_double(PP_F64, v[q]));
    carry = from_double(PP_F64, csum_value(s));
  } else {
    bool found; /* not found (floats only): the elements before are all NaN */
    carry = combine(op, t, false, v, used, p, &found);
    if (op != PP_SUM && !found) carry = from_double(t, NAN);
  }
  unsigned char carry_host[8];
  memcpy(carry_host, &carry, sizeof carry_host);
  /* nothing before this rank: its slice is scanned as the sequence's start */
  if (n > 0)
    st = ctx->ops->dist_scan_from(ctx, op, t, din, dout, n, inclusive,
                                  before > 0 ? carry_host : NULL);
  return pp_args_finish(ctx, &args, st);
}
