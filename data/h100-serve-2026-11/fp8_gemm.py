"""bf16 and fp8 (e4m3, per-tensor scales, bf16 output: torch._scaled_mm, the
GEMM Transformer Engine's fp8 recipe runs) GEMMs of transformer-layer shapes
on one H100 at its default clocks, back to back, time and board power from
the harness's NVML window.

usage (on the GPU machine, from the repository root):
    python3 data/h100-serve-2026-11/fp8_gemm.py OUT.csv
"""
import sys
sys.path.insert(0, "python")
import torch
from wattlas import measure as M

# M x N x K: tokens x outputs x inputs
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 3072, 6144), (8192, 6144, 3072),
          (8192, 2304, 6144), (16384, 28672, 4096), (16384, 4096, 14336), (2048, 12288, 12288),
          (1024, 6144, 4096), (512, 4096, 4096)]


class A:
    warmup_s = 0.3
    window_s = 0.8
    repeats = 2


def main():
    dev = torch.device("cuda")
    nvml = M.Nvml()
    hd = nvml.device(0)
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev)
        cases = {"bf16": lambda: a @ b.t(),
                 "fp8": lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                 out_dtype=torch.bfloat16)}
        for dt, fn in cases.items():
            r = M.repeated(nvml, hd, fn, A, torch.cuda.synchronize)
            tf = 2.0 * m * n * k / (r["time_ms"] * 1e-3) / 1e12
            print(dt, m, n, k, "%.4f ms %.0f W %.0f MHz %.0f TFLOP/s thr 0x%x" % (
                r["time_ms"], r["power_w"], r["measured_clock_mhz"], tf, r["throttle_reasons"]), flush=True)
            rows.append("%s,%d,%d,%d,%.0f,%.5f,%.1f,%.1f,0x%x\n" % (
                dt, m, n, k, r["measured_clock_mhz"], r["time_ms"], r["power_w"], r["temp_c"],
                r["throttle_reasons"]))
            with open(sys.argv[1], "w") as f:
                f.write("dtype,m,n,k,measured_clock_mhz,time_ms,power_w,temp_c,throttle_reasons\n"
                        + "".join(rows))
        del a, b, a8, b8
        torch.cuda.empty_cache()
    nvml.shutdown()


if __name__ == "__main__":
    main()
