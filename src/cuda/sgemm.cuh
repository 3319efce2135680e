/* sgemm.cuh — the SGEMM tile kernel of the CUDA backend, as a template, so that
 * src/cuda/sgemm.cu instantiates the production configurations and ladder/sgemm.cu can
 * time the same code under other tile shapes, depths and load modes.
 *
 * Problem (always row-major here; sgemm.cu maps column-major onto it):
 *     C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C
 *
 * One block computes a BM x BN tile of C from k-slices BK deep; each thread holds TM x TN
 * results in registers (sg_shape: 8 x 16 in production). Shared memory keeps both
 * operands "k-major": As[k][m] and Bs[k][n], so for every k one thread reads its TM values
 * of A and TN of B as 16-byte LDS (6 LDS for 128 FMAs at 8 x 16, which keeps the
 * shared-memory pipe well under the FMA pipe). Rows are padded by 4 floats: keeps 16-byte
 * alignment and spreads the transposing stores over all 32 banks.
 *
 * Warp tiling: each lane's results are groups of 4 x 4 spread over the warp tile (see
 * sg_shape), so for one k the lanes of a warp read a few consecutive 16-byte vectors of
 * each operand: broadcasts and distinct banks, no bank conflict. Register fragments are
 * double-buffered: the reads for k + 1 are in flight while the FMAs of k issue.
 *
 * Global -> shared goes through cp.async, STAGES tiles deep (Ampere's asynchronous copy,
 * which Hopper keeps): the copies of slices t + 1 .. t + STAGES - 1 are in flight while
 * slice t is computed, with one barrier per k-slice. How an operand is copied depends only
 * on how it is stored, so the inner loop is the same for all four transpose combinations:
 *   SG_LOAD_D4  the operand's m (or n) index is contiguous in memory and rows are
 *               16-byte aligned: 16-byte copies straight into the k-major tile;
 *   SG_LOAD_D1  contiguous but not aligned (odd ld, odd offset): 4-byte copies, a warp
 *               still reads 128 contiguous bytes;
 *   SG_LOAD_T   k is the contiguous index (A not transposed, B transposed): 4-byte copies
 *               that transpose on the way; a warp reads 8 consecutive k of 4 rows (four
 *               full 32-byte sectors) and writes 4 x 8 distinct banks.
 * Out-of-range elements (edges in m, n and k) are copied with source size 0, which
 * zero-fills them, so edge tiles run the same inner loop and only the stores check
 * bounds (interior tiles skip those predicates: sg_copy_stage).
 *
 * Interior blocks (the tile inside both operands) take a fast path (SG_V_FAST): no copy
 * needs a predicate, so the only copy state across the main loop is one pointer per
 * operand; a partial slice (k not a multiple of BK) is slice 0, copied with the checks in
 * the prologue. With SG_V_SPREAD the copies of a slice go out during the slice before it,
 * a few at a time between the FMAs, rather than all right after the barrier: there every
 * warp queued its copies behind the others' shared reads at once, and a warp that then
 * reused a register a queued copy had yet to read stalled (Nsight Compute: these waits,
 * the barrier and back-to-back shared reads were most of the cycles without an issue).
 *
 * Split-K: blockIdx.y picks a slice of k of p.kchunk; with p.work set the block writes
 * its raw partial sums there ([split][m][ldw]) and sgemm.cu's reduction applies alpha and
 * beta. All offsets are 64-bit: any m, n, k, ld that fits in memory.
 */
#ifndef PP_CUDA_SGEMM_CUH
#define PP_CUDA_SGEMM_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "tuning.h"

enum { SG_LOAD_T = 0, SG_LOAD_D1 = 1, SG_LOAD_D4 = 2 };

#define SG_PAD 4      /* floats after each k-row of a shared tile */
/* Interior tiles copy whole slices without predicates (sg_copy_stage). */
#define SG_GROUP_M 8  /* tile rows per raster group (L2 reuse of B's panels) */

struct sg_params {
  const float *A, *B;
  float *C;
  size_t lda, ldb, ldc;
  size_t m, n, k;
  float alpha, beta;
  size_t kchunk;           /* k per blockIdx.y (a multiple of BK) */
  float *work;             /* split-K partials, or NULL: write C */
  size_t ldw;              /* leading dimension of one partial */
  unsigned tiles_m, tiles_n;
  int c_vec;               /* C rows 16-byte aligned: float4 epilogue */
};

/* ---- asynchronous copies --------------------------------------------------------------- */

__device__ __forceinline__ unsigned sg_smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* 4 bytes, or (ok false) 4 zeros: the src-size operand 0 reads nothing, and src is then
 * the operand's first element, so even a checker that ignores src-size sees a valid
 * address. No branch: the copy is the same instruction either way. */
__device__ __forceinline__ void sg_cp4(float *dst, const float *src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sg_smem_addr(dst)),
               "l"(src), "r"(ok ? 4 : 0));
}

/* 16 bytes from a 16-byte aligned source (L2 only: the tile is reused from shared memory). */
__device__ __forceinline__ void sg_cp16(float *dst, const float *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sg_smem_addr(dst)), "l"(src));
}

__device__ __forceinline__ void sg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void sg_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Copies of one operand into the k-major shared tile dst[BK][W + SG_PAD]: the W x BK
 * slice [w0, w0+W) x [k0, k0+BK), where X(w, kk) is X[kk*ld + w] in the D modes and
 * X[w*ld + kk] in SG_LOAD_T; elements with w >= wtot or kk >= kend read as 0.
 *
 * Each thread copies the same pattern every k-slice: elements i = 0, 1, ... at a fixed
 * stride from one base pointer, so only the base (64-bit), the stride and a mask of the
 * rows in range live in registers across the main loop (per-element 64-bit addresses
 * would spill next to the 64 accumulators). */
template <int MODE, int W, int BK, int THREADS>
struct sg_copy_plan {
  static constexpr int V = MODE == SG_LOAD_D4 ? 4 : 1;  /* floats per copy */
  /* D modes: THREADS / (W/V) k-rows per pass; T mode: THREADS/8 rows of 8 k per pass */
  static constexpr int ROW_THREADS = MODE == SG_LOAD_T ? 8 : W / V;
  static constexpr int ROWS_PER_PASS = THREADS / ROW_THREADS;
  static constexpr int COUNT = BK * W / V / THREADS;
  static_assert(THREADS % ROW_THREADS == 0 && COUNT >= 1 && BK * W % (V * THREADS) == 0,
                "whole copies per thread");
  static_assert(MODE != SG_LOAD_T || (BK % 8 == 0 && W % ROWS_PER_PASS == 0 &&
                                      COUNT == (W / ROWS_PER_PASS) * (BK / 8)),
                "T mode: whole groups of 8 k and of rows");
  static_assert(MODE == SG_LOAD_T || BK % ROWS_PER_PASS == 0, "D modes: whole k-rows");
};

struct sg_copier {
  const float *X;   /* the operand (a valid address for predicated-off copies) */
  const float *base; /* this thread's first element at k = 0 */
  size_t ld, stride; /* T: distance between its row groups; D: between its k-rows */
  size_t wleft;      /* D: floats in range from this thread's column; T: unused */
  unsigned rows_ok;  /* T: bit j set when row group j is inside wtot */
  int tw, tk;        /* this thread's offsets within the tile (w and k of element 0) */
};

template <int MODE, int W, int BK, int THREADS>
__device__ __forceinline__ sg_copier sg_copier_make(const float *X, size_t ld, size_t w0,
                                                    size_t wtot, int tid) {
  typedef sg_copy_plan<MODE, W, BK, THREADS> P;
  sg_copier c;
  c.X = X;
  c.ld = ld;
  c.rows_ok = 0;
  c.wleft = 0;
  if (MODE == SG_LOAD_T) {
    c.tw = tid / 8;
    c.tk = tid % 8;
    c.stride = (size_t)P::ROWS_PER_PASS * ld;
#pragma unroll
    for (int j = 0; j < W / P::ROWS_PER_PASS; j++)
      if (w0 + c.tw + (size_t)j * P::ROWS_PER_PASS < wtot) c.rows_ok |= 1u << j;
    c.base = X + (w0 + c.tw) * ld + c.tk; /* only dereferenced where rows_ok says */
  } else {
    c.tw = (tid % P::ROW_THREADS) * P::V;
    c.tk = tid / P::ROW_THREADS;
    c.stride = (size_t)P::ROWS_PER_PASS * ld;
    c.wleft = w0 + c.tw < wtot ? wtot - (w0 + c.tw) : 0;
    c.base = X + (size_t)c.tk * ld + w0 + c.tw;
  }
  return c;
}

/* Issues this thread's copies of the slice starting at k0 (k0 + BK may pass kend).
 * CHECKED false: the caller knows the whole W x BK slice is inside the operand (an
 * interior tile, a full k-slice), so no copy needs a predicate: 3 instructions a copy
 * instead of about 8, which matters next to 1024 FMAs per slice. */
template <int MODE, int W, int BK, int THREADS, bool CHECKED>
__device__ __forceinline__ void sg_copy_slice(const sg_copier &c, float *dst, size_t k0,
                                              size_t kend) {
  typedef sg_copy_plan<MODE, W, BK, THREADS> P;
  constexpr int LDS = W + SG_PAD;
  const size_t kleft = kend - k0; /* > 0 */
  if (MODE == SG_LOAD_T) {
    const float *p = c.base + k0;
#pragma unroll
    for (int h = 0; h < BK / 8; h++)
#pragma unroll
      for (int j = 0; j < W / P::ROWS_PER_PASS; j++) {
        const bool ok = !CHECKED || (((c.rows_ok >> j) & 1u) && (size_t)(h * 8 + c.tk) < kleft);
        sg_cp4(dst + (h * 8 + c.tk) * LDS + c.tw + j * P::ROWS_PER_PASS,
               ok ? p + j * c.stride + h * 8 : c.X, ok);
      }
  } else {
    const float *p = c.base + k0 * c.ld;
#pragma unroll
    for (int i = 0; i < P::COUNT; i++) {
      const int kk = c.tk + i * P::ROWS_PER_PASS;
      const bool ok = !CHECKED || (c.wleft > 0 && (size_t)kk < kleft);
      float *d = dst + kk * LDS + c.tw;
      const float *src = ok ? p + i * c.stride : c.X;
      if (MODE != SG_LOAD_D4) {
        sg_cp4(d, src, ok);
      } else if (!CHECKED || (ok && c.wleft >= 4)) {
        sg_cp16(d, src);
      } else { /* the right edge: the floats in range one by one, zeros after them */
#pragma unroll
        for (int q = 0; q < 4; q++) {
          const bool in = ok && (size_t)q < c.wleft;
          sg_cp4(d + q, in ? src + q : c.X, in);
        }
      }
    }
  }
}

/* Both operands' copies of one slice into stage buffers as, bs; the unchecked form when
 * the block's tile is interior in that operand and the slice is whole. */
template <int MODE_A, int MODE_B, int BM, int BN, int BK, int THREADS>
__device__ __forceinline__ void sg_copy_stage(const sg_copier &ca, const sg_copier &cb,
                                              bool a_inside, bool b_inside, float *as, float *bs,
                                              size_t k0, size_t kend) {
  const bool whole = k0 + BK <= kend;
  if (a_inside && whole)
    sg_copy_slice<MODE_A, BM, BK, THREADS, false>(ca, as, k0, kend);
  else
    sg_copy_slice<MODE_A, BM, BK, THREADS, true>(ca, as, k0, kend);
  if (b_inside && whole)
    sg_copy_slice<MODE_B, BN, BK, THREADS, false>(cb, bs, k0, kend);
  else
    sg_copy_slice<MODE_B, BN, BK, THREADS, true>(cb, bs, k0, kend);
}

/* ---- the tile kernel ------------------------------------------------------------------- */

/* One configuration of the tile kernel: a BM x BN block tile, BK deep k-slices, STAGES of
 * them in shared memory, TM x TN results per thread.
 *
 * Lanes: LM x LN per warp, n fastest; a lane's TM rows are TM/4 groups of 4, LM*4 rows
 * apart, and its TN columns TN/4 groups of 4, LN*4 columns apart. For one k a warp then
 * reads LM consecutive float4 of A and LN of B (64 or 128 contiguous bytes, distinct
 * banks; the lanes sharing a float4 get a broadcast). The warp tile is 64 x 64 when a
 * thread holds 128 results (LN 4 for TN 16, LN 8 for TN 8), 32 x 64 for 8 x 8.
 *
 * Blocks per SM (for __launch_bounds__): 128 results per thread with double-buffered
 * fragments take 255 registers, so 256 such threads fill an SM's 64K registers; 8 x 8 is
 * held to 128 (two blocks of 256 threads). */
template <int BM, int BN, int BK, int STAGES, int TM, int TN>
struct sg_shape {
  static constexpr int THREADS = BM * BN / (TM * TN);
  static constexpr int LN = TN == 16 ? 4 : 8, LM = 32 / LN;
  static constexpr int WM = LM * TM, WN = LN * TN; /* warp tile */
  static constexpr int WARPS_N = BN / WN;
  static constexpr int MIN_BLOCKS = 65536 / (THREADS * (TM * TN >= 128 ? 256 : 128));
  static constexpr size_t SMEM =
      (size_t)STAGES * BK * ((BM + SG_PAD) + (BN + SG_PAD)) * sizeof(float);
  static_assert(TM % 4 == 0 && TN % 4 == 0 && (TN == 16 || TN == 8), "float4 fragments");
  static_assert(BM % WM == 0 && BN % WN == 0 && (BM / WM) * (BN / WN) * 32 == THREADS,
                "whole warp tiles");
  static_assert(BK % 2 == 0 && STAGES >= 2 && MIN_BLOCKS >= 1, "pipeline shape");
};

/* Four consecutive results of one row at column j (j % 4 == 0) into D: float4 when the
 * rows are aligned and all four are inside, else one by one. */
__device__ __forceinline__ void sg_store4(float *D, size_t ld, size_t i, size_t j, size_t n,
                                          bool vec, const float *v, float alpha, float beta) {
  float *d = D + i * ld + j;
  if (vec && j + 4 <= n) {
    float4 r = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
    if (beta != 0.0f) { /* beta == 0: C is not read, so NaN there does not propagate */
      const float4 c = *reinterpret_cast<const float4 *>(d);
      r.x = fmaf(beta, c.x, r.x);
      r.y = fmaf(beta, c.y, r.y);
      r.z = fmaf(beta, c.z, r.z);
      r.w = fmaf(beta, c.w, r.w);
    }
    *reinterpret_cast<float4 *>(d) = r;
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; q++)
    if (j + q < n) d[q] = beta != 0.0f ? fmaf(beta, d[q], alpha * v[q]) : alpha * v[q];
}

/* A lane's T values of one k-row of a shared tile: T/4 float4 reads, L*4 floats apart. */
template <int T, int L>
__device__ __forceinline__ void sg_load_frag(float (&f)[T], const float *s) {
#pragma unroll
  for (int g = 0; g < T / 4; g++) {
    const float4 v = *reinterpret_cast<const float4 *>(s + g * L * 4);
    f[4 * g] = v.x;
    f[4 * g + 1] = v.y;
    f[4 * g + 2] = v.z;
    f[4 * g + 3] = v.w;
  }
}

/* Variants of the tile kernel (template parameter V, a set of these flags; the ladder
 * times them side by side). */
enum {
  /* interior blocks (tile inside both operands) run a main loop whose copies carry no
   * predicates and no per-row state: one pointer per operand across the loop */
  SG_V_FAST = 1,
  /* serpentine order: odd rows run their columns backwards, so the row switch reuses
   * the B operand */
  SG_V_SERP = 2,
  /* (with SG_V_FAST) the copies of a slice are spread over the k steps of the slice before
   * it, one unit (a row group or a copy) at a time, and the slice boundary only waits,
   * synchronises and reads the next fragments */
  SG_V_SPREAD = 4,
  /* (with SG_V_SPREAD) units go out two at a time: half the clusters of copies */
  SG_V_PAIR = 8
};

/* acc[i][j] += fa[i] * fb[j] for rows [I0, I1). */
/* The fragments of one k step: TM values of A's slice row at a, TN of B's at b. */
template <int TM, int TN, int LM, int LN>
__device__ __forceinline__ void sg_load_frags(float (&fa)[TM], float (&fb)[TN], const float *a,
                                              const float *b) {
  sg_load_frag<TM, LM>(fa, a);
  sg_load_frag<TN, LN>(fb, b);
}

template <int TM, int TN, int I0, int I1, bool SERP>
__device__ __forceinline__ void sg_fma_rows(float (&acc)[TM][TN], const float (&fa)[TM],
                                            const float (&fb)[TN]) {
#pragma unroll
  for (int i = I0; i < I1; i++)
#pragma unroll
    for (int jj = 0; jj < TN; jj++) {
      const int j = SERP && (i & 1) ? TN - 1 - jj : jj;
      acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
}

/* 4 bytes, always in range (the fast path's copies). */
__device__ __forceinline__ void sg_cp4_all(float *dst, const float *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sg_smem_addr(dst)), "l"(src));
}

/* The fast path's copies of one operand's slice: the block's tile is inside the operand and
 * the slice is whole. src is this thread's element 0 of the slice, dst its place in the
 * stage, stride the distance between its copies' rows (row groups in T mode, k-rows in
 * the D modes); the pattern is sg_copy_slice's. */
template <int MODE, int W, int BK, int THREADS>
__device__ __forceinline__ void sg_copy_fast(float *dst, const float *src, size_t stride) {
  typedef sg_copy_plan<MODE, W, BK, THREADS> P;
  constexpr int LDS = W + SG_PAD;
  if (MODE == SG_LOAD_T) {
#pragma unroll
    for (int j = 0; j < W / P::ROWS_PER_PASS; j++, src += stride)
#pragma unroll
      for (int h = 0; h < BK / 8; h++)
        sg_cp4_all(dst + h * 8 * LDS + j * P::ROWS_PER_PASS, src + h * 8);
  } else {
#pragma unroll
    for (int i = 0; i < P::COUNT; i++, src += stride) {
      if (MODE == SG_LOAD_D4)
        sg_cp16(dst + i * P::ROWS_PER_PASS * LDS, src);
      else
        sg_cp4_all(dst + i * P::ROWS_PER_PASS * LDS, src);
    }
  }
}

/* The pipelined main loop over the block's k-slices, accumulating into acc. FAST: the
 * block's tile is inside both operands (the caller checked), so every whole slice takes
 * sg_copy_fast; only a partial last slice goes through the checked copies. */
template <int BM, int BN, int BK, int STAGES, int TM, int TN, int MODE_A, int MODE_B, bool FAST,
          int V>
__device__ __forceinline__ void sg_main_loop(const sg_params &p, float (&acc)[TM][TN], float *As,
                                             float *Bs, size_t m0, size_t n0, size_t kbeg,
                                             size_t kend, int ktiles, int wm, int wn,
                                             int tid) {
  typedef sg_shape<BM, BN, BK, STAGES, TM, TN> S;
  constexpr int THREADS = S::THREADS, LDA_S = BM + SG_PAD, LDB_S = BN + SG_PAD;

  /* The copies of slice s into stage buffers as, bs. FAST: a partial slice (k not a
   * multiple of BK) is slice 0, copied with the checks in the prologue, so the main loop
   * issues only whole slices, through one pointer per operand. */
  const float *pa = NULL, *pb = NULL;
  size_t sa = 0, sb = 0, stepa = 0, stepb = 0;
  int da = 0, db = 0;
  size_t kfirst = 0;
  sg_copier ca, cb;
  bool a_inside = false, b_inside = false;
  if (FAST) {
    kfirst = (kend - kbeg) % BK;
    const sg_copier a0 = sg_copier_make<MODE_A, BM, BK, THREADS>(p.A, p.lda, m0, p.m, tid);
    const sg_copier b0 = sg_copier_make<MODE_B, BN, BK, THREADS>(p.B, p.ldb, n0, p.n, tid);
    const size_t k1 = kbeg + kfirst; /* the first whole slice */
    pa = a0.base + (MODE_A == SG_LOAD_T ? k1 : k1 * p.lda);
    pb = b0.base + (MODE_B == SG_LOAD_T ? k1 : k1 * p.ldb);
    sa = a0.stride;
    sb = b0.stride;
    stepa = MODE_A == SG_LOAD_T ? (size_t)BK : (size_t)BK * p.lda;
    stepb = MODE_B == SG_LOAD_T ? (size_t)BK : (size_t)BK * p.ldb;
    da = a0.tk * LDA_S + a0.tw;
    db = b0.tk * LDB_S + b0.tw;
    if (kfirst) {
      sg_copy_stage<MODE_A, MODE_B, BM, BN, BK, THREADS>(a0, b0, true, true, As, Bs, kbeg, k1);
    }
  } else {
    ca = sg_copier_make<MODE_A, BM, BK, THREADS>(p.A, p.lda, m0, p.m, tid);
    cb = sg_copier_make<MODE_B, BN, BK, THREADS>(p.B, p.ldb, n0, p.n, tid);
    a_inside = m0 + BM <= p.m;
    b_inside = n0 + BN <= p.n;
  }
  /* slice s >= 1 in the FAST path (or s == 0 without a partial slice) */
  auto issue = [&](int s, int stage) {
    float *as = As + stage * BK * LDA_S, *bs = Bs + stage * BK * LDB_S;
    if (FAST) {
      sg_copy_fast<MODE_A, BM, BK, THREADS>(as + da, pa, sa);
      sg_copy_fast<MODE_B, BN, BK, THREADS>(bs + db, pb, sb);
      pa += stepa;
      pb += stepb;
    } else {
      sg_copy_stage<MODE_A, MODE_B, BM, BN, BK, THREADS>(ca, cb, a_inside, b_inside, as, bs,
                                                          kbeg + (size_t)s * BK, kend);
    }
  };

  /* Prologue: every stage gets a slice in flight, one commit group per slice (empty ones
   * too), so that in iteration t "all but the newest STAGES - 2 groups done" means
   * "slice t + 1 has landed". */
#pragma unroll
  for (int s = 0; s < STAGES; s++) {
    if (s < ktiles && !(FAST && s == 0 && kfirst)) issue(s, s);
    sg_cp_commit();
  }

  /* Register fragments are double-buffered: the shared reads for k + 1 are issued before
   * the TM x TN FMAs of k, so their latency hides behind this warp's own FMAs (with one or
   * two warps per scheduler, other warps alone cannot hide it). The slice boundary is no
   * exception: at the last k of slice t the block waits for slice t + 1, and its first
   * fragments are read before the last FMAs of slice t. */
  float fa[2][TM], fb[2][TN];
  sg_cp_wait<STAGES - 1>(); /* slice 0 */
  __syncthreads();
  sg_load_frags<TM, TN, S::LM, S::LN>(fa[0], fb[0], As + wm, Bs + wn);

  int stage = 0; /* the stage slice t is read from */
  for (int t = 0; t < ktiles; t++) {
    const float *a_s = As + stage * BK * LDA_S + wm;
    const float *b_s = Bs + stage * BK * LDB_S + wn;
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      const int cur = kk & 1, nxt = cur ^ 1;
      constexpr bool SERP = (V & SG_V_SERP) != 0;
      if (kk < BK - 1) {
        sg_load_frags<TM, TN, S::LM, S::LN>(fa[nxt], fb[nxt], a_s + (kk + 1) * LDA_S,
                                            b_s + (kk + 1) * LDB_S);
        sg_fma_rows<TM, TN, 0, TM, SERP>(acc, fa[cur], fb[cur]);
      } else {
        sg_cp_wait<STAGES - 2>(); /* this thread's copies of slice t + 1 are done */
        __syncthreads(); /* everyone's are; and no warp reads slice t's stage any more */
        const int refill = t + STAGES; /* into the stage slice t leaves free */
        if (refill < ktiles) issue(refill, stage);
        sg_cp_commit();
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        if (t + 1 < ktiles) {
          sg_load_frags<TM, TN, S::LM, S::LN>(fa[nxt], fb[nxt], As + stage * BK * LDA_S + wm,
                                              Bs + stage * BK * LDB_S + wn);
        }
        sg_fma_rows<TM, TN, 0, TM, SERP>(acc, fa[cur], fb[cur]);
      }
    }
  }
  sg_cp_wait<0>(); /* no copy may still target shared memory when the block exits */
}

/* The spread schedule's units of one operand's copies of a slice: T mode: a row group
 * (BK / 8 copies of 4 bytes); D modes: one copy. */
template <int MODE, int W, int BK, int THREADS>
struct sg_units {
  typedef sg_copy_plan<MODE, W, BK, THREADS> P;
  static constexpr int N = MODE == SG_LOAD_T ? W / P::ROWS_PER_PASS : P::COUNT;
};

/* Unit u of an operand's copies: src is this thread's element 0 of the slice, stride the
 * distance in bytes between its units' rows (it fits 32 bits: the caller checked). */
template <int MODE, int W, int BK, int THREADS>
__device__ __forceinline__ void sg_copy_unit(int u, float *dst, const float *src,
                                             unsigned stride) {
  typedef sg_copy_plan<MODE, W, BK, THREADS> P;
  constexpr int LDS = W + SG_PAD;
  const float *q = reinterpret_cast<const float *>(reinterpret_cast<const char *>(src) +
                                                   (size_t)(unsigned)u * stride);
  if (MODE == SG_LOAD_T) {
#pragma unroll
    for (int h = 0; h < BK / 8; h++)
      sg_cp4_all(dst + h * 8 * LDS + u * P::ROWS_PER_PASS, q + h * 8);
  } else if (MODE == SG_LOAD_D4) {
    sg_cp16(dst + u * P::ROWS_PER_PASS * LDS, q);
  } else {
    sg_cp4_all(dst + u * P::ROWS_PER_PASS * LDS, q);
  }
}

/* Whether the spread schedule can address an operand's units with 32-bit byte strides. */
template <int MODE, int W, int BK, int THREADS>
__host__ __device__ inline bool sg_spread_fits(size_t ld) {
  return (size_t)sg_copy_plan<MODE, W, BK, THREADS>::ROWS_PER_PASS * ld * sizeof(float) *
             sg_units<MODE, W, BK, THREADS>::N <
         ((size_t)1 << 32);
}

/* The main loop of an interior block in the spread schedule (SG_V_FAST | SG_V_SPREAD).
 * Stages: slice t is read from stage t % STAGES; during slice t the copies of slice
 * t + STAGES - 1 go to stage (t - 1) % STAGES, which every warp left at the barrier that
 * ended slice t - 1. The units are spread over k steps 0 .. BK - 2, so the shared-memory
 * pipe never sees all of a slice's copies at once (all warps would queue them right after
 * the barrier, and a warp that then reuses a register the queued copies still have to read
 * waits for the queue). The pointers advance at the slice's end, long after their
 * copies were issued. */
template <int BM, int BN, int BK, int STAGES, int TM, int TN, int MODE_A, int MODE_B, int V>
__device__ __forceinline__ void sg_main_loop_spread(const sg_params &p, float (&acc)[TM][TN],
                                                    float *As, float *Bs, size_t m0, size_t n0,
                                                    size_t kbeg, size_t kend, int ktiles,
                                                    int wm, int wn, int tid) {
  typedef sg_shape<BM, BN, BK, STAGES, TM, TN> S;
  constexpr int THREADS = S::THREADS, LDA_S = BM + SG_PAD, LDB_S = BN + SG_PAD;
  typedef sg_units<MODE_A, BM, BK, THREADS> UA;
  typedef sg_units<MODE_B, BN, BK, THREADS> UB;
  constexpr int U = UA::N + UB::N;
  constexpr bool SERP = (V & SG_V_SERP) != 0;

  const size_t kfirst = (kend - kbeg) % BK, k1 = kbeg + kfirst;
  const sg_copier a0 = sg_copier_make<MODE_A, BM, BK, THREADS>(p.A, p.lda, m0, p.m, tid);
  const sg_copier b0 = sg_copier_make<MODE_B, BN, BK, THREADS>(p.B, p.ldb, n0, p.n, tid);
  const float *pa = a0.base + (MODE_A == SG_LOAD_T ? k1 : k1 * p.lda);
  const float *pb = b0.base + (MODE_B == SG_LOAD_T ? k1 : k1 * p.ldb);
  const unsigned sa = (unsigned)(a0.stride * sizeof(float)), sb = (unsigned)(b0.stride * sizeof(float));
  const size_t stepa = MODE_A == SG_LOAD_T ? (size_t)BK : (size_t)BK * p.lda;
  const size_t stepb = MODE_B == SG_LOAD_T ? (size_t)BK : (size_t)BK * p.ldb;
  float *const wa0 = As + a0.tk * LDA_S + a0.tw, *const wb0 = Bs + b0.tk * LDB_S + b0.tw;

  /* Prologue: slices 0 .. STAGES - 2 (slice 0 partial, with checks, when k is not a
   * multiple of BK), one commit group each. */
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) {
      if (s == 0 && kfirst) {
        sg_copy_stage<MODE_A, MODE_B, BM, BN, BK, THREADS>(a0, b0, true, true, As, Bs, kbeg, k1);
      } else {
#pragma unroll
        for (int u = 0; u < UA::N; u++)
          sg_copy_unit<MODE_A, BM, BK, THREADS>(u, wa0 + s * BK * LDA_S, pa, sa);
#pragma unroll
        for (int u = 0; u < UB::N; u++)
          sg_copy_unit<MODE_B, BN, BK, THREADS>(u, wb0 + s * BK * LDB_S, pb, sb);
        pa += stepa;
        pb += stepb;
      }
    }
    sg_cp_commit();
  }

  float fa[2][TM], fb[2][TN];
  sg_cp_wait<STAGES - 2>(); /* slice 0 */
  __syncthreads();
  sg_load_frags<TM, TN, S::LM, S::LN>(fa[0], fb[0], As + wm, Bs + wn);

  /* Stage offsets in floats (block-uniform, so they can live in uniform registers and
   * the shared addresses need no per-slice register of their own): slice t is read at
   * ro_* (stage t % STAGES), slice t + STAGES - 1 is written at wo_* (stage (t - 1) % STAGES). */
  constexpr int SA = BK * LDA_S, SB = BK * LDB_S;
  int ro_a = 0, ro_b = 0, wo_a = (STAGES - 1) * SA, wo_b = (STAGES - 1) * SB;
  const float *const ra = As + wm, *const rb = Bs + wn;
  for (int t = 0; t < ktiles; t++) {
    const bool refill = t + STAGES - 1 < ktiles;
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      const int cur = kk & 1, nxt = cur ^ 1;
      constexpr int G = (V & SG_V_PAIR) ? 2 : 1; /* units per cluster */
#pragma unroll
      for (int v = 0; v < U; v++)
        if ((v / G) * G * (BK - 1) / U == kk && refill) {
          if (v < UA::N)
            sg_copy_unit<MODE_A, BM, BK, THREADS>(v, wa0 + wo_a, pa, sa);
          else
            sg_copy_unit<MODE_B, BN, BK, THREADS>(v - UA::N, wb0 + wo_b, pb, sb);
        }
      if (kk < BK - 1) {
        sg_load_frags<TM, TN, S::LM, S::LN>(fa[nxt], fb[nxt], ra + ro_a + (kk + 1) * LDA_S,
                                            rb + ro_b + (kk + 1) * LDB_S);
      } else {
        if (refill) {
          pa += stepa;
          pb += stepb;
        }
        sg_cp_commit();
        sg_cp_wait<STAGES - 2>(); /* this thread's copies of slice t + 1 are done */
        __syncthreads(); /* everyone's are; and no warp reads slice t's stage any more */
        wo_a = ro_a;
        wo_b = ro_b;
        ro_a = ro_a == (STAGES - 1) * SA ? 0 : ro_a + SA;
        ro_b = ro_b == (STAGES - 1) * SB ? 0 : ro_b + SB;
        if (t + 1 < ktiles) {
          sg_load_frags<TM, TN, S::LM, S::LN>(fa[nxt], fb[nxt], ra + ro_a, rb + ro_b);
        }
      }
      sg_fma_rows<TM, TN, 0, TM, SERP>(acc, fa[cur], fb[cur]);
    }
  }
  sg_cp_wait<0>(); /* no copy may still target shared memory when the block exits */
}

template <int BM, int BN, int BK, int STAGES, int TM, int TN, int MODE_A, int MODE_B, int V = 0>
__global__ void __launch_bounds__(sg_shape<BM, BN, BK, STAGES, TM, TN>::THREADS,
                                  sg_shape<BM, BN, BK, STAGES, TM, TN>::MIN_BLOCKS)
    sgemm_tile_kernel(const sg_params p) {
  typedef sg_shape<BM, BN, BK, STAGES, TM, TN> S;
  constexpr int LDA_S = BM + SG_PAD;
  extern __shared__ float4 sg_smem4[];
  float *const As = reinterpret_cast<float *>(sg_smem4);
  float *const Bs = As + STAGES * BK * LDA_S;
  const int tid = threadIdx.x;

  /* Raster in groups of SG_GROUP_M tile rows: the blocks running at one time share a few
   * panels of A and B, which then come from L2 rather than DRAM. */
  const unsigned bid = blockIdx.x, per_group = SG_GROUP_M * p.tiles_n;
  const unsigned first_m = bid / per_group * SG_GROUP_M;
  const unsigned gm = min(p.tiles_m - first_m, (unsigned)SG_GROUP_M);
  const unsigned tile_m = first_m + (bid % per_group) % gm, tile_n = (bid % per_group) / gm;
  const size_t m0 = (size_t)tile_m * BM, n0 = (size_t)tile_n * BN;
  const size_t kbeg = (size_t)blockIdx.y * p.kchunk;
  const size_t kend = min(p.k, kbeg + p.kchunk);
  const int ktiles = (int)((kend - kbeg + BK - 1) / BK);

  const int warp = tid / 32, lane = tid % 32;
  const int wm = (warp / S::WARPS_N) * S::WM + (lane / S::LN) * 4;
  const int wn = (warp % S::WARPS_N) * S::WN + (lane % S::LN) * 4;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

  const bool interior = m0 + BM <= p.m && n0 + BN <= p.n; /* block-uniform */
  if ((V & SG_V_FAST) && (V & SG_V_SPREAD) && interior &&
      sg_spread_fits<MODE_A, BM, BK, S::THREADS>(p.lda) &&
      sg_spread_fits<MODE_B, BN, BK, S::THREADS>(p.ldb))
    sg_main_loop_spread<BM, BN, BK, STAGES, TM, TN, MODE_A, MODE_B, V>(p, acc, As, Bs, m0, n0,
                                                                       kbeg, kend, ktiles, wm,
                                                                       wn, tid);
  else if ((V & SG_V_FAST) && !(V & SG_V_SPREAD) && interior)
    sg_main_loop<BM, BN, BK, STAGES, TM, TN, MODE_A, MODE_B, true, V>(p, acc, As, Bs, m0, n0, kbeg,
                                                                   kend, ktiles, wm, wn, tid);
  else
    sg_main_loop<BM, BN, BK, STAGES, TM, TN, MODE_A, MODE_B, false, V>(p, acc, As, Bs, m0, n0, kbeg,
                                                                    kend, ktiles, wm, wn, tid);

  /* Epilogue: row i of acc is tile row wm + (i / 4) * LM * 4 + i % 4, column group g is
   * wn + g * LN * 4. Partials of a split go raw to the workspace. */
  float *D = p.C;
  size_t ld = p.ldc;
  float alpha = p.alpha, beta = p.beta;
  bool vec = p.c_vec != 0;
  if (p.work) {
    D = p.work + (size_t)blockIdx.y * p.m * p.ldw;
    ld = p.ldw;
    alpha = 1.0f;
    beta = 0.0f;
    vec = true;
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
    const size_t row = m0 + wm + (i / 4) * S::LM * 4 + i % 4;
    if (row >= p.m) continue;
#pragma unroll
    for (int g = 0; g < TN / 4; g++)
      sg_store4(D, ld, row, n0 + wn + g * S::LN * 4, p.n, vec, &acc[i][4 * g], alpha, beta);
  }
}

#endif /* PP_CUDA_SGEMM_CUH */
