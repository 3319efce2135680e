/*
 * test_conv.c — pp_conv2d and pp_conv2d_separable against a serial reference written here.
 *
 * Usage: test_conv [cpu|cuda]
 *
 * The reference is the definition of API.md taken literally: for every output pixel, sum in
 * double of f[dy][dx] * in(B(x + dx - fw/2), B(y + dy - fh/2)), where B maps a coordinate
 * by the border rule (ZERO: the sample is 0; CLAMP: the edge; MIRROR: reflection about the
 * edge pixel, period 2(n-1), a 1-pixel dimension repeats its pixel). The rule is written
 * a second way here (an explicit walk that bounces off the edges one step at a time), and
 * the two are compared first, so a shared misreading of the formula cannot hide.
 *
 * Two kinds of data:
 *  - exact: small integers in image and filter, so every partial sum in any order is an
 *    integer below 2^24 and the result must equal the reference bit for bit. This is what
 *    pins the filter centre, the border rules and the tile seams of the GPU kernels;
 *  - random floats: |got - ref| <= (taps + 16) * FLT_EPSILON * sum |f * x| over the window
 *    (separable: taps = row_len + col_len, and the window of the outer product).
 * NaN and infinities in the image must appear exactly where the reference has them (the
 * set of products that are NaN or infinite does not depend on the order of summation).
 *
 * Each case also checks that the padding of pitched rows (pitch > width) and everything
 * around dst is left alone (sentinel values), and calls take turns over placements: host
 * or pp_malloc memory, at element offset 0 or 1. Sizes cover 1x1, single rows and columns,
 * the 32-, 64- and 128-pixel tile edges of the CUDA kernels and filters from 1x1 to larger
 * than the image, odd, even and non-square. separable(row, col) must also match pp_conv2d with
 * the outer-product filter col[y] * row[x].
 */
#include "harness.h"

#include <float.h>
#include <math.h>

static const pp_border all_borders[] = {PP_BORDER_ZERO, PP_BORDER_CLAMP, PP_BORDER_MIRROR};
static const char *bname(pp_border b) {
  return b == PP_BORDER_ZERO ? "zero" : b == PP_BORDER_CLAMP ? "clamp" : "mirror";
}

/* ---- the border rule, twice ----------------------------------------------------------- */

static long long ref_remap(long long i, long long n, pp_border b) {
  if (i >= 0 && i < n) return i;
  switch (b) {
  case PP_BORDER_ZERO: return -1;
  case PP_BORDER_CLAMP: return i < 0 ? 0 : n - 1;
  default: {
    /* mirror without repeating the edge pixel: a period of 2(n - 1); one pixel is its own mirror */
    if (n == 1) return 0;
    const long long period = 2 * (n - 1), m = ((i % period) + period) % period;
    return m < n ? m : period - m;
  }
  }
}

/* Mirror by walking: move from the nearest inside pixel toward i, reversing direction at
 * each edge pixel. */
static long long walk_mirror(long long i, long long n) {
  if (n == 1) return 0;
  long long pos = i < 0 ? 0 : n - 1, dir = i < 0 ? 1 : -1;
  long long steps = i < 0 ? -i : i - (n - 1);
  for (long long s = 0; s < steps; s++) {
    if (pos + dir < 0 || pos + dir >= n) dir = -dir;
    pos += dir;
  }
  return pos;
}

static void test_remap_rule(pp_context *ctx) {
  (void)ctx; /* the rule is checked on its own; a step of main takes the context */
  int bad = 0;
  for (long long n = 1; n <= 9; n++)
    for (long long i = -40; i < 40 + n; i++)
      if (i < 0 || i >= n) bad += ref_remap(i, n, PP_BORDER_MIRROR) != walk_mirror(i, n);
  CHECK(bad == 0, "mirror formula disagrees with the walk in %d places", bad);
  /* API.md's example: ... c b | a b c d | c b ... */
  CHECK(ref_remap(-1, 4, PP_BORDER_MIRROR) == 1 && ref_remap(-2, 4, PP_BORDER_MIRROR) == 2 &&
            ref_remap(4, 4, PP_BORDER_MIRROR) == 2 && ref_remap(5, 4, PP_BORDER_MIRROR) == 1,
        "mirror example of API.md");
}

/* ---- reference ------------------------------------------------------------------------ */

static float pix(const float *img, size_t w, size_t h, size_t pitch, long long x, long long y,
                 pp_border b) {
  long long sx = ref_remap(x, (long long)w, b), sy = ref_remap(y, (long long)h, b);
  if (sx < 0 || sy < 0) return 0.0f;
  return img[(size_t)sy * pitch + (size_t)sx];
}

/* out[y*w+x] = value, mag[y*w+x] = sum |f*x| */
static void ref_conv(const float *img, size_t w, size_t h, size_t pitch, const float *f,
                     size_t fw, size_t fh, pp_border b, double *out, double *mag) {
  long long hx = (long long)fw / 2, hy = (long long)fh / 2;
  for (size_t y = 0; y < h; y++)
    for (size_t x = 0; x < w; x++) {
      double s = 0, m = 0;
      for (size_t dy = 0; dy < fh; dy++)
        for (size_t dx = 0; dx < fw; dx++) {
          double v = (double)f[dy * fw + dx] *
                     pix(img, w, h, pitch, (long long)(x + dx) - hx, (long long)(y + dy) - hy, b);
          s += v;
          m += fabs(v);
        }
      out[y * w + x] = s;
      mag[y * w + x] = m;
    }
}

/* ---- one call, any placement ---------------------------------------------------------- */

#define SENTINEL (-12345.5f)
#define GUARD 8 /* sentinel elements before and after dst */

typedef struct shape {
  size_t w, h, src_pitch, dst_pitch;
} shape;

/* Runs the call with src/filters/dst where placement p says (bit 0: src on the device,
 * bit 1: dst on the device, bit 2: filter on the device, bit 3: offset by one element),
 * returns the status and the dst rows (dst_pitch apart, GUARD sentinels around) in host
 * memory `got`, sized h * dst_pitch + 2 * GUARD. */
static pp_status run_call(pp_context *ctx, int p, const shape *s, const float *img,
                          const float *f, size_t fw, size_t fh, const float *col, size_t col_len,
                          bool separable, pp_border b, float *got) {
  size_t off = (p & 8) ? 1 : 0;
  size_t src_n = s->h * s->src_pitch + off, dst_n = s->h * s->dst_pitch + 2 * GUARD + off;
  size_t fa = fw * fh + off, fc = col_len + off;
  float *hs = th_xmalloc(src_n * sizeof(float));
  float *hf = th_xmalloc(fa * sizeof(float)), *hc = th_xmalloc((fc ? fc : 1) * sizeof(float));
  memcpy(hs + off, img, s->h * s->src_pitch * sizeof(float));
  memcpy(hf + off, f, fw * fh * sizeof(float));
  if (col_len) memcpy(hc + off, col, col_len * sizeof(float));
  for (size_t i = 0; i < dst_n; i++) got[i] = SENTINEL;
  float *ds = (p & 1) ? th_dev_from_host(ctx, hs, src_n * sizeof(float)) : hs;
  float *df = (p & 4) ? th_dev_from_host(ctx, hf, fa * sizeof(float)) : hf;
  float *dc = (p & 4) ? th_dev_from_host(ctx, hc, (fc ? fc : 1) * sizeof(float)) : hc;
  float *hd = th_xmalloc(dst_n * sizeof(float));
  for (size_t i = 0; i < dst_n; i++) hd[i] = SENTINEL;
  float *dd = (p & 2) ? th_dev_from_host(ctx, hd, dst_n * sizeof(float)) : hd;
  pp_status st;
  if (separable)
    st = pp_conv2d_separable(ctx, ds + off, s->w, s->h, s->src_pitch, df + off, fw, dc + off,
                             col_len, b, dd + off + GUARD, s->dst_pitch);
  else
    st = pp_conv2d(ctx, ds + off, s->w, s->h, s->src_pitch, df + off, fw, fh, b,
                   dd + off + GUARD, s->dst_pitch);
  if (p & 2) th_copy(ctx, hd, dd, dst_n * sizeof(float));
  else pp_synchronize(ctx);
  memcpy(got, hd + off, (dst_n - off) * sizeof(float));
  if (p & 1) th_dev_free(ctx, ds);
  if (p & 2) th_dev_free(ctx, dd);
  if (p & 4) {
    th_dev_free(ctx, df);
    th_dev_free(ctx, dc);
  }
  free(hs);
  free(hf);
  free(hc);
  free(hd);
  return st;
}

static int placement_counter = 0;

typedef enum datakind { DATA_EXACT, DATA_FLOAT, DATA_SPECIAL } datakind;

static void fill(th_rng *r, float *a, size_t n, datakind k, int lo, int hi) {
  for (size_t i = 0; i < n; i++)
    a[i] = k == DATA_EXACT ? (float)(lo + (int)th_below(r, (uint64_t)(hi - lo + 1)))
                           : (float)th_range(r, -1.0, 1.0);
}

/* Compares got (with its guards) to the reference; returns 1 when everything matched. */
static int compare(const shape *s, const float *got, const double *ref, const double *mag,
                   double tol, bool exact, const char *what) {
  int bad_val = 0, bad_pad = 0;
  size_t first = (size_t)-1;
  for (size_t i = 0; i < GUARD; i++)
    bad_pad += got[i] != SENTINEL || got[GUARD + s->h * s->dst_pitch + i] != SENTINEL;
  for (size_t y = 0; y < s->h; y++)
    for (size_t x = 0; x < s->dst_pitch; x++) {
      float g = got[GUARD + y * s->dst_pitch + x];
      if (x >= s->w) {
        bad_pad += g != SENTINEL;
        continue;
      }
      double r = ref[y * s->w + x];
      int ok;
      if (isnan(r)) ok = isnan(g);
      else if (isinf(r)) ok = (double)g == r;
      else if (exact) ok = (double)g == r;
      else ok = fabs((double)g - r) <= tol * mag[y * s->w + x] + 1e-30;
      if (!ok && first == (size_t)-1) first = y * s->w + x;
      bad_val += !ok;
    }
  if (bad_val) {
    size_t y = first / s->w, x = first % s->w;
    CHECK(0, "%s: %d wrong pixels, first (%zu,%zu) got %.9g want %.9g", what, bad_val, x, y,
          (double)got[GUARD + y * s->dst_pitch + x], ref[first]);
  } else {
    CHECK(1, "%s", what);
  }
  CHECK(bad_pad == 0, "%s: %d sentinels outside the image overwritten", what, bad_pad);
  return bad_val == 0 && bad_pad == 0;
}

/* One 2D case: pp_conv2d against the reference, on image shape s, placement p of run_call
 * (-1: the next in turn). */
static void case_2d_at(pp_context *ctx, th_rng *r, shape s, size_t fw, size_t fh, pp_border b,
                       datakind k, int p) {
  if (!th_sampled()) return;
  const size_t w = s.w, h = s.h;
  float *img = th_xmalloc(h * s.src_pitch * sizeof(float)), *f = th_xmalloc(fw * fh * sizeof(float));
  fill(r, img, h * s.src_pitch, k, -8, 8);
  fill(r, f, fw * fh, k, -3, 3);
  if (k == DATA_SPECIAL) { /* a few NaN and infinities */
    static const float specials[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++)
      img[th_below(r, h) * s.src_pitch + th_below(r, w)] = specials[i];
  }
  double *ref = th_xmalloc(w * h * sizeof(double)), *mag = th_xmalloc(w * h * sizeof(double));
  ref_conv(img, w, h, s.src_pitch, f, fw, fh, b, ref, mag);
  float *got = th_xmalloc((h * s.dst_pitch + 2 * GUARD + 1) * sizeof(float));
  if (p < 0) p = placement_counter++ % 16;
  pp_status st = run_call(ctx, p, &s, img, f, fw, fh, NULL, 0, false, b, got);
  char what[160];
  snprintf(what, sizeof what, "conv2d %zux%zu pitch %zu/%zu filter %zux%zu %s %s place %d", w, h,
           s.src_pitch, s.dst_pitch, fw, fh, bname(b),
           k == DATA_EXACT ? "exact" : k == DATA_FLOAT ? "float" : "nan/inf", p);
  if (CHECK_STATUS(st, PP_OK, "%s (%s)", what, pp_last_error(ctx)))
    compare(&s, got, ref, mag, (double)(fw * fh + 16) * FLT_EPSILON, k == DATA_EXACT, what);
  free(img);
  free(f);
  free(ref);
  free(mag);
  free(got);
}

/* One 2D case on a w x h image whose rows are pad floats longer in src and, when pad > 0,
 * pad + 3 in dst; placements in turn. */
static void case_2d(pp_context *ctx, th_rng *r, size_t w, size_t h, size_t pad, size_t fw,
                    size_t fh, pp_border b, datakind k) {
  shape s = {w, h, w + pad, w + (pad ? pad + 3 : 0)};
  case_2d_at(ctx, r, s, fw, fh, b, k, -1);
}

/* One separable case: against the reference with the outer-product filter, and against
 * pp_conv2d with that filter (exact data: bit for bit). */
static void case_sep(pp_context *ctx, th_rng *r, size_t w, size_t h, size_t pad, size_t kr,
                     size_t kc, pp_border b, datakind k) {
  if (!th_sampled()) return;
  shape s = {w, h, w + pad, w + pad};
  float *img = th_xmalloc(h * s.src_pitch * sizeof(float));
  float *row = th_xmalloc(kr * sizeof(float)), *col = th_xmalloc(kc * sizeof(float));
  float *outer = th_xmalloc(kr * kc * sizeof(float));
  fill(r, img, h * s.src_pitch, k, -8, 8);
  fill(r, row, kr, k, -3, 3);
  fill(r, col, kc, k, -3, 3);
  if (k == DATA_SPECIAL) img[th_below(r, h) * s.src_pitch + th_below(r, w)] = NAN;
  for (size_t y = 0; y < kc; y++)
    for (size_t x = 0; x < kr; x++) outer[y * kr + x] = col[y] * row[x];
  double *ref = th_xmalloc(w * h * sizeof(double)), *mag = th_xmalloc(w * h * sizeof(double));
  ref_conv(img, w, h, s.src_pitch, outer, kr, kc, b, ref, mag);
  size_t got_n = h * s.dst_pitch + 2 * GUARD + 1;
  float *got = th_xmalloc(got_n * sizeof(float)), *got2 = th_xmalloc(got_n * sizeof(float));
  int p = placement_counter++ % 16;
  pp_status st = run_call(ctx, p, &s, img, row, kr, 1, col, kc, true, b, got);
  char what[160];
  snprintf(what, sizeof what, "separable %zux%zu pitch %zu row %zu col %zu %s %s place %d", w, h,
           s.src_pitch, kr, kc, bname(b), k == DATA_EXACT ? "exact" : "float", p);
  if (CHECK_STATUS(st, PP_OK, "%s (%s)", what, pp_last_error(ctx)) &&
      compare(&s, got, ref, mag, (double)(kr + kc + 16) * FLT_EPSILON, k == DATA_EXACT, what) &&
      k == DATA_EXACT) {
    /* the same image through pp_conv2d with the outer product */
    st = run_call(ctx, 0, &s, img, outer, kr, kc, NULL, 0, false, b, got2);
    int same = memcmp(got, got2, (got_n - 1) * sizeof(float)) == 0;
    CHECK(st == PP_OK && same, "%s: differs from pp_conv2d with the outer-product filter", what);
  }
  free(img);
  free(row);
  free(col);
  free(outer);
  free(ref);
  free(mag);
  free(got);
  free(got2);
}

/* ---- the suites ----------------------------------------------------------------------- */

static void test_filters_and_borders(pp_context *ctx) {
  th_rng r = th_rng_make(1);
  /* the filter sizes the CUDA backend has specialised kernels for, their neighbours, even
   * and non-square ones */
  static const size_t sq[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 15, 16, 17};
  static const size_t ns[][2] = {{3, 5}, {5, 3}, {1, 7}, {7, 1}, {2, 9}, {15, 4}, {31, 3}};
  static const size_t sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {7, 5}, {33, 17},
                                    {64, 64}, {65, 63}, {100, 129}, {31, 70}};
  size_t nsizes = sizeof sizes / sizeof sizes[0];
  for (size_t bi = 0; bi < 3; bi++) {
    pp_border b = all_borders[bi];
    for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++) {
      for (size_t j = 0; j < nsizes; j++)
        case_2d(ctx, &r, sizes[j][0], sizes[j][1], (i + j) % 3 == 0 ? 5 : 0, sq[i], sq[i], b,
                DATA_EXACT);
      case_2d(ctx, &r, 97, 75, 2, sq[i], sq[i], b, DATA_FLOAT);
    }
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      case_2d(ctx, &r, 45, 38, 1, ns[i][0], ns[i][1], b, DATA_EXACT);
      case_2d(ctx, &r, 3, 2, 0, ns[i][0], ns[i][1], b, DATA_EXACT);
    }
  }
}

/* Filters that reach further than the image: periodic mirror, several bounces; and
 * filters too large for the CUDA shared-memory tiles. */
static void test_large_filters(pp_context *ctx) {
  th_rng r = th_rng_make(2);
  for (size_t bi = 0; bi < 3; bi++) {
    pp_border b = all_borders[bi];
    case_2d(ctx, &r, 3, 4, 0, 21, 19, b, DATA_EXACT);
    case_2d(ctx, &r, 1, 1, 0, 9, 9, b, DATA_EXACT);
    case_2d(ctx, &r, 5, 1, 2, 64, 3, b, DATA_EXACT);
    case_2d(ctx, &r, 40, 35, 0, 33, 33, b, DATA_EXACT);
    case_2d(ctx, &r, 50, 41, 3, 65, 66, b, DATA_EXACT);
    case_2d(ctx, &r, 20, 70, 0, 3, 129, b, DATA_EXACT);
    case_2d(ctx, &r, 70, 20, 0, 129, 2, b, DATA_EXACT);
  }
}

static void test_special_values(pp_context *ctx) {
  th_rng r = th_rng_make(3);
  for (size_t bi = 0; bi < 3; bi++) {
    static const size_t ks[] = {1, 3, 4, 5, 9, 15, 40};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
      case_2d(ctx, &r, 70, 66, 1, ks[i], ks[i], all_borders[bi], DATA_SPECIAL);
    case_sep(ctx, &r, 70, 66, 0, 15, 15, all_borders[bi], DATA_SPECIAL);
  }
  /* all-equal image: clamp and mirror give c * sum(f) everywhere, zero is lower at edges */
  size_t w = 67, h = 35;
  float *img = th_xmalloc(w * h * sizeof(float)), f[25];
  for (size_t i = 0; i < w * h; i++) img[i] = 2.0f;
  for (int i = 0; i < 25; i++) f[i] = 1.0f;
  float *out = th_xmalloc(w * h * sizeof(float));
  for (size_t bi = 1; bi < 3; bi++) {
    pp_status st = pp_conv2d(ctx, img, w, h, w, f, 5, 5, all_borders[bi], out, w);
    int bad = 0;
    for (size_t i = 0; i < w * h; i++) bad += out[i] != 50.0f;
    CHECK(st == PP_OK && bad == 0, "all-equal %s: %d pixels differ from 50", bname(all_borders[bi]),
          bad);
  }
  free(img);
  free(out);
}

static void test_separable(pp_context *ctx) {
  th_rng r = th_rng_make(4);
  static const size_t ks[][2] = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {9, 9}, {15, 15}, {3, 7},
                                 {15, 1}, {1, 15}, {4, 4}, {11, 11}, {2, 6}, {31, 31}, {80, 9}};
  static const size_t sizes[][2] = {{1, 1}, {1, 17}, {17, 1}, {33, 65}, {64, 64}, {129, 70}};
  for (size_t bi = 0; bi < 3; bi++)
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
      for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
        case_sep(ctx, &r, sizes[j][0], sizes[j][1], j % 2 ? 3 : 0, ks[i][0], ks[i][1],
                 all_borders[bi], DATA_EXACT);
      case_sep(ctx, &r, 90, 77, 1, ks[i][0], ks[i][1], all_borders[bi], DATA_FLOAT);
    }
}

/* The register-blocked CUDA kernel (stamped square filters from 5 taps: tiles 128 wide and
 * 32 high, 4 x 4 outputs a thread, 128-bit window loads and output stores). Sizes one
 * short of, at and one past the tile edges, a 4-column last tile, images smaller than a
 * tile, whole tiles only (every store 128-bit where rows allow) and images with interior
 * tiles (the vector window copy). Each (filter, border, size) runs under two of four
 * layouts, all four over the borders: src and dst rows w floats apart; src rows w + 4 and
 * dst rows w + 1 (where w is a multiple of 4: the vector copy and scalar stores); src rows
 * w + 1 and dst rows w + 4 (scalar copy, vector stores); and src and dst one float off
 * 16-byte alignment on the device (scalar everything). Integer data: bit-exact, so a seam
 * cannot hide. */
static void test_blocked_tiles(pp_context *ctx) {
  th_rng r = th_rng_make(6);
  static const size_t ks[] = {5, 7, 9, 15};
  static const size_t sizes[][2] = {{45, 7},   {127, 31}, {128, 32}, {129, 33}, {132, 40},
                                    {256, 64}, {257, 65}, {300, 97}, {384, 96}};
  /* extra src floats a row, extra dst floats a row, run_call placement (3: src and dst on
   * the device, 11: the same one float off) */
  static const struct {
    size_t src_pad, dst_pad;
    int p;
  } layouts[] = {{0, 0, 3}, {4, 1, 3}, {1, 4, 3}, {0, 0, 11}};
  for (size_t bi = 0; bi < 3; bi++)
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t half = 0; half < 2; half++) {
          const size_t li = (bi + ki + si + 2 * half) % 4, w = sizes[si][0], h = sizes[si][1];
          shape s = {w, h, w + layouts[li].src_pad, w + layouts[li].dst_pad};
          case_2d_at(ctx, &r, s, ks[ki], ks[ki], all_borders[bi], DATA_EXACT, layouts[li].p);
        }
}

/* Images of a million pixels and more: many tiles, the interior fast paths. */
static void test_big(pp_context *ctx) {
  th_rng r = th_rng_make(5);
  /* quick: every filter and border of the list on images of a few tiles each way */
  const size_t q = th_quick() ? 4 : 1;
  case_2d(ctx, &r, 1031 / q, 1029 / q, 0, 3, 3, PP_BORDER_MIRROR, DATA_EXACT);
  case_2d(ctx, &r, 1024 / q, 1024 / q, 0, 5, 5, PP_BORDER_ZERO, DATA_EXACT);
  case_2d(ctx, &r, 1000 / q, 1100 / q, 24, 9, 9, PP_BORDER_CLAMP, DATA_FLOAT);
  case_2d(ctx, &r, 1027 / q, 1003 / q, 0, 15, 15, PP_BORDER_ZERO, DATA_EXACT);
  /* rows a multiple of 4 floats apart: the 128-bit stores of the blocked CUDA kernel, its
   * 128-wide tiles whole and cut */
  case_2d(ctx, &r, 1104 / q, 1000 / q, 0, 15, 15, PP_BORDER_MIRROR, DATA_FLOAT);
  case_2d(ctx, &r, 1168 / q, 530 / q, 0, 9, 9, PP_BORDER_ZERO, DATA_EXACT);
  case_2d(ctx, &r, 2048 / q, 517 / q, 0, 7, 7, PP_BORDER_MIRROR, DATA_FLOAT);
  case_sep(ctx, &r, 1031 / q, 1029 / q, 0, 15, 15, PP_BORDER_MIRROR, DATA_EXACT);
  case_sep(ctx, &r, 1024 / q, 1024 / q, 1, 9, 9, PP_BORDER_CLAMP, DATA_FLOAT);
  /* short separable filters on images large enough for interior tiles (the register
   * row-pass kernel's vectorised loads) */
  case_sep(ctx, &r, 1031 / q, 1029 / q, 0, 5, 5, PP_BORDER_MIRROR, DATA_EXACT);
  case_sep(ctx, &r, 2048 / q, 517 / q, 0, 3, 3, PP_BORDER_CLAMP, DATA_FLOAT);
  case_sep(ctx, &r, 1024 / q, 1024 / q, 0, 7, 7, PP_BORDER_ZERO, DATA_EXACT);
  case_sep(ctx, &r, 1111 / q, 999 / q, 0, 21, 13, PP_BORDER_ZERO, DATA_EXACT);
}

/* Bad arguments: the status, a message naming the function, and nothing written. */
static void test_arguments(pp_context *ctx) {
  float img[12] = {0}, f[9] = {0}, out[12];
  static const char fn2[] = "pp_conv2d", fns[] = "pp_conv2d_separable";
  struct {
    const float *src, *f;
    size_t w, h, sp, fw, fh, dp;
    int border;
    float *dst;
    pp_status want;
  } cases[] = {
      {NULL, f, 4, 3, 4, 3, 3, 4, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, NULL, 4, 3, 4, 3, 3, 4, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 3, 4, 0, NULL, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 0, 3, 4, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 0, 4, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 3, 3, 3, 4, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 3, 3, 0, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 3, 4, 3, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 3, 4, -1, out, PP_ERR_INVALID_ARGUMENT},
      {img, f, 4, 3, 4, 3, 3, 4, 0, img + 2, PP_ERR_INVALID_ARGUMENT}, /* overlap */
      {img, f, 4, 3, SIZE_MAX / 2, 3, 3, 4, 0, out, PP_ERR_OVERFLOW},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int sep = 0; sep < 2; sep++) {
      for (int j = 0; j < 12; j++) out[j] = SENTINEL;
      th_poison_error(ctx);
      pp_status st = sep ? pp_conv2d_separable(ctx, cases[i].src, cases[i].w, cases[i].h,
                                               cases[i].sp, cases[i].f, cases[i].fw, cases[i].f,
                                               cases[i].fh, (pp_border)cases[i].border,
                                               cases[i].dst, cases[i].dp)
                         : pp_conv2d(ctx, cases[i].src, cases[i].w, cases[i].h, cases[i].sp,
                                     cases[i].f, cases[i].fw, cases[i].fh,
                                     (pp_border)cases[i].border, cases[i].dst, cases[i].dp);
      CHECK_STATUS(st, cases[i].want, "%s bad-argument case %zu", sep ? fns : fn2, i);
      CHECK(th_names(pp_last_error(ctx), sep ? fns : fn2), "case %zu: message \"%s\" names %s", i,
            pp_last_error(ctx), sep ? fns : fn2);
      int written = 0;
      for (int j = 0; j < 12; j++) written += out[j] != SENTINEL;
      CHECK(written == 0, "%s case %zu wrote %d outputs", sep ? fns : fn2, i, written);
    }
  /* empty images are valid and write nothing; NULL is still refused */
  for (int j = 0; j < 12; j++) out[j] = SENTINEL;
  CHECK_STATUS(pp_conv2d(ctx, img, 0, 3, 0, f, 3, 3, PP_BORDER_ZERO, out, 0), PP_OK, "width 0");
  CHECK_STATUS(pp_conv2d(ctx, img, 4, 0, 4, f, 3, 3, PP_BORDER_ZERO, out, 4), PP_OK, "height 0");
  CHECK_STATUS(pp_conv2d_separable(ctx, img, 4, 0, 4, f, 3, f, 3, PP_BORDER_MIRROR, out, 4),
               PP_OK, "separable height 0");
  int written = 0;
  for (int j = 0; j < 12; j++) written += out[j] != SENTINEL;
  CHECK(written == 0, "empty images wrote %d outputs", written);
}

int main(int argc, char **argv) {
  static const th_step steps[] = {test_remap_rule,    test_arguments,      test_filters_and_borders,
                                  test_large_filters, test_special_values, test_blocked_tiles,
                                  test_separable,     test_big};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
