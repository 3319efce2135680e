/* scan_probe.cu — check-and-time of pp_scan / pp_select / pp_partition against CUB and a
 * device memcpy in one process, for tuning the kernels before the full bench.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude scripts/scan_probe.cu -L<build> -lparprim \
 *        -Xlinker -rpath=<build> -o scan_probe
 *   scan_probe time [LOG2N ...]   default 24 28: u32 exclusive scan, f32 select and
 *                                 partition of x > 0, each checked against CUB on the
 *                                 device, then timed; memcpy and pp_reduce as the limits
 *   scan_probe small [race]       a few sizes around tile boundaries against a host
 *                                 reference, for compute-sanitizer (race: fewer cases)
 * Exit status 1 on any wrong result.
 */
#include "parprim.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__);                         \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

struct positive {
  __device__ bool operator()(float x) const { return x > 0.0f; }
};

/* how many i in [0, n) have got[i] != want[j(i)], j(i) = i below split, else the mirror
 * of the tail (CUB's partition writes its rejected part reversed) */
template <typename T>
__global__ void mismatches(const T *got, const T *want, size_t n, size_t split,
                           unsigned long long *bad) {
  static_assert(sizeof(T) == 4, "compares 4-byte elements");
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i < split ? i : n - 1 - (i - split);
    mine += *reinterpret_cast<const uint32_t *>(&got[i]) !=
            *reinterpret_cast<const uint32_t *>(&want[j]); /* 4-byte elements: bits */
  }
  if (mine) atomicAdd(bad, mine);
}

template <typename T>
static unsigned long long count_bad(const T *got, const T *want, size_t n, size_t split) {
  static unsigned long long *d = nullptr;
  if (!d) CK(cudaMalloc(&d, sizeof *d));
  CK(cudaMemset(d, 0, sizeof *d));
  mismatches<<<1024, 256>>>(got, want, n, split, d);
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

template <typename F>
static float time_ms(F f, int reps = 30) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps + 3; i++) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

static int run_time(pp_context *ctx, const std::vector<int> &logs) {
  int bad = 0;
  const float zero = 0.0f;
  for (int lg : logs) {
    size_t n = (size_t)1 << lg;
    std::vector<uint32_t> h(n);
    std::vector<float> hf(n);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      h[i] = (uint32_t)(s >> 40);
      hf[i] = (float)((int64_t)(s >> 11) - (int64_t)(1ull << 52)) / (float)(1ull << 52);
    }
    uint32_t *din, *dout, *dref;
    float *fin, *fout, *fref;
    uint64_t *dcount;
    int64_t *cub_count;
    CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4)); CK(cudaMalloc(&dref, n * 4));
    CK(cudaMalloc(&fin, n * 4)); CK(cudaMalloc(&fout, n * 4)); CK(cudaMalloc(&fref, n * 4));
    CK(cudaMalloc(&dcount, 8)); CK(cudaMalloc(&cub_count, 8));
    CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(fin, hf.data(), n * 4, cudaMemcpyHostToDevice));
    size_t tb = 0, tb2 = 0, tb3 = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, tb, din, dout, (int64_t)n);
    cub::DeviceSelect::If(nullptr, tb2, fin, fout, cub_count, (int64_t)n, positive());
    cub::DevicePartition::If(nullptr, tb3, fin, fout, cub_count, (int64_t)n, positive());
    void *tmp;
    CK(cudaMalloc(&tmp, std::max(tb, std::max(tb2, tb3))));

    float t_copy = time_ms([&] { cudaMemcpyAsync(dout, din, n * 4, cudaMemcpyDeviceToDevice); });
    printf("2^%d memcpy %.4f ms (%.0f GB/s)\n", lg, t_copy, 8.0 * n / t_copy / 1e6);

    /* scan */
    CK(cub::DeviceScan::ExclusiveSum(tmp, tb, din, dref, (int64_t)n));
    float t_cub = time_ms([&] { cub::DeviceScan::ExclusiveSum(tmp, tb, din, dout, (int64_t)n); });
    {
      CK(cudaMemset(dout, 0xAB, n * 4));
      pp_status st = pp_scan(ctx, PP_SUM, PP_U32, din, dout, n, false);
      CK(cudaDeviceSynchronize());
      unsigned long long w = count_bad(dout, dref, n, n);
      float t = time_ms([&] { pp_scan(ctx, PP_SUM, PP_U32, din, dout, n, false); });
      printf("2^%d scan-ex-u32: %.4f ms  cub %.4f  ratio %.3f  %.0f GB/s  %s wrong %llu\n",
             lg, t, t_cub, t_cub / t, 8.0 * n / t / 1e6, pp_status_string(st), w);
      bad += st != PP_OK || w != 0;
    }

    /* select and partition */
    CK(cub::DeviceSelect::If(tmp, tb2, fin, fref, cub_count, (int64_t)n, positive()));
    int64_t kept = 0;
    CK(cudaMemcpy(&kept, cub_count, 8, cudaMemcpyDeviceToHost));
    float t_cubs = time_ms([&] { cub::DeviceSelect::If(tmp, tb2, fin, fout, cub_count, (int64_t)n, positive()); });
    {
      CK(cudaMemset(fout, 0xAB, n * 4));
      pp_status st = pp_select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
      uint64_t cnt = 0;
      CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
      unsigned long long w = count_bad(fout, fref, (size_t)kept, (size_t)kept) + (cnt != (uint64_t)kept);
      float t = time_ms([&] { pp_select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
      printf("2^%d select-f32: %.4f ms  cub %.4f  ratio %.3f  %s wrong %llu\n", lg, t, t_cubs, t_cubs / t, pp_status_string(st), w);
      bad += st != PP_OK || w != 0;
    }
    CK(cub::DevicePartition::If(tmp, tb3, fin, fref, cub_count, (int64_t)n, positive()));
    float t_cubp = time_ms([&] { cub::DevicePartition::If(tmp, tb3, fin, fout, cub_count, (int64_t)n, positive()); });
    {
      CK(cudaMemset(fout, 0xAB, n * 4));
      pp_status st = pp_partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
      uint64_t cnt = 0;
      CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
      unsigned long long w = count_bad(fout, fref, n, (size_t)kept) + (cnt != (uint64_t)kept);
      float t = time_ms([&] { pp_partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
      printf("2^%d partition-f32: %.4f ms  cub %.4f  ratio %.3f  %s wrong %llu\n", lg, t, t_cubp, t_cubp / t, pp_status_string(st), w);
      bad += st != PP_OK || w != 0;
    }
    /* the counting pass alone, against a read of the input (pp_reduce) */
    float t_red = time_ms([&] { pp_reduce(ctx, PP_SUM, PP_F32, fin, n, fout); });
    printf("2^%d reduce-f32 (read once) %.4f ms (%.0f GB/s)\n", lg, t_red, 4.0 * n / t_red / 1e6);
    cudaFree(din); cudaFree(dout); cudaFree(dref); cudaFree(fin); cudaFree(fout); cudaFree(fref);
    cudaFree(dcount); cudaFree(cub_count); cudaFree(tmp);
  }
  return bad;
}

/* Host references of one dtype: exclusive scan out of place, inclusive scan in place,
 * select and partition of x > threshold; in and out at element offset `off`. Float data
 * are small integers, so every order of summation is exact. */
template <typename T>
static int small_case(pp_context *ctx, pp_dtype t, size_t n, int off) {
  std::vector<T> h(n), got(n + 1), want(n);
  uint64_t s = 0x9e3779b97f4a7c15ull ^ (n * 31 + off);
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    if (std::is_floating_point<T>::value) h[i] = (T)((int)(s % 201) - 100);
    else h[i] = (T)(s >> 8);
  }
  T thr = (T)0;
  if constexpr (!std::is_floating_point<T>::value) thr = (T)((T)~(T)0 / 2);
  T *bin, *bout;
  uint64_t *dc;
  CK(cudaMalloc(&bin, (n + 1) * sizeof(T))); CK(cudaMalloc(&bout, (n + 1) * sizeof(T)));
  CK(cudaMalloc(&dc, 8));
  T *din = bin + off, *dout = bout + off;
  int bad = 0;
  for (int incl = 0; incl < 2; incl++) {
    CK(cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    T *o = incl ? din : dout; /* inclusive: in place */
    pp_status st = pp_scan(ctx, PP_SUM, t, din, o, n, incl != 0);
    CK(cudaMemcpy(got.data(), o, n * sizeof(T), cudaMemcpyDeviceToHost));
    T acc = 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      T next = (T)(acc + h[i]);
      w += got[i] != (incl ? next : acc);
      acc = next;
    }
    if (st != PP_OK || w) printf("small %s n=%zu off=%d scan %s: %s wrong %zu\n", pp_dtype_string(t), n, off,
                                 incl ? "incl" : "excl", pp_status_string(st), w);
    bad += st != PP_OK || w != 0;
  }
  CK(cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (h[i] > thr) want[k++] = h[i];
  const size_t kept = k;
  for (size_t i = 0; i < n; i++)
    if (!(h[i] > thr)) want[k++] = h[i];
  for (int part = 0; part < 2; part++) {
    CK(cudaMemset(bout, 0xAB, (n + 1) * sizeof(T)));
    pp_status st = part ? pp_partition(ctx, t, din, n, PP_GT, &thr, dout, dc)
                        : pp_select(ctx, t, din, n, PP_GT, &thr, dout, dc);
    uint64_t cnt = 0;
    CK(cudaMemcpy(&cnt, dc, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), dout, (n + (off ? 0 : 1)) * sizeof(T), cudaMemcpyDeviceToHost));
    const size_t m = part ? n : kept;
    size_t w = cnt != kept;
    for (size_t i = 0; i < m; i++) w += memcmp(&got[i], &want[i], sizeof(T)) != 0;
    if (!off) { /* nothing written past the output */
      T sent;
      memset(&sent, 0xAB, sizeof sent);
      w += memcmp(&got[m], &sent, sizeof(T)) != 0 && m == n;
    }
    if (st != PP_OK || w) printf("small %s n=%zu off=%d %s: %s count %llu want %zu wrong %zu\n",
                                 pp_dtype_string(t), n, off, part ? "partition" : "select",
                                 pp_status_string(st), (unsigned long long)cnt, kept, w);
    bad += st != PP_OK || w != 0;
  }
  cudaFree(bin); cudaFree(bout); cudaFree(dc);
  return bad;
}

/* Sizes around the tile boundaries (scan: 8192 u32, select: 4096 f32 elements per tile)
 * and (u32, f32) a few million elements. */
static int run_small(pp_context *ctx, bool race) {
  static const size_t sizes[] = {1, 31, 4097, 8193, 3 * 8192 + 5, 70001};
  int bad = 0, cases = 0;
  for (size_t n : sizes)
    for (int off = 0; off < 2; off++) {
      if (race && (n < 8193 || off)) continue; /* racecheck is slow: fewer cases */
      bad += small_case<uint8_t>(ctx, PP_U8, n, off);
      bad += small_case<uint32_t>(ctx, PP_U32, n, off);
      bad += small_case<float>(ctx, PP_F32, n, off);
      bad += small_case<uint64_t>(ctx, PP_U64, n, off);
      bad += small_case<double>(ctx, PP_F64, n, off);
      cases += 5;
    }
  bad += small_case<uint32_t>(ctx, PP_U32, (size_t)4 << 20, 0);
  bad += small_case<float>(ctx, PP_F32, ((size_t)4 << 20) + 7, 0);
  cases += 2;
  printf("small: %d cases (4 calls each), %d failed\n", cases, bad);
  return bad;
}

int main(int argc, char **argv) {
  const bool small = argc > 1 && strcmp(argv[1], "small") == 0;
  const bool race = small && argc > 2 && strcmp(argv[2], "race") == 0;
  std::vector<int> logs;
  for (int i = 2; i < argc && !small; i++) logs.push_back(atoi(argv[i]));
  if (logs.empty()) logs = {24, 28};
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) return 77;
  pp_set_stream(ctx, 0);
  int bad = small ? run_small(ctx, race) : run_time(ctx, logs);
  pp_destroy(ctx);
  printf(bad ? "PROBE FAILED\n" : "probe ok\n");
  return bad ? 1 : 0;
}
