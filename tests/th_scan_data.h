/*
 * th_scan_data.h — what test_scan.c and test_select.c share (header only): the data
 * patterns each dtype is generated in, the memory placements the calls rotate over
 * (input and output in host or pp_malloc memory, aligned or one element off, in place),
 * the sentinel-guarded buffers, and the sweep bookkeeping.
 *
 * The contracts checked are written in the header comments of those two programs.
 */
#ifndef PARPRIM_TEST_SCAN_DATA_H
#define PARPRIM_TEST_SCAN_DATA_H

#include "th_values.h"

#include <float.h>
#include <time.h>

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

static inline int pattern_applies(pp_dtype t, int p) {
  if (p >= P_NAN_SOME) return is_float(t);
  if (p >= P_ALL_MAX) return !is_float(t);
  return 1;
}

/* The large "near" base: values differ only in the last bits, beyond what a double (for
 * 64-bit types) or a float (for 32-bit types) can tell apart. */
static inline val near_base(pp_dtype t, int k) {
  switch (t) {
  case PP_U8: return vu8((uint8_t)(250 + k));
  case PP_I32: return vi32(-(1 << 30) - 3 + k);
  case PP_U32: return vu32((1u << 31) + 1u + (uint32_t)k);
  case PP_I64: return vi64(-(INT64_C(1) << 60) - 3 + k);
  default: return vu64((UINT64_C(1) << 63) + 1 + (uint64_t)k);
  }
}

static inline void gen(pp_dtype t, int p, size_t n, void *h, th_rng *r) {
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
      case P_NAN_INF: x = th_nan_inf(r, 2); break;
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
static inline void put(pp_context *ctx, int dev, void *dst, const void *src, size_t bytes) {
  if (!bytes) return;
  if (dev)
    th_copy(ctx, dst, src, bytes);
  else
    memcpy(dst, src, bytes);
}

static inline void get(pp_context *ctx, int dev, void *dst, const void *src, size_t bytes) {
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

static inline void bufs_make(pp_context *ctx, size_t cap) {
  g_b.cap = cap;
  for (int k = 0; k < 3; k++) {
    g_b.host[k] = th_xmalloc(cap);
    g_b.dev[k] = th_dev_alloc(ctx, cap);
  }
  g_b.sent = th_xmalloc(cap);
  memset(g_b.sent, SENT, cap);
  g_b.back = th_xmalloc(cap);
}

static inline void bufs_free(pp_context *ctx) {
  for (int k = 0; k < 3; k++) {
    free(g_b.host[k]);
    th_dev_free(ctx, g_b.dev[k]);
  }
  free(g_b.sent);
  free(g_b.back);
}

/* The case's buffers: (n + 2) elements of es bytes. */
static inline bufs *bufs_for(size_t n, size_t es) {
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

static inline place place_of(int v) {
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

static inline void place_desc(place pl, char *buf, size_t len) {
  if (pl.inplace)
    snprintf(buf, len, "in place in %s+%d", pl.in_dev ? "pp_malloc" : "host", pl.in_off);
  else
    snprintf(buf, len, "in=%s+%d out=%s+%d", pl.in_dev ? "pp_malloc" : "host", pl.in_off,
             pl.out_dev ? "pp_malloc" : "host", pl.out_off);
}

/* Bytes [0, lo) and [hi, bytes) of the read-back buffer still hold the sentinel. */
static inline int guards_ok(const unsigned char *back, size_t lo, size_t hi, size_t bytes) {
  for (size_t i = 0; i < lo; i++)
    if (back[i] != SENT) return 0;
  for (size_t i = hi; i < bytes; i++)
    if (back[i] != SENT) return 0;
  return 1;
}

/* ---- sweep bookkeeping -------------------------------------------------------------- */

static long g_calls;
static int g_quick; /* PARPRIM_TEST_QUICK */

/* The millions: sizes that span hundreds of the CUDA kernels' tiles for every element
 * size; each big case names its dtype, pattern, size and (scan) the ops it is a trap for. */
#define M1 ((1u << 20) + 3)
#define M3 (3 * (1u << 20) + 17)
struct big_case {
  pp_dtype t;
  int p;
  size_t n;
  unsigned ops;
};

static inline double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
