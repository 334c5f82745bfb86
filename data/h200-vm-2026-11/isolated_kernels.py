# Kernel durations in isolation and in a model-like sequence, via torch.profiler.
import torch, sys, json, subprocess, collections
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
bf, f32 = torch.bfloat16, torch.float32
F = torch.nn.functional
def r(*s, dt=bf): return torch.randn(*s, device=dev, dtype=dt)
cases = {}
def add(name, fn): cases[name] = fn
x1 = r(393216, 1024); add("softmax_bf16_393216x1024", lambda: torch.softmax(x1, -1))
x2 = r(49152, 1024); add("softmax_bf16_49152x1024", lambda: torch.softmax(x2, -1))
x3 = r(4, 12, 1024, 1024); add("softmax_bf16_4x12x1024x1024", lambda: torch.softmax(x3, -1))
x4 = r(4, 12, 1024, 1024, dt=f32); add("softmax_fp32_4x12x1024x1024", lambda: torch.softmax(x4, -1))
x5 = r(393216, 1024, dt=f32); add("softmax_fp32_393216x1024", lambda: torch.softmax(x5, -1))
m = torch.ones(1, 1, 1024, 1024, device=dev, dtype=torch.bool).tril()
def seq():
    a = torch.where(m, x3, torch.tensor(-1e4, device=dev, dtype=bf))
    return torch.softmax(a, -1)
add("seq_where_softmax_bf16_4x12x1024x1024", seq)
l1 = r(4096, 768); w768 = torch.ones(768, device=dev, dtype=bf)
add("layernorm_bf16_4096x768", lambda: F.layer_norm(l1, (768,), w768, w768))
l2 = r(131072, 2048); w2k = torch.ones(2048, device=dev, dtype=bf)
add("layernorm_bf16_131072x2048", lambda: F.layer_norm(l2, (2048,), w2k, w2k))
l3 = r(131072, 768)
add("layernorm_bf16_131072x768", lambda: F.layer_norm(l3, (768,), w768, w768))
s1 = r(4096, 768); add("sum0_bf16_4096x768", lambda: s1.sum(0))
s2 = r(4096, 3072); add("sum0_bf16_4096x3072", lambda: s2.sum(0))
s3 = r(65536, 3072); add("sum0_bf16_65536x3072", lambda: s3.sum(0))
c1 = r(4096, 1536); add("upcast_bf16_4096x1536", lambda: c1.float())
c2 = r(4, 12, 1024, 1024); add("upcast_bf16_4x12x1024x1024", lambda: c2.float())
mf = r(4096, 1536, dt=f32); add("mean_fp32_4096x1536", lambda: mf.pow(2).mean(-1, keepdim=True))
mf2 = r(131072, 1536, dt=f32); add("mean_fp32_131072x1536", lambda: mf2.pow(2).mean(-1, keepdim=True))
ce = r(4096, 50257, dt=f32); tgt = torch.randint(0, 50257, (4096,), device=dev)
add("logsoftmax_fp32_4096x50257", lambda: torch.log_softmax(ce, -1))
def run(clock):
    out = {}
    for name, fn in cases.items():
        for _ in range(3): fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(10): fn()
            torch.cuda.synchronize()
        d = collections.defaultdict(list)
        for e in p.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                d[e.name[:70]].append(e.device_time)
        out[name] = {k: sorted(v)[len(v)//2] for k, v in d.items()}
        print(clock, name, json.dumps(out[name]), flush=True)
    return out
res = {}
for c in sys.argv[1].split(","):
    subprocess.run(["nvidia-smi", "-lgc", "%s,%s" % (c, c)], check=True, capture_output=True)
    try:
        res[c] = run(c)
    finally:
        subprocess.run(["nvidia-smi", "-rgc"], capture_output=True)
json.dump(res, open(sys.argv[2], "w"), indent=1)
