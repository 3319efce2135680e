/* dsort_rank.h — the CPU backend's entry of the distributed sort (dsort_rank.c); its
 * contract is beside dsort_rank in pp_backend_ops (src/core/internal.h). */
#ifndef PP_CPU_DSORT_RANK_H
#define PP_CPU_DSORT_RANK_H

#include "cpu.h"

/* declared with the type of its pp_backend_ops slot (PP_CPU_ENTRY, cpu.h) */
PP_CPU_ENTRY(dsort_rank, pp_cpu_dsort_rank);

#endif /* PP_CPU_DSORT_RANK_H */
