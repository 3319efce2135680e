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
 *      change the order and is skipped. The plan is read by the pass kernels on the device,
 *      so no host round trip is needed;
 *   3. one onesweep_kernel per digit position, compiled per key kind (floats, or integers
 *      with a signed key's sign flip folded into the order) so that images take no
 *      branches. A block takes tiles in the order of an atomic counter (a tile waits only
 *      on tiles handed out earlier, whose blocks are running: forward progress without
 *      co-residency), ranks the tile's keys by digit in shared memory (per-warp counters,
 *      stable; the lanes with equal digits found by shared ORs for keys alone, eight
 *      ballots beside values), publishes its per-digit counts, looks back over the earlier
 *      tiles' counts for its digits (decoupled look-back, one thread per digit), then
 *      scatters keys and values through shared memory so that runs of equal digits are
 *      written contiguously; each slot's digit is taken again from its key there.
 * Keys ping-pong between the caller's buffer and one scratch buffer. If the passes done
 * are odd in number, the first skipped pass is turned into a plain copy, so the result
 * always ends in the caller's buffer (with 8-bit keys there is only one pass: the keys are
 * copied to scratch first and that pass writes them back).
 * Many 4-byte keys with 4-byte values travel packed, one 8-byte word per pair, from the
 * first sort pass to the last (pack_pass): at 2^28 on the H100 1.04x CUB in parprim bench,
 * where separate keys and values were 0.96x.
 *
 * Look-back status words: two buffers of tiles x 256 words. Sort pass j uses buffer j%2
 * and, for each tile it finishes, zeroes that tile's words in the other buffer, which
 * pass j-1 used (it is complete: kernel boundary) and pass j+1 will use (it starts after
 * this kernel). Buffer 0 is zeroed by the histogram kernel. So the status memory is never
 * cleared by an extra launch, and nothing relies on what the pool's memory held before.
 */
#include "sort.cuh"

#include <string.h>
#include <type_traits>

/* Tiles, blocks per SM, rankings, look-back batches: PP_SORT_* (tuning.h). */
#define HIST_THREADS PP_SORT_HIST_THREADS
#define HIST_ITEMS PP_SORT_HIST_ITEMS

#define RADIX 256
#define FULL_MASK 0xffffffffu
#define SMALL_TILE ((size_t)PP_SORT_SMALL_THREADS * PP_SORT_SMALL_ITEMS)

static constexpr int onesweep_min_blocks(int key_bytes, int value_bytes) {
  return key_bytes != 4 ? PP_SORT_MIN_BLOCKS
         : value_bytes == 0 ? PP_SORT_MIN_BLOCKS_K32
         : value_bytes == 4 ? PP_SORT_MIN_BLOCKS_K32_V32
                            : PP_SORT_MIN_BLOCKS;
}

static constexpr int onesweep_items(int key_bytes, int value_bytes) {
  return key_bytes == 1   ? (value_bytes == 0 ? 16 : value_bytes == 4 ? 12 : 10)
         : key_bytes == 4 ? (value_bytes == 0   ? PP_SORT_ITEMS_K32
                             : value_bytes == 4 ? PP_SORT_ITEMS_K32_V32
                                                : PP_SORT_ITEMS_WIDE)
                          : (value_bytes == 0 ? PP_SORT_ITEMS_K64 : value_bytes == 4 ? PP_SORT_ITEMS_WIDE : 10);
}

/* MODE_PACK_*: packed pairs (see pack_pass) */
enum pass_mode {
  MODE_SKIP = 0,
  MODE_SORT = 1,
  MODE_COPY = 2,
  MODE_PACK_FIRST = 3, /* keys and values in, packed out */
  MODE_PACK_MID = 4,   /* packed in, packed out */
  MODE_PACK_LAST = 5   /* packed in, keys and values out */
};
enum pass_images { IMAGES_IN = 1, IMAGES_OUT = 2 }; /* the pass reads / writes images */

/* Packed pairs. With 4-byte keys and 4-byte values, the sort passes between the first and
 * the last keep each pair as one 8-byte word, the key's image in the low half and the
 * value in the high half: such a pass loads and stores every pair once, the runs of equal
 * digits it writes are twice as long as in either of two arrays, and the values need no
 * phase of their own. The first pass reads the caller's keys and values and writes words,
 * the last reads words and writes the caller's arrays; the words ping-pong between two
 * scratch buffers, so any number (>= 2) of sort passes ends in the caller's arrays. The
 * plan (made on the device) packs where no key is -0.0 or NaN (images give the keys back)
 * and at least two passes sort. Each kind of pass is an onesweep_kernel of its own (in one
 * kernel, ptxas spilt registers): */
enum pack_pass {
  PK_NONE = 0,  /* the unpacked passes, MODE_SORT and MODE_COPY */
  PK_FIRST = 1, /* MODE_PACK_FIRST: keys and values in, words out */
  PK_MID = 2,   /* MODE_PACK_MID: words in, words out */
  PK_LAST = 3   /* MODE_PACK_LAST: words in, keys and values out */
};

/* What the histogram kernel leaves for the passes; zeroed by a memset before it runs. */
struct sort_header {
  unsigned long long offsets[8][RADIX]; /* digit counts, then each digit's first position */
  unsigned tile_counter[8];             /* per pass: next tile to hand out */
  unsigned mode[8];                     /* per pass: pass_mode */
  unsigned src[8];                      /* per pass: 0 reads buffer 0, 1 reads buffer 1 */
  unsigned sbuf[8];                     /* per sort pass: which status buffer */
  unsigned images[8];                   /* per sort pass: IMAGES_IN | IMAGES_OUT */
  unsigned special;                     /* some key is -0.0 or NaN: images never stored */
  unsigned done;                        /* histogram blocks finished */
};

/* ---- warp and tile ranking ------------------------------------------------------------- */

/* IMG: the key is already an image (a pass between the first and the last). For 4-byte
 * keys one byte permute (PRMT) picks the digit, where a shift and a mask take two. */
template <bool IMG, typename U>
__device__ __forceinline__ unsigned radix_digit(U key, pp_key_order<U> order, int shift) {
  const U img = IMG ? key : pp_key_image(key, order);
  if constexpr (sizeof(U) == 4)
    return __byte_perm((unsigned)img, 0u, 0x4440u | (unsigned)(shift >> 3)); /* byte shift/8, zero above */
  else
    return (unsigned)(img >> shift) & (RADIX - 1);
}

/* The lanes of the warp holding the same digit. MATCH 2: masks is the warp's table of 256
 * words, zero on entry; the caller clears the word after every peer has read it. */
template <int MATCH>
__device__ __forceinline__ unsigned warp_peers(unsigned d, unsigned *masks) {
  if constexpr (MATCH == 1) {
    (void)masks;
    return __match_any_sync(FULL_MASK, d);
  } else if constexpr (MATCH == 2) {
    atomicOr(&masks[d], 1u << (threadIdx.x % PP_WARP));
    __syncwarp();
    return masks[d];
  }
  (void)masks;
  /* per bit: the lanes whose bit equals this lane's (the ballot, inverted where the bit is
     clear); written in PTX so that each bit costs four instructions and no extra registers */
  unsigned peers = FULL_MASK;
#pragma unroll
  for (int b = 0; b < 8; b++) {
    unsigned agree;
    asm("{\n\t.reg .pred p;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
        "@!p not.b32 %0, %0;\n\t}"
        : "=r"(agree)
        : "r"(d), "r"(1u << b));
    peers &= agree;
  }
  return peers;
}

/* Items are warp-striped: item i of lane l in warp w is key w*32*ITEMS + i*32 + l of the
 * tile, so index order is (warp, item, lane) and each load is one coalesced warp access. */
template <int ITEMS>
__device__ __forceinline__ unsigned tile_index(int warp, int i, int lane) {
  return (unsigned)(warp * PP_WARP * ITEMS + i * PP_WARP + lane);
}

/* Ranks the thread's items among the keys of its warp with the same digit, in index order,
 * starting from the warp's counters (its row of whist): lanes with equal digits find each
 * other (warp_peers), all read the warp's counter for the digit, the lowest of them adds
 * their number to it, and each adds the number of peers in lower lanes. Item i's update
 * precedes item i+1's read, so the ranks follow index order (stability). digit_of(i) is
 * item i's digit. With PAD, items at index >= valid are given digit 255 (they have the
 * highest indices, so they rank after every real key); without, their keys must be such.
 * packed[i] = (rank << 8) | digit (rank < 2^24). MATCH: see PP_SORT_MATCH; with 2, whist
 * has 2 * WARPS rows and rows WARPS.. (zero on entry, zero on return) are the warps'
 * match tables. */
template <bool PAD, int MATCH, int WARPS, int ITEMS, typename DigitOf>
__device__ __forceinline__ void rank_warp_items(DigitOf digit_of, unsigned valid, unsigned (&packed)[ITEMS],
                                                unsigned (*whist)[RADIX]) {
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  const unsigned below = (1u << lane) - 1u;
  /* item i is padding when i * 32 >= left: a compare with an immediate, nothing per item
     that ptxas could hoist out of the tile loop and keep (or spill) */
  const int left = (int)valid - (int)tile_index<ITEMS>(warp, 0, lane);
  unsigned *counters = whist[warp];
  unsigned *masks = MATCH == 2 ? whist[WARPS + warp] : nullptr;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    /* a select, not a branch around the digit: padding is only ever in the last tile */
    const unsigned d = !PAD || i * PP_WARP < left ? digit_of(i) : RADIX - 1;
    const unsigned peers = warp_peers<MATCH>(d, masks);
    /* a plain read and a write by the lowest peer, not an atomic add by it and a shuffle
       of the result (0.7% slower for u32 keys at 2^28 on the H100, 4% for u32 pairs). The
       warp syncs order the read before the write and the write before the next item's
       read; only this warp touches its counters. */
    const unsigned old = counters[d];
    __syncwarp();
    if ((peers & below) == 0) {
      counters[d] = old + (unsigned)__popc(peers);
      if (MATCH == 2) masks[d] = 0; /* every peer has read it (the sync above) */
    }
    __syncwarp();
    packed[i] = ((old + (unsigned)__popc(peers & below)) << 8) | d;
  }
}

/* For thread d < 256: turns column d of whist (per-warp counts) into the count of digit d
 * in the warps before each one, and returns the tile's count of d. Call after a barrier. */
template <int THREADS>
__device__ __forceinline__ unsigned warp_counts_to_bases(unsigned (*whist)[RADIX]) {
  constexpr int WARPS = THREADS / PP_WARP;
  const int tid = threadIdx.x;
  unsigned count = 0;
  if (tid < RADIX) {
#pragma unroll 4
    for (int w = 0; w < WARPS; w++) {
      const unsigned c = whist[w][tid];
      whist[w][tid] = count;
      count += c;
    }
  }
  return count;
}

/* Part 1 of ranking a tile: each key's rank among its warp's keys with the same digit
 * (rank_warp_items, counters from zero), then, for thread d < 256, whist[w][d] becomes
 * the count of digit d in warps before w, and the return value is the tile's count of
 * digit d. whist must be zero on entry; every thread must call this. */
template <bool PAD, int MATCH, int THREADS, int ITEMS, typename DigitOf>
__device__ __forceinline__ unsigned rank_tile_count(DigitOf digit_of, unsigned valid, unsigned (&packed)[ITEMS],
                                                    unsigned (*whist)[RADIX]) {
  rank_warp_items<PAD, MATCH, THREADS / PP_WARP>(digit_of, valid, packed, whist);
  __syncthreads();
  return warp_counts_to_bases<THREADS>(whist);
}

/* Part 2: the digits' first positions in the tile (scan over digits), added by thread d
 * to column d of whist, which then holds each warp's first position per digit; then each
 * key's position in the tile sorted by digit: packed[i] becomes (position << 8) | digit
 * (one shared load per key). Returns, for thread d < 256, digit d's first position. The
 * caller must __syncthreads() before reusing whist's memory. */
template <int THREADS, int ITEMS>
__device__ __forceinline__ unsigned rank_tile_finish(unsigned count, unsigned (&packed)[ITEMS],
                                                     unsigned (*whist)[RADIX], unsigned *s_scan) {
  constexpr int WARPS = THREADS / PP_WARP;
  const int tid = threadIdx.x, warp = tid / PP_WARP;
  const unsigned first = pp_block_exclusive_sum256<THREADS>(count, s_scan);
  if (tid < RADIX) {
#pragma unroll 4
    for (int w = 0; w < WARPS; w++) whist[w][tid] += first;
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const unsigned d = packed[i] & (RADIX - 1);
    packed[i] = ((whist[warp][d] + (packed[i] >> 8)) << 8) | d;
  }
  return first;
}

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
 * through shared memory in rank order and come back warp-striped. */
template <typename U, typename V, bool HAS_V, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
small_sort_kernel(U *keys, V *values, unsigned n, pp_key_order<U> order) {
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
      key[i] = keys[idx];
      if constexpr (HAS_V) val[i] = values[idx];
      const U img = pp_key_image(key[i], order);
      any |= img;
      all &= img;
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
      if constexpr (HAS_V) values[idx] = val[i];
    }
  }
}

/* ---- upfront histogram of all digit positions ------------------------------------------- */

/* Each block counts tiles of THREADS x ITEMS keys (a grid-stride loop; thread t loads keys
 * t, t + THREADS, ... of a tile: coalesced) into shared histograms, one shared atomic add
 * per key and digit position: no warp votes (H100 shared atomics to one address from
 * several lanes of a warp cost no more than to distinct ones: CUB's histogram, which does
 * just this, is faster on the bench's skewed f32 keys than on uniform u32 keys). The key
 * kind is a template parameter so the image takes no branches. Then each block adds its
 * histograms to the header's 64-bit counts, notes in the header whether it saw a
 * pp_key_special key, and zeroes look-back status buffer 0; the last block to finish turns
 * the counts into first positions and writes the plan. Per-block counts stay below 2^32:
 * the host gives no block more than 2^31 keys. */
template <typename U, int KIND, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
radix_histogram_kernel(const U *__restrict__ keys, size_t n, sort_header *hdr, uint4 *status0,
                       size_t status0_vectors, U flip, unsigned pack) {
  constexpr int P = (int)sizeof(U);
  constexpr size_t TILE = (size_t)THREADS * ITEMS;
  __shared__ unsigned s_hist[P][RADIX];
  __shared__ unsigned long long s_scan[8];
  __shared__ unsigned s_trivial[8];
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
    const unsigned long long first = pp_block_exclusive_sum256<THREADS>(c, s_scan);
    if (tid < RADIX) {
      hdr->offsets[p][tid] = first;
      if (c == (unsigned long long)n) s_trivial[p] = 1;
    }
    __syncthreads(); /* s_scan is reused */
  }
  if (tid == 0) {
    int active = 0;
    for (int p = 0; p < P; p++) active += !s_trivial[p];
    /* images between passes: written by every sort pass but the last, read by every one
       but the first; not when some key's image would not give its bits back */
    const bool images = __ldcg(&hdr->special) == 0;
    if (pack && images && active >= 2) {
      /* packed pairs: sort pass j reads packed buffer (j - 1) % 2 and writes j % 2, the
         first reading and the last writing the caller's arrays; no copy for odd counts */
      unsigned sorts = 0;
      for (int p = 0; p < P; p++) {
        hdr->src[p] = sorts;
        hdr->sbuf[p] = sorts & 1;
        hdr->images[p] = 0;
        if (s_trivial[p]) {
          hdr->mode[p] = MODE_SKIP;
        } else { /* the words hold images */
          const bool last = (int)sorts == active - 1;
          hdr->mode[p] = last ? MODE_PACK_LAST : sorts == 0 ? MODE_PACK_FIRST : MODE_PACK_MID;
          hdr->images[p] = (sorts > 0 ? IMAGES_IN : 0) | (last ? 0 : IMAGES_OUT);
          sorts++;
        }
      }
      return;
    }
    /* with an odd number of sort passes the data would end in scratch: copy once more
       in the place of a skipped pass (P > 1 and odd => one was skipped) */
    bool copy_once = P > 1 && (active & 1);
    unsigned parity = 0, sorts = 0;
    for (int p = 0; p < P; p++) {
      hdr->src[p] = parity;
      hdr->sbuf[p] = sorts & 1;
      hdr->images[p] = 0;
      if (!s_trivial[p]) {
        hdr->mode[p] = MODE_SORT;
        if (images)
          hdr->images[p] = (sorts > 0 ? IMAGES_IN : 0) | ((int)sorts < active - 1 ? IMAGES_OUT : 0);
        parity ^= 1;
        sorts++;
      } else if (copy_once) {
        hdr->mode[p] = MODE_COPY;
        parity ^= 1;
        copy_once = false;
      } else {
        hdr->mode[p] = MODE_SKIP;
      }
    }
  }
}


/* ---- one digit pass ------------------------------------------------------------------------ */

template <typename U, typename V, bool HAS_V, int THREADS>
__device__ __forceinline__ void copy_pass(const U *ks, U *kd, const V *vs, V *vd, size_t n) {
  constexpr int UNROLL = 4;
  const size_t stride = (size_t)gridDim.x * THREADS * UNROLL;
  for (size_t base = (size_t)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < n; base += stride) {
    U k[UNROLL];
    V v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const size_t i = base + (size_t)u * THREADS;
      if (i < n) {
        k[u] = ks[i];
        if constexpr (HAS_V) v[u] = vs[i];
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const size_t i = base + (size_t)u * THREADS;
      if (i < n) {
        kd[i] = k[u];
        if constexpr (HAS_V) vd[i] = v[u];
      }
    }
  }
}

/* The sum of digit d's counts over tiles [0, tile): column points at tile 0's word for d.
 * The predecessor is read first: in the steady state it has published its inclusive
 * prefix and one load ends the walk. Otherwise (e.g. a whole grid of tiles started
 * together, as for n ~ 2^20) the inclusive prefixes spread one tile per walk step, so
 * the walk reads BATCH earlier tiles at a time (independent loads in flight together)
 * and only then waits, in order, for those not yet published. Words read as
 * AGGREGATE may have become INCLUSIVE since; adding the tile's own count and going on is
 * still exact. */
template <int BATCH, typename S>
__device__ __forceinline__ S look_back(const S *column, unsigned tile) {
  typedef pp_status_word<S> SW;
  constexpr S INC = SW::INCLUSIVE >> SW::SHIFT;
  const S *p = column + (size_t)(tile - 1) * RADIX;
  S w;
  do {
    w = pp_ld_relaxed(p);
  } while ((w >> SW::SHIFT) == 0);
  S before = w & SW::VALUE;
  if ((w >> SW::SHIFT) == INC) return before;
  long long j = (long long)tile - 2; /* next tile to add; tile 0 is INCLUSIVE, so j >= 0 */
  for (;;) {
    S b[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; u++)
      b[u] = j - u >= 0 ? pp_ld_relaxed(column + (size_t)(j - u) * RADIX) : SW::INCLUSIVE;
#pragma unroll
    for (int u = 0; u < BATCH; u++) {
      while ((b[u] >> SW::SHIFT) == 0) b[u] = pp_ld_relaxed(column + (size_t)(j - u) * RADIX);
      before += b[u] & SW::VALUE;
      if ((b[u] >> SW::SHIFT) == INC) return before;
    }
    j -= BATCH;
  }
}

/* Each key to its slot of the sorted tile in shared memory, as the scatter reads it: as it
 * is, or (TO_IMAGE: a first pass whose ranking read the stored bits) as its image. */
template <bool TO_IMAGE, typename U, int ITEMS>
__device__ __forceinline__ void keys_to_shared(const U (&key)[ITEMS], const unsigned (&rank)[ITEMS],
                                               U *xk, pp_key_order<U> order) {
#pragma unroll
  for (int i = 0; i < ITEMS; i++) xk[rank[i] >> 8] = TO_IMAGE ? pp_key_image_plain(key[i], order) : key[i];
}

/* What the keys in the sorted tile (shared memory) are, and what goes out. */
enum scatter_form {
  SCATTER_RAW = 0,   /* stored bits in, stored bits out: the digit takes the full image */
  SCATTER_IMAGE = 1, /* images in, images out (a pass the next one reads images from) */
  SCATTER_LAST = 2   /* images in, stored bits out (the last of several passes) */
};

/* Where slot j = k * THREADS + tid of the sorted tile goes: dst[base + j], base + j being
 * the exact output position. dst_t is dst + tid (out_base) and base is taken as signed (it
 * may be below zero, base + j never is), so the address is one wide multiply-add and
 * k * THREADS an immediate offset of the store: no per-slot index (tid + k * THREADS) for
 * ptxas to hoist out of the tile loop and spill. */
template <typename T>
__device__ __forceinline__ T *out_base(T *dst) {
  T *p = dst + threadIdx.x;
  asm("" : "+l"(p)); /* opaque: ptxas would split it into dst + (base + tid) * size again */
  return p;
}
template <int THREADS, typename T, typename S>
__device__ __forceinline__ T *slot_out(T *dst_t, S base, int k) {
  typedef typename std::make_signed<S>::type SS;
  return (dst_t + (long long)(SS)base) + k * THREADS;
}

/* Writes slot j = k * THREADS + tid of the sorted tile (j < valid) to its place in the
 * output (slot_out). The digit comes from the key in shared memory (one byte permute for
 * images), so no digit per slot is kept. With values, each rank[k]'s low byte (its own
 * digit, no longer needed) becomes slot j's digit, for the values' scatter. */
template <int FORM, bool HAS_V, typename U, typename S, int THREADS, int ITEMS>
__device__ __forceinline__ void scatter_keys(const U *xk, const S *s_base, U *kd, unsigned valid,
                                             int shift, pp_key_order<U> order,
                                             unsigned (&rank)[ITEMS]) {
  const int tid = threadIdx.x, left = (int)valid - tid;
  U *kd_t = out_base(kd);
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const U key = xk[k * THREADS + tid];
    const unsigned d = radix_digit<FORM != SCATTER_RAW>(key, order, shift);
    /* a plain `if`: a predicated store (inline PTX) that let ptxas hoist every item's loads
       was 4-5% slower for every key type on the H100 */
    if (k * THREADS < left)
      *slot_out<THREADS>(kd_t, s_base[d], k) = FORM == SCATTER_LAST ? pp_key_from_image(key, order) : key;
    if (HAS_V) rank[k] = (rank[k] & ~(unsigned)(RADIX - 1)) | d;
  }
}

/* Packed pairs (see pack_pass): slot j's key image and value, from the sorted tiles of
 * keys and of values, go out as one 8-byte word (key low, value high). */
template <int THREADS, int ITEMS, typename S>
__device__ __forceinline__ void scatter_packed(const uint32_t *xk, const uint32_t *xv, const S *s_base, uint64_t *dst,
                                               unsigned valid, int shift) {
  const int tid = threadIdx.x, left = (int)valid - tid;
  uint64_t *d_t = out_base(dst);
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const uint32_t key = xk[k * THREADS + tid];
    const unsigned d = radix_digit<true>(key, pp_key_order<uint32_t>{PP_KEY_UNSIGNED, 0}, shift);
    if (k * THREADS < left) *slot_out<THREADS>(d_t, s_base[d], k) = (uint64_t)xv[k * THREADS + tid] << 32 | key;
  }
}

/* Item i of the thread (warp-striped, tile_index) from p = the tile's first element plus
 * idx0; items at index >= valid are fill and not read. One base pointer and constant
 * offsets: no 64-bit address per item, and compares with immediates. */
template <typename T, int ITEMS>
__device__ __forceinline__ void load_items(const T *p, unsigned idx0, unsigned valid, T (&x)[ITEMS], T fill) {
  const int left = (int)valid - (int)idx0;
#pragma unroll
  for (int i = 0; i < ITEMS; i++) x[i] = i * PP_WARP < left ? p[i * PP_WARP] : fill;
}

/* The match of onesweep_kernel's ranking (PP_SORT_MATCH): shared ORs for keys alone (H100,
 * 2^28: u64 3% faster than ballots; u32 3.6% faster, sorted u32 10%, f32 even), ballots
 * for pairs (ORs 2.6% slower). */
template <typename U, bool HAS_V>
__host__ __device__ static constexpr int onesweep_match() {
  return sizeof(U) == 8 && !HAS_V ? PP_SORT_MATCH_K64 : sizeof(U) == 4 && !HAS_V ? PP_SORT_MATCH_K32 : PP_SORT_MATCH;
}

/* Bytes of the tile's keys or values, whichever are wider. */
template <typename U, typename V, bool HAS_V, int THREADS, int ITEMS>
__host__ __device__ static constexpr size_t onesweep_tile_bytes() {
  return (size_t)THREADS * ITEMS * (HAS_V && sizeof(V) > sizeof(U) ? sizeof(V) : sizeof(U));
}

/* Bytes of onesweep_kernel's exchange buffer: the sorted tile's keys or values, and while
 * ranking the per-warp counters (with shared-OR matching also the match tables). */
template <typename U, typename V, bool HAS_V, int THREADS, int ITEMS>
__host__ __device__ static constexpr size_t onesweep_buf_bytes() {
  constexpr size_t EXCH = onesweep_tile_bytes<U, V, HAS_V, THREADS, ITEMS>();
  constexpr size_t HIST =
      (size_t)(THREADS / PP_WARP) * RADIX * sizeof(unsigned) * (onesweep_match<U, HAS_V>() == 2 ? 2 : 1);
  return EXCH > HIST ? EXCH : HIST;
}

/* Dynamic shared memory of onesweep_kernel: none while the exchange buffer fits the 48 KB
 * of static shared memory with the rest (static was 1.5-3% faster on the H100 at 2^28 for
 * the same tile), else the buffer's bytes. */
template <typename U, typename V, bool HAS_V, typename S, int THREADS, int ITEMS>
__host__ __device__ static constexpr size_t onesweep_dyn_bytes() {
  constexpr size_t rest = RADIX * sizeof(S) + 64; /* s_base, s_scan, s_tile */
  return onesweep_buf_bytes<U, V, HAS_V, THREADS, ITEMS>() + rest <= 48 * 1024
             ? 0
             : onesweep_buf_bytes<U, V, HAS_V, THREADS, ITEMS>();
}

/* One tile of a digit pass (onesweep_kernel's loop body): rank the keys by digit, publish
 * the tile's counts, look back for the counts of the tiles before, scatter. ks/kd, vs/vd:
 * the pass's source and destination; status_next: the status buffer to clear for the pass
 * after (NULL with one pass); digit_first: for thread d < 256, digit d's first output
 * position; images: the plan's IMAGES_IN / IMAGES_OUT for this pass; s_buf: the exchange
 * buffer.
 *
 * Padding (the last tile's items at index >= valid) must rank after every key: where the
 * ranking reads images, padding is loaded as the largest image (digit 255 in every pass,
 * so no compare per item); where it takes the full image of the stored bits, the ranking
 * gives padding digit 255 itself. */
template <int MATCH, typename U, typename V, bool HAS_V, typename S, int THREADS, int ITEMS, int PK>
__device__ __forceinline__ void onesweep_tile(unsigned tile, unsigned valid, const U *ks, U *kd,
                                              const V *vs, V *vd, S *status, S *status_next,
                                              S digit_first, int shift, unsigned images,
                                              pp_key_order<U> order, unsigned char *s_buf,
                                              S *s_base, unsigned *s_scan, V *s_stage, V *s_vsort,
                                              uint64_t *pd) {
  typedef pp_status_word<S> SW;
  constexpr size_t TILE = (size_t)THREADS * ITEMS;
  /* ONE_IMAGE: the first of several passes turns its keys into images once, right after
     the load, for the ranking and the store alike (it was computed twice: ncu gave the
     first pass of f32 keys at 2^28 1.74 ms against 1.45 for the passes between); not with
     an 8-byte key or value beside values, where the longer life of the images made ptxas
     spill (20-44 bytes) */
  constexpr bool ONE_IMAGE = !(HAS_V && (sizeof(U) == 8 || sizeof(V) == 8));
  const int tid = threadIdx.x, lane = tid % PP_WARP, warp = tid / PP_WARP;
  unsigned(*whist)[RADIX] = reinterpret_cast<unsigned(*)[RADIX]>(s_buf);
  U *xk = reinterpret_cast<U *>(s_buf);
  V *xv = reinterpret_cast<V *>(s_buf);
  const size_t start = (size_t)tile * TILE;
  const unsigned idx0 = tile_index<ITEMS>(warp, 0, lane);

  /* packed pairs (PK): a packed input's values, or the first pass's, wait in the stage (in
     tile order) from the load on; a packed output takes them to a sorted tile of their own
     (s_vsort) beside the keys' and stores each slot's key and value as one word */
  constexpr bool PK_IN = PK == PK_MID || PK == PK_LAST, PK_OUT = PK == PK_FIRST || PK == PK_MID;
  U key[ITEMS];
  unsigned rank[ITEMS];
  const bool first_pass = ONE_IMAGE && images == IMAGES_OUT; /* turns stored bits into images */
  const bool img = ONE_IMAGE ? images != 0 : (images & IMAGES_IN) != 0;
  /* padding: the largest image, or (first pass) the stored bits whose image that is */
  if constexpr (PK_IN) {
    /* each word's key to a register, its value to the stage (the last pass loading its
       values from the words a second time, after the key scatter, took 2.77 ms against
       2.41 at 2^28 on the H100) */
    uint64_t w[ITEMS];
    load_items(reinterpret_cast<const uint64_t *>(ks) + start + idx0, idx0, valid, w, ~(uint64_t)0);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      key[i] = (U)w[i];
      s_stage[idx0 + i * PP_WARP] = (V)(w[i] >> 32);
    }
  } else {
    load_items(ks + start + idx0, idx0, valid, key,
               (images & IMAGES_IN) ? (U)~(U)0 : first_pass ? pp_key_preimage_of_max(order) : (U)0);
    if constexpr (PK == PK_FIRST) {
      V v[ITEMS];
      load_items(vs + start + idx0, idx0, valid, v, (V)0);
#pragma unroll
      for (int i = 0; i < ITEMS; i++) s_stage[idx0 + i * PP_WARP] = v[i];
    }
  }
  if (first_pass) { /* no key is special: the plain image is exact */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) key[i] = pp_key_image_plain(key[i], order);
  }
  const unsigned count =
      img ? rank_tile_count<false, MATCH, THREADS>([&](int i) { return radix_digit<true>(key[i], order, shift); },
                                                   valid, rank, whist)
          : rank_tile_count<true, MATCH, THREADS>([&](int i) { return radix_digit<false>(key[i], order, shift); },
                                                  valid, rank, whist);

  /* publish this tile's counts as early as possible: later tiles are waiting for them */
  S *slot = status + (size_t)tile * RADIX + tid;
  if (tid < RADIX) {
    pp_st_relaxed(slot, (tile == 0 ? SW::INCLUSIVE : SW::AGGREGATE) | (S)count);
    if (status_next) status_next[(size_t)tile * RADIX + tid] = 0; /* for sort pass j+1 */
  }
  const unsigned first = rank_tile_finish<THREADS, ITEMS>(count, rank, whist, s_scan);
  __syncthreads(); /* whist is read; xk overwrites it */
  /* the sorted tile holds images whenever this pass reads or writes them */
  if (!ONE_IMAGE && images == IMAGES_OUT)
    keys_to_shared<true>(key, rank, xk, order);
  else
    keys_to_shared<false>(key, rank, xk, order);
  if constexpr (PK_OUT) { /* its own items of the stage: no barrier */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) s_vsort[rank[i] >> 8] = s_stage[idx0 + i * PP_WARP];
  }
  V val[HAS_V ? ITEMS : 1];

  /* decoupled look-back, thread d for digit d: add the counts of earlier tiles until one
     that has published its inclusive prefix; tile 0 published its own above */
  if (tid < RADIX) {
    S before = 0;
    if (tile > 0) {
      before = look_back<sizeof(U) == 4 && !HAS_V ? PP_SORT_LOOKBACK_BATCH : PP_SORT_LOOKBACK_BATCH_OTHER>(
          status + tid, tile);
      pp_st_relaxed(slot, SW::INCLUSIVE | (S)(before + count));
    }
    /* modular arithmetic: adding the slot index (>= first for this digit) is exact */
    s_base[tid] = (S)(digit_first + before - (S)first);
  }
  __syncthreads();
  if constexpr (PK_OUT) {
    scatter_packed<THREADS, ITEMS>(reinterpret_cast<const uint32_t *>(xk), reinterpret_cast<const uint32_t *>(s_vsort),
                                   s_base, pd, valid, shift);
    return;
  }

  /* the keys go out in the form the next pass reads: images or the stored bits */
  if (images == 0)
    scatter_keys<SCATTER_RAW, HAS_V, U, S, THREADS, ITEMS>(xk, s_base, kd, valid, shift, order, rank);
  else if (images == IMAGES_IN)
    scatter_keys<SCATTER_LAST, HAS_V, U, S, THREADS, ITEMS>(xk, s_base, kd, valid, shift, order, rank);
  else
    scatter_keys<SCATTER_IMAGE, HAS_V, U, S, THREADS, ITEMS>(xk, s_base, kd, valid, shift, order, rank);
  if constexpr (HAS_V) {
    if constexpr (PK == PK_LAST) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) val[i] = s_stage[idx0 + i * PP_WARP]; /* its own items: no barrier */
    } else { /* after the key scatter (CUB's order): fewer registers live in the look-back */
      load_items(vs + start + idx0, idx0, valid, val, (V)0);
    }
    __syncthreads(); /* the keys are read; xv overwrites them */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) xv[rank[i] >> 8] = val[i];
    __syncthreads();
    V *vd_t = out_base(vd);
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
      if (k * THREADS < (int)valid - tid) *slot_out<THREADS>(vd_t, s_base[rank[k] & (RADIX - 1)], k) = xv[k * THREADS + tid];
  }
}

/* One digit position. buffers[0] holds the keys when the sort starts; the plan says
 * which buffer this pass reads and which status buffer it uses. status1 is NULL when the
 * sort has a single pass. KIND: PP_KEY_FLOAT, or PP_KEY_UNSIGNED for every integer (the
 * host folds a signed key's sign flip into flip), so the images take no branches. */
template <typename U, int KIND, typename V, bool HAS_V, typename S, int THREADS, int ITEMS, int PK = PK_NONE>
__global__ void __launch_bounds__(THREADS, onesweep_min_blocks((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0))
onesweep_kernel(U *keys0, U *keys1, V *vals0, V *vals1, size_t n, unsigned tiles, int pass,
                sort_header *hdr, S *status0, S *status1, U flip, uint64_t *packed0, uint64_t *packed1) {
  /* PK: which passes of packed pairs this kernel makes (pack_pass) */
  static_assert(PK == PK_NONE || (sizeof(U) == 4 && HAS_V && sizeof(V) == 4), "4-byte keys and values");
  constexpr int WARPS = THREADS / PP_WARP;
  constexpr size_t TILE = (size_t)THREADS * ITEMS;
  constexpr int MATCH = onesweep_match<U, HAS_V>();
  constexpr size_t BUF = onesweep_buf_bytes<U, V, HAS_V, THREADS, ITEMS>();
  constexpr size_t DYN = onesweep_dyn_bytes<U, V, HAS_V, S, THREADS, ITEMS>();
  static_assert(THREADS >= RADIX && THREADS % PP_WARP == 0, "one thread per digit");
  /* the exchange buffer: static memory, or dynamic where it passes 48 KB */
  __shared__ __align__(16) unsigned char s_static[DYN ? 16 : BUF];
  extern __shared__ __align__(16) unsigned char s_dyn[];
  unsigned char *const s_buf = DYN ? s_dyn : s_static;
  __shared__ S s_base[RADIX]; /* global position of tile slot 0 per digit */
  __shared__ unsigned s_scan[8];
  __shared__ unsigned s_tile;
  unsigned(*whist)[RADIX] = reinterpret_cast<unsigned(*)[RADIX]>(s_buf);

  const unsigned mode = hdr->mode[pass];
  if (PK == PK_NONE ? mode == MODE_SKIP || mode >= MODE_PACK_FIRST : mode != (unsigned)(MODE_PACK_FIRST + PK - 1))
    return;
  const unsigned src = hdr->src[pass];
  const U *ks = src ? keys1 : keys0;
  U *kd = src ? keys0 : keys1;
  const V *vs = src ? vals1 : vals0;
  V *vd = src ? vals0 : vals1;
  /* packed: sort pass src reads the words of buffer (src - 1) % 2 and writes buffer src % 2 */
  uint64_t *pd = src & 1 ? packed1 : packed0;
  if (PK != PK_NONE) {
    ks = PK == PK_FIRST ? keys0 : reinterpret_cast<const U *>(src & 1 ? packed0 : packed1);
    vs = vals0;
    kd = keys0;
    vd = vals0;
  }
  if (mode == MODE_COPY) {
    copy_pass<U, V, HAS_V, THREADS>(ks, kd, vs, vd, n);
    return;
  }
  S *status = hdr->sbuf[pass] ? status1 : status0;
  S *status_next = status1 == nullptr ? nullptr : hdr->sbuf[pass] ? status0 : status1;
  const int tid = threadIdx.x;
  const int shift = pass * 8;
  const S digit_first = tid < RADIX ? (S)hdr->offsets[pass][tid] : (S)0;
  const unsigned images = hdr->images[pass];
  const pp_key_order<U> order = {KIND, flip};

  for (;;) {
    __syncthreads(); /* the previous tile is done with shared memory */
    if (tid == 0) s_tile = atomicAdd(&hdr->tile_counter[pass], 1u);
    for (int i = tid; i < (MATCH == 2 ? 2 : 1) * WARPS * RADIX; i += THREADS) (&whist[0][0])[i] = 0;
    __syncthreads();
    const unsigned tile = s_tile;
    if (tile >= tiles) break;
    const size_t left = n - (size_t)tile * TILE;
    const unsigned valid = left < TILE ? (unsigned)left : (unsigned)TILE;
    V *const stage = reinterpret_cast<V *>(s_dyn + DYN); /* packed pairs: see onesweep_tile */
    onesweep_tile<MATCH, U, V, HAS_V, S, THREADS, ITEMS, PK>(tile, valid, ks, kd, vs, vd, status, status_next,
                                                             digit_first, shift, images, order, s_buf, s_base, s_scan,
                                                             stage, stage + TILE, pd);
  }
}

/* ---- host side ------------------------------------------------------------------------------ */

template <typename U, typename V, bool HAS_V>
static pp_status sort_small(pp_context *ctx, U *keys, V *values, size_t n, pp_key_order<U> order) {
  small_sort_kernel<U, V, HAS_V, PP_SORT_SMALL_THREADS, PP_SORT_SMALL_ITEMS>
      <<<1, PP_SORT_SMALL_THREADS, 0, pp_cuda(ctx)->stream>>>(keys, values, (unsigned)n, order);
  PP_CUDA_LAUNCHED(ctx, "pp_sort");
  return PP_OK;
}

/* The histogram kernel of one key kind: a grid of up to one wave of tiles, at least one
 * block per 2^31 keys. */
template <typename U, int KIND>
static cudaError_t launch_histogram_kind(pp_cuda_state *st, const U *keys, size_t n, sort_header *hdr,
                                         void *status0, size_t status_bytes, U flip, unsigned pack) {
  auto hist = radix_histogram_kernel<U, KIND, HIST_THREADS, HIST_ITEMS>;
  static pp_fit_cache fit;
  const size_t wave = (size_t)st->sm_count * (size_t)pp_fit_blocks(st, &fit, hist, HIST_THREADS, 0, 1);
  const size_t tile = (size_t)HIST_THREADS * HIST_ITEMS;
  size_t g = (n + tile - 1) / tile;
  g = g < wave ? g : wave;
  const size_t g_min = (n >> 31) + 1; /* at most 2^31 keys per block: 32-bit shared counts */
  g = g > g_min ? g : g_min;
  hist<<<(unsigned)g, HIST_THREADS, 0, st->stream>>>(keys, n, hdr, (uint4 *)status0,
                                                     status_bytes / sizeof(uint4), flip, pack);
  return cudaGetLastError();
}

template <typename U>
static cudaError_t launch_histogram(pp_cuda_state *st, const U *keys, size_t n, sort_header *hdr,
                                    void *status0, size_t status_bytes, pp_key_order<U> order,
                                    unsigned pack = 0) {
  if constexpr (sizeof(U) >= 4) {
    if (order.kind == PP_KEY_SIGNED)
      return launch_histogram_kind<U, PP_KEY_SIGNED>(st, keys, n, hdr, status0, status_bytes, order.flip, pack);
    if (order.kind == PP_KEY_FLOAT)
      return launch_histogram_kind<U, PP_KEY_FLOAT>(st, keys, n, hdr, status0, status_bytes, order.flip, pack);
  }
  return launch_histogram_kind<U, PP_KEY_UNSIGNED>(st, keys, n, hdr, status0, status_bytes, order.flip, pack);
}

static size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* a + b, false on overflow */
static bool add_size(size_t *acc, size_t b) {
  if (*acc > SIZE_MAX - b) return false;
  *acc += b;
  return true;
}

template <typename U, int KIND, typename V, bool HAS_V, typename S, int ITEMS, int PK>
static pp_status launch_passes_kind(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, size_t n,
                                    unsigned tiles, sort_header *hdr, void *status0, void *status1,
                                    U flip, int pass_begin, int pass_end, uint64_t *pk0, uint64_t *pk1) {
  pp_cuda_state *st = pp_cuda(ctx);
  auto kernel = onesweep_kernel<U, KIND, V, HAS_V, S, PP_SORT_THREADS, ITEMS, PK>;
  /* packed pairs: the stage, and for a packed output the values' sorted tile */
  constexpr size_t dyn = onesweep_dyn_bytes<U, V, HAS_V, S, PP_SORT_THREADS, ITEMS>() +
                         (PK == PK_NONE ? 0 : PK == PK_LAST ? 1 : 2) *
                             onesweep_tile_bytes<U, V, HAS_V, PP_SORT_THREADS, ITEMS>();
  static pp_fit_cache fit;
  if (dyn > 0) PP_CUDA_TRY(ctx, pp_fit_smem(st, &fit, kernel, dyn), "pp_sort");
  const size_t wave = (size_t)st->sm_count * (size_t)pp_fit_blocks(st, &fit, kernel, PP_SORT_THREADS, dyn, 1);
  const unsigned grid = (unsigned)(tiles < wave ? tiles : wave);
  for (int pass = pass_begin; pass < pass_end; pass++) {
    kernel<<<grid, PP_SORT_THREADS, dyn, st->stream>>>(k0, k1, v0, v1, n, tiles, pass, hdr,
                                                       (S *)status0, (S *)status1, flip, pk0, pk1);
    PP_CUDA_LAUNCHED(ctx, "pp_sort");
  }
  return PP_OK;
}

/* The pass kernels are compiled per key kind so that images take no branches: floats
 * have their own; a signed key's image is its bits with the sign flipped, so it runs the
 * unsigned kernel with the sign folded into flip. */
template <typename U, typename V, bool HAS_V, typename S, int ITEMS, int PK = PK_NONE>
static pp_status launch_passes(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, size_t n,
                               unsigned tiles, sort_header *hdr, void *status0, void *status1,
                               pp_key_order<U> order, int pass_begin, int pass_end,
                               uint64_t *pk0 = nullptr, uint64_t *pk1 = nullptr) {
  U flip = order.flip;
  if constexpr (sizeof(U) >= 4) {
    if (order.kind == PP_KEY_FLOAT)
      return launch_passes_kind<U, PP_KEY_FLOAT, V, HAS_V, S, ITEMS, PK>(ctx, k0, k1, v0, v1, n, tiles, hdr,
                                                                    status0, status1, flip, pass_begin,
                                                                    pass_end, pk0, pk1);
    if (order.kind == PP_KEY_SIGNED) flip ^= (U)1 << (sizeof(U) * 8 - 1);
  }
  return launch_passes_kind<U, PP_KEY_UNSIGNED, V, HAS_V, S, ITEMS, PK>(ctx, k0, k1, v0, v1, n, tiles, hdr,
                                                                   status0, status1, flip, pass_begin,
                                                                   pass_end, pk0, pk1);
}

/* Every digit position gets its onesweep_kernel; with packed pairs also those of the
 * packed passes that can sort at that position (a first one at any but the last, a middle
 * one at any but the first and the last, a last one at any but the first). The plan, made
 * on the device, gives each position to one of them; the others return at once. */
template <typename U, typename V, bool HAS_V, typename S, int ITEMS>
static pp_status launch_all(pp_context *ctx, U *k0, U *k1, V *v0, V *v1, uint64_t *pk0, uint64_t *pk1, size_t n,
                            unsigned tiles, sort_header *hdr, void *status0, void *status1, pp_key_order<U> order) {
  constexpr int P = (int)sizeof(U);
  if constexpr (P == 4 && HAS_V && sizeof(V) == 4) {
    if (pk0) {
      for (int pass = 0; pass < P; pass++) {
        pp_status s = launch_passes<U, V, HAS_V, S, ITEMS>(ctx, k0, k1, v0, v1, n, tiles, hdr, status0, status1,
                                                           order, pass, pass + 1);
        if (s == PP_OK && pass < P - 1)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_FIRST>(ctx, k0, k1, v0, v1, n, tiles, hdr, status0, status1,
                                                             order, pass, pass + 1, pk0, pk1);
        if (s == PP_OK && pass > 0 && pass < P - 1)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_MID>(ctx, k0, k1, v0, v1, n, tiles, hdr, status0, status1,
                                                           order, pass, pass + 1, pk0, pk1);
        if (s == PP_OK && pass > 0)
          s = launch_passes<U, V, HAS_V, S, ITEMS, PK_LAST>(ctx, k0, k1, v0, v1, n, tiles, hdr, status0, status1,
                                                            order, pass, pass + 1, pk0, pk1);
        if (s != PP_OK) return s;
      }
      return PP_OK;
    }
  }
  (void)pk0;
  (void)pk1;
  return launch_passes<U, V, HAS_V, S, ITEMS>(ctx, k0, k1, v0, v1, n, tiles, hdr, status0, status1, order, 0, P);
}

template <typename U, typename V, bool HAS_V, int ITEMS>
static pp_status sort_onesweep_items(pp_context *ctx, U *keys, V *values, size_t n,
                                     pp_key_order<U> order) {
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

  size_t off_status = align_up(sizeof(sort_header)), total = off_status;
  bool ok = add_size(&total, (size_t)status_buffers * status_bytes);
  total = align_up(total);
  const size_t off_keys = total;
  ok = ok && add_size(&total, n * sizeof(U)); /* n * sizeof(U) was checked by the caller */
  total = align_up(total);
  const size_t off_vals = total;
  if (HAS_V) ok = ok && n <= SIZE_MAX / sizeof(V) && add_size(&total, n * sizeof(V));
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
  U *k0 = keys, *k1 = (U *)(scratch + off_keys);
  V *v0 = values, *v1 = HAS_V ? (V *)(scratch + off_vals) : NULL;
  uint64_t *pk0 = packed ? (uint64_t *)(scratch + off_keys) : NULL;
  uint64_t *pk1 = packed ? (uint64_t *)(scratch + off_pack1) : NULL;

  cudaError_t e = cudaMemsetAsync(hdr, 0, sizeof(sort_header), st->stream);
  if (e == cudaSuccess && P == 1) { /* one pass: it reads the copy and writes the caller's */
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
    e = launch_histogram<U>(st, keys, n, hdr, status0, status_bytes, order, packed ? 1u : 0u);
    if (e != cudaSuccess) s = pp_cuda_fail(ctx, e, "pp_sort", __FILE__, __LINE__);
  }
  if (s == PP_OK) {
    if (wide)
      s = launch_all<U, V, HAS_V, uint64_t, ITEMS>(ctx, k0, k1, v0, v1, pk0, pk1, n, (unsigned)tiles, hdr,
                                                   status0, status1, order);
    else
      s = launch_all<U, V, HAS_V, uint32_t, ITEMS>(ctx, k0, k1, v0, v1, pk0, pk1, n, (unsigned)tiles, hdr,
                                                   status0, status1, order);
  }
  ctx->ops->temp_free(ctx, scratch);
  return s;
}

/* 4-byte keys alone take larger tiles (PP_SORT_ITEMS_K32_LARGE) from PP_SORT_K32_LARGE_FROM
 * keys on: fewer tiles, so less look-back and per-tile work, where there are many waves. */
template <typename U, typename V, bool HAS_V>
static pp_status sort_onesweep(pp_context *ctx, U *keys, V *values, size_t n,
                               pp_key_order<U> order) {
  constexpr int ITEMS = onesweep_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  if constexpr (sizeof(U) == 4 && !HAS_V && PP_SORT_ITEMS_K32_LARGE != ITEMS) {
    if (n >= (size_t)PP_SORT_K32_LARGE_FROM)
      return sort_onesweep_items<U, V, HAS_V, PP_SORT_ITEMS_K32_LARGE>(ctx, keys, values, n, order);
  }
  return sort_onesweep_items<U, V, HAS_V, ITEMS>(ctx, keys, values, n, order);
}

template <typename U, typename V, bool HAS_V>
static pp_status sort_typed(pp_context *ctx, void *keys, void *values, size_t n,
                            pp_key_order<U> order) {
  if (n <= SMALL_TILE) return sort_small<U, V, HAS_V>(ctx, (U *)keys, (V *)values, n, order);
  return sort_onesweep<U, V, HAS_V>(ctx, (U *)keys, (V *)values, n, order);
}

pp_status pp_cuda_sort(pp_context *ctx, pp_dtype key_t, void *keys, void *values,
                       size_t value_size, size_t n, pp_order order, pp_sort_algo algo) {
  if (n < 2) return PP_OK;
  switch (algo) {
  case PP_SORT_MERGE: return pp_cuda_sort_merge(ctx, key_t, keys, values, value_size, n, order);
  case PP_SORT_SAMPLE: return pp_cuda_sort_sample(ctx, key_t, keys, values, value_size, n, order);
  case PP_SORT_QUICK: return pp_cuda_sort_quick(ctx, key_t, keys, values, value_size, n, order);
  case PP_SORT_AUTO:
  case PP_SORT_RADIX: break;
  }
  PP_TRY(pp_cuda_use_device(ctx, "pp_sort"));
  return pp_by_key_value(ctx, "pp_sort", key_t, values, value_size, [&](auto u, auto v, auto has_v) {
    typedef decltype(u) U;
    typedef decltype(v) V;
    return sort_typed<U, V, decltype(has_v)::value>(ctx, keys, values, n, pp_make_key_order<U>(key_t, order));
  });
}
