/* launch.cuh — what a launch needs to know about a kernel on the context's device, found
 * once per device and kept: how many blocks of it an SM holds, and whether it may use
 * more than the default 48 KiB of dynamic shared memory.
 *
 * Both are properties of the kernel in one device's context (the CUDA C Programming
 * Guide, "Occupancy Calculator" and "Shared Memory" of the compute capability 9.0
 * chapter: a kernel must opt in to more than 48 KiB with cudaFuncSetAttribute), so a
 * process that drives several GPUs (a distributed context per GPU, or a plain context
 * beside them) asks and sets them on each device. A call site keeps one pp_fit_cache per
 * kernel instantiation, as a function-local static. Threads racing on it ask the same
 * question and store the same answer, which is harmless; the stores are relaxed atomics.
 */
#ifndef PP_CUDA_LAUNCH_CUH
#define PP_CUDA_LAUNCH_CUH

#include "cuda_backend.h"

/* Devices a cache keeps answers for; on a device beyond, every call asks again. */
#define PP_FIT_DEVICES 64

struct pp_fit_cache {
  /* the last answer on each device: (smem + 1) << 8 | blocks per SM; 0: not asked yet */
  unsigned long long blocks[PP_FIT_DEVICES];
  size_t smem_limit[PP_FIT_DEVICES]; /* the dynamic shared-memory limit set so far */
};

/* Let kernel use smem bytes of dynamic shared memory on the current device (at least
 * smem: a larger limit set before is kept). */
template <typename Kernel>
static cudaError_t pp_fit_smem(pp_cuda_state *st, pp_fit_cache *cache, Kernel kernel, size_t smem) {
  const int d = st->device;
  if (d < PP_FIT_DEVICES && __atomic_load_n(&cache->smem_limit[d], __ATOMIC_RELAXED) >= smem)
    return cudaSuccess;
  const cudaError_t e =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (e == cudaSuccess && d < PP_FIT_DEVICES)
    __atomic_store_n(&cache->smem_limit[d], smem, __ATOMIC_RELAXED);
  return e;
}

/* Blocks of kernel an SM of the current device holds with threads threads (the same at
 * every call with this cache) and smem bytes of dynamic shared memory; fallback when the
 * occupancy calculator fails or says none (its error is cleared, not left for a later
 * launch check). The answer for the last smem asked on each device is kept: asking the
 * runtime costs microseconds of host time that the GPU may wait through. */
template <typename Kernel>
static int pp_fit_blocks(pp_cuda_state *st, pp_fit_cache *cache, Kernel kernel, int threads,
                         size_t smem, int fallback) {
  const int d = st->device;
  const unsigned long long tag = (unsigned long long)(smem + 1) << 8;
  if (d < PP_FIT_DEVICES) {
    const unsigned long long v = __atomic_load_n(&cache->blocks[d], __ATOMIC_RELAXED);
    if ((v & ~0xffull) == tag) return (int)(v & 0xff);
  }
  int b = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads, smem) != cudaSuccess ||
      b < 1) {
    (void)cudaGetLastError();
    b = fallback;
  }
  if (b > 255) b = 255;
  if (d < PP_FIT_DEVICES) __atomic_store_n(&cache->blocks[d], tag | (unsigned)b, __ATOMIC_RELAXED);
  return b;
}

#endif /* PP_CUDA_LAUNCH_CUH */
