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
  static void hist_##NAME(const void *in_, size_t n, const void *rule, size_t bins,          \
                          uint64_t *counts, const hist_plan *plan) {                        \
    const T *in = in_;                                                                      \
    BIN_DECL = rule;                                                                        \
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

PP_CPU_HIST_TYPE(u8, uint8_t) PP_CPU_HIST_TYPE(i32, int32_t) PP_CPU_HIST_TYPE(u32, uint32_t)
PP_CPU_HIST_TYPE(i64, int64_t) PP_CPU_HIST_TYPE(u64, uint64_t) PP_CPU_HIST_TYPE(f32, float)
PP_CPU_HIST_TYPE(f64, double)

typedef void (*hist_fn)(const void *in, size_t n, const void *rule, size_t bins,
                        uint64_t *counts, const hist_plan *plan);

/* Both histograms of one array: rule is the even_params (kind 0) or the edges (kind 1). */
static pp_status hist_run(pp_context *ctx, const char *fn, pp_dtype t, const void *in,
                          size_t n, int kind, const void *rule, size_t bins, uint64_t *counts) {
#define HIST_ROW(DT, NAME) {DT, {hist_even_##NAME, hist_range_##NAME}}
  static const struct {
    pp_dtype t;
    hist_fn f[2];
  } table[] = {HIST_ROW(PP_U8, u8),   HIST_ROW(PP_I32, i32), HIST_ROW(PP_U32, u32),
               HIST_ROW(PP_I64, i64), HIST_ROW(PP_U64, u64), HIST_ROW(PP_F32, f32),
               HIST_ROW(PP_F64, f64)};
#undef HIST_ROW
  hist_plan plan;
  pp_status s = plan_begin(ctx, fn, n, bins, counts, &plan);
  if (s != PP_OK) return s;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].t != t) continue;
    table[i].f[kind](in, n, rule, bins, counts, &plan);
    plan_end(&plan, bins, counts);
    return PP_OK;
  }
  free(plan.priv);
  return pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: dtype (%d)", fn, (int)t);
}

pp_status pp_cpu_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                size_t bins, double lo, double hi, uint64_t *counts) {
  const even_params params = make_even(bins, lo, hi);
  return hist_run(ctx, "pp_histogram_even", t, in, n, 0, &params, bins, counts);
}

pp_status pp_cpu_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                 const double *edges, size_t bins, uint64_t *counts) {
  return hist_run(ctx, "pp_histogram_range", t, in, n, 1, edges, bins, counts);
}

/* ---- image: u8 channels ------------------------------------------------------------
 * The loop is one load and one increment per byte, so what bounds it is the chain
 * load-counter, add, store-counter: a run of equal bytes (a flat region of an image) makes
 * each increment wait for the previous one's store to reach the next load. The counters
 * are therefore split four ways (IMG_WAYS sub-histograms, the pixel's position modulo 4
 * picking one), so consecutive equal pixels update four different counters: the usual
 * remedy of fast byte histograms (as in zstd's HIST_count_parallel_wksp, which keeps four
 * tables). The sub-histograms are 32-bit (about 4 KiB per channel: all of them stay in
 * L1) and are added into the thread's 64-bit totals after every band of rows, which holds
 * fewer than 2^30 pixels.
 * Threads take bands of rows dynamically (IMG_BANDS_PER_THREAD each), so a thread that
 * loses its core holds the others up by one band at most. One channel reads 8 pixels per
 * load; the channel count is a constant in each specialisation, so its loops unroll. */
#define IMG_WAYS 4
#define IMG_BANDS_PER_THREAD 8
#define IMG_BAND_PIXELS ((size_t)1 << 30) /* per band at most: 32-bit sub-counters */

/* [channel][way][value], each way padded by 64 bytes: counters 4 KiB apart would make a
 * load from one way look dependent on a store to another (4K aliasing, Intel's and AMD's
 * optimisation manuals), which serialises exactly the updates the ways keep apart. */
#define IMG_ROW (256 + 16)
typedef uint32_t img_sub[4][IMG_WAYS][IMG_ROW];

static inline void img_count_row1(img_sub sub, const uint8_t *row, size_t width) {
  size_t x = 0;
  for (; x + 8 <= width; x += 8) {
    uint64_t w;
    memcpy(&w, row + x, sizeof w); /* eight pixels; byte order does not matter to counts */
    sub[0][0][w & 0xff]++;
    sub[0][1][(w >> 8) & 0xff]++;
    sub[0][2][(w >> 16) & 0xff]++;
    sub[0][3][(w >> 24) & 0xff]++;
    sub[0][0][(w >> 32) & 0xff]++;
    sub[0][1][(w >> 40) & 0xff]++;
    sub[0][2][(w >> 48) & 0xff]++;
    sub[0][3][w >> 56]++;
  }
  for (; x < width; x++) sub[0][x % IMG_WAYS][row[x]]++;
}

/* channels > 1: pixel x goes to way x mod 4; C is a constant where this is inlined */
static inline void img_count_row(img_sub sub, const uint8_t *row, size_t width, int C) {
  size_t x = 0;
  for (; x + IMG_WAYS <= width; x += IMG_WAYS) {
    const uint8_t *p = row + x * (size_t)C;
    for (int k = 0; k < IMG_WAYS; k++)
      for (int c = 0; c < C; c++) sub[c][k][p[k * C + c]]++;
  }
  for (; x < width; x++)
    for (int c = 0; c < C; c++) sub[c][x % IMG_WAYS][row[x * (size_t)C + (size_t)c]]++;
}

static void img_count_rows(img_sub sub, const uint8_t *pixels, size_t pitch, size_t r0,
                           size_t r1, size_t width, int channels) {
  for (size_t r = r0; r < r1; r++) {
    const uint8_t *row = pixels + r * pitch;
    switch (channels) { /* one specialisation per channel count */
    case 1: img_count_row1(sub, row, width); break;
    case 2: img_count_row(sub, row, width, 2); break;
    case 3: img_count_row(sub, row, width, 3); break;
    default: img_count_row(sub, row, width, 4); break;
    }
  }
}

pp_status pp_cpu_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width,
                                 size_t height, size_t pitch_bytes, int channels,
                                 uint64_t *counts) {
  const size_t bins = (size_t)channels * 256, row_bytes = width * (size_t)channels;
  int threads = row_bytes * height >= PP_CPU_PARALLEL_MIN ? pp_cpu_threads() : 1;
  if (threads < 1) threads = 1;
  if ((size_t)threads > height && height > 0) threads = (int)height;
  size_t bands = threads > 1 ? (size_t)threads * IMG_BANDS_PER_THREAD : 1;
  if (bands > height) bands = height > 0 ? height : 1;
  const size_t rows_most = width > 0 ? IMG_BAND_PIXELS / width : height;
  if (rows_most > 0 && (height + bands - 1) / bands > rows_most)
    bands = (height + rows_most - 1) / rows_most;
  /* per thread: its sub-histograms, then its 64-bit totals */
  const size_t per_thread = PP_CPU_ALIGN64(sizeof(img_sub) + bins * sizeof(uint64_t));
  unsigned char *block = pp_alloc_fails(PP_ALLOC_HOST) ? NULL
                                                       : calloc((size_t)threads, per_thread);
  if (!block)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_histogram_image: no host memory for counters");
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    unsigned char *mine = block + (size_t)omp_get_thread_num() * per_thread;
    uint32_t(*sub)[IMG_WAYS][IMG_ROW] = (uint32_t(*)[IMG_WAYS][IMG_ROW])(void *)mine;
    uint64_t *total = (uint64_t *)(void *)(mine + sizeof(img_sub));
#pragma omp for schedule(dynamic, 1)
    for (size_t b = 0; b < bands; b++) {
      size_t r0 = pp_cpu_part_begin(height, b, bands), r1 = pp_cpu_part_begin(height, b + 1, bands);
      img_count_rows(sub, pixels, pitch_bytes, r0, r1, width, channels);
      for (int c = 0; c < channels; c++)
        for (size_t v = 0; v < 256; v++) {
          uint64_t s = 0;
          for (int k = 0; k < IMG_WAYS; k++) {
            s += sub[c][k][v];
            sub[c][k][v] = 0;
          }
          total[(size_t)c * 256 + v] += s;
        }
    }
  }
  for (size_t b = 0; b < bins; b++) {
    uint64_t s = 0;
    for (int t = 0; t < threads; t++)
      s += ((const uint64_t *)(const void *)(block + (size_t)t * per_thread + sizeof(img_sub)))[b];
    counts[b] = s;
  }
  free(block);
  return PP_OK;
}
