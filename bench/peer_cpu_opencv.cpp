/*
 * peer_cpu_opencv.cpp — the CPU peers of `parprim bench conv` and of the image histogram:
 * OpenCV's cv::filter2D, cv::sepFilter2D and cv::calcHist, what an image-processing user
 * on a CPU calls (Debian's libopencv-dev: core and imgproc). Built with it when
 * cmake/cpu_peers.cmake finds it (PP_PEER_OPENCV); otherwise every call fails and
 * bench_cpu_opencv_name() is NULL, so the bench names the peer as missing.
 *
 * The images are wrapped, not copied (cv::Mat over the caller's buffer and pitch); each
 * call sets OpenCV's thread count to the context's (cv::setNumThreads), and OpenCV
 * dispatches its own SIMD paths at load time as it does for any caller.
 */
#include "gpu.h"

#ifdef PP_PEER_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <exception>

namespace {

int cv_border(pp_border b) {
  switch (b) {
  case PP_BORDER_MIRROR: return cv::BORDER_REFLECT_101; /* c b | a b c d | c b */
  case PP_BORDER_CLAMP: return cv::BORDER_REPLICATE;
  case PP_BORDER_ZERO: return cv::BORDER_CONSTANT;     /* with the default value 0 */
  }
  return cv::BORDER_CONSTANT;
}

cv::Mat wrap(const float *p, size_t width, size_t height, size_t pitch) {
  return cv::Mat((int)height, (int)width, CV_32F, const_cast<float *>(p), pitch * sizeof(float));
}

} // namespace

extern "C" const char *bench_cpu_opencv_name(void) { return "OpenCV " CV_VERSION; }

extern "C" int bench_cv_filter2d(const float *src, size_t width, size_t height,
                                 size_t src_pitch, const float *filter, size_t fw, size_t fh,
                                 pp_border border, float *dst, size_t dst_pitch, int threads) {
  try {
    cv::setNumThreads(threads);
    cv::Mat in = wrap(src, width, height, src_pitch), out = wrap(dst, width, height, dst_pitch);
    cv::Mat kernel((int)fh, (int)fw, CV_32F, const_cast<float *>(filter));
    /* anchor (-1, -1): the kernel's centre, (fw/2, fh/2) as pp_conv2d's */
    cv::filter2D(in, out, CV_32F, kernel, cv::Point(-1, -1), 0.0, cv_border(border));
    return out.data == reinterpret_cast<uchar *>(dst) ? 0 : -1;
  } catch (const std::exception &) {
    return -1;
  }
}

extern "C" int bench_cv_sep_filter2d(const float *src, size_t width, size_t height,
                                     size_t src_pitch, const float *row_filter, size_t row_len,
                                     const float *col_filter, size_t col_len, pp_border border,
                                     float *dst, size_t dst_pitch, int threads) {
  try {
    cv::setNumThreads(threads);
    cv::Mat in = wrap(src, width, height, src_pitch), out = wrap(dst, width, height, dst_pitch);
    cv::Mat kx(1, (int)row_len, CV_32F, const_cast<float *>(row_filter));
    cv::Mat ky((int)col_len, 1, CV_32F, const_cast<float *>(col_filter));
    cv::sepFilter2D(in, out, CV_32F, kx, ky, cv::Point(-1, -1), 0.0, cv_border(border));
    return out.data == reinterpret_cast<uchar *>(dst) ? 0 : -1;
  } catch (const std::exception &) {
    return -1;
  }
}

extern "C" int bench_cv_calc_hist(const uint8_t *pixels, size_t width, size_t height,
                                  size_t pitch_bytes, int channels, uint64_t *counts,
                                  int threads) {
  if (channels < 1 || channels > 4) return -1;
  try {
    cv::setNumThreads(threads);
    cv::Mat img((int)height, (int)width, CV_8UC(channels), const_cast<uint8_t *>(pixels),
                pitch_bytes);
    const int hist_size = 256;
    const float range[] = {0.0f, 256.0f};
    const float *ranges[] = {range};
    for (int c = 0; c < channels; c++) {
      /* one 1-D histogram per channel, as an image user asks for them */
      cv::Mat hist;
      cv::calcHist(&img, 1, &c, cv::Mat(), hist, 1, &hist_size, ranges, true, false);
      for (int b = 0; b < 256; b++) counts[(size_t)c * 256 + (size_t)b] = (uint64_t)hist.at<float>(b);
    }
    return 0;
  } catch (const std::exception &) {
    return -1;
  }
}

#else

extern "C" const char *bench_cpu_opencv_name(void) { return nullptr; }
extern "C" int bench_cv_filter2d(const float *, size_t, size_t, size_t, const float *, size_t,
                                 size_t, pp_border, float *, size_t, int) {
  return -1;
}
extern "C" int bench_cv_sep_filter2d(const float *, size_t, size_t, size_t, const float *,
                                     size_t, const float *, size_t, pp_border, float *, size_t,
                                     int) {
  return -1;
}
extern "C" int bench_cv_calc_hist(const uint8_t *, size_t, size_t, size_t, int, uint64_t *, int) {
  return -1;
}

#endif
