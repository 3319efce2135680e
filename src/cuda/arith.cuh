/* arith.cuh — element-type facts and the float ordering rules of API.md, shared by the
 * kernels of every family: limits of each dtype, NaN tests, and MIN/MAX under the float
 * rules (NaN is "nothing seen yet", -0.0 orders below +0.0). */
#ifndef PP_CUDA_ARITH_CUH
#define PP_CUDA_ARITH_CUH

#include <cuda_runtime.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

/* limits<T>::lowest() and highest(): the dtype's range; floats: -inf and +inf. */
template <typename T, T LO, T HI> struct int_limits {
  static __device__ T lowest() { return LO; }
  static __device__ T highest() { return HI; }
};
template <typename T> struct float_limits {
  static __device__ T lowest() { return -INFINITY; }
  static __device__ T highest() { return INFINITY; }
};
template <typename T> struct limits;
template <> struct limits<uint8_t> : int_limits<uint8_t, 0, UINT8_MAX> {};
template <> struct limits<int32_t> : int_limits<int32_t, INT32_MIN, INT32_MAX> {};
template <> struct limits<uint32_t> : int_limits<uint32_t, 0, UINT32_MAX> {};
template <> struct limits<int64_t> : int_limits<int64_t, INT64_MIN, INT64_MAX> {};
template <> struct limits<uint64_t> : int_limits<uint64_t, 0, UINT64_MAX> {};
template <> struct limits<float> : float_limits<float> {};
template <> struct limits<double> : float_limits<double> {};

template <typename T> __device__ __forceinline__ bool is_nan(T) { return false; }
template <> __device__ __forceinline__ bool is_nan<float>(float x) { return isnan(x); }
template <> __device__ __forceinline__ bool is_nan<double>(double x) { return isnan(x); }
template <typename T> __host__ __device__ constexpr bool is_float() { return false; }
template <> __host__ __device__ constexpr bool is_float<float>() { return true; }
template <> __host__ __device__ constexpr bool is_float<double>() { return true; }

/* MIN under the float rules: NaN absent, -0.0 below +0.0. Integers: plain min. */
template <typename T>
__device__ __forceinline__ T min_rule(T a, T b) {
  if (is_nan(b)) return a;
  if (is_nan(a)) return b;
  if (b < a) return b;
  if (a < b) return a;
  if constexpr (is_float<T>()) return signbit(b) ? b : a;
  return a;
}
template <typename T>
__device__ __forceinline__ T max_rule(T a, T b) {
  if (is_nan(b)) return a;
  if (is_nan(a)) return b;
  if (b > a) return b;
  if (a > b) return a;
  if constexpr (is_float<T>()) return signbit(b) ? a : b;
  return a;
}

#endif /* PP_CUDA_ARITH_CUH */
