/*
 * ladder/scan_steps.cuh — the steps of the prefix-sum ladder (ladder/scan.cu): the kernels
 * of steps 2-5, 8 and 11, the steps as launchable units, the input data and the CPU
 * references. Included once, by scan.cu, where it stands; the steps and their sources are
 * described there.
 */
/* ------------------------------------------------------------------------------------ */
/* Step 2: Hillis-Steele within a block, double-buffered                                 */
/* ------------------------------------------------------------------------------------ */

constexpr unsigned kHsTile = 1024;  // one element per thread

// The naive parallel scan: in round k every element adds the one 2^k places to its
// left, so after log2(B) rounds each holds the sum of everything up to it. It does about
// B*log2(B) additions where a serial scan does B: work-inefficient, and every round
// costs a barrier. (The book's scan_v1 is cruder still: each thread adds all elements
// before its own, from global memory.) Within a round thread t reads slot t - 2^k while
// thread t - 2^k writes its own slot; on one buffer that is a race, so each round reads
// one buffer and writes the other (the book's "double buffer"), which costs twice the
// shared memory.
// The kernel scans each block of B elements independently and leaves the block's total
// in tile_sums; scan_any_n below turns those into offsets.
// In place (in == out) is safe: a thread writes only the element it read.
static __global__ void __launch_bounds__(kHsTile)
    scan_hillis_steele_tile(const uint32_t *in, uint32_t *out, size_t n, uint32_t *tile_sums) {
  __shared__ uint32_t buf[2][kHsTile];
  const unsigned tid = threadIdx.x;
  const size_t i = (size_t)blockIdx.x * kHsTile + tid;
  const uint32_t x = i < n ? in[i] : 0u;  // 0, the identity, pads the last block
  buf[0][tid] = x;
  __syncthreads();
  unsigned src = 0;
  for (unsigned offset = 1; offset < kHsTile; offset *= 2) {
    const uint32_t v = buf[src][tid];
    buf[src ^ 1][tid] = tid >= offset ? v + buf[src][tid - offset] : v;
    src ^= 1;
    __syncthreads();  // the next round reads what this one wrote
  }
  const uint32_t inclusive = buf[src][tid];
  // Exclusive from inclusive by subtracting the element itself: exact, since u32
  // addition wraps and so has an inverse.
  if (i < n) out[i] = inclusive - x;
  if (tile_sums && tid == kHsTile - 1) tile_sums[blockIdx.x] = inclusive;
}

/* ------------------------------------------------------------------------------------ */
/* Steps 3, 4, 5: Blelloch's work-efficient scan, plain and padded                       */
/* ------------------------------------------------------------------------------------ */

constexpr unsigned kBlThreads = 1024;
constexpr unsigned kBlTile = 2 * kBlThreads;  // two elements per thread, as in the book

// Step 5's padding (GPU Gems 3, 39.2.3). In the sweeps, thread t touches slot
// stride*(2t+1)-1, so a warp's 32 addresses are 2*stride apart and fall into 32/(2*stride)
// banks at best: a 2-, 4-, ... 32-way bank conflict that serialises the access. One extra
// slot after every 32 (i >> 5) and another after every 1024 (i >> 10) shifts those
// addresses into different banks; for this tile that removes every conflict of both
// sweeps and of the loads. (The book's macro writes `n >> NUM_BANKS + n >> (2 *
// LOG_NUM_BANKS)`, which C parses as a shift by a sum; the intent is the two terms.)
template <bool PADDED>
static __device__ __forceinline__ unsigned bl_slot(unsigned i) {
  return PADDED ? i + (i >> 5) + (i >> 10) : i;
}

// Blelloch (1990): the up-sweep builds a tree of partial sums in place (B-1 additions),
// the root is replaced by the identity, and the down-sweep pushes prefixes back down the
// tree (B-1 additions and B-1 swaps), leaving the exclusive scan. 2(B-1) additions
// instead of step 2's B*log2(B), and two elements per thread, so one block covers 2048.
// (The book's down-sweep keeps the root and adds left to right, giving the inclusive
// scan; the swap form gives the exclusive one directly.)
// Step 3 runs this once, on one block, which is all the book's version can do; steps 4
// and 5 run it per block and leave each block's total in tile_sums.
// Remaining cost: 2*log2(2048) barriers per block, half the threads idle from the first
// round on, and (without PADDED) bank conflicts that grow with the stride.
template <bool PADDED>
static __global__ void __launch_bounds__(kBlThreads)
    scan_blelloch_tile(const uint32_t *in, uint32_t *out, size_t n, uint32_t *tile_sums) {
  constexpr unsigned kSlots = PADDED ? kBlTile + (kBlTile >> 5) + (kBlTile >> 10) : kBlTile;
  __shared__ uint32_t s[kSlots];
  const unsigned tid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * kBlTile;
  // Threads load t and t + 1024, so each warp reads 128 consecutive bytes twice.
  const unsigned a = tid, b = tid + kBlThreads;
  s[bl_slot<PADDED>(a)] = base + a < n ? in[base + a] : 0u;
  s[bl_slot<PADDED>(b)] = base + b < n ? in[base + b] : 0u;

  unsigned stride = 1;
  for (unsigned active = kBlTile / 2; active > 0; active >>= 1) {  // up-sweep
    __syncthreads();
    if (tid < active) {
      const unsigned left = stride * (2 * tid + 1) - 1, right = stride * (2 * tid + 2) - 1;
      s[bl_slot<PADDED>(right)] += s[bl_slot<PADDED>(left)];
    }
    stride *= 2;
  }
  // Only thread 0 wrote the root in the last round, so it may read it without a barrier.
  if (tid == 0) {
    const unsigned root = bl_slot<PADDED>(kBlTile - 1);
    if (tile_sums) tile_sums[blockIdx.x] = s[root];
    s[root] = 0u;
  }
  for (unsigned active = 1; active < kBlTile; active *= 2) {  // down-sweep
    stride >>= 1;
    __syncthreads();
    if (tid < active) {
      const unsigned left = bl_slot<PADDED>(stride * (2 * tid + 1) - 1);
      const unsigned right = bl_slot<PADDED>(stride * (2 * tid + 2) - 1);
      const uint32_t t = s[left];
      s[left] = s[right];
      s[right] += t;
    }
  }
  __syncthreads();
  // Every block read its whole tile before this point, so in == out is safe.
  if (base + a < n) out[base + a] = s[bl_slot<PADDED>(a)];
  if (base + b < n) out[base + b] = s[bl_slot<PADDED>(b)];
}

/* ------------------------------------------------------------------------------------ */
/* Any n: scan the block sums, add them back                                             */
/* ------------------------------------------------------------------------------------ */

constexpr unsigned kAddThreads = 256;

// Block b + 1 adds the (already scanned) total of all tiles before tile b + 1 to each of
// its elements; tile 0's offset is 0, so it gets no block. This pass reads and writes
// the output once more: the block-wise scan moves 16n bytes, not the 8n of one pass.
static __global__ void __launch_bounds__(kAddThreads)
    add_tile_offsets(uint32_t *out, size_t n, const uint32_t *tile_offsets, unsigned tile) {
  const size_t t = (size_t)blockIdx.x + 1;
  const uint32_t add = tile_offsets[t];
  const size_t begin = t * tile;
  const size_t end = begin + tile < n ? begin + tile : n;
  for (size_t i = begin + threadIdx.x; i < end; i += kAddThreads) out[i] += add;
}

enum scan_tile_kind { TILE_HILLIS_STEELE, TILE_BLELLOCH, TILE_BLELLOCH_PADDED };

static unsigned tile_elems(scan_tile_kind k) { return k == TILE_HILLIS_STEELE ? kHsTile : kBlTile; }

// Block totals of every level of the recursion, back to back: level 1 has ceil(n/T),
// level 2 ceil(level1/T), ..., down to the first level that fits in one block (which
// writes none).
static size_t level_sums_needed(size_t n, size_t tile) {
  size_t total = 0;
  for (size_t blocks = ceil_div(n, tile); blocks > 1; blocks = ceil_div(blocks, tile))
    total += blocks;
  return total;
}

// Exclusive scan of in[0, n) into out (in == out allowed) with one of the tile kernels:
// scan every tile and keep its total, scan the totals the same way (recursively, in
// place, using the rest of `sums` for the next level), then add each tile's offset.
// The grid fits: n <= 2^36 (checked at parsing) gives at most 2^26 blocks.
static bool scan_any_n(scan_tile_kind k, const uint32_t *in, uint32_t *out, size_t n,
                       uint32_t *sums, cudaStream_t stream) {
  if (n == 0) return true;
  const size_t tile = tile_elems(k);
  const size_t blocks = ceil_div(n, tile);
  uint32_t *totals = blocks > 1 ? sums : nullptr;
  switch (k) {
    case TILE_HILLIS_STEELE:
      scan_hillis_steele_tile<<<(unsigned)blocks, kHsTile, 0, stream>>>(in, out, n, totals);
      break;
    case TILE_BLELLOCH:
      scan_blelloch_tile<false><<<(unsigned)blocks, kBlThreads, 0, stream>>>(in, out, n, totals);
      break;
    case TILE_BLELLOCH_PADDED:
      scan_blelloch_tile<true><<<(unsigned)blocks, kBlThreads, 0, stream>>>(in, out, n, totals);
      break;
  }
  LADDER_CUDA_TRY(cudaGetLastError());
  if (blocks == 1) return true;
  if (!scan_any_n(k, sums, sums, blocks, sums + blocks, stream)) return false;
  add_tile_offsets<<<(unsigned)(blocks - 1), kAddThreads, 0, stream>>>(out, n, sums,
                                                                       (unsigned)tile);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Steps 8 and 11: pack and split as predicate -> scan -> scatter                        */
/* ------------------------------------------------------------------------------------ */

constexpr unsigned kMapThreads = 256;

// The predicate of every pack/split step: keep x when x > 0. NaN, -0.0 and +0.0 are not
// kept; positive subnormals are. pp_select(PP_GT, 0.0f) and the CUB functor below ask the
// same question.
static __host__ __device__ __forceinline__ bool keep_f32(float x) { return x > 0.0f; }

// Kernel 1 of 3: one flag per element. The flags go to memory as u32 so that the scan
// of step 5 can run on them unchanged; 4n bytes written and read back twice is the
// price of three separate kernels (CUB fuses all three into one pass).
static __global__ void __launch_bounds__(kMapThreads)
    flag_kept(const float *x, uint32_t *flags, size_t n) {
  const size_t i = (size_t)blockIdx.x * kMapThreads + threadIdx.x;
  if (i < n) flags[i] = keep_f32(x[i]) ? 1u : 0u;
}

// Kernel 3 of 3 (pack): the exclusive scan of the flags is each kept element's place in
// the output. The last thread also writes the count: its offset plus its own flag.
static __global__ void __launch_bounds__(kMapThreads)
    scatter_kept(const float *x, const uint32_t *flags, const uint32_t *offsets, size_t n,
                 float *out, uint64_t *count) {
  const size_t i = (size_t)blockIdx.x * kMapThreads + threadIdx.x;
  if (i >= n) return;
  const uint32_t f = flags[i];
  if (f) out[offsets[i]] = x[i];
  if (i == n - 1) *count = (uint64_t)offsets[i] + f;
}

// Kernel 3 of 3 (split): kept elements go to offsets[i], the others after all kept ones,
// to kept_total + (number of rejected elements before i) = kept_total + i - offsets[i].
// Both sequences keep their input order: the split is stable (Blelloch's split, the step
// radix sort is built on). Every thread needs kept_total; it reads the last offset and
// flag, two addresses the whole grid shares, which the caches serve.
// (The book's split_kernel is a different operation: it moves packed elements back to
// their original places, the inverse of pack.)
static __global__ void __launch_bounds__(kMapThreads)
    scatter_split(const float *x, const uint32_t *flags, const uint32_t *offsets, size_t n,
                  float *out, uint64_t *count) {
  const size_t i = (size_t)blockIdx.x * kMapThreads + threadIdx.x;
  if (i >= n) return;
  const size_t kept_total = (size_t)offsets[n - 1] + flags[n - 1];
  const size_t o = offsets[i];
  out[flags[i] ? o : kept_total + (i - o)] = x[i];
  if (i == n - 1) *count = kept_total;
}

// CUB takes the predicate as a functor object.
struct keep_f32_functor {
  __host__ __device__ bool operator()(const float &x) const { return keep_f32(x); }
};

/* ------------------------------------------------------------------------------------ */
/* The steps as launchable units                                                         */
/* ------------------------------------------------------------------------------------ */

enum scan_op { OP_SCAN, OP_PACK, OP_SPLIT };
enum scan_kind { KIND_CPU, KIND_KERNEL, KIND_PRODUCTION, KIND_CUB };

// Everything one configuration needs on the device. The pack/split pointers are NULL
// when n is too large for u32 flag offsets.
struct scan_env {
  size_t n;
  cudaStream_t stream;
  const uint32_t *scan_in;
  uint32_t *scan_out;
  uint32_t *level_sums;  // block totals of every recursion level (steps 2, 4, 5, 8, 11)
  size_t level_sums_len;
  const float *x;        // pack/split input
  float *packed;         // pack/split output
  uint32_t *flags;
  uint32_t *flag_offsets;
  uint64_t *count;       // kept elements (device)
  void *cub_temp;
  size_t cub_temp_bytes;
  pp_context *ctx;
};

// What one run of a step produced besides its output. A run function returns false only
// for a CUDA failure (g_fatal says which); a production call that returns an error sets
// `unsupported` (PP_ERR_UNSUPPORTED) or `failed`, with the library's text in note.
struct scan_outcome {
  bool unsupported;
  bool failed;
  char note[1024];
};

static bool run_step2(const scan_env *e, scan_outcome *) {
  return scan_any_n(TILE_HILLIS_STEELE, e->scan_in, e->scan_out, e->n, e->level_sums, e->stream);
}

static bool run_step3(const scan_env *e, scan_outcome *) {
  if (e->n == 0) return true;
  const size_t m = e->n < kBlTile ? e->n : kBlTile;
  scan_blelloch_tile<false><<<1, kBlThreads, 0, e->stream>>>(e->scan_in, e->scan_out, m, nullptr);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

static bool run_step4(const scan_env *e, scan_outcome *) {
  return scan_any_n(TILE_BLELLOCH, e->scan_in, e->scan_out, e->n, e->level_sums, e->stream);
}

static bool run_step5(const scan_env *e, scan_outcome *) {
  return scan_any_n(TILE_BLELLOCH_PADDED, e->scan_in, e->scan_out, e->n, e->level_sums,
                    e->stream);
}

static bool production_outcome(const scan_env *e, scan_outcome *o, const char *fn,
                               pp_status st) {
  if (st == PP_OK) return true;
  if (st == PP_ERR_UNSUPPORTED)
    o->unsupported = true;
  else
    o->failed = true;
  snprintf(o->note, sizeof o->note, "%s: %s: %s", fn, pp_status_string(st),
           pp_last_error(e->ctx));
  return true;
}

static bool run_step6(const scan_env *e, scan_outcome *o) {
  return production_outcome(e, o, "pp_scan",
                            pp_scan(e->ctx, PP_SUM, PP_U32, e->scan_in, e->scan_out, e->n, false));
}

static bool run_step7(const scan_env *e, scan_outcome *) {
  size_t bytes = e->cub_temp_bytes;
  LADDER_CUDA_TRY(cub::DeviceScan::ExclusiveSum(e->cub_temp, bytes, e->scan_in, e->scan_out,
                                         (int64_t)e->n, e->stream));
  return true;
}

// Kernels 1 and 2 of pack and split; the flags are scanned by step 5's scan.
static bool flag_and_scan(const scan_env *e) {
  const unsigned grid = (unsigned)ceil_div(e->n, kMapThreads);  // n < 2^32: grid < 2^24
  flag_kept<<<grid, kMapThreads, 0, e->stream>>>(e->x, e->flags, e->n);
  LADDER_CUDA_TRY(cudaGetLastError());
  return scan_any_n(TILE_BLELLOCH_PADDED, e->flags, e->flag_offsets, e->n, e->level_sums,
                    e->stream);
}

// Steps 8 and 11: kernels 1 and 2, then kernel 3, scatter (scatter_kept for pack,
// scatter_split for split).
typedef void (*scatter_kernel)(const float *x, const uint32_t *flags, const uint32_t *offsets,
                               size_t n, float *out, uint64_t *count);
static bool flag_scan_scatter(const scan_env *e, scatter_kernel scatter) {
  if (e->n == 0) {  // no kernel can run on an empty grid; the count still must be 0
    LADDER_CUDA_TRY(cudaMemsetAsync(e->count, 0, sizeof(uint64_t), e->stream));
    return true;
  }
  if (!flag_and_scan(e)) return false;
  scatter<<<(unsigned)ceil_div(e->n, kMapThreads), kMapThreads, 0, e->stream>>>(
      e->x, e->flags, e->flag_offsets, e->n, e->packed, e->count);
  LADDER_CUDA_TRY(cudaGetLastError());
  return true;
}

static bool run_step8(const scan_env *e, scan_outcome *) { return flag_scan_scatter(e, scatter_kept); }

static const float kZero = 0.0f;  // the pp_select / pp_partition threshold: x > 0

static bool run_step9(const scan_env *e, scan_outcome *o) {
  return production_outcome(
      e, o, "pp_select", pp_select(e->ctx, PP_F32, e->x, e->n, PP_GT, &kZero, e->packed, e->count));
}

static bool run_step10(const scan_env *e, scan_outcome *) {
  size_t bytes = e->cub_temp_bytes;
  LADDER_CUDA_TRY(cub::DeviceSelect::If(e->cub_temp, bytes, e->x, e->packed, e->count, (int64_t)e->n,
                                 keep_f32_functor(), e->stream));
  return true;
}

static bool run_step11(const scan_env *e, scan_outcome *) { return flag_scan_scatter(e, scatter_split); }

static bool run_step12(const scan_env *e, scan_outcome *o) {
  return production_outcome(e, o, "pp_partition",
                            pp_partition(e->ctx, PP_F32, e->x, e->n, PP_GT, &kZero, e->packed,
                                         e->count));
}

static bool run_step13(const scan_env *e, scan_outcome *) {
  size_t bytes = e->cub_temp_bytes;
  LADDER_CUDA_TRY(cub::DevicePartition::If(e->cub_temp, bytes, e->x, e->packed, e->count,
                                    (int64_t)e->n, keep_f32_functor(), e->stream));
  return true;
}

struct scan_step {
  const char *id;
  const char *name;
  scan_op op;
  scan_kind kind;
  bool one_block;      // step 3: only the first kBlTile elements are scanned
  bool rest_reversed;  // CUB's partition writes the rejected elements in reverse order
  bool (*run)(const scan_env *, scan_outcome *);
};

static const scan_step kSteps[] = {
    {"2", "Hillis-Steele, block of 1024, any n", OP_SCAN, KIND_KERNEL, false, false, run_step2},
    {"3", "Blelloch, one block of 2048 only", OP_SCAN, KIND_KERNEL, true, false, run_step3},
    {"4", "Blelloch per 2048 + scan of block sums", OP_SCAN, KIND_KERNEL, false, false, run_step4},
    {"5", "step 4 + padding, no bank conflicts", OP_SCAN, KIND_KERNEL, false, false, run_step5},
    {"6", "production pp_scan(SUM, U32, excl.)", OP_SCAN, KIND_PRODUCTION, false, false, run_step6},
    {"7", "cub::DeviceScan::ExclusiveSum", OP_SCAN, KIND_CUB, false, false, run_step7},
    {"8", "pack: predicate, scan (5), scatter", OP_PACK, KIND_KERNEL, false, false, run_step8},
    {"9", "production pp_select(F32, x > 0)", OP_PACK, KIND_PRODUCTION, false, false, run_step9},
    {"10", "cub::DeviceSelect::If", OP_PACK, KIND_CUB, false, false, run_step10},
    {"11", "split: predicate, scan (5), scatter", OP_SPLIT, KIND_KERNEL, false, false, run_step11},
    {"12", "production pp_partition(F32, x > 0)", OP_SPLIT, KIND_PRODUCTION, false, false,
     run_step12},
    {"13", "cub::DevicePartition::If", OP_SPLIT, KIND_CUB, false, true, run_step13},
};

constexpr size_t kNumSteps = sizeof kSteps / sizeof kSteps[0];
constexpr size_t kMaxRows = kNumSteps + 3;  // plus the three CPU rows

/* ------------------------------------------------------------------------------------ */
/* Data and CPU references                                                               */
/* ------------------------------------------------------------------------------------ */

// The f32 data sets. Mixed (the timing set): uniform in [-1, 1), about half kept, with a
// special value every 997 elements (NaN, +-0.0, +-inf, +-subnormal, FLT_MAX). --check
// adds AllKept and NoneKept, where the count is n or 0 and one of the two parts of a
// split is empty. The u32 scan input is the same in all three.
enum scan_data { DATA_MIXED, DATA_ALL_KEPT, DATA_NONE_KEPT };

static const char *data_name(scan_data d) {
  return d == DATA_MIXED ? "mixed" : d == DATA_ALL_KEPT ? "all-kept" : "none-kept";
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float f32_from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of_f32(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

// Full-range u32, so the sums wrap many times: the reference and every GPU step must
// agree modulo 2^32, which they do exactly whatever the order of the additions.
static void fill_u32(uint32_t *v, size_t n) {
  uint64_t state = 0x7363616e6c6164ull;  // fixed seed
  for (size_t i = 0; i < n; ++i) v[i] = (uint32_t)(splitmix64(&state) >> 32);
}

static void fill_f32(float *x, size_t n, scan_data d) {
  static const uint32_t kept_specials[] = {0x7f800000u /* +inf */, 0x00000001u /* subnormal */,
                                           0x7f7fffffu /* FLT_MAX */, 0x3f800000u /* 1 */};
  static const uint32_t rejected_specials[] = {0x7fc00000u /* NaN */, 0x80000000u /* -0.0 */,
                                               0x00000000u /* +0.0 */, 0xff800000u /* -inf */,
                                               0x80000001u /* -subnormal */,
                                               0xffc00000u /* -NaN */};
  uint64_t state = 0x7061636b73706c74ull;  // fixed seed
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(&state);
    const float u = (float)((int64_t)(r >> 40) - (1 << 23)) * (1.0f / (1 << 23));  // [-1, 1)
    const bool special = i % 997 == 5;
    const uint64_t k = i / 997;
    switch (d) {
      case DATA_MIXED:
        if (!special)
          x[i] = u;
        else if (k % 2)
          x[i] = f32_from_bits(kept_specials[(k / 2) % 4]);
        else
          x[i] = f32_from_bits(rejected_specials[(k / 2) % 6]);
        break;
      case DATA_ALL_KEPT:
        x[i] = special ? f32_from_bits(kept_specials[k % 4]) : fabsf(u) + 0x1p-24f;
        break;
      case DATA_NONE_KEPT:
        x[i] = special ? f32_from_bits(rejected_specials[k % 6]) : -fabsf(u);
        break;
    }
  }
}


struct scan_host {
  uint32_t *scan_in, *scan_ref, *scan_got;  // n each
  float *x;
  float *split_ref;  // the kept elements in order, then the rejected ones in order
  float *got;        // read-back of the pack/split output
  size_t kept;
  double cpu_ms[3];  // OP_SCAN, OP_PACK, OP_SPLIT
};

static void cpu_exclusive_scan(const uint32_t *in, uint32_t *out, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = sum;
    sum += in[i];
  }
}

static size_t cpu_pack(const float *x, size_t n, float *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (keep_f32(x[i])) out[k++] = x[i];
  return k;
}

static size_t cpu_split(const float *x, size_t n, float *out) {
  const size_t kept = cpu_pack(x, n, out);
  size_t k = kept;
  for (size_t i = 0; i < n; ++i)
    if (!keep_f32(x[i])) out[k++] = x[i];
  return kept;
}
