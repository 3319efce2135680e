/*
 * ladder/histogram.cu — the histogram ladder: 256-bin histograms of 8-bit data, from a
 * serial CPU loop through the two classic GPU versions to the production kernel and CUB.
 *
 *   step 1   CPU reference: one loop, one increment per byte
 *   step 2   global atomics: one atomicAdd per byte on 256 counters in global memory;
 *            every block fights over the same 256 addresses in L2
 *   step 3   shared-memory privatisation (Learn CUDA Programming, Han and Sharma, ch. 7):
 *            each block counts into its own 256 counters in shared memory and adds them
 *            to the global ones once at the end; the atomics now stay inside the SM
 *   step 4   step 3 with 16-byte loads (16 bytes per thread per load instead of one)
 *   step 5   production: pp_histogram_image (1 channel), which adds per-lane copies of the
 *            counters and run-length counting (a run of equal bytes is one atomic)
 *   step 6   cub::DeviceHistogram::HistogramEven (257 levels over [0, 256))
 *
 * Each step runs on uniform random bytes and on an all-equal input (every byte 77), the
 * case that serialises atomics on one counter: steps 2-4 slow down by a large factor
 * there, step 5 does not. Every result is checked exactly against step 1.
 *
 * Run through the CLI:  parprim ladder histogram [--n N] [--reps R] [--check] [--csv]
 * --check runs small sizes (odd ones included) and only validates; exit status 0 when all
 * steps agree with the reference, 1 otherwise, 2 on bad usage, 77 without a GPU.
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cub/device/device_histogram.cuh>
#include <cuda_runtime.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LADDER_THREADS 256
#define LADDER_BINS 256

static char g_fatal[512];

/* ---- step 2: global atomics --------------------------------------------------------- */

static __global__ void hist_global_atomics(const uint8_t *in, size_t n, unsigned *counts) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(counts + in[i], 1u);
}

/* ---- step 3: shared-memory privatisation (Learn CUDA Programming, ch. 7) ------------- */

static __global__ void hist_shared_atomics(const uint8_t *in, size_t n, unsigned *counts) {
  __shared__ unsigned sh[LADDER_BINS];
  for (int b = threadIdx.x; b < LADDER_BINS; b += blockDim.x) sh[b] = 0;
  __syncthreads();
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(sh + in[i], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < LADDER_BINS; b += blockDim.x)
    if (sh[b]) atomicAdd(counts + b, sh[b]);
}

/* ---- step 4: step 3 with 16-byte loads ---------------------------------------------- */

static __global__ void hist_shared_vec16(const uint8_t *in, size_t n, unsigned *counts) {
  __shared__ unsigned sh[LADDER_BINS];
  for (int b = threadIdx.x; b < LADDER_BINS; b += blockDim.x) sh[b] = 0;
  __syncthreads();
  size_t stride = (size_t)gridDim.x * blockDim.x, tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint4 *v = reinterpret_cast<const uint4 *>(in); /* cudaMalloc: 256-byte aligned */
  size_t nv = n / 16;
  for (size_t i = tid; i < nv; i += stride) {
    union {
      uint4 u;
      uint8_t b[16];
    } x;
    x.u = v[i];
#pragma unroll
    for (int k = 0; k < 16; k++) atomicAdd(sh + x.b[k], 1u);
  }
  for (size_t i = nv * 16 + tid; i < n; i += stride) atomicAdd(sh + in[i], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < LADDER_BINS; b += blockDim.x)
    if (sh[b]) atomicAdd(counts + b, sh[b]);
}

/* ---- the steps ---------------------------------------------------------------------- */

typedef struct ladder_env {
  const uint8_t *d_in;
  size_t n;
  unsigned *d_u32;     /* steps 2-4 */
  uint64_t *d_u64;     /* step 5 */
  int *d_i32;          /* step 6 */
  void *cub_temp;
  size_t cub_temp_bytes;
  pp_context *ctx;
  cudaStream_t stream;
  unsigned grid;
} ladder_env;

typedef bool (*step_fn)(ladder_env *e);

/* Steps 2-4: zero the u32 bins, then one launch of the step's kernel over the input. */
typedef void (*u32_hist_kernel)(const uint8_t *in, size_t n, unsigned *counts);
static bool run_u32_kernel(ladder_env *e, u32_hist_kernel kernel) {
  LADDER_CUDA_TRY(cudaMemsetAsync(e->d_u32, 0, LADDER_BINS * 4, e->stream));
  kernel<<<e->grid, LADDER_THREADS, 0, e->stream>>>(e->d_in, e->n, e->d_u32);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

static bool step_global(ladder_env *e) { return run_u32_kernel(e, hist_global_atomics); }
static bool step_shared(ladder_env *e) { return run_u32_kernel(e, hist_shared_atomics); }
static bool step_vec16(ladder_env *e) { return run_u32_kernel(e, hist_shared_vec16); }

static bool step_production(ladder_env *e) {
  pp_status s = pp_histogram_image(e->ctx, e->d_in, e->n, e->n ? 1 : 0, e->n, 1, e->d_u64);
  if (s != PP_OK) {
    snprintf(g_fatal, sizeof g_fatal, "pp_histogram_image: %s: %s", pp_status_string(s),
             pp_last_error(e->ctx));
    return false;
  }
  return true;
}

static bool step_cub(ladder_env *e) {
  size_t bytes = e->cub_temp_bytes;
  LADDER_CUDA_TRY(cub::DeviceHistogram::HistogramEven(e->cub_temp, bytes, e->d_in, e->d_i32,
                                               LADDER_BINS + 1, 0, LADDER_BINS, (int)e->n,
                                               e->stream));
  return true;
}

typedef struct ladder_step {
  const char *id, *name;
  step_fn run;
  int width; /* counters: 4 (u32/int), 8 (u64) */
} ladder_step;

static const ladder_step kSteps[] = {
    {"2", "global atomics", step_global, 4},
    {"3", "shared-memory privatisation (book)", step_shared, 4},
    {"4", "privatised, 16-byte loads", step_vec16, 4},
    {"5", "production pp_histogram_image", step_production, 8},
    {"6", "CUB DeviceHistogram::HistogramEven", step_cub, 4},
};
#define N_STEPS (sizeof kSteps / sizeof kSteps[0])

/* Fetches a step's counts as u64 and compares them with the reference. */
static bool step_check(const ladder_env *e, const ladder_step *s, const uint64_t *want,
                       bool *pass) {
  uint64_t got[LADDER_BINS];
  if (s->width == 8) {
    LADDER_CUDA_TRY(cudaMemcpyAsync(got, e->d_u64, sizeof got, cudaMemcpyDeviceToHost, e->stream));
    LADDER_CUDA_TRY(cudaStreamSynchronize(e->stream));
  } else {
    uint32_t g32[LADDER_BINS];
    const void *src = s->run == step_cub ? (const void *)e->d_i32 : (const void *)e->d_u32;
    LADDER_CUDA_TRY(cudaMemcpyAsync(g32, src, sizeof g32, cudaMemcpyDeviceToHost, e->stream));
    LADDER_CUDA_TRY(cudaStreamSynchronize(e->stream));
    for (int b = 0; b < LADDER_BINS; b++) got[b] = g32[b];
  }
  *pass = memcmp(got, want, sizeof got) == 0;
  return true;
}

/* ---- driver ------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fputs("usage: parprim ladder histogram [--n N] [--reps R] [--check] [--csv]\n"
        "\n"
        "256-bin histograms of N random bytes and of N equal bytes: CPU loop, global\n"
        "atomics, shared-memory privatisation (Learn CUDA Programming, ch. 7), with 16-byte\n"
        "loads, production pp_histogram_image, CUB. Every step is checked against the CPU\n"
        "loop.\n"
        "\n"
        "  --n N      bytes, 1 .. 2^31-1 (default 2^28): " CLI_SIZE_FORMS "\n"
        "  --reps R   timed runs per step, median reported (default 20)\n"
        "  --check    validate at a few small sizes only (for ctest)\n"
        "  --csv      CSV rows instead of the table\n"
        "  -h, --help this text\n",
        f);
}

/* Runs every step on one input; prints rows (unless check_only); *all_pass cleared on a
 * mismatch. */
static bool run_input(ladder_env *e, const uint8_t *host, const char *data, int reps, bool csv,
                      bool check_only, bool *all_pass) {
  uint64_t want[LADDER_BINS] = {0};
  double t0 = cli_now_ms();
  for (size_t i = 0; i < e->n; i++) want[host[i]]++;
  double cpu_ms = cli_now_ms() - t0;
  if (!check_only) {
    if (csv)
      printf("step,name,data,n,ms,gbs,check\n1,CPU reference,%s,%zu,%.4f,%.2f,ref\n", data, e->n,
             cpu_ms, e->n / (cpu_ms * 1e6));
    else
      printf("  1  %-40s %-7s %10.4f ms %8.1f GB/s  reference\n", "CPU reference", data, cpu_ms,
             e->n / (cpu_ms * 1e6));
  }
  cudaEvent_t a, b;
  LADDER_CUDA_TRY(cudaEventCreate(&a));
  LADDER_CUDA_TRY(cudaEventCreate(&b));
  float *ms = (float *)malloc(sizeof(float) * (size_t)(reps > 0 ? reps : 1));
  bool ok = ms != NULL;
  for (size_t s = 0; ok && s < N_STEPS; s++) {
    const ladder_step *st = &kSteps[s];
    ok = st->run(e) && cudaStreamSynchronize(e->stream) == cudaSuccess;
    for (int r = 0; ok && !check_only && r < reps; r++)
      ok = ladder_event_ms(e->stream, a, b, r, [&](int) { return st->run(e); }, &ms[r]);
    bool pass = false;
    ok = ok && step_check(e, st, want, &pass);
    if (!ok) break;
    if (!pass) *all_pass = false;
    if (check_only) {
      printf("step %s %-40s %-7s n=%zu: %s\n", st->id, st->name, data, e->n, pass ? "ok" : "MISMATCH");
      continue;
    }
    double med = ladder_median_f(ms, (size_t)reps);
    if (csv)
      printf("%s,%s,%s,%zu,%.4f,%.2f,%s\n", st->id, st->name, data, e->n, med, e->n / (med * 1e6),
             pass ? "ok" : "MISMATCH");
    else
      printf("  %s  %-40s %-7s %10.4f ms %8.1f GB/s  %s\n", st->id, st->name, data, med,
             e->n / (med * 1e6), pass ? "ok" : "MISMATCH");
  }
  free(ms);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (!ok && !g_fatal[0]) snprintf(g_fatal, sizeof g_fatal, "a step failed (CUDA error or no memory)");
  return ok;
}

static bool run_size(ladder_env *e, size_t n, int reps, bool csv, bool check_only, bool *all_pass) {
  uint8_t *host = (uint8_t *)malloc(n ? n : 1);
  uint8_t *d_in = NULL;
  bool ok = host != NULL;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; ok && i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    host[i] = (uint8_t)(x >> 24);
  }
  ok = ok && cudaMalloc(&d_in, n ? n : 1) == cudaSuccess;
  e->d_in = d_in;
  e->n = n;
  size_t need = 0;
  ok = ok && cub::DeviceHistogram::HistogramEven(NULL, need, d_in, e->d_i32, LADDER_BINS + 1, 0,
                                                 LADDER_BINS, (int)n, e->stream) == cudaSuccess;
  if (ok && need > e->cub_temp_bytes) {
    cudaFree(e->cub_temp);
    e->cub_temp = NULL;
    e->cub_temp_bytes = 0;
    ok = cudaMalloc(&e->cub_temp, need) == cudaSuccess;
    if (ok) e->cub_temp_bytes = need;
  }
  if (!ok) snprintf(g_fatal, sizeof g_fatal, "allocation for n = %zu failed", n);
  ok = ok && cudaMemcpy(d_in, host, n, cudaMemcpyHostToDevice) == cudaSuccess;
  ok = ok && run_input(e, host, "random", reps, csv, check_only, all_pass);
  if (ok) {
    memset(host, 77, n);
    ok = cudaMemcpy(d_in, host, n, cudaMemcpyHostToDevice) == cudaSuccess &&
         run_input(e, host, "equal", reps, csv, check_only, all_pass);
  }
  cudaFree(d_in);
  free(host);
  return ok;
}

extern "C" int pp_ladder_histogram_main(int argc, char **argv) {
  LadderArgs args = {(size_t)1 << 28, 20, false, false};
  /* CUB's histogram counts in int */
  const int early = ladder_early_exit(
      ladder_parse_args(argc, argv, "histogram", (size_t)INT32_MAX, true, &args), usage);
  if (early >= 0) return early;
  const size_t n = args.n;
  const int reps = args.reps;
  const bool check = args.check, csv = args.csv;
  g_fatal[0] = '\0';
  ladder_env e;
  memset(&e, 0, sizeof e);
  int sms = 0;
  /* a blocking stream: its work waits for the cudaMemcpy uploads, which from pageable memory
     return before the data is on the device */
  bool ok = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess &&
            cudaStreamCreateWithFlags(&e.stream, cudaStreamDefault) == cudaSuccess &&
            cudaMalloc(&e.d_u32, LADDER_BINS * 4) == cudaSuccess &&
            cudaMalloc(&e.d_u64, LADDER_BINS * 8) == cudaSuccess &&
            cudaMalloc(&e.d_i32, LADDER_BINS * 4) == cudaSuccess &&
            pp_create(&e.ctx, PP_BACKEND_CUDA) == PP_OK &&
            pp_set_stream(e.ctx, e.stream) == PP_OK;
  if (!ok && !g_fatal[0]) snprintf(g_fatal, sizeof g_fatal, "set-up failed (device, stream or memory)");
  e.grid = (unsigned)(sms > 0 ? sms * 8 : 1);
  bool all_pass = true;
  if (ok && check) {
    const size_t sizes[] = {1, 15, 16, 17, 255, 4096 + 3, 1000003};
    for (size_t i = 0; ok && i < sizeof sizes / sizeof sizes[0]; i++)
      ok = run_size(&e, sizes[i], 1, false, true, &all_pass);
  } else if (ok) {
    if (!csv)
      printf("histogram ladder: 256 bins of %zu bytes, median of %d runs (CUDA events)\n", n, reps);
    ok = run_size(&e, n, reps, csv, false, &all_pass);
  }
  if (!ok && g_fatal[0]) fprintf(stderr, "%s\n", g_fatal);
  pp_destroy(e.ctx);
  ladder_cuda_free({e.d_u32, e.d_u64, e.d_i32, e.cub_temp});
  if (e.stream) cudaStreamDestroy(e.stream);
  if (!ok) return 1;
  if (!all_pass) {
    printf("FAIL: a step disagrees with the CPU reference\n");
    return 1;
  }
  if (check) printf("all steps agree with the CPU reference\n");
  return 0;
}
