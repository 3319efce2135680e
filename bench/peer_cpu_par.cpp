/*
 * peer_cpu_par.cpp — the threaded standard-library peers of the CPU backend: the C++17
 * parallel algorithms with std::execution::par, which libstdc++ runs on TBB (Debian's
 * libtbb-dev). Built with them when cmake/cpu_peers.cmake finds TBB (PP_PEER_TBB);
 * otherwise every call fails and bench_cpu_tbb_name() is NULL, so the bench names the
 * peer as missing.
 *
 * Each call runs under a tbb::global_control that caps TBB's workers at the context's
 * thread count. The sorts pack pairs into records as the serial peers of peer_std.cpp do,
 * through the dispatch they share (peer_std_sort.hpp).
 */
#include "gpu.h"

#ifdef PP_PEER_TBB
#include "peer_std_sort.hpp"

#include <tbb/global_control.h>
#include <tbb/version.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <execution>
#include <functional>
#include <numeric>

namespace {

constexpr auto par = std::execution::par;

using bench_std::by_type;
using bench_std::record;

struct par_sort {
  template <typename K> static void keys(void *keys, size_t n, bool descending) {
    K *k = static_cast<K *>(keys);
    if (descending)
      std::sort(par, k, k + n, std::greater<K>());
    else
      std::sort(par, k, k + n, std::less<K>());
  }

  template <typename K, typename V>
  static void pairs(void *keys, void *values, size_t n, bool descending, void *scratch) {
    K *k = static_cast<K *>(keys);
    V *v = static_cast<V *>(values);
    record<K, V> *r = static_cast<record<K, V> *>(scratch);
    std::transform(par, k, k + n, v, r, [](K a, V b) { return record<K, V>{a, b}; });
    if (descending)
      std::stable_sort(par, r, r + n, [](const record<K, V> &a, const record<K, V> &b) { return b.key < a.key; });
    else
      std::stable_sort(par, r, r + n, [](const record<K, V> &a, const record<K, V> &b) { return a.key < b.key; });
    std::transform(par, r, r + n, k, [](const record<K, V> &a) { return a.key; });
    std::transform(par, r, r + n, v, [](const record<K, V> &a) { return a.value; });
  }
};

/* The accumulator type of SUM, as pp_reduce's: f32 in double (API.md), integers wrap. */
template <typename T> struct acc_of { using type = T; };
template <> struct acc_of<float> { using type = double; };

template <typename T> void reduce_sum(const void *in, size_t n, void *out) {
  const T *p = static_cast<const T *>(in);
  using A = typename acc_of<T>::type;
  A s = std::reduce(par, p, p + n, A(0), [](A a, A b) { return A(a + b); });
  T r = T(s);
  std::memcpy(out, &r, sizeof r);
}

template <typename T> void scan_sum(bool inclusive, const void *in, void *out, size_t n) {
  const T *p = static_cast<const T *>(in);
  T *o = static_cast<T *>(out);
  if (inclusive)
    std::inclusive_scan(par, p, p + n, o, std::plus<T>());
  else
    std::exclusive_scan(par, p, p + n, o, T(0), std::plus<T>());
}

template <typename T> uint64_t select_gt(const void *value, const void *in, size_t n, void *out) {
  T v;
  std::memcpy(&v, value, sizeof v);
  const T *p = static_cast<const T *>(in);
  T *o = static_cast<T *>(out);
  return (uint64_t)(std::copy_if(par, p, p + n, o, [v](T x) { return x > v; }) - o);
}

template <typename T>
void topk(const void *in, size_t n, size_t k, bool largest, void *values_out, void *scratch) {
  const T *p = static_cast<const T *>(in);
  T *s = static_cast<T *>(scratch);
  std::copy(par, p, p + n, s);
  if (largest) {
    std::nth_element(par, s, s + (k - 1), s + n, std::greater<T>());
    std::sort(par, s, s + k, std::greater<T>());
  } else {
    std::nth_element(par, s, s + (k - 1), s + n, std::less<T>());
    std::sort(par, s, s + k, std::less<T>());
  }
  std::memcpy(values_out, s, k * sizeof(T));
}

/* The cap on TBB's workers for the length of one call. */
struct threads_cap {
  tbb::global_control gc;
  explicit threads_cap(int threads)
      : gc(tbb::global_control::max_allowed_parallelism, (size_t)(threads > 0 ? threads : 1)) {}
};

} // namespace

extern "C" const char *bench_cpu_tbb_name(void) {
  return "TBB " TBB_VERSION_STRING " (std::execution::par)";
}

extern "C" int bench_par_sort(pp_dtype key_t, void *keys, void *values, size_t value_size,
                              size_t n, bool descending, void *scratch, int threads) {
  threads_cap cap(threads);
  return bench_std::sort_any<par_sort>(key_t, keys, values, value_size, n, descending, scratch);
}

extern "C" int bench_par_reduce(pp_dtype t, const void *in, size_t n, void *out, int threads) {
  threads_cap cap(threads);
  return by_type(t, [&](auto k) { reduce_sum<decltype(k)>(in, n, out); });
}

extern "C" int bench_par_scan(pp_dtype t, bool inclusive, const void *in, void *out, size_t n,
                              int threads) {
  threads_cap cap(threads);
  return by_type(t, [&](auto k) { scan_sum<decltype(k)>(inclusive, in, out, n); });
}

extern "C" int bench_par_select_gt(pp_dtype t, const void *value, const void *in, size_t n,
                                   void *out, uint64_t *count, int threads) {
  threads_cap cap(threads);
  return by_type(t, [&](auto k) { *count = select_gt<decltype(k)>(value, in, n, out); });
}

extern "C" int bench_par_copy(void *dst, const void *src, size_t bytes, int threads) {
  threads_cap cap(threads);
  const unsigned char *s = static_cast<const unsigned char *>(src);
  std::copy(par, s, s + bytes, static_cast<unsigned char *>(dst));
  return 0;
}

extern "C" int bench_par_topk(pp_dtype t, const void *in, size_t n, size_t k, bool largest,
                              void *values_out, void *scratch, int threads) {
  if (k == 0 || k > n) return -1;
  threads_cap cap(threads);
  return by_type(t, [&](auto e) { topk<decltype(e)>(in, n, k, largest, values_out, scratch); });
}

#else

extern "C" const char *bench_cpu_tbb_name(void) { return nullptr; }
extern "C" int bench_par_sort(pp_dtype, void *, void *, size_t, size_t, bool, void *, int) { return -1; }
extern "C" int bench_par_reduce(pp_dtype, const void *, size_t, void *, int) { return -1; }
extern "C" int bench_par_scan(pp_dtype, bool, const void *, void *, size_t, int) { return -1; }
extern "C" int bench_par_select_gt(pp_dtype, const void *, const void *, size_t, void *,
                                   uint64_t *, int) {
  return -1;
}
extern "C" int bench_par_copy(void *, const void *, size_t, int) { return -1; }
extern "C" int bench_par_topk(pp_dtype, const void *, size_t, size_t, bool, void *, void *, int) {
  return -1;
}

#endif
