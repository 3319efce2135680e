/* scan_probe.cu — a quick check-and-time of pp_scan / pp_select / pp_partition against CUB
 * and a device memcpy in one process, for tuning the kernels before the full bench.
 *
 *   nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude scripts/scan_probe.cu build/libparprim.a \
 *        -Xcompiler -fopenmp -o /tmp/scan_probe && /tmp/scan_probe [log2n ...]
 */
#include "parprim.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  std::vector<int> logs;
  for (int i = 1; i < argc; i++) logs.push_back(atoi(argv[i]));
  if (logs.empty()) logs = {20, 24, 28};
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) return 77;
  pp_set_stream(ctx, 0);
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
    uint32_t *din, *dout;
    float *fin, *fout;
    uint64_t *dcount;
    CK(cudaMalloc(&din, n * 4)); CK(cudaMalloc(&dout, n * 4));
    CK(cudaMalloc(&fin, n * 4)); CK(cudaMalloc(&fout, n * 4));
    CK(cudaMalloc(&dcount, 8));
    CK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(fin, hf.data(), n * 4, cudaMemcpyHostToDevice));
    int *cub_count;
    CK(cudaMalloc(&cub_count, 8));
    size_t tb = 0, tb2 = 0, tb3 = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, tb, din, dout, (int64_t)n);
    cub::DeviceSelect::If(nullptr, tb2, fin, fout, cub_count, (int64_t)n, positive());
    cub::DevicePartition::If(nullptr, tb3, fin, fout, cub_count, (int64_t)n, positive());
    void *tmp;
    CK(cudaMalloc(&tmp, std::max(tb, std::max(tb2, tb3))));

    /* correctness */
    pp_status st = pp_scan(ctx, PP_SUM, PP_U32, din, dout, n, false);
    std::vector<uint32_t> g(n);
    CK(cudaMemcpy(g.data(), dout, n * 4, cudaMemcpyDeviceToHost));
    uint32_t acc = 0;
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
      if (g[i] != acc && wrong++ < 3) printf("  scan[%zu] = %u want %u\n", i, g[i], acc);
      acc += h[i];
    }
    uint64_t cnt = 0;
    pp_status st2 = pp_select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
    CK(cudaMemcpy(&cnt, dcount, 8, cudaMemcpyDeviceToHost));
    std::vector<float> gf(n);
    CK(cudaMemcpy(gf.data(), fout, n * 4, cudaMemcpyDeviceToHost));
    size_t k = 0, wrong2 = 0;
    for (size_t i = 0; i < n; i++)
      if (hf[i] > 0) { if (k >= cnt || gf[k] != hf[i]) wrong2++; k++; }
    if (k != cnt) wrong2++;
    pp_status st3 = pp_partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount);
    uint64_t ct = 0;
    CK(cudaMemcpy(&ct, dcount, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gf.data(), fout, n * 4, cudaMemcpyDeviceToHost));
    size_t t_i = 0, f_i = ct, wrong3 = 0;
    for (size_t i = 0; i < n; i++) {
      if (hf[i] > 0) { if (gf[t_i++] != hf[i]) wrong3++; }
      else if (gf[f_i++] != hf[i]) wrong3++;
    }
    if (t_i != ct) wrong3++;
    printf("n=2^%d scan %s wrong %zu | select %s count %llu wrong %zu | partition %s wrong %zu\n", lg,
           pp_status_string(st), wrong, pp_status_string(st2), (unsigned long long)cnt, wrong2,
           pp_status_string(st3), wrong3);
    bad += wrong + wrong2 + wrong3 + (st != PP_OK) + (st2 != PP_OK) + (st3 != PP_OK);

    float t_copy = time_ms([&] { cudaMemcpyAsync(dout, din, n * 4, cudaMemcpyDeviceToDevice); });
    float t_cub = time_ms([&] { cub::DeviceScan::ExclusiveSum(tmp, tb, din, dout, (int64_t)n); });
    float t_pp = time_ms([&] { pp_scan(ctx, PP_SUM, PP_U32, din, dout, n, false); });
    float t_cubs = time_ms([&] { cub::DeviceSelect::If(tmp, tb2, fin, fout, cub_count, (int64_t)n, positive()); });
    float t_pps = time_ms([&] { pp_select(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
    float t_cubp = time_ms([&] { cub::DevicePartition::If(tmp, tb3, fin, fout, cub_count, (int64_t)n, positive()); });
    float t_ppp = time_ms([&] { pp_partition(ctx, PP_F32, fin, n, PP_GT, &zero, fout, dcount); });
    printf("  memcpy %.4f ms | scan u32 excl: cub %.4f pp %.4f ratio %.3f (%.0f GB/s) | select f32: cub %.4f pp %.4f ratio %.3f | partition: cub %.4f pp %.4f ratio %.3f\n",
           t_copy, t_cub, t_pp, t_cub / t_pp, 8.0 * n / t_pp / 1e6, t_cubs, t_pps, t_cubs / t_pps,
           t_cubp, t_ppp, t_cubp / t_ppp);
    cudaFree(din); cudaFree(dout); cudaFree(fin); cudaFree(fout); cudaFree(dcount);
    cudaFree(cub_count); cudaFree(tmp);
  }
  pp_destroy(ctx);
  printf(bad ? "PROBE FAILED\n" : "probe ok\n");
  return bad ? 1 : 0;
}
