/*
 * ladder/nbody.cu — the all-pairs N-body ladder: one force evaluation (n^2 interactions)
 * from a plain GPU loop through Learn CUDA Programming's shared-memory tiles (ch. 7) and
 * GPU Gems 3's kernel to
 * the production kernel at several bodies per thread, and pp_nbody_accel itself.
 *
 *   step 1  CPU reference: double precision, on a sample of bodies (every k-th)
 *   step 2  naive: one thread per body, every source body read from global memory
 *   step 3  Learn CUDA Programming, ch. 7: tiles of blockDim bodies in shared memory (positions as float3 and
 *           masses beside them), one body per thread, 1 / sqrtf
 *   step 4  GPU Gems 3 ch. 31 (bench/peer_nbody.cu, the bench's peer): float4 tiles,
 *           the tile loop unrolled by 4, rsqrtf
 *   step 5  production kernel (src/cuda/nbody.cuh), 1 body per thread: one MUFU.RSQ with
 *           denormals flushed, FMA-shaped arithmetic (12 FP32 instructions per
 *           interaction), the next tile prefetched into a register, and the source bodies
 *           split across blocks when n is too small to fill the GPU (partials added after)
 *   step 6  the same, 2 bodies per thread: each shared load feeds 2 interactions (what
 *           the library ships)
 *   step 7  4 bodies per thread
 *   step 8  8 bodies per thread
 *   step 9  pp_nbody_accel on a CUDA context: packing the caller's arrays, step 6 and the
 *           sum of the partials
 *
 * Every step is validated against step 1 on the sampled bodies: |a - a_ref| <= tol(n) S_i,
 * S_i the sum of the magnitudes of body i's terms, tol(n) = 1e-5 (1 + sqrt(n) / 16)
 * (tests/test_nbody.c states the same contract). Bodies: a uniform cube [-1, 1)^3, masses
 * 1/n, softening 0.01 (the book's and GPU Gems' kernels need softening > 0).
 *
 * Run through the CLI:  parprim ladder nbody [--n N] [--reps R] [--check]
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"
#include "peer_nbody.h"

#include "../src/cuda/nbody.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LN_SOFT 0.01f
#define LN_TILE_THREADS 256
#define LN_SAMPLES 256

static char g_err[512];

/* ---- the steps' kernels ------------------------------------------------------------------- */

// Step 2: the direct translation of the double loop. Every thread streams all n bodies
// through L1/L2; the same addresses are read by every warp, so caches absorb most of it,
// but each interaction still costs a 16-byte load instruction.
__global__ void ln_naive(const float4 *pos, float4 *acc, int n, float eps2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = pos[i];
  float ax = 0, ay = 0, az = 0;
  for (int j = 0; j < n; j++) {
    const float4 q = pos[j];
    const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    const float r2 = dx * dx + dy * dy + dz * dz + eps2;
    const float inv = 1.0f / sqrtf(r2);
    const float s = q.w * inv * inv * inv;
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
  }
  acc[i] = make_float4(ax, ay, az, 0);
}

// Step 3: the kernel of Learn CUDA Programming, ch. 7. A block stages one tile of blockDim
// bodies in shared memory (float3 positions, as the book does, with the masses in a second
// array), synchronises, and every thread walks the tile; the global loads drop to one per body per block.
__global__ void ln_book_tiles(const float4 *pos, float4 *acc, int n, float eps2) {
  __shared__ float3 sh_pos[LN_TILE_THREADS];
  __shared__ float sh_m[LN_TILE_THREADS];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 p = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float ax = 0, ay = 0, az = 0;
  for (int tile = 0; tile * LN_TILE_THREADS < n; tile++) {
    const int j = tile * LN_TILE_THREADS + threadIdx.x;
    const float4 q = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    sh_pos[threadIdx.x] = make_float3(q.x, q.y, q.z);
    sh_m[threadIdx.x] = q.w;
    __syncthreads();
    for (int k = 0; k < LN_TILE_THREADS; k++) {
      const float dx = sh_pos[k].x - p.x, dy = sh_pos[k].y - p.y, dz = sh_pos[k].z - p.z;
      const float r2 = dx * dx + dy * dy + dz * dz + eps2;
      const float inv = 1.0f / sqrtf(r2);
      const float s = sh_m[k] * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i < n) acc[i] = make_float4(ax, ay, az, 0);
}

// Steps 5-8: the partials of the production kernel, added in split order (the production
// code's own nb_sum_partials).
__global__ void ln_sum_partials(const float4 *partial, size_t n, size_t n_pad, unsigned splits,
                                float4 *acc) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float3 a = nb_sum_partials(partial, i, n_pad, splits);
  acc[i] = make_float4(a.x, a.y, a.z, 0);
}

/* ---- session --------------------------------------------------------------------------------- */

struct ln_session {
  size_t n, n_pad;   /* n_pad: n rounded up to 8 * NB_THREADS (the widest step) */
  float4 *pos, *acc, *partial;
  size_t partial_floats4;
  float *soa;        /* x y z m for step 9 */
  float *out3;       /* ax ay az of step 9 */
  float *h_pos, *h_acc;
  double *ref;       /* 3 per sample, then S_i */
  size_t stride;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  pp_context *ctx;
  int sms;
};

template <int B>
static bool launch_production(ln_session *s) {
  const size_t block_bodies = (size_t)NB_THREADS * B;
  const size_t n_pad = (s->n + block_bodies - 1) / block_bodies * block_bodies;
  const size_t tiles = n_pad / NB_THREADS, iblocks = n_pad / block_bodies;
  int per_sm = 1;
  LADDER_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, nb_force_kernel<B, false>,
                                                         NB_THREADS, 0));
  const size_t slots = (size_t)s->sms * (size_t)(per_sm > 0 ? per_sm : 1);
  size_t splits = iblocks >= slots ? 1 : slots / iblocks; /* fill one wave */
  if (splits > tiles) splits = tiles;
  if (splits > 1024) splits = 1024;
  if (splits * n_pad > s->partial_floats4) splits = s->partial_floats4 / n_pad;
  nb_force_kernel<B, false><<<dim3((unsigned)iblocks, (unsigned)splits), NB_THREADS, 0, s->stream>>>(
      s->pos, n_pad, tiles, (unsigned)splits, LN_SOFT * LN_SOFT, s->partial);
  LADDER_CUDA_TRY(cudaGetLastError());
  ln_sum_partials<<<(unsigned)((s->n + 255) / 256), 256, 0, s->stream>>>(s->partial, s->n, n_pad,
                                                                        (unsigned)splits, s->acc);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

/* Runs step k (2..9) once; the result ends in s->acc (float4) or s->out3 (step 9). */
static bool run_step(ln_session *s, int k, bool *unsupported) {
  const float eps2 = LN_SOFT * LN_SOFT;
  const int n = (int)s->n;
  const unsigned g256 = (unsigned)((s->n + 255) / 256);
  *unsupported = false;
  switch (k) {
  case 2:
    ln_naive<<<g256, 256, 0, s->stream>>>(s->pos, s->acc, n, eps2);
    LADDER_CUDA_TRY(cudaGetLastError());
    return true;
  case 3:
    ln_book_tiles<<<g256, LN_TILE_THREADS, 0, s->stream>>>(s->pos, s->acc, n, eps2);
    LADDER_CUDA_TRY(cudaGetLastError());
    return true;
  case 4:
    if (bench_peer_nbody_accel((const float *)s->pos, (float *)s->acc, s->n, LN_SOFT, s->stream)) {
      snprintf(g_err, sizeof g_err, "%s", bench_peer_nbody_error());
      return false;
    }
    return true;
  case 5: return launch_production<1>(s);
  case 6: return launch_production<2>(s);
  case 7: return launch_production<4>(s);
  case 8: return launch_production<8>(s);
  default: {
    if (!s->ctx) {
      *unsupported = true;
      return true;
    }
    pp_bodies b = {s->soa, s->soa + s->n, s->soa + 2 * s->n, NULL, NULL, NULL, s->soa + 3 * s->n, s->n};
    pp_status st = pp_nbody_accel(s->ctx, &b, LN_SOFT, s->out3, s->out3 + s->n, s->out3 + 2 * s->n);
    if (st == PP_ERR_UNSUPPORTED) {
      *unsupported = true;
      return true;
    }
    if (st != PP_OK) {
      snprintf(g_err, sizeof g_err, "pp_nbody_accel: %s: %s", pp_status_string(st), pp_last_error(s->ctx));
      return false;
    }
    return true;
  }
  }
}

static const char *step_name(int k) {
  static const char *names[] = {"",
                                "CPU reference (double, sampled bodies)",
                                "naive: global memory, 1 body/thread",
                                "ch. 7 tiles (float3 + mass), 1/sqrtf",
                                "GPU Gems 3: float4 tiles, unroll 4, rsqrtf",
                                "production kernel, 1 body/thread",
                                "production kernel, 2 bodies/thread (shipped)",
                                "production kernel, 4 bodies/thread",
                                "production kernel, 8 bodies/thread",
                                "pp_nbody_accel (pack + kernel + sum)"};
  return names[k];
}

/* Bodies and the reference for n. */
static bool setup(ln_session *s, size_t n) {
  s->n = n;
  uint64_t st = 0x5eed0fa11ab1e5ull;
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 4; c++) {
      st += 0x9E3779B97F4A7C15ull;
      uint64_t z = st;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      float v = (float)((double)(z >> 40) * 0x1p-23 - 1.0);
      s->h_pos[4 * i + (size_t)c] = c < 3 ? v : 1.0f / (float)n;
    }
  LADDER_CUDA_TRY(cudaMemcpy(s->pos, s->h_pos, n * sizeof(float4), cudaMemcpyHostToDevice));
  /* the padding the production steps read: massless bodies */
  LADDER_CUDA_TRY(cudaMemset(s->pos + n, 0, (s->n_pad - n) * sizeof(float4)));
  float *h_soa = (float *)malloc(4 * n * sizeof(float));
  if (!h_soa) {
    snprintf(g_err, sizeof g_err, "out of host memory");
    return false;
  }
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 4; c++) h_soa[(size_t)c * n + i] = s->h_pos[4 * i + (size_t)c];
  cudaError_t e = cudaMemcpy(s->soa, h_soa, 4 * n * sizeof(float), cudaMemcpyHostToDevice);
  free(h_soa);
  LADDER_CUDA_TRY(e);
  /* step 1 on every stride-th body */
  s->stride = (n + LN_SAMPLES - 1) / LN_SAMPLES; /* at most LN_SAMPLES samples */
  const double eps2 = (double)LN_SOFT * LN_SOFT;
  for (size_t i = 0, q = 0; i < n; i += s->stride, q++) {
    double a[3] = {0, 0, 0}, mag = 0;
    const float *p = s->h_pos;
    for (size_t j = 0; j < n; j++) {
      if (j == i) continue;
      double dx = (double)p[4 * j] - p[4 * i], dy = (double)p[4 * j + 1] - p[4 * i + 1],
             dz = (double)p[4 * j + 2] - p[4 * i + 2];
      double d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2, sc = p[4 * j + 3] / (r2 * sqrt(r2));
      a[0] += dx * sc;
      a[1] += dy * sc;
      a[2] += dz * sc;
      mag += fabs(sc) * sqrt(d2);
    }
    for (int c = 0; c < 3; c++) s->ref[4 * q + (size_t)c] = a[c];
    s->ref[4 * q + 3] = mag;
  }
  return true;
}

/* Validates the last result of step k; *bad gets the number of sampled bodies off. */
static bool validate(ln_session *s, int k, size_t *bad) {
  const size_t n = s->n;
  if (k == 9) {
    float *tmp = (float *)malloc(3 * n * sizeof(float));
    if (!tmp) return false;
    cudaError_t e = cudaMemcpy(tmp, s->out3, 3 * n * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 3; c++) s->h_acc[4 * i + (size_t)c] = tmp[(size_t)c * n + i];
    free(tmp);
    LADDER_CUDA_TRY(e);
  } else {
    LADDER_CUDA_TRY(cudaMemcpy(s->h_acc, s->acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
  }
  const double tol = 1e-5 * (1.0 + sqrt((double)n) / 16.0);
  *bad = 0;
  for (size_t i = 0, q = 0; i < n; i += s->stride, q++) {
    double e2 = 0;
    for (int c = 0; c < 3; c++) {
      double d = s->h_acc[4 * i + (size_t)c] - s->ref[4 * q + (size_t)c];
      e2 += d * d;
    }
    if (!(sqrt(e2) <= tol * s->ref[4 * q + 3] + 1e-30)) ++*bad;
  }
  return true;
}

static bool session_alloc(ln_session *s, size_t max_n) {
  const size_t pad = (max_n + 8 * NB_THREADS - 1) / (8 * NB_THREADS) * (8 * NB_THREADS);
  s->n_pad = pad;
  s->partial_floats4 = pad * 64; /* up to 64 splits at the largest n, more when smaller */
  if (s->partial_floats4 < ((size_t)1 << 22)) s->partial_floats4 = (size_t)1 << 22;
  LADDER_CUDA_TRY(cudaMalloc(&s->pos, pad * sizeof(float4)));
  LADDER_CUDA_TRY(cudaMemset(s->pos, 0, pad * sizeof(float4))); /* padding: massless bodies */
  LADDER_CUDA_TRY(cudaMalloc(&s->acc, pad * sizeof(float4)));
  LADDER_CUDA_TRY(cudaMalloc(&s->partial, s->partial_floats4 * sizeof(float4)));
  LADDER_CUDA_TRY(cudaMalloc(&s->soa, 4 * pad * sizeof(float)));
  LADDER_CUDA_TRY(cudaMalloc(&s->out3, 3 * pad * sizeof(float)));
  s->h_pos = (float *)malloc(pad * sizeof(float4));
  s->h_acc = (float *)malloc(pad * sizeof(float4));
  s->ref = (double *)malloc((LN_SAMPLES + 1) * 4 * sizeof(double));
  if (!s->h_pos || !s->h_acc || !s->ref) {
    snprintf(g_err, sizeof g_err, "out of host memory");
    return false;
  }
  return true;
}

static void session_free(ln_session *s) {
  if (s->ctx) pp_destroy(s->ctx);
  ladder_cuda_free({s->pos, s->acc, s->partial, s->soa, s->out3});
  if (s->start) cudaEventDestroy(s->start);
  if (s->stop) cudaEventDestroy(s->stop);
  if (s->stream) cudaStreamDestroy(s->stream);
  ladder_host_free({s->h_pos, s->h_acc, s->ref});
}

static void usage(FILE *f) {
  fputs("usage: parprim ladder nbody [--n N] [--reps R] [--check] [--help]\n"
        "\n"
        "Runs the all-pairs N-body ladder: one force evaluation (n^2 interactions) by a\n"
        "naive kernel, the shared-memory tiles of Learn CUDA Programming (ch. 7), GPU Gems\n"
        "3's kernel, the production kernel at 1, 2, 4 and 8 bodies per thread, and\n"
        "pp_nbody_accel. Each step is validated against a double-precision CPU reference on\n"
        "sampled bodies and timed with CUDA events (median), in G interactions/s and\n"
        "TFLOP/s (20 flops each).\n"
        "\n"
        "  --n N      bodies, 1 .. 2^24 (default 65536): " CLI_SIZE_FORMS "\n"
        "  --reps R   timed runs per step (default 20, R >= 5)\n"
        "  --check    no timing: validate every step over awkward sizes (or only --n N)\n"
        "  --help     this text\n"
        "\n"
        "exit status: 0 all passed, 1 a step failed, 2 bad usage, 77 no CUDA device\n",
        f);
}

static int parse(int argc, char **argv, size_t *n, int *reps, bool *check, bool *n_given) {
  for (int i = ladder_first_arg(argc, argv); i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 0;
    if (!strcmp(a, "--check")) {
      *check = true;
    } else if (!strcmp(a, "--n") && i + 1 < argc) {
      if (!ladder_parse_size("--n", argv[++i], 1, (size_t)1 << 24, n)) return 2;
      *n_given = true;
    } else if (!strcmp(a, "--reps") && i + 1 < argc) {
      size_t v = 0;
      if (!ladder_parse_size("--reps", argv[++i], 5, 10000, &v)) return 2;
      *reps = (int)v;
    } else {
      fprintf(stderr, "unknown or incomplete argument '%s'\n", a);
      return 2;
    }
  }
  return -1;
}

extern "C" int pp_ladder_nbody_main(int argc, char **argv) {
  size_t n = 65536;
  int reps = 20;
  bool check = false, n_given = false;
  int pr = parse(argc, argv, &n, &reps, &check, &n_given);
  if (pr == 0) {
    usage(stdout);
    return 0;
  }
  if (pr == 2) {
    usage(stderr);
    return 2;
  }
  if (!ladder_have_device()) return LADDER_EXIT_SKIP;
  static const size_t check_sizes[] = {1, 2, 3, 127, 255, 256, 257, 1000, 4099, 16387, 70001};
  const size_t *sizes = check && !n_given ? check_sizes : &n;
  const size_t nsizes = check && !n_given ? sizeof check_sizes / sizeof check_sizes[0] : 1;
  size_t max_n = 0;
  for (size_t i = 0; i < nsizes; i++) max_n = sizes[i] > max_n ? sizes[i] : max_n;

  ln_session s;
  memset(&s, 0, sizeof s);
  g_err[0] = '\0';
  int failures = 0;
  bool ok = true;
  cudaDeviceProp prop;
  /* a blocking stream: its work waits for the cudaMemcpy uploads, which from pageable memory
     return before the data is on the device */
  do {
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s.stream, cudaStreamDefault) != cudaSuccess ||
        cudaEventCreate(&s.start) != cudaSuccess || cudaEventCreate(&s.stop) != cudaSuccess) {
      snprintf(g_err, sizeof g_err, "CUDA setup failed: %s", cudaGetErrorString(cudaGetLastError()));
      ok = false;
      break;
    }
    s.sms = prop.multiProcessorCount;
    if (pp_create(&s.ctx, PP_BACKEND_CUDA) != PP_OK || pp_set_stream(s.ctx, s.stream) != PP_OK) {
      if (s.ctx) pp_destroy(s.ctx);
      s.ctx = NULL;
      printf("step 9 skipped: no CUDA context (%s)\n", pp_last_error(NULL));
    }
    ok = session_alloc(&s, max_n);
  } while (0);
  if (ok && !check)
    printf("parprim ladder nbody on %s: n = %zu, %d runs per step (median), softening %g\n"
           "%-4s %-44s %10s %10s %8s %9s  %s\n",
           prop.name, n, reps, (double)LN_SOFT, "step", "name", "ms", "Ginter/s", "TFLOP/s",
           "vs prod", "check");
  else if (ok)
    printf("parprim ladder nbody --check on %s: %zu sizes, steps 2-9 each validated on up to %d "
           "sampled bodies\n",
           prop.name, nsizes, LN_SAMPLES);
  float *times = (float *)malloc((size_t)reps * sizeof(float));
  double prod_ms = 0;
  double step_ms[10] = {0};
  for (size_t si = 0; ok && si < nsizes; si++) {
    ok = setup(&s, sizes[si]);
    for (int k = 2; ok && k <= 9; k++) {
      bool unsup = false;
      size_t bad = 0;
      ok = run_step(&s, k, &unsup);
      if (ok && unsup) {
        printf("%-4d %-44s unsupported by this build\n", k, step_name(k));
        continue;
      }
      if (ok && cudaStreamSynchronize(s.stream) != cudaSuccess) {
        snprintf(g_err, sizeof g_err, "step %d: %s", k, cudaGetErrorString(cudaGetLastError()));
        ok = false;
      }
      if (ok) ok = validate(&s, k, &bad);
      if (!ok) break;
      if (bad) {
        failures++;
        printf("FAIL n=%zu step %d (%s): %zu of the sampled bodies off\n", sizes[si], k,
               step_name(k), bad);
      }
      if (check) continue;
      for (int r = 0; ok && r < reps; r++)
        ok = ladder_event_ms(s.stream, s.start, s.stop, r,
                             [&](int) { return run_step(&s, k, &unsup); }, &times[r]);
      if (!ok) break;
      step_ms[k] = ladder_median_f(times, (size_t)reps);
      if (k == 6) prod_ms = step_ms[k];
    }
    if (ok && check) printf("n=%zu: %s\n", sizes[si], failures ? "failures so far" : "ok");
  }
  if (ok && !check) {
    const double inter = (double)n * (double)n;
    printf("%-4d %-44s %10s %10s %8s %9s  %s\n", 1, step_name(1), "-", "-", "-", "-", "reference");
    for (int k = 2; k <= 9; k++) {
      if (step_ms[k] <= 0) continue;
      printf("%-4d %-44s %10.4f %10.1f %8.2f %9.3f  %s\n", k, step_name(k), step_ms[k],
             inter / (step_ms[k] * 1e6), inter * 20 / (step_ms[k] * 1e9),
             prod_ms > 0 ? prod_ms / step_ms[k] : 0.0, "ok");
    }
  }
  free(times);
  if (!ok) {
    fprintf(stderr, "%s\n", g_err[0] ? g_err : "a CUDA call failed");
    cudaGetLastError();
  }
  session_free(&s);
  if (ok) printf("%s\n", failures ? "FAIL" : "PASS");
  return !ok || failures ? 1 : 0;
}
