#!/usr/bin/env python3
"""torch_dist_sort.py — the sample sort a Python user writes with torch.distributed, as the
reference the distributed pp_sort is compared with (docs/benchmarks/distributed-sort.md).

One process per GPU (torch.multiprocessing, NCCL backend). Per rank: torch.sort of its int32
keys, regular samples all-gathered, p - 1 splitters, the send counts from
torch.searchsorted, the counts exchanged with all_to_all_single, the keys with
all_to_all_single, and torch.sort of what arrived (no rebalance to the input counts).
Timed with CUDA events after a barrier; a run's time is the slowest rank's; the median of
--reps runs after one warm-up. The output is checked (each rank sorted, ranks in order, no
key lost).

    python3 scripts/torch_dist_sort.py --gpus 4              # 2^28 and 2^30 keys per GPU
    python3 scripts/torch_dist_sort.py --gpus 4 --log2n 28 --reps 5

NCCL_NVLS_ENABLE stays 0 (NVLink multicast is never used on the shared GPU machines).
"""
import argparse
import os
import statistics
import sys

os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

SAMPLES = 1024  # regular samples per rank


def sample_sort(keys, p):
    """The rank's sorted share of the global sort of every rank's keys."""
    local, _ = torch.sort(keys)
    n = local.numel()
    pos = (torch.arange(1, SAMPLES + 1, device=keys.device, dtype=torch.int64) * n) // (SAMPLES + 1)
    samples = local[pos.clamp(max=max(n - 1, 0))]
    gathered = torch.empty(SAMPLES * p, dtype=keys.dtype, device=keys.device)
    dist.all_gather_into_tensor(gathered, samples)
    gathered, _ = torch.sort(gathered)
    splitters = gathered[torch.arange(1, p, device=keys.device) * SAMPLES]
    bounds = torch.searchsorted(local, splitters, right=True)
    edges = torch.cat([torch.zeros(1, dtype=torch.int64, device=keys.device), bounds,
                       torch.full((1,), n, dtype=torch.int64, device=keys.device)])
    send_counts = edges[1:] - edges[:-1]
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    send = send_counts.tolist()
    recv = recv_counts.tolist()
    received = torch.empty(sum(recv), dtype=keys.dtype, device=keys.device)
    dist.all_to_all_single(received, local, output_split_sizes=recv, input_split_sizes=send)
    out, _ = torch.sort(received)
    return out


def worker(rank, p, log2ns, reps, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    try:
        dist.init_process_group("nccl", rank=rank, world_size=p,
                                device_id=torch.device("cuda", rank))
    except TypeError:  # torch before 2.3 has no device_id
        dist.init_process_group("nccl", rank=rank, world_size=p)
    dev = torch.device("cuda", rank)
    gen = torch.Generator(device=dev)
    for log2n in log2ns:
        n = 1 << log2n
        times = []
        out = None
        for run in range(-1, reps):
            gen.manual_seed(1234 + rank + 1000 * run)
            keys = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=dev, generator=gen)
            torch.cuda.synchronize()
            dist.barrier()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            out = sample_sort(keys, p)
            stop.record()
            stop.synchronize()
            ms = torch.tensor([start.elapsed_time(stop)], device=dev)
            dist.all_reduce(ms, op=dist.ReduceOp.MAX)
            if run >= 0:
                times.append(ms.item())
            del keys
        # checks: sorted on each rank, in order across ranks, every key kept
        local_ok = bool((out[1:] >= out[:-1]).all().item()) if out.numel() > 1 else True
        ends = torch.tensor([out[0].item() if out.numel() else 2**31 - 1,
                             out[-1].item() if out.numel() else -2**31, out.numel(),
                             int(local_ok)], dtype=torch.int64, device=dev)
        all_ends = torch.empty(4 * p, dtype=torch.int64, device=dev)
        dist.all_gather_into_tensor(all_ends, ends)
        if rank == 0:
            e = all_ends.view(p, 4).tolist()
            held = [r for r in e if r[2] > 0]
            ordered = all(held[i][1] <= held[i + 1][0] for i in range(len(held) - 1))
            total = sum(r[2] for r in e)
            ok = ordered and all(r[3] for r in e) and total == n * p
            med = statistics.median(times)
            results.append((log2n, n * p, med, ok))
            print(f"torch.distributed sample sort, int32, {p} GPUs x 2^{log2n} keys: "
                  f"{med:.2f} ms, {n * p / med / 1e6:.2f} Gkeys/s in all "
                  f"(median of {reps}, slowest rank), check {'ok' if ok else 'FAILED'}",
                  flush=True)
        del out
        torch.cuda.empty_cache()
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    ap.add_argument("--log2n", type=int, action="append",
                    help="keys per GPU as a power of two (repeatable; default 28 and 30)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--port", type=int, default=29533)
    a = ap.parse_args()
    if a.gpus < 1 or a.gpus > torch.cuda.device_count():
        sys.exit(f"--gpus {a.gpus}: this machine has {torch.cuda.device_count()} GPUs")
    v = torch.cuda.nccl.version()
    v = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    print(f"torch {torch.__version__}, NCCL {v}, "
          f"{torch.cuda.get_device_name(0)}, NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}",
          flush=True)
    results = mp.Manager().list()
    mp.spawn(worker, args=(a.gpus, a.log2n or [28, 30], a.reps, a.port, results),
             nprocs=a.gpus, join=True)
    sys.exit(0 if all(r[3] for r in results) and results else 1)


if __name__ == "__main__":
    main()
