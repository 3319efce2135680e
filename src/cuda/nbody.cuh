/* nbody.cuh — the all-pairs force kernel of src/cuda/nbody.cu, in a header so that the
 * N-body ladder (ladder/nbody.cu) can time the same template at other shapes than the one
 * the library ships.
 *
 * Layout: bodies packed as float4 (x, y, z, mass), padded with massless bodies at the
 * origin to a multiple of NB_THREADS * B, so no loop needs a bounds check. A block owns
 * NB_THREADS * B bodies (thread t holds bodies t, t + NB_THREADS, ...: coalesced loads and
 * stores) and walks tiles of NB_THREADS bodies staged in shared memory (GPU Gems 3 ch. 31,
 * "Fast N-Body Simulation with CUDA"; ladder/nbody.cu's tiled step). blockIdx.y splits the source bodies into `splits` ranges
 * of whole tiles; each split writes its own partial accelerations and a second kernel adds
 * them, so that a small n still fills every SM.
 *
 * Cost per interaction: 3 FADD (dx, dy, dz), 3 FFMA (r^2 + eps^2), one MUFU.RSQ, 3 FMUL
 * (m r^-3) and 3 FFMA (accumulate) = 12 FP32 instructions, plus one shared-memory
 * broadcast load per source body shared by the B bodies of the thread. The kernel is
 * issue-bound on the FP32 pipe; B > 1 amortises the load and gives each warp B
 * independent dependency chains to interleave.
 */
#ifndef PP_CUDA_NBODY_CUH
#define PP_CUDA_NBODY_CUH

#include <cuda_runtime.h>

#include "tuning.h"
#include <stddef.h>

#define NB_THREADS PP_NBODY_THREADS

/* Softening^2 at or above this takes the unguarded loop: a body's own term (and any pair
 * at distance 0) is then 0 * m * (eps^2)^(-3/2), exactly 0 as long as that product is
 * finite, i.e. for masses below ~1e11. Below it each interaction also tests the distance
 * for 0 (one FADD and one select more). */
#define NB_EPS2_UNGUARDED 1e-18f

/* rsqrt.approx with denormals flushed: one MUFU.RSQ. The plain rsqrtf() of a build without
 * -ftz adds a scaling sequence for denormal inputs that r^2 + eps^2 never is on the fast
 * path (and on the guarded path r^2 == 0 is selected away). */
__device__ __forceinline__ float nb_rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/* Adds the pull of body q on the body at (px, py, pz). GUARD: a pair at distance 0 (the
 * body itself, or a coincident one) contributes nothing instead of 0 * inf = NaN, which a
 * tiny or zero eps^2 would otherwise give; and a denormal r^2 (bodies closer than ~1e-19
 * with no softening), which the flushing rsqrt would take for 0, is scaled by 2^64 into
 * the normal range and the result by 2^32 back (both exact), as the CPU backend does. */
template <bool GUARD>
__device__ __forceinline__ void nb_interact(float4 q, float px, float py, float pz, float eps2,
                                            float &ax, float &ay, float &az) {
  const float dx = q.x - px, dy = q.y - py, dz = q.z - pz;
  float r2, inv;
  if (GUARD) {
    const float d2 = fmaf(dz, dz, fmaf(dy, dy, dx * dx));
    r2 = d2 + eps2;
    const bool tiny = r2 < 0x1p-126f;
    inv = nb_rsqrt(tiny ? r2 * 0x1p64f : r2) * (tiny ? 0x1p32f : 1.0f);
    inv = d2 > 0.0f ? inv : 0.0f;
  } else {
    r2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2)));
    inv = nb_rsqrt(r2);
  }
  /* m / r^3. The guarded path multiplies in the order that cannot overflow where the
     result is finite: at r ~ 1e-20 (inv ~ 1e20) inv^2 alone is beyond a float, while
     ((m inv) inv) inv stays in range for any finite force; the fast path keeps the two
     independent products. */
  const float s = GUARD ? q.w * inv * inv * inv : q.w * inv * (inv * inv);
  ax = fmaf(dx, s, ax);
  ay = fmaf(dy, s, ay);
  az = fmaf(dz, s, az);
}

/* One block: targets blockIdx.x * NB_THREADS * B + threadIdx.x + k * NB_THREADS (k < B)
 * against source tiles [tiles * y / splits, tiles * (y + 1) / splits), y = blockIdx.y; the
 * partial accelerations go to partial[y * n_tpad + target] (w = 0). nb_force_kernel runs it
 * with one array as targets and sources; dist_ops.cu with a rank's targets and the
 * gathered system. */
template <int B, bool GUARD>
__device__ __forceinline__ void nb_force_block(const float4 *__restrict__ targets,
                                               const float4 *__restrict__ sources, size_t n_tpad,
                                               size_t tiles, unsigned splits, float eps2,
                                               float4 *__restrict__ partial) {
  __shared__ float4 tile[NB_THREADS];
  const size_t first = (size_t)blockIdx.x * (NB_THREADS * B) + threadIdx.x;
  float px[B], py[B], pz[B], ax[B], ay[B], az[B];
#pragma unroll
  for (int k = 0; k < B; k++) {
    const float4 p = targets[first + (size_t)k * NB_THREADS];
    px[k] = p.x;
    py[k] = p.y;
    pz[k] = p.z;
    ax[k] = ay[k] = az[k] = 0.0f;
  }
  const size_t t_begin = tiles * blockIdx.y / splits, t_end = tiles * (blockIdx.y + 1) / splits;
  /* the next tile is fetched into a register while this one is consumed, so the global
   * load's latency hides behind a whole tile of arithmetic */
  float4 next = t_begin < t_end ? sources[t_begin * NB_THREADS + threadIdx.x] : make_float4(0, 0, 0, 0);
  for (size_t t = t_begin; t < t_end; t++) {
    __syncthreads(); /* everyone is done with the previous tile */
    tile[threadIdx.x] = next;
    __syncthreads();
    if (t + 1 < t_end) next = sources[(t + 1) * NB_THREADS + threadIdx.x];
#pragma unroll 16
    for (int j = 0; j < NB_THREADS; j++) {
      const float4 q = tile[j]; /* same address for the whole warp: a broadcast */
#pragma unroll
      for (int k = 0; k < B; k++) nb_interact<GUARD>(q, px[k], py[k], pz[k], eps2, ax[k], ay[k], az[k]);
    }
  }
  float4 *out = partial + (size_t)blockIdx.y * n_tpad + first;
#pragma unroll
  for (int k = 0; k < B; k++) out[(size_t)k * NB_THREADS] = make_float4(ax[k], ay[k], az[k], 0.0f);
}

/* Sum of the splits' partial accelerations of body i, in split order. */
__device__ __forceinline__ float3 nb_sum_partials(const float4 *__restrict__ partial, size_t i,
                                                  size_t n_pad, unsigned splits) {
  float4 a = partial[i];
  for (unsigned s = 1; s < splits; s++) {
    const float4 b = partial[(size_t)s * n_pad + i];
    a.x += b.x;
    a.y += b.y;
    a.z += b.z;
  }
  return make_float3(a.x, a.y, a.z);
}

/* The grid-stride bodies of the memory-bound kernels that nbody.cu and dist_ops.cu share:
 * packing bodies into float4 (x, y, z, mass), the massless padding at the origin, ... */
__device__ __forceinline__ void nb_pack(const float *__restrict__ x, const float *__restrict__ y,
                                        const float *__restrict__ z, const float *__restrict__ m,
                                        size_t n, size_t n_pad, float4 *__restrict__ pos) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_pad; i += stride)
    pos[i] = i < n ? make_float4(x[i], y[i], z[i], m[i]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

/* ... and the accelerations out of the splits' partial sums (nb_sum_partials). */
__device__ __forceinline__ void nb_accel_out(const float4 *__restrict__ partial, size_t n,
                                             size_t n_pad, unsigned splits, float *__restrict__ ax,
                                             float *__restrict__ ay, float *__restrict__ az) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float3 a = nb_sum_partials(partial, i, n_pad, splits);
    ax[i] = a.x;
    ay[i] = a.y;
    az[i] = a.z;
  }
}

/* What the energy kernels sum per block (with pp_block_reduce): kinetic energy and
 * sum_i m_i phi_i, i.e. twice -U. */
struct nb_energy {
  double kinetic, potential;
};

struct nb_energy_sum {
  typedef nb_energy Acc;
  static __device__ __forceinline__ nb_energy identity() {
    nb_energy e = {0.0, 0.0};
    return e;
  }
  static __device__ __forceinline__ nb_energy combine(nb_energy a, nb_energy b) {
    nb_energy e = {a.kinetic + b.kinetic, a.potential + b.potential};
    return e;
  }
};

/* The energy kernels' per-body terms, in double. The potential at p of the sources (whole
 * tiles of NB_THREADS bodies, tiles of them), staged through the block's shared tile:
 * sum of m_j / r, leaving out source number skip (p itself) and bodies at distance 0.
 * Every thread of the block calls it. */
__device__ __forceinline__ double nb_potential(float4 p, const float4 *__restrict__ sources,
                                               size_t tiles, size_t skip, double eps2,
                                               float4 *tile) {
  const double px = p.x, py = p.y, pz = p.z;
  double phi = 0.0;
  for (size_t t = 0; t < tiles; t++) {
    __syncthreads();
    tile[threadIdx.x] = sources[t * NB_THREADS + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < NB_THREADS; j++) {
      const float4 q = tile[j];
      const double dx = (double)q.x - px, dy = (double)q.y - py, dz = (double)q.z - pz;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      if (t * NB_THREADS + (size_t)j != skip && r2 > 0.0) phi += (double)q.w * rsqrt(r2);
    }
  }
  return phi;
}

/* Kinetic energy m v^2 / 2 of a body of mass m and velocity (u, v, w). */
__device__ __forceinline__ double nb_kinetic(float m, double u, double v, double w) {
  return 0.5 * (double)m * (u * u + v * v + w * w);
}

/* The bodies of pos (n_pad of them) against themselves. */
template <int B, bool GUARD>
__global__ void __launch_bounds__(NB_THREADS)
    nb_force_kernel(const float4 *__restrict__ pos, size_t n_pad, size_t tiles,
                    unsigned splits, float eps2, float4 *__restrict__ partial) {
  nb_force_block<B, GUARD>(pos, pos, n_pad, tiles, splits, eps2, partial);
}

/* Splits of the source tiles (at most max_splits): enough blocks to fill every SM when
 * the targets are few, chosen to maximise useful work / (waves x resident slots x the
 * longest split's tiles). slots: blocks resident on the whole device. */
static inline unsigned nb_choose_splits(size_t iblocks, size_t tiles, size_t slots,
                                        size_t max_splits) {
  if (iblocks >= 8 * slots) return 1; /* many waves already: the tail is small */
  unsigned best = 1;
  double best_eff = 0.0;
  const size_t max_s = tiles < max_splits ? tiles : max_splits;
  for (size_t s = 1; s <= max_s; s++) {
    const size_t waves = (iblocks * s + slots - 1) / slots;
    const double longest = (double)((tiles + s - 1) / s);
    const double eff = (double)iblocks * (double)tiles / ((double)waves * (double)slots * longest);
    if (eff > best_eff * 1.01) { /* a split more must pay for its partial sums */
      best_eff = eff;
      best = (unsigned)s;
    }
  }
  return best;
}

#endif /* PP_CUDA_NBODY_CUH */
