/*
 * test_merge_runs.c — the backend table's merge_runs (src/core/internal.h), the
 * distributed sort's merge of the runs one exchange brings, called through ctx->ops
 * against a serial reference.
 *
 * Usage: test_merge_runs [cpu|cuda]
 *
 * A case lays out R sorted runs the way the exchange does: one after the other in one
 * buffer, with gaps of 0 to 3 elements between them, the values at their own offsets in a
 * second buffer. The reference is the stable sort of the runs' concatenation (run order,
 * then position), so every tie between runs taken in the wrong order shows in the values,
 * which name each pair's place in the concatenation. Outputs carry guard bytes; inputs are
 * read back unchanged.
 *
 * Grid: every dtype x order x values (none, 4, 8 bytes) x run counts (3 to 64, the most one
 * call takes) x run lengths (all empty but some, one long run among short ones, equal
 * lengths around the GPU kernel's tiles, random) x key patterns (ties across runs, NaNs of
 * several payloads, -0.0 against +0.0, extremes). On CUDA also merges of millions of keys
 * over many tiles, with all keys equal, and runs whose ranges interleave or do not overlap.
 */
#include "harness.h"
#include "th_sort_data.h"

#include "../src/core/internal.h"

typedef struct mr_case {
  pp_dtype t;
  pp_order o;
  size_t vs, runs;
  const size_t *len; /* runs lengths */
  int pattern;
  uint64_t stream;
  const char *shape;
} mr_case;

/* The runs of c: keys generated as one stream (so the few-value patterns share keys across
 * runs), each run sorted, placed at run_k[i] with gaps; values at run_v[i]. */
static void check_case(pp_context *ctx, const mr_case *c) {
  const size_t es = pp_dtype_size(c->t), vs = c->vs;
  size_t n = 0;
  for (size_t i = 0; i < c->runs; i++) n += c->len[i];
  char what[200];
  snprintf(what, sizeof what, "merge_runs %s %s %zu-byte values, %zu runs (%s), n=%zu, %s",
           pp_dtype_string(c->t), oname(c->o), vs, c->runs, c->shape, n,
           pattern_names[c->pattern]);

  th_rng r = th_rng_make(c->stream);
  unsigned char *cat = th_xmalloc(n * es + 1), *vals = th_xmalloc(n * vs + 1);
  gen_keys(c->t, c->pattern, n, &r, cat);
  if (vs) gen_values(vs, n, vals);
  size_t *run_k = th_xmalloc(c->runs * sizeof *run_k), *run_v = th_xmalloc(c->runs * sizeof *run_v);
  size_t at = 0, kspan = 0, vspan = 0;
  for (size_t i = 0; i < c->runs; i++) {
    ref_sort_inplace(c->t, c->o, cat + at * es, c->len[i]);
    run_k[i] = kspan + th_below(&r, 4);
    run_v[i] = vspan + th_below(&r, 4);
    kspan = run_k[i] + c->len[i];
    vspan = run_v[i] + c->len[i];
    at += c->len[i];
  }
  /* the input buffers: gaps filled with random bytes (never read into the output) */
  unsigned char *kin = th_xmalloc(kspan * es + 1), *vin = th_xmalloc(vspan * vs + 1);
  for (size_t b = 0; b < kspan * es; b++) kin[b] = (unsigned char)th_next(&r);
  for (size_t b = 0; b < vspan * vs; b++) vin[b] = (unsigned char)th_next(&r);
  at = 0;
  for (size_t i = 0; i < c->runs; i++) {
    memcpy(kin + run_k[i] * es, cat + at * es, c->len[i] * es);
    if (vs) memcpy(vin + run_v[i] * vs, vals + at * vs, c->len[i] * vs);
    at += c->len[i];
  }
  /* the reference: the stable sort of the concatenation */
  size_t *idx = th_xmalloc(n * sizeof *idx + 1);
  unsigned char *wk = th_xmalloc(n * es + 1), *wv = th_xmalloc(n * vs + 1);
  ref_sort_perm(c->t, c->o, cat, n, idx);
  permute(cat, idx, n, es, wk);
  if (vs) permute(vals, idx, n, vs, wv);

  placed pk = place(ctx, kin, kspan * es, 1, 0), pv = place(ctx, vin, vspan * vs, 1, 0);
  placed ok = place(ctx, NULL, n * es, 1, 0), ov = place(ctx, NULL, n * vs, 1, 0);
  pp_status s = ctx->ops->merge_runs(ctx, c->t, c->o, placed_ptr(&pk), vs ? placed_ptr(&pv) : NULL,
                                     vs, run_k, run_v, c->len, c->runs, placed_ptr(&ok),
                                     vs ? placed_ptr(&ov) : NULL);
  if (s == PP_OK) s = pp_synchronize(ctx);
  if (CHECK(s == PP_OK, "%s: %s (%s)", what, pp_status_string(s), pp_last_error(ctx))) {
    int good = CHECK(placed_fetch(ctx, &ok), "%s: wrote outside the keys' output", what);
    size_t d = first_diff(ok.host, wk, n, es);
    char x[80] = "", y[80] = "";
    if (d < n) {
      fmt_key(c->t, ok.host, d, x, sizeof x);
      fmt_key(c->t, wk, d, y, sizeof y);
    }
    good &= CHECK(d == n, "%s: key %zu is %s, want %s", what, d, x, y);
    if (vs && good) {
      good &= CHECK(placed_fetch(ctx, &ov), "%s: wrote outside the values' output", what);
      d = first_diff(ov.host, wv, n, vs);
      CHECK(d == n, "%s: value %zu is not the one that came with its key (a tie out of order)",
            what, d);
    }
    CHECK(placed_fetch(ctx, &pk) && memcmp(pk.host, kin, kspan * es) == 0, "%s: keys written", what);
    CHECK(placed_fetch(ctx, &pv) && memcmp(pv.host, vin, vspan * vs) == 0, "%s: values written",
          what);
  }
  placed *all[] = {&pk, &pv, &ok, &ov};
  for (size_t i = 0; i < TH_COUNT(all); i++) placed_free(ctx, all[i]);
  TH_FREE(cat, vals, run_k, run_v, kin, vin, idx, wk, wv);
}

static int have_entry(pp_context *ctx) {
  return CHECK(ctx->ops->merge_runs != NULL, "the %s backend has no merge_runs entry",
               th_state_get()->backend_name);
}

/* Run lengths of one shape: fills len[0, runs). */
enum { S_RANDOM, S_ONE_LONG, S_MOST_EMPTY, S_TILES, S_TINY, N_SHAPES };
static const char *shape_names[N_SHAPES] = {"random lengths", "one long run", "most empty",
                                            "lengths around tiles", "1 to 3 keys each"};
static void shape_lengths(int shape, size_t runs, size_t scale, th_rng *r, size_t *len) {
  for (size_t i = 0; i < runs; i++) {
    switch (shape) {
    case S_ONE_LONG: len[i] = i == runs / 2 ? scale * 4 : th_below(r, 5); break;
    case S_MOST_EMPTY: len[i] = i % 3 == 1 ? scale / 2 + th_below(r, scale) : 0; break;
    /* the GPU tiles hold 256 x 5 .. 256 x 15 keys */
    case S_TILES: len[i] = 256 * (5 + 2 * (i % 6)) + (size_t)((int)th_below(r, 3) - 1); break;
    case S_TINY: len[i] = 1 + th_below(r, 3); break;
    default: len[i] = th_below(r, 2 * scale + 1); break;
    }
  }
}

static void test_grid(pp_context *ctx) {
  if (!have_entry(ctx)) return;
  static const size_t counts[] = {3, 4, 5, 8, 13, 64};
  static const size_t vsizes[] = {0, 4, 8};
  size_t len[PP_MERGE_RUNS_MAX];
  uint64_t stream = 1;
  for (size_t ti = 0; ti < N_TYPES; ti++)
    for (int o = 0; o < 2; o++)
      for (size_t vi = 0; vi < TH_COUNT(vsizes); vi++)
        for (size_t ci = 0; ci < TH_COUNT(counts); ci++)
          for (int sh = 0; sh < N_SHAPES; sh++) {
            /* two patterns per combination, turning through all of them */
            const int p0 = (int)((ti + 3 * ci + 5 * (size_t)sh + 7 * vi + (size_t)o) % N_PATTERNS);
            for (int k = 0; k < 2; k++) {
              stream++;
              if (!th_sampled()) continue;
              th_rng r = th_rng_make(stream * 7919);
              const size_t runs = counts[ci];
              shape_lengths(sh, runs, runs > 8 ? 300 : 3000, &r, len);
              const mr_case c = {all_types[ti], (pp_order)o, vsizes[vi], runs, len,
                                 (p0 + 6 * k) % N_PATTERNS, stream, shape_names[sh]};
              check_case(ctx, &c);
            }
          }
}

/* Ties whose bits differ, across runs: -0.0 in even runs and +0.0 in odd ones, NaNs of
 * one payload per run; the values must come out in run order. */
static void test_ties(pp_context *ctx) {
  if (!ctx->ops->merge_runs) return; /* counted by test_grid */
  static const size_t lens[][5] = {{1, 1, 1, 1, 1}, {5, 0, 3, 7, 2}, {1000, 3000, 1, 2000, 4000}};
  for (size_t li = 0; li < TH_COUNT(lens); li++)
    for (int o = 0; o < 2; o++)
      for (int ft = 0; ft < 2; ft++)
        for (int kind = 0; kind < 2; kind++) {
          const pp_dtype t = ft ? PP_F64 : PP_F32;
          size_t n = 0, run_k[5], run_v[5];
          for (size_t i = 0; i < 5; i++) {
            run_k[i] = run_v[i] = n;
            n += lens[li][i];
          }
          unsigned char *k = th_xmalloc(n * 8 + 1), *v = th_xmalloc(n * 4 + 1);
          for (size_t i = 0, at = 0; i < 5; i++)
            for (size_t j = 0; j < lens[li][i]; j++, at++)
              put_bits(t, k, at, kind ? nan_bits(t, 1 + i) : num_bits(t, i % 2 ? 0.0 : -0.0));
          gen_values(4, n, v);
          placed pk = place(ctx, k, n * pp_dtype_size(t), 1, 0), pv = place(ctx, v, n * 4, 1, 0);
          placed ok = place(ctx, NULL, n * pp_dtype_size(t), 1, 0), ov = place(ctx, NULL, n * 4, 1, 0);
          pp_status s = ctx->ops->merge_runs(ctx, t, (pp_order)o, placed_ptr(&pk), placed_ptr(&pv), 4,
                                             run_k, run_v, lens[li], 5, placed_ptr(&ok),
                                             placed_ptr(&ov));
          if (s == PP_OK) s = pp_synchronize(ctx);
          if (CHECK(s == PP_OK, "merge_runs ties: %s", pp_last_error(ctx))) {
            CHECK(placed_fetch(ctx, &ok) && memcmp(ok.host, k, n * pp_dtype_size(t)) == 0,
                  "merge_runs %s %s ties of %s, lengths %zu..: keys moved out of run order",
                  pp_dtype_string(t), oname((pp_order)o), kind ? "NaNs" : "zeros", lens[li][0]);
            CHECK(placed_fetch(ctx, &ov) && memcmp(ov.host, v, n * 4) == 0,
                  "merge_runs %s %s ties of %s: values out of run order", pp_dtype_string(t),
                  oname((pp_order)o), kind ? "NaNs" : "zeros");
          }
          placed *all[] = {&pk, &pv, &ok, &ov};
          for (size_t i = 0; i < TH_COUNT(all); i++) placed_free(ctx, all[i]);
          TH_FREE(k, v);
        }
}

/* Millions of keys over many tiles (CUDA; the CPU merges by halves and is covered above). */
static void test_large(pp_context *ctx) {
  if (!ctx->ops->merge_runs || th_quick() || pp_backend_of(ctx) != PP_BACKEND_CUDA) return;
  static const size_t four[] = {1u << 22, (1u << 22) + 1, (1u << 22) - 3, 1u << 21};
  static const size_t eight[] = {700001, 3, 1 << 20, 0, 999999, 1 << 19, 5, 1 << 20};
  const mr_case cases[] = {
      {PP_U32, PP_ASCENDING, 0, 4, four, P_RANDOM, 101, "4 runs of 2^22"},
      {PP_U32, PP_ASCENDING, 4, 4, four, P_DUPS, 102, "4 runs of 2^22"},
      {PP_F32, PP_DESCENDING, 8, 4, four, P_NANS, 103, "4 runs of 2^22"},
      {PP_I32, PP_ASCENDING, 4, 4, four, P_EQUAL, 104, "4 runs of 2^22, all keys equal"},
      {PP_U64, PP_ASCENDING, 8, 8, eight, P_HEAVY, 105, "8 uneven runs"},
      {PP_F64, PP_ASCENDING, 0, 8, eight, P_SPECIAL, 106, "8 uneven runs"},
      {PP_U8, PP_DESCENDING, 4, 8, eight, P_FEW, 107, "8 uneven runs"},
      {PP_I64, PP_DESCENDING, 4, 4, four, P_SORTED, 108, "4 runs of 2^22"},
  };
  for (size_t i = 0; i < TH_COUNT(cases); i++) check_case(ctx, &cases[i]);
}

int main(int argc, char **argv) {
  static const th_step steps[] = {test_grid, test_ties, test_large};
  return th_run(argc, argv, steps, TH_COUNT(steps));
}
