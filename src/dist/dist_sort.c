/* dist_sort.c — pp_sort on a distributed context: a sample sort with exact tie-breaking,
 * written once against the communicator interface (comm.h) and the backend's three
 * per-rank passes (pp_backend_ops, "dist-sort entries").
 *
 * The contract (API.md): afterwards rank r's buffer, the same n_r it passed, holds
 * positions [off_r, off_r + n_r) of the globally sorted sequence, off_r = sum of n_q for
 * q < r; stable by global index. Every key is therefore compared as the pair
 * (order image, global index): all pairs are distinct, so any key distribution, all keys
 * equal included, splits at any position (Blelloch et al. 1991, "A comparison of sorting
 * algorithms for the Connection Machine CM-2", who make keys unique the same way).
 *
 * Steps (p ranks, N keys in all):
 *  1. candidates: F = min(N, PP_DSORT_CANDIDATES) global positions, one drawn at random
 *     (a fixed hash) in each of F equal strata of [0, N) — every rank computes the same
 *     positions; the rank holding a position reports its key's image; one host allgather
 *     gives every rank the F (image, global index) pairs, which it sorts. Stratified
 *     positions follow the global sequence, so a rank holding much holds many candidates,
 *     and a periodic input cannot alias with a stride.
 *  2. count (backend pass): every rank counts its keys per fine bin (bin f: exactly f
 *     candidates <= the key); the counts are allgathered, so every rank knows the
 *     global rank of every bin boundary exactly — a histogram sort's first round
 *     (Kale & Krishnan 1993, "A comparison based parallel sorting algorithm"; Solomonik
 *     & Kale 2010, "Highly scalable parallel sorting").
 *  3. buckets: rank b's bucket starts at the bin boundary nearest to off_b, so it receives
 *     n_b keys give or take about one fine bin (with random candidates a bin holds about
 *     N/F keys, its largest a log F factor more: Frazer & McKellar 1970, "Samplesort").
 *     Every rank derives the whole send/receive matrix from the allgathered counts, so no
 *     further count exchange is needed.
 *  4. scatter (backend pass): one stable pass writes bucket b for b != r into a send buffer
 *     and this rank's own bucket straight into its place in the receive buffer.
 *  5. one all-to-all-v: pieces arrive in rank order, each in its input order, so the
 *     received sequence lists equal keys by global index.
 *  6. the backend's local sort (stable, the caller's algorithm) of what arrived.
 *  7. rebalance: rank r now holds global positions [S_r, S_r + m_r); the slices that
 *     belong to other ranks' windows move with a second all-to-all-v (about one fine bin
 *     per boundary), the rest is copied into the caller's buffer.
 *
 * Memory per rank (keys alone; values add the same at their width): the caller's n_r,
 * the send buffer (n_r minus the own bucket) and the receive buffer (m_r) during the
 * exchange; then the receive buffer and the local sort's scratch (m_r) while the send
 * buffer is back in the pool. About 3 n_r at the peak, whatever the key distribution:
 * m_r exceeds n_r by at most the fine bins at its two boundaries.
 *
 * Failures: one rank's failed check or allocation fails the call on every rank with the
 * same status (pp_dist_agree before each collective that could otherwise wait for it);
 * the caller's buffers are written only by the rebalance, after every fallible step.
 */
#include "dist_sort.h"

#include <stdlib.h>
#include <string.h>

/* Candidates for the splitters: more of them narrow the fine bins (the imbalance before
 * the rebalance) and lengthen the binary search of the counting pass. The CUDA passes
 * keep the candidates in shared memory and accept at most PP_DSORT_MAX_CANDIDATES. */
#ifndef PP_DSORT_CANDIDATES
#define PP_DSORT_CANDIDATES 2048
#endif

/* A fixed 64-bit mix (the SplitMix64 finaliser: Steele, Lea & Flood 2014, "Fast
 * splittable pseudorandom number generators"): the random position within each stratum. */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* floor(i * N / F) for i <= F without overflow: (N/F) i + ((N%F) i)/F, and (N%F) i < F^2. */
static uint64_t stratum_begin(uint64_t N, uint64_t F, uint64_t i) {
  return (N / F) * i + ((N % F) * i) / F;
}

typedef struct cand_pair {
  uint64_t image, index;
} cand_pair;

static int cand_cmp(const void *a, const void *b) {
  const cand_pair *x = (const cand_pair *)a, *y = (const cand_pair *)b;
  if (x->image != y->image) return x->image < y->image ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Host arrays of one call, carved from one allocation (so one failure point). */
typedef struct dsort_host {
  uint64_t *n_all;     /* [p] each rank's n */
  uint64_t *off;       /* [p + 1] exclusive scan of n_all */
  uint64_t *my_img;    /* [F] images of the candidates this rank holds (0 elsewhere) */
  uint64_t *all_img;   /* [p][F] */
  uint64_t *local_idx; /* [F] local indices of this rank's candidates */
  uint64_t *cimg, *cidx; /* [F] the sorted candidates */
  cand_pair *cand;     /* [F] */
  uint64_t *counts;    /* [p][F + 1] every rank's fine-bin counts */
  uint64_t *prefix;    /* [F + 2] global count of keys in bins below f */
  size_t *bin_first;   /* [p + 1] first fine bin of bucket b */
  size_t *xfer;        /* [8][p] send/recv bytes and offsets, keys then values */
  void **dst;          /* [2p] scatter destinations: keys, then values */
  void *block;
} dsort_host;

static pp_status host_alloc(pp_context *ctx, dsort_host *h, size_t p, size_t F) {
  memset(h, 0, sizeof *h);
  /* p <= INT_MAX and F <= PP_DSORT_CANDIDATES: no product below can overflow 64 bits */
  const size_t words = p + (p + 1) + F + p * F + F + 2 * F + 2 * F + p * (F + 1) + (F + 2) +
                       (p + 1) + 8 * p + 2 * p;
  h->block = pp_alloc_fails(PP_ALLOC_HOST) ? NULL : malloc(words * sizeof(uint64_t));
  if (!h->block)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: no host memory for %zu ranks' counts", p);
  uint64_t *w = (uint64_t *)h->block;
  h->n_all = w; w += p;
  h->off = w; w += p + 1;
  h->my_img = w; w += F;
  h->all_img = w; w += p * F;
  h->local_idx = w; w += F;
  h->cimg = w; w += F;
  h->cidx = w; w += F;
  h->cand = (cand_pair *)w; w += 2 * F;
  h->counts = w; w += p * (F + 1);
  h->prefix = w; w += F + 2;
  h->bin_first = (size_t *)w; w += p + 1;
  h->xfer = (size_t *)w; w += 8 * p;
  h->dst = (void **)w;
  return PP_OK;
}

/* The receive side of a buffer pair: keys and (optionally) values of `count` elements. */
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

/* Step 3: bucket b starts at the bin boundary whose global position is nearest to off_b
 * (the lower one on a tie), never below the previous bucket's start. */
static void choose_buckets(const dsort_host *h, size_t p, size_t F) {
  const size_t bins = F + 1;
  h->prefix[0] = 0;
  for (size_t f = 0; f < bins; f++) {
    uint64_t t = 0;
    for (size_t q = 0; q < p; q++) t += h->counts[q * bins + f];
    h->prefix[f + 1] = h->prefix[f] + t;
  }
  h->bin_first[0] = 0;
  h->bin_first[p] = bins;
  size_t f = 0;
  for (size_t b = 1; b < p; b++) {
    const uint64_t target = h->off[b];
    while (f < bins && h->prefix[f] < target) f++;
    if (f > h->bin_first[b - 1] && target - h->prefix[f - 1] < h->prefix[f] - target) f--;
    h->bin_first[b] = f;
  }
}

/* Keys of rank q that go to bucket b. */
static uint64_t bucket_count(const dsort_host *h, size_t F, size_t q, size_t b) {
  uint64_t c = 0;
  for (size_t f = h->bin_first[b]; f < h->bin_first[b + 1]; f++) c += h->counts[q * (F + 1) + f];
  return c;
}

pp_status pp_dist_sort(pp_context *ctx, pp_status checked, pp_dtype key_t, void *keys,
                       void *values, size_t value_size, size_t n, pp_sort_opts opts) {
  static const char fn[] = "pp_sort";
  pp_comm *comm = pp_dsort_comm(ctx);
  const size_t p = (size_t)comm->nranks, r = (size_t)comm->rank;
  size_t vs = values ? value_size : 0; /* the ranks' common width, once agreed */
  const pp_backend_ops *ops = ctx->ops;
  dsort_host h;
  memset(&h, 0, sizeof h);

  pp_status st = checked;
  if (st == PP_OK && (!ops->dsort_sample || !ops->dsort_count || !ops->dsort_scatter ||
                      !ops->dsort_plan_free))
    st = pp_fail(ctx, PP_ERR_UNSUPPORTED, "%s: the %s backend has no distributed sort", fn,
                 ops->name);
  if (st == PP_OK) st = host_alloc(ctx, &h, p, PP_DSORT_CANDIDATES);
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
  /* a failed staging is agreed on with the sample below */

  /* 1. candidates */
  const size_t F = N < PP_DSORT_CANDIDATES ? (size_t)N : PP_DSORT_CANDIDATES;
  const uint64_t lo = h.off[r], hi = h.off[r] + n;
  size_t mine = 0, first_mine = 0;
  for (size_t i = 0; i < F; i++) {
    const uint64_t b0 = stratum_begin(N, F, i), width = stratum_begin(N, F, i + 1) - b0;
    const uint64_t g = b0 + mix64(i) % width;
    h.cidx[i] = g;
    if (g >= lo && g < hi) {
      if (mine == 0) first_mine = i;
      h.local_idx[mine++] = g - lo;
    }
  }
  memset(h.my_img, 0, F * sizeof(uint64_t));
  if (st == PP_OK && mine)
    st = ops->dsort_sample(ctx, key_t, opts.order, dkeys, h.local_idx, mine, h.my_img + first_mine);
  st = pp_dsort_agree(ctx, st);
  if (st == PP_OK) st = comm->ops->host_allgather(comm, ctx, h.my_img, h.all_img, F * sizeof(uint64_t));
  if (st == PP_OK) {
    size_t owner = 0;
    for (size_t i = 0; i < F; i++) {
      while (h.cidx[i] >= h.off[owner + 1]) owner++;
      h.cand[i].image = h.all_img[owner * F + i];
      h.cand[i].index = h.cidx[i];
    }
    qsort(h.cand, F, sizeof(cand_pair), cand_cmp);
    for (size_t i = 0; i < F; i++) {
      h.cimg[i] = h.cand[i].image;
      h.cidx[i] = h.cand[i].index;
    }
  }

  /* 2. fine-bin counts of every rank */
  void *plan = NULL;
  uint64_t *my_counts = h.counts + r * (F + 1);
  if (st == PP_OK)
    st = ops->dsort_count(ctx, key_t, opts.order, dkeys, n, h.off[r], h.cimg, h.cidx, F,
                          my_counts, &plan);
  st = pp_dsort_agree(ctx, st);
  if (st == PP_OK) {
    /* allgather in place: my counts move to a staging copy first */
    uint64_t *mine_copy = h.all_img; /* p * F >= F + 1 words unless p == 1 (handled above) */
    memcpy(mine_copy, my_counts, (F + 1) * sizeof(uint64_t));
    st = comm->ops->host_allgather(comm, ctx, mine_copy, h.counts, (F + 1) * sizeof(uint64_t));
  }

  /* 3. buckets and the exchange's sizes (bytes, keys then values) */
  size_t *ksend = h.xfer, *ksoff = h.xfer + p, *krecv = h.xfer + 2 * p, *kroff = h.xfer + 3 * p;
  size_t *vsend = h.xfer + 4 * p, *vsoff = h.xfer + 5 * p, *vrecv = h.xfer + 6 * p,
         *vroff = h.xfer + 7 * p;
  size_t m = 0, nsend = 0;
  if (st == PP_OK) {
    choose_buckets(&h, p, F);
    for (size_t q = 0; q < p; q++) {
      const size_t out = (size_t)bucket_count(&h, F, r, q), in = (size_t)bucket_count(&h, F, q, r);
      ksoff[q] = nsend * ks;
      vsoff[q] = nsend * vs;
      kroff[q] = m * ks;
      vroff[q] = m * vs;
      if (q == r) {
        ksend[q] = vsend[q] = krecv[q] = vrecv[q] = 0; /* written in place by the scatter */
      } else {
        ksend[q] = out * ks;
        vsend[q] = out * vs;
        krecv[q] = in * ks;
        vrecv[q] = in * vs;
        nsend += out;
      }
      m += in; /* m <= N, and N * ks fits: checked by buf_alloc */
    }
  }
  dsort_buf send = {NULL, NULL}, recv = {NULL, NULL};
  if (st == PP_OK) st = buf_alloc(ctx, &recv, m, ks, vs, "received keys");
  if (st == PP_OK) st = buf_alloc(ctx, &send, nsend, ks, vs, "keys to send");

  /* 4. scatter */
  if (st == PP_OK) {
    void **kdst = h.dst, **vdst = h.dst + p;
    for (size_t q = 0; q < p; q++) {
      char *kb = q == r ? (char *)recv.keys + kroff[r] : (char *)send.keys + ksoff[q];
      char *vb = q == r ? (char *)recv.values + vroff[r] : (char *)send.values + vsoff[q];
      kdst[q] = kb;
      vdst[q] = vs ? vb : NULL;
    }
    st = ops->dsort_scatter(ctx, plan, dkeys, dvalues, vs, h.bin_first, p, kdst, vdst);
  }
  if (plan) ops->dsort_plan_free(ctx, plan);
  st = pp_dsort_agree(ctx, st);

  /* 5. exchange */
  if (st == PP_OK)
    st = comm->ops->alltoallv(comm, ctx, send.keys, ksend, ksoff, recv.keys, krecv, kroff);
  if (st == PP_OK && vs)
    st = comm->ops->alltoallv(comm, ctx, send.values, vsend, vsoff, recv.values, vrecv, vroff);
  buf_free(ctx, &send);

  /* 6. local sort */
  if (st == PP_OK && m > 1)
    st = ops->sort(ctx, key_t, recv.keys, recv.values, vs, m, opts.order, opts.algo);
  st = pp_dsort_agree(ctx, st);

  /* 7. rebalance: this rank holds [S_r, S_r + m); rank q's window is [off_q, off_q + n_q) */
  if (st == PP_OK) {
    const uint64_t S = h.prefix[h.bin_first[r]];
    size_t self_from = 0, self_to = 0, self_len = 0;
    for (size_t q = 0; q < p; q++) {
      /* what goes from here to q */
      const uint64_t a = S > h.off[q] ? S : h.off[q];
      const uint64_t e = S + m < h.off[q + 1] ? S + m : h.off[q + 1];
      const size_t len = a < e ? (size_t)(e - a) : 0, from = a < e ? (size_t)(a - S) : 0;
      /* what comes from q to here */
      const uint64_t Sq = h.prefix[h.bin_first[q]], Eq = h.prefix[h.bin_first[q + 1]];
      const uint64_t a2 = Sq > h.off[r] ? Sq : h.off[r];
      const uint64_t e2 = Eq < h.off[r + 1] ? Eq : h.off[r + 1];
      const size_t len2 = a2 < e2 ? (size_t)(e2 - a2) : 0, to = a2 < e2 ? (size_t)(a2 - h.off[r]) : 0;
      if (q == r) {
        self_from = from;
        self_to = to;
        self_len = len;
        ksend[q] = vsend[q] = krecv[q] = vrecv[q] = 0;
      } else {
        ksend[q] = len * ks;
        vsend[q] = len * vs;
        krecv[q] = len2 * ks;
        vrecv[q] = len2 * vs;
      }
      ksoff[q] = from * ks;
      vsoff[q] = from * vs;
      kroff[q] = to * ks;
      vroff[q] = to * vs;
    }
    if (self_len)
      st = ops->copy(ctx, (char *)dkeys + self_to * ks, (char *)recv.keys + self_from * ks,
                     self_len * ks);
    if (st == PP_OK && self_len && vs)
      st = ops->copy(ctx, (char *)dvalues + self_to * vs, (char *)recv.values + self_from * vs,
                     self_len * vs);
    if (st == PP_OK)
      st = comm->ops->alltoallv(comm, ctx, recv.keys, ksend, ksoff, dkeys, krecv, kroff);
    if (st == PP_OK && vs)
      st = comm->ops->alltoallv(comm, ctx, recv.values, vsend, vsoff, dvalues, vrecv, vroff);
  }
  buf_free(ctx, &recv);
  free(h.block);
  return pp_args_finish(ctx, &args, st);
}
