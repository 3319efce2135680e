/* peer_nbody.cu — the GPU Gems 3 ch. 31 style all-pairs kernel (see peer_nbody.h): the
 * well-known baseline that parprim's force kernel is measured against. Written the way
 * the chapter presents it, not tuned further: one body per thread, p = 256 threads per
 * block and per tile, a tile loop with two barriers, and `#pragma unroll 4` on the loop
 * over the tile. A partial last tile is padded with massless bodies. */
#include "peer_nbody.h"

#include <cuda_runtime.h>
#include <stdio.h>

#define PEER_P 256

static char peer_error[256];

const char *bench_peer_nbody_error(void) { return peer_error; }

/* The chapter's bodyBodyInteraction: r_ij, |r|^2 + eps^2, rsqrtf, cubed, scaled by m_j. */
__device__ __forceinline__ float3 peer_body_body(float4 bi, float4 bj, float3 ai, float eps2) {
  float3 r;
  r.x = bj.x - bi.x;
  r.y = bj.y - bi.y;
  r.z = bj.z - bi.z;
  float dist_sqr = r.x * r.x + r.y * r.y + r.z * r.z + eps2;
  float inv_dist = rsqrtf(dist_sqr);
  float inv_dist_cube = inv_dist * inv_dist * inv_dist;
  float s = bj.w * inv_dist_cube;
  ai.x += r.x * s;
  ai.y += r.y * s;
  ai.z += r.z * s;
  return ai;
}

__global__ void __launch_bounds__(PEER_P)
    peer_calculate_forces(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n, float eps2) {
  __shared__ float4 sh_pos[PEER_P];
  const int gtid = blockIdx.x * PEER_P + threadIdx.x;
  const float4 my = gtid < n ? pos[gtid] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float3 a = make_float3(0.0f, 0.0f, 0.0f);
  for (int tile = 0, i = 0; i < n; i += PEER_P, tile++) {
    const int idx = tile * PEER_P + threadIdx.x;
    sh_pos[threadIdx.x] = idx < n ? pos[idx] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
#pragma unroll 4
    for (int j = 0; j < PEER_P; j++) a = peer_body_body(my, sh_pos[j], a, eps2);
    __syncthreads();
  }
  if (gtid < n) acc[gtid] = make_float4(a.x, a.y, a.z, 0.0f);
}

extern "C" int bench_peer_nbody_accel(const float *d_pos, float *d_acc, size_t n, float softening,
                                      void *stream) {
  if (n == 0) return 0;
  if (n > 0x7fffffffu) {
    snprintf(peer_error, sizeof peer_error, "peer nbody: n (%zu) beyond 2^31 - 1", n);
    return -1;
  }
  const unsigned blocks = (unsigned)((n + PEER_P - 1) / PEER_P);
  peer_calculate_forces<<<blocks, PEER_P, 0, (cudaStream_t)stream>>>(
      (const float4 *)d_pos, (float4 *)d_acc, (int)n, softening * softening);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(peer_error, sizeof peer_error, "peer nbody kernel: %s", cudaGetErrorString(e));
    return -1;
  }
  return 0;
}
