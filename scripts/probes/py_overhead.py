"""Where a small parprim call's host time goes (probe): each line, best of 5 rounds."""
import sys
import time

import torch

import parprim

x = torch.rand(1024, device="cuda")
out = torch.empty((), device="cuda")


def t(name, fn, iters=20000):
    for _ in range(300):
        fn()
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t0) / iters)
        torch.cuda.synchronize()
    print(f"{name:44s} {best * 1e6:8.3f} us", flush=True)


print("# module", parprim.__file__, sys.version.split()[0], torch.__version__)
t("lambda: None", lambda: None)
t("x.dtype", lambda: x.dtype)
t("x.is_cuda", lambda: x.is_cuda)
t("x.get_device()", lambda: x.get_device())
t("x.shape", lambda: x.shape)
t("x.stride()", lambda: x.stride())
t("x.data_ptr()", lambda: x.data_ptr())
raw = torch._C._cuda_getCurrentRawStream
t("torch._C._cuda_getCurrentRawStream(0)", lambda: raw(0))
t("torch.empty(()) cuda", lambda: torch.empty((), device="cuda"))
c_s = min(parprim._bench_reduce_c(x, 20000) for _ in range(5))
print(f"{'C loop (pp_reduce)':44s} {c_s * 1e6:8.3f} us", flush=True)
t("parprim.sum(x)", lambda: parprim.sum(x))
t("parprim.sum(x, out=out)", lambda: parprim.sum(x, out=out))
t("torch.sum(x)", lambda: torch.sum(x))
