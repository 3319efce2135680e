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

/* bins + 1 edges, read into host memory: none NaN, strictly increasing. */
static pp_status check_edge_values(pp_context *ctx, const char *fn, const double *h,
                                   size_t bins) {
  for (size_t i = 0; i <= bins; i++) {
    if (isnan(h[i])) return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: edges[%zu] is NaN", fn, i);
    if (i > 0 && !(h[i - 1] < h[i]))
      return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                     "%s: edges are not strictly increasing (edges[%zu] = %g, edges[%zu] = %g)",
                     fn, i - 1, h[i - 1], i, h[i]);
  }
  return PP_OK;
}

static double *edges_host_buffer(pp_context *ctx, const char *fn, size_t bytes) {
  double *h = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(bytes);
  if (!h) pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for the edges", fn);
  return h;
}

/* The edges must be read to be checked, and they may live on the device: the check reads a
 * host copy of their bytes (bins + 1 doubles, sized by histogram_range_check). */
static pp_status check_edges(pp_context *ctx, const char *fn, const double *edges, size_t bins,
                             size_t bytes) {
  double *h = edges_host_buffer(ctx, fn, bytes);
  if (!h) return PP_ERR_OUT_OF_MEMORY;
  pp_status s = ctx->ops->copy(ctx, h, edges, bytes);
  if (s == PP_OK) s = check_edge_values(ctx, fn, h, bins);
  free(h);
  return s;
}

/* Everything but the edges' values, which check_edges reads. */
static pp_status histogram_range_check(pp_context *ctx, const char *fn, pp_dtype t,
                                       const void *in, size_t n, const double *edges,
                                       size_t bins, uint64_t *counts, size_t *in_bytes,
                                       size_t *count_bytes, size_t *edge_bytes) {
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, in_bytes));
  PP_TRY(check_counts(ctx, fn, bins, counts, count_bytes));
  /* every size is known before any overlap is judged */
  PP_TRY(pp_check_ptr(ctx, fn, "edges", edges));
  PP_TRY(pp_check_mul(ctx, fn, "(bins + 1) * 8", bins + 1, sizeof(double), edge_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, *count_bytes, "in", in, *in_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "counts", counts, *count_bytes, "edges", edges, *edge_bytes));
  if (!ctx->ops->histogram_range) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

/* Edges up to this many bytes (8191 bins) are read back while the backend counts; more
 * would be read back at once anyway (the backend's short-read buffer holds 64 KiB), and
 * their counts would need as much scratch again. */
#define OVERLAP_EDGE_BYTES ((size_t)64 << 10)

/* Edges in the backend's own memory (device memory) and a backend that reads back while it
 * works: checking them first would put a round trip to the host before the count. Instead
 * the edges are read back while the backend counts into scratch, checked on arrival, and
 * the counts copied out only when they pass, so a call with bad edges still writes
 * nothing. The backend's rules never index outside the counts, whatever the edges hold. */
static pp_status histogram_range_overlapped(pp_context *ctx, const char *fn, pp_dtype t,
                                            const void *din, size_t n, const double *dedges,
                                            size_t edge_bytes, size_t bins, void *dcounts,
                                            size_t count_bytes) {
  double *h = edges_host_buffer(ctx, fn, edge_bytes);
  if (!h) return PP_ERR_OUT_OF_MEMORY;
  void *tmp = NULL;
  pp_status s = ctx->ops->temp_alloc(ctx, &tmp, count_bytes);
  if (s != PP_OK) {
    free(h);
    return s;
  }
  s = ctx->ops->read_begin(ctx, h, dedges, edge_bytes);
  if (s == PP_OK) {
    pp_status counted = ctx->ops->histogram_range(ctx, t, din, n, dedges, bins, (uint64_t *)tmp);
    s = ctx->ops->read_end(ctx);
    if (s == PP_OK) s = check_edge_values(ctx, fn, h, bins);
    if (s == PP_OK) s = counted;
    if (s == PP_OK) s = ctx->ops->copy(ctx, dcounts, tmp, count_bytes);
  }
  ctx->ops->temp_free(ctx, tmp);
  free(h);
  return s;
}

pp_status pp_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                             const double *edges, size_t bins, uint64_t *counts) {
  static const char fn[] = "pp_histogram_range";
  size_t in_bytes = 0, count_bytes = 0, edge_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = histogram_range_check(ctx, fn, t, in, n, edges, bins, counts, &in_bytes,
                                            &count_bytes, &edge_bytes);
  const bool overlap = checked == PP_OK && !ctx->dist && ctx->ops->read_begin &&
                       edge_bytes <= OVERLAP_EDGE_BYTES && ctx->ops->accessible(ctx, edges);
  if (checked == PP_OK && !overlap) checked = check_edges(ctx, fn, edges, bins, edge_bytes);
  if (ctx->dist) return pp_dist_histogram_range(ctx, checked, t, in, n, edges, bins, counts);
  PP_TRY(checked);

  /* checked, the edges are an input like any other: used in place where the backend can
   * read them, staged otherwise */
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din, *dedges;
  void *dcounts;
  PP_STAGE(PP_ARG_IN, "in", in, in_bytes, pp_dtype_size(t), din);
  PP_STAGE(PP_ARG_IN, "edges", edges, edge_bytes, sizeof(double), dedges);
  PP_STAGE(PP_ARG_OUT, "counts", counts, count_bytes, sizeof(uint64_t), dcounts);
  if (st == PP_OK && overlap)
    st = histogram_range_overlapped(ctx, fn, t, din, n, (const double *)dedges, edge_bytes, bins,
                                    dcounts, count_bytes);
  else if (st == PP_OK)
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
