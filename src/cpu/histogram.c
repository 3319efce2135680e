/* histogram.c — pp_histogram_even, pp_histogram_range and pp_histogram_image on the CPU.
 *
 * Each thread counts a contiguous part of the input into its own counters; the counters
 * are then summed bin by bin (in parallel over bins). When the private copies would take
 * too much memory (many bins times many threads) the threads count with atomic increments
 * into one shared array instead. Below PP_CPU_PARALLEL_MIN one thread counts alone.
 *
 * Bin rules (API.md), shared with the CUDA backend so both give the same counts:
 *  - even: x counts when lo <= x < hi, compared as double; its bin is
 *    floor(((double)x - lo) * bins / (hi - lo)) evaluated in exactly that order in double,
 *    clamped to bins - 1. NaN inputs fail the comparison and are not counted.
 *    Wide ranges, where (hi - lo) * bins overflows double (lo = -1e308, hi = 1e308), would
 *    make that quotient inf / inf. There every operand is scaled by a power of two 2^-e
 *    (exact: IEEE 754 rounds the exact result, and scaling by 2^-e only moves the exponent),
 *    and x is placed between the scaled edges lo' + i * step', step' = (hi' - lo') / bins,
 *    each computed with one rounding (fma): the exact bin up to the rounding of an edge.
 *  - range: x counts in bin i when edges[i] <= x < edges[i + 1] (binary search).
 *  - image: counts[c][v] counts the value v in channel c of the interleaved pixels.
 */
#include "cpu.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Private counters per thread are used while they take at most this many bytes in all. */
#define HIST_PRIVATE_BYTES ((size_t)64 << 20)

typedef struct even_params {
  double lo, hi, width, binsd;
  size_t bins;
  /* wide ranges: scale (a power of two), the scaled lo and bin width */
  bool wide;
  double scale, lo_s, step_s;
} even_params;

static even_params make_even(size_t bins, double lo, double hi) {
  even_params p = {lo, hi, hi - lo, (double)bins, bins, false, 1.0, lo, 0.0};
  if (!(p.width * p.binsd <= DBL_MAX)) {
    /* |hi' - lo'| * bins < 2^1025 * 2^-e * 2^(ilogb(bins) + 1) <= 2^1023 */
    p.wide = true;
    p.scale = ldexp(1.0, -(ilogb(p.binsd) + 3));
    p.lo_s = lo * p.scale;
    p.step_s = (hi * p.scale - p.lo_s) / p.binsd;
  }
  return p;
}

/* The wide rule: a first guess from the quotient, then the bin whose scaled edges hold x
 * (edges are monotone in i, so the answer does not depend on the guess). */
static size_t even_bin_wide(const even_params *p, double v) {
  const double x = v * p->scale;
  double q = floor((x - p->lo_s) / p->step_s);
  if (!(q < p->binsd - 1.0)) q = p->binsd - 1.0;
  if (q < 0.0) q = 0.0;
  while (q > 0.0 && x < fma(q, p->step_s, p->lo_s)) q -= 1.0;
  while (q + 1.0 < p->binsd && x >= fma(q + 1.0, p->step_s, p->lo_s)) q += 1.0;
  return (size_t)q;
}

static inline int even_bin(const even_params *p, double v, size_t *bin) {
  if (!(v >= p->lo && v < p->hi)) return 0;
  if (p->wide) {
    *bin = even_bin_wide(p, v);
    return 1;
  }
  double b = floor((v - p->lo) * p->binsd / p->width);
  *bin = b < p->binsd - 1.0 ? (size_t)b : p->bins - 1;
  return 1;
}

/* Largest i with edges[i] <= v, for edges[0] <= v < edges[bins]. */
static inline int range_bin(const double *edges, size_t bins, double v, size_t *bin) {
  if (!(v >= edges[0] && v < edges[bins])) return 0;
  size_t lo = 0, hi = bins;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (v >= edges[mid])
      lo = mid;
    else
      hi = mid;
  }
  *bin = lo;
  return 1;
}

/* How a count is taken: private copies merged afterwards, or atomics on one array. */
typedef struct hist_plan {
  int parts;
  uint64_t *priv; /* parts * bins counters, or NULL: atomics on counts */
} hist_plan;

static pp_status plan_begin(pp_context *ctx, const char *fn, size_t n, size_t bins,
                            uint64_t *counts, hist_plan *plan) {
  plan->parts = n >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  if (plan->parts < 1) plan->parts = 1;
  plan->priv = NULL;
  /* the private counters first: a failed allocation must leave counts as they were */
  if (plan->parts > 1 && bins <= HIST_PRIVATE_BYTES / sizeof(uint64_t) / (size_t)plan->parts) {
    plan->priv = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc((size_t)plan->parts * bins, sizeof(uint64_t));
    if (!plan->priv)
      return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for %d private histograms",
                     fn, plan->parts);
  }
  memset(counts, 0, bins * sizeof *counts);
  return PP_OK;
}

/* Sums the private copies into counts, in parallel over bins. */
static void plan_end(hist_plan *plan, size_t bins, uint64_t *counts) {
  if (!plan->priv) return;
  const uint64_t *priv = plan->priv;
  const int parts = plan->parts;
#pragma omp parallel for schedule(static) if (bins >= 4096)
  for (size_t b = 0; b < bins; b++) {
    uint64_t s = 0;
    for (int p = 0; p < parts; p++) s += priv[(size_t)p * bins + b];
    counts[b] = s;
  }
  free(plan->priv);
  plan->priv = NULL;
}

/* The counting loop, stamped out per element type and bin rule. BIN(v, &bin) decides. A
 * thread without private counters increments counts atomically. */
#define PP_CPU_HIST(NAME, T, BIN_DECL, BIN)                                                 \
  static void hist_##NAME(const T *in, size_t n, BIN_DECL, size_t bins, uint64_t *counts,    \
                          const hist_plan *plan) {                                          \
    _Pragma("omp parallel num_threads(plan->parts) if (plan->parts > 1)")                   \
    {                                                                                       \
      size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();          \
      size_t lo = pp_cpu_part_begin(n, p, np), hi = pp_cpu_part_begin(n, p + 1, np);        \
      size_t bin;                                                                           \
      if (np == 1 || plan->priv) {                                                          \
        uint64_t *mine = plan->priv ? plan->priv + p * bins : counts;                       \
        for (size_t i = lo; i < hi; i++)                                                    \
          if (BIN((double)in[i], &bin)) mine[bin]++;                                        \
      } else {                                                                              \
        for (size_t i = lo; i < hi; i++)                                                    \
          if (BIN((double)in[i], &bin)) {                                                   \
            _Pragma("omp atomic") counts[bin]++;                                            \
          }                                                                                 \
      }                                                                                     \
    }                                                                                       \
  }

#define EVEN_BIN(v, b) even_bin(ep, (v), (b))
#define RANGE_BIN(v, b) range_bin(edges, bins, (v), (b))

#define PP_CPU_HIST_TYPE(NAME, T)                                                           \
  PP_CPU_HIST(even_##NAME, T, const even_params *ep, EVEN_BIN)                              \
  PP_CPU_HIST(range_##NAME, T, const double *edges, RANGE_BIN)

PP_CPU_HIST_TYPE(u8, uint8_t)
PP_CPU_HIST_TYPE(i32, int32_t)
PP_CPU_HIST_TYPE(u32, uint32_t)
PP_CPU_HIST_TYPE(i64, int64_t)
PP_CPU_HIST_TYPE(u64, uint64_t)
PP_CPU_HIST_TYPE(f32, float)
PP_CPU_HIST_TYPE(f64, double)

#define HIST_CASE(DT, NAME, KIND, RULE)                                                     \
  case DT:                                                                                  \
    hist_##KIND##_##NAME((const void *)in, n, RULE, bins, counts, &plan);                   \
    break;

#define HIST_SWITCH(KIND, RULE)                                                             \
  switch (t) {                                                                              \
    HIST_CASE(PP_U8, u8, KIND, RULE)                                                        \
    HIST_CASE(PP_I32, i32, KIND, RULE)                                                      \
    HIST_CASE(PP_U32, u32, KIND, RULE)                                                      \
    HIST_CASE(PP_I64, i64, KIND, RULE)                                                      \
    HIST_CASE(PP_U64, u64, KIND, RULE)                                                      \
    HIST_CASE(PP_F32, f32, KIND, RULE)                                                      \
    HIST_CASE(PP_F64, f64, KIND, RULE)                                                      \
  default: free(plan.priv); return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: dtype (%d)", fn, (int)t); \
  }

pp_status pp_cpu_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                size_t bins, double lo, double hi, uint64_t *counts) {
  static const char fn[] = "pp_histogram_even";
  even_params params = make_even(bins, lo, hi);
  const even_params *ep = &params;
  hist_plan plan;
  pp_status s = plan_begin(ctx, fn, n, bins, counts, &plan);
  if (s != PP_OK) return s;
  HIST_SWITCH(even, ep)
  plan_end(&plan, bins, counts);
  return PP_OK;
}

pp_status pp_cpu_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                 const double *edges, size_t bins, uint64_t *counts) {
  static const char fn[] = "pp_histogram_range";
  hist_plan plan;
  pp_status s = plan_begin(ctx, fn, n, bins, counts, &plan);
  if (s != PP_OK) return s;
  HIST_SWITCH(range, edges)
  plan_end(&plan, bins, counts);
  return PP_OK;
}

/* Rows are split among threads; each thread counts its rows into a private [channels][256]
 * block (a few KiB), and the blocks are summed at the end. */
pp_status pp_cpu_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width,
                                 size_t height, size_t pitch_bytes, int channels,
                                 uint64_t *counts) {
  const size_t bins = (size_t)channels * 256, row_bytes = width * (size_t)channels;
  int parts = row_bytes * height >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  if (parts < 1) parts = 1;
  if ((size_t)parts > height && height > 0) parts = (int)height;
  uint64_t *priv = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : calloc((size_t)(parts < 1 ? 1 : parts) * bins, sizeof(uint64_t));
  if (!priv)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_histogram_image: no host memory for counters");
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    size_t p = (size_t)omp_get_thread_num(), np = (size_t)omp_get_num_threads();
    size_t r0 = pp_cpu_part_begin(height, p, np), r1 = pp_cpu_part_begin(height, p + 1, np);
    uint64_t *mine = priv + p * bins;
    for (size_t r = r0; r < r1; r++) {
      const uint8_t *row = pixels + r * pitch_bytes;
      if (channels == 1) {
        for (size_t x = 0; x < width; x++) mine[row[x]]++;
      } else {
        for (size_t x = 0; x < row_bytes; x += (size_t)channels)
          for (int c = 0; c < channels; c++) mine[(size_t)c * 256 + row[x + (size_t)c]]++;
      }
    }
  }
  for (size_t b = 0; b < bins; b++) {
    uint64_t s = 0;
    for (int p = 0; p < parts; p++) s += priv[(size_t)p * bins + b];
    counts[b] = s;
  }
  free(priv);
  return PP_OK;
}
