/*
 * test_overlap.c — the overlap rule of docs/API.md, on every primitive.
 *
 * Usage: test_overlap [cpu|cuda]
 *
 * Allowed aliasing (scan, select, select_flagged and partition with out == in; inputs that
 * overlap each other) must give exactly the result of the same call on separate buffers,
 * which is itself checked against a serial reference where the call moves elements. Every
 * other overlap of an output with any argument must return PP_ERR_INVALID_ARGUMENT with the
 * message "pp_fn: <output> overlaps <other>", write no byte anywhere, and leave the context
 * usable; ranges that only touch (one ends where the other starts) are not an overlap.
 * Every case runs on ordinary host memory and on pp_malloc memory (device memory on the
 * CUDA backend).
 */
#include "harness.h"
#include "th_values.h"

#include <math.h>

/* ---- an arena: one buffer, host or pp_malloc, holding every argument of a bad call --- */

#define ARENA_BYTES ((size_t)1 << 16)

typedef struct arena {
  pp_context *ctx;
  int dev;          /* pp_malloc memory, else malloc */
  unsigned char *p; /* the arena */
  unsigned char *pristine, *before, *after; /* host copies */
} arena;

static void arena_read(arena *a, unsigned char *dst) {
  if (a->dev)
    th_copy(a->ctx, dst, a->p, ARENA_BYTES);
  else
    memcpy(dst, a->p, ARENA_BYTES);
}

/* Back to the same small, finite values of every type (floats in [0, 1) read as any type
 * are ordinary numbers, so valid calls on the arena run on sane data). */
static void arena_reset(arena *a) {
  if (a->dev)
    th_copy(a->ctx, a->p, a->pristine, ARENA_BYTES);
  else
    memcpy(a->p, a->pristine, ARENA_BYTES);
}

static arena arena_make(pp_context *ctx, int dev) {
  arena a;
  a.ctx = ctx;
  a.dev = dev;
  a.p = dev ? th_dev_alloc(ctx, ARENA_BYTES) : th_xmalloc(ARENA_BYTES);
  a.pristine = th_xmalloc(ARENA_BYTES);
  a.before = th_xmalloc(ARENA_BYTES);
  a.after = th_xmalloc(ARENA_BYTES);
  th_rng r = th_rng_make(21);
  for (size_t i = 0; i < ARENA_BYTES / 4; i++) {
    float f = (float)th_unit(&r);
    memcpy(a.pristine + 4 * i, &f, 4);
  }
  arena_reset(&a);
  return a;
}

static void arena_free(arena *a) {
  if (a->dev)
    th_dev_free(a->ctx, a->p);
  else
    free(a->p);
  free(a->pristine);
  free(a->before);
  free(a->after);
}

/* The context still works: a small sum on host memory. */
static void check_usable(pp_context *ctx, int line) {
  const int32_t v[5] = {1, 2, 3, 4, 5};
  int32_t sum = 0;
  pp_status s = pp_reduce(ctx, PP_SUM, PP_I32, v, 5, &sum);
  CHECK(s == PP_OK && sum == 15, "line %d: pp_reduce after the rejected call: %s, sum %d", line,
        pp_status_string(s), (int)sum);
}

static void forbid_after(arena *a, pp_status got, const char *want_msg, const char *what,
                         int line) {
  pp_context *ctx = a->ctx;
  CHECK_STATUS(got, PP_ERR_INVALID_ARGUMENT, "line %d (%s memory): %s", line,
               a->dev ? "pp_malloc" : "host", what);
  const char *msg = pp_last_error(ctx);
  CHECK(strcmp(msg, want_msg) == 0, "line %d (%s memory): %s: message \"%s\", want \"%s\"", line,
        a->dev ? "pp_malloc" : "host", what, msg, want_msg);
  arena_read(a, a->after);
  size_t first = ARENA_BYTES;
  for (size_t i = 0; i < ARENA_BYTES && first == ARENA_BYTES; i++)
    if (a->before[i] != a->after[i]) first = i;
  CHECK(first == ARENA_BYTES, "line %d (%s memory): %s wrote byte %zu of the arena", line,
        a->dev ? "pp_malloc" : "host", what, first);
  check_usable(ctx, line);
}

/* A forbidden overlap: INVALID_ARGUMENT, exactly want_msg, no byte of the arena changed. */
#define FORBID(a, want_msg, call)                                                           \
  do {                                                                                      \
    arena_read((a), (a)->before);                                                           \
    th_poison_error((a)->ctx);                                                              \
    pp_status forbid_s_ = (call);                                                           \
    forbid_after((a), forbid_s_, (want_msg), #call, __LINE__);                              \
  } while (0)

/* Ranges that only touch, or inputs that overlap each other: the call is valid. */
#define ALLOW(a, call)                                                                      \
  do {                                                                                      \
    pp_status allow_s_ = (call);                                                            \
    CHECK_STATUS(allow_s_, PP_OK, "line %d (%s memory): %s: %s", __LINE__,                  \
                 (a)->dev ? "pp_malloc" : "host", #call, pp_last_error((a)->ctx));          \
    arena_reset(a);                                                                         \
  } while (0)

/* Byte offsets into the arena, typed. */
#define AT(a, T, off) ((T *)(void *)((a)->p + (off)))

/* ---- forbidden overlaps, every primitive -------------------------------------------- */

static void forbid_reduce_family(arena *a) {
  pp_context *ctx = a->ctx;
  const size_t n = 64;
  float *in = AT(a, float, 0);
  uint64_t *cnt = AT(a, uint64_t, 8192);
  FORBID(a, "pp_reduce: out overlaps in", pp_reduce(ctx, PP_SUM, PP_F32, in, n, in + 3));
  FORBID(a, "pp_reduce: out overlaps in", pp_reduce(ctx, PP_MAX, PP_F32, in, n, in + n - 1));
  ALLOW(a, pp_reduce(ctx, PP_MAX, PP_F32, in, n, in + n)); /* right after in */
  ALLOW(a, pp_reduce(ctx, PP_MAX, PP_F32, in + 1, n, in)); /* right before in */

  FORBID(a, "pp_argreduce: value_out overlaps in",
         pp_argreduce(ctx, PP_MIN, PP_F32, in, n, in + 10, cnt));
  FORBID(a, "pp_argreduce: index_out overlaps in",
         pp_argreduce(ctx, PP_MIN, PP_F32, in, n, in + 2 * n, (uint64_t *)(void *)(in + 8)));
  FORBID(a, "pp_argreduce: index_out overlaps value_out",
         pp_argreduce(ctx, PP_MIN, PP_F32, in, n, (float *)(void *)cnt + 1, cnt));
  ALLOW(a, pp_argreduce(ctx, PP_MIN, PP_F32, in, n, (float *)(void *)cnt + 2, cnt));

  const char *scan_msg = "pp_scan: out overlaps in (only out == in is allowed)";
  FORBID(a, scan_msg, pp_scan(ctx, PP_SUM, PP_F32, in, in + 1, n, true));
  FORBID(a, scan_msg, pp_scan(ctx, PP_SUM, PP_F32, in + 1, in, n, false));
  FORBID(a, scan_msg, pp_scan(ctx, PP_MAX, PP_U8, (uint8_t *)in, (uint8_t *)in + 3, n, true));
  ALLOW(a, pp_scan(ctx, PP_SUM, PP_F32, in, in + n, n, true));
  ALLOW(a, pp_scan(ctx, PP_SUM, PP_F32, in, in, n, true));

  const float thr = 0.5f;
  FORBID(a, "pp_select: out overlaps in (only out == in is allowed)",
         pp_select(ctx, PP_F32, in, n, PP_GT, &thr, in + 1, cnt));
  FORBID(a, "pp_select: count overlaps in",
         pp_select(ctx, PP_F32, in, n, PP_GT, &thr, in + 2 * n, (uint64_t *)(void *)(in + 4)));
  FORBID(a, "pp_select: count overlaps out",
         pp_select(ctx, PP_F32, in, n, PP_GT, &thr, in + 2 * n,
                   (uint64_t *)(void *)(in + 3 * n - 2)));
  ALLOW(a, pp_select(ctx, PP_F32, in, n, PP_GT, &thr, in + 2 * n, (uint64_t *)(void *)(in + 3 * n)));
  FORBID(a, "pp_partition: out overlaps in (only out == in is allowed)",
         pp_partition(ctx, PP_F32, in + 2, n, PP_GT, &thr, in, cnt));
  FORBID(a, "pp_partition: count_true overlaps in",
         pp_partition(ctx, PP_F32, in, n, PP_GT, &thr, in, (uint64_t *)(void *)(in + 62)));
  FORBID(a, "pp_partition: count_true overlaps out",
         pp_partition(ctx, PP_F32, in, n, PP_GT, &thr, in + n, (uint64_t *)(void *)(in + n)));

  uint8_t *flags = AT(a, uint8_t, 4096);
  FORBID(a, "pp_select_flagged: out overlaps in (only out == in is allowed)",
         pp_select_flagged(ctx, 4, in, flags, n, in + n / 2, cnt));
  FORBID(a, "pp_select_flagged: out overlaps flags",
         pp_select_flagged(ctx, 4, in, flags, n, flags - 8, cnt));
  FORBID(a, "pp_select_flagged: count overlaps in",
         pp_select_flagged(ctx, 4, in, flags, n, in + n, (uint64_t *)(void *)(in + 6)));
  FORBID(a, "pp_select_flagged: count overlaps flags",
         pp_select_flagged(ctx, 4, in, flags, n, in + n, (uint64_t *)(void *)(flags + 56)));
  FORBID(a, "pp_select_flagged: count overlaps out",
         pp_select_flagged(ctx, 4, in, flags, n, in + n, (uint64_t *)(void *)(in + n)));
  /* flags may overlap in (both are only read) */
  ALLOW(a, pp_select_flagged(ctx, 4, in, (const uint8_t *)in, n, in + n, cnt));
}

static void forbid_sort_family(arena *a) {
  pp_context *ctx = a->ctx;
  const size_t n = 64;
  int32_t *keys = AT(a, int32_t, 0);
  FORBID(a, "pp_sort: values overlaps keys", pp_sort(ctx, PP_I32, keys, keys + n - 1, 4, n, NULL));
  FORBID(a, "pp_sort: values overlaps keys", pp_sort(ctx, PP_I32, keys, keys, 8, n, NULL));
  FORBID(a, "pp_sort: values overlaps keys",
         pp_sort(ctx, PP_I32, keys + 2, keys, 8, n, NULL)); /* values end inside keys */
  ALLOW(a, pp_sort(ctx, PP_I32, keys, keys + n, 4, n, NULL));

  /* pp_sort_copy: no output overlaps an input or the other output; the inputs may share */
  int32_t *sk = AT(a, int32_t, 1024), *sv = AT(a, int32_t, 2048);
  FORBID(a, "pp_sort_copy: sorted_keys overlaps keys",
         pp_sort_copy(ctx, PP_I32, keys, NULL, 0, n, keys + n / 2, NULL, NULL));
  FORBID(a, "pp_sort_copy: sorted_keys overlaps keys",
         pp_sort_copy(ctx, PP_I32, keys, NULL, 0, n, keys, NULL, NULL));
  FORBID(a, "pp_sort_copy: sorted_values overlaps values",
         pp_sort_copy(ctx, PP_I32, keys, keys + n, 4, n, sk, keys + n + 3, NULL));
  FORBID(a, "pp_sort_copy: sorted_values overlaps keys",
         pp_sort_copy(ctx, PP_I32, keys, keys + n, 4, n, sk, keys - 1, NULL));
  FORBID(a, "pp_sort_copy: sorted_keys overlaps values",
         pp_sort_copy(ctx, PP_I32, keys, sv, 8, n, sv + n, sk, NULL)); /* 8-byte values: 2n words */
  FORBID(a, "pp_sort_copy: sorted_keys overlaps sorted_values",
         pp_sort_copy(ctx, PP_I32, keys, keys + n, 4, n, sk, sk + n - 1, NULL));
  ALLOW(a, pp_sort_copy(ctx, PP_I32, keys, keys, 4, n, sk, sv, NULL)); /* values == keys: both only read */
  ALLOW(a, pp_sort_copy(ctx, PP_I32, keys, keys + n, 4, n, sk, sk + n, NULL));

  /* merge wants sorted inputs: the overlap is rejected before anything is read, and the
   * valid calls merge single elements */
  int32_t *ka = AT(a, int32_t, 4096), *kb = AT(a, int32_t, 8192);
  FORBID(a, "pp_merge: out overlaps a", pp_merge(ctx, PP_I32, ka, n, kb, n, ka, PP_ASCENDING));
  FORBID(a, "pp_merge: out overlaps a",
         pp_merge(ctx, PP_I32, ka, n, kb, n, ka - n, PP_ASCENDING)); /* 2n outputs end in a */
  FORBID(a, "pp_merge: out overlaps b", pp_merge(ctx, PP_I32, ka, n, kb, n, kb + 5, PP_DESCENDING));
  ALLOW(a, pp_merge(ctx, PP_I32, ka, 0, kb, 0, ka, PP_ASCENDING)); /* empty: nothing shared */
  ALLOW(a, pp_merge(ctx, PP_I32, ka, 1, kb, 1, ka + 1, PP_ASCENDING)); /* right after a */
  ALLOW(a, pp_merge(ctx, PP_I32, ka, 1, ka, 1, kb, PP_DESCENDING));   /* a == b */

  float *in = AT(a, float, 0);
  uint64_t *idx = AT(a, uint64_t, 16384);
  FORBID(a, "pp_topk: values_out overlaps in", pp_topk(ctx, PP_F32, in, n, 5, true, in, idx));
  FORBID(a, "pp_topk: indices_out overlaps in",
         pp_topk(ctx, PP_F32, in, n, 5, true, in + n, (uint64_t *)(void *)(in + 60)));
  FORBID(a, "pp_topk: indices_out overlaps values_out",
         pp_topk(ctx, PP_F32, in, n, 5, false, in + n, (uint64_t *)(void *)(in + n + 4)));
  ALLOW(a, pp_topk(ctx, PP_F32, in, n, 5, false, in + n, (uint64_t *)(void *)(in + n + 6)));
  ALLOW(a, pp_topk(ctx, PP_F32, in, n, 5, false, in + n, NULL));
  FORBID(a, "pp_topk_rows: values_out overlaps in",
         pp_topk_rows(ctx, PP_F32, in, 4, 16, 3, true, in + 63, idx));
  FORBID(a, "pp_topk_rows: indices_out overlaps in",
         pp_topk_rows(ctx, PP_F32, in, 4, 16, 3, true, in + n, (uint64_t *)(void *)in));
  ALLOW(a, pp_topk_rows(ctx, PP_F32, in, 4, 16, 3, true, in + n, idx));
}

static void forbid_histogram_family(arena *a) {
  pp_context *ctx = a->ctx;
  const size_t n = 64;
  float *in = AT(a, float, 0);
  uint64_t *counts = AT(a, uint64_t, 8192);
  FORBID(a, "pp_histogram_even: counts overlaps in",
         pp_histogram_even(ctx, PP_F32, in, n, 4, 0.0, 1.0, (uint64_t *)(void *)(in + 62)));
  ALLOW(a, pp_histogram_even(ctx, PP_F32, in, n, 4, 0.0, 1.0, (uint64_t *)(void *)(in + n)));

  /* the edges must be valid: write them into the arena's pristine copy for these calls */
  double *edges = AT(a, double, 4096);
  const double e[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
  unsigned char saved[sizeof e];
  memcpy(saved, a->pristine + 4096, sizeof e);
  memcpy(a->pristine + 4096, e, sizeof e);
  arena_reset(a);
  FORBID(a, "pp_histogram_range: counts overlaps in",
         pp_histogram_range(ctx, PP_F32, in, n, edges, 4, (uint64_t *)(void *)(in + 56)));
  FORBID(a, "pp_histogram_range: counts overlaps edges",
         pp_histogram_range(ctx, PP_F32, in, n, edges, 4, (uint64_t *)(void *)(edges + 4)));
  ALLOW(a, pp_histogram_range(ctx, PP_F32, in, n, edges, 4, (uint64_t *)(void *)(edges + 5)));
  ALLOW(a, pp_histogram_range(ctx, PP_F32, in, n, edges, 4, counts));

  const uint8_t *pix = AT(a, uint8_t, 0);
  /* 3 rows of 8 pixels, pitch 16: the image spans 2 * 16 + 8 = 40 bytes */
  FORBID(a, "pp_histogram_image: counts overlaps pixels",
         pp_histogram_image(ctx, pix, 8, 3, 16, 1, AT(a, uint64_t, 32)));
  ALLOW(a, pp_histogram_image(ctx, pix, 8, 3, 16, 1, AT(a, uint64_t, 40)));
  FORBID(a, "pp_histogram_image: counts overlaps pixels",
         pp_histogram_image(ctx, AT(a, uint8_t, 4096), 8, 3, 16, 2, counts - 512 + 1));
  memcpy(a->pristine + 4096, saved, sizeof e); /* as it was */
  arena_reset(a);
}

static void forbid_dense(arena *a) {
  pp_context *ctx = a->ctx;
  float *A = AT(a, float, 0), *B = AT(a, float, 4096), *C = AT(a, float, 8192);
  /* 8x8 row-major, ld 8 */
  FORBID(a, "pp_sgemm: C overlaps A",
         pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 8, 8, 8, 1.0f, A, 8, B, 8, 0.0f, A, 8));
  FORBID(a, "pp_sgemm: C overlaps B",
         pp_sgemm(ctx, PP_COL_MAJOR, PP_TRANS, PP_NO_TRANS, 8, 8, 8, 1.0f, A, 8, B, 8, 1.0f,
                  B + 63, 8));
  /* C's extent with ldc 16: 7 * 16 + 8 = 120 elements; A starts just after it */
  ALLOW(a, pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 8, 8, 8, 1.0f, C + 120, 8, B, 8,
                    0.5f, C, 16));
  FORBID(a, "pp_sgemm: C overlaps A",
         pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 8, 8, 8, 1.0f, C + 119, 8, B, 8,
                  0.5f, C, 16));
  /* A and B may be the same matrix */
  ALLOW(a, pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, 8, 8, 8, 1.0f, A, 8, A, 8, 0.0f, C, 8));

  float *src = AT(a, float, 0), *dst = AT(a, float, 8192), *filt = AT(a, float, 16384);
  /* 10 x 6 image, pitches 12: extent 5 * 12 + 10 = 70 elements */
  FORBID(a, "pp_conv2d: dst overlaps src",
         pp_conv2d(ctx, src, 10, 6, 12, filt, 3, 3, PP_BORDER_CLAMP, src, 12));
  FORBID(a, "pp_conv2d: dst overlaps src",
         pp_conv2d(ctx, src, 10, 6, 12, filt, 3, 3, PP_BORDER_CLAMP, src + 69, 12));
  FORBID(a, "pp_conv2d: dst overlaps src",
         pp_conv2d(ctx, src + 69, 10, 6, 12, filt, 3, 3, PP_BORDER_CLAMP, src, 12));
  ALLOW(a, pp_conv2d(ctx, src, 10, 6, 12, filt, 3, 3, PP_BORDER_CLAMP, src + 70, 12));
  FORBID(a, "pp_conv2d: dst overlaps filter",
         pp_conv2d(ctx, src, 10, 6, 12, filt, 3, 3, PP_BORDER_ZERO, filt - 69, 12));
  ALLOW(a, pp_conv2d(ctx, src, 10, 6, 12, filt, 3, 3, PP_BORDER_ZERO, filt - 70, 12));
  FORBID(a, "pp_conv2d_separable: dst overlaps src",
         pp_conv2d_separable(ctx, src, 10, 6, 10, filt, 3, filt, 5, PP_BORDER_MIRROR, src + 30, 10));
  FORBID(a, "pp_conv2d_separable: dst overlaps row_filter",
         pp_conv2d_separable(ctx, src, 10, 6, 10, filt, 3, filt + 8, 5, PP_BORDER_MIRROR,
                             filt + 2 - 60, 10));
  FORBID(a, "pp_conv2d_separable: dst overlaps col_filter",
         pp_conv2d_separable(ctx, src, 10, 6, 10, filt, 3, filt + 8, 5, PP_BORDER_MIRROR,
                             filt + 12, 10));
  ALLOW(a, pp_conv2d_separable(ctx, src, 10, 6, 10, filt, 3, filt, 3, PP_BORDER_MIRROR, dst, 10));

  /* bodies: 16 each, 64 bytes apart */
  const size_t n = 16;
  float *f = AT(a, float, 0);
  pp_bodies b = {f, f + n, f + 2 * n, f + 3 * n, f + 4 * n, f + 5 * n, f + 6 * n, n};
  float *ax = f + 7 * n, *ay = f + 8 * n, *az = f + 9 * n;
  FORBID(a, "pp_nbody_accel: ax overlaps b->x", pp_nbody_accel(ctx, &b, 0.01f, b.x, ay, az));
  FORBID(a, "pp_nbody_accel: ay overlaps b->mass",
         pp_nbody_accel(ctx, &b, 0.01f, ax, b.mass - 3, az));
  FORBID(a, "pp_nbody_accel: ax overlaps ay", pp_nbody_accel(ctx, &b, 0.01f, ax, ax + 1, az));
  FORBID(a, "pp_nbody_accel: az overlaps b->z", pp_nbody_accel(ctx, &b, 0.01f, ax, ay, b.z + 1));
  /* velocities are not read by pp_nbody_accel: the outputs may be them */
  ALLOW(a, pp_nbody_accel(ctx, &b, 0.01f, b.vx, b.vy, b.vz));
  /* positions may coincide with each other: they are only read */
  pp_bodies flat = {f, f, f, NULL, NULL, NULL, f + 6 * n, n};
  ALLOW(a, pp_nbody_accel(ctx, &flat, 0.01f, ax, ay, az));

  pp_bodies s = b;
  s.vx = s.x;
  FORBID(a, "pp_nbody_step: b->x overlaps b->vx", pp_nbody_step(ctx, &s, 0.001f, 0.01f, 2));
  s = b;
  s.mass = s.z + 1;
  FORBID(a, "pp_nbody_step: b->z overlaps b->mass", pp_nbody_step(ctx, &s, 0.001f, 0.01f, 2));
  s = b;
  s.y = s.x + 15;
  FORBID(a, "pp_nbody_step: b->x overlaps b->y", pp_nbody_step(ctx, &s, 0.001f, 0.01f, 2));
  ALLOW(a, pp_nbody_step(ctx, &b, 0.001f, 0.01f, 2));

  double *kin = (double *)(void *)(f + 10 * n), *pot = kin + 1;
  FORBID(a, "pp_nbody_energy: kinetic overlaps b->vy",
         pp_nbody_energy(ctx, &b, 0.01f, (double *)(void *)b.vy, pot));
  FORBID(a, "pp_nbody_energy: potential overlaps b->mass",
         pp_nbody_energy(ctx, &b, 0.01f, kin, (double *)(void *)(b.mass + 14)));
  FORBID(a, "pp_nbody_energy: kinetic overlaps potential",
         pp_nbody_energy(ctx, &b, 0.01f, kin, kin));
  ALLOW(a, pp_nbody_energy(ctx, &b, 0.01f, kin, pot));
}

/* ---- allowed aliasing gives the separate buffers' result ----------------------------- */

/* A buffer of the kind under test holding a copy of host data, and the way back. */
static void *put(pp_context *ctx, int dev, const void *host, size_t bytes) {
  if (!dev) {
    void *p = th_xmalloc(bytes);
    memcpy(p, host, bytes);
    return p;
  }
  return th_dev_from_host(ctx, host, bytes);
}

static void get(pp_context *ctx, int dev, void *host, const void *p, size_t bytes) {
  if (dev)
    th_copy(ctx, host, p, bytes);
  else
    memcpy(host, p, bytes);
}

static void drop_all(pp_context *ctx, int dev, void *const *ptrs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dev)
      th_dev_free(ctx, ptrs[i]);
    else
      free(ptrs[i]);
  }
}
/* DROP(ctx, dev, a, b): gives back buffers made by put */
#define DROP(ctx, dev, ...) drop_all(ctx, dev, TH_PTRS(__VA_ARGS__))

static void fill_typed(pp_dtype t, void *buf, size_t n, th_rng *r) {
  for (size_t i = 0; i < n; i++) {
    uint64_t u = th_next(r);
    switch (t) {
    case PP_U8: ((uint8_t *)buf)[i] = (uint8_t)u; break;
    case PP_U32: ((uint32_t *)buf)[i] = (uint32_t)(u % 1000); break;
    case PP_I64: ((int64_t *)buf)[i] = (int64_t)(u % 2001) - 1000; break;
    case PP_F32: {
      float f = (float)(u % 2001) / 1000.0f - 1.0f;
      if (u % 97 == 0) f = NAN;
      if (u % 89 == 0) f = -0.0f;
      ((float *)buf)[i] = f;
      break;
    }
    default: {
      double d = (double)(u % 2001) / 1000.0 - 1.0;
      if (u % 97 == 0) d = NAN;
      if (u % 89 == 0) d = -0.0;
      ((double *)buf)[i] = d;
      break;
    }
    }
  }
}

/* x > v, as doubles (exact for these types and values); NaN fails */
static int keeps(pp_dtype t, const void *buf, size_t i, double v) {
  return (double)as_ld(t, load(t, buf, i)) > v;
}

static void set_threshold(pp_dtype t, void *value, double v) { store(t, value, 0, vcast(t, v)); }

/* select and partition with out == in against the serial reference and against the call
 * on separate buffers; for select, the buffer past the count keeps the input. */
static void inplace_select(pp_context *ctx, int dev, int partition, pp_dtype t, size_t n) {
  const size_t es = pp_dtype_size(t), bytes = n * es;
  th_rng r = th_rng_make(1000 + n + (size_t)t * 7 + (size_t)partition);
  unsigned char *host = th_xmalloc(bytes), *want = th_xmalloc(bytes), *got = th_xmalloc(bytes),
                *sep = th_xmalloc(bytes);
  fill_typed(t, host, n, &r);
  const double thr = t == PP_U8 ? 100.0 : t == PP_U32 ? 500.0 : t == PP_I64 ? 0.0 : 0.25;
  unsigned char value[8];
  set_threshold(t, value, thr);
  /* reference: kept in order, then (partition) the others in order; select keeps the tail */
  memcpy(want, host, bytes);
  size_t kept = 0, at = 0;
  for (size_t i = 0; i < n; i++)
    if (keeps(t, host, i, thr)) memcpy(want + es * at++, host + es * i, es);
  kept = at;
  if (partition)
    for (size_t i = 0; i < n; i++)
      if (!keeps(t, host, i, thr)) memcpy(want + es * at++, host + es * i, es);

  const char *fn = partition ? "pp_partition" : "pp_select";
  void *buf = put(ctx, dev, host, bytes), *in2 = put(ctx, dev, host, bytes);
  void *out2 = put(ctx, dev, host, bytes);
  uint64_t c1 = UINT64_MAX, c2 = UINT64_MAX;
  pp_status s1 = partition ? pp_partition(ctx, t, buf, n, PP_GT, value, buf, &c1)
                           : pp_select(ctx, t, buf, n, PP_GT, value, buf, &c1);
  pp_status s2 = partition ? pp_partition(ctx, t, in2, n, PP_GT, value, out2, &c2)
                           : pp_select(ctx, t, in2, n, PP_GT, value, out2, &c2);
  CHECK(s1 == PP_OK && s2 == PP_OK, "%s dtype %d n %zu in place (%s): %s / %s (%s)", fn, (int)t,
        n, dev ? "pp_malloc" : "host", pp_status_string(s1), pp_status_string(s2),
        pp_last_error(ctx));
  get(ctx, dev, got, buf, bytes);
  get(ctx, dev, sep, out2, bytes);
  size_t cmp = partition ? bytes : kept * es;
  CHECK(c1 == kept && c2 == kept, "%s dtype %d n %zu (%s): count in place %llu, apart %llu, want %zu",
        fn, (int)t, n, dev ? "pp_malloc" : "host", (unsigned long long)c1,
        (unsigned long long)c2, kept);
  CHECK(memcmp(got, want, bytes) == 0,
        "%s dtype %d n %zu (%s): in-place result differs from the reference", fn, (int)t, n,
        dev ? "pp_malloc" : "host");
  CHECK(memcmp(sep, want, cmp) == 0, "%s dtype %d n %zu (%s): separate result differs", fn,
        (int)t, n, dev ? "pp_malloc" : "host");
  DROP(ctx, dev, buf, in2, out2);
  TH_FREE(host, want, got, sep);
}

static void inplace_select_flagged(pp_context *ctx, int dev, size_t es, size_t n) {
  const size_t bytes = n * es;
  th_rng r = th_rng_make(3000 + n + es);
  unsigned char *host = th_xmalloc(bytes), *want = th_xmalloc(bytes), *got = th_xmalloc(bytes);
  uint8_t *fl = th_xmalloc(n);
  for (size_t i = 0; i < bytes; i++) host[i] = (unsigned char)th_next(&r);
  for (size_t i = 0; i < n; i++) fl[i] = (uint8_t)(th_below(&r, 3) == 0 ? 0 : th_below(&r, 256));
  memcpy(want, host, bytes);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (fl[i]) memcpy(want + es * kept++, host + es * i, es);
  void *buf = put(ctx, dev, host, bytes), *dfl = put(ctx, dev, fl, n);
  uint64_t c = UINT64_MAX;
  pp_status s = pp_select_flagged(ctx, es, buf, dfl, n, buf, &c);
  CHECK(s == PP_OK, "pp_select_flagged es %zu n %zu in place (%s): %s (%s)", es, n,
        dev ? "pp_malloc" : "host", pp_status_string(s), pp_last_error(ctx));
  get(ctx, dev, got, buf, bytes);
  CHECK(c == kept, "pp_select_flagged es %zu n %zu (%s): count %llu, want %zu", es, n,
        dev ? "pp_malloc" : "host", (unsigned long long)c, kept);
  CHECK(memcmp(got, want, bytes) == 0, "pp_select_flagged es %zu n %zu (%s): in-place result wrong",
        es, n, dev ? "pp_malloc" : "host");
  DROP(ctx, dev, buf, dfl);
  TH_FREE(host, want, got, fl);
}

static void inplace_scan(pp_context *ctx, int dev, pp_dtype t, pp_op op, bool inclusive,
                         size_t n) {
  const size_t bytes = n * pp_dtype_size(t);
  th_rng r = th_rng_make(5000 + n + (size_t)op);
  unsigned char *host = th_xmalloc(bytes), *a = th_xmalloc(bytes), *b = th_xmalloc(bytes);
  fill_typed(t, host, n, &r);
  void *buf = put(ctx, dev, host, bytes), *in2 = put(ctx, dev, host, bytes),
       *out2 = put(ctx, dev, host, bytes);
  pp_status s1 = pp_scan(ctx, op, t, buf, buf, n, inclusive);
  pp_status s2 = pp_scan(ctx, op, t, in2, out2, n, inclusive);
  CHECK(s1 == PP_OK && s2 == PP_OK, "pp_scan op %d dtype %d n %zu (%s): %s / %s", (int)op,
        (int)t, n, dev ? "pp_malloc" : "host", pp_status_string(s1), pp_status_string(s2));
  get(ctx, dev, a, buf, bytes);
  get(ctx, dev, b, out2, bytes);
  CHECK(memcmp(a, b, bytes) == 0, "pp_scan op %d dtype %d n %zu inclusive %d (%s): in place differs",
        (int)op, (int)t, n, (int)inclusive, dev ? "pp_malloc" : "host");
  DROP(ctx, dev, buf, in2, out2);
  TH_FREE(host, a, b);
}

/* Inputs that overlap each other: merge a == b, sgemm A == B, against separate copies. */
static void shared_inputs(pp_context *ctx, int dev) {
  const size_t n = 1000;
  int32_t *h = th_xmalloc(n * 4), *o1 = th_xmalloc(2 * n * 4), *o2 = th_xmalloc(2 * n * 4);
  for (size_t i = 0; i < n; i++) h[i] = (int32_t)(i / 3) - 100;
  void *a = put(ctx, dev, h, n * 4), *b = put(ctx, dev, h, n * 4), *out = put(ctx, dev, o1, 2 * n * 4);
  pp_status s = pp_merge(ctx, PP_I32, a, n, a, n, out, PP_ASCENDING);
  get(ctx, dev, o1, out, 2 * n * 4);
  pp_status s2 = pp_merge(ctx, PP_I32, a, n, b, n, out, PP_ASCENDING);
  get(ctx, dev, o2, out, 2 * n * 4);
  CHECK(s == PP_OK && s2 == PP_OK && memcmp(o1, o2, 2 * n * 4) == 0,
        "pp_merge with a == b (%s) differs from separate copies: %s", dev ? "pp_malloc" : "host",
        pp_last_error(ctx));
  DROP(ctx, dev, a, b, out);
  TH_FREE(h, o1, o2);

  float m[64], c1[64], c2[64];
  th_rng r = th_rng_make(77);
  for (int i = 0; i < 64; i++) m[i] = (float)th_range(&r, -1, 1);
  void *A = put(ctx, dev, m, sizeof m), *B = put(ctx, dev, m, sizeof m), *C = put(ctx, dev, m, sizeof m);
  s = pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, 8, 8, 8, 1.0f, A, 8, A, 8, 0.0f, C, 8);
  get(ctx, dev, c1, C, sizeof c1);
  s2 = pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, 8, 8, 8, 1.0f, A, 8, B, 8, 0.0f, C, 8);
  get(ctx, dev, c2, C, sizeof c2);
  CHECK(s == PP_OK && s2 == PP_OK && memcmp(c1, c2, sizeof c1) == 0,
        "pp_sgemm with A == B (%s) differs from separate copies", dev ? "pp_malloc" : "host");
  DROP(ctx, dev, A, B, C);
}

/* pp_nbody_accel reading x == y == z, and writing into the velocity arrays it does not
 * read: the same accelerations as with separate copies and outputs. */
static void nbody_shared(pp_context *ctx, int dev) {
  enum { N = 300 };
  float h[7 * N], a1[3 * N], a2[3 * N];
  th_rng r = th_rng_make(31);
  for (int i = 0; i < 7 * N; i++) h[i] = (float)th_unit(&r);
  for (int i = 0; i < N; i++) h[N + i] = h[2 * N + i] = h[i]; /* y and z copies of x */
  float *d = put(ctx, dev, h, sizeof h), *o = put(ctx, dev, a1, sizeof a1);
  pp_bodies shared = {d, d, d, d + 3 * N, d + 4 * N, d + 5 * N, d + 6 * N, N};
  pp_bodies apart = {d, d + N, d + 2 * N, NULL, NULL, NULL, d + 6 * N, N};
  pp_status s1 = pp_nbody_accel(ctx, &shared, 0.01f, shared.vx, shared.vy, shared.vz);
  get(ctx, dev, a1, d + 3 * N, sizeof a1);
  pp_status s2 = pp_nbody_accel(ctx, &apart, 0.01f, o, o + N, o + 2 * N);
  get(ctx, dev, a2, o, sizeof a2);
  CHECK(s1 == PP_OK && s2 == PP_OK && memcmp(a1, a2, sizeof a1) == 0,
        "pp_nbody_accel with x == y == z into the velocities (%s) differs from separate buffers",
        dev ? "pp_malloc" : "host");
  DROP(ctx, dev, d, o);
}

/* In-place select with value pointing into the buffer itself (host memory only: value is
 * host memory by the contract): value is read before anything is written. */
static void value_inside_out(pp_context *ctx) {
  float buf[300], want[300];
  th_rng r = th_rng_make(9);
  for (int i = 0; i < 300; i++) buf[i] = (float)th_unit(&r);
  const float thr = buf[0];
  size_t kept = 0;
  memcpy(want, buf, sizeof buf);
  for (int i = 0; i < 300; i++)
    if (buf[i] > thr) want[kept++] = buf[i];
  uint64_t c = 0;
  pp_status s = pp_select(ctx, PP_F32, buf, 300, PP_GT, &buf[0], buf, &c);
  CHECK(s == PP_OK && c == kept && memcmp(buf, want, sizeof buf) == 0,
        "pp_select in place with value = &in[0]: %s, count %llu want %zu", pp_status_string(s),
        (unsigned long long)c, kept);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  for (int dev = 0; dev < 2; dev++) {
    arena a = arena_make(ctx, dev);
    forbid_reduce_family(&a);
    forbid_sort_family(&a);
    forbid_histogram_family(&a);
    forbid_dense(&a);
    arena_free(&a);

    /* 300000: several threads on the CPU (PP_CPU_PARALLEL_MIN is 65536), many tiles on
     * the GPU; 4097 and 1: one thread, one tile */
    const size_t sizes[] = {0, 1, 33, 4097, 300000};
    const pp_dtype types[] = {PP_U8, PP_U32, PP_I64, PP_F32, PP_F64};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        inplace_select(ctx, dev, 0, types[ti], sizes[si]);
        inplace_select(ctx, dev, 1, types[ti], sizes[si]);
      }
      const size_t sizes_es[] = {1, 4, 8, 12, 16};
      for (size_t e = 0; e < sizeof sizes_es / sizeof sizes_es[0]; e++)
        inplace_select_flagged(ctx, dev, sizes_es[e], sizes[si]);
      inplace_scan(ctx, dev, PP_F32, PP_MIN, true, sizes[si]);
      inplace_scan(ctx, dev, PP_F64, PP_SUM, false, sizes[si]);
      inplace_scan(ctx, dev, PP_U32, PP_MAX, false, sizes[si]);
    }
    shared_inputs(ctx, dev);
    nbody_shared(ctx, dev);
  }
  value_inside_out(ctx);
  return th_finish(ctx);
}
