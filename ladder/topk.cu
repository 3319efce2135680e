/*
 * ladder/topk.cu — the top-k ladder: the per-thread insert and block tree of the 2022 CUDA
 * summer camp's top-k exercise against the production radix selection, on i32 values (the
 * exercise's type), k largest.
 *
 *   step 1   CPU reference: a stable sort of the indices, the first k values
 *   step 2   the exercise's method: each thread keeps its k largest in a sorted array in registers /
 *            local memory (insertion), the block merges those arrays pairwise down a
 *            shared-memory tree (BLOCK x k ints: 48 KB caps k at 48 for 256 threads),
 *            and a second launch of the same kernel with one block merges the blocks'
 *            lists. Our version keeps duplicates (the exercise's insert drops a value equal
 *            to one already held, which is wrong for top-k with ties) and any n.
 *   step 3   production: pp_topk(PP_I32, largest) on a CUDA context (radix selection,
 *            src/cuda/topk.cu), any k.
 *
 * The cost of step 2 grows with k twice over: every insert shifts up to k entries, and
 * the tree merges k-long lists log2(BLOCK) times; step 3 reads the data a few times
 * whatever k is. Run: parprim ladder topk [--n N] [--reps R] [--check]
 */
#include "common.cuh"
#include "ladder.h"
#include "parprim.h"

#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TREE_BLOCK 256
#define TREE_BLOCKS 1024

static char g_fatal[512];

/* ---- step 1: CPU reference ------------------------------------------------------------- */

static int cmp_desc_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x > y ? -1 : x < y;
}

/* the whole input sorted descending once: every k's answer is a prefix of it */
static void cpu_sorted(const int32_t *x, size_t n, int32_t *out) {
  memcpy(out, x, n * sizeof *out);
  qsort(out, n, sizeof *out, cmp_desc_i32);
}

/* ---- step 2: per-thread insert, block tree ---------------------------------------------- */

/* Inserts v into the descending list a[0..K) if it beats the last entry (duplicates kept). */
template <int K>
__device__ __forceinline__ void insert_value(int32_t *a, int32_t v) {
  if (v <= a[K - 1]) return;
  int i = K - 1;
  while (i > 0 && a[i - 1] < v) {
    a[i] = a[i - 1];
    i--;
  }
  a[i] = v;
}

/* One pass: grid-stride over in[0..n), per-thread lists, shared-memory tree, block list to
 * out[blockIdx.x * K ...]. Called twice: blocks, then one block over the blocks' lists. */
template <int K>
__global__ void __launch_bounds__(TREE_BLOCK) insert_tree_kernel(const int32_t *in, size_t n,
                                                                int32_t *out) {
  __shared__ int32_t lists[TREE_BLOCK * K];
  int32_t mine[K];
  for (int i = 0; i < K; i++) mine[i] = INT_MIN;
  for (size_t i = blockIdx.x * (size_t)TREE_BLOCK + threadIdx.x; i < n;
       i += (size_t)gridDim.x * TREE_BLOCK)
    insert_value<K>(mine, in[i]);
  for (int i = 0; i < K; i++) lists[threadIdx.x * K + i] = mine[i];
  __syncthreads();
  for (int len = TREE_BLOCK / 2; len >= 1; len /= 2) {
    if ((int)threadIdx.x < len)
      for (int i = 0; i < K; i++) insert_value<K>(mine, lists[(threadIdx.x + len) * K + i]);
    __syncthreads();
    if ((int)threadIdx.x < len)
      for (int i = 0; i < K; i++) lists[threadIdx.x * K + i] = mine[i];
    __syncthreads();
  }
  if ((int)threadIdx.x < K) out[blockIdx.x * (size_t)K + threadIdx.x] = lists[threadIdx.x];
}

template <int K>
static bool insert_tree_topk(const int32_t *d_in, size_t n, int32_t *d_partial, int32_t *d_out) {
  insert_tree_kernel<K><<<TREE_BLOCKS, TREE_BLOCK>>>(d_in, n, d_partial);
  LADDER_CUDA_TRY(cudaGetLastError());
  insert_tree_kernel<K><<<1, TREE_BLOCK>>>(d_partial, (size_t)TREE_BLOCKS * K, d_out);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

static bool insert_tree_dispatch(int k, const int32_t *d_in, size_t n, int32_t *d_partial,
                          int32_t *d_out) {
  switch (k) {
  case 1: return insert_tree_topk<1>(d_in, n, d_partial, d_out);
  case 10: return insert_tree_topk<10>(d_in, n, d_partial, d_out);
  case 32: return insert_tree_topk<32>(d_in, n, d_partial, d_out);
  case 48: return insert_tree_topk<48>(d_in, n, d_partial, d_out);
  }
  return false;
}

/* ---- harness ----------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fputs("usage: parprim ladder topk [--n N] [--reps R] [--check]\n"
        "  a per-thread insert + block tree (k = 1, 10, 32, 48) against pp_topk\n"
        "  (radix selection, also k = 1000 and 100000), i32 k largest; --check validates\n"
        "  every step against the CPU reference at several sizes and exits 0 or 1\n"
        "  --n N      values (default 2^24): " CLI_SIZE_FORMS "\n",
        f);
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* one size: every step for every k; returns false on a CUDA failure, counts mismatches */
static bool run_size(pp_context *ctx, size_t n, const LadderArgs *o, int *mismatches) {
  int32_t *h = (int32_t *)malloc(n * sizeof *h), *want = (int32_t *)malloc(n * 4),
          *got = (int32_t *)malloc(100000 * 4);
  if (!h || !want || !got) {
    snprintf(g_fatal, sizeof g_fatal, "out of host memory");
    free(h); free(want); free(got);
    return false;
  }
  uint64_t s = 42 + n;
  /* the exercise's data: random ints, every other one negative, with repeats */
  for (size_t i = 0; i < n; i++) h[i] = (int32_t)(splitmix(&s) % 2000003) * (i % 2 ? 1 : -1);
  int32_t *d_in = NULL, *d_part = NULL, *d_out = NULL;
  cudaEvent_t a, b;
  bool ok = cudaMalloc(&d_in, n * 4) == cudaSuccess &&
            cudaMalloc(&d_part, (size_t)TREE_BLOCKS * 48 * 4) == cudaSuccess &&
            cudaMalloc(&d_out, 100000 * 4) == cudaSuccess &&
            cudaMemcpy(d_in, h, n * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess;
  if (!ok) snprintf(g_fatal, sizeof g_fatal, "CUDA setup failed for n = %zu", n);
  static const int ks[] = {1, 10, 32, 48, 1000, 100000};
  if (ok) cpu_sorted(h, n, want);
  for (int q = 0; ok && q < 6; q++) {
    const int k = ks[q];
    if ((size_t)k > n) continue;
    for (int step = 2; ok && step <= 3; step++) {
      if (step == 2 && k > 48) continue; /* the block tree's shared-memory limit */
      float best = 1e30f;
      for (int r = 0; ok && r < (o->check ? 1 : o->reps); r++) {
        ok = cudaEventRecord(a) == cudaSuccess;
        if (ok && step == 2) ok = insert_tree_dispatch(k, d_in, n, d_part, d_out);
        if (ok && step == 3) {
          pp_status st = pp_topk(ctx, PP_I32, d_in, n, (size_t)k, true, d_out, NULL);
          if (st != PP_OK) {
            snprintf(g_fatal, sizeof g_fatal, "pp_topk: %s", pp_last_error(ctx));
            ok = false;
          }
        }
        float ms = 0;
        ok = ok && LADDER_CUDA_OK(cudaEventRecord(b)) && LADDER_CUDA_OK(cudaEventSynchronize(b)) &&
             LADDER_CUDA_OK(cudaEventElapsedTime(&ms, a, b));
        if (ms < best) best = ms;
      }
      if (!ok) break;
      ok = cudaMemcpy(got, d_out, (size_t)k * 4, cudaMemcpyDeviceToHost) == cudaSuccess;
      const bool same = ok && memcmp(got, want, (size_t)k * 4) == 0;
      if (!same) (*mismatches)++;
      printf("step %d  %-34s n=%-11zu k=%-6d %9.4f ms  %s\n", step,
             step == 2 ? "per-thread insert + block tree" : "production: pp_topk (radix select)", n,
             k, o->check ? 0.0 : best, same ? "ok" : "MISMATCH");
    }
  }
  if (!ok && !g_fatal[0]) snprintf(g_fatal, sizeof g_fatal, "CUDA call failed (n = %zu)", n);
  cudaFree(d_in);
  cudaFree(d_part);
  cudaFree(d_out);
  free(h);
  free(want);
  free(got);
  return ok;
}

extern "C" int pp_ladder_topk_main(int argc, char **argv) {
  LadderArgs o = {(size_t)1 << 24, 10, false, false};
  const int early = ladder_early_exit(ladder_parse_args(argc, argv, "topk", SIZE_MAX / 4, false, &o),
                                     usage);
  if (early >= 0) return early;
  pp_context *ctx = NULL;
  if (pp_create(&ctx, PP_BACKEND_CUDA) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  printf("step 1  CPU reference: stable sort, first k (every check below compares with it)\n");
  int mismatches = 0;
  bool ok = true;
  if (o.check) {
    static const size_t sizes[] = {1, 47, 1000, 65537, (size_t)1 << 20};
    for (size_t s = 0; ok && s < sizeof sizes / sizeof sizes[0]; s++)
      ok = run_size(ctx, sizes[s], &o, &mismatches);
  } else {
    ok = run_size(ctx, o.n, &o, &mismatches);
  }
  pp_destroy(ctx);
  if (!ok) {
    if (g_fatal[0]) fprintf(stderr, "%s\n", g_fatal);
    return 1;
  }
  printf("%s\n", mismatches ? "MISMATCH" : "all steps agree with the CPU reference");
  return mismatches ? 1 : 0;
}

#ifdef PP_LADDER_STANDALONE
int main(int argc, char **argv) { return pp_ladder_topk_main(argc, argv); }
#endif
