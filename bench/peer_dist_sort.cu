/*
 * peer_dist_sort.cu — bench/peer_dist_sort.h: the CUB + NCCL sample sort that
 * `parprim bench --gpus N` measures the distributed pp_sort against, and the device-side
 * generation and checks of the distributed bench.
 *
 * The peer is the sample sort of Shi & Schaeffer 1992 ("Parallel sorting by regular
 * sampling") as a competent CUDA user writes it with the libraries at hand:
 *   1. cub::DeviceRadixSort of the rank's keys;
 *   2. SAMPLES regular samples of the sorted keys, ncclAllGather, sorted on the host, the
 *      p - 1 splitters taken at regular positions;
 *   3. each splitter's position in the sorted keys by binary search (upper bound), so rank
 *      q receives the keys in (splitter q-1, splitter q];
 *   4. the send counts allgathered (ncclAllGather), so every rank knows what it receives;
 *   5. one ncclGroupStart/ncclSend/ncclRecv/ncclGroupEnd exchange;
 *   6. cub::DeviceRadixSort of what arrived.
 * It does not break ties (equal keys all go to one rank) and leaves each rank with as many
 * keys as its bucket holds (no rebalance to the input counts): less than the contract of
 * the distributed pp_sort asks, which only makes the peer faster. The bench feeds it
 * uniform u32 keys.
 */
#include "peer_dist_sort.h"
#include "peer_common.cuh"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(PP_HAVE_NCCL)
#include <nccl.h>
#endif

#define SAMPLES 1024 /* regular samples per rank */

/* Writes "WHAT: TEXT" into err (BENCH_DIST_ERR bytes) and returns -1. */
static int fail_text(char *err, const char *what, const char *text) {
  snprintf(err, BENCH_DIST_ERR, "%s: %s", what, text);
  return -1;
}
/* Inside a function with a `char *err`: when call does not return ok, return -1 with err
 * set to what and the library's text for the result (text_of). CU: a CUDA runtime call;
 * NC: an NCCL call. */
#define CALL_OR_FAIL(T, call, ok, text_of, what)                                          \
  do {                                                                                    \
    T r_ = (call);                                                                        \
    if (r_ != ok) return fail_text(err, what, text_of(r_));                               \
  } while (0)
#define CU(call, what) CALL_OR_FAIL(cudaError_t, call, cudaSuccess, cudaGetErrorString, what)

static cudaStream_t as_stream(void *s) { return static_cast<cudaStream_t>(s); }

extern "C" int bench_dist_set_device(int device, char *err) {
  CU(cudaSetDevice(device), "cudaSetDevice");
  return 0;
}

extern "C" int bench_dist_device_of_rank(int rank, int *device, char *err) {
  int count = 0;
  CU(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count < 1) {
    snprintf(err, BENCH_DIST_ERR, "no CUDA device");
    return -1;
  }
  *device = rank % count;
  return 0;
}

/* ---- generation and checks -------------------------------------------------------------- */

__device__ __forceinline__ uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_u32_kernel(uint32_t *dst, size_t n, uint64_t seed, uint64_t first) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = (uint32_t)(splitmix(seed ^ (first + i)) >> 32);
}

__global__ void fill_f32_kernel(float *dst, size_t n, uint64_t seed, uint64_t first, float lo,
                                float span) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float u = (float)(splitmix(seed ^ (first + i)) >> 40) * 0x1.0p-24f; /* [0, 1) */
    dst[i] = lo + span * u;
  }
}

__global__ void iota_u32_kernel(uint32_t *dst, size_t n, uint64_t first) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = (uint32_t)(first + i);
}

static unsigned grid_for(size_t n) {
  const size_t blocks = (n + 255) / 256;
  return (unsigned)(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

extern "C" int bench_dist_fill(pp_dtype t, void *dst, size_t n, uint64_t seed, uint64_t first,
                               double lo, double hi, void *stream, char *err) {
  if (n == 0) return 0;
  if (t == PP_U32)
    fill_u32_kernel<<<grid_for(n), 256, 0, as_stream(stream)>>>((uint32_t *)dst, n, seed, first);
  else
    fill_f32_kernel<<<grid_for(n), 256, 0, as_stream(stream)>>>((float *)dst, n, seed, first,
                                                                (float)lo, (float)(hi - lo));
  CU(cudaGetLastError(), "fill kernel");
  return 0;
}

extern "C" int bench_dist_iota_u32(uint32_t *dst, size_t n, uint64_t first, void *stream, char *err) {
  if (n == 0) return 0;
  iota_u32_kernel<<<grid_for(n), 256, 0, as_stream(stream)>>>(dst, n, first);
  CU(cudaGetLastError(), "iota kernel");
  return 0;
}

/* out[0] += descents, out[1] += sum of hash(key) */
__global__ void facts_kernel(const uint32_t *keys, size_t n, unsigned long long *out) {
  unsigned long long desc = 0, fp = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t k = keys[i];
    if (i + 1 < n && k > keys[i + 1]) desc++;
    fp += splitmix(k);
  }
  for (int d = 16; d > 0; d /= 2) {
    desc += __shfl_down_sync(0xffffffffu, desc, d);
    fp += __shfl_down_sync(0xffffffffu, fp, d);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&out[0], desc);
    atomicAdd(&out[1], fp);
  }
}

extern "C" int bench_dist_facts_u32(const uint32_t *keys, size_t n, void *stream,
                                    bench_dist_facts *out, char *err) {
  cudaStream_t s = as_stream(stream);
  memset(out, 0, sizeof *out);
  if (n == 0) return 0;
  unsigned long long *d = nullptr, h[2] = {0, 0};
  CU(cudaMallocAsync(&d, 2 * sizeof(unsigned long long), s), "cudaMallocAsync");
  cudaError_t e = cudaMemsetAsync(d, 0, 2 * sizeof(unsigned long long), s);
  if (e == cudaSuccess) {
    facts_kernel<<<grid_for(n), 256, 0, s>>>(keys, n, d);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&out->first, keys, 4, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&out->last, keys + n - 1, 4, cudaMemcpyDeviceToHost, s);
  cudaError_t f = cudaFreeAsync(d, s);
  if (e == cudaSuccess) e = f;
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return fail_text(err, "checking the sorted keys", cudaGetErrorString(e));
  out->unsorted = h[0];
  out->fingerprint = h[1];
  return 0;
}

__global__ void pairs_check_kernel(const uint32_t *keys, const uint32_t *values, size_t n,
                                   uint64_t seed, unsigned long long *bad) {
  unsigned long long b = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const uint32_t k = keys[i], v = values[i];
    if (k != (uint32_t)(splitmix(seed ^ (uint64_t)v) >> 32)) b++;
    if (i + 1 < n && k == keys[i + 1] && v >= values[i + 1]) b++;
  }
  for (int d = 16; d > 0; d /= 2) b += __shfl_down_sync(0xffffffffu, b, d);
  if (threadIdx.x % 32 == 0 && b) atomicAdd(bad, b);
}

extern "C" int bench_dist_pairs_check_u32(const uint32_t *keys, const uint32_t *values, size_t n,
                                          uint64_t seed, void *stream, uint64_t *bad,
                                          uint32_t *first_value, uint32_t *last_value, char *err) {
  cudaStream_t s = as_stream(stream);
  *bad = 0;
  *first_value = *last_value = 0;
  if (n == 0) return 0;
  unsigned long long *d = nullptr, h = 0;
  CU(cudaMallocAsync(&d, sizeof h, s), "cudaMallocAsync");
  cudaError_t e = cudaMemsetAsync(d, 0, sizeof h, s);
  if (e == cudaSuccess) {
    pairs_check_kernel<<<grid_for(n), 256, 0, s>>>(keys, values, n, seed, d);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(first_value, values, 4, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(last_value, values + n - 1, 4, cudaMemcpyDeviceToHost, s);
  cudaError_t f = cudaFreeAsync(d, s);
  if (e == cudaSuccess) e = f;
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return fail_text(err, "checking the sorted pairs", cudaGetErrorString(e));
  *bad = h;
  return 0;
}

/* ---- the peer --------------------------------------------------------------------------- */

#if defined(PP_HAVE_NCCL)

struct bench_peer_dist {
  ncclComm_t comm;
  cudaStream_t stream;
  int nranks, rank;
  size_t n_max, cap;       /* keys per rank in, keys a rank may receive */
  uint32_t *alt;           /* n_max: the local sort's second buffer */
  uint32_t *recv, *recv_alt; /* cap each */
  uint32_t *samples;       /* SAMPLES * nranks */
  uint32_t *splitters;     /* nranks - 1 */
  unsigned long long *bounds; /* nranks - 1 positions, then nranks * nranks counts */
  void *temp;
  size_t temp_bytes;
  std::vector<uint32_t> h_samples;
  std::vector<unsigned long long> h_counts;
  cudaEvent_t ev[4];       /* the last sort's phases: start, sorted, exchange begun, exchanged */
  cudaEvent_t ev_end;      /* ... and what arrived sorted */
  bool events;
};

#define NC(call, what) CALL_OR_FAIL(ncclResult_t, call, ncclSuccess, ncclGetErrorString, what)

extern "C" int bench_peer_nccl_id(unsigned char id[128], char *err) {
  ncclUniqueId u;
  static_assert(sizeof u == 128, "NCCL ids are 128 bytes");
  NC(ncclGetUniqueId(&u), "ncclGetUniqueId");
  memcpy(id, &u, 128);
  return 0;
}

__global__ void regular_samples_kernel(const uint32_t *sorted, size_t n, uint32_t *samples) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < SAMPLES) samples[i] = n ? sorted[(size_t)(((unsigned __int128)(i + 1) * n) / (SAMPLES + 1))] : 0u;
}

/* bounds[k] = the number of keys <= splitters[k] (an upper bound) */
__global__ void upper_bounds_kernel(const uint32_t *sorted, size_t n, const uint32_t *splitters,
                                    int count, unsigned long long *bounds) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const uint32_t s = splitters[k];
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] <= s) lo = mid + 1;
    else hi = mid;
  }
  bounds[k] = lo;
}

static int cub_sort(bench_peer_dist *p, uint32_t *a, uint32_t *b, size_t n, uint32_t **out, char *err) {
  cub::DoubleBuffer<uint32_t> db(a, b);
  size_t bytes = p->temp_bytes;
  CU(cub::DeviceRadixSort::SortKeys(p->temp, bytes, db, (int64_t)n, 0, 32, p->stream),
     "cub::DeviceRadixSort::SortKeys");
  *out = db.Current();
  return 0;
}

extern "C" int bench_peer_dist_create(bench_peer_dist **peer, const unsigned char id[128],
                                      int nranks, int rank, size_t n_max, void *stream, char *err) {
  *peer = nullptr;
  bench_peer_dist *p = new bench_peer_dist();
  p->stream = as_stream(stream);
  p->nranks = nranks;
  p->rank = rank;
  p->n_max = n_max;
  /* uniform keys leave each rank about n keys; regular sampling bounds a bucket by about
     2n (Shi & Schaeffer), a quarter more is plenty for the uniform input the bench uses */
  p->cap = n_max + n_max / 4 + 4096;
  ncclUniqueId u;
  memcpy(&u, id, 128);
  ncclResult_t r = ncclCommInitRank(&p->comm, nranks, u, rank);
  if (r != ncclSuccess) {
    delete p;
    return fail_text(err, "ncclCommInitRank", ncclGetErrorString(r));
  }
  *peer = p;
  const size_t np = (size_t)nranks;
  CU(cudaMalloc(&p->alt, n_max * 4 + 4), "cudaMalloc (peer)");
  CU(cudaMalloc(&p->recv, p->cap * 4), "cudaMalloc (peer)");
  CU(cudaMalloc(&p->recv_alt, p->cap * 4), "cudaMalloc (peer)");
  CU(cudaMalloc(&p->samples, SAMPLES * np * 4), "cudaMalloc (peer)");
  CU(cudaMalloc(&p->splitters, np * 4), "cudaMalloc (peer)");
  CU(cudaMalloc(&p->bounds, (np + np * np) * 8), "cudaMalloc (peer)");
  cub::DoubleBuffer<uint32_t> db(p->recv, p->recv_alt);
  size_t bytes = 0;
  CU(cub::DeviceRadixSort::SortKeys(nullptr, bytes, db, (int64_t)p->cap, 0, 32, p->stream),
     "cub::DeviceRadixSort (temp size)");
  p->temp_bytes = bytes;
  CU(cudaMalloc(&p->temp, bytes), "cudaMalloc (peer temp)");
  p->h_samples.resize(SAMPLES * np);
  p->h_counts.resize(np + np * np);
  for (cudaEvent_t *e : {&p->ev[0], &p->ev[1], &p->ev[2], &p->ev[3], &p->ev_end})
    CU(cudaEventCreate(e), "cudaEventCreate (peer)");
  p->events = true;
  return 0;
}

extern "C" void bench_peer_dist_destroy(bench_peer_dist *p) {
  if (!p) return;
  peer_cuda_free({p->alt, p->recv, p->recv_alt, p->samples, p->splitters, p->bounds, p->temp});
  if (p->comm) ncclCommDestroy(p->comm);
  if (p->events)
    for (cudaEvent_t e : {p->ev[0], p->ev[1], p->ev[2], p->ev[3], p->ev_end}) cudaEventDestroy(e);
  delete p;
}

extern "C" int bench_peer_dist_phases(bench_peer_dist *p, double ms[3], char *err) {
  float t[3] = {0, 0, 0};
  CU(cudaEventSynchronize(p->ev_end), "cudaEventSynchronize (peer)");
  CU(cudaEventElapsedTime(&t[0], p->ev[0], p->ev[1]), "cudaEventElapsedTime (peer)");
  CU(cudaEventElapsedTime(&t[1], p->ev[2], p->ev[3]), "cudaEventElapsedTime (peer)");
  CU(cudaEventElapsedTime(&t[2], p->ev[3], p->ev_end), "cudaEventElapsedTime (peer)");
  for (int i = 0; i < 3; i++) ms[i] = t[i];
  return 0;
}

extern "C" int bench_peer_dist_sort(bench_peer_dist *p, uint32_t *d_keys, size_t n,
                                    const uint32_t **out, size_t *m, char *err) {
  const int np = p->nranks;
  cudaStream_t s = p->stream;
  if (n > p->n_max) {
    snprintf(err, BENCH_DIST_ERR, "peer: n %zu above its buffers' %zu", n, p->n_max);
    return -1;
  }
  /* 1. local sort */
  uint32_t *sorted = nullptr;
  CU(cudaEventRecord(p->ev[0], s), "cudaEventRecord");
  if (cub_sort(p, d_keys, p->alt, n, &sorted, err)) return -1;
  CU(cudaEventRecord(p->ev[1], s), "cudaEventRecord");
  /* 2. regular samples, allgathered, splitters on the host */
  regular_samples_kernel<<<(SAMPLES + 255) / 256, 256, 0, s>>>(sorted, n, p->samples + (size_t)p->rank * SAMPLES);
  CU(cudaGetLastError(), "regular_samples_kernel");
  NC(ncclAllGather(p->samples + (size_t)p->rank * SAMPLES, p->samples, SAMPLES, ncclUint32, p->comm, s),
     "ncclAllGather (samples)");
  CU(cudaMemcpyAsync(p->h_samples.data(), p->samples, p->h_samples.size() * 4, cudaMemcpyDeviceToHost, s),
     "cudaMemcpyAsync (samples)");
  CU(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  std::sort(p->h_samples.begin(), p->h_samples.end());
  std::vector<uint32_t> split((size_t)np);
  for (int k = 1; k < np; k++) split[(size_t)k - 1] = p->h_samples[(size_t)k * SAMPLES];
  if (np > 1) {
    CU(cudaMemcpyAsync(p->splitters, split.data(), (size_t)(np - 1) * 4, cudaMemcpyHostToDevice, s),
       "cudaMemcpyAsync (splitters)");
    /* 3. bucket boundaries */
    upper_bounds_kernel<<<1, 1024, 0, s>>>(sorted, n, p->splitters, np - 1, p->bounds);
    CU(cudaGetLastError(), "upper_bounds_kernel");
  }
  /* 4. send counts of every rank: this rank's at bounds + np + rank * np */
  unsigned long long *h = p->h_counts.data();
  CU(cudaMemcpyAsync(h, p->bounds, (size_t)(np - 1) * 8, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (bounds)");
  CU(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  std::vector<unsigned long long> mine((size_t)np);
  for (int q = 0; q < np; q++) {
    const unsigned long long a = q == 0 ? 0 : h[q - 1], b = q == np - 1 ? n : h[q];
    mine[(size_t)q] = b - a;
  }
  unsigned long long *d_mine = p->bounds + np + (size_t)p->rank * np;
  CU(cudaMemcpyAsync(d_mine, mine.data(), (size_t)np * 8, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync (counts)");
  NC(ncclAllGather(d_mine, p->bounds + np, (size_t)np, ncclUint64, p->comm, s), "ncclAllGather (counts)");
  CU(cudaMemcpyAsync(h + np, p->bounds + np, (size_t)np * np * 8, cudaMemcpyDeviceToHost, s),
     "cudaMemcpyAsync (counts)");
  CU(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  /* every rank checks every rank's total, so all of them stop before the exchange */
  size_t total = 0;
  for (int dst = 0; dst < np; dst++) {
    size_t t = 0;
    for (int q = 0; q < np; q++) t += h[np + (size_t)q * np + dst];
    if (t > p->cap) {
      snprintf(err, BENCH_DIST_ERR, "peer: rank %d would receive %zu keys, above its buffer's %zu",
               dst, t, p->cap);
      return -1;
    }
    if (dst == p->rank) total = t;
  }
  /* 5. exchange */
  CU(cudaEventRecord(p->ev[2], s), "cudaEventRecord");
  NC(ncclGroupStart(), "ncclGroupStart");
  size_t soff = 0, roff = 0;
  for (int q = 0; q < np; q++) {
    const size_t sc = mine[(size_t)q], rc = h[np + (size_t)q * np + p->rank];
    if (sc) NC(ncclSend(sorted + soff, sc, ncclUint32, q, p->comm, s), "ncclSend");
    if (rc) NC(ncclRecv(p->recv + roff, rc, ncclUint32, q, p->comm, s), "ncclRecv");
    soff += sc;
    roff += rc;
  }
  NC(ncclGroupEnd(), "ncclGroupEnd");
  CU(cudaEventRecord(p->ev[3], s), "cudaEventRecord");
  /* 6. sort what arrived */
  uint32_t *res = p->recv;
  if (total > 1 && cub_sort(p, p->recv, p->recv_alt, total, &res, err)) return -1;
  CU(cudaEventRecord(p->ev_end, s), "cudaEventRecord");
  *out = res;
  *m = total;
  return 0;
}

#else /* no NCCL in this build */

struct bench_peer_dist {
  int unused;
};

static int no_nccl(char *err) {
  snprintf(err, BENCH_DIST_ERR, "this build has no NCCL");
  return -1;
}
extern "C" int bench_peer_nccl_id(unsigned char id[128], char *err) {
  (void)id;
  return no_nccl(err);
}
extern "C" int bench_peer_dist_create(bench_peer_dist **peer, const unsigned char id[128], int nranks,
                                      int rank, size_t n_max, void *stream, char *err) {
  (void)id, (void)nranks, (void)rank, (void)n_max, (void)stream;
  *peer = nullptr;
  return no_nccl(err);
}
extern "C" void bench_peer_dist_destroy(bench_peer_dist *peer) { (void)peer; }
extern "C" int bench_peer_dist_phases(bench_peer_dist *peer, double ms[3], char *err) {
  (void)peer, (void)ms;
  return no_nccl(err);
}
extern "C" int bench_peer_dist_sort(bench_peer_dist *peer, uint32_t *d_keys, size_t n,
                                    const uint32_t **out, size_t *m, char *err) {
  (void)peer, (void)d_keys, (void)n, (void)out, (void)m;
  return no_nccl(err);
}

#endif
