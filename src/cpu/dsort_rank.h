/* dsort_rank.h — the CPU backend's entry of the distributed sort (dsort_rank.c); its
 * contract is beside dsort_rank in pp_backend_ops (src/core/internal.h). */
#ifndef PP_CPU_DSORT_RANK_H
#define PP_CPU_DSORT_RANK_H

#include "../core/internal.h"

pp_status pp_cpu_dsort_rank(pp_context *ctx, pp_dtype key_t, pp_order order, const void *sorted,
                            size_t n, const uint64_t *query, size_t q, uint64_t *counts);

#endif /* PP_CPU_DSORT_RANK_H */
