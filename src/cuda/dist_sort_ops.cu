/* dist_sort_ops.cu — the per-rank passes of the distributed sample sort
 * (src/dist/dist_sort.c) on the GPU; src/cpu/dist_sort_ops.c is their specification.
 *
 * A key is compared as the pair (order image, global index), the image being the local
 * radix sort's (sort.cuh: floats with -0.0 == +0.0 and NaN above +inf, descending
 * inverted), widened to 64 bits; the global index makes every pair distinct.
 *
 * Counting (ds_count_kernel): the keys are split into contiguous chunks, one per block; a
 * block counts its keys per fine bin (a binary search over the candidates, held in shared
 * memory) in a shared histogram — a warp whose keys all hit one bin adds once, so a sorted
 * or constant input does not serialise on one counter — and writes the histogram to its row of a blocks x bins table, summing it into the totals
 * the host reads.
 *
 * Scatter: ds_offsets_kernel turns the table into each block's first position in every
 * bucket (bucket b = the fine bins [bin_first[b], bin_first[b + 1])): for each bucket an
 * exclusive scan over the blocks, the order of a stable counting sort (Knuth, TAOCP vol. 3,
 * 5.2). ds_scatter_kernel then walks each chunk again, a tile at a time: each warp takes
 * 32 x ITEMS consecutive keys, finds each key's bucket by a binary search over the
 * nbuckets - 1 splitters, ranks it among the lanes of its warp with the same bucket
 * (one ballot per bit of the bucket number, and a population count below the lane), and the warps' counts are
 * scanned per bucket in warp order, so keys of one bucket are written in input order —
 * the ranking of a radix sort's digit pass with the bucket as the digit (Merrill &
 * Grimshaw 2011, "High performance and scalable radix sorting").
 */
#include "sort.cuh"

#include <stdlib.h>
#include <string.h>

#include "dist_sort_ops.h"

#define DS_THREADS 256
#define DS_WARPS (DS_THREADS / PP_WARP)
#define DS_ITEMS 8
#define DS_TILE ((size_t)DS_THREADS * DS_ITEMS)
#define DS_MAX_CAND 2048   /* candidates in shared memory (16 bytes each) */
#define DS_MAX_BUCKETS 512 /* ranks: per-warp bucket counts in shared memory */
#define DS_MAX_BLOCKS 1024 /* one thread per block in ds_offsets_kernel */
#define DS_BLOCKS_PER_SM 4

/* ---- kernels ------------------------------------------------------------------------------ */

template <typename U>
__device__ __forceinline__ uint64_t ds_image(U raw, pp_key_order<U> o) {
  return (uint64_t)pp_key_image<U>(raw, o);
}

/* How many of the ascending pairs (img[j], idx[j]), j < count, are <= (x, xi). */
__device__ __forceinline__ int ds_pairs_at_most(const uint64_t *img, const uint64_t *idx,
                                                int count, uint64_t x, uint64_t xi) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    const uint64_t c = img[mid];
    const bool le = c < x || (c == x && idx[mid] <= xi);
    lo = le ? mid + 1 : lo;
    hi = le ? hi : mid;
  }
  return lo;
}

/* The lanes of the warp whose bucket equals this lane's: one ballot per bit of the bucket
 * (bits of them), as the radix sorts rank a digit with ballots (Merrill & Grimshaw 2011);
 * for the few buckets of one node cheaper than __match_any_sync. */
__device__ __forceinline__ unsigned ds_same_bucket(int bucket, int bits) {
  unsigned same = 0xffffffffu;
  for (int b = 0; b < bits; b++) {
    const bool set = (bucket >> b) & 1;
    const unsigned ones = __ballot_sync(0xffffffffu, set);
    same &= set ? ones : ~ones;
  }
  return same;
}

template <typename U>
__global__ void ds_sample_kernel(const U *keys, const uint64_t *index, size_t count,
                                 uint64_t *images, pp_key_order<U> o) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) images[i] = ds_image<U>(keys[index[i]], o);
}

template <typename U>
__global__ void __launch_bounds__(DS_THREADS)
    ds_count_kernel(const U *keys, size_t n, uint64_t first, size_t chunk, const uint64_t *cand,
                    int ncand, uint32_t *block_counts, unsigned long long *totals,
                    pp_key_order<U> o) {
  __shared__ uint64_t s_img[DS_MAX_CAND];
  __shared__ uint64_t s_idx[DS_MAX_CAND];
  __shared__ uint32_t s_cnt[DS_MAX_CAND + 1];
  const int tid = threadIdx.x, lane = tid % PP_WARP;
  for (int i = tid; i < ncand; i += DS_THREADS) {
    s_img[i] = cand[i];
    s_idx[i] = cand[ncand + i];
  }
  for (int i = tid; i <= ncand; i += DS_THREADS) s_cnt[i] = 0;
  __syncthreads();
  const size_t begin = (size_t)blockIdx.x * chunk;
  const size_t end = begin < n ? (n - begin < chunk ? n : begin + chunk) : begin;
  for (size_t base = begin; base < end; base += DS_THREADS) {
    const size_t i = base + tid;
    const bool valid = i < end;
    const int bin = valid ? ds_pairs_at_most(s_img, s_idx, ncand, ds_image<U>(keys[i], o), first + i)
                          : -1;
    /* a warp whose keys all fall in one bin (sorted or constant input) adds once; other
       warps' keys rarely share a bin, so each adds its own */
    const int bin0 = __shfl_sync(0xffffffffu, bin, 0);
    if (__all_sync(0xffffffffu, bin == bin0)) {
      if (lane == 0 && bin0 >= 0) atomicAdd(&s_cnt[bin0], (uint32_t)PP_WARP);
    } else if (valid) {
      atomicAdd(&s_cnt[bin], 1u);
    }
  }
  __syncthreads();
  uint32_t *row = block_counts + (size_t)blockIdx.x * (size_t)(ncand + 1);
  for (int f = tid; f <= ncand; f += DS_THREADS) {
    const uint32_t c = s_cnt[f];
    row[f] = c;
    if (c) atomicAdd(&totals[f], (unsigned long long)c);
  }
}

/* base[k * nb + b] = keys of bucket b in blocks before k; one block of DS_MAX_BLOCKS
 * threads, thread k for block k. */
__global__ void __launch_bounds__(DS_MAX_BLOCKS)
    ds_offsets_kernel(const uint32_t *block_counts, int ncand, unsigned blocks,
                      const uint32_t *bin_first, int nb, unsigned long long *base) {
  __shared__ unsigned long long s[DS_MAX_BLOCKS];
  const unsigned k = threadIdx.x;
  for (int b = 0; b < nb; b++) {
    unsigned long long c = 0;
    if (k < blocks) {
      const uint32_t *row = block_counts + (size_t)k * (size_t)(ncand + 1);
      for (uint32_t f = bin_first[b]; f < bin_first[b + 1]; f++) c += row[f];
    }
    s[k] = c;
    __syncthreads();
    for (unsigned d = 1; d < DS_MAX_BLOCKS; d *= 2) { /* Hillis-Steele inclusive scan */
      const unsigned long long v = k >= d ? s[k - d] : 0ull;
      __syncthreads();
      s[k] += v;
      __syncthreads();
    }
    if (k < blocks) base[(size_t)k * nb + b] = s[k] - c;
    __syncthreads();
  }
}

/* The scatter's per-call table in device memory: splitters (image, index) of buckets
 * 1..nb-1, then the keys' and the values' destination of each bucket. */
struct ds_scatter_table {
  const uint64_t *split_img, *split_idx;
  const unsigned long long *key_dst, *value_dst; /* device addresses */
};

template <typename U, typename V, bool HAS_V>
__global__ void __launch_bounds__(DS_THREADS)
    ds_scatter_kernel(const U *keys, const V *values, size_t n, uint64_t first, size_t chunk,
                      ds_scatter_table t, int nb, const unsigned long long *base,
                      pp_key_order<U> o) {
  __shared__ uint64_t s_img[DS_MAX_BUCKETS];
  __shared__ uint64_t s_idx[DS_MAX_BUCKETS];
  __shared__ U *s_kdst[DS_MAX_BUCKETS];
  __shared__ V *s_vdst[HAS_V ? DS_MAX_BUCKETS : 1];
  __shared__ unsigned long long s_run[DS_MAX_BUCKETS]; /* this block's next position */
  __shared__ uint32_t s_tile[DS_MAX_BUCKETS];          /* this tile's keys per bucket */
  __shared__ uint32_t s_warp[DS_WARPS][DS_MAX_BUCKETS]; /* per warp: count, then start */
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  const int nsplit = nb - 1;
  for (int b = tid; b < nb; b += DS_THREADS) {
    if (b < nsplit) {
      s_img[b] = t.split_img[b];
      s_idx[b] = t.split_idx[b];
    }
    s_kdst[b] = (U *)t.key_dst[b];
    if constexpr (HAS_V) s_vdst[b] = (V *)t.value_dst[b];
    s_run[b] = base[(size_t)blockIdx.x * nb + b];
    for (int w = 0; w < DS_WARPS; w++) s_warp[w][b] = 0;
  }
  __syncthreads();
  const unsigned below = (1u << lane) - 1u;
  const int bits = 32 - __clz(nb); /* bucket values 0..nb (nb: past the end) */
  const size_t begin = (size_t)blockIdx.x * chunk;
  const size_t end = begin < n ? (n - begin < chunk ? n : begin + chunk) : begin;
  for (size_t t0 = begin; t0 < end; t0 += DS_TILE) {
    U k[DS_ITEMS];
    V v[DS_ITEMS];
    int bk[DS_ITEMS];
    unsigned same[DS_ITEMS];
    const size_t w0 = t0 + (size_t)warp * PP_WARP * DS_ITEMS + lane;
#pragma unroll
    for (int j = 0; j < DS_ITEMS; j++) {
      const size_t i = w0 + (size_t)j * PP_WARP;
      bk[j] = nb; /* past the end: no bucket */
      k[j] = 0;
      v[j] = 0;
      if (i < end) {
        k[j] = keys[i];
        if constexpr (HAS_V) v[j] = values[i];
        bk[j] = ds_pairs_at_most(s_img, s_idx, nsplit, ds_image<U>(k[j], o), first + i);
      }
      same[j] = ds_same_bucket(bk[j], bits);
      if (bk[j] < nb && lane == __ffs(same[j]) - 1) s_warp[warp][bk[j]] += __popc(same[j]);
      __syncwarp();
    }
    __syncthreads();
    for (int b = tid; b < nb; b += DS_THREADS) { /* warps' starts within the tile */
      uint32_t acc = 0;
      for (int w = 0; w < DS_WARPS; w++) {
        const uint32_t c = s_warp[w][b];
        s_warp[w][b] = acc;
        acc += c;
      }
      s_tile[b] = acc;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < DS_ITEMS; j++) {
      const bool valid = bk[j] < nb;
      unsigned long long pos = 0;
      if (valid) pos = s_run[bk[j]] + s_warp[warp][bk[j]] + (unsigned)__popc(same[j] & below);
      __syncwarp();
      if (valid && lane == __ffs(same[j]) - 1) s_warp[warp][bk[j]] += __popc(same[j]);
      __syncwarp();
      if (valid) {
        s_kdst[bk[j]][pos] = k[j];
        if constexpr (HAS_V) s_vdst[bk[j]][pos] = v[j];
      }
    }
    __syncthreads();
    for (int b = tid; b < nb; b += DS_THREADS) {
      s_run[b] += s_tile[b];
      for (int w = 0; w < DS_WARPS; w++) s_warp[w][b] = 0;
    }
    __syncthreads();
  }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* The rank's part of the call: its keys' type and order, their count and the global
 * index of the first. */
struct ds_keys {
  pp_dtype key_t;
  pp_order order;
  size_t n;
  uint64_t first;
};

struct ds_plan {
  ds_keys keys;
  size_t ncand, chunk;          /* candidates; keys per block */
  unsigned blocks;
  uint64_t *host_cand;          /* images [0, ncand), indices [ncand, 2 ncand) */
  char *dev;                    /* one scratch block: */
  uint64_t *cand;               /*   the candidates, as host_cand */
  uint32_t *block_counts;       /*   [blocks][ncand + 1] */
  unsigned long long *totals;   /*   [ncand + 1] */
};

static size_t ds_align(size_t x) { return (x + 255) & ~(size_t)255; }

extern "C" pp_status pp_cuda_dsort_sample(pp_context *ctx, pp_dtype key_t, pp_order order,
                                          const void *keys, const uint64_t *index, size_t count,
                                          uint64_t *images) {
  pp_cuda_state *st = pp_cuda(ctx);
  if (count == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  if (count > SIZE_MAX / 16) return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: %zu samples", count);
  uint64_t *dev = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&dev, 2 * count * sizeof(uint64_t));
  if (s != PP_OK) return s;
  s = ctx->ops->copy(ctx, dev, index, count * sizeof(uint64_t));
  if (s == PP_OK) {
    const unsigned grid = (unsigned)((count + 255) / 256);
    switch (pp_dtype_size(key_t)) {
    case 1:
      ds_sample_kernel<uint8_t><<<grid, 256, 0, st->stream>>>(
          (const uint8_t *)keys, dev, count, dev + count, pp_make_key_order<uint8_t>(key_t, order));
      break;
    case 4:
      ds_sample_kernel<uint32_t><<<grid, 256, 0, st->stream>>>(
          (const uint32_t *)keys, dev, count, dev + count, pp_make_key_order<uint32_t>(key_t, order));
      break;
    default:
      ds_sample_kernel<uint64_t><<<grid, 256, 0, st->stream>>>(
          (const uint64_t *)keys, dev, count, dev + count, pp_make_key_order<uint64_t>(key_t, order));
      break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  }
  if (s == PP_OK) s = ctx->ops->copy(ctx, images, dev + count, count * sizeof(uint64_t));
  ctx->ops->temp_free(ctx, dev);
  return s;
}

extern "C" void pp_cuda_dsort_plan_free(pp_context *ctx, void *plan) {
  ds_plan *p = (ds_plan *)plan;
  if (!p) return;
  if (p->dev) ctx->ops->temp_free(ctx, p->dev);
  free(p->host_cand);
  free(p);
}

/* The counting pass over the rank's keys, as words U. */
template <typename U>
static cudaError_t ds_launch_count(pp_cuda_state *st, const ds_plan *p, const void *keys) {
  ds_count_kernel<U><<<p->blocks, DS_THREADS, 0, st->stream>>>(
      (const U *)keys, p->keys.n, p->keys.first, p->chunk, p->cand, (int)p->ncand,
      p->block_counts, p->totals, pp_make_key_order<U>(p->keys.key_t, p->keys.order));
  return cudaGetLastError();
}

extern "C" pp_status pp_cuda_dsort_count(pp_context *ctx, pp_dtype key_t, pp_order order,
                                         const void *keys, size_t n, uint64_t first_index,
                                         const uint64_t *cand_image, const uint64_t *cand_index,
                                         size_t ncand, uint64_t *counts, void **plan) {
  pp_cuda_state *st = pp_cuda(ctx);
  *plan = NULL;
  if (ncand == 0 || ncand > DS_MAX_CAND)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_sort: %zu splitter candidates (the GPU passes "
                   "take 1 to %d)", ncand, DS_MAX_CAND);
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  size_t blocks = (n + DS_TILE - 1) / DS_TILE;
  const size_t most = (size_t)st->sm_count * DS_BLOCKS_PER_SM < DS_MAX_BLOCKS
                          ? (size_t)st->sm_count * DS_BLOCKS_PER_SM : DS_MAX_BLOCKS;
  blocks = blocks < most ? blocks : most;
  blocks = blocks ? blocks : 1;
  size_t chunk = (n + blocks - 1) / blocks;
  chunk = chunk ? (chunk + DS_TILE - 1) / DS_TILE * DS_TILE : DS_TILE; /* n == 0: one empty block */
  if (chunk > UINT32_MAX)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_sort: %zu keys on one rank need more than %d "
                   "blocks of 2^32 keys", n, DS_MAX_BLOCKS);
  blocks = (n + chunk - 1) / chunk;
  blocks = blocks ? blocks : 1;

  ds_plan *p = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (ds_plan *)calloc(1, sizeof *p);
  if (p) p->host_cand = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (uint64_t *)malloc(2 * ncand * sizeof(uint64_t));
  if (!p || !p->host_cand) {
    pp_cuda_dsort_plan_free(ctx, p);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no host memory for the partition plan");
  }
  p->keys = ds_keys{key_t, order, n, first_index};
  p->ncand = ncand;
  p->chunk = chunk;
  p->blocks = (unsigned)blocks;
  memcpy(p->host_cand, cand_image, ncand * sizeof(uint64_t));
  memcpy(p->host_cand + ncand, cand_index, ncand * sizeof(uint64_t));

  const size_t bins = ncand + 1;
  const size_t off_counts = ds_align(2 * ncand * sizeof(uint64_t));
  const size_t off_totals = ds_align(off_counts + blocks * bins * sizeof(uint32_t));
  const size_t total = off_totals + bins * sizeof(unsigned long long);
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&p->dev, total);
  if (s != PP_OK) {
    p->dev = NULL;
    pp_cuda_dsort_plan_free(ctx, p);
    return s;
  }
  p->cand = (uint64_t *)p->dev;
  p->block_counts = (uint32_t *)(p->dev + off_counts);
  p->totals = (unsigned long long *)(p->dev + off_totals);
  s = ctx->ops->copy(ctx, p->cand, p->host_cand, 2 * ncand * sizeof(uint64_t));
  cudaError_t e = cudaSuccess;
  if (s == PP_OK) e = cudaMemsetAsync(p->totals, 0, bins * sizeof(unsigned long long), st->stream);
  if (s == PP_OK && e == cudaSuccess) {
    switch (pp_dtype_size(key_t)) {
    case 1: e = ds_launch_count<uint8_t>(st, p, keys); break;
    case 4: e = ds_launch_count<uint32_t>(st, p, keys); break;
    default: e = ds_launch_count<uint64_t>(st, p, keys); break;
    }
  }
  if (s == PP_OK && e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "64-bit totals");
  if (s == PP_OK) s = ctx->ops->copy(ctx, counts, p->totals, bins * sizeof(uint64_t));
  if (s != PP_OK) {
    pp_cuda_dsort_plan_free(ctx, p);
    return s;
  }
  *plan = p;
  return PP_OK;
}

template <typename U, typename V, bool HAS_V>
static cudaError_t ds_launch_scatter(pp_cuda_state *st, const ds_plan *p, const void *keys,
                                     const void *values, ds_scatter_table t, int nb,
                                     const unsigned long long *base) {
  ds_scatter_kernel<U, V, HAS_V><<<p->blocks, DS_THREADS, 0, st->stream>>>(
      (const U *)keys, (const V *)values, p->keys.n, p->keys.first, p->chunk, t, nb, base,
      pp_make_key_order<U>(p->keys.key_t, p->keys.order));
  return cudaGetLastError();
}

template <typename U>
static cudaError_t ds_launch_scatter_values(pp_cuda_state *st, const ds_plan *p, const void *keys,
                                            const void *values, size_t value_size,
                                            ds_scatter_table t, int nb,
                                            const unsigned long long *base) {
  if (!values) return ds_launch_scatter<U, uint32_t, false>(st, p, keys, NULL, t, nb, base);
  if (value_size == 4) return ds_launch_scatter<U, uint32_t, true>(st, p, keys, values, t, nb, base);
  return ds_launch_scatter<U, uint64_t, true>(st, p, keys, values, t, nb, base);
}

extern "C" pp_status pp_cuda_dsort_scatter(pp_context *ctx, void *plan, const void *keys,
                                           const void *values, size_t value_size,
                                           const size_t *bin_first, size_t nbuckets,
                                           void *const *key_dst, void *const *value_dst) {
  pp_cuda_state *st = pp_cuda(ctx);
  const ds_plan *p = (const ds_plan *)plan;
  if (nbuckets == 0 || nbuckets > DS_MAX_BUCKETS)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED, "pp_sort: %zu ranks (the GPU passes take up to %d)",
                   nbuckets, DS_MAX_BUCKETS);
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  const size_t nb = nbuckets;
  /* the table, built on the host and uploaded once: splitter images, splitter indices, key
     destinations, value destinations (nb words each), then bin_first as 32-bit words */
  const size_t words = 4 * nb + (nb + 2) / 2;
  uint64_t *h = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (uint64_t *)calloc(words, sizeof(uint64_t));
  if (!h) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no host memory for the scatter table");
  for (size_t b = 1; b < nb; b++) {
    const size_t f = bin_first[b];
    /* a bucket whose first bin is 0 starts at the smallest pair; one whose first bin is past
       the last starts at a pair no key reaches (no global index is UINT64_MAX) */
    h[b - 1] = f == 0 ? 0 : f > p->ncand ? UINT64_MAX : p->host_cand[f - 1];
    h[nb + b - 1] = f == 0 ? 0 : f > p->ncand ? UINT64_MAX : p->host_cand[p->ncand + f - 1];
  }
  for (size_t b = 0; b < nb; b++) {
    h[2 * nb + b] = (uint64_t)(uintptr_t)key_dst[b];
    h[3 * nb + b] = values ? (uint64_t)(uintptr_t)value_dst[b] : 0;
  }
  uint32_t *h_first = (uint32_t *)(h + 4 * nb);
  for (size_t b = 0; b <= nb; b++) h_first[b] = (uint32_t)bin_first[b];

  char *dev = NULL;
  const size_t off_base = ds_align(words * sizeof(uint64_t));
  pp_status s = ctx->ops->temp_alloc(ctx, (void **)&dev, off_base + (size_t)p->blocks * nb * 8);
  if (s != PP_OK) {
    free(h);
    return s;
  }
  s = ctx->ops->copy(ctx, dev, h, words * sizeof(uint64_t));
  free(h);
  const uint64_t *d = (const uint64_t *)dev;
  unsigned long long *base = (unsigned long long *)(dev + off_base);
  ds_scatter_table t;
  t.split_img = d;
  t.split_idx = d + nb;
  t.key_dst = (const unsigned long long *)(d + 2 * nb);
  t.value_dst = (const unsigned long long *)(d + 3 * nb);
  cudaError_t e = cudaSuccess;
  if (s == PP_OK) {
    ds_offsets_kernel<<<1, DS_MAX_BLOCKS, 0, st->stream>>>(p->block_counts, (int)p->ncand, p->blocks,
                                                           (const uint32_t *)(d + 4 * nb), (int)nb, base);
    e = cudaGetLastError();
  }
  if (s == PP_OK && e == cudaSuccess && p->keys.n > 0) {
    switch (pp_dtype_size(p->keys.key_t)) {
    case 1: e = ds_launch_scatter_values<uint8_t>(st, p, keys, values, value_size, t, (int)nb, base); break;
    case 4: e = ds_launch_scatter_values<uint32_t>(st, p, keys, values, value_size, t, (int)nb, base); break;
    default: e = ds_launch_scatter_values<uint64_t>(st, p, keys, values, value_size, t, (int)nb, base); break;
    }
  }
  if (s == PP_OK && e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  ctx->ops->temp_free(ctx, dev);
  return s;
}
