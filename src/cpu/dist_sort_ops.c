/* dist_sort_ops.c — the per-rank passes of the distributed sample sort (src/dist/dist_sort.c)
 * on the CPU: a sample of order images, a counting pass over fine bins and a stable scatter
 * into buckets.
 *
 * A key is compared as the pair (image, global index): the image is the order image the
 * local sort uses (cpu.h, descending folded in by inverting it), the global index breaks
 * every tie, so all pairs are distinct and equal keys spread over buckets by position
 * (the exact tie-breaking that keeps skewed inputs balanced: Blelloch et al. 1991, "A
 * comparison of sorting algorithms for the Connection Machine CM-2", section 4).
 *
 * The counting pass splits the keys into contiguous chunks, one per part, and counts per
 * chunk how many keys fall in each fine bin (a binary search over the candidates); the
 * scatter turns those counts into each chunk's first position in every bucket (bucket-major,
 * chunk-minor: the order of a stable counting sort, Knuth TAOCP vol. 3, 5.2 "distribution
 * counting") and walks its chunk once more in order, so keys of one bucket keep their
 * input order.
 */
#include "cpu.h"
#include "dist_sort_ops.h"

#include <stdlib.h>

/* The image of the key at index i, as 64 bits, with descending folded in. */
static uint64_t key_image(pp_dtype t, pp_order order, const void *keys, size_t i) {
  uint64_t img;
  unsigned bits;
  switch (t) {
  case PP_U8: img = pp_cpu_okey_u8(pp_cpu_ld_u8(keys, i)); bits = 8; break;
  case PP_I32: img = pp_cpu_okey_i32(pp_cpu_ld_u32(keys, i)); bits = 32; break;
  case PP_U32: img = pp_cpu_okey_u32(pp_cpu_ld_u32(keys, i)); bits = 32; break;
  case PP_F32: img = pp_cpu_okey_f32(pp_cpu_ld_u32(keys, i)); bits = 32; break;
  case PP_I64: img = pp_cpu_okey_i64(pp_cpu_ld_u64(keys, i)); bits = 64; break;
  case PP_F64: img = pp_cpu_okey_f64(pp_cpu_ld_u64(keys, i)); bits = 64; break;
  default: img = pp_cpu_okey_u64(pp_cpu_ld_u64(keys, i)); bits = 64; break;
  }
  if (order == PP_DESCENDING) img ^= bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  return img;
}

/* How many of the ascending pairs (img[j], idx[j]), j < count, are <= (x, xi). */
static size_t pairs_at_most(const uint64_t *img, const uint64_t *idx, size_t count, uint64_t x,
                            uint64_t xi) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (img[mid] < x || (img[mid] == x && idx[mid] <= xi)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

pp_status pp_cpu_dsort_sample(pp_context *ctx, pp_dtype key_t, pp_order order, const void *keys,
                              const uint64_t *index, size_t count, uint64_t *images) {
  (void)ctx;
  for (size_t i = 0; i < count; i++) images[i] = key_image(key_t, order, keys, (size_t)index[i]);
  return PP_OK;
}

typedef struct cpu_dsort_plan {
  pp_dtype key_t;
  pp_order order;
  size_t n, ncand, parts;
  uint64_t first_index;
  uint64_t *cand; /* images [0, ncand), then indices [ncand, 2 ncand) */
  uint64_t *part_counts; /* [parts][ncand + 1] */
} cpu_dsort_plan;

void pp_cpu_dsort_plan_free(pp_context *ctx, void *plan) {
  (void)ctx;
  cpu_dsort_plan *p = (cpu_dsort_plan *)plan;
  if (!p) return;
  free(p->cand);
  free(p->part_counts);
  free(p);
}

pp_status pp_cpu_dsort_count(pp_context *ctx, pp_dtype key_t, pp_order order, const void *keys,
                             size_t n, uint64_t first_index, const uint64_t *cand_image,
                             const uint64_t *cand_index, size_t ncand, uint64_t *counts,
                             void **plan) {
  *plan = NULL;
  const size_t bins = ncand + 1;
  const size_t parts = (size_t)pp_cpu_threads_for(n, 1 << 16);
  if (ncand > SIZE_MAX / (2 * sizeof(uint64_t)) || bins > SIZE_MAX / sizeof(uint64_t) / parts)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: %zu candidates overflow size_t", ncand);
  cpu_dsort_plan *p = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(sizeof *p);
  if (p) {
    *p = (cpu_dsort_plan){.key_t = key_t, .order = order, .n = n, .ncand = ncand,
                          .parts = parts, .first_index = first_index};
    p->cand = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(2 * ncand * sizeof(uint64_t) + 1);
    p->part_counts = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc(parts * bins, sizeof(uint64_t));
  }
  if (!p || !p->cand || !p->part_counts) {
    pp_cpu_dsort_plan_free(ctx, p);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no memory for the partition counts");
  }
  memcpy(p->cand, cand_image, ncand * sizeof(uint64_t));
  memcpy(p->cand + ncand, cand_index, ncand * sizeof(uint64_t));
  const uint64_t *cimg = p->cand, *cidx = p->cand + ncand;

#pragma omp parallel for schedule(static, 1) num_threads((int)parts)
  for (long t = 0; t < (long)parts; t++) {
    uint64_t *c = p->part_counts + (size_t)t * bins;
    const size_t end = pp_cpu_part_begin(n, (size_t)t + 1, parts);
    for (size_t i = pp_cpu_part_begin(n, (size_t)t, parts); i < end; i++)
      c[pairs_at_most(cimg, cidx, ncand, key_image(key_t, order, keys, i), first_index + i)]++;
  }
  for (size_t f = 0; f < bins; f++) {
    uint64_t s = 0;
    for (size_t t = 0; t < parts; t++) s += p->part_counts[t * bins + f];
    counts[f] = s;
  }
  *plan = p;
  return PP_OK;
}

/* One element of `size` bytes from src[i] to dst[j]. */
static inline void move_elem(void *dst, size_t j, const void *src, size_t i, size_t size) {
  if (size == 1) pp_cpu_st_u8(dst, j, pp_cpu_ld_u8(src, i));
  else if (size == 4) pp_cpu_st_u32(dst, j, pp_cpu_ld_u32(src, i));
  else pp_cpu_st_u64(dst, j, pp_cpu_ld_u64(src, i));
}

pp_status pp_cpu_dsort_scatter(pp_context *ctx, void *plan, const void *keys, const void *values,
                               size_t value_size, const size_t *bin_first, size_t nbuckets,
                               void *const *key_dst, void *const *value_dst) {
  cpu_dsort_plan *p = (cpu_dsort_plan *)plan;
  const size_t bins = p->ncand + 1, parts = p->parts, key_size = pp_dtype_size(p->key_t);
  if (nbuckets > SIZE_MAX / sizeof(uint64_t) / parts || nbuckets > SIZE_MAX / (2 * sizeof(uint64_t)))
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: %zu buckets overflow size_t", nbuckets);
  /* next[t * nbuckets + b]: where part t writes its next key of bucket b */
  uint64_t *next = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(parts * nbuckets * sizeof(uint64_t) + 1);
  /* the splitters: bucket of x = how many of splitter 1..nbuckets-1 are <= x; a bucket whose
     first bin is 0 starts at the smallest pair (0, 0), one past the last bin at a pair no
     key reaches (no global index is UINT64_MAX) */
  uint64_t *split = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(2 * nbuckets * sizeof(uint64_t) + 1);
  if (!next || !split) {
    free(next);
    free(split);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no memory for the bucket offsets");
  }
  const size_t nsplit = nbuckets - 1;
  uint64_t *simg = split, *sidx = split + nbuckets;
  for (size_t b = 1; b < nbuckets; b++) {
    const size_t f = bin_first[b];
    simg[b - 1] = f == 0 ? 0 : f > p->ncand ? UINT64_MAX : p->cand[f - 1];
    sidx[b - 1] = f == 0 ? 0 : f > p->ncand ? UINT64_MAX : p->cand[p->ncand + f - 1];
  }
  for (size_t b = 0; b < nbuckets; b++) {
    uint64_t pos = 0;
    for (size_t t = 0; t < parts; t++) {
      next[t * nbuckets + b] = pos;
      for (size_t f = bin_first[b]; f < bin_first[b + 1]; f++) pos += p->part_counts[t * bins + f];
    }
  }
#pragma omp parallel for schedule(static, 1) num_threads((int)parts)
  for (long t = 0; t < (long)parts; t++) {
    uint64_t *nx = next + (size_t)t * nbuckets;
    const size_t end = pp_cpu_part_begin(p->n, (size_t)t + 1, parts);
    for (size_t i = pp_cpu_part_begin(p->n, (size_t)t, parts); i < end; i++) {
      const uint64_t img = key_image(p->key_t, p->order, keys, i);
      const size_t b = pairs_at_most(simg, sidx, nsplit, img, p->first_index + i);
      const size_t j = (size_t)nx[b]++;
      move_elem(key_dst[b], j, keys, i, key_size);
      if (values) move_elem(value_dst[b], j, values, i, value_size);
    }
  }
  free(next);
  free(split);
  return PP_OK;
}
