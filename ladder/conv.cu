/*
 * ladder/conv.cu — the image-convolution ladder of Learn CUDA Programming (Han and Sharma),
 * ch. 7, "Image convolution": a K x K filter (a normalised Gaussian, so the separable step
 * can run on the same data) over a square f32 image with zero borders, from the naive
 * kernel to the production ones.
 *
 *   step 1  CPU reference: direct correlation in double
 *   step 2  v1 naive: one thread per pixel, image and filter read from global memory, a
 *           bounds test per tap for the zero border
 *   step 3  v2 constant memory: the filter in __constant__, read as a broadcast by every
 *           thread of a warp (the book's point: the weights are the same for all threads)
 *   step 4  v3 shared-memory tiles: a 16x16 block loads its 16+K-1 square window (halo
 *           included, zeros outside) once, then every tap reads shared memory
 *   step 5  production: pp_conv2d (64-row tiles, float4 window loads, eight outputs per
 *           thread in a register window, kernels stamped per filter size)
 *   step 6  production: pp_conv2d_separable with the Gaussian's row and column (the book's
 *           "next step": K + K multiply-adds per pixel instead of K * K)
 *   step 7  cudaMemcpyAsync of the image: the floor every step is compared with
 *
 * Every step's output is checked against step 1 at every pixel (--check) or at 65536
 * sampled pixels: |got - ref| <= (K*K + 16) * FLT_EPSILON * sum |f * x|.
 *
 * Run through the CLI:  parprim ladder conv [--n PIXELS] [--filter K] [--reps R] [--check]
 *                       [--csv]
 * --check runs a small image (default 1000 x 1000) and exits non-zero if any step fails.
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cuda_runtime.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LCONV_MAX_K 31
#define LCONV_TILE 16

static __constant__ float c_ladder_filter[LCONV_MAX_K * LCONV_MAX_K];


/* ---- steps 2 and 3: one thread per output pixel --------------------------------------- */

/* The direct correlation at (x, y), zero outside the image. Steps 2 and 3 differ only in
 * where the filter is read from: global memory (f), or constant memory (c_ladder_filter),
 * whose cache broadcasts one address to the whole warp in a single read. */
template <bool kConstantFilter>
static __device__ __forceinline__ void conv_direct(const float *in, float *out, int w, int h,
                                                   const float *f, int k) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int r = k / 2;
  float acc = 0.0f;
  for (int dy = 0; dy < k; dy++)
    for (int dx = 0; dx < k; dx++) {
      int sx = x + dx - r, sy = y + dy - r;
      if (sx >= 0 && sx < w && sy >= 0 && sy < h)
        acc += (kConstantFilter ? c_ladder_filter[dy * k + dx] : f[dy * k + dx]) *
               in[(size_t)sy * w + sx];
    }
  out[(size_t)y * w + x] = acc;
}

/* step 2: v1 naive, the filter in global memory */
static __global__ void conv_v1_naive(const float *in, float *out, int w, int h,
                                     const float *f, int k) {
  conv_direct<false>(in, out, w, h, f, k);
}

/* step 3: v2 filter in constant memory */
static __global__ void conv_v2_constant(const float *in, float *out, int w, int h, int k) {
  conv_direct<true>(in, out, w, h, nullptr, k);
}

/* ---- step 4: v3 shared-memory tile with halo ------------------------------------------ */

static __global__ void conv_v3_tiled(const float *in, float *out, int w, int h, int k) {
  __shared__ float tile[(LCONV_TILE + LCONV_MAX_K - 1) * (LCONV_TILE + LCONV_MAX_K - 1)];
  int r = k / 2, side = LCONV_TILE + k - 1;
  int x0 = blockIdx.x * LCONV_TILE - r, y0 = blockIdx.y * LCONV_TILE - r;
  int tid = threadIdx.y * LCONV_TILE + threadIdx.x;
  /* the block loads its window cooperatively; ghost cells outside the image are zeros */
  for (int i = tid; i < side * side; i += LCONV_TILE * LCONV_TILE) {
    int sx = x0 + i % side, sy = y0 + i / side;
    tile[i] = (sx >= 0 && sx < w && sy >= 0 && sy < h) ? in[(size_t)sy * w + sx] : 0.0f;
  }
  __syncthreads();
  int x = blockIdx.x * LCONV_TILE + threadIdx.x, y = blockIdx.y * LCONV_TILE + threadIdx.y;
  if (x >= w || y >= h) return;
  float acc = 0.0f;
  for (int dy = 0; dy < k; dy++)
    for (int dx = 0; dx < k; dx++)
      acc += c_ladder_filter[dy * k + dx] * tile[(threadIdx.y + dy) * side + threadIdx.x + dx];
  out[(size_t)y * w + x] = acc;
}

/* ---- the harness ---------------------------------------------------------------------- */

typedef struct lconv {
  int w, h, k, reps;
  bool check_all, csv;
  float *h_in, *h_out, *h_f, *h_row;
  double *ref, *mag;
  float *d_in, *d_out, *d_f, *d_row;
  pp_context *ctx;
  cudaStream_t stream;
  cudaEvent_t ev[2];
} lconv;

typedef bool (*lconv_fn)(lconv *c);

static bool run_v1(lconv *c) {
  dim3 b(LCONV_TILE, LCONV_TILE), g((c->w + 15) / 16, (c->h + 15) / 16);
  conv_v1_naive<<<g, b, 0, c->stream>>>(c->d_in, c->d_out, c->w, c->h, c->d_f, c->k);
  return LADDER_CUDA_OK(cudaGetLastError());
}
static bool run_v2(lconv *c) {
  dim3 b(LCONV_TILE, LCONV_TILE), g((c->w + 15) / 16, (c->h + 15) / 16);
  conv_v2_constant<<<g, b, 0, c->stream>>>(c->d_in, c->d_out, c->w, c->h, c->k);
  return LADDER_CUDA_OK(cudaGetLastError());
}
static bool run_v3(lconv *c) {
  dim3 b(LCONV_TILE, LCONV_TILE), g((c->w + 15) / 16, (c->h + 15) / 16);
  conv_v3_tiled<<<g, b, 0, c->stream>>>(c->d_in, c->d_out, c->w, c->h, c->k);
  return LADDER_CUDA_OK(cudaGetLastError());
}
static bool run_prod(lconv *c) {
  pp_status s = pp_conv2d(c->ctx, c->d_in, (size_t)c->w, (size_t)c->h, (size_t)c->w, c->d_f,
                          (size_t)c->k, (size_t)c->k, PP_BORDER_ZERO, c->d_out, (size_t)c->w);
  if (s != PP_OK) fprintf(stderr, "ladder conv: pp_conv2d: %s\n", pp_last_error(c->ctx));
  return s == PP_OK;
}
static bool run_sep(lconv *c) {
  pp_status s = pp_conv2d_separable(c->ctx, c->d_in, (size_t)c->w, (size_t)c->h, (size_t)c->w,
                                    c->d_row, (size_t)c->k, c->d_row, (size_t)c->k,
                                    PP_BORDER_ZERO, c->d_out, (size_t)c->w);
  if (s != PP_OK) fprintf(stderr, "ladder conv: pp_conv2d_separable: %s\n", pp_last_error(c->ctx));
  return s == PP_OK;
}
static bool run_copy(lconv *c) {
  return LADDER_CUDA_OK(cudaMemcpyAsync(c->d_out, c->d_in, (size_t)c->w * c->h * sizeof(float),
                            cudaMemcpyDeviceToDevice, c->stream));
}

/* Step 1: the reference at the pixels the check looks at (all of them with --check). */
static void reference(lconv *c) {
  int r = c->k / 2;
  size_t n = (size_t)c->w * c->h, stride = c->check_all || n <= 65536 ? 1 : n / 65536;
  for (size_t p = 0; p < n; p += stride) {
    int x = (int)(p % c->w), y = (int)(p / c->w);
    double s = 0, m = 0;
    for (int dy = 0; dy < c->k; dy++)
      for (int dx = 0; dx < c->k; dx++) {
        int sx = x + dx - r, sy = y + dy - r;
        if (sx < 0 || sx >= c->w || sy < 0 || sy >= c->h) continue;
        double v = (double)c->h_f[dy * c->k + dx] * c->h_in[(size_t)sy * c->w + sx];
        s += v;
        m += fabs(v);
      }
    c->ref[p] = s;
    c->mag[p] = m;
  }
}

static bool validate(lconv *c, bool copy_step, size_t *bad) {
  size_t n = (size_t)c->w * c->h, stride = c->check_all || n <= 65536 ? 1 : n / 65536;
  if (!LADDER_CUDA_OK(cudaMemcpy(c->h_out, c->d_out, n * sizeof(float), cudaMemcpyDeviceToHost))) return false;
  double tol = (double)(c->k * c->k + 16) * FLT_EPSILON;
  *bad = 0;
  for (size_t p = 0; p < n; p += stride) {
    double want = copy_step ? c->h_in[p] : c->ref[p];
    double lim = copy_step ? 0.0 : tol * c->mag[p] + 1e-30;
    if (!(fabs((double)c->h_out[p] - want) <= lim)) (*bad)++;
  }
  return true;
}

/* Runs one step: warm-up, reps timed runs (median), then validation. */
static bool step(lconv *c, int id, const char *name, lconv_fn fn, bool copy_step, bool *all_ok) {
  LADDER_CUDA_OK(cudaMemsetAsync(c->d_out, 0xff, (size_t)c->w * c->h * sizeof(float), c->stream));
  if (!fn(c) || !LADDER_CUDA_OK(cudaStreamSynchronize(c->stream))) return false;
  size_t bad = 0;
  if (!validate(c, copy_step, &bad)) return false;
  float *ms = (float *)malloc((size_t)c->reps * sizeof(float));
  if (!ms) return false;
  for (int i = 0; i < c->reps; i++)
    if (!ladder_event_ms(c->stream, c->ev[0], c->ev[1], i, [&](int) { return fn(c); }, &ms[i])) {
      free(ms);
      return false;
    }
  double med = ladder_median_f(ms, (size_t)c->reps), px = (double)c->w * c->h;
  free(ms);
  if (bad) *all_ok = false;
  if (c->csv)
    printf("%d,%s,%d,%d,%d,%.5f,%.2f,%.1f,%s\n", id, name, c->w, c->h, c->k, med, px / (med * 1e6),
           8.0 * px / (med * 1e6), bad ? "FAIL" : "ok");
  else
    printf("step %d  %-34s %9.4f ms %9.2f Gpix/s %8.1f GB/s  %s", id, name, med, px / (med * 1e6),
           8.0 * px / (med * 1e6), bad ? "FAIL" : "ok");
  if (!c->csv && bad) printf(" (%zu pixels out of tolerance)", bad);
  if (!c->csv) printf("\n");
  return true;
}

static void usage(void) {
  fprintf(stderr,
          "usage: parprim ladder conv [--n PIXELS] [--filter K] [--reps R] [--check] [--csv]\n"
          "  --n       pixels of the square image (default 2^24; --check: 10^6): " CLI_SIZE_FORMS "\n"
          "  --filter  odd K x K Gaussian, 1..%d (default 5)\n"
          "  --reps    timed runs per step, median reported (default 20)\n"
          "  --check   small image, every pixel validated; non-zero exit on a failure\n"
          "  --csv     machine-readable rows\n",
          LCONV_MAX_K);
}

extern "C" int pp_ladder_conv_main(int argc, char **argv) {
  int first = ladder_first_arg(argc, argv);
  size_t n = 0;
  int k = 5, reps = 20;
  bool check = false, csv = false;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--check") == 0) check = true;
    else if (strcmp(a, "--csv") == 0) csv = true;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage();
      return 0;
    } else if (i + 1 < argc && strcmp(a, "--n") == 0) {
      if (!ladder_parse_size("--n", argv[++i], 1, (size_t)46340 * 46340, &n)) {
        usage();
        return 2;
      }
    } else if (i + 1 < argc && (strcmp(a, "--filter") == 0 || strcmp(a, "--reps") == 0)) {
      size_t v = 0;
      if (!ladder_parse_size(a, argv[++i], 1, a[2] == 'f' ? LCONV_MAX_K : 100000, &v)) {
        usage();
        return 2;
      }
      *(a[2] == 'f' ? &k : &reps) = (int)v;
    } else {
      usage();
      return 2;
    }
  }
  if (k < 1 || k > LCONV_MAX_K || k % 2 == 0 || reps < 1) {
    usage();
    return 2;
  }
  if (n == 0) n = check ? 1000000 : (size_t)1 << 24;
  int side = (int)sqrt((double)n);
  if (side < 1 || side > 46340) {
    usage();
    return 2;
  }
  if (!ladder_have_device()) return LADDER_EXIT_SKIP;
  lconv c;
  memset(&c, 0, sizeof c);
  c.w = c.h = side;
  c.k = k;
  c.reps = check ? 3 : reps;
  c.check_all = check;
  c.csv = csv;
  size_t px = (size_t)side * side;
  c.h_in = (float *)malloc(px * sizeof(float));
  c.h_out = (float *)malloc(px * sizeof(float));
  c.h_f = (float *)malloc((size_t)k * k * sizeof(float));
  c.h_row = (float *)malloc((size_t)k * sizeof(float));
  c.ref = (double *)calloc(px, sizeof(double));
  c.mag = (double *)calloc(px, sizeof(double));
  int rc = 1;
  bool ok = c.h_in && c.h_out && c.h_f && c.h_row && c.ref && c.mag;
  if (ok) {
    uint64_t s = 0x5eedull;
    for (size_t i = 0; i < px; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      c.h_in[i] = (float)((s >> 40) * 0x1p-24);
    }
    double sigma = k / 6.0 > 0.5 ? k / 6.0 : 0.5, sum = 0;
    for (int i = 0; i < k; i++) sum += c.h_row[i] = (float)exp(-(i - k / 2) * (i - k / 2) / (2 * sigma * sigma));
    for (int i = 0; i < k; i++) c.h_row[i] = (float)(c.h_row[i] / sum);
    for (int y = 0; y < k; y++)
      for (int x = 0; x < k; x++) c.h_f[y * k + x] = c.h_row[y] * c.h_row[x];
    reference(&c);
  }
  ok = ok && pp_create(&c.ctx, PP_BACKEND_CUDA) == PP_OK && LADDER_CUDA_OK(cudaStreamCreate(&c.stream)) &&
       pp_set_stream(c.ctx, c.stream) == PP_OK && LADDER_CUDA_OK(cudaEventCreate(&c.ev[0])) &&
       LADDER_CUDA_OK(cudaEventCreate(&c.ev[1])) && LADDER_CUDA_OK(cudaMalloc(&c.d_in, px * sizeof(float))) &&
       LADDER_CUDA_OK(cudaMalloc(&c.d_out, px * sizeof(float))) &&
       LADDER_CUDA_OK(cudaMalloc(&c.d_f, (size_t)k * k * sizeof(float))) &&
       LADDER_CUDA_OK(cudaMalloc(&c.d_row, (size_t)k * sizeof(float))) &&
       LADDER_CUDA_OK(cudaMemcpy(c.d_in, c.h_in, px * sizeof(float), cudaMemcpyHostToDevice)) &&
       LADDER_CUDA_OK(cudaMemcpy(c.d_f, c.h_f, (size_t)k * k * sizeof(float), cudaMemcpyHostToDevice)) &&
       LADDER_CUDA_OK(cudaMemcpy(c.d_row, c.h_row, (size_t)k * sizeof(float), cudaMemcpyHostToDevice)) &&
       LADDER_CUDA_OK(cudaMemcpyToSymbol(c_ladder_filter, c.h_f, (size_t)k * k * sizeof(float)));
  if (ok) {
    bool all = true;
    if (!csv)
      printf("conv ladder: %dx%d f32, %dx%d Gaussian, zero borders, median of %d runs\n"
             "step 1  CPU reference (double)             computed at %s pixels\n",
             side, side, k, k, c.reps, check || px <= 65536 ? "all" : "65536 sampled");
    else
      printf("step,name,width,height,k,ms,gpix_s,gbs,check\n");
    ok = step(&c, 2, "v1 naive (global filter)", run_v1, false, &all) &&
         step(&c, 3, "v2 filter in constant memory", run_v2, false, &all) &&
         step(&c, 4, "v3 shared-memory tile + halo", run_v3, false, &all) &&
         step(&c, 5, "production pp_conv2d", run_prod, false, &all) &&
         step(&c, 6, "production pp_conv2d_separable", run_sep, false, &all) &&
         step(&c, 7, "cudaMemcpyAsync (floor)", run_copy, true, &all);
    rc = ok && all ? 0 : 1;
  }
  if (c.ctx) pp_destroy(c.ctx);
  if (c.stream) cudaStreamDestroy(c.stream);
  if (c.ev[0]) cudaEventDestroy(c.ev[0]);
  if (c.ev[1]) cudaEventDestroy(c.ev[1]);
  cudaFree(c.d_in);
  cudaFree(c.d_out);
  cudaFree(c.d_f);
  cudaFree(c.d_row);
  free(c.h_in);
  free(c.h_out);
  free(c.h_f);
  free(c.h_row);
  free(c.ref);
  free(c.mag);
  return rc;
}
