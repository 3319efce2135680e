/*
 * ladder/reduce_steps.cuh — the device side of the reduction ladder (ladder/reduce.cu):
 * the warp and block helpers, and the kernels of steps 2-10 with the one-block kernel that
 * adds their per-block partials. Included once, by reduce.cu, inside its anonymous
 * namespace; the steps and their sources are described there.
 */
/* ------------------------------------------------------------------------------------ */
/* Shared device helpers                                                                 */
/* ------------------------------------------------------------------------------------ */

// Elements of [start, start + block) that exist. Every launch below sizes its grid so that
// start < n; only the last block sees fewer than `block`, and the tree steps treat the
// missing ones as zeros by never reading or writing them (they may lie past the end of
// the array).
__device__ __forceinline__ unsigned valid_in_block(size_t start, size_t n, unsigned block) {
  const size_t left = n - start;
  return left < block ? (unsigned)left : block;
}

// Sum over the 32 lanes of a warp; lane 0 gets the total. __shfl_down_sync names the
// participating lanes and synchronises them itself, which is what makes warp-level code
// correct since Volta (see step 8).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Steps 5-9 first fold K consecutive data blocks of the block's segment into its first
// one: thread t adds x[start + t + j*B] for j < K and writes the sum to x[start + t].
// The K loads are independent, so they are all in flight at once (memory-level
// parallelism), and the tree that follows runs once per K*B elements instead of per B.
template <unsigned K>
__device__ __forceinline__ void fold_segment(float *g, size_t n, size_t start, unsigned tid,
                                             unsigned block) {
  const size_t i = start + tid;
  if (start + (size_t)K * block <= n) {  // whole segment present: no per-element test
    float v[K];
#pragma unroll
    for (unsigned j = 0; j < K; ++j) v[j] = g[i + (size_t)j * block];
    float s = v[0];
#pragma unroll
    for (unsigned j = 1; j < K; ++j) s += v[j];
    g[i] = s;
  } else if (i < n) {  // the last segment: add what exists
    float s = g[i];
#pragma unroll
    for (unsigned j = 1; j < K; ++j) {
      const size_t k = i + (size_t)j * block;
      if (k < n) s += g[k];
    }
    g[i] = s;
  }
}

// The block's slice of g, where its tree runs: steps 5-9 first fold K data blocks into
// the slice (fold_segment, then a barrier); steps 2-4 (K == 1) sum their B elements as they
// are. *m: how many elements of the slice exist.
template <unsigned K>
__device__ __forceinline__ float *block_slice(float *g, size_t n, unsigned block, unsigned *m) {
  const size_t start = (size_t)blockIdx.x * block * K;
  if (K > 1) {
    fold_segment<K>(g, n, start, threadIdx.x, block);
    __syncthreads();
  }
  *m = valid_in_block(start, n, block);
  return g + start;
}

// Step 4's tree over data[0..m) (the block's slice): thread t adds element t + stride, the
// stride halving from B/2 while it is above `stop`, one barrier per round. With stop == 0
// the sum ends in data[0]; with stop == 32 the 64 partial sums data[0..64) are left for
// one warp (steps 8 and 9).
__device__ __forceinline__ void tree_interleaved(float *data, unsigned m, unsigned tid,
                                                 unsigned block, unsigned stop) {
  for (unsigned stride = block / 2; stride > stop; stride >>= 1) {
    if (tid < stride && tid + stride < m) data[tid] += data[tid + stride];
    __syncthreads();
  }
}

// The last warp of steps 8 and 9: warp 0 adds data[0..64) (what of it exists, m) with
// shuffles and lane 0 writes the block's partial. Needs a block of at least 64 threads.
__device__ __forceinline__ void last_warp_partial(const float *data, unsigned m, unsigned tid,
                                                  float *partials) {
  if (tid < 32) {
    float v = (tid < m ? data[tid] : 0.0f) + (tid + 32 < m ? data[tid + 32] : 0.0f);
    v = warp_sum(v);
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

/* ------------------------------------------------------------------------------------ */
/* Step 2: neighboured pairs, divergent (PCCP 3)                                        */
/* ------------------------------------------------------------------------------------ */

// The starting point: each block sums its B elements in place in global memory. In round
// `stride` the thread whose index is a multiple of 2*stride adds its neighbour at +stride.
// Bottleneck: warp divergence. In round 1 half the lanes of every warp are idle, in
// round 2 three quarters, ..., yet until the stride reaches 32 every warp still holds an
// active lane and must issue the round, so each of those rounds costs as much as the
// first. The `%` by a run-time value is slow too, and the active threads touch
// addresses 2*stride apart (no coalescing).
// (The book returns early from threads past n and then reaches __syncthreads in the
// loop; here every thread stays for the barriers, and `tid + stride < m` keeps the reads
// inside the array.)
__global__ void reduce_neighboured_divergent(float *g, float *partials, size_t n) {
  const unsigned tid = threadIdx.x;
  unsigned m;
  float *data = block_slice<1>(g, n, blockDim.x, &m);
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if ((tid % (2 * stride)) == 0 && tid + stride < m) data[tid] += data[tid + stride];
    __syncthreads();  // the next round reads what this one wrote
  }
  if (tid == 0) partials[blockIdx.x] = data[0];
}

/* ------------------------------------------------------------------------------------ */
/* Step 3: neighboured pairs, less divergence (PCCP 3)                                  */
/* ------------------------------------------------------------------------------------ */

// Same pairs, different workers: thread t handles the pair starting at 2*stride*t, so the
// active threads are the lowest-numbered ones and whole warps go idle together. Idle
// warps issue nothing, which removes the divergence of step 2 (only the last rounds, with
// fewer than 32 active threads, still diverge) and the `%`.
// Remaining bottleneck: the active threads still access memory 2*stride elements apart,
// so each warp's loads and stores scatter over many memory transactions.
__global__ void reduce_neighboured_less_divergent(float *g, float *partials, size_t n) {
  const unsigned tid = threadIdx.x;
  unsigned m;
  float *data = block_slice<1>(g, n, blockDim.x, &m);
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    const unsigned index = 2 * stride * tid;  // < 2 * 512 * 1024, no overflow
    if (index + stride < m) data[index] += data[index + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = data[0];
}

/* ------------------------------------------------------------------------------------ */
/* Step 4: interleaved pairs; steps 5, 6, 7: unrolling x2, x4, x8 (PCCP 3)              */
/* ------------------------------------------------------------------------------------ */

// Step 4 (K = 1): pair element t with element t + stride, stride halving from B/2
// (tree_interleaved). The active threads are again the lowest ones, and now a warp reads
// and writes 32 consecutive floats: every access is coalesced. This removes step 3's
// scattered accesses.
// Remaining bottleneck: half the threads idle from the first round on; each thread loads
// one element from DRAM, so too few loads are in flight to cover memory latency, and
// the tree costs log2(B) barriers for only B elements.
//
// Steps 5-7 (K = 2, 4, 8): each block first adds K data blocks (fold_segment), then runs
// step 4's tree on the result. This removes step 4's latency bound: every thread has K
// independent loads in flight, the grid is K times smaller, and the barrier-bound tree is
// amortised over K*B elements. x2 -> x4 -> x8 shows how much more memory parallelism buys.
template <unsigned K>
__global__ void reduce_unrolled(float *g, float *partials, size_t n) {
  const unsigned tid = threadIdx.x;
  unsigned m;
  float *data = block_slice<K>(g, n, blockDim.x, &m);
  tree_interleaved(data, m, tid, blockDim.x, 0);
  if (tid == 0) partials[blockIdx.x] = data[0];
}

/* ------------------------------------------------------------------------------------ */
/* Step 8: unroll x8 + unrolled last warp (PCCP 3)                                      */
/* ------------------------------------------------------------------------------------ */

// Once 64 partial sums are left, one warp can finish them: the last six rounds need no
// __syncthreads and no loop, and the other warps of the block are free to retire. This
// removes the barriers and loop overhead of the last six rounds of step 7.
//
// The book does those rounds through a `volatile` pointer with no synchronisation at all
// ("a warp runs in lock-step"). Since Volta, threads of a warp are scheduled
// independently, so a lane may read its partner's slot before the partner has written
// it: that code races. The safe forms are a __syncwarp() between the read and the write
// of every round, or register shuffles, which synchronise the lanes they name. We use
// shuffles; they also keep the values in registers instead of memory.
__global__ void reduce_unrolled_last_warp(float *g, float *partials, size_t n) {
  const unsigned tid = threadIdx.x;
  unsigned m;
  float *data = block_slice<8>(g, n, blockDim.x, &m);
  tree_interleaved(data, m, tid, blockDim.x, 32);
  last_warp_partial(data, m, tid, partials);  // warp 0, all 32 lanes: blockDim.x >= 64
}

/* ------------------------------------------------------------------------------------ */
/* Step 9: complete unrolling, template on the block size (PCCP 3)                      */
/* ------------------------------------------------------------------------------------ */

// With the block size a compile-time constant the tree loop disappears: each round is a
// straight-line statement, the `if (B >= ...)` tests vanish at compile time, and the
// compiler can schedule across rounds. This removes the loop bookkeeping (counter,
// shift, compare, branch) that step 8 still pays per round; the host picks the
// instantiation for the requested block size.
// One round of the tree with stride S a compile-time constant: it exists only when the
// block has 2*S threads or more. The barrier sits inside a condition that is constant for
// the whole block.
template <unsigned B, unsigned S>
__device__ __forceinline__ void constant_stride_round(float *data, unsigned m, unsigned tid) {
  if (B >= 2 * S) {
    if (tid < S && tid + S < m) data[tid] += data[tid + S];
    __syncthreads();
  }
}

template <unsigned B>
__global__ void __launch_bounds__(B) reduce_complete_unroll(float *g, float *partials, size_t n) {
  const unsigned tid = threadIdx.x;
  unsigned m;
  float *data = block_slice<8>(g, n, B, &m);
  constant_stride_round<B, 512>(data, m, tid);
  constant_stride_round<B, 256>(data, m, tid);
  constant_stride_round<B, 128>(data, m, tid);
  constant_stride_round<B, 64>(data, m, tid);
  last_warp_partial(data, m, tid, partials);  // the same Volta-safe last warp as step 8
}

/* ------------------------------------------------------------------------------------ */
/* Finishing steps 2-9: one block adds the per-block partials                           */
/* ------------------------------------------------------------------------------------ */

// The book copies the partials to the host and adds them there. This kernel does the
// same work on the GPU (its time is part of every step 2-9): one block of 1024 threads,
// a strided loop over the partials, then warp sums. One block can use only one SM's
// bandwidth, which is why fewer partials (steps 5-9) also make this part cheaper.
constexpr unsigned kFinishThreads = 1024;

__global__ void __launch_bounds__(kFinishThreads)
    finish_partials(const float *partials, size_t count, float *out) {
  __shared__ float warp_totals[kFinishThreads / 32];
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  float s = 0.0f;
  for (size_t i = tid; i < count; i += kFinishThreads) s += partials[i];
  s = warp_sum(s);
  if (lane == 0) warp_totals[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = warp_sum(warp_totals[lane]);  // kFinishThreads / 32 == 32 slots, one per lane
    if (lane == 0) *out = s;
  }
}

/* ------------------------------------------------------------------------------------ */
/* Step 10: grid-stride loop + shared-memory tree + one atomic per block (camp)         */
/* ------------------------------------------------------------------------------------ */

// A different plan from steps 2-9: launch only as many blocks as the GPU holds at once
// and let each thread walk the input with a grid-sized stride, adding into a register.
// The input is read once and never written (steps 2-9 write partial sums back to global
// memory), the tree runs on shared memory, and one atomicAdd per block replaces the
// second pass, so no partials array and no second kernel remain.
// The exercise launches ceil(n/B) blocks, which makes the loop run once per thread and puts
// n/B atomics on one address; we size the grid from the occupancy calculator instead.
// The exercise also puts a second __syncthreads between reading and writing each round; one
// barrier per round is enough, because round `stride` reads only [stride, 2*stride) and
// writes only [0, stride).
// Costs left: one element per load (no vector loads), a full shared-memory tree with a
// barrier per round, and the float accumulation order depends on the atomics' order, so
// the result may differ in the last bits from run to run.
// The block's part of steps 10 and 10m: a grid-stride loop folds the thread's elements
// into a register with op, then a shared-memory tree (blockDim.x floats of dynamic shared
// memory) folds the block's; thread 0 gets the block's result.
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class Op>
__device__ __forceinline__ float grid_stride_block_fold(const float *in, size_t n, float init,
                                                        Op op) {
  extern __shared__ float smem_fold[];
  const unsigned tid = threadIdx.x;
  float v = init;
  const size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + tid; i < n; i += step) v = op(v, in[i]);
  smem_fold[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) smem_fold[tid] = op(smem_fold[tid], smem_fold[tid + stride]);
    __syncthreads();
  }
  return smem_fold[0];
}

__global__ void reduce_grid_stride_atomic_sum(const float *in, float *out, size_t n) {
  const float s = grid_stride_block_fold(in, n, 0.0f, SumOp());
  if (threadIdx.x == 0) atomicAdd(out, s);  // *out was zeroed before the launch
}

// Step 10m, the exercise's MAX. There is no atomicMax for float, and the exercise's int
// version cannot take float bits directly: floats are sign-magnitude, so as two's-complement ints
// two negative floats compare the wrong way round (-1.0f has a larger int than -2.0f).
// The int-bit trick, with the sign handled: map each float to an unsigned key whose
// order is the float order, by setting the sign bit of non-negative floats and
// inverting all bits of negative ones; then unsigned atomicMax is a float max. Key 0 lies
// below the key of -inf, so zeroing *out initialises it. (NaN would map above +inf; this
// teaching step does not ignore NaN as pp_reduce does, and the input has none.)
__device__ __forceinline__ unsigned float_to_ordered_key(float f) {
  const unsigned b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

float ordered_key_to_float(unsigned key) {  // host-side inverse of float_to_ordered_key
  const unsigned b = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

__global__ void reduce_grid_stride_atomic_max(const float *in, unsigned *out_key, size_t n) {
  const float v = grid_stride_block_fold(in, n, -INFINITY, MaxOp());
  if (threadIdx.x == 0) atomicMax(out_key, float_to_ordered_key(v));
}
