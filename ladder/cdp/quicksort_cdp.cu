/* quicksort_cdp.cu — the textbook quicksort with dynamic parallelism (Learn CUDA
 * Programming, Han and Sharma, ch. 7; after the CUDA samples' cdp_simple_quicksort),
 * written from the book's description, as the sort ladder's baseline:
 *   - a grid of one block of one thread sorts [left, right] of the array;
 *   - past a depth limit, or at 32 keys or fewer, that thread selection-sorts the segment;
 *   - else it partitions around the middle key's value with two pointers (keys below the
 *     pivot stay left, keys above go right, equal keys may go either way: not stable),
 *     then launches one child grid per non-empty side, each on a stream of its own
 *     (created and destroyed around the launch, as the book does, so that the two sides
 *     run concurrently instead of serialised in the block's default stream).
 * The book waits for nothing after launching; with CUDA 12's dynamic parallelism a parent
 * grid is complete only when its children are, so the host's stream sees the whole tree.
 * One thread does a whole level's work per segment: level 0 reads all n keys serially,
 * which is what the production PP_SORT_QUICK (src/cuda/sort_quick.cu) does with whole
 * blocks instead. */
#include "quicksort_cdp.h"

#define CDP_SELECTION_SORT_KEYS 32 /* segments of at most this many keys (right - left) */

/* Selection sort of data[left..right], one thread. */
__device__ static void cdp_selection_sort(uint32_t *data, long long left, long long right) {
  for (long long i = left; i <= right; ++i) {
    uint32_t smallest = data[i];
    long long at = i;
    for (long long j = i + 1; j <= right; ++j) {
      const uint32_t v = data[j];
      if (v < smallest) {
        smallest = v;
        at = j;
      }
    }
    if (at != i) {
      data[at] = data[i];
      data[i] = smallest;
    }
  }
}

__global__ void cdp_quicksort_kernel(uint32_t *data, long long left, long long right, int depth) {
  if (depth >= PP_CDP_QUICKSORT_MAX_DEPTH || right - left <= CDP_SELECTION_SORT_KEYS) {
    cdp_selection_sort(data, left, right);
    return;
  }
  uint32_t *lo = data + left, *hi = data + right;
  const uint32_t pivot = data[left + (right - left) / 2];
  while (lo <= hi) {
    uint32_t lv = *lo, hv = *hi;
    while (lv < pivot) lv = *++lo; /* stops at the pivot's value at the latest */
    while (hv > pivot) hv = *--hi;
    if (lo <= hi) {
      *lo++ = hv;
      *hi-- = lv;
    }
  }
  const long long left_end = hi - data, right_begin = lo - data;
  if (left < left_end) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cdp_quicksort_kernel<<<1, 1, 0, s>>>(data, left, left_end, depth + 1);
    cudaStreamDestroy(s);
  }
  if (right_begin < right) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cdp_quicksort_kernel<<<1, 1, 0, s>>>(data, right_begin, right, depth + 1);
    cudaStreamDestroy(s);
  }
}

cudaError_t pp_ladder_cdp_quicksort_limits(void) {
  const size_t want = (size_t)2 << PP_CDP_QUICKSORT_MAX_DEPTH;
  size_t have = 0;
  cudaError_t e = cudaDeviceGetLimit(&have, cudaLimitDevRuntimePendingLaunchCount);
  if (e == cudaSuccess && have < want) e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, want);
  return e;
}

cudaError_t pp_ladder_cdp_quicksort(uint32_t *keys, size_t n, cudaStream_t stream) {
  if (n < 2) return cudaSuccess;
  cdp_quicksort_kernel<<<1, 1, 0, stream>>>(keys, 0, (long long)n - 1, 0);
  return cudaGetLastError();
}
