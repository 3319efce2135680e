/* peer_npp.cu — NPP filters and histograms as peers of `parprim bench` (see peer_npp.h).
 *
 * Compiled against NPP's headers only where cmake/bench_peers.cmake found NPP and defined
 * PP_HAVE_NPP; otherwise stubs that say NPP is missing. The entry points used here have the
 * same signatures and NppStreamContext layout in NPP 13.0 (the CUDA 13.0 toolkit's) and
 * 13.2 (the nvidia-npp wheel's), so a program built with either set of headers runs with
 * either library.
 */
#include "peer_npp.h"

#include <stdio.h>

static char g_err[256];

extern "C" const char *bench_npp_error(void) { return g_err; }

#ifndef PP_HAVE_NPP

static int missing(void) {
  snprintf(g_err, sizeof g_err,
           "built without NPP (cmake -DPP_NPP_ROOT=..., the CUDA toolkit's NPP, or "
           "scripts/bench_wheels.sh)");
  return -1;
}
extern "C" const char *bench_npp_name(void) {
  missing();
  return NULL;
}
extern "C" bool bench_npp_border_supported(pp_border) { return false; }
extern "C" int bench_npp_filter_prepare(const float *, size_t, size_t, pp_border, void *) {
  return missing();
}
extern "C" int bench_npp_filter(const float *, size_t, size_t, size_t, float *, size_t, void *) {
  return missing();
}
extern "C" int bench_npp_sep_prepare(const float *, size_t, const float *, size_t, size_t, size_t,
                                     pp_border, void *) {
  return missing();
}
extern "C" int bench_npp_sep_filter(const float *, size_t, size_t, size_t, float *, size_t,
                                    void *) {
  return missing();
}
extern "C" int bench_npp_histogram_prepare(size_t, size_t, int, void *) { return missing(); }
extern "C" int bench_npp_histogram(const uint8_t *, size_t, size_t, size_t, int, void *) {
  return missing();
}
extern "C" int bench_npp_histogram_counts(uint64_t *, int, void *) { return missing(); }
extern "C" void bench_npp_release(void) {}

#else /* PP_HAVE_NPP */

#include <cuda_runtime.h>
#include <nppcore.h>
#include <nppi_filtering_functions.h>
#include <nppi_statistics_functions.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* the filter as NPP takes it (reversed), its shape and border */
static float *g_kernel = NULL;
static size_t g_kernel_cap = 0, g_fw = 0, g_fh = 0;
/* separable: row and column taps reversed, and the row pass's output */
static float *g_row = NULL, *g_col = NULL;
static size_t g_row_cap = 0, g_col_cap = 0, g_rl = 0, g_cl = 0;
static float *g_mid = NULL;
static size_t g_mid_bytes = 0, g_mid_pitch = 0;
static NppiBorderType g_border = NPP_BORDER_REPLICATE;
/* histogram: NPP's scratch buffer and 3 x 256 int32 counts */
static Npp8u *g_hbuf = NULL;
static size_t g_hbuf_bytes = 0;
static Npp32s *g_hist = NULL;
static size_t g_hist_cap = 0;

static int cuda_fail(const char *what, cudaError_t e) {
  snprintf(g_err, sizeof g_err, "%s: %s", what, cudaGetErrorString(e));
  return -1;
}

static int npp_fail(const char *what, NppStatus s) {
  snprintf(g_err, sizeof g_err, "%s: NppStatus %d", what, (int)s);
  return -1;
}

/* NPP returns negative codes for errors and positive ones for warnings (nppdefs.h). */
static bool npp_ok(NppStatus s) { return s >= NPP_NO_ERROR; }

extern "C" const char *bench_npp_name(void) {
  static char name[48];
  const NppLibraryVersion *v = nppGetLibVersion();
  if (!v) {
    snprintf(g_err, sizeof g_err, "nppGetLibVersion returned nothing");
    return NULL;
  }
  snprintf(name, sizeof name, "NPP %d.%d.%d", v->major, v->minor, v->build);
  return name;
}

/* The stream context the _Ctx entry points take, filled as nppdefs.h shows, for the current
 * device and `stream`; rebuilt only when the stream changes. */
static int stream_ctx(void *stream, NppStreamContext *out) {
  static NppStreamContext ctx;
  static bool have = false;
  if (!have || ctx.hStream != (cudaStream_t)stream) {
    NppStreamContext c;
    memset(&c, 0, sizeof c);
    c.hStream = (cudaStream_t)stream;
    cudaError_t e = cudaGetDevice(&c.nCudaDeviceId);
    cudaDeviceProp p;
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, c.nCudaDeviceId);
    if (e == cudaSuccess) e = cudaStreamGetFlags(c.hStream, &c.nStreamFlags);
    if (e != cudaSuccess) return cuda_fail("NppStreamContext (device properties)", e);
    c.nMultiProcessorCount = p.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c.nSharedMemPerBlock = p.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = p.major;
    c.nCudaDevAttrComputeCapabilityMinor = p.minor;
    ctx = c;
    have = true;
  }
  *out = ctx;
  return 0;
}

static bool fits_int(size_t v) { return v <= (size_t)INT_MAX; }

static int npp_border(pp_border b, NppiBorderType *out) {
  if (b != PP_BORDER_CLAMP) {
    snprintf(g_err, sizeof g_err,
             "NPP's FilterBorder family supports NPP_BORDER_REPLICATE only (PP_BORDER_CLAMP); "
             "%s has no peer there",
             b == PP_BORDER_MIRROR ? "PP_BORDER_MIRROR" : "PP_BORDER_ZERO");
    return -1;
  }
  *out = NPP_BORDER_REPLICATE;
  return 0;
}

extern "C" bool bench_npp_border_supported(pp_border b) { return b == PP_BORDER_CLAMP; }

/* A device buffer of at least `bytes`, kept between calls. */
template <typename T> static int grow(T **p, size_t *cap, size_t bytes, const char *what) {
  if (bytes <= *cap) return 0;
  if (*p) cudaFree(*p);
  *p = NULL;
  *cap = 0;
  cudaError_t e = cudaMalloc((void **)p, bytes);
  if (e != cudaSuccess) return cuda_fail(what, e);
  *cap = bytes;
  return 0;
}

/* n taps from device memory, reversed into dev (NPP's order). */
static int upload_reversed(const float *d_taps, size_t n, float **dev, size_t *cap,
                           const char *what) {
  float *h = (float *)malloc(n * sizeof(float)), *r = (float *)malloc(n * sizeof(float));
  int rc = (h && r) ? 0 : -1;
  if (rc) snprintf(g_err, sizeof g_err, "%s: out of host memory", what);
  cudaError_t e = cudaSuccess;
  if (!rc) e = cudaMemcpy(h, d_taps, n * sizeof(float), cudaMemcpyDefault);
  if (!rc && e != cudaSuccess) rc = cuda_fail(what, e);
  if (!rc) {
    for (size_t i = 0; i < n; i++) r[i] = h[n - 1 - i];
    rc = grow(dev, cap, n * sizeof(float), what);
  }
  if (!rc) {
    e = cudaMemcpy(*dev, r, n * sizeof(float), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) rc = cuda_fail(what, e);
  }
  free(h);
  free(r);
  return rc;
}

/* NPP convolves: dst(x) = sum_j taps[j] * src(x + anchor - j). With the taps reversed
 * (taps[j] = f[len - 1 - j]) that is sum_i f[i] * src(x + i - (len - 1 - anchor)), pp_conv2d's
 * correlation centred at len/2 when anchor = len - 1 - len/2: len/2 for odd lengths, one
 * less for even ones (the probe below checks both). */
static int npp_anchor(size_t len) { return (int)(len - 1 - len / 2); }

/* The 2-D call on the configured kernel. */
static NppStatus filter2d(const float *src, int w, int h, int src_step, float *dst, int dst_step,
                          const float *kernel, size_t fw, size_t fh, NppStreamContext ctx) {
  NppiSize size = {w, h};
  NppiPoint origin = {0, 0};
  NppiSize ksize = {(int)fw, (int)fh};
  NppiPoint anchor = {npp_anchor(fw), npp_anchor(fh)};
  return nppiFilterBorder_32f_C1R_Ctx(src, src_step, size, origin, dst, dst_step, size, kernel,
                                      ksize, anchor, g_border, ctx);
}

static NppStatus filter_sep(const float *src, int w, int h, int src_step, float *mid,
                            int mid_step, float *dst, int dst_step, const float *row, size_t rl,
                            const float *col, size_t cl, NppStreamContext ctx) {
  NppiSize size = {w, h};
  NppiPoint origin = {0, 0};
  NppStatus s = nppiFilterRowBorder_32f_C1R_Ctx(src, src_step, size, origin, mid, mid_step, size,
                                                row, (int)rl, npp_anchor(rl), g_border, ctx);
  if (!npp_ok(s)) return s;
  return nppiFilterColumnBorder_32f_C1R_Ctx(mid, mid_step, size, origin, dst, dst_step, size, col,
                                            (int)cl, npp_anchor(cl), g_border, ctx);
}

static long clampl(long i, long n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* The probe: on a small image of distinct integers, a filter whose only non-zero tap is 1
 * at column fw - 1 of row 0 must give, by pp_conv2d's definition (clamp borders),
 * out(x, y) = in(x + fw - 1 - fw/2, y - fh/2), exactly (one product by 1, sums of zeros).
 * separable: the same with the row filter's last tap and the column filter's first. */
static int probe(size_t fw, size_t fh, bool separable, NppStreamContext ctx) {
  const long w = (long)(2 * fw + 5), h = (long)(2 * fh + 3);
  const size_t n = (size_t)(w * h);
  float *hin = (float *)malloc(n * sizeof(float)), *hout = (float *)malloc(n * sizeof(float));
  float *hf = (float *)calloc(fw * fh + fw + fh, sizeof(float));
  float *din = NULL, *dout = NULL, *dmid = NULL, *dk = NULL;
  int rc = (hin && hout && hf) ? 0 : -1;
  if (rc) snprintf(g_err, sizeof g_err, "NPP probe: out of host memory");
  for (size_t i = 0; !rc && i < n; i++) hin[i] = (float)(i + 1);
  /* taps as NPP takes them (reversed): the one-hot tap at (fw - 1, 0) of the 2-D filter
   * lands at reversed index (fh - 1) * fw; the row filter's last tap at 0, the column
   * filter's first at fh - 1 */
  float *hrow = hf + fw * fh, *hcol = hrow + fw;
  if (!rc) {
    hf[(fh - 1) * fw] = 1.0f;
    hrow[0] = 1.0f;
    hcol[fh - 1] = 1.0f;
  }
  cudaError_t e = cudaSuccess;
  if (!rc) e = cudaMalloc((void **)&din, n * sizeof(float));
  if (!rc && e == cudaSuccess) e = cudaMalloc((void **)&dout, n * sizeof(float));
  if (!rc && e == cudaSuccess) e = cudaMalloc((void **)&dmid, n * sizeof(float));
  if (!rc && e == cudaSuccess) e = cudaMalloc((void **)&dk, (fw * fh + fw + fh) * sizeof(float));
  if (!rc && e == cudaSuccess) e = cudaMemcpy(din, hin, n * sizeof(float), cudaMemcpyHostToDevice);
  if (!rc && e == cudaSuccess)
    e = cudaMemcpy(dk, hf, (fw * fh + fw + fh) * sizeof(float), cudaMemcpyHostToDevice);
  if (!rc && e != cudaSuccess) rc = cuda_fail("NPP probe", e);
  if (!rc) {
    const int step = (int)(w * (long)sizeof(float));
    NppStatus s = separable ? filter_sep(din, (int)w, (int)h, step, dmid, step, dout, step,
                                         dk + fw * fh, fw, dk + fw * fh + fw, fh, ctx)
                            : filter2d(din, (int)w, (int)h, step, dout, step, dk, fw, fh, ctx);
    if (!npp_ok(s)) rc = npp_fail("NPP probe", s);
  }
  if (!rc) {
    e = cudaStreamSynchronize(ctx.hStream);
    if (e == cudaSuccess) e = cudaMemcpy(hout, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) rc = cuda_fail("NPP probe", e);
  }
  for (long y = 0; !rc && y < h; y++)
    for (long x = 0; !rc && x < w; x++) {
      float want = hin[clampl(y - (long)(fh / 2), h) * w +
                       clampl(x + (long)fw - 1 - (long)(fw / 2), w)];
      if (hout[y * w + x] != want) {
        snprintf(g_err, sizeof g_err,
                 "NPP %s probe %zux%zu: at (%ld,%ld) got %g, want %g: NPP's orientation or "
                 "anchor is not what this peer assumes",
                 separable ? "separable" : "2-D", fw, fh, x, y, (double)hout[y * w + x],
                 (double)want);
        rc = -1;
      }
    }
  cudaFree(din);
  cudaFree(dout);
  cudaFree(dmid);
  cudaFree(dk);
  free(hin);
  free(hout);
  free(hf);
  return rc;
}

extern "C" int bench_npp_filter_prepare(const float *d_filter, size_t fw, size_t fh,
                                        pp_border border, void *stream) {
  NppStreamContext ctx;
  if (npp_border(border, &g_border) || stream_ctx(stream, &ctx)) return -1;
  if (fw == 0 || fh == 0 || !fits_int(fw) || !fits_int(fh)) {
    snprintf(g_err, sizeof g_err, "NPP filter: %zux%zu taps", fw, fh);
    return -1;
  }
  if (upload_reversed(d_filter, fw * fh, &g_kernel, &g_kernel_cap, "NPP filter taps")) return -1;
  g_fw = fw;
  g_fh = fh;
  return probe(fw, fh, false, ctx);
}

extern "C" int bench_npp_filter(const float *src, size_t width, size_t height, size_t src_pitch,
                                float *dst, size_t dst_pitch, void *stream) {
  NppStreamContext ctx;
  if (stream_ctx(stream, &ctx)) return -1;
  if (!fits_int(width) || !fits_int(height) || !fits_int(src_pitch * sizeof(float)) ||
      !fits_int(dst_pitch * sizeof(float))) {
    snprintf(g_err, sizeof g_err, "NPP filter: %zux%zu is beyond NPP's int sizes", width, height);
    return -1;
  }
  NppStatus s = filter2d(src, (int)width, (int)height, (int)(src_pitch * sizeof(float)), dst,
                         (int)(dst_pitch * sizeof(float)), g_kernel, g_fw, g_fh, ctx);
  return npp_ok(s) ? 0 : npp_fail("nppiFilterBorder_32f_C1R_Ctx", s);
}

extern "C" int bench_npp_sep_prepare(const float *d_row, size_t row_len, const float *d_col,
                                     size_t col_len, size_t width, size_t height,
                                     pp_border border, void *stream) {
  NppStreamContext ctx;
  if (npp_border(border, &g_border) || stream_ctx(stream, &ctx)) return -1;
  if (row_len == 0 || col_len == 0 || !fits_int(row_len) || !fits_int(col_len) ||
      !fits_int(width * sizeof(float)) || !fits_int(height)) {
    snprintf(g_err, sizeof g_err, "NPP separable filter: bad sizes");
    return -1;
  }
  if (upload_reversed(d_row, row_len, &g_row, &g_row_cap, "NPP row taps") ||
      upload_reversed(d_col, col_len, &g_col, &g_col_cap, "NPP column taps") ||
      grow(&g_mid, &g_mid_bytes, width * height * sizeof(float), "NPP intermediate image"))
    return -1;
  g_rl = row_len;
  g_cl = col_len;
  g_mid_pitch = width;
  return probe(row_len, col_len, true, ctx);
}

extern "C" int bench_npp_sep_filter(const float *src, size_t width, size_t height,
                                    size_t src_pitch, float *dst, size_t dst_pitch, void *stream) {
  NppStreamContext ctx;
  if (stream_ctx(stream, &ctx)) return -1;
  if (width != g_mid_pitch || width * height * sizeof(float) > g_mid_bytes ||
      !fits_int(src_pitch * sizeof(float)) || !fits_int(dst_pitch * sizeof(float))) {
    snprintf(g_err, sizeof g_err, "NPP separable filter: not prepared for %zux%zu", width,
             height);
    return -1;
  }
  const int mid_step = (int)(width * sizeof(float));
  NppStatus s = filter_sep(src, (int)width, (int)height, (int)(src_pitch * sizeof(float)), g_mid,
                           mid_step, dst, (int)(dst_pitch * sizeof(float)), g_row, g_rl, g_col,
                           g_cl, ctx);
  return npp_ok(s) ? 0 : npp_fail("nppiFilterRowBorder / ColumnBorder_32f_C1R_Ctx", s);
}

/* ---- histogram ------------------------------------------------------------------------ */

#define NPP_BINS 256
#define NPP_LEVELS (NPP_BINS + 1) /* NPP counts levels (bin edges), not bins */

extern "C" int bench_npp_histogram_prepare(size_t width, size_t height, int channels,
                                           void *stream) {
  NppStreamContext ctx;
  if (stream_ctx(stream, &ctx)) return -1;
  if ((channels != 1 && channels != 3) || !fits_int(width) || !fits_int(height)) {
    snprintf(g_err, sizeof g_err, "NPP histogram: %d channels, %zux%zu", channels, width, height);
    return -1;
  }
  NppiSize roi = {(int)width, (int)height};
  size_t bytes = 0;
  NppStatus s;
  if (channels == 1) {
    s = nppiHistogramEvenGetBufferSize_8u_C1R_Ctx(roi, NPP_LEVELS, &bytes, ctx);
  } else {
    int levels[3] = {NPP_LEVELS, NPP_LEVELS, NPP_LEVELS};
    s = nppiHistogramEvenGetBufferSize_8u_C3R_Ctx(roi, levels, &bytes, ctx);
  }
  if (!npp_ok(s)) return npp_fail("nppiHistogramEvenGetBufferSize_8u", s);
  if (grow(&g_hbuf, &g_hbuf_bytes, bytes ? bytes : 1, "NPP histogram buffer") ||
      grow(&g_hist, &g_hist_cap, 3 * NPP_BINS * sizeof(Npp32s), "NPP histogram counts"))
    return -1;
  return 0;
}

extern "C" int bench_npp_histogram(const uint8_t *pixels, size_t width, size_t height,
                                   size_t pitch_bytes, int channels, void *stream) {
  NppStreamContext ctx;
  if (stream_ctx(stream, &ctx)) return -1;
  if (!g_hist || !fits_int(pitch_bytes)) {
    snprintf(g_err, sizeof g_err, "NPP histogram: not prepared");
    return -1;
  }
  NppiSize roi = {(int)width, (int)height};
  NppStatus s;
  if (channels == 1) {
    s = nppiHistogramEven_8u_C1R_Ctx(pixels, (int)pitch_bytes, roi, g_hist, NPP_LEVELS, 0,
                                     NPP_BINS, g_hbuf, ctx);
  } else {
    Npp32s *hist[3] = {g_hist, g_hist + NPP_BINS, g_hist + 2 * NPP_BINS};
    int levels[3] = {NPP_LEVELS, NPP_LEVELS, NPP_LEVELS};
    Npp32s lower[3] = {0, 0, 0}, upper[3] = {NPP_BINS, NPP_BINS, NPP_BINS};
    s = nppiHistogramEven_8u_C3R_Ctx(pixels, (int)pitch_bytes, roi, hist, levels, lower, upper,
                                     g_hbuf, ctx);
  }
  return npp_ok(s) ? 0 : npp_fail("nppiHistogramEven_8u", s);
}

extern "C" int bench_npp_histogram_counts(uint64_t *counts, int channels, void *stream) {
  Npp32s h[3 * NPP_BINS];
  const size_t m = (size_t)channels * NPP_BINS;
  if (channels < 1 || channels > 3 || !g_hist) {
    snprintf(g_err, sizeof g_err, "NPP histogram: no counts");
    return -1;
  }
  cudaError_t e = cudaMemcpyAsync(h, g_hist, m * sizeof(Npp32s), cudaMemcpyDeviceToHost,
                                  (cudaStream_t)stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize((cudaStream_t)stream);
  if (e != cudaSuccess) return cuda_fail("NPP histogram counts", e);
  for (size_t i = 0; i < m; i++) counts[i] = (uint64_t)(uint32_t)h[i];
  return 0;
}

extern "C" void bench_npp_release(void) {
  cudaFree(g_kernel);
  cudaFree(g_row);
  cudaFree(g_col);
  cudaFree(g_mid);
  cudaFree(g_hbuf);
  cudaFree(g_hist);
  g_kernel = g_row = g_col = g_mid = NULL;
  g_hbuf = NULL;
  g_hist = NULL;
  g_kernel_cap = g_row_cap = g_col_cap = g_mid_bytes = g_hbuf_bytes = g_hist_cap = 0;
}

#endif /* PP_HAVE_NPP */
