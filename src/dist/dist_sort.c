/* dist_sort.c — pp_sort on a distributed context: sort locally, split exactly, exchange
 * once, merge. Written once against the communicator interface (comm.h) and the backend's
 * table (its sort, merge and the dist-sort entry dsort_rank).
 *
 * The contract (API.md): afterwards rank r's buffer, the same n_r it passed, holds
 * positions [off_r, off_r + n_r) of the globally sorted sequence, off_r = sum of n_q for
 * q < r; stable by global index. Every key is therefore compared as the pair
 * (order image, global index): all pairs are distinct, so any key distribution, all keys
 * equal included, splits at any position (Blelloch et al. 1991, "A comparison of sorting
 * algorithms for the Connection Machine CM-2", who make keys unique the same way).
 *
 * Steps (p ranks, N keys in all), the shape of Shi & Schaeffer's "Parallel sorting by
 * regular sampling" (1992) with the sampled splitters replaced by exact ones:
 *  1. local sort: each rank sorts its keys (and values) into a buffer of its own with the
 *     backend's stable sort and the caller's algorithm, out of place (sort_copy: the
 *     caller's keys are read once and not written). Equal keys then stand in global-index
 *     order.
 *  2. exact splitting: rank b's final window starts at global position off_b. For each
 *     boundary the ranks search the order-image value v* with C(v*) <= off_b < C(v* + 1),
 *     C(v) being the global count of keys whose image is below v, by a (K+1)-ary search
 *     over the image range: each round every rank counts, by binary search in its sorted
 *     keys (dsort_rank), the keys below K probes per boundary, and one all-reduce sums the
 *     counts (Siebert & Wolf 2011, "Parallel sorting with minimal data", split by the same
 *     search with a bisection). 8-bit and 32-bit images take 1 and 4 rounds, 64-bit ones 8.
 *     One all-gather of every rank's count below v* and count equal to v* then places the
 *     boundary inside the run of keys equal to v*, ranks in order (so by global index).
 *     Every rank derives the whole send/receive matrix; every rank receives exactly n_r.
 *  3. one all-to-all-v: rank q's sorted slice for this rank arrives as one sorted run, runs
 *     in rank order.
 *  4. merge: the p runs are merged pairwise (ceil(log2 p) rounds of the backend's stable
 *     merge, pairs through merge_pairs; the lower rank's run first, so equal keys keep
 *     global-index order). The last round writes into the caller's buffers, after the last
 *     agreement: nothing is written there before every rank has got its data.
 *
 * No pass over the keys besides the sort and the merges: the splitting touches
 * O(p K log n) keys per round.
 *
 * Memory per rank (keys alone; values add the same at their width): the caller's n_r, the
 * sorted copy (n_r) and the local sort's scratch; then the copy and the receive buffer
 * (n_r, exactly: the split is exact; plus under 16 bytes per rank, the runs' alignment);
 * the merge rounds alternate between those two. About
 * 3 n_r at the peak, whatever the key distribution.
 *
 * Failures: one rank's failed check or allocation fails the call on every rank with the
 * same status (pp_dist_agree before each collective that could otherwise wait for it);
 * the caller's buffers are written only after the last agreement.
 */
#include "dist_sort.h"

#include <stdlib.h>
#include <string.h>

/* Probes per boundary and round of the exact split: a round narrows each boundary's
 * image interval (K+1)-fold. The ranks' counts of (p-1) K probes are summed by one
 * all-reduce per round; for many ranks fewer probes keep that message small. */
#define DSORT_PROBES_MAX 255
#define DSORT_PROBES_MIN 15
#define DSORT_PROBES_TOTAL 8192

/* The receive side of a buffer pair: keys and (optionally) values. */
typedef struct dsort_buf {
  void *keys, *values;
} dsort_buf;

static void buf_free(pp_context *ctx, dsort_buf *b) {
  if (b->keys) ctx->ops->temp_free(ctx, b->keys);
  if (b->values) ctx->ops->temp_free(ctx, b->values);
  b->keys = b->values = NULL;
}

static pp_status buf_alloc(pp_context *ctx, dsort_buf *b, size_t count, size_t key_size,
                           size_t value_size, const char *what) {
  b->keys = b->values = NULL;
  if (count == 0) return PP_OK;
  size_t kb = 0, vb = 0;
  PP_TRY(pp_check_mul(ctx, "pp_sort", what, count, key_size, &kb));
  if (value_size) PP_TRY(pp_check_mul(ctx, "pp_sort", what, count, value_size, &vb));
  pp_status s = ctx->ops->temp_alloc(ctx, &b->keys, kb);
  if (s == PP_OK && value_size) s = ctx->ops->temp_alloc(ctx, &b->values, vb);
  if (s != PP_OK) {
    if (b->keys) ctx->ops->temp_free(ctx, b->keys);
    b->keys = b->values = NULL;
  }
  return s;
}

/* Host arrays of one call, carved from one allocation (so one failure point). */
typedef struct dsort_host {
  uint64_t *n_all;   /* [p] each rank's n */
  uint64_t *off;     /* [p + 1] exclusive scan of n_all */
  uint64_t *lo, *hi; /* [p + 1] each boundary's image interval [lo, hi] holding v* */
  uint64_t *probe;   /* [(p - 1) K] this round's probes */
  uint64_t *count;   /* [(p - 1) K] their global counts */
  uint64_t *mine;    /* [2 (p - 1)] this rank's count below v* and equal to v*, per boundary */
  uint64_t *all;     /* [p][2 (p - 1)] every rank's */
  uint64_t *cut;     /* [p][p + 1] rank q sends its sorted slice [cut[q][b], cut[q][b+1]) to b */
  size_t *xfer;      /* [8][p] send/recv bytes and offsets, keys then values */
  size_t *run_k, *run_v, *run_n; /* [p] each received run's first key, first value, length */
  void *block;
} dsort_host;

static pp_status host_alloc(pp_context *ctx, dsort_host *h, size_t p, size_t K) {
  memset(h, 0, sizeof *h);
  /* p <= INT_MAX and K <= DSORT_PROBES_MAX: no product below overflows 64 bits */
  const size_t words = p + (p + 1) + 2 * (p + 1) + 2 * (p - 1) * K + 2 * (p - 1) +
                       p * 2 * (p - 1) + p * (p + 1) + 8 * p + 3 * p;
  h->block = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(words * sizeof(uint64_t));
  if (!h->block)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no host memory for %zu ranks' counts", p);
  uint64_t *w = (uint64_t *)h->block;
  h->n_all = w; w += p;
  h->off = w; w += p + 1;
  h->lo = w; w += p + 1;
  h->hi = w; w += p + 1;
  h->probe = w; w += (p - 1) * K;
  h->count = w; w += (p - 1) * K;
  h->mine = w; w += 2 * (p - 1);
  h->all = w; w += p * 2 * (p - 1);
  h->cut = w; w += p * (p + 1);
  h->xfer = (size_t *)w; w += 8 * p;
  h->run_k = (size_t *)w; w += p;
  h->run_v = (size_t *)w; w += p;
  h->run_n = (size_t *)w;
  return PP_OK;
}

/* Probe k of K in the interval (lo, hi] of width w = hi - lo >= 1: lo + ceil-ish
 * (k + 1) w / (K + 1), all distinct and inside when w > K, else lo + 1 + k (capped). */
static uint64_t probe_at(uint64_t lo, uint64_t hi, size_t k, size_t K) {
  const uint64_t w = hi - lo;
  if (w <= K) return lo + 1 + (k < w ? k : w - 1);
  const uint64_t d = (uint64_t)K + 1, j = (uint64_t)k + 1;
  return lo + (w / d) * j + ((w % d) * j) / d;
}

/* Step 2: the exact split. On return h->cut holds every rank's cut points. */
static pp_status exact_split(pp_context *ctx, dsort_host *h, size_t p, size_t K, pp_dtype key_t,
                             pp_order order, const void *sorted, size_t n, uint64_t *dev) {
  pp_comm *comm = pp_dsort_comm(ctx);
  const pp_backend_ops *ops = ctx->ops;
  const unsigned bits = (unsigned)(8 * pp_dtype_size(key_t));
  const uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  const size_t nb = p - 1; /* boundaries 1..p-1, as b - 1 */
  const size_t cap = nb * K;
  uint64_t *dq = dev, *dc = dev + cap;
  for (size_t b = 0; b < nb; b++) {
    h->lo[b] = 0;
    h->hi[b] = top;
  }
  pp_status st = PP_OK;
  for (;;) {
    /* probes of the boundaries still open, K each (fewer when the interval is narrow) */
    size_t q = 0;
    for (size_t b = 0; b < nb; b++) {
      if (h->lo[b] == h->hi[b]) continue;
      const uint64_t w = h->hi[b] - h->lo[b];
      const size_t kb = w < K ? (size_t)w : K;
      for (size_t k = 0; k < kb; k++) h->probe[q++] = probe_at(h->lo[b], h->hi[b], k, K);
    }
    /* every rank has the same intervals, so every rank leaves together */
    if (q == 0) break;
    st = ops->copy(ctx, dq, h->probe, q * sizeof(uint64_t));
    if (st == PP_OK) st = ops->dsort_rank(ctx, key_t, order, sorted, n, dq, q, dc);
    st = pp_dsort_agree(ctx, st);
    if (st == PP_OK) st = comm->ops->allreduce(comm, ctx, dc, dc, q, PP_U64, PP_SUM);
    if (st == PP_OK) st = ops->copy(ctx, h->count, dc, q * sizeof(uint64_t));
    if (st != PP_OK) return st;
    /* C(v) is nondecreasing: v* lies between the last probe with C <= G and the first
     * probe above it */
    q = 0;
    for (size_t b = 0; b < nb; b++) {
      if (h->lo[b] == h->hi[b]) continue;
      const uint64_t G = h->off[b + 1], w = h->hi[b] - h->lo[b];
      const size_t kb = w < K ? (size_t)w : K;
      uint64_t lo = h->lo[b], hi = h->hi[b];
      for (size_t k = 0; k < kb; k++, q++) {
        if (h->count[q] <= G) {
          lo = h->probe[q];
        } else {
          hi = h->probe[q] - 1;
          q += kb - k;
          break;
        }
      }
      h->lo[b] = lo;
      h->hi[b] = hi;
    }
  }
  /* this rank's keys below v* and below v* + 1, per boundary */
  size_t q = 0;
  for (size_t b = 0; b < nb; b++) {
    h->probe[q++] = h->lo[b];
    h->probe[q++] = h->lo[b] == top ? top : h->lo[b] + 1;
  }
  st = ops->copy(ctx, dq, h->probe, q * sizeof(uint64_t));
  if (st == PP_OK) st = ops->dsort_rank(ctx, key_t, order, sorted, n, dq, q, dc);
  if (st == PP_OK) st = ops->copy(ctx, h->mine, dc, q * sizeof(uint64_t));
  st = pp_dsort_agree(ctx, st);
  if (st != PP_OK) return st;
  for (size_t b = 0; b < nb; b++) {
    const uint64_t below = h->mine[2 * b];
    /* the image `top` has no successor: every key at or below it is all of them */
    const uint64_t upto = h->lo[b] == top ? n : h->mine[2 * b + 1];
    h->mine[2 * b + 1] = upto - below; /* keys equal to v* */
  }
  st = comm->ops->host_allgather(comm, ctx, h->mine, h->all, 2 * nb * sizeof(uint64_t));
  if (st != PP_OK) return st;
  /* boundary b: every rank's keys below v*, then G - C(v*) of the keys equal to v*, taken
   * from the ranks in order */
  for (size_t j = 0; j < p; j++) {
    h->cut[j * (p + 1)] = 0;
    h->cut[j * (p + 1) + p] = h->n_all[j];
  }
  for (size_t b = 0; b < nb; b++) {
    uint64_t below = 0;
    for (size_t j = 0; j < p; j++) below += h->all[j * 2 * nb + 2 * b];
    uint64_t need = h->off[b + 1] - below; /* C(v*) <= G by the search */
    for (size_t j = 0; j < p; j++) {
      const uint64_t eq = h->all[j * 2 * nb + 2 * b + 1];
      const uint64_t take = need < eq ? need : eq;
      h->cut[j * (p + 1) + b + 1] = h->all[j * 2 * nb + 2 * b] + take;
      need -= take;
    }
  }
  return PP_OK;
}

/* Step 4: merge the runs pairwise, rounds alternating between buffers, the last round
 * writing into dst (so no copy follows); a round's odd run out is copied. Run i starts at
 * key run_k[i] and value run_v[i] of cur (the receive layout leaves gaps between runs) and
 * holds run_n[i] pairs; every round's output is contiguous. Values (vs bytes each, NULL
 * buffers when vs == 0) move with their keys through the backend's merge_pairs. */
static pp_status merge_runs(pp_context *ctx, pp_dtype key_t, pp_order order, size_t ks,
                            size_t vs, dsort_buf cur, dsort_buf other, dsort_buf dst,
                            size_t *run_k, size_t *run_v, size_t *run_n, size_t runs) {
  const pp_backend_ops *ops = ctx->ops;
  pp_status st = PP_OK;
  do {
    const dsort_buf to = runs <= 2 ? dst : other;
    const char *ck = (const char *)cur.keys, *cv = (const char *)cur.values;
    char *tk = (char *)to.keys, *tv = (char *)to.values;
    size_t out = 0, at = 0;
    for (size_t i = 0; i < runs && st == PP_OK; i += 2) {
      const char *ak = ck + run_k[i] * ks, *av = vs ? cv + run_v[i] * vs : NULL;
      size_t len = run_n[i];
      if (i + 1 < runs) {
        const char *bk = ck + run_k[i + 1] * ks, *bv = vs ? cv + run_v[i + 1] * vs : NULL;
        const size_t nb = run_n[i + 1];
        st = vs ? ops->merge_pairs(ctx, key_t, ak, av, len, bk, bv, nb, tk + at * ks,
                                   tv + at * vs, vs, order)
                : ops->merge(ctx, key_t, ak, len, bk, nb, tk + at * ks, order);
        len += nb;
      } else {
        st = ops->copy(ctx, tk + at * ks, ak, len * ks);
        if (st == PP_OK && vs) st = ops->copy(ctx, tv + at * vs, av, len * vs);
      }
      run_k[out] = run_v[out] = at;
      run_n[out++] = len;
      at += len;
    }
    runs = out;
    other = cur;
    cur = to;
  } while (runs > 1 && st == PP_OK);
  return st;
}

pp_status pp_dist_sort(pp_context *ctx, pp_status checked, pp_dtype key_t, void *keys,
                       void *values, size_t value_size, size_t n, pp_sort_opts opts) {
  static const char fn[] = "pp_sort";
  pp_comm *comm = pp_dsort_comm(ctx);
  const size_t p = (size_t)comm->nranks, r = (size_t)comm->rank;
  size_t vs = values ? value_size : 0; /* the ranks' common width, once agreed */
  const pp_backend_ops *ops = ctx->ops;
  size_t K = DSORT_PROBES_TOTAL / (p > 1 ? p - 1 : 1);
  K = K > DSORT_PROBES_MAX ? DSORT_PROBES_MAX : K < DSORT_PROBES_MIN ? DSORT_PROBES_MIN : K;
  dsort_host h;
  memset(&h, 0, sizeof h);

  pp_status st = checked;
  if (st == PP_OK && (!ops->dsort_rank || !ops->merge || !ops->merge_pairs))
    st = pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: the %s backend has no distributed sort", fn,
                 ops->name);
  if (st == PP_OK) st = host_alloc(ctx, &h, p, K);
  /* the first agreement also brings every rank's n, and checks that the ranks sort the
     same way */
  const pp_dist_val vals[5] = {{NULL, n},
                               {"key_t", (uint64_t)key_t},
                               {"opts->order", (uint64_t)opts.order},
                               {"opts->algo", (uint64_t)opts.algo},
                               {NULL, (uint64_t)(values ? value_size : 0)}};
  st = pp_dist_agree(ctx, fn, st, vals, 5);
  uint64_t N = 0;
  if (st == PP_OK) {
    /* pairs when any rank passes values; a rank with no keys may pass NULL values, any
       other rank must pass values of the same width */
    for (size_t q = 0; q < p; q++) {
      const uint64_t vq = pp_dist_value(ctx, (int)q, 4);
      vs = vq > vs ? (size_t)vq : vs;
    }
    for (size_t q = 0; st == PP_OK && q < p; q++) {
      const uint64_t vq = pp_dist_value(ctx, (int)q, 4), nq = pp_dist_value(ctx, (int)q, 0);
      if (vq != vs && (vq != 0 || nq != 0))
        st = pp_fail(ctx, PP_ERR_INVALID_ARGUMENT,
                     "%s: rank %zu sorts %s, another rank pairs with %zu-byte values", fn, q,
                     vq ? "pairs of another width" : "keys alone", vs);
    }
    for (size_t q = 0; st == PP_OK && q < p; q++) {
      h.n_all[q] = pp_dist_value(ctx, (int)q, 0);
      h.off[q] = N;
      if (h.n_all[q] > UINT64_MAX - N || N + h.n_all[q] > SIZE_MAX) {
        /* every rank sees the same counts, so every rank fails here */
        st = pp_fail(ctx, PP_ERR_OVERFLOW, "%s: the ranks' n overflow size_t", fn);
        break;
      }
      N += h.n_all[q];
    }
    h.off[p] = N;
  }
  if (st != PP_OK || N == 0) {
    free(h.block);
    return st;
  }

  /* the caller's data where the backend computes (host data on a GPU rank is staged) */
  const size_t ks = pp_dtype_size(key_t);
  pp_args args = {0};
  void *dkeys = NULL, *dvalues = NULL;
  PP_STAGE(PP_ARG_INOUT, "keys", keys, n * ks, ks, dkeys);
  if (values) PP_STAGE(PP_ARG_INOUT, "values", values, n * vs, vs, dvalues);
  if (p == 1) { /* one rank: the local sort is the whole job */
    if (st == PP_OK) st = ops->sort(ctx, key_t, dkeys, dvalues, vs, n, opts.order, opts.algo);
    free(h.block);
    return pp_args_finish(ctx, &args, st);
  }

  /* 1. local sort into a buffer of its own (the caller's buffers stay as they are until
     the end): out of place where the backend can, so the caller's keys are read once */
  dsort_buf mine = {NULL, NULL}, recv = {NULL, NULL};
  uint64_t *dev = NULL; /* the split's probes and counts, where the backend computes */
  if (st == PP_OK) st = buf_alloc(ctx, &mine, n, ks, vs, "the sorted copy");
  if (st == PP_OK) st = ops->temp_alloc(ctx, (void **)&dev, 2 * (p - 1) * K * sizeof(uint64_t));
  if (st == PP_OK && n > 1 && ops->sort_copy) {
    st = ops->sort_copy(ctx, key_t, dkeys, mine.keys, dvalues, mine.values, vs, n, opts.order,
                        opts.algo);
  } else {
    if (st == PP_OK && n) st = ops->copy(ctx, mine.keys, dkeys, n * ks);
    if (st == PP_OK && n && vs) st = ops->copy(ctx, mine.values, dvalues, n * vs);
    if (st == PP_OK && n > 1)
      st = ops->sort(ctx, key_t, mine.keys, mine.values, vs, n, opts.order, opts.algo);
  }
  st = pp_dsort_agree(ctx, st);

  /* 2. exact split */
  if (st == PP_OK) st = exact_split(ctx, &h, p, K, key_t, opts.order, mine.keys, n, dev);
  if (dev) ops->temp_free(ctx, dev);

  /* 3. exchange: exactly n keys arrive, rank q's run after the runs before it. Each run is
     placed at the same address modulo 16 as the slice it comes from (every rank knows every
     cut), so the exchange moves aligned 16-byte words (comm.h): the runs have gaps of
     under 16 bytes between them, 16 bytes per rank of slack in all. */
  size_t *ksend = h.xfer, *ksoff = h.xfer + p, *krecv = h.xfer + 2 * p, *kroff = h.xfer + 3 * p;
  size_t *vsend = h.xfer + 4 * p, *vsoff = h.xfer + 5 * p, *vrecv = h.xfer + 6 * p,
         *vroff = h.xfer + 7 * p;
  if (st == PP_OK) {
    size_t kat = 0, vat = 0; /* bytes */
    const uint64_t *my_cut = h.cut + r * (p + 1);
    for (size_t q = 0; q < p; q++) {
      const uint64_t *their = h.cut + q * (p + 1);
      const size_t out = (size_t)(my_cut[q + 1] - my_cut[q]), in = (size_t)(their[r + 1] - their[r]);
      ksend[q] = out * ks;
      vsend[q] = out * vs;
      ksoff[q] = (size_t)my_cut[q] * ks;
      vsoff[q] = (size_t)my_cut[q] * vs;
      krecv[q] = in * ks;
      vrecv[q] = in * vs;
      /* the next offset with the sender's residue modulo 16 (a multiple of the element
         size, as both are) */
      kat += ((size_t)their[r] * ks - kat) & 15;
      vat += ((size_t)their[r] * vs - vat) & 15;
      kroff[q] = kat;
      vroff[q] = vat;
      h.run_k[q] = kat / ks;
      h.run_v[q] = vs ? vat / vs : 0;
      h.run_n[q] = in;
      kat += in * ks;
      vat += in * vs;
    }
    st = buf_alloc(ctx, &recv, n + 16 * p, ks, vs, "received keys");
  }
  st = pp_dsort_agree(ctx, st);
  if (st == PP_OK)
    st = comm->ops->alltoallv(comm, ctx, mine.keys, ksend, ksoff, recv.keys, krecv, kroff);
  if (st == PP_OK && vs)
    st = comm->ops->alltoallv(comm, ctx, mine.values, vsend, vsoff, recv.values, vrecv, vroff);

  /* 4. merge the runs, the last round into the caller's buffers (every collective is done
     and agreed: what is left is local) */
  st = pp_dsort_agree(ctx, st);
  const dsort_buf dst = {dkeys, dvalues};
  if (st == PP_OK && n) {
    size_t runs = 0; /* the non-empty runs, in rank order */
    for (size_t q = 0; q < p; q++) {
      if (!h.run_n[q]) continue;
      h.run_k[runs] = h.run_k[q];
      h.run_v[runs] = h.run_v[q];
      h.run_n[runs++] = h.run_n[q];
    }
    st = merge_runs(ctx, key_t, opts.order, ks, vs, recv, mine, dst, h.run_k, h.run_v, h.run_n,
                    runs);
  }
  /* a local failure after the exchange is still reported by every rank */
  st = pp_dsort_agree(ctx, st);
  buf_free(ctx, &mine);
  buf_free(ctx, &recv);
  free(h.block);
  return pp_args_finish(ctx, &args, st);
}
