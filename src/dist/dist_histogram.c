/*
 * dist_histogram.c — the three histograms on a distributed context.
 *
 * Each rank counts its own data with the backend's histogram into scratch (a rank whose
 * arguments failed their checks skips that), the ranks agree that every rank got that far
 * and passed the same bins and range, and one all-reduce (SUM of u64) makes the global counts on
 * every rank: bins x 8 bytes cross the links, whatever n is. The counts reach the caller's
 * buffer only after the all-reduce, so a failure anywhere before it leaves every rank's
 * buffer untouched.
 */
#include "dist_internal.h"

#include <string.h>

static uint64_t double_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* The collective half shared by the three: agree on st (the local pass's status), sum the
 * scratch counts over the ranks, copy them out, release everything. */
static pp_status sum_and_finish(pp_context *ctx, const char *fn, pp_status st, pp_args *args,
                                uint64_t *dcounts, size_t bins, uint64_t *counts,
                                const pp_dist_val *same, size_t nsame) {
  st = pp_dist_agree(ctx, fn, st, same, nsame);
  if (st == PP_OK) {
    pp_comm *c = ctx->dist->comm;
    st = c->ops->allreduce(c, ctx, dcounts, dcounts, bins, PP_U64, PP_SUM);
  }
  if (st == PP_OK) st = ctx->ops->copy(ctx, counts, dcounts, bins * sizeof(uint64_t));
  if (dcounts) ctx->ops->temp_free(ctx, dcounts);
  return pp_args_finish(ctx, args, st);
}

static pp_status counts_scratch(pp_context *ctx, pp_status st, size_t bins, uint64_t **dcounts) {
  *dcounts = NULL;
  if (st != PP_OK) return st;
  void *p = NULL;
  st = ctx->ops->temp_alloc(ctx, &p, bins * sizeof(uint64_t));
  *dcounts = (uint64_t *)p;
  return st;
}

pp_status pp_dist_histogram_even(pp_context *ctx, pp_status checked, pp_dtype t,
                                 const void *in, size_t n, size_t bins, double lo, double hi,
                                 uint64_t *counts) {
  static const char fn[] = "pp_histogram_even";
  const pp_dist_val same[] = {{"dtype", (uint64_t)t}, {"bins", bins},
                              {"lo", double_bits(lo)}, {"hi", double_bits(hi)}};
  const size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = checked;
  const void *din;
  uint64_t *dcounts;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  st = counts_scratch(ctx, st, bins, &dcounts);
  if (st == PP_OK) st = ctx->ops->histogram_even(ctx, t, din, n, bins, lo, hi, dcounts);
  return sum_and_finish(ctx, fn, st, &args, dcounts, bins, counts, same,
                        sizeof same / sizeof *same);
}

pp_status pp_dist_histogram_range(pp_context *ctx, pp_status checked, pp_dtype t,
                                  const void *in, size_t n, const double *edges, size_t bins,
                                  uint64_t *counts) {
  static const char fn[] = "pp_histogram_range";
  const pp_dist_val same[] = {{"dtype", (uint64_t)t}, {"bins", bins}};
  const size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = checked;
  const void *din, *dedges;
  uint64_t *dcounts;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  PP_STAGE(PP_ARG_IN, "edges", edges, (bins + 1) * sizeof(double), sizeof(double), dedges);
  st = counts_scratch(ctx, st, bins, &dcounts);
  if (st == PP_OK)
    st = ctx->ops->histogram_range(ctx, t, din, n, (const double *)dedges, bins, dcounts);
  return sum_and_finish(ctx, fn, st, &args, dcounts, bins, counts, same,
                        sizeof same / sizeof *same);
}

pp_status pp_dist_histogram_image(pp_context *ctx, pp_status checked, const uint8_t *pixels,
                                  size_t width, size_t height, size_t pitch_bytes,
                                  int channels, uint64_t *counts) {
  static const char fn[] = "pp_histogram_image";
  const pp_dist_val same[] = {{"channels", (uint64_t)channels}};
  const size_t bins = (size_t)channels * 256;
  size_t in_bytes = 0;
  if (width && height) in_bytes = (height - 1) * pitch_bytes + width * (size_t)channels;
  pp_args args = {0};
  pp_status st = checked;
  const void *dpix;
  uint64_t *dcounts;
  PP_STAGE(PP_ARG_IN, "pixels", pixels, in_bytes, 1, dpix);
  st = counts_scratch(ctx, st, bins, &dcounts);
  if (st == PP_OK)
    st = ctx->ops->histogram_image(ctx, (const uint8_t *)dpix, width, height, pitch_bytes,
                                   channels, dcounts);
  return sum_and_finish(ctx, fn, st, &args, dcounts, bins, counts, same,
                        sizeof same / sizeof *same);
}
