/* staging_probe.cu — how fast parprim moves pageable host data, against the driver's own
 * pageable cudaMemcpy (the path parprim used before it staged through pinned buffers).
 *
 *   nvcc -O2 -Iinclude scripts/staging_probe.cu build/libparprim.a -lgomp -o /tmp/probe
 *   /tmp/probe [MiB]
 *
 * Prints GB/s of: cudaMemcpy pageable H2D and D2H, pp_copy H2D and D2H, and pp_reduce f32
 * SUM on a host array end to end (the copy plus the kernel). Median of 7 runs. */
#include "parprim.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename F>
static double median_ms(F f) {
  double t[7];
  f(); /* warm-up: first-touch, pinned buffers, kernel load */
  for (double &x : t) {
    double a = now_ms();
    f();
    x = now_ms() - a;
  }
  std::sort(t, t + 7);
  return t[3];
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
  size_t bytes = mib << 20, n = bytes / sizeof(float);
  float *host = (float *)malloc(bytes), *back = (float *)malloc(bytes);
  if (!host || !back) return 1;
  for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000) * 0.001f;
  void *dev = NULL;
  if (cudaMalloc(&dev, bytes) != cudaSuccess) return 1;
  pp_context *ctx = NULL;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) return 77;

  double gb = bytes / 1e9;
  double t1 = median_ms([&] { cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice); });
  double t2 = median_ms([&] { cudaMemcpy(back, dev, bytes, cudaMemcpyDeviceToHost); });
  double t3 = median_ms([&] {
    pp_copy(ctx, dev, host, bytes);
    pp_synchronize(ctx);
  });
  double t4 = median_ms([&] { pp_copy(ctx, back, dev, bytes); });
  float sum = 0;
  double t5 = median_ms([&] { pp_reduce(ctx, PP_SUM, PP_F32, host, n, &sum); });
  printf("bytes %zu MiB\n", mib);
  printf("cudaMemcpy pageable H2D  %8.2f ms  %6.1f GB/s\n", t1, gb / t1 * 1e3);
  printf("cudaMemcpy pageable D2H  %8.2f ms  %6.1f GB/s\n", t2, gb / t2 * 1e3);
  printf("pp_copy H2D (pinned x2)  %8.2f ms  %6.1f GB/s  ratio %.2f\n", t3, gb / t3 * 1e3, t1 / t3);
  printf("pp_copy D2H (pinned x2)  %8.2f ms  %6.1f GB/s  ratio %.2f\n", t4, gb / t4 * 1e3, t2 / t4);
  printf("pp_reduce f32 host input %8.2f ms  %6.1f GB/s  (sum %g)\n", t5, gb / t5 * 1e3, sum);
  int ok = memcmp(host, back, bytes) == 0;
  printf("round trip %s\n", ok ? "identical" : "DIFFERS");
  pp_destroy(ctx);
  cudaFree(dev);
  free(host);
  free(back);
  return ok ? 0 : 1;
}
