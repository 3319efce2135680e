/*
 * test_reduce.c — pp_reduce and pp_argreduce against a serial reference written here.
 *
 * Usage: test_reduce [cpu|cuda]
 *
 * Every dtype x op x size x data pattern is compared with the reference below; inputs
 * come from host memory and from pp_malloc memory at element offsets 0..3, results go
 * to host memory and to pp_malloc memory. Then the exact semantics API.md spells out
 * (wrap-around, identities, NaN, signed zeros, first index on ties) get targeted cases,
 * and every argument error is checked for status, message, untouched outputs and a
 * usable context afterwards.
 */
#include "harness.h"
#include "th_values.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>

/* ---- the reference ------------------------------------------------------------------ */

typedef struct ref_out {
  val sum, min, max;       /* pp_reduce */
  val amin, amax;          /* pp_argreduce values */
  uint64_t imin, imax;     /* pp_argreduce indices */
  long double exact, abs;  /* float SUM: (nearly) exact sum and sum of |x| */
} ref_out;

/* Integer SUM is done in the unsigned type of the same width, which wraps by definition;
 * the bits are then the wrapped signed result. Strict comparisons starting from the
 * identity keep the first index on ties, and index 0 when every element equals it. */
#define REF_INT(SUF, T, UT, TLO, THI)                                                       \
  static void ref_##SUF(const T *x, size_t n, ref_out *r) {                                 \
    UT s = 0;                                                                               \
    T mn = THI, mx = TLO;                                                                   \
    uint64_t imn = 0, imx = 0;                                                              \
    for (size_t i = 0; i < n; i++) {                                                        \
      s = (UT)(s + (UT)x[i]);                                                               \
      if (x[i] < mn) { mn = x[i]; imn = i; }                                                \
      if (x[i] > mx) { mx = x[i]; imx = i; }                                                \
    }                                                                                       \
    memset(r, 0, sizeof *r);                                                                \
    memcpy(r->sum.b, &s, sizeof s);                                                         \
    memcpy(r->min.b, &mn, sizeof mn);                                                       \
    memcpy(r->max.b, &mx, sizeof mx);                                                       \
    r->amin = r->min;                                                                       \
    r->amax = r->max;                                                                       \
    r->imin = imn;                                                                          \
    r->imax = imx;                                                                          \
  }

REF_INT(u8, uint8_t, uint8_t, 0, UINT8_MAX)
REF_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
REF_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
REF_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
REF_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)

/* reduce MIN/MAX order -0.0 below +0.0; argreduce treats them as equal (first index
 * wins); both skip NaN, and an all-NaN input gives NaN (index 0). */
#define REF_FLT(SUF, T, INF)                                                                \
  static void ref_##SUF(const T *x, size_t n, ref_out *r) {                                 \
    long double s = 0, a = 0;                                                               \
    T mn = INF, mx = -INF, amn = INF, amx = -INF;                                           \
    uint64_t imn = 0, imx = 0;                                                              \
    int any = 0;                                                                            \
    for (size_t i = 0; i < n; i++) {                                                        \
      T v = x[i];                                                                           \
      s += (long double)v;                                                                  \
      a += fabsl((long double)v);                                                           \
      if (isnan(v)) continue;                                                               \
      if (v < mn || (v == mn && signbit(v) && !signbit(mn))) mn = v;                        \
      if (v > mx || (v == mx && !signbit(v) && signbit(mx))) mx = v;                        \
      if (!any || v < amn) { amn = v; imn = i; }                                            \
      if (!any || v > amx) { amx = v; imx = i; }                                            \
      any = 1;                                                                              \
    }                                                                                       \
    if (n > 0 && !any) mn = mx = amn = amx = (T)NAN;                                        \
    memset(r, 0, sizeof *r);                                                                \
    T zero = 0;                                                                             \
    memcpy(r->sum.b, &zero, sizeof zero);                                                   \
    memcpy(r->min.b, &mn, sizeof mn);                                                       \
    memcpy(r->max.b, &mx, sizeof mx);                                                       \
    memcpy(r->amin.b, &amn, sizeof amn);                                                    \
    memcpy(r->amax.b, &amx, sizeof amx);                                                    \
    r->imin = imn;                                                                          \
    r->imax = imx;                                                                          \
    r->exact = s;                                                                           \
    r->abs = a;                                                                             \
  }

REF_FLT(f32, float, (float)INFINITY)
REF_FLT(f64, double, (double)INFINITY)

static void reference(pp_dtype t, const void *h, size_t n, ref_out *r) {
  switch (t) {
  case PP_U8: ref_u8(h, n, r); break;
  case PP_I32: ref_i32(h, n, r); break;
  case PP_U32: ref_u32(h, n, r); break;
  case PP_I64: ref_i64(h, n, r); break;
  case PP_U64: ref_u64(h, n, r); break;
  case PP_F32: ref_f32(h, n, r); break;
  case PP_F64: ref_f64(h, n, r); break;
  }
}

/* f32: API.md promises the error of pairwise summation, |err| <= c*log2(n)*eps*sum|x|
 * with c = 2 (the rounding of the final result to float fits inside it for n >= 2).
 * f64: no accuracy is promised, so the bound is the one any summation order meets,
 * (n-1)*eps*sum|x|. A single element must come back exactly. */
static int sum_ok(pp_dtype t, val got, const ref_out *r, size_t n, long double *err,
                  long double *bound) {
  long double g = t == PP_F32 ? (long double)got.f32 : (long double)got.f64;
  long double maxv = t == PP_F32 ? (long double)FLT_MAX : (long double)DBL_MAX;
  *err = 0;
  *bound = 0;
  if (isnan(r->exact)) return isnan(g);
  if (isinf(r->exact)) return g == r->exact;
  if (n <= 1) {
    *err = fabsl(g - r->exact);
    return g == r->exact;
  }
  *bound = t == PP_F32 ? 2.0L * ceil_log2(n) * FLT_EPSILON * r->abs
                       : (long double)(n - 1) * DBL_EPSILON * r->abs;
  /* An exact sum beyond the type's range rounds to infinity. */
  if (fabsl(r->exact) > maxv && isinf(g) && signbit(g) == signbit(r->exact)) return 1;
  if (!isfinite(g)) return 0;
  *err = fabsl(g - r->exact);
  return *err <= *bound;
}

/* ---- data patterns ------------------------------------------------------------------ */

enum {
  P_RANDOM, P_SMALLINT, P_SORTED, P_REVERSED, P_EQUAL, P_EXT_FIRST, P_EXT_MID, P_EXT_LAST,
  P_FEW, P_TMAX, P_TMIN,
  /* floats only */
  P_POSITIVE, P_WIDE, P_NAN_SOME, P_NAN_ALL, P_NAN_INF, P_ZEROS, P_ZERO_POS, P_ZERO_NEG,
  P_BIG_ONES, P_ALT_HUGE, P_TINY, P_SUBNORMAL,
  P_COUNT
};
static const char *pattern_names[P_COUNT] = {
    "random", "smallint", "sorted", "reversed", "all-equal", "extremes-first", "extremes-mid",
    "extremes-last", "few-values", "all-max", "all-min", "positive", "wide-exponents",
    "some-NaN", "all-NaN", "NaN-and-inf", "signed-zeros", "zeros-and-positive",
    "zeros-and-negative", "big-then-ones", "alternating-huge", "one-then-tiny", "subnormal"};

static int pattern_applies(pp_dtype t, int p) {
  if (p >= P_POSITIVE) return is_float(t);
  if (p == P_TMAX || p == P_TMIN) return !is_float(t); /* float n*FLT_MAX is just overflow */
  return 1;
}

/* Integers are generated from a "rank" in [0, 2^64) mapped monotonically onto the type
 * (vrank), so rank 0 is the lowest value and UINT64_MAX the highest for every integer type. */
static void put_rank(pp_dtype t, void *buf, size_t i, uint64_t u) { store(t, buf, i, vrank(t, u)); }
static void put_small(pp_dtype t, void *buf, size_t i, int v) { store(t, buf, i, vsmall(t, v)); }
static void put_f(pp_dtype t, void *buf, size_t i, double v) { store(t, buf, i, vflt(t, v)); }

static void gen(pp_dtype t, int p, size_t n, void *h, th_rng *r) {
  const int f32 = t == PP_F32;
  const double big = f32 ? FLT_MAX : DBL_MAX;
  const double true_min = f32 ? FLT_TRUE_MIN : DBL_TRUE_MIN;
  size_t pmin = 0, pmax = 0;
  if (p == P_EXT_FIRST) { pmin = 0; pmax = n ? n - 1 : 0; }
  if (p == P_EXT_LAST) { pmin = n ? n - 1 : 0; pmax = 0; }
  if (p == P_EXT_MID) { pmin = n / 2; pmax = n / 2 ? n / 2 - 1 : 0; }

  if (!is_float(t)) {
    const uint64_t step = UINT64_MAX / (n ? n : 1);
    const uint64_t c = th_next(r);
    const uint64_t few[3] = {UINT64_MAX / 4, UINT64_MAX / 2, UINT64_MAX / 4 * 3};
    for (size_t i = 0; i < n; i++) {
      switch (p) {
      case P_RANDOM: put_rank(t, h, i, th_next(r)); break;
      case P_SMALLINT:
        put_small(t, h, i, is_signed(t) ? (int)th_below(r, 101) - 50 : (int)th_below(r, 51));
        break;
      case P_SORTED: put_rank(t, h, i, (uint64_t)i * step); break;
      case P_REVERSED: put_rank(t, h, i, (uint64_t)(n - 1 - i) * step); break;
      case P_EQUAL: put_rank(t, h, i, c); break;
      /* the middle half of the range, so the planted extremes are unique */
      case P_EXT_FIRST:
      case P_EXT_MID:
      case P_EXT_LAST: put_rank(t, h, i, (th_next(r) >> 1) + (UINT64_MAX >> 2)); break;
      case P_FEW: put_rank(t, h, i, few[th_below(r, 3)]); break;
      case P_TMAX: put_rank(t, h, i, UINT64_MAX); break;
      case P_TMIN: put_rank(t, h, i, 0); break;
      default: break;
      }
    }
    if (n && (p == P_EXT_FIRST || p == P_EXT_MID || p == P_EXT_LAST)) {
      put_rank(t, h, pmax, UINT64_MAX);
      put_rank(t, h, pmin, 0);
    }
    return;
  }

  const double c = th_range(r, -10, 10);
  const double few[3] = {-1.5, 0.25, 2.0};
  for (size_t i = 0; i < n; i++) {
    double v = 0;
    switch (p) {
    case P_RANDOM:
    case P_EXT_FIRST:
    case P_EXT_MID:
    case P_EXT_LAST: v = th_range(r, -100, 100); break;
    case P_SMALLINT: v = (double)((int)th_below(r, 101) - 50); break;
    case P_SORTED: v = -1000.0 + 2000.0 * (double)i / (double)n; break;
    case P_REVERSED: v = -1000.0 + 2000.0 * (double)(n - 1 - i) / (double)n; break;
    case P_EQUAL: v = c; break;
    case P_FEW: v = few[th_below(r, 3)]; break;
    case P_POSITIVE: v = th_unit(r); break;
    case P_WIDE:
      v = (th_next(r) & 1 ? -1.0 : 1.0) * ldexp(1.0 + th_unit(r), (int)th_below(r, 61) - 30);
      break;
    case P_NAN_SOME: v = th_below(r, 10) == 0 ? (double)NAN : th_range(r, -100, 100); break;
    case P_NAN_ALL: v = (double)NAN; break;
    case P_NAN_INF: v = th_nan_inf(r, 3); break;
    case P_ZEROS: v = th_next(r) & 1 ? -0.0 : 0.0; break;
    case P_ZERO_POS: {
      uint64_t k = th_below(r, 3);
      v = k == 0 ? -0.0 : k == 1 ? 0.0 : th_range(r, 0.5, 10);
      break;
    }
    case P_ZERO_NEG: {
      uint64_t k = th_below(r, 3);
      v = k == 0 ? -0.0 : k == 1 ? 0.0 : -th_range(r, 0.5, 10);
      break;
    }
    /* a float accumulator stalls at 1e8 (spacing 8), a double one at 1e17 (spacing 16) */
    case P_BIG_ONES: v = i == 0 ? (f32 ? 1e8 : 1e17) : 1.0; break;
    case P_ALT_HUGE: v = (i & 1 ? -1.0 : 1.0) * (f32 ? 3e38 : 1e300); break;
    /* each tiny value is below half an ulp of 1.0, so 1 + tiny + tiny ... stalls */
    case P_TINY: v = i == 0 ? 1.0 : (f32 ? 1e-8 : 1e-17); break;
    case P_SUBNORMAL: v = true_min * (double)(1 + th_below(r, 7)); break;
    default: break;
    }
    put_f(t, h, i, v);
  }
  if (n && p == P_NAN_SOME) {
    put_f(t, h, 0, (double)NAN);
    put_f(t, h, n - 1, (double)NAN);
  }
  if (n && p == P_NAN_INF) put_f(t, h, 0, (double)NAN);
  if (n && (p == P_EXT_FIRST || p == P_EXT_LAST)) {
    put_f(t, h, pmax, (double)INFINITY);
    put_f(t, h, pmin, -(double)INFINITY);
  }
  if (n && p == P_EXT_MID) {
    put_f(t, h, pmax, big);
    put_f(t, h, pmin, -big);
  }
}

/* ---- running the library ------------------------------------------------------------ */

#define SENT 0xCD
#define IDX_SENT 0xCDCDCDCDCDCDCDCDull
#define OUT_BYTES 16

static void *g_dout;  /* pp_malloc'd output value (OUT_BYTES) */
static void *g_didx;  /* pp_malloc'd output index */

typedef struct result {
  pp_status s;
  val v;
  uint64_t idx;
  int overrun; /* bytes after the element were written */
} result;

/* kind 0: pp_reduce, 1: pp_argreduce. out_dev: outputs in pp_malloc memory. */
static result call(pp_context *ctx, int kind, pp_op op, pp_dtype t, const void *in, size_t n,
                   int out_dev) {
  unsigned char hout[OUT_BYTES];
  uint64_t hidx = IDX_SENT;
  result res;
  memset(&res, 0, sizeof res);
  memset(hout, SENT, sizeof hout);
  void *outp = hout;
  uint64_t *idxp = &hidx;
  if (out_dev) {
    th_copy(ctx, g_dout, hout, OUT_BYTES);
    th_copy(ctx, g_didx, &hidx, 8);
    outp = g_dout;
    idxp = g_didx;
  }
  res.s = kind == 0 ? pp_reduce(ctx, op, t, in, n, outp)
                    : pp_argreduce(ctx, op, t, in, n, outp, idxp);
  if (out_dev) {
    th_copy(ctx, hout, g_dout, OUT_BYTES);
    th_copy(ctx, &hidx, g_didx, 8);
  }
  res.v = load(t, hout, 0);
  res.idx = hidx;
  for (size_t i = pp_dtype_size(t); i < OUT_BYTES; i++)
    if (hout[i] != SENT) res.overrun = 1;
  return res;
}

typedef struct variant {
  int in_dev, off, out_dev;
} variant;

static variant variant_of(int v) {
  variant x = {v & 1, v >> 2, (v >> 1) & 1};
  return x;
}

static long g_calls;

/* Runs the 5 calls (reduce SUM/MIN/MAX, argreduce MIN/MAX) on one placement of the data
 * and compares each with the reference. */
static void check_all_ops(pp_context *ctx, pp_dtype t, const void *h, const void *in, size_t n,
                          const ref_out *ref, int out_dev, const char *desc) {
  char e[128], g[128];
  for (int k = 0; k < 5; k++) {
    int kind = k < 3 ? 0 : 1;
    pp_op op = k < 3 ? (pp_op)k : (k == 3 ? PP_MIN : PP_MAX);
    const char *fn = kind ? "pp_argreduce" : "pp_reduce";
    result res = call(ctx, kind, op, t, in, n, out_dev);
    g_calls++;
    if (!CHECK_STATUS(res.s, PP_OK, "%s %s %s %s (%s)", fn, opname(op), pp_dtype_string(t), desc,
                      pp_last_error(ctx)))
      continue;
    CHECK(!res.overrun, "%s %s %s %s: wrote past the one output element", fn, opname(op),
          pp_dtype_string(t), desc);
    if (kind == 0) {
      if (op == PP_SUM && is_float(t)) {
        long double err = 0, bound = 0;
        /* evaluated before the CHECK so err and bound are set when printed */
        int ok = sum_ok(t, res.v, ref, n, &err, &bound);
        CHECK(ok, "pp_reduce SUM %s %s: got %s, exact %.21Lg, |err| %.3Lg > bound %.3Lg",
              pp_dtype_string(t), desc, fmt_val(t, res.v, g, sizeof g), ref->exact, err, bound);
      } else {
        val want = op == PP_SUM ? ref->sum : op == PP_MIN ? ref->min : ref->max;
        CHECK(same_val(t, res.v, want), "pp_reduce %s %s %s: got %s, want %s", opname(op),
              pp_dtype_string(t), desc, fmt_val(t, res.v, g, sizeof g),
              fmt_val(t, want, e, sizeof e));
      }
    } else {
      val want = op == PP_MIN ? ref->amin : ref->amax;
      uint64_t wi = op == PP_MIN ? ref->imin : ref->imax;
      /* the value is the element at the index: its sign of zero included */
      if (n && !val_isnan(t, want)) want = load(t, h, wi);
      CHECK(res.idx == wi && same_val(t, res.v, want),
            "pp_argreduce %s %s %s: got (%s, index %" PRIu64 "), want (%s, index %" PRIu64 ")",
            opname(op), pp_dtype_string(t), desc, fmt_val(t, res.v, g, sizeof g), res.idx,
            fmt_val(t, want, e, sizeof e), wi);
    }
  }
}

/* One data set, run on the given placements (variant bit mask). */
static void run_case(pp_context *ctx, pp_dtype t, int p, size_t n, unsigned vmask, th_rng *r) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(n * es);
  gen(t, p, n, h, r);
  ref_out ref;
  reference(t, h, n, &ref);

  unsigned char *hbuf = th_xmalloc((n + 3) * es);
  unsigned char *dbuf = NULL;
  int need_dev = 0;
  for (int v = 0; v < 16; v++)
    if ((vmask >> v) & 1 && variant_of(v).in_dev) need_dev = 1;
  if (need_dev) dbuf = th_dev_alloc(ctx, (n + 3) * es);

  for (int v = 0; v < 16; v++) {
    if (!((vmask >> v) & 1)) continue;
    variant x = variant_of(v);
    unsigned char *in;
    if (x.in_dev) {
      in = dbuf + (size_t)x.off * es;
      if (n) th_copy(ctx, in, h, n * es);
    } else {
      in = hbuf + (size_t)x.off * es;
      if (n) memcpy(in, h, n * es);
    }
    char desc[160];
    snprintf(desc, sizeof desc, "n=%zu data=%s in=%s+%d out=%s", n, pattern_names[p],
             x.in_dev ? "pp_malloc" : "host", x.off, x.out_dev ? "pp_malloc" : "host");
    check_all_ops(ctx, t, h, in, n, &ref, x.out_dev, desc);
    if (!x.in_dev && n)
      CHECK(memcmp(in, h, n * es) == 0, "%s %s: the input was modified", pp_dtype_string(t), desc);
  }
  if (dbuf) th_dev_free(ctx, dbuf);
  free(hbuf);
  free(h);
}

/* ---- the differential sweep --------------------------------------------------------- */

/* fixed sizes around warps, blocks and tiles, then three drawn ones (set by sweep) */
static size_t g_sweep_sizes[32] = {0,    1,    2,    3,    31,    32,    33,    255,   256,   257,  1000,
                                   1023, 1024, 1025, 4095, 4096,  4097,  65535, 65537, (1u << 20) + 7};
static size_t g_sweep_ns = 20;

static void sweep_type(pp_context *ctx, pp_dtype t, th_rng *r) {
  for (size_t si = 0; si < g_sweep_ns; si++) {
    const size_t n = g_sweep_sizes[si];
    for (int p = 0; p < P_COUNT; p++) {
      if (!pattern_applies(t, p)) continue;
      unsigned vmask;
      if (th_quick()) {
        /* quick: random data and one pattern rotating with the size, one placement */
        if (p != P_RANDOM && p != (int)(si % P_COUNT)) continue;
        vmask = 1u << ((si + (size_t)p) % 16);
      } else if (n <= 257) {
        vmask = 0xFFFF; /* every placement */
      } else if (n <= 4097) {
        vmask = 1u | 1u << ((si + (size_t)p) % 15 + 1) | 1u << ((si + (size_t)p + 7) % 15 + 1);
      } else {
        /* large sizes: random data, the float summation traps, and one rotating pattern */
        int rot = (int)((si * 7) % P_COUNT);
        int keep = p == P_RANDOM || p == rot ||
                   (is_float(t) && (p == P_POSITIVE || p == P_BIG_ONES || p == P_TINY ||
                                    p == P_WIDE || p == P_ALT_HUGE));
        if (!keep) continue;
        vmask = 1u | 1u << ((si * 5 + (size_t)p) % 15 + 1);
      }
      run_case(ctx, t, p, n, vmask, r);
    }
  }
  /* Enough 16-byte vectors (3 * 2^20, plus a tail) that on the GPU every block of a full
   * grid walks several tiles and the last tile is partial: up to 384 SMs at 4 blocks of
   * 2048 vectors. Random data (u8 has ties for argmin/max everywhere), the extreme in the
   * tail, all equal (first index across every block); device input aligned and unaligned. */
  size_t many = ((size_t)3 << (th_quick() ? 17 : 20)) * (16 / pp_dtype_size(t)) + 5;
  const int many_patterns[] = {P_RANDOM, P_EXT_LAST, P_EQUAL};
  for (int k = 0; k < 3; k++)
    if (pattern_applies(t, many_patterns[k]))
      run_case(ctx, t, many_patterns[k], many, 1u << 1 | 1u << 7, r);
}

static void sweep(pp_context *ctx) {
  th_rng sr = th_rng_make(1);
  for (int i = 0; i < 3; i++)
    g_sweep_sizes[g_sweep_ns++] = 1 + (size_t)th_below(&sr, th_quick() ? 300000 : 3000000);
  th_sweep_types(ctx, "sweep", 100, sweep_type);
}

/* ---- targeted semantics ------------------------------------------------------------- */

static void expect_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                          val want, const char *what) {
  char g[128], e[128];
  for (int out_dev = 0; out_dev < 2; out_dev++) {
    result res = call(ctx, 0, op, t, in, n, out_dev);
    const char *where = out_dev ? "out=pp_malloc" : "out=host";
    if (!CHECK_STATUS(res.s, PP_OK, "pp_reduce %s %s: %s, %s (%s)", opname(op), pp_dtype_string(t),
                      what, where, pp_last_error(ctx)))
      continue;
    CHECK(same_val(t, res.v, want) && !res.overrun, "pp_reduce %s %s: %s, %s: got %s, want %s%s",
          opname(op), pp_dtype_string(t), what, where, fmt_val(t, res.v, g, sizeof g),
          fmt_val(t, want, e, sizeof e), res.overrun ? " (and wrote past the element)" : "");
  }
}

static void expect_arg(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n, val want,
                       uint64_t wi, const char *what) {
  char g[128], e[128];
  for (int out_dev = 0; out_dev < 2; out_dev++) {
    result res = call(ctx, 1, op, t, in, n, out_dev);
    const char *where = out_dev ? "out=pp_malloc" : "out=host";
    if (!CHECK_STATUS(res.s, PP_OK, "pp_argreduce %s %s: %s, %s (%s)", opname(op),
                      pp_dtype_string(t), what, where, pp_last_error(ctx)))
      continue;
    CHECK(same_val(t, res.v, want) && res.idx == wi && !res.overrun,
          "pp_argreduce %s %s: %s, %s: got (%s, %" PRIu64 "), want (%s, %" PRIu64 ")%s", opname(op),
          pp_dtype_string(t), what, where, fmt_val(t, res.v, g, sizeof g), res.idx,
          fmt_val(t, want, e, sizeof e), wi, res.overrun ? " (and wrote past the value)" : "");
  }
}

static void test_wraparound(pp_context *ctx) {
  uint8_t u8[1000];
  memset(u8, 255, sizeof u8);
  expect_reduce(ctx, PP_SUM, PP_U8, u8, 1000, vu8((uint8_t)(255000 % 256)), "1000 x 255 wraps");
  uint8_t *du8 = th_dev_from_host(ctx, u8, sizeof u8);
  expect_reduce(ctx, PP_SUM, PP_U8, du8, 1000, vu8(24), "1000 x 255 wraps (pp_malloc input)");
  th_dev_free(ctx, du8);

  int32_t i32a[2] = {INT32_MAX, 1};
  expect_reduce(ctx, PP_SUM, PP_I32, i32a, 2, vi32(INT32_MIN), "INT32_MAX + 1");
  int32_t i32b[2] = {INT32_MIN, -1};
  expect_reduce(ctx, PP_SUM, PP_I32, i32b, 2, vi32(INT32_MAX), "INT32_MIN - 1");
  int32_t i32c[3000];
  for (int i = 0; i < 3000; i++) i32c[i] = INT32_MAX;
  /* 3000 * (2^31 - 1) mod 2^32 = 3000 * 2^31 - 3000 = -3000 (3000 is even) */
  expect_reduce(ctx, PP_SUM, PP_I32, i32c, 3000, vi32(-3000), "3000 x INT32_MAX");
  uint32_t u32a[3] = {UINT32_MAX, 1, 1};
  expect_reduce(ctx, PP_SUM, PP_U32, u32a, 3, vu32(1), "UINT32_MAX + 2");
  int64_t i64a[2] = {INT64_MAX, 1};
  expect_reduce(ctx, PP_SUM, PP_I64, i64a, 2, vi64(INT64_MIN), "INT64_MAX + 1");
  uint64_t u64a[2] = {UINT64_MAX, UINT64_MAX};
  expect_reduce(ctx, PP_SUM, PP_U64, u64a, 2, vu64(UINT64_MAX - 1), "2 x UINT64_MAX");
  expect_reduce(ctx, PP_MAX, PP_U64, u64a, 2, vu64(UINT64_MAX), "max of UINT64_MAX");
  int64_t i64b[3] = {5, INT64_MIN, INT64_MAX};
  expect_reduce(ctx, PP_MIN, PP_I64, i64b, 3, vi64(INT64_MIN), "INT64_MIN");
  expect_reduce(ctx, PP_MAX, PP_I64, i64b, 3, vi64(INT64_MAX), "INT64_MAX");
  expect_arg(ctx, PP_MIN, PP_I64, i64b, 3, vi64(INT64_MIN), 1, "INT64_MIN");
  expect_arg(ctx, PP_MAX, PP_I64, i64b, 3, vi64(INT64_MAX), 2, "INT64_MAX");
  int32_t i32d[4] = {0, INT32_MAX, INT32_MIN, INT32_MIN};
  expect_arg(ctx, PP_MIN, PP_I32, i32d, 4, vi32(INT32_MIN), 2, "repeated INT32_MIN");
  expect_arg(ctx, PP_MAX, PP_I32, i32d, 4, vi32(INT32_MAX), 1, "INT32_MAX");
}

/* n == 0 gives the identity, with in NULL or not, and index 0. */
static void test_empty(pp_context *ctx) {
  const val mins[] = {vu8(UINT8_MAX), vi32(INT32_MAX),      vu32(UINT32_MAX),   vi64(INT64_MAX),
                      vu64(UINT64_MAX), vf32((float)INFINITY), vf64((double)INFINITY)};
  const val maxs[] = {vu8(0),  vi32(INT32_MIN),        vu32(0),               vi64(INT64_MIN),
                      vu64(0), vf32(-(float)INFINITY), vf64(-(double)INFINITY)};
  const double dummy[4] = {1, 2, 3, 4};
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    val zero;
    memset(&zero, 0, sizeof zero); /* +0 for the float types too */
    for (int withp = 0; withp < 2; withp++) {
      const void *in = withp ? (const void *)dummy : NULL;
      const char *what = withp ? "n == 0" : "n == 0, in NULL";
      expect_reduce(ctx, PP_SUM, t, in, 0, zero, what);
      expect_reduce(ctx, PP_MIN, t, in, 0, mins[ti], what);
      expect_reduce(ctx, PP_MAX, t, in, 0, maxs[ti], what);
      expect_arg(ctx, PP_MIN, t, in, 0, mins[ti], 0, what);
      expect_arg(ctx, PP_MAX, t, in, 0, maxs[ti], 0, what);
    }
  }
}

static void test_float_specials(pp_context *ctx) {
  const float nf = (float)NAN, inf = (float)INFINITY;
  const double nd = (double)NAN, infd = (double)INFINITY;

  /* reduce orders -0.0 below +0.0, in either input order */
  float z1[2] = {0.0f, -0.0f}, z2[2] = {-0.0f, 0.0f};
  expect_reduce(ctx, PP_MIN, PP_F32, z1, 2, vf32(-0.0f), "MIN {+0, -0}");
  expect_reduce(ctx, PP_MIN, PP_F32, z2, 2, vf32(-0.0f), "MIN {-0, +0}");
  expect_reduce(ctx, PP_MAX, PP_F32, z1, 2, vf32(0.0f), "MAX {+0, -0}");
  expect_reduce(ctx, PP_MAX, PP_F32, z2, 2, vf32(0.0f), "MAX {-0, +0}");
  double zd1[3] = {0.0, -0.0, 1.0}, zd2[3] = {-0.0, 0.0, -1.0};
  expect_reduce(ctx, PP_MIN, PP_F64, zd1, 3, vf64(-0.0), "MIN {+0, -0, 1}");
  expect_reduce(ctx, PP_MAX, PP_F64, zd2, 3, vf64(0.0), "MAX {-0, +0, -1}");
  /* argreduce: a tie, the first index wins and the value is that element */
  expect_arg(ctx, PP_MIN, PP_F32, z1, 2, vf32(0.0f), 0, "argmin {+0, -0}");
  expect_arg(ctx, PP_MIN, PP_F32, z2, 2, vf32(-0.0f), 0, "argmin {-0, +0}");
  expect_arg(ctx, PP_MAX, PP_F32, z2, 2, vf32(-0.0f), 0, "argmax {-0, +0}");
  expect_arg(ctx, PP_MAX, PP_F32, z1, 2, vf32(0.0f), 0, "argmax {+0, -0}");
  expect_arg(ctx, PP_MIN, PP_F64, zd1, 3, vf64(0.0), 0, "argmin {+0, -0, 1}");
  expect_arg(ctx, PP_MAX, PP_F64, zd2, 3, vf64(-0.0), 0, "argmax {-0, +0, -1}");
  float z3[4] = {1.0f, -0.0f, 0.0f, -0.0f};
  expect_arg(ctx, PP_MIN, PP_F32, z3, 4, vf32(-0.0f), 1, "argmin {1, -0, +0, -0}");

  /* NaN is skipped wherever it is, also at index 0 */
  float a[6] = {nf, 1.0f, nf, -2.0f, nf, 1.0f};
  expect_reduce(ctx, PP_MIN, PP_F32, a, 6, vf32(-2.0f), "NaNs around -2");
  expect_reduce(ctx, PP_MAX, PP_F32, a, 6, vf32(1.0f), "NaNs around 1");
  expect_arg(ctx, PP_MIN, PP_F32, a, 6, vf32(-2.0f), 3, "NaNs around -2");
  expect_arg(ctx, PP_MAX, PP_F32, a, 6, vf32(1.0f), 1, "NaNs, repeated max");
  float b[2] = {nf, inf};
  expect_reduce(ctx, PP_MIN, PP_F32, b, 2, vf32(inf), "{NaN, +inf}");
  expect_arg(ctx, PP_MIN, PP_F32, b, 2, vf32(inf), 1, "{NaN, +inf}");
  float c[3] = {nf, -inf, nf};
  expect_reduce(ctx, PP_MAX, PP_F32, c, 3, vf32(-inf), "{NaN, -inf, NaN}");
  expect_arg(ctx, PP_MAX, PP_F32, c, 3, vf32(-inf), 1, "{NaN, -inf, NaN}");
  double d[4] = {nd, nd, nd, nd};
  expect_reduce(ctx, PP_MIN, PP_F64, d, 4, vf64(nd), "all NaN");
  expect_reduce(ctx, PP_MAX, PP_F64, d, 4, vf64(nd), "all NaN");
  expect_arg(ctx, PP_MIN, PP_F64, d, 4, vf64(nd), 0, "all NaN");
  expect_arg(ctx, PP_MAX, PP_F64, d, 4, vf64(nd), 0, "all NaN");
  double e[3] = {infd, -infd, 0.0};
  expect_reduce(ctx, PP_MIN, PP_F64, e, 3, vf64(-infd), "+-inf");
  expect_reduce(ctx, PP_MAX, PP_F64, e, 3, vf64(infd), "+-inf");
  float s[3] = {1.0f, nf, 2.0f};
  {
    result res = call(ctx, 0, PP_SUM, PP_F32, s, 3, 0);
    CHECK(res.s == PP_OK && isnan(res.v.f32), "pp_reduce SUM f32 with a NaN: got %g, want NaN",
          (double)res.v.f32);
    float pm[2] = {inf, -inf};
    res = call(ctx, 0, PP_SUM, PP_F32, pm, 2, 0);
    CHECK(res.s == PP_OK && isnan(res.v.f32), "pp_reduce SUM f32 {+inf, -inf}: got %g, want NaN",
          (double)res.v.f32);
  }

  /* large all-NaN and NaN-then-value arrays cross thread / block boundaries */
  size_t n = 100003;
  float *big = th_xmalloc(n * sizeof *big);
  for (size_t i = 0; i < n; i++) big[i] = nf;
  expect_reduce(ctx, PP_MIN, PP_F32, big, n, vf32(nf), "100003 NaN");
  expect_arg(ctx, PP_MAX, PP_F32, big, n, vf32(nf), 0, "100003 NaN");
  big[n - 1] = -5.0f;
  expect_reduce(ctx, PP_MAX, PP_F32, big, n, vf32(-5.0f), "NaNs then -5 last");
  expect_arg(ctx, PP_MAX, PP_F32, big, n, vf32(-5.0f), n - 1, "NaNs then -5 last");
  big[n / 2] = -5.0f;
  expect_arg(ctx, PP_MIN, PP_F32, big, n, vf32(-5.0f), n / 2, "NaNs, -5 in the middle and last");
  free(big);
}

/* First index on ties across whatever chunks the backend splits into. */
static void test_ties(pp_context *ctx) {
  const size_t n = (1u << 20) + 13;
  int32_t *x = th_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = 7;
  expect_arg(ctx, PP_MIN, PP_I32, x, n, vi32(7), 0, "all equal");
  expect_arg(ctx, PP_MAX, PP_I32, x, n, vi32(7), 0, "all equal");
  const size_t pos[] = {n - 1, n / 2 + 1, n / 3, 4097, 1};
  for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
    x[pos[k]] = -1;
    x[n - 1 - pos[k] / 2] = 9;
  }
  /* the extremes now sit at several places; the smallest index is the answer */
  size_t imin = n, imax = n;
  for (size_t i = 0; i < n; i++) {
    if (x[i] == -1 && imin == n) imin = i;
    if (x[i] == 9 && imax == n) imax = i;
  }
  expect_arg(ctx, PP_MIN, PP_I32, x, n, vi32(-1), imin, "repeated min");
  expect_arg(ctx, PP_MAX, PP_I32, x, n, vi32(9), imax, "repeated max");
  void *d = th_dev_from_host(ctx, x, n * sizeof *x);
  expect_arg(ctx, PP_MIN, PP_I32, d, n, vi32(-1), imin, "repeated min (pp_malloc input)");
  expect_arg(ctx, PP_MAX, PP_I32, d, n, vi32(9), imax, "repeated max (pp_malloc input)");
  th_dev_free(ctx, d);
  free(x);

  /* values and index to different kinds of memory */
  uint64_t u[5] = {3, 1, 4, 1, 5};
  unsigned char hv[OUT_BYTES];
  memset(hv, SENT, sizeof hv);
  uint64_t didx_back = IDX_SENT;
  th_copy(ctx, g_didx, &didx_back, 8);
  pp_status s = pp_argreduce(ctx, PP_MIN, PP_U64, u, 5, hv, g_didx);
  th_copy(ctx, &didx_back, g_didx, 8);
  CHECK(s == PP_OK && load(PP_U64, hv, 0).u64 == 1 && didx_back == 1,
        "pp_argreduce u64 value to host, index to pp_malloc: %s, got (%" PRIu64 ", %" PRIu64 ")",
        pp_status_string(s), load(PP_U64, hv, 0).u64, didx_back);
  uint64_t hidx = IDX_SENT;
  memset(hv, SENT, sizeof hv);
  th_copy(ctx, g_dout, hv, OUT_BYTES);
  s = pp_argreduce(ctx, PP_MAX, PP_U64, u, 5, g_dout, &hidx);
  th_copy(ctx, hv, g_dout, OUT_BYTES);
  CHECK(s == PP_OK && load(PP_U64, hv, 0).u64 == 5 && hidx == 4,
        "pp_argreduce u64 value to pp_malloc, index to host: %s, got (%" PRIu64 ", %" PRIu64 ")",
        pp_status_string(s), load(PP_U64, hv, 0).u64, hidx);
}

/* ---- argument errors ---------------------------------------------------------------- */

static void check_usable(pp_context *ctx, const char *after) {
  int32_t x[3] = {1, 2, 3};
  result r = call(ctx, 0, PP_SUM, PP_I32, x, 3, 0);
  CHECK(r.s == PP_OK && r.v.i32 == 6, "after %s: pp_reduce SUM {1,2,3} gives %s / %d",
        after, pp_status_string(r.s), (int)r.v.i32);
  r = call(ctx, 1, PP_MAX, PP_I32, x, 3, 1);
  CHECK(r.s == PP_OK && r.v.i32 == 3 && r.idx == 2,
        "after %s: pp_argreduce MAX {1,2,3} gives %s / (%d, %" PRIu64 ")", after,
        pp_status_string(r.s), (int)r.v.i32, r.idx);
}

/* One bad call: right status, message naming the function (with a context), outputs
 * untouched, context usable. */
static void bad(pp_context *ctx, int kind, pp_context *use_ctx, pp_op op, pp_dtype t,
                const void *in, size_t n, int null_out, int null_idx, int out_dev,
                pp_status want, const char *what) {
  const char *fn = kind ? "pp_argreduce" : "pp_reduce";
  unsigned char hout[OUT_BYTES], sent[OUT_BYTES];
  memset(sent, SENT, sizeof sent);
  memcpy(hout, sent, sizeof hout);
  uint64_t hidx = IDX_SENT;
  void *outp = null_out ? NULL : (void *)hout;
  uint64_t *idxp = null_idx ? NULL : &hidx;
  if (out_dev) {
    th_copy(ctx, g_dout, sent, OUT_BYTES);
    th_copy(ctx, g_didx, &hidx, 8);
    if (!null_out) outp = g_dout;
    if (!null_idx) idxp = g_didx;
  }
  th_poison_error(ctx);
  pp_status s = kind ? pp_argreduce(use_ctx, op, t, in, n, outp, idxp)
                     : pp_reduce(use_ctx, op, t, in, n, outp);
  const char *where = out_dev ? "pp_malloc" : "host";
  CHECK_STATUS(s, want, "%s with %s, outputs in %s", fn, what, where);
  if (use_ctx)
    CHECK(th_names(pp_last_error(ctx), fn), "%s with %s: pp_last_error is \"%s\"", fn, what,
          pp_last_error(ctx));
  if (out_dev) {
    th_copy(ctx, hout, g_dout, OUT_BYTES);
    th_copy(ctx, &hidx, g_didx, 8);
  }
  CHECK(memcmp(hout, sent, OUT_BYTES) == 0 && hidx == IDX_SENT,
        "%s with %s: an output in %s memory was written", fn, what, where);
  char after[200];
  snprintf(after, sizeof after, "%s with %s (outputs in %s)", fn, what,
           out_dev ? "pp_malloc memory" : "host memory");
  check_usable(ctx, after);
}

static void test_bad_args(pp_context *ctx) {
  const double data[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* readable as any dtype */
  for (int kind = 0; kind < 2; kind++) {
    pp_op good = kind ? PP_MIN : PP_SUM;
    for (int out_dev = 0; out_dev < 2; out_dev++) {
      bad(ctx, kind, NULL, good, PP_I32, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "NULL ctx");
      bad(ctx, kind, ctx, (pp_op)7, PP_I32, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "op 7");
      bad(ctx, kind, ctx, (pp_op)3, PP_F32, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "op 3");
      bad(ctx, kind, ctx, (pp_op)-1, PP_F64, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "op -1");
      if (kind)
        bad(ctx, kind, ctx, PP_SUM, PP_I32, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
            "op PP_SUM");
      bad(ctx, kind, ctx, good, (pp_dtype)7, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "dtype 7");
      bad(ctx, kind, ctx, good, (pp_dtype)99, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "dtype 99");
      bad(ctx, kind, ctx, good, (pp_dtype)-1, data, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "dtype -1");
      bad(ctx, kind, ctx, good, PP_F32, NULL, 4, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "in NULL, n 4");
      bad(ctx, kind, ctx, PP_MAX, PP_U8, NULL, 1, 0, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "in NULL, n 1");
      /* the index output must survive a missing value output, and the reverse */
      bad(ctx, kind, ctx, good, PP_F64, data, 4, 1, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "out NULL");
      bad(ctx, kind, ctx, good, PP_I64, data, 0, 1, 0, out_dev, PP_ERR_INVALID_ARGUMENT,
          "out NULL, n 0");
      if (kind) {
        bad(ctx, kind, ctx, PP_MAX, PP_U32, data, 4, 0, 1, out_dev, PP_ERR_INVALID_ARGUMENT,
            "index_out NULL");
        bad(ctx, kind, ctx, PP_MAX, PP_U32, data, 0, 0, 1, out_dev, PP_ERR_INVALID_ARGUMENT,
            "index_out NULL, n 0");
      }
      /* n * elem_size overflowing size_t; the data pointer is real but short, so the
       * library must refuse before reading */
      bad(ctx, kind, ctx, good, PP_F32, data, SIZE_MAX / 2, 0, 0, out_dev, PP_ERR_OVERFLOW,
          "f32, n SIZE_MAX/2");
      for (size_t ti = 1; ti < N_TYPES; ti++) {
        char what[64];
        snprintf(what, sizeof what, "%s, n SIZE_MAX/%zu+1", pp_dtype_string(all_types[ti]),
                 pp_dtype_size(all_types[ti]));
        bad(ctx, kind, ctx, good, all_types[ti], data, SIZE_MAX / pp_dtype_size(all_types[ti]) + 1,
            0, 0, out_dev, PP_ERR_OVERFLOW, what);
        snprintf(what, sizeof what, "%s, n SIZE_MAX", pp_dtype_string(all_types[ti]));
        bad(ctx, kind, ctx, PP_MAX, all_types[ti], data, SIZE_MAX, 0, 0, out_dev,
            PP_ERR_OVERFLOW, what);
      }
    }
  }
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  g_dout = th_dev_alloc(ctx, OUT_BYTES);
  g_didx = th_dev_alloc(ctx, 8);

  test_bad_args(ctx);
  test_empty(ctx);
  test_wraparound(ctx);
  test_float_specials(ctx);
  test_ties(ctx);
  sweep(ctx);
  printf("%ld library calls in the sweep\n", g_calls);

  th_dev_free(ctx, g_dout);
  th_dev_free(ctx, g_didx);
  return th_finish(ctx);
}
