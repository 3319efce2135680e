/* dist_context.c — distributed contexts before any engine is built in: a plain context
 * reports rank 0 of 1, and the distributed constructors say what the build lacks. */
#include "../core/check.h"

int pp_rank(const pp_context *ctx) {
  (void)ctx;
  return 0;
}

int pp_nranks(const pp_context *ctx) {
  (void)ctx;
  return 1;
}

pp_status pp_dist_id_create(pp_backend backend, pp_dist_id *id) {
  (void)backend;
  (void)id;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_dist_id_create: not implemented yet");
}

pp_status pp_create_dist(pp_context **ctx, pp_backend backend, const pp_dist_id *id,
                         int nranks, int rank) {
  (void)backend;
  (void)id;
  (void)nranks;
  (void)rank;
  if (ctx) *ctx = NULL;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_create_dist: not implemented yet");
}

pp_status pp_create_from_comm(pp_context **ctx, pp_backend backend, void *comm) {
  (void)backend;
  (void)comm;
  if (ctx) *ctx = NULL;
  return pp_fail(NULL, PP_ERR_UNSUPPORTED, "pp_create_from_comm: not implemented yet");
}
