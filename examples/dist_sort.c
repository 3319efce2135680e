/* dist_sort.c — one sort across several processes: every rank brings its own keys, and
 * afterwards rank 0 holds the smallest, rank 1 the next, and so on, each rank keeping as
 * many keys as it brought.
 *
 *   mpiexec -np 4 dist_sort [KEYS_PER_RANK [cpu|cuda]]
 *
 * pp_create_dist with a NULL id takes the ranks from MPI; with the CPU backend the ranks
 * talk through MPI, with CUDA (one GPU per rank) through NCCL; by default CUDA when a GPU
 * is visible. The program itself makes no MPI call: the checks below are parprim's
 * distributed reduce and scan.
 */
#include <parprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  pp_backend backend = PP_BACKEND_AUTO;
  if (argc > 2) backend = strcmp(argv[2], "cuda") == 0 ? PP_BACKEND_CUDA : PP_BACKEND_CPU;
  pp_context *ctx;
  pp_status s = pp_create_dist(&ctx, backend, NULL, 0, 0);
  if (s == PP_ERR_UNSUPPORTED) { /* a build without MPI (CPU) or NCCL (CUDA) */
    fprintf(stderr, "skipped: %s\n", pp_last_error(NULL));
    return 77;
  }
  if (s != PP_OK) {
    fprintf(stderr, "pp_create_dist: %s\n", pp_last_error(NULL));
    return 1;
  }
  const int rank = pp_rank(ctx), nranks = pp_nranks(ctx);
  /* ranks may bring different counts: rank r brings n + r keys */
  const size_t n = (argc > 1 ? (size_t)atol(argv[1]) : 100000) + (size_t)rank;
  uint64_t *keys = malloc((n + 1) * sizeof *keys), sum_before, sum_after;
  if (!keys) return 1;
  srand(12345u + (unsigned)rank);
  for (size_t i = 0; i < n; i++) keys[i] = (uint64_t)rand() << 20 ^ (uint64_t)rand();

#define CHECK(call)                                                           \
  do {                                                                        \
    if ((s = (call)) != PP_OK) {                                              \
      fprintf(stderr, "rank %d: %s: %s\n", rank, #call, pp_last_error(ctx)); \
      return 1;                                                               \
    }                                                                         \
  } while (0)
  CHECK(pp_reduce(ctx, PP_SUM, PP_U64, keys, n, &sum_before)); /* over all ranks' keys */
  CHECK(pp_sort(ctx, PP_U64, keys, NULL, 0, n, NULL));
  CHECK(pp_reduce(ctx, PP_SUM, PP_U64, keys, n, &sum_after));

  /* sorted everywhere: in order on this rank, and nothing on an earlier rank is larger
   * than this rank's first key (an exclusive MAX scan over one value per rank) */
  uint64_t wrong = 0, last = n ? keys[n - 1] : 0, before_me, total_wrong;
  for (size_t i = 1; i < n; i++) wrong += keys[i - 1] > keys[i];
  CHECK(pp_scan(ctx, PP_MAX, PP_U64, &last, &before_me, n ? 1 : 0, false));
  if (n && rank > 0 && before_me > keys[0]) wrong++;
  CHECK(pp_reduce(ctx, PP_SUM, PP_U64, &wrong, 1, &total_wrong));
  printf("rank %d of %d: %zu keys, %s\n", rank, nranks, n,
         total_wrong == 0 && sum_before == sum_after ? "globally sorted" : "NOT SORTED");
  pp_destroy(ctx);
  free(keys);
  return total_wrong == 0 && sum_before == sum_after ? 0 : 1;
}
