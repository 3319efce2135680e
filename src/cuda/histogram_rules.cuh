/* histogram_rules.cuh — the bin rules of histogram.cu: where a value falls for
 * pp_histogram_even (even_rule_of, made by make_even) and pp_histogram_range (range_rule,
 * and range_rule_f for f32 input), and what a rule stages in shared memory per block
 * (rule_smem_bytes, rule_stage). The rules are exactly those of API.md, as src/cpu/histogram.c
 * evaluates them; histogram.cu's header says how. Included by histogram.cu only. */
#ifndef PP_CUDA_HISTOGRAM_RULES_CUH
#define PP_CUDA_HISTOGRAM_RULES_CUH

#include "arith.cuh"
#include "common.cuh"

#include <cfloat>
#include <stdint.h>

/* The float approximation of the even rule is used while its error bound stays below
 * this (beyond it too many values would need the exact formula). */
#define HIST_FLOAT_MAX_ERR 0.02

/* ---- bin rules ---------------------------------------------------------------------- */

/* The even rule's data (make_even); even_rule_of<WIDE> adds the binning. */
struct even_rule {
  double lo, hi, width, binsd, scale;
  size_t bins;
  /* wide ranges: the power of two 2^-e, the scaled lo and bin width (src/cpu/histogram.c) */
  bool wide;
  double wide_scale, lo_s, step_s;
  /* f32 input: the float approximation and the float bounds of [lo, hi); c_f = fl(-lo *
   * scale), the addend of the fused form fma(x, scale_f, c_f), and fast_err_f = err_f / 2,
   * the distance from an integer that form must keep (even_rule_of::fast1) */
  bool use_f;
  float lo_f, scale_f, err_f, lo_ceil, hi_ceil, c_f, fast_err_f;
};

/* The binning, compiled apart for wide ranges (WIDE = rule.wide, chosen on the host): in
 * the common kernels the wide case is not there at all, so no call to its out-of-line
 * search sits in the counting loop (a call there costs the loop a stack frame and the
 * registers the calling convention keeps, and with them most of its occupancy). */
template <bool WIDE>
struct even_rule_of : even_rule {
  /* Wide ranges: a guess, then the bin whose scaled edges fma(i, step_s, lo_s) hold x.
   * Out of line, so the rare case adds no registers to the counting loops. */
  __device__ __noinline__ size_t wide_bin(double v) const {
    const double x = v * wide_scale;
    double q = floor((x - lo_s) / step_s);
    if (!(q < binsd - 1.0)) q = binsd - 1.0;
    if (q < 0.0) q = 0.0;
    while (q > 0.0 && x < fma(q, step_s, lo_s)) q -= 1.0;
    while (q + 1.0 < binsd && x >= fma(q + 1.0, step_s, lo_s)) q += 1.0;
    return (size_t)q;
  }
  /* The contract's formula, clamped; q may be NaN (then bins - 1). */
  __device__ __forceinline__ size_t exact(double v) const {
    if constexpr (WIDE) {
      return wide_bin(v);
    } else {
      const double q = floor((v - lo) * binsd / width);
      return q < binsd - 1.0 ? (size_t)q : bins - 1;
    }
  }
  /* The bin of one f32 value in the common case, without a branch: true (and b the bin)
   * when a = fma(x, scale_f, c_f) is farther than fast_err_f = err_f / 2 from an integer and
   * floor(a) lies in [0, bins); false otherwise, and then the caller bins x with bin().
   * Only with use_f. Why that is exact, range test included:
   *  - let q be the contract's quotient fl(fl(fl(x - lo) * binsd) / width) and S = binsd /
   *    width (real). With u = 2^-24, scale_f = S (1 + d1), c_f = -lo S (1 + d2) and a =
   *    (x scale_f + c_f)(1 + d3), |d1|, |d2|, |d3| <= u (plus the double roundings of scale
   *    and -lo * scale, about 2^-53 each). For a in [0, bins) (the only a that can pass),
   *    |x| S <= |lo| S + bins up to terms in u, so |a - (x - lo) S| <= u |x| S + u |lo| S
   *    + u |a| <= u (2 |lo| S + 2 bins) plus terms in u^2 and 2^-53 times |lo| S + bins.
   *    make_even takes use_f only for |lo| S + bins < 0.02 / (8 u), below 2^16, so those
   *    terms and q's own error (3 double roundings of a quotient below bins + 1) stay far
   *    under u: |a - q| <= B = u (2 |lo| S + 2 bins + 1);
   *  - err = 8 u (bins + |lo| S + 1) = 4 B, and err_f = fl(err) >= err (1 - u), so
   *    fast_err_f = err_f / 2 (exact: a power of two) >= 2 B (1 - u) > B: a factor 2 of
   *    margin remains. An a farther than fast_err_f from every integer then has no integer
   *    between a and q (q cannot be one either), so floor(a) = floor(q). (The unfused form of
   *    bin() errs by up to err / 2 and keeps the full err_f.) a - rintf(a) is exact in
   *    float (Sterbenz for |a| >= 1/2, and 0 for |a| >= 2^23, which fails);
   *  - x < lo puts (x - lo) S below 0, so an a in [0, bins) is within B of 0; x >= hi puts it
   *    at bins (1 - 2^-53) or above (width is hi - lo rounded), so an a below bins is within
   *    B of bins (B's slack covers the 2^-53 bins); a q that rounds up to bins for x just below hi likewise. All three fail
   *    the integer test, and so do NaN and the infinities (a - rintf(a) is NaN);
   * so the range test and the clamp of bin() are not needed: one conversion to a signed
   * integer (floor, so that a in (-1, 0) gives -1; saturated far out) and one unsigned
   * compare do both. */
  __device__ __forceinline__ bool fast1(float x, uint32_t &b) const {
    const float a = fmaf(x, scale_f, c_f);
    b = (uint32_t)__float2int_rd(a);
    return (fabsf(a - rintf(a)) > fast_err_f) & (b < (uint32_t)bins);
  }
  /* fast1 on four values: true when all four pass. */
  __device__ __forceinline__ bool fast4(const float (&x)[4], uint32_t (&b)[4]) const {
    bool ok = true;
#pragma unroll
    for (int k = 0; k < 4; k++) ok = ok & fast1(x[k], b[k]);
    return ok;
  }
  template <typename T>
  __device__ __forceinline__ bool bin(T x, size_t *b) const {
    if (is_float<T>() && sizeof(T) == 4 && use_f) {
      const float xf = (float)x;
      if (!(xf >= lo_ceil && xf < hi_ceil)) return false; /* NaN fails too */
      const float a = (xf - lo_f) * scale_f;
      if (fabsf(a - rintf(a)) > err_f) {
        /* a 32-bit conversion: the 64-bit one runs at a fraction of the rate */
        *b = a < (float)binsd - 1.0f ? (size_t)(uint32_t)a : bins - 1;
        return true;
      }
      *b = exact((double)xf);
      return true;
    }
    const double v = (double)x;
    if (!(v >= lo && v < hi)) return false; /* NaN fails too */
    const double d = v - lo, a = d * scale;
    /* far from an integer the approximation has the contract's floor; near one (or when
     * it is not finite) evaluate the contract's formula itself */
    if (!WIDE && fabs(a - rint(a)) > a * 0x1p-44) {
      const double q = floor(a);
      *b = q < binsd - 1.0 ? (size_t)q : bins - 1;
    } else {
      *b = exact(v);
    }
    return true;
  }
};

/* The smallest float f with (double)f >= v (-FLT_MAX.. +inf for finite v). */
__host__ __device__ static inline float float_ceil(double v) {
  float f = (float)v; /* nearest */
  if ((double)f < v) f = nextafterf(f, INFINITY);
  while (f > -INFINITY && (double)nextafterf(f, -INFINITY) >= v) f = nextafterf(f, -INFINITY);
  return f;
}

static even_rule make_even(size_t bins, double lo, double hi) {
  even_rule r;
  r.lo = lo;
  r.hi = hi;
  r.width = hi - lo;
  r.binsd = (double)bins;
  r.scale = r.binsd / r.width;
  r.bins = bins;
  r.wide = !(r.width * r.binsd <= DBL_MAX);
  r.wide_scale = 1.0;
  r.lo_s = lo;
  r.step_s = 0.0;
  if (r.wide) {
    /* |hi' - lo'| * bins < 2^1025 * 2^-e * 2^(ilogb(bins) + 1) <= 2^1023 */
    r.wide_scale = ldexp(1.0, -(ilogb(r.binsd) + 3));
    r.lo_s = lo * r.wide_scale;
    r.step_s = (hi * r.wide_scale - r.lo_s) / r.binsd;
  }
  /* a = fl(fl(x - fl(lo)) * fl(scale)) is within 3 float roundings of (x - lo) * scale
   * for x in [lo, hi), plus the rounding of lo itself: bounded below with a factor 2. The
   * fused a = fl(x * fl(scale) + fl(-lo * scale)) errs by the roundings of scale (relative,
   * on |x| * scale <= |lo| * scale + bins), of c_f (on |lo| * scale) and of the fma (on
   * |a| < bins + 1): 2^-24 (2 |lo| scale + 2 bins + 1) at most, a quarter of the bound, so
   * its test takes half of it (fast_err_f; even_rule_of::fast1 gives the argument). With
   * use_f, |lo| * scale + bins < 2^16, so the second-order terms stay inside that +1. */
  r.lo_f = (float)lo;
  r.scale_f = (float)r.scale;
  r.c_f = (float)(-lo * r.scale);
  const double err = 8.0 * 0x1p-24 * (r.binsd + fabs(lo) * r.scale + 1.0);
  r.err_f = (float)err;
  r.fast_err_f = r.err_f * 0.5f;
  r.lo_ceil = float_ceil(lo);
  r.hi_ceil = float_ceil(hi);
  r.use_f = err < HIST_FLOAT_MAX_ERR && fabs(lo) < 1e37 && fabs(hi) < 1e37 && r.width < 1e37 &&
            isfinite(r.scale_f) && r.scale_f > 0 && isfinite(r.c_f) && r.binsd < 0x1p23;
  return r;
}

struct range_rule {
  const double *edges; /* bins + 1, global or shared memory */
  size_t bins;
  template <typename T>
  __device__ __forceinline__ bool bin(T x, size_t *b) const {
    const double v = (double)x;
    if (!(v >= edges[0] && v < edges[bins])) return false;
    size_t lo = 0, hi = bins;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      if (v >= edges[mid])
        lo = mid;
      else
        hi = mid;
    }
    *b = lo;
    return true;
  }
};

/* The range rule for f32 input: x >= edges[i] exactly when x >= float_ceil(edges[i]) for a
 * float x, so once a block has staged those float thresholds ef[] the search compares
 * floats with 32-bit indices. Edges closer than a float apart get equal thresholds, which
 * leaves the bin between them empty, as it is for float input.
 *
 * The search is also narrowed. guess(x) = (x - ef[0]) * bins / (ef[bins] - ef[0]) in float,
 * truncated and clamped, is nondecreasing in x, and so is x's bin; for x in
 * [ef[i], ef[i+1]) the bin i - guess(x) therefore lies between i - guess(ef[i+1]) and
 * i - guess(ef[i]). The block takes the least and the largest of those over all i (dlo,
 * dhi) while it stages the thresholds, and each x is searched only in
 * [guess(x) + dlo, guess(x) + dhi]: about two steps for edges near even spacing instead of
 * log2(bins), and never wrong for any edges (uneven ones just widen the window). The
 * search was bound by shared-memory wavefronts, most of them bank conflicts between the
 * lanes' probes at the deep levels, which the narrowing removes.
 *
 * Without staging (too many edges for shared memory) it searches the double edges as
 * range_rule does. */
struct range_rule_f {
  const double *edges; /* bins + 1, global memory */
  const float *ef;     /* bins + 1 thresholds in shared memory, or NULL */
  size_t bins;
  float lo_f, scale_f; /* ef[0] and bins / (ef[bins] - ef[0]) (0 when not finite) */
  int dlo, dhi;        /* the window of bin - guess */
  __device__ __forceinline__ int guess(float xf) const {
    const float g = fminf(fmaxf((xf - lo_f) * scale_f, 0.0f), (float)(bins - 1));
    return (int)g; /* NaN-free: x passed the range test, and scale_f is finite */
  }
  template <typename T>
  __device__ __forceinline__ bool bin(T x, size_t *b) const {
    if (!ef) {
      const range_rule r = {edges, bins};
      return r.bin(x, b);
    }
    const float xf = (float)x;
    const int nb = (int)bins;
    if (!(xf >= ef[0] && xf < ef[nb])) return false; /* NaN fails too */
    const int g = guess(xf);
    int lo = g + dlo, hi = g + dhi + 1; /* the bin is the largest i in [lo, hi) with ef[i] <= x */
    lo = lo < 0 ? 0 : lo;
    hi = hi > nb ? nb : hi;
    while (hi - lo > 1) {
      const int mid = (lo + hi) >> 1;
      const bool ge = xf >= ef[mid];
      lo = ge ? mid : lo;
      hi = ge ? hi : mid;
    }
    *b = (size_t)lo;
    return true;
  }
};

/* Bytes of shared memory a rule wants beside the counters, and the rule that reads
 * them from there (copied in by the whole block). */
template <bool W>
__host__ __device__ inline size_t rule_smem_bytes(const even_rule_of<W> &, bool) { return 0; }
__host__ __device__ inline size_t rule_smem_bytes(const range_rule &r, bool staged) {
  return staged ? (r.bins + 1) * sizeof(double) : 0;
}
__host__ __device__ inline size_t rule_smem_bytes(const range_rule_f &r, bool staged) {
  return staged ? (r.bins + 1) * sizeof(float) + 2 * sizeof(int) : 0;
}
template <bool W>
__device__ __forceinline__ even_rule_of<W> rule_stage(const even_rule_of<W> &r, double *, bool) {
  return r;
}
__device__ __forceinline__ range_rule_f rule_stage(const range_rule_f &r, double *smem,
                                                  bool staged) {
  if (!staged) return r;
  float *ef = reinterpret_cast<float *>(smem);
  int *dev = reinterpret_cast<int *>(ef + r.bins + 1); /* dlo, dhi */
  const int nb = (int)r.bins;
  for (int i = threadIdx.x; i <= nb; i += blockDim.x) ef[i] = float_ceil(__ldg(r.edges + i));
  if (threadIdx.x == 0) {
    dev[0] = 0;
    dev[1] = 0;
  }
  __syncthreads();
  range_rule_f s = r;
  s.ef = ef;
  s.lo_f = ef[0];
  const float span = ef[nb] - ef[0];
  const float scale = (float)nb / span;
  s.scale_f = isfinite(span) && isfinite(scale) ? scale : 0.0f;
  int dlo = 0, dhi = 0;
  for (int i = threadIdx.x; i < nb; i += blockDim.x) {
    /* only thresholds inside the range: x >= ef[0] and x < ef[nb] */
    const int below = i - s.guess(ef[i + 1]);
    const int above = i - s.guess(ef[i]);
    dlo = below < dlo ? below : dlo;
    dhi = above > dhi ? above : dhi;
  }
  atomicMin(dev, dlo);
  atomicMax(dev + 1, dhi);
  __syncthreads();
  s.dlo = dev[0];
  s.dhi = dev[1];
  return s;
}
__device__ __forceinline__ range_rule rule_stage(const range_rule &r, double *smem, bool staged) {
  if (!staged) return r;
  for (size_t i = threadIdx.x; i <= r.bins; i += blockDim.x) smem[i] = __ldg(r.edges + i);
  range_rule s = r;
  s.edges = smem;
  return s;
}

#endif /* PP_CUDA_HISTOGRAM_RULES_CUH */
