"""One Llama-3-8B decode step (b sequences, context L), captured in a CUDA graph,
as a serving engine runs it: fused QKV, RoPE, KV-cache write, SDPA over the cache
(GQA), o-proj, fused gate/up, SiLU*mul, down, RMSNorm, LM head, argmax sampler.
Time per replay and power via the harness's NVML window."""
import sys, time, json, statistics
sys.path.insert(0, "python")
import torch, torch.nn.functional as F
from wattlas import measure as M
H, I, NL, NH, NKV, V, D = 4096, 14336, 32, 32, 8, 128256, 128
dev = torch.device("cuda"); dt = torch.bfloat16
torch.manual_seed(0)
def w(*s): return (torch.randn(*s, device=dev, dtype=dt) * 0.02)
layers = [dict(qkv=w((NH + 2 * NKV) * D, H), o=w(H, NH * D), gu=w(2 * I, H), dn=w(H, I),
               n1=torch.ones(H, device=dev, dtype=dt), n2=torch.ones(H, device=dev, dtype=dt))
          for _ in range(NL)]
emb = w(V, H); head = w(V, H); nf = torch.ones(H, device=dev, dtype=dt)
def step_fn(b, L):
    kc = [torch.randn(b, NKV, L, D, device=dev, dtype=dt) for _ in range(NL)]
    vc = [torch.randn(b, NKV, L, D, device=dev, dtype=dt) for _ in range(NL)]
    tok = torch.zeros(b, dtype=torch.long, device=dev)
    pos = torch.tensor([L - 1], device=dev)
    cos = torch.randn(1, 1, 1, D, device=dev, dtype=dt); sin = cos.clone()
    def rope(x):
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return x * cos + torch.cat((-x2, x1), -1) * sin
    def step():
        x = emb[tok]
        for l, p in enumerate(layers):
            h = F.rms_norm(x, (H,), p["n1"])
            q, k, v = (h @ p["qkv"].t()).split([NH * D, NKV * D, NKV * D], -1)
            q = rope(q.view(b, 1, NH, D).transpose(1, 2)); k = rope(k.view(b, 1, NKV, D).transpose(1, 2))
            kc[l].index_copy_(2, pos, k); vc[l].index_copy_(2, pos, v.view(b, 1, NKV, D).transpose(1, 2))
            a = F.scaled_dot_product_attention(q, kc[l], vc[l], enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(b, NH * D) @ p["o"].t()
            h = F.rms_norm(x, (H,), p["n2"])
            g, u = (h @ p["gu"].t()).chunk(2, -1)
            x = x + (F.silu(g) * u) @ p["dn"].t()
        logits = F.rms_norm(x, (H,), nf) @ head.t()
        tok.copy_(logits.argmax(-1))
    return step
nvml = M.Nvml(); hd = nvml.device(0)
class A: warmup_s = 0.3; window_s = 1.0; repeats = 2
out = []
clocks = [int(c) for c in sys.argv[1].split(",")]
for b, L in [(8, 512), (32, 512), (128, 512), (512, 512), (8, 2048), (32, 2048), (128, 2048)]:
    try:
        st = step_fn(b, L)
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3): st()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g): st()
        for c in clocks:
            with M.Locked(nvml, hd, clock_mhz=c):
                m = M.repeated(nvml, hd, g.replay, A, torch.cuda.synchronize)
            r = dict(batch=b, ctx=L, sm_clock_mhz=c, time_ms=m["time_ms"], power_w=m["power_w"],
                     clk=m["measured_clock_mhz"], temp=m["temp_c"], thr=m["throttle_reasons"])
            print(json.dumps(r), flush=True); out.append(r)
        del g, st; torch.cuda.empty_cache()
    except torch.cuda.OutOfMemoryError:
        print("oom", b, L, flush=True); torch.cuda.empty_cache()
nvml.shutdown()
