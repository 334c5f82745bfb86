import torch, sys, json, subprocess, collections
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda"); bf = torch.bfloat16
x = torch.randn(4, 12, 1024, 1024, device=dev, dtype=bf)
m = torch.ones(1, 1, 1024, 1024, device=dev, dtype=torch.bool).tril()
xm = torch.where(m, x, torch.tensor(-1e4, device=dev, dtype=bf)).contiguous()
xmin = torch.where(m, x, torch.tensor(torch.finfo(bf).min, device=dev, dtype=bf)).contiguous()
xinf = torch.where(m, x, torch.tensor(float("-inf"), device=dev, dtype=bf)).contiguous()
xf = xm.float(); xfmin = torch.where(m, x.float(), torch.tensor(torch.finfo(torch.float32).min, device=dev)).contiguous()
g = torch.randn(4096, 3072, device=dev, dtype=bf); gt = (g.float() * 1e-6).to(bf)
cases = {"softmax_plain": lambda: torch.softmax(x, -1), "softmax_masked_1e4": lambda: torch.softmax(xm, -1),
 "softmax_masked_min": lambda: torch.softmax(xmin, -1), "softmax_masked_inf": lambda: torch.softmax(xinf, -1),
 "softmax_fp32_masked_1e4": lambda: torch.softmax(xf, -1), "softmax_fp32_masked_min": lambda: torch.softmax(xfmin, -1),
 "sum0_plain": lambda: g.sum(0), "sum0_tiny": lambda: gt.sum(0)}
for c in sys.argv[1].split(","):
    subprocess.run(["nvidia-smi", "-lgc", "%s,%s" % (c, c)], check=True, capture_output=True)
    try:
        for name, fn in cases.items():
            for _ in range(3): fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                for _ in range(8): fn()
                torch.cuda.synchronize()
            d = collections.defaultdict(list)
            for e in p.events():
                if e.device_type == torch.autograd.DeviceType.CUDA:
                    d[e.name[:50]].append(e.device_time)
            print(c, name, json.dumps({k: round(sorted(v)[len(v)//2], 2) for k, v in d.items()}), flush=True)
    finally:
        subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
