/* merge.cuh — the compare of the merges (merge.cu: two runs; merge_runs.cu: several), on
 * the stored bits of a key in the order of API.md. Private to those two files.
 *
 * The merges compare values and never need sort.cuh's images, so they compare the way the
 * hardware does: integers as they are (signed or not), floats with a float compare, which
 * already treats -0.0 as +0.0, plus one test that puts NaN above everything. The kind
 * (pp_key_kind) and the direction are template parameters: two or three instructions per
 * compare.
 */
#ifndef PP_CUDA_MERGE_CUH
#define PP_CUDA_MERGE_CUH

#include "sort.cuh"

#include <type_traits>

/* x may be output before y: image(x) <= image(y) in the order of API.md (KIND is a
 * pp_key_kind), on the stored bits. Descending compares the other way round. */
template <typename U, int KIND, bool DESC>
__device__ __forceinline__ bool merge_le(U x, U y) {
  if constexpr (DESC) {
    const U t = x;
    x = y;
    y = t;
  }
  if constexpr (KIND == PP_KEY_FLOAT) {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8, "f32 or f64");
    if constexpr (sizeof(U) == 4) {
      const float fx = __uint_as_float((unsigned)x), fy = __uint_as_float((unsigned)y);
      return fx <= fy || fy != fy; /* -0.0 == +0.0 by the compare; NaN last, equal to NaN */
    } else {
      const double fx = __longlong_as_double((long long)x), fy = __longlong_as_double((long long)y);
      return fx <= fy || fy != fy;
    }
  } else if constexpr (KIND == PP_KEY_SIGNED) {
    typedef typename std::make_signed<U>::type S;
    return (S)x <= (S)y;
  } else {
    return x <= y;
  }
}

#endif
