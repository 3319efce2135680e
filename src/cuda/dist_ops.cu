/* dist_ops.cu — the CUDA backend's building blocks of the distributed algorithms
 * (src/dist): the stream and device NCCL queues on, a double-accumulated f32 sum (a
 * rank's partial of pp_reduce and pp_scan), the scan from a carry (scan.cu's single pass
 * with the carry folded into each tile's prefix), top-k's index map, and the N-body pieces
 * with targets and sources apart.
 *
 * f32 sum: a grid of a few blocks per SM walks the input in 16-byte vectors (all UNROLL
 * loads of a thread issued before the first is used, as in reduce.cu), converts every
 * element to double and adds there, so the rank's total is the one the one-GPU scan
 * carries (scan.cu accumulates f32 sums in double); per-block partials are added in block
 * order by one block, so the result does not depend on timing.
 *
 * N-body: the all-pairs tiles of nbody.cuh (GPU Gems 3, ch. 31), with the rank's bodies as
 * targets and the gathered system as sources: targets packed as float4 and padded with
 * massless bodies to whole blocks of THREADS x BODIES, sources packed and padded to whole
 * tiles of THREADS; the sources are split over blockIdx.y when the targets alone would not
 * fill the GPU (a quarter of the bodies on each of 4 GPUs is one wave at 2^20), and a
 * second kernel adds the splits' partial accelerations in split order. The potential is
 * one target per thread in double, the body itself left out by its global index.
 */
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"
#include "nbody.cuh"

#include <string.h>

/* scan.cu */
pp_status pp_cuda_scan_from(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out,
                            size_t n, bool inclusive, const void *carry);

/* reduce.cu's shape: 256 threads x 8 loads of 16 bytes in flight, 4 blocks per SM */
#define SUM_THREADS 256
#define SUM_UNROLL 8
#define SUM_BLOCKS_PER_SM 4
#define MAP_THREADS 256
/* bodies per thread of the force kernel: nbody.cu's (tuning.h) */
#define DNB_BODIES PP_NBODY_BODIES
#define DNB_BLOCK_BODIES ((size_t)NB_THREADS * DNB_BODIES)
#define DNB_MAX_SPLITS 1024u

struct sum_double {
  typedef double Acc;
  static __device__ __forceinline__ double identity() { return 0.0; }
  static __device__ __forceinline__ double combine(double a, double b) { return a + b; }
};

static void *dist_stream(pp_context *ctx) { return (void *)pp_cuda(ctx)->stream; }
static int dist_device(pp_context *ctx) { return pp_cuda(ctx)->device; }

static unsigned grid_cap(pp_cuda_state *st, size_t want, size_t per_sm) {
  size_t cap = (size_t)st->sm_count * per_sm;
  size_t g = want < cap ? want : cap;
  return g ? (unsigned)g : 1u;
}

/* ---- f32 sum in double ------------------------------------------------------------------ */

__global__ void __launch_bounds__(SUM_THREADS, SUM_BLOCKS_PER_SM)
sum_f32_kernel(const float *__restrict__ in, size_t n, double *__restrict__ partial) {
  double acc = 0.0;
  /* the elements before the first 16-byte boundary, and the tail, element by element */
  const pp_vec_split sp = pp_split16(in, n);
  const size_t head = sp.head, nvec = sp.nvec, tail = sp.tail_begin;
  const size_t tid = (size_t)blockIdx.x * SUM_THREADS + threadIdx.x;
  if (tid < head) acc += (double)in[tid];
  if (tid < n - tail) acc += (double)in[tail + tid];
  const float4 *__restrict__ body = reinterpret_cast<const float4 *>(in + head);
  const size_t tile = (size_t)SUM_THREADS * SUM_UNROLL, stride = (size_t)gridDim.x * tile;
  for (size_t base = (size_t)blockIdx.x * tile; base < nvec; base += stride) {
    float4 v[SUM_UNROLL];
#pragma unroll
    for (int u = 0; u < SUM_UNROLL; u++) {
      const size_t i = base + threadIdx.x + (size_t)u * SUM_THREADS;
      v[u] = i < nvec ? __ldcs(body + i) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < SUM_UNROLL; u++)
      acc += ((double)v[u].x + (double)v[u].y) + ((double)v[u].z + (double)v[u].w);
  }
  acc = pp_block_reduce<sum_double, SUM_THREADS>(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__global__ void __launch_bounds__(SUM_THREADS)
sum_partials_kernel(const double *__restrict__ partial, unsigned count, double *out) {
  double acc = 0.0;
  for (unsigned b = threadIdx.x; b < count; b += SUM_THREADS) acc += partial[b];
  acc = pp_block_reduce<sum_double, SUM_THREADS>(acc);
  if (threadIdx.x == 0) *out = acc;
}

static pp_status dist_sum_f32(pp_context *ctx, const float *in, size_t n, double *sum) {
  static const char fn[] = "pp_reduce";
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const unsigned grid =
      grid_cap(st, pp_ceil_div(n / 4 + 1, (size_t)SUM_THREADS * SUM_UNROLL), SUM_BLOCKS_PER_SM);
  void *partial = NULL;
  PP_TRY(ctx->ops->temp_alloc(ctx, &partial, grid * sizeof(double)));
  sum_f32_kernel<<<grid, SUM_THREADS, 0, st->stream>>>(in, n, (double *)partial);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    sum_partials_kernel<<<1, SUM_THREADS, 0, st->stream>>>((const double *)partial, grid, sum);
    e = cudaGetLastError();
  }
  ctx->ops->temp_free(ctx, partial);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
}

/* ---- index map -------------------------------------------------------------------------- */

__global__ void index_map_kernel(const uint64_t *__restrict__ table, const uint64_t *idx,
                                 size_t n, uint64_t add, uint64_t *out) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = (table ? table[idx[i]] : idx[i]) + add;
}

static pp_status dist_index_map(pp_context *ctx, const uint64_t *table, const uint64_t *idx,
                                size_t n, uint64_t add, uint64_t *out) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (n == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, "pp_topk"));
  index_map_kernel<<<grid_cap(st, pp_ceil_div(n, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      table, idx, n, add, out);
  PP_CUDA_LAUNCHED(ctx, "pp_topk");
  return PP_OK;
}

/* ---- N-body ----------------------------------------------------------------------------- */

__global__ void dnb_pack_kernel(const float *__restrict__ x, const float *__restrict__ y,
                                const float *__restrict__ z, const float *__restrict__ m,
                                size_t n, size_t n_pad, float4 *__restrict__ pos) {
  nb_pack(x, y, z, m, n, n_pad, pos);
}

/* The rank's targets against the gathered sources: nbody.cuh's force loop. */
template <int B, bool GUARD>
__global__ void __launch_bounds__(NB_THREADS)
dnb_force_kernel(const float4 *__restrict__ targets, const float4 *__restrict__ sources,
                 size_t n_tpad, size_t tiles, unsigned splits, float eps2,
                 float4 *__restrict__ partial) {
  nb_force_block<B, GUARD>(targets, sources, n_tpad, tiles, splits, eps2, partial);
}

__global__ void dnb_accel_out_kernel(const float4 *__restrict__ partial, size_t n, size_t n_tpad,
                                     unsigned splits, float *__restrict__ ax,
                                     float *__restrict__ ay, float *__restrict__ az) {
  nb_accel_out(partial, n, n_tpad, splits, ax, ay, az);
}

template <bool GUARD>
static int force_blocks_per_sm(pp_cuda_state *st) {
  static pp_fit_cache fit;
  return pp_fit_blocks(st, &fit, dnb_force_kernel<DNB_BODIES, GUARD>, NB_THREADS, 0, 1);
}

static pp_status dist_nbody_accel(pp_context *ctx, const pp_bodies *t, const pp_bodies *s,
                                  float softening, float *ax, float *ay, float *az) {
  static const char fn[] = "pp_nbody_accel";
  pp_cuda_state *st = pp_cuda(ctx);
  if (t->n == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const size_t n_tpad = pp_ceil_div(t->n, DNB_BLOCK_BODIES) * DNB_BLOCK_BODIES;
  const size_t n_spad = pp_ceil_div(s->n ? s->n : 1, (size_t)NB_THREADS) * NB_THREADS;
  const size_t iblocks = n_tpad / DNB_BLOCK_BODIES, tiles = n_spad / NB_THREADS;
  if (iblocks > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n (%zu) needs more blocks than a grid holds",
                   fn, t->n);
  const float eps2 = softening * softening;
  const bool guard = !(eps2 >= NB_EPS2_UNGUARDED);
  const int per_sm = guard ? force_blocks_per_sm<true>(st) : force_blocks_per_sm<false>(st);
  const unsigned splits = nb_choose_splits(iblocks, tiles, (size_t)st->sm_count * (size_t)per_sm, DNB_MAX_SPLITS);
  const size_t vec = sizeof(float4);
  if (n_tpad > SIZE_MAX / vec / ((size_t)splits + 2) || n_spad > SIZE_MAX / vec / 2)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: scratch for %zu bodies overflows", fn, s->n);
  void *mem = NULL;
  PP_TRY(ctx->ops->temp_alloc(ctx, &mem, vec * (n_tpad * ((size_t)splits + 1) + n_spad)));
  float4 *tpos = (float4 *)mem, *partial = tpos + n_tpad, *spos = partial + n_tpad * splits;
  dnb_pack_kernel<<<grid_cap(st, pp_ceil_div(n_tpad, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      t->x, t->y, t->z, t->mass, t->n, n_tpad, tpos);
  dnb_pack_kernel<<<grid_cap(st, pp_ceil_div(n_spad, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      s->x, s->y, s->z, s->mass, s->n, n_spad, spos);
  const dim3 grid((unsigned)iblocks, splits);
  if (guard)
    dnb_force_kernel<DNB_BODIES, true><<<grid, NB_THREADS, 0, st->stream>>>(tpos, spos, n_tpad, tiles,
                                                                          splits, eps2, partial);
  else
    dnb_force_kernel<DNB_BODIES, false><<<grid, NB_THREADS, 0, st->stream>>>(tpos, spos, n_tpad, tiles,
                                                                           splits, eps2, partial);
  dnb_accel_out_kernel<<<grid_cap(st, pp_ceil_div(t->n, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      partial, t->n, n_tpad, splits, ax, ay, az);
  cudaError_t e = cudaGetLastError();
  ctx->ops->temp_free(ctx, mem);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
}

/* The kick and drift of nbody.cu's advance kernel on structure-of-arrays bodies. */
__global__ void dnb_advance_kernel(float *__restrict__ x, float *__restrict__ y,
                                   float *__restrict__ z, float *__restrict__ vx,
                                   float *__restrict__ vy, float *__restrict__ vz,
                                   const float *__restrict__ ax, const float *__restrict__ ay,
                                   const float *__restrict__ az, size_t n, float h, float dt,
                                   bool close, bool open) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float u = vx[i], v = vy[i], w = vz[i];
    if (close) {
      u = fmaf(h, ax[i], u);
      v = fmaf(h, ay[i], v);
      w = fmaf(h, az[i], w);
    }
    if (open) {
      u = fmaf(h, ax[i], u);
      v = fmaf(h, ay[i], v);
      w = fmaf(h, az[i], w);
      x[i] = fmaf(dt, u, x[i]);
      y[i] = fmaf(dt, v, y[i]);
      z[i] = fmaf(dt, w, z[i]);
    }
    vx[i] = u;
    vy[i] = v;
    vz[i] = w;
  }
}

static pp_status dist_nbody_advance(pp_context *ctx, pp_bodies *b, const float *ax,
                                    const float *ay, const float *az, float h, float dt,
                                    bool close, bool open) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (b->n == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, "pp_nbody_step"));
  dnb_advance_kernel<<<grid_cap(st, pp_ceil_div(b->n, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      b->x, b->y, b->z, b->vx, b->vy, b->vz, ax, ay, az, b->n, h, dt, close, open);
  PP_CUDA_LAUNCHED(ctx, "pp_nbody_step");
  return PP_OK;
}

/* One target per thread against every source tile, in double; one pair per block. */
__global__ void __launch_bounds__(NB_THREADS)
dnb_energy_kernel(const float4 *__restrict__ tpos, size_t n, const float *__restrict__ vx,
                  const float *__restrict__ vy, const float *__restrict__ vz,
                  const float4 *__restrict__ spos, size_t n_spad, size_t self, double eps2,
                  nb_energy *__restrict__ out) {
  __shared__ float4 tile[NB_THREADS];
  const size_t i = (size_t)blockIdx.x * NB_THREADS + threadIdx.x;
  const float4 p = tpos[i];
  const double phi = nb_potential(p, spos, n_spad / NB_THREADS, self + i, eps2, tile);
  nb_energy e = {0.0, 0.0};
  if (i < n) {
    e.kinetic = nb_kinetic(p.w, vx[i], vy[i], vz[i]);
    e.potential = (double)p.w * phi;
  }
  e = pp_block_reduce<nb_energy_sum, NB_THREADS>(e);
  if (threadIdx.x == 0) out[blockIdx.x] = e;
}

__global__ void dnb_energy_final_kernel(const nb_energy *__restrict__ parts, size_t count,
                                        nb_energy *out) {
  nb_energy e = nb_energy_sum::identity();
  for (size_t i = threadIdx.x; i < count; i += SUM_THREADS) e = nb_energy_sum::combine(e, parts[i]);
  e = pp_block_reduce<nb_energy_sum, SUM_THREADS>(e);
  if (threadIdx.x == 0) *out = e;
}

static pp_status dist_nbody_energy(pp_context *ctx, const pp_bodies *t, const pp_bodies *s,
                                   size_t self, float softening, double *kinetic, double *phi) {
  static const char fn[] = "pp_nbody_energy";
  pp_cuda_state *st = pp_cuda(ctx);
  *kinetic = *phi = 0.0;
  if (t->n == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const size_t n_tpad = pp_ceil_div(t->n, (size_t)NB_THREADS) * NB_THREADS;
  const size_t n_spad = pp_ceil_div(s->n ? s->n : 1, (size_t)NB_THREADS) * NB_THREADS;
  const size_t blocks = n_tpad / NB_THREADS;
  if (blocks > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n (%zu) needs more blocks than a grid holds",
                   fn, t->n);
  const size_t vec = sizeof(float4);
  if (n_tpad > SIZE_MAX / vec / 4 || n_spad > SIZE_MAX / vec / 4)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: scratch for %zu bodies overflows", fn, s->n);
  void *mem = NULL;
  PP_TRY(ctx->ops->temp_alloc(ctx, &mem, vec * (n_tpad + n_spad) + (blocks + 1) * sizeof(nb_energy)));
  float4 *tpos = (float4 *)mem, *spos = tpos + n_tpad;
  nb_energy *parts = (nb_energy *)(spos + n_spad), *total = parts + blocks;
  dnb_pack_kernel<<<grid_cap(st, pp_ceil_div(n_tpad, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      t->x, t->y, t->z, t->mass, t->n, n_tpad, tpos);
  dnb_pack_kernel<<<grid_cap(st, pp_ceil_div(n_spad, MAP_THREADS), 16), MAP_THREADS, 0, st->stream>>>(
      s->x, s->y, s->z, s->mass, s->n, n_spad, spos);
  /* padded sources are massless; padded targets count nothing (i >= n) */
  dnb_energy_kernel<<<(unsigned)blocks, NB_THREADS, 0, st->stream>>>(
      tpos, t->n, t->vx, t->vy, t->vz, spos, n_spad, self, (double)softening * (double)softening,
      parts);
  dnb_energy_final_kernel<<<1, SUM_THREADS, 0, st->stream>>>(parts, blocks, total);
  nb_energy host = {0.0, 0.0};
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpyAsync(&host, total, sizeof host, cudaMemcpyDeviceToHost, st->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st->stream);
  ctx->ops->temp_free(ctx, mem);
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  *kinetic = host.kinetic;
  *phi = host.potential;
  return PP_OK;
}

/* The dist-core entries of the backend table (internal.h). */
void pp_cuda_dist_core_ops(pp_backend_ops &o) {
  o.dist_stream = dist_stream;
  o.dist_device = dist_device;
  o.dist_sum_f32 = dist_sum_f32;
  o.dist_scan_from = pp_cuda_scan_from;
  o.dist_index_map = dist_index_map;
  o.dist_nbody_accel = dist_nbody_accel;
  o.dist_nbody_advance = dist_nbody_advance;
  o.dist_nbody_energy = dist_nbody_energy;
}
