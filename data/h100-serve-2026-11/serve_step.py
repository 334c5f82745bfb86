"""One serving-engine step of Llama-3-8B with chunked prefill, replayed from a
CUDA graph at the board's default clocks (nothing locked, the default power
limit): B running sequences decode one token each at context L, and C tokens
of one arriving prompt are prefilled in the same forward (vLLM's chunked
prefill: the prompt's rows ride in the same GEMMs; its attention is a causal
kernel over the chunk). C = 0 is a plain decode step.

The step is built by hand in PyTorch as decode_graph_step.py in
data/h100-vm-2026-11 builds it (fused QKV, RoPE, KV-cache write, SDPA over the
cache with GQA, o-proj, fused gate/up, SiLU times up, down, RMSNorm, LM head
over the decode rows, argmax): more kernels per layer than vLLM's (RoPE,
SiLU-and-mul and the residual adds unfused). Weights and caches are random.
Time per replay and board power come from the harness's NVML window.

usage (on the GPU machine, from the repository root):
    python3 data/h100-serve-2026-11/serve_step.py OUT.csv
"""
import sys, json
sys.path.insert(0, "python")
import torch, torch.nn.functional as F
from wattlas import measure as M

H, I, NL, NH, NKV, V, D = 4096, 14336, 32, 32, 8, 128256, 128
CASES = [(8, 512, 0), (8, 512, 256), (32, 512, 0), (32, 512, 256), (32, 512, 1024),
         (128, 512, 0), (128, 512, 256), (128, 512, 1024), (128, 1024, 0), (128, 1024, 512),
         (256, 512, 0), (256, 512, 512), (256, 1024, 0), (256, 1024, 1024),
         (512, 512, 0), (512, 512, 256), (512, 512, 1024), (512, 512, 2048)]

dev = torch.device("cuda")
dt = torch.bfloat16
torch.manual_seed(0)


def w(*s):
    return torch.randn(*s, device=dev, dtype=dt) * 0.02


layers = [dict(qkv=w((NH + 2 * NKV) * D, H), o=w(H, NH * D), gu=w(2 * I, H), dn=w(H, I),
               n1=torch.ones(H, device=dev, dtype=dt), n2=torch.ones(H, device=dev, dtype=dt))
          for _ in range(NL)]
emb = w(V, H)
head = w(V, H)
nf = torch.ones(H, device=dev, dtype=dt)


def step_fn(b, L, C):
    kc = [torch.randn(b, NKV, L, D, device=dev, dtype=dt) for _ in range(NL)]
    vc = [torch.randn(b, NKV, L, D, device=dev, dtype=dt) for _ in range(NL)]
    tok = torch.zeros(b + C, dtype=torch.long, device=dev)
    pos = torch.tensor([L - 1], device=dev)
    cos = torch.randn(1, 1, 1, D, device=dev, dtype=dt)
    sin = cos.clone()

    def rope(x):
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return x * cos + torch.cat((-x2, x1), -1) * sin

    def step():
        x = emb[tok]  # b decode rows, then the chunk's C rows
        for l, p in enumerate(layers):
            h = F.rms_norm(x, (H,), p["n1"])
            qkv = h @ p["qkv"].t()
            q, k, v = qkv[:b].split([NH * D, NKV * D, NKV * D], -1)
            q = rope(q.view(b, 1, NH, D).transpose(1, 2))
            k = rope(k.view(b, 1, NKV, D).transpose(1, 2))
            kc[l].index_copy_(2, pos, k)
            vc[l].index_copy_(2, pos, v.view(b, 1, NKV, D).transpose(1, 2))
            a = F.scaled_dot_product_attention(q, kc[l], vc[l], enable_gqa=True)
            a = a.transpose(1, 2).reshape(b, NH * D)
            if C:
                cq, ck, cv = qkv[b:].split([NH * D, NKV * D, NKV * D], -1)
                cq = rope(cq.view(1, C, NH, D).transpose(1, 2))
                ck = rope(ck.view(1, C, NKV, D).transpose(1, 2))
                cv = cv.view(1, C, NKV, D).transpose(1, 2)
                ca = F.scaled_dot_product_attention(cq, ck, cv, is_causal=True, enable_gqa=True)
                a = torch.cat((a, ca.transpose(1, 2).reshape(C, NH * D)))
            x = x + a @ p["o"].t()
            h = F.rms_norm(x, (H,), p["n2"])
            g, u = (h @ p["gu"].t()).chunk(2, -1)
            x = x + (F.silu(g) * u) @ p["dn"].t()
        logits = F.rms_norm(x[:b], (H,), nf) @ head.t()
        tok[:b].copy_(logits.argmax(-1))
    return step


class A:
    warmup_s = 0.3
    window_s = 1.0
    repeats = 2


def main():
    out_path = sys.argv[1]
    nvml = M.Nvml()
    hd = nvml.device(0)
    rows = []
    head_line = ("model,batch,context_tokens,chunk_tokens,dtype,measured_clock_mhz,time_ms,"
                 "power_w,energy_j,temp_c,throttle_reasons,power_limit_w\n")
    limit = nvml.power_limit_w(hd)
    for b, L, C in CASES:
        try:
            st = step_fn(b, L, C)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    st()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                st()
            m = M.repeated(nvml, hd, g.replay, A, torch.cuda.synchronize)
            r = dict(batch=b, ctx=L, chunk=C, time_ms=m["time_ms"], power_w=m["power_w"],
                     clk=m["measured_clock_mhz"], temp=m["temp_c"], thr=m["throttle_reasons"],
                     spread=m["time_spread_pct"])
            print(json.dumps(r), flush=True)
            rows.append("llama-3-8b,%d,%d,%d,bf16,%.0f,%.4f,%.1f,%.5f,%.1f,0x%x,%.0f\n" % (
                b, L, C, m["measured_clock_mhz"], m["time_ms"], m["power_w"], m["energy_j"],
                m["temp_c"], m["throttle_reasons"], limit))
            with open(out_path, "w") as f:  # saved after every point
                f.write(head_line + "".join(rows))
            del g, st
            torch.cuda.empty_cache()
        except torch.cuda.OutOfMemoryError:
            print("oom", b, L, C, flush=True)
            torch.cuda.empty_cache()
    nvml.shutdown()


if __name__ == "__main__":
    main()
