/* dsort_rank.c — the distributed sort's one per-rank search on the CPU: how many of a rank's
 * sorted keys lie below each probe of the exact split (src/dist/dist_sort.c). A key is
 * placed by its order image, the one the local sort orders by (cpu.h), widened to 64 bits
 * with descending folded in by inverting it, so the sorted keys' images ascend and a binary
 * search finds each count. */
#include "cpu.h"
#include "dsort_rank.h"

/* The order image of keys[i] as 64 bits, descending folded in. */
static uint64_t order_image(pp_dtype t, pp_order order, const void *keys, size_t i) {
  uint64_t img;
  uint64_t mask = UINT64_MAX; /* the image's bits */
  switch (t) {
  case PP_U8: img = pp_cpu_okey_u8(pp_cpu_ld_u8(keys, i)); mask = 0xff; break;
  case PP_I32: img = pp_cpu_okey_i32(pp_cpu_ld_u32(keys, i)); mask = UINT32_MAX; break;
  case PP_U32: img = pp_cpu_okey_u32(pp_cpu_ld_u32(keys, i)); mask = UINT32_MAX; break;
  case PP_F32: img = pp_cpu_okey_f32(pp_cpu_ld_u32(keys, i)); mask = UINT32_MAX; break;
  case PP_I64: img = pp_cpu_okey_i64(pp_cpu_ld_u64(keys, i)); break;
  case PP_F64: img = pp_cpu_okey_f64(pp_cpu_ld_u64(keys, i)); break;
  default: img = pp_cpu_okey_u64(pp_cpu_ld_u64(keys, i)); break;
  }
  return order == PP_DESCENDING ? img ^ mask : img;
}

pp_status pp_cpu_dsort_rank(pp_context *ctx, pp_dtype key_t, pp_order order, const void *sorted,
                            size_t n, const uint64_t *query, size_t q, uint64_t *counts) {
  (void)ctx;
  for (size_t i = 0; i < q; i++) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (order_image(key_t, order, sorted, mid) < query[i])
        lo = mid + 1;
      else
        hi = mid;
    }
    counts[i] = lo;
  }
  return PP_OK;
}
