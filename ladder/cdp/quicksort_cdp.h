/* quicksort_cdp.h — the textbook quicksort with dynamic parallelism (Learn CUDA
 * Programming, Han and Sharma, ch. 7), for the sort ladder (ladder/sort.cu). It lives in
 * its own file because kernels that launch kernels need relocatable device code
 * (ladder/cdp/quicksort_cdp.cu, CMakeLists.txt: parprim_cli_cdp); the rest of the ladder
 * keeps whole-program compilation. */
#ifndef PARPRIM_LADDER_QUICKSORT_CDP_H
#define PARPRIM_LADDER_QUICKSORT_CDP_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Depth at which the book's quicksort stops recursing and selection-sorts the segment. */
#define PP_CDP_QUICKSORT_MAX_DEPTH 16

/* Raises the device runtime's pool of pending launches to what the quicksort can need (one
 * grid per partition: up to 2^(MAX_DEPTH+1) of them); the default, 2048, would make deep
 * launches fail and leave segments unsorted. Call once before pp_ladder_cdp_quicksort. */
cudaError_t pp_ladder_cdp_quicksort_limits(void);

/* Sorts n u32 keys in place on `stream`: the host launches one thread on the whole array;
 * every level partitions in one thread and launches one child grid per side. */
cudaError_t pp_ladder_cdp_quicksort(uint32_t *keys, size_t n, cudaStream_t stream);

#endif /* PARPRIM_LADDER_QUICKSORT_CDP_H */
