/* sort_quick.cu — pp_sort with PP_SORT_QUICK on the GPU (issue 5). Not written yet: it answers
   PP_ERR_UNSUPPORTED, as the entry point did before this file existed. */
#include "cuda_backend.h"

pp_status pp_cuda_sort_quick(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                          size_t value_size, size_t n, pp_order order) {
  (void)key_t, (void)keys, (void)values, (void)value_size, (void)n, (void)order;
  return pp_fail(ctx, PP_ERR_UNSUPPORTED,
                 "pp_sort: algo PP_SORT_QUICK is not implemented yet on the cuda backend");
}
