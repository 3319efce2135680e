/*
 * dist_topk.c — pp_topk on a distributed context: the k largest (smallest) of the global
 * sequence, with global indices, on every rank.
 *
 * The global top k holds at most min(k, n_r) elements of rank r, and those are rank r's own
 * top min(k, n_r) under the same order (value, then lowest index first; NaN the largest).
 * So each rank selects that many candidates with the backend's top-k, turns their indices
 * global (+ off_r), and an all-gather-v brings every rank's candidates to every rank,
 * concatenated in rank order; one more top-k over the candidates gives the answer. Among
 * equal values the candidates' order is the global-index order (rank order, then each
 * rank's ascending indices), so the final top-k's tie rule (lowest position first) picks
 * the lowest global indices, as on one GPU. Traffic: sum_r min(k, n_r) x (element + 8)
 * bytes per rank.
 *
 * k is checked against the global n here, with the same message on every rank.
 *
 * Agreements (pp_dist_agree): one with the arguments; one after the scratch and the local
 * top-k, before the all-gathers (a collective waits for every rank, so a rank that failed
 * must say so first); one after the final top-k, whose scratch may fail on one rank alone,
 * before anything is written.
 */
#include "dist_internal.h"

#include <stdlib.h>

/* x rounded up to 16 bytes: where the next array in one scratch block starts */
#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

pp_status pp_dist_topk(pp_context *ctx, pp_status checked, pp_dtype t, const void *in,
                       size_t n, size_t k, bool largest, void *values_out,
                       uint64_t *indices_out) {
  static const char fn[] = "pp_topk";
  if (checked == PP_OK && (!ctx->ops->topk || !ctx->ops->dist_index_map))
    checked = pp_not_implemented(ctx, fn);
  const pp_dist_val vals[] = {{"dtype", (uint64_t)t}, {"k", k}, {"largest", (uint64_t)largest},
                              {NULL, n}};
  PP_TRY(pp_dist_agree(ctx, fn, checked, vals, 4));
  size_t off = 0, total = 0;
  PP_TRY(pp_dist_offsets(ctx, fn, 3, &off, &total));
  if (k > total) return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: k (%zu) > n (%zu)", fn, k, total);

  /* the candidates: c_q = min(k, n_q) from rank q, at cand_off[q] of the gathered arrays */
  const int p = ctx->dist->nranks;
  const size_t es = pp_dtype_size(t);
  size_t *cnt = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(4 * (size_t)p * sizeof *cnt);
  pp_status st = cnt ? PP_OK
                     : pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "%s: no host memory for %d ranks", fn, p);
  size_t ncand = 0, mine = n < k ? n : k;
  if (cnt) {
    for (int q = 0; q < p; q++) {
      size_t nq = (size_t)pp_dist_value(ctx, q, 3);
      cnt[q] = nq < k ? nq : k;
      cnt[p + q] = ncand;
      ncand += cnt[q]; /* <= p * k, and <= total: no overflow */
    }
  }
  /* one scratch block: my candidates (values, indices), everyone's, the answer */
  size_t sz_mine_v = ALIGN16(mine * es), sz_mine_i = ALIGN16(mine * 8);
  size_t sz_all_v = 0, sz_all_i = 0, sz_out_v = ALIGN16(k * es), sz_out_i = ALIGN16(k * 8);
  if (st == PP_OK) st = pp_check_mul(ctx, fn, "candidates * element size", ncand, es, &sz_all_v);
  if (st == PP_OK) st = pp_check_mul(ctx, fn, "candidates * 8", ncand, 8, &sz_all_i);
  sz_all_v = ALIGN16(sz_all_v);
  sz_all_i = ALIGN16(sz_all_i);
  size_t scratch_bytes = 0;
  if (st == PP_OK) {
    const size_t parts[] = {sz_mine_v, sz_mine_i, sz_all_v, sz_all_i, sz_out_v, sz_out_i};
    for (size_t i = 0; i < 6 && st == PP_OK; i++)
      st = pp_check_add(ctx, fn, "top-k scratch", scratch_bytes, parts[i], &scratch_bytes);
  }
  pp_args args = {0};
  const void *din;
  PP_STAGE(PP_ARG_IN, "in", in, n * es, es, din);
  char *scratch = NULL;
  if (st == PP_OK && scratch_bytes) st = ctx->ops->temp_alloc(ctx, (void **)&scratch, scratch_bytes);
  char *mine_v = NULL, *mine_i = NULL, *all_v = NULL, *all_i = NULL, *out_v = NULL, *out_i = NULL;
  if (scratch) {
    mine_v = scratch;
    mine_i = mine_v + sz_mine_v;
    all_v = mine_i + sz_mine_i;
    all_i = all_v + sz_all_v;
    out_v = all_i + sz_all_i;
    out_i = out_v + sz_out_v;
  }
  /* this rank's candidates, with global indices */
  if (st == PP_OK && mine > 0)
    st = ctx->ops->topk(ctx, t, din, n, mine, largest, mine_v, (uint64_t *)mine_i);
  if (st == PP_OK && mine > 0)
    st = ctx->ops->dist_index_map(ctx, NULL, (const uint64_t *)mine_i, mine, off,
                                  (uint64_t *)mine_i);
  st = pp_dist_agree(ctx, fn, st, NULL, 0);
  const bool agreed = st == PP_OK; /* the same on every rank */
  if (st == PP_OK) {
    pp_comm *c = ctx->dist->comm;
    for (int q = 0; q < p; q++) { /* byte counts and offsets of the values */
      cnt[2 * p + q] = cnt[q] * es;
      cnt[3 * p + q] = cnt[p + q] * es;
    }
    st = c->ops->allgatherv(c, ctx, mine_v, mine * es, all_v, cnt + 2 * p, cnt + 3 * p);
    for (int q = 0; q < p; q++) { /* ... and of the indices */
      cnt[2 * p + q] = cnt[q] * 8;
      cnt[3 * p + q] = cnt[p + q] * 8;
    }
    if (st == PP_OK)
      st = c->ops->allgatherv(c, ctx, mine_i, mine * 8, all_i, cnt + 2 * p, cnt + 3 * p);
  }
  /* the answer among the candidates, and their global indices */
  if (st == PP_OK && k > 0)
    st = ctx->ops->topk(ctx, t, all_v, ncand, k, largest, out_v, (uint64_t *)out_i);
  if (st == PP_OK && k > 0)
    st = ctx->ops->dist_index_map(ctx, (const uint64_t *)all_i, (const uint64_t *)out_i, k, 0,
                                  (uint64_t *)out_i);
  /* the final top-k may fail on one rank alone (its scratch): every rank says so before any
     writes its outputs */
  if (agreed) st = pp_dist_agree(ctx, fn, st, NULL, 0);
  if (st == PP_OK && k > 0) st = ctx->ops->copy(ctx, values_out, out_v, k * es);
  if (st == PP_OK && k > 0 && indices_out) st = ctx->ops->copy(ctx, indices_out, out_i, k * 8);
  if (scratch) ctx->ops->temp_free(ctx, scratch);
  free(cnt);
  return pp_args_finish(ctx, &args, st);
}
