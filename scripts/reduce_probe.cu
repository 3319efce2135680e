/* reduce_probe.cu — times variants of the reduce kernel against CUB's DeviceReduce::Sum in
 * one process, so that one call on the GPU machine answers every tuning question at once.
 * Not part of the library: the kernels here are copies of src/cuda/reduce.cu's scheme with
 * the knobs exposed (threads, loads in flight and the registers that allow them, load cache
 * hint, how the input is split over blocks, how the last block learns it is last, async and
 * bulk copies into shared memory).
 *
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Iinclude scripts/reduce_probe.cu -Lbuild-x -lparprim \
 *        -Xlinker -rpath,$PWD/build-x -o /tmp/reduce_probe
 *   /tmp/reduce_probe [out.csv]
 *
 * Protocol as `parprim bench`: CUDA events around each call on a private stream (host work
 * of the call included), inputs below 300 MiB rotated over copies, 3 warm-up runs, then the
 * median of REPS runs of ours and of REPS runs of CUB's over the same slots. Every
 * measurement checks its result against CUB's. Also prints pp_reduce against the copy of
 * the production kernel (the cost of the library's host path) and host enqueue costs. */
#include "parprim.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static const int REPS = 41;
static int g_sms = 132;

/* ---- loads ------------------------------------------------------------------------------ */
enum { LD_CS, LD_NC, LD_NC_NA, LD_PLAIN, LD_EF, LD_LU, LD_NC_L2_128 };
static const char *ld_name[] = {"cs", "nc", "nc_na", "plain", "ef", "lu", "l2_128"};

template <int LOAD>
__device__ __forceinline__ uint4 ld(const uint4 *p, uint64_t pol) {
  uint4 r;
  if constexpr (LOAD == LD_CS) {
    r = __ldcs(p);
  } else if constexpr (LOAD == LD_NC) {
    r = __ldg(p);
  } else if constexpr (LOAD == LD_NC_NA) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if constexpr (LOAD == LD_PLAIN) {
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if constexpr (LOAD == LD_EF) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p), "l"(pol));
  } else if constexpr (LOAD == LD_LU) {
    r = __ldlu(p);
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  }
  return r;
}

template <int LOAD>
__device__ __forceinline__ uint64_t make_policy() {
  uint64_t pol = 0;
  if constexpr (LOAD == LD_EF)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

/* ---- sums as the library does them --------------------------------------------------- */
template <typename T, typename A>
__device__ __forceinline__ A fold(A acc, uint4 raw) {
  constexpr int V = 16 / sizeof(T);
  union {
    uint4 raw;
    T x[V];
  } u;
  u.raw = raw;
  if constexpr (std::is_same<T, float>::value) {
    return acc + double((u.x[0] + u.x[1]) + (u.x[2] + u.x[3]));
  } else {
#pragma unroll
    for (int j = 0; j < V; j++) acc += A(u.x[j]);
    return acc;
  }
}

template <int THREADS, typename A>
__device__ __forceinline__ A block_sum(A v) {
  __shared__ A warp_part[THREADS / 32];
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (THREADS == 32) return v;
  if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < THREADS / 32 ? warp_part[threadIdx.x] : A(0);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

/* FIN 0: the library's: __threadfence, atomicAdd, __threadfence in the last block.
 * FIN 1: one acq_rel atomic (release publishes the partial, acquire in the last block). */
template <int THREADS, int FIN, typename T, typename A>
__device__ __forceinline__ void finish(A acc, T *out, A *partials, unsigned *counter) {
  acc = block_sum<THREADS>(acc);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = T(acc);
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    unsigned ticket;
    if constexpr (FIN == 0) {
      __threadfence();
      ticket = atomicAdd(counter, 1u);
    } else {
      asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(ticket) : "l"(counter) : "memory");
    }
    last = ticket == gridDim.x - 1;
    if (last) *counter = 0;
  }
  __syncthreads();
  if (!last) return;
  if constexpr (FIN == 0) __threadfence();
  A all = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS) all += __ldcg(partials + b);
  __syncthreads(); /* block_sum's shared array is reused */
  all = block_sum<THREADS>(all);
  if (threadIdx.x == 0) *out = T(all);
}

/* Split of the 16-byte body over blocks.
 * LAYOUT 0: the library's: whole tiles of THREADS*UNROLL vectors, contiguous per block,
 *           computed in the kernel (64-bit divisions).
 * LAYOUT 1: contiguous per block in units of 32 vectors (a warp's load), q/r from the host;
 *           the part of a block's range short of a whole tile is loaded under a predicate.
 * LAYOUT 2: grid-stride over whole tiles. */
struct split {
  size_t q;
  unsigned r;
};

template <typename T, typename A, int THREADS, int UNROLL, int LOAD, int FIN, int LAYOUT, int MINB>
__global__ void __launch_bounds__(THREADS, MINB)
k_reduce(const T *__restrict__ in, size_t n, T *out, A *partials, unsigned *counter, split s) {
  constexpr int V = 16 / sizeof(T);
  const size_t nvec = n / V; /* the probe's inputs are whole vectors, 16-byte aligned */
  const uint4 *__restrict__ body = reinterpret_cast<const uint4 *>(in);
  const uint64_t pol = make_policy<LOAD>();
  const size_t tile = (size_t)THREADS * UNROLL;
  size_t begin, end, stride;
  if constexpr (LAYOUT == 0) {
    const size_t tiles = (nvec + tile - 1) / tile;
    const size_t first = tiles / gridDim.x * blockIdx.x + min((size_t)blockIdx.x, tiles % gridDim.x);
    const size_t last = first + tiles / gridDim.x + (blockIdx.x < tiles % gridDim.x ? 1 : 0);
    begin = first * tile;
    end = min(last * tile, nvec);
    stride = tile;
  } else if constexpr (LAYOUT == 1) {
    const size_t b = blockIdx.x;
    begin = (b * s.q + min(b, (size_t)s.r)) * 32;
    end = begin + (s.q + (b < s.r ? 1 : 0)) * 32;
    end = min(end, nvec);
    stride = tile;
  } else {
    begin = blockIdx.x * tile;
    end = nvec;
    stride = (size_t)gridDim.x * tile;
  }
  A acc = 0;
  size_t base = begin;
  for (; base + tile <= end; base += stride) {
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) r[u] = ld<LOAD>(body + base + u * THREADS + threadIdx.x, pol);
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc = fold<T, A>(acc, r[u]);
  }
  if (base < end) { /* the short end of the range: every load issued before the first use */
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      size_t v = base + u * THREADS + threadIdx.x;
      r[u] = v < end ? ld<LOAD>(body + v, pol) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc = fold<T, A>(acc, r[u]);
  }
  finish<THREADS, FIN>(acc, out, partials, counter);
}

/* Bulk copies (the TMA engine) of CHUNK-byte pieces into STAGES shared buffers; the
 * threads fold each buffer once its mbarrier says the bytes arrived. Chunks contiguous per
 * block (q/r from the host); the probe's inputs are whole chunks. */
__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

template <typename T, typename A, int THREADS, int CHUNK, int STAGES>
__global__ void __launch_bounds__(THREADS)
k_bulk(const T *__restrict__ in, size_t n, T *out, A *partials, unsigned *counter, split s) {
  extern __shared__ __align__(128) unsigned char sm[];
  uint64_t *bar = reinterpret_cast<uint64_t *>(sm);
  unsigned char *buf = sm + 128;
  const size_t b = blockIdx.x;
  const size_t c0 = b * s.q + min(b, (size_t)s.r), c1 = c0 + s.q + (b < s.r ? 1 : 0);
  const char *src = reinterpret_cast<const char *>(in);
  if (threadIdx.x == 0) {
    for (int i = 0; i < STAGES; i++)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar + i)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](int st, size_t c) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem_addr(bar + st)),
                 "r"(CHUNK)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(smem_addr(buf + st * CHUNK)),
        "l"(src + c * CHUNK), "r"(CHUNK), "r"(smem_addr(bar + st))
        : "memory");
  };
  if (threadIdx.x == 0)
    for (int i = 0; i < STAGES && c0 + i < c1; i++) issue(i, c0 + i);
  A acc = 0;
  for (size_t c = c0; c < c1; c++) {
    const int st = (int)((c - c0) % STAGES);
    const unsigned phase = (unsigned)((c - c0) / STAGES) & 1u;
    asm volatile("{\n\t.reg .pred P1;\n\tWAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@!P1 bra WAIT;\n\t}" ::"r"(smem_addr(bar + st)),
                 "r"(phase)
                 : "memory");
    const uint4 *v = reinterpret_cast<const uint4 *>(buf + st * CHUNK);
    uint4 r[CHUNK / 16 / THREADS];
#pragma unroll
    for (int i = 0; i < CHUNK / 16 / THREADS; i++) r[i] = v[i * THREADS + threadIdx.x];
#pragma unroll
    for (int i = 0; i < CHUNK / 16 / THREADS; i++) acc = fold<T, A>(acc, r[i]);
    __syncthreads(); /* every thread is done with the buffer before it is refilled */
    if (threadIdx.x == 0 && c + STAGES < c1) issue(st, c + STAGES);
  }
  finish<THREADS, 1>(acc, out, partials, counter);
}

/* Ampere-style async copies (cp.async, 16 bytes, L2 only) into per-thread shared slots,
 * STAGES tiles in flight without holding registers; each thread reads back only what it
 * copied, so no barrier is needed. Out-of-range slots are zero-filled (sum only). */
template <typename T, typename A, int THREADS, int UNROLL, int STAGES>
__global__ void __launch_bounds__(THREADS)
k_async(const T *__restrict__ in, size_t n, T *out, A *partials, unsigned *counter, split s) {
  extern __shared__ __align__(16) uint4 sbuf[];
  constexpr int V = 16 / sizeof(T);
  const size_t nvec = n / V;
  const uint4 *body = reinterpret_cast<const uint4 *>(in);
  const size_t b = blockIdx.x, tile = (size_t)THREADS * UNROLL;
  const size_t begin = (b * s.q + min(b, (size_t)s.r)) * 32;
  const size_t end = min(begin + (s.q + (b < s.r ? 1 : 0)) * 32, nvec);
  const size_t ntile = end > begin ? (end - begin + tile - 1) / tile : 0;
  auto issue = [&](size_t t, int st) {
    if (t < ntile) {
#pragma unroll
      for (int u = 0; u < UNROLL; u++) {
        size_t v = begin + t * tile + u * THREADS + threadIdx.x;
        unsigned bytes = v < end ? 16 : 0;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                         smem_addr(sbuf + (st * UNROLL + u) * THREADS + threadIdx.x)),
                     "l"(body + (v < end ? v : 0)), "r"(bytes)
                     : "memory");
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
#pragma unroll
  for (int st = 0; st < STAGES; st++) issue(st, st);
  A acc = 0;
  for (size_t t = 0; t < ntile; t++) {
    const int st = (int)(t % STAGES);
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc = fold<T, A>(acc, sbuf[(st * UNROLL + u) * THREADS + threadIdx.x]);
    issue(t + STAGES, st);
  }
  finish<THREADS, 1>(acc, out, partials, counter);
}

/* ---- host: variants ------------------------------------------------------------------- */
struct variant {
  std::string name;
  int threads, per_block_vectors; /* vectors one block covers per step (want = nvec / this) */
  int layout;                     /* 0 tile-granular (grid <= want), 1/3 contiguous split, 2 stride */
  int chunk;                      /* bulk: bytes per chunk (0: not bulk) */
  int smem;                       /* dynamic shared memory */
  const void *fn;
  int max_per_sm;
};

struct scratch {
  void *partials;
  unsigned *counter;
};

template <typename T, typename A>
struct launcher {
  static void launch(const variant &v, const T *in, size_t n, T *out, scratch sc, unsigned grid,
                     cudaStream_t st) {
    constexpr int V = 16 / sizeof(T);
    split s{0, 0};
    size_t nvec = n / V;
    if (v.chunk) {
      size_t chunks = n * sizeof(T) / v.chunk;
      s.q = chunks / grid;
      s.r = (unsigned)(chunks % grid);
    } else {
      size_t units = (nvec + 31) / 32;
      s.q = units / grid;
      s.r = (unsigned)(units % grid);
    }
    void *args[] = {(void *)&in, (void *)&n, (void *)&out, (void *)&sc.partials,
                    (void *)&sc.counter, (void *)&s};
    CK(cudaLaunchKernel(v.fn, dim3(grid), dim3(v.threads), args, v.smem, st));
  }
};

template <typename T, typename A, int THREADS, int UNROLL, int LOAD, int FIN, int LAYOUT, int MINB>
static variant mk() {
  variant v;
  char name[96];
  snprintf(name, sizeof name, "t%d_u%d_%s_f%d_%s_m%d", THREADS, UNROLL, ld_name[LOAD], FIN,
           LAYOUT == 0 ? "tiles" : LAYOUT == 1 ? "split" : "stride", MINB);
  v.name = name;
  v.threads = THREADS;
  v.per_block_vectors = THREADS * UNROLL;
  v.layout = LAYOUT;
  v.chunk = 0;
  v.smem = 0;
  v.fn = (const void *)k_reduce<T, A, THREADS, UNROLL, LOAD, FIN, LAYOUT, MINB>;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.max_per_sm, v.fn, THREADS, 0));
  return v;
}

template <typename T, typename A, int THREADS, int UNROLL, int STAGES>
static variant mk_async() {
  variant v;
  char name[96];
  snprintf(name, sizeof name, "async_t%d_u%d_s%d", THREADS, UNROLL, STAGES);
  v.name = name;
  v.threads = THREADS;
  v.per_block_vectors = THREADS * UNROLL;
  v.layout = 1;
  v.chunk = 0;
  v.smem = THREADS * UNROLL * STAGES * 16;
  v.fn = (const void *)k_async<T, A, THREADS, UNROLL, STAGES>;
  CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.max_per_sm, v.fn, THREADS, v.smem));
  return v;
}

template <typename T, typename A, int THREADS, int CHUNK, int STAGES>
static variant mk_bulk() {
  variant v;
  char name[96];
  snprintf(name, sizeof name, "bulk_t%d_c%dk_s%d", THREADS, CHUNK / 1024, STAGES);
  v.name = name;
  v.threads = THREADS;
  v.per_block_vectors = CHUNK / 16;
  v.layout = 3;
  v.chunk = CHUNK;
  v.smem = 128 + CHUNK * STAGES;
  v.fn = (const void *)k_bulk<T, A, THREADS, CHUNK, STAGES>;
  CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.max_per_sm, v.fn, THREADS, v.smem));
  return v;
}

template <typename T, typename A>
static std::vector<variant> variants() {
  std::vector<variant> vs;
  /* the library before the H100 sweep (no minimum of blocks per SM: ptxas kept 32
   * registers and issued only 4-5 of the 8 loads before the first use), then one knob at
   * a time */
  vs.push_back(mk<T, A, 256, 8, LD_CS, 0, 0, 0>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 0, 0, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 0, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 1, 1, 0>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 1, 1, 6>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 1, 2, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_CS, 0, 2, 4>()); /* the library since the H100 sweep */
  vs.push_back(mk<T, A, 256, 16, LD_CS, 1, 1, 2>());
  vs.push_back(mk<T, A, 256, 4, LD_CS, 1, 1, 8>());
  vs.push_back(mk<T, A, 256, 4, LD_CS, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 2, LD_CS, 1, 1, 8>());
  vs.push_back(mk<T, A, 256, 1, LD_CS, 1, 1, 8>());
  vs.push_back(mk<T, A, 128, 8, LD_CS, 1, 1, 8>());
  vs.push_back(mk<T, A, 128, 4, LD_CS, 1, 1, 16>());
  vs.push_back(mk<T, A, 512, 4, LD_CS, 1, 1, 2>());
  vs.push_back(mk<T, A, 512, 8, LD_CS, 1, 1, 2>());
  vs.push_back(mk<T, A, 1024, 4, LD_CS, 1, 1, 1>());
  vs.push_back(mk<T, A, 256, 8, LD_NC, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_NC_NA, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_PLAIN, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_EF, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_LU, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 8, LD_NC_L2_128, 1, 1, 4>());
  vs.push_back(mk<T, A, 256, 4, LD_NC_NA, 1, 1, 8>());
  vs.push_back(mk_async<T, A, 256, 4, 2>());
  vs.push_back(mk_async<T, A, 256, 4, 4>());
  vs.push_back(mk_async<T, A, 256, 8, 2>());
  vs.push_back(mk_bulk<T, A, 256, 16384, 4>());
  vs.push_back(mk_bulk<T, A, 256, 8192, 4>());
  vs.push_back(mk_bulk<T, A, 256, 32768, 3>());
  vs.push_back(mk_bulk<T, A, 512, 16384, 6>());
  return vs;
}

/* ---- host: data, timing --------------------------------------------------------------- */
template <typename T>
__global__ void k_fill(T *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint64_t h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    if constexpr (std::is_same<T, float>::value)
      p[i] = (float)(h >> 40) * (1.0f / 16777216.0f);
    else if constexpr (std::is_same<T, double>::value)
      p[i] = (double)(h >> 11) * (1.0 / 9007199254740992.0);
    else
      p[i] = (T)h;
  }
}

static double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct timer {
  cudaEvent_t a, b;
  timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  template <typename F>
  float time(cudaStream_t st, F f) {
    CK(cudaEventRecord(a, st));
    f();
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

template <typename T>
static bool same(T a, T b) {
  if constexpr (std::is_same<T, float>::value)
    return std::fabs((double)a - (double)b) <= 1e-4 * std::fabs((double)b) + 1e-3;
  else if constexpr (std::is_same<T, double>::value)
    return std::fabs(a - b) <= 1e-12 * std::fabs(b);
  else
    return a == b;
}

static FILE *g_csv;

template <typename T, typename A>
static void run_case(const char *tname, pp_dtype pt, int lg, cudaStream_t st, timer &tm,
                     const std::vector<variant> &vs, bool library, int pass) {
  const size_t n = (size_t)1 << lg, bytes = n * sizeof(T);
  const size_t rot = 300ull << 20;
  const size_t slots = bytes >= rot ? 1 : (rot + bytes - 1) / bytes;
  T *in;
  CK(cudaMalloc(&in, bytes * slots));
  k_fill<<<1024, 256, 0, st>>>(in, n * slots, 12345);
  T *out, *cub_out;
  CK(cudaMalloc(&out, sizeof(T)));
  CK(cudaMalloc(&cub_out, sizeof(T)));
  scratch sc;
  CK(cudaMalloc(&sc.partials, 65536));
  CK(cudaMalloc(&sc.counter, 256));
  CK(cudaMemset(sc.counter, 0, 256));
  size_t temp_bytes = 0;
  void *temp = nullptr;
  CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, cub_out, n, st));
  CK(cudaMalloc(&temp, temp_bytes));
  CK(cudaDeviceSynchronize());
  auto slot = [&](int r) { return in + (size_t)(r % slots) * n; };
  auto cub_call = [&](int r) {
    size_t tb = temp_bytes;
    CK(cub::DeviceReduce::Sum(temp, tb, slot(r), cub_out, n, st));
  };
  auto measure = [&](const char *name, unsigned grid, auto ours) {
    std::vector<float> to, tc;
    for (int r = 0; r < 3; r++) {
      ours(r);
      cub_call(r);
    }
    /* all of ours, then all of CUB's, each over the rotating slots as `parprim bench` does:
     * run-by-run alternation on one slot let the second of each pair find the first's
     * lines in L2 (50 MB), which made the 2^20 and 2^24 figures of the first sweep noise */
    for (int r = 0; r < REPS; r++) to.push_back(tm.time(st, [&] { ours(3 + r); }));
    for (int r = 0; r < REPS; r++) tc.push_back(tm.time(st, [&] { cub_call(3 + r); }));
    T a, b;
    CK(cudaMemcpy(&a, out, sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&b, cub_out, sizeof(T), cudaMemcpyDeviceToHost));
    double mo = median(to), mc = median(tc);
    fprintf(g_csv, "%s,%d,%s,%u,%.5f,%.5f,%.4f,%.1f,%s\n", tname, lg, name, grid, mo, mc, mc / mo,
            bytes / mo / 1e6, same(a, b) ? "ok" : "MISMATCH");
    fflush(g_csv);
    return mc / mo;
  };
  const size_t nvec = n / (16 / sizeof(T));
  for (const variant &v : vs) {
    if ((v.smem != 0) != (pass == 1)) continue; /* shared-memory pipelines last: riskier */
    if (v.chunk && bytes % v.chunk) continue;
    size_t want = (nvec + v.per_block_vectors - 1) / v.per_block_vectors;
    size_t maxres = (size_t)v.max_per_sm * g_sms;
    std::vector<size_t> grids;
    grids.push_back(std::min(want, maxres));
    if (v.layout != 0) {
      size_t cap = v.chunk ? n * sizeof(T) / v.chunk : (nvec + v.threads - 1) / v.threads;
      for (int k : {1, 2, 3, 4, 6, 8, 16})
        if ((size_t)k * g_sms <= std::min(maxres, cap)) grids.push_back((size_t)k * g_sms);
    }
    std::sort(grids.begin(), grids.end());
    grids.erase(std::unique(grids.begin(), grids.end()), grids.end());
    double best = 0;
    size_t best_g = 0;
    for (size_t g : grids) {
      if (g * sizeof(A) > 65536) continue;
      double r = measure(v.name.c_str(), (unsigned)g, [&](int rr) {
        launcher<T, A>::launch(v, slot(rr), n, out, sc, (unsigned)g, st);
      });
      if (r > best) best = r, best_g = g;
    }
    printf("%-4s 2^%-2d %-28s best grid %5zu  ratio %.3f\n", tname, lg, v.name.c_str(), best_g, best);
    fflush(stdout);
  }
  if (library) { /* pp_reduce through the library vs the same kernel launched raw */
    pp_context *ctx = nullptr;
    if (pp_create(&ctx, PP_BACKEND_CUDA) == PP_OK && pp_set_stream(ctx, st) == PP_OK) {
      const variant &cur = vs[0];
      size_t want = (nvec + cur.per_block_vectors - 1) / cur.per_block_vectors;
      unsigned g = (unsigned)std::min(want, (size_t)cur.max_per_sm * g_sms);
      measure("pp_reduce", 0, [&](int r) {
        if (pp_reduce(ctx, PP_SUM, pt, slot(r), n, out) != PP_OK) {
          fprintf(stderr, "pp_reduce: %s\n", pp_last_error(ctx));
          exit(1);
        }
      });
      measure("raw_current", g, [&](int r) { launcher<T, A>::launch(cur, slot(r), n, out, sc, g, st); });
      pp_destroy(ctx);
    }
  }
  CK(cudaFree(temp));
  CK(cudaFree(sc.partials));
  CK(cudaFree(sc.counter));
  CK(cudaFree(out));
  CK(cudaFree(cub_out));
  CK(cudaFree(in));
}

static double us_per_call(int calls, cudaStream_t st, const std::function<void()> &f) {
  CK(cudaStreamSynchronize(st));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; i++) f();
  auto t1 = std::chrono::steady_clock::now();
  CK(cudaStreamSynchronize(st));
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

/* What each call costs the host before its kernel reaches the GPU (2^20 f32). */
static void host_costs(cudaStream_t st) {
  const size_t n = 1 << 20;
  float *in, *out;
  CK(cudaMalloc(&in, n * 4));
  CK(cudaMalloc(&out, 64));
  k_fill<<<256, 256, 0, st>>>(in, n, 1);
  pp_context *ctx = nullptr;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK || pp_set_stream(ctx, st) != PP_OK) return;
  size_t tb = 0;
  void *temp;
  CK(cub::DeviceReduce::Sum(nullptr, tb, in, out, n, st));
  CK(cudaMalloc(&temp, tb));
  scratch sc;
  CK(cudaMalloc(&sc.partials, 65536));
  CK(cudaMalloc(&sc.counter, 256));
  CK(cudaMemset(sc.counter, 0, 256));
  CK(cudaDeviceSynchronize());
  variant cur = mk<float, double, 256, 8, LD_CS, 0, 0, 0>();
  int dev = 0;
  cudaPointerAttributes pa;
  for (int round = 0; round < 2; round++) {
    printf("host us/call (round %d): setdevice %.3f getdevice %.3f ptrattr %.3f raw_launch %.3f "
           "pp_reduce %.3f cub %.3f\n",
           round, us_per_call(500, st, [&] { CK(cudaSetDevice(0)); }),
           us_per_call(500, st, [&] { CK(cudaGetDevice(&dev)); }),
           us_per_call(500, st, [&] { CK(cudaPointerGetAttributes(&pa, in)); }),
           us_per_call(200, st, [&] { launcher<float, double>::launch(cur, in, n, out, sc, 128, st); }),
           us_per_call(200, st, [&] { pp_reduce(ctx, PP_SUM, PP_F32, in, n, out); }),
           us_per_call(200, st, [&] {
             size_t t2 = tb;
             CK(cub::DeviceReduce::Sum(temp, t2, in, out, n, st));
           }));
  }
  pp_destroy(ctx);
  CK(cudaFree(temp));
  CK(cudaFree(sc.partials));
  CK(cudaFree(sc.counter));
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char **argv) {
  g_csv = fopen(argc > 1 ? argv[1] : "reduce_probe.csv", "w");
  if (!g_csv) return 1;
  fprintf(g_csv, "dtype,log2n,variant,grid,ours_ms,cub_ms,ratio,ours_GBps,check\n");
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  g_sms = p.multiProcessorCount;
  printf("%s, %d SMs, L2 %d MiB\n", p.name, g_sms, p.l2CacheSize >> 20);
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  timer tm;
  host_costs(st);
  auto vf = variants<float, double>();
  auto vi = variants<int32_t, uint32_t>();
  auto vl = variants<int64_t, uint64_t>();
  auto vd = variants<double, double>();
  auto vb = variants<uint8_t, uint32_t>();
  for (auto &v : vf) printf("  %-28s %d blocks/SM\n", v.name.c_str(), v.max_per_sm);
  for (int pass = 0; pass < 2; pass++) {
    for (int lg : {20, 24, 28})
      run_case<float, double>("f32", PP_F32, lg, st, tm, vf, pass == 0, pass);
    run_case<int32_t, uint32_t>("i32", PP_I32, 28, st, tm, vi, false, pass);
    run_case<int64_t, uint64_t>("i64", PP_I64, 28, st, tm, vl, false, pass);
    run_case<double, double>("f64", PP_F64, 28, st, tm, vd, false, pass);
    run_case<uint8_t, uint32_t>("u8", PP_U8, 28, st, tm, vb, false, pass);
  }
  fclose(g_csv);
  return 0;
}
