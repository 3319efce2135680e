/* sort.cu — pp_sort on the GPU: a stable LSD radix sort with 8-bit digits, one sweep of
 * the keys per digit (Adinets & Merrill, "Onesweep", 2022).
 *
 * Keys are sorted as unsigned images (sort.cuh: floats, signed, descending). When no key
 * is -0.0 or NaN (the histogram kernel checks), the images are a bijection of the keys: the
 * first digit pass then writes images, the passes between read and write images, and the
 * last one writes the stored bits back, so a float's image is computed once per key (right
 * after the first pass loads it; with no key special, from its sign alone: two
 * instructions) and not once per key and pass.
 * Otherwise every pass computes the image afresh from the stored bits, which are what
 * moves.
 *
 * Small n (at most SMALL_TILE keys): one block, one launch. The keys stay in registers
 * and shared memory through all passes; passes whose digit is the same for every key are
 * found with one OR/AND reduction of the images and skipped.
 *
 * Larger n: one stream-ordered scratch allocation, then
 *   1. a memset of the header (histograms, tile counters, the plan: ~16 KB);
 *   2. radix_histogram_kernel: ONE read of the keys builds the histograms of all digit
 *      positions; the last block to finish scans them into each digit's first output
 *      position and writes the plan: a pass whose digit is the same for all n keys cannot
 *      change the order and is skipped; with 4-byte keys it also picks each pass's warp
 *      match method from the pass's digit counts (radix_pick_match). The plan is read by
 *      the pass kernels on the device, so no host round trip is needed;
 *   3. one onesweep_kernel per digit position, compiled per key kind (floats, or integers
 *      with a signed key's sign flip folded into the order) so that images take no
 *      branches. A block takes tiles in the order of an atomic counter (a tile waits only
 *      on tiles handed out earlier, whose blocks are running: forward progress without
 *      co-residency), ranks the tile's keys by digit in shared memory (per-warp counters,
 *      stable; the lanes with equal digits found, for 4-byte keys alone, by the method the
 *      plan picked for the pass (shared ORs, eight ballots or MATCH.ANY), by shared ORs for
 *      8-byte keys alone and by eight ballots beside values), publishes its per-digit
 *      counts, looks back over the earlier tiles' counts for its digits (decoupled
 *      look-back, one thread per digit), then scatters keys and values through shared
 *      memory so that runs of equal digits are written contiguously; each slot's digit is
 *      taken again from its key there.
 * Keys ping-pong between the caller's buffer and one scratch buffer. If the passes done
 * are odd in number, the first skipped pass is turned into a plain copy, so the result
 * always ends in the caller's buffer (with 8-bit keys there is only one pass: the keys are
 * copied to scratch first and that pass writes them back).
 * Many 4-byte keys with 4-byte values travel packed, one 8-byte word per pair, from the
 * first sort pass to the last (pack_pass): one 8-byte access per pair instead of two
 * 4-byte ones in every scatter, which took large pair sorts past CUB.
 *
 * Look-back status words: two buffers of tiles x 256 words. Sort pass j uses buffer j%2
 * and, for each tile it finishes, zeroes that tile's words in the other buffer, which
 * pass j-1 used (it is complete: kernel boundary) and pass j+1 will use (it starts after
 * this kernel). Buffer 0 is zeroed by the histogram kernel. So the status memory is never
 * cleared by an extra launch, and nothing relies on what the pool's memory held before.
 *
 * Out of place (pp_cuda_sort_copy: keys_in to keys_out, values_in or each key's position
 * to values_out) is the same sort with the outputs as buffer 0 and the input as a third,
 * read-only buffer: the histogram kernel reads the input, and the first sort pass of the
 * plan (sort_header.first) loads its keys and values from the input in place of the buffer
 * the plan names; where positions are asked for, that pass makes them where it would load
 * values (load_values: start + tile index), so no value is read and no fill pass runs. The
 * other passes are those of the in-place sort. The plan, for k sort passes:
 *   - k >= 1, unpacked: the j-th sort pass reads buffer (k - j) % 2 (the first, the input)
 *     and writes the other. With k odd the first pass writes buffer 0, with k even
 *     buffer 1; the last reads buffer 1 and writes buffer 0 either way, so no copy is
 *     ever planned (in place, an odd k costs one) and skipped passes stay skipped;
 *   - k == 0 (every digit position constant: all keys are equal): pass 0 sorts anyway, a
 *     stable pass by one digit value being a copy, as the data must move;
 *   - packed pairs (k >= 2, no special key): the first packed pass reads the input instead
 *     of the caller's arrays, the last writes the outputs, as in place;
 *   - a -0.0 or NaN key turns images and packing off exactly as in place: the passes read
 *     and write stored bits, with the buffers above;
 *   - 8-bit keys: the single pass reads the input and writes the output (k == 1, or pass
 *     0 forced), so neither the scratch copy of the in-place sort nor scratch keys exist.
 * 8-byte positions of at most 2^32 keys (an argsort's int64 indices) travel as 4-byte
 * words: the passes are those of 4-byte values (packed pairs with 4-byte keys), the
 * scratch holds 4-byte values, and the plan's last sort pass (sort_header.last) writes
 * each word widened to the caller's 8-byte array (onesweep_kernel's VO). That pass writes
 * buffer 0 in every case above, and the passes before it that write buffer 0 use the
 * array's first 4n bytes as n words, which the last pass reads nothing from. The one-block
 * sort keeps 4-byte positions and stores them widened. So every pass but the last moves
 * 4 bytes of value per key, not 8.
 * Small n: the one-block sort loads the input and stores the output. The merge, sample
 * and quick sorts have no first pass to fold the copy into: the input (and positions) are
 * copied to the outputs, which are sorted in place.
 */
#include "sort.cuh"
#include "sort_onesweep.cuh"
#include "sort_radix.cuh"

#include <string.h>
#include <type_traits>

/* ---- small n: one block ------------------------------------------------------------------ */

template <typename U>
__device__ __forceinline__ U warp_or(U v) {
#pragma unroll
  for (int o = PP_WARP / 2; o > 0; o /= 2) v |= (U)__shfl_xor_sync(FULL_MASK, v, o);
  return v;
}
template <typename U>
__device__ __forceinline__ U warp_and(U v) {
#pragma unroll
  for (int o = PP_WARP / 2; o > 0; o /= 2) v &= (U)__shfl_xor_sync(FULL_MASK, v, o);
  return v;
}

/* The whole sort in one block: n <= THREADS*ITEMS. Only digit positions where the images
 * differ are sorted (found by OR and AND over all images). Between passes the keys go
 * through shared memory in rank order and come back warp-striped. The keys and values are
 * read from keys_in, values_in (the output arrays in place) and written to keys, values;
 * values_in NULL with values: each key's value is its position in keys_in (VO wider than
 * V: kept as a V, written as a VO). */
template <typename U, typename V, bool HAS_V, int THREADS, int ITEMS, typename VO = V>
__global__ void __launch_bounds__(THREADS)
small_sort_kernel(const U *keys_in, U *keys, const V *values_in, VO *values, unsigned n, pp_key_order<U> order) {
  constexpr int WARPS = THREADS / PP_WARP, TILE = THREADS * ITEMS;
  constexpr size_t EXCH = (size_t)TILE * (HAS_V && sizeof(V) > sizeof(U) ? sizeof(V) : sizeof(U));
  constexpr size_t HIST = (size_t)WARPS * RADIX * sizeof(unsigned);
  __shared__ __align__(16) unsigned char s_buf[EXCH > HIST ? EXCH : HIST];
  __shared__ unsigned s_scan[8];
  __shared__ U s_or[WARPS], s_and[WARPS];
  unsigned(*whist)[RADIX] = reinterpret_cast<unsigned(*)[RADIX]>(s_buf);
  U *xk = reinterpret_cast<U *>(s_buf);
  V *xv = reinterpret_cast<V *>(s_buf);
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;

  U key[ITEMS];
  V val[ITEMS];
  U any = 0, all = (U)~(U)0;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const unsigned idx = tile_index<ITEMS>(warp, i, lane);
    key[i] = 0;
    if (idx < n) {
      key[i] = keys_in[idx];
      const U img = pp_key_image(key[i], order);
      any |= img;
      all &= img;
    }
  }
  if constexpr (HAS_V) { /* one branch for all items, none per item */
    if (values_in) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const unsigned idx = tile_index<ITEMS>(warp, i, lane);
        if (idx < n) val[i] = values_in[idx];
      }
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) val[i] = (V)tile_index<ITEMS>(warp, i, lane);
    }
  }
  any = warp_or(any);
  all = warp_and(all);
  if (lane == 0) {
    s_or[warp] = any;
    s_and[warp] = all;
  }
  __syncthreads();
  U varying = 0;
  {
    U o = 0, a = (U)~(U)0;
    for (int w = 0; w < WARPS; w++) {
      o |= s_or[w];
      a &= s_and[w];
    }
    varying = (U)(o ^ a);
  }

  for (int pass = 0; pass < (int)sizeof(U); pass++) {
    const int shift = pass * 8;
    if (((varying >> shift) & (RADIX - 1)) == 0) continue; /* uniform: one digit for all */
    __syncthreads(); /* the previous pass's reads of s_buf are done */
    for (int i = tid; i < WARPS * RADIX; i += THREADS) (&whist[0][0])[i] = 0;
    __syncthreads();
    unsigned rank[ITEMS];
    const unsigned count = rank_tile_count<true, 0, THREADS>(
        [&](int i) { return radix_digit<false>(key[i], order, shift); }, n, rank, whist);
    rank_tile_finish<THREADS, ITEMS>(count, rank, whist, s_scan);
    __syncthreads(); /* whist is read; xk overwrites it */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) xk[rank[i] >> 8] = key[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) key[i] = xk[tile_index<ITEMS>(warp, i, lane)];
    if constexpr (HAS_V) {
      __syncthreads();
#pragma unroll
      for (int i = 0; i < ITEMS; i++) xv[rank[i] >> 8] = val[i];
      __syncthreads();
#pragma unroll
      for (int i = 0; i < ITEMS; i++) val[i] = xv[tile_index<ITEMS>(warp, i, lane)];
    }
  }

#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const unsigned idx = tile_index<ITEMS>(warp, i, lane);
    if (idx < n) {
      keys[idx] = key[i];
      if constexpr (HAS_V) values[idx] = (VO)val[i];
    }
  }
}

/* ---- upfront histogram of all digit positions ------------------------------------------- */

/* Each block counts tiles of THREADS x ITEMS keys (a grid-stride loop; thread t loads keys
 * t, t + THREADS, ... of a tile: coalesced) into shared histograms, one shared atomic add
 * per key and digit position: no warp votes (on sm_90 shared atomics to one address from
 * several lanes of a warp cost no more than to distinct ones: CUB's histogram, which does
 * just this, is faster on the bench's skewed f32 keys than on uniform u32 keys). The key
 * kind is a template parameter so the image takes no branches. Then each block adds its
 * histograms to the header's 64-bit counts, notes in the header whether it saw a
 * pp_key_special key, and zeroes look-back status buffer 0; the last block to finish turns
 * the counts into first positions and writes the plan (with 4-byte keys, each pass's match
 * method too: read by the passes of keys alone, unused beside values). Per-block counts
 * stay below 2^32: the host gives no block more than 2^31 keys. */
template <typename U, int KIND, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
radix_histogram_kernel(const U *__restrict__ keys, size_t n, sort_header *hdr, uint4 *status0,
                       size_t status0_vectors, U flip, unsigned pack, unsigned from_input) {
  constexpr int P = (int)sizeof(U);
  constexpr size_t TILE = (size_t)THREADS * ITEMS;
  __shared__ unsigned s_hist[P][RADIX];
  __shared__ unsigned long long s_scan[8];
  __shared__ unsigned s_trivial[8];
  __shared__ unsigned long long s_match[RADIX / PP_WARP][2]; /* radix_pick_match's warp sums */
  const int tid = threadIdx.x;
  const pp_key_order<U> order = {KIND, flip}; /* kind known here: the branches fold */
  for (int i = tid; i < P * RADIX; i += THREADS) (&s_hist[0][0])[i] = 0;
  if (tid < 8) s_trivial[tid] = 0;
  for (size_t i = (size_t)blockIdx.x * THREADS + tid; i < status0_vectors; i += (size_t)gridDim.x * THREADS)
    status0[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();

  bool special = false;
  for (size_t base = (size_t)blockIdx.x * TILE; base < n; base += (size_t)gridDim.x * TILE) {
    const U *tile_keys = keys + base + tid;
    U k[ITEMS];
    if (n - base >= TILE) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) k[i] = __ldg(tile_keys + i * THREADS);
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        const U img = pp_key_image(k[i], order);
        special |= pp_key_special(k[i], order);
#pragma unroll
        for (int p = 0; p < P; p++) atomicAdd(&s_hist[p][(unsigned)(img >> (8 * p)) & (RADIX - 1)], 1u);
      }
    } else {
      const size_t left = n - base;
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (tid + (size_t)i * THREADS < left) k[i] = __ldg(tile_keys + i * THREADS);
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        if (tid + (size_t)i * THREADS < left) {
          const U img = pp_key_image(k[i], order);
          special |= pp_key_special(k[i], order);
#pragma unroll
          for (int p = 0; p < P; p++) atomicAdd(&s_hist[p][(unsigned)(img >> (8 * p)) & (RADIX - 1)], 1u);
        }
      }
    }
  }
  if (__syncthreads_or(special) && tid == 0) atomicOr(&hdr->special, 1u);
  for (int i = tid; i < P * RADIX; i += THREADS) {
    const unsigned c = (&s_hist[0][0])[i];
    if (c) atomicAdd(&hdr->offsets[i / RADIX][i % RADIX], (unsigned long long)c);
  }
  __threadfence(); /* this thread's counts are in L2 ... */
  __syncthreads(); /* ... before thread 0 takes the block's ticket */
  if (!pp_last_block_done(&hdr->done)) return;

  for (int p = 0; p < P; p++) {
    const unsigned long long c = tid < RADIX ? __ldcg(&hdr->offsets[p][tid]) : 0ull;
    if constexpr (P == 4) { /* 4-byte keys alone choose the ranking's match per pass */
      const unsigned match = radix_pick_match<THREADS>(c, n, s_match);
      if (tid == 0) hdr->match[p] = match;
    }
    const unsigned long long first = pp_block_exclusive_sum256<THREADS>(c, s_scan);
    if (tid < RADIX) {
      hdr->offsets[p][tid] = first;
      if (c == (unsigned long long)n) s_trivial[p] = 1;
    }
    __syncthreads(); /* s_scan (and s_match) are reused */
  }
  if (tid == 0) radix_write_plan<P>(hdr, s_trivial, pack != 0, __ldcg(&hdr->special) == 0, from_input != 0);
}

/* ---- host side ------------------------------------------------------------------------------ */

/* keys_in NULL: in place, keys and values; else from keys_in, values_in (see sort_radix) */
template <typename U, typename V, bool HAS_V, typename VO>
static pp_status sort_small(pp_context *ctx, const U *keys_in, U *keys, const V *values_in, VO *values, size_t n,
                            pp_key_order<U> order) {
  if constexpr (std::is_same<VO, V>::value) {
    if (!keys_in) {
      keys_in = keys;
      values_in = values;
    }
  }
  small_sort_kernel<U, V, HAS_V, PP_SORT_SMALL_THREADS, PP_SORT_SMALL_ITEMS, VO>
      <<<1, PP_SORT_SMALL_THREADS, 0, pp_cuda(ctx)->stream>>>(keys_in, keys, values_in, values, (unsigned)n, order);
  PP_CUDA_LAUNCHED(ctx, "pp_sort");
  return PP_OK;
}

/* The histogram kernel of one key kind: a grid of up to one wave of tiles, at least one
 * block per 2^31 keys. */
template <typename U, int KIND>
static cudaError_t launch_histogram_kind(pp_cuda_state *st, const U *keys, size_t n, sort_header *hdr,
                                         void *status0, size_t status_bytes, U flip, unsigned pack,
                                         unsigned from_input) {
  auto hist = radix_histogram_kernel<U, KIND, HIST_THREADS, HIST_ITEMS>;
  static pp_fit_cache fit;
  const size_t wave = (size_t)st->sm_count * (size_t)pp_fit_blocks(st, &fit, hist, HIST_THREADS, 0, 1);
  const size_t tile = (size_t)HIST_THREADS * HIST_ITEMS;
  size_t g = (n + tile - 1) / tile;
  g = g < wave ? g : wave;
  const size_t g_min = (n >> 31) + 1; /* at most 2^31 keys per block: 32-bit shared counts */
  g = g > g_min ? g : g_min;
  hist<<<(unsigned)g, HIST_THREADS, 0, st->stream>>>(keys, n, hdr, (uint4 *)status0,
                                                     status_bytes / sizeof(uint4), flip, pack, from_input);
  return cudaGetLastError();
}

template <typename U>
static cudaError_t launch_histogram(pp_cuda_state *st, const U *keys, size_t n, sort_header *hdr,
                                    void *status0, size_t status_bytes, pp_key_order<U> order,
                                    unsigned pack, unsigned from_input) {
  if constexpr (sizeof(U) >= 4) {
    if (order.kind == PP_KEY_SIGNED)
      return launch_histogram_kind<U, PP_KEY_SIGNED>(st, keys, n, hdr, status0, status_bytes, order.flip, pack,
                                                     from_input);
    if (order.kind == PP_KEY_FLOAT)
      return launch_histogram_kind<U, PP_KEY_FLOAT>(st, keys, n, hdr, status0, status_bytes, order.flip, pack,
                                                    from_input);
  }
  return launch_histogram_kind<U, PP_KEY_UNSIGNED>(st, keys, n, hdr, status0, status_bytes, order.flip, pack,
                                                   from_input);
}

static size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* a + b, false on overflow */
static bool add_size(size_t *acc, size_t b) {
  if (*acc > SIZE_MAX - b) return false;
  *acc += b;
  return true;
}

template <typename U, int KIND, typename V, bool HAS_V, typename S, int ITEMS, int PK, typename VO>
static pp_status launch_passes_kind(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, const U *ki, const V *vi, size_t n,
                                    unsigned tiles, sort_header *hdr, void *status0, void *status1,
                                    U flip, int pass_begin, int pass_end, uint64_t *pk0, uint64_t *pk1) {
  pp_cuda_state *st = pp_cuda(ctx);
  auto kernel = onesweep_kernel<U, KIND, V, HAS_V, S, PP_SORT_THREADS, ITEMS, PK, VO>;
  /* packed pairs: the stage, and for a packed output the values' sorted tile */
  constexpr size_t dyn = onesweep_dyn_bytes<U, V, HAS_V, S, PP_SORT_THREADS, ITEMS>() +
                         (PK == PK_NONE ? 0 : PK == PK_LAST ? 1 : 2) *
                             onesweep_tile_bytes<U, V, HAS_V, PP_SORT_THREADS, ITEMS>();
  static pp_fit_cache fit;
  if (dyn > 0) PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, kernel, dyn), "pp_sort");
  const size_t wave = (size_t)st->sm_count * (size_t)pp_fit_blocks(st, &fit, kernel, PP_SORT_THREADS, dyn, 1);
  const unsigned grid = (unsigned)(tiles < wave ? tiles : wave);
  for (int pass = pass_begin; pass < pass_end; pass++) {
    kernel<<<grid, PP_SORT_THREADS, dyn, st->stream>>>(k0, k1, v0, v1, ki, vi, n, tiles, pass, hdr,
                                                       (S *)status0, (S *)status1, flip, pk0, pk1);
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
  }
  return PP_OK;
}

/* The pass kernels are compiled per key kind so that images take no branches: floats
 * have their own; a signed key's image is its bits with the sign flipped, so it runs the
 * unsigned kernel with the sign folded into flip. ki, vi: the input of an out-of-place
 * sort (onesweep_kernel's keys_in, vals_in), NULL in place. VO: onesweep_kernel's. */
template <typename U, typename V, bool HAS_V, typename S, int ITEMS, int PK = PK_NONE, typename VO = V>
static pp_status launch_passes(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, const U *ki, const V *vi, size_t n,
                               unsigned tiles, sort_header *hdr, void *status0, void *status1,
                               pp_key_order<U> order, int pass_begin, int pass_end,
                               uint64_t *pk0 = nullptr, uint64_t *pk1 = nullptr) {
  U flip = order.flip;
  if constexpr (sizeof(U) >= 4) {
    if (order.kind == PP_KEY_FLOAT)
      return launch_passes_kind<U, PP_KEY_FLOAT, V, HAS_V, S, ITEMS, PK, VO>(ctx, k0, k1, v0, v1, ki, vi, n, tiles,
                                                                        hdr, status0, status1, flip, pass_begin,
                                                                        pass_end, pk0, pk1);
    if (order.kind == PP_KEY_SIGNED) flip ^= (U)1 << (sizeof(U) * 8 - 1);
  }
  return launch_passes_kind<U, PP_KEY_UNSIGNED, V, HAS_V, S, ITEMS, PK, VO>(ctx, k0, k1, v0, v1, ki, vi, n, tiles,
                                                                       hdr, status0, status1, flip, pass_begin,
                                                                       pass_end, pk0, pk1);
}

/* Every digit position gets its onesweep_kernel; with packed pairs also those of the
 * packed passes that can sort at that position (a first one at any but the last, a middle
 * one at any but the first and the last, a last one at any but the first). The plan, made
 * on the device, gives each position to one of them; the others return at once. VO wider
 * than V: the kernels that can be a last pass (unpacked, packed last) widen the values;
 * a packed first or middle pass never is, so those are the kernels of V. */
template <typename U, typename V, bool HAS_V, typename S, int ITEMS, typename VO>
static pp_status launch_all(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, const U *ki, const V *vi, uint64_t *pk0,
                            uint64_t *pk1, size_t n, unsigned tiles, sort_header *hdr, void *status0, void *status1,
                            pp_key_order<U> order) {
  constexpr int P = (int)sizeof(U);
  if constexpr (P == 4 && HAS_V && sizeof(V) == 4) {
    if (pk0) {
      for (int pass = 0; pass < P; pass++) {
        pp_status s = launch_passes<U, V, HAS_V, S, ITEMS, PK_NONE, VO>(ctx, k0, k1, v0, v1, ki, vi, n, tiles,
                                                                        hdr, status0, status1, order, pass,
                                                                        pass + 1);
        if (s == PP_OK && pass < P - 1)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_FIRST>(ctx, k0, k1, v0, v1, ki, vi, n, tiles, hdr, status0,
                                                             status1, order, pass, pass + 1, pk0, pk1);
        if (s == PP_OK && pass > 0 && pass < P - 1)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_MID>(ctx, k0, k1, v0, v1, ki, vi, n, tiles, hdr, status0,
                                                           status1, order, pass, pass + 1, pk0, pk1);
        if (s == PP_OK && pass > 0)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_LAST, VO>(ctx, k0, k1, v0, v1, ki, vi, n, tiles, hdr,
                                                                status0, status1, order, pass, pass + 1, pk0,
                                                                pk1);
        if (s != PP_OK) return s;
      }
      return PP_OK;
    }
  }
  (void)pk0;
  (void)pk1;
  return launch_passes<U, V, HAS_V, S, ITEMS, PK_NONE, VO>(ctx, k0, k1, v0, v1, ki, vi, n, tiles, hdr, status0,
                                                            status1, order, 0, P);
}

template <typename U, typename V, bool HAS_V, typename VO, int ITEMS>
static pp_status sort_onesweep_items(pp_context *ctx, const U *keys_in, U *keys, const V *values_in, VO *values,
                                     size_t n, pp_key_order<U> order) {
  constexpr int P = (int)sizeof(U);
  constexpr size_t TILE = (size_t)PP_SORT_THREADS * ITEMS;
  constexpr bool PACK = sizeof(U) == 4 && HAS_V && sizeof(V) == 4; /* pack_pass */
  pp_cuda_state *st = pp_cuda(ctx);

  const size_t tiles = (n + TILE - 1) / TILE;
  if (tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: n (%zu) needs more tiles than a grid holds", n);
  /* the last tile counts its padding too, so the padded count decides */
  const bool wide = tiles * TILE >= (size_t)PP_SORT_WIDE_FROM;
  const size_t status_bytes = tiles * RADIX * (wide ? 8 : 4); /* < 2^31 * 2^11: no overflow */
  const int status_buffers = P > 1 ? 2 : 1;
  /* out of place with 8-bit keys, the one pass (sort or copy) reads the input and writes
     the output: no scratch keys or values */
  const bool from_input = keys_in != nullptr, scratch_data = !(P == 1 && from_input);

  size_t off_status = align_up(sizeof(sort_header)), total = off_status;
  bool ok = add_size(&total, (size_t)status_buffers * status_bytes);
  total = align_up(total);
  const size_t off_keys = total;
  if (scratch_data) ok = ok && add_size(&total, n * sizeof(U)); /* n * sizeof(U) was checked by the caller */
  total = align_up(total);
  const size_t off_vals = total;
  if (HAS_V && scratch_data) ok = ok && n <= SIZE_MAX / sizeof(V) && add_size(&total, n * sizeof(V));
  if (!ok || total > SIZE_MAX - 256)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "pp_sort: scratch for n (%zu) overflows size_t", n);
  /* packed pairs: the first packed buffer is the scratch keys' and values' space (8n
     bytes from off_keys on), the second 8n bytes more */
  size_t pack_total = align_up(total);
  const size_t off_pack1 = pack_total;
  const bool pack = PACK && n >= PP_SORT_PACK_FROM && n <= (SIZE_MAX - 256 - pack_total) / 8;
  if (pack) pack_total += n * 8;

  char *scratch = NULL;
  pp_status s = PP_ERR_OUT_OF_MEMORY;
  if (pack) {
    /* the packed buffer costs 8n bytes more: where the device has not got them, the
       pairs sort unpacked (and the failed attempt leaves no error text behind) */
    char saved[PP_ERROR_TEXT];
    memcpy(saved, ctx->error, sizeof saved);
    s = ctx->ops->temp_alloc(ctx, (void **)&scratch, pack_total);
    if (s == PP_ERR_OUT_OF_MEMORY) memcpy(ctx->error, saved, sizeof saved);
    else if (s != PP_OK) return s;
  }
  const bool packed = s == PP_OK;
  if (!packed) {
    s = ctx->ops->temp_alloc(ctx, (void **)&scratch, total);
    if (s != PP_OK) return s;
  }
  sort_header *hdr = (sort_header *)scratch;
  void *status0 = scratch + off_status;
  void *status1 = status_buffers > 1 ? scratch + off_status + status_bytes : NULL;
  U *k0 = keys, *k1 = scratch_data ? (U *)(scratch + off_keys) : NULL;
  /* VO wider than V: the caller's array holds V until the last pass (onesweep_kernel) */
  V *v0 = reinterpret_cast<V *>(values), *v1 = HAS_V && scratch_data ? (V *)(scratch + off_vals) : NULL;
  uint64_t *pk0 = packed ? (uint64_t *)(scratch + off_keys) : NULL;
  uint64_t *pk1 = packed ? (uint64_t *)(scratch + off_pack1) : NULL;

  cudaError_t e = cudaMemsetAsync(hdr, 0, sizeof(sort_header), st->stream);
  if (e == cudaSuccess && P == 1 && !from_input) { /* one pass: it reads the copy and writes the caller's */
    e = cudaMemcpyAsync(k1, k0, n * sizeof(U), cudaMemcpyDeviceToDevice, st->stream);
    if (e == cudaSuccess && HAS_V)
      e = cudaMemcpyAsync(v1, v0, n * sizeof(V), cudaMemcpyDeviceToDevice, st->stream);
    U *kt = k0;
    k0 = k1;
    k1 = kt;
    V *vt = v0;
    v0 = v1;
    v1 = vt;
  }
  if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);

  if (s == PP_OK) {
    e = launch_histogram<U>(st, from_input ? keys_in : keys, n, hdr, status0, status_bytes, order, packed ? 1u : 0u,
                            from_input ? 1u : 0u);
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  }
  if (s == PP_OK) {
    if (wide)
      s = launch_all<U, V, HAS_V, uint64_t, ITEMS, VO>(ctx, k0, k1, v0, v1, keys_in, values_in, pk0, pk1, n,
                                                       (unsigned)tiles, hdr, status0, status1, order);
    else
      s = launch_all<U, V, HAS_V, uint32_t, ITEMS, VO>(ctx, k0, k1, v0, v1, keys_in, values_in, pk0, pk1, n,
                                                       (unsigned)tiles, hdr, status0, status1, order);
  }
  ctx->ops->temp_free(ctx, scratch);
  return s;
}

/* 4-byte keys alone take larger tiles (PP_SORT_ITEMS_K32_LARGE) from PP_SORT_K32_LARGE_FROM
 * keys on: fewer tiles, so less look-back and per-tile work, where there are many waves. */
template <typename U, typename V, bool HAS_V, typename VO>
static pp_status sort_onesweep(pp_context *ctx, const U *keys_in, U *keys, const V *values_in, VO *values, size_t n,
                               pp_key_order<U> order) {
  constexpr int ITEMS = onesweep_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  if constexpr (sizeof(U) == 4 && !HAS_V && PP_SORT_ITEMS_K32_LARGE != ITEMS) {
    if (n >= (size_t)PP_SORT_K32_LARGE_FROM)
      return sort_onesweep_items<U, V, HAS_V, VO, PP_SORT_ITEMS_K32_LARGE>(ctx, keys_in, keys, values_in, values,
                                                                          n, order);
  }
  return sort_onesweep_items<U, V, HAS_V, VO, ITEMS>(ctx, keys_in, keys, values_in, values, n, order);
}

/* The radix sort of n >= 2 keys. keys_in NULL: in place (keys, values). Else out of place:
 * from keys_in, values_in to keys, values, the inputs read by the first pass that runs (the
 * small sort's load) and never written; values_in NULL with values: each key's value is
 * its position in keys_in, made where the values would be loaded. VO (the type of values)
 * wider than V: out of place with positions alone, which travel as V and are widened by
 * the pass that stores them last. */
template <typename U, typename V, bool HAS_V, typename VO = V>
static pp_status sort_radix_typed(pp_context *ctx, const U *keys_in, U *keys, const V *values_in, VO *values,
                                  size_t n, pp_key_order<U> order) {
  if (n <= SMALL_TILE) return sort_small<U, V, HAS_V, VO>(ctx, keys_in, keys, values_in, values, n, order);
  return sort_onesweep<U, V, HAS_V, VO>(ctx, keys_in, keys, values_in, values, n, order);
}

template <typename U, typename V, bool HAS_V>
static pp_status sort_typed(pp_context *ctx, U *keys, V *values, size_t n, pp_key_order<U> order) {
  return sort_radix_typed<U, V, HAS_V>(ctx, nullptr, keys, nullptr, values, n, order);
}

static PP_SORT_ENTRY(sort_radix, sort_typed)

/* The entry point of one sort algorithm; PP_SORT_AUTO takes the radix sort. */
typedef pp_status (*sort_algo_fn)(pp_context *, pp_dtype, void *, void *, size_t, size_t,
                                  pp_order);
static sort_algo_fn sort_algo(pp_sort_algo algo) {
  switch (algo) {
  case PP_SORT_MERGE: return pp_cuda_sort_merge;
  case PP_SORT_SAMPLE: return pp_cuda_sort_sample;
  case PP_SORT_QUICK: return pp_cuda_sort_quick;
  case PP_SORT_AUTO:
  case PP_SORT_RADIX: break;
  }
  return sort_radix;
}

pp_status pp_cuda_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                       size_t value_size, size_t n, pp_order order, pp_sort_algo algo) {
  if (n < 2) return PP_OK;
  return sort_algo(algo)(ctx, key_t, keys, values, value_size, n, order);
}

/* ---- out of place ---------------------------------------------------------------------------- */

/* out[i] = i for i < n (the positions of an argsort, for the sorts that cannot make them
 * in their first pass). */
template <typename V>
__global__ void __launch_bounds__(256) positions_kernel(V *out, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = (V)i;
}

/* The out-of-place sort of the algorithms that sort in place alone (and of n < 2): the
 * keys and values (or positions) are copied to the outputs, which are then sorted. */
static pp_status copy_then_sort(pp_context *ctx, pp_dtype key_t, const void *keys_in, void *keys_out,
                                const void *values_in, void *values_out, size_t value_size, size_t n,
                                pp_order order, pp_sort_algo algo) {
  pp_cuda_state *st = pp_cuda(ctx);
  PP_CUDA_TRY(ctx, cudaMemcpyAsync(keys_out, keys_in, n * pp_dtype_size(key_t), cudaMemcpyDeviceToDevice, st->stream),
              "pp_sort");
  if (values_in) {
    PP_CUDA_TRY(ctx, cudaMemcpyAsync(values_out, values_in, n * value_size, cudaMemcpyDeviceToDevice, st->stream),
                "pp_sort");
  } else if (values_out && n > 0) {
    const size_t wave = (size_t)st->sm_count * (size_t)(st->max_threads_per_sm / 256);
    size_t blocks = (n + 255) / 256;
    blocks = blocks < wave ? blocks : wave;
    if (value_size == 4)
      positions_kernel<uint32_t><<<(unsigned)blocks, 256, 0, st->stream>>>((uint32_t *)values_out, n);
    else
      positions_kernel<uint64_t><<<(unsigned)blocks, 256, 0, st->stream>>>((uint64_t *)values_out, n);
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
  }
  return pp_cuda_sort(ctx, key_t, keys_out, values_out, value_size, n, order, algo);
}

pp_status pp_cuda_sort_copy(pp_context *ctx, pp_dtype key_t, const void *keys_in, void *keys_out,
                            const void *values_in, void *values_out, size_t value_size, size_t n,
                            pp_order order, pp_sort_algo algo) {
  if (!values_out || value_size == 0) { /* keys alone */
    values_in = NULL;
    values_out = NULL;
    value_size = 0;
  }
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  if (n < 2 || sort_algo(algo) != sort_radix)
    return copy_then_sort(ctx, key_t, keys_in, keys_out, values_in, values_out, value_size, n, order, algo);
  return pp_by_key_value(ctx, "pp_sort", key_t, values_out, value_size, [&](auto u, auto v, auto has_v) {
    typedef decltype(u) U;
    typedef decltype(v) V;
    /* 8-byte positions of at most 2^32 keys fit 4 bytes until they are stored: every pass
       but the last moves 8 bytes a pair for 4-byte keys, not 12, and the scratch holds
       4-byte values */
    if constexpr (std::is_same<V, uint64_t>::value) {
      if (!values_in && n <= (size_t)1 << 32)
        return sort_radix_typed<U, uint32_t, true, uint64_t>(ctx, (const U *)keys_in, (U *)keys_out, nullptr,
                                                             (uint64_t *)values_out, n,
                                                             pp_make_key_order<U>(key_t, order));
    }
    return sort_radix_typed<U, V, decltype(has_v)::value>(ctx, (const U *)keys_in, (U *)keys_out,
                                                          (const V *)values_in, (V *)values_out, n,
                                                          pp_make_key_order<U>(key_t, order));
  });
}
