/*
 * peer_dist_sort.h — the GPU side of `parprim bench --gpus N` (bench/bench_dist.c), in
 * bench/peer_dist_sort.cu:
 *  - the peer of the distributed sort: the sample sort a competent user writes by hand
 *    with CUB and NCCL (cub::DeviceRadixSort locally, regular samples allgathered, the
 *    splitters' positions found by binary search, one ncclSend/ncclRecv group, and
 *    cub::DeviceRadixSort of what arrived); u32 keys;
 *  - input generation and result checks on the device, so the 2^32-keys-per-GPU case
 *    needs no host copy of its data.
 * Every int-returning call returns 0 on success and -1 on failure, with the text in err
 * (thread-safe: each rank passes its own buffer). Streams are cudaStream_t as void *.
 */
#ifndef PP_BENCH_PEER_DIST_SORT_H
#define PP_BENCH_PEER_DIST_SORT_H

#include "parprim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_DIST_ERR 256

/* Makes `device` current for the calling thread. */
int bench_dist_set_device(int device, char *err);
/* The GPU rank r of a --gpus run uses: r modulo the visible GPUs (as pp_create_dist). */
int bench_dist_device_of_rank(int rank, int *device, char *err);

/* dst[i] = the value for global index first + i under seed: u32 over the whole range, f32
 * uniform in [lo, hi). t is PP_U32 or PP_F32. */
int bench_dist_fill(pp_dtype t, void *dst, size_t n, uint64_t seed, uint64_t first, double lo,
                    double hi, void *stream, char *err);
/* dst[i] = first + i as u32 values (the global index of a pair's key) */
int bench_dist_iota_u32(uint32_t *dst, size_t n, uint64_t first, void *stream, char *err);

/* Facts about n u32 keys on the device (waits for them): how many i have keys[i] >
 * keys[i + 1], the first and last key (0 when n == 0), and an order-independent
 * fingerprint of the multiset (a sum of a hash of each key), so sortedness, the boundaries
 * between ranks and the keys' preservation can be checked across ranks. */
typedef struct bench_dist_facts {
  uint64_t unsorted, fingerprint;
  uint32_t first, last;
} bench_dist_facts;
int bench_dist_facts_u32(const uint32_t *keys, size_t n, void *stream, bench_dist_facts *out,
                         char *err);

/* Pairs sorted from keys made by bench_dist_fill(PP_U32, seed, first 0) with their global
 * index as the value (waits): *bad counts positions whose key is not the key its value
 * was made with, or whose value does not increase within a run of equal keys (stability);
 * the first and last value are returned for the checks between ranks. */
int bench_dist_pairs_check_u32(const uint32_t *keys, const uint32_t *values, size_t n,
                               uint64_t seed, void *stream, uint64_t *bad, uint32_t *first_value,
                               uint32_t *last_value, char *err);

/* The NCCL unique id of the peer's communicator (128 bytes), made once by the launcher. */
int bench_peer_nccl_id(unsigned char id[128], char *err);

typedef struct bench_peer_dist bench_peer_dist;
/* Collective over the nranks threads: an NCCL communicator and buffers for up to n_max
 * keys per rank. */
int bench_peer_dist_create(bench_peer_dist **peer, const unsigned char id[128], int nranks,
                           int rank, size_t n_max, void *stream, char *err);
void bench_peer_dist_destroy(bench_peer_dist *peer);
/* Sorts the n keys of d_keys globally (d_keys is overwritten); the rank's sorted share is
 * then at *out (*m keys, inside the peer's buffers). Collective. */
int bench_peer_dist_sort(bench_peer_dist *peer, uint32_t *d_keys, size_t n, const uint32_t **out,
                         size_t *m, char *err);

/* The phases of the peer's last sort on this rank (waits for it): its local CUB sort, the
 * NCCL exchange (from the group's start on this rank's stream, after the host has agreed
 * the counts) and the CUB sort of what arrived, in ms. */
int bench_peer_dist_phases(bench_peer_dist *peer, double ms[3], char *err);

#ifdef __cplusplus
}
#endif

#endif /* PP_BENCH_PEER_DIST_SORT_H */
