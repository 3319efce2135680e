/* sort_merge.c — pp_sort with PP_SORT_MERGE on the CPU (issue 5). Not written yet: it answers
   PP_ERR_UNSUPPORTED, as the entry point did before this file existed. */
#include "cpu.h"

pp_status pp_cpu_sort_merge(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                         size_t value_size, size_t n, pp_order order) {
  (void)key_t, (void)keys, (void)values, (void)value_size, (void)n, (void)order;
  return pp_fail(ctx, PP_ERR_UNSUPPORTED,
                 "pp_sort: algo PP_SORT_MERGE is not implemented yet on the cpu backend");
}
