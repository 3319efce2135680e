/* merge_runs.cu — the stable merge of several sorted runs in one pass over memory: the
 * distributed sort's last step, where each rank merges the p runs the exchange brought it
 * (one per source rank, in rank order). Two runs go to merge.cu's merge path; from three
 * on, a tree of two-way merges would read and write every key once per level (two levels
 * for four runs), this reads and writes each once.
 *
 * Order. Elements are compared as (key in API.md's order, run, position in the run): all
 * distinct, and the merged sequence is exactly the sequence sorted by that triple, which
 * is the stable merge (a lower run's key before an equal key of a higher run).
 *
 * Cutting the output into tiles by samples (the splitting of "Parallel sorting by regular
 * sampling", Shi & Schaeffer 1992, used inside one GPU as in the multiway merges of
 * Leischner, Osipov & Sanders, "GPU sample sort", 2010, with exact ranks in place of an
 * approximate balance):
 *  1. every S-th key of each run (positions 0, S, 2S, ...) is a sample; mr_sample_kernel
 *     gathers them into one array, run by run, so that the searches below stay in L2;
 *  2. mr_rank_kernel gives each sample its index J among all samples in merged order (its
 *     index in its run plus, for every other run, a binary search in that run's samples);
 *     for J a multiple of G it also finds the sample's exact rank in every run: the run's
 *     samples bracket the rank to S - 1 keys, which one more binary search settles. These
 *     ranks are row J / G of the split table; the last row holds the run lengths.
 *  3. mr_merge_kernel: block g merges what lies between rows g and g + 1: a contiguous
 *     slice of every run, written at the sum of row g's ranks. A slice between two samples
 *     of the block's own rows holds fewer than S keys of each run besides those after the
 *     block's G samples, so a block has at most (G + p) S keys: with S = C / 2p and
 *     G = C / S - p that is at most C, the tile in shared memory, and about C / 2 on
 *     average.
 *
 * One tile. The block loads every run's slice into shared memory (coalesced, all of a
 * thread's loads issued before it stores), side by side in run order, so the tile is p
 * sorted segments (fewer than p when some are empty), padded with empty ones to a power of
 * two. It then merges neighbouring segments pairwise, level by level, between two shared
 * buffers: log2 p levels, each a merge path (Green, McColl & Bader 2012) inside shared
 * memory, every thread ITEMS consecutive outputs from a binary search for its start, the
 * thread that crosses the end of a pair's output going on with the next pair. Pairs carry
 * a 16-bit position per key through the levels, and the values, loaded beside the keys,
 * are gathered through it at the end. The tile leaves shared memory with coalesced stores.
 * Global memory sees each key and value read once and written once.
 */
#include "merge.cuh"

#include <type_traits>

#define MR_THREADS 256
#define MR_SEARCH_THREADS 256
/* Shared memory per merge block, at most (keys twice, positions twice, values once). */
#define MR_SHARED_BYTES 40960

/* The runs, by value in the kernels' parameters: run k holds n[k] keys from key index
 * at_k[k] and value index at_v[k]; its samples are s_base[k] .. s_base[k + 1] - 1. */
struct mr_runs {
  size_t at_k[PP_MERGE_RUNS_MAX], at_v[PP_MERGE_RUNS_MAX], n[PP_MERGE_RUNS_MAX];
  size_t s_base[PP_MERGE_RUNS_MAX + 1];
  int p;
};

/* The run that sample s belongs to: the last k with s_base[k] <= s (s < s_base[p]). */
__device__ __forceinline__ int mr_run_of(const mr_runs &r, size_t s) {
  int lo = 0, hi = r.p - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (r.s_base[mid] <= s)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

template <typename U>
__global__ void __launch_bounds__(MR_SEARCH_THREADS)
mr_sample_kernel(const U *__restrict__ keys, mr_runs r, size_t S, U *__restrict__ samples) {
  const size_t s = (size_t)blockIdx.x * MR_SEARCH_THREADS + threadIdx.x;
  if (s >= r.s_base[r.p]) return;
  const int k = mr_run_of(r, s);
  samples[s] = keys[r.at_k[k] + (s - r.s_base[k]) * S];
}

/* How many of x[lo, hi) come before v, for x sorted and lo known to be among them: a key
 * of a lower run (before_ties) comes before v when it is <= v, one of a higher run when it
 * is < v. */
template <typename U, int KIND, bool DESC>
__device__ __forceinline__ size_t mr_before(const U *__restrict__ x, size_t lo, size_t hi, U v,
                                            bool before_ties) {
  while (lo < hi) {
    const size_t m = lo + (hi - lo) / 2;
    const bool b = before_ties ? merge_le<U, KIND, DESC>(x[m], v) : !merge_le<U, KIND, DESC>(v, x[m]);
    if (b)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Step 2: rows[j * p + k] = how many keys of run k come before sample j * G in merged order
 * (for that sample's own run: its position), and rows[R * p + k] = n[k], R = ceil(ns / G). */
template <typename U, int KIND, bool DESC>
__global__ void __launch_bounds__(MR_SEARCH_THREADS)
mr_rank_kernel(const U *__restrict__ keys, const U *__restrict__ samples, mr_runs r, size_t S,
               size_t G, size_t *__restrict__ rows) {
  const size_t s = (size_t)blockIdx.x * MR_SEARCH_THREADS + threadIdx.x;
  const size_t ns = r.s_base[r.p];
  const int p = r.p;
  if (s == 0) {
    size_t *last = rows + (ns + G - 1) / G * (size_t)p;
    for (int k = 0; k < p; k++) last[k] = r.n[k];
  }
  if (s >= ns) return;
  const int q = mr_run_of(r, s);
  const size_t c = s - r.s_base[q];
  const U v = samples[s];
  size_t J = c;
  for (int k = 0; k < p; k++)
    if (k != q) J += mr_before<U, KIND, DESC>(samples, r.s_base[k], r.s_base[k + 1], v, k < q) - r.s_base[k];
  if (J % G) return;
  size_t *row = rows + J / G * (size_t)p;
  for (int k = 0; k < p; k++) {
    if (k == q) {
      row[k] = c * S;
      continue;
    }
    /* ck samples of run k come before v: positions up to (ck - 1) S do, ck S does not */
    const size_t ck = mr_before<U, KIND, DESC>(samples, r.s_base[k], r.s_base[k + 1], v, k < q) - r.s_base[k];
    const size_t hi = ck * S < r.n[k] ? ck * S : r.n[k];
    row[k] = ck ? mr_before<U, KIND, DESC>(keys + r.at_k[k], (ck - 1) * S + 1, hi, v, k < q) : 0;
  }
}

/* Step 3: block g merges the slices between rows g and g + 1 (VT: the value word, void for
 * keys alone). */
template <typename U, typename VT, int KIND, bool DESC, int ITEMS>
__global__ void __launch_bounds__(MR_THREADS)
mr_merge_kernel(const U *__restrict__ keys, const VT *__restrict__ vals, mr_runs r,
                const size_t *__restrict__ rows, U *__restrict__ out, VT *__restrict__ vout) {
  constexpr int C = MR_THREADS * ITEMS;
  constexpr bool HAS_V = !std::is_void<VT>::value;
  typedef typename std::conditional<HAS_V, VT, char>::type VW;
  static_assert(C <= 65536, "a position in the tile fits in 16 bits");
  /* sk[b][C]: one past the end is read (never used) by a merge cursor at a segment's end */
  __shared__ __align__(16) U sk[2][C + 1];
  __shared__ uint16_t sp[HAS_V ? 2 : 1][HAS_V ? C : 1];
  __shared__ VW sv[HAS_V ? C : 1];
  __shared__ int s_base[PP_MERGE_RUNS_MAX + 1]; /* segment k of the tile: [s_base[k], s_base[k+1]) */
  __shared__ size_t s_key[PP_MERGE_RUNS_MAX], s_val[PP_MERGE_RUNS_MAX], s_out;
  const int tid = threadIdx.x, p = r.p;
  int P2 = 1;
  while (P2 < p) P2 *= 2;
  const size_t g = blockIdx.x;
  if (tid < p) {
    const size_t lo = rows[g * p + tid], hi = rows[(g + 1) * p + tid];
    s_key[tid] = r.at_k[tid] + lo;
    if constexpr (HAS_V) s_val[tid] = r.at_v[tid] + lo;
    s_base[tid + 1] = (int)(hi - lo);
  }
  __syncthreads();
  if (tid == 0) { /* lengths into starts (p <= 64 adds); the padding segments are empty */
    size_t o = 0;
    for (int k = 0; k < p; k++) o += rows[g * p + k];
    s_out = o;
    s_base[0] = 0;
    for (int k = 1; k <= p; k++) s_base[k] += s_base[k - 1];
    for (int k = p + 1; k <= P2; k++) s_base[k] = s_base[p];
  }
  __syncthreads();
  const int m = s_base[p];

  /* load: output x of the tile's input layout comes from the segment holding it */
  U rk[ITEMS];
  VW rv[HAS_V ? ITEMS : 1];
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * MR_THREADS + tid;
    if (x < m) {
      int lo = 0, hi = p - 1; /* the last segment starting at or before x */
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (s_base[mid] <= x)
          lo = mid;
        else
          hi = mid - 1;
      }
      rk[it] = keys[s_key[lo] + (size_t)(x - s_base[lo])];
      if constexpr (HAS_V) rv[it] = vals[s_val[lo] + (size_t)(x - s_base[lo])];
    }
  }
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * MR_THREADS + tid;
    if (x < m) {
      sk[0][x] = rk[it];
      if constexpr (HAS_V) {
        sv[x] = rv[it];
        sp[0][x] = (uint16_t)x;
      }
    }
  }
  __syncthreads();

  /* levels: pairs of w-segment groups merge into 2w-segment groups */
  int cur = 0;
  for (int w = 1; w < P2; w *= 2) {
    const U *src = sk[cur];
    U *dst = sk[cur ^ 1];
    const int x0 = tid * ITEMS;
    if (x0 < m) {
      /* the pair u holding x0: the last u with s_base[2wu] <= x0 */
      int ulo = 0, uhi = P2 / (2 * w) - 1;
      while (ulo < uhi) {
        const int mid = (ulo + uhi + 1) / 2;
        if (s_base[2 * w * mid] <= x0)
          ulo = mid;
        else
          uhi = mid - 1;
      }
      int u = ulo;
      int a0 = s_base[2 * w * u], b0 = s_base[2 * w * u + w], b1 = s_base[2 * w * (u + 1)];
      /* this thread's split of the pair's output at d = x0 - a0 */
      const int d = x0 - a0, la = b0 - a0, lb = b1 - b0;
      int lo = d > lb ? d - lb : 0, hi = d < la ? d : la;
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (merge_le<U, KIND, DESC>(src[a0 + mid], src[b0 + d - 1 - mid]))
          lo = mid + 1;
        else
          hi = mid;
      }
      int ia = a0 + lo, ib = b0 + d - lo;
      U va = src[ia], vb = src[ib];
#pragma unroll
      for (int it = 0; it < ITEMS; it++) {
        const int x = x0 + it;
        if (x < m) {
          while (x == b1) { /* this pair is done: the next one starts here */
            u++;
            a0 = b1;
            b0 = s_base[2 * w * u + w];
            b1 = s_base[2 * w * (u + 1)];
            ia = a0;
            ib = b0;
            va = src[ia];
            vb = src[ib];
          }
          /* bitwise, not short-circuit: no branch per element */
          const bool take_b = (ib < b1) & ((ia >= b0) | !merge_le<U, KIND, DESC>(va, vb));
          dst[x] = take_b ? vb : va;
          if constexpr (HAS_V) sp[cur ^ 1][x] = sp[cur][take_b ? ib : ia];
          ia += !take_b;
          ib += take_b;
          const U next = src[take_b ? ib : ia];
          va = take_b ? va : next;
          vb = take_b ? next : vb;
        }
      }
    }
    __syncthreads();
    cur ^= 1;
  }

  /* store, coalesced */
  const size_t o = s_out;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    const int x = it * MR_THREADS + tid;
    if (x < m) {
      out[o + x] = sk[cur][x];
      if constexpr (HAS_V) vout[o + x] = sv[sp[cur][x]];
    }
  }
}

/* Shared bytes per key of a tile besides the keys' two copies: a value and two positions. */
template <typename VT>
struct mr_value_bytes {
  static constexpr int value = (int)sizeof(VT) + 2 * (int)sizeof(uint16_t);
};
template <>
struct mr_value_bytes<void> {
  static constexpr int value = 0;
};

/* Items per thread: the most, up to 15, whose shared memory fits MR_SHARED_BYTES; odd, so
 * that a thread's consecutive outputs fall in distinct banks across a warp. */
template <typename U, typename VT>
constexpr int mr_items() {
  constexpr int per = 2 * (int)sizeof(U) + mr_value_bytes<VT>::value;
  constexpr int most = MR_SHARED_BYTES / (MR_THREADS * per) < 15 ? MR_SHARED_BYTES / (MR_THREADS * per) : 15;
  return most % 2 ? most : most - 1;
}

template <typename U, typename VT, int KIND, bool DESC>
static pp_status mr_launch(pp_context *ctx, const char *fn, const U *keys, const void *values,
                           mr_runs &r, U *out, void *vout) {
  pp_cuda_state *st = pp_cuda(ctx);
  constexpr int ITEMS = mr_items<U, VT>();
  static_assert(ITEMS >= 3, "a tile of at least three keys a thread");
  constexpr size_t C = (size_t)MR_THREADS * ITEMS;
  const size_t p = (size_t)r.p;
  const size_t S = C / (2 * p), G = C / S - p; /* p <= 64: S >= 1, G >= p (header) */
  size_t ns = 0, n = 0;
  for (size_t k = 0; k < p; k++) {
    n += r.n[k];
    r.s_base[k] = ns;
    ns += (r.n[k] + S - 1) / S;
  }
  r.s_base[p] = ns;
  const size_t tiles = (ns + G - 1) / G;
  if (tiles > 0x7fffffffu)
    return pp_fail(ctx, PP_ERR_OVERFLOW, "%s: %zu keys need more tiles than a grid holds", fn, n);
  const size_t row_bytes = ((tiles + 1) * p * sizeof(size_t) + 15) & ~(size_t)15;
  size_t *rows = NULL;
  PP_TRY(ctx->ops->temp_alloc(ctx, (void **)&rows, row_bytes + ns * sizeof(U)));
  U *samples = reinterpret_cast<U *>(reinterpret_cast<char *>(rows) + row_bytes);
  const unsigned sgrid = (unsigned)((ns + MR_SEARCH_THREADS - 1) / MR_SEARCH_THREADS);
  mr_sample_kernel<U><<<sgrid, MR_SEARCH_THREADS, 0, st->stream>>>(keys, r, S, samples);
  mr_rank_kernel<U, KIND, DESC><<<sgrid, MR_SEARCH_THREADS, 0, st->stream>>>(keys, samples, r, S, G, rows);
  mr_merge_kernel<U, VT, KIND, DESC, ITEMS><<<(unsigned)tiles, MR_THREADS, 0, st->stream>>>(
      keys, static_cast<const VT *>(values), r, rows, out, static_cast<VT *>(vout));
  const cudaError_t e = cudaGetLastError();
  ctx->ops->temp_free(ctx, rows);
  return e == cudaSuccess ? PP_OK : pp_cuda_fail(ctx, e, fn, __FILE__, __LINE__);
}

template <typename U, typename VT>
static pp_status mr_typed(pp_context *ctx, const char *fn, pp_dtype t, pp_order order, const void *keys,
                          const void *values, mr_runs &r, void *out, void *vout) {
  const U *k = (const U *)keys;
  U *o = (U *)out;
  const bool desc = order == PP_DESCENDING;
#define MR_LAUNCH(KIND, DESC) mr_launch<U, VT, KIND, DESC>(ctx, fn, k, values, r, o, vout)
  if constexpr (sizeof(U) > 1) {
    switch (pp_key_kind_of(t)) {
    case PP_KEY_SIGNED: return desc ? MR_LAUNCH(PP_KEY_SIGNED, true) : MR_LAUNCH(PP_KEY_SIGNED, false);
    case PP_KEY_FLOAT: return desc ? MR_LAUNCH(PP_KEY_FLOAT, true) : MR_LAUNCH(PP_KEY_FLOAT, false);
    default: break;
    }
  }
  return desc ? MR_LAUNCH(PP_KEY_UNSIGNED, true) : MR_LAUNCH(PP_KEY_UNSIGNED, false);
#undef MR_LAUNCH
}

template <typename U>
static pp_status mr_values(pp_context *ctx, const char *fn, pp_dtype t, pp_order order, const void *keys,
                           const void *values, size_t vs, mr_runs &r, void *out, void *vout) {
  switch (vs) {
  case 0: return mr_typed<U, void>(ctx, fn, t, order, keys, values, r, out, vout);
  case 4: return mr_typed<U, uint32_t>(ctx, fn, t, order, keys, values, r, out, vout);
  default: return mr_typed<U, uint64_t>(ctx, fn, t, order, keys, values, r, out, vout);
  }
}

pp_status pp_cuda_merge_runs(pp_context *ctx, pp_dtype key_t, pp_order order, const void *keys,
                             const void *values, size_t value_size, const size_t *run_k,
                             const size_t *run_v, const size_t *run_n, size_t runs,
                             void *out_keys, void *out_values) {
  static const char fn[] = "pp_sort (merge of runs)";
  const size_t es = pp_dtype_size(key_t), vs = values ? value_size : 0;
  const char *k = (const char *)keys, *v = (const char *)values;
  if (runs > PP_MERGE_RUNS_MAX)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: %zu runs (at most %d)", fn, runs, PP_MERGE_RUNS_MAX);
  if (vs != 0 && vs != 4 && vs != 8)
    return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: value_size (%zu)", fn, vs);
  /* the non-empty runs: none is a plain copy, two are merge.cu's */
  mr_runs r;
  r.p = 0;
  for (size_t i = 0; i < runs; i++) {
    if (!run_n[i]) continue;
    r.at_k[r.p] = run_k[i];
    r.at_v[r.p] = vs ? run_v[i] : 0;
    r.n[r.p++] = run_n[i];
  }
  if (r.p == 0) return PP_OK;
  PP_TRY(pp_cuda_use_device(ctx, fn));
  cudaStream_t stream = pp_cuda(ctx)->stream;
  if (r.p == 1) {
    PP_CUDA_TRY(ctx, cudaMemcpyAsync(out_keys, k + r.at_k[0] * es, r.n[0] * es, cudaMemcpyDeviceToDevice, stream),
                fn);
    if (vs)
      PP_CUDA_TRY(ctx,
                  cudaMemcpyAsync(out_values, v + r.at_v[0] * vs, r.n[0] * vs, cudaMemcpyDeviceToDevice, stream),
                  fn);
    return PP_OK;
  }
  if (r.p == 2)
    return vs ? pp_cuda_merge_pairs(ctx, key_t, k + r.at_k[0] * es, v + r.at_v[0] * vs, r.n[0],
                                    k + r.at_k[1] * es, v + r.at_v[1] * vs, r.n[1], out_keys, out_values,
                                    vs, order)
              : pp_cuda_merge(ctx, key_t, k + r.at_k[0] * es, r.n[0], k + r.at_k[1] * es, r.n[1], out_keys,
                              order);
  switch (es) {
  case 1: return mr_values<uint8_t>(ctx, fn, key_t, order, keys, values, vs, r, out_keys, out_values);
  case 4: return mr_values<uint32_t>(ctx, fn, key_t, order, keys, values, vs, r, out_keys, out_values);
  case 8: return mr_values<uint64_t>(ctx, fn, key_t, order, keys, values, vs, r, out_keys, out_values);
  }
  return pp_fail(ctx, PP_ERR_INVALID_ARGUMENT, "%s: key_t (%d)", fn, (int)key_t);
}
