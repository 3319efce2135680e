/*
 * th_values.h — one element of any dtype as a value, for the test programs that check
 * every dtype against a reference written in the test (header only, included after
 * harness.h).
 *
 * A `val` holds the bytes of one element; load/store move it to and from an array of
 * that dtype, vrank/vsmall/vflt build one, same_val compares bit for bit (NaN equal to
 * NaN whatever its payload) and fmt_val prints it exactly (%a for floats).
 */
#ifndef PARPRIM_TEST_VALUES_H
#define PARPRIM_TEST_VALUES_H

#include "harness.h"

#include <inttypes.h>
#include <math.h>

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

/* The differential sweeps' outer loop: body runs once for each dtype, with a random stream
 * of that dtype's own (stream_base + its place in all_types, so adding cases to one dtype
 * leaves the others' data alone), and a line "<what> <dtype>: ok" or ": FAILURES" says
 * where to look in a long log. */
typedef void (*th_type_sweep)(pp_context *ctx, pp_dtype t, th_rng *r);
static inline void th_sweep_types(pp_context *ctx, const char *what, uint64_t stream_base,
                                  th_type_sweep body) {
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    const pp_dtype t = all_types[ti];
    th_rng r = th_rng_make(stream_base + ti);
    const long failed_before = th_state_get()->failed;
    body(ctx, t, &r);
    printf("%s %s: %s\n", what, pp_dtype_string(t),
           th_state_get()->failed == failed_before ? "ok" : "FAILURES");
    fflush(stdout);
  }
}

/* Float test data with specials among ordinary values: of ten draws, `nans` are NaN, one
 * +inf, one -inf, the rest uniform in [-100, 100). */
static inline double th_nan_inf(th_rng *r, uint64_t nans) {
  const uint64_t k = th_below(r, 10);
  if (k < nans) return (double)NAN;
  if (k < nans + 2) return k == nans ? (double)INFINITY : -(double)INFINITY;
  return th_range(r, -100, 100);
}

static inline int is_float(pp_dtype t) { return t == PP_F32 || t == PP_F64; }
static inline int is_signed(pp_dtype t) { return t == PP_I32 || t == PP_I64; }

static inline const char *opname(pp_op op) {
  return op == PP_SUM ? "SUM" : op == PP_MIN ? "MIN" : op == PP_MAX ? "MAX" : "bad-op";
}
static inline const char *cmpname(pp_cmp c) {
  static const char *names[] = {">", ">=", "<", "<=", "==", "!="};
  return (unsigned)c < 6 ? names[c] : "bad";
}

static inline val load(pp_dtype t, const void *p, size_t i) {
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

static inline void store(pp_dtype t, void *p, size_t i, val v) {
  memcpy((unsigned char *)p + i * pp_dtype_size(t), v.b, pp_dtype_size(t));
}

static inline int val_isnan(pp_dtype t, val v) {
  return (t == PP_F32 && isnan(v.f32)) || (t == PP_F64 && isnan(v.f64));
}

/* Same bits, or both NaN (payloads may legitimately differ). */
static inline int same_val(pp_dtype t, val a, val b) {
  if (val_isnan(t, a) || val_isnan(t, b)) return val_isnan(t, a) && val_isnan(t, b);
  return memcmp(a.b, b.b, pp_dtype_size(t)) == 0;
}

static inline long double as_ld(pp_dtype t, val v) {
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

static inline const char *fmt_val(pp_dtype t, val v, char *buf, size_t len) {
  switch (t) {
  case PP_U8: snprintf(buf, len, "%u", (unsigned)v.u8); break;
  case PP_I32: snprintf(buf, len, "%" PRId32, v.i32); break;
  case PP_U32: snprintf(buf, len, "%" PRIu32, v.u32); break;
  case PP_I64: snprintf(buf, len, "%" PRId64, v.i64); break;
  case PP_U64: snprintf(buf, len, "%" PRIu64, v.u64); break;
  case PP_F32: snprintf(buf, len, "%.9g (%a)", (double)v.f32, (double)v.f32); break;
  case PP_F64: snprintf(buf, len, "%.17g (%a)", v.f64, v.f64); break;
  default: snprintf(buf, len, "?"); break;
  }
  return buf;
}

static inline val vu8(uint8_t x) { val v; memset(&v, 0, sizeof v); v.u8 = x; return v; }
static inline val vi32(int32_t x) { val v; memset(&v, 0, sizeof v); v.i32 = x; return v; }
static inline val vu32(uint32_t x) { val v; memset(&v, 0, sizeof v); v.u32 = x; return v; }
static inline val vi64(int64_t x) { val v; memset(&v, 0, sizeof v); v.i64 = x; return v; }
static inline val vu64(uint64_t x) { val v; memset(&v, 0, sizeof v); v.u64 = x; return v; }
static inline val vf32(float x) { val v; memset(&v, 0, sizeof v); v.f32 = x; return v; }
static inline val vf64(double x) { val v; memset(&v, 0, sizeof v); v.f64 = x; return v; }

/* A double as a value of t (floats only). */
static inline val vflt(pp_dtype t, double x) { return t == PP_F32 ? vf32((float)x) : vf64(x); }

/* Integers come from a "rank" in [0, 2^64) mapped monotonically onto t: rank 0 is the
 * lowest value of every integer type and UINT64_MAX the highest. */
static inline val vrank(pp_dtype t, uint64_t u) {
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

/* x converted to t as C converts a double (truncated toward zero for integers). */
static inline val vcast(pp_dtype t, double x) {
  switch (t) {
  case PP_U8: return vu8((uint8_t)x);
  case PP_I32: return vi32((int32_t)x);
  case PP_U32: return vu32((uint32_t)x);
  case PP_I64: return vi64((int64_t)x);
  case PP_U64: return vu64((uint64_t)x);
  case PP_F32: return vf32((float)x);
  default: return vf64(x);
  }
}

/* A small integer as t (wrapping for unsigned types is not used: v >= 0 there). */
static inline val vsmall(pp_dtype t, int x) {
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

/* The smallest k with 2^k >= n: the depth of a pairwise or tree reduction over n. */
static inline unsigned ceil_log2(size_t n) {
  unsigned k = 0;
  while (k < 64 && ((size_t)1 << k) < n) k++;
  return k;
}

#endif
