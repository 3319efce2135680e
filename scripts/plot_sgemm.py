#!/usr/bin/env python3
"""Draw TFLOP/s against matrix size for the SGEMM ladder, pp_sgemm and cuBLAS.

Input: a CSV with a header n,step,name,ms,tflops,of_cublas (the rows of
`parprim ladder sgemm --csv --n N` for several N, with the size in front), as kept in
docs/benchmarks/h100-sgemm-ladder.csv. Variants (ids that are not plain numbers: v.., f..,
s..) are left out unless named after the PNG.
usage: scripts/plot_sgemm.py CSV PNG [VARIANT_ID ...]
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    keep = set(sys.argv[3:])
    series = defaultdict(dict)  # (step, name) -> {n: tflops}
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            if not row["step"].isdigit() and row["step"] not in keep:
                continue
            series[(row["step"], row["name"])][int(row["n"])] = float(row["tflops"])
    fig, ax = plt.subplots(figsize=(12, 5.5))
    def order(kv):
        step = kv[0][0]
        return (not step.isdigit(), step.rstrip("0123456789"), int(step.lstrip("vfs")))

    colors = plt.cm.tab20.colors
    for idx, ((step, name), pts) in enumerate(sorted(series.items(), key=order)):
        ns = sorted(pts)
        bold = "pp_sgemm" in name or "cublas" in name.lower() or "production" in name
        ax.plot(ns, [pts[n] for n in ns], marker="o", linewidth=2.5 if bold else 1.2,
                color=colors[(2 * idx) % 20 + (idx // 10) % 2], label=f"{step}: {name}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n = m = k (row-major C = A*B, FP32)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("SGEMM on the H100: the ladder, pp_sgemm and cuBLAS (pedantic FP32)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
