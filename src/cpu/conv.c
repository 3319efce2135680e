/* conv.c — pp_conv2d and pp_conv2d_separable on the CPU (OpenMP over output rows).
 *
 * Semantics (API.md): correlation, the filter's tap (fw/2, fh/2) sits on the output pixel;
 * outside the image ZERO reads 0, CLAMP repeats the edge pixel, MIRROR reflects about the
 * edge pixel without repeating it, periodically (period 2(n-1)), and a dimension of one
 * pixel repeats it.
 *
 * Borders never reach the inner loops: for every (output row, filter row) pair the source
 * row is first copied into an "extended" row of width + fw - 1 samples, its left and right
 * halo resolved by the border rule (zeros for ZERO, so 0 * f is computed as the CUDA tiles
 * compute it). The inner loop is then acc[x] += f * ext[x + dx] over contiguous memory,
 * which compilers vectorise. Rebuilding the extended row costs (width + fw) per filter row
 * against fw * width multiply-adds, so it is noise except for 1-wide filters.
 *
 * The separable path filters every needed source row once with the row filter into a
 * temporary image (height x width, the context's scratch), then runs the column filter
 * down it. Rows outside the image are never materialised: the column pass maps them with
 * the same border rule (for ZERO they are zero rows).
 *
 * Accumulation is in float, in the order filter row, filter column, as a direct
 * implementation would; the tests bound the difference to a double reference.
 */
#include "cpu.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ext[j] = row[remap(j - half)] for j in [0, width + len - 1); row NULL: a zero row. */
static void extend_row(float *ext, const float *row, int64_t width, int64_t len, int64_t half,
                       pp_border border) {
  int64_t total = width + len - 1;
  if (!row) {
    memset(ext, 0, (size_t)total * sizeof(float));
    return;
  }
  int64_t left = half < total ? half : total; /* samples left of column 0 */
  for (int64_t j = 0; j < left; j++) {
    int64_t s = conv_remap(j - half, width, border);
    ext[j] = s < 0 ? 0.0f : row[s];
  }
  int64_t inside_end = half + width < total ? half + width : total;
  if (inside_end > left) memcpy(ext + left, row + (left - half), (size_t)(inside_end - left) * sizeof(float));
  for (int64_t j = inside_end; j < total; j++) {
    int64_t s = conv_remap(j - half, width, border);
    ext[j] = s < 0 ? 0.0f : row[s];
  }
}

/* acc[x] += sum_dx f[dx] * ext[x + dx]: one filter row across one output row. */
static void row_taps(float *restrict acc, const float *restrict ext, const float *restrict f,
                     int64_t width, int64_t len) {
  for (int64_t dx = 0; dx < len; dx++) {
    float w = f[dx];
    const float *e = ext + dx;
    for (int64_t x = 0; x < width; x++) acc[x] += w * e[x];
  }
}

/* Rows are spread over threads in contiguous runs; small images stay on one thread. */
static int conv_threads(int64_t width, int64_t height, int64_t taps) {
  double work = (double)width * (double)height * (double)taps;
  return work < (double)PP_CPU_PARALLEL_MIN * 8 ? 1 : pp_cpu_threads();
}

pp_status pp_cpu_conv2d(pp_context *ctx, const float *src, size_t width, size_t height,
                        size_t src_pitch, const float *filter, size_t fw, size_t fh,
                        pp_border border, float *dst, size_t dst_pitch) {
  int64_t w = (int64_t)width, h = (int64_t)height, kw = (int64_t)fw, kh = (int64_t)fh;
  int64_t hx = kw / 2, hy = kh / 2;
  int threads = conv_threads(w, h, kw * kh);
  size_t ext_len = (size_t)(w + kw - 1), per_thread = ext_len + width;
  float *buf = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (float *)malloc((size_t)threads * per_thread * sizeof(float));
  if (!buf)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_conv2d: cannot allocate %zu bytes of row buffers",
                   (size_t)threads * per_thread * sizeof(float));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t y = 0; y < h; y++) {
    float *ext = buf + (size_t)omp_get_thread_num() * per_thread, *acc = ext + ext_len;
    memset(acc, 0, width * sizeof(float));
    for (int64_t dy = 0; dy < kh; dy++) {
      int64_t sy = conv_remap(y + dy - hy, h, border);
      extend_row(ext, sy < 0 ? NULL : src + (size_t)sy * src_pitch, w, kw, hx, border);
      row_taps(acc, ext, filter + (size_t)dy * fw, w, kw);
    }
    memcpy(dst + (size_t)y * dst_pitch, acc, width * sizeof(float));
  }
  free(buf);
  return PP_OK;
}

pp_status pp_cpu_conv2d_separable(pp_context *ctx, const float *src, size_t width,
                                  size_t height, size_t src_pitch, const float *row_filter,
                                  size_t row_len, const float *col_filter, size_t col_len,
                                  pp_border border, float *dst, size_t dst_pitch) {
  static const char fn[] = "pp_conv2d_separable";
  int64_t w = (int64_t)width, h = (int64_t)height, kr = (int64_t)row_len, kc = (int64_t)col_len;
  int64_t hx = kr / 2, hy = kc / 2;
  int threads = conv_threads(w, h, kr + kc);
  size_t ext_len = (size_t)(w + kr - 1);
  if (height > SIZE_MAX / sizeof(float) / width)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: width * height floats overflow", fn);
  float *tmp = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (float *)malloc(width * height * sizeof(float));
  float *buf = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : (float *)malloc((size_t)threads * ext_len * sizeof(float));
  if (!tmp || !buf) {
    free(tmp);
    free(buf);
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: cannot allocate the %zux%zu intermediate", fn,
                   width, height);
  }
  /* pass 1: every source row through the row filter */
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t y = 0; y < h; y++) {
    float *ext = buf + (size_t)omp_get_thread_num() * ext_len, *t = tmp + (size_t)y * width;
    extend_row(ext, src + (size_t)y * src_pitch, w, kr, hx, border);
    memset(t, 0, width * sizeof(float));
    row_taps(t, ext, row_filter, w, kr);
  }
  /* pass 2: the column filter down the intermediate; outside rows follow the border rule */
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t y = 0; y < h; y++) {
    float *out = dst + (size_t)y * dst_pitch;
    memset(out, 0, width * sizeof(float));
    for (int64_t dy = 0; dy < kc; dy++) {
      int64_t sy = conv_remap(y + dy - hy, h, border);
      if (sy < 0) continue; /* a zero row of the intermediate */
      const float *restrict t = tmp + (size_t)sy * width;
      float c = col_filter[dy];
      for (int64_t x = 0; x < w; x++) out[x] += c * t[x];
    }
  }
  free(buf);
  free(tmp);
  return PP_OK;
}
