/* dsort_rank.h — the CUDA backend's entry of the distributed sort (dsort_rank.cu); its
 * contract is beside dsort_rank in pp_backend_ops (src/core/internal.h). */
#ifndef PP_CUDA_DSORT_RANK_H
#define PP_CUDA_DSORT_RANK_H

#ifdef __cplusplus
extern "C" {
#endif

#include "../core/internal.h"

pp_status pp_cuda_dsort_rank(pp_context *ctx, pp_dtype key_t, pp_order order, const void *sorted,
                             size_t n, const uint64_t *query, size_t q, uint64_t *counts);

#ifdef __cplusplus
}
#endif

#endif /* PP_CUDA_DSORT_RANK_H */
