"""What the measurement harness (python3 -m wattlas.measure) runs: the
kernel database's cases, the HF models built from their configs with random
weights, and the host rows' bare ops. PyTorch and transformers are the
user's own and are passed in by the caller."""



from .measure_files import MeasureError


# ---- the kernel database -----------------------------------------------------

def _gemm_entry(m, n, k, dt, batch=1):
    tc = dt != "fp32"
    tags = ["gemm", "tc" if tc else "cuda", "%s_%s" % (dt, dt)]
    return [{"batch": batch, "dimM": m, "dimN": n, "dimK": k, "precM": dt, "precA": dt,
             "useTensorCore": tc}, tags]


def kernel_specs(dtypes=("bf16", "fp16", "fp32", "tf32")):
    """The kernels of the database: name (as in the trace file names), dtype,
    the one-kernel trace entry, and what to run (kind and shape)."""
    specs = []
    gemms = [(8192, 8192, 8192), (4096, 4096, 4096),               # square
             (16384, 3072, 768), (16384, 768, 3072),               # GPT-2 MLP, 16k tokens
             (4096, 15360, 5120), (512, 20480, 5120),              # wide weights
             (64, 12288, 12288), (16, 4096, 4096), (1, 8192, 8192)]  # decode-like (M <= 64)
    for dt in dtypes:
        for m, n, k in gemms:
            if dt in ("fp32", "tf32") and m * n * k > 4096 ** 3:
                continue  # minutes per point on CUDA cores
            e = _gemm_entry(m, n, k, "fp32" if dt == "tf32" else dt)
            if dt == "tf32":
                e[0]["useTensorCore"] = True
                e[1] = ["gemm", "tc", "fp32_fp32"]
            specs.append({"name": "k-gemm-%dx%dx%d" % (m, n, k), "dtype": dt, "entry": e,
                          "run": ("mm", m, n, k)})
    half = [d for d in dtypes if d in ("bf16", "fp16")]
    for dt in half:
        for b, m, n, k in ((384, 1024, 1024, 64), (384, 1024, 64, 1024)):
            specs.append({"name": "k-bmm-%dx%dx%dx%d" % (b, m, n, k), "dtype": dt,
                          "entry": _gemm_entry(m, n, k, dt, batch=b), "run": ("bmm", b, m, n, k)})
        for bh, s, d in ((256, 1024, 64), (64, 4096, 128)):
            specs.append({"name": "k-sdpa-%dx%dx%d" % (bh, s, d), "dtype": dt,
                          "entry": [{"batch": bh, "dimM": s, "dimN": s, "dimK": d, "causal": 1,
                                     "precM": dt}, ["flash_attention", dt]],
                          "run": ("sdpa", bh, s, d)})
    for dt in [d for d in dtypes if d != "tf32"]:
        rows = [("softmax", 393216, 1024), ("layernorm", 131072, 2048), ("rmsnorm", 131072, 4096)]
        for kind, r, d in rows:
            specs.append({"name": "k-%s-%dx%d" % (kind, r, d), "dtype": dt,
                          "entry": [{"batch": r, "dim": d, "prec": dt}, [kind, dt]],
                          "run": (kind, r, d)})
        n = 268435456 if dt != "fp32" else 134217728
        for op, key in (("pointwise_add", "pointwiseadd"), ("scalar_mul", "scalarmul"),
                        ("relu", "relu"), ("gelu", "gelu"), ("silu", "silu")):
            specs.append({"name": "k-%s-%d" % (key, n), "dtype": dt,
                          "entry": [{"dim": n, "op": op, "prec": dt}, ["elementwise"]],
                          "run": ("ew", op, n)})
        if dt != "fp32":
            specs.append({"name": "k-typecasttofp32-%d" % (n // 2), "dtype": dt,
                          "entry": [{"dim": n // 2, "op": "typecast_to_fp32", "prec": dt},
                                    ["elementwise"]], "run": ("cast", n // 2)})
    return specs


def trace_name(spec):
    return "%s_%s_b1_prefill.json" % (spec["name"], spec["dtype"])


def _torch_step(torch, spec, dev):
    """A zero-argument callable that launches the spec's kernel once."""
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
          "tf32": torch.float32}[spec["dtype"]]
    torch.backends.cuda.matmul.allow_tf32 = spec["dtype"] == "tf32"
    r = spec["run"]
    rnd = lambda *s: torch.randn(*s, device=dev, dtype=dt)  # noqa: E731
    if r[0] == "mm":
        a, b = rnd(r[1], r[3]), rnd(r[3], r[2])
        return lambda: torch.mm(a, b)
    if r[0] == "bmm":
        a, b = rnd(r[1], r[2], r[4]), rnd(r[1], r[4], r[3])
        return lambda: torch.bmm(a, b)
    if r[0] == "sdpa":
        q = rnd(1, r[1], r[2], r[3])
        F = torch.nn.functional
        return lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)
    if r[0] in ("softmax", "layernorm", "rmsnorm"):
        x = rnd(r[1], r[2])
        if r[0] == "softmax":
            return lambda: torch.softmax(x, dim=-1)
        w = torch.ones(r[2], device=dev, dtype=dt)
        if r[0] == "layernorm":
            return lambda: torch.nn.functional.layer_norm(x, (r[2],), w, w)
        return lambda: torch.nn.functional.rms_norm(x, (r[2],), w)
    if r[0] == "ew":
        x, y = rnd(r[2]), rnd(r[2])
        F = torch.nn.functional
        return {"pointwise_add": lambda: x + y, "scalar_mul": lambda: x * 0.5,
                "relu": lambda: torch.relu(x), "gelu": lambda: F.gelu(x),
                "silu": lambda: F.silu(x)}[r[1]]
    if r[0] == "cast":
        x = rnd(r[1])
        return lambda: x.float()
    raise MeasureError("unknown kernel kind %s" % r[0])


# ---- models -----------------------------------------------------------------

# transformers config classes and sizes, as the presets in presets/models
MODEL_CONFIGS = {
    "gpt2": ("GPT2Config", {}),
    "bert-large": ("BertConfig", {"hidden_size": 1024, "num_hidden_layers": 24,
                                  "num_attention_heads": 16, "intermediate_size": 4096}),
    "opt-1.3b": ("OPTConfig", {"hidden_size": 2048, "num_hidden_layers": 24, "ffn_dim": 8192,
                               "num_attention_heads": 32, "word_embed_proj_dim": 2048}),
    "qwen2-1.5b": ("Qwen2Config", {"hidden_size": 1536, "intermediate_size": 8960,
                                   "num_hidden_layers": 28, "num_attention_heads": 12,
                                   "num_key_value_heads": 2, "vocab_size": 151936,
                                   "tie_word_embeddings": True}),
    "llama-3-8b": ("LlamaConfig", {"hidden_size": 4096, "intermediate_size": 14336,
                                   "num_hidden_layers": 32, "num_attention_heads": 32,
                                   "num_key_value_heads": 8, "vocab_size": 128256}),
}


# learned position tables (the config's n_positions / max_position_embeddings):
# a longer sequence indexes past them and the forward fails; the rotary
# models have no table
MAX_POSITIONS = {"gpt2": 1024, "bert-large": 512, "opt-1.3b": 2048}


def check_positions(models, seqs, modes, gen_tokens):
    """Refuses, before anything runs, a sequence (with the tokens a
    decode generates) longer than a model's learned positions."""
    for m in models:
        limit = MAX_POSITIONS.get(m)
        if limit is None:
            continue
        for mode in modes:
            extra = gen_tokens if mode == "decode" else 0
            for s in seqs:
                if s + extra > limit:
                    raise MeasureError("--seq: %s has %d learned positions; %s at seq %d%s is "
                                       "longer" % (m, limit, mode, s,
                                                   " + %d generated" % extra if extra else ""))


def model_cases(models, batches, seqs, modes, dtype):
    out = []
    for m in models:
        if m not in MODEL_CONFIGS:
            raise MeasureError("--models: no config for '%s' (%s)" % (m, ", ".join(MODEL_CONFIGS)))
        for mode in modes:
            if mode not in ("prefill", "train", "decode"):
                raise MeasureError("--modes: '%s' is not prefill, train or decode" % mode)
            for b in batches:
                for s in seqs:
                    out.append({"model": m, "mode": mode, "batch": int(b), "seq": int(s),
                                "dtype": dtype})
    return out


def _base_model(model):
    """The decoder (or encoder) stack under a task head: GPT-2's transformer,
    Llama/Qwen/OPT's model (OPT's decoder below it), BERT's encoder."""
    base = getattr(model, "base_model", model)
    for name in ("decoder",):
        base = getattr(base, name, base)
    return base


def _block_step(torch, model, case, dev, dt):
    """The first transformer block called on its own, block(x), as a layer
    is measured (no attention mask and no KV cache from a model around it);
    a rotary model's block is given its position embeddings, which the model
    would compute once for all its layers."""
    model.eval()
    base = _base_model(model)
    layers = None
    for name in ("h", "layers", "layer"):
        layers = getattr(base, name, None) or getattr(getattr(base, "encoder", None), name, None)
        if layers is not None:
            break
    if not layers:
        raise MeasureError("--scope layer: no transformer blocks found in %s" % case["model"])
    block = layers[0]
    d = model.config.hidden_size
    x = torch.randn(case["batch"], case["seq"], d, device=dev, dtype=dt)
    kw = {}
    rotary = getattr(base, "rotary_emb", None)
    if rotary is not None:
        pos = torch.arange(case["seq"], device=dev).unsqueeze(0).expand(case["batch"], -1)
        with torch.no_grad():
            kw["position_embeddings"] = rotary(x, pos)

    def step():
        with torch.no_grad():
            block(x, **kw)
    return step


def _model_step(torch, case, dev, attention, gen_tokens):
    import transformers  # the user's own
    cls, kw = MODEL_CONFIGS[case["model"]]
    cfg = getattr(transformers, cls)(**kw)
    cfg._attn_implementation = attention
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[case["dtype"]]
    causal = case["mode"] in ("train", "decode")
    auto = transformers.AutoModelForCausalLM if causal else transformers.AutoModel
    # built on the GPU: random initialisation of an 8B model on the CPU takes
    # minutes, on the GPU seconds (weights are random either way)
    with dev:
        try:  # transformers >= 4.56 names it dtype, older ones torch_dtype
            model = auto.from_config(cfg, dtype=dt)
        except TypeError:
            model = auto.from_config(cfg, torch_dtype=dt)
    model.to(dev)
    ids = torch.randint(0, cfg.vocab_size, (case["batch"], case["seq"]), device=dev)
    if case.get("scope") == "layer":
        return _block_step(torch, model, case, dev, dt)
    if case["mode"] == "prefill":
        model.eval()

        def step():
            with torch.no_grad():
                model(input_ids=ids)
        return step
    if case["mode"] == "train":
        model.train()
        if case.get("phase") == "forward":
            # the step's forward alone, recording the autograd graph (freed
            # with the loss): measure host's cost of a step's forward kernel
            def step():
                model(input_ids=ids, labels=ids).loss
            return step
        if case.get("optimizer") == "none":
            # forward and backward alone (a pipeline stage's computations)
            def step():
                model(input_ids=ids, labels=ids).loss.backward()
                model.zero_grad(set_to_none=True)
            return step
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

        def step():
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step
    model.eval()
    mask = torch.ones_like(ids)

    def step():
        with torch.no_grad():
            model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=gen_tokens,
                           min_new_tokens=gen_tokens, do_sample=False, pad_token_id=0)
    return step


def tiny_specs():
    """The bare ops of the host rows (as ../shared/data's H100 host rows): so
    small that a loop of them runs at the host's pace, one of each path
    (elementwise, cuBLAS, a normalisation, a softmax)."""
    dt = "bf16"
    return [
        {"name": "k-tiny-add-1024", "dtype": dt, "run": ("ew", "pointwise_add", 1024),
         "entry": [{"dim": 1024, "op": "pointwise_add", "prec": dt}, ["elementwise"]]},
        {"name": "k-tiny-gemm-64x64x64", "dtype": dt, "run": ("mm", 64, 64, 64),
         "entry": _gemm_entry(64, 64, 64, dt)},
        {"name": "k-tiny-layernorm-64x768", "dtype": dt, "run": ("layernorm", 64, 768),
         "entry": [{"batch": 64, "dim": 768, "prec": dt}, ["layernorm", dt]]},
        {"name": "k-tiny-softmax-64x768", "dtype": dt, "run": ("softmax", 64, 768),
         "entry": [{"batch": 64, "dim": 768, "prec": dt}, ["softmax", dt]]},
    ]
