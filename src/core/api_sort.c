/* api_sort.c — entry points of the sort / merge / top-k family. */
#include "check.h"

pp_status pp_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values, size_t value_size,
                  size_t n, const pp_sort_opts *opts) {
  static const char fn[] = "pp_sort";
  size_t key_bytes = 0, value_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_dtype(ctx, fn, "key_t", key_t));
  pp_sort_opts o = {PP_ASCENDING, PP_SORT_AUTO};
  if (opts) o = *opts;
  PP_TRY(pp_check_enum(ctx, fn, "opts->order", (int)o.order, PP_DESCENDING + 1));
  PP_TRY(pp_check_enum(ctx, fn, "opts->algo", (int)o.algo, PP_SORT_QUICK + 1));
  PP_TRY(pp_check_mul(ctx, fn, "n * key size", n, pp_dtype_size(key_t), &key_bytes));
  PP_TRY(pp_check_data(ctx, fn, "keys", keys, n));
  if (values) {
    if (value_size != 4 && value_size != 8)
      return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: value_size (%zu) is not 4 or 8", fn,
                     value_size);
    PP_TRY(pp_check_mul(ctx, fn, "n * value_size", n, value_size, &value_bytes));
  }
  if (!ctx->ops->sort) return pp_not_implemented(ctx, fn);

  pp_args args = {0};
  pp_status st = PP_OK;
  void *dkeys, *dvalues = NULL;
  PP_STAGE(PP_ARG_INOUT, "keys", keys, key_bytes, pp_dtype_size(key_t), dkeys);
  if (values) PP_STAGE(PP_ARG_INOUT, "values", values, value_bytes, value_size, dvalues);
  if (st == PP_OK)
    st = ctx->ops->sort(ctx, key_t, dkeys, dvalues, values ? value_size : 0, n, o.order, o.algo);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na, const void *b,
                   size_t nb, void *out, pp_order order) {
  static const char fn[] = "pp_merge";
  size_t es = 0, a_bytes = 0, b_bytes = 0, n = 0, out_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_dtype(ctx, fn, "key_t", key_t));
  PP_TRY(pp_check_enum(ctx, fn, "order", (int)order, PP_DESCENDING + 1));
  es = pp_dtype_size(key_t);
  PP_TRY(pp_check_mul(ctx, fn, "na * key size", na, es, &a_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "nb * key size", nb, es, &b_bytes));
  PP_TRY(pp_check_add(ctx, fn, "na + nb", na, nb, &n));
  PP_TRY(pp_check_mul(ctx, fn, "(na + nb) * key size", n, es, &out_bytes));
  PP_TRY(pp_check_data(ctx, fn, "a", a, na));
  PP_TRY(pp_check_data(ctx, fn, "b", b, nb));
  PP_TRY(pp_check_data(ctx, fn, "out", out, n));
  if (!ctx->ops->merge) return pp_not_implemented(ctx, fn);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *da, *db;
  void *dout;
  PP_STAGE(PP_ARG_IN, "a", a, a_bytes, es, da);
  PP_STAGE(PP_ARG_IN, "b", b, b_bytes, es, db);
  PP_STAGE(PP_ARG_OUT, "out", out, out_bytes, es, dout);
  if (st == PP_OK) st = ctx->ops->merge(ctx, key_t, da, na, db, nb, dout, order);
  return pp_args_finish(ctx, &args, st);
}

/* topk and topk_rows: one row of n values is the rows == 1 case of the other. */
static pp_status topk_common(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                             const void *in, size_t rows, size_t cols, size_t k, bool largest,
                             void *values_out, uint64_t *indices_out) {
  size_t es = 0, n = 0, in_bytes = 0, nk = 0, val_bytes = 0, idx_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  PP_TRY(pp_check_dtype(ctx, fn, "dtype", t));
  es = pp_dtype_size(t);
  if (k > cols)
    return rowwise ? pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > cols (%zu)", fn, k, cols)
                   : pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > n (%zu)", fn, k, cols);
  PP_TRY(pp_check_mul(ctx, fn, "rows * cols", rows, cols, &n));
  PP_TRY(pp_check_mul(ctx, fn, "n * element size", n, es, &in_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "rows * k", rows, k, &nk));
  PP_TRY(pp_check_mul(ctx, fn, "k * element size", nk, es, &val_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "k * 8", nk, sizeof(uint64_t), &idx_bytes));
  PP_TRY(pp_check_data(ctx, fn, "in", in, n));
  PP_TRY(pp_check_data(ctx, fn, "values_out", values_out, nk));
  if (rowwise ? !ctx->ops->topk_rows : !ctx->ops->topk) return pp_not_implemented(ctx, fn);

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *din;
  void *dval, *didx = NULL;
  PP_STAGE(PP_ARG_IN, "in", in, in_bytes, es, din);
  PP_STAGE(PP_ARG_OUT, "values_out", values_out, val_bytes, es, dval);
  if (indices_out)
    PP_STAGE(PP_ARG_OUT, "indices_out", indices_out, idx_bytes, sizeof(uint64_t), didx);
  if (st == PP_OK)
    st = rowwise ? ctx->ops->topk_rows(ctx, t, din, rows, cols, k, largest, dval,
                                       (uint64_t *)didx)
                 : ctx->ops->topk(ctx, t, din, cols, k, largest, dval, (uint64_t *)didx);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_topk(pp_context *ctx, pp_dtype t, const void *in, size_t n, size_t k, bool largest,
                  void *values_out, uint64_t *indices_out) {
  return topk_common(ctx, "pp_topk", false, t, in, 1, n, k, largest, values_out, indices_out);
}

pp_status pp_topk_rows(pp_context *ctx, pp_dtype t, const void *in, size_t rows, size_t cols,
                       size_t k, bool largest, void *values_out, uint64_t *indices_out) {
  return topk_common(ctx, "pp_topk_rows", true, t, in, rows, cols, k, largest, values_out,
                     indices_out);
}
