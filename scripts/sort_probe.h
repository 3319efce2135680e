/* sort_probe.h — what a variant translation unit (sort_probe_variant.cu) registers with
 * the harness (sort_probe.cu). */
#ifndef SORT_PROBE_H
#define SORT_PROBE_H

#include "parprim.h"

#include <stddef.h>
#include <stdint.h>

struct probe_variant {
  const char *name;
  /* kind: 0 u32 keys, 1 f32 keys, 2 u64 keys, 3 u32 keys with u32 values, 4 u32 keys
     already sorted; n > 4096 */
  pp_status (*sort)(pp_context *ctx, int kind, void *keys, uint32_t *values, size_t n);
  /* the upfront histogram kernel alone, with its header memset */
  pp_status (*hist)(pp_context *ctx, int kind, const void *keys, size_t n);
  pp_status (*merge)(pp_context *ctx, const float *a, size_t na, const float *b, size_t nb, float *out);
  /* the comparison sorts of sort_merge.cu / sort_sample.cu (with sort_block.cuh), keys
     only: algo 0 merge sort, 1 sample sort; kind 0 u32, 1 f32 */
  pp_status (*msort)(pp_context *ctx, int algo, int kind, void *keys, size_t n);
};

int probe_register(const probe_variant &v);

#endif
