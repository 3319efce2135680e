/*
 * test_core.c — the Basics section of docs/API.md: contexts, status and dtype helpers,
 * version, memory and copies in every direction, synchronisation, streams, error text.
 *
 * Usage: test_core [cpu|cuda]
 */
/* setenv/unsetenv, to steer PP_BACKEND_AUTO through PARPRIM_BACKEND */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdint.h>

/* A non-NULL pointer value that is never dereferenced: it shows whether a call set an
 * output pointer on failure. */
static int g_marker;
#define MARKER ((void *)&g_marker)

/* ---- contexts ----------------------------------------------------------------------- */

static void test_create(pp_backend tested) {
  pp_status s = pp_create(NULL, PP_BACKEND_CPU);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_create(NULL, CPU)");
  CHECK(th_names(pp_last_error(NULL), "pp_create"), "pp_create(NULL): pp_last_error(NULL) is \"%s\"",
        pp_last_error(NULL));

  const int bad_backends[] = {99, 3, -1};
  for (size_t i = 0; i < sizeof bad_backends / sizeof bad_backends[0]; i++) {
    pp_context *c = (pp_context *)MARKER;
    s = pp_create(&c, (pp_backend)bad_backends[i]);
    CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_create(backend %d)", bad_backends[i]);
    CHECK(c == NULL, "pp_create(backend %d): *ctx is not NULL on failure", bad_backends[i]);
    CHECK(th_names(pp_last_error(NULL), "pp_create"),
          "pp_create(backend %d): pp_last_error(NULL) is \"%s\"", bad_backends[i],
          pp_last_error(NULL));
    if (s == PP_OK && c && c != (pp_context *)MARKER) pp_destroy(c);
  }

  pp_context *c = NULL;
  s = pp_create(&c, PP_BACKEND_CPU);
  if (CHECK_STATUS(s, PP_OK, "pp_create(CPU) (%s)", pp_last_error(NULL)) && c) {
    CHECK(pp_backend_of(c) == PP_BACKEND_CPU, "pp_backend_of(CPU context) = %d",
          (int)pp_backend_of(c));
    CHECK(pp_last_error(c) && strcmp(pp_last_error(c), "") == 0,
          "pp_last_error of a fresh context is \"%s\", want \"\"", pp_last_error(c));
    pp_destroy(c);
  }

  c = (pp_context *)MARKER;
  s = pp_create(&c, PP_BACKEND_CUDA);
  int cuda_usable = s == PP_OK;
  if (s == PP_OK) {
    CHECK(c && c != (pp_context *)MARKER && pp_backend_of(c) == PP_BACKEND_CUDA,
          "pp_create(CUDA) OK but the context says backend %d", c ? (int)pp_backend_of(c) : -1);
    CHECK(pp_has_cuda_backend(), "%s", "pp_create(CUDA) worked but pp_has_cuda_backend() is false");
    pp_destroy(c);
  } else {
    CHECK_STATUS(s, PP_ERR_NO_DEVICE, "pp_create(CUDA) without a usable GPU");
    CHECK(c == NULL, "%s", "pp_create(CUDA) failed and left *ctx non-NULL");
    CHECK(pp_last_error(NULL) && pp_last_error(NULL)[0] != '\0',
          "%s", "pp_create(CUDA) failed with no text in pp_last_error(NULL)");
  }
  CHECK(tested != PP_BACKEND_CUDA || cuda_usable,
        "%s", "the test context runs on CUDA but a second CUDA context cannot be created");

  /* AUTO picks CUDA when usable, else the CPU, unless PARPRIM_BACKEND says otherwise. */
  const char *old_env = getenv("PARPRIM_BACKEND");
  char saved[64] = "";
  if (old_env) snprintf(saved, sizeof saved, "%s", old_env);
  unsetenv("PARPRIM_BACKEND");
  c = NULL;
  s = pp_create(&c, PP_BACKEND_AUTO);
  if (CHECK_STATUS(s, PP_OK, "pp_create(AUTO) (%s)", pp_last_error(NULL)) && c) {
    pp_backend want = cuda_usable ? PP_BACKEND_CUDA : PP_BACKEND_CPU;
    CHECK(pp_backend_of(c) == want, "pp_create(AUTO) chose backend %d, want %d",
          (int)pp_backend_of(c), (int)want);
    pp_destroy(c);
  }
  setenv("PARPRIM_BACKEND", "cpu", 1);
  c = NULL;
  s = pp_create(&c, PP_BACKEND_AUTO);
  if (CHECK_STATUS(s, PP_OK, "pp_create(AUTO) with PARPRIM_BACKEND=cpu") && c) {
    CHECK(pp_backend_of(c) == PP_BACKEND_CPU, "PARPRIM_BACKEND=cpu: AUTO chose backend %d",
          (int)pp_backend_of(c));
    pp_destroy(c);
  }
  if (old_env)
    setenv("PARPRIM_BACKEND", saved, 1);
  else
    unsetenv("PARPRIM_BACKEND");

  pp_destroy(NULL); /* a no-op; getting past it is the check */
  CHECK(1, "%s", "pp_destroy(NULL)");
  CHECK(pp_backend_of(NULL) == PP_BACKEND_AUTO, "pp_backend_of(NULL) = %d, want AUTO",
        (int)pp_backend_of(NULL));
}

/* Two live contexts on the tested backend are independent. */
static void test_two_contexts(pp_backend b) {
  pp_context *a = NULL, *c = NULL;
  if (!CHECK_STATUS(pp_create(&a, b), PP_OK, "first extra context") ||
      !CHECK_STATUS(pp_create(&c, b), PP_OK, "second extra context")) {
    pp_destroy(a);
    pp_destroy(c);
    return;
  }
  int32_t x[5] = {1, 2, 3, 4, 5}, ra = 0, rc = 0;
  void *da = th_dev_from_host(a, x, sizeof x);
  void *dc = th_dev_from_host(c, x, sizeof x);
  CHECK(pp_reduce(a, PP_SUM, PP_I32, da, 5, &ra) == PP_OK && ra == 15,
        "reduce on context a: %d", (int)ra);
  CHECK(pp_reduce(c, PP_MAX, PP_I32, dc, 5, &rc) == PP_OK && rc == 5,
        "reduce on context c: %d", (int)rc);
  (void)pp_reduce(a, (pp_op)9, PP_I32, da, 5, &ra); /* a failure on a ... */
  CHECK(strcmp(pp_last_error(c), "") == 0, /* ... is not reported on c */
        "a failure on one context shows on another: \"%s\"", pp_last_error(c));
  th_dev_free(a, da);
  pp_destroy(a);
  rc = 0;
  CHECK(pp_reduce(c, PP_SUM, PP_I32, dc, 5, &rc) == PP_OK && rc == 15,
        "context c after destroying a: %d", (int)rc);
  th_dev_free(c, dc);
  pp_destroy(c);
}

/* ---- static helpers ----------------------------------------------------------------- */

static void test_strings(void) {
  const char *seen[7];
  for (int i = 0; i <= 6; i++) {
    const char *t = pp_status_string((pp_status)i);
    seen[i] = t;
    CHECK(t != NULL && t[0] != '\0', "pp_status_string(%d) is %s", i, t ? "empty" : "NULL");
    for (int j = 0; t && j < i; j++)
      CHECK(seen[j] == NULL || strcmp(seen[j], t) != 0,
            "pp_status_string(%d) and (%d) are both \"%s\"", i, j, t);
  }
  const int unknown[] = {7, 99, -1, 1000000};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *t = pp_status_string((pp_status)unknown[i]);
    CHECK(t != NULL, "pp_status_string(%d) is NULL", unknown[i]);
  }

  const size_t sizes[7] = {1, 4, 4, 8, 8, 4, 8};
  for (int t = 0; t < 7; t++)
    CHECK(pp_dtype_size((pp_dtype)t) == sizes[t], "pp_dtype_size(%d) = %zu, want %zu", t,
          pp_dtype_size((pp_dtype)t), sizes[t]);
  const int bad_types[] = {7, 8, 99, -1};
  for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++)
    CHECK(pp_dtype_size((pp_dtype)bad_types[i]) == 0, "pp_dtype_size(%d) = %zu, want 0",
          bad_types[i], pp_dtype_size((pp_dtype)bad_types[i]));

  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", PARPRIM_VERSION_MAJOR, PARPRIM_VERSION_MINOR,
           PARPRIM_VERSION_PATCH);
  const char *v = pp_version();
  CHECK(v && strcmp(v, want) == 0, "pp_version() = \"%s\", want \"%s\"", v ? v : "(null)", want);

  /* the diagnostic additions in parprim.h */
  CHECK(strcmp(pp_backend_string(PP_BACKEND_CPU), "cpu") == 0 &&
            strcmp(pp_backend_string(PP_BACKEND_CUDA), "cuda") == 0 &&
            strcmp(pp_backend_string(PP_BACKEND_AUTO), "auto") == 0 &&
            strcmp(pp_backend_string((pp_backend)42), "unknown") == 0,
        "%s", "pp_backend_string");
  const char *tn[7] = {"u8", "i32", "u32", "i64", "u64", "f32", "f64"};
  for (int t = 0; t < 7; t++)
    CHECK(strcmp(pp_dtype_string((pp_dtype)t), tn[t]) == 0, "pp_dtype_string(%d) = \"%s\"", t,
          pp_dtype_string((pp_dtype)t));
  CHECK(strcmp(pp_dtype_string((pp_dtype)42), "unknown") == 0, "%s", "pp_dtype_string(42)");
}

/* ---- memory ------------------------------------------------------------------------- */

static void fill_random(unsigned char *p, size_t n, th_rng *r) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)th_next(r);
}

/* index of the first differing byte, or n */
static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return i;
  return n;
}

static void test_malloc(pp_context *ctx) {
  void *p = MARKER;
  pp_status s = pp_malloc(ctx, &p, 0);
  CHECK(s == PP_OK && p == NULL, "pp_malloc(0): %s, ptr %s", pp_status_string(s),
        p ? "not NULL" : "NULL");

  const size_t sizes[] = {1, 3, 255, 256, 257, 4097, (1u << 20) + 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    p = NULL;
    s = pp_malloc(ctx, &p, sizes[i]);
    if (!CHECK(s == PP_OK && p != NULL, "pp_malloc(%zu): %s (%s)", sizes[i], pp_status_string(s),
               pp_last_error(ctx)))
      continue;
    CHECK((uintptr_t)p % 256 == 0, "pp_malloc(%zu) = %p is not 256-byte aligned", sizes[i], p);
    s = pp_free(ctx, p);
    CHECK_STATUS(s, PP_OK, "pp_free of pp_malloc(%zu)", sizes[i]);
  }
  CHECK_STATUS(pp_free(ctx, NULL), PP_OK, "pp_free(ctx, NULL)");

  /* th_poison_error uses pp_malloc itself, so leave a pp_copy failure instead */
  (void)pp_copy(ctx, NULL, MARKER, 8);
  s = pp_malloc(ctx, NULL, 16);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_malloc(ctx, NULL, 16)");
  CHECK(th_names(pp_last_error(ctx), "pp_malloc"), "pp_malloc(NULL ptr): pp_last_error is \"%s\"",
        pp_last_error(ctx));

  p = MARKER;
  s = pp_malloc(NULL, &p, 16);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_malloc(NULL ctx)");
  CHECK(p == MARKER, "%s", "pp_malloc(NULL ctx) wrote *ptr");

  /* more than any machine has: an allocation failure, reported and survived */
  p = MARKER;
  (void)pp_copy(ctx, NULL, MARKER, 8);
  s = pp_malloc(ctx, &p, SIZE_MAX / 4);
  CHECK_STATUS(s, PP_ERR_OUT_OF_MEMORY, "pp_malloc(SIZE_MAX/4)");
  CHECK(th_names(pp_last_error(ctx), "pp_malloc"), "pp_malloc(SIZE_MAX/4): pp_last_error is \"%s\"",
        pp_last_error(ctx));
  if (s == PP_OK && p && p != MARKER) pp_free(ctx, p);
  p = NULL;
  s = pp_malloc(ctx, &p, 1024);
  CHECK(s == PP_OK && p, "pp_malloc(1024) after an allocation failure: %s", pp_status_string(s));
  if (p) pp_free(ctx, p);
}

/* host -> pp_malloc -> pp_malloc -> host, and host -> host, at odd sizes and offsets;
 * the bytes around each destination range must survive. */
static void test_copy(pp_context *ctx) {
  const size_t counts[] = {1, 2, 3, 7, 13, 64, 255, 256, 257, 1001, 4099, 65537, (1u << 20) + 3};
  const size_t nc = sizeof counts / sizeof counts[0];
  const size_t cap = (1u << 20) + 3 + 64;
  th_rng r = th_rng_make(7);
  unsigned char *src = th_xmalloc(cap), *bg = th_xmalloc(cap), *h2 = th_xmalloc(cap),
                *h3 = th_xmalloc(cap), *back = th_xmalloc(cap);
  unsigned char *d1 = th_dev_alloc(ctx, cap), *d2 = th_dev_alloc(ctx, cap);
  fill_random(bg, cap, &r);

  for (size_t ci = 0; ci < nc; ci++) {
    const size_t b = counts[ci];
    const size_t oa = ci % 5, ob = (ci * 3 + 1) % 17, oc = (ci * 7 + 2) % 33, od = (ci + 3) % 9,
                 oe = (ci * 5) % 11;
    fill_random(src, cap, &r);
    th_copy(ctx, d1, bg, cap);
    th_copy(ctx, d2, bg, cap);
    memcpy(h2, bg, cap);
    memcpy(h3, bg, cap);

    pp_status s1 = pp_copy(ctx, d1 + ob, src + oa, b);
    pp_status s2 = pp_copy(ctx, d2 + oc, d1 + ob, b);
    pp_status s3 = pp_copy(ctx, h2 + od, d2 + oc, b);
    pp_status s4 = pp_copy(ctx, h3 + oe, src + oa, b);
    CHECK(s1 == PP_OK && s2 == PP_OK && s3 == PP_OK && s4 == PP_OK,
          "pp_copy %zu bytes: host->dev %s, dev->dev %s, dev->host %s, host->host %s (%s)", b,
          pp_status_string(s1), pp_status_string(s2), pp_status_string(s3), pp_status_string(s4),
          pp_last_error(ctx));

    size_t at = first_diff(h2 + od, src + oa, b);
    CHECK(at == b, "pp_copy chain of %zu bytes (offsets %zu,%zu,%zu,%zu): byte %zu differs", b, oa,
          ob, oc, od, at);
    CHECK(first_diff(h2, bg, od) == od && first_diff(h2 + od + b, bg + od + b, cap - od - b) ==
                                              cap - od - b,
          "pp_copy dev->host of %zu bytes at offset %zu wrote outside its range", b, od);
    at = first_diff(h3 + oe, src + oa, b);
    CHECK(at == b, "pp_copy host->host of %zu bytes: byte %zu differs", b, at);
    CHECK(first_diff(h3, bg, oe) == oe && first_diff(h3 + oe + b, bg + oe + b, cap - oe - b) ==
                                              cap - oe - b,
          "pp_copy host->host of %zu bytes wrote outside its range", b);

    /* the intermediate pp_malloc buffers, read back whole */
    unsigned char *dev[2] = {d1, d2};
    size_t off[2] = {ob, oc};
    for (int k = 0; k < 2; k++) {
      memset(back, 0, cap);
      if (!th_copy(ctx, back, dev[k], cap)) continue;
      CHECK(first_diff(back + off[k], src + oa, b) == b, "pp_malloc buffer %d: copied bytes differ",
            k + 1);
      CHECK(first_diff(back, bg, off[k]) == off[k] &&
                first_diff(back + off[k] + b, bg + off[k] + b, cap - off[k] - b) ==
                    cap - off[k] - b,
            "pp_copy of %zu bytes into pp_malloc buffer %d at offset %zu wrote outside its range",
            b, k + 1, off[k]);
    }
  }

  /* zero bytes: nothing happens, NULL pointers included */
  memcpy(h2, bg, 64);
  CHECK_STATUS(pp_copy(ctx, h2, src, 0), PP_OK, "pp_copy host<-host 0 bytes");
  CHECK_STATUS(pp_copy(ctx, d1, src, 0), PP_OK, "pp_copy dev<-host 0 bytes");
  CHECK_STATUS(pp_copy(ctx, h2, d1, 0), PP_OK, "pp_copy host<-dev 0 bytes");
  CHECK_STATUS(pp_copy(ctx, NULL, NULL, 0), PP_OK, "pp_copy(NULL, NULL, 0)");
  CHECK(memcmp(h2, bg, 64) == 0, "%s", "pp_copy of 0 bytes wrote to dst");

  /* dst == src is a copy onto itself */
  memcpy(h2, bg, 64);
  CHECK_STATUS(pp_copy(ctx, h2, h2, 64), PP_OK, "pp_copy with dst == src");
  CHECK(memcmp(h2, bg, 64) == 0, "%s", "pp_copy with dst == src changed the bytes");

  /* argument errors */
  memcpy(h2, bg, 64);
  th_poison_error(ctx);
  CHECK_STATUS(pp_copy(ctx, NULL, src, 8), PP_ERR_INVALID_ARGUMENT, "pp_copy(dst NULL, 8 bytes)");
  CHECK(th_names(pp_last_error(ctx), "pp_copy"), "pp_copy(dst NULL): pp_last_error is \"%s\"",
        pp_last_error(ctx));
  th_poison_error(ctx);
  CHECK_STATUS(pp_copy(ctx, h2, NULL, 8), PP_ERR_INVALID_ARGUMENT, "pp_copy(src NULL, 8 bytes)");
  CHECK(th_names(pp_last_error(ctx), "pp_copy"), "pp_copy(src NULL): pp_last_error is \"%s\"",
        pp_last_error(ctx));
  CHECK_STATUS(pp_copy(NULL, h2, src, 8), PP_ERR_INVALID_ARGUMENT, "pp_copy(NULL ctx)");
  CHECK(memcmp(h2, bg, 64) == 0, "%s", "a failed pp_copy wrote to dst");
  /* and the context still copies */
  CHECK(pp_copy(ctx, d1, src, 100) == PP_OK && pp_copy(ctx, h2, d1, 100) == PP_OK &&
            memcmp(h2, src, 100) == 0,
        "%s", "pp_copy after failed copies");

  th_dev_free(ctx, d1);
  th_dev_free(ctx, d2);
  free(src);
  free(bg);
  free(h2);
  free(h3);
  free(back);
}

/* ---- streams, synchronisation, errors ----------------------------------------------- */

static void test_sync_stream(pp_context *ctx) {
  CHECK_STATUS(pp_synchronize(ctx), PP_OK, "pp_synchronize");
  CHECK_STATUS(pp_synchronize(NULL), PP_ERR_INVALID_ARGUMENT, "pp_synchronize(NULL)");
  CHECK_STATUS(pp_set_stream(ctx, NULL), PP_OK, "pp_set_stream(ctx, NULL)");
  CHECK_STATUS(pp_set_stream(NULL, NULL), PP_ERR_INVALID_ARGUMENT, "pp_set_stream(NULL, NULL)");
  if (pp_backend_of(ctx) == PP_BACKEND_CPU) {
    th_poison_error(ctx);
    CHECK_STATUS(pp_set_stream(ctx, MARKER), PP_ERR_UNSUPPORTED,
                 "pp_set_stream(ctx, non-NULL) on the CPU");
    CHECK(th_names(pp_last_error(ctx), "pp_set_stream"),
          "pp_set_stream on the CPU: pp_last_error is \"%s\"", pp_last_error(ctx));
  }
  /* work queued after setting the default stream back runs and can be waited for */
  int64_t x[4] = {1, -2, 3, -4};
  void *d = th_dev_from_host(ctx, x, sizeof x);
  void *out = th_dev_alloc(ctx, 8);
  CHECK_STATUS(pp_set_stream(ctx, NULL), PP_OK, "pp_set_stream(ctx, NULL) again");
  CHECK_STATUS(pp_reduce(ctx, PP_SUM, PP_I64, d, 4, out), PP_OK, "pp_reduce to pp_malloc memory");
  CHECK_STATUS(pp_synchronize(ctx), PP_OK, "pp_synchronize after queued work");
  int64_t r = 0;
  th_copy(ctx, &r, out, 8);
  CHECK(r == -2, "queued pp_reduce gave %lld, want -2", (long long)r);
  th_dev_free(ctx, d);
  th_dev_free(ctx, out);
}

static void test_device_info(pp_context *ctx) {
  pp_device_info info;
  memset(&info, 0x5A, sizeof info);
  pp_status s = pp_get_device_info(ctx, &info);
  if (CHECK_STATUS(s, PP_OK, "pp_get_device_info")) {
    CHECK(memchr(info.name, '\0', sizeof info.name) != NULL && info.name[0] != '\0',
          "%s", "pp_device_info.name is empty or not terminated");
    CHECK(info.multiprocessors >= 1, "pp_device_info.multiprocessors = %d", info.multiprocessors);
    if (pp_backend_of(ctx) == PP_BACKEND_CPU)
      CHECK(info.compute_major == 0 && info.compute_minor == 0 && info.driver_version == 0 &&
                info.runtime_version == 0,
            "CPU device info has compute %d.%d driver %d runtime %d", info.compute_major,
            info.compute_minor, info.driver_version, info.runtime_version);
    else
      CHECK(info.compute_major >= 1 && info.global_mem_bytes > 0,
            "CUDA device info: compute %d.%d, %zu bytes", info.compute_major, info.compute_minor,
            info.global_mem_bytes);
  }
  th_poison_error(ctx);
  CHECK_STATUS(pp_get_device_info(ctx, NULL), PP_ERR_INVALID_ARGUMENT, "pp_get_device_info(NULL)");
  CHECK(th_names(pp_last_error(ctx), "pp_get_device_info"),
        "pp_get_device_info(NULL): pp_last_error is \"%s\"", pp_last_error(ctx));
}

/* A failing call names itself in pp_last_error; the context keeps working. */
static void test_errors(pp_context *ctx) {
  const float x[4] = {1.5f, -2.0f, 4.0f, 0.25f};
  float out = 123.0f;
  uint64_t idx = 77;

  th_poison_error(ctx);
  pp_status s = pp_reduce(ctx, (pp_op)7, PP_F32, x, 4, &out);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_reduce with op 7");
  const char *msg = pp_last_error(ctx);
  CHECK(msg && th_names(msg, "pp_reduce"), "pp_reduce with op 7: pp_last_error is \"%s\"",
        msg ? msg : "(null)");
  CHECK(out == 123.0f, "%s", "failed pp_reduce wrote its output");

  s = pp_reduce(ctx, PP_SUM, PP_F32, x, 4, &out);
  CHECK(s == PP_OK && out == 3.75f, "pp_reduce after a failure: %s, %g", pp_status_string(s),
        (double)out);

  th_poison_error(ctx);
  s = pp_argreduce(ctx, PP_MAX, PP_F32, x, 4, &out, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_argreduce with index_out NULL");
  CHECK(th_names(pp_last_error(ctx), "pp_argreduce"),
        "pp_argreduce(index_out NULL): pp_last_error is \"%s\"", pp_last_error(ctx));

  th_poison_error(ctx);
  s = pp_reduce(ctx, PP_SUM, PP_F64, x, SIZE_MAX / 4, &out);
  CHECK_STATUS(s, PP_ERR_OVERFLOW, "pp_reduce f64 with n = SIZE_MAX/4");
  CHECK(th_names(pp_last_error(ctx), "pp_reduce"), "pp_reduce overflow: pp_last_error is \"%s\"",
        pp_last_error(ctx));

  /* an argument error on an entry point that may not be implemented yet */
  th_poison_error(ctx);
  float vals[12];
  s = pp_topk(ctx, PP_F32, x, 4, 5, true, vals, NULL);
  CHECK_STATUS(s, PP_ERR_INVALID_ARGUMENT, "pp_topk with k 5 > n 4");
  CHECK(th_names(pp_last_error(ctx), "pp_topk"), "pp_topk(k > n): pp_last_error is \"%s\"",
        pp_last_error(ctx));

  s = pp_argreduce(ctx, PP_MIN, PP_F32, x, 4, &out, &idx);
  CHECK(s == PP_OK && out == -2.0f && idx == 1, "pp_argreduce after failures: %s, (%g, %llu)",
        pp_status_string(s), (double)out, (unsigned long long)idx);
  CHECK_STATUS(pp_synchronize(ctx), PP_OK, "pp_synchronize after failures");
}

int main(int argc, char **argv) {
  pp_context *ctx = th_init(argc, argv);
  pp_backend b = pp_backend_of(ctx);
  CHECK(strcmp(pp_last_error(ctx), "") == 0, "fresh context: pp_last_error is \"%s\"",
        pp_last_error(ctx));

  test_create(b);
  test_two_contexts(b);
  test_strings();
  test_malloc(ctx);
  test_copy(ctx);
  test_sync_stream(ctx);
  test_device_info(ctx);
  test_errors(ctx);
  return th_finish(ctx);
}
