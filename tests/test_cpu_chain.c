/*
 * test_cpu_chain.c — the CPU backend's chained one-pass scan and compaction
 * (src/cpu/scan.c) at the sizes where its own paths switch: around the chunk size (128 KiB
 * of input: 32768 u32, 16384 f64, 131072 u8 elements, fewer for flagged records) and its
 * staging tiles, across the one-thread limit (65536), and outputs of 32 MiB and more,
 * which are written with non-temporal stores, at an output 64-byte aligned and not
 * (one element further). Results are compared exactly against serial references written
 * here; a sentinel after the output checks that nothing past it is written, and selects
 * must leave the output past their count alone.
 *
 * Usage: test_cpu_chain [cpu|cuda]   (the CUDA backend is covered by test_scan and
 * test_select; this program skips it). PARPRIM_TEST_QUICK=1 keeps every path but runs
 * each large case at one placement only.
 */
#include "harness.h"

#include <math.h>

#define SENTINEL 0xA5

/* 64-byte aligned buffer of bytes + 64 + slack, filled with SENTINEL */
static unsigned char *alloc_out(size_t bytes) {
  unsigned char *p = th_xmalloc(bytes + 256);
  memset(p, SENTINEL, bytes + 256);
  return p;
}

static int tail_intact(const unsigned char *p, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    if (p[i] != SENTINEL) return 0;
  return 1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* ---- scan ---------------------------------------------------------------------------- */

static void check_scan_u32(pp_context *ctx, size_t n, size_t off, int incl, int in_place) {
  uint32_t *in = th_xmalloc((n + 1) * sizeof *in);
  for (size_t i = 0; i < n; i++) in[i] = (uint32_t)next_u64();
  unsigned char *buf = alloc_out((n + off) * 4);
  uint32_t *out = (uint32_t *)(void *)buf + off;
  if (in_place) memcpy(out, in, n * 4);
  pp_status s = pp_scan(ctx, PP_SUM, PP_U32, in_place ? out : in, out, n, incl != 0);
  CHECK_STATUS(s, PP_OK, "pp_scan u32 n=%zu", n);
  uint32_t acc = 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t want = incl ? acc + in[i] : acc;
    acc += in[i];
    if (out[i] != want && bad++ == 0) first = i;
  }
  CHECK(bad == 0, "scan u32 %s n=%zu off=%zu in_place=%d: %zu wrong, first at %zu",
        incl ? "incl" : "excl", n, off, in_place, bad, first);
  CHECK(tail_intact(buf, (n + off) * 4, (n + off) * 4 + 256), "scan u32 n=%zu wrote past n", n);
  free(in);
  free(buf);
}

/* f64 SUM of integer values: every prefix is exact, so the compensated chain must be too;
 * MAX and u8 SUM take the other accumulators and element sizes. */
static void check_scan_other(pp_context *ctx, size_t n, size_t off) {
  double *x = th_xmalloc((n + 1) * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = (double)(int)(next_u64() % 2001) - 1000.0;
  unsigned char *buf = alloc_out((n + off) * 8);
  double *out = (double *)(void *)buf + off;
  CHECK_STATUS(pp_scan(ctx, PP_SUM, PP_F64, x, out, n, true), PP_OK, "pp_scan f64 n=%zu", n);
  double s = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    s += x[i];
    bad += out[i] != s;
  }
  CHECK(bad == 0, "scan f64 sum n=%zu off=%zu: %zu wrong", n, off, bad);
  CHECK(tail_intact(buf, (n + off) * 8, (n + off) * 8 + 256), "scan f64 n=%zu wrote past n", n);
  CHECK_STATUS(pp_scan(ctx, PP_MAX, PP_F64, x, out, n, false), PP_OK, "pp_scan f64 max");
  double m = -INFINITY;
  bad = 0;
  for (size_t i = 0; i < n; i++) {
    bad += out[i] != m;
    m = x[i] > m ? x[i] : m;
  }
  CHECK(bad == 0, "scan f64 max excl n=%zu off=%zu: %zu wrong", n, off, bad);
  free(x);
  free(buf);

  const size_t n8 = n * 8 + 3; /* the same bytes as u8 elements */
  uint8_t *b = th_xmalloc(n8);
  for (size_t i = 0; i < n8; i++) b[i] = (uint8_t)next_u64();
  unsigned char *ob = alloc_out(n8 + off);
  CHECK_STATUS(pp_scan(ctx, PP_SUM, PP_U8, b, ob + off, n8, true), PP_OK, "pp_scan u8");
  uint8_t a = 0;
  bad = 0;
  for (size_t i = 0; i < n8; i++) {
    a = (uint8_t)(a + b[i]);
    bad += ob[off + i] != a;
  }
  CHECK(bad == 0, "scan u8 n=%zu off=%zu: %zu wrong", n8, off, bad);
  CHECK(tail_intact(ob, n8 + off, n8 + off + 256), "scan u8 n=%zu wrote past n", n8);
  free(b);
  free(ob);
}

/* ---- select, partition, select_flagged ---------------------------------------------- */

/* Floats with about `share` in 256 elements above zero, NaN and -0.0 among them: f32 and
 * f64 (8-byte lanes in the vector keep, chunks of half as many elements). */
#define CHECK_SELECT(NAME, T, PPT)                                                          \
  static void check_select_##NAME(pp_context *ctx, size_t n, size_t off, unsigned share,    \
                                  pp_cmp cmp) {                                             \
    T *x = th_xmalloc((n + 1) * sizeof *x);                                                 \
    for (size_t i = 0; i < n; i++) {                                                        \
      uint64_t r = next_u64();                                                              \
      T v = (T)(r >> 40) * (T)0x1.0p-20 + 1;                                                \
      x[i] = (r & 255) < share ? v : -v;                                                    \
      if ((r >> 8 & 1023) == 0) x[i] = (T)NAN;                                              \
      if ((r >> 8 & 1023) == 1) x[i] = (T)-0.0;                                             \
    }                                                                                       \
    const T zero = 0;                                                                       \
    unsigned char *buf = alloc_out((n + off) * sizeof(T));                                  \
    T *out = (T *)(void *)buf + off;                                                        \
    uint64_t count = 0;                                                                     \
    CHECK_STATUS(pp_select(ctx, PPT, x, n, cmp, &zero, out, &count), PP_OK, "pp_select");   \
    size_t w = 0, bad = 0;                                                                  \
    for (size_t i = 0; i < n; i++) {                                                        \
      int keep = cmp == PP_GT ? x[i] > 0 : cmp == PP_LE ? x[i] <= 0 : x[i] != 0;            \
      if (keep) bad += w < count && memcmp(&out[w], &x[i], sizeof(T)) != 0, w++;            \
    }                                                                                       \
    CHECK(count == w && bad == 0,                                                           \
          "select " #NAME " cmp=%d n=%zu off=%zu share=%u: count %llu want %zu, %zu wrong", \
          (int)cmp, n, off, share, (unsigned long long)count, w, bad);                      \
    CHECK(tail_intact(buf, (off + w) * sizeof(T), (n + off) * sizeof(T) + 256),             \
          "select " #NAME " n=%zu wrote past its count", n);                                \
                                                                                            \
    CHECK_STATUS(pp_partition(ctx, PPT, x, n, cmp, &zero, out, &count), PP_OK,              \
                 "pp_partition");                                                           \
    size_t y = 0, r = w;                                                                    \
    bad = 0;                                                                                \
    for (size_t i = 0; i < n; i++) {                                                        \
      int keep = cmp == PP_GT ? x[i] > 0 : cmp == PP_LE ? x[i] <= 0 : x[i] != 0;            \
      bad += memcmp(&out[keep ? y : r], &x[i], sizeof(T)) != 0;                             \
      keep ? y++ : r++;                                                                     \
    }                                                                                       \
    CHECK(count == w && bad == 0,                                                           \
          "partition " #NAME " cmp=%d n=%zu off=%zu: count %llu want %zu, %zu wrong",       \
          (int)cmp, n, off, (unsigned long long)count, w, bad);                             \
    CHECK(tail_intact(buf, (n + off) * sizeof(T), (n + off) * sizeof(T) + 256),             \
          "partition " #NAME " n=%zu wrote past n", n);                                     \
    free(x);                                                                                \
    free(buf);                                                                              \
  }
CHECK_SELECT(f32, float, PP_F32)
CHECK_SELECT(f64, double, PP_F64)

static void check_select_flagged(pp_context *ctx, size_t n, size_t es, size_t off) {
  unsigned char *in = th_xmalloc(n * es + 1);
  uint8_t *flags = th_xmalloc(n + 1);
  for (size_t i = 0; i < n * es; i++) in[i] = (unsigned char)next_u64();
  for (size_t i = 0; i < n; i++) flags[i] = (uint8_t)(next_u64() % 3); /* 1 and 2 both keep */
  unsigned char *buf = alloc_out((n + off) * es);
  uint64_t count = 0;
  CHECK_STATUS(pp_select_flagged(ctx, es, in, flags, n, buf + off * es, &count), PP_OK,
               "pp_select_flagged es=%zu", es);
  size_t w = 0, bad = 0;
  for (size_t i = 0; i < n; i++)
    if (flags[i]) bad += w < count && memcmp(buf + (off + w) * es, in + i * es, es) != 0, w++;
  CHECK(count == w && bad == 0, "select_flagged es=%zu n=%zu off=%zu: count %llu want %zu, %zu wrong",
        es, n, off, (unsigned long long)count, w, bad);
  CHECK(tail_intact(buf, (off + w) * es, (n + off) * es + 256),
        "select_flagged es=%zu n=%zu wrote past its count", es, n);
  free(in);
  free(flags);
  free(buf);
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  if (pp_backend_of(ctx) != PP_BACKEND_CPU) {
    printf("SKIP: CPU backend only\n");
    pp_destroy(ctx);
    return TH_SKIP_CODE;
  }
  const int quick = th_quick();

  /* around chunks (32768 u32) and the one-thread limit */
  static const size_t small[] = {0,      1,      1023,   1024,   1025,   32767,  32768,
                                 32769,  65535,  65536,  65537,  98303,  98304,  98305,
                                 131071, 131072, 131073, 262143, 262145, 500001};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    const size_t n = small[i];
    for (int incl = 0; incl < 2; incl++) check_scan_u32(ctx, n, i & 1, incl, (int)(i % 3 == 0));
    check_scan_other(ctx, n / 2, i & 1); /* f64 chunks of 16384 at the same places */
    check_select_f32(ctx, n, i & 1, 128, i & 1 ? PP_GT : PP_NE);
    check_select_f32(ctx, n, 0, i & 2 ? 0 : 256, PP_LE); /* none kept, then all kept */
    check_select_f64(ctx, n / 2, i & 1, 128, i & 1 ? PP_NE : PP_GT); /* chunks of 16384 */
    check_select_f64(ctx, n / 2 + (i & 1), 0, i & 2 ? 256 : 0, PP_GT);
    for (size_t es = 1; es <= 16; es *= 2) check_select_flagged(ctx, n, es, i & 1);
    check_select_flagged(ctx, n / 8 + 1, 40, i & 1); /* a record size without staging */
  }

  /* outputs of 32 MiB and more: the non-temporal path */
  const size_t big = ((size_t)1 << 23) + 5; /* u32: 32 MiB + 20 bytes */
  for (size_t off = 0; off < (quick ? 1u : 2u); off++) {
    check_scan_u32(ctx, big, off, 1, 0);
    check_scan_u32(ctx, big, off + 1, 0, 1);
    check_scan_other(ctx, ((size_t)1 << 22) + 3, off);
    check_select_f32(ctx, ((size_t)1 << 24) + 3, off, 128, PP_GT);
    check_select_f32(ctx, ((size_t)1 << 23) + 1, off, 250, PP_GT);
    check_select_f64(ctx, ((size_t)1 << 23) + 3, off, 128, PP_GT);
    check_select_flagged(ctx, ((size_t)1 << 22) + 7, 16, off);
    check_select_flagged(ctx, ((size_t)1 << 23) + 7, 8, off);
  }
  return th_finish(ctx);
}
