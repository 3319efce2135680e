/* histogram.cu — pp_histogram_even, pp_histogram_range and pp_histogram_image on the GPU.
 *
 * Three ways to count, chosen by how many counters there are (counts are always u64 in
 * global memory):
 *
 *  - privatised shared memory (bins * 4 bytes fit one block's budget, or up to 4 windows
 *    of them counted in as many passes, hist_window_kernel, which leaves out the windows no
 *    value falls into): each block counts into u32 counters in shared memory and adds the
 *    non-zero ones to the global counts at the end; the first block to finish stores its
 *    sums instead, so the counts need no clearing launch (flush_counters). The counters are
 *    interleaved [bin][copy], with up to 32 copies, lane l using copy l % copies: with 32
 *    copies (256 bins) lane l only ever touches bank l, so a warp's atomics never conflict,
 *    whatever the data (all-equal data included);
 *  - a thread-block cluster with distributed shared memory (sm_90; the counters fit the
 *    cluster's blocks together): block r of the cluster owns bins [r*slice, (r+1)*slice)
 *    and every block of the cluster adds into the owner's shared memory directly;
 *  - global atomics (more bins than that): 64-bit atomic adds into the counts, which then
 *    live in L2.
 * (These last two add into counts cleared by a memset first.)
 * One-byte input (u8) takes none of them: a block counts its 256 possible values as an
 * image channel is counted and folds each value's count into the value's bin
 * (hist_bytes_kernel), whatever the rule; with more than HIST_BYTES_MAX_BINS bins the value
 * counts are folded once for the whole input instead (hist_fold_kernel).
 *
 * The cluster and global paths count runs: a thread keeps (bin, count) of the elements it
 * has just seen and adds only when the bin changes, so data where all values fall into one
 * bin costs one remote atomic per thread instead of one per element and nothing serialises
 * on a hot counter. (Shared memory needs no such help: lanes use separate copies, and the
 * hardware combines a warp's atomics on one shared address.)
 *
 * Loads are 16-byte vectors (__ldcs: streaming, the input is read once), with scalar head
 * and tail elements so any element-aligned pointer works. A block's u32 counters cannot
 * overflow: one launch gives a block fewer than 2^32 elements (larger inputs are counted
 * in several launches).
 *
 * Bin rules (API.md), exactly as the CPU backend evaluates them:
 *  - even: lo <= x < hi as double, bin floor(((double)x - lo) * bins / (hi - lo)) in that
 *    order in double, clamped to bins - 1 (NaN quotient too). The division is slow, so
 *    the kernels first compute an approximation a = (x - lo) * (bins / (hi - lo)) — in
 *    float for f32 input when its error bound is small, else in double — and only when a
 *    lies within that bound of an integer (where the floor could differ) evaluate the
 *    contract's formula itself. For f32 the range test is exact in float: x >= lo holds
 *    exactly when x >= the smallest float not below lo (likewise for hi). Wide ranges,
 *    where (hi - lo) * bins overflows double, place x between power-of-two-scaled edges
 *    instead, exactly as src/cpu/histogram.c says and does.
 *  - range: binary search of the edges (shared memory when they fit, else through L1).
 *  - image: counts[c][v], channel c of a byte at offset j of its row being j % channels.
 */
#include "arith.cuh"
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "histogram_rules.cuh"
#include "launch.cuh"

#include <cfloat>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

/* Block threads, passes and loads per thread: PP_HIST_* (tuning.h). */
#define HIST_THREADS PP_HIST_THREADS
/* Shared memory for the counters of one block on the privatised path: two blocks of
 * HIST_THREADS fit an SM with room to spare. */
#define HIST_SMEM_TARGET (96 * 1024)
/* Copies of the counters spread a warp's lanes over different banks: up to one per lane,
 * within HIST_COPIES_BYTES (256 bins get 32 copies, 1024 bins 8). */
#define HIST_MAX_COPIES 32
#define HIST_COPIES_BYTES (32 * 1024)
#define HIST_MAX_PASSES PP_HIST_MAX_PASSES
/* Blocks per SM the privatised kernel's registers are fitted to (hist_shared_kernel). */
#define HIST_SHARED_BLOCKS 3
/* Largest portable cluster. */
#define HIST_MAX_CLUSTER 8
#define HIST_UNROLL PP_HIST_UNROLL
/* One-byte input with at most this many bins is folded per block (hist_bytes_kernel);
 * more bins are folded once, after the values are counted. */
#define HIST_BYTES_MAX_BINS 2048

/* ---- run-length counting ------------------------------------------------------------ */

/* The bin a thread is counting a run of, and how long the run is so far. */
struct run {
  size_t bin;
  uint32_t count;
};

/* Where the counters of a path live: Target::add(bin, count) adds a finished run. */
struct shared_target { /* privatised: counters[bin][copy], this lane's copy */
  uint32_t *counters; /* already offset by the lane's copy */
  int copy_shift;     /* log2(copies) */
  __device__ __forceinline__ void add(size_t b, uint32_t c) const {
    atomicAdd(counters + ((uint32_t)b << copy_shift), c);
  }
};
struct pass_target { /* privatised, one copy of the window [first, first + size) of the bins */
  uint32_t *counters;
  uint32_t first, size; /* the bins of this path fit 32 bits */
  __device__ __forceinline__ void add(size_t b, uint32_t c) const {
    const uint32_t o = (uint32_t)b - first; /* bins below first wrap to huge values */
    if (o < size) atomicAdd(counters + o, c);
  }
};
/* The same, also keeping the least and the largest bin this thread met outside the window
 * (least > most while it has met none): the first pass of hist_window_kernel. */
struct first_pass_target : pass_target {
  mutable uint32_t least, most;
  __device__ __forceinline__ void add(size_t b, uint32_t c) const {
    const uint32_t o = (uint32_t)b - first;
    if (o < size) {
      atomicAdd(counters + o, c);
    } else {
      least = min(least, (uint32_t)b);
      most = max(most, (uint32_t)b);
    }
  }
};
struct cluster_target { /* distributed: the owning block's shared memory */
  uint32_t *counters;
  int slice_shift; /* slices are powers of two: the owner is a shift away */
  __device__ __forceinline__ void add(size_t b, uint32_t c) const {
    const uint32_t owner = (uint32_t)b >> slice_shift;
    const uint32_t off = (uint32_t)b & ((1u << slice_shift) - 1u);
    uint32_t *dst = cg::this_cluster().map_shared_rank(counters, owner);
    atomicAdd(dst + off, c);
  }
};
struct global_target { /* straight into the u64 counts */
  unsigned long long *counts;
  __device__ __forceinline__ void add(size_t b, uint32_t c) const {
    atomicAdd(counts + b, (unsigned long long)c);
  }
};

template <typename Target>
__device__ __forceinline__ void run_push(run &r, size_t b, const Target &tg) {
  if (b == r.bin) {
    r.count++;
    return;
  }
  if (r.count) tg.add(r.bin, r.count);
  r.bin = b;
  r.count = 1;
}

template <bool RUNS, typename T, typename Rule, typename Target>
__device__ __forceinline__ void count_one(T x, const Rule &rule, run &r, const Target &tg) {
  size_t b;
  if (rule.bin(x, &b)) {
    if (RUNS)
      run_push(r, b, tg);
    else
      tg.add(b, 1);
  }
}

/* The whole input of this launch, one grid-stride pass: head elements (before the first
 * 16-byte boundary), vectors, tail elements. Blocks count in grid order, so a block's
 * share is at most ceil(n / grid) + one vector. */
template <bool RUNS, typename T, typename Rule, typename Target>
__device__ __forceinline__ void count_input(const T *in, size_t n, size_t head, const Rule &rule,
                                            const Target &tg) {
  constexpr int V = 16 / sizeof(T);
  typedef pp_vec16<T> vec;
  run r = {(size_t)-1, 0};
  const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  if (tid < head) count_one<RUNS>(in[tid], rule, r, tg);
  const size_t nvec = (n - head) / V;
  const uint4 *vin = reinterpret_cast<const uint4 *>(in + head);
  size_t i = tid;
  for (; i + (HIST_UNROLL - 1) * stride < nvec; i += HIST_UNROLL * stride) {
    vec v[HIST_UNROLL];
#pragma unroll
    for (int u = 0; u < HIST_UNROLL; u++) v[u].raw = __ldcs(vin + i + u * stride);
#pragma unroll
    for (int u = 0; u < HIST_UNROLL; u++)
#pragma unroll
      for (int k = 0; k < V; k++) count_one<RUNS>(v[u].e[k], rule, r, tg);
  }
  for (; i < nvec; i += stride) {
    vec v;
    v.raw = __ldcs(vin + i);
#pragma unroll
    for (int k = 0; k < V; k++) count_one<RUNS>(v.e[k], rule, r, tg);
  }
  const size_t done = head + nvec * V;
  if (tid < n - done) count_one<RUNS>(in[done + tid], rule, r, tg);
  if (RUNS && r.count) tg.add(r.bin, r.count);
}

/* Adds 1 to the counter at a shared-window address, as a reduction (red: no value comes back);
 * the address is computed once per element by count_even_f32 instead of through a pointer. */
__device__ __forceinline__ void shared_inc(uint32_t addr) {
  asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr) : "memory");
}

/* f32 under the even rule (not wide) on the privatised path. count_input spends about
 * 28 instructions on an element here (a convergence region per test, 64-bit bins), which at
 * the read rate fills most of the SM's issue slots. This loop bins each group of
 * HIST_UNROLL vectors with even_rule_of::fast4 (about 8 instructions an element, no branch)
 * and adds to the counters with one address computation each. A group that fast4 declines
 * (an element out of range, near a bin edge, or not finite; every group when use_f is
 * false) leaves the loop; each of its values is tested again alone (fast1), only those that
 * fail are counted with bin(), and the loop then resumes after the group. With many bins a
 * fair share of groups holds one value near an edge, and the others then stay on the fast
 * test. Keeping that rare path out of the loop keeps its registers out of the loop's. */
template <typename Rule>
__device__ __forceinline__ void count_even_f32(const float *in, size_t n, size_t head,
                                               const Rule &rule, const shared_target &tg) {
  typedef pp_vec16<float> vec;
  run r = {(size_t)-1, 0};
  const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  if (tid < head) count_one<false>(in[tid], rule, r, tg);
  const size_t nvec = (n - head) / 4;
  const uint4 *vin = reinterpret_cast<const uint4 *>(in + head);
  /* this lane's copy of bin 0 as a shared-window address, and the bytes from a bin to the next */
  const uint32_t lane_base = (uint32_t)__cvta_generic_to_shared(tg.counters);
  const uint32_t bin_bytes = 4u << tg.copy_shift;
  size_t i = tid;
  for (;;) {
    vec v[HIST_UNROLL];
    bool declined = false;
    for (; i + (HIST_UNROLL - 1) * stride < nvec; i += HIST_UNROLL * stride) {
#pragma unroll
      for (int u = 0; u < HIST_UNROLL; u++) v[u].raw = __ldcs(vin + i + u * stride);
      uint32_t b[HIST_UNROLL][4];
      bool ok = rule.use_f;
#pragma unroll
      for (int u = 0; u < HIST_UNROLL; u++) ok = ok & rule.fast4(v[u].e, b[u]);
      if (!ok) {
        declined = true;
        break;
      }
#pragma unroll
      for (int u = 0; u < HIST_UNROLL; u++)
#pragma unroll
        for (int k = 0; k < 4; k++)
          shared_inc(lane_base + b[u][k] * bin_bytes);
    }
    if (!declined) break;
#pragma unroll
    for (int u = 0; u < HIST_UNROLL; u++)
#pragma unroll
      for (int k = 0; k < 4; k++) {
        /* x opaque to the compiler, so that it tests x again here rather than keeping the
         * loop's bins live (and spilled) until this rare path */
        float x = v[u].e[k];
        asm volatile("" : "+f"(x));
        uint32_t b;
        if (rule.use_f && rule.fast1(x, b))
          shared_inc(lane_base + b * bin_bytes);
        else
          count_one<false>(x, rule, r, tg);
      }
    i += HIST_UNROLL * stride;
  }
  for (; i < nvec; i += stride) {
    vec v;
    v.raw = __ldcs(vin + i);
#pragma unroll
    for (int k = 0; k < 4; k++) count_one<false>(v.e[k], rule, r, tg);
  }
  const size_t done = head + nvec * 4;
  if (tid < n - done) count_one<false>(in[done + tid], rule, r, tg);
}

/* Whether hist_shared_kernel<T, Rule> counts with count_even_f32. */
template <typename T, typename Rule>
struct hist_fast {
  static constexpr bool value = false;
};
template <>
struct hist_fast<float, even_rule_of<false>> {
  static constexpr bool value = true;
};

/* The three words of the overwrite hand-over in the context's scratch: tickets drawn, the
 * first block's "counts written" flag, blocks finished. Zero between launches. */
struct hist_sync {
  unsigned ticket, written, finished;
};

/* The sum of one bin's copies (copies a power of two up to 32) as lane `lane` reads them,
 * starting at copy lane: with 32 copies the 32 lanes of a warp read 32 different banks (in
 * copy order every read would be a 32-way conflict: 8192 cycles per block for 256 bins,
 * which all blocks spend at the same time at the end of the kernel). The sum fits 32 bits:
 * a block sees fewer than 2^32 elements per launch. */
__device__ __forceinline__ uint32_t sum_copies(const uint32_t *bin, int copies, int lane) {
  uint32_t s = 0;
  for (int c = 0; c < copies; c++) s += bin[(c + lane) & (copies - 1)];
  return s;
}

/* Adds a block's shared counters ([bin][copy], copies a power of two up to 32) to the
 * global counts [first_bin, +bins), one thread per bin, each summing its bin's copies
 * (sum_copies).
 *
 * With sync (the first launch over these bins), counts may hold anything: the first block
 * to get here stores its sums into all of them (zeros included) and the others add theirs
 * once it has, which saves a memset launch before the kernel. Nothing can deadlock: only
 * blocks that are already running wait, and only on one that is running and waits on
 * nothing. The last block to finish returns the hand-over's words to zero. */
__device__ __forceinline__ void flush_counters(const uint32_t *sh, size_t bins, int copies,
                                               size_t first_bin, unsigned long long *counts,
                                               hist_sync *sync) {
  __shared__ bool writer;
  if (sync) {
    if (threadIdx.x == 0) writer = atomicAdd(&sync->ticket, 1u) == 0;
    __syncthreads();
    if (!writer) {
      if (threadIdx.x == 0) {
        while (atomicAdd(&sync->written, 0u) == 0) __nanosleep(100);
        __threadfence(); /* the writer's stores are seen before this block's adds */
      }
      __syncthreads();
    }
  }
  const bool store = sync && writer;
  const int lane = threadIdx.x % PP_WARP;
  for (size_t b = threadIdx.x; b < bins; b += HIST_THREADS) {
    const uint32_t s = sum_copies(sh + b * (size_t)copies, copies, lane);
    if (store)
      counts[first_bin + b] = s;
    else if (s)
      atomicAdd(counts + first_bin + b, (unsigned long long)s);
  }
  if (!sync) return;
  if (store) {
    __threadfence(); /* every thread's stores are visible device-wide before the flag */
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(&sync->written, 1u);
  }
  /* every block has drawn its ticket and seen the flag before the last one finishes */
  if (threadIdx.x == 0 && atomicAdd(&sync->finished, 1u) == gridDim.x - 1) {
    sync->ticket = 0;
    sync->written = 0;
    sync->finished = 0;
  }
}

static int log2_of(int x) {
  int s = 0;
  while ((1 << s) < x) s++;
  return s;
}

/* Copies of bins counters that fit HIST_COPIES_BYTES (a power of two, 1..32). */
static int copies_for(size_t bins) {
  int copies = 1;
  while (copies < HIST_MAX_COPIES && (size_t)copies * 2 * bins * 4 <= HIST_COPIES_BYTES) copies *= 2;
  return copies;
}

/* ---- kernels ------------------------------------------------------------------------ */

/* Privatised: copies (a power of two) x bins u32 counters, then the rule's staged data.
 * Registers are fitted to HIST_SHARED_BLOCKS blocks per SM: left to itself the compiler
 * gives most instantiations 48 to 52 registers, two blocks per SM. */
template <typename T, typename Rule>
__global__ void __launch_bounds__(HIST_THREADS, HIST_SHARED_BLOCKS)
hist_shared_kernel(const T *in, size_t n, size_t head, Rule rule, int copies, bool staged,
                   unsigned long long *counts, hist_sync *sync) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t *sh = reinterpret_cast<uint32_t *>(smem);
  const size_t bins = rule.bins, words = (size_t)copies * bins;
  for (size_t i = threadIdx.x; i < words; i += blockDim.x) sh[i] = 0;
  double *extra = reinterpret_cast<double *>(smem + (words * 4 + 15) / 16 * 16);
  const Rule r = rule_stage(rule, extra, staged);
  __syncthreads();
  const shared_target tg = {sh + (threadIdx.x & (copies - 1)), 31 - __clz(copies)};
  if constexpr (hist_fast<T, Rule>::value)
    count_even_f32(in, n, head, r, tg);
  else
    count_input<false>(in, n, head, r, tg);
  __syncthreads();
  flush_counters(sh, bins, copies, 0, counts, sync);
}

/* What the first pass of hist_window_kernel saw, for the passes after it: the window it
 * counted, and the least and the largest bin among the counted elements outside that
 * window. Words in the context's scratch (span_words), cleared before the first pass. */
struct hist_span {
  unsigned not_least; /* ~least, gathered as a maximum: 0 (as cleared) while none is seen */
  unsigned most;
  unsigned first;
};

/* Privatised, for more bins than one block's shared memory holds: the bins are cut into
 * windows of `window` bins (the last one may be shorter), and each pass over the input
 * counts one window into one copy of its counters, flushed as hist_shared_kernel does
 * (the first launch of a pass overwrites the window's counts).
 *
 * The windows counted follow the data, without a round trip to the host. The host
 * launches one pass per window:
 *  - the first pass (FIRST) counts the window holding the bin of the input's first
 *    element (window 0 when that element is not counted), stores that window's index, and
 *    gathers the least and the largest bin it meets outside that window (hist_span: a
 *    thread keeps both in registers, a warp reduces them, a block folds its warps' in
 *    shared memory and adds one atomic per word to the span);
 *  - pass p >= 1 takes the p-th of the other windows in increasing order. When [least,
 *    most] misses it, no counted element falls into it: its blocks store zeros into its
 *    counts (first launch only) and return without reading the input.
 * All-equal data is read once wherever its bin lies, data in a narrow range once or twice,
 * and data spread over all the bins once per window. */
template <bool FIRST, typename T, typename Rule>
__global__ void __launch_bounds__(HIST_THREADS)
hist_window_kernel(const T *in, size_t n, size_t head, const T *in0, Rule rule, bool staged,
                   uint32_t window, uint32_t pass, unsigned long long *counts, hist_sync *sync,
                   hist_span *span) {
  const uint32_t bins = (uint32_t)rule.bins; /* at most a few windows */
  uint32_t w = 0;                            /* the window this pass counts */
  if (!FIRST) {
    const hist_span s = *span; /* written by the first pass, an earlier launch */
    w = pass - 1 < s.first ? pass - 1 : pass;
    const uint32_t first = w * window, end = min(first + window, bins);
    if (s.most < first || ~s.not_least >= end) { /* also when none was seen: ~0 >= end */
      if (sync)
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < end - first;
             i += (size_t)gridDim.x * blockDim.x)
          counts[first + i] = 0;
      return;
    }
  }
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ uint32_t block_span[2]; /* FIRST: the block's least and largest bin */
  uint32_t *sh = reinterpret_cast<uint32_t *>(smem);
  for (uint32_t i = threadIdx.x; i < window; i += blockDim.x) sh[i] = 0;
  if (FIRST && threadIdx.x == 0) {
    block_span[0] = UINT32_MAX;
    block_span[1] = 0;
  }
  double *extra = reinterpret_cast<double *>(smem + ((size_t)window * 4 + 15) / 16 * 16);
  const Rule r = rule_stage(rule, extra, staged);
  __syncthreads();
  if (FIRST) {
    size_t b;
    w = r.bin(in0[0], &b) ? (uint32_t)b / window : 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) span->first = w;
  }
  const uint32_t first = w * window, size = min(window, bins - first);
  if (FIRST) {
    first_pass_target tg;
    tg.counters = sh;
    tg.first = first;
    tg.size = size;
    tg.least = UINT32_MAX;
    tg.most = 0;
    count_input<false>(in, n, head, r, tg);
    const uint32_t least = __reduce_min_sync(0xffffffffu, tg.least);
    const uint32_t most = __reduce_max_sync(0xffffffffu, tg.most);
    if (threadIdx.x % PP_WARP == 0 && least <= most) {
      atomicMin(block_span, least);
      atomicMax(block_span + 1, most);
    }
  } else {
    const pass_target tg = {sh, first, size};
    count_input<false>(in, n, head, r, tg);
  }
  __syncthreads();
  if (FIRST && threadIdx.x == 0 && block_span[0] <= block_span[1]) {
    atomicMax(&span->not_least, ~block_span[0]);
    atomicMax(&span->most, block_span[1]);
  }
  flush_counters(sh, size, 1, first, counts, sync);
}

/* Distributed: block `rank` of each cluster owns bins [rank*slice, rank*slice + slice). */
template <typename T, typename Rule>
__global__ void __launch_bounds__(HIST_THREADS)
hist_cluster_kernel(const T *in, size_t n, size_t head, Rule rule, int slice_shift,
                    unsigned long long *counts) {
  const uint32_t slice = 1u << slice_shift;
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t *sh = reinterpret_cast<uint32_t *>(smem);
  cg::cluster_group cluster = cg::this_cluster();
  for (uint32_t i = threadIdx.x; i < slice; i += blockDim.x) sh[i] = 0;
  cluster.sync(); /* no block adds into a peer before the peer has cleared its slice */
  cluster_target tg = {sh, slice_shift};
  count_input<true>(in, n, head, rule, tg);
  cluster.sync(); /* every add into this block's slice has landed */
  const size_t first = (size_t)cluster.block_rank() * slice;
  if (first < rule.bins) {
    const size_t mine = rule.bins - first < slice ? rule.bins - first : slice;
    flush_counters(sh, mine, 1, first, counts, NULL);
  }
}

template <typename T, typename Rule>
__global__ void __launch_bounds__(HIST_THREADS)
hist_global_kernel(const T *in, size_t n, size_t head, Rule rule, unsigned long long *counts) {
  global_target tg = {counts};
  count_input<true>(in, n, head, rule, tg);
}

/* Counts a flat run of bytes, channel of the byte at offset p being p % C: 16-byte vectors
 * between a scalar head and tail. For a vector at byte offset head + 16 i the channel of
 * byte k is (head + k) % C when C divides 16, (head + i + k) % 3 for C == 3. */
template <int C>
__device__ __forceinline__ void count_bytes(const uint8_t *pixels, size_t n, size_t head,
                                            const shared_target &tg) {
  const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  if (tid < head) tg.add((size_t)(tid % C) * 256 + pixels[tid], 1);
  const size_t nvec = (n - head) / 16;
  const uint4 *vin = reinterpret_cast<const uint4 *>(pixels + head);
  const unsigned phase0 = (unsigned)(head % C);
  typedef pp_vec16<uint8_t> vec;
  size_t i = tid;
  for (; i + (HIST_UNROLL - 1) * stride < nvec; i += HIST_UNROLL * stride) {
    vec v[HIST_UNROLL];
#pragma unroll
    for (int u = 0; u < HIST_UNROLL; u++) v[u].raw = __ldcs(vin + i + u * stride);
#pragma unroll
    for (int u = 0; u < HIST_UNROLL; u++) {
      const unsigned ph = C == 3 ? (unsigned)((phase0 + (i + u * stride)) % 3) : phase0;
#pragma unroll
      for (int k = 0; k < 16; k++)
        tg.add(C == 1 ? v[u].e[k] : ((ph + k) % C) * 256 + v[u].e[k], 1);
    }
  }
  for (; i < nvec; i += stride) {
    vec v;
    v.raw = __ldcs(vin + i);
    const unsigned ph = C == 3 ? (unsigned)((phase0 + i) % 3) : phase0;
#pragma unroll
    for (int k = 0; k < 16; k++) tg.add(C == 1 ? v.e[k] : ((ph + k) % C) * 256 + v.e[k], 1);
  }
  const size_t done = head + nvec * 16;
  if (tid < n - done) tg.add(((done + tid) % C) * 256 + pixels[done + tid], 1);
}

/* Contiguous image (pitch == width * channels, or one row): a flat run of bytes. */
template <int C>
__global__ void __launch_bounds__(HIST_THREADS)
hist_image_flat_kernel(const uint8_t *pixels, size_t n, size_t head, int copies,
                       unsigned long long *counts, hist_sync *sync) {
  __shared__ uint32_t sh[HIST_COPIES_BYTES / 4];
  const int bins = C * 256;
  for (int i = threadIdx.x; i < copies * bins; i += blockDim.x) sh[i] = 0;
  __syncthreads();
  const shared_target tg = {sh + (threadIdx.x & (copies - 1)), 31 - __clz(copies)};
  count_bytes<C>(pixels, n, head, tg);
  __syncthreads();
  flush_counters(sh, (size_t)bins, copies, 0, counts, sync);
}

/* One-byte input under any bin rule. There are only 256 values, so a block counts values
 * exactly as a one-channel image is counted (32 copies of 256 counters: a warp's atomics
 * never conflict, whatever the data), then folds each value's count into the bin the rule
 * gives that value: the rule is evaluated 256 times per block instead of once per element,
 * and the kernel streams bytes at the image path's rate. The folded counters are flushed
 * as on the privatised path. */
template <typename Rule>
__global__ void __launch_bounds__(HIST_THREADS)
hist_bytes_kernel(const uint8_t *in, size_t n, size_t head, Rule rule,
                  unsigned long long *counts, hist_sync *sync) {
  __shared__ uint32_t sh[HIST_MAX_COPIES * 256];
  __shared__ uint32_t folded[HIST_BYTES_MAX_BINS];
  for (int i = threadIdx.x; i < HIST_MAX_COPIES * 256; i += blockDim.x) sh[i] = 0;
  for (size_t b = threadIdx.x; b < rule.bins; b += blockDim.x) folded[b] = 0;
  __syncthreads();
  const int shift = 31 - __clz(HIST_MAX_COPIES);
  const shared_target tg = {sh + (threadIdx.x & (HIST_MAX_COPIES - 1)), shift};
  count_bytes<1>(in, n, head, tg);
  __syncthreads();
  const int lane = threadIdx.x % PP_WARP;
  for (int v = threadIdx.x; v < 256; v += blockDim.x) {
    const uint32_t s = sum_copies(sh + v * HIST_MAX_COPIES, HIST_MAX_COPIES, lane);
    size_t b;
    if (s && rule.bin((uint8_t)v, &b)) atomicAdd(folded + b, s);
  }
  __syncthreads();
  flush_counters(folded, rule.bins, 1, 0, counts, sync);
}

/* The value itself as the bin (256 bins): hist_bytes_kernel under it counts the values. */
struct value_rule {
  size_t bins; /* 256 */
  template <typename T>
  __device__ __forceinline__ bool bin(T x, size_t *b) const {
    *b = (size_t)x;
    return true;
  }
};

/* Adds each value's count (counted under value_rule) into the bin the rule gives the value;
 * one block of 256 threads, into counts cleared before. */
template <typename Rule>
__global__ void __launch_bounds__(256)
hist_fold_kernel(const unsigned long long *values, Rule rule, unsigned long long *counts) {
  const unsigned v = threadIdx.x;
  size_t b;
  if (values[v] && rule.bin((uint8_t)v, &b)) atomicAdd(counts + b, values[v]);
}

/* ---- host side ---------------------------------------------------------------------- */

struct hist_device {
  int sm_count, smem_optin, smem_per_sm;
};

static pp_status device_limits(pp_context *ctx, const char *fn, hist_device *d) {
  pp_cuda_state *st = pp_cuda(ctx);
  d->sm_count = st->sm_count;
  PP_CUDA_TRY(ctx, cudaDeviceGetAttribute(&d->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                          st->device), fn);
  PP_CUDA_TRY(ctx, cudaDeviceGetAttribute(&d->smem_per_sm,
                                          cudaDevAttrMaxSharedMemoryPerMultiprocessor, st->device),
              fn);
  return PP_OK;
}

/* Elements before the first 16-byte boundary of in (all of them if n is smaller). */
template <typename T>
static size_t head_elems(const T *in, size_t n) {
  return pp_split16(in, n).head;
}

/* What a kernel needs before its launch on one device at one dynamic shared memory size:
 * the size allowed and how many blocks an SM holds (launch.cuh keeps both per device). */
template <typename Kernel>
static pp_status blocks_per_sm(pp_context *ctx, const char *fn, Kernel k, size_t smem,
                               pp_fit_cache *cache, int *per_sm) {
  pp_cuda_state *st = pp_cuda(ctx);
  PP_CUDA_TRY(ctx, pp_fit_smem(st, cache, k, smem), fn);
  *per_sm = pp_fit_blocks(st, cache, k, HIST_THREADS, smem, 1);
  return PP_OK;
}

/* Blocks for n elements: enough to fill the GPU (resident blocks per SM x SMs), no more
 * than there are vectors to share out. */
template <typename Kernel>
static pp_status grid_for(pp_context *ctx, const char *fn, Kernel k, size_t smem, size_t work,
                          pp_fit_cache *cache, unsigned *grid) {
  pp_cuda_state *st = pp_cuda(ctx);
  int per_sm = 1;
  PP_TRY(blocks_per_sm(ctx, fn, k, smem, cache, &per_sm));
  size_t g = (size_t)per_sm * (size_t)st->sm_count;
  const size_t need = pp_ceil_div(work ? work : 1, (size_t)HIST_THREADS * HIST_UNROLL);
  *grid = (unsigned)(need < g ? need : g);
  return PP_OK;
}

/* The hand-over words of a launch that overwrites the counts (the first launch of a
 * pass; later launches of a pass over more than launch_limit elements pass NULL and add). */
static hist_sync *sync_words(pp_context *ctx) {
  return reinterpret_cast<hist_sync *>((char *)pp_cuda(ctx)->scratch + PP_SCRATCH_HIST_SYNC);
}

/* Elements one launch may count: a block must see fewer than 2^32 of them. */
static size_t launch_limit(unsigned grid) { return (size_t)grid << 31; }

/* Counts all the bins in one pass over the input; the first launch overwrites them. */
template <typename T, typename Rule>
static pp_status hist_shared(pp_context *ctx, const char *fn, const T *in, size_t n, Rule rule,
                             int copies, bool staged, unsigned long long *counts) {
  static pp_fit_cache cache;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t counters = ((size_t)copies * rule.bins * 4 + 15) / 16 * 16;
  const size_t smem = counters + rule_smem_bytes(rule, staged);
  auto k = hist_shared_kernel<T, Rule>;
  unsigned grid = 1;
  PP_TRY(grid_for(ctx, fn, k, smem, n * sizeof(T) / 16, &cache, &grid));
  for (size_t off = 0, lim = launch_limit(grid); off < n; off += lim) {
    const size_t m = n - off < lim ? n - off : lim;
    k<<<grid, HIST_THREADS, smem, st->stream>>>(in + off, m, head_elems(in + off, m), rule, copies,
                                                staged, counts, off == 0 ? sync_words(ctx) : NULL);
    PP_CUDA_LAUNCHED(ctx, fn);
  }
  return PP_OK;
}

/* The hist_span words of the windowed path: the start of the scratch's partials, which
 * nothing else uses during the call. */
static hist_span *span_words(pp_context *ctx) {
  return reinterpret_cast<hist_span *>((char *)pp_cuda(ctx)->scratch + PP_SCRATCH_PARTIALS);
}

/* Counts the bins in windows of `window` bins, one pass over the input each
 * (hist_window_kernel); every count is overwritten. Both kernels' grids are settled before
 * anything is launched. */
template <typename T, typename Rule>
static pp_status hist_windows(pp_context *ctx, const char *fn, const T *in, size_t n, Rule rule,
                              bool staged, size_t window, unsigned long long *counts) {
  static pp_fit_cache cache_first, cache_rest;
  pp_cuda_state *st = pp_cuda(ctx);
  const size_t smem = (window * 4 + 15) / 16 * 16 + rule_smem_bytes(rule, staged);
  auto k_first = hist_window_kernel<true, T, Rule>;
  auto k_rest = hist_window_kernel<false, T, Rule>;
  unsigned g_first = 1, g_rest = 1;
  PP_TRY(grid_for(ctx, fn, k_first, smem, n * sizeof(T) / 16, &cache_first, &g_first));
  PP_TRY(grid_for(ctx, fn, k_rest, smem, n * sizeof(T) / 16, &cache_rest, &g_rest));
  hist_span *span = span_words(ctx);
  PP_CUDA_TRY(ctx, cudaMemsetAsync(span, 0, sizeof *span, st->stream), fn);
  const uint32_t passes = (uint32_t)pp_ceil_div(rule.bins, window);
  for (uint32_t p = 0; p < passes; p++) {
    const unsigned grid = p == 0 ? g_first : g_rest;
    for (size_t off = 0, lim = launch_limit(grid); off < n; off += lim) {
      const size_t m = n - off < lim ? n - off : lim;
      const size_t head = head_elems(in + off, m);
      hist_sync *sync = off == 0 ? sync_words(ctx) : NULL;
      if (p == 0)
        k_first<<<grid, HIST_THREADS, smem, st->stream>>>(in + off, m, head, in, rule, staged,
                                                          (uint32_t)window, p, counts, sync, span);
      else
        k_rest<<<grid, HIST_THREADS, smem, st->stream>>>(in + off, m, head, in, rule, staged,
                                                         (uint32_t)window, p, counts, sync, span);
      PP_CUDA_LAUNCHED(ctx, fn);
    }
  }
  return PP_OK;
}

template <typename T, typename Rule>
static pp_status hist_global(pp_context *ctx, const char *fn, const T *in, size_t n, Rule rule,
                             unsigned long long *counts) {
  static pp_fit_cache cache;
  pp_cuda_state *st = pp_cuda(ctx);
  auto k = hist_global_kernel<T, Rule>;
  unsigned grid = 1;
  PP_TRY(grid_for(ctx, fn, k, 0, n * sizeof(T) / 16, &cache, &grid));
  k<<<grid, HIST_THREADS, 0, st->stream>>>(in, n, head_elems(in, n), rule, counts);
  PP_CUDA_LAUNCHED(ctx, fn);
  return PP_OK;
}

/* false (and nothing launched) when no cluster of `size` blocks with `smem` bytes each
 * can be resident: the caller counts with global atomics instead. */
template <typename T, typename Rule>
static pp_status hist_cluster(pp_context *ctx, const char *fn, const T *in, size_t n, Rule rule,
                              unsigned size, unsigned long long *counts, bool *launched) {
  pp_cuda_state *st = pp_cuda(ctx);
  *launched = false;
  const int shift = log2_of((int)pp_ceil_div(rule.bins, size));
  const size_t smem = ((size_t)1 << shift) * 4;
  auto k = hist_cluster_kernel<T, Rule>;
  PP_CUDA_TRY(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
              fn);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = size;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(HIST_THREADS);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st->stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  cfg.gridDim = dim3(size);
  if (cudaOccupancyMaxActiveClusters(&clusters, k, &cfg) != cudaSuccess || clusters < 1) {
    (void)cudaGetLastError();
    return PP_OK;
  }
  size_t g = (size_t)clusters * size;
  const size_t need = pp_ceil_div(n * sizeof(T) / 16 + 1, (size_t)HIST_THREADS * HIST_UNROLL);
  if (need < g) g = need;
  g = pp_ceil_div(g, size) * size;
  cfg.gridDim = dim3((unsigned)g);
  for (size_t off = 0, lim = launch_limit((unsigned)g); off < n; off += lim) {
    const size_t m = n - off < lim ? n - off : lim;
    PP_CUDA_TRY(ctx, cudaLaunchKernelEx(&cfg, k, in + off, m, head_elems(in + off, m), rule, shift,
                                        counts),
                fn);
  }
  *launched = true;
  return PP_OK;
}

/* One-byte input counted by value (hist_bytes_kernel); overwrites the counts. More bins
 * than a block folds into (only 256 of them can be hit): the values are counted into the
 * scratch's partials, then the counts are cleared and the 256 value counts added to their
 * bins. */
template <typename Rule>
static pp_status hist_bytes(pp_context *ctx, const char *fn, const uint8_t *in, size_t n,
                            Rule rule, unsigned long long *counts) {
  if (rule.bins > HIST_BYTES_MAX_BINS) {
    pp_cuda_state *st = pp_cuda(ctx);
    unsigned long long *values =
        reinterpret_cast<unsigned long long *>((char *)st->scratch + PP_SCRATCH_PARTIALS);
    const value_rule vr = {256};
    PP_TRY(hist_bytes(ctx, fn, in, n, vr, values));
    PP_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, rule.bins * sizeof(uint64_t), st->stream), fn);
    hist_fold_kernel<Rule><<<1, 256, 0, st->stream>>>(values, rule, counts);
    PP_CUDA_LAUNCHED(ctx, fn);
    return PP_OK;
  }
  static pp_fit_cache cache;
  pp_cuda_state *st = pp_cuda(ctx);
  auto k = hist_bytes_kernel<Rule>;
  unsigned grid = 1;
  PP_TRY(grid_for(ctx, fn, k, 0, n / 16, &cache, &grid));
  for (size_t off = 0, lim = launch_limit(grid); off < n; off += lim) {
    const size_t m = n - off < lim ? n - off : lim;
    k<<<grid, HIST_THREADS, 0, st->stream>>>(in + off, m, head_elems(in + off, m), rule, counts,
                                             off == 0 ? sync_words(ctx) : NULL);
    PP_CUDA_LAUNCHED(ctx, fn);
  }
  return PP_OK;
}

/* Picks the path for bins counters and runs it. */
template <typename T, typename Rule>
static pp_status hist_run(pp_context *ctx, const char *fn, const void *vin, size_t n, Rule rule,
                          uint64_t *counts) {
  pp_cuda_state *st = pp_cuda(ctx);
  const T *in = (const T *)vin;
  unsigned long long *c = (unsigned long long *)counts;
  const size_t bins = rule.bins;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  if (n == 0)
    PP_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, bins * sizeof(uint64_t), st->stream), fn);
  if (n == 0) return PP_OK;
  if constexpr (sizeof(T) == 1) {
    return hist_bytes(ctx, fn, (const uint8_t *)vin, n, rule, c);
  } else {
    hist_device d;
    PP_TRY(device_limits(ctx, fn, &d));
    const size_t target = (size_t)d.smem_optin < HIST_SMEM_TARGET ? (size_t)d.smem_optin
                                                                   : HIST_SMEM_TARGET;
    if (bins * 4 <= target) {
      const int copies = copies_for(bins);
      const size_t counters = ((size_t)copies * bins * 4 + 15) / 16 * 16;
      const bool staged = counters + rule_smem_bytes(rule, true) <= target;
      return hist_shared(ctx, fn, in, n, rule, copies, staged, c);
    }
    /* A few passes over the input, each counting one window of the bins in shared memory,
     * beat any scheme that sends most atomics off the SM: a pass costs a read of the input,
     * while distributed shared memory (clusters) and global atomics cost several times that
     * (docs/benchmarks/ has the measurements). A window no value falls into costs no read
     * (hist_window_kernel). */
    const size_t window = target / 4;
    if (pp_ceil_div(bins, window) <= HIST_MAX_PASSES) {
      const bool staged = window * 4 + rule_smem_bytes(rule, true) <= (size_t)d.smem_optin / 2;
      return hist_windows(ctx, fn, in, n, rule, staged, window, c);
    }
    /* clusters and global atomics add into the counts */
    PP_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, bins * sizeof(uint64_t), st->stream), fn);
    /* the smallest cluster whose slices fit the target, else the largest one at the
     * opt-in limit (one block per SM) */
    for (unsigned size = 2; size <= HIST_MAX_CLUSTER; size *= 2) {
      const size_t slice_bytes = ((size_t)1 << log2_of((int)pp_ceil_div(bins, size))) * 4;
      const bool last = size == HIST_MAX_CLUSTER;
      if (slice_bytes <= target || (last && slice_bytes <= (size_t)d.smem_optin)) {
        bool launched = false;
        PP_TRY(hist_cluster(ctx, fn, in, n, rule, size, c, &launched));
        if (launched) return PP_OK;
        break;
      }
    }
    return hist_global(ctx, fn, in, n, rule, c);
  }
}

pp_status pp_cuda_histogram_even(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                 size_t bins, double lo, double hi, uint64_t *counts) {
  static const char fn[] = "pp_histogram_even";
  const even_rule base = make_even(bins, lo, hi);
  if (base.wide) {
    even_rule_of<true> rule;
    static_cast<even_rule &>(rule) = base;
    return pp_by_dtype(ctx, fn, t,
                       [&](auto x) { return hist_run<decltype(x)>(ctx, fn, in, n, rule, counts); });
  }
  even_rule_of<false> rule;
  static_cast<even_rule &>(rule) = base;
  return pp_by_dtype(ctx, fn, t,
                     [&](auto x) { return hist_run<decltype(x)>(ctx, fn, in, n, rule, counts); });
}

pp_status pp_cuda_histogram_range(pp_context *ctx, pp_dtype t, const void *in, size_t n,
                                  const double *edges, size_t bins, uint64_t *counts) {
  static const char fn[] = "pp_histogram_range";
  range_rule rule;
  rule.edges = edges;
  rule.bins = bins;
  return pp_by_dtype(ctx, fn, t, [&](auto x) {
    typedef decltype(x) T;
    if constexpr (std::is_same<T, float>::value) {
      const range_rule_f rf = {edges, NULL, bins, 0.0f, 0.0f, 0, 0};
      return hist_run<T>(ctx, fn, in, n, rf, counts);
    } else {
      return hist_run<T>(ctx, fn, in, n, rule, counts);
    }
  });
}

/* ---- images ------------------------------------------------------------------------- */

/* Pitched image: rows are counted in 16-byte chunks aligned to the address: chunk k of
 * row r covers [align16(row r) + 16k, +16); bytes outside the row are masked. A chunk
 * wholly inside its row is one vector load, an edge chunk is read byte by byte. */
template <int C>
__global__ void __launch_bounds__(HIST_THREADS)
hist_image_rows_kernel(const uint8_t *pixels, size_t row_bytes, size_t pitch,
                       size_t chunks_per_row, size_t chunks, int copies,
                       unsigned long long *counts, hist_sync *sync) {
  __shared__ uint32_t sh[HIST_COPIES_BYTES / 4];
  const int bins = C * 256;
  for (int i = threadIdx.x; i < copies * bins; i += blockDim.x) sh[i] = 0;
  __syncthreads();
  shared_target tg = {sh + (threadIdx.x & (copies - 1)), 31 - __clz(copies)};
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < chunks; i += stride) {
    const size_t row = i / chunks_per_row, k = i - row * chunks_per_row;
    const uint8_t *rowp = pixels + row * pitch, *end = rowp + row_bytes;
    const uint8_t *a = (const uint8_t *)((uintptr_t)rowp & ~(uintptr_t)15) + 16 * k;
    if (a >= end) continue;
    const long long off = (long long)(a - rowp); /* may be negative (-15..-1) */
    const int phase = (int)(((off % C) + C) % C);
    pp_vec16<uint8_t> v;
    unsigned valid = 0xffffu;
    if (a >= rowp && a + 16 <= end) {
      v.raw = __ldcs(reinterpret_cast<const uint4 *>(a));
    } else {
      valid = 0;
#pragma unroll
      for (int j = 0; j < 16; j++) {
        const bool in = a + j >= rowp && a + j < end;
        v.e[j] = in ? a[j] : 0;
        valid |= (unsigned)in << j;
      }
    }
#pragma unroll
    for (int j = 0; j < 16; j++)
      if (valid >> j & 1u) tg.add((size_t)((phase + j) % C) * 256 + v.e[j], 1);
  }
  __syncthreads();
  flush_counters(sh, (size_t)bins, copies, 0, counts, sync);
}

template <int C>
static pp_status image_launch(pp_context *ctx, const uint8_t *pixels, size_t row_bytes,
                              size_t height, size_t pitch, unsigned long long *counts) {
  static const char fn[] = "pp_histogram_image";
  pp_cuda_state *st = pp_cuda(ctx);
  const int copies = copies_for((size_t)C * 256);
  unsigned grid = 1;
  if (height == 1 || pitch == row_bytes) { /* one contiguous run of bytes */
    static pp_fit_cache cache;
    const size_t n = row_bytes * height;
    auto k = hist_image_flat_kernel<C>;
    PP_TRY(grid_for(ctx, fn, k, 0, n / 16, &cache, &grid));
    /* a block's counters stay below 2^32: pieces of at most grid * 2^31 bytes, cut at
     * multiples of 48 so that every piece starts on channel 0 */
    const size_t piece = ((size_t)grid << 31) / 48 * 48;
    for (size_t off = 0; off < n; off += piece) {
      const size_t m = n - off < piece ? n - off : piece;
      k<<<grid, HIST_THREADS, 0, st->stream>>>(pixels + off, m, head_elems(pixels + off, m), copies,
                                               counts, off == 0 ? sync_words(ctx) : NULL);
      PP_CUDA_LAUNCHED(ctx, fn);
    }
    return PP_OK;
  }
  static pp_fit_cache cache;
  const size_t per_row = (row_bytes + 15) / 16 + 1;
  auto k = hist_image_rows_kernel<C>;
  PP_TRY(grid_for(ctx, fn, k, 0, height * per_row, &cache, &grid));
  /* at most 2^27 chunks of 16 bytes per block and launch */
  size_t rows_per_launch = ((size_t)grid << 27) / per_row;
  if (rows_per_launch == 0) rows_per_launch = 1;
  for (size_t r0 = 0; r0 < height; r0 += rows_per_launch) {
    const size_t h = height - r0 < rows_per_launch ? height - r0 : rows_per_launch;
    k<<<grid, HIST_THREADS, 0, st->stream>>>(pixels + r0 * pitch, row_bytes, pitch, per_row,
                                             h * per_row, copies, counts,
                                             r0 == 0 ? sync_words(ctx) : NULL);
    PP_CUDA_LAUNCHED(ctx, fn);
  }
  return PP_OK;
}

pp_status pp_cuda_histogram_image(pp_context *ctx, const uint8_t *pixels, size_t width,
                                  size_t height, size_t pitch_bytes, int channels,
                                  uint64_t *counts) {
  static const char fn[] = "pp_histogram_image";
  pp_cuda_state *st = pp_cuda(ctx);
  unsigned long long *c = (unsigned long long *)counts;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  const size_t row_bytes = width * (size_t)channels;
  /* the kernels overwrite the counts, unless there are none to launch */
  if (row_bytes == 0 || height == 0)
    PP_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, (size_t)channels * 256 * sizeof(uint64_t),
                                     st->stream), fn);
  if (row_bytes == 0 || height == 0) return PP_OK;
  switch (channels) {
  case 1: return image_launch<1>(ctx, pixels, row_bytes, height, pitch_bytes, c);
  case 2: return image_launch<2>(ctx, pixels, row_bytes, height, pitch_bytes, c);
  case 3: return image_launch<3>(ctx, pixels, row_bytes, height, pitch_bytes, c);
  case 4: return image_launch<4>(ctx, pixels, row_bytes, height, pitch_bytes, c);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: channels (%d)", fn, channels);
}
