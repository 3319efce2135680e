/* host_path.c — host time of one call's pieces on the GPU machine (probe, not shipped).
 * Each figure: mean host time of a call over a loop, the device kept fed (sync every 256).
 * Build against a CUDA build of the library, e.g.
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -I/usr/local/cuda/include \
 *      scripts/probes/host_path.c -Lbuild-gpu -lparprim -L/usr/local/cuda/lib64 -lcudart \
 *      -L/usr/local/cuda/lib64/stubs -lcuda -o host_path */
#include <cuda.h>
#include <cuda_runtime.h>
#include <parprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define LOOP(name, body)                                                        \
  do {                                                                          \
    double best = 1e30;                                                         \
    for (int round = 0; round < 5; round++) {                                   \
      double tot = 0;                                                           \
      for (int i = 0; i < 4096; i++) {                                          \
        double t0 = now_us();                                                   \
        body;                                                                   \
        tot += now_us() - t0;                                                   \
        if ((i & 255) == 255) cudaDeviceSynchronize();                          \
      }                                                                         \
      if (tot / 4096 < best) best = tot / 4096;                                 \
    }                                                                           \
    printf("%-48s %8.3f us\n", name, best);                                     \
  } while (0)

int main(void) {
  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) { fprintf(stderr, "no ctx\n"); return 1; }
  cudaStream_t s;
  cudaStreamCreate(&s);
  pp_set_stream(ctx, s);
  float *d = NULL, *o = NULL;
  uint64_t *ix = NULL;
  size_t n = 1 << 20;
  pp_malloc(ctx, (void **)&d, n * 4);
  pp_malloc(ctx, (void **)&o, 8);
  pp_malloc(ctx, (void **)&ix, 8);
  cudaMemset(d, 0, n * 4);
  cudaDeviceSynchronize();
  float *h = malloc(64);
  struct cudaPointerAttributes a;
  CUmemorytype mt;
  int dev;
  LOOP("cudaSetDevice(0)", cudaSetDevice(0));
  LOOP("cudaGetDevice", cudaGetDevice(&dev));
  LOOP("cudaGetLastError", cudaGetLastError());
  LOOP("cudaPointerGetAttributes(device)", cudaPointerGetAttributes(&a, d));
  LOOP("cudaPointerGetAttributes(host malloc)", cudaPointerGetAttributes(&a, h));
  LOOP("cuPointerGetAttribute(MEMORY_TYPE, device)",
       cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)d));
  LOOP("cuPointerGetAttribute(MEMORY_TYPE, host)",
       (cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)h), cudaGetLastError()));
  {
    CUpointer_attribute at[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    int ord = 0;
    void *vals[2] = {&mt, &ord};
    LOOP("cuPointerGetAttributes(type+ordinal, device)", cuPointerGetAttributes(2, at, vals, (CUdeviceptr)d));
  }
  for (size_t m = 1024; m <= n; m *= 1024) {
    char name[64];
    snprintf(name, sizeof name, "pp_reduce sum f32 n=%zu", m);
    LOOP(name, pp_reduce(ctx, PP_SUM, PP_F32, d, m, o));
    snprintf(name, sizeof name, "pp_argreduce min f32 n=%zu", m);
    LOOP(name, pp_argreduce(ctx, PP_MIN, PP_F32, d, m, o, ix));
  }
  /* device time per call, queued back to back */
  for (size_t m = 1024; m <= n; m *= 1024) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int k = 0; k < 2; k++) {
      cudaEventRecord(e0, s);
      for (int i = 0; i < 1000; i++)
        if (k) pp_argreduce(ctx, PP_MIN, PP_F32, d, m, o, ix); else pp_reduce(ctx, PP_SUM, PP_F32, d, m, o);
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      printf("%s n=%zu: %.3f us per call, 1000 queued\n", k ? "argreduce" : "reduce", m, ms);
    }
  }
  pp_destroy(ctx);
  return 0;
}
