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

/* ---- programmatic dependent launch (compute capability 9.0) ------------------------------
 * A kernel launched with pp_launch_dependent may start while the kernel before it on the
 * stream still runs: as soon as every block of that kernel has executed pp_pdl_trigger()
 * or exited. Before it reads anything the earlier kernel writes it calls pp_pdl_wait(),
 * which returns once that kernel has completed and its writes are visible; what it does
 * before the wait (loads of data the earlier kernel does not write, its set-up) overlaps
 * the earlier kernel's last blocks and its own launch (CUDA C++ Programming Guide,
 * "Programmatic Dependent Launch and Synchronization"; PTX ISA, griddepcontrol). Launched
 * the plain way, both are no-ops. Code built for a virtual architecture below 9.0 has
 * neither, so pp_launch_dependent launches such a kernel (its ptxVersion says so) the
 * plain way, as it does on a device below 9.0. */
__device__ __forceinline__ void pp_pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pp_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Per device, whether a kernel may be launched as a dependent: 0 not asked yet, 1 no,
 * 2 yes. A call site keeps one per kernel instantiation, as a function-local static. */
struct pp_pdl_cache {
  int ok[PP_FIT_DEVICES];
};

/* kernel<<<blocks, threads, 0, st->stream>>>(args...), as a programmatic dependent of the
 * kernel before it on the stream where the kernel and the device allow it. */
template <typename... P, typename... A>
static cudaError_t pp_launch_dependent(pp_cuda_state *st, pp_pdl_cache *cache,
                                       void (*kernel)(P...), unsigned blocks, unsigned threads,
                                       A... args) {
  const int d = st->device;
  int ok = d < PP_FIT_DEVICES ? __atomic_load_n(&cache->ok[d], __ATOMIC_RELAXED) : 0;
  if (ok == 0) {
    cudaFuncAttributes fa;
    int major = 0;
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess) {
      (void)cudaGetLastError(); /* a failed question is not left for the launch check */
      ok = 1;
    } else {
      ok = fa.ptxVersion >= 90 && major >= 9 ? 2 : 1;
    }
    if (d < PP_FIT_DEVICES) __atomic_store_n(&cache->ok[d], ok, __ATOMIC_RELAXED);
  }
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = st->stream;
  cfg.attrs = &attr;
  cfg.numAttrs = ok == 2 ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, args...);
  if (e != cudaSuccess && cfg.numAttrs) {
    /* refused as a dependent (a stream or a driver without it): nothing was launched, so
       launch it the plain way; an error that is not about the attribute comes back again */
    (void)cudaGetLastError();
    cfg.numAttrs = 0;
    e = cudaLaunchKernelEx(&cfg, kernel, args...);
  }
  return e;
}

#endif /* PP_CUDA_LAUNCH_CUH */
