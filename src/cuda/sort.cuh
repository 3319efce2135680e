/* sort.cuh — what the sort (sort.cu) and merge (merge.cu) kernels share: the key order of
 * API.md as unsigned bits, relaxed loads and stores for look-back status words, and a
 * 256-wide block scan. Private to those two files.
 *
 * Key order. Every dtype is sorted and merged as an unsigned integer U of the same width
 * whose unsigned order is the required order:
 *   unsigned  the bits themselves;
 *   signed    the sign bit flipped (INT_MIN -> 0);
 *   float     negative numbers: all bits inverted; positive: the sign bit set; then
 *             -0.0 is given +0.0's image (so the two compare equal and keep their input
 *             order), and every NaN gets the largest image (above +inf, all NaNs equal);
 *   descending: the image inverted, which reverses the order and keeps ties as ties, so a
 *             stable sort stays stable.
 * Only the image is compared; the stored bits are moved untouched (a -0.0 stays -0.0, a
 * NaN keeps its payload). Without -0.0 and NaNs the image is a bijection (pp_key_special
 * finds the keys where it is not), so a sort may keep images between its passes and turn
 * them back into the stored bits once (pp_key_from_image).
 */
#ifndef PP_CUDA_SORT_CUH
#define PP_CUDA_SORT_CUH

#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"
#include "lookback.cuh"

#include <stdint.h>

enum pp_key_kind { PP_KEY_UNSIGNED = 0, PP_KEY_SIGNED = 1, PP_KEY_FLOAT = 2 };

/* How to turn the stored bits of one dtype into the ordered image: a kernel argument, so
 * i32/u32/f32 (and i64/u64/f64) share their kernels; the branch on kind is uniform. */
template <typename U>
struct pp_key_order {
  int kind; /* pp_key_kind */
  U flip;   /* 0 ascending, all ones descending */
};

static inline int pp_key_kind_of(pp_dtype t) {
  switch (t) {
  case PP_I32:
  case PP_I64: return PP_KEY_SIGNED;
  case PP_F32:
  case PP_F64: return PP_KEY_FLOAT;
  default: return PP_KEY_UNSIGNED;
  }
}

template <typename U>
static inline pp_key_order<U> pp_make_key_order(pp_dtype t, pp_order order) {
  pp_key_order<U> o;
  o.kind = pp_key_kind_of(t);
  o.flip = order == PP_DESCENDING ? (U)~(U)0 : (U)0;
  return o;
}

/* The image of a key that is not pp_key_special: pp_key_image without the -0.0 and NaN
 * rules, so a float's image is its bits XOR (sign ? all ones : the sign bit), two
 * instructions. Used alone where a pass knows that no key is special. */
template <typename U>
__device__ __forceinline__ U pp_key_image_plain(U raw, pp_key_order<U> o) {
  if constexpr (sizeof(U) >= 4) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    if (o.kind == PP_KEY_SIGNED) {
      raw ^= SIGN;
    } else if (o.kind == PP_KEY_FLOAT) {
      U neg; /* all ones where the sign bit is set: an arithmetic shift */
      if constexpr (sizeof(U) == 8) neg = (U)((long long)raw >> 63);
      else neg = (U)((int)raw >> 31);
      raw ^= neg | SIGN;
    }
  }
  return (U)(raw ^ o.flip);
}

/* The image: the plain one, with -0.0 given +0.0's and every NaN the largest. */
template <typename U>
__device__ __forceinline__ U pp_key_image(U raw, pp_key_order<U> o) {
  U k = pp_key_image_plain(raw, o);
  if constexpr (sizeof(U) >= 4) {
    if (o.kind == PP_KEY_FLOAT) {
      constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
      constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
      const U mag = raw & (U)~SIGN;
      k = mag == 0 ? (U)(SIGN ^ o.flip) : k;   /* -0.0 -> +0.0 */
      k = mag > EXP ? (U)(~(U)0 ^ o.flip) : k; /* NaN -> above +inf */
    }
  }
  return k;
}

/* True for the keys whose image does not give back their bits: -0.0 (it takes +0.0's
 * image) and NaNs (they all take the largest). Only floats have such keys. */
template <typename U>
__device__ __forceinline__ bool pp_key_special(U raw, pp_key_order<U> o) {
  if constexpr (sizeof(U) >= 4) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
    return o.kind == PP_KEY_FLOAT && (raw == SIGN || (U)(raw & (U)~SIGN) > EXP);
  } else {
    (void)raw;
    (void)o;
    return false;
  }
}

/* The stored bits of an image, for keys that are not pp_key_special. */
template <typename U>
__device__ __forceinline__ U pp_key_from_image(U img, pp_key_order<U> o) {
  U k = (U)(img ^ o.flip);
  if constexpr (sizeof(U) >= 4) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    if (o.kind == PP_KEY_SIGNED) k ^= SIGN;
    else if (o.kind == PP_KEY_FLOAT) k = (k & SIGN) ? (U)(k ^ SIGN) : (U)~k; /* sign set: was >= +0.0 */
  }
  return k;
}

/* The stored bits whose pp_key_image_plain is all ones (the largest image). */
template <typename U>
__device__ __forceinline__ U pp_key_preimage_of_max(pp_key_order<U> o) {
  constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
  if constexpr (sizeof(U) >= 4) {
    if (o.kind == PP_KEY_SIGNED) return (U)(~o.flip ^ SIGN);
    if (o.kind == PP_KEY_FLOAT) return o.flip ? (U)~(U)0 : (U)~SIGN; /* a NaN either way */
  }
  return (U)~o.flip;
}

/* Exclusive prefix sum over threads 0..255 (one value per radix digit); threads from 256
 * on take part in the barrier and get 0. Every thread of the block must call it;
 * warp_sums (8 entries) may be reused after the next __syncthreads(). */
template <int THREADS, typename T>
__device__ __forceinline__ T pp_block_exclusive_sum256(T v, T *warp_sums) {
  static_assert(THREADS >= 256 && THREADS % PP_WARP == 0, "one thread per digit");
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  if (tid >= 256) v = 0;
  T x = v;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    T y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  if (lane == PP_WARP - 1 && warp < 8) warp_sums[warp] = x;
  __syncthreads();
  T before = 0;
  if (tid < 256)
    for (int w = 0; w < warp; w++) before += warp_sums[w];
  return tid < 256 ? before + x - v : (T)0;
}

#endif /* PP_CUDA_SORT_CUH */
