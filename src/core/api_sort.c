/* api_sort.c — entry points of the sort / merge / top-k family. */
#include "check.h"

/* The key type and the options of pp_sort and pp_argsort. */
static pp_status sort_opts_check(pp_context *ctx, const char *fn, pp_dtype key_t, pp_sort_opts o) {
  PP_TRY(pp_check_dtype(ctx, fn, "key_t", key_t));
  PP_TRY(pp_check_enum(ctx, fn, "opts->order", (int)o.order, PP_DESCENDING + 1));
  return pp_check_enum(ctx, fn, "opts->algo", (int)o.algo, PP_SORT_QUICK + 1);
}

static pp_status sort_check(pp_context *ctx, const char *fn, pp_dtype key_t, void *keys,
                            void *values, size_t value_size, size_t n, pp_sort_opts o,
                            size_t *key_bytes, size_t *value_bytes) {
  PP_TRY(sort_opts_check(ctx, fn, key_t, o));
  PP_TRY(pp_check_mul(ctx, fn, "n * key size", n, pp_dtype_size(key_t), key_bytes));
  PP_TRY(pp_check_data(ctx, fn, "keys", keys, n));
  if (values) {
    if (value_size != 4 && value_size != 8)
      return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: value_size (%zu) is not 4 or 8", fn,
                     value_size);
    PP_TRY(pp_check_mul(ctx, fn, "n * value_size", n, value_size, value_bytes));
    /* both are sorted in place: each moves under the other's permutation */
    PP_TRY(pp_check_disjoint(ctx, fn, "values", values, *value_bytes, "keys", keys, *key_bytes));
  }
  if (!ctx->ops->sort) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

pp_status pp_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values, size_t value_size,
                  size_t n, const pp_sort_opts *opts) {
  static const char fn[] = "pp_sort";
  size_t key_bytes = 0, value_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  pp_sort_opts o = {PP_ASCENDING, PP_SORT_AUTO};
  if (opts) o = *opts;
  pp_status checked =
      sort_check(ctx, fn, key_t, keys, values, value_size, n, o, &key_bytes, &value_bytes);
  if (ctx->dist) return pp_dist_sort(ctx, checked, key_t, keys, values, value_size, n, o);
  PP_TRY(checked);

  pp_args args = {0};
  pp_status st = PP_OK;
  void *dkeys, *dvalues = NULL;
  PP_STAGE(PP_ARG_INOUT, "keys", keys, key_bytes, pp_dtype_size(key_t), dkeys);
  if (values) PP_STAGE(PP_ARG_INOUT, "values", values, value_bytes, value_size, dvalues);
  if (st == PP_OK)
    st = ctx->ops->sort(ctx, key_t, dkeys, dvalues, values ? value_size : 0, n, o.order, o.algo);
  return pp_args_finish(ctx, &args, st);
}

/* One position, 0, as an index of index_size bytes, for n == 1 (the backends sort n >= 2). */
static const uint64_t zero_index = 0;

pp_status pp_argsort(pp_context *ctx, pp_dtype key_t, const void *keys, size_t n,
                     void *sorted_keys, pp_dtype index_t, void *indices,
                     const pp_sort_opts *opts) {
  static const char fn[] = "pp_argsort";
  size_t key_bytes = 0, index_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  if (ctx->dist)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED,
                   "%s: not defined on a distributed context (pp_sort with each key's global "
                   "index as its value gives the global order)", fn);
  pp_sort_opts o = {PP_ASCENDING, PP_SORT_AUTO};
  if (opts) o = *opts;
  PP_TRY(sort_opts_check(ctx, fn, key_t, o));
  /* positions 0 .. n-1 must fit the index type: no silent truncation */
  uint64_t limit = 0;
  switch (index_t) {
  case PP_U32: limit = (uint64_t)1 << 32; break;
  case PP_I32: limit = (uint64_t)1 << 31; break;
  case PP_U64:
  case PP_I64: limit = UINT64_MAX; break;
  default:
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                   "%s: index_t (%d) is not PP_U32, PP_I32, PP_U64 or PP_I64", fn, (int)index_t);
  }
  if ((uint64_t)n > limit)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                   "%s: n (%zu) positions do not fit index_t %s (at most %llu)", fn, n,
                   index_t == PP_U32 ? "PP_U32" : "PP_I32", (unsigned long long)limit);
  const size_t ks = pp_dtype_size(key_t), is = pp_dtype_size(index_t);
  PP_TRY(pp_check_mul(ctx, fn, "n * key size", n, ks, &key_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "n * index size", n, is, &index_bytes));
  PP_TRY(pp_check_data(ctx, fn, "keys", keys, n));
  PP_TRY(pp_check_data(ctx, fn, "indices", indices, n));
  /* sorted_keys may be NULL: only the order is wanted */
  PP_TRY(pp_check_disjoint(ctx, fn, "indices", indices, index_bytes, "keys", keys, key_bytes));
  if (sorted_keys) {
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_keys", sorted_keys, key_bytes, "keys", keys,
                             key_bytes));
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_keys", sorted_keys, key_bytes, "indices",
                             indices, index_bytes));
  }
  if (!ctx->ops->sort_copy) return pp_not_implemented(ctx, fn);
  if (n == 0) return PP_OK;

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dkeys;
  void *dsorted = NULL, *didx, *scratch = NULL;
  PP_STAGE(PP_ARG_IN, "keys", keys, key_bytes, ks, dkeys);
  if (sorted_keys) PP_STAGE(PP_ARG_OUT, "sorted_keys", sorted_keys, key_bytes, ks, dsorted);
  PP_STAGE(PP_ARG_OUT, "indices", indices, index_bytes, is, didx);
  if (st == PP_OK && !sorted_keys) {
    st = ctx->ops->temp_alloc(ctx, &scratch, key_bytes);
    dsorted = scratch;
  }
  if (st == PP_OK && n == 1) {
    st = ctx->ops->copy(ctx, dsorted, dkeys, ks);
    if (st == PP_OK) st = ctx->ops->copy(ctx, didx, &zero_index, is);
  } else if (st == PP_OK) {
    st = ctx->ops->sort_copy(ctx, key_t, dkeys, dsorted, NULL, didx, is, n, o.order, o.algo);
  }
  if (scratch) ctx->ops->temp_free(ctx, scratch);
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_sort_copy(pp_context *ctx, pp_dtype key_t, const void *keys, const void *values,
                       size_t value_size, size_t n, void *sorted_keys, void *sorted_values,
                       const pp_sort_opts *opts) {
  static const char fn[] = "pp_sort_copy";
  size_t key_bytes = 0, value_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  if (ctx->dist)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED,
                   "%s: not defined on a distributed context (pp_sort sorts across the "
                   "ranks in place)", fn);
  pp_sort_opts o = {PP_ASCENDING, PP_SORT_AUTO};
  if (opts) o = *opts;
  PP_TRY(sort_opts_check(ctx, fn, key_t, o));
  const size_t ks = pp_dtype_size(key_t);
  const size_t vs = values ? value_size : 0;
  PP_TRY(pp_check_mul(ctx, fn, "n * key size", n, ks, &key_bytes));
  if (values) {
    if (value_size != 4 && value_size != 8)
      return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: value_size (%zu) is not 4 or 8", fn,
                     value_size);
    PP_TRY(pp_check_mul(ctx, fn, "n * value_size", n, value_size, &value_bytes));
  }
  PP_TRY(pp_check_data(ctx, fn, "keys", keys, n));
  PP_TRY(pp_check_data(ctx, fn, "sorted_keys", sorted_keys, n));
  PP_TRY(pp_check_disjoint(ctx, fn, "sorted_keys", sorted_keys, key_bytes, "keys", keys,
                           key_bytes));
  if (values) {
    PP_TRY(pp_check_data(ctx, fn, "values", values, n));
    PP_TRY(pp_check_data(ctx, fn, "sorted_values", sorted_values, n));
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_values", sorted_values, value_bytes, "values",
                             values, value_bytes));
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_values", sorted_values, value_bytes, "keys",
                             keys, key_bytes));
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_keys", sorted_keys, key_bytes, "values", values,
                             value_bytes));
    PP_TRY(pp_check_disjoint(ctx, fn, "sorted_keys", sorted_keys, key_bytes, "sorted_values",
                             sorted_values, value_bytes));
  }
  if (!ctx->ops->sort_copy) return pp_not_implemented(ctx, fn);
  if (n == 0) return PP_OK;

  pp_args args = {0};
  pp_status st = PP_OK;
  const void *dkeys, *dvalues = NULL;
  void *dsorted, *dsorted_v = NULL;
  PP_STAGE(PP_ARG_IN, "keys", keys, key_bytes, ks, dkeys);
  if (values) PP_STAGE(PP_ARG_IN, "values", values, value_bytes, vs, dvalues);
  PP_STAGE(PP_ARG_OUT, "sorted_keys", sorted_keys, key_bytes, ks, dsorted);
  if (values) PP_STAGE(PP_ARG_OUT, "sorted_values", sorted_values, value_bytes, vs, dsorted_v);
  if (st == PP_OK && n == 1) {
    st = ctx->ops->copy(ctx, dsorted, dkeys, ks);
    if (st == PP_OK && values) st = ctx->ops->copy(ctx, dsorted_v, dvalues, vs);
  } else if (st == PP_OK) {
    st = ctx->ops->sort_copy(ctx, key_t, dkeys, dsorted, dvalues, dsorted_v, vs, n, o.order,
                             o.algo);
  }
  return pp_args_finish(ctx, &args, st);
}

pp_status pp_merge(pp_context *ctx, pp_dtype key_t, const void *a, size_t na, const void *b,
                   size_t nb, void *out, pp_order order) {
  static const char fn[] = "pp_merge";
  size_t es = 0, a_bytes = 0, b_bytes = 0, n = 0, out_bytes = 0;
  PP_TRY(pp_check_ctx(ctx));
  if (ctx->dist)
    return pp_fail(ctx, PP_ERR_UNSUPPORTED,
                   "%s: not defined on a distributed context (merge each rank's data with a "
                   "plain context, or sort globally with pp_sort)", fn);
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
  /* a and b may overlap each other (both are only read); out overlaps neither */
  PP_TRY(pp_check_disjoint(ctx, fn, "out", out, out_bytes, "a", a, a_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "out", out, out_bytes, "b", b, b_bytes));
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
/* The byte sizes of a top-k call: its input, and its value and index outputs. */
typedef struct topk_sizes {
  size_t in_bytes, val_bytes, idx_bytes;
} topk_sizes;

static pp_status topk_check(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                            const void *in, size_t rows, size_t cols, size_t k,
                            void *values_out, uint64_t *indices_out, topk_sizes *sz) {
  size_t n = 0, nk = 0;
  PP_TRY(pp_check_dtype(ctx, fn, "dtype", t));
  size_t es = pp_dtype_size(t);
  /* on a distributed context k is checked against the global n, by the distributed code */
  if (k > cols && !(ctx->dist && !rowwise))
    return rowwise ? pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > cols (%zu)", fn, k, cols)
                   : pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > n (%zu)", fn, k, cols);
  PP_TRY(pp_check_mul(ctx, fn, "rows * cols", rows, cols, &n));
  PP_TRY(pp_check_mul(ctx, fn, "n * element size", n, es, &sz->in_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "rows * k", rows, k, &nk));
  PP_TRY(pp_check_mul(ctx, fn, "k * element size", nk, es, &sz->val_bytes));
  PP_TRY(pp_check_mul(ctx, fn, "k * 8", nk, sizeof(uint64_t), &sz->idx_bytes));
  PP_TRY(pp_check_data(ctx, fn, "in", in, n));
  PP_TRY(pp_check_data(ctx, fn, "values_out", values_out, nk));
  size_t idx_bytes = indices_out ? sz->idx_bytes : 0;
  PP_TRY(pp_check_disjoint(ctx, fn, "values_out", values_out, sz->val_bytes, "in", in,
                           sz->in_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "indices_out", indices_out, idx_bytes, "in", in,
                           sz->in_bytes));
  PP_TRY(pp_check_disjoint(ctx, fn, "indices_out", indices_out, idx_bytes, "values_out",
                           values_out, sz->val_bytes));
  if (rowwise ? !ctx->ops->topk_rows : !ctx->ops->topk) return pp_not_implemented(ctx, fn);
  return PP_OK;
}

static pp_status topk_common(pp_context *ctx, const char *fn, bool rowwise, pp_dtype t,
                             const void *in, size_t rows, size_t cols, size_t k, bool largest,
                             void *values_out, uint64_t *indices_out) {
  topk_sizes sz = {0, 0, 0};
  PP_TRY(pp_check_ctx(ctx));
  pp_status checked = topk_check(ctx, fn, rowwise, t, in, rows, cols, k, values_out, indices_out,
                                 &sz);
  if (ctx->dist && !rowwise)
    return pp_dist_topk(ctx, checked, t, in, cols, k, largest, values_out, indices_out);
  PP_TRY(checked);
  size_t es = pp_dtype_size(t), in_bytes = sz.in_bytes, val_bytes = sz.val_bytes,
         idx_bytes = sz.idx_bytes;

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
