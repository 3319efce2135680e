/*
 * test_faults.c — allocation failures, injected one at a time, through every primitive.
 *
 * SQLite's out-of-memory testing (https://sqlite.org/testing.html#anomaly_testing) applied
 * to parprim: for k = 1, 2, ... the k-th allocation a call makes (host, pinned or device,
 * counted by the library's allocation check, src/core/testctl.c) is made to fail. The call
 * must then
 *   - return PP_ERR_OUT_OF_MEMORY with a message naming the function, or PP_OK with the
 *     right result when it has a fallback that needs no memory (pinned staging buffers);
 *   - leave every output byte as it was (canaries) and every input as it was;
 *   - leave the context usable: the same call again, with injection off, gives the
 *     reference result.
 * The loop ends at the first k the call does not reach; k - 1 allocation sites were failed.
 * Every k starts on a fresh context, so allocations a context keeps (pinned buffers, the
 * scan's look-back words) are failed at their first use in every call. Buffers are host
 * memory, host memory off its element alignment (staged through scratch), and on the CUDA
 * backend device memory (pp_malloc of another context). Under LeakSanitizer (the ASan
 * build) the CPU run also shows that no failure path leaks.
 */
#include "harness.h"
#include "th_faults.h"

/* ---- cases: reduce, scan, select ------------------------------------------------------ */

static pp_status call_reduce(pp_context *ctx, fcase *c) {
  return pp_reduce(ctx, c->op, c->t, c->ptr[0], c->n, c->ptr[1]);
}

static void case_reduce(size_t n) {
  fcase c = {.name = "pp_reduce sum u32", .fn = "pp_reduce", .t = PP_U32, .op = PP_SUM, .n = n,
             .call = call_reduce};
  add_buf(&c, IN, n * 4);
  add_buf(&c, OUT, 4);
  uint32_t *x = (uint32_t *)c.init[0], sum = 0;
  for (size_t i = 0; i < n; i++) sum += (x[i] = (uint32_t)th_next(&g_rng));
  memcpy(c.expect[1], &sum, 4);
  run_all_variants(&c);

  fcase d = {.name = "pp_reduce max f32", .fn = "pp_reduce", .t = PP_F32, .op = PP_MAX, .n = n,
             .call = call_reduce};
  add_buf(&d, IN, n * 4);
  add_buf(&d, OUT, 4);
  float *f = (float *)d.init[0], mx = -INFINITY;
  fill_f32(f, n, -1e6f, 1e6f);
  for (size_t i = 0; i < n; i++) mx = f[i] > mx ? f[i] : mx;
  memcpy(d.expect[1], &mx, 4);
  run_all_variants(&d);
}

static pp_status call_argreduce(pp_context *ctx, fcase *c) {
  return pp_argreduce(ctx, c->op, c->t, c->ptr[0], c->n, c->ptr[1], c->ptr[2]);
}

static void case_argreduce(size_t n) {
  fcase c = {.name = "pp_argreduce min u32", .fn = "pp_argreduce", .t = PP_U32, .op = PP_MIN,
             .n = n, .call = call_argreduce};
  add_buf(&c, IN, n * 4);
  add_buf(&c, OUT, 4);
  add_buf(&c, OUT, 8);
  uint32_t *x = (uint32_t *)c.init[0];
  fill_distinct_u32(x, n);
  uint64_t at = 0;
  for (size_t i = 1; i < n; i++)
    if (x[i] < x[at]) at = i;
  memcpy(c.expect[1], &x[at], 4);
  memcpy(c.expect[2], &at, 8);
  run_all_variants(&c);
}

static pp_status call_scan(pp_context *ctx, fcase *c) {
  return pp_scan(ctx, PP_SUM, PP_U32, c->ptr[0], c->ptr[c->nb - 1], c->n, c->flag != 0);
}

static void case_scan(size_t n) {
  /* exclusive, out of place */
  fcase c = {.name = "pp_scan exclusive u32", .fn = "pp_scan", .n = n, .flag = 0,
             .call = call_scan};
  add_buf(&c, IN, n * 4);
  add_buf(&c, OUT, n * 4);
  uint32_t *x = (uint32_t *)c.init[0], *y = (uint32_t *)c.expect[1], acc = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (uint32_t)th_next(&g_rng);
    y[i] = acc;
    acc += x[i];
  }
  run_all_variants(&c);
  /* inclusive, in place */
  fcase d = {.name = "pp_scan inclusive u32 in place", .fn = "pp_scan", .n = n, .flag = 1,
             .call = call_scan};
  add_buf(&d, INOUT, n * 4);
  x = (uint32_t *)d.init[0];
  y = (uint32_t *)d.expect[0];
  acc = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (uint32_t)th_next(&g_rng);
    y[i] = acc += x[i];
  }
  run_all_variants(&d);
}

static pp_status call_select(pp_context *ctx, fcase *c) {
  if (c->flag) return pp_partition(ctx, PP_U32, c->ptr[0], c->n, c->cmpop, &c->value, c->ptr[1], c->ptr[2]);
  return pp_select(ctx, PP_U32, c->ptr[0], c->n, c->cmpop, &c->value, c->ptr[1], c->ptr[2]);
}

static void case_select(size_t n, int partition) {
  fcase c = {.name = partition ? "pp_partition u32 >" : "pp_select u32 >",
             .fn = partition ? "pp_partition" : "pp_select", .n = n, .cmpop = PP_GT,
             .flag = partition, .value = 0x60000000u, .call = call_select};
  add_buf(&c, IN, n * 4);
  int out = add_buf(&c, OUT, n * 4);
  add_buf(&c, OUT, 8);
  uint32_t *x = (uint32_t *)c.init[0], *y = (uint32_t *)c.expect[1];
  uint64_t cnt = 0;
  for (size_t i = 0; i < n; i++) x[i] = (uint32_t)th_next(&g_rng);
  for (size_t i = 0; i < n; i++)
    if (x[i] > c.value) y[cnt++] = x[i];
  memcpy(c.expect[2], &cnt, 8);
  if (partition) {
    size_t j = cnt;
    for (size_t i = 0; i < n; i++)
      if (!(x[i] > c.value)) y[j++] = x[i];
  } else {
    c.cmp[out] = COUNTED;
    c.count_buf[out] = 2;
    c.elem[out] = 4;
  }
  run_all_variants(&c);
}

static pp_status call_select_flagged(pp_context *ctx, fcase *c) {
  return pp_select_flagged(ctx, c->vsize, c->ptr[0], c->ptr[1], c->n, c->ptr[2], c->ptr[3]);
}

static void case_select_flagged(size_t n, size_t es) {
  fcase c = {.name = es == 4 ? "pp_select_flagged 4-byte" : "pp_select_flagged 12-byte",
             .fn = "pp_select_flagged", .n = n, .vsize = es, .call = call_select_flagged};
  add_buf(&c, IN, n * es);
  add_buf(&c, IN, n);
  int out = add_buf(&c, OUT, n * es);
  add_buf(&c, OUT, 8);
  uint64_t cnt = 0;
  for (size_t i = 0; i < n * es; i++) c.init[0][i] = (unsigned char)th_next(&g_rng);
  for (size_t i = 0; i < n; i++) {
    c.init[1][i] = (unsigned char)(th_below(&g_rng, 3) == 0 ? 1 + th_below(&g_rng, 255) : 0);
    if (c.init[1][i]) memcpy(c.expect[2] + es * cnt++, c.init[0] + es * i, es);
  }
  memcpy(c.expect[3], &cnt, 8);
  c.cmp[out] = COUNTED;
  c.count_buf[out] = 3;
  c.elem[out] = es;
  run_all_variants(&c);
}

/* ---- cases: sort, merge, top-k -------------------------------------------------------- */

static pp_status call_sort(pp_context *ctx, fcase *c) {
  pp_sort_opts o = {c->order, c->algo};
  return pp_sort(ctx, c->t, c->ptr[0], c->nb > 1 ? c->ptr[1] : NULL, c->vsize, c->n, &o);
}

typedef struct keyed {
  double key;
  uint64_t idx;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static const char *const algo_name[] = {"auto", "radix", "merge", "sample", "quick"};

/* keys of type t (u32 or f32), values of vsize bytes (0: keys only); the values are the
 * original positions, so stability shows in them. */
static void case_sort(size_t n, pp_dtype t, size_t vsize, pp_sort_algo algo, pp_order order) {
  static char names[64][64];
  static int used;
  char *name = names[used++ % 64];
  snprintf(name, 64, "pp_sort %s %s%s%s", t == PP_U32 ? "u32" : "f32", algo_name[algo],
           vsize ? (vsize == 4 ? " pairs/4" : " pairs/8") : "",
           order == PP_DESCENDING ? " desc" : "");
  fcase c = {.name = name, .fn = "pp_sort", .t = t, .n = n, .vsize = vsize, .algo = algo,
             .order = order, .call = call_sort};
  add_buf(&c, INOUT, n * 4);
  if (vsize) add_buf(&c, INOUT, n * vsize);
  keyed *r = th_xmalloc(n * sizeof *r);
  for (size_t i = 0; i < n; i++) {
    /* few distinct keys, so stability matters */
    uint32_t u = (uint32_t)th_below(&g_rng, n / 8 + 1);
    float f = (float)u * 0.25f - 1000.0f;
    if (t == PP_U32) memcpy(c.init[0] + 4 * i, &u, 4);
    else memcpy(c.init[0] + 4 * i, &f, 4);
    r[i].key = t == PP_U32 ? (double)u : (double)f;
    if (order == PP_DESCENDING) r[i].key = -r[i].key;
    r[i].idx = i;
    if (vsize == 4) {
      uint32_t v = (uint32_t)i;
      memcpy(c.init[1] + 4 * i, &v, 4);
    } else if (vsize == 8) {
      uint64_t v = i;
      memcpy(c.init[1] + 8 * i, &v, 8);
    }
  }
  qsort(r, n, sizeof *r, cmp_keyed);
  for (size_t i = 0; i < n; i++) {
    memcpy(c.expect[0] + 4 * i, c.init[0] + 4 * r[i].idx, 4);
    if (vsize) memcpy(c.expect[1] + vsize * i, c.init[1] + vsize * r[i].idx, vsize);
  }
  free(r);
  run_all_variants(&c);
}

static pp_status call_merge(pp_context *ctx, fcase *c) {
  return pp_merge(ctx, PP_U32, c->ptr[0], c->n, c->ptr[1], c->n2, c->ptr[2], PP_ASCENDING);
}

static void case_merge(size_t na, size_t nb) {
  fcase c = {.name = "pp_merge u32", .fn = "pp_merge", .n = na, .n2 = nb, .call = call_merge};
  add_buf(&c, IN, na * 4);
  add_buf(&c, IN, nb * 4);
  add_buf(&c, OUT, (na + nb) * 4);
  uint32_t *a = (uint32_t *)c.init[0], *b = (uint32_t *)c.init[1], *o = (uint32_t *)c.expect[2];
  for (size_t i = 0; i < na; i++) a[i] = (uint32_t)th_next(&g_rng);
  for (size_t i = 0; i < nb; i++) b[i] = (uint32_t)th_next(&g_rng);
  qsort(a, na, 4, cmp_u32);
  qsort(b, nb, 4, cmp_u32);
  memcpy(o, a, na * 4);
  memcpy(o + na, b, nb * 4);
  qsort(o, na + nb, 4, cmp_u32);
  run_all_variants(&c);
}

static pp_status call_topk(pp_context *ctx, fcase *c) {
  uint64_t *idx = c->nb > 2 ? c->ptr[2] : NULL;
  if (c->rows)
    return pp_topk_rows(ctx, PP_U32, c->ptr[0], c->rows, c->cols, c->k, c->flag != 0, c->ptr[1], idx);
  return pp_topk(ctx, PP_U32, c->ptr[0], c->n, c->k, c->flag != 0, c->ptr[1], idx);
}

/* the values are distinct, so the reversed order needs no tie rule */
static int cmp_keyed_desc(const void *a, const void *b) { return cmp_keyed(b, a); }

/* rows == 0: pp_topk over n; else pp_topk_rows over rows x cols */
static void case_topk(size_t n, size_t rows, size_t cols, size_t k, int largest, int indices) {
  static char names[16][64];
  static int used;
  char *name = names[used++ % 16];
  snprintf(name, 64, "%s u32 k=%zu%s%s", rows ? "pp_topk_rows" : "pp_topk", k,
           largest ? " largest" : " smallest", indices ? "" : " no indices");
  size_t r = rows ? rows : 1, cl = rows ? cols : n;
  fcase c = {.name = name, .fn = rows ? "pp_topk_rows" : "pp_topk", .n = n, .rows = rows,
             .cols = cols, .k = k, .flag = largest, .call = call_topk};
  add_buf(&c, IN, r * cl * 4);
  add_buf(&c, OUT, r * k * 4);
  if (indices) add_buf(&c, OUT, r * k * 8);
  uint32_t *x = (uint32_t *)c.init[0];
  fill_distinct_u32(x, r * cl);
  keyed *t = th_xmalloc(cl * sizeof *t);
  for (size_t row = 0; row < r; row++) {
    for (size_t j = 0; j < cl; j++) t[j] = (keyed){x[row * cl + j], j};
    qsort(t, cl, sizeof *t, largest ? cmp_keyed_desc : cmp_keyed);
    for (size_t j = 0; j < k; j++) {
      const uint32_t v = (uint32_t)t[j].key;
      memcpy(c.expect[1] + 4 * (row * k + j), &v, 4);
      if (indices) memcpy(c.expect[2] + 8 * (row * k + j), &t[j].idx, 8);
    }
  }
  free(t);
  run_all_variants(&c);
}

/* ---- cases: histograms ---------------------------------------------------------------- */

static pp_status call_hist_even(pp_context *ctx, fcase *c) {
  return pp_histogram_even(ctx, PP_F32, c->ptr[0], c->n, c->k, c->lo, c->hi, c->ptr[1]);
}
static pp_status call_hist_range(pp_context *ctx, fcase *c) {
  return pp_histogram_range(ctx, PP_F32, c->ptr[0], c->n, c->ptr[1], c->k, c->ptr[2]);
}
static pp_status call_hist_image(pp_context *ctx, fcase *c) {
  return pp_histogram_image(ctx, c->ptr[0], c->w, c->h, c->pitch, c->flag, c->ptr[1]);
}

static void case_histograms(size_t n) {
  size_t bins = 1000;
  fcase c = {.name = "pp_histogram_even f32", .fn = "pp_histogram_even", .n = n, .k = bins,
             .lo = -1.0, .hi = 1.0, .call = call_hist_even};
  add_buf(&c, IN, n * 4);
  add_buf(&c, OUT, bins * 8);
  float *x = (float *)c.init[0];
  uint64_t *h = (uint64_t *)c.expect[1];
  fill_f32(x, n, -1.2f, 1.2f);
  memset(h, 0, bins * 8);
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    if (v >= c.lo && v < c.hi) {
      size_t b = (size_t)floor((v - c.lo) * (double)bins / (c.hi - c.lo));
      h[b < bins - 1 ? b : bins - 1]++;
    }
  }
  run_all_variants(&c);

  size_t rb = 37;
  fcase d = {.name = "pp_histogram_range f32", .fn = "pp_histogram_range", .n = n, .k = rb,
             .call = call_hist_range};
  add_buf(&d, IN, n * 4);
  add_buf(&d, IN, (rb + 1) * 8);
  add_buf(&d, OUT, rb * 8);
  x = (float *)d.init[0];
  double *e = (double *)d.init[1];
  h = (uint64_t *)d.expect[2];
  fill_f32(x, n, -1.2f, 1.2f);
  for (size_t i = 0; i <= rb; i++) e[i] = -1.0 + 2.0 * ((double)i / rb) * ((double)i / rb);
  memset(h, 0, rb * 8);
  for (size_t i = 0; i < n; i++)
    for (size_t b = 0; b < rb; b++)
      if (e[b] <= x[i] && x[i] < e[b + 1]) h[b]++;
  run_all_variants(&d);

  size_t w = 613, ht = n / 613 / 3 + 1, pitch = w * 3 + 5;
  fcase g = {.name = "pp_histogram_image 3 channels", .fn = "pp_histogram_image", .w = w,
             .h = ht, .pitch = pitch, .flag = 3, .call = call_hist_image};
  add_buf(&g, IN, ht * pitch);
  add_buf(&g, OUT, 3 * 256 * 8);
  h = (uint64_t *)g.expect[1];
  memset(h, 0, 3 * 256 * 8);
  for (size_t i = 0; i < ht * pitch; i++) g.init[0][i] = (unsigned char)th_next(&g_rng);
  for (size_t y = 0; y < ht; y++)
    for (size_t xx = 0; xx < w; xx++)
      for (int ch = 0; ch < 3; ch++) h[ch * 256 + g.init[0][y * pitch + xx * 3 + ch]]++;
  run_all_variants(&g);
}

/* ---- cases: dense kernels -------------------------------------------------------------- */

static pp_status call_sgemm(pp_context *ctx, fcase *c) {
  return pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, c->rows, c->cols, c->k, c->a,
                  c->ptr[0], c->k, c->ptr[1], c->k, c->b, c->ptr[2], c->cols);
}

static void case_sgemm(size_t m, size_t n, size_t k) {
  fcase c = {.name = "pp_sgemm row-major A*B^T", .fn = "pp_sgemm", .rows = m, .cols = n, .k = k,
             .a = 1.5f, .b = 0.5f, .call = call_sgemm};
  add_buf(&c, IN, m * k * 4);
  add_buf(&c, IN, n * k * 4);
  int ci = add_buf(&c, INOUT, m * n * 4);
  float *A = (float *)c.init[0], *B = (float *)c.init[1], *C = (float *)c.init[2],
        *R = (float *)c.expect[2];
  fill_f32(A, m * k, -1, 1);
  fill_f32(B, n * k, -1, 1);
  fill_f32(C, m * n, -1, 1);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t p = 0; p < k; p++) s += (double)A[i * k + p] * B[j * k + p];
      R[i * n + j] = (float)(c.a * s + c.b * C[i * n + j]);
    }
  c.cmp[ci] = F32_TOL;
  c.tol[ci] = 1e-4 * (double)k;
  run_all_variants(&c);
}

/* The border rules of API.md: index i of a line of n pixels, or -1 for a zero read. */
static long remap(long i, long n, pp_border b) {
  if (i >= 0 && i < n) return i;
  if (b == PP_BORDER_ZERO) return -1;
  if (b == PP_BORDER_CLAMP) return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  long p = 2 * (n - 1);
  long m = ((i % p) + p) % p;
  return m < n ? m : p - m;
}

static pp_status call_conv(pp_context *ctx, fcase *c) {
  if (c->nb == 4)
    return pp_conv2d_separable(ctx, c->ptr[0], c->w, c->h, c->w, c->ptr[1], c->fw, c->ptr[2],
                               c->fh, c->border, c->ptr[3], c->pitch);
  return pp_conv2d(ctx, c->ptr[0], c->w, c->h, c->w, c->ptr[1], c->fw, c->fh, c->border,
                   c->ptr[2], c->pitch);
}

static void case_conv(size_t w, size_t h, size_t fw, size_t fh, pp_border border, size_t pitch,
                      int separable) {
  static char names[8][64];
  static int used;
  char *name = names[used++ % 8];
  snprintf(name, 64, "%s %zux%zu%s", separable ? "pp_conv2d_separable" : "pp_conv2d", fw, fh,
           pitch > w ? " pitched" : "");
  fcase c = {.name = name, .fn = separable ? "pp_conv2d_separable" : "pp_conv2d", .w = w, .h = h,
             .fw = fw, .fh = fh, .border = border, .pitch = pitch, .call = call_conv};
  add_buf(&c, IN, w * h * 4);
  float *src = (float *)c.init[0];
  fill_f32(src, w * h, 0, 1);
  double *filt = th_xmalloc(fw * fh * sizeof(double));
  if (separable) {
    add_buf(&c, IN, fw * 4);
    add_buf(&c, IN, fh * 4);
    float *rf = (float *)c.init[1], *cf = (float *)c.init[2];
    fill_f32(rf, fw, -0.5f, 1);
    fill_f32(cf, fh, -0.5f, 1);
    for (size_t y = 0; y < fh; y++)
      for (size_t x = 0; x < fw; x++) filt[y * fw + x] = (double)rf[x] * cf[y];
  } else {
    add_buf(&c, IN, fw * fh * 4);
    float *f = (float *)c.init[1];
    fill_f32(f, fw * fh, -0.5f, 1);
    for (size_t i = 0; i < fw * fh; i++) filt[i] = f[i];
  }
  /* dst with a pitch: the gap between rows is the caller's and stays as it was */
  size_t dst_bytes = ((h - 1) * pitch + w) * 4;
  int di = add_buf(&c, pitch > w ? INOUT : OUT, dst_bytes);
  float *r = (float *)c.expect[di];
  if (pitch > w) fill_f32((float *)c.init[di], dst_bytes / 4, 0, 1);
  if (pitch > w) memcpy(c.expect[di], c.init[di], dst_bytes);
  for (long y = 0; y < (long)h; y++)
    for (long x = 0; x < (long)w; x++) {
      double s = 0;
      for (long dy = 0; dy < (long)fh; dy++)
        for (long dx = 0; dx < (long)fw; dx++) {
          long sy = remap(y + dy - (long)fh / 2, (long)h, border);
          long sx = remap(x + dx - (long)fw / 2, (long)w, border);
          if (sy >= 0 && sx >= 0) s += filt[dy * (long)fw + dx] * src[sy * (long)w + sx];
        }
      r[(size_t)y * pitch + (size_t)x] = (float)s;
    }
  free(filt);
  c.cmp[di] = F32_TOL;
  c.tol[di] = 1e-4 * (double)(fw * fh);
  run_all_variants(&c);
}

/* ---- cases: N-body ----------------------------------------------------------------------- */

/* buffers 0..6: x y z vx vy vz mass */
static pp_bodies bodies_of(fcase *c) {
  pp_bodies b = {c->ptr[0], c->ptr[1], c->ptr[2], c->ptr[3], c->ptr[4], c->ptr[5], c->ptr[6],
                 c->n};
  return b;
}

static pp_status call_accel(pp_context *ctx, fcase *c) {
  pp_bodies b = bodies_of(c);
  return pp_nbody_accel(ctx, &b, c->a, c->ptr[7], c->ptr[8], c->ptr[9]);
}
static pp_status call_step(pp_context *ctx, fcase *c) {
  pp_bodies b = bodies_of(c);
  return pp_nbody_step(ctx, &b, c->b, c->a, c->k);
}
static pp_status call_energy(pp_context *ctx, fcase *c) {
  pp_bodies b = bodies_of(c);
  return pp_nbody_energy(ctx, &b, c->a, c->ptr[7], c->ptr[8]);
}

/* accelerations of n bodies in double (G = 1, Plummer softening eps: r^2 + eps^2) */
static void accel_ref(size_t n, const double *x, const double *y, const double *z,
                      const double *m, double eps, double *ax, double *ay, double *az) {
  for (size_t i = 0; i < n; i++) {
    double sx = 0, sy = 0, sz = 0;
    for (size_t j = 0; j < n; j++) {
      double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
      double r2 = dx * dx + dy * dy + dz * dz + eps * eps;
      if (r2 == 0) continue;
      double inv = 1.0 / (r2 * sqrt(r2));
      sx += m[j] * dx * inv;
      sy += m[j] * dy * inv;
      sz += m[j] * dz * inv;
    }
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
  }
}

static void case_nbody(size_t n, int what /* 0 accel, 1 step, 2 energy */) {
  static const char *const names[] = {"pp_nbody_accel", "pp_nbody_step", "pp_nbody_energy"};
  fcase c = {.name = names[what], .fn = names[what], .n = n, .a = 0.05f, .b = 0.001f, .k = 3,
             .call = what == 0 ? call_accel : what == 1 ? call_step : call_energy};
  for (int i = 0; i < 7; i++) {
    int bi = add_buf(&c, what == 1 ? INOUT : IN, n * 4);
    fill_f32((float *)c.init[bi], n, i == 6 ? 0.5f : -1, 1);
    if (what == 1) {
      c.cmp[bi] = F32_TOL;
      c.tol[bi] = 1e-3;
    }
  }
  double *s[10];
  for (int i = 0; i < 10; i++) s[i] = th_xmalloc(n * sizeof(double));
  for (int i = 0; i < 7; i++)
    for (size_t j = 0; j < n; j++) s[i][j] = ((float *)c.init[i])[j];
  double eps = c.a;
  if (what == 0) {
    accel_ref(n, s[0], s[1], s[2], s[6], eps, s[7], s[8], s[9]);
    double scale = 0;
    for (size_t j = 0; j < n; j++) scale += fabs(s[7][j]) + fabs(s[8][j]) + fabs(s[9][j]);
    scale /= 3.0 * (double)n;
    for (int i = 0; i < 3; i++) {
      int bi = add_buf(&c, OUT, n * 4);
      c.cmp[bi] = F32_TOL;
      c.tol[bi] = 1e-3 * scale; /* relative to the typical acceleration */
      for (size_t j = 0; j < n; j++) ((float *)c.expect[bi])[j] = (float)s[7 + i][j];
    }
  } else if (what == 1) {
    double dt = c.b;
    for (size_t st = 0; st < c.k; st++) { /* kick-drift-kick */
      accel_ref(n, s[0], s[1], s[2], s[6], eps, s[7], s[8], s[9]);
      for (int d = 0; d < 3; d++)
        for (size_t j = 0; j < n; j++) s[3 + d][j] += 0.5 * dt * s[7 + d][j];
      for (int d = 0; d < 3; d++)
        for (size_t j = 0; j < n; j++) s[d][j] += dt * s[3 + d][j];
      accel_ref(n, s[0], s[1], s[2], s[6], eps, s[7], s[8], s[9]);
      for (int d = 0; d < 3; d++)
        for (size_t j = 0; j < n; j++) s[3 + d][j] += 0.5 * dt * s[7 + d][j];
    }
    for (int i = 0; i < 7; i++)
      for (size_t j = 0; j < n; j++) ((float *)c.expect[i])[j] = (float)s[i][j];
  } else {
    double kin = 0, pot = 0;
    for (size_t j = 0; j < n; j++)
      kin += 0.5 * s[6][j] * (s[3][j] * s[3][j] + s[4][j] * s[4][j] + s[5][j] * s[5][j]);
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++) {
        double dx = s[0][j] - s[0][i], dy = s[1][j] - s[1][i], dz = s[2][j] - s[2][i];
        pot -= s[6][i] * s[6][j] / sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
      }
    int ki = add_buf(&c, OUT, 8), pi = add_buf(&c, OUT, 8);
    memcpy(c.expect[ki], &kin, 8);
    memcpy(c.expect[pi], &pot, 8);
    c.cmp[ki] = c.cmp[pi] = F64_TOL;
    c.tol[ki] = c.tol[pi] = 1e-4;
  }
  for (int i = 0; i < 10; i++) free(s[i]);
  run_all_variants(&c);
}

/* ---- the test-control entry itself ------------------------------------------------------ */

static void test_control(pp_context *ctx) {
  CHECK_STATUS(pp_test_control(12345), PP_ERR_INVALID_ARGUMENT, "unknown op");
  CHECK_STATUS(pp_test_control(PP_TESTCTL_ALLOC_COUNT, (uint64_t *)NULL), PP_ERR_INVALID_ARGUMENT,
               "ALLOC_COUNT with NULL");
  CHECK_STATUS(pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)-1, 0), PP_ERR_INVALID_ARGUMENT,
               "FAULT_ALLOC k < 0");
  CHECK_STATUS(pp_test_control(PP_TESTCTL_FAULT_KINDS, 8u), PP_ERR_INVALID_ARGUMENT,
               "FAULT_KINDS with an unknown kind");

  /* pp_malloc is one allocation: counted, and failed when armed */
  void *p = NULL;
  uint64_t before = alloc_count(), fired0 = 0, fired1 = 0;
  pp_test_control(PP_TESTCTL_FAULTS_FIRED, &fired0);
  CHECK_STATUS(pp_malloc(ctx, &p, 1000), PP_OK, "pp_malloc");
  CHECK(alloc_count() == before + 1, "pp_malloc counted %llu allocations, want 1",
        (unsigned long long)(alloc_count() - before));
  pp_free(ctx, p);
  p = NULL;
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)1, 0);
  CHECK_STATUS(pp_malloc(ctx, &p, 1000), PP_ERR_OUT_OF_MEMORY, "pp_malloc, first allocation failed");
  CHECK(p == NULL, "pp_malloc wrote *ptr on failure");
  CHECK(th_names(pp_last_error(ctx), "pp_malloc"), "message: %s", pp_last_error(ctx));
  /* fail-once: the next one succeeds */
  CHECK_STATUS(pp_malloc(ctx, &p, 1000), PP_OK, "pp_malloc after the injected failure");
  pp_free(ctx, p);
  pp_test_control(PP_TESTCTL_FAULTS_FIRED, &fired1);
  CHECK(fired1 == fired0 + 1, "faults fired: %llu, want 1", (unsigned long long)(fired1 - fired0));
  /* persistent: every allocation from the k-th on fails */
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)2, 1);
  void *q[3] = {0};
  CHECK_STATUS(pp_malloc(ctx, &q[0], 64), PP_OK, "persistent k=2, first allocation");
  CHECK_STATUS(pp_malloc(ctx, &q[1], 64), PP_ERR_OUT_OF_MEMORY, "persistent k=2, second");
  CHECK_STATUS(pp_malloc(ctx, &q[2], 64), PP_ERR_OUT_OF_MEMORY, "persistent k=2, third");
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
  for (int i = 0; i < 3; i++) pp_free(ctx, q[i]);
  /* a kind left out of the mask neither counts nor fails */
  pp_alloc_kind mine = g_backend == PP_BACKEND_CUDA ? PP_ALLOC_DEVICE : PP_ALLOC_HOST;
  pp_test_control(PP_TESTCTL_FAULT_KINDS, ((1u << PP_ALLOC_KINDS) - 1) & ~(1u << mine));
  before = alloc_count();
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)1, 1);
  CHECK_STATUS(pp_malloc(ctx, &p, 64), PP_OK, "pp_malloc with its kind masked out");
  pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
  CHECK(alloc_count() == before, "a masked kind was counted");
  pp_free(ctx, p);
  pp_test_control(PP_TESTCTL_FAULT_KINDS, (1u << PP_ALLOC_KINDS) - 1);

  /* the top-k knobs: set, read back, restore */
  int v = 0;
  CHECK_STATUS(pp_test_control(PP_TESTCTL_TOPK_KNOB_GET, PP_TOPK_KNOB_HIST, &v), PP_OK, "knob get");
  CHECK(v == -1, "knob HIST unset reads %d", v);
  CHECK_STATUS(pp_test_control(PP_TESTCTL_TOPK_KNOB, PP_TOPK_KNOB_HIST, 1), PP_OK, "knob set");
  pp_test_control(PP_TESTCTL_TOPK_KNOB_GET, PP_TOPK_KNOB_HIST, &v);
  CHECK(v == 1, "knob HIST reads %d after set to 1", v);
  CHECK(pp_topk_knob_value(PP_TOPK_KNOB_HIST, 2, 0, 2) == 1, "knob value in range");
  CHECK(pp_topk_knob_value(PP_TOPK_KNOB_HIST, 2, 2, 2) == 2, "knob out of range gives default");
  CHECK_STATUS(pp_test_control(PP_TESTCTL_TOPK_KNOB, PP_TOPK_KNOB_HIST, -1), PP_OK, "knob reset");
  CHECK(pp_topk_knob_value(PP_TOPK_KNOB_HIST, 2, 0, 2) == 2, "knob reset gives default");
  CHECK_STATUS(pp_test_control(PP_TESTCTL_TOPK_KNOB, PP_TOPK_KNOBS, 0), PP_ERR_INVALID_ARGUMENT,
               "unknown knob");
}

/* The CUDA top-k's knobs, set through the test-control entry: each route they select gives
 * the reference result (the CPU backend has no such knobs and must be right regardless). */
static void test_topk_knobs(pp_context *ctx, size_t n, size_t rows, size_t cols) {
  static const struct { int knob, value; } settings[] = {
      {PP_TOPK_KNOB_HIST, 0}, {PP_TOPK_KNOB_HIST, 1}, {PP_TOPK_KNOB_HIST, 2},
      {PP_TOPK_KNOB_SAMPLED, 0}, {PP_TOPK_KNOB_SEG_BPS, 0}, {PP_TOPK_KNOB_SEG_BPS, 2},
      {PP_TOPK_KNOB_GMAX, 1}, {PP_TOPK_KNOB_ROW_GMAX, 1}, {PP_TOPK_KNOB_RUNS, 0},
      {PP_TOPK_KNOB_SKIP, 0}};
  const size_t k = 100, kr = 10;
  uint32_t *x = th_xmalloc(n * 4), *want = th_xmalloc(k * 4), *got = th_xmalloc(k * 4);
  uint32_t *xr = th_xmalloc(rows * cols * 4), *wantr = th_xmalloc(rows * kr * 4),
           *gotr = th_xmalloc(rows * kr * 4);
  fill_distinct_u32(x, n);
  fill_distinct_u32(xr, rows * cols);
  /* references: the k largest, read off a sorted copy */
  uint32_t *tmp = th_xmalloc((n > cols ? n : cols) * 4);
  memcpy(tmp, x, n * 4);
  qsort(tmp, n, 4, cmp_u32);
  for (size_t j = 0; j < k; j++) want[j] = tmp[n - 1 - j];
  for (size_t r = 0; r < rows; r++) {
    memcpy(tmp, xr + r * cols, cols * 4);
    qsort(tmp, cols, 4, cmp_u32);
    for (size_t j = 0; j < kr; j++) wantr[r * kr + j] = tmp[cols - 1 - j];
  }
  free(tmp);
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
    CHECK_STATUS(pp_test_control(PP_TESTCTL_TOPK_KNOB, settings[i].knob, settings[i].value),
                 PP_OK, "set top-k knob %d to %d", settings[i].knob, settings[i].value);
    memset(got, 0, k * 4);
    memset(gotr, 0, rows * kr * 4);
    pp_status s = pp_topk(ctx, PP_U32, x, n, k, true, got, NULL);
    CHECK_STATUS(s, PP_OK, "pp_topk, knob %d = %d (%s)", settings[i].knob, settings[i].value,
                 pp_last_error(ctx));
    CHECK(memcmp(got, want, k * 4) == 0, "pp_topk with knob %d = %d differs from the reference",
          settings[i].knob, settings[i].value);
    s = pp_topk_rows(ctx, PP_U32, xr, rows, cols, kr, true, gotr, NULL);
    CHECK_STATUS(s, PP_OK, "pp_topk_rows, knob %d = %d (%s)", settings[i].knob,
                 settings[i].value, pp_last_error(ctx));
    CHECK(memcmp(gotr, wantr, rows * kr * 4) == 0,
          "pp_topk_rows with knob %d = %d differs from the reference", settings[i].knob,
          settings[i].value);
    pp_test_control(PP_TESTCTL_TOPK_KNOB, settings[i].knob, -1);
  }
  free(x);
  free(want);
  free(got);
  free(xr);
  free(wantr);
  free(gotr);
}

/* pp_create itself: each of its allocations failed in turn gives OUT_OF_MEMORY, no
 * context and (under LeakSanitizer) no leak. */
static void test_create(void) {
  long sites = 0;
  for (int64_t k = 1; k <= 100; k++) {
    pp_context *ctx = (pp_context *)&sites; /* pp_create must set it to NULL on failure */
    uint64_t before = alloc_count();
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, k, 0);
    pp_status s = pp_create(&ctx, g_backend);
    pp_test_control(PP_TESTCTL_FAULT_ALLOC, (int64_t)0, 0);
    int fired = alloc_count() - before >= (uint64_t)k;
    if (s == PP_OK) {
      CHECK(ctx != NULL, "pp_create k=%lld: PP_OK without a context", (long long)k);
      pp_destroy(ctx);
    } else {
      CHECK_STATUS(s, PP_ERR_OUT_OF_MEMORY, "pp_create k=%lld (%s)", (long long)k,
                   pp_last_error(NULL));
      CHECK(ctx == NULL, "pp_create k=%lld: failed but *ctx is not NULL", (long long)k);
      CHECK(th_names(pp_last_error(NULL), "pp_create"), "pp_create k=%lld: message \"%s\"",
            (long long)k, pp_last_error(NULL));
      sites++;
    }
    if (!fired) break;
  }
  printf("  %-38s %-15s %3ld allocation sites failed\n", "pp_create", "", sites);
  g_sites_total += sites;
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  g_backend = pp_backend_of(ctx);
  g_data = ctx;
  g_rng = th_rng_make(21);
  int cuda = g_backend == PP_BACKEND_CUDA;
  /* 1-D sizes: past the CPU's parallel threshold; on the GPU past one pinned staging chunk
   * (16 MiB) and the sizes where the multi-pass and sampled paths begin.
   * PARPRIM_TEST_QUICK=1 (runs under compute-sanitizer) keeps to 4 MiB, still staged
   * through the pinned buffers. */
  size_t big = th_quick() ? ((size_t)1 << 20) + 7 : ((size_t)1 << 22) + 7;
  /* under racecheck and synccheck (sampling on): one GPU tile's worth, past the CPU's
   * threshold; the staging through pinned buffers is host code, which memcheck's run
   * (no sampling) covers at 2^20 */
  if (th_sample_every() > 1) big = 65543;
  size_t n = cuda ? big : 100003;

  test_control(ctx);
  test_create();
  test_topk_knobs(ctx, n, 2000, 3000);
  case_reduce(n);
  case_argreduce(n);
  case_scan(n);
  case_select(n, 0);
  case_select(n, 1);
  case_select_flagged(n, 4);
  case_select_flagged(n / 4 + 1, 12);
  for (int a = PP_SORT_AUTO; a <= PP_SORT_QUICK; a++) {
    size_t ns = a == PP_SORT_QUICK && !cuda ? n / 2 : n;
    case_sort(ns, PP_U32, 0, (pp_sort_algo)a, PP_ASCENDING);
    case_sort(ns, PP_U32, 4, (pp_sort_algo)a, PP_ASCENDING);
  }
  case_sort(n, PP_F32, 8, PP_SORT_AUTO, PP_DESCENDING);
  case_sort(n, PP_F32, 8, PP_SORT_RADIX, PP_ASCENDING);
  case_merge(n / 2 + 3, n / 3 + 5);
  case_topk(n, 0, 0, 37, 1, 1);
  case_topk(n, 0, 0, 4100, 0, 1);
  case_topk(n, 0, 0, 100, 1, 0);
  case_topk(0, 300, 1000, 10, 1, 1);
  case_topk(0, 7, 20000, 300, 0, 1);
  case_histograms(n);
  case_sgemm(130, 150, 170);
  case_conv(517, 300, 3, 3, PP_BORDER_MIRROR, 517, 0);
  case_conv(517, 300, 7, 5, PP_BORDER_ZERO, 530, 0);
  case_conv(517, 300, 5, 9, PP_BORDER_CLAMP, 517, 1);
  case_nbody(1000, 0);
  case_nbody(1000, 1);
  case_nbody(1000, 2);
  printf("allocation sites failed in all: %ld\n", g_sites_total);
  CHECK(g_sites_total > 0, "no allocation was ever failed: the injection is not wired");
  return th_finish(ctx);
}
