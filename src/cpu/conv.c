/* conv.c — pp_conv2d and pp_conv2d_separable on the CPU: register-tiled, cache-blocked,
 * OpenMP over bands of rows.
 *
 * Semantics (API.md): correlation, the filter's tap (fw/2, fh/2) sits on the output pixel;
 * outside the image ZERO reads 0, CLAMP repeats the edge pixel, MIRROR reflects about the
 * edge pixel without repeating it, periodically (period 2(n-1)), and a dimension of one
 * pixel repeats it.
 *
 * The work unit is a register tile: CONV_TILE consecutive output pixels of one row, held
 * in CONV_VECS vector accumulators of CONV_LANES floats while every tap of the filter
 * passes over them (acc += f[dy][dx] * row_dy[x + dx]: one broadcast weight, one
 * unaligned load and one multiply-add per vector). Eight independent accumulators cover
 * the latency of the two multiply-add pipes of current x86 cores (4 cycles x 2), and each
 * multiply-add takes one load, within the two load ports: the tile runs at the core's
 * multiply-add rate, not at its load/store rate as a row-at-a-time loop does (which
 * reloads and stores the sums at every tap). This is the direct method of the image
 * libraries (OpenCV's filter engine, Intel IPP), written with GCC's vector extensions so
 * the compiler picks the instructions: AVX2 + FMA where the CPU has them (a clone chosen
 * at load time), SSE2 pairs otherwise, and plain scalar code on other compilers.
 *
 * Borders never reach the tiles. The image is cut into vertical strips whose filter rows
 * stay in L1/L2 while the strip is walked down (strip width chosen so that fh rows of it
 * fit CONV_STRIP_BYTES); a tile whose window lies inside the image reads the source rows
 * in place, and only tiles that touch the left or right edge (or the last, partial tile
 * of a row) first copy their window into a small buffer, where only the few columns
 * outside the image go through the border rule (conv_remap). Rows above and below map
 * through the same rule; ZERO's outside rows point at a row of zeros, so 0 * f is computed
 * as the CUDA tiles compute it. The 3 x 3 filter, which has too few taps to hide the tile's
 * loop control, gets its own copy of the band loops with the sizes as constants.
 *
 * Large outputs are written with non-temporal stores (conv_stream): at 3 x 3 and
 * separable 3 the filter is bound by memory traffic, and streaming removes the read for
 * ownership of every output line, a third of it.
 *
 * The separable path keeps, per thread and strip, a ring of the col_len most recent rows
 * of the row-filtered strip (each source row is row-filtered once per strip) and runs the
 * column filter down the ring with the same tile (a 1 x col_len filter over col_len row
 * pointers), so the intermediate image never goes to memory.
 *
 * Accumulation is in float, in the order filter row, filter column, as a direct
 * implementation would; the tests bound the difference to a double reference.
 */
#include "cpu.h"

#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CONV_LANES 8                         /* floats per accumulator vector */
#define CONV_VECS 8                          /* accumulators per tile */
#define CONV_TILE (CONV_LANES * CONV_VECS)   /* output pixels per register tile */
#define CONV_STRIP_BYTES ((size_t)128 << 10) /* filter rows of one strip: within L2 */
#define CONV_STREAM_BYTES ((size_t)16 << 20) /* outputs past this bypass the caches */

#if defined(__SSE__)
#include <immintrin.h>
#define CONV_HAVE_STREAM 1
#else
#define CONV_HAVE_STREAM 0
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
/* AVX2 + FMA and the baseline, chosen at load time; fp-contract lets the AVX2 clone fuse
 * acc + w * x into one multiply-add (ISO C mode leaves contraction off). */
#define CONV_CLONES                                                                            \
  __attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#else
#define CONV_CLONES
#endif

#if defined(__GNUC__)
typedef float conv_vec __attribute__((vector_size(CONV_LANES * sizeof(float))));
#define CONV_INLINE static inline __attribute__((always_inline))
#else
typedef struct conv_vec {
  float v[CONV_LANES];
} conv_vec;
#define CONV_INLINE static inline
#endif

/* Index of coordinate i (any distance outside [0, n)) under the border rule; -1 for ZERO
 * outside the image. n >= 1. */
static inline int64_t conv_remap(int64_t i, int64_t n, pp_border border) {
  if (i >= 0 && i < n) return i;
  if (border == PP_BORDER_ZERO) return -1;
  if (border == PP_BORDER_CLAMP || n == 1) return i < 0 ? 0 : n - 1;
  int64_t period = 2 * (n - 1), m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

/* out[0..CONV_TILE) = sum over dy < fh, dx < fw of f[dy * fw + dx] * rows[dy][dx + x]:
 * the register tile. rows[dy] must be readable for CONV_TILE + fw - 1 floats. stream: out
 * is 16-byte aligned and is written with non-temporal stores (see conv_stream). */
CONV_INLINE void conv_tile(float *restrict out, const float *const *rows, const float *restrict f,
                           int64_t fw, int64_t fh, bool stream) {
#if defined(__GNUC__)
  conv_vec acc[CONV_VECS];
  for (int v = 0; v < CONV_VECS; v++) acc[v] = (conv_vec){0};
  for (int64_t dy = 0; dy < fh; dy++) {
    const float *row = rows[dy], *fr = f + dy * fw;
    for (int64_t dx = 0; dx < fw; dx++) {
      const float w = fr[dx];
      const float *p = row + dx;
#pragma GCC unroll 8
      for (int v = 0; v < CONV_VECS; v++) {
        conv_vec x;
        memcpy(&x, p + v * CONV_LANES, sizeof x); /* an unaligned vector load */
        acc[v] += w * x;
      }
    }
  }
#if CONV_HAVE_STREAM
  if (stream) {
    for (int v = 0; v < CONV_VECS; v++) {
      const conv_vec a = acc[v];
      _mm_stream_ps(out + v * CONV_LANES, (__m128){a[0], a[1], a[2], a[3]});
      _mm_stream_ps(out + v * CONV_LANES + 4, (__m128){a[4], a[5], a[6], a[7]});
    }
    return;
  }
#endif
  /* one unaligned vector store each (a memcpy of the whole array goes through the stack) */
  for (int v = 0; v < CONV_VECS; v++) memcpy(out + v * CONV_LANES, &acc[v], sizeof acc[v]);
#else
  (void)stream;
  float acc[CONV_TILE] = {0};
  for (int64_t dy = 0; dy < fh; dy++)
    for (int64_t dx = 0; dx < fw; dx++) {
      const float w = f[dy * fw + dx], *p = rows[dy] + dx;
      for (int x = 0; x < CONV_TILE; x++) acc[x] += w * p[x];
    }
  memcpy(out, acc, sizeof acc);
#endif
}

/* What one call shares with every thread. */
typedef struct conv_job {
  const float *src;
  int64_t w, h, pitch; /* source, in floats */
  float *dst;
  int64_t dst_pitch;
  pp_border border;
  const float *zero; /* a row of zeros, w + fw + CONV_TILE floats: ZERO's outside rows */
  bool stream;       /* write whole output tiles with non-temporal stores (conv_stream) */
} conv_job;

/* Pointer to source row y + dy - half (border rule applied), or the zero row. */
static inline const float *conv_src_row(const conv_job *j, int64_t v) {
  int64_t sy = conv_remap(v, j->h, j->border);
  return sy < 0 ? j->zero : j->src + sy * j->pitch;
}

/* One tile of `count` (<= CONV_TILE) outputs at column x0, filter fw x fh (half width
 * hx), its fh rows in rows[] (whole source rows, column 0 at rows[dy][0]). A window inside
 * the image is read in place; otherwise each row's window is copied into seg (fh rows of
 * CONV_TILE + fw - 1 floats) with the horizontal border resolved. stream: as conv_tile's,
 * for a whole tile. */
CONV_INLINE void conv_tile_at(const conv_job *j, const float *const *rows, const float *f,
                              int64_t fw, int64_t fh, int64_t hx, int64_t x0, int64_t count,
                              float *out, float *seg, const float **ptrs, bool stream) {
  const int64_t seg_len = CONV_TILE + fw - 1, start = x0 - hx;
  if (start >= 0 && start + seg_len <= j->w) {
    for (int64_t dy = 0; dy < fh; dy++) ptrs[dy] = rows[dy] + start;
  } else {
    /* seg[i] is source column start + i: the outputs read seg[0, need); of those,
     * [lo, hi) lie inside the image and are copied as they are, and only the few outside
     * (at most fw - 1 on each side) go through the border rule; the slack past `need` of
     * a partial tile is zeroed so the tile's unused lanes compute on zeros */
    const int64_t need = count + fw - 1, lo = start < 0 ? -start : 0;
    const int64_t hi = j->w - start < need ? j->w - start : need;
    for (int64_t dy = 0; dy < fh; dy++) {
      float *s = seg + dy * seg_len;
      const float *r = rows[dy];
      for (int64_t i = 0; i < lo; i++) {
        int64_t sx = conv_remap(start + i, j->w, j->border);
        s[i] = sx < 0 ? 0.0f : r[sx];
      }
      memcpy(s + lo, r + start + lo, (size_t)(hi - lo) * sizeof(float));
      for (int64_t i = hi; i < need; i++) {
        int64_t sx = conv_remap(start + i, j->w, j->border);
        s[i] = sx < 0 ? 0.0f : r[sx];
      }
      memset(s + need, 0, (size_t)(seg_len - need) * sizeof(float));
      ptrs[dy] = s;
    }
  }
  if (count == CONV_TILE) {
    conv_tile(out, ptrs, f, fw, fh, stream);
  } else {
    float tmp[CONV_TILE];
    conv_tile(tmp, ptrs, f, fw, fh, false);
    memcpy(out, tmp, (size_t)count * sizeof(float));
  }
}

/* Whether the tiles of output row `out` are streamed: a large output (j->stream) whose row
 * starts 16-byte aligned, so that every whole tile is. */
static inline bool conv_stream_row(const conv_job *j, const float *out) {
  return j->stream && ((uintptr_t)out & 15) == 0;
}

/* Columns per strip: fh rows of (strip + fw) floats within CONV_STRIP_BYTES, whole tiles. */
static int64_t conv_strip(int64_t w, int64_t fw, int64_t fh) {
  int64_t s = (int64_t)(CONV_STRIP_BYTES / sizeof(float)) / fh - fw;
  s = s / CONV_TILE * CONV_TILE;
  if (s < 4 * CONV_TILE) s = 4 * CONV_TILE;
  return s < w ? s : w;
}

/* Rows [y0, y1) of the 2-D convolution; scratch: fh pointers twice and fh segments. */
CONV_INLINE void conv2d_rows(const conv_job *j, const float *f, int64_t fw, int64_t fh,
                             int64_t y0, int64_t y1, const float **rows, const float **ptrs,
                             float *seg) {
  const int64_t hx = fw / 2, hy = fh / 2, strip = conv_strip(j->w, fw, fh);
  for (int64_t xs = 0; xs < j->w; xs += strip) {
    const int64_t xe = xs + strip < j->w ? xs + strip : j->w;
    for (int64_t y = y0; y < y1; y++) {
      for (int64_t dy = 0; dy < fh; dy++) rows[dy] = conv_src_row(j, y + dy - hy);
      float *out = j->dst + y * j->dst_pitch;
      const bool stream = conv_stream_row(j, out);
      for (int64_t x = xs; x < xe; x += CONV_TILE) {
        int64_t count = xe - x < CONV_TILE ? xe - x : CONV_TILE;
        conv_tile_at(j, rows, f, fw, fh, hx, x, count, out + x, seg, ptrs, stream);
      }
    }
  }
}

/* The 3 x 3 filter (and the separable 3 + 3) is the common case whose taps are too few to
 * hide the tile's loop control: the band functions below stamp the row loops out once
 * with fw = fh = 3 as constants, which the compiler unrolls into straight multiply-adds,
 * and once for any size. */
CONV_CLONES
static void conv2d_band(const conv_job *j, const float *f, int64_t fw, int64_t fh, int64_t y0,
                        int64_t y1, const float **rows, const float **ptrs, float *seg) {
  if (fw == 3 && fh == 3)
    conv2d_rows(j, f, 3, 3, y0, y1, rows, ptrs, seg);
  else
    conv2d_rows(j, f, fw, fh, y0, y1, rows, ptrs, seg);
}

/* Rows [y0, y1) of the separable convolution. ring: col_len rows of `stride` floats
 * holding the row-filtered strip of virtual rows v (slot v mod col_len); scratch as
 * conv2d_band's for one row. */
CONV_INLINE void conv_sep_rows(const conv_job *j, const float *rf, int64_t rl, const float *cf,
                               int64_t cl, int64_t y0, int64_t y1, float *ring, int64_t stride,
                               const float **rows, const float **ptrs, float *seg) {
  const int64_t hx = rl / 2, hy = cl / 2, strip = stride - CONV_TILE;
  for (int64_t xs = 0; xs < j->w; xs += strip) {
    const int64_t xe = xs + strip < j->w ? xs + strip : j->w;
    int64_t next = y0 - hy; /* the next virtual row to row-filter into the ring */
    for (int64_t y = y0; y < y1; y++) {
      for (; next <= y + (cl - 1 - hy); next++) {
        float *slot = ring + ((next % cl + cl) % cl) * stride;
        if (j->border == PP_BORDER_ZERO && (next < 0 || next >= j->h)) {
          memset(slot, 0, (size_t)(xe - xs) * sizeof(float));
          continue;
        }
        const float *src_row = conv_src_row(j, next);
        for (int64_t x = xs; x < xe; x += CONV_TILE) {
          int64_t count = xe - x < CONV_TILE ? xe - x : CONV_TILE;
          conv_tile_at(j, &src_row, rf, rl, 1, hx, x, count, slot + (x - xs), seg, ptrs, false);
        }
      }
      for (int64_t dy = 0; dy < cl; dy++) {
        int64_t v = y + dy - hy;
        rows[dy] = ring + ((v % cl + cl) % cl) * stride;
      }
      float *out = j->dst + y * j->dst_pitch + xs;
      const bool stream = conv_stream_row(j, out);
      /* the ring rows are CONV_TILE floats longer than the strip: a partial last tile
       * reads past the strip's end there, and only its valid outputs are kept */
      for (int64_t x = 0; x < xe - xs; x += CONV_TILE) {
        int64_t count = xe - xs - x < CONV_TILE ? xe - xs - x : CONV_TILE;
        for (int64_t dy = 0; dy < cl; dy++) ptrs[dy] = rows[dy] + x;
        if (count == CONV_TILE) {
          conv_tile(out + x, ptrs, cf, 1, cl, stream);
        } else {
          float tmp[CONV_TILE];
          conv_tile(tmp, ptrs, cf, 1, cl, false);
          memcpy(out + x, tmp, (size_t)count * sizeof(float));
        }
      }
    }
  }
}

CONV_CLONES
static void conv_sep_band(const conv_job *j, const float *rf, int64_t rl, const float *cf,
                          int64_t cl, int64_t y0, int64_t y1, float *ring, int64_t stride,
                          const float **rows, const float **ptrs, float *seg) {
  if (rl == 3 && cl == 3)
    conv_sep_rows(j, rf, 3, cf, 3, y0, y1, ring, stride, rows, ptrs, seg);
  else
    conv_sep_rows(j, rf, rl, cf, cl, y0, y1, ring, stride, rows, ptrs, seg);
}

/* Bands of rows the threads take dynamically: CONV_BANDS_PER_THREAD each, so a thread that
 * loses its core for a while (other processes, other contexts) holds up the others by one
 * band at most, as TBB's work stealing in OpenCV would; no band shorter than 4 x col_len
 * rows, where the separable path's ring restarts (col_len - 1 extra row filterings per
 * band). */
#define CONV_BANDS_PER_THREAD 8
static int64_t conv_bands(int64_t h, int threads, int64_t col_len) {
  if (threads <= 1) return 1;
  int64_t bands = (int64_t)threads * CONV_BANDS_PER_THREAD, least = 4 * col_len > 8 ? 4 * col_len : 8;
  if (h / bands < least) bands = h / least;
  return bands < threads ? threads : bands;
}

/* Non-temporal stores for outputs past CONV_STREAM_BYTES, which the caches would not keep
 * anyway: an ordinary store first reads the line it writes (read for ownership), so a
 * streamed output moves 8 bytes a pixel (read the source, write the result) instead of 12,
 * and the 3 x 3 and separable 3 filters are bound by exactly that traffic. Below the
 * threshold the result stays in the caches for the caller's next step. */
static bool conv_stream(int64_t w, int64_t h) {
  return CONV_HAVE_STREAM && (size_t)w * (size_t)h * sizeof(float) > CONV_STREAM_BYTES;
}

/* Streamed stores are weakly ordered: each thread fences its own before the region's
 * barrier publishes the output. */
static inline void conv_stream_fence(const conv_job *j) {
#if CONV_HAVE_STREAM
  if (j->stream) _mm_sfence();
#else
  (void)j;
#endif
}

/* Threads: small images stay on one. */
static int conv_threads(int64_t width, int64_t height, int64_t taps) {
  double work = (double)width * (double)height * (double)taps;
  int threads = work < (double)PP_CPU_PARALLEL_MIN * 8 ? 1 : pp_cpu_threads();
  return threads > height ? (int)height : threads;
}

/* One allocation for the call: the zero row, then per thread its pointers, segments and
 * (separable) ring. */
typedef struct conv_scratch {
  float *block, *zero;
  size_t per_thread; /* floats */
} conv_scratch;

static pp_status conv_alloc(pp_context *ctx, const char *fn, conv_scratch *s, int64_t w,
                            int64_t fw, int64_t fh, size_t ring_floats, int threads) {
  size_t zero = PP_CPU_ALIGN64((size_t)(w + fw + CONV_TILE) * sizeof(float)) / sizeof(float);
  size_t ptrs = PP_CPU_ALIGN64(2 * (size_t)fh * sizeof(float *)) / sizeof(float);
  size_t seg = PP_CPU_ALIGN64((size_t)fh * (size_t)(CONV_TILE + fw - 1) * sizeof(float)) / sizeof(float);
  s->per_thread = ptrs + seg + ring_floats;
  size_t total = zero + (size_t)threads * s->per_thread;
  s->block = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (float *)calloc(total, sizeof(float));
  if (!s->block)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of row buffers", fn,
                   total * sizeof(float));
  s->zero = s->block;
  s->block += zero;
  return PP_OK;
}

/* Thread t's pieces of the scratch block. */
static void conv_thread_scratch(const conv_scratch *s, int t, int64_t fw, int64_t fh,
                                const float ***rows, const float ***ptrs, float **seg,
                                float **ring) {
  float *base = s->block + (size_t)t * s->per_thread;
  size_t ptrs_f = PP_CPU_ALIGN64(2 * (size_t)fh * sizeof(float *)) / sizeof(float);
  size_t seg_f = PP_CPU_ALIGN64((size_t)fh * (size_t)(CONV_TILE + fw - 1) * sizeof(float)) / sizeof(float);
  *rows = (const float **)(void *)base;
  *ptrs = *rows + fh;
  *seg = base + ptrs_f;
  if (ring) *ring = *seg + seg_f;
}

pp_status pp_cpu_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                        size_t src_pitch, const float *filter, size_t fw, size_t fh,
                        pp_border border, float *dst, size_t dst_pitch) {
  const int64_t w = (int64_t)width, h = (int64_t)height, kw = (int64_t)fw, kh = (int64_t)fh;
  const int threads = conv_threads(w, h, kw * kh);
  conv_scratch s;
  pp_status st = conv_alloc(ctx, "pp_conv2d", &s, w, kw, kh, 0, threads);
  if (st != PP_OK) return st;
  const conv_job j = {src,    w,      h, (int64_t)src_pitch, dst, (int64_t)dst_pitch, border,
                      s.zero, conv_stream(w, h)};
  const int64_t bands = conv_bands(h, threads, 1);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const float **rows, **ptrs;
    float *seg;
    conv_thread_scratch(&s, omp_get_thread_num(), kw, kh, &rows, &ptrs, &seg, NULL);
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t b = 0; b < bands; b++) {
      int64_t y0 = (int64_t)pp_cpu_part_begin(height, (size_t)b, (size_t)bands);
      int64_t y1 = (int64_t)pp_cpu_part_begin(height, (size_t)b + 1, (size_t)bands);
      conv2d_band(&j, filter, kw, kh, y0, y1, rows, ptrs, seg);
    }
    conv_stream_fence(&j);
  }
  free(s.zero);
  return PP_OK;
}

pp_status pp_cpu_conv2d_separable(pp_context *ctx, const float *src, size_t width,
                                  size_t height, size_t src_pitch, const float *row_filter,
                                  size_t row_len, const float *col_filter, size_t col_len,
                                  pp_border border, float *dst, size_t dst_pitch) {
  const int64_t w = (int64_t)width, h = (int64_t)height, kr = (int64_t)row_len,
                kc = (int64_t)col_len;
  const int threads = conv_threads(w, h, kr + kc);
  /* strip: col_len ring rows of it within CONV_STRIP_BYTES, whole tiles, plus one tile of
   * slack per row for the partial last tile's reads */
  int64_t strip = conv_strip(w, 0, kc);
  strip = (strip + CONV_TILE - 1) / CONV_TILE * CONV_TILE;
  const int64_t stride = strip + CONV_TILE;
  const int64_t seg_h = kc > 1 ? kc : 1; /* pointers for the column pass */
  conv_scratch s;
  pp_status st = conv_alloc(ctx, "pp_conv2d_separable", &s, w, kr, seg_h,
                            (size_t)(kc * stride), threads);
  if (st != PP_OK) return st;
  const conv_job j = {src,    w,      h, (int64_t)src_pitch, dst, (int64_t)dst_pitch, border,
                      s.zero, conv_stream(w, h)};
  const int64_t bands = conv_bands(h, threads, kc);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const float **rows, **ptrs;
    float *seg, *ring;
    conv_thread_scratch(&s, omp_get_thread_num(), kr, seg_h, &rows, &ptrs, &seg, &ring);
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t b = 0; b < bands; b++) {
      int64_t y0 = (int64_t)pp_cpu_part_begin(height, (size_t)b, (size_t)bands);
      int64_t y1 = (int64_t)pp_cpu_part_begin(height, (size_t)b + 1, (size_t)bands);
      conv_sep_band(&j, row_filter, kr, col_filter, kc, y0, y1, ring, stride, rows, ptrs, seg);
    }
    conv_stream_fence(&j);
  }
  free(s.zero);
  return PP_OK;
}
