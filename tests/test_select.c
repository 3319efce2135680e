/*
 * test_select.c — pp_select, pp_partition and pp_select_flagged against serial references
 * written here.
 *
 * Usage: test_select [cpu|cuda]
 *
 * select keeps the elements x with (x cmp value), in order, and writes their count;
 * partition writes the kept ones in order, then the others in order, all n; select_flagged
 * keeps the records whose flag byte is non-zero. All copy elements bit for bit; NaN
 * compares unordered (only != holds), -0.0 equals +0.0, and 64-bit integers compare
 * exactly. Every dtype x comparison x data pattern (th_scan_data.h) runs at sizes one past
 * the CUDA kernels' tiles up to 300007, and a few from 2^20 to 3*2^23 elements (partition's
 * chunks of several tiles); select_flagged runs record sizes 1..40 bytes under eight flag
 * patterns, and a few large cases that reach its larger tiles. Partition's own paths (see
 * "partition's paths" below): sizes around its subtiles and its warps' chunks, and data
 * made of every op's interval edges. Calls take turns over the placements of
 * test_scan.c, with the count in host or pp_malloc memory. Output buffers
 * are pre-filled with a sentinel: select must write exactly *count elements, partition
 * exactly n. PARPRIM_TEST_SEED varies the data.
 *
 * PARPRIM_TEST_QUICK=1 (for runs under compute-sanitizer) keeps, per dtype, the random
 * pattern at a few sizes around the CUDA tiles, the first large case of f32, per dtype
 * the edge data at one size of a few subtiles and (f32) one size past a wave of chunks,
 * and a few record sizes of select_flagged.
 */
#include "harness.h"
#include "th_scan_data.h"

/* ---- select / partition reference and checks --------------------------------------- */

/* -1, 0, 1, or 2 when unordered (a NaN): comparisons are then false, != true. */
#define ORDER3(a, b) (((a) > (b)) - ((a) < (b)))
static int order3(pp_dtype t, val x, val v) {
  if (val_isnan(t, x) || val_isnan(t, v)) return 2;
  switch (t) {
  case PP_U8: return ORDER3(x.u8, v.u8);
  case PP_I32: return ORDER3(x.i32, v.i32);
  case PP_U32: return ORDER3(x.u32, v.u32);
  case PP_I64: return ORDER3(x.i64, v.i64);
  case PP_U64: return ORDER3(x.u64, v.u64);
  case PP_F32: return ORDER3(x.f32, v.f32);
  default: return ORDER3(x.f64, v.f64);
  }
}

static int ref_keep(pp_dtype t, val x, val v, pp_cmp cmp) {
  int o = order3(t, x, v);
  if (o == 2) return cmp == PP_NE;
  switch (cmp) {
  case PP_GT: return o > 0;
  case PP_GE: return o >= 0;
  case PP_LT: return o < 0;
  case PP_LE: return o <= 0;
  case PP_EQ: return o == 0;
  default: return o != 0;
  }
}

/* want: the kept elements in order, then (partition) the others in order; keep: scratch
 * of n bytes. */
static size_t ref_select(pp_dtype t, const void *h, size_t n, pp_cmp cmp, val v, void *want,
                         unsigned char *keep) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    keep[i] = (unsigned char)ref_keep(t, load(t, h, i), v, cmp);
    if (keep[i]) store(t, want, k++, load(t, h, i));
  }
  size_t kept = k;
  for (size_t i = 0; i < n; i++)
    if (!keep[i]) store(t, want, k++, load(t, h, i));
  return kept;
}

static uint64_t *g_dcount; /* a pp_malloc'd count */

/* One pp_select (part 0) or pp_partition (part 1) call at one placement; count_dev puts
 * the count in pp_malloc memory. */
static void select_once(pp_context *ctx, bufs *b, int part, pp_dtype t, const void *h, size_t n,
                        pp_cmp cmp, val v, const void *want, size_t kept, place pl,
                        int count_dev, const char *data) {
  const char *fn = part ? "pp_partition" : "pp_select";
  const size_t es = pp_dtype_size(t), bytes = n * es;
  unsigned char *inbuf = pl.in_dev ? b->dev[0] : b->host[0];
  unsigned char *outbuf = pl.out_dev ? b->dev[1] : b->host[1];
  unsigned char *in = inbuf + pl.in_off * es, *out = outbuf + pl.out_off * es;
  char where[80], vs[96];
  place_desc(pl, where, sizeof where);
  fmt_val(t, v, vs, sizeof vs);

  put(ctx, pl.in_dev, inbuf, b->sent, b->bytes);
  put(ctx, pl.out_dev, outbuf, b->sent, b->bytes);
  put(ctx, pl.in_dev, in, h, bytes);
  uint64_t count = 0xCDCDCDCDCDCDCDCDull;
  if (count_dev) th_copy(ctx, g_dcount, &count, sizeof count);
  uint64_t *cp = count_dev ? g_dcount : &count;
  pp_status s = part ? pp_partition(ctx, t, in, n, cmp, &v, out, cp)
                     : pp_select(ctx, t, in, n, cmp, &v, out, cp);
  g_calls++;
  if (!CHECK_STATUS(s, PP_OK, "%s %s x %s %s n=%zu %s %s (%s)", fn, pp_dtype_string(t),
                    cmpname(cmp), vs, n, data, where, pp_last_error(ctx)))
    return;
  if (count_dev) th_copy(ctx, &count, g_dcount, sizeof count);
  get(ctx, pl.out_dev, b->back, outbuf, b->bytes);
  const unsigned char *got = b->back + pl.out_off * es;
  size_t cmp_n = part ? n : kept;
  if (!CHECK(count == kept, "%s %s x %s %s n=%zu %s %s: count %" PRIu64 ", want %zu", fn,
             pp_dtype_string(t), cmpname(cmp), vs, n, data, where, count, kept))
    return;
  size_t first = cmp_n;
  for (size_t i = 0; i < cmp_n * es; i++)
    if (got[i] != ((const unsigned char *)want)[i]) {
      first = i / es;
      break;
    }
  char g[96], e[96];
  CHECK(first == cmp_n, "%s %s x %s %s n=%zu %s %s: out[%zu] is %s, want %s (kept %zu)", fn,
        pp_dtype_string(t), cmpname(cmp), vs, n, data, where, first,
        first < cmp_n ? fmt_val(t, load(t, got, first), g, sizeof g) : "",
        first < cmp_n ? fmt_val(t, load(t, want, first), e, sizeof e) : "", kept);
  CHECK(guards_ok(b->back, pl.out_off * es, pl.out_off * es + cmp_n * es, b->bytes),
        "%s %s x %s %s n=%zu %s %s: wrote past out[%zu] (count %zu)", fn, pp_dtype_string(t),
        cmpname(cmp), vs, n, data, where, cmp_n, kept);
}

/* Thresholds that keep none, all, about half, exactly some; NaN; signed zeros; the
 * extremes of t. */
static size_t thresholds(pp_dtype t, int p, const void *h, size_t n, th_rng *r, val *out) {
  size_t k = 0;
  if (n) {
    out[k++] = load(t, h, th_below(r, n));
    out[k++] = load(t, h, n / 2);
  }
  if (is_float(t)) {
    out[k++] = vflt(t, (double)NAN);
    out[k++] = vflt(t, 0.0);
    out[k++] = vflt(t, -0.0);
    out[k++] = vflt(t, (double)INFINITY);
    out[k++] = vflt(t, -(double)INFINITY);
    out[k++] = vflt(t, t == PP_F32 ? FLT_MAX : DBL_MAX);
    out[k++] = vflt(t, 0.25);
  } else {
    out[k++] = vrank(t, 0);
    out[k++] = vrank(t, UINT64_MAX);
    out[k++] = vsmall(t, 0);
    if (p == P_NEAR) {
      out[k++] = near_base(t, 1);
      out[k++] = near_base(t, 2);
    }
  }
  return k;
}

/* thr_limit < 0: every threshold, else that many starting at a random one; each call at
 * `places` placements in turn, the count in host or pp_malloc memory by turns. */
static void select_case_parts(pp_context *ctx, pp_dtype t, int p, size_t n, int thr_limit,
                              int places, int parts, th_rng *r) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(n * es + 1);
  void *want = th_xmalloc(n * es + 1);
  unsigned char *keep = th_xmalloc(n + 1);
  gen(t, p, n, h, r);
  val thr[16];
  size_t nthr = thresholds(t, p, h, n, r, thr);
  bufs *b = bufs_for(n, es);
  char data[64];
  snprintf(data, sizeof data, "data=%s", pattern_names[p]);
  size_t first = thr_limit < 0 ? 0 : th_below(r, nthr);
  size_t count = thr_limit < 0 ? nthr : (size_t)thr_limit;
  for (size_t k = 0; k < count && k < nthr; k++) {
    val v = thr[(first + k) % nthr];
    for (int ci = 0; ci < 6; ci++) {
      pp_cmp cmp = all_cmps[ci];
      size_t kept = ref_select(t, h, n, cmp, v, want, keep);
      for (int part = 0; part < 2; part++)
        for (int j = 0; j < places && (parts >> part & 1); j++) {
          unsigned rot = g_rot++ % 32;
          select_once(ctx, b, part, t, h, n, cmp, v, want, kept, place_of((int)(rot % 16)),
                      (int)(rot / 16), data);
        }
    }
  }
  free(keep);
  free(want);
  free(h);
}

/* select and partition */
static void select_case(pp_context *ctx, pp_dtype t, int p, size_t n, int thr_limit, int places,
                        th_rng *r) {
  select_case_parts(ctx, t, p, n, thr_limit, places, 3, r);
}

/* Hundreds of tiles of the CUDA kernels for every element size (the sweep stops at 300007). */
static const struct big_case big_select_cases[] = {
    {PP_U8, P_RANDOM, (1u << 23) + 5, 0},  {PP_I32, P_NEAR, M3, 0},     {PP_F32, P_RANDOM, M3, 0},
    {PP_F32, P_NAN_SOME, M3, 0},           {PP_U64, P_RANDOM, M3, 0},   {PP_F64, P_ZERO_MIX, M1, 0},
    /* partition's chunks (scan.cu, one per placing block of a wave) span several tiles */
    {PP_F32, P_RANDOM, 6 * (1u << 20) + 3, 0}, {PP_U8, P_RANDOM, 3 * (1u << 23) + 7, 0},
};

static void sweep_select_type(pp_context *ctx, pp_dtype t, th_rng *r) {
  /* 3073, 6145, 24577: one past select's tiles (3072, 6144, 24576 elements of 8, 4, 1 bytes);
   * partition's are powers of two (PP_SELECT_VECS, PP_PARTITION_VECS in scan.cu) */
  static const size_t sizes[] = {0,    1,    2,    3,    31,    32,    33,    255,
                                 256,  257,  1023, 1025, 3073,  4096,  6145,  8193,
                                 24577, 65535, 65536, 65537, 300007};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  for (size_t si = 0; si < ns; si++) {
    const size_t n = sizes[si];
    if (g_quick && si % 3 != 1 && n != 6145 && n != 24577) continue;
    for (int p = 0; p < P_COUNT; p++) {
      if (!pattern_applies(t, p) || (g_quick && p != P_RANDOM)) continue;
      int wide = p == P_RANDOM || p == P_NEAR || p == P_NAN_SOME || p == P_ZERO_MIX;
      if (n <= 257)
        select_case(ctx, t, p, n, -1, 1, r);
      else if (n <= 8193)
        select_case(ctx, t, p, n, 2, 1, r);
      else if (n <= 65537 && (wide || p % 4 == (int)(si % 4)))
        select_case(ctx, t, p, n, 1, 1, r);
      else if (wide && (t == PP_F32 || t == PP_U64 || t == PP_I32 || t == PP_U8))
        select_case(ctx, t, p, n, 1, 1, r);
    }
  }
  int bigs = 0;
  for (size_t k = 0; k < sizeof big_select_cases / sizeof big_select_cases[0]; k++)
    if (big_select_cases[k].t == t && !(g_quick && (bigs++ || t != PP_F32)))
      select_case(ctx, t, big_select_cases[k].p, big_select_cases[k].n, 2, 1, r);
}

static void sweep_select(pp_context *ctx) {
  th_sweep_types(ctx, "select/partition sweep", 200, sweep_select_type);
}

/* ---- partition's paths ----------------------------------------------------------------
 * The CUDA partition (scan.cu) works in subtiles of 32 lanes x 4 vectors of 16 bytes
 * (512 4-byte or 256 8-byte elements; u8 takes 2 vectors: 1024 elements), one contiguous
 * chunk of subtiles per warp of a full wave of placing blocks (4 blocks of 8 warps per
 * SM), and keeps x where lo <= x <= hi (or outside it, for !=), the interval's ends being
 * the threshold or its neighbour. So: sizes one short of, at and one past a subtile;
 * sizes where the chunks go from one subtile to two and to three (from the SM count that
 * pp_get_device_info reports; on another device or on the CPU backend they are just
 * large sizes); and data made of the thresholds and their neighbours (next float up and
 * down, integer +-1, signed zeros, subnormals, the extremes, NaN) under every op. */

/* The neighbour of v above (up) or below it in t: integers wrap, floats step to the next
 * representable value (NaN stays NaN, an infinity stays where it points). */
static val nudge(pp_dtype t, val v, int up) {
  switch (t) {
  case PP_U8: v.u8 = (uint8_t)(up ? v.u8 + 1 : v.u8 - 1); break;
  case PP_I32:
  case PP_U32: v.u32 = up ? v.u32 + 1u : v.u32 - 1u; break;
  case PP_I64:
  case PP_U64: v.u64 = up ? v.u64 + 1u : v.u64 - 1u; break;
  case PP_F32: v.f32 = nextafterf(v.f32, up ? INFINITY : -INFINITY); break;
  default: v.f64 = nextafter(v.f64, up ? (double)INFINITY : -(double)INFINITY); break;
  }
  return v;
}

/* Thresholds whose intervals end at the edges of t: signed zeros, the smallest
 * subnormals, the largest finite values, the infinities, NaN; the integer extremes and
 * their neighbours. */
static size_t edge_thresholds(pp_dtype t, val *out) {
  size_t k = 0;
  if (is_float(t)) {
    const double tiny = t == PP_F32 ? FLT_TRUE_MIN : DBL_TRUE_MIN;
    const double big = t == PP_F32 ? FLT_MAX : DBL_MAX;
    const double v[] = {0.0, -0.0, tiny, -tiny, 1.0, 1.5, big, -big,
                        (double)INFINITY, -(double)INFINITY, (double)NAN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) out[k++] = vflt(t, v[i]);
  } else {
    out[k++] = vrank(t, 0);
    out[k++] = nudge(t, vrank(t, 0), 1);
    out[k++] = vrank(t, UINT64_MAX);
    out[k++] = nudge(t, vrank(t, UINT64_MAX), 0);
    out[k++] = vsmall(t, 0);
    out[k++] = vsmall(t, is_signed(t) ? -1 : 1);
  }
  return k;
}

/* n elements drawn from the edge thresholds and their neighbours, every threshold under
 * every op, select and partition at one placement each (in turn). */
static void edge_case(pp_context *ctx, pp_dtype t, size_t n, th_rng *r) {
  if (!th_sampled()) return;
  const size_t es = pp_dtype_size(t);
  void *h = th_xmalloc(n * es + 1), *want = th_xmalloc(n * es + 1);
  unsigned char *keep = th_xmalloc(n + 1);
  val thr[16];
  const size_t nthr = edge_thresholds(t, thr);
  for (size_t i = 0; i < n; i++) {
    const val v = thr[th_below(r, nthr)];
    const uint64_t k = th_below(r, 3);
    store(t, h, i, k == 0 ? v : nudge(t, v, k == 1));
  }
  bufs *b = bufs_for(n, es);
  for (size_t k = 0; k < nthr; k++)
    for (int ci = 0; ci < 6; ci++) {
      const size_t kept = ref_select(t, h, n, all_cmps[ci], thr[k], want, keep);
      for (int part = 0; part < 2; part++) {
        unsigned rot = g_rot++ % 32;
        select_once(ctx, b, part, t, h, n, all_cmps[ci], thr[k], want, kept,
                    place_of((int)(rot % 16)), (int)(rot / 16), "data=edges");
      }
    }
  free(keep);
  free(want);
  free(h);
}

static size_t g_wave_subs; /* subtiles in a wave of the placing pass, as the test sees it */

static void sweep_partition_type(pp_context *ctx, pp_dtype t, th_rng *r) {
  const size_t es = pp_dtype_size(t), sub = es == 1 ? 1024 : 2048 / es;
  const size_t edge_sizes[] = {1, sub - 1, sub, sub + 1, 3 * sub + 5};
  for (size_t si = 0; si < sizeof edge_sizes / sizeof edge_sizes[0]; si++)
    if (!g_quick || si == 4) edge_case(ctx, t, edge_sizes[si], r);
  /* the chunks of a wave: one subtile each (the last one short), then two, then three */
  if (t == PP_U32 || t == PP_I64 || (g_quick && t != PP_F32)) return;
  const size_t w = g_wave_subs * sub;
  const size_t wave_sizes[] = {w - 1, w + 1, 2 * w + sub / 2 + 3};
  const int p = is_float(t) ? P_NAN_SOME : P_RANDOM;
  for (size_t si = 0; si < sizeof wave_sizes / sizeof wave_sizes[0]; si++) {
    if (g_quick && si != 1) continue;
    if ((wave_sizes[si] + 2) * es > g_b.cap) continue; /* a larger GPU than the buffers */
    select_case_parts(ctx, t, p, wave_sizes[si], 1, 1, 2, r);
  }
}

static void sweep_partition(pp_context *ctx) {
  pp_device_info info;
  int sms = 132;
  if (pp_get_device_info(ctx, &info) == PP_OK && info.compute_major > 0)
    sms = info.multiprocessors;
  g_wave_subs = (size_t)sms * 4 * 8;
  th_sweep_types(ctx, "partition paths", 250, sweep_partition_type);
}

/* ---- select_flagged ----------------------------------------------------------------- */

enum { F_NONE, F_ALL, F_HALF, F_SPARSE, F_DENSE, F_ALTERNATE, F_FIRST_HALF, F_LAST, F_COUNT };
static const char *flag_names[F_COUNT] = {"none",  "all",       "random-half", "sparse",
                                          "dense", "alternate", "first-half",  "last-only"};

/* Non-zero flags take many byte values (0x80 and 0xFF too): "non-zero", not "== 1". */
static uint8_t flag_byte(int f, size_t i, size_t n, th_rng *r) {
  uint8_t on = (uint8_t)(1 + th_below(r, 255));
  switch (f) {
  case F_NONE: return 0;
  case F_ALL: return on;
  case F_HALF: return th_next(r) & 1 ? on : 0;
  case F_SPARSE: return th_below(r, 97) == 0 ? on : 0;
  case F_DENSE: return th_below(r, 97) == 0 ? 0 : on;
  case F_ALTERNATE: return i & 1 ? 0x80 : 0;
  case F_FIRST_HALF: return i < n / 2 ? 0xFF : 0;
  default: return i == n - 1 ? 1 : 0;
  }
}

/* One data set, `places` calls at placements in turn. */
static void flagged_case(pp_context *ctx, size_t es, int f, size_t n, int places, th_rng *r) {
  if (!th_sampled()) return;
  const size_t bytes = n * es;
  unsigned char *h = th_xmalloc(bytes + 1), *want = th_xmalloc(bytes + 1);
  uint8_t *flags = th_xmalloc(n + 1);
  for (size_t i = 0; i < bytes; i++) h[i] = (unsigned char)th_next(r);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    flags[i] = flag_byte(f, i, n, r);
    if (flags[i]) memcpy(want + kept++ * es, h + i * es, es);
  }
  bufs *b = bufs_for(n, es);
  const size_t total = b->bytes;
  for (int j = 0; j < places; j++) {
    /* bit 0: in and flags in pp_malloc; bit 1: in and flags offset (by a record, a byte);
       bit 2: out in pp_malloc; bit 3: out offset by a record; bit 4: count in pp_malloc */
    unsigned v = g_rot++ % 32;
    int idev = v & 1, ioff = v >> 1 & 1, odev = v >> 2 & 1, ooff = v >> 3 & 1, cdev = v >> 4 & 1;
    unsigned char *ib = b->host[0], *fb = b->host[2], *ob = b->host[1];
    if (idev) ib = b->dev[0], fb = b->dev[2];
    if (odev) ob = b->dev[1];
    put(ctx, idev, ib, b->sent, total);
    put(ctx, idev, ib + ioff * es, h, bytes);
    put(ctx, idev, fb + ioff, flags, n);
    put(ctx, odev, ob, b->sent, total);
    uint64_t count = 0xCDCDCDCDCDCDCDCDull;
    if (cdev) th_copy(ctx, g_dcount, &count, sizeof count);
    pp_status s = pp_select_flagged(ctx, es, ib + ioff * es, fb + ioff, n, ob + ooff * es,
                                    cdev ? g_dcount : &count);
    g_calls++;
    char where[160];
    snprintf(where, sizeof where, "elem_size=%zu n=%zu flags=%s in=%s+%d out=%s+%d count=%s", es,
             n, flag_names[f], idev ? "pp_malloc" : "host", ioff, odev ? "pp_malloc" : "host",
             ooff, cdev ? "pp_malloc" : "host");
    if (!CHECK_STATUS(s, PP_OK, "pp_select_flagged %s (%s)", where, pp_last_error(ctx))) continue;
    if (cdev) th_copy(ctx, &count, g_dcount, sizeof count);
    get(ctx, odev, b->back, ob, total);
    if (!CHECK(count == kept, "pp_select_flagged %s: count %" PRIu64 ", want %zu", where, count,
               kept))
      continue;
    size_t first = kept;
    for (size_t i = 0; i < kept * es; i++)
      if (b->back[ooff * es + i] != want[i]) {
        first = i / es;
        break;
      }
    CHECK(first == kept, "pp_select_flagged %s: record %zu of %zu kept is wrong", where, first,
          kept);
    CHECK(guards_ok(b->back, ooff * es, (ooff + kept) * es, total),
          "pp_select_flagged %s: wrote outside the %zu kept records", where, kept);
  }
  free(h);
  free(want);
  free(flags);
}

/* The CUDA kernel's tiles are 4096, 8192 or 16384 flags, the larger ones from a few
 * tiles per SM on (so several million records on a large GPU): the sweep's sizes sit
 * around the smallest tiles, and these large cases reach the others (whole tiles only,
 * and one record past them), with records of one word and of odd sizes. */
static const struct {
  size_t es, n;
} big_flagged_cases[] = {
    {4, 10000019}, {4, 16384 * 600}, {1, 16384 * 600 + 1}, {2, 12000017}, {3, 5000011},
    {12, 3000017}, {8, 5000003}, {1, 8192 * 700},
};

static void sweep_flagged(pp_context *ctx) {
  static const size_t ess[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 40};
  static const size_t sizes[] = {0,    1,    2,    3,    31,    33,    256,   257,  1025,
                                 4095, 4096, 4097, 8192, 8193,  16383, 16384, 16385, 65535,
                                 65537, 200003};
  th_rng r = th_rng_make(300);
  long before = th_state_get()->failed;
  for (size_t ei = 0; ei < sizeof ess / sizeof ess[0]; ei++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int f = 0; f < F_COUNT; f++) {
        size_t n = sizes[si];
        if (n > 65537 && f != F_HALF && f != F_SPARSE) continue;
        if (g_quick && (ei % 3 != 0 || si % 3 != 1 || f != F_HALF)) continue;
        flagged_case(ctx, ess[ei], f, n, n <= 257 ? 4 : 1, &r);
      }
  for (size_t k = 0; k < sizeof big_flagged_cases / sizeof big_flagged_cases[0]; k++) {
    if (g_quick && k) continue;
    flagged_case(ctx, big_flagged_cases[k].es, F_HALF, big_flagged_cases[k].n, 2, &r);
    if (!g_quick) flagged_case(ctx, big_flagged_cases[k].es, k % 2 ? F_ALL : F_SPARSE,
                               big_flagged_cases[k].n, 1, &r);
  }
  printf("select_flagged sweep: %s\n", th_state_get()->failed == before ? "ok" : "FAILURES");
}

/* Exact 64-bit comparison: neighbours above 2^53 that a double cannot tell apart. */
static void test_select_exact(pp_context *ctx) {
  const uint64_t base = (UINT64_C(1) << 60) + 1;
  uint64_t x[6] = {base + 1, base, base + 2, base + 1, UINT64_MAX, base - 1};
  uint64_t out[6], v = base + 1, c = 0;
  pp_status s = pp_select(ctx, PP_U64, x, 6, PP_EQ, &v, out, &c);
  CHECK(s == PP_OK && c == 2 && out[0] == base + 1 && out[1] == base + 1,
        "pp_select u64 == 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  s = pp_select(ctx, PP_U64, x, 6, PP_GT, &v, out, &c);
  CHECK(s == PP_OK && c == 2 && out[0] == base + 2 && out[1] == UINT64_MAX,
        "pp_select u64 > 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  s = pp_partition(ctx, PP_U64, x, 6, PP_LT, &v, out, &c);
  uint64_t wantp[6] = {base, base - 1, base + 1, base + 2, base + 1, UINT64_MAX};
  CHECK(s == PP_OK && c == 2 && memcmp(out, wantp, sizeof out) == 0,
        "pp_partition u64 < 2^60+2: %s, count %" PRIu64, pp_status_string(s), c);
  int64_t y[4] = {INT64_MIN + 1, INT64_MIN, INT64_MAX, INT64_MAX - 1};
  int64_t yo[4], yv = INT64_MIN + 1;
  s = pp_select(ctx, PP_I64, y, 4, PP_LE, &yv, yo, &c);
  CHECK(s == PP_OK && c == 2 && yo[0] == INT64_MIN + 1 && yo[1] == INT64_MIN,
        "pp_select i64 <= INT64_MIN+1: %s, count %" PRIu64, pp_status_string(s), c);
  /* NaN threshold: only != keeps, and keeps everything */
  float f[4] = {1, (float)NAN, -0.0f, 0.0f}, fo[4], fnan = (float)NAN, fz = 0.0f;
  s = pp_select(ctx, PP_F32, f, 4, PP_NE, &fnan, fo, &c);
  CHECK(s == PP_OK && c == 4, "pp_select f32 != NaN keeps all: count %" PRIu64, c);
  s = pp_select(ctx, PP_F32, f, 4, PP_EQ, &fz, fo, &c);
  CHECK(s == PP_OK && c == 2 && signbit(fo[0]) && fo[0] == 0 && !signbit(fo[1]) && fo[1] == 0,
        "pp_select f32 == +0 keeps -0 and +0 bit for bit: count %" PRIu64, c);
  s = pp_select(ctx, PP_F32, f, 4, PP_NE, &fz, fo, &c);
  CHECK(s == PP_OK && c == 2 && fo[0] == 1 && isnan(fo[1]),
        "pp_select f32 != +0 keeps 1 and NaN: count %" PRIu64, c);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  g_quick = th_quick();
  g_dcount = th_dev_alloc(ctx, sizeof(uint64_t));
  bufs_make(ctx, (size_t)48 << 20); /* the largest case: 10000019 records of 4 bytes */

  test_select_exact(ctx);
  double t0 = now_s();
  sweep_select(ctx);
  double tp = now_s();
  sweep_partition(ctx);
  double t1 = now_s();
  sweep_flagged(ctx);
  printf("seconds: select/partition %.1f, partition paths %.1f, select_flagged %.1f\n",
         tp - t0, t1 - tp, now_s() - t1);
  printf("%ld library calls in the sweeps\n", g_calls);

  bufs_free(ctx);
  th_dev_free(ctx, g_dcount);
  return th_finish(ctx);
}
