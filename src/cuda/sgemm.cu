/* sgemm.cu — pp_sgemm on the GPU: plain FP32 FMA, no tensor cores, no cuBLAS.
 *
 * The tile kernel is in sgemm.cuh (block tiles, TM x TN results per thread, warp tiling,
 * cp.async pipeline, double-buffered register fragments). This file chooses its
 * instantiation and launches it:
 *  - column-major is mapped onto row-major once, at the entry: a column-major C is the
 *    row-major C^T = op(B)^T op(A)^T, i.e. the same call with A and B, m and n, and the
 *    two transposes swapped;
 *  - the load mode of each operand (transposing, contiguous, contiguous and 16-byte
 *    aligned) is a template parameter, so every combination has a branch-free inner loop;
 *  - split-K when the tiles alone cannot fill the GPU (1024^3 is 32 tiles of 128 x 256
 *    for 132 SMs that each hold one block): each block of a split computes one k-slice
 *    into a workspace, and one pass adds the slices and applies alpha and beta, in a
 *    fixed order, so results do not depend on scheduling;
 *  - k == 0 or alpha == 0 only scales C by beta (A and B are not read, as in the
 *    reference BLAS), and beta == 0 never reads C.
 */
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"
#include "sgemm.cuh"

#include <string.h>

/* Production configuration: tuning.h (PP_SGEMM_*); the ladder times the others. */
#define SG_BM 128
#define SG_BN 256
#define SG_TM 8
#define SG_TN 16
#define SG_BK PP_SGEMM_BK
#define SG_STAGES PP_SGEMM_STAGES
typedef sg_shape<SG_BM, SG_BN, SG_BK, SG_STAGES, SG_TM, SG_TN> sg_prod;
#define SG_PROD_KERNEL(MA, MB) \
  sgemm_tile_kernel<SG_BM, SG_BN, SG_BK, SG_STAGES, SG_TM, SG_TN, MA, MB, PP_SGEMM_VARIANT>

/* Split-K limits: each slice keeps at least this much k (a deep enough pipeline), at most
 * this many slices, and a workspace of at most this many bytes. */
#define SG_MIN_KSLICE 256
#define SG_MAX_SPLITS 16
#define SG_MAX_WORK_BYTES ((size_t)256 << 20)

#define SG_REDUCE_THREADS 256

/* C = beta * C over an m x n row-major matrix (beta == 0 writes zeros without reading). */
__global__ void sgemm_scale_kernel(float *C, size_t ldc, size_t m, size_t n, float beta) {
  for (size_t i = blockIdx.y; i < m; i += gridDim.y)
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
      float *c = C + i * ldc + j;
      *c = beta != 0.0f ? beta * *c : 0.0f;
    }
}

/* C = alpha * (sum of the splits' partials, in split order) + beta * C. */
__global__ void sgemm_splitk_reduce_kernel(const float *work, size_t ldw, int splits, float *C,
                                           size_t ldc, size_t m, size_t n, float alpha,
                                           float beta) {
  const size_t slice = m * ldw;
  for (size_t i = blockIdx.y; i < m; i += gridDim.y)
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
      const float *w = work + i * ldw + j;
      float s = w[0];
      for (int q = 1; q < splits; q++) s += w[q * slice];
      float *c = C + i * ldc + j;
      *c = beta != 0.0f ? fmaf(beta, *c, alpha * s) : alpha * s;
    }
}

/* A 2-D grid for the element-wise kernels: columns across x, rows across y (capped). */
static void elementwise_grid(size_t m, size_t n, dim3 *grid) {
  size_t gx = pp_ceil_div(n, SG_REDUCE_THREADS);
  grid->x = (unsigned)(gx < 1024 ? gx : 1024);
  grid->y = (unsigned)(m < 65535 ? m : 65535);
  grid->z = 1;
}

/* One instantiation's shared memory limit raised (above the 48 KB default) and how many
 * blocks of it an SM holds, per device (launch.cuh). */
template <int MA, int MB>
static pp_status sg_prepare(pp_context *ctx, int *blocks_per_sm) {
  static pp_fit_cache fit;
  pp_cuda_state *st = pp_cuda(ctx);
  auto kernel = SG_PROD_KERNEL(MA, MB);
  PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, kernel, sg_prod::SMEM), "pp_sgemm: shared memory limit");
  *blocks_per_sm = pp_fit_blocks(st, &fit, kernel, sg_prod::THREADS, sg_prod::SMEM, 1);
  return PP_OK;
}

/* Splits of k: enough blocks for one full wave when the tiles alone leave SMs idle. */
static int choose_splits(size_t tiles, size_t slots, size_t m, size_t n, size_t k) {
  if (tiles >= slots / 2 + slots / 4) return 1; /* >= 3/4 of a wave: splitting costs more */
  size_t s = slots / tiles;
  size_t by_k = k / SG_MIN_KSLICE;
  if (s > by_k) s = by_k;
  if (s > SG_MAX_SPLITS) s = SG_MAX_SPLITS;
  size_t ldw = (n + 3) / 4 * 4;
  while (s > 1 && s * m * ldw * sizeof(float) > SG_MAX_WORK_BYTES) s--;
  return s < 1 ? 1 : (int)s;
}

template <int MA, int MB>
static pp_status sg_launch(pp_context *ctx, sg_params p) {
  pp_cuda_state *st = pp_cuda(ctx);
  int per_sm = 1;
  PP_TRY((sg_prepare<MA, MB>(ctx, &per_sm)));
  const size_t tiles_m = pp_ceil_div(p.m, SG_BM), tiles_n = pp_ceil_div(p.n, SG_BN);
  const size_t tiles = tiles_m * tiles_n;
  /* tile indices are unsigned in the kernel; such a C would need > 2^48 bytes anyway */
  if (tiles_m > 0xffffffffu || tiles_n > 0xffffffffu || tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_sgemm: %zu x %zu tiles of C are too many",
                   tiles_m, tiles_n);
  p.tiles_m = (unsigned)tiles_m;
  p.tiles_n = (unsigned)tiles_n;

  int splits = choose_splits(tiles, (size_t)st->sm_count * (size_t)per_sm, p.m, p.n, p.k);
  p.kchunk = p.k;
  p.work = NULL;
  p.ldw = 0;
  void *work = NULL;
  if (splits > 1) {
    p.kchunk = pp_ceil_div(pp_ceil_div(p.k, (size_t)splits), SG_BK) * SG_BK;
    splits = (int)pp_ceil_div(p.k, p.kchunk);
  }
  if (splits > 1) {
    p.ldw = (p.n + 3) / 4 * 4;
    PP_TRY(ctx->ops->temp_alloc(ctx, &work, (size_t)splits * p.m * p.ldw * sizeof(float)));
    p.work = (float *)work;
  }

  dim3 grid((unsigned)tiles, (unsigned)splits, 1);
  SG_PROD_KERNEL(MA, MB)<<<grid, sg_prod::THREADS, sg_prod::SMEM, st->stream>>>(p);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess && work) {
    dim3 rgrid;
    elementwise_grid(p.m, p.n, &rgrid);
    sgemm_splitk_reduce_kernel<<<rgrid, SG_REDUCE_THREADS, 0, st->stream>>>(
        p.work, p.ldw, splits, p.C, p.ldc, p.m, p.n, p.alpha, p.beta);
    e = cudaGetLastError();
  }
  if (work) ctx->ops->temp_free(ctx, work); /* stream-ordered: freed after the kernels */
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, "pp_sgemm", __FILE__, __LINE__);
  return PP_OK;
}

/* A contiguous operand may take 16-byte copies when its base and every row start are
 * 16-byte aligned. */
static int direct_mode(const float *X, size_t ld) {
  return ((uintptr_t)X % 16 == 0 && ld % 4 == 0) ? SG_LOAD_D4 : SG_LOAD_D1;
}

template <int MA>
static pp_status sg_dispatch_b(pp_context *ctx, int mb, const sg_params &p) {
  switch (mb) {
  case SG_LOAD_T: return sg_launch<MA, SG_LOAD_T>(ctx, p);
  case SG_LOAD_D1: return sg_launch<MA, SG_LOAD_D1>(ctx, p);
  default: return sg_launch<MA, SG_LOAD_D4>(ctx, p);
  }
}

pp_status pp_cuda_sgemm(pp_context *ctx, pp_layout layout, pp_trans ta, pp_trans tb, size_t m,
                        size_t n, size_t k, float alpha, const float *A, size_t lda,
                        const float *B, size_t ldb, float beta, float *C, size_t ldc) {
  if (m == 0 || n == 0) return PP_OK;
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, "pp_sgemm"));
  if (layout == PP_COL_MAJOR) { /* C^T = op(B)^T op(A)^T, all row-major */
    const float *tp = A;
    A = B;
    B = tp;
    size_t ts = m;
    m = n;
    n = ts;
    ts = lda;
    lda = ldb;
    ldb = ts;
    pp_trans tt = ta;
    ta = tb;
    tb = tt;
  }
  if (k == 0 || alpha == 0.0f) {
    dim3 grid;
    elementwise_grid(m, n, &grid);
    sgemm_scale_kernel<<<grid, SG_REDUCE_THREADS, 0, st->stream>>>(C, ldc, m, n, beta);
    PP_CUDA_LAUNCHED(ctx, "pp_sgemm");
    return PP_OK;
  }

  sg_params p;
  memset(&p, 0, sizeof p);
  p.A = A;
  p.B = B;
  p.C = C;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.c_vec = ((uintptr_t)C % 16 == 0 && ldc % 4 == 0) ? 1 : 0;
  /* As is k-major over m: A^T (stored k x m) is contiguous along m; plain A needs the
   * transposing copy. Bs is k-major over n: plain B is contiguous along n. */
  const int ma = ta == PP_TRANS ? direct_mode(A, lda) : SG_LOAD_T;
  const int mb = tb == PP_NO_TRANS ? direct_mode(B, ldb) : SG_LOAD_T;
  switch (ma) {
  case SG_LOAD_T: return sg_dispatch_b<SG_LOAD_T>(ctx, mb, p);
  case SG_LOAD_D1: return sg_dispatch_b<SG_LOAD_D1>(ctx, mb, p);
  default: return sg_dispatch_b<SG_LOAD_D4>(ctx, mb, p);
  }
}
