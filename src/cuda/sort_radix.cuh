/* sort_radix.cuh — what the radix sort's kernels share (sort.cu says how the sort works):
 * the tile configuration per key and value width, the pass plan the histogram kernel
 * writes for the passes, and the warp and tile ranking of keys by digit. Included by
 * sort.cu and sort_onesweep.cuh only.
 */
#ifndef PP_CUDA_SORT_RADIX_CUH
#define PP_CUDA_SORT_RADIX_CUH

#include "sort.cuh"

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
  unsigned match[8];                    /* per pass, 4-byte keys: the ranking's match (radix_pick_match) */
  unsigned special;                     /* some key is -0.0 or NaN: images never stored */
  unsigned done;                        /* histogram blocks finished */
  unsigned first;                       /* the first sort pass (out of place: reads the input) */
  unsigned last;                        /* the last sort pass (~0u: none; out of place: writes buffer 0) */
};

/* The plan, for P digit positions of which trivial[p] != 0 have one digit value for all
 * keys (such a pass cannot change the order): each pass's mode, source buffer, status
 * buffer and image flags, and the first and the last sort pass (out of place, the last
 * writes buffer 0, the caller's arrays: where an argsort's positions are widened, see
 * onesweep_kernel's VO). pack: the pairs may travel packed
 * (pack_pass); images: no key is special, so images may be stored between passes (written
 * by every sort pass but the last, read by every one but the first); from_input: out of
 * place, the first sort pass reads the input (sort.cu's top comment has the cases). */
template <int P>
__host__ __device__ inline void radix_write_plan(sort_header *hdr, const unsigned *trivial, bool pack, bool images,
                                                 bool from_input) {
  bool sorted[P];
  int active = 0;
  for (int p = 0; p < P; p++) {
    sorted[p] = trivial[p] == 0;
    active += sorted[p];
  }
  if (from_input && active == 0) { /* all keys equal: a pass must still move them */
    sorted[0] = true; /* a stable sort by one digit value copies */
    active = 1;
  }
  int first = -1; /* the first sort pass (out of place, the first pass run: it reads the input) */
  if (pack && images && active >= 2) {
    /* packed pairs: sort pass j reads packed buffer (j - 1) % 2 and writes j % 2, the
       first reading and the last writing the caller's arrays; no copy for odd counts */
    unsigned sorts = 0;
    for (int p = 0; p < P; p++) {
      hdr->src[p] = sorts;
      hdr->sbuf[p] = sorts & 1;
      hdr->images[p] = 0;
      if (!sorted[p]) {
        hdr->mode[p] = MODE_SKIP;
      } else { /* the words hold images */
        const bool last = (int)sorts == active - 1;
        hdr->mode[p] = last ? MODE_PACK_LAST : sorts == 0 ? MODE_PACK_FIRST : MODE_PACK_MID;
        hdr->images[p] = (sorts > 0 ? IMAGES_IN : 0) | (last ? 0 : IMAGES_OUT);
        if (sorts == 0) first = p;
        if (last) hdr->last = (unsigned)p;
        sorts++;
      }
    }
    hdr->first = (unsigned)first;
    return;
  }
  /* The data must end in buffer 0. In place they start there: with an odd number of
     sort passes they would end in scratch, so a skipped pass becomes a copy (P > 1 and
     odd => one was skipped). Out of place the first pass reads the input, a third
     buffer, and may write either: with an odd count it writes buffer 0 (it is planned
     as reading buffer 1), so no copy is ever added. */
  bool copy_once = !from_input && P > 1 && (active & 1);
  unsigned parity = from_input ? (unsigned)active & 1u : 0u, sorts = 0;
  hdr->last = ~0u;
  for (int p = 0; p < P; p++) {
    hdr->src[p] = parity;
    hdr->sbuf[p] = sorts & 1;
    hdr->images[p] = 0;
    if (sorted[p]) {
      hdr->mode[p] = MODE_SORT;
      if (images) hdr->images[p] = (sorts > 0 ? IMAGES_IN : 0) | ((int)sorts < active - 1 ? IMAGES_OUT : 0);
      parity ^= 1;
      sorts++;
      first = first < 0 ? p : first;
      hdr->last = (unsigned)p;
    } else if (copy_once) {
      hdr->mode[p] = MODE_COPY;
      parity ^= 1;
      copy_once = false;
    } else {
      hdr->mode[p] = MODE_SKIP;
    }
  }
  hdr->first = first < 0 ? 0u : (unsigned)first;
}

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

/* The match method of a pass whose digit counts are c (thread d < 256: digit d's count, 0
 * for the other threads) among n keys, for PP_SORT_MATCH_PASS (tuning.h has the rule and
 * its thresholds): the expected number of distinct digits among a warp's 32 keys, taken as
 * independent draws, sum_d 1 - (1 - p_d)^32, and the collision sum 256 sum_d p_d^2, with
 * p_d = c_d / n. Each term is taken in 32-bit fixed point and summed as integers (per
 * warp by shuffles, then the warps' sums in order by every thread), so the choice does
 * not depend on the order of the adds. s_warp: RADIX / 32 pairs, written here; the caller
 * syncs before calling again with the same s_warp. Every thread must call it; every
 * thread gets the method. */
template <int THREADS>
__device__ __forceinline__ unsigned radix_pick_match(unsigned long long c, unsigned long long n,
                                                     unsigned long long (*s_warp)[2]) {
  static_assert(THREADS >= RADIX, "one thread per digit");
  const int tid = threadIdx.x;
  unsigned long long same = 0, seen = 0; /* 2^32 p_d^2 and 2^32 (1 - (1 - p_d)^32) */
  if (tid < RADIX && c) {
    const float p = (float)c / (float)n;
    float miss = 1.0f - p; /* (1 - p)^32: the chance that none of 32 keys has the digit */
#pragma unroll
    for (int i = 0; i < 5; i++) miss *= miss;
    same = (unsigned long long)(p * p * 0x1p32f);
    seen = (unsigned long long)((1.0f - miss) * 0x1p32f);
  }
#pragma unroll
  for (int o = PP_WARP / 2; o > 0; o /= 2) {
    same += __shfl_xor_sync(FULL_MASK, same, o);
    seen += __shfl_xor_sync(FULL_MASK, seen, o);
  }
  if (tid < RADIX && tid % PP_WARP == 0) {
    s_warp[tid / PP_WARP][0] = same;
    s_warp[tid / PP_WARP][1] = seen;
  }
  __syncthreads();
  same = 0;
  seen = 0;
#pragma unroll
  for (int w = 0; w < RADIX / PP_WARP; w++) {
    same += s_warp[w][0];
    seen += s_warp[w][1];
  }
  const float collide = (float)same * 0x1p-24f, distinct = (float)seen * 0x1p-32f;
  return distinct < (float)PP_SORT_MATCH_ANY_BELOW ? 1u : collide < (float)PP_SORT_MATCH_OR_BELOW ? 2u : 0u;
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
       of the result (slower, for pairs most). The
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
 * digit d. whist must be zero on entry; every thread must call this. MATCH
 * PP_SORT_MATCH_PASS: the method is match (0, 1 or 2), the same in the whole block, a
 * branch around the unrolled ranking, which is compiled once per method; with 2 the match
 * tables must be zero too. */
template <bool PAD, int MATCH, int THREADS, int ITEMS, typename DigitOf>
__device__ __forceinline__ unsigned rank_tile_count(DigitOf digit_of, unsigned valid, unsigned (&packed)[ITEMS],
                                                    unsigned (*whist)[RADIX], int match = MATCH) {
  constexpr int WARPS = THREADS / PP_WARP;
  if constexpr (MATCH == PP_SORT_MATCH_PASS) {
    if (match == 1)
      rank_warp_items<PAD, 1, WARPS>(digit_of, valid, packed, whist);
    else if (match == 0)
      rank_warp_items<PAD, 0, WARPS>(digit_of, valid, packed, whist);
    else
      rank_warp_items<PAD, 2, WARPS>(digit_of, valid, packed, whist);
  } else {
    (void)match;
    rank_warp_items<PAD, MATCH, WARPS>(digit_of, valid, packed, whist);
  }
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

#endif /* PP_CUDA_SORT_RADIX_CUH */
