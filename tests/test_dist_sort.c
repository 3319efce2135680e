/*
 * test_dist_sort.c — pp_sort on a distributed context against a plain context's sort of the
 * concatenated data.
 *
 * Run under MPI (mpiexec -n P test_dist_sort cpu|cuda): every rank builds the same global
 * sequence (a deterministic generator), keeps its own slice, sorts it globally, and checks
 * that its slice now holds exactly its window [off_r, off_r + n_r) of what a plain context
 * makes of the whole sequence — bit for bit, keys and values, so with the global index as
 * the value the check covers stability (equal keys, -0.0 == +0.0, NaNs) too. Cases: every
 * dtype and order, keys alone and pairs of 4- and 8-byte values, every algorithm, host and
 * pp_malloc buffers, and the skewed inputs of the contract (all keys equal, everything on
 * one rank, n = 0 on some ranks, globally sorted and reversed, heavy duplicates across
 * ranks, NaN and -0.0 keys), at sizes that are multiples of nothing. Then the failure
 * agreement: one rank's bad argument fails the call on every rank, writes nothing, and
 * leaves the context usable.
 *
 * Without MPI (CPU) or NCCL (CUDA) in the build, or without a GPU, the program reports
 * SKIP and exits 77.
 */
#include "harness.h"
#include "th_values.h"

#include <math.h>

static int g_rank, g_nranks;
static pp_context *g_dist, *g_plain;
static int g_case;

enum pattern { P_RANDOM, P_EQUAL, P_SORTED, P_REVERSED, P_FEW, P_SPECIAL, P_COUNT };
static const char *pattern_name[P_COUNT] = {"random", "all equal", "sorted", "reversed",
                                            "3 distinct", "NaN/-0.0/inf"};
enum layout { L_EVEN, L_ZERO_ODD, L_ALL_LAST, L_ALL_FIRST, L_RAMP, L_COUNT };
static const char *layout_name[L_COUNT] = {"even", "n=0 on odd ranks", "all on the last rank",
                                           "all on rank 0", "ramp"};

static const char *type_name(pp_dtype t) {
  static const char *names[] = {"u8", "i32", "u32", "i64", "u64", "f32", "f64"};
  return (unsigned)t < 7 ? names[t] : "?";
}

/* n of rank r for a layout with `base` keys per rank on average. */
static size_t layout_n(int layout, size_t base, int r, int p) {
  switch (layout) {
  case L_ZERO_ODD: return r % 2 ? 0 : base + (size_t)r * 3;
  case L_ALL_LAST: return r == p - 1 ? base * (size_t)p + 1 : 0;
  case L_ALL_FIRST: return r == 0 ? base * (size_t)p + 3 : 0;
  case L_RAMP: return base / 2 + (size_t)r * base / 2 + (size_t)r;
  default: return base + (size_t)((r * 37) % 11);
  }
}

/* Key i of N for a pattern, written at index i of a dtype-t array. */
static void gen_key(pp_dtype t, int pattern, size_t i, size_t N, th_rng *rng, void *keys) {
  uint64_t u = th_next(rng);
  double d = th_range(rng, -1e6, 1e6);
  switch (pattern) {
  case P_EQUAL: u = 7; d = 1.5; break;
  case P_SORTED: u = i; d = (double)i - (double)N / 2; break;
  case P_REVERSED: u = N - i; d = (double)N / 2 - (double)i; break;
  case P_FEW: u %= 3; d = (double)u - 1.0; break;
  case P_SPECIAL: {
    static const double special[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, -NAN};
    d = special[u % 8];
    break;
  }
  default: break;
  }
  if (t == PP_U8 && (pattern == P_SORTED || pattern == P_REVERSED)) u = u * 256 / (N + 1);
  switch (t) {
  case PP_U8: ((uint8_t *)keys)[i] = (uint8_t)u; break;
  case PP_I32: ((int32_t *)keys)[i] = (int32_t)(pattern == P_RANDOM ? (uint32_t)u : (uint32_t)((int64_t)u - 1)); break;
  case PP_U32: ((uint32_t *)keys)[i] = (uint32_t)u; break;
  case PP_I64: ((int64_t *)keys)[i] = pattern == P_RANDOM ? (int64_t)u : (int64_t)u - 1; break;
  case PP_U64: ((uint64_t *)keys)[i] = u; break;
  case PP_F32: {
    float f = (float)d;
    if (pattern == P_SPECIAL && u % 8 == 6) { /* a NaN with a payload of its own */
      uint32_t b = 0x7fc00000u | (uint32_t)(i & 0xffff);
      memcpy(&f, &b, 4);
    }
    ((float *)keys)[i] = f;
    break;
  }
  default: ((double *)keys)[i] = d; break;
  }
}

/* One case: the global sequence of N = sum n_r keys, sorted on the distributed context
 * (this rank's slice) and on the plain context (all of it). Every rank runs every case in
 * the same order, whatever happens, so that no rank waits in a collective alone. */
static void run_case(pp_dtype t, pp_order order, pp_sort_algo algo, size_t value_size,
                     int pattern, int layout, size_t base) {
  const int p = g_nranks, r = g_rank;
  g_case++;
  if (!th_sampled()) return;
  size_t N = 0, off = 0, n = 0;
  for (int q = 0; q < p; q++) {
    const size_t nq = layout_n(layout, base, q, p);
    if (q == r) {
      off = N;
      n = nq;
    }
    N += nq;
  }
  const size_t ks = pp_dtype_size(t);
  unsigned char *all_keys = th_xmalloc(N * ks), *all_vals = th_xmalloc(N * (value_size ? value_size : 1));
  th_rng rng = th_rng_make(0xd157 + (uint64_t)g_case);
  for (size_t i = 0; i < N; i++) {
    gen_key(t, pattern, i, N, &rng, all_keys);
    if (value_size == 8) ((uint64_t *)all_vals)[i] = i;
    if (value_size == 4) ((uint32_t *)all_vals)[i] = (uint32_t)i;
  }
  /* this rank's slice, in host memory or (every other case) in pp_malloc memory */
  unsigned char *keys = th_xmalloc(n * ks), *vals = th_xmalloc(n * (value_size ? value_size : 1));
  memcpy(keys, all_keys + off * ks, n * ks);
  if (value_size) memcpy(vals, all_vals + off * value_size, n * value_size);
  const int on_device = g_case % 2 == 0;
  void *dkeys = keys, *dvals = value_size ? vals : NULL;
  if (on_device) {
    dkeys = th_dev_from_host(g_dist, keys, n * ks);
    dvals = value_size ? th_dev_from_host(g_dist, vals, n * value_size) : NULL;
  }

  const pp_sort_opts opts = {order, algo};
  pp_status s = pp_sort(g_dist, t, dkeys, dvals, value_size, n, &opts);
  const char *what = pattern_name[pattern];
  CHECK_STATUS(s, PP_OK, "rank %d/%d: %s %s %s values %zu algo %d %s, %s, n %zu of %zu (%s): %s",
               r, p, type_name(t), order ? "desc" : "asc", what, value_size, (int)algo,
               layout_name[layout], on_device ? "device" : "host", n, N, pattern_name[pattern],
               pp_last_error(g_dist));
  if (on_device) {
    th_copy(g_dist, keys, dkeys, n * ks);
    if (value_size) th_copy(g_dist, vals, dvals, n * value_size);
    th_dev_free(g_dist, dkeys);
    if (value_size) th_dev_free(g_dist, dvals);
  }

  pp_status sp = pp_sort(g_plain, t, all_keys, value_size ? all_vals : NULL, value_size, N, &opts);
  CHECK_STATUS(sp, PP_OK, "plain reference sort: %s", pp_last_error(g_plain));
  if (s == PP_OK && sp == PP_OK) {
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++) {
      if (memcmp(keys + i * ks, all_keys + (off + i) * ks, ks) != 0) bad = i;
      if (value_size && memcmp(vals + i * value_size, all_vals + (off + i) * value_size, value_size) != 0)
        bad = i;
    }
    CHECK(bad == n, "rank %d/%d: %s %s %s values %zu algo %d, %s, %s: position %zu (global %zu) "
          "differs from the plain sort", r, p, type_name(t), order ? "desc" : "asc", what,
          value_size, (int)algo, layout_name[layout], on_device ? "device" : "host", bad, off + bad);
  }
  free(all_keys);
  free(all_vals);
  free(keys);
  free(vals);
}

/* One rank's bad argument fails the call on every rank with the same status and writes
 * nothing; a sort right after works. */
static void failure_agreement(void) {
  const size_t n = 100 + (size_t)g_rank;
  uint32_t *keys = th_xmalloc(n * 4), *copy = th_xmalloc(n * 4);
  uint64_t *vals = th_xmalloc(n * 8);
  th_rng rng = th_rng_make(0xbad);
  for (size_t i = 0; i < n; i++) {
    keys[i] = copy[i] = (uint32_t)th_next(&rng);
    vals[i] = i;
  }
  const int bad_rank = g_nranks - 1;
  /* a bad value_size on one rank */
  pp_status s = pp_sort(g_dist, PP_U32, keys, vals, g_rank == bad_rank ? 3 : 8, n, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "rank %d: value_size 3 on rank %d", g_rank, bad_rank);
  CHECK(th_names(pp_last_error(g_dist), "pp_sort"), "rank %d: the message names pp_sort: \"%s\"",
        g_rank, pp_last_error(g_dist));
  CHECK(memcmp(keys, copy, n * 4) == 0, "rank %d: keys written by a failed call", g_rank);
  /* NULL keys with n > 0 on one rank */
  s = pp_sort(g_dist, PP_U32, g_rank == bad_rank ? NULL : keys, NULL, 0, n, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "rank %d: NULL keys on rank %d", g_rank, bad_rank);
  CHECK(memcmp(keys, copy, n * 4) == 0, "rank %d: keys written by a failed call", g_rank);
  /* ranks that disagree on the key type */
  if (g_nranks > 1) {
    s = pp_sort(g_dist, g_rank == bad_rank ? PP_I32 : PP_U32, keys, NULL, 0, n, NULL);
    CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "rank %d: key_t differs on rank %d", g_rank, bad_rank);
    CHECK(memcmp(keys, copy, n * 4) == 0, "rank %d: keys written by a failed call", g_rank);
  }
  /* still usable */
  s = pp_sort(g_dist, PP_U32, keys, NULL, 0, n, NULL);
  CHECK_STATUS(s, PP_OK, "rank %d: sort after the failures: %s", g_rank, pp_last_error(g_dist));
  for (size_t i = 1; s == PP_OK && i < n; i++)
    if (!CHECK(keys[i - 1] <= keys[i], "rank %d: unsorted at %zu after the failures", g_rank, i)) break;
  free(keys);
  free(copy);
  free(vals);
}

int main(int argc, char **argv) {
  g_plain = th_init(argc, argv);
  const pp_backend backend = pp_backend_of(g_plain);
  pp_status s = pp_create_dist(&g_dist, backend, NULL, 0, 0);
  if (s == PP_ERR_UNSUPPORTED || s == PP_ERR_NO_DEVICE) {
    printf("SKIP: no distributed %s context in this build or machine: %s\n",
           backend == PP_BACKEND_CUDA ? "cuda" : "cpu", pp_last_error(NULL));
    pp_destroy(g_plain);
    return TH_SKIP_CODE;
  }
  if (!CHECK_STATUS(s, PP_OK, "pp_create_dist: %s", pp_last_error(NULL))) return th_finish(g_plain);
  g_rank = pp_rank(g_dist);
  g_nranks = pp_nranks(g_dist);
  printf("rank %d of %d\n", g_rank, g_nranks);

  /* every dtype and order, keys alone and both value widths: random keys, N above and
     below the splitter candidates' count */
  for (int ti = 0; ti < 7; ti++)
    for (int o = 0; o < 2; o++)
      for (int v = 0; v < 3; v++) {
        const size_t vs = v == 0 ? 0 : v == 1 ? 4 : 8;
        run_case(all_types[ti], (pp_order)o, PP_SORT_AUTO, vs, P_RANDOM, L_EVEN, 1237);
        run_case(all_types[ti], (pp_order)o, PP_SORT_AUTO, vs, ti == 5 || ti == 6 ? P_SPECIAL : P_FEW,
                 L_RAMP, 7);
      }
  /* every algorithm */
  for (int a = PP_SORT_AUTO; a <= PP_SORT_QUICK; a++) {
    run_case(PP_U32, PP_ASCENDING, (pp_sort_algo)a, 8, P_RANDOM, L_EVEN, 2311);
    run_case(PP_F32, PP_DESCENDING, (pp_sort_algo)a, 4, P_SPECIAL, L_ZERO_ODD, 1501);
    run_case(PP_I64, PP_ASCENDING, (pp_sort_algo)a, 0, P_FEW, L_RAMP, 999);
  }
  /* skew: every pattern on every layout, stability checked through the values */
  for (int pat = 0; pat < P_COUNT; pat++)
    for (int l = 0; l < L_COUNT; l++) {
      run_case(PP_F32, (pp_order)((pat + l) % 2), PP_SORT_AUTO, 8, pat, l, 1013);
      run_case(PP_U32, (pp_order)((pat + l + 1) % 2), PP_SORT_AUTO, 4, pat, l, 3001);
    }
  /* tiny and empty totals, and one rank with enough keys for several CPU threads */
  run_case(PP_U32, PP_ASCENDING, PP_SORT_AUTO, 8, P_RANDOM, L_ALL_FIRST, 0);
  run_case(PP_U32, PP_ASCENDING, PP_SORT_AUTO, 8, P_RANDOM, L_EVEN, 0);
  run_case(PP_U64, PP_DESCENDING, PP_SORT_AUTO, 8, P_RANDOM, L_ZERO_ODD, 1);
  run_case(PP_U32, PP_ASCENDING, PP_SORT_AUTO, 8, P_FEW, L_ALL_LAST, 70001);
  /* on a GPU, ranks large enough that a block of the partition passes walks several tiles
     (more than a wave of blocks' worth of keys) */
  if (backend == PP_BACKEND_CUDA) {
    run_case(PP_U32, PP_ASCENDING, PP_SORT_AUTO, 4, P_RANDOM, L_RAMP, 1500007);
    run_case(PP_F64, PP_DESCENDING, PP_SORT_AUTO, 0, P_FEW, L_EVEN, 1200011);
    run_case(PP_U8, PP_ASCENDING, PP_SORT_AUTO, 8, P_RANDOM, L_ALL_FIRST, 1100009);
  }

  failure_agreement();
  pp_destroy(g_dist);
  return th_finish(g_plain);
}
