/*
 * peer_std_sort.hpp — what the two standard-library sort peers share: peer_std.cpp (one
 * thread) and peer_cpu_par.cpp (std::execution::par). Both sort keys alone with std::sort
 * and (key, value) pairs by packing them into records for std::stable_sort, since the
 * standard library has no sort of one array by another; they differ only in the execution
 * policy, which each file's sorter (a struct of two static templates) supplies.
 *
 * C++ only, included by the peers' .cpp files; the interface stays C (gpu.h).
 */
#ifndef PP_BENCH_PEER_STD_SORT_HPP
#define PP_BENCH_PEER_STD_SORT_HPP

#include "gpu.h"

#include <cstddef>
#include <cstdint>

namespace bench_std {

template <typename K, typename V> struct record {
  K key;
  V value;
};

/* Keys alone (values NULL): Sorter::keys<K>(keys, n, descending); pairs with 4- or 8-byte
 * values: Sorter::pairs<K, V>(keys, values, n, descending, scratch), scratch holding n
 * records. Returns 0, or -1 for another value width or pairs without scratch. */
template <typename Sorter, typename K>
int sort_by_value_width(void *keys, void *values, size_t value_size, size_t n, bool descending,
                        void *scratch) {
  if (!values) {
    Sorter::template keys<K>(keys, n, descending);
    return 0;
  }
  if (!scratch)
    return -1;
  if (value_size == 4)
    Sorter::template pairs<K, uint32_t>(keys, values, n, descending, scratch);
  else if (value_size == 8)
    Sorter::template pairs<K, uint64_t>(keys, values, n, descending, scratch);
  else
    return -1;
  return 0;
}

/* One instantiation of f per key type: calls f(T{}) for t, returns -1 for an unknown t. */
template <typename F> int by_type(pp_dtype t, F f) {
  switch (t) {
  case PP_U8: f(uint8_t()); return 0;
  case PP_I32: f(int32_t()); return 0;
  case PP_U32: f(uint32_t()); return 0;
  case PP_I64: f(int64_t()); return 0;
  case PP_U64: f(uint64_t()); return 0;
  case PP_F32: f(float()); return 0;
  case PP_F64: f(double()); return 0;
  }
  return -1;
}

/* bench_std_sort / bench_par_sort: the key type's instantiation of sort_by_value_width. */
template <typename Sorter>
int sort_any(pp_dtype key_t, void *keys, void *values, size_t value_size, size_t n,
             bool descending, void *scratch) {
  int rc = 0;
  if (by_type(key_t, [&](auto k) {
        rc = sort_by_value_width<Sorter, decltype(k)>(keys, values, value_size, n, descending,
                                                      scratch);
      }) != 0)
    return -1;
  return rc;
}

} // namespace bench_std

#endif /* PP_BENCH_PEER_STD_SORT_HPP */
