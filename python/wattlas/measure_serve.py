"""python3 -m wattlas.measure serve: a serving engine measured on a GPU, in
the columns of ``wattlas serve`` (so that ``wattlas validate`` scores them).

The requests are the ones ``wattlas serve`` simulates for the same options
(``wattlas.serve_requests``: a workload preset drawn with a seed, a CSV of
lengths, or fixed lengths), sent all at once, as the ML.ENERGY benchmark
sends them. Every request generates exactly its output length (EOS
ignored), sampled as it asks (temperature, top-p, top-k). Two engines:

* ``vllm``, when vLLM is importable: its LLMEngine, stepped here, on a
  model directory written from the wattlas preset's config (random weights:
  ``load_format="dummy"``, no tokenizer, no download), with the engine
  options given (max_num_seqs, max_num_batched_tokens, async scheduling).
* ``builtin``, otherwise: a continuous-batching loop over the HF model
  (Llama-family configs: rotary, RMSNorm, gated MLP) with random weights: a
  static KV cache of max_num_seqs slots, each request's prompt prefilled
  eagerly when it is admitted (one request's prompt a forward, at most
  max_num_batched_tokens of prompts a step), and the decode steps replayed
  from CUDA graphs captured at vLLM's capture sizes, the running requests
  kept in the first slots so a graph's rows are theirs. Its attention reads
  each slot's whole cache length (a static cache, not paged), which costs
  more than vLLM's at short contexts: the rows say which engine ran.

What is measured, per operating point (a locked clock or a power limit):
each step's end (after its tokens reach the host), which requests got a
token there, and the board's energy counter (as the other subcommands read
it). From those, as ``wattlas serve`` and the ML.ENERGY benchmark define
them: the steady state opens when max_num_seqs requests have their first
token and closes when requests - max_num_seqs - 1 have finished; avg_batch,
output tokens/s, power and energy per token (and per request, that times the
mean output) over it, empty when the run has none; the ITL (the time between
a request's consecutive tokens) and TTFT (arrival to first token)
percentiles over every request of the whole run; the run_ columns, time and
energy over the whole run.
"""

import math
import os
import statistics
import time

from .measure_files import MeasureError, earlier_rows, save_measurements
from .measure_nvml import Sampler, Locked, power_from_updates

SERVE_COLUMNS = [
    "gpu", "model", "dtype", "workload", "prompt_tokens", "output_tokens", "requests", "seed",
    "max_num_seqs", "max_num_batched_tokens", "async_scheduling", "temperature", "top_p",
    "top_k", "repetition_penalty", "engine", "sm_clock_mhz", "power_limit_w", "measured_clock_mhz", "temp_c",
    "throttle_reasons", "avg_batch", "output_tokens_per_s", "power_w", "energy_per_token_j",
    "energy_per_request_j", "steady_s", "steady_start_s", "steady_end_s", "stable",
    "median_itl_ms", "p90_itl_ms", "p99_itl_ms", "median_ttft_ms", "p90_ttft_ms",
    "run_avg_batch", "run_output_tokens_per_s", "run_power_w", "run_energy_per_token_j",
    "run_energy_per_request_j", "time_s", "energy_j"]
# the columns that say which configuration a row measured (up to the limit)
SERVE_POINT = SERVE_COLUMNS[:SERVE_COLUMNS.index("power_limit_w") + 1]

# vLLM's CUDA-graph capture sizes: 1, 2, 4, then multiples of 8
# (wl_serve_capture_size)


def capture_size(n, largest=512):
    for c in (1, 2, 4):
        if n <= c:
            return c
    c = (n + 7) // 8 * 8
    return c if c <= largest else 0


def _quantile(sorted_values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    x = q * (len(sorted_values) - 1)
    i = int(math.floor(x))
    j = min(i + 1, len(sorted_values) - 1)
    return sorted_values[i] + (sorted_values[j] - sorted_values[i]) * (x - i)


class Record:
    """What a run's steps did: per step its start and end, the requests
    running in it, whether requests still waited after its admissions, and
    the requests that got a token at its end."""

    def __init__(self, n, t0):
        self.t0 = t0
        self.steps = []  # (t_start, t_end, running, waiting, produced)
        self.first = [None] * n
        self.last = [None] * n

    def step(self, t_start, t_end, running, waiting, produced):
        self.steps.append((t_start, t_end, running, waiting, list(produced)))


def serve_metrics(rec, outputs, max_num_seqs, energy_between):
    """The columns of wattlas serve from a Record of a run of requests with
    these output lengths; energy_between(t0, t1) gives the board's energy
    (J) over a span. The steady state is the benchmark's window
    (RequestTracker in mlenergy/benchmark/llm/benchmark.py): it opens when
    max_num_seqs requests have a first token and closes when requests -
    max_num_seqs - 1 have finished (at the first finish when that is 0 or
    less); without one its columns are None. Raises MeasureError when the
    engine made no token."""
    n = len(outputs)
    first, last, made = [None] * n, [None] * n, [0] * n
    itl, ttft = [], []
    close_at = n - max_num_seqs - 1
    started = finished = 0
    state, w0, w1 = 0, None, None  # state: 0 not open, 1 open, 2 over
    w_tokens, w_batch, all_tokens, all_batch = 0, 0.0, 0, 0.0
    prev = rec.t0
    for (ts, te, running, waiting, produced) in rec.steps:
        inside = state == 1
        # the running requests between the last step's end and this one's:
        # what a sampled gauge of running requests sees
        all_batch += running * (te - prev)
        for i in produced:
            if first[i] is None:
                first[i] = te
                ttft.append(te - rec.t0)
                started += 1
            else:
                itl.append(te - last[i])
            last[i] = te
            made[i] += 1
            if made[i] == outputs[i]:
                finished += 1
        all_tokens += len(produced)
        if inside:
            w_tokens += len(produced)
            w_batch += running * (te - prev)
        if state == 0 and started >= max_num_seqs:
            state, w0 = 1, te
        if state < 2 and finished > 0 and finished >= close_at:
            if inside:
                w1 = te
            state = 2
        prev = te
    if not rec.steps or not all_tokens:
        raise MeasureError("serve: the engine made no token")
    t_end = rec.steps[-1][1]
    total_s = t_end - rec.t0
    energy = energy_between(rec.t0, t_end)
    itl.sort()
    ttft.sort()
    mean_out = sum(outputs) / n
    out = {"median_itl_ms": _quantile(itl, 0.5) * 1e3,
           "p90_itl_ms": _quantile(itl, 0.9) * 1e3,
           "p99_itl_ms": _quantile(itl, 0.99) * 1e3,
           "median_ttft_ms": _quantile(ttft, 0.5) * 1e3,
           "p90_ttft_ms": _quantile(ttft, 0.9) * 1e3,
           "run_avg_batch": all_batch / total_s, "run_output_tokens_per_s": all_tokens / total_s,
           "run_power_w": energy / total_s, "run_energy_per_token_j": energy / all_tokens,
           "run_energy_per_request_j": energy / n, "time_s": total_s, "energy_j": energy}
    for k in ("avg_batch", "output_tokens_per_s", "power_w", "energy_per_token_j",
              "energy_per_request_j", "steady_s", "steady_start_s", "steady_end_s", "stable"):
        out[k] = None
    if w0 is not None and w1 is not None and w1 > w0 and w_tokens:
        span = w1 - w0
        w_energy = energy_between(w0, w1)
        batch = w_batch / span
        out.update({"avg_batch": batch, "output_tokens_per_s": w_tokens / span,
                    "power_w": w_energy / span, "energy_per_token_j": w_energy / w_tokens,
                    "energy_per_request_j": w_energy / w_tokens * mean_out, "steady_s": span,
                    "steady_start_s": w0 - rec.t0, "steady_end_s": w1 - rec.t0,
                    "stable": 1 if span >= 20 and batch >= 0.85 * max_num_seqs else 0})
    else:
        out["stable"] = 0
    return out


class Batcher:
    """vLLM's admission without its paging: requests in arrival order take
    a free slot while fewer than max_num_seqs run and the step's prompt
    budget (max_num_batched_tokens) lasts (a prompt longer than the budget
    is admitted alone); each admitted prompt is prefilled (its first token)
    and the running requests decode one token each in one batched step.
    The compute is the backend's: prefill(slot, prompt) -> None, decode(n)
    over slots 0..n-1 -> None, move(src, dst) a slot's cache; sync() ends a
    step (the tokens read back)."""

    def __init__(self, backend, max_num_seqs, max_num_batched_tokens, now=time.perf_counter):
        self.b, self.S, self.budget, self.now = backend, max_num_seqs, max_num_batched_tokens, now
        self.name = getattr(backend, "name", "builtin")

    def run(self, prompts, outputs):
        n = len(prompts)
        rec = Record(n, self.now())
        slot_req, made = [], [0] * n
        nxt = 0
        while nxt < n or slot_req:
            ts = self.now()
            produced, budget = [], self.budget
            while nxt < n and len(slot_req) < self.S and (prompts[nxt] <= budget or
                                                          budget == self.budget):
                budget -= prompts[nxt]
                self.b.prefill(len(slot_req), prompts[nxt])
                slot_req.append(nxt)
                produced.append(nxt)
                nxt += 1
            decoding = [s for s, i in enumerate(slot_req) if i not in produced]
            if decoding:
                self.b.decode(len(slot_req))
                produced += [slot_req[s] for s in decoding]
            self.b.sync()
            te = self.now()
            running = len(slot_req)
            for i in produced:
                made[i] += 1
            # the finished leave; the last running request moves into the
            # freed slot, so that slots 0..n-1 are the running ones (from
            # the end: what moves has been checked and runs on)
            for s in range(len(slot_req) - 1, -1, -1):
                if made[slot_req[s]] >= outputs[slot_req[s]]:
                    last = len(slot_req) - 1
                    if s != last:
                        self.b.move(last, s)
                        slot_req[s] = slot_req[last]
                    slot_req.pop()
            rec.step(ts, te, running, nxt < n, produced)
        return rec


class TorchBackend:
    """The builtin engine's compute over an HF Llama-family model with
    random weights: a static KV cache of slots, eager prefills, CUDA-graph
    decode steps (see the module's docstring)."""

    name = "builtin"

    def __init__(self, torch, model_id, dtype, device, max_num_seqs, max_len, sampling,
                 graphs=True):
        import transformers  # the user's own
        from .measure_cases import MODEL_CONFIGS
        cls, kw = MODEL_CONFIGS[model_id]
        if cls not in ("LlamaConfig", "Qwen2Config"):
            raise MeasureError("serve: the builtin engine runs Llama-family models (rotary, "
                               "RMSNorm, gated MLP); %s needs vLLM" % model_id)
        cfg = getattr(transformers, cls)(**kw)
        self.torch, self.F = torch, torch.nn.functional
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
        with device:
            try:
                model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dt)
            except TypeError:
                model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dt)
        model.to(device).eval()
        self.m, self.head, self.vocab = model.model, model.lm_head, cfg.vocab_size
        L, H = cfg.num_hidden_layers, cfg.num_attention_heads
        KV = cfg.num_key_value_heads
        hd = cfg.hidden_size // H
        self.H, self.KV, self.hd, self.dev = H, KV, hd, device
        self.max_len = max_len = (max_len + 15) // 16 * 16
        need = 2 * L * max_num_seqs * KV * max_len * hd * torch.finfo(dt).bits // 8
        free, _ = torch.cuda.mem_get_info(device)
        if need > 0.9 * free:
            raise MeasureError("serve: a static cache of %d sequences of %d tokens needs %.1f GB, "
                               "%.1f GB are free; lower --max-num-seqs, or use vLLM (paged)"
                               % (max_num_seqs, max_len, need / 1e9, free / 1e9))
        self.K = torch.zeros(L, max_num_seqs, KV, max_len, hd, dtype=dt, device=device)
        self.V = torch.zeros_like(self.K)
        theta = getattr(cfg, "rope_theta", 10000.0)
        inv = 1.0 / theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd)
        ang = torch.outer(torch.arange(max_len, device=device, dtype=torch.float32), inv)
        ang = torch.cat([ang, ang], dim=-1)
        self.cos, self.sin = ang.cos().to(dt), ang.sin().to(dt)
        self.ar = torch.arange(max_len, device=device)
        self.rows = torch.arange(max_num_seqs, device=device)
        self.ids = torch.zeros(max_num_seqs, dtype=torch.long, device=device)
        self.pos = torch.zeros(max_num_seqs, dtype=torch.long, device=device)
        self.len = [0] * max_num_seqs
        self.sampling = sampling
        self.graphs, self.out = {}, {}
        self.pending = []
        if graphs:
            sizes = sorted({capture_size(n) for n in range(1, max_num_seqs + 1)} - {0})
            for c in sizes:
                self._capture(c)

    def _rot(self, x):
        """HF's rotate_half: (x1, x2) -> (-x2, x1)."""
        h = x.shape[-1] // 2
        return self.torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def _attend(self, q, k, v, **kw):
        try:
            return self.F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
        except TypeError:  # torch < 2.5: the key-value heads repeated
            r = self.H // self.KV
            return self.F.scaled_dot_product_attention(
                q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1), **kw)

    def _decode(self, B):
        """One token for slots 0..B-1 at their positions; the logits."""
        ids, pos = self.ids[:B], self.pos[:B]
        h = self.m.embed_tokens(ids)
        cos, sin = self.cos[pos].unsqueeze(1), self.sin[pos].unsqueeze(1)
        mask = (self.ar[None, :] <= pos[:, None])[:, None, None, :]
        for l, layer in enumerate(self.m.layers):
            a = layer.self_attn
            x = layer.input_layernorm(h)
            q = a.q_proj(x).view(B, self.H, self.hd)
            k = a.k_proj(x).view(B, self.KV, self.hd)
            v = a.v_proj(x).view(B, self.KV, self.hd)
            q = q * cos + self._rot(q) * sin
            k = k * cos + self._rot(k) * sin
            self.K[l][self.rows[:B], :, pos] = k
            self.V[l][self.rows[:B], :, pos] = v
            o = self._attend(q.unsqueeze(2), self.K[l, :B], self.V[l, :B], attn_mask=mask)
            h = h + a.o_proj(o.reshape(B, self.H * self.hd))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        return self.head(self.m.norm(h))

    def _capture(self, c):
        torch = self.torch
        with torch.no_grad():
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2):
                    self._decode(c)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out[c] = self._decode(c)
        self.graphs[c] = g

    def sample(self, logits):
        """vLLM's sampler (v1/sample/sampler.py, its PyTorch top-k/top-p
        path): greedy, or temperature, a full sort for top-p/top-k, and the
        exponential race."""
        torch, s = self.torch, self.sampling
        logits = logits.float()
        if s["temperature"] <= 0:
            return logits.argmax(dim=-1)
        logits = logits / s["temperature"]
        if s["top_p"] < 1 or s["top_k"] > 0:
            srt, idx = logits.sort(dim=-1)
            if s["top_k"] > 0:
                kth = srt[:, -min(s["top_k"], srt.shape[1])].unsqueeze(1)
                srt = srt.masked_fill(srt < kth, -float("inf"))
            if s["top_p"] < 1:
                cum = srt.softmax(dim=-1).cumsum(dim=-1)
                m = cum <= 1 - s["top_p"]
                m[:, -1] = False
                srt = srt.masked_fill(m, -float("inf"))
            logits = srt.scatter(-1, idx, srt)
        p = logits.softmax(dim=-1)
        return p.div_(torch.empty_like(p).exponential_()).argmax(dim=-1)

    def prefill(self, slot, prompt):
        torch = self.torch
        with torch.no_grad():
            ids = torch.randint(0, self.vocab, (prompt,), device=self.dev)
            h = self.m.embed_tokens(ids)[None]
            cos, sin = self.cos[:prompt][None, None], self.sin[:prompt][None, None]
            for l, layer in enumerate(self.m.layers):
                a = layer.self_attn
                x = layer.input_layernorm(h)
                q = a.q_proj(x).view(1, prompt, self.H, self.hd).transpose(1, 2)
                k = a.k_proj(x).view(1, prompt, self.KV, self.hd).transpose(1, 2)
                v = a.v_proj(x).view(1, prompt, self.KV, self.hd).transpose(1, 2)
                q = q * cos + self._rot(q) * sin
                k = k * cos + self._rot(k) * sin
                self.K[l, slot, :, :prompt] = k[0]
                self.V[l, slot, :, :prompt] = v[0]
                o = self._attend(q, k, v, is_causal=True)
                h = h + a.o_proj(o.transpose(1, 2).reshape(1, prompt, self.H * self.hd))
                h = h + layer.mlp(layer.post_attention_layernorm(h))
            tok = self.sample(self.head(self.m.norm(h[:, -1])))
        self.ids[slot] = tok[0]
        self.len[slot] = prompt
        self.pending.append(tok)

    def decode(self, n):
        torch = self.torch
        self.pos[:n] = torch.tensor(self.len[:n], device=self.dev)
        c = capture_size(n)
        if c in self.graphs:
            self.pos[n:c] = 0
            self.graphs[c].replay()
            logits = self.out[c][:n]
        else:
            with torch.no_grad():
                logits = self._decode(n)
        with torch.no_grad():
            tok = self.sample(logits)
        self.ids[:n] = tok
        for s in range(n):
            self.len[s] += 1
        self.pending.append(tok)

    def move(self, src, dst):
        self.K[:, dst] = self.K[:, src]
        self.V[:, dst] = self.V[:, src]
        self.ids[dst] = self.ids[src]
        self.len[dst] = self.len[src]

    def sync(self):
        for t in self.pending:  # the tokens read back: the engine's sync a step
            t.tolist()
        self.pending = []


class VllmBackend:
    """vLLM's own engine, stepped here (LLMEngine.step), on a model
    directory written from the preset's config with random weights."""

    def __init__(self, vllm, model_id, dtype, engine_args, sampling, workdir):
        import transformers
        from .measure_cases import MODEL_CONFIGS
        cls, kw = MODEL_CONFIGS[model_id]
        cfg = getattr(transformers, cls)(**kw)
        cfg.architectures = [{"LlamaConfig": "LlamaForCausalLM", "Qwen2Config": "Qwen2ForCausalLM",
                              "GPT2Config": "GPT2LMHeadModel", "OPTConfig": "OPTForCausalLM"}
                             .get(cls, "LlamaForCausalLM")]
        path = os.path.join(workdir, "model")
        cfg.save_pretrained(path)
        self.vllm, self.sampling, self.vocab = vllm, sampling, cfg.vocab_size
        self.name = "vllm-%s" % getattr(vllm, "__version__", "?")
        args = vllm.EngineArgs(model=path, skip_tokenizer_init=True, load_format="dummy",
                               dtype={"bf16": "bfloat16", "fp16": "float16",
                                      "fp32": "float32"}[dtype], **engine_args)
        self.engine = vllm.LLMEngine.from_engine_args(args)

    def run(self, prompts, outputs, now=time.perf_counter):
        import random
        from vllm.sampling_params import RequestOutputKind
        s = self.sampling
        rng = random.Random(0)
        rec = Record(len(prompts), now())
        for i, (p, o) in enumerate(zip(prompts, outputs)):
            sp = self.vllm.SamplingParams(
                max_tokens=o, min_tokens=o, ignore_eos=True, temperature=s["temperature"],
                top_p=s["top_p"], top_k=s["top_k"] if s["top_k"] > 0 else -1,
                repetition_penalty=s.get("repetition_penalty", 1.0),
                output_kind=RequestOutputKind.DELTA)
            ids = [rng.randrange(self.vocab) for _ in range(p)]
            self.engine.add_request(str(i), {"prompt_token_ids": ids}, sp)
        admitted = 0
        max_seqs = self.engine.vllm_config.scheduler_config.max_num_seqs
        while self.engine.has_unfinished_requests():
            ts = now()
            outs = self.engine.step()
            te = now()
            produced = [int(o.request_id) for o in outs for _ in o.outputs[0].token_ids]
            left = self.engine.get_num_unfinished_requests()
            running = min(max_seqs, left + sum(1 for o in outs if o.finished))
            admitted = max(admitted, len(prompts) - left + running)
            rec.step(ts, te, running, admitted < len(prompts), produced)
        return rec


def _energy_from(sampler):
    def between(t0, t1):
        p, covered = power_from_updates(sampler.updates, t0, t1)
        return p * (t1 - t0)
    return between


def cmd_serve(args, nvml, h, gpu, m, make_engine=None):
    """Measures every max_num_seqs at every point; rows saved after each.
    make_engine(seqs) -> an object with run(prompts, outputs) -> Record and a
    name: a VllmBackend when vLLM is importable, else a Batcher over a
    TorchBackend (a test passes stand-ins)."""
    opts = dict(requests=args.requests, seed=args.seed)
    if args.prompt_tokens:
        opts.update(prompt_tokens=args.prompt_tokens, output_tokens=args.output_tokens)
    else:
        opts["workload"] = args.workload
    for k in ("temperature", "top_p", "top_k"):
        if getattr(args, k) is not None:
            opts[k] = getattr(args, k)
    from . import serve_requests
    req = serve_requests(**opts)
    prompts, outputs = req["prompt_tokens"], req["output_tokens"]
    sampling = {k: req[k] for k in ("temperature", "top_p", "top_k", "repetition_penalty")}
    seqs_list = m.parse_list(args.max_num_seqs, "--max-num-seqs", integer=True)
    points = m._points(args)
    top = nvml.max_sm_clock_mhz(h) if any(c is None for c, _ in points) else None
    rows, kept, out = [], 0, os.path.join(args.out, "measurements", "%s-serve.csv" % gpu)
    # an earlier run's rows stay beside this run's (a row of the same
    # configuration is replaced); a file in another schema stops the run
    # here, before a model is loaded
    earlier = earlier_rows(out, SERVE_COLUMNS)
    if make_engine is None:
        make_engine = _engines(args, prompts, outputs, sampling, m)
    for seqs in seqs_list:
        eng = make_engine(seqs)
        for clock, limit in points:
            m._progress(args, "serve max_num_seqs %d at %s" % (
                seqs, "%d MHz" % clock if clock else "%g W" % limit if limit else "default clocks"))
            with Locked(nvml, h, clock_mhz=clock, power_limit_w=limit):
                s = Sampler(nvml, h)
                s.start()
                time.sleep(0.15)
                rec = eng.run(prompts, outputs)
                time.sleep(0.25)  # the counter's next update lands after the run
                s.stop()
                met = serve_metrics(rec, outputs, seqs, _energy_from(s))
            clocks = [c for _, c in s.clocks]
            temps = [c for _, c in s.temps]
            row = {"gpu": gpu, "model": args.model, "dtype": args.dtype,
                   "workload": "" if args.prompt_tokens else req["name"],
                   "prompt_tokens": args.prompt_tokens, "output_tokens": args.output_tokens,
                   "requests": len(prompts), "seed": args.seed, "max_num_seqs": seqs,
                   "max_num_batched_tokens": args.max_num_batched_tokens,
                   "async_scheduling": 1 if args.async_scheduling else 0,
                   "temperature": sampling["temperature"], "top_p": sampling["top_p"],
                   "top_k": sampling["top_k"],
                   # the builtin loop has no penalty kernels: its rows say 1
                   "repetition_penalty": (sampling["repetition_penalty"]
                                          if eng.name.startswith("vllm") else 1.0),
                   "engine": eng.name,
                   "sm_clock_mhz": clock if clock else top, "power_limit_w": limit,
                   "measured_clock_mhz": statistics.median(clocks) if clocks else None,
                   "temp_c": statistics.median(temps) if temps else None,
                   "throttle_reasons": s.reasons}
            row.update(met)
            rows.append(row)
            kept = save_measurements(out, earlier, rows, SERVE_COLUMNS, SERVE_POINT)
    m._note(args, "%d rows -> %s%s" % (len(rows), out, m._kept_note(kept)))
    return rows


def _engines(args, prompts, outputs, sampling, m):
    engine = args.engine
    vllm = None
    if engine in ("auto", "vllm"):
        try:
            import vllm  # the user's own
        except ImportError:
            if engine == "vllm":
                raise MeasureError("serve --engine vllm: vLLM is not importable") from None
    torch = m._import_torch()
    longest = max(p + o for p, o in zip(prompts, outputs))

    def make(seqs):
        if vllm is not None:
            import tempfile
            return VllmBackend(
                vllm, args.model, args.dtype,
                dict(max_num_seqs=seqs, max_num_batched_tokens=args.max_num_batched_tokens,
                     async_scheduling=bool(args.async_scheduling),
                     max_model_len=max(longest, 2048)),
                sampling, tempfile.mkdtemp(prefix="wattlas-serve-"))
        if args.async_scheduling:
            m._note(args, "the builtin engine schedules synchronously: --async-scheduling "
                          "applies to vLLM")
        dev = torch.device("cuda", args.device)
        be = TorchBackend(torch, args.model, args.dtype, dev, seqs, longest, sampling)
        return Batcher(be, seqs, args.max_num_batched_tokens)
    return make


def add_parser(sub, common):
    sp = sub.add_parser("serve", help="a serving engine (vLLM, else a builtin continuous-"
                                      "batching loop) -> measurements/<gpu>-serve.csv with "
                                      "wattlas serve's columns")
    sp.add_argument("--clocks", help="SM clocks to lock, MHz: a,b,c or MIN:MAX:STEP")
    sp.add_argument("--power-limit-w", "--power-limits", dest="power_limits",
                    help="board power limits, W, instead of locked clocks (--power-limits: "
                         "the older spelling)")
    sp.add_argument("--model", default="llama-3-8b")
    sp.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    sp.add_argument("--workload", default="lm-arena-chat",
                    help="a workload preset or a CSV of prompt_tokens,output_tokens")
    sp.add_argument("--prompt-tokens", type=int, help="fixed lengths instead of a workload")
    sp.add_argument("--output-tokens", type=int)
    sp.add_argument("--requests", type=int, default=1024)
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--max-num-seqs", default="16,128")
    sp.add_argument("--max-num-batched-tokens", type=int, default=8192)
    sp.add_argument("--async-scheduling", action="store_true", help="vLLM's, when it runs")
    sp.add_argument("--temperature", type=float)
    sp.add_argument("--top-p", type=float)
    sp.add_argument("--top-k", type=int)
    sp.add_argument("--engine", default="auto", choices=["auto", "vllm", "builtin"])
    sp.add_argument("-o", "--out", required=True, help="a directory")


def check_args(args, m):
    if (args.prompt_tokens is None) != (args.output_tokens is None):
        raise MeasureError("--prompt-tokens: give both --prompt-tokens and --output-tokens")
    for k, lo, hi in (("prompt_tokens", 1, 1 << 20), ("output_tokens", 1, 1 << 20),
                      ("requests", 1, 10 ** 7), ("max_num_batched_tokens", 1, 10 ** 6)):
        v = getattr(args, k)
        if v is not None and not lo <= v <= hi:
            raise MeasureError("--%s: %d to %d" % (k.replace("_", "-"), lo, hi))
    if args.temperature is not None and not 0 <= args.temperature <= 100:
        raise MeasureError("--temperature: 0 to 100")
    if args.top_p is not None and not 0 < args.top_p <= 1:
        raise MeasureError("--top-p: above 0, at most 1")
    if args.top_k is not None and args.top_k < 0:
        raise MeasureError("--top-k: 0 (off) or more")
    seqs = m.parse_list(args.max_num_seqs, "--max-num-seqs", integer=True)
    if any(s < 1 or s > 4096 for s in seqs):
        raise MeasureError("--max-num-seqs: 1 to 4096")
    from .measure_cases import MODEL_CONFIGS
    if args.model not in MODEL_CONFIGS:
        raise MeasureError("--model: no config for '%s' (%s)" % (args.model,
                                                                 ", ".join(MODEL_CONFIGS)))
