/* api_histogram.c — entry points of the histogram family. */
#include "check.h"

#include <stdlib.h>

static pp_status check_counts(pp_context *ctx, const char *fn, size_t bins, uint64_t *counts,
                              size_t *bytes) {
  *bytes = 0;
  if (bins == 0) return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: bins is 0", fn);
  PP_TRY(pp_check_mul(ctx, fn, "bins * 8", bins, sizeof(uint64_t), bytes));
  return pp_check_ptr(ctx, fn, "counts", counts);
}

static pp_status histogram_even_check(pp_context *ctx, const char *fn, pp_dtype t,
                                      const void *in, size_t n, size_t bins, double lo,
                                      double hi, uint64_t *counts, size_t *in_bytes,
                                      size_t *count_bytes) {
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, in_bytes));
  PP_TRY(check_counts(ctx, fn, bins, counts, count_bytes));
  if (!(lo < hi) || !isfinite(lo) || !isfinite(hi))
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: [lo, hi) = [%g, %g) is not a finite range",
                   fn, lo, hi);
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, *count_bytes, "in", in, *in_bytes));
  if (!ctx->ops->histogram_even) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t bins,
                            double lo, double hi, uint64_t *counts) {
  static const char fn[] = "pp_histogram_even";
  size_t in_bytes = 0, count_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = histogram_even_check(ctx, fn, t, in, n, bins, lo, hi, counts, &in_bytes,
                                           &count_bytes);
  if (ctx->dist) return pp_dist_histogram_even(ctx, checked, t, in, n, bins, lo, hi, counts);
  PP_TRY(checked);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dcounts;
  PP_STAGE(PP_ARG_IN, "in", in, in_bytes, pp_dtype_size(t), din);
  PP_STAGE(PP_ARG_OUT, "counts", counts, count_bytes, sizeof(uint64_t), dcounts);
  if (st == PP_OK)
    st = ctx->ops->histogram_even(ctx, t, din, n, bins, lo, hi, (uint64_t *)dcounts);
  return pp_args_finish(ctx, &args, st);
}

/* The edges must be read to be checked, and they may live on the device: the check reads a
 * host copy. */
static pp_status check_edges(pp_context *ctx, const char *fn, const double *edges, size_t bins) {
  size_t bytes = 0;
  PP_TRY(pp_check_ptr(ctx, fn, "edges", edges));
  PP_TRY(pp_check_mul(ctx, fn, "(bins + 1) * 8", bins + 1, sizeof(double), &bytes));
  double *h = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(bytes);
  if (!h) return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for the edges", fn);
  pp_status s = ctx->ops->copy(ctx, h, edges, bytes);
  for (size_t i = 0; s == PP_OK && i <= bins; i++) {
    if (isnan(h[i]))
      s = pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: edges[%zu] is NaN", fn, i);
    else if (i > 0 && !(h[i - 1] < h[i]))
      s = pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                  "%s: edges are not strictly increasing (edges[%zu] = %g, edges[%zu] = %g)", fn,
                  i - 1, h[i - 1], i, h[i]);
  }
  free(h);
  return s;
}

static pp_status histogram_range_check(pp_context *ctx, const char *fn, pp_dtype t,
                                       const void *in, size_t n, const double *edges,
                                       size_t bins, uint64_t *counts, size_t *in_bytes,
                                       size_t *count_bytes) {
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, in_bytes));
  PP_TRY(check_counts(ctx, fn, bins, counts, count_bytes));
  /* every size is known before any overlap is judged */
  size_t edge_bytes = 0;
  PP_TRY(pp_check_ptr(ctx, fn, "edges", edges));
  PP_TRY(pp_check_mul(ctx, fn, "(bins + 1) * 8", bins + 1, sizeof(double), &edge_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, *count_bytes, "in", in, *in_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, *count_bytes, "edges", edges, edge_bytes));
  if (!ctx->ops->histogram_range) return pp_not_implemented(ctx, fn);
  return check_edges(ctx, fn, edges, bins);
}

pp_status pp_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                             const double *edges, size_t bins, uint64_t *counts) {
  static const char fn[] = "pp_histogram_range";
  size_t in_bytes = 0, count_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = histogram_range_check(ctx, fn, t, in, n, edges, bins, counts, &in_bytes,
                                            &count_bytes);
  if (ctx->dist) return pp_dist_histogram_range(ctx, checked, t, in, n, edges, bins, counts);
  PP_TRY(checked);

  /* checked, the edges are an input like any other: used in place where the backend can
   * read them, staged otherwise */
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din, *dedges;
  void *dcounts;
  PP_STAGE(PP_ARG_IN, "in", in, in_bytes, pp_dtype_size(t), din);
  PP_STAGE(PP_ARG_IN, "edges", edges, (bins + 1) * sizeof(double), sizeof(double), dedges);
  PP_STAGE(PP_ARG_OUT, "counts", counts, count_bytes, sizeof(uint64_t), dcounts);
  if (st == PP_OK)
    st = ctx->ops->histogram_range(ctx, t, din, n, (const double *)dedges, bins,
                                   (uint64_t *)dcounts);
  return pp_args_finish(ctx, &args, st);
}

static pp_status histogram_image_check(pp_context *ctx, const char *fn, const uint8_t *pixels,
                                       size_t width, size_t height, size_t pitch_bytes,
                                       int channels, uint64_t *counts, size_t *in_bytes) {
  size_t row_bytes = 0;
  if (channels < 1 || channels > 4)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: channels (%d) is not 1..4", fn, channels);
  PP_TRY(pp_check_ptr(ctx, fn, "counts", counts));
  PP_TRY(pp_check_mul(ctx, fn, "width * channels", width, (size_t)channels, &row_bytes));
  if (pitch_bytes < row_bytes)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: pitch_bytes (%zu) < width * channels (%zu)",
                   fn, pitch_bytes, row_bytes);
  if (width && height) {
    PP_TRY(pp_check_mul(ctx, fn, "(height - 1) * pitch_bytes", height - 1, pitch_bytes, in_bytes));
    PP_TRY(pp_check_add(ctx, fn, "image extent", *in_bytes, row_bytes, in_bytes));
  }
  PP_TRY(pp_check_data(ctx, fn, "pixels", pixels, *in_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, (size_t)channels * 256 * sizeof *counts,
                           "pixels", pixels, *in_bytes));
  if (!ctx->ops->histogram_image) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width, size_t height,
                             size_t pitch_bytes, int channels, uint64_t *counts) {
  static const char fn[] = "pp_histogram_image";
  size_t in_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked =
      histogram_image_check(ctx, fn, pixels, width, height, pitch_bytes, channels, counts,
                            &in_bytes);
  if (ctx->dist)
    return pp_dist_histogram_image(ctx, checked, pixels, width, height, pitch_bytes, channels,
                                   counts);
  PP_TRY(checked);
  size_t count_bytes = (size_t)channels * 256 * sizeof(uint64_t);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dpix;
  void *dcounts;
  PP_STAGE(PP_ARG_IN, "pixels", pixels, in_bytes, 1, dpix);
  PP_STAGE(PP_ARG_OUT, "counts", counts, count_bytes, sizeof(uint64_t), dcounts);
  if (st == PP_OK)
    st = ctx->ops->histogram_image(ctx, (const uint8_t *)dpix, width, height, pitch_bytes,
                                   channels, (uint64_t *)dcounts);
  return pp_args_finish(ctx, &args, st);
}
