/* sort_onesweep.cuh — one digit pass of the radix sort (Adinets & Merrill, "Onesweep"):
 * a block ranks its tile's keys by digit, publishes its per-digit counts, looks back over
 * the earlier tiles' counts (decoupled look-back, one thread per digit) and scatters keys
 * and values through shared memory. sort.cu says how the passes fit together.
 */
#ifndef PP_CUDA_SORT_ONESWEEP_CUH
#define PP_CUDA_SORT_ONESWEEP_CUH

#include "sort_radix.cuh"

/* ---- one digit pass ------------------------------------------------------------------------ */

/* A key (and with HAS_V its value) from *ks, *vs to *kd, *vd. */
template <bool HAS_V, typename U, typename V>
__device__ __forceinline__ void copy_pair(U *kd, V *vd, const U *ks, const V *vs) {
  *kd = *ks;
  if constexpr (HAS_V) *vd = *vs;
}

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
      if (i < n) copy_pair<HAS_V>(&k[u], &v[u], ks + i, vs + i);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const size_t i = base + (size_t)u * THREADS;
      if (i < n) copy_pair<HAS_V>(kd + i, vd + i, &k[u], &v[u]);
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
       was slower for every key type */
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

/* Writes slot j = k * THREADS + tid of the sorted tile of values (j < valid) to its place
 * in dst, the slot's digit being rank[k]'s low byte (scatter_keys); T wider than V: the
 * values widened on the way (an argsort's positions, see onesweep_kernel's VO). */
template <int THREADS, int ITEMS, typename T, typename V, typename S>
__device__ __forceinline__ void scatter_values(T *dst, const V *xv, const S *s_base, const unsigned (&rank)[ITEMS],
                                               unsigned valid) {
  const int tid = threadIdx.x;
  T *d_t = out_base(dst);
#pragma unroll
  for (int k = 0; k < ITEMS; k++)
    if (k * THREADS < (int)valid - tid)
      *slot_out<THREADS>(d_t, s_base[rank[k] & (RADIX - 1)], k) = (T)xv[k * THREADS + tid];
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

/* The thread's values, as load_items reads them from vs + start (start: the tile's first
 * index); vs NULL (the first pass of an out-of-place sort asked for positions): each
 * item's index in the input instead, start + tile_index, read from nowhere. Padding gets
 * its index too; it is never stored. */
template <typename V, int ITEMS>
__device__ __forceinline__ void load_values(const V *vs, size_t start, unsigned idx0, unsigned valid,
                                            V (&v)[ITEMS]) {
  if (vs) {
    load_items(vs + start + idx0, idx0, valid, v, (V)0);
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) v[i] = (V)(start + idx0 + (unsigned)(i * PP_WARP));
  }
}

/* The match of onesweep_kernel's ranking (PP_SORT_MATCH): for 4-byte keys alone chosen
 * per pass from its digit counts (PP_SORT_MATCH_PASS), shared ORs for 8-byte keys alone
 * (faster than ballots there), ballots for pairs (where the ORs were slower). */
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
  constexpr int MATCH = onesweep_match<U, HAS_V>(); /* PP_SORT_MATCH_PASS: may be 2 */
  constexpr size_t HIST =
      (size_t)(THREADS / PP_WARP) * RADIX * sizeof(unsigned) * (MATCH == 2 || MATCH == PP_SORT_MATCH_PASS ? 2 : 1);
  return EXCH > HIST ? EXCH : HIST;
}

/* Dynamic shared memory of onesweep_kernel: none while the exchange buffer fits the 48 KB
 * of static shared memory with the rest (static was faster for the same tile), else the
 * buffer's bytes. */
template <typename U, typename V, bool HAS_V, typename S, int THREADS, int ITEMS>
__host__ __device__ static constexpr size_t onesweep_dyn_bytes() {
  constexpr size_t rest = RADIX * sizeof(S) + 64; /* s_base, s_scan, s_tile */
  return onesweep_buf_bytes<U, V, HAS_V, THREADS, ITEMS>() + rest <= 48 * 1024
             ? 0
             : onesweep_buf_bytes<U, V, HAS_V, THREADS, ITEMS>();
}

/* One tile of a digit pass (onesweep_kernel's loop body): rank the keys by digit, publish
 * the tile's counts, look back for the counts of the tiles before, scatter. ks/kd, vs/vd:
 * the pass's source and destination (vs NULL with values: positions, see load_values);
 * status_next: the status buffer to clear for the pass after (NULL with one pass);
 * digit_first: for thread d < 256, digit d's first output position; images: the plan's
 * IMAGES_IN / IMAGES_OUT for this pass; s_buf: the exchange buffer; vwide (VO wider
 * than V, the last pass): where the values go, widened, in place of vd; match: the pass's
 * method where MATCH is PP_SORT_MATCH_PASS (rank_tile_count).
 *
 * Padding (the last tile's items at index >= valid) must rank after every key: where the
 * ranking reads images, padding is loaded as the largest image (digit 255 in every pass,
 * so no compare per item); where it takes the full image of the stored bits, the ranking
 * gives padding digit 255 itself. */
template <int MATCH, typename U, typename V, bool HAS_V, typename S, int THREADS, int ITEMS, int PK, typename VO>
__device__ __forceinline__ void onesweep_tile(unsigned tile, unsigned valid, const U *ks, U *kd,
                                              const V *vs, V *vd, S *status, S *status_next,
                                              S digit_first, int shift, unsigned images,
                                              pp_key_order<U> order, unsigned char *s_buf,
                                              S *s_base, unsigned *s_scan, V *s_stage, V *s_vsort,
                                              uint64_t *pd, VO *vwide, int match) {
  typedef pp_status_word<S> SW;
  constexpr size_t TILE = (size_t)THREADS * ITEMS;
  /* ONE_IMAGE: the first of several passes turns its keys into images once, right after
     the load, for the ranking and the store alike (computed twice, it made the first pass
     of float keys markedly slower than the passes between); not with an 8-byte key or
     value beside values, where the longer life of the images made ptxas spill */
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
    /* each word's key to a register, its value to the stage (loading the values from the
       words a second time, after the key scatter, was slower) */
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
      load_values(vs, start, idx0, valid, v);
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
                                                   valid, rank, whist, match)
          : rank_tile_count<true, MATCH, THREADS>([&](int i) { return radix_digit<false>(key[i], order, shift); },
                                                  valid, rank, whist, match);

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
      load_values(vs, start, idx0, valid, val);
    }
    __syncthreads(); /* the keys are read; xv overwrites them */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) xv[rank[i] >> 8] = val[i];
    __syncthreads();
    if constexpr (!std::is_same<VO, V>::value) {
      if (vwide) {
        scatter_values<THREADS, ITEMS>(vwide, xv, s_base, rank, valid);
        return;
      }
    }
    scatter_values<THREADS, ITEMS>(vd, xv, s_base, rank, valid);
  }
}

/* One digit position. buffers[0] holds the keys when the sort starts; the plan says
 * which buffer this pass reads and which status buffer it uses. status1 is NULL when the
 * sort has a single pass. KIND: PP_KEY_FLOAT, or PP_KEY_UNSIGNED for every integer (the
 * host folds a signed key's sign flip into flip), so the images take no branches.
 * Out of place (keys_in set): the pass the plan names first reads keys_in and vals_in
 * instead of the buffer it names (vals_in NULL: positions, see load_values); the other
 * passes are as in place. In place, keys_in is NULL.
 * VO wider than V (out of place, an argsort's 8-byte positions carried as 4-byte ones):
 * vals0 is the caller's array of n VO, which the passes before the last use as one of n V;
 * the plan's last sort pass writes it as VO. Else VO is V and compiles out. */
template <typename U, int KIND, typename V, bool HAS_V, typename S, int THREADS, int ITEMS, int PK = PK_NONE,
          typename VO = V>
__global__ void __launch_bounds__(THREADS, onesweep_min_blocks((int)sizeof(U), HAS_V ? (int)sizeof(V) : 0))
onesweep_kernel(U *keys0, U *keys1, V *vals0, V *vals1, const U *keys_in, const V *vals_in, size_t n,
                unsigned tiles, int pass, sort_header *hdr, S *status0, S *status1, U flip, uint64_t *packed0,
                uint64_t *packed1) {
  /* PK: which passes of packed pairs this kernel makes (pack_pass) */
  static_assert(PK == PK_NONE || (sizeof(U) == 4 && HAS_V && sizeof(V) == 4), "4-byte keys and values");
  static_assert(std::is_same<VO, V>::value || (HAS_V && sizeof(VO) > sizeof(V) && (PK == PK_NONE || PK == PK_LAST)),
                "only a last pass widens values");
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
  if constexpr (PK == PK_NONE || PK == PK_FIRST) { /* the kinds a first pass can be */
    if (keys_in && pass == (int)hdr->first) {
      ks = keys_in;
      vs = vals_in;
    }
  }
  VO *vwide = nullptr; /* out of place, the last sort pass writes buffer 0 */
  if constexpr (!std::is_same<VO, V>::value) {
    if (pass == (int)hdr->last) vwide = reinterpret_cast<VO *>(vd);
  }
  if (mode == MODE_COPY) { /* never the first pass of an out-of-place sort */
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
  /* the pass's match method, the same for every block (the histogram kernel's choice) */
  const int match = MATCH == PP_SORT_MATCH_PASS ? (int)hdr->match[pass] : MATCH;

  for (;;) {
    __syncthreads(); /* the previous tile is done with shared memory */
    if (tid == 0) s_tile = atomicAdd(&hdr->tile_counter[pass], 1u);
    for (int i = tid; i < (match == 2 ? 2 : 1) * WARPS * RADIX; i += THREADS) (&whist[0][0])[i] = 0;
    __syncthreads();
    const unsigned tile = s_tile;
    if (tile >= tiles) break;
    const size_t left = n - (size_t)tile * TILE;
    const unsigned valid = left < TILE ? (unsigned)left : (unsigned)TILE;
    V *const stage = reinterpret_cast<V *>(s_dyn + DYN); /* packed pairs: see onesweep_tile */
    onesweep_tile<MATCH, U, V, HAS_V, S, THREADS, ITEMS, PK>(tile, valid, ks, kd, vs, vd, status, status_next,
                                                             digit_first, shift, images, order, s_buf, s_base, s_scan,
                                                             stage, stage + TILE, pd, vwide, match);
  }
}

#endif /* PP_CUDA_SORT_ONESWEEP_CUH */
