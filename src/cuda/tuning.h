/* tuning.h — every tuning knob of the CUDA backend, one table per primitive.
 *
 * In the manner of CUB's tuning policies (and SQLite's compile options): the numbers a
 * retuning for another GPU changes, apart from the algorithms that use them. Each value
 * was chosen by timing the alternatives on an H100 / H200 against the peer library;
 * docs/benchmarks/ holds the measurements with their card, date and commit. The kernels'
 * files say what each quantity means to the algorithm; this file says why it has the
 * value it has. The values are fixed at build time: a knob is a constant, not a switch.
 *
 * Included by common.cuh (so by every .cu file of the backend) and by nbody.cuh and
 * sgemm.cuh, which the ladder programs include as well.
 */
#ifndef PP_CUDA_TUNING_H
#define PP_CUDA_TUNING_H

#include <stddef.h>

/* ---- scan, select, partition, select_flagged (scan.cu) ---------------------------------
 * A tile is PP_SCAN_VECS 16-byte vectors per thread. Select, partition and select_flagged
 * keep a tile in shared memory too, so they take smaller tiles and more blocks per SM.
 * Select's pass is the whole call, so larger tiles (fewer look-backs per byte) pay.
 * Partition works per warp: a subtile is 32 lanes x PP_PARTITION_VECS 16-byte vectors
 * (half that for u8), read by a counting pass and then placed; its placing warp holds two
 * subtiles in registers (the one it places and the next one's loads). MIN_BLOCKS are the
 * blocks per SM the kernels are compiled for (they cap the registers). */
#define PP_SCAN_THREADS 256
#define PP_SCAN_VECS 8
#define PP_SCAN_MIN_BLOCKS 4
#define PP_SELECT_MIN_BLOCKS 5
#define PP_SELECT_VECS 6
#define PP_PARTITION_VECS 4
#define PP_PARTITION_MIN_BLOCKS 4
#define PP_FLAG_VECS 4 /* select_flagged: 16-byte vectors of flags per thread */
#define PP_FLAG_MIN_BLOCKS 5
/* select_flagged at smaller n: tiles of PP_FLAG_VECS / 2 or / 4 vectors when the full
 * ones would give an SM fewer than PP_FLAG_TILES_PER_SM tiles (a tile is one block, and
 * too few of them leave SMs idle). Its copy of the kept records: bytes of records each
 * thread loads before it stores them, so that they are in flight together (2 to 8 words
 * of the record's word size). */
#define PP_FLAG_TILES_PER_SM 4
#define PP_FLAG_COPY_BYTES 64

/* ---- decoupled look-back of the scans (scan.cu; Merrill & Garland 2016) ----------------
 * PP_LOOKBACK_STRIDE: bytes from one tile's descriptor to the next (8 or 16: packed; 128:
 * one L2 line each). Packed, the descriptors of the tiles in flight share a few lines, and
 * the polls of every block waiting on them queue at the L2 slices that hold those lines,
 * slowing the data streaming through the same slices.
 * PP_LOOKBACK_PER_LANE: descriptors each lane reads per round. Wider rounds cover more
 * tiles per L2 round trip but cost registers in every thread; one measured best.
 * PP_LOOKBACK_SLEEP / _FIRST_SLEEP: nanoseconds between polls and before the first one.
 * Polling soon and often costs the whole kernel bandwidth. */
#define PP_LOOKBACK_STRIDE 128
#define PP_LOOKBACK_PER_LANE 1
#define PP_LOOKBACK_SLEEP 300
#define PP_LOOKBACK_FIRST_SLEEP 700

/* ---- radix sort (sort.cu; Adinets & Merrill, "Onesweep") -------------------------------
 * Onesweep block threads: at least 256, one thread per digit in the look-back. Items per
 * thread per key and value width: 4-byte keys alone take larger tiles from
 * PP_SORT_K32_LARGE_FROM keys on (below it a wave of tiles is the whole sort either way);
 * pairs load their values after the key scatter (CUB's order), so fewer registers are live
 * at once and the tiles can be as large as for keys alone. 8-byte keys use dynamic shared
 * memory. */
#define PP_SORT_THREADS 384
#define PP_SORT_ITEMS_K32 18       /* 4-byte keys only, n below PP_SORT_K32_LARGE_FROM */
#define PP_SORT_ITEMS_K32_LARGE 23 /* 4-byte keys only, n from PP_SORT_K32_LARGE_FROM on */
#define PP_SORT_K32_LARGE_FROM ((size_t)1 << 21)
#define PP_SORT_ITEMS_K32_V32 23 /* 4-byte keys, 4-byte values */
#define PP_SORT_ITEMS_K64 15     /* 8-byte keys only */
#define PP_SORT_ITEMS_WIDE 12    /* any pair with an 8-byte member */
#define PP_SORT_MIN_BLOCKS 2     /* onesweep blocks per SM the registers must allow */
#define PP_SORT_MIN_BLOCKS_K32 PP_SORT_MIN_BLOCKS    /* the same, 4-byte keys alone */
#define PP_SORT_MIN_BLOCKS_K32_V32 PP_SORT_MIN_BLOCKS /* the same, 4-byte keys and values */
/* How a warp's lanes with equal digits find each other in the ranking (once per key):
 * 0 eight ballots (~24 simple instructions a key); 1 __match_any_sync (MATCH.ANY is slow
 * for a few bits: CUB's ranking uses a ballot loop for 8-bit digits); 2 each lane ORs its
 * bit into a per-warp shared word of its digit and reads the word back (one shared atomic,
 * one load and one store a key; a second per-warp table of 256 words).
 * PP_SORT_MATCH_PASS: chosen per pass on the device from that pass's digit counts, which
 * the histogram kernel has before the first pass (radix_pick_match). Which method is
 * fastest depends on the digits a warp's 32 keys hold: the ORs for uniform digits, the
 * ballots once some digits are more frequent (the ORs of equal digits are same-address
 * atomics, which queue), MATCH.ANY when a warp holds few distinct digits (its cost grows
 * with their number). With p_d the fraction of the keys with digit d, a pass takes
 *   1 (match) when the expected number of distinct digits among 32 keys drawn
 *     independently, sum_d 1 - (1 - p_d)^32 (30.1 for uniform digits), is below
 *     PP_SORT_MATCH_ANY_BELOW;
 *   else 2 (ORs) when 256 sum_d p_d^2 (the chance that two keys share a digit, relative
 *     to uniform digits: 1.0 for them) is below PP_SORT_MATCH_OR_BELOW;
 *   else 0 (ballots).
 * The thresholds are where the measured pass times of the three methods (docs/benchmarks:
 * the H200 ncu passes of u32 and f32 keys in [-1, 1) at 2^28, one build per method) cross
 * when interpolated linearly: MATCH.ANY's time against the expected distinct digits
 * (through uniform digits, 30.1, and the float top byte, 6.4) meets the ballots' near 11;
 * the ORs' lead over the ballots (uniform digits, 1.0) turns into a loss at the float low
 * byte (1.5, half the values having a clear low mantissa bit) and crosses near 1.15. */
#define PP_SORT_MATCH 0     /* pairs */
#define PP_SORT_MATCH_K32 PP_SORT_MATCH_PASS /* 4-byte keys alone */
#define PP_SORT_MATCH_K64 2 /* 8-byte keys alone */
#define PP_SORT_MATCH_PASS (-1)
#define PP_SORT_MATCH_ANY_BELOW 11.0
#define PP_SORT_MATCH_OR_BELOW 1.15
/* The one-block sort of small n: PP_SORT_SMALL_THREADS x PP_SORT_SMALL_ITEMS keys. */
#define PP_SORT_SMALL_THREADS 512
#define PP_SORT_SMALL_ITEMS 8
/* Padded key count from which look-back words are 64-bit: 32-bit words hold counts below
 * 2^30, so this must not exceed 2^30. */
#define PP_SORT_WIDE_FROM ((size_t)1 << 30)
/* Earlier tiles the look-back reads at once when the predecessor is not done: 4-byte keys
 * alone gain from reading ahead, the wider kinds (more registers live) from reading few. */
#define PP_SORT_LOOKBACK_BATCH 8
#define PP_SORT_LOOKBACK_BATCH_OTHER 2
/* Packed pairs (pack_pass) of 4-byte keys with 4-byte values from this many pairs on:
 * below it the extra kernels a packed sort launches cost more than the packed passes
 * save. */
#define PP_SORT_PACK_FROM ((size_t)3 << 23)
/* The histogram kernel: block threads (at least 256: its last block scans 256 digits) and
 * keys per thread and tile. It has no blocks-per-SM bound: a bound let ptxas take more
 * registers than the kernel needs. */
#define PP_SORT_HIST_THREADS 256
#define PP_SORT_HIST_ITEMS 16

/* ---- merge sort and merge (sort_merge.cu, merge.cu) ------------------------------------
 * PP_MSORT_CHUNK_THREADS: block-sort threads of the plain merge sort of 4-byte keys without
 * values, one block per SM, so that large n takes one merge round fewer.
 * PP_MERGE_ITEMS is odd so that the strided shared-memory writes hit distinct banks;
 * PP_MERGE_ITEMS_64 keeps the same bytes per thread for 8-byte keys. Up to
 * PP_MERGE_FUSED_TILES_PER_SM tiles per SM each block searches its own splits (one launch:
 * in one wave the extra launch costs more than it saves). PP_MERGE_MIN_BLOCKS keeps
 * enough warps resident to cover DRAM latency: 256 x 17 with six blocks per SM (the same
 * registers per thread as 512 x 17 with three) was faster on an H200 at 2^24 and 2^28
 * (docs/benchmarks/h200-2026-11-29.md). From PP_MERGE_SAMPLED_FROM keys on the partition
 * searches begin on samples of a and b, which stay in L2. */
#define PP_MSORT_CHUNK_THREADS 1024
#define PP_MERGE_THREADS 256
#define PP_MERGE_ITEMS 17
#define PP_MERGE_ITEMS_64 7
#define PP_MERGE_FUSED_TILES_PER_SM 2
#define PP_MERGE_MIN_BLOCKS 6
#define PP_MERGE_SAMPLED_FROM ((size_t)1 << 26)

/* ---- quicksort (sort_quick.cu) ---------------------------------------------------------
 * Levels of the device recursion. Level L's grids are nested L deep (the root level is
 * launched by the host), and dynamic parallelism refuses nesting beyond 24: a margin is
 * kept. */
#define PP_QUICK_MAX_LEVELS 22

/* ---- top-k (topk.cu) -------------------------------------------------------------------
 * Multi-block passes: threads, items per thread, blocks per SM. PP_TOPK_HIST is the
 * default histogram method (topk.cu: 2, copies of the counters, because the skewed bins
 * of real data serialise the plain atomics). One array of at least PP_TOPK_SAMPLED_MIN_N
 * elements takes the multi-block sampled route, smaller ones the segments. */
#define PP_TOPK_THREADS 256
#define PP_TOPK_ITEMS 16
#define PP_TOPK_BLOCKS_PER_SM 8
#define PP_TOPK_HIST 2
#define PP_TOPK_SAMPLED_MIN_N ((size_t)1 << 22)

/* ---- histogram (histogram.cu) ----------------------------------------------------------
 * Block threads; bin counts up to PP_HIST_MAX_PASSES shared-memory windows are counted in
 * that many passes over the input (beyond, clusters, then global atomics); vectors each
 * thread loads before it counts them (memory-level parallelism). */
#define PP_HIST_THREADS 512
#define PP_HIST_MAX_PASSES 4
#define PP_HIST_UNROLL 2

/* ---- conv2d (conv.cu) ------------------------------------------------------------------
 * Stamped 2D filters below CONV_BLK_MIN (conv.cu; 3x3 today) up to PP_CONV_WIDE_MAX and
 * separable lengths up to PP_CONV_SEP_WIDE_MAX take tiles 64 wide, two columns per
 * thread, where the halo columns would otherwise cost most (2D filters from CONV_BLK_MIN
 * on take the register-blocked 128 x 32 tiles instead).
 * Separable lengths up to PP_CONV_SEP_REG_MAX take the register row pass
 * (conv_sep_reg_kernel) instead of the fused two-phase kernel. */
#define PP_CONV_WIDE_MAX 5
#define PP_CONV_SEP_WIDE_MAX 9
#define PP_CONV_SEP_REG_MAX 7

/* ---- SGEMM (sgemm.cu, sgemm.cuh) -------------------------------------------------------
 * 128 x 256 tiles, 256 threads with 8 x 16 results each (one block per SM), BK 16, four
 * stages; interior tiles take the fast path, with the copies of a slice spread over the k
 * steps before it, two units at a time, and the FMAs of a k step in serpentine order
 * (sgemm.cuh, SG_V_*). ladder/sgemm.cu times the alternatives. */
#define PP_SGEMM_BK 16
#define PP_SGEMM_STAGES 4
#define PP_SGEMM_VARIANT (SG_V_FAST | SG_V_SPREAD | SG_V_PAIR | SG_V_SERP)

/* ---- N-body (nbody.cu, nbody.cuh, dist_ops.cu) -----------------------------------------
 * Threads per block (= bodies per shared-memory tile) and bodies per thread: more bodies
 * per thread pay in registers and occupancy more than they save in shared loads
 * (ladder/nbody.cu times 1, 2, 4 and 8 side by side). */
#define PP_NBODY_THREADS 128
#define PP_NBODY_BODIES 2

#endif /* PP_CUDA_TUNING_H */
