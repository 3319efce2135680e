/*
 * test_scan.c — pp_scan against serial references written here.
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
 * -inf, SUM: 0).
 *
 * Every dtype x op x inclusive/exclusive x data pattern runs at sizes around the powers
 * of two up to 65537 (and a few of them at 2^20+3, 3*2^20+17 and, for u8, 2^24+9, so that
 * every element size spans hundreds of the CUDA kernels' tiles). Calls take turns over
 * the placements: input and output in host or pp_malloc memory, at element offsets 0 and
 * 1 (unaligned), in place. Output buffers are pre-filled with a sentinel: a scan must
 * write exactly its n elements. PARPRIM_TEST_SEED varies the data. The n == 0 and
 * argument-error cases here cover select, partition and select_flagged too.
 *
 * PARPRIM_TEST_QUICK=1 (for runs under compute-sanitizer) keeps, per dtype, the random
 * pattern at sizes around the CUDA tiles (up to 65537), one placement per case, and the
 * first large case of u8 and f32.
 *
 * pp_select, pp_partition and pp_select_flagged are checked by test_select.c, with the same
 * patterns and placements (th_scan_data.h).
 */
#include "harness.h"
#include "th_scan_data.h"

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
static const struct big_case big_cases[] = {
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

static void sweep_scan_type(pp_context *ctx, pp_dtype t, th_rng *r) {
  for (size_t si = 0; si < N_SCAN_SIZES; si++) {
    if (g_quick && si % 3 != 0) continue;
    const size_t n = scan_sizes[si];
    for (int p = 0; p < P_COUNT; p++) {
      if (!pattern_applies(t, p) || (g_quick && p != P_RANDOM)) continue;
      /* above 8193 elements: every other pattern (random always), by size */
      if (n > 8193 && p != P_RANDOM && p % 2 != (int)(si % 2)) continue;
      scan_case(ctx, t, p, n, OPS_ALL, n <= 257 && !g_quick ? 4 : 1, r);
    }
  }
  int bigs = 0;
  for (size_t k = 0; k < sizeof big_cases / sizeof big_cases[0]; k++)
    if (big_cases[k].t == t && !(g_quick && (bigs++ || (t != PP_U8 && t != PP_F32))))
      scan_case(ctx, t, big_cases[k].p, big_cases[k].n, big_cases[k].ops, 1, r);
}

static void sweep_scan(pp_context *ctx) { th_sweep_types(ctx, "scan sweep", 100, sweep_scan_type); }

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

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  g_quick = th_quick();
  bufs_make(ctx, (M3 + 2) * 8); /* the largest case: M3 elements of 8 bytes */

  test_errors(ctx);
  test_empty(ctx);
  test_scan_semantics(ctx);
  double t0 = now_s();
  sweep_scan(ctx);
  printf("seconds: scan %.1f\n", now_s() - t0);
  printf("%ld library calls in the sweeps\n", g_calls);

  bufs_free(ctx);
  return th_finish(ctx);
}
