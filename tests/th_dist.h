/*
 * th_dist.h — the data of test_dist.c (header only): the global data set every rank makes
 * from one seed, the size layouts that cut it into the ranks' slices (even, all on one
 * rank, empty ranks, random), and a slice in host or pp_malloc memory. What is checked is
 * written in test_dist.c's header comment.
 */
#ifndef PARPRIM_TEST_DIST_H
#define PARPRIM_TEST_DIST_H

#include "harness.h"
#include "th_values.h"

#include <stdbool.h>

static int g_rank = 0, g_p = 1;
static pp_backend g_backend = PP_BACKEND_CPU;

/* ---- the global data and each rank's slice ------------------------------------------- */

enum { LAYOUT_EVEN, LAYOUT_FIRST, LAYOUT_LAST, LAYOUT_GAPS, LAYOUT_RANDOM, LAYOUTS };
static const char *layout_name[] = {"even", "all-on-rank-0", "all-on-last", "empty-even-ranks",
                                    "random"};

/* counts[q] for N elements over g_p ranks (the same on every rank: seeded by N) */
static inline void layout_counts(int layout, size_t N, size_t *counts) {
  th_rng r = th_rng_make(0xC0u + (uint64_t)N);
  for (int q = 0; q < g_p; q++) counts[q] = 0;
  switch (layout) {
  case LAYOUT_EVEN:
    for (int q = 0; q < g_p; q++) counts[q] = N / (size_t)g_p + ((size_t)q < N % (size_t)g_p);
    break;
  case LAYOUT_FIRST: counts[0] = N; break;
  case LAYOUT_LAST: counts[g_p - 1] = N; break;
  case LAYOUT_GAPS: {
    int odd = g_p / 2; /* ranks 1, 3, ... take everything; one rank: rank 0 does */
    if (odd == 0) {
      counts[0] = N;
      break;
    }
    for (int q = 1, k = 0; q < g_p; q += 2, k++)
      counts[q] = N / (size_t)odd + ((size_t)k < N % (size_t)odd);
    break;
  }
  default: {
    size_t left = N;
    for (int q = 0; q < g_p - 1; q++) {
      counts[q] = (size_t)th_below(&r, left + 1);
      left -= counts[q];
    }
    counts[g_p - 1] = left;
  }
  }
}

static inline size_t my_offset(const size_t *counts) {
  size_t off = 0;
  for (int q = 0; q < g_rank; q++) off += counts[q];
  return off;
}

/* ---- values --------------------------------------------------------------------------- */

static const char *type_name(pp_dtype t) { return pp_dtype_string(t); }

enum { DATA_RANDOM, DATA_SMALL, DATA_EQUAL, DATA_SPECIAL, DATA_NAN, DATA_KINDS };
static const char *data_name[] = {"random", "small-range", "all-equal", "special", "all-NaN"};

static inline double as_d(pp_dtype t, const void *p, size_t i) { return (double)as_ld(t, load(t, p, i)); }

/* Element i of a data set of kind `kind`: random bits (integers) or signed magnitudes
 * (floats), a small range (many ties), one value, extremes mixed with NaN, -0.0, +0.0 and
 * infinities, or only NaN. */
static inline void make_value(pp_dtype t, int kind, th_rng *r, void *dst, size_t i) {
  uint64_t bits = th_next(r);
  double d = th_range(r, -1000.0, 1000.0);
  if (kind == DATA_SMALL) {
    bits = th_below(r, 5);
    d = (double)th_below(r, 5) - 2.0;
  } else if (kind == DATA_EQUAL) {
    bits = 3;
    d = 1.5;
  } else if (kind == DATA_SPECIAL) {
    static const double fs[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1.0, -1.0, 1e30, -1e30};
    uint64_t pick = th_below(r, 9);
    d = fs[pick];
    static const uint64_t is[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fffffff, 0x80000000u,
                                  0xffffffffu, 0x7fffffffffffffffull, 0x8000000000000000ull,
                                  0xffffffffffffffffull};
    bits = is[th_below(r, 11)];
  } else if (kind == DATA_NAN) {
    d = NAN;
  }
  switch (t) {
  case PP_U8: ((uint8_t *)dst)[i] = (uint8_t)bits; break;
  case PP_I32: ((int32_t *)dst)[i] = (int32_t)(uint32_t)bits; break;
  case PP_U32: ((uint32_t *)dst)[i] = (uint32_t)bits; break;
  case PP_I64: ((int64_t *)dst)[i] = (int64_t)bits; break;
  case PP_U64: ((uint64_t *)dst)[i] = bits; break;
  case PP_F32: ((float *)dst)[i] = (float)d; break;
  case PP_F64: ((double *)dst)[i] = d; break;
  }
}

static inline void *make_data(pp_dtype t, int kind, size_t N, uint64_t stream) {
  size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(N * es + 16);
  th_rng r = th_rng_make(stream);
  for (size_t i = 0; i < N; i++) make_value(t, kind, &r, h, i);
  return h;
}

/* Bitwise equality, except that any two NaNs are equal. */
static inline bool same_value(pp_dtype t, const void *a, const void *b) {
  return same_val(t, load(t, a, 0), load(t, b, 0));
}

/* A case's global data (the same on every rank, from the stream) and this rank's part of
 * it under the layout: where its slice starts and how many elements it has. */
typedef struct part {
  void *all;
  size_t es, off, n;
} part;

static inline part part_make(pp_dtype t, int kind, int layout, size_t N, uint64_t stream) {
  size_t counts[64];
  layout_counts(layout, N, counts);
  part d = {make_data(t, kind, N, stream), pp_dtype_size(t), my_offset(counts), counts[g_rank]};
  return d;
}

/* ---- where the slice lives ----------------------------------------------------------- */

/* Case c's slice is host memory on even c and pp_malloc memory on odd c (on CUDA: device
 * memory, so both the staged and the direct paths run). */
typedef struct slice {
  void *host; /* the caller's view on the host */
  void *arg;  /* what the primitive gets */
  size_t bytes;
  bool device;
} slice;

static inline slice slice_make(pp_context *ctx, const void *src, size_t bytes, bool device) {
  slice s = {th_xmalloc(bytes + 16), NULL, bytes, device};
  if (src && bytes) memcpy(s.host, src, bytes);
  else memset(s.host, 0xA5, bytes);
  if (device) {
    s.arg = th_dev_alloc(ctx, bytes ? bytes : 1);
    if (bytes) th_copy(ctx, s.arg, s.host, bytes);
  } else {
    s.arg = s.host;
  }
  return s;
}

/* This rank's part of d as an input slice (case c's kind of memory). */
static inline slice part_slice(pp_context *ctx, const part *d, int c) {
  return slice_make(ctx, (const char *)d->all + d->off * d->es, d->n * d->es, c & 1);
}

/* Bring an output back to s.host. */
static inline void slice_fetch(pp_context *ctx, slice *s) {
  if (s->device && s->bytes) th_copy(ctx, s->host, s->arg, s->bytes);
}

static inline void slice_free(pp_context *ctx, slice *s) {
  if (s->device) th_dev_free(ctx, s->arg);
  free(s->host);
}

#endif
