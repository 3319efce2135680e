/*
 * bench_histogram.c — `parprim bench histogram`: pp_histogram_image, pp_histogram_even and
 * pp_histogram_range against CUB's DeviceHistogram on CUDA (a serial C histogram on the
 * CPU; for the CPU's image rows, 1 and 3 channels, OpenCV's cv::calcHist when the build
 * has it), on the same inputs in the same process.
 *
 * For each n of the size list:
 *  - image-u8: one 8-bit channel of 4*n bytes (the bytes of n f32 values: 2^30 at the
 *    anchor size), 256 bins; CUB: HistogramEven on u8 with 257 int levels;
 *  - even-B: n values of --dtype (f32 by default) in [-1, 1), B even bins over [-1, 1)
 *    for B = 256, 1024, 65536, 2^20 (or --bins);
 *  - range-1024: the same values, 1024 uneven bins (HistogramRange);
 *  - the "-eq" rows repeat image and even with every value equal (one hot bin): the
 *    case that serialises naive atomics.
 *  - with NPP in the build (cmake/bench_peers.cmake; bench/peer_npp.h), image-u8 and
 *    image-u8-eq get a second row against nppiHistogramEven_8u_C1R with our time from the
 *    first, and image-u8x3 times pp_histogram_image on 3 interleaved channels (rows of
 *    16384 pixels, 4*n bytes or just under) against nppiHistogramEven_8u_C3R. NPP takes
 *    levels, not bins: 257 levels from 0 to 256 give our 256 one-value bins.
 * Bytes model: the input read once (n * size). Counts are compared with the peer's after
 * the timed runs; with power-of-two bin counts over [-1, 1) CUB's float arithmetic and
 * parprim's double rule agree on every bin, so any difference is a failure (with other
 * --bins values a difference at bin edges is only noted).
 */
#include "bench_impl.h"

#ifdef PP_HAVE_CUDA
#include "peer_histogram.h"
#include "peer_npp.h"
#endif

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_HIST_SEED 0x4849535447524dull
#define IMAGE_WIDTH ((size_t)1 << 14)
#define RANGE_BINS 1024
#define CONST_CHUNK ((size_t)64 << 20)

typedef struct hist_case {
  int kind; /* 0 even, 1 image, 2 range */
  pp_dtype t;
  size_t n, es, bins, width;
  int channels;           /* image: interleaved channels (0: 1) */
  double lo, hi;
  bench_ws in;
  uint64_t *counts;       /* ours, pp_malloc'd */
  void *peer_counts;      /* CUDA: int32 from CUB; CPU: uint64 from the serial peer */
  double *levels;         /* range: bins + 1 edges in pp_malloc memory */
  double *host_levels;    /* and on the host, for the CPU peer */
} hist_case;

/* ---- the calls ---------------------------------------------------------------------- */

static pp_status call_ours(bench_env *env, void *arg, size_t slot) {
  hist_case *c = arg;
  const void *in = ws_slot(&c->in, slot);
  pp_status s;
  const int ch = c->channels ? c->channels : 1;
  if (c->kind == 1)
    s = pp_histogram_image(env->ctx, in, c->width, c->n / (c->width * ch), c->width * ch, ch,
                           c->counts);
  else if (c->kind == 2)
    s = pp_histogram_range(env->ctx, c->t, in, c->n, c->levels, c->bins, c->counts);
  else
    s = pp_histogram_even(env->ctx, c->t, in, c->n, c->bins, c->lo, c->hi, c->counts);
  if (s != PP_OK && s != PP_ERR_UNSUPPORTED) pp_ok(env, s, "pp_histogram");
  return s;
}

#ifdef PP_HAVE_CUDA
static pp_status call_cub(bench_env *env, void *arg, size_t slot) {
  hist_case *c = arg;
  const void *in = ws_slot(&c->in, slot);
  int rc = c->kind == 2 ? bench_cub_histogram_range(c->t, in, c->n, c->bins, c->levels,
                                                    c->peer_counts, env->stream)
                        : bench_cub_histogram_even(c->t, in, c->n, c->bins, c->lo, c->hi,
                                                   c->peer_counts, env->stream);
  if (rc != 0) {
    bench_fail(env, "CUB histogram: %s", bench_cub_histogram_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}

static bool cub_ready(bench_env *env, hist_case *c) {
  int rc = c->kind == 2
               ? bench_cub_histogram_range_prepare(c->t, c->n, c->bins, c->levels, env->stream)
               : bench_cub_histogram_even_prepare(c->t, c->n, c->bins, c->lo, c->hi, env->stream);
  if (rc != 0) bench_fail(env, "CUB histogram temp storage: %s", bench_cub_histogram_error());
  return rc == 0;
}
#endif

/* The CPU peer: the contract's rules, one element after another on one thread. */
static pp_status call_serial(bench_env *env, void *arg, size_t slot) {
  hist_case *c = arg;
  const void *in = ws_slot(&c->in, slot);
  uint64_t *h = c->peer_counts;
  (void)env;
  memset(h, 0, c->bins * sizeof *h);
  if (c->kind == 1) { /* rows are whole pixels back to back: byte i is channel i % ch */
    const uint8_t *px = in;
    const size_t ch = c->channels ? (size_t)c->channels : 1;
    for (size_t i = 0; i < c->n; i++) h[(i % ch) * 256 + px[i]]++;
    return PP_OK;
  }
  for (size_t i = 0; i < c->n; i++) {
    double v = cli_value_at(c->t, in, i);
    if (c->kind == 2) {
      const double *e = c->host_levels;
      if (!(v >= e[0] && v < e[c->bins])) continue;
      size_t lo = 0, hi = c->bins;
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (v >= e[mid]) lo = mid;
        else hi = mid;
      }
      h[lo]++;
    } else if (v >= c->lo && v < c->hi) {
      double q = floor((v - c->lo) * (double)c->bins / (c->hi - c->lo));
      h[q < (double)c->bins - 1 ? (size_t)q : c->bins - 1]++;
    }
  }
  return PP_OK;
}

/* The CPU peer of the image rows when OpenCV is in the build: cv::calcHist per channel on
 * the context's thread count (bench/peer_cpu_opencv.cpp). */
static pp_status call_calchist(bench_env *env, void *arg, size_t slot) {
  hist_case *c = arg;
  const int ch = c->channels ? c->channels : 1;
  if (bench_cv_calc_hist(ws_slot(&c->in, slot), c->width, c->n / (c->width * (size_t)ch),
                         c->width * (size_t)ch, ch, c->peer_counts, env->dev.multiprocessors) == 0)
    return PP_OK;
  bench_fail(env, "OpenCV calcHist failed");
  return PP_ERR_INVALID_ARGUMENT;
}

/* ---- checking ----------------------------------------------------------------------- */

static bool pow2(size_t x) { return x && !(x & (x - 1)); }

static const char *check_counts(bench_env *env, hist_case *c, const char *op) {
  uint64_t *ours = malloc(c->bins * sizeof *ours);
  uint64_t *peer = malloc(c->bins * sizeof *peer);
  const char *res = "-";
  if (!ours || !peer) {
    bench_note(env, "check skipped: no host memory for %zu counts", c->bins);
    goto done;
  }
  if (!pp_ok(env, pp_copy(env->ctx, ours, c->counts, c->bins * sizeof *ours), "pp_copy (counts)"))
    goto done;
  if (env->cuda) {
    int32_t *p32 = (int32_t *)peer; /* the first half of peer holds CUB's int32 counts */
    if (!pp_ok(env, pp_copy(env->ctx, p32, c->peer_counts, c->bins * sizeof *p32),
               "pp_copy (CUB counts)"))
      goto done;
    for (size_t i = c->bins; i-- > 0;) peer[i] = (uint64_t)(uint32_t)p32[i];
  } else {
    memcpy(peer, c->peer_counts, c->bins * sizeof *peer);
  }
  res = "ok";
  for (size_t i = 0; i < c->bins; i++)
    if (ours[i] != peer[i]) {
      char nb[32];
      bool strict = !env->cuda || c->kind != 0 || (pow2(c->bins) && c->t == PP_F32);
      if (strict) {
        bench_fail(env, "histogram %s %s n=%s: bin %zu ours %" PRIu64 ", peer %" PRIu64, op,
                   pp_dtype_string(c->t), size_text(c->n, nb, sizeof nb), i, ours[i], peer[i]);
        res = "MISMATCH";
      } else {
        bench_note(env, "histogram %s n=%s: bin %zu differs from CUB (%" PRIu64 " vs %" PRIu64
                   "): CUB bins in the level type's arithmetic", op,
                   size_text(c->n, nb, sizeof nb), i, ours[i], peer[i]);
        res = "edges";
      }
      break;
    }
done:
  free(ours);
  free(peer);
  return res;
}

/* ---- NPP: nppiHistogramEven_8u_C1R / C3R on images --------------------------------------- */

#ifdef PP_HAVE_CUDA
static pp_status call_npp(bench_env *env, void *arg, size_t slot) {
  hist_case *c = arg;
  const int ch = c->channels ? c->channels : 1;
  if (bench_npp_histogram(ws_slot(&c->in, slot), c->width, c->n / (c->width * ch), c->width * ch,
                          ch, env->stream) != 0) {
    bench_fail(env, "NPP histogram: %s", bench_npp_error());
    return PP_ERR_DEVICE;
  }
  return PP_OK;
}

/* A row of ours against NPP on an image case: ours_ms from the CUB row, or < 0 to time ours
 * here. The check runs both once more on the last slot and compares every count. */
static void npp_row(bench_env *env, hist_case *c, const char *op, double ours_ms) {
  const int ch = c->channels ? c->channels : 1;
  const size_t m = (size_t)ch * 256, height = c->n / (c->width * ch);
  if (!bench_npp_name()) return;
  bench_row r = {.prim = "histogram", .op = op, .t = PP_U8, .n = c->n,
                 .bytes_model = "reads n*size", .check = "-", .peer = "NPP HistogramEven",
                 .same_work = true, .ms = ours_ms};
  r.bytes = r.peer_bytes = (double)c->n;
  uint64_t *ours = malloc(m * sizeof *ours), *peer = malloc(m * sizeof *peer);
  bool ok = ours && peer &&
            pp_ok(env, pp_malloc(env->ctx, (void **)&c->counts, m * sizeof(uint64_t)),
                  "pp_malloc (counts)");
  if (ok && ours_ms < 0) {
    pp_status s = bench_time(env, call_ours, c, &r.ms);
    r.ours_missing = s == PP_ERR_UNSUPPORTED;
    ok = s == PP_OK || r.ours_missing;
  }
  if (ok && bench_npp_histogram_prepare(c->width, height, ch, env->stream) != 0) {
    bench_fail(env, "NPP histogram: %s", bench_npp_error());
    ok = false;
  }
  ok = ok && bench_time(env, call_npp, c, &r.peer_ms) == PP_OK;
  if (ok && !r.ours_missing && call_ours(env, c, last_slot(env)) == PP_OK &&
      pp_ok(env, pp_copy(env->ctx, ours, c->counts, m * sizeof *ours), "pp_copy (counts)")) {
    if (bench_npp_histogram_counts(peer, ch, env->stream) != 0) {
      bench_fail(env, "NPP histogram: %s", bench_npp_error());
    } else {
      r.check = "ok";
      for (size_t i = 0; i < m; i++)
        if (ours[i] != peer[i]) {
          bench_fail(env, "histogram %s: channel %zu bin %zu ours %" PRIu64 ", NPP %" PRIu64, op,
                     i / 256, i % 256, ours[i], peer[i]);
          r.check = "MISMATCH";
          break;
        }
    }
  }
  if (ok) print_row(env, &r);
  if (c->counts) pp_free(env->ctx, c->counts);
  c->counts = NULL;
  free(ours);
  free(peer);
}

/* 3 interleaved channels, rows of IMAGE_WIDTH pixels, at most 4*n bytes: ours against
 * nppiHistogramEven_8u_C3R (no CUB row: the CUB peer here is one channel). */
static void run_image3(bench_env *env, size_t n) {
  hist_case c = {.kind = 1, .t = PP_U8, .es = 1, .bins = 768, .width = IMAGE_WIDTH,
                 .channels = 3, .lo = 0, .hi = 256};
  const size_t row = IMAGE_WIDTH * 3, height = n * 4 / row;
  if (!bench_npp_name() || height == 0) return;
  c.n = height * row;
  if (!fits(env, "histogram", c.n, c.n + c.n / 8)) return;
  if (ws_alloc(env, &c.in, c.n, PP_U8, BENCH_HIST_SEED + 3) != ALLOC_OK) return;
  npp_row(env, &c, "image-u8x3", -1);
  ws_free(env, &c.in);
}
#endif

/* ---- one measurement ---------------------------------------------------------------- */

/* Returns our median time, or -1 when ours did not run (missing or failed). */
static double measure(bench_env *env, hist_case *c, const char *op) {
  const bool calchist = !env->cuda && c->kind == 1 && bench_cpu_opencv_name();
  bench_row r = {.prim = "histogram", .op = op, .t = c->t, .n = c->n,
                 .bytes_model = "reads n*size", .check = "-",
                 .peer = env->cuda ? "CUB" : calchist ? "OpenCV calcHist" : "serial",
                 .same_work = true};
  r.bytes = r.peer_bytes = (double)c->n * (double)c->es;
  bool ok = pp_ok(env, pp_malloc(env->ctx, (void **)&c->counts, c->bins * sizeof(uint64_t)),
                  "pp_malloc (counts)");
  if (ok)
    ok = pp_ok(env, pp_malloc(env->ctx, &c->peer_counts, c->bins * sizeof(uint64_t)),
               "pp_malloc (peer counts)");
  pp_status s = ok ? bench_time(env, call_ours, c, &r.ms) : PP_ERR_DEVICE;
  if (s == PP_ERR_UNSUPPORTED) r.ours_missing = true;
  ok = ok && (s == PP_OK || s == PP_ERR_UNSUPPORTED);
#ifdef PP_HAVE_CUDA
  if (ok && env->cuda) ok = cub_ready(env, c) && bench_time(env, call_cub, c, &r.peer_ms) == PP_OK;
#endif
  if (ok && !env->cuda)
    ok = bench_time(env, calchist ? call_calchist : call_serial, c, &r.peer_ms) == PP_OK;
  if (ok) {
    if (!r.ours_missing) r.check = check_counts(env, c, op);
    print_row(env, &r);
  }
  if (c->counts) pp_free(env->ctx, c->counts);
  if (c->peer_counts) pp_free(env->ctx, c->peer_counts);
  c->counts = NULL;
  c->peer_counts = NULL;
  return ok && !r.ours_missing ? r.ms : -1;
}

/* Every byte of the working set (all slots) set to copies of one element. */
static bool fill_constant(bench_env *env, bench_ws *w, const void *elem, size_t es) {
  size_t chunk = w->bytes < CONST_CHUNK ? w->bytes : CONST_CHUNK;
  chunk -= chunk % es;
  unsigned char *host = malloc(chunk ? chunk : 1);
  if (!host) {
    bench_fail(env, "out of host memory staging a constant input");
    return false;
  }
  for (size_t i = 0; i < chunk; i += es) memcpy(host + i, elem, es);
  bool ok = true;
  for (size_t off = 0; ok && off < w->bytes; off += chunk) {
    size_t m = w->bytes - off < chunk ? w->bytes - off : chunk;
    ok = pp_ok(env, pp_copy(env->ctx, w->base + off, host, m), "pp_copy (constant input)");
  }
  free(host);
  return ok;
}

/* The value range of t the random fill covers, as [lo, hi). */
static void type_range(pp_dtype t, double *lo, double *hi) {
  switch (t) {
  case PP_U8: *lo = 0; *hi = 256; break;
  case PP_I32: *lo = -0x1p31; *hi = 0x1p31; break;
  case PP_U32: *lo = 0; *hi = 0x1p32; break;
  case PP_I64: *lo = -0x1p63; *hi = 0x1p63; break;
  case PP_U64: *lo = 0; *hi = 0x1p64; break;
  default: *lo = -1; *hi = 1; break;
  }
}

static void set_elem(pp_dtype t, void *p, double v) {
  switch (t) {
  case PP_U8: *(uint8_t *)p = (uint8_t)v; break;
  case PP_I32: *(int32_t *)p = (int32_t)v; break;
  case PP_U32: *(uint32_t *)p = (uint32_t)v; break;
  case PP_I64: *(int64_t *)p = (int64_t)v; break;
  case PP_U64: *(uint64_t *)p = (uint64_t)v; break;
  case PP_F32: *(float *)p = (float)v; break;
  default: *(double *)p = v; break;
  }
}

/* The CPU's 3-channel rows: rows of IMAGE_WIDTH pixels, at most 4*n bytes, against
 * cv::calcHist (or the serial count without OpenCV), random and all equal. */
static void run_image3_cpu(bench_env *env, size_t n) {
  hist_case c = {.kind = 1, .t = PP_U8, .es = 1, .bins = 768, .width = IMAGE_WIDTH,
                 .channels = 3, .lo = 0, .hi = 256};
  const size_t row = IMAGE_WIDTH * 3, height = n * 4 / row;
  if (height == 0) return;
  c.n = height * row;
  if (!fits(env, "histogram", c.n, c.n + c.n / 8)) return;
  if (ws_alloc(env, &c.in, c.n, PP_U8, BENCH_HIST_SEED + 3) != ALLOC_OK) return;
  measure(env, &c, "image-u8x3");
  uint8_t v = 77;
  if (fill_constant(env, &c.in, &v, 1)) measure(env, &c, "image-u8x3-eq");
  ws_free(env, &c.in);
}

static void run_image(bench_env *env, size_t n) {
  hist_case c = {.kind = 1, .t = PP_U8, .n = n * 4, .es = 1, .bins = 256, .width = IMAGE_WIDTH,
                 .lo = 0, .hi = 256};
  if (c.n / 4 != n || c.n % IMAGE_WIDTH != 0) {
    bench_note(env, "histogram image n=%zu skipped: not a whole number of %zu-byte rows", c.n,
               (size_t)IMAGE_WIDTH);
    return;
  }
  if (!fits(env, "histogram", c.n, c.n + c.n / 8)) return;
  if (ws_alloc(env, &c.in, c.n, PP_U8, BENCH_HIST_SEED) != ALLOC_OK) return;
  double ms = measure(env, &c, "image-u8");
#ifdef PP_HAVE_CUDA
  if (env->cuda && ms >= 0) npp_row(env, &c, "image-u8", ms);
#else
  (void)ms;
#endif
  uint8_t v = 77;
  if (fill_constant(env, &c.in, &v, 1)) {
    ms = measure(env, &c, "image-u8-eq");
#ifdef PP_HAVE_CUDA
    if (env->cuda && ms >= 0) npp_row(env, &c, "image-u8-eq", ms);
#else
    (void)ms;
#endif
  }
  ws_free(env, &c.in);
}

/* One row per bin count of bins[0..nb), even edges, op "even-<bins><suffix>". */
static void measure_even(bench_env *env, hist_case *c, const size_t *bins, int nb,
                         const char *suffix) {
  for (int i = 0; i < nb; i++) {
    char op[48], bt[32];
    c->bins = bins[i];
    snprintf(op, sizeof op, "even-%s%s", size_text(c->bins, bt, sizeof bt), suffix);
    measure(env, c, op);
  }
}

static void run_values(bench_env *env, size_t n) {
  const bench_opts *o = env->o;
  const pp_dtype t = o->has_dtype ? o->dtype : PP_F32;
  const size_t es = pp_dtype_size(t);
  const size_t all_bins[] = {256, 1024, 65536, (size_t)1 << 20};
  size_t bins_list[4];
  int nb = 0;
  if (o->bins)
    bins_list[nb++] = o->bins;
  else
    for (int i = 0; i < 4; i++) bins_list[nb++] = all_bins[i];
  if (n > SIZE_MAX / es || !fits(env, "histogram", n, n * es + n * es / 8)) return;
  hist_case c = {.kind = 0, .t = t, .n = n, .es = es};
  type_range(t, &c.lo, &c.hi);
  if (ws_alloc(env, &c.in, n * es, t, BENCH_HIST_SEED + 1) != ALLOC_OK) return;
  measure_even(env, &c, bins_list, nb, "");
  /* uneven edges: the even ones, every other gap stretched */
  c.kind = 2;
  c.bins = o->bins ? o->bins : RANGE_BINS;
  c.host_levels = malloc((c.bins + 1) * sizeof(double));
  if (c.host_levels &&
      pp_ok(env, pp_malloc(env->ctx, (void **)&c.levels, (c.bins + 1) * sizeof(double)),
            "pp_malloc (levels)")) {
    double step = (c.hi - c.lo) / (double)c.bins;
    for (size_t i = 0; i <= c.bins; i++)
      c.host_levels[i] = c.lo + step * ((double)i + (i % 2 && i < c.bins ? 0.4 : 0.0));
    if (pp_ok(env, pp_copy(env->ctx, c.levels, c.host_levels, (c.bins + 1) * sizeof(double)),
              "pp_copy (levels)")) {
      char rop[32];
      char bt[32];
      snprintf(rop, sizeof rop, "range-%s", size_text(c.bins, bt, sizeof bt));
      measure(env, &c, rop);
    }
    pp_free(env->ctx, c.levels);
  }
  free(c.host_levels);
  c.host_levels = NULL;
  c.levels = NULL;
  /* every value equal, in the middle of its bin's range */
  c.kind = 0;
  unsigned char elem[8];
  set_elem(t, elem, c.lo + (c.hi - c.lo) * 0.65);
  if (fill_constant(env, &c.in, elem, es))
    measure_even(env, &c, bins_list, nb, "-eq");
  ws_free(env, &c.in);
}

int bench_run_histogram(bench_env *env, const size_t *sizes, int nsizes) {
  if (!env->cuda && !bench_cpu_opencv_name())
    bench_note(env, "histogram: OpenCV is not in this build; the image rows' CPU peer is a "
               "serial count");
#ifdef PP_HAVE_CUDA
  if (env->cuda && !bench_npp_name())
    bench_note(env, "peer NPP missing (no image-u8x3 rows, no NPP rows): %s", bench_npp_error());
#endif
  for (int i = 0; i < nsizes; i++) {
    if (!env->o->has_dtype || env->o->dtype == PP_U8) {
      run_image(env, sizes[i]);
#ifdef PP_HAVE_CUDA
      if (env->cuda) run_image3(env, sizes[i]);
#endif
      if (!env->cuda) run_image3_cpu(env, sizes[i]);
    }
    run_values(env, sizes[i]);
  }
#ifdef PP_HAVE_CUDA
  if (env->cuda) {
    bench_cub_histogram_release();
    bench_npp_release();
  }
#endif
  return env->failures ? 1 : 0;
}
