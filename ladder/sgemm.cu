/*
 * ladder/sgemm.cu — the SGEMM ladder: C = A * B (row-major, square n, FP32) from the naive
 * kernel of Learn CUDA Programming (Han and Sharma, ch. 7) through its shared-memory tiles to the production kernel, each step
 * checked against cuBLAS and timed as TFLOP/s and as a fraction of cuBLAS (pedantic FP32:
 * no TF32) in the same process.
 *
 *   step 1   naive: one thread per element of C, A and B from global memory (the book's v1)
 *   step 2   shared-memory tiles 16 x 16 (the book's v2, BLOCK_DIM 16)
 *   step 3   shared-memory tiles 32 x 32 (the book's v2, BLOCK_DIM 32)
 *   step 4   1-D register blocking: 64 x 64 tiles, each thread 8 results down a column
 *   step 5   2-D register blocking: 128 x 128 tiles, 8 x 8 results per thread, A
 *            stored transposed in shared memory (k-major) so a thread's 8 A values are
 *            contiguous
 *   step 6   + 128-bit accesses: float4 global loads and float4 shared-memory reads
 *   step 7   + double buffering with cp.async: the next k-slice is copied while this
 *            one is computed (the production kernel's copy code, one barrier per slice)
 *   step 8   + warp tiling: production tile kernel (sgemm.cuh) with 8 x 8 per thread,
 *            BK 8, 2 stages: lanes laid out so shared-memory reads broadcast (A) or hit
 *            distinct banks (B); register fragments double-buffered (the reads for k + 1
 *            are issued before the FMAs of k)
 *   step 9   the same with a deeper pipeline (BK 16, 3 stages)
 *   step 10  + 8 x 16 results per thread, 128 x 256 tiles (256 threads, one block per
 *            SM, about 250 registers a thread), 4 stages: fewer shared reads and copies
 *            per FMA
 *   step 11  + the fast path: interior tiles copy without predicates, with one pointer
 *            per operand as the only copy state across the main loop, and the FMAs of a
 *            k step run in serpentine order
 *   step 12  + the copies of a slice spread over the k steps of the slice before it, two
 *            units at a time, instead of all of them right after the barrier; the
 *            production configuration
 *   step 13  pp_sgemm on a CUDA context (adds split-K when the tiles cannot fill the GPU)
 *   step 14  cublasSgemm, CUBLAS_PEDANTIC_MATH
 * --variants adds the tile kernel at other shapes (block tile, results per thread, BK,
 * stages) and schedules (f: fast path, s: copies spread over the slice) for tuning;
 * --only picks steps and variants by id.
 *
 * Each step is validated against cuBLAS's result (||C - C_cublas|| / ||C_cublas|| below
 * 1e-5; TF32 would show near 1e-4) and on 16 sampled elements against a double-precision
 * dot product within (n + 3) * eps * sum|a*b|. Steps 1-7 handle any n (bounds-checked
 * loads that zero-fill, 128-bit ones only when n % 4 == 0).
 *
 * Run through the CLI:  parprim ladder sgemm [--n N] [--reps R] [--check] [--csv] [--variants]
 *                                           [--only ID,...]
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"
#include "peer_sgemm.h"

#include "../src/cuda/sgemm.cuh"

#include <cuda_runtime.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Errors                                                                                */
/* ------------------------------------------------------------------------------------ */

static char g_fatal[640];


/* ------------------------------------------------------------------------------------ */
/* Steps 1-3: the book's kernels                                                          */
/* ------------------------------------------------------------------------------------ */

// Every thread walks a row of A and a column of B in global memory: 2n loads per 2n
// flops, and a warp's B loads are coalesced but its A loads are one broadcast address.
// Only the L1/L2 caches stand between this kernel and DRAM bandwidth.
static __global__ void sgemm_naive(const float *A, const float *B, float *C, int n) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n) return;
  float s = 0.0f;
  for (int p = 0; p < n; p++) s += A[(size_t)row * n + p] * B[(size_t)p * n + col];
  C[(size_t)row * n + col] = s;
}

// The book's tiled kernel: a block stages a TxT tile of A and of B in shared memory and
// every element staged is used T times, so global traffic falls by T. The limiter moves
// to shared memory: two shared loads per FMA.
template <int T>
static __global__ void sgemm_smem_tile(const float *A, const float *B, float *C, int n) {
  __shared__ float sa[T][T], sb[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float s = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    sa[ty][tx] = row < n && k0 + tx < n ? A[(size_t)row * n + k0 + tx] : 0.0f;
    sb[ty][tx] = k0 + ty < n && col < n ? B[(size_t)(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int e = 0; e < T; e++) s += sa[ty][e] * sb[e][tx];
    __syncthreads();
  }
  if (row < n && col < n) C[(size_t)row * n + col] = s;
}

/* ------------------------------------------------------------------------------------ */
/* Step 4: 1-D register blocking                                                          */
/* ------------------------------------------------------------------------------------ */

// 64 x 64 tile, BK 8, 512 threads; each thread keeps 8 results of one column in
// registers, so one B value read from shared memory feeds 8 FMAs (A's 8 values are a
// broadcast across the warp). Shared loads per FMA: 9/8 instead of 2.
static __global__ void __launch_bounds__(512) sgemm_reg1d(const float *A, const float *B, float *C, int n) {
  constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  __shared__ float sa[BM][BK], sb[BK][BN];
  const int tid = threadIdx.x, tc = tid % BN, tr = tid / BN; /* tr in 0..7 */
  const size_t m0 = (size_t)blockIdx.y * BM, n0 = (size_t)blockIdx.x * BN;
  float acc[TM] = {0};
  for (int k0 = 0; k0 < n; k0 += BK) {
    { const int r = tid / BK, c = tid % BK; /* 64 x 8 of A */
      sa[r][c] = m0 + r < (size_t)n && k0 + c < n ? A[(m0 + r) * n + k0 + c] : 0.0f; }
    { const int r = tid / BN, c = tid % BN; /* 8 x 64 of B */
      sb[r][c] = k0 + r < n && n0 + c < (size_t)n ? B[(size_t)(k0 + r) * n + n0 + c] : 0.0f; }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < BK; e++) {
      const float b = sb[e][tc];
#pragma unroll
      for (int i = 0; i < TM; i++) acc[i] += sa[tr * TM + i][e] * b;
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; i++) {
    const size_t r = m0 + tr * TM + i, c = n0 + tc;
    if (r < (size_t)n && c < (size_t)n) C[r * n + c] = acc[i];
  }
}

/* ------------------------------------------------------------------------------------ */
/* Steps 5-7: 2-D register blocking, then vector accesses, then cp.async double buffering */
/* ------------------------------------------------------------------------------------ */

// 128 x 128 tile, BK 8, 256 threads as 16 x 16, thread (ty, tx) owns rows ty*8..+8 and
// columns tx*8..+8. A goes into shared memory transposed (sa[k][m]) so that a thread's 8
// A values for one k are contiguous, like its 8 B values: per k, 16 shared loads feed 64
// FMAs. VEC adds float4 global loads (when n % 4 == 0) and float4 shared reads.
constexpr int kR = 128, kRK = 8, kRThreads = 256;

template <bool VEC>
static __device__ __forceinline__ void reg2d_load(const float *A, const float *B, int n,
                                                  size_t m0, size_t n0, int k0, int tid,
                                                  float (*sa)[kR + 4], float (*sb)[kR + 4]) {
  // A: 128 rows x 8 k; thread -> row tid / 2, k (tid % 2) * 4 .. + 4
  { const int r = tid / 2, c = (tid % 2) * 4;
    const size_t gr = m0 + r;
    if (VEC && n % 4 == 0 && gr < (size_t)n && k0 + c + 3 < n) {
      const float4 v = *reinterpret_cast<const float4 *>(A + gr * n + k0 + c);
      sa[c][r] = v.x; sa[c + 1][r] = v.y; sa[c + 2][r] = v.z; sa[c + 3][r] = v.w;
    } else {
      for (int q = 0; q < 4; q++) sa[c + q][r] = gr < (size_t)n && k0 + c + q < n ? A[gr * n + k0 + c + q] : 0.0f;
    } }
  // B: 8 k x 128 columns; thread -> k tid / 32, columns (tid % 32) * 4 .. + 4
  { const int r = tid / 32, c = (tid % 32) * 4;
    const size_t gc = n0 + c;
    if (VEC && n % 4 == 0 && k0 + r < n && gc + 3 < (size_t)n) {
      *reinterpret_cast<float4 *>(&sb[r][c]) = *reinterpret_cast<const float4 *>(B + (size_t)(k0 + r) * n + gc);
    } else {
      for (int q = 0; q < 4; q++) sb[r][c + q] = k0 + r < n && gc + q < (size_t)n ? B[(size_t)(k0 + r) * n + gc + q] : 0.0f;
    } }
}

template <bool VEC>
static __device__ __forceinline__ void reg2d_compute(const float *sa_k, const float *sb_k,
                                                     int ty, int tx, float (&acc)[8][8]) {
  float a[8], b[8];
  if (VEC) {
    const float4 a0 = *reinterpret_cast<const float4 *>(sa_k + ty * 8), a1 = *reinterpret_cast<const float4 *>(sa_k + ty * 8 + 4);
    const float4 b0 = *reinterpret_cast<const float4 *>(sb_k + tx * 8), b1 = *reinterpret_cast<const float4 *>(sb_k + tx * 8 + 4);
    a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w; a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
    b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w; b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
  } else {
#pragma unroll
    for (int i = 0; i < 8; i++) { a[i] = sa_k[ty * 8 + i]; b[i] = sb_k[tx * 8 + i]; }
  }
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

static __device__ __forceinline__ void reg2d_store(float *C, int n, size_t m0, size_t n0, int ty,
                                                   int tx, const float (&acc)[8][8]) {
  for (int i = 0; i < 8; i++) {
    const size_t r = m0 + ty * 8 + i;
    if (r >= (size_t)n) break;
    for (int j = 0; j < 8; j++) {
      const size_t c = n0 + tx * 8 + j;
      if (c < (size_t)n) C[r * n + c] = acc[i][j];
    }
  }
}

template <bool VEC>
static __global__ void __launch_bounds__(kRThreads) sgemm_reg2d(const float *A, const float *B, float *C, int n) {
  __shared__ __align__(16) float sa[kRK][kR + 4];
  __shared__ __align__(16) float sb[kRK][kR + 4];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const size_t m0 = (size_t)blockIdx.y * kR, n0 = (size_t)blockIdx.x * kR;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < n; k0 += kRK) {
    reg2d_load<VEC>(A, B, n, m0, n0, k0, tid, sa, sb);
    __syncthreads();
#pragma unroll
    for (int e = 0; e < kRK; e++) reg2d_compute<VEC>(sa[e], sb[e], ty, tx, acc);
    __syncthreads();
  }
  reg2d_store(C, n, m0, n0, ty, tx, acc);
}

// Step 7: the copies of slice t+1 are in flight (cp.async, no registers involved) while
// slice t is computed; the production copy code (sgemm.cuh) does the transposing copy of
// A and the 16-byte copies of B. The thread layout is still step 6's.
static __global__ void __launch_bounds__(kRThreads) sgemm_reg2d_async(const float *A, const float *B, float *C, int n) {
  __shared__ __align__(16) float sa[2][kRK][kR + SG_PAD];
  __shared__ __align__(16) float sb[2][kRK][kR + SG_PAD];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const size_t m0 = (size_t)blockIdx.y * kR, n0 = (size_t)blockIdx.x * kR, nn = (size_t)n;
  const sg_copier ca = sg_copier_make<SG_LOAD_T, kR, kRK, kRThreads>(A, nn, m0, nn, tid);
  const bool vec = n % 4 == 0 && (uintptr_t)B % 16 == 0;
  const sg_copier cb = vec ? sg_copier_make<SG_LOAD_D4, kR, kRK, kRThreads>(B, nn, n0, nn, tid)
                           : sg_copier_make<SG_LOAD_D1, kR, kRK, kRThreads>(B, nn, n0, nn, tid);
  float acc[8][8] = {};
  const int ktiles = (n + kRK - 1) / kRK;
  for (int t = 0; t <= ktiles; t++) {
    if (t < ktiles) { /* issue slice t into buffer t % 2 */
      sg_copy_slice<SG_LOAD_T, kR, kRK, kRThreads, true>(ca, &sa[t % 2][0][0], (size_t)t * kRK, nn);
      if (vec) sg_copy_slice<SG_LOAD_D4, kR, kRK, kRThreads, true>(cb, &sb[t % 2][0][0], (size_t)t * kRK, nn);
      else sg_copy_slice<SG_LOAD_D1, kR, kRK, kRThreads, true>(cb, &sb[t % 2][0][0], (size_t)t * kRK, nn);
    }
    sg_cp_commit();
    if (t == 0) continue;
    sg_cp_wait<1>(); /* slice t-1 has landed, slice t may still be in flight */
    __syncthreads();
#pragma unroll
    for (int e = 0; e < kRK; e++) reg2d_compute<true>(sa[(t - 1) % 2][e], sb[(t - 1) % 2][e], ty, tx, acc);
    __syncthreads(); /* buffer (t-1) % 2 is refilled by the next iteration */
  }
  reg2d_store(C, n, m0, n0, ty, tx, acc);
}

/* ------------------------------------------------------------------------------------ */
/* Steps 8, 9 and the variants: the production tile kernel                               */
/* ------------------------------------------------------------------------------------ */

template <int BM, int BN, int BK, int STAGES, int TM, int TN, int V>
static bool launch_tile(const float *A, const float *B, float *C, size_t n, cudaStream_t st) {
  typedef sg_shape<BM, BN, BK, STAGES, TM, TN> S;
  sg_params p;
  memset(&p, 0, sizeof p);
  p.A = A; p.B = B; p.C = C;
  p.lda = p.ldb = p.ldc = n;
  p.m = p.n = p.k = n;
  p.alpha = 1.0f;
  p.beta = 0.0f;
  p.kchunk = n;
  p.tiles_m = (unsigned)ceil_div(n, BM);
  p.tiles_n = (unsigned)ceil_div(n, BN);
  p.c_vec = n % 4 == 0;
  const bool vec = n % 4 == 0 && (uintptr_t)B % 16 == 0;
  const dim3 grid(p.tiles_m * p.tiles_n, 1, 1);
  if (vec) {
    auto k = sgemm_tile_kernel<BM, BN, BK, STAGES, TM, TN, SG_LOAD_T, SG_LOAD_D4, V>;
    LADDER_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::SMEM));
    k<<<grid, S::THREADS, S::SMEM, st>>>(p);
  } else {
    auto k = sgemm_tile_kernel<BM, BN, BK, STAGES, TM, TN, SG_LOAD_T, SG_LOAD_D1, V>;
    LADDER_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::SMEM));
    k<<<grid, S::THREADS, S::SMEM, st>>>(p);
  }
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Steps table                                                                           */
/* ------------------------------------------------------------------------------------ */

struct session {
  cudaStream_t stream;
  pp_context *ctx;
};

typedef bool (*step_fn)(session *s, const float *A, const float *B, float *C, size_t n);

static bool run_naive(session *s, const float *A, const float *B, float *C, size_t n) {
  sgemm_naive<<<dim3((unsigned)ceil_div(n, 16), (unsigned)ceil_div(n, 16)), dim3(16, 16), 0, s->stream>>>(A, B, C, (int)n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}
template <int T>
static bool run_tile(session *s, const float *A, const float *B, float *C, size_t n) {
  sgemm_smem_tile<T><<<dim3((unsigned)ceil_div(n, T), (unsigned)ceil_div(n, T)), dim3(T, T), 0, s->stream>>>(A, B, C, (int)n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}
static bool run_reg1d(session *s, const float *A, const float *B, float *C, size_t n) {
  sgemm_reg1d<<<dim3((unsigned)ceil_div(n, 64), (unsigned)ceil_div(n, 64)), 512, 0, s->stream>>>(A, B, C, (int)n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}
template <bool VEC>
static bool run_reg2d(session *s, const float *A, const float *B, float *C, size_t n) {
  sgemm_reg2d<VEC><<<dim3((unsigned)ceil_div(n, kR), (unsigned)ceil_div(n, kR)), kRThreads, 0, s->stream>>>(A, B, C, (int)n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}
static bool run_reg2d_async(session *s, const float *A, const float *B, float *C, size_t n) {
  sgemm_reg2d_async<<<dim3((unsigned)ceil_div(n, kR), (unsigned)ceil_div(n, kR)), kRThreads, 0, s->stream>>>(A, B, C, (int)n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}
template <int BM, int BN, int BK, int STAGES, int TM, int TN, int V = 0>
static bool run_tile_kernel(session *s, const float *A, const float *B, float *C, size_t n) {
  return launch_tile<BM, BN, BK, STAGES, TM, TN, V>(A, B, C, n, s->stream);
}
static bool run_pp(session *s, const float *A, const float *B, float *C, size_t n) {
  pp_status st = pp_sgemm(s->ctx, PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, n, n, n, 1.0f, A, n, B,
                          n, 0.0f, C, n);
  if (st != PP_OK) {
    snprintf(g_fatal, sizeof g_fatal, "pp_sgemm: %s: %s", pp_status_string(st), pp_last_error(s->ctx));
    return false;
  }
  return true;
}
static bool run_cublas(session *s, const float *A, const float *B, float *C, size_t n) {
  if (bench_cublas_sgemm(PP_ROW_MAJOR, PP_NO_TRANS, PP_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f,
                         C, n, s->stream) != 0) {
    snprintf(g_fatal, sizeof g_fatal, "%s", bench_cublas_error());
    return false;
  }
  return true;
}

struct step {
  const char *id, *name;
  step_fn fn;
  size_t max_n; /* 0: any; the slow steps are skipped above this when timing */
  bool variant;
};

static const step steps[] = {
    {"1", "naive, one thread per element (book v1)", run_naive, 8192, false},
    {"2", "shared-memory tiles 16x16 (book v2)", run_tile<16>, 8192, false},
    {"3", "shared-memory tiles 32x32 (book v2)", run_tile<32>, 8192, false},
    {"4", "1-D register blocking, 64x64 tile, 8 per thread", run_reg1d, 0, false},
    {"5", "2-D register blocking, 128x128 tile, 8x8 per thread", run_reg2d<false>, 0, false},
    {"6", "+ 128-bit global loads and shared reads", run_reg2d<true>, 0, false},
    {"7", "+ cp.async double buffering", run_reg2d_async, 0, false},
    {"8", "+ warp tiling (tile kernel 8x8, BK 8, 2 stages)", run_tile_kernel<128, 128, 8, 2, 8, 8>, 0, false},
    {"9", "tile kernel 8x8, BK 16, 3 stages", run_tile_kernel<128, 128, 16, 3, 8, 8>, 0, false},
    {"10", "+ 8x16 per thread, 128x256 tile, 4 stages", run_tile_kernel<128, 256, 16, 4, 8, 16>, 0, false},
    {"11", "+ fast path for interior tiles, serpentine FMAs", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST | SG_V_SERP>, 0, false},
    {"12", "+ copies spread over the slice (production)", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR | SG_V_SERP>, 0, false},
    {"13", "pp_sgemm (production, split-K when few tiles)", run_pp, 0, false},
    {"14", "cublasSgemm, pedantic FP32", run_cublas, 0, false},
    {"v1", "8x8, BK 8, 3 stages", run_tile_kernel<128, 128, 8, 3, 8, 8>, 0, true},
    {"v2", "8x8, BK 16, 4 stages", run_tile_kernel<128, 128, 16, 4, 8, 8>, 0, true},
    {"v3", "8x16 128x128, 128 threads, BK 16, 3 stages", run_tile_kernel<128, 128, 16, 3, 8, 16>, 0, true},
    {"v4", "8x16 128x128, 128 threads, BK 16, 4 stages", run_tile_kernel<128, 128, 16, 4, 8, 16>, 0, true},
    {"v5", "8x16 128x128, 128 threads, BK 8, 4 stages", run_tile_kernel<128, 128, 8, 4, 8, 16>, 0, true},
    {"v6", "8x16 128x128, 128 threads, BK 32, 3 stages", run_tile_kernel<128, 128, 32, 3, 8, 16>, 0, true},
    {"v7", "16x8 128x128, 128 threads, BK 16, 3 stages", run_tile_kernel<128, 128, 16, 3, 16, 8>, 0, true},
    {"v8", "8x16 128x256, BK 16, 3 stages", run_tile_kernel<128, 256, 16, 3, 8, 16>, 0, true},
    {"v9", "8x16 128x256, BK 8, 4 stages", run_tile_kernel<128, 256, 8, 4, 8, 16>, 0, true},
    {"v10", "16x8 256x128, BK 16, 3 stages", run_tile_kernel<256, 128, 16, 3, 16, 8>, 0, true},
    {"v11", "8x8 128x256, 512 threads, BK 16, 3 stages", run_tile_kernel<128, 256, 16, 3, 8, 8>, 0, true},
    /* f: the fast path for interior tiles (SG_V_FAST), s: with the spread copy schedule */
    {"f1", "fast: 8x16 128x256, BK 16, 4 stages", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST>, 0, true},
    {"f3", "fast: 8x16 128x256, BK 8, 4 stages", run_tile_kernel<128, 256, 8, 4, 8, 16, SG_V_FAST>, 0, true},
    {"f4", "fast: 8x16 128x256, BK 32, 3 stages", run_tile_kernel<128, 256, 32, 3, 8, 16, SG_V_FAST>, 0, true},
    {"f5", "fast: 16x8 256x128, BK 16, 3 stages", run_tile_kernel<256, 128, 16, 3, 16, 8, SG_V_FAST>, 0, true},
    {"f7", "fast: 8x16 128x128, 128 threads, BK 16, 3 stages", run_tile_kernel<128, 128, 16, 3, 8, 16, SG_V_FAST>, 0, true},
    {"f9", "fast: 8x16 128x256, BK 16, 3 stages", run_tile_kernel<128, 256, 16, 3, 8, 16, SG_V_FAST>, 0, true},
    {"f12", "fast: 8x16 128x256, BK 32, 4 stages", run_tile_kernel<128, 256, 32, 4, 8, 16, SG_V_FAST>, 0, true},
    {"s1", "spread: 8x16 128x256, BK 16, 4 stages", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST | SG_V_SPREAD>, 0, true},
    {"s2", "spread+serp: 8x16 128x256, BK 16, 4 stages", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_SERP>, 0, true},
    {"s3", "spread pairs: 8x16 128x256, BK 16, 4 stages", run_tile_kernel<128, 256, 16, 4, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR>, 0, true},
    {"s5", "spread pairs: 8x16 128x256, BK 32, 3 stages", run_tile_kernel<128, 256, 32, 3, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR>, 0, true},
    {"s6", "spread: 16x8 256x128, BK 16, 3 stages", run_tile_kernel<256, 128, 16, 3, 16, 8, SG_V_FAST | SG_V_SPREAD>, 0, true},
    {"s7", "spread pairs+serp: 8x16 128x256, BK 16, 3 stages", run_tile_kernel<128, 256, 16, 3, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR | SG_V_SERP>, 0, true},
    {"s8", "spread pairs+serp: 8x16 128x256, BK 16, 5 stages", run_tile_kernel<128, 256, 16, 5, 8, 16, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR | SG_V_SERP>, 0, true},
    {"s9", "spread pairs+serp: 16x8 256x128, BK 16, 4 stages", run_tile_kernel<256, 128, 16, 4, 16, 8, SG_V_FAST | SG_V_SPREAD | SG_V_PAIR | SG_V_SERP>, 0, true},
};
#define N_STEPS (sizeof steps / sizeof steps[0])
#define CUBLAS_STEP 13 /* index of step 14 */

/* ------------------------------------------------------------------------------------ */
/* Validation and timing                                                                 */
/* ------------------------------------------------------------------------------------ */

struct options {
  size_t n;
  int reps;
  bool check, csv, variants, n_given;
  const char *only; /* comma-separated step ids, or NULL: all */
};

/* Whether step st runs under the options: --only names it, or (no --only) it is a main
 * step or --variants was given. */
static bool step_selected(const step *st, const options *o) {
  if (o->only) {
    const size_t len = strlen(st->id);
    for (const char *q = o->only; *q;) {
      const char *e = strchr(q, ',');
      const size_t l = e ? (size_t)(e - q) : strlen(q);
      if (l == len && !strncmp(q, st->id, len)) return true;
      if (!e) break;
      q = e + 1;
    }
    return false;
  }
  return !st->variant || o->variants;
}

/* ||got - ref|| / ||ref|| and the sampled comparison with double dot products. */
static bool validate(const float *hA, const float *hB, const float *got, const float *ref, size_t n,
                     char *why, size_t why_len) {
  double diff = 0.0, norm = 0.0;
  for (size_t e = 0; e < n * n; e++) {
    const double d = (double)got[e] - (double)ref[e];
    diff += d * d;
    norm += (double)ref[e] * ref[e];
  }
  const double rel = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
  if (!(rel <= 1e-5)) {
    snprintf(why, why_len, "||C - C_cublas|| / ||C_cublas|| = %.3g", rel);
    return false;
  }
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  for (int q = 0; q < 16; q++) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    const size_t i = (size_t)(h >> 33) % n, j = (size_t)(h >> 11) % n;
    double r = 0.0, s = 0.0;
    for (size_t p = 0; p < n; p++) {
      r += (double)hA[i * n + p] * hB[p * n + j];
      s += fabs((double)hA[i * n + p] * hB[p * n + j]);
    }
    if (!(fabs(got[i * n + j] - r) <= (double)(n + 3) * FLT_EPSILON * s + FLT_MIN)) {
      snprintf(why, why_len, "C(%zu,%zu) = %.9g, double reference %.9g", i, j, (double)got[i * n + j], r);
      return false;
    }
  }
  why[0] = '\0';
  return true;
}

struct buffers {
  float *dA, *dB, *dC, *dRef;
  float *hA, *hB, *hC, *hRef;
};

static bool buffers_make(buffers *b, size_t n) {
  memset(b, 0, sizeof *b);
  const size_t bytes = n * n * sizeof(float);
  b->hA = (float *)malloc(bytes);
  b->hB = (float *)malloc(bytes);
  b->hC = (float *)malloc(bytes);
  b->hRef = (float *)malloc(bytes);
  if (!b->hA || !b->hB || !b->hC || !b->hRef) {
    snprintf(g_fatal, sizeof g_fatal, "out of host memory");
    return false;
  }
  uint64_t h = 0x9e3779b97f4a7c15ull + n;
  for (size_t i = 0; i < n * n; i++) {
    h ^= h << 13; h ^= h >> 7; h ^= h << 17;
    b->hA[i] = (float)((double)(h >> 40) * 0x1p-23 - 1.0);
    h ^= h << 13; h ^= h >> 7; h ^= h << 17;
    b->hB[i] = (float)((double)(h >> 40) * 0x1p-23 - 1.0);
  }
  LADDER_CUDA_TRY(cudaMalloc(&b->dA, bytes));
  LADDER_CUDA_TRY(cudaMalloc(&b->dB, bytes));
  LADDER_CUDA_TRY(cudaMalloc(&b->dC, bytes));
  LADDER_CUDA_TRY(cudaMalloc(&b->dRef, bytes));
  LADDER_CUDA_TRY(cudaMemcpy(b->dA, b->hA, bytes, cudaMemcpyHostToDevice));
  LADDER_CUDA_TRY(cudaMemcpy(b->dB, b->hB, bytes, cudaMemcpyHostToDevice));
  return true;
}

static void buffers_free(buffers *b) {
  cudaFree(b->dA); cudaFree(b->dB); cudaFree(b->dC); cudaFree(b->dRef);
  free(b->hA); free(b->hB); free(b->hC); free(b->hRef);
  memset(b, 0, sizeof *b);
}

/* One run of step st with C poisoned first (NaN bytes), result to hC. */
static bool run_once(session *s, const step *st, buffers *b, size_t n) {
  LADDER_CUDA_TRY(cudaMemsetAsync(b->dC, 0xff, n * n * sizeof(float), s->stream));
  if (!st->fn(s, b->dA, b->dB, b->dC, n)) return false;
  LADDER_CUDA_TRY(cudaMemcpyAsync(b->hC, b->dC, n * n * sizeof(float), cudaMemcpyDeviceToHost, s->stream));
  LADDER_CUDA_TRY(cudaStreamSynchronize(s->stream));
  return true;
}

static bool time_step(session *s, const step *st, buffers *b, size_t n, int reps, float *median) {
  cudaEvent_t e0, e1;
  LADDER_CUDA_TRY(cudaEventCreate(&e0));
  LADDER_CUDA_TRY(cudaEventCreate(&e1));
  float *t = (float *)malloc((size_t)reps * sizeof(float));
  bool ok = t != NULL;
  for (int w = 0; ok && w < 2; w++) ok = st->fn(s, b->dA, b->dB, b->dC, n);
  for (int r = 0; ok && r < reps; r++)
    ok = ladder_event_ms(s->stream, e0, e1, r,
                         [&](int) { return st->fn(s, b->dA, b->dB, b->dC, n); }, &t[r]);
  if (ok) {
    *median = ladder_median_f(t, (size_t)reps);
  } else if (!g_fatal[0]) {
    snprintf(g_fatal, sizeof g_fatal, "timing %s failed", st->id);
  }
  free(t);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ok;
}

static bool cublas_reference(session *s, buffers *b, size_t n, char *why, size_t why_len) {
  if (!run_cublas(s, b->dA, b->dB, b->dRef, n)) return false;
  /* the stream is non-blocking: a plain cudaMemcpy would not wait for it */
  LADDER_CUDA_TRY(cudaStreamSynchronize(s->stream));
  LADDER_CUDA_TRY(cudaMemcpy(b->hRef, b->dRef, n * n * sizeof(float), cudaMemcpyDeviceToHost));
  /* cuBLAS itself against the double samples (against itself the norm test is 0) */
  return validate(b->hA, b->hB, b->hRef, b->hRef, n, why, why_len);
}

static int run_timing(session *s, const options *o) {
  const size_t n = o->n;
  buffers b;
  if (!buffers_make(&b, n)) return -1;
  char why[256];
  if (!cublas_reference(s, &b, n, why, sizeof why)) {
    fprintf(stderr, "cuBLAS reference: %s\n", g_fatal[0] ? g_fatal : why);
    buffers_free(&b);
    return -1;
  }
  float ms_cublas = 0.0f;
  if (!time_step(s, &steps[CUBLAS_STEP], &b, n, o->reps, &ms_cublas)) { buffers_free(&b); return -1; }
  const double flops = 2.0 * (double)n * n * n;
  FILE *info = o->csv ? stderr : stdout;
  fprintf(info, "parprim ladder sgemm: C = A*B, row-major f32, n = m = k = %zu, median of %d runs\n", n, o->reps);
  if (o->csv) printf("step,name,ms,tflops,of_cublas,check\n");
  else printf("%-5s %-52s %10s %9s %9s  %s\n", "step", "", "ms", "TFLOP/s", "x cuBLAS", "check");
  int failed = 0;
  for (size_t i = 0; i < N_STEPS; i++) {
    const step *st = &steps[i];
    if (!step_selected(st, o)) continue;
    if (st->max_n && n > st->max_n) {
      if (!o->csv) printf("%-5s %-52s %10s %9s %9s  skipped above n = %zu\n", st->id, st->name, "-", "-", "-", st->max_n);
      continue;
    }
    float ms = 0.0f;
    if (!run_once(s, st, &b, n)) { buffers_free(&b); return -1; }
    const bool ok = validate(b.hA, b.hB, b.hC, b.hRef, n, why, sizeof why);
    if (!ok) failed++;
    if (!time_step(s, st, &b, n, o->reps, &ms)) { buffers_free(&b); return -1; }
    const double tf = flops / ms / 1e9;
    if (o->csv) printf("%s,\"%s\",%.4f,%.3f,%.3f,%s\n", st->id, st->name, ms, tf, ms_cublas / ms, ok ? "ok" : why);
    else printf("%-5s %-52s %10.4f %9.2f %9.3f  %s\n", st->id, st->name, ms, tf, ms_cublas / ms, ok ? "ok" : why);
    fflush(stdout);
  }
  buffers_free(&b);
  return failed;
}

static int run_check(session *s, const options *o) {
  static const size_t sizes[] = {1, 2, 7, 33, 64, 127, 129, 255, 300, 513, 1000};
  size_t list[16], count = 0;
  if (o->n_given) list[count++] = o->n;
  else for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) list[count++] = sizes[i];
  int failed = 0, passed = 0;
  for (size_t z = 0; z < count; z++) {
    const size_t n = list[z];
    buffers b;
    if (!buffers_make(&b, n)) return -1;
    char why[256];
    if (!cublas_reference(s, &b, n, why, sizeof why)) {
      fprintf(stderr, "n=%zu cuBLAS reference: %s\n", n, g_fatal[0] ? g_fatal : why);
      buffers_free(&b);
      return -1;
    }
    for (size_t i = 0; i < N_STEPS; i++) {
      const step *st = &steps[i];
      if (o->only && !step_selected(st, o)) continue;
      for (int rep = 0; rep < 2; rep++) { /* twice: state a first run leaves must not matter */
        if (!run_once(s, st, &b, n)) { buffers_free(&b); return -1; }
        if (validate(b.hA, b.hB, b.hC, b.hRef, n, why, sizeof why)) { passed++; continue; }
        failed++;
        printf("FAIL step %s (%s) n=%zu run %d: %s\n", st->id, st->name, n, rep + 1, why);
      }
    }
    buffers_free(&b);
  }
  size_t nsel = 0;
  for (size_t i = 0; i < N_STEPS; i++) nsel += !o->only || step_selected(&steps[i], o);
  printf("parprim ladder sgemm --check: %zu sizes x %zu steps x 2 runs: %d passed, %d failed\n",
         count, nsel, passed, failed);
  return failed;
}

/* ------------------------------------------------------------------------------------ */
/* Command line                                                                          */
/* ------------------------------------------------------------------------------------ */

static void usage(FILE *f) {
  fprintf(f,
          "usage: parprim ladder sgemm [--n N] [--reps R] [--check] [--csv] [--variants]\n"
          "                            [--only ID,ID,...] [--help]\n"
          "\n"
          "The SGEMM ladder: C = A*B (row-major f32, n = m = k) from the textbook naive and\n"
          "tiled kernels through register blocking, 128-bit accesses, cp.async double\n"
          "buffering and warp tiling to pp_sgemm and cuBLAS (pedantic FP32). Each step is\n"
          "checked against cuBLAS and double-precision samples, and timed with CUDA events.\n"
          "\n"
          "  --n N       matrix side, 1 .. 2^20 (default 4096; steps 1-3 are skipped above\n"
          "              8192): " CLI_SIZE_FORMS "\n"
          "  --reps R    timed runs per step, the median is reported (default 20, R >= 1)\n"
          "  --check     no timing: validate every step, variants included, twice, at sizes\n"
          "              1 .. 1000 (or only --n N)\n"
          "  --variants  also time the tile kernel at other depths (BK x stages)\n"
          "  --only IDS  only these steps or variants (e.g. 10,f1,12); cuBLAS is always\n"
          "              the reference\n"
          "  --csv       comma-separated output\n"
          "  --help      this text\n"
          "\n"
          "exit status: 0 all passed, 1 a step failed, 2 bad usage, 77 no CUDA device\n");
}

extern "C" int pp_ladder_sgemm_main(int argc, char **argv) {
  options o = {4096, 20, false, false, false, false, NULL};
  for (int i = ladder_first_arg(argc, argv); i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
    else if (!strcmp(a, "--check")) o.check = true;
    else if (!strcmp(a, "--csv")) o.csv = true;
    else if (!strcmp(a, "--variants")) o.variants = true;
    else if (!strcmp(a, "--only") && i + 1 < argc) o.only = argv[++i];
    else if ((!strcmp(a, "--n") || !strcmp(a, "--reps")) && i + 1 < argc) {
      size_t v = 0;
      if (!ladder_parse_size(a, argv[++i], 1, (size_t)1 << 20, &v)) {
        usage(stderr);
        return 2;
      }
      if (a[2] == 'n') o.n = v, o.n_given = true; else o.reps = (int)v;
    } else {
      fprintf(stderr, "unknown argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!ladder_have_device()) return LADDER_EXIT_SKIP;
  session s;
  memset(&s, 0, sizeof s);
  g_fatal[0] = '\0';
  pp_status st = pp_create(&s.ctx, PP_BACKEND_CUDA);
  if (st != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_status_string(st));
    return st == PP_ERR_NO_DEVICE ? 77 : 1;
  }
  int rc = 1;
  /* a blocking stream: its work waits for the cudaMemcpy uploads, which from pageable memory
     return before the data is on the device */
  if (cudaStreamCreateWithFlags(&s.stream, cudaStreamDefault) == cudaSuccess &&
      pp_set_stream(s.ctx, s.stream) == PP_OK) {
    const int failed = o.check ? run_check(&s, &o) : run_timing(&s, &o);
    if (failed < 0 && g_fatal[0]) fprintf(stderr, "%s\n", g_fatal);
    rc = failed == 0 ? 0 : 1;
  } else {
    fprintf(stderr, "stream setup failed\n");
  }
  pp_destroy(s.ctx);
  bench_cublas_release();
  if (s.stream) cudaStreamDestroy(s.stream);
  return rc;
}
