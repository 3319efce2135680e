/*
 * ladder/sort_steps.cuh — the teaching steps of the sort ladder (ladder/sort.cu): the key
 * order on the host, the CPU reference (step 1), Han 7's warp radix sort (step 2) and
 * Cook 6's per-thread lists with their three merges (step 3). Included once, by sort.cu,
 * inside its anonymous namespace; the steps and their sources are described there.
 */
/* ------------------------------------------------------------------------------------ */
/* Key order on the host (API.md): the unsigned image whose order is the sort order      */
/* ------------------------------------------------------------------------------------ */

// Floats: negatives inverted, positives with the sign bit set; -0.0 takes +0.0's image,
// every NaN the largest. Signed: sign bit flipped. Descending: the image inverted.
template <class U> U image_float(U b) {
  if constexpr (sizeof(U) >= 4) {
    constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
    constexpr U EXP = sizeof(U) == 8 ? (U)0x7FF0000000000000ull : (U)0x7F800000u;
    const U mag = b & (U)~SIGN;
    if (mag > EXP) return (U)~(U)0;
    if (mag == 0) return SIGN;
    return (b & SIGN) ? (U)~b : (U)(b | SIGN);
  }
  return b;
}

template <class U> U image_of(U bits, pp_dtype t, pp_order o) {
  constexpr U SIGN = (U)1 << (sizeof(U) * 8 - 1);
  U k = bits;
  if (t == PP_I32 || t == PP_I64) k ^= SIGN;
  if (t == PP_F32 || t == PP_F64) k = image_float(bits);
  return o == PP_DESCENDING ? (U)~k : k;
}

/* ------------------------------------------------------------------------------------ */
/* Step 1: CPU reference — serial LSD radix sort, 8-bit digits                           */
/* ------------------------------------------------------------------------------------ */

// Stable counting sort per byte of the image, least significant first: the textbook form
// of what the GPU steps do. perm (optional) is moved along, so a pairs sort and stability
// can be checked. Passes whose digit is the same for every key are skipped.
template <class U>
void cpu_radix_sort(std::vector<U> &keys, std::vector<uint64_t> *perm, pp_dtype t, pp_order o) {
  const size_t n = keys.size();
  std::vector<U> img(n), img2(n), k2(n);
  std::vector<uint64_t> p2(perm ? n : 0);
  for (size_t i = 0; i < n; i++) img[i] = image_of(keys[i], t, o);
  for (int pass = 0; pass < (int)sizeof(U); pass++) {
    const int shift = 8 * pass;
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[((img[i] >> shift) & 255) + 1]++;
    bool trivial = false;
    for (int d = 0; d < 256; d++) trivial = trivial || count[d + 1] == n;
    if (trivial) continue;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++) {
      const size_t at = count[(img[i] >> shift) & 255]++;
      img2[at] = img[i];
      k2[at] = keys[i];
      if (perm) p2[at] = (*perm)[i];
    }
    img.swap(img2);
    keys.swap(k2);
    if (perm) perm->swap(p2);
  }
}

/* ------------------------------------------------------------------------------------ */
/* Step 2: Han 7 — warp radix sort of 32 keys with __ballot_sync / __popc                */
/* ------------------------------------------------------------------------------------ */

// Each warp loads 32 keys, one per lane, and makes 32 one-bit passes. In a pass the
// ballot of the current bit is the "histogram" (popc(~ones) keys go left), and popc of
// the ballot masked to the lanes below is the "prefix sum": a lane holding a 0 goes to
// the number of 0s below it, a lane holding a 1 after all 0s plus the number of 1s below
// it. Keys move through a shared ping-pong buffer, as in the book. Differences from the
// book: any n (lanes past the end carry UINT32_MAX, which sorts last and is never
// written), the full-warp mask instead of __activemask() (every lane takes part in every
// ballot), and __syncwarp() between writing and reading the buffer: since Volta the
// lanes of a warp are not guaranteed to run in lock step.
constexpr int kWarpSortThreads = 256;

__global__ void __launch_bounds__(kWarpSortThreads)
warp_ballot_radix_sort(const uint32_t *in, uint32_t *out, size_t n) {
  __shared__ uint32_t buf[kWarpSortThreads / 32][2][32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t i = (size_t)blockIdx.x * kWarpSortThreads + threadIdx.x;
  uint32_t key = i < n ? in[i] : UINT32_MAX;
  const unsigned below = (1u << lane) - 1u;
  for (int bit = 0; bit < 32; bit++) {
    const unsigned b = (key >> bit) & 1u;
    const unsigned ones = __ballot_sync(0xffffffffu, b);
    const unsigned zeros = ~ones;
    const unsigned pos = b ? __popc(zeros) + __popc(ones & below) : __popc(zeros & below);
    uint32_t *dst = buf[warp][bit & 1];
    dst[pos] = key;
    __syncwarp();
    key = dst[lane];
    // the next round writes the other half, so no second barrier is needed here
  }
  if (i < n) out[i] = key;
}

/* ------------------------------------------------------------------------------------ */
/* Step 3: Cook 6 — per-thread lists, 1-bit radix sort in shared memory, three merges   */
/* ------------------------------------------------------------------------------------ */

// One block of kLists threads sorts a chunk of kChunk keys. Thread t owns the list of
// elements t, t + kLists, t + 2*kLists, ... (rows of kLists keys: the loads are coalesced
// and the list elements of one row sit in different banks). radix_sort2: for each of the
// 32 bits, a thread walks its list and writes keys with a 0 back into its own list's
// space, keys with a 1 to a second list, then appends the second list. Then the kLists
// sorted lists are merged into the output, one output key per round, in one of the
// book's three ways (MergeKind). Difference from the book: the chunk is padded with
// UINT32_MAX to a whole number of rows (any n); padding never wins a round before the
// real keys run out, and only `valid` keys are written.
constexpr int kLists = 32;
constexpr int kChunk = 1024;
constexpr unsigned kPerList = kChunk / kLists;

enum class MergeKind {
  Single,    // merge_array1: thread 0 scans the kLists heads for the smallest, alone
  AtomicMin, // merge_array6: every thread offers its head to atomicMin, lowest tid wins ties
  Reduction, // merge_array5: a tree of pairwise minimums over the heads, halving the threads
};

// merge_array1: the other threads only clear the list indices. Ties go to the later list
// (`<=`, as in the book): for keys alone the output is the same.
__device__ void merge_single(const uint32_t *sorted, uint32_t *out, unsigned valid, unsigned *list_index) {
  const unsigned tid = threadIdx.x;
  list_index[tid] = 0;
  __syncthreads();
  if (tid != 0) return;
  for (unsigned i = 0; i < valid; i++) {
    uint32_t min_val = UINT32_MAX;
    unsigned min_list = 0;
    for (unsigned list = 0; list < kLists; list++)
      if (list_index[list] < kPerList) {
        const uint32_t v = sorted[list + list_index[list] * kLists];
        if (v <= min_val) {
          min_val = v;
          min_list = list;
        }
      }
    list_index[min_list]++;
    out[i] = min_val;
  }
}

// merge_array6. Difference from the book: a third barrier per round: in the book, thread 0
// resets min_val for round i+1 while a slower thread may still compare its tid with
// min_tid of round i.
__device__ void merge_atomic_min(const uint32_t *sorted, uint32_t *out, unsigned valid, unsigned *list_index) {
  __shared__ unsigned min_val, min_tid;
  const unsigned tid = threadIdx.x;
  list_index[tid] = 0;
  __syncthreads();
  for (unsigned i = 0; i < valid; i++) {
    const uint32_t data = list_index[tid] < kPerList ? sorted[tid + list_index[tid] * kLists] : UINT32_MAX;
    if (tid == 0) {
      min_val = UINT32_MAX;
      min_tid = UINT32_MAX;
    }
    __syncthreads();
    atomicMin(&min_val, data);
    __syncthreads();
    if (data == min_val) atomicMin(&min_tid, tid); /* equal heads: lowest list wins */
    __syncthreads();
    if (tid == min_tid) {
      list_index[tid]++;
      out[i] = data;
    }
    __syncthreads(); /* not in the book: min_tid must be read before it is reset */
  }
}

// merge_array5: each round every thread stores its head and list number, then
// kLists/2, kLists/4, ... threads keep the smaller of their entry and the one in the other
// half (the upper half wins only when strictly smaller: ties keep the lower list). No
// atomics, so it works for any key type, at the price of log2(kLists) barriers a round.
__device__ void merge_reduction(const uint32_t *sorted, uint32_t *out, unsigned valid, unsigned *list_index) {
  __shared__ uint32_t red_val[kLists];
  __shared__ unsigned red_list[kLists];
  const unsigned tid = threadIdx.x;
  list_index[tid] = 0;
  __syncthreads();
  for (unsigned i = 0; i < valid; i++) {
    red_val[tid] = list_index[tid] < kPerList ? sorted[tid + list_index[tid] * kLists] : UINT32_MAX;
    red_list[tid] = tid;
    __syncthreads();
    for (unsigned half = kLists / 2; half > 0; half /= 2) {
      if (tid < half && red_val[tid + half] < red_val[tid]) {
        red_val[tid] = red_val[tid + half];
        red_list[tid] = red_list[tid + half];
      }
      __syncthreads();
    }
    if (tid == 0) {
      list_index[red_list[0]]++;
      out[i] = red_val[0];
    }
    __syncthreads(); /* the winner's index moves before the next round reads it */
  }
}

template <MergeKind K>
__global__ void __launch_bounds__(kLists)
block_lists_radix_sort(const uint32_t *in, uint32_t *out, size_t n) {
  __shared__ uint32_t sort_tmp[kChunk];
  __shared__ uint32_t sort_tmp_1[kChunk];
  __shared__ unsigned list_index[kLists];
  const unsigned tid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * kChunk;
  const unsigned valid = n - base < (size_t)kChunk ? (unsigned)(n - base) : (unsigned)kChunk;
  for (unsigned i = 0; i < kChunk; i += kLists)
    sort_tmp[i + tid] = i + tid < valid ? in[base + i + tid] : UINT32_MAX;
  __syncthreads();

  // radix_sort2: only the thread's own list is touched, so no barrier inside
  for (int bit = 0; bit < 32; bit++) {
    const uint32_t mask = 1u << bit;
    unsigned n0 = 0, n1 = 0;
    for (unsigned i = 0; i < kChunk; i += kLists) {
      const uint32_t e = sort_tmp[i + tid];
      if (e & mask) {
        sort_tmp_1[n1 + tid] = e;
        n1 += kLists;
      } else {
        sort_tmp[n0 + tid] = e;
        n0 += kLists;
      }
    }
    for (unsigned i = 0; i < n1; i += kLists) sort_tmp[n0 + i + tid] = sort_tmp_1[i + tid];
  }
  __syncthreads(); /* the merges read every thread's list */

  if (K == MergeKind::Single) merge_single(sort_tmp, out + base, valid, list_index);
  if (K == MergeKind::AtomicMin) merge_atomic_min(sort_tmp, out + base, valid, list_index);
  if (K == MergeKind::Reduction) merge_reduction(sort_tmp, out + base, valid, list_index);
}
