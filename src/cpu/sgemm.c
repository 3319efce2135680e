/* sgemm.c — pp_sgemm on the CPU: OpenBLAS's cblas_sgemm when the build found it
 * (cmake/cpu_blas.cmake), else parprim's own cache-blocked kernel below.
 *
 * Why a library call: OpenBLAS's hand-scheduled assembly micro-kernels for each x86
 * generation, chosen at load time, reach several times the rate of the portable C kernel
 * below on the same cores (docs/benchmarks/cpu.md has the figures). OpenBLAS runs its own
 * thread pool (or OpenMP's, in its OpenMP flavour): before each call its thread count is
 * set to the context's, so the process never runs more threads than OpenMP would.
 * Dimensions or leading dimensions past INT_MAX (OpenBLAS's default 32-bit blasint) go to
 * the kernel below.
 *
 * The own kernel: the classic Goto/BLIS structure (K. Goto and R. van de Geijn, "Anatomy
 * of high-performance matrix multiplication", ACM TOMS 34(3), 2008), in plain C that the compiler vectorises:
 *  - column-major is mapped onto row-major once, at the entry (C^T = op(B)^T op(A)^T:
 *    swap A and B, m and n, and the two transposes);
 *  - k is cut into KC-deep slices; for each slice a block of op(B) (KC x up to NCO
 *    columns) is packed once into NR-wide column panels shared by all threads;
 *  - the threads take tiles of C (MC rows x NCT columns) dynamically; each packs its MC x
 *    KC block of op(A) into MR-high row panels (that block stays in L2, one B panel of
 *    KC x NR in L1) and runs the MR x NR micro-kernel over the tile;
 *  - packing reads op(A) and op(B) through their transposes, so the micro-kernel is the
 *    same for all four combinations, and zero-pads the edges, so it never branches.
 * The micro-kernel keeps MR x NR = 6 x 16 sums in registers (12 AVX2 registers) and per
 * k does one broadcast of A per row and two vector loads of B. On x86-64 with GCC or
 * Clang it is compiled for AVX-512, AVX2+FMA and the baseline, chosen at load time.
 *
 * Semantics: the first k-slice writes alpha * sum + beta * C (beta == 0: C is not read,
 * so NaN there does not propagate), the later ones add alpha * sum. k == 0 or
 * alpha == 0 only scales C by beta; A and B are not read (the reference BLAS does the
 * same).
 */
#include "cpu.h"

#include <limits.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef PP_HAVE_CBLAS
#include <cblas.h>
#endif

#define SG_MR 6
#define SG_NR 16
#define SG_KC 256   /* k per slice: an A panel (MR x KC) and a B panel (KC x NR) fit L1 */
#define SG_MC 96    /* rows of an A block (MC x KC floats = 96 KB, in L2) */
#define SG_NCT 256  /* columns of one thread's tile */
#define SG_NCO 4096 /* columns of a packed B block (KC x NCO floats = 4 MB, shared) */
/* Below this many multiply-adds a single thread is faster than waking the others. */
#define SG_PARALLEL_MIN ((size_t)1 << 20)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SG_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SG_CLONES
#endif

/* The row-major problem after the layout mapping; X(i, p) reads op(X). */
typedef struct sg_prob {
  size_t m, n, k;
  float alpha, beta;
  const float *A, *B;
  size_t lda, ldb;
  bool ta, tb;
  float *C;
  size_t ldc;
} sg_prob;

/* One panel of `width` lanes by kc steps into d[p * width + lane], lanes past `lanes`
 * zero. Element (lane, p) of the source is x[lane * s_lane + p * s_p]; one of the two
 * strides is 1, and the loops walk that one innermost. */
static void pack_panel(const float *x, size_t s_lane, size_t s_p, size_t lanes, size_t width,
                       size_t kc, float *d) {
  if (s_p == 1) { /* each lane contiguous along p */
    for (size_t i = 0; i < width; i++)
      for (size_t p = 0; p < kc; p++) d[p * width + i] = i < lanes ? x[i * s_lane + p] : 0.0f;
  } else { /* each p gives contiguous lanes */
    for (size_t p = 0; p < kc; p++)
      for (size_t i = 0; i < width; i++) d[p * width + i] = i < lanes ? x[p * s_p + i] : 0.0f;
  }
}

/* op(A) rows [i0, i0+mc) x k [p0, p0+kc) into MR-high panels: panel r holds, for each
 * p, MR consecutive rows; rows past mc are zero. */
static void pack_a(const sg_prob *q, size_t i0, size_t mc, size_t p0, size_t kc, float *dst) {
  /* A(i, p) = A[i*lda + p], or A[p*lda + i] transposed */
  const size_t s_i = q->ta ? 1 : q->lda, s_p = q->ta ? q->lda : 1;
  for (size_t r = 0; r < mc; r += SG_MR)
    pack_panel(q->A + (i0 + r) * s_i + p0 * s_p, s_i, s_p, mc - r < SG_MR ? mc - r : SG_MR,
               SG_MR, kc, dst + r * kc);
}

/* op(B) k [p0, p0+kc) x columns [j0, j0+nc) into NR-wide panels, zero past nc; panels
 * are independent, so the threads share the work. */
static void pack_b(const sg_prob *q, size_t p0, size_t kc, size_t j0, size_t nc, float *dst) {
  /* B(p, j) = B[p*ldb + j], or B[j*ldb + p] transposed */
  const size_t s_j = q->tb ? q->ldb : 1, s_p = q->tb ? 1 : q->ldb;
  const size_t panels = (nc + SG_NR - 1) / SG_NR;
#pragma omp for schedule(static)
  for (size_t c = 0; c < panels; c++) {
    const size_t jb = c * SG_NR;
    pack_panel(q->B + (j0 + jb) * s_j + p0 * s_p, s_j, s_p, nc - jb < SG_NR ? nc - jb : SG_NR,
               SG_NR, kc, dst + c * SG_NR * kc);
  }
}

/* out[MR][NR] = sum over p of a[p][.] (x) b[p][.]: the sums stay in registers. */
SG_CLONES
static void micro_kernel(size_t kc, const float *restrict a, const float *restrict b,
                         float *restrict out) {
  float acc[SG_MR][SG_NR];
  for (int i = 0; i < SG_MR; i++)
    for (int j = 0; j < SG_NR; j++) acc[i][j] = 0.0f;
  for (size_t p = 0; p < kc; p++) {
    const float *bp = b + p * SG_NR, *ap = a + p * SG_MR;
#pragma GCC unroll 6
    for (int i = 0; i < SG_MR; i++) {
      const float ai = ap[i];
#pragma GCC unroll 16
      for (int j = 0; j < SG_NR; j++) acc[i][j] += ai * bp[j];
    }
  }
  memcpy(out, acc, sizeof acc);
}

/* C tile (rows i0.., cols j0..) from one MR x NR result; first: the first k-slice. */
static void store_tile(const sg_prob *q, size_t i0, size_t rows, size_t j0, size_t cols,
                       const float *acc, bool first) {
  const float alpha = q->alpha, beta = q->beta;
  for (size_t i = 0; i < rows; i++) {
    float *c = q->C + (i0 + i) * q->ldc + j0;
    const float *v = acc + i * SG_NR;
    if (!first)
      for (size_t j = 0; j < cols; j++) c[j] += alpha * v[j];
    else if (beta == 0.0f)
      for (size_t j = 0; j < cols; j++) c[j] = alpha * v[j];
    else
      for (size_t j = 0; j < cols; j++) c[j] = alpha * v[j] + beta * c[j];
  }
}

/* One thread's tile: rows [i0, i0+mc) x packed-B columns [jt, jt+nt) of the block at j0. */
static void run_tile(const sg_prob *q, const float *bpack, size_t kc, bool first, size_t i0,
                     size_t mc, size_t j0, size_t jt, size_t nt, float *apack) {
  float acc[SG_MR * SG_NR];
  for (size_t j = 0; j < nt; j += SG_NR) {
    const float *b = bpack + (jt + j) / SG_NR * SG_NR * kc;
    size_t cols = nt - j < SG_NR ? nt - j : SG_NR;
    for (size_t r = 0; r < mc; r += SG_MR) {
      micro_kernel(kc, apack + r * kc, b, acc);
      store_tile(q, i0 + r, mc - r < SG_MR ? mc - r : SG_MR, j0 + jt + j, cols, acc, first);
    }
  }
}

#ifdef PP_HAVE_CBLAS
/* Whether every size fits OpenBLAS's blasint (int unless it was built with INTERFACE64). */
static bool cblas_fits(size_t m, size_t n, size_t k, size_t lda, size_t ldb, size_t ldc) {
  const size_t most = sizeof(blasint) >= 8 ? (size_t)INT64_MAX : (size_t)INT_MAX;
  return m <= most && n <= most && k <= most && lda <= most && ldb <= most && ldc <= most;
}
#endif

static void scale_c(const sg_prob *q) {
  bool par = q->m * q->n >= PP_CPU_PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (par)
  for (size_t i = 0; i < q->m; i++) {
    float *c = q->C + i * q->ldc;
    for (size_t j = 0; j < q->n; j++) c[j] = q->beta != 0.0f ? q->beta * c[j] : 0.0f;
  }
}

pp_status pp_cpu_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                       size_t n, size_t k, float alpha, const float *A, size_t lda,
                       const float *B, size_t ldb, float beta, float *C, size_t ldc) {
  sg_prob q = {m, n, k, alpha, beta, A, B, lda, ldb, ta == PP_TRANS, tb == PP_TRANS, C, ldc};
  if (layout == PP_COL_MAJOR) { /* C^T = op(B)^T op(A)^T, all row-major */
    q.m = n;
    q.n = m;
    q.A = B;
    q.B = A;
    q.lda = ldb;
    q.ldb = lda;
    q.ta = tb == PP_TRANS;
    q.tb = ta == PP_TRANS;
  }
  if (q.m == 0 || q.n == 0) return PP_OK;
  if (q.k == 0 || alpha == 0.0f) {
    scale_c(&q);
    return PP_OK;
  }

#ifdef PP_HAVE_CBLAS
  if (cblas_fits(m, n, k, lda, ldb, ldc)) {
    openblas_set_num_threads(pp_cpu_threads());
    cblas_sgemm(layout == PP_COL_MAJOR ? CblasColMajor : CblasRowMajor,
                ta == PP_TRANS ? CblasTrans : CblasNoTrans,
                tb == PP_TRANS ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k,
                alpha, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
    return PP_OK;
  }
#endif

  const size_t nco = q.n < SG_NCO ? q.n : SG_NCO;
  const size_t kcap = q.k < SG_KC ? q.k : SG_KC;
  const size_t mcap = (q.m < SG_MC ? q.m : SG_MC);
  const size_t b_floats = (nco + SG_NR - 1) / SG_NR * SG_NR * kcap;
  const size_t a_floats = (mcap + SG_MR - 1) / SG_MR * SG_MR * kcap;
  const bool par = (double)q.m * (double)q.n * (double)q.k >= (double)SG_PARALLEL_MIN;
  const int threads = par ? pp_cpu_threads() : 1;
  /* everything is allocated before C is touched: a failure writes nothing */
  float *bpack = NULL, *apack = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&bpack, b_floats * sizeof(float));
  if (s == PP_OK)
    s = ctx->ops->temp_alloc(ctx, (void **)&apack, a_floats * (size_t)threads * sizeof(float));
  if (s != PP_OK) {
    if (bpack) ctx->ops->temp_free(ctx, bpack);
    return pp_fail(ctx, s, "pp_sgemm: cannot allocate the packed panels (%zu + %zu bytes)",
                   b_floats * sizeof(float), a_floats * (size_t)threads * sizeof(float));
  }

  const size_t mtiles = (q.m + SG_MC - 1) / SG_MC;
#pragma omp parallel num_threads(threads)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    float *my_a = apack + (size_t)tid * a_floats;
    for (size_t j0 = 0; j0 < q.n; j0 += SG_NCO) {
      size_t nc = q.n - j0 < SG_NCO ? q.n - j0 : SG_NCO;
      size_t ntiles = (nc + SG_NCT - 1) / SG_NCT;
      for (size_t p0 = 0; p0 < q.k; p0 += SG_KC) {
        size_t kc = q.k - p0 < SG_KC ? q.k - p0 : SG_KC;
        pack_b(&q, p0, kc, j0, nc, bpack); /* ends with the for's barrier */
        /* consecutive tiles share an A block: pack it only when the row block changes */
        size_t packed_i = (size_t)-1;
#pragma omp for schedule(dynamic)
        for (size_t t = 0; t < mtiles * ntiles; t++) {
          size_t it = t / ntiles, jt = (t % ntiles) * SG_NCT;
          size_t i0 = it * SG_MC, mc = q.m - i0 < SG_MC ? q.m - i0 : SG_MC;
          size_t nt = nc - jt < SG_NCT ? nc - jt : SG_NCT;
          if (packed_i != i0) {
            pack_a(&q, i0, mc, p0, kc, my_a);
            packed_i = i0;
          }
          run_tile(&q, bpack, kc, p0 == 0, i0, mc, j0, jt, nt, my_a);
        }
        /* the for's barrier: nobody repacks B while others still read it */
      }
    }
  }
  ctx->ops->temp_free(ctx, apack);
  ctx->ops->temp_free(ctx, bpack);
  return PP_OK;
}
