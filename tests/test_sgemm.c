/*
 * test_sgemm.c — pp_sgemm against a serial double-precision reference written here.
 *
 * Usage: test_sgemm [cpu|cuda]
 *
 * Accuracy contract (written down here). With r(i,j) = sum_p op(A)(i,p) op(B)(p,j)
 * and s(i,j) = sum_p |op(A)(i,p) op(B)(p,j)|, both exact (in double), and c the old C:
 *     |got - (alpha r + beta c)| <= (k + 3) * FLT_EPSILON * (|alpha| s + |beta c|) + FLT_MIN
 * (any order of FP32 summation, with or without fused multiply-adds, stays inside it).
 * Integer-valued data is checked exactly instead: every product and partial sum is then
 * an integer below 2^24, so any summation order gives the exact result, and one wrong or
 * missing term shows. Semantics checked as well:
 *  - every layout x transpose combination, leading dimensions above the minimum, odd
 *    sizes, m, n or k of 1, sizes around the 128 x 256 tiles and the 16-deep k-slices,
 *    rows along k that are 16-byte aligned but end inside a 16-byte unit,
 *    shapes that take the GPU's split-K path;
 *  - beta == 0: C is not read (NaN there gives a finite result);
 *  - alpha == 0 or k == 0: C = beta * C and A and B are not read (NaN there is ignored),
 *    as the reference BLAS does;
 *  - NaN and inf in A or B reach exactly the outputs that use them;
 *  - nothing outside the m x n elements of C is written (the gaps between lines and a
 *    tail hold a sentinel), and the padding of A and B is NaN, so reading it shows;
 *  - pointers in host memory and pp_malloc memory, at element offsets 0 and 1
 *    (unaligned for the GPU's 16-byte path), and odd leading dimensions;
 *  - repeated calls give identical bits; argument errors write nothing.
 * PARPRIM_TEST_SEED varies the data.
 */
#include "harness.h"

#include <float.h>
#include <math.h>

#define GUARD 9               /* sentinel floats after each matrix */
#define SENTINEL (-777.25f)   /* in C's gaps: must survive every call */

/* ---- one problem and its storage ----------------------------------------------------- */

typedef struct gcase {
  pp_layout lay;
  pp_trans ta, tb;
  size_t m, n, k;
  size_t lda, ldb, ldc; /* 0: the minimum */
  float alpha, beta;
} gcase;

typedef enum data_kind { DATA_RANDOM, DATA_INTEGER } data_kind;

typedef struct where {
  int device; /* 1: pp_malloc memory (device memory on CUDA) */
  int offset; /* element offset of every matrix from an aligned start */
} where;

/* Storage of one operand: `lines` lines of `len` elements, ld apart. op(X)(r, c) is at
 * r*ld + c when `rowish`, else at c*ld + r. */
typedef struct shape {
  size_t lines, len, ld;
  int rowish;
} shape;

static size_t max1(size_t x) { return x ? x : 1; }

/* A rows x cols matrix with leading dimension ld (0: packed): rowish when its lines are
 * rows (row-major and not transposed, or column-major and transposed). */
static shape shape_of(int rowish, size_t rows, size_t cols, size_t ld) {
  shape s;
  s.rowish = rowish;
  s.lines = rowish ? rows : cols;
  s.len = rowish ? cols : rows;
  s.ld = ld ? ld : max1(s.len);
  return s;
}

static shape shape_a(const gcase *g) {
  return shape_of((g->lay == PP_ROW_MAJOR) == (g->ta == PP_NO_TRANS), g->m, g->k, g->lda);
}

static shape shape_b(const gcase *g) {
  return shape_of((g->lay == PP_ROW_MAJOR) == (g->tb == PP_NO_TRANS), g->k, g->n, g->ldb);
}

static shape shape_c(const gcase *g) { return shape_of(g->lay == PP_ROW_MAJOR, g->m, g->n, g->ldc); }

static size_t at(const shape *s, size_t r, size_t c) { return s->rowish ? r * s->ld + c : c * s->ld + r; }
/* floats from the matrix's start to the end of its guard */
static size_t span(const shape *s) { return s->lines * s->ld + GUARD; }
static int in_matrix(const shape *s, size_t idx) {
  return idx < s->lines * s->ld && idx % s->ld < s->len;
}

static float rand_value(th_rng *r, data_kind d) {
  if (d == DATA_INTEGER) return (float)((int)th_below(r, 9) - 4);
  return (float)th_range(r, -1.0, 1.0);
}

/* Matrix elements random, everything else in the span `pad`. */
static void fill(float *x, const shape *s, th_rng *r, data_kind d, float pad) {
  for (size_t i = 0; i < span(s); i++) x[i] = in_matrix(s, i) ? rand_value(r, d) : pad;
}

/* ---- reference --------------------------------------------------------------------- */

/* want[i*n + j] = alpha r + beta c (double), bound[...] the tolerance; A and B are read
 * through op() into dense double copies so the dot products run contiguously. */
static void reference(const gcase *g, const float *A, const float *B, const float *C0,
                      double *want, double *bound) {
  shape sa = shape_a(g), sb = shape_b(g), sc = shape_c(g);
  size_t m = g->m, n = g->n, k = g->k;
  double *a = th_xmalloc(m * max1(k) * sizeof(double)), *bt = th_xmalloc(n * max1(k) * sizeof(double));
  for (size_t i = 0; i < m; i++)
    for (size_t p = 0; p < k; p++) a[i * k + p] = A[at(&sa, i, p)];
  for (size_t j = 0; j < n; j++)
    for (size_t p = 0; p < k; p++) bt[j * k + p] = B[at(&sb, p, j)];
  const double eps = FLT_EPSILON;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double r = 0.0, s = 0.0;
      const double *x = a + i * k, *y = bt + j * k;
      if (g->alpha != 0.0f)
        for (size_t p = 0; p < k; p++) {
          r += x[p] * y[p];
          s += fabs(x[p] * y[p]);
        }
      double c = g->beta != 0.0f ? (double)C0[at(&sc, i, j)] * g->beta : 0.0;
      want[i * n + j] = (double)g->alpha * r + c;
      bound[i * n + j] = (double)(k + 3) * eps * (fabs((double)g->alpha) * s + fabs(c)) + FLT_MIN;
    }
  free(a);
  free(bt);
}

/* ---- running one case ------------------------------------------------------------------ */

typedef struct buffers {
  float *hA, *hB, *hC, *hC0; /* host copies (hC0: C before the call) */
  size_t na, nb, nc;         /* floats in each span */
} buffers;

/* Calls pp_sgemm with the matrices placed as w says; C's result lands in b->hC. */
static pp_status call_placed(pp_context *ctx, const gcase *g, buffers *b, where w) {
  shape sa = shape_a(g), sb = shape_b(g), sc = shape_c(g);
  const size_t off = (size_t)w.offset;
  if (!w.device)
    return pp_sgemm(ctx, g->lay, g->ta, g->tb, g->m, g->n, g->k, g->alpha, b->hA, sa.ld, b->hB,
                    sb.ld, g->beta, b->hC, sc.ld);
  float *dA = th_dev_alloc(ctx, (b->na + off) * sizeof(float));
  float *dB = th_dev_alloc(ctx, (b->nb + off) * sizeof(float));
  float *dC = th_dev_alloc(ctx, (b->nc + off) * sizeof(float));
  th_copy(ctx, dA + off, b->hA, b->na * sizeof(float));
  th_copy(ctx, dB + off, b->hB, b->nb * sizeof(float));
  th_copy(ctx, dC + off, b->hC, b->nc * sizeof(float));
  pp_status s = pp_sgemm(ctx, g->lay, g->ta, g->tb, g->m, g->n, g->k, g->alpha, dA + off, sa.ld,
                         dB + off, sb.ld, g->beta, dC + off, sc.ld);
  th_copy(ctx, b->hC, dC + off, b->nc * sizeof(float));
  th_dev_free(ctx, dA);
  th_dev_free(ctx, dB);
  th_dev_free(ctx, dC);
  return s;
}

/* Host buffers with the requested offset from an aligned start: hA etc. point inside. */
typedef struct host_alloc {
  float *base[4];
} host_alloc;

static void buffers_make(buffers *b, host_alloc *h, const gcase *g, where w) {
  shape sa = shape_a(g), sb = shape_b(g), sc = shape_c(g);
  b->na = span(&sa);
  b->nb = span(&sb);
  b->nc = span(&sc);
  size_t off = w.device ? 0 : (size_t)w.offset; /* device buffers get it in call_placed */
  h->base[0] = th_xmalloc((b->na + off) * sizeof(float));
  h->base[1] = th_xmalloc((b->nb + off) * sizeof(float));
  h->base[2] = th_xmalloc((b->nc + off) * sizeof(float));
  h->base[3] = th_xmalloc(b->nc * sizeof(float));
  b->hA = h->base[0] + off;
  b->hB = h->base[1] + off;
  b->hC = h->base[2] + off;
  b->hC0 = h->base[3];
}

static void buffers_free(host_alloc *h) {
  for (int i = 0; i < 4; i++) free(h->base[i]);
}

static const char *lay_name(pp_layout l) { return l == PP_ROW_MAJOR ? "row" : "col"; }
static char tch(pp_trans t) { return t == PP_TRANS ? 'T' : 'N'; }

#define CASE_FMT "%s %c%c m=%zu n=%zu k=%zu ld=%zu/%zu/%zu alpha=%g beta=%g %s+%d"
#define CASE_ARGS(g, sa, sb, sc, w)                                                          \
  lay_name((g)->lay), tch((g)->ta), tch((g)->tb), (g)->m, (g)->n, (g)->k, (sa).ld, (sb).ld, \
      (sc).ld, (double)(g)->alpha, (double)(g)->beta, (w).device ? "dev" : "host", (w).offset

/* Checks the m x n results of C against want/bound (exact when `exact`), and that the
 * rest of C's span still holds the sentinel. Returns the number of bad elements. */
static size_t check_c(const gcase *g, const buffers *b, const double *want, const double *bound,
                      int exact, where w) {
  shape sa = shape_a(g), sb = shape_b(g), sc = shape_c(g);
  size_t bad = 0;
  for (size_t i = 0; i < g->m; i++)
    for (size_t j = 0; j < g->n; j++) {
      float got = b->hC[at(&sc, i, j)];
      double wv = want[i * g->n + j];
      int ok = exact ? (double)got == wv
                     : (isnan(wv) ? isnan(got) : fabs((double)got - wv) <= bound[i * g->n + j]);
      if (!ok && bad++ < 3)
        CHECK(0, CASE_FMT ": C(%zu,%zu) = %.9g, want %.9g (bound %.3g)", CASE_ARGS(g, sa, sb, sc, w),
              i, j, (double)got, wv, exact ? 0.0 : bound[i * g->n + j]);
    }
  size_t touched = 0;
  for (size_t i = 0; i < b->nc; i++)
    if (!in_matrix(&sc, i) && !(b->hC[i] == SENTINEL) && touched++ < 3)
      CHECK(0, CASE_FMT ": C[%zu] outside the matrix changed to %g", CASE_ARGS(g, sa, sb, sc, w), i,
            (double)b->hC[i]);
  CHECK(bad == 0 && touched == 0, CASE_FMT ": %zu wrong results, %zu writes outside",
        CASE_ARGS(g, sa, sb, sc, w), bad, touched);
  return bad + touched;
}

/* buffers_make, then A and B filled with data d (their padding NaN) and C with d (its
 * padding the sentinel); the three shapes come back for the checks. */
static void buffers_filled(buffers *b, host_alloc *h, const gcase *g, where w, th_rng *r,
                           data_kind d, shape *sa, shape *sb, shape *sc) {
  buffers_make(b, h, g, w);
  *sa = shape_a(g);
  *sb = shape_b(g);
  *sc = shape_c(g);
  fill(b->hA, sa, r, d, NAN);
  fill(b->hB, sb, r, d, NAN);
  fill(b->hC, sc, r, d, SENTINEL);
}

/* Random (or integer) data; C starts random unless c_nan; padding of A, B NaN. */
static void run_case(pp_context *ctx, const gcase *g, data_kind d, where w, int c_nan,
                     uint64_t stream) {
  if (!th_sampled()) return;
  th_rng r = th_rng_make(stream);
  buffers b;
  host_alloc h;
  shape sa, sb, sc;
  buffers_filled(&b, &h, g, w, &r, d, &sa, &sb, &sc);
  if (c_nan)
    for (size_t i = 0; i < b.nc; i++)
      if (in_matrix(&sc, i)) b.hC[i] = NAN;
  memcpy(b.hC0, b.hC, b.nc * sizeof(float));
  double *want = th_xmalloc(max1(g->m * g->n) * sizeof(double));
  double *bound = th_xmalloc(max1(g->m * g->n) * sizeof(double));
  reference(g, b.hA, b.hB, b.hC0, want, bound);
  pp_status s = call_placed(ctx, g, &b, w);
  if (CHECK_STATUS(s, PP_OK, CASE_FMT, CASE_ARGS(g, sa, sb, sc, w)))
    check_c(g, &b, want, bound, d == DATA_INTEGER, w);
  free(want);
  free(bound);
  buffers_free(&h);
}

/* ---- the groups of cases ------------------------------------------------------------- */

static const pp_layout layouts[2] = {PP_ROW_MAJOR, PP_COL_MAJOR};
static const pp_trans transes[2] = {PP_NO_TRANS, PP_TRANS};

/* Minimal ld, or a little more (odd) or a lot more, in turn. */
static size_t pick_ld(size_t len, unsigned turn) {
  switch (turn % 3) {
  case 0: return 0;
  case 1: return max1(len) + 1 + turn % 5;
  default: return max1(len) + 64;
  }
}

static void shapes_all_combos(pp_context *ctx, int gpu) {
  static const size_t shapes[][3] = {
      {1, 1, 1},     {1, 1, 7},     {1, 37, 5},    {29, 1, 13},    {3, 5, 1},
      {17, 33, 65},  {64, 64, 64},  {127, 129, 8}, {128, 128, 128}, {129, 127, 131},
      {131, 257, 17}, {255, 130, 300}, {33, 300, 1030}, {300, 33, 257}, {2, 520, 129},
  };
  static const float ab[][2] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.5f, 1.0f}, {2.0f, -0.25f}};
  unsigned turn = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int l = 0; l < 2; l++)
      for (int a = 0; a < 2; a++)
        for (int bt = 0; bt < 2; bt++, turn++) {
          gcase g = {layouts[l], transes[a], transes[bt], shapes[s][0], shapes[s][1], shapes[s][2],
                     0, 0, 0, ab[turn % 4][0], ab[turn % 4][1]};
          shape sa = shape_a(&g), sb = shape_b(&g), sc = shape_c(&g);
          g.lda = pick_ld(sa.len, turn);
          g.ldb = pick_ld(sb.len, turn + 1);
          g.ldc = pick_ld(sc.len, turn + 2);
          where w = {gpu ? (int)(turn % 2) : 0, (int)((turn / 2) % 2)};
          run_case(ctx, &g, DATA_RANDOM, w, 0, 1000 + turn);
          /* the same shape on integers: exact */
          g.alpha = 1.0f;
          g.beta = turn % 3 == 0 ? 0.0f : -1.0f;
          run_case(ctx, &g, DATA_INTEGER, w, 0, 5000 + turn);
        }
}

/* Sizes a production kernel meets: full tiles, odd tails, split-K (few tiles, long k). */
static void shapes_large(pp_context *ctx, int gpu) {
  static const size_t shapes[][3] = {
      {1000, 1000, 1000}, {1031, 1029, 1027}, {256, 256, 4096}, {200, 3000, 513}, {4, 4, 70000},
  };
  /* quick: the shapes' edges and tails, with a quarter of each dimension */
  const size_t q = th_quick() ? 4 : 1;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    gcase g = {layouts[s % 2], transes[(s / 2) % 2], transes[(s + 1) / 2 % 2], shapes[s][0] / q + (q > 1),
               shapes[s][1] / q + (q > 1), shapes[s][2] / q + (q > 1), 0, 0, 0, 1.25f, s % 2 ? 0.5f : 0.0f};
    where w = {gpu ? (int)(s % 2) : 0, (int)(s == 1)};
    run_case(ctx, &g, DATA_RANDOM, w, 0, 9000 + s);
    /* integers catch a single wrong term that a k-scaled tolerance could hide */
    g.alpha = 1.0f;
    g.beta = 0.0f;
    g.ta = transes[s % 2];
    run_case(ctx, &g, DATA_INTEGER, w, 0, 9500 + s);
  }
}

/* Interior tiles in every load mode: C spans two full 128 x 256 tiles each way plus an
 * edge (in either layout), k is long (many slices through the pipeline) and, in one shape,
 * not a multiple of the slice depth; leading dimensions minimal (16-byte aligned rows:
 * 16-byte copies), odd (4-byte copies) and padded, so each operand meets the transposing,
 * 4-byte and 16-byte copy modes of the unpredicated interior path. */
static void shapes_interior_all_modes(pp_context *ctx, int gpu) {
  static const size_t shapes[][3] = {{520, 516, 333}, {264, 600, 96}};
  unsigned turn = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int l = 0; l < 2; l++)
      for (int a = 0; a < 2; a++)
        for (int bt = 0; bt < 2; bt++, turn++) {
          gcase g = {layouts[l], transes[a], transes[bt], shapes[s][0], shapes[s][1],
                     shapes[s][2], 0, 0, 0, 1.0f, turn % 2 ? 0.5f : 0.0f};
          shape sa = shape_a(&g), sb = shape_b(&g);
          g.lda = pick_ld(sa.len, turn);
          g.ldb = pick_ld(sb.len, turn + 2);
          where w = {gpu, 0};
          run_case(ctx, &g, DATA_RANDOM, w, 0, 40000 + turn);
          g.beta = 0.0f;
          run_case(ctx, &g, DATA_INTEGER, w, 0, 41000 + turn);
        }
}

/* Operands stored along k with 16-byte aligned rows (lda or ldb a multiple of 4) whose k
 * is not: the last elements of a row share a 16-byte unit with the NaN padding right after
 * them, and k ends inside a 16-deep slice; m, n off the 128 x 256 tiles. A GPU kernel that
 * copied such rows in 16-byte pieces without care would pull the NaN in. In column-major
 * the operand stored that way is B. */
static void shapes_aligned_k_rows(pp_context *ctx, int gpu) {
  static const size_t shapes[][4] = {/* m, n, k, ld of the operand stored along k */
                                     {131, 259, 37, 40}, {129, 300, 18, 20}, {200, 513, 61, 64},
                                     {257, 130, 300, 304}, {5, 7, 3, 4}, {130, 260, 1000, 1004}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int l = 0; l < 2; l++) {
      gcase g = {layouts[l], PP_NO_TRANS, PP_NO_TRANS, shapes[s][0], shapes[s][1], shapes[s][2],
                 0, 0, 0, 1.0f, s % 2 ? 0.75f : 0.0f};
      if (l == 0) g.lda = shapes[s][3];
      else g.ldb = shapes[s][3];
      where w = {gpu, 0};
      run_case(ctx, &g, DATA_RANDOM, w, 0, 30000 + (unsigned)(2 * s + l));
      g.beta = 0.0f;
      run_case(ctx, &g, DATA_INTEGER, w, 0, 31000 + (unsigned)(2 * s + l));
    }
}

/* beta == 0 with NaN in C; alpha == 0 and k == 0 with NaN in A and B. */
static void special_scalars(pp_context *ctx, int gpu) {
  for (int l = 0; l < 2; l++)
    for (int t = 0; t < 4; t++) {
      where w = {gpu ? t % 2 : 0, t / 2};
      gcase g = {layouts[l], transes[t % 2], transes[t / 2], 67, 45, 33, 0, 0, 0, 1.5f, 0.0f};
      run_case(ctx, &g, DATA_RANDOM, w, 1, 20000 + (unsigned)(l * 4 + t)); /* NaN in C, beta 0 */

      /* alpha == 0: C = beta * C exactly, A and B (all NaN) not read */
      for (int kz = 0; kz < 2; kz++) {
        gcase z = {layouts[l], transes[t % 2], transes[t / 2], 37, 29, kz ? 0 : 19, 0, 0, 0,
                   kz ? 2.0f : 0.0f, t % 2 ? 0.0f : -3.0f};
        th_rng r = th_rng_make(21000 + (unsigned)(l * 8 + t * 2 + kz));
        buffers b;
        host_alloc h;
        buffers_make(&b, &h, &z, w);
        shape sa = shape_a(&z), sb = shape_b(&z), sc = shape_c(&z);
        for (size_t i = 0; i < b.na; i++) b.hA[i] = NAN;
        for (size_t i = 0; i < b.nb; i++) b.hB[i] = NAN;
        fill(b.hC, &sc, &r, DATA_RANDOM, SENTINEL);
        if (z.beta == 0.0f)
          for (size_t i = 0; i < b.nc; i++)
            if (in_matrix(&sc, i)) b.hC[i] = NAN;
        memcpy(b.hC0, b.hC, b.nc * sizeof(float));
        pp_status s = call_placed(ctx, &z, &b, w);
        if (CHECK_STATUS(s, PP_OK, CASE_FMT, CASE_ARGS(&z, sa, sb, sc, w))) {
          double *want = th_xmalloc(z.m * z.n * sizeof(double));
          for (size_t i = 0; i < z.m; i++)
            for (size_t j = 0; j < z.n; j++)
              want[i * z.n + j] = z.beta == 0.0f ? 0.0 : (double)(z.beta * b.hC0[at(&sc, i, j)]);
          check_c(&z, &b, want, NULL, 1, w);
          free(want);
        }
        buffers_free(&h);
      }
    }
}

/* One NaN in A poisons one row of C; one inf in B one column, with the sign of each
 * product; everything else stays exact (integer data). */
static void nan_inf_propagation(pp_context *ctx, int gpu) {
  for (int l = 0; l < 2; l++)
    for (int t = 0; t < 4; t++) {
      gcase g = {layouts[l], transes[t % 2], transes[t / 2], 150, 140, 45, 0, 0, 0, 1.0f, 0.0f};
      where w = {gpu ? t % 2 : 0, (t + l) % 2};
      th_rng r = th_rng_make(22000 + (unsigned)(l * 4 + t));
      buffers b;
      host_alloc h;
      shape sa, sb, sc;
      buffers_filled(&b, &h, &g, w, &r, DATA_INTEGER, &sa, &sb, &sc);
      /* no zeros in A's column p1, so inf * 0 cannot make a NaN by accident */
      const size_t i0 = 131, p0 = 17, p1 = 40, j1 = 129;
      for (size_t i = 0; i < g.m; i++)
        if (b.hA[at(&sa, i, p1)] == 0.0f) b.hA[at(&sa, i, p1)] = 3.0f;
      b.hA[at(&sa, i0, p0)] = NAN;
      b.hB[at(&sb, p1, j1)] = INFINITY;
      memcpy(b.hC0, b.hC, b.nc * sizeof(float));
      double *want = th_xmalloc(g.m * g.n * sizeof(double));
      double *bound = th_xmalloc(g.m * g.n * sizeof(double));
      reference(&g, b.hA, b.hB, b.hC0, want, bound);
      pp_status s = call_placed(ctx, &g, &b, w);
      if (CHECK_STATUS(s, PP_OK, CASE_FMT, CASE_ARGS(&g, sa, sb, sc, w))) {
        size_t bad = 0;
        for (size_t i = 0; i < g.m; i++)
          for (size_t j = 0; j < g.n; j++) {
            float got = b.hC[at(&sc, i, j)];
            int ok;
            if (i == i0) ok = isnan(got);
            else if (j == j1) ok = isinf(got) && (got > 0) == (b.hA[at(&sa, i, p1)] > 0);
            else ok = (double)got == want[i * g.n + j];
            if (!ok && bad++ < 3)
              CHECK(0, CASE_FMT ": NaN/inf case C(%zu,%zu) = %g, want %g", CASE_ARGS(&g, sa, sb, sc, w),
                    i, j, (double)got, want[i * g.n + j]);
          }
        CHECK(bad == 0, CASE_FMT ": NaN/inf propagation, %zu wrong", CASE_ARGS(&g, sa, sb, sc, w), bad);
      }
      free(want);
      free(bound);
      buffers_free(&h);
    }
}

/* The same call twice gives the same bits (no order that depends on scheduling). */
static void deterministic(pp_context *ctx, int gpu) {
  static const size_t shapes[][3] = {{1000, 1000, 1000}, {256, 256, 4096}, {129, 131, 77}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    gcase g = {PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, shapes[s][0], shapes[s][1], shapes[s][2],
               0, 0, 0, 1.0f, 0.0f};
    where w = {gpu, 0};
    th_rng r = th_rng_make(23000 + s);
    buffers b;
    host_alloc h;
    shape sa, sb, sc;
    buffers_filled(&b, &h, &g, w, &r, DATA_RANDOM, &sa, &sb, &sc);
    CHECK_STATUS(call_placed(ctx, &g, &b, w), PP_OK, "determinism run 1");
    memcpy(b.hC0, b.hC, b.nc * sizeof(float));
    CHECK_STATUS(call_placed(ctx, &g, &b, w), PP_OK, "determinism run 2");
    CHECK(memcmp(b.hC0, b.hC, b.nc * sizeof(float)) == 0,
          "%zux%zux%zu: two identical calls gave different bits", g.m, g.n, g.k);
    buffers_free(&h);
  }
}

/* Argument errors are reported with the function's name and write nothing. */
static void argument_errors(pp_context *ctx) {
  float A[64], B[64], C[64];
  for (int i = 0; i < 64; i++) A[i] = B[i] = 1.0f, C[i] = SENTINEL;
  struct {
    pp_layout lay;
    pp_trans ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    const float *a;
    pp_status want;
  } bad[] = {
      {PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 4, 4, 4, 3, 4, 4, A, PP_ERR_INVALID_ARGUMENT},
      {PP_ROW_MAJOR, PP_TRANS, PP_NO_TRANS, 4, 5, 3, 3, 5, 5, A, PP_ERR_INVALID_ARGUMENT},
      {PP_COL_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 5, 4, 4, 4, 4, 5, A, PP_ERR_INVALID_ARGUMENT},
      {PP_COL_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 4, 4, 4, 4, 4, 3, A, PP_ERR_INVALID_ARGUMENT},
      {PP_ROW_MAJOR, PP_NO_TRANS, PP_TRANS, 4, 4, 4, 4, 3, 4, A, PP_ERR_INVALID_ARGUMENT},
      {PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 4, 4, 4, 4, 4, 4, NULL, PP_ERR_INVALID_ARGUMENT},
      {(pp_layout)7, PP_NO_TRANS, PP_NO_TRANS, 4, 4, 4, 4, 4, 4, A, PP_ERR_INVALID_ARGUMENT},
      {PP_ROW_MAJOR, (pp_trans)2, PP_NO_TRANS, 4, 4, 4, 4, 4, 4, A, PP_ERR_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    th_poison_error(ctx);
    pp_status s = pp_sgemm(ctx, bad[i].lay, bad[i].ta, bad[i].tb, bad[i].m, bad[i].n, bad[i].k,
                           1.0f, bad[i].a, bad[i].lda, B, bad[i].ldb, 0.0f, C, bad[i].ldc);
    CHECK_STATUS(s, bad[i].want, "bad argument case %zu", i);
    CHECK(th_names(pp_last_error(ctx), "pp_sgemm"), "case %zu: error text '%s' names pp_sgemm", i,
          pp_last_error(ctx));
    size_t touched = 0;
    for (int j = 0; j < 64; j++) touched += C[j] != SENTINEL;
    CHECK(touched == 0, "case %zu: %zu elements of C written on an argument error", i, touched);
  }
  /* m == 0 or n == 0: valid, nothing written; NULL is fine for an empty matrix */
  CHECK_STATUS(pp_sgemm(ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 0, 4, 4, 1.0f, NULL, 4, B, 4,
                        0.0f, NULL, 4),
               PP_OK, "m == 0");
  CHECK_STATUS(pp_sgemm(ctx, PP_COL_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 4, 0, 4, 1.0f, A, 4, NULL, 4,
                        0.0f, C, 4),
               PP_OK, "n == 0");
  size_t touched = 0;
  for (int j = 0; j < 64; j++) touched += C[j] != SENTINEL;
  CHECK(touched == 0, "empty C: %zu elements written", touched);
  CHECK_STATUS(pp_sgemm(NULL, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, 4, 4, 4, 1.0f, A, 4, B, 4,
                        0.0f, C, 4),
               PP_ERR_INVALID_ARGUMENT, "NULL context");
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  int gpu = pp_backend_of(ctx) == PP_BACKEND_CUDA;
  argument_errors(ctx);
  shapes_all_combos(ctx, gpu);
  special_scalars(ctx, gpu);
  nan_inf_propagation(ctx, gpu);
  deterministic(ctx, gpu);
  shapes_large(ctx, gpu);
  shapes_aligned_k_rows(ctx, gpu);
  shapes_interior_all_modes(ctx, gpu);
  return th_finish(ctx);
}
