/* sort_block.cuh — what the merge sort (sort_merge.cu) and the sample sort (sort_sample.cu)
 * share: the tile sizes, the key order with the key kind known at compile time, a stable
 * block-level sort of one tile in shared memory, the serial merge step, and the
 * "segmented merge sort" that both end with. Private to those two files.
 *
 * Key order. sort.cuh's: keys are ordered by their unsigned image (API.md's float order,
 * descending inverted); the stored bits are what moves. Every kernel resolves the key kind
 * and the direction once (MSORT_WITH_KIND) and runs a body compiled for them, so a
 * comparison is one to three instructions and never a branch on the kind.
 *
 * Block sort. A block of MSORT_THREADS threads sorts a tile of up to THREADS * ITEMS keys:
 * the tile is staged in shared memory, each thread takes ITEMS consecutive keys and sorts
 * them in registers (a sorting network where equal keys are equal bits, else odd-even
 * transposition: adjacent swaps of strictly greater keys only, so it is stable), then
 * log2(THREADS) rounds merge pairs of neighbouring runs: each thread finds where its ITEMS
 * outputs start by a merge-path binary search in shared memory and merges them serially,
 * ties taken from the left run (stable). ITEMS is odd, so the threads' strided accesses
 * ITEMS keys apart fall in distinct banks. A tile of integer keys, or of 8-byte floats
 * without -0.0 and NaN, is sorted on the keys' images, whose compare is one instruction; a
 * tile of 4-byte floats without them on the keys themselves with one float compare (no
 * image to make or undo); other tiles compare the keys with msort_le. Pairs carry the
 * key's position in the tile (16 bits) instead of the value; values are gathered once at
 * the end.
 *
 * Serial merge step (msort_merge_steps). Branch-free: the step takes the left or the
 * right key with selects and loads the next key of the side it took from one computed
 * address, so the lanes of a warp never diverge and each step is one shared-memory load.
 * That load may read one slot past either run (a value it then ignores): a merge tile has
 * one readable slot after it; the block sort reads b's last key again instead.
 *
 * Segmented merge sort. The arrays hold segments (the whole array for the merge sort, the
 * buckets for the sample sort) to be sorted each on its own. A segment is cut into chunks
 * of the block-sort size C, each sorted by one block (chunk pass); then round r merges
 * neighbouring runs of C << r keys within each segment, one output tile of T = C / 2 per
 * block (half the threads of the block sort: more blocks per SM overlap one block's loads
 * with another's merging): a partition kernel finds where each tile's output starts in
 * its two runs (merge path, binary search in global memory), and the merge kernel loads
 * the tile's slices of both runs into shared memory with coalesced loads, merges as in the
 * block sort, and writes the tile back through shared memory. A segment of L keys needs
 * ceil(log2(ceil(L / C))) rounds; it ping-pongs between the caller's arrays (buffer 0) and
 * scratch (buffer 1), starting in the buffer that makes it end in buffer 0. Segments are
 * listed by rounds, most first, so the tiles still merging in round r are a prefix of the
 * tile list.
 */
#ifndef PP_CUDA_SORT_BLOCK_CUH
#define PP_CUDA_SORT_BLOCK_CUH

#include "sort.cuh"

#include <stdint.h>

#include <type_traits>
#include <utility>

/* ---- tiles ----------------------------------------------------------------------------- */

#define MSORT_THREADS 512       /* block sort (chunk pass) */
#define MSORT_MERGE_THREADS 256 /* merge rounds: a tile is half a chunk */
#define MSORT_CHUNK_LOG2 1      /* log2(chunk / merge tile) */
#define MSORT_MAX_ROUNDS 48 /* tiles < 2^32 need at most 32 */
#define MSORT_FULL_MASK 0xffffffffu

/* Keys per thread of the block sort and of the merge tiles: odd (bank-conflict-free strided
 * accesses). Every merge round moves the whole array through memory, so the chunk is as
 * large as two blocks per SM allow in registers (64 each) and shared memory: 33 x 512 =
 * 16896 four-byte keys make 2^28 keys 15888 chunks, 14 merge rounds (CUB's merge sort,
 * 17 x 256, needs 16); the plain merge sort of 4-byte keys sorts chunks of 33 x 1024 (one
 * block per SM): 7944 chunks, 13 rounds. One- and eight-byte keys take 17 (one-byte keys are staged through
 * registers); pairs keep keys, positions and values: smaller tiles. */
__host__ __device__ constexpr int msort_items(int key_bytes, int value_bytes) {
  return value_bytes == 0 ? (key_bytes == 4 ? 33 : 17) : (key_bytes <= 4 && value_bytes == 4 ? 11 : 9);
}

__host__ __device__ constexpr size_t msort_round16(size_t x) { return (x + 15) & ~(size_t)15; }

/* Shared memory is dynamic (the tiles exceed the 48 KB of static shared memory). CT: the
 * threads of the block sort, MSORT_THREADS (two blocks per SM), or 1024 (one block per SM,
 * chunks of four merge tiles: the plain merge sort of keys, sort_merge.cu). */
template <typename U, typename V, bool HAS_V, int CT = MSORT_THREADS>
struct msort_cfg {
  static constexpr int ITEMS = msort_items((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0);
  static constexpr int CHUNK = CT * ITEMS;                 /* block sort */
  static constexpr int TILE = MSORT_MERGE_THREADS * ITEMS; /* merge output tile */
  static constexpr int CHUNK_LOG2 = CT == 1024 ? 2 : MSORT_CHUNK_LOG2; /* log2(chunk / tile) */
  /* block sort: keys, then the 16-bit positions (pairs); later the values in the same space */
  static constexpr size_t SORT_KEYS_BYTES = msort_round16((size_t)CHUNK * sizeof(U));
  static constexpr size_t SORT_SMEM_KEYS = SORT_KEYS_BYTES + (HAS_V ? (size_t)CHUNK * 2 : 0);
  static constexpr size_t SORT_SMEM_VALS = HAS_V ? (size_t)CHUNK * sizeof(V) : 0;
  static constexpr size_t SORT_SMEM = SORT_SMEM_KEYS > SORT_SMEM_VALS ? SORT_SMEM_KEYS : SORT_SMEM_VALS;
  /* merge: keys and the readable slot, later the values, in the same space */
  static constexpr size_t MERGE_SMEM =
      msort_round16(((size_t)TILE + 1) * (HAS_V && sizeof(V) > sizeof(U) ? sizeof(V) : sizeof(U)));
  static_assert(CT == MSORT_THREADS || CT == 1024, "block sorts of 512 or 1024 threads");
  static_assert(CHUNK == TILE << CHUNK_LOG2, "a chunk is 2^CHUNK_LOG2 merge tiles");
  static_assert(CHUNK <= 65536, "positions in a chunk are 16-bit");
  static_assert(SORT_SMEM <= (CT == 1024 ? 224 : 112) * 1024 && MERGE_SMEM <= 56 * 1024,
                "2 block sorts (1 of 1024 threads), 4 merges per SM");
  static_assert((size_t)TILE * sizeof(U) % 16 == 0 && (!HAS_V || (size_t)TILE * sizeof(V) % 16 == 0),
                "a full tile (and chunk) is whole 16-byte vectors");
};

/* ---- segments ---------------------------------------------------------------------------- */

struct msort_seg {
  unsigned long long start; /* first key of the segment in the arrays */
  unsigned long long len;
  unsigned first_tile;  /* merge tiles of the segments listed before it */
  unsigned first_chunk; /* chunks of the segments listed before it */
  unsigned rounds;      /* merge rounds it needs */
  unsigned copy_only;   /* 1: already in order (all keys equal): its chunks are copied */
};

struct msort_plan {
  unsigned count;                    /* segments */
  unsigned tiles;                    /* merge tiles of all segments */
  unsigned chunks;                   /* chunks of all segments */
  unsigned active[MSORT_MAX_ROUNDS]; /* merge tiles of the segments with rounds > r */
};

/* What the segmented merge sort is asked to do. k0/v0 are the caller's arrays (where the
 * result ends), k1/v1 scratch of the same size; src says where the segments are before
 * the chunk pass (0: k0, 1: k1). plan and segs are device memory, filled by a kernel
 * queued before; splits has room for max_tiles + 1 entries. */
template <typename U, typename V>
struct msort_job {
  U *k0, *k1;
  V *v0, *v1;
  int src;
  const msort_plan *plan;
  const msort_seg *segs;
  unsigned long long *splits;
  size_t max_tiles;   /* upper bound of plan->tiles (and chunks), for grid sizes */
  unsigned rounds;    /* merge rounds launched: upper bound of every segment's rounds */
  pp_key_order<U> order;
};

/* Defined in sort_merge.cu for U in {uint8_t, uint32_t, uint64_t} and V in {uint32_t,
 * uint64_t} (V unused when !HAS_V). */
template <typename U, typename V, bool HAS_V>
pp_status msort_segments(pp_context *ctx, const msort_job<U, V> &job);
/* Sorts n <= msort_cfg<U, V, HAS_V>::CHUNK keys in place with one block. */
template <typename U, typename V, bool HAS_V>
pp_status msort_one_tile(pp_context *ctx, U *keys, V *values, unsigned n, pp_key_order<U> order);
/* Lets kernel use smem bytes of dynamic shared memory, the most shared memory the SM can
 * have (the tiles need it for two blocks per SM). */
pp_status msort_allow_smem(pp_context *ctx, const void *kernel, size_t smem);

/* ---- key order, the key kind known at compile time ----------------------------------------- */

/* KIND below is a pp_key_kind, plus MSORT_DESC for descending order, plus MSORT_NONAN
 * where the float keys compared are known to hold no NaN (msort_le). */
#define MSORT_DESC 4
#define MSORT_NONAN 8

/* Runs the statement(s) given with `constexpr int KIND` set to o's key kind and direction;
 * one-byte keys are unsigned. The branch is uniform: one per kernel, not per compare. */
#define MSORT_WITH_KIND(U, o, ...)                                                             \
  do {                                                                                         \
    const bool msort_desc_ = (o).flip != 0;                                                    \
    if constexpr (sizeof(U) < 4) {                                                             \
      MSORT_KIND_CASE_(PP_KEY_UNSIGNED, __VA_ARGS__);                                          \
    } else if ((o).kind == PP_KEY_FLOAT) {                                                     \
      MSORT_KIND_CASE_(PP_KEY_FLOAT, __VA_ARGS__);                                             \
    } else if ((o).kind == PP_KEY_SIGNED) {                                                    \
      MSORT_KIND_CASE_(PP_KEY_SIGNED, __VA_ARGS__);                                            \
    } else {                                                                                   \
      MSORT_KIND_CASE_(PP_KEY_UNSIGNED, __VA_ARGS__);                                          \
    }                                                                                          \
  } while (0)
#define MSORT_KIND_CASE_(K, ...)                                                               \
  if (msort_desc_) {                                                                           \
    constexpr int KIND = (K) | MSORT_DESC;                                                     \
    __VA_ARGS__;                                                                               \
  } else {                                                                                     \
    constexpr int KIND = (K);                                                                  \
    __VA_ARGS__;                                                                               \
  }

template <typename U>
__device__ __forceinline__ U msort_all_ones() {
  return (U)~(U)0;
}

/* The base kind (pp_key_kind) of KIND, and whether it is descending; one-byte keys are
 * unsigned whatever KIND says. */
template <int KIND, typename U>
__host__ __device__ constexpr int msort_base() {
  return sizeof(U) < 4 ? (int)PP_KEY_UNSIGNED : (KIND & 3);
}
template <int KIND>
__host__ __device__ constexpr bool msort_is_desc() {
  return (KIND & MSORT_DESC) != 0;
}

/* pp_key_image (sort.cuh) for a kind and direction known at compile time (o is not read):
 * the order is built from constants, so the image's branches fold away. */
template <int KIND, typename U>
__device__ __forceinline__ U msort_image(U raw, pp_key_order<U> o) {
  (void)o;
  const pp_key_order<U> k = {msort_base<KIND, U>(), msort_is_desc<KIND>() ? (U)~(U)0 : (U)0};
  return pp_key_image(raw, k);
}

/* msort_image for a key that is not special (msort_special): two instructions for floats,
 * where a negative key has all its bits inverted and a positive one its sign bit set. */
template <int KIND, typename U>
__device__ __forceinline__ U msort_image_plain(U raw, pp_key_order<U> o) {
  if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT) {
    typedef typename std::make_signed<U>::type S;
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    const U k = raw ^ ((U)((S)raw >> (sizeof(U) * 8 - 1)) | SIGN);
    return msort_is_desc<KIND>() ? (U)~k : k;
  } else {
    return msort_image<KIND>(raw, o);
  }
}

/* pp_key_special: -0.0 or NaN, the keys whose image does not give back their bits. */
template <int KIND, typename U>
__device__ __forceinline__ bool msort_special(U raw) {
  if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
    return raw == SIGN || (U)(raw & (U)~SIGN) > EXP;
  } else {
    (void)raw;
    return false;
  }
}

/* pp_key_from_image: the bits of a key that is not special, from its image. */
template <int KIND, typename U>
__device__ __forceinline__ U msort_from_image(U img, pp_key_order<U> o) {
  (void)o;
  constexpr int K = msort_base<KIND, U>();
  U k = msort_is_desc<KIND>() ? (U)~img : img;
  if constexpr (K == PP_KEY_SIGNED) {
    k ^= (U)1 << (sizeof(U) * 8 - 1);
  } else if constexpr (K == PP_KEY_FLOAT) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    k = (k & SIGN) ? (U)(k ^ SIGN) : (U)~k; /* sign set: the key was >= +0.0 */
  }
  return k;
}

/* image(x) <= image(y), on the stored bits, the way the hardware compares: integers as
 * they are (signed or not), floats with a float compare, which already treats -0.0 as
 * +0.0, plus one test that puts NaN last (all NaNs equal), unless KIND says there is no
 * NaN (MSORT_NONAN). Descending swaps the operands. */
template <int KIND, typename U>
__device__ __forceinline__ bool msort_le(U x, U y, pp_key_order<U> o) {
  (void)o;
  constexpr int K = msort_base<KIND, U>();
  const U p = msort_is_desc<KIND>() ? y : x, q = msort_is_desc<KIND>() ? x : y;
  if constexpr (K == PP_KEY_FLOAT) {
    if constexpr (sizeof(U) == 4) {
      const float fp = __uint_as_float((unsigned)p), fq = __uint_as_float((unsigned)q);
      if constexpr ((KIND & MSORT_NONAN) != 0) return fp <= fq;
      return (fp <= fq) | (fq != fq);
    } else {
      const double fp = __longlong_as_double((long long)p), fq = __longlong_as_double((long long)q);
      if constexpr ((KIND & MSORT_NONAN) != 0) return fp <= fq;
      return (fp <= fq) | (fq != fq);
    }
  } else if constexpr (K == PP_KEY_SIGNED) {
    typedef typename std::make_signed<U>::type S;
    return (S)p <= (S)q;
  } else {
    return p <= q;
  }
}

/* A key after which no key comes (msort_le(x, pad) for every x): the padding of a tile
 * sorted on the keys themselves. Floats: NaN ascending (+inf where KIND has MSORT_NONAN),
 * -inf descending (no float has the image that would follow it); integers: the key whose
 * image is all ones. */
template <int KIND, typename U>
__device__ __forceinline__ U msort_pad(pp_key_order<U> o) {
  if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
    return msort_is_desc<KIND>() ? (U)(SIGN | EXP) : (KIND & MSORT_NONAN) != 0 ? EXP : (U)~SIGN;
  } else {
    return msort_from_image<KIND>(msort_all_ones<U>(), o);
  }
}

/* Batcher's odd-even merge sort network for N inputs (any N, Knuth 5.3.4): N = 33 takes
 * 246 comparators where odd-even transposition takes 528. Not stable: used where equal
 * keys are equal bits (images of a tile without special keys, no positions). */
template <int N>
struct msort_network {
  static constexpr int build(int *a, int *b) {
    int c = 0;
    for (int p = 1; p < N; p *= 2)
      for (int k = p; k >= 1; k /= 2)
        for (int j = k % p; j <= N - 1 - k; j += 2 * k)
          for (int i = 0; i <= (k - 1 < N - j - k - 1 ? k - 1 : N - j - k - 1); i++)
            if ((i + j) / (p * 2) == (i + j + k) / (p * 2)) {
              if (a) {
                a[c] = i + j;
                b[c] = i + j + k;
              }
              c++;
            }
    return c;
  }
  static constexpr int COUNT = build(nullptr, nullptr);
  struct pairs {
    int a[COUNT > 0 ? COUNT : 1], b[COUNT > 0 ? COUNT : 1];
  };
  static constexpr pairs make() {
    pairs p{};
    build(p.a, p.b);
    return p;
  }
  static constexpr pairs P = make();
};

template <int A, int B, typename U, int ITEMS>
__device__ __forceinline__ void msort_exchange(U (&key)[ITEMS]) {
  const U x = key[A], y = key[B];
  key[A] = x < y ? x : y;
  key[B] = x < y ? y : x;
}

/* The same on four-byte float keys without NaN and -0.0 (equal keys are equal bits), in
 * msort_le's order: one float min and one max. */
template <bool DESC, int A, int B, int ITEMS>
__device__ __forceinline__ void msort_exchange_f32(uint32_t (&key)[ITEMS]) {
  const float x = __uint_as_float(key[A]), y = __uint_as_float(key[B]);
  key[A] = __float_as_uint(DESC ? fmaxf(x, y) : fminf(x, y));
  key[B] = __float_as_uint(DESC ? fminf(x, y) : fmaxf(x, y));
}

template <typename U, int ITEMS, int... C>
__device__ __forceinline__ void msort_network_sort(U (&key)[ITEMS], std::integer_sequence<int, C...>) {
  (msort_exchange<msort_network<ITEMS>::P.a[C], msort_network<ITEMS>::P.b[C]>(key), ...);
}
template <bool DESC, int ITEMS, int... C>
__device__ __forceinline__ void msort_network_sort_f32(uint32_t (&key)[ITEMS], std::integer_sequence<int, C...>) {
  (msort_exchange_f32<DESC, msort_network<ITEMS>::P.a[C], msort_network<ITEMS>::P.b[C]>(key), ...);
}

/* Four-byte float keys known to hold no NaN and no -0.0 (KIND has MSORT_NONAN): the block
 * sort sorts them as they are, with float compares, instead of on their images. */
template <int KIND, typename U>
__host__ __device__ constexpr bool msort_plain_f32() {
  return msort_base<KIND, U>() == PP_KEY_FLOAT && sizeof(U) == 4 && (KIND & MSORT_NONAN) != 0;
}

/* ---- block-level building blocks -------------------------------------------------------- */

__host__ __device__ inline unsigned msort_ceil_log2(unsigned long long x) {
  unsigned r = 0;
  while (r < 64 && ((unsigned long long)1 << r) < x) r++;
  return r;
}

/* Global to shared memory without a register in between (cp.async, sm_80+): the thread's
 * ITEMS loads are all in flight at once, and the registers stay free for the merge. 4-,
 * 8- and 16-byte elements; 1-byte keys go through registers. The caller waits
 * (msort_stage_wait) and then passes a barrier. */
template <typename T>
__device__ __forceinline__ void msort_copy_async(T *smem_dst, const T *src) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async copies 4, 8 or 16 bytes");
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem_dst);
  if constexpr (sizeof(T) == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"((int)sizeof(T))
                 : "memory");
}
__device__ __forceinline__ void msort_stage_wait() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/* sh[i] = i < la ? a[i] : bm[i] for i < len, striped over the block (coalesced). A whole
 * tile from one 16-byte aligned source moves 16 bytes per copy. sh is 16-byte aligned. */
template <typename T, int THREADS, int ITEMS>
__device__ __forceinline__ void msort_stage(T *sh, const T *a, const T *bm, int la, int len) {
  constexpr int TILE = THREADS * ITEMS;
  const int tid = threadIdx.x;
  if (len == TILE && la == len && ((uintptr_t)a & 15) == 0) {
    constexpr int VECS = (int)(TILE * sizeof(T) / 16);
    const uint4 *src = reinterpret_cast<const uint4 *>(a);
    uint4 *dst = reinterpret_cast<uint4 *>(sh);
#pragma unroll
    for (int i = 0; i < (VECS + THREADS - 1) / THREADS; i++) {
      const int v = i * THREADS + tid;
      if (VECS % THREADS == 0 || v < VECS) msort_copy_async(dst + v, src + v);
    }
    msort_stage_wait();
  } else if constexpr (sizeof(T) >= 4) {
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) msort_copy_async(sh + i, (i < la ? a : bm) + i);
    }
    msort_stage_wait();
  } else {
    T x[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) x[it] = (i < la ? a : bm)[i];
    }
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) sh[i] = x[it];
    }
  }
}

/* dst[i] = sh[i] for i < len, striped over the block; a whole tile to a 16-byte aligned
 * destination is stored 16 bytes per thread and instruction. sh is 16-byte aligned. */
template <typename T, int THREADS, int ITEMS>
__device__ __forceinline__ void msort_store(T *dst, const T *sh, int len) {
  constexpr int TILE = THREADS * ITEMS;
  const int tid = threadIdx.x;
  if (len == TILE && ((uintptr_t)dst & 15) == 0) {
    constexpr int VECS = (int)(TILE * sizeof(T) / 16);
    const uint4 *src = reinterpret_cast<const uint4 *>(sh);
    uint4 *out = reinterpret_cast<uint4 *>(dst);
#pragma unroll
    for (int i = 0; i < (VECS + THREADS - 1) / THREADS; i++) {
      const int v = i * THREADS + tid;
      if (VECS % THREADS == 0 || v < VECS) out[v] = src[v];
    }
  } else {
#pragma unroll
    for (int it = 0; it < ITEMS; it++) {
      const int i = it * THREADS + tid;
      if (i < len) dst[i] = sh[i];
    }
  }
}

/* Exclusive prefix sum over the block (THREADS a multiple of 32); *total gets the sum of
 * all. warp_sums holds THREADS/32 entries. Every thread must call it; it ends with a
 * barrier, so warp_sums may be reused at once. */
template <int THREADS, typename T>
__device__ __forceinline__ T msort_block_exclusive_scan(T v, T *warp_sums, T *total) {
  constexpr int WARPS = THREADS / PP_WARP;
  const int lane = threadIdx.x % PP_WARP, warp = threadIdx.x / PP_WARP;
  T x = v;
#pragma unroll
  for (int d = 1; d < PP_WARP; d *= 2) {
    const T y = __shfl_up_sync(MSORT_FULL_MASK, x, d);
    if (lane >= d) x += y;
  }
  if (lane == PP_WARP - 1) warp_sums[warp] = x;
  __syncthreads();
  T before = 0, all = 0;
#pragma unroll
  for (int w = 0; w < WARPS; w++) {
    const T s = warp_sums[w];
    before += w < warp ? s : (T)0;
    all += s;
  }
  *total = all;
  __syncthreads();
  return before + x - v;
}

/* ---- merging ------------------------------------------------------------------------------
 * IMG: the keys compared are images (one unsigned compare); else stored keys (msort_le). */

template <bool IMG, int KIND, typename U>
__device__ __forceinline__ bool msort_cmp_le(U x, U y, pp_key_order<U> o) {
  if constexpr (IMG) {
    (void)o;
    return x <= y;
  } else {
    return msort_le<KIND>(x, y, o);
  }
}

/* Merge path in shared memory: the number of keys of a[0, la) among the first d outputs of
 * the stable merge of a and b (ties from a). */
template <bool IMG, int KIND, typename U>
__device__ __forceinline__ int msort_split_shared(const U *a, int la, const U *b, int lb, int d,
                                                  pp_key_order<U> o) {
  int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (msort_cmp_le<IMG, KIND>(a[mid], b[d - 1 - mid], o))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Shared-memory load at a byte offset from s: the merge steps keep byte offsets, so an
 * address is one register and no index scaling. */
template <typename U>
__device__ __forceinline__ U msort_lds(const U *s, unsigned off) {
  return *reinterpret_cast<const U *>(reinterpret_cast<const char *>(s) + off);
}

/* ITEMS steps (all when FULL, else the first cnt) of the stable merge of a = s[ia, ae) and
 * b = s[ib, be), ties from a; pos[i] gets the index in s of output i when WANT_POS. The
 * caller guarantees that the steps run out of neither run together and that s[ae] is
 * readable, and s[be] unless IN_B: then no load goes past b's last key (it reads that key
 * again, one instruction more), so that nothing past b is touched. Without BOUNDS the
 * caller also guarantees that the steps run out of neither run (ae - ia >= ITEMS, and
 * be - ib >= ITEMS, + 1 with IN_B): a step is then one compare. The steps keep byte
 * offsets: per step the compare, the output's select, the taken side's offset (select,
 * one load at +SZ) and its update, the loaded key into the taken side. */
template <bool IMG, int KIND, bool WANT_POS, bool FULL, bool IN_B, bool BOUNDS, typename U, int ITEMS>
__device__ __forceinline__ void msort_merge_steps(const U *s, int ia, int ae, int ib, int be, int cnt,
                                                  pp_key_order<U> o, U (&key)[ITEMS],
                                                  int (&pos)[ITEMS]) {
  constexpr unsigned SZ = sizeof(U);
  constexpr bool CLAMP = IN_B && BOUNDS;
  /* a's offset; b's is the step's total less a's (each step advances one of them) */
  unsigned oa = (unsigned)ia * SZ;
  const unsigned sum = (unsigned)(ia + ib) * SZ;
  const unsigned oae = (unsigned)ae * SZ, obe = (unsigned)be * SZ;
  /* every key of a lies before b's last one (a precedes b), so one clamp serves both */
  const unsigned olast = (unsigned)(be - 1) * SZ;
  U ka = msort_lds(s, oa), kb = msort_lds(s, CLAMP ? min((unsigned)ib * SZ, olast) : (unsigned)ib * SZ);
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    if (FULL || i < cnt) {
      const unsigned ob = sum + (unsigned)i * SZ - oa;
      bool take_b = !msort_cmp_le<IMG, KIND>(ka, kb, o);
      /* bitwise, not short-circuit: no branch per step */
      if (BOUNDS) take_b = (ob < obe) & ((oa >= oae) | take_b);
      key[i] = take_b ? kb : ka;
      const unsigned cur = take_b ? ob : oa;
      if (WANT_POS) pos[i] = (int)(cur / SZ);
      const unsigned nxt = cur + SZ;
      const U x = msort_lds(s, CLAMP ? min(nxt, olast) : nxt);
      if (!take_b) oa += SZ;
      if (take_b)
        kb = x;
      else
        ka = x;
    }
  }
}

/* msort_merge_steps for cnt <= ITEMS outputs: threads with a full ITEMS (all but the last
 * of a merge) run them without a count check, and where no lane of the warp can run out
 * of a run (most warps of a merge tile), without bound checks either. */
template <bool IMG, int KIND, bool WANT_POS, bool IN_B, typename U, int ITEMS>
__device__ __forceinline__ void msort_serial_merge(const U *s, int ia, int ae, int ib, int be, int cnt,
                                                   pp_key_order<U> o, U (&key)[ITEMS],
                                                   int (&pos)[ITEMS]) {
  if (cnt == ITEMS) {
    const bool inside = ae - ia >= ITEMS && be - ib >= ITEMS + (IN_B ? 1 : 0);
    if (__all_sync(__activemask(), inside))
      msort_merge_steps<IMG, KIND, WANT_POS, true, IN_B, false>(s, ia, ae, ib, be, cnt, o, key, pos);
    else
      msort_merge_steps<IMG, KIND, WANT_POS, true, IN_B, true>(s, ia, ae, ib, be, cnt, o, key, pos);
  } else {
    msort_merge_steps<IMG, KIND, WANT_POS, false, IN_B, true>(s, ia, ae, ib, be, cnt, o, key, pos);
  }
}

/* The block sort's rounds: runs of ITEMS keys, one per thread, in key[] (images when IMG),
 * cnt of them valid, merged pairwise through sk until the tile is one run. While a pair of
 * runs belongs to one warp (the first five rounds), the warps go through the rounds on
 * their own: warp barriers, and no read outside the warp's keys (IN_B). */
template <bool IMG, int KIND, typename U, int THREADS, int ITEMS, bool WANT_POS>
__device__ __forceinline__ void msort_block_rounds(U *sk, uint16_t *spos, int valid,
                                                   pp_key_order<U> o, U (&key)[ITEMS],
                                                   int (&pos)[ITEMS], int *cnt_io) {
  const int tid = threadIdx.x, base = tid * ITEMS;
  int cnt = *cnt_io;
  for (int span = 1; span < THREADS && span * ITEMS < valid; span *= 2) {
    const bool in_warp = 2 * span <= PP_WARP; /* uniform */
    if (in_warp) /* the previous round's reads are done */
      __syncwarp();
    else
      __syncthreads();
    if (cnt == ITEMS) { /* all threads of a full tile: no count check per key */
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        sk[base + i] = key[i];
        if (WANT_POS) spos[base + i] = (uint16_t)pos[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (i < cnt) {
          sk[base + i] = key[i];
          if (WANT_POS) spos[base + i] = (uint16_t)pos[i];
        }
    }
    if (in_warp)
      __syncwarp();
    else
      __syncthreads();
    const int g0 = tid & ~(2 * span - 1); /* first thread of the pair of runs */
    const int ps = g0 * ITEMS, run = span * ITEMS;
    int la = valid - ps, lb = valid - ps - run;
    la = la < 0 ? 0 : la > run ? run : la;
    lb = lb < 0 ? 0 : lb > run ? run : lb;
    const int d = (tid - g0) * ITEMS;
    cnt = la + lb - d;
    cnt = cnt < 0 ? 0 : cnt > ITEMS ? ITEMS : cnt;
    if (cnt > 0) {
      const int ia = msort_split_shared<IMG, KIND>(sk + ps, la, sk + ps + run, lb, d, o);
      int sp[ITEMS];
      msort_serial_merge<IMG, KIND, WANT_POS, true>(sk, ps + ia, ps + la, ps + run + d - ia, ps + run + lb,
                                                    cnt, o, key, sp);
      if (WANT_POS) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
          if (i < cnt) pos[i] = spos[sp[i]];
      }
    }
  }
  *cnt_io = cnt;
}

/* Sorts the thread's ITEMS keys, stably where it matters: images without positions by the
 * sorting network, else by odd-even transposition (adjacent swaps of strictly greater
 * keys only); pos moves along when WANT_POS. */
template <bool IMG, int KIND, bool WANT_POS, typename U, int ITEMS>
__device__ __forceinline__ void msort_thread_sort(U (&key)[ITEMS], int (&pos)[ITEMS], pp_key_order<U> o) {
  if constexpr (IMG && !WANT_POS) {
    (void)pos;
    (void)o;
    msort_network_sort(key, std::make_integer_sequence<int, msort_network<ITEMS>::COUNT>());
  } else if constexpr (!IMG && !WANT_POS && msort_plain_f32<KIND, U>()) {
    (void)pos;
    (void)o;
    msort_network_sort_f32<msort_is_desc<KIND>()>(key, std::make_integer_sequence<int, msort_network<ITEMS>::COUNT>());
  } else {
#pragma unroll
    for (int r = 0; r < ITEMS; r++) {
#pragma unroll
      for (int j = r & 1; j + 1 < ITEMS; j += 2) {
        if (!msort_cmp_le<IMG, KIND>(key[j], key[j + 1], o)) {
          const U x = key[j];
          key[j] = key[j + 1];
          key[j + 1] = x;
          if (WANT_POS) {
            const int q = pos[j];
            pos[j] = pos[j + 1];
            pos[j + 1] = q;
          }
        }
      }
    }
  }
}

/* The block sort. On entry sk[0, valid) holds the tile's keys in input order (and the
 * caller has passed a barrier after writing them); sk has THREADS*ITEMS entries. On
 * return the thread holds outputs tid*ITEMS + i of the sorted tile for i < *cnt in key[i] —
 * the keys' images if *images, else the keys — and (WANT_POS) the input position of each
 * in pos[i]; sk and spos may be overwritten at once after a barrier. spos (WANT_POS only)
 * has room for THREADS*ITEMS 16-bit entries. Padding after the last key comes after every
 * key (the largest image, or msort_pad): being last in input order too, the stable sort
 * keeps it behind every key. */
template <int KIND, typename U, int THREADS, int ITEMS, bool WANT_POS>
__device__ __forceinline__ void msort_block_sort(U *sk, uint16_t *spos, int valid,
                                                 pp_key_order<U> o, U (&key)[ITEMS],
                                                 int (&pos)[ITEMS], int *cnt_out, bool *images) {
  const int tid = threadIdx.x, base = tid * ITEMS;
  int cnt = valid - base;
  cnt = cnt < 0 ? 0 : cnt > ITEMS ? ITEMS : cnt;
  if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT && sizeof(U) == 4) {
    /* Four-byte floats: a tile without NaN and -0.0 (one block-wide vote) is sorted on the
     * keys themselves with one float compare, and needs no image either way. The padding
     * is +inf (-inf descending), neither NaN nor -0.0; a tile with them pads with NaN. */
    constexpr int PLAIN = KIND | MSORT_NONAN;
    const U pad = msort_pad<PLAIN>(o);
    bool special = false;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int p = base + i;
      key[i] = p < valid ? sk[p] : pad;
      const float f = __uint_as_float((unsigned)key[i]);
      special |= (f != f) | (key[i] == (U)0x80000000u);
      pos[i] = p;
    }
    if (__syncthreads_or(special)) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (base + i >= valid) key[i] = msort_pad<KIND>(o);
      msort_thread_sort<false, KIND, WANT_POS>(key, pos, o);
      msort_block_rounds<false, KIND, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
    } else {
      msort_thread_sort<false, PLAIN, WANT_POS>(key, pos, o);
      msort_block_rounds<false, PLAIN, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
    }
    *images = false;
  } else {
    int special = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
      const int p = base + i;
      key[i] = p < valid ? sk[p] : (U)0;
      special |= p < valid && msort_special<KIND>(key[i]);
      pos[i] = p;
    }
    bool raw = false;
    if constexpr (msort_base<KIND, U>() == PP_KEY_FLOAT) raw = __syncthreads_or(special);
    if (raw) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        if (base + i >= valid) key[i] = msort_pad<KIND>(o);
      msort_thread_sort<false, KIND, WANT_POS>(key, pos, o);
      msort_block_rounds<false, KIND, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
      *images = false;
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        key[i] = base + i < valid ? msort_image_plain<KIND>(key[i], o) : msort_all_ones<U>();
      msort_thread_sort<true, KIND, WANT_POS>(key, pos, o);
      msort_block_rounds<true, KIND, U, THREADS, ITEMS, WANT_POS>(sk, spos, valid, o, key, pos, &cnt);
      *images = true;
    }
  }
  *cnt_out = cnt;
}

#endif /* PP_CUDA_SORT_BLOCK_CUH */
