/* merge_path.cuh — the merge-path split in global memory, searched by one thread or by G
 * lanes of a warp at once (Green, McColl & Bader, "GPU merge path", 2012), for pp_merge
 * (merge.cu) and the merge sort's rounds (sort_merge.cu).
 *
 * The first d outputs of the merge of sorted runs a[0, la) and b[0, lb) are a[0, i) and
 * b[0, d - i), i the first m in [max(0, d - lb), min(d, la)] at which le(a[m], b[d-1-m])
 * fails (ties go to a: the merge is stable). The predicate holds below the split and fails
 * from it on, so a binary search finds it in log2(n) dependent loads, each a DRAM round
 * trip when the searches are few and scattered. G lanes probe G evenly spread points of
 * the range at once and narrow it (G + 1)-fold per round: log(G+1)(n) round trips, at 2G
 * loads a round. The split found is the binary search's, exactly.
 */
#ifndef PP_CUDA_MERGE_PATH_CUH
#define PP_CUDA_MERGE_PATH_CUH

#include "common.cuh"

/* The one-thread form: the binary search over a range [lo, hi] that already holds the split
 * (at widest [max(0, d - lb), min(d, la)]; pp_merge first narrows it on samples), one
 * dependent probe of a and b a step. le as below. LDG: the keys do not change during the
 * kernel, so they are read through the read-only data cache (__ldg); else plain loads. */
template <bool LDG, typename U, typename LE>
__device__ __forceinline__ size_t merge_path_split_one(const U *a, const U *b, size_t d, size_t lo,
                                                       size_t hi, LE le) {
  while (lo < hi) {
    const size_t m = lo + (hi - lo) / 2;
    const U *x = a + m, *y = b + (d - 1 - m);
    if (LDG ? le(__ldg(x), __ldg(y)) : le(*x, *y))
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Called by the whole warp (32 % G == 0); lanes [g * G, g * G + G) search one split, each
 * group its own a, b and d. le(x, y): x may be output before y. Groups with live false take
 * part in the warp's votes and find nothing (their result is not a split). */
template <int G, typename U, typename LE>
__device__ __forceinline__ size_t merge_path_split(const U *a, size_t la, const U *b, size_t lb, size_t d,
                                                   bool live, LE le) {
  static_assert(G >= 2 && G <= PP_WARP && PP_WARP % G == 0, "groups tile the warp");
  const int lane = threadIdx.x % PP_WARP, g = lane % G;
  const unsigned gmask = (unsigned)((1ull << G) - 1ull) << (lane - g);
  size_t lo = 0, hi = 0; /* the split lies in [lo, hi] */
  if (live) {
    lo = d > lb ? d - lb : 0;
    hi = d < la ? d : la;
  }
  for (;;) {
    const bool busy = hi - lo > (size_t)G;
    if (!__any_sync(0xffffffffu, busy)) break;
    const size_t span = hi - lo; /* < 2^58: the products below cannot overflow */
    const size_t m = lo + (size_t)(g + 1) * span / (G + 1); /* lo < m < hi when busy */
    const bool p = busy && le(__ldg(a + m), __ldg(b + (d - 1 - m)));
    const int c = __popc(__ballot_sync(0xffffffffu, p) & gmask); /* the group's probes 0..c-1 hold */
    if (busy) {
      const size_t new_lo = c ? lo + (size_t)c * span / (G + 1) + 1 : lo;
      hi = c < G ? lo + (size_t)(c + 1) * span / (G + 1) : hi;
      lo = new_lo;
    }
  }
  /* at most G candidates left: lo + g for g < hi - lo */
  const size_t m = lo + g;
  const bool p = m < hi && le(__ldg(a + m), __ldg(b + (d - 1 - m)));
  return lo + __popc(__ballot_sync(0xffffffffu, p) & gmask);
}

#endif
