/* conv.cu — pp_conv2d and pp_conv2d_separable on the GPU.
 *
 * Semantics are those of src/cpu/conv.c (API.md): correlation, filter centred at
 * (fw/2, fh/2), ZERO / CLAMP / MIRROR borders, any filter size.
 *
 * The production path: the shared-memory tiles of ladder/conv.cu's step 4, taken further
 * (Learn CUDA Programming, ch. 7: convolution with constant-memory filters and tiles in
 * shared memory). A block of 256 threads owns an
 * output tile TW wide (32 or 64) and CONV_TH = 64 rows high (128 x 32 in the blocked
 * kernel below):
 *  - it copies the input window of the tile (the tile plus the filter's reach on every
 *    side) into shared memory. The window's left edge is rounded down to a multiple of 4
 *    floats, so when the image is 16-byte aligned and the whole window lies inside it,
 *    the copy is one coalesced float4 load per 16 bytes and nothing else. Windows that
 *    touch the border (or images that are not aligned) take a scalar copy that resolves
 *    every coordinate with the border rule as it loads: the arithmetic loop below never
 *    sees a border and has no per-pixel branch;
 *  - each thread computes CONV_R = 8 outputs down one column (two columns 32 apart when
 *    TW = 64). It walks the R + K - 1 input rows its outputs need, loads each row's K
 *    samples into registers once, and adds them into every output whose filter covers
 *    that row: one shared-memory load feeds up to min(R, K) * 1 multiply-adds, instead of
 *    one load per multiply-add;
 *  - from 5 taps on (CONV_BLK_MIN, stamped sizes) the arithmetic, not memory, is the limit,
 *    and one column per thread makes one shared load per min(R, K) multiply-adds: too many
 *    loads for the multiply-adds they feed. There each thread owns a block of outputs
 *    instead, CONV_BLK_CW = 4 adjacent columns x CONV_BLK_R = 4 rows (tiles 128 wide and
 *    CONV_BLK_TH = 32 high): it loads a window row's CONV_BLK_CW + K - 1 samples with
 *    128-bit shared loads, and each sample feeds up to CONV_BLK_CW * min(CONV_BLK_R, K)
 *    multiply-adds (register blocking in both directions, as in Volkov and Demmel,
 *    "Benchmarking GPUs to tune dense linear algebra", SC 2008). Four rows, not eight:
 *    16 accumulators keep the kernel at 48 registers or fewer, so five blocks (40 warps)
 *    or more stay resident on an SM to cover the shared-load latency and the tile barrier, where 32
 *    accumulators need 128 registers at 15 taps and leave 16 warps; the window rows the
 *    shorter tiles load twice cost less than the warps gained. The shape was picked by
 *    timing 4 x 8, 4 x 6, 4 x 4, 2 x 8 and 4 x 12 blocks side by side (the figures are in
 *    the commit that chose it). The terms of each output are added in the same order as
 *    in the one-column kernel, so the results are bit-identical to it
 *    (conv2d_blk_kernel). 3 x 3 filters keep the one-column kernel: nine multiply-adds an
 *    output leave little to block against the bytes each output moves, and the blocked
 *    shape has not been timed there;
 *  - for the common square sizes (3, 5, 7, 9, 15) the kernel is stamped out per size and
 *    fully unrolled, and the filter sits in __constant__ memory at offsets known at
 *    compile time, so each multiply-add takes its weight straight from the constant bank
 *    (an FFMA operand, no load at all). Other sizes run the same tiles with runtime
 *    loops and the weights read through the read-only cache; filters whose window no
 *    longer fits in shared memory (beyond ~100 taps a side) fall back to a direct kernel
 *    that reads the image through L1, resolving borders per tap.
 *
 * The separable path is one fused pass: the same window is loaded, the row filter runs
 * over all of its rows into a second shared array (TW columns, TH + K - 1 rows), and the
 * column filter slides down that array in registers as above. The image is read once and
 * written once, so it costs about what the 2D path costs for 3x3 at any filter length.
 * Short stamped lengths (3, 5, 7: PP_CONV_SEP_REG_MAX) skip the second array: each thread
 * computes the row sums of its strip's window rows in registers and feeds them straight
 * into its column accumulators: the 2D kernel's loop and footprint with about
 * K (R + K - 1) / R + K multiply-adds an output instead of K * K (conv_sep_reg_kernel).
 * Lengths beyond the shared-memory limit use two global passes through a temporary image.
 *
 * The constant-memory filter is one per device. Concurrent calls on different streams
 * (other contexts, other threads) must not overwrite it under a running kernel, so an
 * upload is serialised by a mutex and ordered on the stream after an event recorded
 * behind the last kernel that read it: calls on one stream pay nothing, calls racing on
 * two streams of one device are serialised on the GPU (the price of a single constant
 * bank; a per-context slot would need context state this file does not own).
 */
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"

#include <pthread.h>
#include <stdint.h>

#include <utility>

#define CONV_THREADS 256
#define CONV_R 8                          /* outputs per thread down a column */
#define CONV_TH (CONV_THREADS / 32 * CONV_R) /* tile height: 8 warps x CONV_R rows */
/* the register-blocked 2D kernel (conv2d_blk_kernel): a block of adjacent columns x rows
 * of outputs per thread, and the smallest stamped filter that takes it */
#define CONV_BLK_CW 4
#define CONV_BLK_R 4                                 /* outputs per thread down a column */
#define CONV_BLK_TH (CONV_THREADS / 32 * CONV_BLK_R) /* tile height: 8 warps x CONV_BLK_R rows */
#define CONV_BLK_MIN_BLOCKS 3                        /* resident blocks per SM asked of nvcc */
#ifndef CONV_BLK_MIN
#define CONV_BLK_MIN 5
#endif
/* shared memory a generic tile may use; beyond it the direct / two-pass kernels run */
#define CONV_SMEM_MAX (96 * 1024)
/* the constant slot: the 2D filter at 0, or the row filter at 0 and the column filter at
 * CONV_COL_SLOT */
#define CONV_COL_SLOT 256
#define CONV_CONST_FLOATS 512
#define CONV_MAX_DEVICES 64
/* return stamped<k> args when k is one of the square filter sizes stamped out with their
 * taps in c_conv */
#define CONV_STAMPED_SWITCH(k, stamped, args)                                               \
  switch (k) {                                                                              \
  case 3: return stamped<3> args;                                                           \
  case 5: return stamped<5> args;                                                           \
  case 7: return stamped<7> args;                                                           \
  case 9: return stamped<9> args;                                                           \
  case 15: return stamped<15> args;                                                         \
  default: break;                                                                           \
  }
/* which filters take 64-wide tiles and the register row pass: PP_CONV_* (tuning.h) */

__constant__ float c_conv[CONV_CONST_FLOATS];

/* Where a tile's window lies and how the image is stored; built on the host. */
struct conv_geom {
  const float *src;
  float *dst;
  long long width, height;
  size_t src_pitch, dst_pitch;
  int border;
  long long left, top; /* the filter's reach left of and above the output pixel: fw/2, fh/2 */
  int sx;        /* window columns left of the tile: left rounded up to a multiple of 4 */
  int sw;        /* window row length in floats (a multiple of 4) */
  int rows;      /* window rows: CONV_TH + fh - 1 */
  long long tiles_x;
  int vec; /* src 16-byte aligned and src_pitch a multiple of 4 floats */
};

static inline int round4(long long v) { return (int)((v + 3) & ~3LL); }

/* Index of coordinate i under the border rule; -1 for ZERO outside the image. n >= 1. */
__device__ __forceinline__ long long conv_remap(long long i, long long n, int border) {
  if (i >= 0 && i < n) return i;
  if (border == PP_BORDER_ZERO) return -1;
  if (border == PP_BORDER_CLAMP || n == 1) return i < 0 ? 0 : n - 1;
  long long period = 2 * (n - 1), m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

/* Copies the window of the tile at (x0, y0) into tile[rows][sw]. Compile-time sw and rows
 * (the stamped kernels) unroll the vector loop, so every load of a thread is in flight
 * before the first store. */
__device__ __forceinline__ void conv_load_window(const conv_geom &g, float *tile, long long x0,
                                                 long long y0, int sx, int sw, int rows,
                                                 int top) {
  long long gx0 = x0 - sx, gy0 = y0 - top;
  if (g.vec && gx0 >= 0 && gx0 + sw <= g.width && gy0 >= 0 && gy0 + rows <= g.height) {
    const int q = sw / 4, total = q * rows;
    const float *base = g.src + (size_t)gy0 * g.src_pitch + (size_t)gx0;
#pragma unroll 4
    for (int i = threadIdx.x; i < total; i += CONV_THREADS) {
      int r = i / q, c = i - r * q;
      float4 v = __ldg(reinterpret_cast<const float4 *>(base + (size_t)r * g.src_pitch) + c);
      reinterpret_cast<float4 *>(tile + r * sw)[c] = v;
    }
  } else {
    const int total = sw * rows;
    for (int i = threadIdx.x; i < total; i += CONV_THREADS) {
      int r = i / sw, c = i - r * sw;
      long long yy = conv_remap(gy0 + r, g.height, g.border);
      long long xx = conv_remap(gx0 + c, g.width, g.border);
      tile[i] = (yy < 0 || xx < 0) ? 0.0f : __ldg(g.src + (size_t)yy * g.src_pitch + (size_t)xx);
    }
  }
}

/* The origin of the block's tile (tw x th), row-major over the tiles so neighbours share
 * halo rows in L2. */
__device__ __forceinline__ void conv_tile_origin(const conv_geom &g, int tw, int th,
                                                 long long *x0, long long *y0) {
  long long t = blockIdx.x, ty = t / g.tiles_x;
  *x0 = (t - ty * g.tiles_x) * tw;
  *y0 = ty * th;
}

/* The window of this block's tile (conv_tile_origin, tiles tw x th) in the kernel's
 * dynamic shared memory, after a barrier: every thread may read all of it. */
__device__ __forceinline__ float *conv_stage_window(const conv_geom &g, int tw, int th, int sx,
                                                    int sw, int rows, int top, long long *x0,
                                                    long long *y0) {
  extern __shared__ float4 conv_smem[];
  float *tile = reinterpret_cast<float *>(conv_smem);
  conv_tile_origin(g, tw, th, x0, y0);
  conv_load_window(g, tile, *x0, *y0, sx, sw, rows, top);
  __syncthreads();
  return tile;
}

template <int CX>
__device__ __forceinline__ void conv_zero(float (&acc)[CX][CONV_R]) {
#pragma unroll
  for (int c = 0; c < CX; c++)
#pragma unroll
    for (int r = 0; r < CONV_R; r++) acc[c][r] = 0.0f;
}

/* The pixel of this thread in the kernels of one pixel per thread (blocks of 32 x 8
 * pixels, tiles_x of them across); false outside the image. */
__device__ __forceinline__ bool conv_pixel(const conv_geom &g, long long *x, long long *y) {
  const long long t = blockIdx.x, ty = t / g.tiles_x;
  *x = (t - ty * g.tiles_x) * 32 + (threadIdx.x & 31);
  *y = ty * 8 + (threadIdx.x >> 5);
  return *x < g.width && *y < g.height;
}

/* acc[c][r] is the output at column x0 + 32c + lane, row y0 + warp * CONV_R + r. Streaming
 * stores: the output is not read again, so it should not push the halo rows out of L2. */
template <int CX>
__device__ __forceinline__ void conv_store(const conv_geom &g, float (&acc)[CX][CONV_R],
                                           long long x0, long long y0) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool full = x0 + 32 * CX <= g.width && y0 + CONV_TH <= g.height;
#pragma unroll
  for (int c = 0; c < CX; c++)
#pragma unroll
    for (int r = 0; r < CONV_R; r++) {
      long long x = x0 + 32 * c + lane, y = y0 + warp * CONV_R + r;
      if (full || (x < g.width && y < g.height))
        __stcs(g.dst + (size_t)y * g.dst_pitch + (size_t)x, acc[c][r]);
    }
}

/* ---- 2D, stamped per filter size ------------------------------------------------------ */

/* The strip loop of the stamped kernels (K x K filter, or K-tap row and column filters
 * when SEP), fully unrolled with the taps in c_conv. Window row i of this thread's strip
 * feeds the outputs r = i - dy for every filter row dy: in 2D through its K samples (each
 * loaded once into a register), separable through its K-tap row sum (conv_sep_reg_kernel
 * says why that pays for short filters). */
template <int K, int CX, bool SEP>
__device__ __forceinline__ void conv_strip(const conv_geom &g) {
  constexpr int H = K / 2, SX = (H + 3) & ~3, TW = 32 * CX, SW = TW + 2 * SX;
  constexpr int ROWS = CONV_TH + K - 1;
  long long x0, y0;
  float *tile = conv_stage_window(g, TW, CONV_TH, SX, SW, ROWS, H, &x0, &y0);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[CX][CONV_R];
  conv_zero<CX>(acc);
#pragma unroll
  for (int i = 0; i < CONV_R + K - 1; i++) {
    const float *srow = tile + (warp * CONV_R + i) * SW + (SX - H) + lane;
#pragma unroll
    for (int c = 0; c < CX; c++) {
      if constexpr (SEP) {
        float h = 0.0f;
#pragma unroll
        for (int dx = 0; dx < K; dx++) h = fmaf(c_conv[dx], srow[32 * c + dx], h);
#pragma unroll
        for (int r = 0; r < CONV_R; r++) {
          const int dy = i - r;
          if (dy >= 0 && dy < K) acc[c][r] = fmaf(c_conv[CONV_COL_SLOT + dy], h, acc[c][r]);
        }
      } else {
        float v[K];
#pragma unroll
        for (int dx = 0; dx < K; dx++) v[dx] = srow[32 * c + dx];
#pragma unroll
        for (int r = 0; r < CONV_R; r++) {
          const int dy = i - r;
          if (dy >= 0 && dy < K) {
#pragma unroll
            for (int dx = 0; dx < K; dx++) acc[c][r] = fmaf(c_conv[dy * K + dx], v[dx], acc[c][r]);
          }
        }
      }
    }
  }
  conv_store<CX>(g, acc, x0, y0);
}

template <int K, int CX>
__global__ void __launch_bounds__(CONV_THREADS) conv2d_tile_kernel(conv_geom g) {
  conv_strip<K, CX, false>(g);
}

/* ---- 2D, stamped, register-blocked (long filters) -------------------------------------- */

/* Window row I of the thread's strip in the blocked kernel: its CONV_BLK_CW + K - 1 samples
 * start SH floats into the NV float4 loads at s. Sample m feeds output (r, j), row r of the
 * strip and column j of the thread's four, through tap (I - r, m - j); the multiply-adds of
 * one sample are consecutive, so it stays one register operand. Each output receives its
 * terms in filter-row, then filter-column order, as in conv_strip. */
template <int K, int SH, int NV, int I>
__device__ __forceinline__ void conv_blk_row(const float *s,
                                             float (&acc)[CONV_BLK_R][CONV_BLK_CW]) {
  float v[4 * NV];
#pragma unroll
  for (int q = 0; q < NV; q++) {
    const float4 f = reinterpret_cast<const float4 *>(s)[q];
    v[4 * q] = f.x;
    v[4 * q + 1] = f.y;
    v[4 * q + 2] = f.z;
    v[4 * q + 3] = f.w;
  }
#pragma unroll
  for (int m = 0; m < CONV_BLK_CW + K - 1; m++)
#pragma unroll
    for (int r = 0; r < CONV_BLK_R; r++) {
      const int dy = I - r;
      if (dy >= 0 && dy < K) {
#pragma unroll
        for (int j = 0; j < CONV_BLK_CW; j++) {
          const int dx = m - j;
          if (dx >= 0 && dx < K) acc[r][j] = fmaf(c_conv[dy * K + dx], v[SH + m], acc[r][j]);
        }
      }
    }
}

/* All window rows of the strip, one instantiation each: the unrolled body is too large for
 * the compiler's loop unroller to flatten on its own, and without a compile-time row the
 * taps would need loads instead of constant operands. */
template <int K, int SH, int NV, int SW, int... I>
__device__ __forceinline__ void conv_blk_rows(const float *s,
                                              float (&acc)[CONV_BLK_R][CONV_BLK_CW],
                                              std::integer_sequence<int, I...>) {
  (conv_blk_row<K, SH, NV, I>(s + I * SW, acc), ...);
}

/* Tiles 32 * CONV_BLK_CW wide and CONV_BLK_TH high; thread (lane, warp) owns columns
 * CONV_BLK_CW * lane + j and rows warp * CONV_BLK_R + r. The 128-bit shared loads of a warp
 * cover consecutive 16-byte words, so they are free of bank conflicts. */
template <int K>
__global__ void __launch_bounds__(CONV_THREADS, CONV_BLK_MIN_BLOCKS)
    conv2d_blk_kernel(conv_geom g) {
  constexpr int H = K / 2, SX = (H + 3) & ~3, TW = 32 * CONV_BLK_CW, SW = TW + 2 * SX;
  constexpr int OFF = SX - H, SH = OFF & 3; /* window column of column 0, tap 0 */
  constexpr int NV = (SH + CONV_BLK_CW + K - 1 + 3) / 4;
  static_assert(OFF - SH + 4 * NV <= CONV_BLK_CW + 2 * SX, "the last lane's loads leave the row");
  long long x0, y0;
  float *tile = conv_stage_window(g, TW, CONV_BLK_TH, SX, SW, CONV_BLK_TH + K - 1, H, &x0, &y0);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[CONV_BLK_R][CONV_BLK_CW];
#pragma unroll
  for (int r = 0; r < CONV_BLK_R; r++)
#pragma unroll
    for (int j = 0; j < CONV_BLK_CW; j++) acc[r][j] = 0.0f;
  conv_blk_rows<K, SH, NV, SW>(tile + warp * CONV_BLK_R * SW + CONV_BLK_CW * lane + (OFF - SH),
                               acc, std::make_integer_sequence<int, CONV_BLK_R + K - 1>{});

  /* streaming stores, 128-bit where the tile is whole and dst rows are 16-byte aligned */
  const long long x = x0 + CONV_BLK_CW * lane, y = y0 + warp * CONV_BLK_R;
  const bool full = x0 + TW <= g.width && y0 + CONV_BLK_TH <= g.height;
  if (full && (uintptr_t)g.dst % 16 == 0 && g.dst_pitch % 4 == 0) {
#pragma unroll
    for (int r = 0; r < CONV_BLK_R; r++)
      __stcs(reinterpret_cast<float4 *>(g.dst + (size_t)(y + r) * g.dst_pitch + (size_t)x),
             make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
  } else {
#pragma unroll
    for (int r = 0; r < CONV_BLK_R; r++)
#pragma unroll
      for (int j = 0; j < CONV_BLK_CW; j++)
        if (x + j < g.width && y + r < g.height)
          __stcs(g.dst + (size_t)(y + r) * g.dst_pitch + (size_t)(x + j), acc[r][j]);
  }
}

/* ---- 2D, any size whose window fits in shared memory ---------------------------------- */

__global__ void __launch_bounds__(CONV_THREADS)
    conv2d_generic_kernel(conv_geom g, const float *__restrict__ f, int fw, int fh) {
  long long x0, y0;
  float *tile = conv_stage_window(g, 32, CONV_TH, g.sx, g.sw, g.rows, (int)g.top, &x0, &y0);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, sw = g.sw;
  float acc[1][CONV_R];
#pragma unroll
  for (int r = 0; r < CONV_R; r++) acc[0][r] = 0.0f;
  const float *base = tile + warp * CONV_R * sw + (g.sx - (int)g.left) + lane;
  for (int dy = 0; dy < fh; dy++)
    for (int dx = 0; dx < fw; dx++) {
      /* one weight (a broadcast load) feeds CONV_R outputs */
      float w = __ldg(f + (size_t)dy * fw + dx);
      const float *s = base + dy * sw + dx;
#pragma unroll
      for (int r = 0; r < CONV_R; r++) acc[0][r] = fmaf(w, s[r * sw], acc[0][r]);
    }
  conv_store<1>(g, acc, x0, y0);
}

/* ---- 2D, any size: direct, one thread per pixel, borders resolved per tap ------------- */

__global__ void __launch_bounds__(CONV_THREADS)
    conv2d_direct_kernel(conv_geom g, const float *__restrict__ f, long long fw, long long fh) {
  long long x, y;
  if (!conv_pixel(g, &x, &y)) return;
  float acc = 0.0f;
  for (long long dy = 0; dy < fh; dy++) {
    long long yy = conv_remap(y + dy - g.top, g.height, g.border);
    const float *frow = f + (size_t)(dy * fw);
    if (yy < 0) continue; /* a row of zeros */
    const float *srow = g.src + (size_t)yy * g.src_pitch;
    for (long long dx = 0; dx < fw; dx++) {
      long long xx = conv_remap(x + dx - g.left, g.width, g.border);
      if (xx >= 0) acc = fmaf(__ldg(frow + dx), __ldg(srow + xx), acc);
    }
  }
  g.dst[(size_t)y * g.dst_pitch + (size_t)x] = acc;
}

/* ---- separable, fused: row filter into shared memory, column filter in registers ------ */

/* K > 0: row and column filters of length K in c_conv (row at 0, column at CONV_COL_SLOT),
 * everything unrolled; K == 0: lengths kr, kc at run time, filters read from rowf, colf. */
template <int K, int CX>
__global__ void __launch_bounds__(CONV_THREADS)
    conv_sep_tile_kernel(conv_geom g, const float *__restrict__ rowf,
                         const float *__restrict__ colf, int kr_rt, int kc_rt) {
  constexpr int TW = 32 * CX;
  const int kr = K ? K : kr_rt, kc = K ? K : kc_rt;
  const int sx = K ? ((K / 2 + 3) & ~3) : g.sx, left = K ? K / 2 : (int)g.left;
  const int sw = K ? TW + 2 * sx : g.sw, rows = K ? CONV_TH + K - 1 : g.rows;
  extern __shared__ float4 conv_smem[];
  float *tile = reinterpret_cast<float *>(conv_smem), *mid = tile + rows * sw;
  long long x0, y0;
  conv_tile_origin(g, TW, CONV_TH, &x0, &y0);
  conv_load_window(g, tile, x0, y0, sx, sw, rows, K ? K / 2 : (int)g.top);
  __syncthreads();

  /* row pass over every window row: mid[r][x] = sum_dx row[dx] * window[r][x + dx] */
  const int shift = sx - left;
#pragma unroll 2
  for (int i = threadIdx.x; i < rows * TW; i += CONV_THREADS) {
    int r = i / TW, x = i - r * TW;
    const float *s = tile + r * sw + shift + x;
    float a = 0.0f;
    if (K) {
#pragma unroll
      for (int dx = 0; dx < (K ? K : 1); dx++) a = fmaf(c_conv[dx], s[dx], a);
    } else {
      for (int dx = 0; dx < kr; dx++) a = fmaf(__ldg(rowf + dx), s[dx], a);
    }
    mid[i] = a;
  }
  __syncthreads();

  /* column pass: mid row i feeds the outputs r = i - dy */
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[CX][CONV_R];
  conv_zero<CX>(acc);
  const float *mcol = mid + warp * CONV_R * TW + lane;
  if (K) {
#pragma unroll
    for (int i = 0; i < CONV_R + (K ? K : 1) - 1; i++)
#pragma unroll
      for (int c = 0; c < CX; c++) {
        float v = mcol[i * TW + 32 * c];
#pragma unroll
        for (int r = 0; r < CONV_R; r++) {
          const int dy = i - r;
          if (dy >= 0 && dy < K) acc[c][r] = fmaf(c_conv[CONV_COL_SLOT + dy], v, acc[c][r]);
        }
      }
  } else {
    for (int dy = 0; dy < kc; dy++) {
      float w = __ldg(colf + dy);
#pragma unroll
      for (int c = 0; c < CX; c++)
#pragma unroll
        for (int r = 0; r < CONV_R; r++)
          acc[c][r] = fmaf(w, mcol[(r + dy) * TW + 32 * c], acc[c][r]);
    }
  }
  conv_store<CX>(g, acc, x0, y0);
}

/* ---- separable, short filters: row pass in registers ---------------------------------- */

/* For short filters the fused kernel's second phase (row sums into `mid`, a barrier, a
 * shared array as large again, so fewer resident blocks) costs more than the arithmetic
 * it saves. Here each thread walks the CONV_R + K - 1 window rows of its strip exactly as
 * the 2D kernel does, computes the K-tap row sum of each straight from the window (the K
 * loads the 2D kernel makes anyway) and feeds it into the CONV_R column accumulators it
 * covers: per output about K (R + K - 1) / R + K multiply-adds against K * K for 2D, the
 * same shared loads and footprint as 2D, one barrier. Row sums of the rows shared by two
 * strips are computed twice (K - 1 rows of R + K - 1), which is why long filters keep the
 * fused kernel. The arithmetic is the fused kernel's, term for term and in the same
 * order (row sum from zero over dx, then the column taps in dy order), so the results are
 * bit-identical to it. */
template <int K, int CX>
__global__ void __launch_bounds__(CONV_THREADS) conv_sep_reg_kernel(conv_geom g) {
  conv_strip<K, CX, true>(g);
}

/* ---- separable, any length: two passes through a temporary image ---------------------- */

__global__ void __launch_bounds__(CONV_THREADS)
    conv_row_pass_kernel(conv_geom g, const float *__restrict__ rowf, long long kr,
                         float *__restrict__ tmp) {
  long long x, y;
  if (!conv_pixel(g, &x, &y)) return;
  const float *srow = g.src + (size_t)y * g.src_pitch;
  float a = 0.0f;
  for (long long dx = 0; dx < kr; dx++) {
    long long xx = conv_remap(x + dx - g.left, g.width, g.border);
    if (xx >= 0) a = fmaf(__ldg(rowf + dx), __ldg(srow + xx), a);
  }
  tmp[(size_t)y * (size_t)g.width + (size_t)x] = a;
}

__global__ void __launch_bounds__(CONV_THREADS)
    conv_col_pass_kernel(conv_geom g, const float *__restrict__ colf, long long kc,
                         const float *__restrict__ tmp) {
  long long x, y;
  if (!conv_pixel(g, &x, &y)) return;
  float a = 0.0f;
  for (long long dy = 0; dy < kc; dy++) {
    long long yy = conv_remap(y + dy - g.top, g.height, g.border);
    if (yy >= 0) a = fmaf(__ldg(colf + dy), __ldg(tmp + (size_t)yy * (size_t)g.width + (size_t)x), a);
  }
  g.dst[(size_t)y * g.dst_pitch + (size_t)x] = a;
}

/* ---- host side ------------------------------------------------------------------------ */

static pthread_mutex_t conv_const_lock = PTHREAD_MUTEX_INITIALIZER;
/* per device: recorded behind the last kernel that read c_conv */
static cudaEvent_t conv_const_free[CONV_MAX_DEVICES];

/* Takes the constant slot: waits (on the stream) for its last reader, uploads the filters
 * (b may be NULL). On success the lock is held; conv_const_release drops it. */
static pp_status conv_const_acquire(pp_context *ctx, const char *fn, const float *a, size_t na,
                                    const float *b, size_t nb) {
  pp_cuda_state *st = pp_cuda(ctx);
  pthread_mutex_lock(&conv_const_lock);
  cudaEvent_t *ev = &conv_const_free[st->device];
  cudaError_t e = cudaSuccess;
  if (!*ev) e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(st->stream, *ev, 0);
  if (e == cudaSuccess)
    e = cudaMemcpyToSymbolAsync(c_conv, a, na * sizeof(float), 0, cudaMemcpyDefault, st->stream);
  if (e == cudaSuccess && b)
    e = cudaMemcpyToSymbolAsync(c_conv, b, nb * sizeof(float), CONV_COL_SLOT * sizeof(float),
                                cudaMemcpyDefault, st->stream);
  if (e != cudaSuccess) {
    pthread_mutex_unlock(&conv_const_lock);
    return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  }
  return PP_OK;
}

/* After the launch of the kernel that reads the slot: checks the launch, marks the slot
 * free once the kernel has run, and drops the lock. */
static pp_status conv_const_release(pp_context *ctx, const char *fn) {
  pp_cuda_state *st = pp_cuda(ctx);
  cudaError_t e = cudaGetLastError();
  pp_status s = e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  e = cudaEventRecord(conv_const_free[st->device], st->stream);
  pthread_mutex_unlock(&conv_const_lock);
  if (s == PP_OK && e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return s;
}

/* Geometry of tiles tw x th for a filter fw x fh centred at (fw/2, fh/2), whose window
 * reaches that far left of and above the tile and the rest of the filter right and below;
 * PP_ERR_UNSUPPORTED when there are too many tiles for one grid. */
static pp_status conv_geom_make(pp_context *ctx, const char *fn, conv_geom *g, const float *src,
                                size_t width, size_t height, size_t src_pitch, size_t fw,
                                size_t fh, pp_border border, float *dst, size_t dst_pitch,
                                int tw, int th) {
  const long long left = (long long)(fw / 2), top = (long long)(fh / 2);
  const long long right = (long long)(fw - 1) - left, down = (long long)(fh - 1) - top;
  g->src = src;
  g->dst = dst;
  g->width = (long long)width;
  g->height = (long long)height;
  g->src_pitch = src_pitch;
  g->dst_pitch = dst_pitch;
  g->border = (int)border;
  g->left = left;
  g->top = top;
  bool small = left < 4096 && right < 4096 && top < 4096 && down < 4096;
  g->sx = small ? round4(left) : 0;
  g->sw = small ? tw + round4(left) + round4(right) : 0;
  g->rows = small ? (int)(th + top + down) : 0;
  g->tiles_x = (long long)pp_ceil_div(width, (size_t)tw);
  g->vec = ((uintptr_t)src % 16 == 0) && src_pitch % 4 == 0;
  size_t tiles_y = pp_ceil_div(height, (size_t)th);
  if (tiles_y > (size_t)INT32_MAX / (size_t)g->tiles_x)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: image has too many tiles for one grid", fn);
  return PP_OK;
}

static unsigned conv_grid(const conv_geom *g, int th) {
  return (unsigned)((size_t)g->tiles_x * pp_ceil_div((size_t)g->height, (size_t)th));
}

/* Dynamic shared memory above the default 48 KiB must be asked for per kernel. */
template <typename Kernel>
static pp_status conv_smem_limit(pp_context *ctx, const char *fn, Kernel k, size_t bytes) {
  if (bytes > 48 * 1024)
    PP_CUDA_TRY(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)bytes), fn);
  return PP_OK;
}

template <int K>
static pp_status conv2d_stamped(pp_context *ctx, const float *src, size_t width, size_t height,
                                size_t src_pitch, const float *filter, pp_border border,
                                float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d";
  constexpr bool BLK = K >= CONV_BLK_MIN;
  constexpr int CX = K <= PP_CONV_WIDE_MAX ? 2 : 1, TW = BLK ? 32 * CONV_BLK_CW : 32 * CX;
  constexpr int TH = BLK ? CONV_BLK_TH : CONV_TH;
  conv_geom g;
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, K, K, border, dst, dst_pitch,
                        TW, TH));
  size_t smem = (size_t)g.rows * (size_t)g.sw * sizeof(float);
  if constexpr (BLK) PP_TRY(conv_smem_limit(ctx, fn, conv2d_blk_kernel<K>, smem));
  PP_TRY(conv_const_acquire(ctx, fn, filter, (size_t)K * K, NULL, 0));
  if constexpr (BLK)
    conv2d_blk_kernel<K><<<conv_grid(&g, TH), CONV_THREADS, smem, pp_cuda(ctx)->stream>>>(g);
  else
    conv2d_tile_kernel<K, CX><<<conv_grid(&g, TH), CONV_THREADS, smem, pp_cuda(ctx)->stream>>>(g);
  return conv_const_release(ctx, fn);
}

pp_status pp_cuda_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                         size_t src_pitch, const float *filter, size_t fw, size_t fh,
                         pp_border border, float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d";
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, fn));
  if (fw == fh && st->device < CONV_MAX_DEVICES) {
    CONV_STAMPED_SWITCH(fw, conv2d_stamped, (ctx, src, width, height, src_pitch, filter, border,
                                             dst, dst_pitch))
  }
  conv_geom g;
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, fw, fh, border, dst,
                        dst_pitch, 32, CONV_TH));
  size_t smem = (size_t)g.rows * (size_t)g.sw * sizeof(float);
  if (g.sw > 0 && smem <= CONV_SMEM_MAX) {
    PP_TRY(conv_smem_limit(ctx, fn, conv2d_generic_kernel, smem));
    conv2d_generic_kernel<<<conv_grid(&g, CONV_TH), CONV_THREADS, smem, st->stream>>>(
        g, filter, (int)fw, (int)fh);
    PP_CUDA_LAUNCHED(ctx, fn);
    return PP_OK;
  }
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, fw, fh, border, dst,
                        dst_pitch, 32, 8));
  conv2d_direct_kernel<<<conv_grid(&g, 8), CONV_THREADS, 0, st->stream>>>(g, filter,
                                                                          (long long)fw,
                                                                          (long long)fh);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

template <int K>
static pp_status conv_sep_stamped(pp_context *ctx, const float *src, size_t width,
                                  size_t height, size_t src_pitch, const float *row_filter,
                                  const float *col_filter, pp_border border, float *dst,
                                  size_t dst_pitch) {
  static const char fn[] = "pp_conv2d_separable";
  constexpr int CX = K <= PP_CONV_SEP_WIDE_MAX ? 2 : 1;
  constexpr bool REG = K <= PP_CONV_SEP_REG_MAX;
  conv_geom g;
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, K, K, border, dst, dst_pitch,
                        32 * CX, CONV_TH));
  /* the fused kernel adds the `mid` array: TW columns per window row */
  size_t smem = (size_t)g.rows * ((size_t)g.sw + (REG ? 0 : 32 * CX)) * sizeof(float);
  if constexpr (REG) PP_TRY(conv_smem_limit(ctx, fn, conv_sep_reg_kernel<K, CX>, smem));
  else PP_TRY(conv_smem_limit(ctx, fn, conv_sep_tile_kernel<K, CX>, smem));
  PP_TRY(conv_const_acquire(ctx, fn, row_filter, K, col_filter, K));
  if constexpr (REG)
    conv_sep_reg_kernel<K, CX><<<conv_grid(&g, CONV_TH), CONV_THREADS, smem,
                                 pp_cuda(ctx)->stream>>>(g);
  else
    conv_sep_tile_kernel<K, CX><<<conv_grid(&g, CONV_TH), CONV_THREADS, smem,
                                  pp_cuda(ctx)->stream>>>(g, NULL, NULL, K, K);
  return conv_const_release(ctx, fn);
}

pp_status pp_cuda_conv2d_separable(pp_context *ctx, const float *src, size_t width,
                                   size_t height, size_t src_pitch, const float *row_filter,
                                   size_t row_len, const float *col_filter, size_t col_len,
                                   pp_border border, float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d_separable";
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, fn));
  if (row_len == col_len && st->device < CONV_MAX_DEVICES) {
    CONV_STAMPED_SWITCH(row_len, conv_sep_stamped, (ctx, src, width, height, src_pitch, row_filter,
                                                    col_filter, border, dst, dst_pitch))
  }
  conv_geom g;
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, row_len, col_len, border, dst,
                        dst_pitch, 32, CONV_TH));
  size_t smem = (size_t)g.rows * ((size_t)g.sw + 32) * sizeof(float);
  if (g.sw > 0 && smem <= CONV_SMEM_MAX) {
    PP_TRY(conv_smem_limit(ctx, fn, conv_sep_tile_kernel<0, 1>, smem));
    conv_sep_tile_kernel<0, 1><<<conv_grid(&g, CONV_TH), CONV_THREADS, smem, st->stream>>>(
        g, row_filter, col_filter, (int)row_len, (int)col_len);
    PP_CUDA_LAUNCHED(ctx, fn);
    return PP_OK;
  }
  /* two passes through a packed temporary image */
  PP_TRY(conv_geom_make(ctx, fn, &g, src, width, height, src_pitch, row_len, col_len, border, dst,
                        dst_pitch, 32, 8));
  if (height > SIZE_MAX / sizeof(float) / width)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: width * height floats overflow", fn);
  void *tmp = NULL;
  PP_TRY(ctx->ops->temp_alloc(ctx, &tmp, width * height * sizeof(float)));
  unsigned grid = conv_grid(&g, 8);
  conv_row_pass_kernel<<<grid, CONV_THREADS, 0, st->stream>>>(g, row_filter, (long long)row_len,
                                                              (float *)tmp);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    conv_col_pass_kernel<<<grid, CONV_THREADS, 0, st->stream>>>(g, col_filter,
                                                                (long long)col_len,
                                                                (const float *)tmp);
  if (e == cudaSuccess) e = cudaGetLastError();
  ctx->ops->temp_free(ctx, tmp);
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return PP_OK;
}
