/* nbody_simd.h — the unguarded force loop of src/cpu/nbody.c for one vector width, stamped
 * out once per instruction set (AVX2 + FMA, AVX-512) by including this file with:
 *
 *   NB_FN      the function's name
 *   NB_TARGET  its target attribute (the ISA the clone is compiled for)
 *   NB_VEC     a GCC vector type of NB_W floats
 *   NB_W       lanes per vector
 *   NB_RSQRT   v -> the hardware's reciprocal square root estimate of vector v
 *
 * One pass takes NB_IB target bodies i, each held as three broadcast vectors and three
 * vector accumulators, and streams the sources j through them NB_W at a time: every
 * source load then feeds NB_IB interactions, and the NB_IB x 3 accumulators are
 * independent chains, so the loop runs at the rate of its arithmetic, not of the
 * multiply-add latency. Per source vector and target, 16 vector operations: three
 * differences, three multiply-adds for r^2 + eps^2, the estimate y, one Newton step
 * written as w = y (3 - r^2 y y) = 2 y' (two multiplies and one negated multiply-add),
 * w^3 m in three multiplies, and three multiply-adds into the sums. The factor 2 of w
 * makes every term 8x its value; the sums are scaled by 1/8 at the end, which is exact.
 * The estimate's relative error (below 2^-14 for vrsqrt14ps, 1.5 x 2^-12 for vrsqrtps)
 * is squared by the Newton step to a few float ulps (the approach of the N-body kernels
 * in GPU Gems 3 ch. 31). Sources past the last multiple of NB_W take the portable loop's
 * arithmetic (rsqrt_newton), after the scaling.
 *
 * NB_IB = 4 targets per pass: their 24 broadcasts and sums fit AVX-512's 32 vector
 * registers; with AVX2's 16 the compiler keeps the broadcasts in memory, which costs loads
 * (two ports, not the bottleneck) and no arithmetic.
 *
 * The caller guarantees eps^2 >= NB_EPS2_UNGUARDED, so r^2 is normal and positive and a
 * body's own term is 0 * (finite) = 0 with no select.
 */

#ifndef NB_IB
#define NB_IB 4
#endif

NB_TARGET static void NB_FN(const pp_bodies *b, size_t i0, size_t i1, float eps2, float *ax,
                            float *ay, float *az) {
  const float *x = b->x, *y = b->y, *z = b->z, *m = b->mass;
  const size_t n = b->n, nv = n / NB_W * NB_W;
  const NB_VEC zero = {0}, e2 = zero + eps2, three = zero + 3.0f;
  for (size_t i = i0; i < i1; i += NB_IB) {
    NB_VEC xi[NB_IB], yi[NB_IB], zi[NB_IB], sx[NB_IB], sy[NB_IB], sz[NB_IB];
#pragma GCC unroll 8
    for (int k = 0; k < NB_IB; k++) {
      /* a short last block repeats its last body; only the real ones are stored */
      const size_t t = i + (size_t)k < i1 ? i + (size_t)k : i1 - 1;
      xi[k] = zero + x[t];
      yi[k] = zero + y[t];
      zi[k] = zero + z[t];
      sx[k] = sy[k] = sz[k] = zero;
    }
    for (size_t j = 0; j < nv; j += NB_W) {
      NB_VEC xj, yj, zj, mj;
      memcpy(&xj, x + j, sizeof xj); /* unaligned vector loads */
      memcpy(&yj, y + j, sizeof yj);
      memcpy(&zj, z + j, sizeof zj);
      memcpy(&mj, m + j, sizeof mj);
#pragma GCC unroll 8
      for (int k = 0; k < NB_IB; k++) {
        const NB_VEC dx = xj - xi[k], dy = yj - yi[k], dz = zj - zi[k];
        const NB_VEC r2 = dx * dx + (dy * dy + (dz * dz + e2));
        const NB_VEC est = NB_RSQRT(r2);
        const NB_VEC w = est * (three - (r2 * est) * est);
        const NB_VEC s = (w * w) * (mj * w);
        sx[k] += dx * s;
        sy[k] += dy * s;
        sz[k] += dz * s;
      }
    }
    for (int k = 0; k < NB_IB && i + (size_t)k < i1; k++) {
      const size_t t = i + (size_t)k;
      float rx = 0.0f, ry = 0.0f, rz = 0.0f;
      for (int l = 0; l < NB_W; l++) rx += sx[k][l], ry += sy[k][l], rz += sz[k][l];
      rx *= 0.125f, ry *= 0.125f, rz *= 0.125f;
      for (size_t j = nv; j < n; j++) {
        const float dx = x[j] - x[t], dy = y[j] - y[t], dz = z[j] - z[t];
        const float inv = rsqrt_newton(dx * dx + dy * dy + dz * dz + eps2);
        const float s = m[j] * inv * inv * inv;
        rx += dx * s, ry += dy * s, rz += dz * s;
      }
      ax[t] = rx;
      ay[t] = ry;
      az[t] = rz;
    }
  }
}
