/*
 * fuzz_api.c — libFuzzer harness for the public API (CPU backend), under ASan and UBSan.
 *
 * The input bytes are read as a short program: each call picks a primitive, then small
 * sizes, enum values (out of range too), scalars (NaN, infinities, extremes) and, for every
 * pointer argument, where it points: NULL, a buffer of its own of exactly the size the call
 * may touch (so ASan sees one byte too far), the same buffer one byte off its element
 * alignment, the same memory as an earlier argument, or memory overlapping an earlier
 * argument by a few bytes. The buffers hold bytes drawn from the input, so floats come as
 * NaN, infinities, subnormals and -0.0 as often as anything else.
 *
 * After each call the harness checks what it can know without a second implementation:
 *   - the status is a pp_status; a failure leaves a message that names a pp_ function, and
 *     every byte of every buffer as it was (nothing written on failure);
 *   - a call whose arguments are wrong on their face (NULL data, bad enum or dtype, an
 *     output overlapping another argument other than exactly) does not return PP_OK;
 *   - on PP_OK, integer results hold simple invariants: sums and scans equal a serial loop,
 *     counts do not exceed n and equal the serial count, sorted output is ordered, top-k
 *     values are in order and at their indices, histogram counts add up.
 * Any violation aborts, which libFuzzer reports with the input that caused it.
 * libFuzzer: https://llvm.org/docs/LibFuzzer.html
 */
#include "parprim.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the input ------------------------------------------------------------- */

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint8_t rd8(reader *r) {
  if (!r->n) return 0;
  r->n--;
  return *r->p++;
}
static uint16_t rd16(reader *r) { return (uint16_t)(rd8(r) | (rd8(r) << 8)); }
static uint64_t rd64(reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)rd8(r) << (8 * i);
  return v;
}

/* Mostly tiny, sometimes a few thousand, rarely past the CPU backend's parallel threshold
 * (65536) so the OpenMP paths run too. */
static size_t rd_size(reader *r, size_t small_max) {
  uint8_t b = rd8(r);
  if (b < 224) return b % (small_max + 1);
  if (b < 255) return rd16(r) % 3000;
  return 65536 + rd16(r) % 4096;
}

/* An enum value: in range mostly, else just outside it or far off. */
static int rd_enum(reader *r, int count) {
  uint8_t b = rd8(r);
  if (b < 240) return b % count;
  if (b < 248) return count + (b & 3);
  return b & 1 ? -1 : (int)0x7fffffff;
}

static double rd_double(reader *r) {
  static const double special[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 1e308,
                                   -1e308, 5e-324, 0.5, 255.0, 256.0, 4294967296.0, -2.5, 1e-30};
  uint8_t b = rd8(r);
  if (b < 128) return special[b % 16];
  if (b < 192) return (double)(int16_t)rd16(r) / 16.0;
  uint64_t bits = rd64(r);
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

static float rd_float(reader *r) { return (float)rd_double(r); }

/* ---- arguments and their memory --------------------------------------------------------- */

#define MAXA 12

typedef struct arg {
  size_t bytes;  /* what the call may touch through it */
  int region;    /* -1: NULL */
  size_t off;
  int out;       /* written by the call */
  int early;     /* read once before anything is written (select's value), or not read at
                    all (the velocities for pp_nbody_accel): an output may overlap it */
} arg;

typedef struct call {
  arg a[MAXA];
  int na;
  size_t rsize[MAXA];
  unsigned char *rbase[MAXA];
  unsigned char *snap[MAXA];
  int nr;
} call;

static const char *current_call = ""; /* the primitive being called, for the report */

static const struct call *current_args; /* its arguments, for the report */

static void fail_now(const char *what, int line) {
  fprintf(stderr, "fuzz_api: %s: invariant broken at line %d: %s\n", current_call, line, what);
  for (int i = 0; current_args && i < current_args->na; i++) {
    const arg *a = &current_args->a[i];
    fprintf(stderr, "  argument %d (%s): %zu bytes, %s region %d + %zu\n", i,
            a->out ? "written" : "read", a->bytes, a->region < 0 ? "NULL," : "", a->region, a->off);
  }
  abort();
}
#define REQUIRE(cond, what)                                                                 \
  do {                                                                                      \
    if (!(cond)) fail_now(what, __LINE__);                                                  \
  } while (0)

/* Declares one pointer argument of `bytes` and decides where it points. */
static int add_arg(call *c, reader *r, size_t bytes, int out) {
  int i = c->na++;
  arg *a = &c->a[i];
  a->bytes = bytes;
  a->out = out;
  a->off = 0;
  uint8_t m = rd8(r) % 16;
  int prev = -1;
  if (i > 0 && (m == 1 || m == 2)) {
    prev = (int)(rd8(r) % (unsigned)i);
    if (c->a[prev].region < 0) prev = -1;
  }
  if (m == 0) {
    a->region = -1;
  } else if (prev >= 0 && m == 1) { /* the same memory as an earlier argument */
    a->region = c->a[prev].region;
    a->off = c->a[prev].off;
  } else if (prev >= 0 && m == 2) { /* a few bytes into an earlier argument */
    a->region = c->a[prev].region;
    a->off = c->a[prev].off + 1 + rd8(r) % 15;
  } else {
    a->region = c->nr++;
    c->rsize[a->region] = 0;
    a->off = m == 3 ? 1 : 0; /* off its element alignment */
  }
  return i;
}

static void *ptr(const call *c, int i) {
  const arg *a = &c->a[i];
  return a->region < 0 ? NULL : c->rbase[a->region] + a->off;
}

/* The bytes argument i held before the call. */
static const unsigned char *before(const call *c, int i) {
  const arg *a = &c->a[i];
  return a->region < 0 ? NULL : c->snap[a->region] + a->off;
}

/* Allocates every region at exactly the size its arguments need and fills it with input
 * bytes (repeated when the input runs short). */
static void materialize(call *c, reader *r) {
  for (int i = 0; i < c->na; i++) {
    const arg *a = &c->a[i];
    if (a->region >= 0 && a->off + a->bytes > c->rsize[a->region])
      c->rsize[a->region] = a->off + a->bytes;
  }
  uint64_t x = rd64(r) | 1;
  for (int k = 0; k < c->nr; k++) {
    size_t sz = c->rsize[k];
    c->rbase[k] = malloc(sz ? sz : 1);
    REQUIRE(c->rbase[k], "harness allocation");
    for (size_t j = 0; j < sz; j++) { /* xorshift64 from the input: cheap bulk bytes */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c->rbase[k][j] = (unsigned char)(x >> 24);
    }
  }
}

static void snapshot(call *c) {
  for (int k = 0; k < c->nr; k++) {
    c->snap[k] = malloc(c->rsize[k] ? c->rsize[k] : 1);
    REQUIRE(c->snap[k], "harness allocation");
    memcpy(c->snap[k], c->rbase[k], c->rsize[k]);
  }
}

static void release(call *c) {
  for (int k = 0; k < c->nr; k++) {
    free(c->rbase[k]);
    free(c->snap[k]);
  }
}

static int unchanged(const call *c) {
  for (int k = 0; k < c->nr; k++)
    if (memcmp(c->rbase[k], c->snap[k], c->rsize[k]) != 0) return 0;
  return 1;
}

/* 1 when arguments i and j share a byte. */
static int overlaps(const call *c, int i, int j) {
  const arg *a = &c->a[i], *b = &c->a[j];
  if (a->region < 0 || b->region < 0 || a->region != b->region || !a->bytes || !b->bytes) return 0;
  return a->off < b->off + b->bytes && b->off < a->off + a->bytes;
}

/* An output that shares memory with another argument, other than exactly one input
 * (the in-place form some entry points allow): no call may accept it. */
static int bad_overlap(const call *c) {
  for (int i = 0; i < c->na; i++) {
    if (!c->a[i].out) continue;
    for (int j = 0; j < c->na; j++) {
      if (j == i || c->a[j].early || !overlaps(c, i, j)) continue;
      int exact = c->a[i].off == c->a[j].off && c->a[i].bytes == c->a[j].bytes;
      if (!exact || c->a[j].out) return 1;
    }
  }
  return 0;
}

/* NULL where the call needs memory */
static int null_data(const call *c, int i) { return c->a[i].region < 0 && c->a[i].bytes > 0; }

/* ---- typed reads of integer data ----------------------------------------------------------- */

static int is_int(int t) { return t == PP_U8 || t == PP_I32 || t == PP_U32 || t == PP_I64 || t == PP_U64; }
static int is_dtype(int t) { return t >= PP_U8 && t <= PP_F64; }
static size_t dsize(int t) { return is_dtype(t) ? pp_dtype_size((pp_dtype)t) : 0; }

/* element i of integer type t as a signed 128-bit-safe comparable pair: (value as int64 or
 * uint64, ordered correctly through the sign bit) */
static uint64_t key_of(int t, const unsigned char *p, size_t i) {
  switch (t) {
  case PP_U8: return p[i];
  case PP_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return (uint64_t)(int64_t)v ^ (1ull << 63); }
  case PP_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case PP_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (uint64_t)v ^ (1ull << 63); }
  default: { uint64_t v; memcpy(&v, p + 8 * i, 8); return v; }
  }
}
/* the raw bits of element i, zero-extended (wrapping sums compare on these) */
static uint64_t bits_of(int t, const unsigned char *p, size_t i) {
  size_t es = dsize(t);
  uint64_t v = 0;
  memcpy(&v, p + es * i, es); /* little-endian */
  return v;
}
/* element i of a uint64_t array that may sit off its alignment */
static uint64_t ld64(const void *p, size_t i) {
  uint64_t v;
  memcpy(&v, (const unsigned char *)p + 8 * i, 8);
  return v;
}
static uint64_t mask_of(int t) { return dsize(t) == 8 ? ~0ull : (1ull << (8 * dsize(t))) - 1; }

static int cmp_holds(int cmp, uint64_t x, uint64_t v) {
  switch (cmp) {
  case PP_GT: return x > v;
  case PP_GE: return x >= v;
  case PP_LT: return x < v;
  case PP_LE: return x <= v;
  case PP_EQ: return x == v;
  default: return x != v;
  }
}

/* ---- the calls -------------------------------------------------------------------------------- */

static pp_context *ctx;

/* Common checks after a call; returns 1 when the call succeeded. */
static int after(call *c, pp_status s, int must_fail) {
  current_args = c;
  REQUIRE((int)s >= PP_OK && (int)s <= PP_ERR_OVERFLOW, "status is not a pp_status");
  if (s == PP_OK) {
    REQUIRE(!must_fail, "PP_OK for arguments that are wrong on their face");
    return 1;
  }
  const char *msg = pp_last_error(ctx);
  REQUIRE(msg && strncmp(msg, "pp_", 3) == 0, "a failure without a message naming the function");
  REQUIRE(s != PP_ERR_DEVICE && s != PP_ERR_NO_DEVICE, "a device error on the CPU backend");
  REQUIRE(unchanged(c), "memory written by a call that failed");
  return 0;
}

/* The input array a 1-D call starts with: *n elements (up to max_n) of dtype t, 4 bytes
 * each when t is not a dtype; read right after the call's enumerations. */
static int add_input(call *c, reader *r, int t, size_t max_n, size_t *n, size_t *es) {
  *n = rd_size(r, max_n);
  *es = dsize(t) ? dsize(t) : 4;
  return add_arg(c, r, *n * *es, 0);
}

static void do_reduce(reader *r, int which) {
  call c = {0};
  int op = rd_enum(r, 3), t = rd_enum(r, 7);
  size_t n, es;
  int in = add_input(&c, r, t, 64, &n, &es);
  int out = add_arg(&c, r, es, 1);
  int idx = which ? add_arg(&c, r, 8, 1) : -1;
  materialize(&c, r);
  snapshot(&c);
  int must_fail = !is_dtype(t) || op < 0 || op > 2 || null_data(&c, in) || !ptr(&c, out) ||
                  bad_overlap(&c) || (which && (op == PP_SUM || !ptr(&c, idx)));
  pp_status s = which ? pp_argreduce(ctx, (pp_op)op, (pp_dtype)t, ptr(&c, in), n, ptr(&c, out),
                                     (uint64_t *)ptr(&c, idx))
                      : pp_reduce(ctx, (pp_op)op, (pp_dtype)t, ptr(&c, in), n, ptr(&c, out));
  if (after(&c, s, must_fail) && is_int(t) && !bad_overlap(&c)) {
    const unsigned char *x = before(&c, in);
    uint64_t acc = op == PP_SUM ? 0 : n ? key_of(t, x, 0) : 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t k = key_of(t, x, i);
      if (op == PP_SUM) acc += bits_of(t, x, i);
      else if (op == PP_MIN ? k < acc : k > acc) { acc = k; at = i; }
    }
    if (op == PP_SUM) {
      REQUIRE(bits_of(t, ptr(&c, out), 0) == (acc & mask_of(t)), "integer sum differs from a loop");
    } else if (n > 0) {
      REQUIRE(key_of(t, ptr(&c, out), 0) == acc, "integer min/max differs from a loop");
      if (which) {
        uint64_t got;
        memcpy(&got, ptr(&c, idx), 8);
        REQUIRE(got == at, "argreduce index is not the first extreme");
      }
    }
  }
  release(&c);
}

static void do_scan(reader *r) {
  call c = {0};
  int op = rd_enum(r, 3), t = rd_enum(r, 7), inclusive = rd8(r) & 1;
  size_t n, es;
  int in = add_input(&c, r, t, 64, &n, &es);
  int out = add_arg(&c, r, n * es, 1);
  materialize(&c, r);
  snapshot(&c);
  int must_fail = !is_dtype(t) || op < 0 || op > 2 || null_data(&c, in) || null_data(&c, out) ||
                  bad_overlap(&c);
  pp_status s = pp_scan(ctx, (pp_op)op, (pp_dtype)t, ptr(&c, in), ptr(&c, out), n, inclusive != 0);
  if (after(&c, s, must_fail) && is_int(t) && op == PP_SUM && !bad_overlap(&c)) {
    const unsigned char *x = before(&c, in);
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t v = bits_of(t, x, i);
      if (inclusive) acc += v;
      REQUIRE(bits_of(t, ptr(&c, out), i) == (acc & mask_of(t)), "integer scan differs from a loop");
      if (!inclusive) acc += v;
    }
  }
  release(&c);
}

static void do_select(reader *r, int partition) {
  call c = {0};
  int t = rd_enum(r, 7), cmp = rd_enum(r, 6);
  size_t n, es;
  int in = add_input(&c, r, t, 64, &n, &es);
  int value = add_arg(&c, r, es, 0);
  c.a[value].early = 1; /* one element, taken by value before the call runs */
  int out = add_arg(&c, r, n * es, 1);
  int cnt = add_arg(&c, r, 8, 1);
  materialize(&c, r);
  snapshot(&c);
  int must_fail = !is_dtype(t) || cmp < 0 || cmp > PP_NE || null_data(&c, in) ||
                  !ptr(&c, value) || null_data(&c, out) || !ptr(&c, cnt) || bad_overlap(&c);
  pp_status s = partition ? pp_partition(ctx, (pp_dtype)t, ptr(&c, in), n, (pp_cmp)cmp,
                                         ptr(&c, value), ptr(&c, out), (uint64_t *)ptr(&c, cnt))
                          : pp_select(ctx, (pp_dtype)t, ptr(&c, in), n, (pp_cmp)cmp,
                                      ptr(&c, value), ptr(&c, out), (uint64_t *)ptr(&c, cnt));
  if (after(&c, s, must_fail)) {
    uint64_t got;
    memcpy(&got, ptr(&c, cnt), 8);
    REQUIRE(got <= n || bad_overlap(&c), "count > n");
    if (is_int(t) && !bad_overlap(&c)) {
      const unsigned char *x = before(&c, in);
      uint64_t v = key_of(t, before(&c, value), 0), want = 0;
      for (size_t i = 0; i < n; i++) want += (uint64_t)cmp_holds(cmp, key_of(t, x, i), v);
      REQUIRE(got == want, "count differs from a loop");
      size_t shown = partition ? n : (size_t)got;
      for (size_t i = 0; i < shown; i++)
        REQUIRE(cmp_holds(cmp, key_of(t, ptr(&c, out), i), v) == (i < got),
                "an element on the wrong side of the predicate");
    }
  }
  release(&c);
}

static void do_select_flagged(reader *r) {
  call c = {0};
  size_t es = rd8(r) % 25, n = rd_size(r, 64);
  int in = add_arg(&c, r, n * es, 0);
  int flags = add_arg(&c, r, n, 0);
  int out = add_arg(&c, r, n * es, 1);
  int cnt = add_arg(&c, r, 8, 1);
  materialize(&c, r);
  snapshot(&c);
  int must_fail = es == 0 || null_data(&c, in) || null_data(&c, flags) || null_data(&c, out) ||
                  !ptr(&c, cnt) || bad_overlap(&c);
  pp_status s = pp_select_flagged(ctx, es, ptr(&c, in), ptr(&c, flags), n, ptr(&c, out),
                                  (uint64_t *)ptr(&c, cnt));
  if (after(&c, s, must_fail) && !bad_overlap(&c)) {
    uint64_t got, want = 0;
    memcpy(&got, ptr(&c, cnt), 8);
    const unsigned char *f = before(&c, flags), *x = before(&c, in);
    for (size_t i = 0; i < n; i++) {
      if (!f[i]) continue;
      REQUIRE(want < got && memcmp((unsigned char *)ptr(&c, out) + want * es, x + i * es, es) == 0,
              "select_flagged kept the wrong records");
      want++;
    }
    REQUIRE(got == want, "select_flagged count differs from a loop");
  }
  release(&c);
}

static void do_sort(reader *r) {
  call c = {0};
  int t = rd_enum(r, 7);
  size_t n = rd_size(r, 96), es = dsize(t) ? dsize(t) : 4;
  static const size_t vsizes[] = {0, 4, 8, 3, 0, 4};
  size_t vs = vsizes[rd8(r) % 6];
  pp_sort_opts o = {(pp_order)rd_enum(r, 2), (pp_sort_algo)rd_enum(r, 5)};
  int use_opts = rd8(r) % 4 != 0;
  int keys = add_arg(&c, r, n * es, 1);
  int vals = add_arg(&c, r, n * (vs ? vs : 4), 1);
  materialize(&c, r);
  snapshot(&c);
  void *vp = vs ? ptr(&c, vals) : NULL;
  if (!vs) c.a[vals].bytes = 0, c.a[vals].out = 0; /* not passed */
  int must_fail = !is_dtype(t) || null_data(&c, keys) || (vp && vs != 4 && vs != 8) ||
                  (use_opts && ((int)o.order < 0 || (int)o.order > 1 || (int)o.algo < 0 ||
                                (int)o.algo > PP_SORT_QUICK)) ||
                  bad_overlap(&c);
  pp_status s = pp_sort(ctx, (pp_dtype)t, ptr(&c, keys), vp, vs, n, use_opts ? &o : NULL);
  if (after(&c, s, must_fail) && is_int(t) && !bad_overlap(&c)) {
    int desc = use_opts && o.order == PP_DESCENDING;
    for (size_t i = 1; i < n; i++) {
      uint64_t a = key_of(t, ptr(&c, keys), i - 1), b = key_of(t, ptr(&c, keys), i);
      REQUIRE(desc ? a >= b : a <= b, "sorted keys out of order");
    }
  }
  release(&c);
}

static void do_merge(reader *r) {
  call c = {0};
  int t = rd_enum(r, 7), order = rd_enum(r, 2), presort = rd8(r) & 1;
  size_t na = rd_size(r, 48), nb = rd_size(r, 48), es = dsize(t) ? dsize(t) : 4;
  int a = add_arg(&c, r, na * es, 0), b = add_arg(&c, r, nb * es, 0);
  int out = add_arg(&c, r, (na + nb) * es, 1);
  materialize(&c, r);
  /* sorted inputs (integer types), so the output can be checked for order */
  if (presort && is_int(t) && na <= 256 && nb <= 256 && !bad_overlap(&c) &&
      c.a[a].region != c.a[b].region) {
    int sides[2] = {a, b};
    size_t counts[2] = {na, nb};
    for (int sd = 0; sd < 2; sd++) {
      unsigned char *p = ptr(&c, sides[sd]);
      if (!p) continue;
      for (size_t i = 1; i < counts[sd]; i++) /* insertion sort, small n */
        for (size_t j = i; j > 0; j--) {
          uint64_t x = key_of(t, p, j - 1), y = key_of(t, p, j);
          if (order == PP_DESCENDING ? x >= y : x <= y) break;
          unsigned char tmp[8];
          memcpy(tmp, p + (j - 1) * es, es);
          memcpy(p + (j - 1) * es, p + j * es, es);
          memcpy(p + j * es, tmp, es);
        }
    }
  } else {
    presort = 0;
  }
  snapshot(&c);
  int must_fail = !is_dtype(t) || order < 0 || order > 1 || null_data(&c, a) ||
                  null_data(&c, b) || null_data(&c, out) || bad_overlap(&c);
  pp_status s = pp_merge(ctx, (pp_dtype)t, ptr(&c, a), na, ptr(&c, b), nb, ptr(&c, out),
                         (pp_order)order);
  if (after(&c, s, must_fail) && presort && (order == 0 || order == 1) && !bad_overlap(&c)) {
    for (size_t i = 1; i < na + nb; i++) {
      uint64_t x = key_of(t, ptr(&c, out), i - 1), y = key_of(t, ptr(&c, out), i);
      REQUIRE(order == PP_DESCENDING ? x >= y : x <= y, "merged keys out of order");
    }
  }
  release(&c);
}

static void do_topk(reader *r, int rowwise) {
  call c = {0};
  int t = rd_enum(r, 7), largest = rd8(r) & 1, with_idx = rd8(r) % 4 != 0;
  size_t rows = rowwise ? rd8(r) % 9 : 1, cols = rd_size(r, 80), k = rd8(r) % (cols + 3);
  size_t es = dsize(t) ? dsize(t) : 4;
  int in = add_arg(&c, r, rows * cols * es, 0);
  int vals = add_arg(&c, r, k <= cols ? rows * k * es : 0, 1);
  int idx = add_arg(&c, r, with_idx && k <= cols ? rows * k * 8 : 0, 1);
  materialize(&c, r);
  snapshot(&c);
  uint64_t *ip = with_idx ? (uint64_t *)ptr(&c, idx) : NULL;
  int must_fail = !is_dtype(t) || k > cols || null_data(&c, in) || null_data(&c, vals) ||
                  bad_overlap(&c);
  pp_status s = rowwise ? pp_topk_rows(ctx, (pp_dtype)t, ptr(&c, in), rows, cols, k, largest != 0,
                                       ptr(&c, vals), ip)
                        : pp_topk(ctx, (pp_dtype)t, ptr(&c, in), cols, k, largest != 0,
                                  ptr(&c, vals), ip);
  if (after(&c, s, must_fail) && is_int(t) && !bad_overlap(&c)) {
    const unsigned char *x = before(&c, in), *v = ptr(&c, vals);
    for (size_t row = 0; row < rows; row++)
      for (size_t j = 0; j < k; j++) {
        uint64_t kv = key_of(t, v, row * k + j);
        if (j > 0) {
          uint64_t pv = key_of(t, v, row * k + j - 1);
          REQUIRE(largest ? pv >= kv : pv <= kv, "top-k values out of order");
        }
        if (ip) {
          uint64_t at = ld64(ip, row * k + j);
          REQUIRE(at < cols, "top-k index out of range");
          REQUIRE(key_of(t, x, row * cols + at) == kv, "top-k value not at its index");
        }
      }
  }
  release(&c);
}

static void do_histogram(reader *r, int kind) {
  call c = {0};
  int t = rd_enum(r, 7);
  size_t n = rd_size(r, 64), es = dsize(t) ? dsize(t) : 4, bins = rd_size(r, 40);
  pp_status s;
  int must_fail, cnt;
  if (kind == 2) { /* image */
    int channels = rd_enum(r, 6) - 1;
    /* buffers sized as for 1 channel when channels is out of range (the call must fail) */
    size_t w = rd8(r) % 20, h = rd8(r) % 12;
    size_t ch = channels >= 1 && channels <= 4 ? (size_t)channels : 1;
    size_t pitch = rd8(r) % 4 == 0 ? rd8(r) % 40 : w * ch + rd8(r) % 5;
    size_t bytes = h && w ? (h - 1) * pitch + w * ch : 0;
    int px = add_arg(&c, r, bytes, 0);
    cnt = add_arg(&c, r, ch * 256 * 8, 1);
    materialize(&c, r);
    snapshot(&c);
    must_fail = channels < 1 || channels > 4 || (h > 1 && pitch < w * ch) || null_data(&c, px) ||
                !ptr(&c, cnt) || bad_overlap(&c);
    s = pp_histogram_image(ctx, ptr(&c, px), w, h, pitch, channels, ptr(&c, cnt));
    if (after(&c, s, must_fail) && !bad_overlap(&c)) {
      for (size_t chn = 0; chn < ch; chn++) {
        uint64_t sum = 0;
        for (size_t b = 0; b < 256; b++) sum += ld64(ptr(&c, cnt), chn * 256 + b);
        REQUIRE(sum == w * h, "image histogram does not count every pixel once");
      }
    }
    release(&c);
    return;
  }
  int in = add_arg(&c, r, n * es, 0);
  int edges = kind == 1 ? add_arg(&c, r, (bins + 1) * 8, 0) : -1;
  cnt = add_arg(&c, r, bins * 8, 1);
  materialize(&c, r);
  double lo = rd_double(r), hi = rd_double(r);
  int increasing = 1;
  if (kind == 1 && ptr(&c, edges)) {
    double *e = ptr(&c, edges);
    int mode = rd8(r) % 4;
    double x = rd_double(r);
    for (size_t i = 0; i <= bins; i++) {
      if (mode != 0) { /* increasing, unless the steps vanish in the rounding */
        double step = fabs(rd_double(r));
        x = i ? x + (isfinite(step) && step > 0 ? step : 1.0) : x;
      } else {
        x = rd_double(r);
      }
      memcpy(&e[i], &x, 8); /* the region may be unaligned */
    }
    for (size_t i = 0; i <= bins; i++) {
      double cur, prev;
      memcpy(&cur, &e[i], 8);
      if (isnan(cur)) increasing = 0;
      if (i) {
        memcpy(&prev, &e[i - 1], 8);
        if (!(prev < cur)) increasing = 0;
      }
    }
  }
  snapshot(&c);
  must_fail = !is_dtype(t) || bins == 0 || null_data(&c, in) || !ptr(&c, cnt) || bad_overlap(&c);
  if (kind == 0) {
    must_fail |= !(lo < hi) || !isfinite(lo) || !isfinite(hi);
    s = pp_histogram_even(ctx, (pp_dtype)t, ptr(&c, in), n, bins, lo, hi, ptr(&c, cnt));
  } else {
    must_fail |= !ptr(&c, edges) || !increasing;
    s = pp_histogram_range(ctx, (pp_dtype)t, ptr(&c, in), n, ptr(&c, edges), bins, ptr(&c, cnt));
  }
  if (after(&c, s, must_fail) && !bad_overlap(&c)) {
    uint64_t sum = 0, v;
    for (size_t b = 0; b < bins; b++) {
      memcpy(&v, (unsigned char *)ptr(&c, cnt) + 8 * b, 8);
      sum += v;
    }
    REQUIRE(sum <= n, "histogram counts more elements than n");
  }
  release(&c);
}

/* The extent, in elements, of a rows x cols matrix stored with leading dimension ld
 * (row-major: rows of ld). */
static size_t extent(size_t rows, size_t cols, size_t ld) {
  return rows && cols ? (rows - 1) * ld + cols : 0;
}

static void do_sgemm(reader *r) {
  call c = {0};
  int layout = rd_enum(r, 2), ta = rd_enum(r, 2), tb = rd_enum(r, 2);
  size_t m = rd8(r) % 24, n = rd8(r) % 24, k = rd8(r) % 24;
  float alpha = rd_float(r), beta = rd_float(r);
  int rowm = layout != PP_COL_MAJOR;
  /* stored shapes: op(A) is m x k, op(B) is k x n */
  size_t ar = ta == PP_TRANS ? k : m, ac = ta == PP_TRANS ? m : k;
  size_t br = tb == PP_TRANS ? n : k, bc = tb == PP_TRANS ? k : n;
  if (!rowm) { /* column-major: the leading dimension runs along columns */
    size_t x = ar; ar = ac; ac = x;
    x = br; br = bc; bc = x;
  }
  size_t cr = rowm ? m : n, cc = rowm ? n : m;
  size_t lda = ac + (rd8(r) % 8 == 0 ? (size_t)-(int)(rd8(r) % 2) : rd8(r) % 3);
  size_t ldb = bc + (rd8(r) % 8 == 0 ? (size_t)-(int)(rd8(r) % 2) : rd8(r) % 3);
  size_t ldc = cc + (rd8(r) % 8 == 0 ? (size_t)-(int)(rd8(r) % 2) : rd8(r) % 3);
  int A = add_arg(&c, r, extent(ar, ac, lda) * 4, 0);
  int B = add_arg(&c, r, extent(br, bc, ldb) * 4, 0);
  int C = add_arg(&c, r, extent(cr, cc, ldc) * 4, 1);
  materialize(&c, r);
  snapshot(&c);
  int must_fail = layout < 0 || layout > 1 || ta < 0 || ta > 1 || tb < 0 || tb > 1 ||
                  (ar && ac && lda < ac) || (br && bc && ldb < bc) || (cr && cc && ldc < cc) ||
                  (m && n && !ptr(&c, C)) || (m && n && k && (!ptr(&c, A) || !ptr(&c, B))) ||
                  bad_overlap(&c);
  pp_status s = pp_sgemm(ctx, (pp_layout)layout, (pp_trans)ta, (pp_trans)tb, m, n, k, alpha,
                         ptr(&c, A), lda, ptr(&c, B), ldb, beta, ptr(&c, C), ldc);
  after(&c, s, must_fail);
  release(&c);
}

static void do_conv(reader *r, int separable) {
  call c = {0};
  size_t w = rd8(r) % 40, h = rd8(r) % 30;
  size_t sp = w + (rd8(r) % 8 == 0 ? (size_t)-(int)(rd8(r) % 2) : rd8(r) % 4);
  size_t dp = w + (rd8(r) % 8 == 0 ? (size_t)-(int)(rd8(r) % 2) : rd8(r) % 4);
  size_t fw = rd8(r) % 10, fh = rd8(r) % 10;
  int border = rd_enum(r, 3);
  int src = add_arg(&c, r, extent(h, w, sp) * 4, 0);
  int f1 = add_arg(&c, r, (separable ? fw : fw * fh) * 4, 0);
  int f2 = separable ? add_arg(&c, r, fh * 4, 0) : -1;
  int dst = add_arg(&c, r, extent(h, w, dp) * 4, 1);
  materialize(&c, r);
  snapshot(&c);
  int must_fail = border < 0 || border > 2 || fw == 0 || fh == 0 || sp < w || dp < w ||
                  (w && h && (!ptr(&c, src) || !ptr(&c, dst))) || null_data(&c, f1) ||
                  (separable && null_data(&c, f2)) || bad_overlap(&c);
  pp_status s = separable ? pp_conv2d_separable(ctx, ptr(&c, src), w, h, sp, ptr(&c, f1), fw,
                                                ptr(&c, f2), fh, (pp_border)border, ptr(&c, dst), dp)
                          : pp_conv2d(ctx, ptr(&c, src), w, h, sp, ptr(&c, f1), fw, fh,
                                      (pp_border)border, ptr(&c, dst), dp);
  after(&c, s, must_fail);
  release(&c);
}

static void do_nbody(reader *r, int what) {
  call c = {0};
  size_t n = rd8(r) % 40;
  int inout = what == 1;
  int p[7];
  for (int i = 0; i < 7; i++) p[i] = add_arg(&c, r, n * 4, inout);
  if (what == 0)
    for (int i = 3; i < 6; i++) c.a[p[i]].early = 1; /* velocities: not read */
  int o[3] = {-1, -1, -1};
  if (what == 0)
    for (int i = 0; i < 3; i++) o[i] = add_arg(&c, r, n * 4, 1);
  if (what == 2)
    for (int i = 0; i < 2; i++) o[i] = add_arg(&c, r, 8, 1);
  materialize(&c, r);
  /* finite bodies mostly, so the physics stays in range; raw bytes otherwise */
  if (rd8(r) % 4)
    for (int i = 0; i < 7; i++) {
      float *x = ptr(&c, p[i]);
      for (size_t j = 0; x && j < n; j++) {
        float v = (float)((int8_t)rd8(r)) / 16.0f + (i == 6 ? 10.0f : 0.0f);
        memcpy(x + j, &v, 4); /* x may be unaligned */
      }
    }
  snapshot(&c);
  pp_bodies b = {ptr(&c, p[0]), ptr(&c, p[1]), ptr(&c, p[2]), ptr(&c, p[3]),
                 ptr(&c, p[4]), ptr(&c, p[5]), ptr(&c, p[6]), n};
  float soft = rd8(r) % 4 ? 0.01f : rd_float(r), dt = rd8(r) % 4 ? 0.001f : rd_float(r);
  size_t steps = rd8(r) % 3;
  int pos_null = n && (!b.x || !b.y || !b.z || !b.mass);
  int vel_null = n && (!b.vx || !b.vy || !b.vz);
  int must_fail = bad_overlap(&c) || isnan(soft) || soft < 0 || pos_null;
  pp_status s;
  if (what == 0) {
    s = pp_nbody_accel(ctx, &b, soft, ptr(&c, o[0]), ptr(&c, o[1]), ptr(&c, o[2]));
  } else if (what == 1) {
    must_fail |= vel_null && steps > 0;
    s = pp_nbody_step(ctx, &b, dt, soft, steps);
  } else {
    must_fail |= vel_null;
    s = pp_nbody_energy(ctx, &b, soft, ptr(&c, o[0]), ptr(&c, o[1]));
  }
  after(&c, s, must_fail);
  release(&c);
}

static void do_memory(reader *r) {
  /* SIZE_MAX and SIZE_MAX - 100 overflow the 256-byte rounding: no allocation is tried */
  static const size_t sizes[] = {0, 1, 255, 256, 4095, (size_t)1 << 20, SIZE_MAX, SIZE_MAX - 100};
  size_t bytes = sizes[rd8(r) % 8];
  void *p = (void *)&bytes;
  pp_status s = pp_malloc(ctx, rd8(r) % 8 ? &p : NULL, bytes);
  REQUIRE((int)s >= PP_OK && (int)s <= PP_ERR_OVERFLOW, "pp_malloc status");
  if (s == PP_OK && p && bytes && bytes < 4096) {
    memset(p, 0x5a, bytes); /* ASan sees a short block */
    unsigned char back[4096];
    REQUIRE(pp_copy(ctx, back, p, bytes) == PP_OK, "pp_copy from pp_malloc memory");
    REQUIRE(back[bytes - 1] == 0x5a, "pp_copy lost a byte");
  }
  if (s == PP_OK && p != (void *)&bytes) REQUIRE(pp_free(ctx, p) == PP_OK, "pp_free");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && pp_create(&ctx, PP_BACKEND_CPU) != PP_OK) abort();
  reader r = {data, size};
  for (int calls = 0; calls < 8 && r.n > 0; calls++) {
    static const char *const names[22] = {
        "pp_reduce", "pp_argreduce", "pp_scan", "pp_select", "pp_partition",
        "pp_select_flagged", "pp_sort", "pp_sort", "pp_merge", "pp_topk", "pp_topk_rows",
        "pp_histogram_even", "pp_histogram_range", "pp_histogram_image", "pp_sgemm",
        "pp_conv2d", "pp_conv2d_separable", "pp_nbody_accel", "pp_nbody_step",
        "pp_nbody_energy", "pp_malloc", "pp_malloc"};
    int which = rd8(&r) % 22;
    current_call = names[which];
    switch (which) {
    case 0: do_reduce(&r, 0); break;
    case 1: do_reduce(&r, 1); break;
    case 2: do_scan(&r); break;
    case 3: do_select(&r, 0); break;
    case 4: do_select(&r, 1); break;
    case 5: do_select_flagged(&r); break;
    case 6: case 7: do_sort(&r); break;
    case 8: do_merge(&r); break;
    case 9: do_topk(&r, 0); break;
    case 10: do_topk(&r, 1); break;
    case 11: do_histogram(&r, 0); break;
    case 12: do_histogram(&r, 1); break;
    case 13: do_histogram(&r, 2); break;
    case 14: do_sgemm(&r); break;
    case 15: do_conv(&r, 0); break;
    case 16: do_conv(&r, 1); break;
    case 17: do_nbody(&r, 0); break;
    case 18: do_nbody(&r, 1); break;
    case 19: do_nbody(&r, 2); break;
    default: do_memory(&r); break;
    }
  }
  return 0;
}
