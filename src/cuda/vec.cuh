/* vec.cuh — 16-byte vectors: the one vector type the streaming kernels load and store
 * through, and how an array splits into an unaligned head, whole vectors and a tail.
 *
 * A 16-byte load (LDG.E.128) moves four times the bytes of a 4-byte one per instruction,
 * which a kernel needs to keep enough bytes in flight to reach DRAM bandwidth (CUDA C++
 * Best Practices Guide, "Coalesced Access to Global Memory"; Learn CUDA Programming,
 * ch. 3). It must be 16-byte aligned, so an array starting elsewhere is walked as a head
 * of single elements up to the first 16-byte boundary, the vectors, and a tail of fewer
 * than one vector's elements.
 */
#ifndef PP_CUDA_VEC_CUH
#define PP_CUDA_VEC_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* One 16-byte vector, as raw words for loads and stores or as its elements. */
template <typename T>
union pp_vec16 {
  uint4 raw;
  T e[16 / sizeof(T)];
};

/* [p, p + n) at 16-byte boundaries: head elements before the first boundary (all n when
 * fewer), nvec whole vectors from p + head, and the tail from element tail_begin on. */
struct pp_vec_split {
  size_t head, nvec, tail_begin;
};

template <typename T>
__host__ __device__ __forceinline__ pp_vec_split pp_split16(const T *p, size_t n) {
  constexpr size_t V = 16 / sizeof(T);
  pp_vec_split s;
  s.head = ((16 - (reinterpret_cast<uintptr_t>(p) & 15)) & 15) / sizeof(T);
  if (s.head > n) s.head = n;
  s.nvec = (n - s.head) / V;
  s.tail_begin = s.head + s.nvec * V;
  return s;
}

#endif /* PP_CUDA_VEC_CUH */
