#!/usr/bin/env python3
"""bench_python.py — parprim from Python against its Python peers, in one process, on one GPU.

Times each case with CUDA events on torch's current stream (parprim queues torch inputs
there; CuPy and cuda.compute are given the same stream), median of --reps runs after
warm-up, and prints a table and a CSV: the target figures (call overhead of a small sum
against the same call from C, argsort vs torch.sort, top-k vs torch.topk, histogram vs
torch.histc, cumsum vs torch.cumsum and CuPy) and every primitive cuda.compute (pip
cuda-cccl) also has, when it imports.

    python3 scripts/bench_python.py [--log2n 28] [--reps 20] [--csv FILE] [--only NAME ...]
    python3 scripts/bench_python.py --plot FILE.csv FILE.png    (matplotlib; no GPU needed)
"""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import time

PLOT_ONLY = len(sys.argv) == 4 and sys.argv[1] == "--plot"  # needs matplotlib only

if not PLOT_ONLY:
    import numpy as np
    import torch

    import parprim

    try:
        import cupy as cp
    except Exception:  # noqa: BLE001 - any failure to import means: no CuPy peer
        cp = None
    try:
        import cuda.compute as cc
        from cuda.compute import OpKind, SortOrder
    except Exception as e:  # noqa: BLE001
        cc = None
        CC_WHY = f"{type(e).__name__}: {e}"
    else:
        CC_WHY = ""

ROWS = []


class _Stream:
    """torch's current stream in the __cuda_stream__ protocol cuda.compute reads."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def stream_handle():
    return torch.cuda.current_stream().cuda_stream


def gpu_ms(fn, reps, setup=None, warm=3, batch=1):
    """Median of reps CUDA-event timings of fn() on the current stream; setup() (not timed)
    runs before each. With batch > 1 (and no setup) each timing brackets batch calls queued
    back to back and is divided by batch: the host's part of each call then overlaps the
    device's work of the one before, so the figure is the device time per call. With batch = 1 it also holds the host's part of one call (the device
    idles after the first event until the call launches)."""
    assert batch == 1 or setup is None
    for _ in range(warm):
        if setup:
            setup()
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if setup:
            setup()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def pair_ms(ours_fn, peer_fn, reps, batch=8):
    """Ours and the peer, each timed both ways (gpu_ms): the batched device time per call
    (the ratio reported) and one call per event pair (host part included, in the note)."""
    ours_b, peer_b = gpu_ms(ours_fn, reps, batch=batch), gpu_ms(peer_fn, reps, batch=batch)
    ours_1, peer_1 = gpu_ms(ours_fn, reps), gpu_ms(peer_fn, reps)
    note = f"batch of {batch}; one call per event pair: {ours_1:.4f} vs {peer_1:.4f} ms ({peer_1 / ours_1:.3f}x)"
    return ours_b, peer_b, note


def row(case, n, dtype, ours_ms, peer, peer_ms, target=None, note=""):
    speedup = peer_ms / ours_ms if ours_ms and peer_ms else None
    met = "" if target is None or speedup is None else ("yes" if speedup >= target else "NO")
    ROWS.append({"case": case, "n": n, "dtype": dtype, "parprim_ms": ours_ms, "peer": peer, "peer_ms": peer_ms,
                 "speedup": speedup, "target": target, "met": met, "note": note})
    s = f"{speedup:6.2f}x" if speedup else "   n/a "
    t = f">= {target}x {met}" if target else ""
    pm = f"{peer_ms:10.3f}" if peer_ms else "       n/a"
    print(f"{case:34s} {n:>11} {dtype:>5} {ours_ms:10.3f} ms  {peer:22s} {pm} ms  {s}  {t} {note}", flush=True)


def cc_call(make, call_kwargs, make_kwargs):
    """cuda.compute's object API: build once, size and allocate temp storage once, then
    time only the call."""
    algo = make(**make_kwargs)
    nbytes = algo(temp_storage=None, **call_kwargs)
    temp = torch.empty(max(int(nbytes), 1), dtype=torch.uint8, device="cuda")
    stream = _Stream(stream_handle())
    return lambda: algo(temp_storage=temp, stream=stream, **call_kwargs)


def bench_overhead(args):
    """Time per call of a small sum from C (a loop inside the extension) and from Python, in
    interleaved rounds: the host's speed drifts between rounds (clock, other tenants), so
    each round's difference is taken from calls seconds apart and the median of the rounds
    is reported, with their spread."""
    x = torch.rand(1024, device="cuda")
    iters = args.overhead_iters
    out = torch.empty((), device="cuda")

    def loop(fn):
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / iters

    rounds = []
    for _ in range(args.overhead_rounds):
        c_s = parprim._bench_reduce_c(x, iters)
        py_s = loop(lambda: parprim.sum(x))
        py_out_s = loop(lambda: parprim.sum(x, out=out))
        rounds.append((py_s - c_s, c_s, py_s, py_out_s))
    rounds.sort()
    over_s, c_s, py_s, py_out_s = rounds[len(rounds) // 2]
    torch_s = loop(lambda: torch.sum(x))
    over = over_s * 1e6
    spread = ", ".join(f"{r[0] * 1e6:.2f}" for r in rounds)
    print(f"call overhead, sum of 1024 f32 (median of {len(rounds)} rounds): C {c_s * 1e6:.2f} us/call, "
          f"Python {py_s * 1e6:.2f} us (out= {py_out_s * 1e6:.2f} us), torch.sum {torch_s * 1e6:.2f} us: "
          f"{over:.2f} us above C (rounds: {spread}) (target <= 5: {'yes' if over <= 5 else 'NO'})", flush=True)
    ROWS.append({"case": "call overhead sum (us per call, Python - C)", "n": 1024, "dtype": "f32",
                 "parprim_ms": py_s * 1e3, "peer": "same call from C", "peer_ms": c_s * 1e3, "speedup": None,
                 "target": "<= 5 us", "met": "yes" if over <= 5 else "NO",
                 "note": f"{over:.2f} us above C, median of rounds {spread}; out= {(py_out_s - c_s) * 1e6:.2f} us; "
                         f"torch.sum {torch_s * 1e6:.2f} us"})


def bench_sort(args, n):
    x = torch.rand(n, device="cuda")
    ours = gpu_ms(lambda: parprim.sort(x, return_indices=True), args.reps)
    peer = gpu_ms(lambda: torch.sort(x), args.reps)
    row("sort f32 + int64 indices", n, "f32", ours, "torch.sort", peer, 1.5)
    ours32 = gpu_ms(lambda: parprim.sort(x, return_indices=True, index_dtype="int32"), args.reps)
    row("sort f32 + int32 indices", n, "f32", ours32, "torch.sort (int64 idx)", peer, None,
        "int32 indices: not like for like")
    buf = torch.empty_like(x)
    inplace = gpu_ms(lambda: parprim.sort(buf, out=buf), args.reps, setup=lambda: buf.copy_(x))
    if cc is not None:
        out = torch.empty_like(x)
        radix = cc_call(cc.make_radix_sort,
                        dict(d_in_keys=x, d_out_keys=out, d_in_values=None, d_out_values=None, num_items=n),
                        dict(d_in_keys=x, d_out_keys=out, d_in_values=None, d_out_values=None,
                             order=SortOrder.ASCENDING))
        row("sort keys f32 (in place, out=x)", n, "f32", inplace, "cuda.compute radix_sort", gpu_ms(radix, args.reps), 1.0)
        new, peer, note = pair_ms(lambda: parprim.sort(x), radix, args.reps)
        row("sort keys f32 (new array)", n, "f32", new, "cuda.compute radix_sort", peer, 1.0, note)
        try:
            merge = cc_call(cc.make_merge_sort,
                            dict(d_in_keys=x, d_in_values=None, d_out_keys=out, d_out_values=None, num_items=n,
                                 op=OpKind.LESS),
                            dict(d_in_keys=x, d_in_values=None, d_out_keys=out, d_out_values=None, op=OpKind.LESS))
            ours_m = gpu_ms(lambda: parprim.sort(buf, out=buf, algorithm="merge"), args.reps, setup=lambda: buf.copy_(x))
            row("merge sort keys f32 (in place)", n, "f32", ours_m, "cuda.compute merge_sort", gpu_ms(merge, args.reps), 1.0)
        except Exception as e:  # noqa: BLE001
            print(f"merge sort peer failed: {type(e).__name__}: {e}", flush=True)
        xi = torch.randint(0, 2**31 - 1, (n,), device="cuda", dtype=torch.int32).view(torch.uint32)
        vi = torch.arange(n, device="cuda", dtype=torch.int32).view(torch.uint32)
        ko, vo = torch.empty_like(xi), torch.empty_like(vi)
        pairs = cc_call(cc.make_radix_sort,
                        dict(d_in_keys=xi, d_out_keys=ko, d_in_values=vi, d_out_values=vo, num_items=n),
                        dict(d_in_keys=xi, d_out_keys=ko, d_in_values=vi, d_out_values=vo, order=SortOrder.ASCENDING))
        kb, vb = torch.empty_like(xi), torch.empty_like(vi)
        ours_p = gpu_ms(lambda: parprim.sort(kb, values=vb, out=kb, values_out=vb), args.reps,
                        setup=lambda: (kb.copy_(xi), vb.copy_(vi)))
        row("sort pairs u32/u32 (in place)", n, "u32", ours_p, "cuda.compute radix_sort", gpu_ms(pairs, args.reps), 1.0)
    else:
        row("sort keys f32 (in place, out=x)", n, "f32", inplace, "cuda.compute", None, None, CC_WHY)


def bench_topk(args, n):
    x = torch.rand(n, device="cuda")
    ours = gpu_ms(lambda: parprim.topk(x, 1000), args.reps)
    peer = gpu_ms(lambda: torch.topk(x, 1000), args.reps)
    row("topk f32 k=1000", n, "f32", ours, "torch.topk", peer, 5.0)


def bench_histogram(args, n):
    x = torch.rand(n, device="cuda")
    ours = gpu_ms(lambda: parprim.histogram(x, 1024, range=(0.0, 1.0)), args.reps)
    peer = gpu_ms(lambda: torch.histc(x, 1024, 0.0, 1.0), args.reps)
    row("histogram f32 1024 bins", n, "f32", ours, "torch.histc", peer, 3.0)
    if cc is not None:
        h = torch.empty(1024, dtype=torch.int32, device="cuda")
        kw = dict(d_samples=x, d_histogram=h, h_num_output_levels=np.array([1025], np.int32),
                  h_lower_level=np.array([0.0], np.float32), h_upper_level=np.array([1.0], np.float32),
                  num_samples=n)
        hist = cc_call(cc.make_histogram_even, kw, kw)
        mine, peer, note = pair_ms(lambda: parprim.histogram(x, 1024, range=(0.0, 1.0)), hist, args.reps)
        row("histogram f32 1024 bins", n, "f32", mine, "cuda.compute histogram", peer, 1.0, note)


def bench_scan(args, n):
    for name, dt in (("i32", torch.int32), ("u32", torch.uint32)):
        base = torch.randint(0, 16, (n,), device="cuda", dtype=torch.int32)
        x = base if dt == torch.int32 else base.view(torch.uint32)
        ours = gpu_ms(lambda: parprim.cumsum(x), args.reps)
        try:
            peer = gpu_ms(lambda: torch.cumsum(x, 0, dtype=dt), args.reps)
            row(f"cumsum {name}", n, name, ours, "torch.cumsum", peer, 1.1)
        except Exception as e:  # noqa: BLE001 - torch lacks some unsigned kernels
            row(f"cumsum {name}", n, name, ours, "torch.cumsum", None, 1.1, f"torch: {type(e).__name__}: {e}")
        if cp is not None:
            xc = cp.from_dlpack(x)
            peer = gpu_ms(lambda: cp.cumsum(xc, dtype=xc.dtype), args.reps)
            row(f"cumsum {name}", n, name, ours, "cupy.cumsum", peer, 1.1)
        if cc is not None:
            out = torch.empty_like(x)
            init = np.zeros(1, np.int32 if name == "i32" else np.uint32)
            kw = dict(d_in=x, d_out=out, op=OpKind.PLUS, init_value=init)
            scan = cc_call(cc.make_inclusive_scan, dict(kw, num_items=n), kw)
            mine, peer, note = pair_ms(lambda: parprim.cumsum(x), scan, args.reps)
            row(f"inclusive scan {name}", n, name, mine, "cuda.compute incl. scan", peer, 1.0, note)
            scan = cc_call(cc.make_exclusive_scan, dict(kw, num_items=n), kw)
            mine, peer, note = pair_ms(lambda: parprim.cumsum(x, exclusive=True), scan, args.reps)
            row(f"exclusive scan {name}", n, name, mine, "cuda.compute excl. scan", peer, 1.0, note)


def bench_reduce(args, n):
    x = torch.rand(n, device="cuda")
    ours = gpu_ms(lambda: parprim.sum(x), args.reps)
    row("reduce sum f32", n, "f32", ours, "torch.sum", gpu_ms(lambda: torch.sum(x), args.reps), None)
    if cc is not None:
        out = torch.empty(1, device="cuda")
        for op, ours_fn, kind in (("sum", parprim.sum, OpKind.PLUS), ("min", parprim.min, OpKind.MINIMUM),
                                  ("max", parprim.max, OpKind.MAXIMUM)):
            init = np.array([{"sum": 0.0, "min": np.inf, "max": -np.inf}[op]], np.float32)
            kw = dict(d_in=x, d_out=out, op=kind, h_init=init)
            red = cc_call(cc.make_reduce_into, dict(kw, num_items=n), kw)
            mine, peer, note = pair_ms(lambda: ours_fn(x, out=out), red, args.reps)
            row(f"reduce {op} f32", n, "f32", mine, "cuda.compute reduce_into", peer, 1.0, note)


def bench_select(args, n):
    x = torch.randn(n, device="cuda")
    ours = gpu_ms(lambda: parprim.select(x, ">", 0.0), args.reps)
    part = gpu_ms(lambda: parprim.partition(x, ">", 0.0), args.reps)
    if cc is None:
        row("select x>0 f32", n, "f32", ours, "cuda.compute select", None, None, CC_WHY)
        return
    try:
        out = torch.empty_like(x)
        count = torch.empty(1, dtype=torch.int64, device="cuda")

        def positive(v):
            return v > 0

        kw = dict(d_in=x, d_out=out, d_num_selected_out=count, cond=positive)
        sel = cc_call(cc.make_select, dict(kw, num_items=n), kw)
        # parprim's select returns an array sized by the count, which it reads on the host:
        # the peer is given the same wait
        peer = gpu_ms(lambda: (sel(), count.item()), args.reps)
        row("select x>0 f32", n, "f32", ours, "cuda.compute select", peer, 1.0)
    except Exception as e:  # noqa: BLE001 - a Python predicate needs numba-cuda-mlir
        row("select x>0 f32", n, "f32", ours, "cuda.compute select", None, 1.0, f"peer: {type(e).__name__}: {e}"[:160])
    row("partition x>0 f32", n, "f32", part, "(no cuda.compute peer run)", None, None)


def package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001 - installed with --target, or without metadata
        return "unknown"


def environment():
    p = torch.cuda.get_device_properties(0)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    info = parprim.default_context().device_info()
    return {"gpu": p.name, "driver": info["driver_version"], "cuda_runtime": info["runtime_version"],
            "torch": torch.__version__, "cupy": cp.__version__ if cp else "absent",
            "cuda_cccl": package_version("cuda-cccl") if cc else "absent",
            "python": sys.version.split()[0], "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def plot(csv_path, png_path):
    """Speed-ups over each peer as bars, with each case's target marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path, newline="") as f:
        header = f.readline().lstrip("# ").strip()
        rows = [r for r in csv.DictReader(f) if r["speedup"]]
    labels = [f"{r['case']} vs {r['peer']}" for r in rows]
    speed = [float(r["speedup"]) for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(rows) + 1.6))
    colors = ["tab:green" if r["met"] != "NO" else "tab:red" for r in rows]
    ax.barh(range(len(rows)), speed, color=colors)
    for i, r in enumerate(rows):
        if r["target"]:
            t = float(r["target"])
            ax.plot([t, t], [i - 0.4, i + 0.4], color="black", linewidth=2)
        ax.text(speed[i], i, f" {speed[i]:.2f}x", va="center", fontsize=8)
    ax.axvline(1.0, color="grey", linestyle=":")
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up of parprim from Python (peer time / parprim time); black marks: targets")
    ax.set_title(header, fontsize=7)
    fig.tight_layout()
    fig.savefig(png_path, dpi=130)
    print(f"wrote {png_path}")


def main():
    if PLOT_ONLY:
        return plot(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--overhead-iters", type=int, default=20000)
    ap.add_argument("--overhead-rounds", type=int, default=5)
    ap.add_argument("--csv", default="")
    ap.add_argument("--only", nargs="*", default=[],
                    help="overhead sort topk histogram scan reduce select (default: all)")
    args = ap.parse_args()
    if not torch.cuda.is_available() or parprim.default_context().backend != "cuda":
        sys.exit("bench_python: needs a GPU, torch with CUDA and a CUDA build of parprim")
    env = environment()
    print("# " + ", ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    if not cc:
        print(f"# cuda.compute not importable: {CC_WHY}", flush=True)
    n = 1 << args.log2n
    cases = {"overhead": bench_overhead, "sort": bench_sort, "topk": bench_topk, "histogram": bench_histogram,
             "scan": bench_scan, "reduce": bench_reduce, "select": bench_select}
    for name, fn in cases.items():
        if args.only and name not in args.only:
            continue
        try:
            fn(args) if name == "overhead" else fn(args, n)
        except Exception as e:  # noqa: BLE001 - one case failing must not hide the others
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
            ROWS.append({"case": name, "n": n, "dtype": "", "parprim_ms": None, "peer": "", "peer_ms": None,
                         "speedup": None, "target": None, "met": "FAILED", "note": f"{type(e).__name__}: {e}"[:200]})
        torch.cuda.empty_cache()
        parprim.default_context().empty_cache()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write("# " + ", ".join(f"{k}={v}" for k, v in env.items()) + "\n")
            w = csv.DictWriter(f, fieldnames=list(ROWS[0].keys()))
            w.writeheader()
            w.writerows(ROWS)
        print(f"wrote {args.csv}", flush=True)


if __name__ == "__main__":
    main()
