// launch_cost.cu — host time of a bare kernel launch on this machine (probe, not shipped)
//   nvcc -O3 -arch=sm_90 -o launch_cost scripts/probes/launch_cost.cu
#include <cstdio>
#include <ctime>
#include <cuda_runtime.h>
__global__ void empty_kernel(const float *in, size_t n, float *out, void *a, unsigned *b) {
  if (threadIdx.x == 0 && blockIdx.x == 1u << 30) out[0] = in[n - 1];
}
static double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
int main() {
  cudaStream_t s;
  cudaStreamCreate(&s);
  float *d;
  cudaMalloc(&d, 1 << 20);
  for (int grid : {1, 128, 528}) {
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
      double tot = 0;
      for (int i = 0; i < 4096; i++) {
        double t0 = now_us();
        empty_kernel<<<grid, 256, 0, s>>>(d, 1024, d, nullptr, nullptr);
        tot += now_us() - t0;
        if ((i & 255) == 255) cudaStreamSynchronize(s);
      }
      if (tot / 4096 < best) best = tot / 4096;
    }
    printf("empty kernel <<<%d, 256>>> launch: %.3f us host\n", grid, best);
  }
  double best = 1e30;
  for (int round = 0; round < 5; round++) {
    double t0 = now_us();
    for (int i = 0; i < 4096; i++) empty_kernel<<<528, 256, 0, s>>>(d, 1024, d, nullptr, nullptr);
    cudaStreamSynchronize(s);
    double t = (now_us() - t0) / 4096;
    if (t < best) best = t;
  }
  printf("empty kernel <<<528, 256>>> back to back: %.3f us per launch (device-bound if above the host time)\n", best);
  return 0;
}
