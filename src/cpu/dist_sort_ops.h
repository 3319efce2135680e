/* dist_sort_ops.h — the CPU backend's passes of the distributed sort (dist_sort_ops.c); the
 * contract of each is beside its entry in pp_backend_ops (src/core/internal.h). */
#ifndef PP_CPU_DIST_SORT_OPS_H
#define PP_CPU_DIST_SORT_OPS_H

#include "../core/internal.h"

pp_status pp_cpu_dsort_sample(pp_context *ctx, pp_dtype key_t, pp_order order, const void *keys,
                              const uint64_t *index, size_t count, uint64_t *images);
pp_status pp_cpu_dsort_count(pp_context *ctx, pp_dtype key_t, pp_order order, const void *keys,
                             size_t n, uint64_t first_index, const uint64_t *cand_image,
                             const uint64_t *cand_index, size_t ncand, uint64_t *counts,
                             void **plan);
pp_status pp_cpu_dsort_scatter(pp_context *ctx, void *plan, const void *keys, const void *values,
                               size_t value_size, const size_t *bin_first, size_t nbuckets,
                               void *const *key_dst, void *const *value_dst);
void pp_cpu_dsort_plan_free(pp_context *ctx, void *plan);

#endif /* PP_CPU_DIST_SORT_OPS_H */
