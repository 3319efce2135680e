/* api_reduce.c — entry points of the reduce / scan / select family: checks, staging,
 * dispatch. */
#include "check.h"

static pp_status reduce_check(pp_context *ctx, const char *fn, pp_op op, pp_dtype t,
                              const void *in, size_t n, void *out, size_t *bytes) {
  PP_TRY(pp_check_op(ctx, fn, op, false));
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, bytes));
  PP_TRY(pp_check_ptr(ctx, fn, "out", out));
  PP_TRY(pp_check_disjoint(ctx, fn, "out", out, pp_dtype_size(t), "in", in, *bytes));
  if (!ctx->ops->reduce) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n, void *out) {
  static const char fn[] = "pp_reduce";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = reduce_check(ctx, fn, op, t, in, n, out, &bytes);
  if (ctx->dist) return pp_dist_reduce(ctx, checked, op, t, in, n, out);
  PP_TRY(checked);

  size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dout;
  PP_STAGE(PP_ARG_IN, "in", in, bytes, es, din);
  PP_STAGE(PP_ARG_OUT, "out", out, es, es, dout);
  if (st == PP_OK) st = ctx->ops->reduce(ctx, op, t, din, n, dout);
  return pp_args_finish(ctx, &args, st);
}

static pp_status argreduce_check(pp_context *ctx, const char *fn, pp_op op, pp_dtype t,
                                 const void *in, size_t n, void *value_out, uint64_t *index_out,
                                 size_t *bytes) {
  PP_TRY(pp_check_op(ctx, fn, op, true));
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, bytes));
  PP_TRY(pp_check_ptr(ctx, fn, "value_out", value_out));
  PP_TRY(pp_check_ptr(ctx, fn, "index_out", index_out));
  size_t es = pp_dtype_size(t), is = sizeof *index_out;
  PP_TRY(pp_check_disjoint(ctx, fn, "value_out", value_out, es, "in", in, *bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "index_out", index_out, is, "in", in, *bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "index_out", index_out, is, "value_out", value_out, es));
  if (!ctx->ops->argreduce) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                       void *value_out, uint64_t *index_out) {
  static const char fn[] = "pp_argreduce";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = argreduce_check(ctx, fn, op, t, in, n, value_out, index_out, &bytes);
  if (ctx->dist) return pp_dist_argreduce(ctx, checked, op, t, in, n, value_out, index_out);
  PP_TRY(checked);

  size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dval, *didx;
  PP_STAGE(PP_ARG_IN, "in", in, bytes, es, din);
  PP_STAGE(PP_ARG_OUT, "value_out", value_out, es, es, dval);
  PP_STAGE(PP_ARG_OUT, "index_out", index_out, sizeof(uint64_t), sizeof(uint64_t), didx);
  if (st == PP_OK) st = ctx->ops->argreduce(ctx, op, t, din, n, dval, (uint64_t *)didx);
  return pp_args_finish(ctx, &args, st);
}

static pp_status scan_check(pp_context *ctx, const char *fn, pp_op op, pp_dtype t,
                            const void *in, void *out, size_t n, size_t *bytes) {
  PP_TRY(pp_check_op(ctx, fn, op, false));
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, bytes));
  PP_TRY(pp_check_data(ctx, fn, "out", out, n));
  PP_TRY(pp_check_alias(ctx, fn, "out", out, *bytes, "in", in, *bytes));
  if (!ctx->ops->scan) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_scan(pp_context *ctx, pp_op op, pp_dtype t, const void *in, void *out, size_t n,
                  bool inclusive) {
  static const char fn[] = "pp_scan";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = scan_check(ctx, fn, op, t, in, out, n, &bytes);
  if (ctx->dist) return pp_dist_scan(ctx, checked, op, t, in, out, n, inclusive);
  PP_TRY(checked);

  size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dout;
  if (in == out) { /* in place: stage once, both ways */
    PP_STAGE(PP_ARG_INOUT, "in/out", in, bytes, es, dout);
    din = dout;
  } else {
    PP_STAGE(PP_ARG_IN, "in", in, bytes, es, din);
    PP_STAGE(PP_ARG_OUT, "out", out, bytes, es, dout);
  }
  if (st == PP_OK) st = ctx->ops->scan(ctx, op, t, din, dout, n, inclusive);
  return pp_args_finish(ctx, &args, st);
}

/* A staged select output is copied back only up to the count, so the caller's memory
 * past the kept elements is left as it was. */
static pp_status trim_staged_output(pp_context *ctx, pp_arg *out, const void *dcount,
                                    size_t elem_size) {
  if (!out->staged) return PP_OK;
  uint64_t kept = 0;
  PP_TRY(ctx->ops->copy(ctx, &kept, dcount, sizeof kept));
  out->bytes = (size_t)kept * elem_size;
  return PP_OK;
}

/* select and partition share everything but the backend entry and the output name.
 * In place (out == in) the backend reads a private copy of the input: a thread (or a
 * block) storing its kept elements would otherwise overwrite elements another has not
 * read yet, and a partition writes its rejected elements ahead of where it reads. value
 * is read before anything is written, so it may point anywhere, into out included. */
static pp_status select_like(pp_context *ctx, const char *fn, bool partition, pp_dtype t,
                             const void *in, size_t n, pp_cmp cmp, const void *value, void *out,
                             uint64_t *count) {
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_typed_input(ctx, fn, t, in, n, &bytes));
  PP_TRY(pp_check_enum(ctx, fn, "cmp", (int)cmp, PP_NE + 1));
  PP_TRY(pp_check_ptr(ctx, fn, "value", value));
  PP_TRY(pp_check_data(ctx, fn, "out", out, n));
  const char *count_name = partition ? "count_true" : "count";
  PP_TRY(pp_check_ptr(ctx, fn, count_name, count));
  PP_TRY(pp_check_alias(ctx, fn, "out", out, bytes, "in", in, bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, count_name, count, sizeof *count, "in", in, bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, count_name, count, sizeof *count, "out", out, bytes));
  if (partition ? !ctx->ops->partition : !ctx->ops->select) return pp_not_implemented(ctx, fn);

  size_t es = pp_dtype_size(t);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dout, *dcount;
  PP_STAGE(in == out ? PP_ARG_IN_COPY : PP_ARG_IN, "in", in, bytes, es, din);
  PP_STAGE(PP_ARG_OUT, "out", out, bytes, es, dout);
  PP_STAGE(PP_ARG_OUT, "count", count, sizeof(uint64_t), sizeof(uint64_t), dcount);
  if (st == PP_OK)
    st = partition ? ctx->ops->partition(ctx, t, din, n, cmp, value, dout, (uint64_t *)dcount)
                   : ctx->ops->select(ctx, t, din, n, cmp, value, dout, (uint64_t *)dcount);
  if (st == PP_OK && !partition) st = trim_staged_output(ctx, &args.a[1], dcount, es);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_select(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                    const void *value, void *out, uint64_t *count) {
  return select_like(ctx, "pp_select", false, t, in, n, cmp, value, out, count);
}

pp_status pp_partition(pp_context *ctx, pp_dtype t, const void *in, size_t n, pp_cmp cmp,
                       const void *value, void *out, uint64_t *count_true) {
  return select_like(ctx, "pp_partition", true, t, in, n, cmp, value, out, count_true);
}

/* The widest power of two (up to 16) dividing elem_size: the alignment backends may
 * assume for records of that size. */
static size_t record_align(size_t elem_size) {
  size_t a = 1;
  while (a < 16 && elem_size % (a * 2) == 0) a *= 2;
  return a;
}

pp_status pp_select_flagged(pp_context *ctx, size_t elem_size, const void *in,
                            const uint8_t *flags, size_t n, void *out, uint64_t *count) {
  static const char fn[] = "pp_select_flagged";
  size_t bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  if (elem_size == 0) return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: elem_size is 0", fn);
  PP_TRY(pp_check_mul(ctx, fn, "n * elem_size", n, elem_size, &bytes));
  PP_TRY(pp_check_data(ctx, fn, "in", in, n));
  PP_TRY(pp_check_data(ctx, fn, "flags", flags, n));
  PP_TRY(pp_check_data(ctx, fn, "out", out, n));
  PP_TRY(pp_check_ptr(ctx, fn, "count", count));
  /* in place as pp_select (see select_like); flags must stay intact while out is written */
  PP_TRY(pp_check_alias(ctx, fn, "out", out, bytes, "in", in, bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "out", out, bytes, "flags", flags, n));
  PP_TRY(pp_check_disjoint(ctx, fn, "count", count, sizeof *count, "in", in, bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "count", count, sizeof *count, "flags", flags, n));
  PP_TRY(pp_check_disjoint(ctx, fn, "count", count, sizeof *count, "out", out, bytes));
  if (!ctx->ops->select_flagged) return pp_not_implemented(ctx, fn);

  size_t al = record_align(elem_size);
  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din, *dflags;
  void *dout, *dcount;
  PP_STAGE(in == out ? PP_ARG_IN_COPY : PP_ARG_IN, "in", in, bytes, al, din);
  PP_STAGE(PP_ARG_IN, "flags", flags, n, 1, dflags);
  PP_STAGE(PP_ARG_OUT, "out", out, bytes, al, dout);
  PP_STAGE(PP_ARG_OUT, "count", count, sizeof(uint64_t), sizeof(uint64_t), dcount);
  if (st == PP_OK)
    st = ctx->ops->select_flagged(ctx, elem_size, din, (const uint8_t *)dflags, n, dout,
                                  (uint64_t *)dcount);
  if (st == PP_OK) st = trim_staged_output(ctx, &args.a[2], dcount, elem_size);
  return pp_args_finish(ctx, &args, st);
}
