/* reduce.cu — pp_reduce and pp_argreduce on the GPU.
 *
 * One kernel launch per call, whatever n (no second pass, no allocation): a grid of at
 * most REDUCE_BLOCKS_PER_SM blocks per SM walks the input grid-stride, tile by tile, with
 * 16-byte loads, all UNROLL of a thread's loads in a tile issued before any is used (so a
 * block that has one tile to do waits for DRAM once, not twice); each block reduces in
 * registers, shuffles and shared memory, publishes a partial in the context's scratch, and
 * the last block to finish combines the partials and writes the result
 * (pp_last_block_done).
 *
 * Arithmetic (API.md):
 *  - integer SUM wraps in the type: accumulated in the unsigned type of the same width
 *    (u8 in 32 bits, truncated at the end);
 *  - f32 SUM: the four floats of a 16-byte load are added pairwise in f32, then each
 *    thread accumulates in double, so the error stays far inside pairwise summation's
 *    while the conversions (a quarter of the elements) stay off the critical path;
 *  - float MIN/MAX: NaN is "nothing seen yet" (all NaN gives NaN), -0.0 orders below
 *    +0.0 so the result does not depend on the order of combination;
 *  - argreduce: (value, index) pairs; ties and NaN resolved by index, so the first index
 *    wins wherever each element was visited.
 */
#include "arith.cuh"
#include "common.cuh"
#include "cuda_backend.h"
#include "dispatch.cuh"
#include "launch.cuh"

#include <type_traits>

/* Tuning, measured against CUB (docs/benchmarks/h100.md). A tile is THREADS x UNROLL
 * 16-byte vectors. BLOCKS_PER_SM caps the grid (4 x 256 threads x 8 loads = 128 KB in
 * flight per SM: fewer or more blocks per SM were slower) and, given to __launch_bounds__,
 * gives ptxas the registers (up to 64) to keep all 8 loads of a tile in flight: left to
 * itself it kept 32 registers and issued only a few loads before the first use. */
#define REDUCE_THREADS 256
#define REDUCE_UNROLL 8
#define REDUCE_BLOCKS_PER_SM 4

/* ---- operators: Acc, identity, combine, from (one element), result ---------------------- */

/* Wrapping integer sums and f64 sums. */
template <typename T, typename A>
struct op_sum {
  typedef A Acc;
  static __device__ A identity() { return A(0); }
  static __device__ A combine(A a, A b) { return a + b; }
  static __device__ A from(T x, size_t) { return A(x); }
  static __device__ T result(A a, size_t) { return T(a); }
};

/* f32 sums: double accumulation (see the file comment). */
struct op_sum_f32 : op_sum<float, double> {
  static constexpr bool pairwise_f32 = true;
};

/* arith.cuh's min_rule / max_rule for floats in four instructions: fmin / fmax already
 * take the number over a NaN (IEEE 754-2008 minNum / maxNum, as the CUDA math API
 * documents them; two NaN give a NaN), and when the operands compare equal (-0.0 and
 * +0.0 among them) the OR of their bit patterns is the -0.0 for MIN, the AND the +0.0
 * for MAX, and either is the common value otherwise. This runs once per element. */
__device__ __forceinline__ uint32_t float_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ float bits_float(uint32_t b) { return __uint_as_float(b); }
__device__ __forceinline__ unsigned long long float_bits(double x) { return __double_as_longlong(x); }
__device__ __forceinline__ double bits_float(unsigned long long b) { return __longlong_as_double(b); }
template <bool IS_MIN, typename F>
__device__ __forceinline__ F fold_minmax(F a, F b) {
  const F r = IS_MIN ? fmin(a, b) : fmax(a, b);
  if (!(a == b)) return r;
  return bits_float(IS_MIN ? float_bits(a) | float_bits(b) : float_bits(a) & float_bits(b));
}

/* MIN/MAX accumulate in T (u8 in 32 bits so shuffles see whole words). For floats the
 * identity is NaN ("nothing yet") and result() turns an empty input into +-inf. */
template <typename T, typename A, bool IS_MIN>
struct op_minmax {
  typedef A Acc;
  static __device__ A identity() {
    if constexpr (is_float<T>()) return A(NAN);
    return IS_MIN ? A(limits<T>::highest()) : A(limits<T>::lowest());
  }
  static __device__ A combine(A a, A b) {
    if constexpr (is_float<T>()) return fold_minmax<IS_MIN>(a, b);
    return IS_MIN ? min_rule(a, b) : max_rule(a, b);
  }
  static __device__ A from(T x, size_t) { return A(x); }
  static __device__ T result(A a, size_t n) {
    if (n == 0) return IS_MIN ? limits<T>::highest() : limits<T>::lowest();
    return T(a);
  }
};

/* argmin/argmax pairs: index UINT64_MAX marks the identity. */
template <typename T>
struct arg_pair {
  T value;
  uint64_t index;
};

template <typename T, bool IS_MIN>
struct op_arg {
  typedef arg_pair<T> Acc;
  static __device__ Acc identity() {
    Acc a;
    if constexpr (is_float<T>())
      a.value = T(NAN);
    else
      a.value = IS_MIN ? limits<T>::highest() : limits<T>::lowest();
    a.index = UINT64_MAX;
    return a;
  }
  static __device__ Acc combine(Acc a, Acc b) {
    bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an != bn) return an ? b : a; /* a number beats NaN */
    if (!an) {
      if (IS_MIN ? b.value < a.value : b.value > a.value) return b;
      if (IS_MIN ? a.value < b.value : a.value > b.value) return a;
    }
    return b.index < a.index ? b : a; /* ties (and all-NaN): first index */
  }
  static __device__ Acc from(T x, size_t i) {
    Acc a;
    a.value = x;
    a.index = i;
    return a;
  }
  /* combine(a, from(x, i)) when i is above every index a holds (a thread folds its
   * elements in index order): x wins only when strictly better, or when a holds a NaN and
   * x a number; a tie keeps a, the lower index. The identity (index UINT64_MAX) gives way
   * to anything, a NaN included. A few predicates instead of combine's. */
  static __device__ Acc step(Acc a, T x, size_t i) {
    const bool better = IS_MIN ? !(a.value <= x) : !(a.value >= x); /* also: a is NaN */
    if ((better && !is_nan(x)) || a.index == UINT64_MAX) {
      a.value = x;
      a.index = i;
    }
    return a;
  }
};

/* ---- the kernel ---------------------------------------------------------------------- */

/* argreduce folds a thread's elements in index order with op_arg::step. */
template <typename Op> struct folds_in_order {
  static constexpr bool value = false;
};
template <typename T, bool IS_MIN> struct folds_in_order<op_arg<T, IS_MIN>> {
  static constexpr bool value = true;
};

template <typename Op> struct wants_pairwise_f32 {
  static constexpr bool value = false;
};
template <> struct wants_pairwise_f32<op_sum_f32> {
  static constexpr bool value = true;
};

/* One 16-byte load of data read exactly once: evict-first, so the stream does not push
 * the caller's other data out of L2. */
__device__ __forceinline__ uint4 load_once(const uint4 *p) { return __ldcs(p); }

/* Fold one 16-byte vector (V elements starting at element index first) into acc. */
template <typename T, typename Op>
__device__ __forceinline__ typename Op::Acc fold_vector(typename Op::Acc acc, uint4 raw,
                                                        size_t first) {
  constexpr int V = 16 / sizeof(T);
  pp_vec16<T> u;
  u.raw = raw;
  if constexpr (wants_pairwise_f32<Op>::value) {
    return acc + double((u.e[0] + u.e[1]) + (u.e[2] + u.e[3]));
  } else if constexpr (std::is_same<Op, op_sum<uint8_t, uint32_t>>::value) {
    /* u8 sums: dp4a against 1,1,1,1 adds four bytes into the 32-bit sum in one
     * instruction (few registers, so all of a tile's loads stay in flight) */
    return __dp4a(raw.w, 0x01010101u,
                  __dp4a(raw.z, 0x01010101u, __dp4a(raw.y, 0x01010101u, __dp4a(raw.x, 0x01010101u, acc))));
  } else if constexpr (folds_in_order<Op>::value) {
#pragma unroll
    for (int j = 0; j < V; j++) acc = Op::step(acc, u.e[j], first + j);
    return acc;
  } else {
#pragma unroll
    for (int j = 0; j < V; j++) acc = Op::combine(acc, Op::from(u.e[j], first + j));
    return acc;
  }
}

/* Each thread's share of in[0, n): the unaligned head and the tail (fewer than V
 * elements each) go to the first threads of the grid; the 16-byte body is walked in tiles
 * of THREADS*UNROLL vectors, block b taking tiles b, b + grid, b + 2*grid, ... (this
 * grid-stride order read faster than one contiguous range per block).
 * In every tile, the last one included, all of a thread's loads are issued before the
 * first is folded. */
template <typename T, typename Op, int THREADS, int UNROLL>
__device__ __forceinline__ typename Op::Acc thread_share(const T *__restrict__ in, size_t n) {
  typedef typename Op::Acc A;
  constexpr int V = 16 / sizeof(T);
  A acc = Op::identity();
  const pp_vec_split sp = pp_split16(in, n);
  const size_t head = sp.head, nvec = sp.nvec, tail_begin = sp.tail_begin;
  const size_t tid = (size_t)blockIdx.x * THREADS + threadIdx.x;
  if (tid < head) acc = Op::combine(acc, Op::from(in[tid], tid));
  /* the tail after the body for argreduce, whose body folds in index order */
  if (!folds_in_order<Op>::value && tid < n - tail_begin)
    acc = Op::combine(acc, Op::from(in[tail_begin + tid], tail_begin + tid));

  const uint4 *__restrict__ body = reinterpret_cast<const uint4 *>(in + head);
  const size_t tile = (size_t)THREADS * UNROLL, stride = (size_t)gridDim.x * tile;
  for (size_t base = (size_t)blockIdx.x * tile; base < nvec; base += stride) {
    const size_t first = base + threadIdx.x;
    uint4 r[UNROLL];
    if (base + tile <= nvec) {
#pragma unroll
      for (int u = 0; u < UNROLL; u++) r[u] = load_once(body + first + u * THREADS);
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
        acc = fold_vector<T, Op>(acc, r[u], head + (first + u * THREADS) * V);
    } else { /* the last, partial tile: the same, under a predicate */
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
        r[u] = first + u * THREADS < nvec ? load_once(body + first + u * THREADS) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
        if (first + u * THREADS < nvec)
          acc = fold_vector<T, Op>(acc, r[u], head + (first + u * THREADS) * V);
    }
  }
  if (folds_in_order<Op>::value && tid < n - tail_begin)
    acc = Op::combine(acc, Op::from(in[tail_begin + tid], tail_begin + tid));
  return acc;
}

/* Reduce the block's value, then let the last block combine all partials. Returns true in
 * thread 0 of the block that holds the final value in *result. */
template <typename Op, int THREADS>
__device__ __forceinline__ bool finish_grid(typename Op::Acc acc, typename Op::Acc *partials,
                                            unsigned *counter, typename Op::Acc *result) {
  typedef typename Op::Acc A;
  acc = pp_block_reduce<Op, THREADS>(acc);
  if (gridDim.x == 1) {
    *result = acc;
    return threadIdx.x == 0;
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  if (!pp_last_block_done(counter)) return false;
  A all = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS)
    all = Op::combine(all, pp_load_cg(partials + b));
  all = pp_block_reduce<Op, THREADS>(all);
  *result = all;
  return threadIdx.x == 0;
}

template <typename T, typename Op, int THREADS, int UNROLL>
__global__ void __launch_bounds__(THREADS, REDUCE_BLOCKS_PER_SM)
reduce_kernel(const T *__restrict__ in, size_t n, T *out, typename Op::Acc *partials,
              unsigned *counter) {
  typename Op::Acc acc = thread_share<T, Op, THREADS, UNROLL>(in, n), total;
  if (finish_grid<Op, THREADS>(acc, partials, counter, &total)) *out = Op::result(total, n);
}

template <typename T, bool IS_MIN, int THREADS, int UNROLL>
__global__ void __launch_bounds__(THREADS, REDUCE_BLOCKS_PER_SM)
argreduce_kernel(const T *__restrict__ in, size_t n, T *value_out, uint64_t *index_out,
                 arg_pair<T> *partials, unsigned *counter) {
  typedef op_arg<T, IS_MIN> Op;
  typename Op::Acc acc = thread_share<T, Op, THREADS, UNROLL>(in, n), total;
  if (finish_grid<Op, THREADS>(acc, partials, counter, &total)) {
    if (n == 0) { /* the pp_reduce identity, index 0 */
      *value_out = IS_MIN ? limits<T>::highest() : limits<T>::lowest();
      *index_out = 0;
    } else {
      *value_out = total.value; /* all NaN: the first NaN, index 0 */
      *index_out = total.index;
    }
  }
}

/* ---- host side ----------------------------------------------------------------------- */

/* One block per tile up to REDUCE_BLOCKS_PER_SM blocks per SM (fewer if registers allow
 * fewer), at most what the scratch holds: small n gets one tile per block, one DRAM round
 * trip per thread, and no block that has nothing to do. */
template <typename Kernel>
static unsigned grid_for(pp_cuda_state *st, Kernel kernel, pp_fit_cache *fit, size_t n,
                         size_t elem_size, size_t partial_size) {
  int per_sm = pp_fit_blocks(st, fit, kernel, REDUCE_THREADS, 0, 1);
  if (per_sm > REDUCE_BLOCKS_PER_SM) per_sm = REDUCE_BLOCKS_PER_SM;
  size_t vectors = n / (16 / elem_size);
  size_t want = pp_ceil_div(vectors, (size_t)REDUCE_THREADS * REDUCE_UNROLL);
  size_t wave = (size_t)st->sm_count * (size_t)per_sm;
  size_t room = (PP_CUDA_SCRATCH_BYTES - PP_SCRATCH_PARTIALS) / partial_size;
  size_t g = want < wave ? want : wave;
  g = g < room ? g : room;
  return g ? (unsigned)g : 1u;
}

template <typename T, typename Op>
static pp_status launch_reduce(pp_context *ctx, const void *in, size_t n, void *out) {
  pp_cuda_state *st = pp_cuda(ctx);
  typedef typename Op::Acc A;
  static pp_fit_cache fit;
  auto kernel = reduce_kernel<T, Op, REDUCE_THREADS, REDUCE_UNROLL>;
  unsigned grid = grid_for(st, kernel, &fit, n, sizeof(T), sizeof(A));
  char *scratch = (char *)st->scratch;
  kernel<<<grid, REDUCE_THREADS, 0, st->stream>>>(
      (const T *)in, n, (T *)out, (A *)(scratch + PP_SCRATCH_PARTIALS), (unsigned *)(scratch + PP_SCRATCH_COUNTER));
  PP_CUDA_LAUNCHED(ctx, "pp_reduce");
  return PP_OK;
}

template <typename T, typename SumAcc>
static pp_status reduce_typed(pp_context *ctx, pp_op op, const void *in, size_t n, void *out) {
  typedef typename std::conditional<sizeof(T) < 4, uint32_t, T>::type MinMaxAcc;
  switch (op) {
  case PP_SUM:
    if constexpr (std::is_same<T, float>::value)
      return launch_reduce<T, op_sum_f32>(ctx, in, n, out);
    else
      return launch_reduce<T, op_sum<T, SumAcc>>(ctx, in, n, out);
  case PP_MIN: return launch_reduce<T, op_minmax<T, MinMaxAcc, true>>(ctx, in, n, out);
  case PP_MAX: return launch_reduce<T, op_minmax<T, MinMaxAcc, false>>(ctx, in, n, out);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "pp_reduce: op (%d)", (int)op);
}

pp_status pp_cuda_reduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                         void *out) {
  PP_TRY(pp_cuda_use_device(ctx, "pp_reduce"));
  return pp_by_dtype(ctx, "pp_reduce", t, [&](auto x) {
    typedef decltype(x) T;
    return reduce_typed<T, typename pp_sum_acc<T>::type>(ctx, op, in, n, out);
  });
}

template <typename T>
static pp_status argreduce_typed(pp_context *ctx, pp_op op, const void *in, size_t n,
                                 void *value_out, uint64_t *index_out) {
  pp_cuda_state *st = pp_cuda(ctx);
  auto kernel = op == PP_MIN ? argreduce_kernel<T, true, REDUCE_THREADS, REDUCE_UNROLL>
                             : argreduce_kernel<T, false, REDUCE_THREADS, REDUCE_UNROLL>;
  static pp_fit_cache fit[2];
  unsigned grid = grid_for(st, kernel, &fit[op == PP_MIN], n, sizeof(T), sizeof(arg_pair<T>));
  char *scratch = (char *)st->scratch;
  kernel<<<grid, REDUCE_THREADS, 0, st->stream>>>((const T *)in, n, (T *)value_out, index_out,
                                                  (arg_pair<T> *)(scratch + PP_SCRATCH_PARTIALS),
                                                  (unsigned *)(scratch + PP_SCRATCH_COUNTER));
  PP_CUDA_LAUNCHED(ctx, "pp_argreduce");
  return PP_OK;
}

pp_status pp_cuda_argreduce(pp_context *ctx, pp_op op, pp_dtype t, const void *in, size_t n,
                            void *value_out, uint64_t *index_out) {
  PP_TRY(pp_cuda_use_device(ctx, "pp_argreduce"));
  return pp_by_dtype(ctx, "pp_argreduce", t, [&](auto x) {
    return argreduce_typed<decltype(x)>(ctx, op, in, n, value_out, index_out);
  });
}
