/* topk.cu — pp_topk and pp_topk_rows on the GPU: radix selection.
 *
 * Order. Every element gets a "composite" key: its ordered image (sort.cuh's rules: floats
 * by value with -0.0 == +0.0 and every NaN above +inf; signed with the sign bit flipped;
 * all bits inverted for the k smallest) in the high bits, and its index inverted in the
 * low IB bits (IB = 32 when the index fits, else 64). Composites are unique, and the k
 * largest composites are exactly the answer: the k largest (smallest) values, NaN counted
 * as largest, ties taken by lowest index, in order. Values are written from the input by
 * index, so a -0.0 stays -0.0 and a NaN keeps its payload.
 *
 * Selection. The composite is read from its top in digits of 11 bits (2048 bins). S_L is
 * the set of elements whose first L digits equal the chosen prefix d_1..d_L; S_0 is all.
 * A pass at level L reads a superset of S_{L-1} (the input filtered by prefix, or a buffer
 * holding S_{L-1}), writes out ("sure") the elements whose digit L is above d_L, histograms
 * digit L+1 over S_L (shared-memory counters, one atomic per distinct bin per warp via
 * __match_any_sync) and, when S_L is small enough, copies it to a buffer so that the next
 * pass reads |S_L| elements instead of n. The histogram gives d_{L+1}: the bin holding the
 * k_rem-th largest. When S_L fits in one block (FIN_SCAP), the selection finishes there:
 * one block sorts S_L and keeps its top k_rem. When the bin holding the k_rem-th is taken
 * whole, the next pass only writes.
 *
 * One array, n large: every pass is one multi-block launch; its last block (ticket)
 * resolves the digit and updates a small state in device memory, so the host queues all
 * passes without waiting (passes after the selection has finished return at once). For
 * f32 with random data: pass 1 reads n (histogram), pass 2 reads n (writes S_1, about a
 * sixteenth), pass 3 reads S_1, and the finishing block sorts a few thousand composites.
 * The k results are then sorted by composite: in the finishing block for small k, else
 * with pp_sort (sort.cu) — one sort of 64-bit composites, or for 128-bit composites a
 * sort by index followed by a stable sort of the values.
 *
 * Rows (and small arrays): one block per row does the same passes itself: the row is read
 * from global memory (re-reads mostly hit L2), S_L moves to shared memory as soon as it
 * fits, and the final candidates and sure elements are sorted in shared memory (bitonic).
 * Rows whose k does not fit shared memory fall back to the one-array path, row by row.
 *
 * Sampled threshold. Those passes cost a full histogram each; when k is
 * small beside n, a strided sample picks a threshold composite that a few times k
 * elements reach, one read of the input (or row) keeps those, and the passes above run on
 * them instead; when the sample misled (fewer than k, or more than the buffers, reach the
 * threshold) they run on the input instead. One array of n >= 2^22: one sample block,
 * a filter over the grid, the multi-block passes. Rows of cols >= 16384, and one array of
 * 16384 < n < 2^22 (as one row): a grid of (row, segment) blocks filters into slots of
 * their own, then the row kernel gathers each row's slots into shared memory (few rows
 * are cut into several segments, so that the grid fills the GPU). See "sampled threshold"
 * below.
 */
#include "topk.cuh"
#include "topk_pass.cuh"
#include "topk_sample.cuh"
#include "topk_rows.cuh"

#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

/* ==================================================================================== */
/* Host side                                                                             */
/* ==================================================================================== */

/* The knobs below keep the defaults written here unless a test or a probe sets them
 * through pp_test_control(PP_TESTCTL_TOPK_KNOB, ...) (src/core/testctl.h), to time the
 * routes side by side in one build. The library reads no environment variable for them.
 *
 * PP_TOPK_KNOB_HIST (0, 1, 2) overrides the histogram method; rows use 0 or 1 (their
 * shared memory has room for one copy of the counters). */
static int hist_mode(void) { return pp_topk_knob_value(PP_TOPK_KNOB_HIST, PP_TOPK_HIST, 0, 2); }
static int row_hist_mode(void) { return hist_mode() == 1 ? 1 : 0; }

/* PP_TOPK_KNOB_SAMPLED = 0 turns the sampled-threshold paths off at run time (to time the
 * radix-only code in the same build). */
static bool sampled_on(void) { return pp_topk_knob_value(PP_TOPK_KNOB_SAMPLED, 1, 0, 1) != 0; }

/* PP_TOPK_KNOB_SEG_BPS: the segment grid's blocks per SM when rows are few (default: as
 * many as are resident; 0 turns the segment route off, to time the other routes in the
 * same build); PP_TOPK_KNOB_GMAX: the one-array sample kernel's samples per thread at most
 * (1..16). */
#define SEG_BPS_AUTO 1000u
static unsigned seg_bps_env(void) {
  return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_SEG_BPS, (int)SEG_BPS_AUTO, 0, 64);
}
static unsigned sample_gmax(void) {
  return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_GMAX, SAMPLE_GMAX, 1, SAMPLE_GMAX);
}
/* PP_TOPK_KNOB_ROW_GMAX: samples per thread of the segment route for rows, at most
 * (1..16) */
static unsigned row_gmax(void) { return (unsigned)pp_topk_knob_value(PP_TOPK_KNOB_ROW_GMAX, 4, 1, 16); }
/* Samples in runs of one sector (sample_threshold); PP_TOPK_KNOB_RUNS = 0: one sample per
 * sector (to time both in one build). */
static bool sample_runs(void) { return pp_topk_knob_value(PP_TOPK_KNOB_RUNS, 1, 0, 1) != 0; }
/* The row kernel starts its passes over gathered candidates at the first digit where
 * they differ; PP_TOPK_KNOB_SKIP = 0 turns that off (to time both in one build). */
static bool row_skip(void) { return pp_topk_knob_value(PP_TOPK_KNOB_SKIP, 1, 0, 1) != 0; }

static inline uint64_t flip_of(int key_bits, bool largest) {
  if (largest) return 0;
  return key_bits == 64 ? ~0ull : ((1ull << key_bits) - 1);
}

static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Row kernel configuration for (cols, k) and composite size cs: false when k does not
 * fit shared memory. mcap_want > 0: M is that size (the gathered candidates, with room to
 * spare), so that more blocks share an SM; false when it does not fit. 0: M takes what
 * the budget leaves. */
struct rows_plan {
  int threads;
  unsigned fcap, mcap;
  size_t smem;
};

static bool plan_rows(size_t cols, size_t k, size_t cs, size_t mcap_want, rows_plan *p) {
  const size_t fcap = pow2_at_least(k + ROW_SMALL);
  const size_t hist = BINS * sizeof(unsigned);
  const bool big = cols >= 65536 || fcap * cs > 24 * 1024;
  const size_t budget = big ? 200 * 1024 : 56 * 1024;
  if (hist + fcap * cs > budget) return false;
  size_t mcap = (budget - hist - fcap * cs) / cs;
  if (mcap_want) {
    if (mcap_want > mcap) return false;
    mcap = mcap_want;
  }
  if (mcap > cols) mcap = cols;
  p->threads = big ? 1024 : 256;
  p->fcap = (unsigned)fcap;
  p->mcap = (unsigned)mcap;
  p->smem = hist + (fcap + mcap) * cs;
  return true;
}

template <typename T, int IB, int THREADS>
static pp_status launch_rows_t(pp_context *ctx, const char *fn, const T *in, size_t rows,
                               size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                               const rows_plan &p, row_gather<typename comp<T, IB>::CT> src) {
  pp_cuda_state *st = pp_cuda(ctx);
  void (*kern)(const T *, size_t, size_t, uint64_t, T *, uint64_t *, unsigned, unsigned, int, bool,
               row_gather<typename comp<T, IB>::CT>) = topk_rows_kernel<T, IB, THREADS>;
  static pp_fit_cache fit;
  PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, kern, p.smem), fn);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  for (size_t r0 = 0; r0 < rows; r0 += 0x7FFFFFFF) { /* grid x is at most 2^31 - 1 */
    const size_t nr = rows - r0 < 0x7FFFFFFF ? rows - r0 : 0x7FFFFFFF;
    row_gather<typename comp<T, IB>::CT> s = src;
    if (s.cand) {
      s.cand += r0 * s.P * (size_t)s.cap;
      s.counts += r0 * s.P;
    }
    kern<<<(unsigned)nr, THREADS, p.smem, st->stream>>>(in + r0 * cols, cols, k, flip,
                                                        vals + r0 * k, idxs ? idxs + r0 * k : NULL,
                                                        p.fcap, p.mcap, row_hist_mode(), row_skip(), s);
    PP_CUDA_LAUNCHED(ctx, fn);
  }
  return PP_OK;
}

template <typename T, int IB>
static pp_status launch_rows(pp_context *ctx, const char *fn, const T *in, size_t rows,
                             size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                             const rows_plan &p, row_gather<typename comp<T, IB>::CT> src) {
  if (p.threads == 1024)
    return launch_rows_t<T, IB, 1024>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, src);
  return launch_rows_t<T, IB, 256>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, src);
}

/* A sampled threshold for k of n with THREADS threads taking g samples each: the largest
 * g <= gmax with S = THREADS g <= n and r <= THREADS / 4 (few collisions of group maxima).
 * r = ceil(x + 4 sqrt(x) + 2), x = k S / n the expected samples among the top k: fewer
 * than k elements reach the r-th sample only far out in the tail (the count is about
 * Gamma(r) n / S; for x below 1, P ~ x^r / r!). m: the candidates expected, r n / S with
 * the collisions of the group maxima (about r^2 / 2 THREADS more ranks) added. */
struct sample_plan {
  unsigned g, r;
  double m;
};

static inline bool plan_sample(size_t n, size_t k, unsigned threads, unsigned gmax,
                               sample_plan *sp) {
  for (unsigned g = gmax; g >= 1; g /= 2) {
    const double S = (double)threads * g;
    if (S > (double)n) continue;
    const double x = (double)k * S / (double)n;
    const double r = ceil(x + 4.0 * sqrt(x) + 2.0);
    if (r > threads / 4) continue;
    sp->g = g;
    sp->r = (unsigned)r;
    sp->m = (r + (g > 1 ? r * r / (2.0 * threads) : 0.0)) * (double)n / S;
    return true;
  }
  return false;
}

/* The segment route (topk_seg_kernel, then topk_rows_kernel gathering): P segments per
 * row, slots of cap, rows in batches of `batch` (the slots' memory), the row kernel's
 * plan with M sized for twice the expected candidates. */
struct seg_plan {
  sample_plan s;
  unsigned P, cap;
  size_t seg_len, batch;
  rows_plan k2;
};

static bool plan_seg(size_t rows, size_t cols, size_t k, size_t cs, size_t es, bool one_array,
                     size_t blocks, const void *in, seg_plan *sp) {
  if (!sampled_on() || blocks == 0 || cols < SEG_MIN_COLS || cols > 0x7FFFFFFFull ||
      (uintptr_t)in % es != 0)
    return false;
  /* one array: a larger sample per block (its P blocks are the only ones); rows: 1024
   * samples, a quarter of a 32768-float row's sectors */
  if (!plan_sample(cols, k, SEG_THREADS, one_array ? 16 : row_gmax(), &sp->s)) return false;
  const double want = 2.0 * sp->s.m + 256.0;
  if (want > (double)cols / 2) return false;
  const size_t mcap = (size_t)want;
  if (mcap < k || !plan_rows(cols, k, cs, mcap, &sp->k2)) return false;
  /* few rows: split them so that one wave of resident blocks (blocks) has work, and no
   * second wave is started for a few */
  size_t P = blocks / rows;
  if (P > cols / SEG_MIN_LEN) P = cols / SEG_MIN_LEN;
  if (P < 1) P = 1;
  sp->seg_len = cols;
  if (P > 1) {
    sp->seg_len = align_up(pp_ceil_div(cols, P), SEG_ALIGN);
    P = pp_ceil_div(cols, sp->seg_len);
  }
  if (P >= BINS) return false; /* the gather keeps P + 1 offsets in the histogram */
  sp->P = (unsigned)P;
  /* a slot holds what the whole row is expected to give: a sorted row gives it all in one */
  sp->cap = (unsigned)(mcap < sp->seg_len ? mcap : sp->seg_len);
  size_t batch = SEG_SLOT_BYTES / (P * ((size_t)sp->cap * cs + sizeof(unsigned)));
  if (batch < 1) batch = 1;
  if (batch > rows) batch = rows;
  if (batch * P > 0x7FFFFFFFull) batch = 0x7FFFFFFFull / P;
  sp->batch = batch;
  return true;
}

/* Blocks of topk_seg_kernel resident per SM (PP_TOPK_KNOB_SEG_BPS overrides; 0: the
 * route is off). */
template <typename T, int IB>
static unsigned seg_blocks_per_sm(pp_cuda_state *st) {
  const unsigned env = seg_bps_env();
  if (env != SEG_BPS_AUTO) return env;
  static pp_fit_cache fit;
  return (unsigned)pp_fit_blocks(st, &fit, topk_seg_kernel<T, IB>, SEG_THREADS, 0, 4);
}

template <typename T, int IB>
static pp_status topk_segmented(pp_context *ctx, const char *fn, const T *in, size_t rows,
                                size_t cols, size_t k, bool largest, T *vals, uint64_t *idxs,
                                const seg_plan &sp) {
  typedef typename comp<T, IB>::CT CT;
  pp_cuda_state *cs = pp_cuda(ctx);
  const size_t nslot = sp.batch * sp.P;
  const size_t o_counts = align_up(nslot * sp.cap * sizeof(CT), 256);
  void *mem = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &mem, o_counts + nslot * sizeof(unsigned));
  if (s != PP_OK) return s;
  CT *cand = (CT *)mem;
  unsigned *counts = (unsigned *)((char *)mem + o_counts);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  cudaError_t e = cudaSuccess;
  for (size_t r0 = 0; r0 < rows && e == cudaSuccess && s == PP_OK; r0 += sp.batch) {
    const size_t nr = rows - r0 < sp.batch ? rows - r0 : sp.batch;
    topk_seg_kernel<T, IB><<<(unsigned)(nr * sp.P), SEG_THREADS, 0, cs->stream>>>(
        in + r0 * cols, cols, sp.P, sp.seg_len, flip, sp.s.g, sp.s.r, sample_runs(), cand, counts,
        sp.cap);
    e = cudaGetLastError();
    if (e == cudaSuccess) {
      const row_gather<CT> src = {cand, counts, sp.P, sp.cap};
      s = launch_rows<T, IB>(ctx, fn, in + r0 * cols, nr, cols, k, largest, vals + r0 * k,
                             idxs ? idxs + r0 * k : NULL, sp.k2, src);
    }
  }
  ctx->ops->temp_free(ctx, mem); /* stream-ordered: after the kernels */
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return s;
}

template <typename T, int IB>
static pp_status topk_array(pp_context *ctx, const char *fn, pp_dtype t, const T *in, size_t n,
                            size_t k, bool largest, T *vals, uint64_t *idxs) {
  typedef comp<T, IB> C;
  typedef typename C::CT CT;
  pp_cuda_state *cs = pp_cuda(ctx);
  const size_t fcap = FIN_BYTES / sizeof(CT), fin_scap = fcap / 2;
  const bool small_k = k <= fcap - fin_scap;
  size_t cap = n / 8;
  if (cap > ((size_t)1 << 27)) cap = (size_t)1 << 27;
  if (cap < fin_scap) cap = fin_scap;

  /* one scratch block: state | histograms (one per pass) | buf0 | buf1 | sel | indices */
  const int passes = C::DIGITS + 1;
  const size_t o_hist = 256, o_buf0 = align_up(o_hist + (size_t)passes * BINS * 8, 256);
  const size_t o_buf1 = align_up(o_buf0 + cap * sizeof(CT), 256);
  const size_t o_sel = align_up(o_buf1 + cap * sizeof(CT), 256);
  const size_t o_ix = align_up(o_sel + k * sizeof(CT), 256);
  static_assert(sizeof(sel_state<CT>) <= 256, "the state lies before the histograms");
  const bool wide_sort = !small_k && sizeof(CT) > 8;
  const size_t bytes = o_ix + (wide_sort ? k * 8 : 0);
  void *mem = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &mem, bytes);
  if (s != PP_OK) return s;
  char *base = (char *)mem;
  sel_state<CT> *state = (sel_state<CT> *)base;
  unsigned long long *hist = (unsigned long long *)(base + o_hist);
  CT *buf0 = (CT *)(base + o_buf0), *buf1 = (CT *)(base + o_buf1), *sel = (CT *)(base + o_sel);
  uint64_t *ix = (uint64_t *)(base + o_ix);

  cudaError_t e = cudaMemsetAsync(base, 0, o_buf0, cs->stream);
  const uint64_t flip = flip_of(key_of<T>::BITS, largest);
  const size_t tiles = pp_ceil_div(n, PASS_TILE);
  size_t grid = (size_t)cs->sm_count * PP_TOPK_BLOCKS_PER_SM;
  if (grid > tiles) grid = tiles;
  const int mode = hist_mode();
  const size_t hbytes = (mode == 2 ? HIST_COPIES : 1) * BINS * sizeof(unsigned);
  /* S = FIN_THREADS g samples, g <= SAMPLE_GMAX (16384): k <= n / 256 keeps r <= 98 and
   * r n / S far under n / 8, the buffer's capacity */
  sample_plan sp = {0, 0, 0.0};
  const bool sampled = sampled_on() && n >= SAMPLED_MIN_N && k <= n / SAMPLED_K_RATIO &&
                       (uintptr_t)in % sizeof(T) == 0 &&
                       plan_sample(n, k, FIN_THREADS, sample_gmax(), &sp);
  if (e == cudaSuccess && sampled) {
    topk_sample_kernel<T, IB><<<1, FIN_THREADS, 0, cs->stream>>>(in, n, sp.g, sp.r, sample_runs(),
                                                                  flip, state);
    e = cudaGetLastError();
    /* the elements before the first 16-byte boundary and after the last full vector are
     * done one by one */
    constexpr size_t V = 16 / sizeof(T);
    const size_t head = ((16 - (uintptr_t)in % 16) % 16) / sizeof(T);
    const size_t nvec = (n - head) / V;
    /* as many blocks as are resident at once: each then loops over an equal share of
     * tiles, with no second wave of stragglers */
    static pp_fit_cache filter_fit;
    const int filter_bps = pp_fit_blocks(cs, &filter_fit, topk_filter_kernel<T, IB>, FILTER_THREADS, 0, 4);
    size_t fgrid = (size_t)cs->sm_count * (size_t)filter_bps;
    const size_t ftiles = pp_ceil_div(nvec, (size_t)FILTER_THREADS * FILTER_UNROLL);
    if (fgrid > ftiles) fgrid = ftiles;
    if (e == cudaSuccess) {
      topk_filter_kernel<T, IB><<<(unsigned)fgrid, FILTER_THREADS, 0, cs->stream>>>(
          in, n, head, nvec, flip, state, buf0, cap);
      e = cudaGetLastError();
    }
    void (*dec)(const T *, size_t, sel_state<CT> *, const CT *, size_t, unsigned, bool, T *,
                uint64_t *) = topk_decide_kernel<T, IB>;
    static pp_fit_cache dec_fit;
    if (e == cudaSuccess) e = pp_fit_smem(cs, &dec_fit, dec, FIN_BYTES);
    if (e == cudaSuccess) {
      dec<<<1, FIN_THREADS, FIN_BYTES, cs->stream>>>(in, k, state, buf0, cap, (unsigned)fcap,
                                                     small_k, vals, idxs);
      e = cudaGetLastError();
    }
    /* the passes most likely read about r n / S candidates: fewer blocks clear and merge
     * histograms for nothing (a fallback to the input is still right, only slower) */
    size_t pgrid = pp_ceil_div(4 * (size_t)sp.m, PASS_TILE);
    if (pgrid < (size_t)cs->sm_count * 2) pgrid = (size_t)cs->sm_count * 2;
    if (grid > pgrid) grid = pgrid;
  }
  static pp_fit_cache pass_fit;
  if (e == cudaSuccess && hbytes > 48 * 1024) e = pp_fit_smem(cs, &pass_fit, topk_pass_kernel<T, IB>, hbytes);
  for (int p = 0; e == cudaSuccess && p < passes; p++) {
    topk_pass_kernel<T, IB><<<(unsigned)grid, PASS_THREADS, hbytes, cs->stream>>>(
        in, n, k, flip, state, hist + (size_t)p * BINS, buf0, buf1, cap, fin_scap, sel, mode);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    void (*fin)(const T *, size_t, sel_state<CT> *, const CT *, const CT *, CT *, bool, T *,
                uint64_t *) = topk_finish_kernel<T, IB>;
    static pp_fit_cache fin_fit;
    e = pp_fit_smem(cs, &fin_fit, fin, FIN_BYTES);
    if (e == cudaSuccess) {
      fin<<<1, FIN_THREADS, FIN_BYTES, cs->stream>>>(in, k, state, buf0, buf1, sel, small_k, vals,
                                                     idxs);
      e = cudaGetLastError();
    }
  }
  if (e != cudaSuccess) {
    ctx->ops->temp_free(ctx, mem);
    return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  }
  if (!small_k) {
    /* sel holds the k results in no order: sort them by composite */
    const unsigned g = (unsigned)(pp_ceil_div(k, 256) < 4096 ? pp_ceil_div(k, 256) : 4096);
    if (sizeof(CT) == 8) {
      s = pp_cuda_sort(ctx, PP_U64, sel, NULL, 0, k, PP_DESCENDING, PP_SORT_AUTO);
      if (s == PP_OK) {
        topk_decode_kernel<T, IB><<<g, 256, 0, cs->stream>>>(in, sel, k, vals, idxs);
        e = cudaGetLastError();
      }
    } else {
      /* index order first, so that the stable sort of the values keeps ties in it */
      topk_extract_kernel<T, IB><<<g, 256, 0, cs->stream>>>(sel, k, ix);
      e = cudaGetLastError();
      if (e == cudaSuccess) s = pp_cuda_sort(ctx, PP_U64, ix, NULL, 0, k, PP_ASCENDING, PP_SORT_AUTO);
      if (e == cudaSuccess && s == PP_OK) {
        topk_gather_kernel<T><<<g, 256, 0, cs->stream>>>(in, ix, k, vals, idxs);
        e = cudaGetLastError();
      }
      if (e == cudaSuccess && s == PP_OK)
        s = pp_cuda_sort(ctx, t, vals, idxs, idxs ? 8 : 0, k,
                         largest ? PP_DESCENDING : PP_ASCENDING, PP_SORT_AUTO);
    }
  }
  ctx->ops->temp_free(ctx, mem);
  if (e != cudaSuccess) return pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
  return s;
}

/* One array (rowwise false: rows == 1) or rows of one type. */
template <typename T, int IB>
static pp_status topk_ib(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t, const T *in,
                         size_t rows, size_t cols, size_t k, bool largest, T *vals,
                         uint64_t *idxs) {
  typedef typename comp<T, IB>::CT CT;
  const size_t seg_blocks = (size_t)pp_cuda(ctx)->sm_count * seg_blocks_per_sm<T, IB>(pp_cuda(ctx));
  seg_plan sp;
  if (!rowwise && cols > SMALL_N) {
    if (cols < SAMPLED_MIN_N &&
        plan_seg(1, cols, k, sizeof(CT), sizeof(T), true, seg_blocks, in, &sp))
      return topk_segmented<T, IB>(ctx, fn, in, 1, cols, k, largest, vals, idxs, sp);
    return topk_array<T, IB>(ctx, fn, t, in, cols, k, largest, vals, idxs);
  }
  if (rowwise && plan_seg(rows, cols, k, sizeof(CT), sizeof(T), false, seg_blocks, in, &sp))
    return topk_segmented<T, IB>(ctx, fn, in, rows, cols, k, largest, vals, idxs, sp);
  rows_plan p;
  const row_gather<CT> none = {NULL, NULL, 0, 0};
  if (plan_rows(cols, k, sizeof(CT), 0, &p))
    return launch_rows<T, IB>(ctx, fn, in, rows, cols, k, largest, vals, idxs, p, none);
  /* k too large for one block's shared memory: the one-array path, row by row */
  for (size_t r = 0; r < rows; r++) {
    pp_status s = topk_array<T, IB>(ctx, fn, t, in + r * cols, cols, k, largest, vals + r * k,
                                    idxs ? idxs + r * k : NULL);
    if (s != PP_OK) return s;
  }
  return PP_OK;
}

template <typename T>
static pp_status topk_typed(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                            const void *in, size_t rows, size_t cols, size_t k, bool largest,
                            void *vals, uint64_t *idxs) {
  /* 32-bit inverted indices need every index below 2^32 - 1 (0 stays below them all) */
  if (cols < 0xFFFFFFFFull)
    return topk_ib<T, 32>(ctx, fn, rowwise, t, (const T *)in, rows, cols, k, largest, (T *)vals, idxs);
  return topk_ib<T, 64>(ctx, fn, rowwise, t, (const T *)in, rows, cols, k, largest, (T *)vals, idxs);
}

static pp_status topk_dispatch(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                               const void *in, size_t rows, size_t cols, size_t k, bool largest,
                               void *vals, uint64_t *idxs) {
  if (k == 0 || rows == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  return pp_by_dtype(ctx, fn, t, [&](auto x) {
    return topk_typed<decltype(x)>(ctx, fn, rowwise, t, in, rows, cols, k, largest, vals, idxs);
  });
}

pp_status pp_cuda_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k,
                       bool largest, void *values_out, uint64_t *indices_out) {
  return topk_dispatch(ctx, "pp_topk", false, t, in, 1, n, k, largest, values_out, indices_out);
}

pp_status pp_cuda_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows,
                            size_t cols, size_t k, bool largest, void *values_out,
                            uint64_t *indices_out) {
  return topk_dispatch(ctx, "pp_topk_rows", true, t, in, rows, cols, k, largest, values_out,
                       indices_out);
}
