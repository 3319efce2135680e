/* dispatch.cuh — from what an entry point is told at run time (the context's device, an
 * element dtype, key and value widths) to the template instance that serves it.
 *
 * The dispatch layer of CUB's layering (device-wide entry point -> dispatch -> kernels):
 * each family's entry point makes the context's device current, then hands a generic
 * lambda to one of these, which calls it with a value of the element type (its type is
 * what the lambda uses: decltype). Templates here only stamp out one call per type.
 */
#ifndef PP_CUDA_DISPATCH_CUH
#define PP_CUDA_DISPATCH_CUH

#include "cuda_backend.h"

#include <stdint.h>
#include <type_traits>

/* Make the context's device current for this thread: every entry point does it before it
 * queues work, since the calling thread may have another device current. */
static inline pp_status pp_cuda_use_device(pp_context *ctx, const char *fn) {
  PP_CUDA_TRY(ctx, cudaSetDevice(pp_cuda(ctx)->device), fn);
  return PP_OK;
}

/* f(T()) with T the element type of t. */
template <typename F>
static pp_status pp_by_dtype(pp_context *ctx, const char *fn, pp_dtype t, F &&f) {
  switch (t) {
  case PP_U8: return f(uint8_t());
  case PP_I32: return f(int32_t());
  case PP_U32: return f(uint32_t());
  case PP_I64: return f(int64_t());
  case PP_U64: return f(uint64_t());
  case PP_F32: return f(float());
  case PP_F64: return f(double());
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: dtype (%d)", fn, (int)t);
}

/* What a SUM of T accumulates in: integers wrap in the unsigned type of their width (u8
 * in 32 bits), floats add in double (API.md). */
template <typename T> struct pp_sum_acc {
  typedef typename std::conditional<std::is_floating_point<T>::value, double,
                                    typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type>::type
      type;
};

/* The sorts move keys as unsigned words of their width and values as 4- or 8-byte words:
 * f(U(), V(), has_values) with U the key word of key_t, V the value word (uint32_t when
 * there are no values) and has_values a std::integral_constant<bool, ...>. */
template <typename F>
static pp_status pp_by_key_value(pp_context *ctx, const char *fn, pp_dtype key_t,
                                 const void *values, size_t value_size, F &&f) {
  auto with_key = [&](auto u) -> pp_status {
    if (!values) return f(u, uint32_t(), std::false_type());
    if (value_size == 4) return f(u, uint32_t(), std::true_type());
    return f(u, uint64_t(), std::true_type());
  };
  switch (pp_dtype_size(key_t)) {
  case 1: return with_key(uint8_t());
  case 4: return with_key(uint32_t());
  case 8: return with_key(uint64_t());
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: key_t (%d)", fn, (int)key_t);
}

/* The entry point of one sort algorithm (cuda_backend.h's pp_cuda_sort_* signature):
 * makes the device current and calls typed<U, V, HAS_V>(ctx, keys, values, n, order) with
 * the key and value words of pp_by_key_value and the key order of sort.cuh. */
#define PP_SORT_ENTRY(name, typed)                                                          \
  pp_status name(pp_context *ctx, pp_dtype key_t, void *keys, void *values,                 \
                 size_t value_size, size_t n, pp_order order) {                             \
    PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));                                             \
    return pp_by_key_value(ctx, "pp_sort", key_t, values, value_size,                       \
                           [&](auto u, auto v, auto has_v) {                                \
                             typedef decltype(u) U;                                         \
                             typedef decltype(v) V;                                         \
                             return typed<U, V, decltype(has_v)::value>(                    \
                                 ctx, (U *)keys, (V *)values, n,                            \
                                 pp_make_key_order<U>(key_t, order));                       \
                           });                                                              \
  }

#endif /* PP_CUDA_DISPATCH_CUH */
