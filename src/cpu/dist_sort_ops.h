/* dist_sort_ops.h — the CPU backend's passes of the distributed sort (dist_sort_ops.c); the
 * contract of each is beside its entry in pp_backend_ops (src/core/internal.h). */
#ifndef PP_CPU_DIST_SORT_OPS_H
#define PP_CPU_DIST_SORT_OPS_H

#include "cpu.h"

/* declared with the types of their pp_backend_ops slots (PP_CPU_ENTRY, cpu.h) */
PP_CPU_ENTRY(dsort_sample, pp_cpu_dsort_sample); PP_CPU_ENTRY(dsort_count, pp_cpu_dsort_count);
PP_CPU_ENTRY(dsort_scatter, pp_cpu_dsort_scatter);
PP_CPU_ENTRY(dsort_plan_free, pp_cpu_dsort_plan_free);

#endif /* PP_CPU_DIST_SORT_OPS_H */
