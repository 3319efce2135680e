/* dist_sort.h — private to the distributed sort (dist_sort.c): its bridge to the
 * distributed layer (dist_internal.h: the context's communicator and the failure
 * agreement). */
#ifndef PP_DIST_SORT_H
#define PP_DIST_SORT_H

#include "dist_internal.h"

/* The communicator of a distributed context. */
static inline pp_comm *pp_dsort_comm(pp_context *ctx) { return pp_dist_of(ctx)->comm; }

/* The status every rank agrees on before the next collective (pp_dist_agree). */
static inline pp_status pp_dsort_agree(pp_context *ctx, pp_status s) {
  return pp_dist_agree(ctx, "pp_sort", s, NULL, 0);
}

#endif /* PP_DIST_SORT_H */
