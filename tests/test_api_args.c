/*
 * test_api_args.c — argument checking of every entry point beyond pp_reduce/pp_argreduce.
 *
 * Usage: test_api_args [cpu|cuda]
 *
 * For each bad call: the status API.md implies (INVALID_ARGUMENT, or OVERFLOW when a
 * size does not fit size_t), pp_last_error naming the function, no output (or in-place
 * array) touched, and a valid call of the same function afterwards. Valid calls,
 * including n == 0 with NULL data, must give PP_OK or PP_ERR_UNSUPPORTED (an entry point
 * not implemented yet), never INVALID_ARGUMENT. Results of valid calls are checked by the
 * tests of each primitive, not here.
 */
#include "harness.h"

#include <math.h>

/* ---- everything a call could write: reset before each bad call, compared after ------ */

#define BODIES 8
typedef struct writable {
  unsigned char out[16384];
  unsigned char out2[16384];
  uint64_t cnt;
  double kin, pot;
  int32_t keys[64];
  uint64_t vals[64];
  float bx[BODIES], by[BODIES], bz[BODIES], bvx[BODIES], bvy[BODIES], bvz[BODIES], bm[BODIES];
} writable;

static writable g, g_pristine;

static void reset(void) { memcpy(&g, &g_pristine, sizeof g); }

/* Names the first region that changed, or NULL. */
static const char *changed(void) {
#define REGION(m)                                                                           \
  if (memcmp(&g.m, &g_pristine.m, sizeof g.m) != 0) return #m;
  REGION(out) REGION(out2) REGION(cnt) REGION(kin) REGION(pot) REGION(keys) REGION(vals)
  REGION(bx) REGION(by) REGION(bz) REGION(bvx) REGION(bvy) REGION(bvz) REGION(bm)
#undef REGION
  return NULL;
}

static pp_bodies bodies_of_g(size_t n) {
  pp_bodies b = {g.bx, g.by, g.bz, g.bvx, g.bvy, g.bvz, g.bm, n};
  return b;
}

/* ---- read-only inputs --------------------------------------------------------------- */

static int32_t in_i32[64];
static float in_f32[64];
static uint8_t flags[64];
static int32_t sorted_a[8] = {-5, -1, 0, 2, 2, 7, 9, 100};
static int32_t sorted_b[8] = {-7, -1, 1, 2, 3, 8, 50, 60};
static const int32_t sel32 = 10;
static const double sel64 = 10.0;
static const double edges[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
static uint8_t pixels[16 * 6];
static float mat_a[64], mat_b[64];
static float src_img[10 * 6];
static float filt[32];

static void init_data(void) {
  th_rng r = th_rng_make(3);
  for (int i = 0; i < 64; i++) {
    in_i32[i] = (int32_t)th_below(&r, 200) - 100;
    in_f32[i] = (float)th_unit(&r);
    flags[i] = (uint8_t)(th_next(&r) & 1);
    mat_a[i] = (float)th_range(&r, -1, 1);
    mat_b[i] = (float)th_range(&r, -1, 1);
  }
  for (size_t i = 0; i < sizeof pixels; i++) pixels[i] = (uint8_t)th_next(&r);
  for (size_t i = 0; i < sizeof src_img / sizeof src_img[0]; i++) src_img[i] = (float)th_unit(&r);
  for (size_t i = 0; i < sizeof filt / sizeof filt[0]; i++) filt[i] = 1.0f / 9.0f;

  memset(&g_pristine, 0xA5, sizeof g_pristine);
  for (int i = 0; i < 64; i++) {
    g_pristine.keys[i] = (int32_t)th_next(&r);
    g_pristine.vals[i] = th_next(&r);
  }
  for (int i = 0; i < BODIES; i++) {
    g_pristine.bx[i] = (float)th_range(&r, -1, 1);
    g_pristine.by[i] = (float)th_range(&r, -1, 1);
    g_pristine.bz[i] = (float)th_range(&r, -1, 1);
    g_pristine.bvx[i] = (float)th_range(&r, -0.1, 0.1);
    g_pristine.bvy[i] = (float)th_range(&r, -0.1, 0.1);
    g_pristine.bvz[i] = (float)th_range(&r, -0.1, 0.1);
    g_pristine.bm[i] = (float)th_range(&r, 0.5, 1.5);
  }
}

/* ---- checks ------------------------------------------------------------------------- */

typedef pp_status (*valid_fn)(pp_context *ctx);

static int valid_status(pp_status s) { return s == PP_OK || s == PP_ERR_UNSUPPORTED; }

static void expect_bad(pp_context *ctx, int with_ctx, pp_status got, pp_status want,
                       const char *fn, valid_fn valid, int line, const char *what) {
  th_check(got == want, __FILE__, line, "%s with %s: status %d (%s), want %s", fn, what, (int)got,
           pp_status_string(got), pp_status_string(want));
  if (with_ctx)
    th_check(th_names(pp_last_error(ctx), fn), __FILE__, line,
             "%s with %s: pp_last_error is \"%s\"", fn, what, pp_last_error(ctx));
  const char *c = changed();
  th_check(c == NULL, __FILE__, line, "%s with %s: wrote to %s", fn, what, c ? c : "");
  pp_status v = valid(ctx);
  th_check(valid_status(v), __FILE__, line, "%s: a valid call after the one with %s gives %s (%s)",
           fn, what, pp_status_string(v), pp_last_error(ctx));
}

static void expect_good(pp_context *ctx, pp_status got, const char *fn, int line,
                        const char *what) {
  th_check(valid_status(got), __FILE__, line, "%s, valid call (%s): status %s (%s)", fn, what,
           pp_status_string(got), pp_last_error(ctx));
}

/* BAD: with the test context (message checked); BAD0: with a NULL context. */
#define BAD_(WITH, WANT, FN, VALID, WHAT, CALL)                                             \
  do {                                                                                      \
    reset();                                                                                \
    th_poison_error(ctx);                                                                   \
    pp_status bad_s_ = (CALL);                                                              \
    expect_bad(ctx, WITH, bad_s_, WANT, FN, VALID, __LINE__, WHAT);                         \
  } while (0)
#define BAD(WANT, FN, VALID, WHAT, CALL) BAD_(1, WANT, FN, VALID, WHAT, CALL)
#define BAD0(FN, VALID, CALL) BAD_(0, PP_ERR_INVALID_ARGUMENT, FN, VALID, "NULL ctx", CALL)
#define INV PP_ERR_INVALID_ARGUMENT
#define OVF PP_ERR_OVERFLOW
#define GOOD(FN, WHAT, CALL) expect_good(ctx, (CALL), FN, __LINE__, WHAT)

/* ---- scan --------------------------------------------------------------------------- */

static pp_status valid_scan(pp_context *ctx) {
  int32_t out[16];
  return pp_scan(ctx, PP_SUM, PP_I32, in_i32, out, 16, true);
}

static void test_scan(pp_context *ctx) {
  const char *fn = "pp_scan";
  int32_t out[64], inplace[16];
  for (int op = 0; op < 3; op++)
    for (int inc = 0; inc < 2; inc++) GOOD(fn, "ops", pp_scan(ctx, (pp_op)op, PP_I32, in_i32, out, 16, inc));
  GOOD(fn, "f64", pp_scan(ctx, PP_MAX, PP_F64, in_f32, out, 8, false));
  memcpy(inplace, in_i32, sizeof inplace);
  GOOD(fn, "in == out", pp_scan(ctx, PP_SUM, PP_I32, inplace, inplace, 16, false));
  GOOD(fn, "n 0, NULL data", pp_scan(ctx, PP_SUM, PP_F32, NULL, NULL, 0, true));

  BAD0(fn, valid_scan, pp_scan(NULL, PP_SUM, PP_I32, in_i32, g.out, 16, true));
  BAD(INV, fn, valid_scan, "op 3", pp_scan(ctx, (pp_op)3, PP_I32, in_i32, g.out, 16, true));
  BAD(INV, fn, valid_scan, "op 7", pp_scan(ctx, (pp_op)7, PP_I32, in_i32, g.out, 16, false));
  BAD(INV, fn, valid_scan, "op -1", pp_scan(ctx, (pp_op)-1, PP_F32, in_f32, g.out, 16, true));
  BAD(INV, fn, valid_scan, "dtype 7", pp_scan(ctx, PP_SUM, (pp_dtype)7, in_i32, g.out, 16, true));
  BAD(INV, fn, valid_scan, "dtype 99", pp_scan(ctx, PP_MIN, (pp_dtype)99, in_i32, g.out, 16, true));
  BAD(INV, fn, valid_scan, "in NULL", pp_scan(ctx, PP_SUM, PP_I32, NULL, g.out, 16, true));
  BAD(INV, fn, valid_scan, "out NULL", pp_scan(ctx, PP_SUM, PP_I32, in_i32, NULL, 16, true));
  BAD(OVF, fn, valid_scan, "n * 4 overflowing",
      pp_scan(ctx, PP_SUM, PP_F32, in_f32, g.out, SIZE_MAX / 4 + 1, true));
  BAD(OVF, fn, valid_scan, "n * 8 overflowing",
      pp_scan(ctx, PP_MAX, PP_U64, in_i32, g.out, SIZE_MAX / 2, false));
}

/* ---- select, select_flagged, partition ---------------------------------------------- */

static pp_status valid_select(pp_context *ctx) {
  int32_t out[16];
  uint64_t c;
  return pp_select(ctx, PP_I32, in_i32, 16, PP_GT, &sel32, out, &c);
}

static pp_status valid_select_flagged(pp_context *ctx) {
  int32_t out[16];
  uint64_t c;
  return pp_select_flagged(ctx, 4, in_i32, flags, 16, out, &c);
}

static pp_status valid_partition(pp_context *ctx) {
  int32_t out[16];
  uint64_t c;
  return pp_partition(ctx, PP_I32, in_i32, 16, PP_LE, &sel32, out, &c);
}

typedef pp_status (*select_like)(pp_context *, pp_dtype, const void *, size_t, pp_cmp,
                                 const void *, void *, uint64_t *);

/* pp_select and pp_partition take the same arguments and follow the same rules. */
static void test_select_like(pp_context *ctx, const char *fn, select_like f, valid_fn valid) {
  int32_t out[64];
  uint64_t c;
  for (int cmp = 0; cmp < 6; cmp++) GOOD(fn, "cmps", f(ctx, PP_I32, in_i32, 16, (pp_cmp)cmp, &sel32, out, &c));
  GOOD(fn, "f64", f(ctx, PP_F64, in_f32, 8, PP_NE, &sel64, out, &c));
  GOOD(fn, "n 0, NULL data", f(ctx, PP_I32, NULL, 0, PP_EQ, &sel32, NULL, &c));

  BAD0(fn, valid, f(NULL, PP_I32, in_i32, 16, PP_GT, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "dtype 7", f(ctx, (pp_dtype)7, in_i32, 16, PP_GT, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "cmp 6", f(ctx, PP_I32, in_i32, 16, (pp_cmp)6, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "cmp 99", f(ctx, PP_I32, in_i32, 16, (pp_cmp)99, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "cmp -1", f(ctx, PP_I32, in_i32, 16, (pp_cmp)-1, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "in NULL", f(ctx, PP_I32, NULL, 16, PP_GT, &sel32, g.out, &g.cnt));
  BAD(INV, fn, valid, "value NULL", f(ctx, PP_I32, in_i32, 16, PP_GT, NULL, g.out, &g.cnt));
  BAD(INV, fn, valid, "out NULL", f(ctx, PP_I32, in_i32, 16, PP_GT, &sel32, NULL, &g.cnt));
  BAD(INV, fn, valid, "count NULL", f(ctx, PP_I32, in_i32, 16, PP_GT, &sel32, g.out, NULL));
  /* with n == 0 the count (0) is still written, so it is still needed */
  BAD(INV, fn, valid, "count NULL, n 0", f(ctx, PP_I32, in_i32, 0, PP_GT, &sel32, g.out, NULL));
  BAD(OVF, fn, valid, "n * 8 overflowing",
      f(ctx, PP_F64, in_f32, SIZE_MAX / 8 + 1, PP_GT, &sel64, g.out, &g.cnt));
  BAD(OVF, fn, valid, "n * 4 overflowing",
      f(ctx, PP_I32, in_i32, SIZE_MAX / 2, PP_GT, &sel32, g.out, &g.cnt));
}

static void test_select_flagged(pp_context *ctx) {
  const char *fn = "pp_select_flagged";
  unsigned char out[64 * 12];
  uint64_t c;
  const size_t sizes[] = {1, 2, 3, 4, 8, 12};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    GOOD(fn, "elem sizes", pp_select_flagged(ctx, sizes[i], in_i32, flags, 16, out, &c));
  GOOD(fn, "n 0, NULL data", pp_select_flagged(ctx, 4, NULL, NULL, 0, NULL, &c));

  valid_fn v = valid_select_flagged;
  BAD0(fn, v, pp_select_flagged(NULL, 4, in_i32, flags, 16, g.out, &g.cnt));
  BAD(INV, fn, v, "elem_size 0", pp_select_flagged(ctx, 0, in_i32, flags, 16, g.out, &g.cnt));
  BAD(INV, fn, v, "in NULL", pp_select_flagged(ctx, 4, NULL, flags, 16, g.out, &g.cnt));
  BAD(INV, fn, v, "flags NULL", pp_select_flagged(ctx, 4, in_i32, NULL, 16, g.out, &g.cnt));
  BAD(INV, fn, v, "out NULL", pp_select_flagged(ctx, 4, in_i32, flags, 16, NULL, &g.cnt));
  BAD(INV, fn, v, "count NULL", pp_select_flagged(ctx, 4, in_i32, flags, 16, g.out, NULL));
  BAD(INV, fn, v, "count NULL, n 0", pp_select_flagged(ctx, 4, in_i32, flags, 0, g.out, NULL));
  BAD(OVF, fn, v, "n * elem_size overflowing",
      pp_select_flagged(ctx, 16, in_i32, flags, SIZE_MAX / 8, g.out, &g.cnt));
}

/* ---- sort, merge, top-k ------------------------------------------------------------- */

static pp_status valid_sort(pp_context *ctx) {
  int32_t k[16];
  uint64_t v[16];
  memcpy(k, in_i32, sizeof k);
  memcpy(v, g_pristine.vals, sizeof v);
  return pp_sort(ctx, PP_I32, k, v, 8, 16, NULL);
}

static void test_sort(pp_context *ctx) {
  const char *fn = "pp_sort";
  int32_t k[16];
  uint64_t v[16];
  float fk[16];
  for (int order = 0; order < 2; order++)
    for (int algo = 0; algo <= PP_SORT_QUICK; algo++) {
      pp_sort_opts o = {(pp_order)order, (pp_sort_algo)algo};
      memcpy(k, in_i32, sizeof k);
      GOOD(fn, "orders x algos, keys only", pp_sort(ctx, PP_I32, k, NULL, 0, 16, &o));
      memcpy(k, in_i32, sizeof k);
      GOOD(fn, "orders x algos, 8-byte values", pp_sort(ctx, PP_I32, k, v, 8, 16, &o));
      memcpy(k, in_i32, sizeof k);
      GOOD(fn, "orders x algos, 4-byte values", pp_sort(ctx, PP_I32, k, v, 4, 16, &o));
    }
  memcpy(fk, in_f32, sizeof fk);
  GOOD(fn, "f32, opts NULL", pp_sort(ctx, PP_F32, fk, NULL, 0, 16, NULL));
  /* value_size only matters when there are values */
  memcpy(k, in_i32, sizeof k);
  GOOD(fn, "values NULL, value_size 3", pp_sort(ctx, PP_I32, k, NULL, 3, 16, NULL));
  GOOD(fn, "n 0, keys NULL", pp_sort(ctx, PP_U64, NULL, NULL, 0, 0, NULL));

  valid_fn vs = valid_sort;
  pp_sort_opts bad_order = {(pp_order)2, PP_SORT_AUTO}, bad_order2 = {(pp_order)-1, PP_SORT_AUTO};
  pp_sort_opts bad_algo = {PP_ASCENDING, (pp_sort_algo)5}, bad_algo2 = {PP_DESCENDING, (pp_sort_algo)99};
  BAD0(fn, vs, pp_sort(NULL, PP_I32, g.keys, g.vals, 8, 16, NULL));
  BAD(INV, fn, vs, "dtype 7", pp_sort(ctx, (pp_dtype)7, g.keys, g.vals, 8, 16, NULL));
  BAD(INV, fn, vs, "keys NULL", pp_sort(ctx, PP_I32, NULL, g.vals, 8, 16, NULL));
  BAD(INV, fn, vs, "order 2", pp_sort(ctx, PP_I32, g.keys, g.vals, 8, 16, &bad_order));
  BAD(INV, fn, vs, "order -1", pp_sort(ctx, PP_I32, g.keys, NULL, 0, 16, &bad_order2));
  BAD(INV, fn, vs, "algo 5", pp_sort(ctx, PP_I32, g.keys, g.vals, 8, 16, &bad_algo));
  BAD(INV, fn, vs, "algo 99", pp_sort(ctx, PP_I32, g.keys, NULL, 0, 16, &bad_algo2));
  const size_t bad_vs[] = {0, 1, 2, 3, 5, 16};
  for (size_t i = 0; i < sizeof bad_vs / sizeof bad_vs[0]; i++) {
    char what[64];
    snprintf(what, sizeof what, "value_size %zu", bad_vs[i]);
    BAD(INV, fn, vs, what, pp_sort(ctx, PP_I32, g.keys, g.vals, bad_vs[i], 16, NULL));
  }
  BAD(OVF, fn, vs, "n * 4 overflowing",
      pp_sort(ctx, PP_I32, g.keys, NULL, 0, SIZE_MAX / 4 + 1, NULL));
  /* 1-byte keys fit, 8-byte values do not */
  BAD(OVF, fn, vs, "n * value_size overflowing",
      pp_sort(ctx, PP_U8, g.keys, g.vals, 8, SIZE_MAX / 8 + 1, NULL));
}

static pp_status valid_sort_copy(pp_context *ctx) {
  return pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, g.keys, g.vals, NULL);
}

static void test_sort_copy(pp_context *ctx) {
  const char *fn = "pp_sort_copy";
  int32_t k[16];
  uint64_t v[16];
  for (int order = 0; order < 2; order++)
    for (int algo = 0; algo <= PP_SORT_QUICK; algo++) {
      pp_sort_opts o = {(pp_order)order, (pp_sort_algo)algo};
      GOOD(fn, "orders x algos, keys only", pp_sort_copy(ctx, PP_I32, in_i32, NULL, 0, 16, k, NULL, &o));
      GOOD(fn, "orders x algos, 8-byte values",
           pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, k, v, &o));
    }
  /* value_size and sorted_values only matter when there are values */
  GOOD(fn, "values NULL, value_size 3", pp_sort_copy(ctx, PP_I32, in_i32, NULL, 3, 16, k, NULL, NULL));
  GOOD(fn, "n 0, all NULL", pp_sort_copy(ctx, PP_U64, NULL, NULL, 0, 0, NULL, NULL, NULL));
  GOOD(fn, "n 1", pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 1, k, v, NULL));

  valid_fn vs = valid_sort_copy;
  pp_sort_opts bad_order = {(pp_order)2, PP_SORT_AUTO}, bad_algo = {PP_ASCENDING, (pp_sort_algo)5};
  BAD0(fn, vs, pp_sort_copy(NULL, PP_I32, in_i32, g_pristine.vals, 8, 16, g.keys, g.vals, NULL));
  BAD(INV, fn, vs, "dtype 7",
      pp_sort_copy(ctx, (pp_dtype)7, in_i32, g_pristine.vals, 8, 16, g.keys, g.vals, NULL));
  BAD(INV, fn, vs, "keys NULL", pp_sort_copy(ctx, PP_I32, NULL, g_pristine.vals, 8, 16, g.keys, g.vals, NULL));
  BAD(INV, fn, vs, "sorted_keys NULL",
      pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, NULL, g.vals, NULL));
  BAD(INV, fn, vs, "sorted_values NULL",
      pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, g.keys, NULL, NULL));
  BAD(INV, fn, vs, "order 2",
      pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, g.keys, g.vals, &bad_order));
  BAD(INV, fn, vs, "algo 5",
      pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 8, 16, g.keys, g.vals, &bad_algo));
  BAD(INV, fn, vs, "value_size 2",
      pp_sort_copy(ctx, PP_I32, in_i32, g_pristine.vals, 2, 16, g.keys, g.vals, NULL));
  BAD(OVF, fn, vs, "n * 4 overflowing",
      pp_sort_copy(ctx, PP_I32, in_i32, NULL, 0, SIZE_MAX / 4 + 1, g.keys, NULL, NULL));
  BAD(OVF, fn, vs, "n * value_size overflowing",
      pp_sort_copy(ctx, PP_U8, in_i32, g_pristine.vals, 8, SIZE_MAX / 8 + 1, g.keys, g.vals, NULL));
}

static pp_status valid_merge(pp_context *ctx) {
  int32_t out[16];
  return pp_merge(ctx, PP_I32, sorted_a, 8, sorted_b, 8, out, PP_ASCENDING);
}

static void test_merge(pp_context *ctx) {
  const char *fn = "pp_merge";
  int32_t out[16], ra[8], rb[8];
  for (int i = 0; i < 8; i++) {
    ra[i] = sorted_a[7 - i];
    rb[i] = sorted_b[7 - i];
  }
  GOOD(fn, "ascending", pp_merge(ctx, PP_I32, sorted_a, 8, sorted_b, 8, out, PP_ASCENDING));
  GOOD(fn, "descending", pp_merge(ctx, PP_I32, ra, 8, rb, 8, out, PP_DESCENDING));
  GOOD(fn, "na 0, a NULL", pp_merge(ctx, PP_I32, NULL, 0, sorted_b, 8, out, PP_ASCENDING));
  GOOD(fn, "nb 0, b NULL", pp_merge(ctx, PP_I32, sorted_a, 8, NULL, 0, out, PP_ASCENDING));
  GOOD(fn, "all empty, NULL", pp_merge(ctx, PP_F64, NULL, 0, NULL, 0, NULL, PP_DESCENDING));

  valid_fn v = valid_merge;
  BAD0(fn, v, pp_merge(NULL, PP_I32, sorted_a, 8, sorted_b, 8, g.out, PP_ASCENDING));
  BAD(INV, fn, v, "dtype 7", pp_merge(ctx, (pp_dtype)7, sorted_a, 8, sorted_b, 8, g.out, PP_ASCENDING));
  BAD(INV, fn, v, "a NULL", pp_merge(ctx, PP_I32, NULL, 8, sorted_b, 8, g.out, PP_ASCENDING));
  BAD(INV, fn, v, "b NULL", pp_merge(ctx, PP_I32, sorted_a, 8, NULL, 8, g.out, PP_ASCENDING));
  BAD(INV, fn, v, "out NULL", pp_merge(ctx, PP_I32, sorted_a, 8, sorted_b, 8, NULL, PP_ASCENDING));
  BAD(INV, fn, v, "out NULL, na 0",
      pp_merge(ctx, PP_I32, NULL, 0, sorted_b, 8, NULL, PP_ASCENDING));
  BAD(INV, fn, v, "order 2", pp_merge(ctx, PP_I32, sorted_a, 8, sorted_b, 8, g.out, (pp_order)2));
  BAD(INV, fn, v, "order -1", pp_merge(ctx, PP_I32, sorted_a, 8, sorted_b, 8, g.out, (pp_order)-1));
  BAD(OVF, fn, v, "na * 4 overflowing",
      pp_merge(ctx, PP_I32, sorted_a, SIZE_MAX / 4 + 1, sorted_b, 8, g.out, PP_ASCENDING));
  BAD(OVF, fn, v, "nb * 8 overflowing",
      pp_merge(ctx, PP_F64, sorted_a, 1, sorted_b, SIZE_MAX / 8 + 1, g.out, PP_ASCENDING));
  BAD(OVF, fn, v, "na + nb overflowing",
      pp_merge(ctx, PP_U8, sorted_a, SIZE_MAX / 2 + 1, sorted_b, SIZE_MAX / 2 + 1, g.out,
               PP_ASCENDING));
}

static pp_status valid_topk(pp_context *ctx) {
  float v[4];
  uint64_t i[4];
  return pp_topk(ctx, PP_F32, in_f32, 16, 4, true, v, i);
}

static void test_topk(pp_context *ctx) {
  const char *fn = "pp_topk";
  float v[16];
  uint64_t idx[16];
  GOOD(fn, "largest", pp_topk(ctx, PP_F32, in_f32, 16, 4, true, v, idx));
  GOOD(fn, "smallest", pp_topk(ctx, PP_F32, in_f32, 16, 4, false, v, idx));
  GOOD(fn, "indices NULL", pp_topk(ctx, PP_I32, in_i32, 16, 3, true, v, NULL));
  GOOD(fn, "k == n", pp_topk(ctx, PP_F32, in_f32, 16, 16, true, v, idx));
  GOOD(fn, "k 0", pp_topk(ctx, PP_F32, in_f32, 16, 0, true, v, idx));
  GOOD(fn, "n 0, k 0, in NULL", pp_topk(ctx, PP_F32, NULL, 0, 0, false, v, idx));

  valid_fn vt = valid_topk;
  uint64_t *gi = (uint64_t *)(void *)g.out2;
  BAD0(fn, vt, pp_topk(NULL, PP_F32, in_f32, 16, 4, true, g.out, gi));
  BAD(INV, fn, vt, "dtype 7", pp_topk(ctx, (pp_dtype)7, in_f32, 16, 4, true, g.out, gi));
  BAD(INV, fn, vt, "in NULL", pp_topk(ctx, PP_F32, NULL, 16, 4, true, g.out, gi));
  BAD(INV, fn, vt, "k 17 > n 16", pp_topk(ctx, PP_F32, in_f32, 16, 17, true, g.out, gi));
  BAD(INV, fn, vt, "k 1 > n 0", pp_topk(ctx, PP_F32, in_f32, 0, 1, false, g.out, gi));
  BAD(INV, fn, vt, "k SIZE_MAX > n", pp_topk(ctx, PP_F32, in_f32, 16, SIZE_MAX, true, g.out, gi));
  BAD(INV, fn, vt, "values_out NULL", pp_topk(ctx, PP_F32, in_f32, 16, 4, true, NULL, gi));
  BAD(OVF, fn, vt, "n * 4 overflowing",
      pp_topk(ctx, PP_F32, in_f32, SIZE_MAX / 4 + 1, 1, true, g.out, gi));
}

static pp_status valid_topk_rows(pp_context *ctx) {
  float v[12];
  uint64_t i[12];
  return pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 3, true, v, i);
}

static void test_topk_rows(pp_context *ctx) {
  const char *fn = "pp_topk_rows";
  float v[64];
  uint64_t idx[64];
  GOOD(fn, "largest", pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 3, true, v, idx));
  GOOD(fn, "smallest, i32", pp_topk_rows(ctx, PP_I32, in_i32, 4, 8, 3, false, v, idx));
  GOOD(fn, "indices NULL", pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 3, true, v, NULL));
  GOOD(fn, "k == cols", pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 8, true, v, idx));
  GOOD(fn, "rows 0, NULL data", pp_topk_rows(ctx, PP_F32, NULL, 0, 8, 3, true, NULL, NULL));

  valid_fn vt = valid_topk_rows;
  uint64_t *gi = (uint64_t *)(void *)g.out2;
  BAD0(fn, vt, pp_topk_rows(NULL, PP_F32, in_f32, 4, 8, 3, true, g.out, gi));
  BAD(INV, fn, vt, "dtype 99", pp_topk_rows(ctx, (pp_dtype)99, in_f32, 4, 8, 3, true, g.out, gi));
  BAD(INV, fn, vt, "k 9 > cols 8", pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 9, true, g.out, gi));
  BAD(INV, fn, vt, "in NULL", pp_topk_rows(ctx, PP_F32, NULL, 4, 8, 3, true, g.out, gi));
  BAD(INV, fn, vt, "values_out NULL", pp_topk_rows(ctx, PP_F32, in_f32, 4, 8, 3, true, NULL, gi));
  BAD(OVF, fn, vt, "rows * cols overflowing",
      pp_topk_rows(ctx, PP_F32, in_f32, SIZE_MAX / 2, 4, 1, true, g.out, gi));
}

/* ---- histograms --------------------------------------------------------------------- */

static pp_status valid_hist_even(pp_context *ctx) {
  uint64_t c[4];
  return pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 0.0, 1.0, c);
}

static void test_hist_even(pp_context *ctx) {
  const char *fn = "pp_histogram_even";
  uint64_t c[256];
  GOOD(fn, "f32", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 0.0, 1.0, c));
  GOOD(fn, "u8, 256 bins", pp_histogram_even(ctx, PP_U8, pixels, 96, 256, 0.0, 256.0, c));
  GOOD(fn, "i32, 1 bin, negative range", pp_histogram_even(ctx, PP_I32, in_i32, 16, 1, -100, -1, c));
  GOOD(fn, "n 0, in NULL", pp_histogram_even(ctx, PP_F64, NULL, 0, 8, 0.0, 1.0, c));

  valid_fn v = valid_hist_even;
  uint64_t *gc = (uint64_t *)(void *)g.out;
  const double nan = (double)NAN;
  BAD0(fn, v, pp_histogram_even(NULL, PP_F32, in_f32, 16, 4, 0.0, 1.0, gc));
  BAD(INV, fn, v, "dtype 7", pp_histogram_even(ctx, (pp_dtype)7, in_f32, 16, 4, 0.0, 1.0, gc));
  BAD(INV, fn, v, "in NULL", pp_histogram_even(ctx, PP_F32, NULL, 16, 4, 0.0, 1.0, gc));
  BAD(INV, fn, v, "counts NULL", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 0.0, 1.0, NULL));
  BAD(INV, fn, v, "counts NULL, n 0", pp_histogram_even(ctx, PP_F32, in_f32, 0, 4, 0.0, 1.0, NULL));
  BAD(INV, fn, v, "bins 0", pp_histogram_even(ctx, PP_F32, in_f32, 16, 0, 0.0, 1.0, gc));
  BAD(INV, fn, v, "bins 0, n 0", pp_histogram_even(ctx, PP_F32, in_f32, 0, 0, 0.0, 1.0, gc));
  BAD(INV, fn, v, "lo == hi", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 0.5, 0.5, gc));
  BAD(INV, fn, v, "lo > hi", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 1.0, 0.0, gc));
  BAD(INV, fn, v, "lo NaN", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, nan, 1.0, gc));
  BAD(INV, fn, v, "hi NaN", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, 0.0, nan, gc));
  BAD(INV, fn, v, "lo and hi NaN", pp_histogram_even(ctx, PP_F32, in_f32, 16, 4, nan, nan, gc));
  BAD(OVF, fn, v, "n * 8 overflowing",
      pp_histogram_even(ctx, PP_F64, in_f32, SIZE_MAX / 8 + 1, 4, 0.0, 1.0, gc));
  BAD(OVF, fn, v, "bins * 8 overflowing",
      pp_histogram_even(ctx, PP_F32, in_f32, 16, SIZE_MAX / 8 + 1, 0.0, 1.0, gc));
}

static pp_status valid_hist_range(pp_context *ctx) {
  uint64_t c[4];
  return pp_histogram_range(ctx, PP_F32, in_f32, 16, edges, 4, c);
}

static void test_hist_range(pp_context *ctx) {
  const char *fn = "pp_histogram_range";
  uint64_t c[16];
  const double inf_edges[4] = {-(double)INFINITY, 0.0, 0.5, (double)INFINITY};
  GOOD(fn, "f32", pp_histogram_range(ctx, PP_F32, in_f32, 16, edges, 4, c));
  GOOD(fn, "i32, 1 bin", pp_histogram_range(ctx, PP_I32, in_i32, 16, edges, 1, c));
  GOOD(fn, "infinite outer edges", pp_histogram_range(ctx, PP_F32, in_f32, 16, inf_edges, 3, c));
  GOOD(fn, "n 0, in NULL", pp_histogram_range(ctx, PP_F64, NULL, 0, edges, 4, c));

  valid_fn v = valid_hist_range;
  uint64_t *gc = (uint64_t *)(void *)g.out;
  const double equal[5] = {0.0, 0.25, 0.25, 0.75, 1.0};
  const double down[5] = {0.0, 0.5, 0.25, 0.75, 1.0};
  const double last_down[5] = {0.0, 0.25, 0.5, 0.75, 0.7};
  const double with_nan[5] = {0.0, (double)NAN, 0.5, 0.75, 1.0};
  const double all_same[2] = {1.0, 1.0};
  BAD0(fn, v, pp_histogram_range(NULL, PP_F32, in_f32, 16, edges, 4, gc));
  BAD(INV, fn, v, "dtype 7", pp_histogram_range(ctx, (pp_dtype)7, in_f32, 16, edges, 4, gc));
  BAD(INV, fn, v, "in NULL", pp_histogram_range(ctx, PP_F32, NULL, 16, edges, 4, gc));
  BAD(INV, fn, v, "edges NULL", pp_histogram_range(ctx, PP_F32, in_f32, 16, NULL, 4, gc));
  BAD(INV, fn, v, "counts NULL", pp_histogram_range(ctx, PP_F32, in_f32, 16, edges, 4, NULL));
  BAD(INV, fn, v, "bins 0", pp_histogram_range(ctx, PP_F32, in_f32, 16, edges, 0, gc));
  BAD(INV, fn, v, "equal edges", pp_histogram_range(ctx, PP_F32, in_f32, 16, equal, 4, gc));
  BAD(INV, fn, v, "decreasing edges", pp_histogram_range(ctx, PP_F32, in_f32, 16, down, 4, gc));
  BAD(INV, fn, v, "last edge decreasing",
      pp_histogram_range(ctx, PP_F32, in_f32, 16, last_down, 4, gc));
  BAD(INV, fn, v, "NaN edge", pp_histogram_range(ctx, PP_F32, in_f32, 16, with_nan, 4, gc));
  BAD(INV, fn, v, "1 bin, equal edges", pp_histogram_range(ctx, PP_F32, in_f32, 16, all_same, 1, gc));
  BAD(INV, fn, v, "equal edges, n 0", pp_histogram_range(ctx, PP_F32, NULL, 0, equal, 4, gc));
  BAD(OVF, fn, v, "n * 4 overflowing",
      pp_histogram_range(ctx, PP_U32, in_f32, SIZE_MAX / 4 + 1, edges, 4, gc));
  /* (bins + 1) edges of 8 bytes do not fit: refused before the edges are read */
  BAD(OVF, fn, v, "(bins + 1) * 8 overflowing",
      pp_histogram_range(ctx, PP_F32, in_f32, 16, edges, SIZE_MAX / 8, gc));
}

static pp_status valid_hist_image(pp_context *ctx) {
  uint64_t c[3 * 256];
  return pp_histogram_image(ctx, pixels, 4, 6, 16, 3, c);
}

static void test_hist_image(pp_context *ctx) {
  const char *fn = "pp_histogram_image";
  static uint64_t c[4 * 256];
  for (int ch = 1; ch <= 4; ch++) {
    GOOD(fn, "channels 1..4, pitch 16", pp_histogram_image(ctx, pixels, 4, 6, 16, ch, c));
    GOOD(fn, "channels 1..4, tight pitch",
         pp_histogram_image(ctx, pixels, 4, 6, 4 * (size_t)ch, ch, c));
  }
  GOOD(fn, "height 1", pp_histogram_image(ctx, pixels, 16, 1, 16, 1, c));
  GOOD(fn, "0 x 0, NULL pixels", pp_histogram_image(ctx, NULL, 0, 0, 0, 2, c));

  valid_fn v = valid_hist_image;
  uint64_t *gc = (uint64_t *)(void *)g.out;
  BAD0(fn, v, pp_histogram_image(NULL, pixels, 4, 6, 16, 3, gc));
  BAD(INV, fn, v, "channels 0", pp_histogram_image(ctx, pixels, 4, 6, 16, 0, gc));
  BAD(INV, fn, v, "channels 5", pp_histogram_image(ctx, pixels, 4, 6, 16, 5, gc));
  BAD(INV, fn, v, "channels -1", pp_histogram_image(ctx, pixels, 4, 6, 16, -1, gc));
  BAD(INV, fn, v, "pitch 11 < 4 * 3", pp_histogram_image(ctx, pixels, 4, 6, 11, 3, gc));
  BAD(INV, fn, v, "pitch 3 < 4 * 1", pp_histogram_image(ctx, pixels, 4, 6, 3, 1, gc));
  BAD(INV, fn, v, "pitch 15 < 4 * 4", pp_histogram_image(ctx, pixels, 4, 6, 15, 4, gc));
  BAD(INV, fn, v, "pixels NULL", pp_histogram_image(ctx, NULL, 4, 6, 16, 3, gc));
  BAD(INV, fn, v, "counts NULL", pp_histogram_image(ctx, pixels, 4, 6, 16, 3, NULL));
  BAD(OVF, fn, v, "width * channels overflowing",
      pp_histogram_image(ctx, pixels, SIZE_MAX / 2, 6, 16, 4, gc));
  BAD(OVF, fn, v, "pitch * height overflowing",
      pp_histogram_image(ctx, pixels, 4, 6, SIZE_MAX / 2, 1, gc));
}

/* ---- sgemm -------------------------------------------------------------------------- */

static size_t max1(size_t x) { return x ? x : 1; }

/* The CBLAS leading-dimension minimums. */
static size_t min_lda(pp_layout l, pp_trans ta, size_t m, size_t k) {
  if (l == PP_ROW_MAJOR) return ta == PP_NO_TRANS ? max1(k) : max1(m);
  return ta == PP_NO_TRANS ? max1(m) : max1(k);
}
static size_t min_ldb(pp_layout l, pp_trans tb, size_t k, size_t n) {
  if (l == PP_ROW_MAJOR) return tb == PP_NO_TRANS ? max1(n) : max1(k);
  return tb == PP_NO_TRANS ? max1(k) : max1(n);
}
static size_t min_ldc(pp_layout l, size_t m, size_t n) {
  return l == PP_ROW_MAJOR ? max1(n) : max1(m);
}

static pp_status valid_sgemm(pp_context *ctx) {
  float c[12];
  return pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 3, 4, 5, 1.0f, mat_a, 5, mat_b, 4,
                  0.0f, c, 4);
}

static void test_sgemm(pp_context *ctx) {
  const char *fn = "pp_sgemm";
  const size_t m = 3, n = 4, k = 5; /* distinct, so a rule using the wrong one shows */
  float c[64] = {0}; /* read when beta != 0 */
  float *gc = (float *)(void *)g.out;
  valid_fn v = valid_sgemm;
  for (int l = 0; l < 2; l++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        pp_layout L = (pp_layout)l;
        pp_trans TA = (pp_trans)ta, TB = (pp_trans)tb;
        size_t lda = min_lda(L, TA, m, k), ldb = min_ldb(L, TB, k, n), ldc = min_ldc(L, m, n);
        char what[96];
        snprintf(what, sizeof what, "%s %s %s, lda %zu ldb %zu ldc %zu",
                 l ? "col-major" : "row-major", ta ? "A^T" : "A", tb ? "B^T" : "B", lda, ldb, ldc);
        GOOD(fn, what, pp_sgemm(ctx, L, TA, TB, m, n, k, 1.0f, mat_a, lda, mat_b, ldb, 0.0f, c, ldc));
        GOOD(fn, what, pp_sgemm(ctx, L, TA, TB, m, n, k, 0.5f, mat_a, lda + 2, mat_b, ldb + 1, 2.0f,
                                c, ldc + 3));
        char bw[128];
        snprintf(bw, sizeof bw, "%s: lda %zu", what, lda - 1);
        BAD(INV, fn, v, bw,
            pp_sgemm(ctx, L, TA, TB, m, n, k, 1.0f, mat_a, lda - 1, mat_b, ldb, 0.0f, gc, ldc));
        snprintf(bw, sizeof bw, "%s: ldb %zu", what, ldb - 1);
        BAD(INV, fn, v, bw,
            pp_sgemm(ctx, L, TA, TB, m, n, k, 1.0f, mat_a, lda, mat_b, ldb - 1, 0.0f, gc, ldc));
        snprintf(bw, sizeof bw, "%s: ldc %zu", what, ldc - 1);
        BAD(INV, fn, v, bw,
            pp_sgemm(ctx, L, TA, TB, m, n, k, 1.0f, mat_a, lda, mat_b, ldb, 1.0f, gc, ldc - 1));
      }
  /* k == 0: A has no columns, yet lda must still be at least 1 */
  GOOD(fn, "k 0, lda 1", pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, 0, 1.0f, mat_a,
                                  1, mat_b, n, 0.0f, c, n));
  GOOD(fn, "m = n = k = 0, ld 1", pp_sgemm(ctx, PP_COL_MAJOR, PP_NO_TRANS, PP_TRANS, 0, 0, 0, 1.0f,
                                           mat_a, 1, mat_b, 1, 0.0f, c, 1));
  BAD(INV, fn, v, "k 0, lda 0",
      pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, 0, 1.0f, mat_a, 0, mat_b, n,
               0.0f, gc, n));

  BAD0(fn, v, pp_sgemm(NULL, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, k, 1.0f, mat_a, 5,
                       mat_b, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "layout 2", pp_sgemm(ctx, (pp_layout)2, PP_NO_TRANS, PP_NO_TRANS, m, n, k, 1.0f,
                                       mat_a, 5, mat_b, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "layout -1", pp_sgemm(ctx, (pp_layout)-1, PP_NO_TRANS, PP_NO_TRANS, m, n, k,
                                        1.0f, mat_a, 5, mat_b, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "ta 2", pp_sgemm(ctx, PP_ROW_MAJOR, (pp_trans)2, PP_NO_TRANS, m, n, k, 1.0f,
                                   mat_a, 5, mat_b, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "tb 99", pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, (pp_trans)99, m, n, k, 1.0f,
                                    mat_a, 5, mat_b, 5, 0.0f, gc, 4));
  BAD(INV, fn, v, "A NULL", pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, k, 1.0f,
                                     NULL, 5, mat_b, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "B NULL", pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, k, 1.0f,
                                     mat_a, 5, NULL, 4, 0.0f, gc, 4));
  BAD(INV, fn, v, "C NULL", pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, m, n, k, 1.0f,
                                     mat_a, 5, mat_b, 4, 0.0f, NULL, 4));
  BAD(OVF, fn, v, "m * lda overflowing",
      pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, SIZE_MAX / 8, 4, 16, 1.0f, mat_a, 16,
               mat_b, 4, 0.0f, gc, 4));
  BAD(OVF, fn, v, "n * ldb overflowing (col-major)",
      pp_sgemm(ctx, PP_COL_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 2, 2, 2, 1.0f, mat_a, 2, mat_b,
               SIZE_MAX / 4, 0.0f, gc, 2));
}

/* ---- convolution -------------------------------------------------------------------- */

static pp_status valid_conv2d(pp_context *ctx) {
  float d[8 * 6];
  return pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, PP_BORDER_CLAMP, d, 8);
}

static pp_status valid_conv2d_sep(pp_context *ctx) {
  float d[8 * 6];
  return pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 5, PP_BORDER_ZERO, d, 8);
}

static void test_conv2d(pp_context *ctx) {
  const char *fn = "pp_conv2d";
  float d[10 * 6];
  float *gd = (float *)(void *)g.out;
  for (int b = 0; b < 3; b++) {
    GOOD(fn, "borders, pitch 10", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, (pp_border)b, d, 10));
    GOOD(fn, "borders, tight pitch", pp_conv2d(ctx, src_img, 8, 6, 8, filt, 5, 3, (pp_border)b, d, 8));
    GOOD(fn, "borders, filter wider than the image",
         pp_conv2d(ctx, src_img, 3, 2, 10, filt, 9, 3, (pp_border)b, d, 3));
    GOOD(fn, "borders, 1 x 1 image", pp_conv2d(ctx, src_img, 1, 1, 1, filt, 3, 3, (pp_border)b, d, 1));
  }
  GOOD(fn, "even filter", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 2, 4, PP_BORDER_ZERO, d, 8));
  GOOD(fn, "1 x 1 filter", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 1, 1, PP_BORDER_MIRROR, d, 8));

  valid_fn v = valid_conv2d;
  BAD0(fn, v, pp_conv2d(NULL, src_img, 8, 6, 10, filt, 3, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "src NULL", pp_conv2d(ctx, NULL, 8, 6, 10, filt, 3, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "dst NULL", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, PP_BORDER_ZERO, NULL, 8));
  BAD(INV, fn, v, "filter NULL", pp_conv2d(ctx, src_img, 8, 6, 10, NULL, 3, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "fw 0", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 0, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "fh 0", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 0, PP_BORDER_CLAMP, gd, 8));
  BAD(INV, fn, v, "src_pitch 7 < width 8",
      pp_conv2d(ctx, src_img, 8, 6, 7, filt, 3, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "dst_pitch 7 < width 8",
      pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, PP_BORDER_ZERO, gd, 7));
  BAD(INV, fn, v, "border 3", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, (pp_border)3, gd, 8));
  BAD(INV, fn, v, "border -1", pp_conv2d(ctx, src_img, 8, 6, 10, filt, 3, 3, (pp_border)-1, gd, 8));
  BAD(OVF, fn, v, "pitch * height overflowing",
      pp_conv2d(ctx, src_img, 8, SIZE_MAX / 16, 8, filt, 3, 3, PP_BORDER_ZERO, gd, 8));
  BAD(OVF, fn, v, "fw * fh overflowing",
      pp_conv2d(ctx, src_img, 8, 6, 10, filt, SIZE_MAX / 2, 4, PP_BORDER_ZERO, gd, 8));
}

static void test_conv2d_separable(pp_context *ctx) {
  const char *fn = "pp_conv2d_separable";
  float d[10 * 6];
  float *gd = (float *)(void *)g.out;
  for (int b = 0; b < 3; b++)
    GOOD(fn, "borders", pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 5, (pp_border)b,
                                           d, 9));
  GOOD(fn, "1 x 1 filters", pp_conv2d_separable(ctx, src_img, 8, 6, 8, filt, 1, filt, 1,
                                                PP_BORDER_CLAMP, d, 8));

  valid_fn v = valid_conv2d_sep;
  BAD0(fn, v, pp_conv2d_separable(NULL, src_img, 8, 6, 10, filt, 3, filt, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "src NULL",
      pp_conv2d_separable(ctx, NULL, 8, 6, 10, filt, 3, filt, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "dst NULL",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 3, PP_BORDER_ZERO, NULL, 8));
  BAD(INV, fn, v, "row_filter NULL",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, NULL, 3, filt, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "col_filter NULL",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, NULL, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "row_len 0",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 0, filt, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "col_len 0",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 0, PP_BORDER_MIRROR, gd, 8));
  BAD(INV, fn, v, "src_pitch 7 < width 8",
      pp_conv2d_separable(ctx, src_img, 8, 6, 7, filt, 3, filt, 3, PP_BORDER_ZERO, gd, 8));
  BAD(INV, fn, v, "dst_pitch 5 < width 8",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 3, PP_BORDER_ZERO, gd, 5));
  BAD(INV, fn, v, "border 3",
      pp_conv2d_separable(ctx, src_img, 8, 6, 10, filt, 3, filt, 3, (pp_border)3, gd, 8));
  BAD(OVF, fn, v, "pitch * height overflowing",
      pp_conv2d_separable(ctx, src_img, 8, SIZE_MAX / 16, 8, filt, 3, filt, 3, PP_BORDER_ZERO, gd,
                          8));
}

/* ---- n-body ------------------------------------------------------------------------- */

/* Bodies of its own, so the valid call never disturbs g. */
typedef struct own_bodies {
  float x[BODIES], y[BODIES], z[BODIES], vx[BODIES], vy[BODIES], vz[BODIES], m[BODIES];
} own_bodies;

static pp_bodies own(own_bodies *o) {
  for (int i = 0; i < BODIES; i++) {
    o->x[i] = g_pristine.bx[i];
    o->y[i] = g_pristine.by[i];
    o->z[i] = g_pristine.bz[i];
    o->vx[i] = g_pristine.bvx[i];
    o->vy[i] = g_pristine.bvy[i];
    o->vz[i] = g_pristine.bvz[i];
    o->m[i] = g_pristine.bm[i];
  }
  pp_bodies b = {o->x, o->y, o->z, o->vx, o->vy, o->vz, o->m, BODIES};
  return b;
}

static pp_status valid_accel(pp_context *ctx) {
  own_bodies o;
  pp_bodies b = own(&o);
  float ax[BODIES], ay[BODIES], az[BODIES];
  return pp_nbody_accel(ctx, &b, 0.05f, ax, ay, az);
}

static pp_status valid_step(pp_context *ctx) {
  own_bodies o;
  pp_bodies b = own(&o);
  return pp_nbody_step(ctx, &b, 0.001f, 0.05f, 2);
}

static pp_status valid_energy(pp_context *ctx) {
  own_bodies o;
  pp_bodies b = own(&o);
  double k, p;
  return pp_nbody_energy(ctx, &b, 0.05f, &k, &p);
}

/* b with array `which` (0..6: x y z vx vy vz mass) set to NULL */
static pp_bodies without(size_t which) {
  pp_bodies b = bodies_of_g(BODIES);
  float **arr[7] = {&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz, &b.mass};
  *arr[which] = NULL;
  return b;
}

static const char *array_names[7] = {"x NULL", "y NULL", "z NULL", "vx NULL", "vy NULL",
                                     "vz NULL", "mass NULL"};

static void test_nbody(pp_context *ctx) {
  own_bodies o;
  pp_bodies ob = own(&o);
  pp_bodies empty = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0};
  pp_bodies one = ob;
  one.n = 1;
  float ax[BODIES], ay[BODIES], az[BODIES];
  double k, p;
  float *gax = (float *)(void *)g.out, *gay = gax + 16, *gaz = gax + 32;

  /* accel */
  const char *fn = "pp_nbody_accel";
  GOOD(fn, "8 bodies", pp_nbody_accel(ctx, &ob, 0.05f, ax, ay, az));
  GOOD(fn, "1 body", pp_nbody_accel(ctx, &one, 0.05f, ax, ay, az));
  GOOD(fn, "0 bodies, NULL arrays", pp_nbody_accel(ctx, &empty, 0.05f, NULL, NULL, NULL));
  valid_fn v = valid_accel;
  pp_bodies gb = bodies_of_g(BODIES);
  BAD0(fn, v, pp_nbody_accel(NULL, &gb, 0.05f, gax, gay, gaz));
  BAD(INV, fn, v, "bodies NULL", pp_nbody_accel(ctx, NULL, 0.05f, gax, gay, gaz));
  /* positions and masses are what accelerations need; velocities are not read */
  const size_t accel_needs[4] = {0, 1, 2, 6};
  for (int i = 0; i < 4; i++) {
    pp_bodies b = without(accel_needs[i]);
    BAD(INV, fn, v, array_names[accel_needs[i]], pp_nbody_accel(ctx, &b, 0.05f, gax, gay, gaz));
  }
  BAD(INV, fn, v, "ax NULL", pp_nbody_accel(ctx, &gb, 0.05f, NULL, gay, gaz));
  BAD(INV, fn, v, "ay NULL", pp_nbody_accel(ctx, &gb, 0.05f, gax, NULL, gaz));
  BAD(INV, fn, v, "az NULL", pp_nbody_accel(ctx, &gb, 0.05f, gax, gay, NULL));
  {
    pp_bodies huge = bodies_of_g(SIZE_MAX / 4 + 1);
    BAD(OVF, fn, v, "n * 4 overflowing", pp_nbody_accel(ctx, &huge, 0.05f, gax, gay, gaz));
  }

  /* step */
  fn = "pp_nbody_step";
  ob = own(&o);
  GOOD(fn, "8 bodies, 3 steps", pp_nbody_step(ctx, &ob, 0.001f, 0.05f, 3));
  GOOD(fn, "0 steps", pp_nbody_step(ctx, &ob, 0.001f, 0.05f, 0));
  GOOD(fn, "0 bodies, NULL arrays", pp_nbody_step(ctx, &empty, 0.001f, 0.05f, 2));
  v = valid_step;
  gb = bodies_of_g(BODIES);
  BAD0(fn, v, pp_nbody_step(NULL, &gb, 0.001f, 0.05f, 1));
  BAD(INV, fn, v, "bodies NULL", pp_nbody_step(ctx, NULL, 0.001f, 0.05f, 1));
  for (size_t i = 0; i < 7; i++) {
    pp_bodies b = without(i);
    BAD(INV, fn, v, array_names[i], pp_nbody_step(ctx, &b, 0.001f, 0.05f, 1));
  }
  {
    pp_bodies huge = bodies_of_g(SIZE_MAX / 4 + 1);
    BAD(OVF, fn, v, "n * 4 overflowing", pp_nbody_step(ctx, &huge, 0.001f, 0.05f, 1));
  }

  /* energy */
  fn = "pp_nbody_energy";
  ob = own(&o);
  GOOD(fn, "8 bodies", pp_nbody_energy(ctx, &ob, 0.05f, &k, &p));
  GOOD(fn, "0 bodies, NULL arrays", pp_nbody_energy(ctx, &empty, 0.05f, &k, &p));
  v = valid_energy;
  gb = bodies_of_g(BODIES);
  BAD0(fn, v, pp_nbody_energy(NULL, &gb, 0.05f, &g.kin, &g.pot));
  BAD(INV, fn, v, "bodies NULL", pp_nbody_energy(ctx, NULL, 0.05f, &g.kin, &g.pot));
  for (size_t i = 0; i < 7; i++) {
    pp_bodies b = without(i);
    BAD(INV, fn, v, array_names[i], pp_nbody_energy(ctx, &b, 0.05f, &g.kin, &g.pot));
  }
  BAD(INV, fn, v, "kinetic NULL", pp_nbody_energy(ctx, &gb, 0.05f, NULL, &g.pot));
  BAD(INV, fn, v, "potential NULL", pp_nbody_energy(ctx, &gb, 0.05f, &g.kin, NULL));
  {
    pp_bodies huge = bodies_of_g(SIZE_MAX / 4 + 1);
    BAD(OVF, fn, v, "n * 4 overflowing", pp_nbody_energy(ctx, &huge, 0.05f, &g.kin, &g.pot));
  }
}

/* Occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int c = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) c++;
  return c;
}

/* A staging buffer that cannot be had (an unaligned f32 input is staged on the CPU, host
 * memory on CUDA; 2^50 bytes fit no address space): OUT_OF_MEMORY with one clean sentence,
 * "pp_reduce: cannot stage in (N bytes): <the allocator's reason>", which once came out
 * doubled and cut because the text was formatted from the context's error buffer into
 * itself. The message left by an earlier failure must not appear in it. */
static void test_stage_failure_text(pp_context *ctx) {
  float *buf = th_xmalloc(64);
  memset(buf, 0, 64);
  buf[0] = 42.0f;
  const size_t n = (size_t)1 << 48;
  th_poison_error(ctx);
  pp_status s = pp_reduce(ctx, PP_SUM, PP_F32, (const char *)buf + 9, n, buf);
  const char *msg = pp_last_error(ctx);
  CHECK_STATUS(s, PP_ERR_OUT_OF_MEMORY, "pp_reduce staging 2^50 bytes");
  CHECK(strncmp(msg, "pp_reduce: cannot stage in (1125899906842624 bytes): ", 53) == 0 &&
            count_of(msg, "pp_reduce") == 1 && count_of(msg, "cannot stage") == 1 &&
            count_of(msg, "pp_malloc") == 0 && strlen(msg) > 53,
        "staging failure message: \"%s\"", msg);
  CHECK(buf[0] == 42.0f, "pp_reduce wrote its output although staging failed");
  free(buf);
  expect_good(ctx, valid_scan(ctx), "pp_scan", __LINE__, "after a failed staging");
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  init_data();

  test_stage_failure_text(ctx);
  test_scan(ctx);
  test_select_like(ctx, "pp_select", pp_select, valid_select);
  test_select_flagged(ctx);
  test_select_like(ctx, "pp_partition", pp_partition, valid_partition);
  test_sort(ctx);
  test_sort_copy(ctx);
  test_merge(ctx);
  test_topk(ctx);
  test_topk_rows(ctx);
  test_hist_even(ctx);
  test_hist_range(ctx);
  test_hist_image(ctx);
  test_sgemm(ctx);
  test_conv2d(ctx);
  test_conv2d_separable(ctx);
  test_nbody(ctx);
  return th_finish(ctx);
}
