/*
 * peer_std.cpp — the CPU peers of `parprim bench` for sort and merge: std::sort,
 * std::stable_sort and std::merge, the sorts a C++ programmer reaches for first. They run
 * on one thread (the standard library's parallel algorithms need TBB, which we do not
 * depend on), so on the CPU backend they measure what parprim's OpenMP code buys over
 * the serial standard answer.
 *
 * C++ only to reach the standard algorithms; the interface is C (gpu.h). Templates stamp
 * out one instantiation per key type, value size and order.
 */
#include "gpu.h"
#include "peer_std_sort.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>

namespace {

using bench_std::record;

template <typename K> bool before(K a, K b, bool descending) { return descending ? b < a : a < b; }

struct serial_sort {
  template <typename K> static void keys(void *keys, size_t n, bool descending) {
    K *k = static_cast<K *>(keys);
    if (descending)
      std::sort(k, k + n, std::greater<K>());
    else
      std::sort(k, k + n, std::less<K>());
  }

  /* Structure of arrays in, structure of arrays out: packing into records and back is
   * part of what the standard answer costs for the layout the API takes. */
  template <typename K, typename V>
  static void pairs(void *keys, void *values, size_t n, bool descending, void *scratch) {
    K *k = static_cast<K *>(keys);
    V *v = static_cast<V *>(values);
    record<K, V> *r = static_cast<record<K, V> *>(scratch);
    for (size_t i = 0; i < n; i++) {
      r[i].key = k[i];
      r[i].value = v[i];
    }
    std::stable_sort(r, r + n, [descending](const record<K, V> &a, const record<K, V> &b) {
      return before(a.key, b.key, descending);
    });
    for (size_t i = 0; i < n; i++) {
      k[i] = r[i].key;
      v[i] = r[i].value;
    }
  }
};

template <typename K>
void merge_keys(const void *a, size_t na, const void *b, size_t nb, void *out, bool descending) {
  const K *pa = static_cast<const K *>(a);
  const K *pb = static_cast<const K *>(b);
  K *po = static_cast<K *>(out);
  if (descending)
    std::merge(pa, pa + na, pb, pb + nb, po, std::greater<K>());
  else
    std::merge(pa, pa + na, pb, pb + nb, po, std::less<K>());
}

/* record_bytes below computes these sizes without naming the types */
static_assert(sizeof(record<uint8_t, uint32_t>) == 8, "record layout");
static_assert(sizeof(record<uint64_t, uint32_t>) == 16, "record layout");
static_assert(sizeof(record<uint32_t, uint64_t>) == 16, "record layout");
static_assert(sizeof(record<float, uint32_t>) == 8, "record layout");

size_t record_bytes(pp_dtype key_t, size_t value_size) {
  size_t ks = pp_dtype_size(key_t);
  size_t align = ks > value_size ? ks : value_size;
  return (ks + value_size + align - 1) / align * align; /* sizeof(record<K, V>) */
}

} // namespace

extern "C" size_t bench_std_sort_scratch_bytes(pp_dtype key_t, size_t value_size, size_t n) {
  if (value_size == 0 || pp_dtype_size(key_t) == 0)
    return 0;
  size_t rb = record_bytes(key_t, value_size);
  return n > SIZE_MAX / rb ? SIZE_MAX : n * rb;
}

extern "C" int bench_std_sort(pp_dtype key_t, void *keys, void *values, size_t value_size,
                              size_t n, bool descending, void *scratch) {
  try {
    return bench_std::sort_any<serial_sort>(key_t, keys, values, value_size, n, descending,
                                            scratch);
  } catch (const std::bad_alloc &) {
    /* std::stable_sort falls back to an in-place merge rather than throw; be safe */
  }
  return -1;
}

extern "C" int bench_std_merge(pp_dtype t, bool descending, const void *a, size_t na,
                               const void *b, size_t nb, void *out) {
  return bench_std::by_type(
      t, [&](auto k) { merge_keys<decltype(k)>(a, na, b, nb, out, descending); });
}
