/*
 * peer_nbody.h — the N-body peer of `parprim bench` and of the N-body ladder: an
 * all-pairs force kernel in the style of GPU Gems 3, chapter 31 ("Fast N-Body Simulation
 * with CUDA", Nyland, Harris & Prins): float4 (x, y, z, m) bodies, one body per thread,
 * 256-body tiles staged in shared memory, the j-loop unrolled by 4, rsqrtf, and the body's
 * own term left in (it is 0 for softening > 0, as the chapter requires).
 *
 * C interface over device memory; built only with CUDA (bench/peer_nbody.cu), so callers
 * use it under #ifdef PP_HAVE_CUDA. Returns 0 on success, -1 on a CUDA error (then
 * bench_peer_nbody_error() has the text).
 */
#ifndef PP_BENCH_PEER_NBODY_H
#define PP_BENCH_PEER_NBODY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_acc[i] = (ax, ay, az, 0) of body i from all n bodies of d_pos (both n float4, as
 * 4n floats); stream is a cudaStream_t. n up to 2^31 - 1. */
int bench_peer_nbody_accel(const float *d_pos, float *d_acc, size_t n, float softening,
                           void *stream);
const char *bench_peer_nbody_error(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_NBODY_H */
