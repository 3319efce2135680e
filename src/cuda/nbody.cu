/* nbody.cu — pp_nbody_accel, pp_nbody_step and pp_nbody_energy on the GPU.
 *
 * Every call packs the caller's structure-of-arrays bodies into float4 (x, y, z, m) in
 * scratch memory (one pass, padded with massless bodies to whole blocks), so the force
 * kernel (nbody.cuh) reads one 16-byte vector per body and needs no bounds checks. The
 * force kernel writes one partial acceleration per split of the source bodies; a second,
 * memory-bound kernel adds the partials in split order (deterministic) and either stores
 * the accelerations (accel) or applies them (step).
 *
 * pp_nbody_step keeps the packed positions on the device for all its steps and queues
 * every kernel on the stream without waiting: per step one force evaluation and one
 * "advance" kernel that closes the previous step's kick, opens this one's and drifts.
 * Kick-drift-kick leapfrog, h = dt / 2:
 *     a = F(x);  repeat steps times { v += h a; x += dt v; a = F(x); v += h a; }
 * The closing kick of one step and the opening kick of the next use the same a and are
 * applied as two separate additions, as the CPU backend does.
 *
 * Physics (API.md): G = 1, Plummer softening,
 *     a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2),
 *     K = sum_i m_i |v_i|^2 / 2,   U = -sum_{i<j} m_i m_j / sqrt(|x_j - x_i|^2 + eps^2).
 * A body does not act on itself, and pairs at distance 0 with eps = 0 (undefined in the
 * Newtonian limit) are left out of both sums rather than turning them into inf or NaN.
 * The energy is accumulated in double throughout (pair terms, per-body sums, block sums).
 */
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"
#include "nbody.cuh"

/* Bodies per thread of the production kernel: PP_NBODY_BODIES (tuning.h). */
#define NB_BODIES PP_NBODY_BODIES
#define NB_BLOCK_BODIES ((size_t)NB_THREADS * NB_BODIES)
#define NB_MAX_SPLITS 1024u
#define NB_MAP_THREADS 256 /* the memory-bound kernels */
#define NB_ENERGY_FINAL_THREADS 256

/* Scratch whose failure message names the entry point (the allocator's names none). */
static pp_status nb_temp_alloc(pp_context *ctx, const char *fn, void **mem, size_t bytes) {
  const pp_status s = ctx->ops->temp_alloc(ctx, mem, bytes);
  return s == PP_OK ? s : pp_fail(ctx, s, "%s: %s", fn, ctx->error);
}

/* ---- memory-bound kernels ------------------------------------------------------------ */

__global__ void nb_pack_kernel(const float *__restrict__ x, const float *__restrict__ y,
                               const float *__restrict__ z, const float *__restrict__ m,
                               size_t n, size_t n_pad, float4 *__restrict__ pos) {
  nb_pack(x, y, z, m, n, n_pad, pos);
}

__global__ void nb_unpack_kernel(const float4 *__restrict__ pos, size_t n, float *__restrict__ x,
                                 float *__restrict__ y, float *__restrict__ z) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 p = pos[i];
    x[i] = p.x;
    y[i] = p.y;
    z[i] = p.z;
  }
}

__global__ void nb_accel_out_kernel(const float4 *__restrict__ partial, size_t n, size_t n_pad,
                                    unsigned splits, float *__restrict__ ax,
                                    float *__restrict__ ay, float *__restrict__ az) {
  nb_accel_out(partial, n, n_pad, splits, ax, ay, az);
}

/* close: v += h a (the end of the previous step); open: v += h a, then x += dt v. */
__global__ void nb_advance_kernel(const float4 *__restrict__ partial, size_t n, size_t n_pad,
                                  unsigned splits, float4 *__restrict__ pos,
                                  float *__restrict__ vx, float *__restrict__ vy,
                                  float *__restrict__ vz, float h, float dt, bool close,
                                  bool open) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float3 a = nb_sum_partials(partial, i, n_pad, splits);
    float u = vx[i], v = vy[i], w = vz[i];
    if (close) {
      u = fmaf(h, a.x, u);
      v = fmaf(h, a.y, v);
      w = fmaf(h, a.z, w);
    }
    if (open) {
      u = fmaf(h, a.x, u);
      v = fmaf(h, a.y, v);
      w = fmaf(h, a.z, w);
      float4 p = pos[i];
      p.x = fmaf(dt, u, p.x);
      p.y = fmaf(dt, v, p.y);
      p.z = fmaf(dt, w, p.z);
      pos[i] = p;
    }
    vx[i] = u;
    vy[i] = v;
    vz[i] = w;
  }
}

/* ---- energy ----------------------------------------------------------------------------- */

/* One body per thread against every tile, in double; one nb_energy per block. */
__global__ void __launch_bounds__(NB_THREADS)
    nb_energy_kernel(const float4 *__restrict__ pos, size_t n, size_t n_pad,
                     const float *__restrict__ vx, const float *__restrict__ vy,
                     const float *__restrict__ vz, double eps2, nb_energy *__restrict__ out) {
  __shared__ float4 tile[NB_THREADS];
  const size_t i = (size_t)blockIdx.x * NB_THREADS + threadIdx.x;
  const float4 p = pos[i];
  const double phi = nb_potential(p, pos, n_pad / NB_THREADS, i, eps2, tile);
  nb_energy e = {0.0, (double)p.w * phi};
  if (i < n) e.kinetic = nb_kinetic(p.w, vx[i], vy[i], vz[i]);
  e = pp_block_reduce<nb_energy_sum, NB_THREADS>(e);
  if (threadIdx.x == 0) out[blockIdx.x] = e;
}

/* One block adds the block sums in a fixed order: the result does not depend on timing. */
__global__ void nb_energy_final_kernel(const nb_energy *__restrict__ parts, size_t count,
                                       double *kinetic, double *potential) {
  nb_energy e = nb_energy_sum::identity();
  for (size_t i = threadIdx.x; i < count; i += NB_ENERGY_FINAL_THREADS)
    e = nb_energy_sum::combine(e, parts[i]);
  e = pp_block_reduce<nb_energy_sum, NB_ENERGY_FINAL_THREADS>(e);
  if (threadIdx.x == 0) {
    *kinetic = e.kinetic;
    *potential = -0.5 * e.potential; /* every pair was counted from both ends */
  }
}

/* ---- host side ------------------------------------------------------------------------ */

static unsigned map_grid(pp_cuda_state *st, size_t n) {
  size_t g = pp_ceil_div(n, NB_MAP_THREADS), cap = (size_t)st->sm_count * 16;
  return (unsigned)(g < cap ? g : cap < 1 ? 1 : cap);
}

/* How one force evaluation is laid out. */
struct nb_plan {
  size_t n, n_pad, tiles, iblocks;
  unsigned splits;
  bool guard;
};

template <bool GUARD>
static int force_blocks_per_sm(pp_cuda_state *st) {
  static pp_fit_cache fit;
  return pp_fit_blocks(st, &fit, nb_force_kernel<NB_BODIES, GUARD>, NB_THREADS, 0, 1);
}

static pp_status make_plan(pp_context *ctx, const char *fn, size_t n, float softening,
                           nb_plan *p) {
  pp_cuda_state *st = pp_cuda(ctx);
  p->n = n;
  p->n_pad = pp_ceil_div(n, NB_BLOCK_BODIES) * NB_BLOCK_BODIES;
  p->tiles = p->n_pad / NB_THREADS;
  p->iblocks = p->n_pad / NB_BLOCK_BODIES;
  if (p->iblocks > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n (%zu) needs more blocks than a grid holds",
                   fn, n);
  const float eps2 = softening * softening;
  p->guard = !(eps2 >= NB_EPS2_UNGUARDED);
  const int per_sm = p->guard ? force_blocks_per_sm<true>(st) : force_blocks_per_sm<false>(st);
  p->splits = nb_choose_splits(p->iblocks, p->tiles, (size_t)st->sm_count * (size_t)per_sm, NB_MAX_SPLITS);
  return PP_OK;
}

/* Scratch: the packed bodies, then `splits` arrays of partial accelerations. */
static pp_status alloc_scratch(pp_context *ctx, const char *fn, const nb_plan *p,
                               size_t extra_bytes, float4 **pos, float4 **partial) {
  const size_t vec = sizeof(float4);
  if (p->n_pad > SIZE_MAX / vec / ((size_t)p->splits + 1) - extra_bytes / vec - 1)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: scratch for n (%zu) overflows size_t", fn, p->n);
  void *mem = NULL;
  PP_TRY(nb_temp_alloc(ctx, fn, &mem, p->n_pad * vec * ((size_t)p->splits + 1) + extra_bytes));
  *pos = (float4 *)mem;
  *partial = *pos + p->n_pad;
  return PP_OK;
}

static pp_status launch_pack(pp_context *ctx, const char *fn, const pp_bodies *b, const nb_plan *p,
                             float4 *pos) {
  pp_cuda_state *st = pp_cuda(ctx);
  nb_pack_kernel<<<map_grid(st, p->n_pad), NB_MAP_THREADS, 0, st->stream>>>(
      b->x, b->y, b->z, b->mass, p->n, p->n_pad, pos);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

static pp_status launch_force(pp_context *ctx, const char *fn, const nb_plan *p, float softening,
                              const float4 *pos, float4 *partial) {
  pp_cuda_state *st = pp_cuda(ctx);
  const dim3 grid((unsigned)p->iblocks, p->splits);
  const float eps2 = softening * softening;
  if (p->guard)
    nb_force_kernel<NB_BODIES, true><<<grid, NB_THREADS, 0, st->stream>>>(pos, p->n_pad, p->tiles,
                                                                         p->splits, eps2, partial);
  else
    nb_force_kernel<NB_BODIES, false><<<grid, NB_THREADS, 0, st->stream>>>(pos, p->n_pad, p->tiles,
                                                                          p->splits, eps2, partial);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

/* What accel and step begin with: the device, the plan, the scratch (*pos, which the
 * caller frees once it is set, whatever the status), the packed bodies and their
 * accelerations. */
static pp_status nb_begin(pp_context *ctx, const char *fn, const pp_bodies *b, float softening,
                          nb_plan *p, float4 **pos, float4 **partial) {
  PP_TRY(pp_cuda_use_device(ctx, fn));
  PP_TRY(make_plan(ctx, fn, b->n, softening, p));
  PP_TRY(alloc_scratch(ctx, fn, p, 0, pos, partial));
  PP_TRY(launch_pack(ctx, fn, b, p, *pos));
  return launch_force(ctx, fn, p, softening, *pos, *partial);
}

pp_status pp_cuda_nbody_accel(pp_context *ctx, const pp_bodies *b, float softening, float *ax,
                              float *ay, float *az) {
  static const char fn[] = "pp_nbody_accel";
  if (b->n == 0) return PP_OK;
  pp_cuda_state *st = pp_cuda(ctx);
  nb_plan p;
  float4 *pos = NULL, *partial = NULL;
  pp_status s = nb_begin(ctx, fn, b, softening, &p, &pos, &partial);
  if (s == PP_OK) {
    nb_accel_out_kernel<<<map_grid(st, p.n), NB_MAP_THREADS, 0, st->stream>>>(
        partial, p.n, p.n_pad, p.splits, ax, ay, az);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  }
  if (pos) ctx->ops->temp_free(ctx, pos);
  return s;
}

static pp_status launch_advance(pp_context *ctx, const char *fn, const pp_bodies *b,
                                const nb_plan *p, const float4 *partial, float4 *pos, float dt,
                                bool close, bool open) {
  pp_cuda_state *st = pp_cuda(ctx);
  nb_advance_kernel<<<map_grid(st, p->n), NB_MAP_THREADS, 0, st->stream>>>(
      partial, p->n, p->n_pad, p->splits, pos, b->vx, b->vy, b->vz, 0.5f * dt, dt, close, open);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

pp_status pp_cuda_nbody_step(pp_context *ctx, pp_bodies *b, float dt, float softening,
                             size_t steps) {
  static const char fn[] = "pp_nbody_step";
  if (b->n == 0 || steps == 0) return PP_OK;
  pp_cuda_state *st = pp_cuda(ctx);
  nb_plan p;
  float4 *pos = NULL, *partial = NULL;
  /* nothing waits for the GPU in this loop: all steps are queued on the stream */
  pp_status s = nb_begin(ctx, fn, b, softening, &p, &pos, &partial);
  for (size_t k = 0; s == PP_OK && k < steps; k++) {
    s = launch_advance(ctx, fn, b, &p, partial, pos, dt, k > 0, true);
    if (s == PP_OK) s = launch_force(ctx, fn, &p, softening, pos, partial);
  }
  if (s == PP_OK) s = launch_advance(ctx, fn, b, &p, partial, pos, dt, true, false);
  if (s == PP_OK) {
    nb_unpack_kernel<<<map_grid(st, p.n), NB_MAP_THREADS, 0, st->stream>>>(pos, p.n, b->x, b->y,
                                                                           b->z);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  }
  if (pos) ctx->ops->temp_free(ctx, pos);
  return s;
}

pp_status pp_cuda_nbody_energy(pp_context *ctx, const pp_bodies *b, float softening,
                               double *kinetic, double *potential) {
  static const char fn[] = "pp_nbody_energy";
  pp_cuda_state *st = pp_cuda(ctx);
  PP_TRY(pp_cuda_use_device(ctx, fn));
  if (b->n == 0) {
    PP_CUDA_TRY(ctx, cudaMemsetAsync(kinetic, 0, sizeof *kinetic, st->stream), fn);
    PP_CUDA_TRY(ctx, cudaMemsetAsync(potential, 0, sizeof *potential, st->stream), fn);
    return PP_OK;
  }
  /* one body per thread: pad to whole blocks of NB_THREADS only */
  const size_t n_pad = pp_ceil_div(b->n, (size_t)NB_THREADS) * NB_THREADS;
  const size_t blocks = n_pad / NB_THREADS;
  if (blocks > (size_t)INT32_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: n (%zu) needs more blocks than a grid holds",
                   fn, b->n);
  if (n_pad > SIZE_MAX / sizeof(float4) - blocks)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: scratch for n (%zu) overflows size_t", fn, b->n);
  void *mem = NULL;
  PP_TRY(nb_temp_alloc(ctx, fn, &mem, n_pad * sizeof(float4) + blocks * sizeof(nb_energy)));
  float4 *pos = (float4 *)mem;
  nb_energy *parts = (nb_energy *)(pos + n_pad);
  nb_pack_kernel<<<map_grid(st, n_pad), NB_MAP_THREADS, 0, st->stream>>>(
      b->x, b->y, b->z, b->mass, b->n, n_pad, pos);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) {
    const double eps2 = (double)softening * (double)softening;
    nb_energy_kernel<<<(unsigned)blocks, NB_THREADS, 0, st->stream>>>(pos, b->n, n_pad, b->vx, b->vy,
                                                                      b->vz, eps2, parts);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    nb_energy_final_kernel<<<1, NB_ENERGY_FINAL_THREADS, 0, st->stream>>>(parts, blocks, kinetic,
                                                                          potential);
    e = cudaGetLastError();
  }
  ctx->ops->temp_free(ctx, mem);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
}
