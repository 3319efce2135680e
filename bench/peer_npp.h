/*
 * peer_npp.h — NVIDIA Performance Primitives (NPP) as peers of `parprim bench conv` and
 * `parprim bench histogram`, behind a C interface (bench/peer_npp.cu; built only with
 * CUDA, so callers use it under #ifdef PP_HAVE_CUDA).
 *
 * NPP is optional (cmake/bench_peers.cmake: PP_NPP_ROOT, the toolkit's own copy or the
 * nvidia-npp wheel). Without it the file compiles to stubs: bench_npp_name() is NULL,
 * bench_npp_error() says why, and every call fails.
 *
 * Every call runs on the given stream through NPP's _Ctx entry points (an NppStreamContext
 * filled from the device's properties), so it is timed like the other peers. Calls return
 * 0, or -1 with bench_npp_error() set; pitches are in elements (floats) or bytes (u8) as
 * parprim's own calls take them.
 */
#ifndef PP_BENCH_PEER_NPP_H
#define PP_BENCH_PEER_NPP_H

#include "parprim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "NPP x.y.z" (the library loaded, nppGetLibVersion), or NULL when this build has no NPP. */
const char *bench_npp_name(void);
const char *bench_npp_error(void);

/* ---- convolution: nppiFilterBorder_32f_C1R, nppiFilterRowBorder_32f_C1R +
 * nppiFilterColumnBorder_32f_C1R ------------------------------------------------------
 * pp_conv2d correlates (filter not flipped, centre (fw/2, fh/2)); NPP convolves, taking its
 * coefficients "in reverse order" (nppi_filtering_functions.h), so *_prepare uploads the
 * filter reversed, with the anchor on our centre as seen from the reversed end
 * (len - 1 - len/2 per axis), which is the same sum. *_prepare also
 * runs a probe once per filter shape: a one-hot filter off the centre on a small image,
 * whose output must be the input shifted exactly as pp_conv2d's definition says; a probe
 * that disagrees fails the prepare, so a wrong orientation or anchor never reaches a row.
 *
 * Borders: PP_BORDER_CLAMP is NPP_BORDER_REPLICATE. PP_BORDER_MIRROR (reflect without
 * repeating the edge) is what NPP_BORDER_MIRROR names, and PP_BORDER_ZERO would be
 * NPP_BORDER_CONSTANT, but NPP documents these filters as supporting NPP_BORDER_REPLICATE
 * only: bench_npp_border_supported() is false for them and their calls fail.
 *
 * The separable form runs the row pass into an intermediate image (allocated by
 * bench_npp_sep_prepare) and the column pass from it: NPP has no fused separable filter. */
bool bench_npp_border_supported(pp_border border);
/* d_filter: fh rows of fw floats in device memory (pp_conv2d's layout). */
int bench_npp_filter_prepare(const float *d_filter, size_t fw, size_t fh, pp_border border,
                             void *stream);
int bench_npp_filter(const float *src, size_t width, size_t height, size_t src_pitch,
                     float *dst, size_t dst_pitch, void *stream);
int bench_npp_sep_prepare(const float *d_row, size_t row_len, const float *d_col, size_t col_len,
                          size_t width, size_t height, pp_border border, void *stream);
int bench_npp_sep_filter(const float *src, size_t width, size_t height, size_t src_pitch,
                         float *dst, size_t dst_pitch, void *stream);

/* ---- histogram: nppiHistogramEven_8u_C1R / _C3R --------------------------------------
 * 256 bins over [0, 256) per channel, as pp_histogram_image counts them: NPP takes levels,
 * not bins (nLevels = 257 edges, nLowerLevel 0 inclusive, nUpperLevel 256 exclusive), and
 * 32-bit counts. channels: 1 or 3 (interleaved). *_prepare sizes NPP's scratch buffer
 * (nppiHistogramEvenGetBufferSize_8u_C{1,3}R) and the counts. */
int bench_npp_histogram_prepare(size_t width, size_t height, int channels, void *stream);
int bench_npp_histogram(const uint8_t *pixels, size_t width, size_t height, size_t pitch_bytes,
                        int channels, void *stream);
/* The last call's counts, channels x 256, channel after channel (waits for the stream). */
int bench_npp_histogram_counts(uint64_t *counts, int channels, void *stream);

void bench_npp_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_NPP_H */
