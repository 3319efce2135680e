/* sort_serial.h — the serial pieces of the CPU merge sort (sort_merge.c) and sample sort
 * (sort_sample.c): a stable bottom-up merge sort of one range, and the merge of one slice
 * of the output of two sorted runs (merge path), per key type and value width.
 *
 * Keys are compared by their order key (cpu.h: pp_cpu_okey_*) xor flip (all ones for
 * descending: the order reversed, ties kept as ties, so stability holds); the stored bits
 * are what moves, through memcpy (the arrays are the caller's floats or integers, read here
 * only as unsigned words of their width).
 *
 * PP_CPU_SORT_SERIAL(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V) defines, for key type NAME (word
 * W, C type KT) and value variant SUF (VW/VT the value word, HAS_V 0 for keys only):
 *   ss_merge_NAME_SUF(ks, vs, kd, vd, lo, mid, hi, flip)
 *       src[lo, mid) and src[mid, hi) merged into dst[lo, hi) (ties from the left run);
 *   ss_sort_NAME_SUF(k, v, ko, vo, lo, hi, to_other, flip)
 *       sorts [lo, hi) of (k, v) stably, using [lo, hi) of (ko, vo) as scratch; the result
 *       ends in (ko, vo) when to_other, else in (k, v);
 *   ss_split_NAME(ks, lo, mid, hi, d, flip)
 *       merge path: how many of the first d outputs of merging [lo, mid) and [mid, hi) come
 *       from the left run;
 *   ss_merge_slice_NAME_SUF(ks, vs, kd, vd, lo, mid, hi, d0, d1, flip)
 *       outputs [lo + d0, lo + d1) of that merge, written to dst.
 */
#ifndef PP_CPU_SORT_SERIAL_H
#define PP_CPU_SORT_SERIAL_H

#include "cpu.h"

#include <string.h>

/* Runs insertion sort makes before the merge passes: short enough that its quadratic moves
 * stay cheaper than a merge pass. */
#define SS_RUN 16


/* Scratch of the caller's arrays' shape for a sort that ping-pongs between them: a copy of
 * n keys of ks bytes at *kbuf and, when vs > 0, of n values at *vbuf (else NULL), in one
 * block that the caller frees with temp_free(ctx, *kbuf). Core has checked that n * ks and
 * n * vs fit in size_t; their sum may not. */
static inline pp_status ss_scratch(pp_context *ctx, size_t n, size_t ks, size_t vs, void **kbuf,
                                   void **vbuf) {
  const size_t kb = PP_CPU_ALIGN64(n * ks);
  if (kb < n * ks || n * vs > SIZE_MAX - kb)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY,
                   "pp_sort: scratch for %zu elements does not fit in size_t", n);
  void *scratch = NULL;
  if (ctx->ops->temp_alloc(ctx, &scratch, kb + n * vs) != PP_OK)
    return pp_fail(ctx, PP_ERR_OUT_OF_MEMORY, "pp_sort: cannot allocate %zu bytes of scratch",
                   kb + n * vs);
  *kbuf = scratch;
  *vbuf = vs ? (unsigned char *)scratch + kb : NULL;
  return PP_OK;
}

/* Part t's first output place in each of `bins` bins of a parallel stable scatter, from
 * every part's counts (counts[u * bins + b], nt parts): all keys of the bins before b,
 * then those of bin b in the parts before t. Each thread sums for itself, which saves a
 * barrier. starts, when not NULL, receives each bin's first place; returns the largest
 * bin's size. */
static inline size_t ss_part_offsets(const size_t *counts, size_t bins, size_t t, size_t nt,
                                     size_t *off, size_t *starts) {
  size_t sum = 0, most = 0;
  for (size_t b = 0; b < bins; b++) {
    size_t before = 0, all = 0;
    for (size_t u = 0; u < nt; u++) {
      const size_t c = counts[u * bins + b];
      before += u < t ? c : 0;
      all += c;
    }
    if (starts) starts[b] = sum;
    off[b] = sum + before;
    sum += all;
    most = all > most ? all : most;
  }
  return most;
}

/* After a pass from (ks, vs) into (kd, vd): the destination becomes the next source. */
static inline void ss_swap_buffers(void **ks, void **kd, void **vs, void **vd) {
  void *t = *ks;
  *ks = *kd;
  *kd = t;
  t = *vs;
  *vs = *vd;
  *vd = t;
}

/* Merge passes a range of len keys needs after the insertion-sorted runs. */
static inline int ss_passes(size_t len) {
  int p = 0;
  for (size_t w = SS_RUN; w < len; w *= 2) p++;
  return p;
}

#define PP_CPU_SORT_SPLIT(NAME, W, KT, OKEY)                                                   \
  static inline size_t ss_split_##NAME(const void *ks, size_t lo, size_t mid, size_t hi,       \
                                       size_t d, KT flip) {                                    \
    const size_t la = mid - lo, lb = hi - mid;                                                 \
    size_t a = d > lb ? d - lb : 0, b = d < la ? d : la;                                       \
    while (a < b) {                                                                            \
      const size_t m = a + (b - a) / 2;                                                        \
      /* the left key goes first unless the right one is strictly smaller */                  \
      if ((KT)(OKEY(pp_cpu_ld_##W(ks, lo + m)) ^ flip) <=                                          \
          (KT)(OKEY(pp_cpu_ld_##W(ks, mid + d - 1 - m)) ^ flip))                                   \
        a = m + 1;                                                                             \
      else                                                                                     \
        b = m;                                                                                 \
    }                                                                                          \
    return a;                                                                                  \
  }

#define PP_CPU_SORT_SERIAL(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V)                              \
  /* outputs [o, o_end) of the merge of src[i, mid) and src[j, hi), written at dst[o..) */     \
  static inline void ss_merge_run_##NAME##_##SUF(const void *ks, const void *vs, void *kd, void *vd,  \
                                          size_t i, size_t mid, size_t j, size_t hi, size_t o, \
                                          size_t o_end, KT flip) {                             \
    while (o < o_end && i < mid && j < hi) {                                                   \
      const KT x = pp_cpu_ld_##W(ks, i), y = pp_cpu_ld_##W(ks, j);                                     \
      const int take_b = (KT)(OKEY(y) ^ flip) < (KT)(OKEY(x) ^ flip);                          \
      pp_cpu_st_##W(kd, o, take_b ? y : x);                                                        \
      if (HAS_V) pp_cpu_st_##VW(vd, o, pp_cpu_ld_##VW(vs, take_b ? j : i));                            \
      o++;                                                                                     \
      i += !take_b;                                                                            \
      j += take_b;                                                                             \
    }                                                                                          \
    for (; o < o_end && i < mid; i++, o++) {                                                   \
      pp_cpu_st_##W(kd, o, pp_cpu_ld_##W(ks, i));                                                      \
      if (HAS_V) pp_cpu_st_##VW(vd, o, pp_cpu_ld_##VW(vs, i));                                         \
    }                                                                                          \
    for (; o < o_end && j < hi; j++, o++) {                                                    \
      pp_cpu_st_##W(kd, o, pp_cpu_ld_##W(ks, j));                                                      \
      if (HAS_V) pp_cpu_st_##VW(vd, o, pp_cpu_ld_##VW(vs, j));                                         \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  static inline void ss_merge_##NAME##_##SUF(const void *ks, const void *vs, void *kd,         \
                                             void *vd, size_t lo, size_t mid, size_t hi,       \
                                             KT flip) {                                        \
    ss_merge_run_##NAME##_##SUF(ks, vs, kd, vd, lo, mid, mid, hi, lo, hi, flip);               \
  }                                                                                            \
                                                                                               \
  static inline void ss_merge_slice_##NAME##_##SUF(const void *ks, const void *vs, void *kd,          \
                                            void *vd, size_t lo, size_t mid, size_t hi,        \
                                            size_t d0, size_t d1, KT flip) {                   \
    const size_t i0 = ss_split_##NAME(ks, lo, mid, hi, d0, flip);                              \
    ss_merge_run_##NAME##_##SUF(ks, vs, kd, vd, lo + i0, mid, mid + (d0 - i0), hi, lo + d0,    \
                                lo + d1, flip);                                                \
  }                                                                                            \
                                                                                               \
  static inline void ss_insertion_##NAME##_##SUF(void *k, void *v, size_t lo, size_t hi, KT flip) {   \
    for (size_t i = lo + 1; i < hi; i++) {                                                     \
      const KT key = pp_cpu_ld_##W(k, i);                                                          \
      const VT val = HAS_V ? pp_cpu_ld_##VW(v, i) : 0;                                             \
      const KT ok = (KT)(OKEY(key) ^ flip);                                                    \
      size_t j = i;                                                                            \
      for (; j > lo && (KT)(OKEY(pp_cpu_ld_##W(k, j - 1)) ^ flip) > ok; j--) {                     \
        pp_cpu_st_##W(k, j, pp_cpu_ld_##W(k, j - 1));                                                  \
        if (HAS_V) pp_cpu_st_##VW(v, j, pp_cpu_ld_##VW(v, j - 1));                                     \
      }                                                                                        \
      pp_cpu_st_##W(k, j, key);                                                                    \
      if (HAS_V) pp_cpu_st_##VW(v, j, val);                                                        \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  static inline void ss_sort_##NAME##_##SUF(void *k, void *v, void *ko, void *vo, size_t lo,          \
                                     size_t hi, int to_other, KT flip) {                       \
    /* the passes ping-pong between the two; the runs are made in the one from which an   \
     * even or odd number of passes ends where the result is wanted */                        \
    const int passes = ss_passes(hi - lo);                                                     \
    void *ks = k, *vs = v, *kd = ko, *vd = vo;                                                 \
    if ((passes & 1) == to_other) {                                                            \
      /* the runs are made in place */                                                        \
    } else {                                                                                   \
      memcpy((unsigned char *)ko + lo * sizeof(KT), (const unsigned char *)k + lo * sizeof(KT), \
             (hi - lo) * sizeof(KT));                                                          \
      if (HAS_V)                                                                               \
        memcpy((unsigned char *)vo + lo * sizeof(VT),                                          \
               (const unsigned char *)v + lo * sizeof(VT), (hi - lo) * sizeof(VT));            \
      ks = ko, vs = vo, kd = k, vd = v;                                                        \
    }                                                                                          \
    for (size_t r = lo; r < hi; r += SS_RUN)                                                   \
      ss_insertion_##NAME##_##SUF(ks, vs, r, hi - r < SS_RUN ? hi : r + SS_RUN, flip);         \
    for (size_t w = SS_RUN; w < hi - lo; w *= 2) {                                             \
      for (size_t a = lo; a < hi; a += 2 * w) {                                                \
        const size_t m = hi - a < w ? hi : a + w, e = hi - m < w ? hi : m + w;                 \
        ss_merge_##NAME##_##SUF(ks, vs, kd, vd, a, m, e, flip);                                \
      }                                                                                        \
      ss_swap_buffers(&ks, &kd, &vs, &vd);                                                     \
    }                                                                                          \
  }

/* Every key type, in pp_dtype order, as X(NAME, W, KT, OKEY): key type NAME, stored word W
 * (u8, u32, u64) of C type KT, order key OKEY (cpu.h). The CPU sorts stamp their per-type
 * code and build their [dtype][k, v4, v8] dispatch tables from this one list. */
#define PP_CPU_SORT_KEY_TYPES(X)                                                               \
  X(u8, u8, uint8_t, pp_cpu_okey_u8)                                                           \
  X(i32, u32, uint32_t, pp_cpu_okey_i32)                                                       \
  X(u32, u32, uint32_t, pp_cpu_okey_u32)                                                       \
  X(i64, u64, uint64_t, pp_cpu_okey_i64)                                                       \
  X(u64, u64, uint64_t, pp_cpu_okey_u64)                                                       \
  X(f32, u32, uint32_t, pp_cpu_okey_f32)                                                       \
  X(f64, u64, uint64_t, pp_cpu_okey_f64)

/* M(NAME, W, KT, OKEY, SUF, VW, VT, HAS_V) for the three value variants of key type NAME:
 * keys only (k), with 4-byte (v4) and with 8-byte (v8) values. */
#define PP_CPU_SORT_VALUES(M, NAME, W, KT, OKEY)                                               \
  M(NAME, W, KT, OKEY, k, u32, uint32_t, 0)                                                    \
  M(NAME, W, KT, OKEY, v4, u32, uint32_t, 1) M(NAME, W, KT, OKEY, v8, u64, uint64_t, 1)

/* The serial pieces above for key type NAME, every value variant. */
#define PP_CPU_SORT_SERIALS(NAME, W, KT, OKEY)                                                 \
  PP_CPU_SORT_SPLIT(NAME, W, KT, OKEY)                                                         \
  PP_CPU_SORT_VALUES(PP_CPU_SORT_SERIAL, NAME, W, KT, OKEY)

#endif /* PP_CPU_SORT_SERIAL_H */
