/*
 * test_scan.c — pp_scan, pp_select, pp_select_flagged and pp_partition against serial
 * references written here.
 *
 * Usage: test_scan [cpu|cuda]
 *
 * Accuracy contract of pp_scan for float SUM (this comment is where it is
 * written down). With ref_i the exact sum of the prefix (in[0..i] inclusive, in[0..i-1]
 * exclusive) and S_i the sum of |x| over the same prefix:
 *     |got[i] - ref_i| <= tol * S_i,   tol = (ceil(log2(n + 1)) + 32) * eps,
 * eps = FLT_EPSILON for f32 and DBL_EPSILON for f64. So a zero result may have either
 * sign. Also:
 *  - a prefix containing NaN, or both +inf and -inf, scans to NaN; one containing only
 *    one sign of infinity (and no NaN) scans to that infinity;
 *  - a result whose exact value lies beyond the type's range (within the tolerance) may
 *    be the infinity of its sign;
 *  - integer-valued inputs scan exactly while S_i <= 2^24 (f32) or 2^53 (f64): every
 *    partial sum in any order of summation is then an exactly representable integer;
 *  - when S_i exceeds DBL_MAX (possible for f64 only) some order of summation may
 *    overflow, so +-inf and NaN are accepted there too.
 * The reference is a serial compensated (Neumaier) sum in long double, far inside the
 * tolerance. Everything else is exact: integer SUM wraps in t, MIN/MAX follow pp_reduce
 * (NaN ignored unless the whole non-empty prefix is NaN, -0.0 below +0.0), the exclusive
 * out[0] is pp_reduce's n == 0 identity (MIN: largest value of t / +inf, MAX: lowest /
 * -inf, SUM: 0), and select / partition / select_flagged copy elements bit for bit.
 *
 * Every dtype x op x inclusive/exclusive x data pattern runs at sizes around the powers
 * of two up to 65537 (and a few of them at 2^20+3, 3*2^20+17 and, for u8, 2^24+9, so that
 * every element size spans hundreds of the CUDA kernels' tiles; select and partition
 * likewise at 3*2^20+17 and 2^23+5). Calls take turns over
 * the placements: input and output in host or pp_malloc memory, at element offsets 0 and
 * 1 (unaligned), in place; counts in host or pp_malloc memory. Output buffers are
 * pre-filled with a sentinel: a scan must write exactly its n elements, select exactly
 * *count, partition exactly n. PARPRIM_TEST_SEED varies the data.
 *
 * PARPRIM_TEST_QUICK=1 (for runs under compute-sanitizer) keeps, per dtype, the random
 * pattern at sizes around the CUDA tiles (up to 65537), one placement per case, the first
 * large case of u8 and f32 (scan) and of f32 (select), and a few record sizes of
 * select_flagged.
 */
#include "harness.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <time.h>

/* ---- values of any dtype ------------------------------------------------------------ */

typedef union val {
  uint8_t u8;
  int32_t i32;
  uint32_t u32;
  int64_t i64;
  uint64_t u64;
  float f32;
  double f64;
  unsigned char b[8];
} val;

static const pp_dtype all_types[] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64};
#define N_TYPES (sizeof all_types / sizeof all_types[0])
static const pp_cmp all_cmps[] = {PP_GT, PP_GE, PP_LT, PP_LE, PP_EQ, PP_NE};

static int is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }
static int is_signed(pp_dtype t) { return t == PP_I32 || t == PP_I64; }

static const char *opname(pp_op op) { return op == PP_SUM ? "SUM" : op == PP_MIN ? "MIN" : "MAX"; }
static const char *cmpname(pp_cmp c) {
  static const char *names[] = {">", ">=", "<", "<=", "==", "!="};
  return (unsigned)c < 6 ? names[c] : "bad";
}

static val load(pp_dtype t, const void *p, size_t i) {
  val v;
  v.u64 = 0;
  const unsigned char *q = (const unsigned char *)p;
  switch (pp_dtype_size(t)) {
  case 1: v.u8 = q[i]; break;
  case 4: memcpy(v.b, q + i * 4, 4); break;
  default: memcpy(v.b, q + i * 8, 8); break;
  }
  return v;
}

static void store(pp_dtype t, void *p, size_t i, val v) {
  memcpy((unsigned char *)p + i * pp_dtype_size(t), v.b, pp_dtype_size(t));
}

static int val_isnan(pp_dtype t, val v) {
  return (t == PP_F32 && isnan(v.f32)) || (t == PP_F64 && isnan(v.f64));
}

/* Same bits, or both NaN (payloads may differ). */
static int same_val(pp_dtype t, val a, val b) {
  if (val_isnan(t, a) || val_isnan(t, b)) return val_isnan(t, a) && val_isnan(t, b);
  return memcmp(a.b, b.b, pp_dtype_size(t)) == 0;
}

static long double as_ld(pp_dtype t, val v) {
  switch (t) {
  case PP_U8: return v.u8;
  case PP_I32: return v.i32;
  case PP_U32: return v.u32;
  case PP_I64: return (long double)v.i64;
  case PP_U64: return (long double)v.u64;
  case PP_F32: return v.f32;
  default: return v.f64;
  }
}

static const char *fmt_val(pp_dtype t, val v, char *buf, size_t len) {
  switch (t) {
  case PP_U8: snprintf(buf, len, "%u", (unsigned)v.u8); break;
  case PP_I32: snprintf(buf, len, "%" PRId32, v.i32); break;
  case PP_U32: snprintf(buf, len, "%" PRIu32, v.u32); break;
  case PP_I64: snprintf(buf, len, "%" PRId64, v.i64); break;
  case PP_U64: snprintf(buf, len, "%" PRIu64, v.u64); break;
  case PP_F32: snprintf(buf, len, "%.9g (%a)", (double)v.f32, (double)v.f32); break;
  default: snprintf(buf, len, "%.17g (%a)", v.f64, v.f64); break;
  }
  return buf;
}

static val vu8(uint8_t x) { val v; memset(&v, 0, sizeof v); v.u8 = x; return v; }
static val vi32(int32_t x) { val v; memset(&v, 0, sizeof v); v.i32 = x; return v; }
static val vu32(uint32_t x) { val v; memset(&v, 0, sizeof v); v.u32 = x; return v; }
static val vi64(int64_t x) { val v; memset(&v, 0, sizeof v); v.i64 = x; return v; }
static val vu64(uint64_t x) { val v; memset(&v, 0, sizeof v); v.u64 = x; return v; }
static val vf32(float x) { val v; memset(&v, 0, sizeof v); v.f32 = x; return v; }
static val vf64(double x) { val v; memset(&v, 0, sizeof v); v.f64 = x; return v; }

/* A double as a value of t (floats only). */
static val vflt(pp_dtype t, double x) { return t == PP_F32 ? vf32((float)x) : vf64(x); }

/* Integers come from a "rank" in [0, 2^64) mapped monotonically onto t: rank 0 is the
 * lowest value of every integer type and UINT64_MAX the highest. */
static val vrank(pp_dtype t, uint64_t u) {
  switch (t) {
  case PP_U8: return vu8((uint8_t)(u >> 56));
  case PP_U32: return vu32((uint32_t)(u >> 32));
  case PP_U64: return vu64(u);
  case PP_I32: {
    val v = vu32((uint32_t)(u >> 32) ^ 0x80000000u);
    return v;
  }
  default: return vu64(u ^ 0x8000000000000000ull); /* i64 */
  }
}

/* A small integer as t (wrapping for unsigned types is not used: v >= 0 there). */
static val vsmall(pp_dtype t, int x) {
  switch (t) {
  case PP_U8: return vu8((uint8_t)x);
  case PP_I32: return vi32(x);
  case PP_U32: return vu32((uint32_t)x);
  case PP_I64: return vi64(x);
  case PP_U64: return vu64((uint64_t)x);
  case PP_F32: return vf32((float)x);
  default: return vf64(x);
  }
}

/* ---- data patterns ------------------------------------------------------------------ */

enum {
  P_RANDOM, P_SMALLINT, P_SORTED, P_REVERSED, P_EQUAL, P_FEW, P_EXTREMES,
  /* integers only */
  P_ALL_MAX, P_ALL_MIN, P_NEAR,
  /* floats only */
  P_NAN_SOME, P_NAN_ALL, P_NAN_PREFIX, P_NAN_INF, P_ZEROS, P_ZERO_BLOCKS, P_ZERO_BLOCKS_NEG,
  P_ZERO_MIX, P_WIDE, P_BIG_ONES, P_TINY, P_ALT_HUGE, P_SUBNORMAL,
  P_COUNT
};
static const char *pattern_names[P_COUNT] = {
    "random", "smallint", "sorted", "reversed", "all-equal", "few-values", "extremes",
    "all-max", "all-min", "near-base", "some-NaN", "all-NaN", "NaN-prefix", "NaN-and-inf",
    "signed-zeros", "zero-blocks+-+", "zero-blocks-+-", "zeros-and-values", "wide-exponents",
    "big-then-ones", "one-then-tiny", "alternating-huge", "subnormal"};

static int pattern_applies(pp_dtype t, int p) {
  if (p >= P_NAN_SOME) return is_float(t);
  if (p >= P_ALL_MAX) return !is_float(t);
  return 1;
}

/* The large "near" base: values differ only in the last bits, beyond what a double (for
 * 64-bit types) or a float (for 32-bit types) can tell apart. */
static val near_base(pp_dtype t, int k) {
  switch (t) {
  case PP_U8: return vu8((uint8_t)(250 + k));
  case PP_I32: return vi32(-(1 << 30) - 3 + k);
  case PP_U32: return vu32((1u << 31) + 1u + (uint32_t)k);
  case PP_I64: return vi64(-(INT64_C(1) << 60) - 3 + k);
  default: return vu64((UINT64_C(1) << 63) + 1 + (uint64_t)k);
  }
}

static void gen(pp_dtype t, int p, size_t n, void *h, th_rng *r) {
  const int f32 = t == PP_F32;
  const double big = f32 ? FLT_MAX : DBL_MAX;
  const double true_min = f32 ? FLT_TRUE_MIN : DBL_TRUE_MIN;
  const uint64_t step = UINT64_MAX / (n ? n : 1);
  const uint64_t crank = th_next(r);
  const double c = th_range(r, -10, 10);
  const double few[3] = {-1.5, 0.25, 2.0};
  for (size_t i = 0; i < n; i++) {
    val v;
    if (!is_float(t)) {
      switch (p) {
      case P_RANDOM: v = vrank(t, th_next(r)); break;
      case P_SMALLINT: v = vsmall(t, is_signed(t) ? (int)th_below(r, 17) - 8 : (int)th_below(r, 9)); break;
      case P_SORTED: v = vrank(t, (uint64_t)i * step); break;
      case P_REVERSED: v = vrank(t, (uint64_t)(n - 1 - i) * step); break;
      case P_EQUAL: v = vrank(t, crank); break;
      case P_FEW: v = vrank(t, UINT64_MAX / 4 * (1 + th_below(r, 3))); break;
      case P_EXTREMES: {
        uint64_t k = th_below(r, 4);
        v = vrank(t, k == 0 ? 0 : k == 1 ? UINT64_MAX : k == 2 ? 1 : th_next(r));
        break;
      }
      case P_ALL_MAX: v = vrank(t, UINT64_MAX); break;
      case P_ALL_MIN: v = vrank(t, 0); break;
      default: v = near_base(t, (int)th_below(r, 4)); break; /* P_NEAR */
      }
    } else {
      double x = 0;
      switch (p) {
      case P_RANDOM: x = th_range(r, -100, 100); break;
      case P_SMALLINT: x = (double)((int)th_below(r, 17) - 8); break;
      case P_SORTED: x = -1000.0 + 2000.0 * (double)i / (double)n; break;
      case P_REVERSED: x = -1000.0 + 2000.0 * (double)(n - 1 - i) / (double)n; break;
      case P_EQUAL: x = c; break;
      case P_FEW: x = few[th_below(r, 3)]; break;
      case P_EXTREMES: {
        uint64_t k = th_below(r, 6);
        x = k == 0 ? big : k == 1 ? -big : k == 2 ? (double)INFINITY : k == 3 ? -(double)INFINITY
                                                                              : th_range(r, -1, 1);
        break;
      }
      case P_NAN_SOME: x = th_below(r, 8) == 0 ? (double)NAN : th_range(r, -100, 100); break;
      case P_NAN_ALL: x = (double)NAN; break;
      case P_NAN_PREFIX: x = i < n - n / 3 ? (double)NAN : th_range(r, -100, 100); break;
      case P_NAN_INF: {
        uint64_t k = th_below(r, 10);
        x = k < 2 ? (double)NAN : k == 2 ? (double)INFINITY : k == 3 ? -(double)INFINITY
                                                                     : th_range(r, -100, 100);
        break;
      }
      case P_ZEROS: x = th_next(r) & 1 ? -0.0 : 0.0; break;
      /* one sign, then the other from a third of the way on, then back */
      case P_ZERO_BLOCKS: x = (i * 3 / (n ? n : 1)) % 2 ? -0.0 : 0.0; break;
      case P_ZERO_BLOCKS_NEG: x = (i * 3 / (n ? n : 1)) % 2 ? 0.0 : -0.0; break;
      case P_ZERO_MIX: {
        uint64_t k = th_below(r, 4);
        x = k == 0 ? -0.0 : k == 1 ? 0.0 : k == 2 ? th_range(r, 0.5, 10) : -th_range(r, 0.5, 10);
        break;
      }
      case P_WIDE:
        x = (th_next(r) & 1 ? -1.0 : 1.0) * ldexp(1.0 + th_unit(r), (int)th_below(r, 61) - 30);
        break;
      /* a float running sum stalls at 1e8 (spacing 8), a double one at 1e17 (spacing 16) */
      case P_BIG_ONES: x = i == 0 ? (f32 ? 1e8 : 1e17) : 1.0; break;
      /* each tiny value is below half an ulp of 1.0, so 1 + tiny + tiny ... stalls */
      case P_TINY: x = i == 0 ? 1.0 : (f32 ? 1e-8 : 1e-17); break;
      case P_ALT_HUGE: x = (i & 1 ? -1.0 : 1.0) * (f32 ? 3e38 : 1e300); break;
      case P_SUBNORMAL: x = (th_next(r) & 1 ? -1.0 : 1.0) * true_min * (double)(1 + th_below(r, 7)); break;
      default: break;
      }
      v = vflt(t, x);
    }
    store(t, h, i, v);
  }
  if (n && p == P_NAN_SOME) { /* NaN at both ends: the start state and the last carry */
    store(t, h, 0, vflt(t, (double)NAN));
    store(t, h, n - 1, vflt(t, (double)NAN));
  }
}

/* ---- memory placements -------------------------------------------------------------- */

#define SENT 0xCD

/* Host or pp_malloc memory, read and written through the same two calls. */
static void put(pp_context *ctx, int dev, void *dst, const void *src, size_t bytes) {
  if (!bytes) return;
  if (dev)
    th_copy(ctx, dst, src, bytes);
  else
    memcpy(dst, src, bytes);
}

static void get(pp_context *ctx, int dev, void *dst, const void *src, size_t bytes) {
  put(ctx, dev, dst, src, bytes);
}

/* One host and one pp_malloc buffer each for input, output and flags, allocated once at
 * the largest size (allocation per case would dominate a CUDA run). A case uses the first
 * `bytes` of each: its data with one element of slack before (for the unaligned offset)
 * and after (to catch overruns). */
typedef struct bufs {
  unsigned char *host[3], *dev[3]; /* [0] input, [1] output, [2] flags */
  unsigned char *sent;             /* sentinel bytes */
  unsigned char *back;             /* where results are read back to */
  size_t cap, bytes;
} bufs;

static bufs g_b;

static void bufs_make(pp_context *ctx, size_t cap) {
  g_b.cap = cap;
  for (int k = 0; k < 3; k++) {
    g_b.host[k] = th_xmalloc(cap);
    g_b.dev[k] = th_dev_alloc(ctx, cap);
  }
  g_b.sent = th_xmalloc(cap);
  memset(g_b.sent, SENT, cap);
  g_b.back = th_xmalloc(cap);
}

static void bufs_free(pp_context *ctx) {
  for (int k = 0; k < 3; k++) {
    free(g_b.host[k]);
    th_dev_free(ctx, g_b.dev[k]);
  }
  free(g_b.sent);
  free(g_b.back);
}

/* The case's buffers: (n + 2) elements of es bytes. */
static bufs *bufs_for(size_t n, size_t es) {
  g_b.bytes = (n + 2) * es;
  if (g_b.bytes > g_b.cap) {
    printf("FATAL: test buffers too small (%zu > %zu)\n", g_b.bytes, g_b.cap);
    exit(1);
  }
  return &g_b;
}

/* Placements rotate call by call, so that each size meets many of them across ops,
 * patterns and thresholds without running every call at every placement. */
static unsigned g_rot;

/* where the input and output live; in place uses the input's buffer for both */
typedef struct place {
  int in_dev, in_off, out_dev, out_off, inplace;
} place;

static place place_of(int v) {
  place p = {0, 0, 0, 0, 0};
  if (v >= 16) { /* 16..19: in place */
    p.inplace = 1;
    p.in_dev = p.out_dev = v & 1;
    p.in_off = p.out_off = (v >> 1) & 1;
  } else {
    p.in_dev = v & 1;
    p.in_off = (v >> 1) & 1;
    p.out_dev = (v >> 2) & 1;
    p.out_off = (v >> 3) & 1;
  }
  return p;
}
#define N_PLACES 20

static void place_desc(place pl, char *buf, size_t len) {
  if (pl.inplace)
    snprintf(buf, len, "in place in %s+%d", pl.in_dev ? "pp_malloc" : "host", pl.in_off);
  else
    snprintf(buf, len, "in=%s+%d out=%s+%d", pl.in_dev ? "pp_malloc" : "host", pl.in_off,
             pl.out_dev ? "pp_malloc" : "host", pl.out_off);
}

/* Bytes [0, lo) and [hi, bytes) of the read-back buffer still hold the sentinel. */
static int guards_ok(const unsigned char *back, size_t lo, size_t hi, size_t bytes) {
  for (size_t i = 0; i < lo; i++)
    if (back[i] != SENT) return 0;
  for (size_t i = hi; i < bytes; i++)
    if (back[i] != SENT) return 0;
  return 1;
}

static unsigned ceil_log2(size_t n) {
  unsigned k = 0;
  while (k < 64 && ((size_t)1 << k) < n) k++;
  return k;
}

/* ---- scan reference and checks ------------------------------------------------------ */

/* Integer reference: SUM in the unsigned type of the same width, which wraps by
 * definition; MIN/MAX from the identity. */
#define REF_INT(NAME, T, UT, TLO, THI)                                                      \
  static void ref_##NAME(pp_op op, int incl, const T *x, size_t n, T *want) {               \
    UT s = 0;                                                                               \
    T mn = THI, mx = TLO;                                                                   \
    for (size_t i = 0; i < n; i++) {                                                        \
      UT s0 = s;                                                                            \
      T mn0 = mn, mx0 = mx;                                                                 \
      s = (UT)(s + (UT)x[i]);                                                               \
      if (x[i] < mn) mn = x[i];                                                             \
      if (x[i] > mx) mx = x[i];                                                             \
      UT sv = incl ? s : s0;                                                                \
      T w;                                                                                  \
      if (op == PP_SUM)                                                                     \
        memcpy(&w, &sv, sizeof w);                                                          \
      else                                                                                  \
        w = op == PP_MIN ? (incl ? mn : mn0) : (incl ? mx : mx0);                           \
      want[i] = w;                                                                          \
    }                                                                                       \
  }

REF_INT(u8, uint8_t, uint8_t, 0, UINT8_MAX)
REF_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
REF_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
REF_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
REF_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)

/* Float MIN/MAX, spelled out: NaN is skipped; with nothing seen yet the prefix value is
 * NaN (the exclusive out[0] is the identity instead); -0.0 counts as below +0.0. */
#define REF_FLT(NAME, T)                                                                    \
  static void ref_##NAME(pp_op op, int incl, const T *x, size_t n, T *want) {               \
    int seen = 0;                                                                           \
    T best = 0;                                                                             \
    for (size_t i = 0; i < n; i++) {                                                        \
      T before = seen ? best : (T)NAN;                                                      \
      if (!isnan(x[i])) {                                                                   \
        int better;                                                                         \
        if (x[i] == best && seen)                                                           \
          better = op == PP_MIN ? (signbit(x[i]) && !signbit(best))                         \
                                : (!signbit(x[i]) && signbit(best));                        \
        else                                                                                \
          better = !seen || (op == PP_MIN ? x[i] < best : x[i] > best);                     \
        if (better) best = x[i];                                                            \
        seen = 1;                                                                           \
      }                                                                                     \
      want[i] = incl ? (seen ? best : (T)NAN) : before;                                     \
    }                                                                                       \
    if (n && !incl) want[0] = op == PP_MIN ? (T)INFINITY : -(T)INFINITY;                    \
  }

REF_FLT(f32, float)
REF_FLT(f64, double)

/* want: n elements of t (not for float SUM). */
static void reference_scan(pp_dtype t, pp_op op, int incl, const void *x, size_t n, void *want) {
  switch (t) {
  case PP_U8: ref_u8(op, incl, x, n, want); break;
  case PP_I32: ref_i32(op, incl, x, n, want); break;
  case PP_U32: ref_u32(op, incl, x, n, want); break;
  case PP_I64: ref_i64(op, incl, x, n, want); break;
  case PP_U64: ref_u64(op, incl, x, n, want); break;
  case PP_F32: ref_f32(op, incl, x, n, want); break;
  case PP_F64: ref_f64(op, incl, x, n, want); break;
  }
}

/* The float SUM reference state: a plain long double sum tells NaN / inf apart (finite
 * f32 and f64 sums of these lengths cannot overflow it); the compensated pair (s, c) is
 * the accurate value; abs is S_i; all_int says every input so far is an integer. */
typedef struct fsum {
  long double plain, s, c, abs;
  int all_int;
} fsum;

static void fsum_add(fsum *f, long double x) {
  f->plain += x;
  if (!isfinite(x)) {
    f->all_int = 0;
    return;
  }
  long double t = f->s + x;
  f->c += fabsl(f->s) >= fabsl(x) ? (f->s - t) + x : (x - t) + f->s;
  f->s = t;
  f->abs += fabsl(x);
  if (f->all_int && x != floorl(x)) f->all_int = 0;
}

/* One float SUM output against the contract in the header comment; why (written only
 * on failure, formatting is slow) says what was wanted. */
static int fsum_ok(pp_dtype t, const fsum *f, val got, long double tol, char *why, size_t len) {
  long double g = as_ld(t, got);
  long double ref = f->s + f->c;
  long double tmax = t == PP_F32 ? FLT_MAX : DBL_MAX;
  long double exact_lim = t == PP_F32 ? 0x1p24L : 0x1p53L;
  long double bound = tol * f->abs;
  int relaxed = f->abs > (long double)DBL_MAX;
  int ok;
  if (isnan(f->plain))
    ok = isnan(g);
  else if (isinf(f->plain))
    ok = g == f->plain || (relaxed && isnan(g));
  else if (f->all_int && f->abs <= exact_lim)
    ok = g == ref;
  else
    ok = fabsl(g - ref) <= bound ||
         (isinf(g) && signbit(g) == signbit(ref) && fabsl(ref) + bound >= tmax) ||
         (relaxed && !isfinite(g));
  if (ok) return 1;
  if (isnan(f->plain))
    snprintf(why, len, "want NaN");
  else if (isinf(f->plain))
    snprintf(why, len, "want %cinf", f->plain > 0 ? '+' : '-');
  else if (f->all_int && f->abs <= exact_lim)
    snprintf(why, len, "integer data: want exactly %.21Lg", ref);
  else
    snprintf(why, len, "want %.21Lg +- %.3Lg (S_i %.6Lg)", ref, bound, f->abs);
  return 0;
}

/* Compares got (n elements) with the reference; returns the number of wrong elements and
 * describes the first. */
static size_t check_scan(pp_dtype t, pp_op op, int incl, const void *x, size_t n,
                         const void *want, const void *got, char *msg, size_t len) {
  size_t bad = 0;
  char g[96], e[96], why[160];
  msg[0] = '\0';
  if (op == PP_SUM && is_float(t)) {
    long double tol = (ceil_log2(n + 1) + 32) * (t == PP_F32 ? (long double)FLT_EPSILON
                                                             : (long double)DBL_EPSILON);
    fsum f = {0, 0, 0, 0, 1};
    for (size_t i = 0; i < n; i++) {
      if (incl) fsum_add(&f, as_ld(t, load(t, x, i)));
      val gv = load(t, got, i);
      if (!fsum_ok(t, &f, gv, tol, why, sizeof why) && bad++ == 0)
        snprintf(msg, len, "index %zu: got %s, %s", i, fmt_val(t, gv, g, sizeof g), why);
      if (!incl) fsum_add(&f, as_ld(t, load(t, x, i)));
    }
    return bad;
  }
  /* NaN payloads may differ: then look element by element */
  if (memcmp(got, want, n * pp_dtype_size(t)) == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    val gv = load(t, got, i), wv = load(t, want, i);
    if (!same_val(t, gv, wv) && bad++ == 0)
      snprintf(msg, len, "index %zu: got %s, want %s", i, fmt_val(t, gv, g, sizeof g),
               fmt_val(t, wv, e, sizeof e));
  }
  return bad;
}

/* ---- running pp_scan ---------------------------------------------------------------- */

static long g_calls;
static int g_quick; /* PARPRIM_TEST_QUICK */

/* One call at one placement; checks status, result, guards and the untouched input. */
static void scan_once(pp_context *ctx, bufs *b, pp_dtype t, pp_op op, int incl, const void *h,
                      size_t n, const void *want, place pl, const char *data) {
  const size_t es = pp_dtype_size(t), bytes = n * es;
  unsigned char *inbuf = pl.in_dev ? b->dev[0] : b->host[0];
  unsigned char *outbuf = pl.inplace ? inbuf : pl.out_dev ? b->dev[1] : b->host[1];
  unsigned char *in = inbuf + pl.in_off * es, *out = outbuf + pl.out_off * es;
  char where[80], msg[400];
  place_desc(pl, where, sizeof where);

  put(ctx, pl.in_dev, inbuf, b->sent, b->bytes);
  if (!pl.inplace) put(ctx, pl.out_dev, outbuf, b->sent, b->bytes);
  put(ctx, pl.in_dev, in, h, bytes);
  th_poison_error(ctx);
  pp_status s = pp_scan(ctx, op, t, in, out, n, incl != 0);
  g_calls++;
  if (!CHECK_STATUS(s, PP_OK, "pp_scan %s %s %s n=%zu %s %s (%s)", opname(op), pp_dtype_string(t),
                    incl ? "incl" : "excl", n, data, where, pp_last_error(ctx)))
    return;
  get(ctx, pl.out_dev, b->back, outbuf, b->bytes);
  size_t bad = check_scan(t, op, incl, h, n, want, b->back + pl.out_off * es, msg, sizeof msg);
  CHECK(bad == 0, "pp_scan %s %s %s n=%zu %s %s: %zu wrong, first at %s", opname(op),
        pp_dtype_string(t), incl ? "incl" : "excl", n, data, where, bad, msg);
  CHECK(guards_ok(b->back, pl.out_off * es, pl.out_off * es + bytes, b->bytes),
        "pp_scan %s %s %s n=%zu %s %s: wrote outside out[0..n)", opname(op), pp_dtype_string(t),
        incl ? "incl" : "excl", n, data, where);
  if (!pl.inplace) {
    get(ctx, pl.in_dev, b->back, inbuf, b->bytes);
    CHECK(memcmp(b->back + pl.in_off * es, h, bytes) == 0 &&
              guards_ok(b->back, pl.in_off * es, pl.in_off * es + bytes, b->bytes),
          "pp_scan %s %s n=%zu %s %s: the input buffer was modified", opname(op),
          pp_dtype_string(t), n, data, where);
  }
}

/* The ops in ops (bit op) and both kinds on one data set, each call at `places` placements
 * taken in turn from all N_PLACES. */
static void scan_case(pp_context *ctx, pp_dtype t, int p, size_t n, unsigned ops, int places,
                      th_rng *r) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(n * es);
  void *want = th_xmalloc(n * es);
  gen(t, p, n, h, r);
  bufs *b = bufs_for(n, es);
  char data[64];
  snprintf(data, sizeof data, "data=%s", pattern_names[p]);
  for (int op = 0; op < 3; op++)
    for (int incl = 0; incl < 2 && (ops >> op & 1); incl++) {
      if (!(op == PP_SUM && is_float(t))) reference_scan(t, (pp_op)op, incl, h, n, want);
      for (int k = 0; k < places; k++)
        scan_once(ctx, b, t, (pp_op)op, incl, h, n, want, place_of((int)(g_rot++ % N_PLACES)),
                  data);
    }
  free(want);
  free(h);
}

static const size_t scan_sizes[] = {0,    1,    2,    3,     31,    32,    33,   255,
                                    256,  257,  1023, 1024,  1025,  4095,  4096, 4097,
                                    8191, 8192, 8193, 65535, 65536, 65537};
#define N_SCAN_SIZES (sizeof scan_sizes / sizeof scan_sizes[0])

/* The millions, for a few dtypes and patterns only (runtime): each op set chosen for what
 * the pattern is a trap for. */
#define OPS_ALL 7u
#define OPS_SUM 1u
#define OPS_MINMAX 6u
#define M1 ((1u << 20) + 3)
#define M3 (3 * (1u << 20) + 17)
static const struct big_case {
  pp_dtype t;
  int p;
  size_t n;
  unsigned ops;
} big_cases[] = {
    {PP_U8, P_RANDOM, M1, OPS_ALL},         {PP_U8, P_SMALLINT, M3, OPS_SUM},
    {PP_I32, P_RANDOM, M1, OPS_ALL},        {PP_I32, P_RANDOM, M3, OPS_ALL},
    {PP_I32, P_EXTREMES, M1, OPS_ALL},      {PP_U32, P_REVERSED, M1, OPS_ALL},
    {PP_I64, P_EXTREMES, M1, OPS_ALL},      {PP_U64, P_RANDOM, M1, OPS_ALL},
    {PP_U64, P_SORTED, M1, OPS_MINMAX},     {PP_F32, P_RANDOM, M1, OPS_ALL},
    {PP_F32, P_RANDOM, M3, OPS_SUM},        {PP_F32, P_NAN_PREFIX, M1, OPS_ALL},
    {PP_F32, P_NAN_SOME, M1, OPS_ALL},      {PP_F32, P_ZERO_BLOCKS, M3, OPS_MINMAX},
    {PP_F32, P_ZERO_BLOCKS_NEG, M1, OPS_MINMAX}, {PP_F32, P_BIG_ONES, M3, OPS_SUM},
    {PP_F32, P_TINY, M3, OPS_SUM},          {PP_F32, P_SMALLINT, M3, OPS_SUM},
    {PP_F64, P_RANDOM, M1, OPS_ALL},        {PP_F64, P_BIG_ONES, M1, OPS_SUM},
    {PP_F64, P_TINY, M1, OPS_SUM},          {PP_F64, P_NAN_PREFIX, M3, OPS_MINMAX},
    {PP_F64, P_WIDE, M3, OPS_SUM},          {PP_U8, P_RANDOM, (1u << 24) + 9, OPS_ALL},
};

static void sweep_scan(pp_context *ctx) {
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    th_rng r = th_rng_make(100 + ti);
    long before = th_state_get()->failed;
    for (size_t si = 0; si < N_SCAN_SIZES; si++) {
      size_t n = scan_sizes[si];
      if (g_quick && si % 3 != 0) continue;
      for (int p = 0; p < P_COUNT; p++) {
        if (!pattern_applies(t, p)) continue;
        if (g_quick && p != P_RANDOM) continue;
        /* above 8193 elements: every other pattern (random always), by size */
        if (n > 8193 && p != P_RANDOM && p % 2 != (int)(si % 2)) continue;
        scan_case(ctx, t, p, n, OPS_ALL, n <= 257 && !g_quick ? 4 : 1, &r);
      }
    }
    int bigs = 0;
    for (size_t k = 0; k < sizeof big_cases / sizeof big_cases[0]; k++)
      if (big_cases[k].t == t && !(g_quick && (bigs++ || (t != PP_U8 && t != PP_F32))))
        scan_case(ctx, t, big_cases[k].p, big_cases[k].n, big_cases[k].ops, 1, &r);
    printf("scan sweep %s: %s\n", pp_dtype_string(t),
           th_state_get()->failed == before ? "ok" : "FAILURES");
    fflush(stdout);
  }
}

/* ---- select / partition reference and checks --------------------------------------- */

/* -1, 0, 1, or 2 when unordered (a NaN): comparisons are then false, != true. */
#define ORDER3(a, b) (((a) > (b)) - ((a) < (b)))
static int order3(pp_dtype t, val x, val v) {
  if (val_isnan(t, x) || val_isnan(t, v)) return 2;
  switch (t) {
  case PP_U8: return ORDER3(x.u8, v.u8);
  case PP_I32: return ORDER3(x.i32, v.i32);
  case PP_U32: return ORDER3(x.u32, v.u32);
  case PP_I64: return ORDER3(x.i64, v.i64);
  case PP_U64: return ORDER3(x.u64, v.u64);
  case PP_F32: return ORDER3(x.f32, v.f32);
  default: return ORDER3(x.f64, v.f64);
  }
}

static int ref_keep(pp_dtype t, val x, val v, pp_cmp cmp) {
  int o = order3(t, x, v);
  if (o == 2) return cmp == PP_NE;
  switch (cmp) {
  case PP_GT: return o > 0;
  case PP_GE: return o >= 0;
  case PP_LT: return o < 0;
  case PP_LE: return o <= 0;
  case PP_EQ: return o == 0;
  default: return o != 0;
  }
}

/* want: the kept elements in order, then (partition) the others in order; keep: scratch
 * of n bytes. */
static size_t ref_select(pp_dtype t, const void *h, size_t n, pp_cmp cmp, val v, void *want,
                         unsigned char *keep) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    keep[i] = (unsigned char)ref_keep(t, load(t, h, i), v, cmp);
    if (keep[i]) store(t, want, k++, load(t, h, i));
  }
  size_t kept = k;
  for (size_t i = 0; i < n; i++)
    if (!keep[i]) store(t, want, k++, load(t, h, i));
  return kept;
}

static uint64_t *g_dcount; /* a pp_malloc'd count */

/* One pp_select (part 0) or pp_partition (part 1) call at one placement; count_dev puts
 * the count in pp_malloc memory. */
static void select_once(pp_context *ctx, bufs *b, int part, pp_dtype t, const void *h, size_t n,
                        pp_cmp cmp, val v, const void *want, size_t kept, place pl,
                        int count_dev, const char *data) {
  const char *fn = part ? "pp_partition" : "pp_select";
  const size_t es = pp_dtype_size(t), bytes = n * es;
  unsigned char *inbuf = pl.in_dev ? b->dev[0] : b->host[0];
  unsigned char *outbuf = pl.out_dev ? b->dev[1] : b->host[1];
  unsigned char *in = inbuf + pl.in_off * es, *out = outbuf + pl.out_off * es;
  char where[80], vs[96];
  place_desc(pl, where, sizeof where);
  fmt_val(t, v, vs, sizeof vs);

  put(ctx, pl.in_dev, inbuf, b->sent, b->bytes);
  put(ctx, pl.out_dev, outbuf, b->sent, b->bytes);
  put(ctx, pl.in_dev, in, h, bytes);
  uint64_t count = 0xCDCDCDCDCDCDCDCDull;
  if (count_dev) th_copy(ctx, g_dcount, &count, sizeof count);
  uint64_t *cp = count_dev ? g_dcount : &count;
  pp_status s = part ? pp_partition(ctx, t, in, n, cmp, &v, out, cp)
                     : pp_select(ctx, t, in, n, cmp, &v, out, cp);
  g_calls++;
  if (!CHECK_STATUS(s, PP_OK, "%s %s x %s %s n=%zu %s %s (%s)", fn, pp_dtype_string(t),
                    cmpname(cmp), vs, n, data, where, pp_last_error(ctx)))
    return;
  if (count_dev) th_copy(ctx, &count, g_dcount, sizeof count);
  get(ctx, pl.out_dev, b->back, outbuf, b->bytes);
  const unsigned char *got = b->back + pl.out_off * es;
  size_t cmp_n = part ? n : kept;
  if (!CHECK(count == kept, "%s %s x %s %s n=%zu %s %s: count %" PRIu64 ", want %zu", fn,
             pp_dtype_string(t), cmpname(cmp), vs, n, data, where, count, kept))
    return;
  size_t first = cmp_n;
  for (size_t i = 0; i < cmp_n * es; i++)
    if (got[i] != ((const unsigned char *)want)[i]) {
      first = i / es;
      break;
    }
  char g[96], e[96];
  CHECK(first == cmp_n, "%s %s x %s %s n=%zu %s %s: out[%zu] is %s, want %s (kept %zu)", fn,
        pp_dtype_string(t), cmpname(cmp), vs, n, data, where, first,
        first < cmp_n ? fmt_val(t, load(t, got, first), g, sizeof g) : "",
        first < cmp_n ? fmt_val(t, load(t, want, first), e, sizeof e) : "", kept);
  CHECK(guards_ok(b->back, pl.out_off * es, pl.out_off * es + cmp_n * es, b->bytes),
        "%s %s x %s %s n=%zu %s %s: wrote past out[%zu] (count %zu)", fn, pp_dtype_string(t),
        cmpname(cmp), vs, n, data, where, cmp_n, kept);
}

/* Thresholds that keep none, all, about half, exactly some; NaN; signed zeros; the
 * extremes of t. */
static size_t thresholds(pp_dtype t, int p, const void *h, size_t n, th_rng *r, val *out) {
  size_t k = 0;
  if (n) {
    out[k++] = load(t, h, th_below(r, n));
    out[k++] = load(t, h, n / 2);
  }
  if (is_float(t)) {
    out[k++] = vflt(t, (double)NAN);
    out[k++] = vflt(t, 0.0);
    out[k++] = vflt(t, -0.0);
    out[k++] = vflt(t, (double)INFINITY);
    out[k++] = vflt(t, -(double)INFINITY);
    out[k++] = vflt(t, t == PP_F32 ? FLT_MAX : DBL_MAX);
    out[k++] = vflt(t, 0.25);
  } else {
    out[k++] = vrank(t, 0);
    out[k++] = vrank(t, UINT64_MAX);
    out[k++] = vsmall(t, 0);
    if (p == P_NEAR) {
      out[k++] = near_base(t, 1);
      out[k++] = near_base(t, 2);
    }
  }
  return k;
}

/* thr_limit < 0: every threshold, else that many starting at a random one; each call at
 * `places` placements in turn, the count in host or pp_malloc memory by turns. */
static void select_case(pp_context *ctx, pp_dtype t, int p, size_t n, int thr_limit, int places,
                        th_rng *r) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(n * es + 1);
  void *want = th_xmalloc(n * es + 1);
  unsigned char *keep = th_xmalloc(n + 1);
  gen(t, p, n, h, r);
  val thr[16];
  size_t nthr = thresholds(t, p, h, n, r, thr);
  bufs *b = bufs_for(n, es);
  char data[64];
  snprintf(data, sizeof data, "data=%s", pattern_names[p]);
  size_t first = thr_limit < 0 ? 0 : th_below(r, nthr);
  size_t count = thr_limit < 0 ? nthr : (size_t)thr_limit;
  for (size_t k = 0; k < count && k < nthr; k++) {
    val v = thr[(first + k) % nthr];
    for (int ci = 0; ci < 6; ci++) {
      pp_cmp cmp = all_cmps[ci];
      size_t kept = ref_select(t, h, n, cmp, v, want, keep);
      for (int part = 0; part < 2; part++)
        for (int j = 0; j < places; j++) {
          unsigned rot = g_rot++ % 32;
          select_once(ctx, b, part, t, h, n, cmp, v, want, kept, place_of((int)(rot % 16)),
                      (int)(rot / 16), data);
        }
    }
  }
  free(keep);
  free(want);
  free(h);
}

/* Hundreds of tiles of the CUDA kernels for every element size (the sweep stops at 300007). */
static const struct big_case big_select_cases[] = {
    {PP_U8, P_RANDOM, (1u << 23) + 5, 0},  {PP_I32, P_NEAR, M3, 0},     {PP_F32, P_RANDOM, M3, 0},
    {PP_F32, P_NAN_SOME, M3, 0},           {PP_U64, P_RANDOM, M3, 0},   {PP_F64, P_ZERO_MIX, M1, 0},
};

static void sweep_select(pp_context *ctx) {
  /* 3073, 6145, 24577: one past select's tiles (3072, 6144, 24576 elements of 8, 4, 1 bytes);
   * partition's are powers of two (PP_SELECT_VECS, PP_PARTITION_VECS in scan.cu) */
  static const size_t sizes[] = {0,    1,    2,    3,    31,    32,    33,    255,
                                 256,  257,  1023, 1025, 3073,  4096,  6145,  8193,
                                 24577, 65535, 65536, 65537, 300007};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    th_rng r = th_rng_make(200 + ti);
    long before = th_state_get()->failed;
    for (size_t si = 0; si < ns; si++) {
      size_t n = sizes[si];
      if (g_quick && si % 3 != 1 && n != 6145 && n != 24577) continue;
      for (int p = 0; p < P_COUNT; p++) {
        if (!pattern_applies(t, p)) continue;
        if (g_quick && p != P_RANDOM) continue;
        int wide = p == P_RANDOM || p == P_NEAR || p == P_NAN_SOME || p == P_ZERO_MIX;
        if (n <= 257)
          select_case(ctx, t, p, n, -1, 1, &r);
        else if (n <= 8193)
          select_case(ctx, t, p, n, 2, 1, &r);
        else if (n <= 65537 && (wide || p % 4 == (int)(si % 4)))
          select_case(ctx, t, p, n, 1, 1, &r);
        else if (wide && (t == PP_F32 || t == PP_U64 || t == PP_I32 || t == PP_U8))
          select_case(ctx, t, p, n, 1, 1, &r);
      }
    }
    int bigs = 0;
    for (size_t k = 0; k < sizeof big_select_cases / sizeof big_select_cases[0]; k++)
      if (big_select_cases[k].t == t && !(g_quick && (bigs++ || t != PP_F32)))
        select_case(ctx, t, big_select_cases[k].p, big_select_cases[k].n, 2, 1, &r);
    printf("select/partition sweep %s: %s\n", pp_dtype_string(t),
           th_state_get()->failed == before ? "ok" : "FAILURES");
    fflush(stdout);
  }
}

/* ---- select_flagged ----------------------------------------------------------------- */

enum { F_NONE, F_ALL, F_HALF, F_SPARSE, F_DENSE, F_ALTERNATE, F_FIRST_HALF, F_LAST, F_COUNT };
static const char *flag_names[F_COUNT] = {"none",  "all",       "random-half", "sparse",
                                          "dense", "alternate", "first-half",  "last-only"};

/* Non-zero flags take many byte values (0x80 and 0xFF too): "non-zero", not "== 1". */
static uint8_t flag_byte(int f, size_t i, size_t n, th_rng *r) {
  uint8_t on = (uint8_t)(1 + th_below(r, 255));
  switch (f) {
  case F_NONE: return 0;
  case F_ALL: return on;
  case F_HALF: return th_next(r) & 1 ? on : 0;
  case F_SPARSE: return th_below(r, 97) == 0 ? on : 0;
  case F_DENSE: return th_below(r, 97) == 0 ? 0 : on;
  case F_ALTERNATE: return i & 1 ? 0x80 : 0;
  case F_FIRST_HALF: return i < n / 2 ? 0xFF : 0;
  default: return i == n - 1 ? 1 : 0;
  }
}

/* One data set, `places` calls at placements in turn. */
static void flagged_case(pp_context *ctx, size_t es, int f, size_t n, int places, th_rng *r) {
  if (!th_sampled()) return;
  const size_t bytes = n * es;
  unsigned char *h = th_xmalloc(bytes + 1), *want = th_xmalloc(bytes + 1);
  uint8_t *flags = th_xmalloc(n + 1);
  for (size_t i = 0; i < bytes; i++) h[i] = (unsigned char)th_next(r);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    flags[i] = flag_byte(f, i, n, r);
    if (flags[i]) memcpy(want + kept++ * es, h + i * es, es);
  }
  bufs *b = bufs_for(n, es);
  const size_t total = b->bytes;
  for (int j = 0; j < places; j++) {
    /* bit 0: in and flags in pp_malloc; bit 1: in and flags offset (by a record, a byte);
       bit 2: out in pp_malloc; bit 3: out offset by a record; bit 4: count in pp_malloc */
    unsigned v = g_rot++ % 32;
    int idev = v & 1, ioff = v >> 1 & 1, odev = v >> 2 & 1, ooff = v >> 3 & 1, cdev = v >> 4 & 1;
    unsigned char *ib = b->host[0], *fb = b->host[2], *ob = b->host[1];
    if (idev) ib = b->dev[0], fb = b->dev[2];
    if (odev) ob = b->dev[1];
    put(ctx, idev, ib, b->sent, total);
    put(ctx, idev, ib + ioff * es, h, bytes);
    put(ctx, idev, fb + ioff, flags, n);
    put(ctx, odev, ob, b->sent, total);
    uint64_t count = 0xCDCDCDCDCDCDCDCDull;
    if (cdev) th_copy(ctx, g_dcount, &count, sizeof count);
    pp_status s = pp_select_flagged(ctx, es, ib + ioff * es, fb + ioff, n, ob + ooff * es,
                                    cdev ? g_dcount : &count);
    g_calls++;
    char where[160];
    snprintf(where, sizeof where, "elem_size=%zu n=%zu flags=%s in=%s+%d out=%s+%d count=%s", es,
             n, flag_names[f], idev ? "pp_malloc" : "host", ioff, odev ? "pp_malloc" : "host",
             ooff, cdev ? "pp_malloc" : "host");
    if (!CHECK_STATUS(s, PP_OK, "pp_select_flagged %s (%s)", where, pp_last_error(ctx))) continue;
    if (cdev) th_copy(ctx, &count, g_dcount, sizeof count);
    get(ctx, odev, b->back, ob, total);
    if (!CHECK(count == kept, "pp_select_flagged %s: count %" PRIu64 ", want %zu", where, count,
               kept))
      continue;
    size_t first = kept;
    for (size_t i = 0; i < kept * es; i++)
      if (b->back[ooff * es + i] != want[i]) {
        first = i / es;
        break;
      }
    CHECK(first == kept, "pp_select_flagged %s: record %zu of %zu kept is wrong", where, first,
          kept);
    CHECK(guards_ok(b->back, ooff * es, (ooff + kept) * es, total),
          "pp_select_flagged %s: wrote outside the %zu kept records", where, kept);
  }
  free(h);
  free(want);
  free(flags);
}

static void sweep_flagged(pp_context *ctx) {
  static const size_t ess[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 40};
  static const size_t sizes[] = {0, 1, 2, 3, 31, 33, 256, 257, 1025, 4097, 65535, 65537, 200003};
  th_rng r = th_rng_make(300);
  long before = th_state_get()->failed;
  for (size_t ei = 0; ei < sizeof ess / sizeof ess[0]; ei++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int f = 0; f < F_COUNT; f++) {
        size_t n = sizes[si];
        if (n > 65537 && f != F_HALF && f != F_SPARSE) continue;
        if (g_quick && (ei % 3 != 0 || si % 3 != 1 || f != F_HALF)) continue;
        flagged_case(ctx, ess[ei], f, n, n <= 257 ? 4 : 1, &r);
      }
  printf("select_flagged sweep: %s\n", th_state_get()->failed == before ? "ok" : "FAILURES");
}

/* ---- targeted cases ----------------------------------------------------------------- */

/* pp_scan on a short host array, output to host and to pp_malloc memory, in place too;
 * want given element by element. */
static void expect_scan(pp_context *ctx, pp_op op, pp_dtype t, int incl, const val *x,
                        const val *want, size_t n, const char *what) {
  const size_t es = pp_dtype_size(t);
  unsigned char in[64 * 8], out[64 * 8], got[64 * 8];
  for (size_t i = 0; i < n; i++) store(t, in, i, x[i]);
  void *dout = th_dev_alloc(ctx, n * es);
  for (int mode = 0; mode < 3; mode++) { /* host out, pp_malloc out, in place */
    void *o = mode == 0 ? (void *)out : mode == 1 ? dout : (void *)got;
    if (mode == 2) memcpy(got, in, n * es);
    pp_status s = pp_scan(ctx, op, t, mode == 2 ? got : in, o, n, incl != 0);
    if (mode == 0) memcpy(got, out, n * es);
    if (mode == 1) th_copy(ctx, got, dout, n * es);
    const char *m = mode == 0 ? "out=host" : mode == 1 ? "out=pp_malloc" : "in place";
    if (!CHECK_STATUS(s, PP_OK, "pp_scan %s %s %s %s, %s (%s)", opname(op), pp_dtype_string(t),
                      incl ? "incl" : "excl", what, m, pp_last_error(ctx)))
      continue;
    for (size_t i = 0; i < n; i++) {
      val g = load(t, got, i);
      char gs[96], ws[96];
      if (!CHECK(same_val(t, g, want[i]), "pp_scan %s %s %s %s, %s: out[%zu] %s, want %s",
                 opname(op), pp_dtype_string(t), incl ? "incl" : "excl", what, m, i,
                 fmt_val(t, g, gs, sizeof gs), fmt_val(t, want[i], ws, sizeof ws)))
        break;
    }
  }
  th_dev_free(ctx, dout);
}

static void test_scan_semantics(pp_context *ctx) {
  const float nf = (float)NAN, inf = (float)INFINITY;
  /* wrap-around in every integer type, both kinds */
  {
    val x[3] = {vu8(200), vu8(100), vu8(255)}, wi[3] = {vu8(200), vu8(44), vu8(43)},
        we[3] = {vu8(0), vu8(200), vu8(44)};
    expect_scan(ctx, PP_SUM, PP_U8, 1, x, wi, 3, "200+100+255 wraps");
    expect_scan(ctx, PP_SUM, PP_U8, 0, x, we, 3, "200+100+255 wraps");
  }
  {
    val x[4] = {vi32(INT32_MAX), vi32(1), vi32(-1), vi32(INT32_MIN)};
    val wi[4] = {vi32(INT32_MAX), vi32(INT32_MIN), vi32(INT32_MAX), vi32(-1)};
    expect_scan(ctx, PP_SUM, PP_I32, 1, x, wi, 4, "INT32_MAX+1");
    val mn[4] = {vi32(INT32_MAX), vi32(1), vi32(-1), vi32(INT32_MIN)};
    expect_scan(ctx, PP_MIN, PP_I32, 1, x, mn, 4, "extremes");
    val mxe[4] = {vi32(INT32_MIN), vi32(INT32_MAX), vi32(INT32_MAX), vi32(INT32_MAX)};
    expect_scan(ctx, PP_MAX, PP_I32, 0, x, mxe, 4, "extremes");
  }
  {
    val x[3] = {vu32(UINT32_MAX), vu32(2), vu32(UINT32_MAX)};
    val w[3] = {vu32(UINT32_MAX), vu32(1), vu32(0)};
    expect_scan(ctx, PP_SUM, PP_U32, 1, x, w, 3, "UINT32_MAX+2");
    val x64[3] = {vu64(UINT64_MAX), vu64(2), vu64(UINT64_MAX)};
    val w64[3] = {vu64(UINT64_MAX), vu64(1), vu64(0)};
    expect_scan(ctx, PP_SUM, PP_U64, 1, x64, w64, 3, "UINT64_MAX+2");
    val xi[3] = {vi64(INT64_MIN), vi64(-1), vi64(INT64_MAX)};
    val wi[3] = {vi64(INT64_MIN), vi64(INT64_MAX), vi64(-2)};
    expect_scan(ctx, PP_SUM, PP_I64, 1, xi, wi, 3, "INT64_MIN-1");
    val we[3] = {vi64(0), vi64(INT64_MIN), vi64(INT64_MAX)};
    expect_scan(ctx, PP_SUM, PP_I64, 0, xi, we, 3, "INT64_MIN-1");
  }
  /* the exclusive out[0] is the identity, whatever in[0] is */
  {
    val one[1];
    for (size_t ti = 0; ti < N_TYPES; ti++) {
      pp_dtype t = all_types[ti];
      one[0] = vsmall(t, 7);
      val hi = is_float(t) ? vflt(t, (double)INFINITY) : vrank(t, UINT64_MAX);
      val lo = is_float(t) ? vflt(t, -(double)INFINITY) : vrank(t, 0);
      val z = vsmall(t, 0);
      expect_scan(ctx, PP_MIN, t, 0, one, &hi, 1, "{7}: identity");
      expect_scan(ctx, PP_MAX, t, 0, one, &lo, 1, "{7}: identity");
      if (!is_float(t)) expect_scan(ctx, PP_SUM, t, 0, one, &z, 1, "{7}: identity");
    }
  }
  /* float MIN/MAX: NaN skipped, all-NaN prefix is NaN, -0 below +0 */
  {
    val x[7] = {vf32(nf), vf32(nf), vf32(3), vf32(nf), vf32(-0.0f), vf32(0.0f), vf32(-1)};
    val mi[7] = {vf32(nf), vf32(nf), vf32(3), vf32(3), vf32(-0.0f), vf32(-0.0f), vf32(-1)};
    val me[7] = {vf32(inf), vf32(nf), vf32(nf), vf32(3), vf32(3), vf32(-0.0f), vf32(-0.0f)};
    val xi[7] = {vf32(nf), vf32(nf), vf32(3), vf32(3), vf32(3), vf32(3), vf32(3)};
    val xe[7] = {vf32(-inf), vf32(nf), vf32(nf), vf32(3), vf32(3), vf32(3), vf32(3)};
    expect_scan(ctx, PP_MIN, PP_F32, 1, x, mi, 7, "NaN, signed zeros");
    expect_scan(ctx, PP_MIN, PP_F32, 0, x, me, 7, "NaN, signed zeros");
    expect_scan(ctx, PP_MAX, PP_F32, 1, x, xi, 7, "NaN, signed zeros");
    expect_scan(ctx, PP_MAX, PP_F32, 0, x, xe, 7, "NaN, signed zeros");
    val z[4] = {vf64(-0.0), vf64(0.0), vf64(-0.0), vf64(0.0)};
    val zmax[4] = {vf64(-0.0), vf64(0.0), vf64(0.0), vf64(0.0)};
    val zmin[4] = {vf64(-0.0), vf64(-0.0), vf64(-0.0), vf64(-0.0)};
    expect_scan(ctx, PP_MAX, PP_F64, 1, z, zmax, 4, "{-0, +0, -0, +0}");
    expect_scan(ctx, PP_MIN, PP_F64, 1, z, zmin, 4, "{-0, +0, -0, +0}");
    val z2[3] = {vf64(0.0), vf64(-0.0), vf64(0.0)};
    val z2min[3] = {vf64(0.0), vf64(-0.0), vf64(-0.0)};
    val z2max[3] = {vf64(0.0), vf64(0.0), vf64(0.0)};
    expect_scan(ctx, PP_MIN, PP_F64, 1, z2, z2min, 3, "{+0, -0, +0}");
    expect_scan(ctx, PP_MAX, PP_F64, 1, z2, z2max, 3, "{+0, -0, +0}");
    val ii[3] = {vf64(-(double)INFINITY), vf64((double)NAN), vf64((double)INFINITY)};
    val iimax[3] = {vf64(-(double)INFINITY), vf64(-(double)INFINITY), vf64((double)INFINITY)};
    expect_scan(ctx, PP_MAX, PP_F64, 1, ii, iimax, 3, "{-inf, NaN, +inf}");
  }
  /* float SUM specials: NaN and inf - inf propagate, small integers are exact */
  {
    val x[4] = {vf32(1), vf32(nf), vf32(2), vf32(3)};
    val w[4] = {vf32(1), vf32(nf), vf32(nf), vf32(nf)};
    expect_scan(ctx, PP_SUM, PP_F32, 1, x, w, 4, "{1, NaN, 2, 3}");
    val we[4] = {vf32(0), vf32(1), vf32(nf), vf32(nf)};
    expect_scan(ctx, PP_SUM, PP_F32, 0, x, we, 4, "{1, NaN, 2, 3}");
    val y[3] = {vf64(1), vf64((double)INFINITY), vf64(-(double)INFINITY)};
    val wy[3] = {vf64(1), vf64((double)INFINITY), vf64((double)NAN)};
    expect_scan(ctx, PP_SUM, PP_F64, 1, y, wy, 3, "{1, +inf, -inf}");
    val s[5] = {vf32(16777216.0f), vf32(1), vf32(1), vf32(-3), vf32(1)};
    val ws[5] = {vf32(16777216.0f), vf32(16777216.0f), vf32(16777218.0f), vf32(16777215.0f),
                 vf32(16777216.0f)};
    expect_scan(ctx, PP_SUM, PP_F32, 1, s, ws, 5, "2^24 + 1 + 1 - 3 + 1");
  }
}

/* n == 0: nothing written except the count, NULL data allowed. */
static void test_empty(pp_context *ctx) {
  unsigned char buf[32], sent[32];
  memset(sent, SENT, sizeof sent);
  void *dbuf = th_dev_from_host(ctx, sent, sizeof sent);
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    pp_dtype t = all_types[ti];
    val v = vsmall(t, 1);
    for (int dev = 0; dev < 2; dev++) {
      void *o = dev ? dbuf : (void *)buf;
      memcpy(buf, sent, sizeof buf);
      for (int op = 0; op < 3; op++)
        for (int incl = 0; incl < 2; incl++) {
          CHECK_STATUS(pp_scan(ctx, (pp_op)op, t, sent, o, 0, incl != 0), PP_OK, "pp_scan n=0 %s",
                       pp_dtype_string(t));
          CHECK_STATUS(pp_scan(ctx, (pp_op)op, t, NULL, NULL, 0, incl != 0), PP_OK,
                       "pp_scan n=0 NULL %s", pp_dtype_string(t));
        }
      for (int part = 0; part < 2; part++) {
        uint64_t c = 12345;
        pp_status s = part ? pp_partition(ctx, t, sent, 0, PP_NE, &v, o, &c)
                           : pp_select(ctx, t, sent, 0, PP_NE, &v, o, &c);
        CHECK(s == PP_OK && c == 0, "%s n=0 %s: %s, count %" PRIu64,
              part ? "pp_partition" : "pp_select", pp_dtype_string(t), pp_status_string(s), c);
        c = 12345;
        s = part ? pp_partition(ctx, t, NULL, 0, PP_GT, &v, NULL, &c)
                 : pp_select(ctx, t, NULL, 0, PP_GT, &v, NULL, &c);
        CHECK(s == PP_OK && c == 0, "%s n=0 NULL data %s: %s, count %" PRIu64,
              part ? "pp_partition" : "pp_select", pp_dtype_string(t), pp_status_string(s), c);
      }
      uint64_t c = 12345;
      pp_status s = pp_select_flagged(ctx, 12, sent, sent, 0, o, &c);
      CHECK(s == PP_OK && c == 0, "pp_select_flagged n=0: %s, count %" PRIu64,
            pp_status_string(s), c);
      if (dev) th_copy(ctx, buf, dbuf, sizeof buf);
      CHECK(memcmp(buf, sent, sizeof buf) == 0, "n=0 calls wrote to out (%s)",
            dev ? "pp_malloc" : "host");
    }
  }
  th_dev_free(ctx, dbuf);
}

/* Exact 64-bit comparison: neighbours above 2^53 that a double cannot tell apart. */
static void test_select_exact(pp_context *ctx) {
  const uint64_t base = (UINT64_C(1) << 60) + 1;
  uint64_t x[6] = {base + 1, base, base + 2, base + 1, UINT64_MAX, base - 1};
  uint64_t out[6], v = base + 1, c = 0;
  pp_status s = pp_select(ctx, PP_U64, x, 6, PP_EQ, &v, out, &c);
  CHECK(s == PP_OK && c == 2 && out[0] == base + 1 && out[1] == base + 1,
        "pp_select u64 == 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  s = pp_select(ctx, PP_U64, x, 6, PP_GT, &v, out, &c);
  CHECK(s == PP_OK && c == 2 && out[0] == base + 2 && out[1] == UINT64_MAX,
        "pp_select u64 > 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  s = pp_partition(ctx, PP_U64, x, 6, PP_LT, &v, out, &c);
  uint64_t wantp[6] = {base, base - 1, base + 1, base + 2, base + 1, UINT64_MAX};
  CHECK(s == PP_OK && c == 2 && memcmp(out, wantp, sizeof out) == 0,
        "pp_partition u64 < 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  int64_t y[4] = {INT64_MIN + 1, INT64_MIN, INT64_MAX, INT64_MAX - 1};
  int64_t yo[4], yv = INT64_MIN + 1;
  s = pp_select(ctx, PP_I64, y, 4, PP_LE, &yv, yo, &c);
  CHECK(s == PP_OK && c == 2 && yo[0] == INT64_MIN + 1 && yo[1] == INT64_MIN,
        "pp_select i64 <= INT64_MIN+1: %s, count %" PRIu64, pp_status_string(s), c);
  /* NaN threshold: only != keeps, and keeps everything */
  float f[4] = {1, (float)NAN, -0.0f, 0.0f}, fo[4], fnan = (float)NAN, fz = 0.0f;
  s = pp_select(ctx, PP_F32, f, 4, PP_NE, &fnan, fo, &c);
  CHECK(s == PP_OK && c == 4, "pp_select f32 != NaN keeps all: count %" PRIu64, c);
  s = pp_select(ctx, PP_F32, f, 4, PP_EQ, &fz, fo, &c);
  CHECK(s == PP_OK && c == 2 && signbit(fo[0]) && fo[0] == 0 && !signbit(fo[1]) && fo[1] == 0,
        "pp_select f32 == +0 keeps -0 and +0 bit for bit: count %" PRIu64, c);
  s = pp_select(ctx, PP_F32, f, 4, PP_NE, &fz, fo, &c);
  CHECK(s == PP_OK && c == 2 && fo[0] == 1 && isnan(fo[1]),
        "pp_select f32 != +0 keeps 1 and NaN: count %" PRIu64, c);
}

/* A few argument errors (tests/test_api_args.c has the rest): status, nothing written. */
static void test_errors(pp_context *ctx) {
  int32_t x[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9}, v = 2;
  uint64_t c = 77;
  uint8_t fl[4] = {1, 1, 1, 1};
  CHECK_STATUS(pp_scan(ctx, (pp_op)3, PP_I32, x, out, 4, true), PP_ERR_INVALID_ARGUMENT,
               "pp_scan op 3");
  CHECK_STATUS(pp_scan(ctx, PP_SUM, (pp_dtype)7, x, out, 4, true), PP_ERR_INVALID_ARGUMENT,
               "pp_scan dtype 7");
  CHECK_STATUS(pp_select(ctx, PP_I32, x, 4, (pp_cmp)6, &v, out, &c), PP_ERR_INVALID_ARGUMENT,
               "pp_select cmp 6");
  CHECK_STATUS(pp_partition(ctx, PP_I32, x, 4, PP_GT, NULL, out, &c), PP_ERR_INVALID_ARGUMENT,
               "pp_partition value NULL");
  CHECK_STATUS(pp_select_flagged(ctx, 0, x, fl, 4, out, &c), PP_ERR_INVALID_ARGUMENT,
               "pp_select_flagged elem_size 0");
  CHECK(out[0] == 9 && out[1] == 9 && out[2] == 9 && out[3] == 9 && c == 77,
        "failed calls wrote an output");
  CHECK(th_names(pp_last_error(ctx), "pp_select_flagged"), "pp_last_error is \"%s\"",
        pp_last_error(ctx));
  CHECK_STATUS(pp_scan(ctx, PP_SUM, PP_I32, x, out, 4, true), PP_OK, "pp_scan after errors");
  CHECK(out[3] == 10, "pp_scan after errors: out[3] %d", (int)out[3]);
}

static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  g_quick = th_quick();
  g_dcount = th_dev_alloc(ctx, sizeof(uint64_t));
  bufs_make(ctx, (M3 + 2) * 8); /* the largest case: M3 elements of 8 bytes */

  test_errors(ctx);
  test_empty(ctx);
  test_scan_semantics(ctx);
  test_select_exact(ctx);
  double t0 = now_s();
  sweep_scan(ctx);
  double t1 = now_s();
  sweep_select(ctx);
  double t2 = now_s();
  sweep_flagged(ctx);
  printf("seconds: scan %.1f, select/partition %.1f, select_flagged %.1f\n", t1 - t0, t2 - t1,
         now_s() - t2);
  printf("%ld library calls in the sweeps\n", g_calls);

  bufs_free(ctx);
  th_dev_free(ctx, g_dcount);
  return th_finish(ctx);
}
