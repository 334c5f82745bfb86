"""Measure a GPU for wattlas: python3 -m wattlas.measure idle|kernels|models|host.

Every subcommand writes the schema of wattlas's measurement data
(../shared/data/README.md), so that ``wattlas calibrate``, ``validate`` and
``learn`` read its output as it is:

* ``idle``: idle board power at each locked SM clock -> a gpu-tables CSV
  (``sm_clock_mhz,voltage_mv,idle_power_w``; NVML has no voltage reading, so
  the voltage column stays empty and ``wattlas presets derive-vf`` gives the
  voltage by rule).
* ``kernels``: a kernel database (GEMMs of four shapes families, batched
  attention GEMMs, SDPA, softmax, LayerNorm, RMSNorm, elementwise ops, casts;
  bf16/fp16/fp32/tf32) -> ``measurements/<gpu>-kernels.csv`` and one
  one-kernel trace per kernel in ``traces/``.
* ``models``: HF models built from their configs with random weights (no
  download), prefill / train (AdamW) / decode (``generate``), at locked clocks
  or under power limits -> ``measurements/<gpu>-models.csv``.
* ``host``: the host's launch cost: time-only rows of bare ops in a loop and
  of a launch-bound HF forward (``measurements/<gpu>-host.csv``, with the
  bare ops' one-kernel traces) and a host preset (``ID.ini``).

Method: the SM clock is locked with nvmlDeviceSetGpuLockedClocks and the power
limit set with nvmlDeviceSetPowerManagementLimit; both are restored on exit,
on errors and on Ctrl-C. Each case is warmed up, then run back to back for a
window of seconds. Energy comes from nvmlDeviceGetTotalEnergyConsumption,
whose value moves only every ~100 ms on an H100: a thread notes the moment
each new value appears, and power is taken between the first and the last
update inside the window (reading the counter at the window's ends would be
off by up to +-6%). The effective clock is the median of the samples;
temperature and throttle reasons are recorded; each case is repeated and the
spread reported.

NVML is reached through ctypes on the driver's libnvidia-ml.so.1 (pynvml
loads the same library and is not needed). PyTorch and transformers are the
user's own and only imported by the subcommands that run workloads.
"""

import argparse
import ctypes
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import threading
import time

MEAS_COLUMNS = ["gpu", "model", "batch", "seq", "dtype", "mode", "attention", "sm_clock_mhz",
                "measured_clock_mhz", "time_ms", "energy_j", "power_w", "temp_c"]
# beside the schema's columns (the readers find columns by name)
# the options that say what ran (validate and calibrate build each row's
# workload from them, with predict's meaning), then the measurement's quality
EXTRA_COLUMNS = ["power_limit_w", "gen_tokens", "optimizer", "master_dtype", "launch",
                 "stack", "repeats", "time_spread_pct", "power_spread_pct", "throttle_reasons"]


def software_stack():
    """The stack a row ran on, as 'wattlas --stack' names it: hf5 for HF
    transformers 5.x (today's kernel sequence), hf4 for 4.x; empty when
    transformers is not installed (a kernel row does not depend on it)."""
    try:
        import transformers  # the user's own
    except ImportError:
        return ""
    try:
        major = int(str(transformers.__version__).split(".")[0])
    except ValueError:
        return ""
    return "hf5" if major >= 5 else "hf4"


class MeasureError(Exception):
    """A condition that stops the measurement, told in one line."""


# ---- option values ----------------------------------------------------------

def parse_list(text, what="value", integer=False):
    """'a,b,c', 'lo:hi:step' or lists of both (wattlas's grammar) -> numbers."""
    out = []
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            raise MeasureError("%s: empty item in '%s'" % (what, text))
        try:
            if ":" in item:
                parts = [float(x) for x in item.split(":")]
                if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                    raise ValueError
                lo, hi, step = parts
                n = int(math.floor((hi - lo) / step + 1e-9))
                vals = [lo + i * step for i in range(n + 1)]
            else:
                vals = [float(item)]
        except ValueError:
            raise MeasureError("%s: '%s' is not a number or MIN:MAX:STEP" % (what, item)) from None
        for v in vals:
            if not math.isfinite(v) or v <= 0:
                raise MeasureError("%s: %s must be a positive finite number" % (what, item))
            if integer and v != int(v):
                raise MeasureError("%s: %s must be an integer" % (what, item))
            out.append(int(v) if integer or v == int(v) else v)
    return out


def gpu_id_from_name(name):
    """NVML's board name as a wattlas GPU name ('NVIDIA H100 80GB HBM3' ->
    'h100-80gb-hbm3', an alias of h100-sxm-80gb); validate resolves aliases."""
    s = name.strip().lower()
    if s.startswith("nvidia"):
        s = s[6:]
    return "-".join(s.replace("_", " ").split())


# ---- the energy counter ------------------------------------------------------

def power_from_updates(updates, t0, t1):
    """Mean power over [t0, t1] from energy-counter updates.

    updates: (time_s, energy_mj) pairs, time being the moment a new counter
    value was first seen. Power is taken between the first and the last
    update inside the window, so that the counter's coarse update period
    (about 100 ms on an H100) does not bias it. Returns (power_w, seconds
    covered); raises MeasureError with fewer than two updates inside."""
    inside = [(t, e) for t, e in updates if t0 <= t <= t1]
    if len(inside) < 2:
        raise MeasureError("the energy counter moved %d time(s) in the %.2f s window: make the "
                           "window longer (--window-s)" % (len(inside), t1 - t0))
    (ta, ea), (tb, eb) = inside[0], inside[-1]
    if tb <= ta or eb < ea:
        raise MeasureError("the energy counter went backwards")
    return (eb - ea) * 1e-3 / (tb - ta), tb - ta


def spread_pct(values):
    """(max - min) / median in percent."""
    if len(values) < 2:
        return 0.0
    m = statistics.median(values)
    return (max(values) - min(values)) / m * 100.0 if m else 0.0


# ---- NVML through ctypes -----------------------------------------------------

NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0


class Nvml:
    """The few NVML calls the harness needs, on the driver's library."""

    def __init__(self, libname="libnvidia-ml.so.1"):
        try:
            self.lib = ctypes.CDLL(libname)
        except OSError as e:
            raise MeasureError("NVML not found (%s): this needs an NVIDIA driver" % e) from None
        self.lib.nvmlErrorString.restype = ctypes.c_char_p
        self._call("nvmlInit_v2")

    def _call(self, fn, *args):
        rc = getattr(self.lib, fn)(*args)
        if rc != 0:
            text = self.lib.nvmlErrorString(rc).decode(errors="replace")
            hint = " (run as root, or give the user clock permissions)" if rc == 4 else ""
            raise MeasureError("%s: %s%s" % (fn, text, hint))

    def shutdown(self):
        try:
            self.lib.nvmlShutdown()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass

    def device(self, index):
        h = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(h))
        return h

    def name(self, h):
        buf = ctypes.create_string_buffer(96)
        self._call("nvmlDeviceGetName", h, buf, ctypes.c_uint(96))
        return buf.value.decode(errors="replace")

    def _get(self, fn, ctype, h, *args):
        """An NVML getter's value: fn(h, *args, &out) with out of ctype."""
        v = ctype()
        self._call(fn, h, *args, ctypes.byref(v))
        return v.value

    def energy_mj(self, h):
        return self._get("nvmlDeviceGetTotalEnergyConsumption", ctypes.c_ulonglong, h)

    def max_sm_clock_mhz(self, h):
        return self._get("nvmlDeviceGetMaxClockInfo", ctypes.c_uint, h, ctypes.c_int(NVML_CLOCK_SM))

    def sm_clock_mhz(self, h):
        return self._get("nvmlDeviceGetClockInfo", ctypes.c_uint, h, ctypes.c_int(NVML_CLOCK_SM))

    def temp_c(self, h):
        return self._get("nvmlDeviceGetTemperature", ctypes.c_uint, h,
                         ctypes.c_int(NVML_TEMPERATURE_GPU))

    def throttle_reasons(self, h):
        return self._get("nvmlDeviceGetCurrentClocksThrottleReasons", ctypes.c_ulonglong, h)

    def power_limit_w(self, h):
        return self._get("nvmlDeviceGetPowerManagementLimit", ctypes.c_uint, h) / 1000.0

    def set_power_limit_w(self, h, w):
        self._call("nvmlDeviceSetPowerManagementLimit", h, ctypes.c_uint(int(round(w * 1000))))

    def lock_clock(self, h, mhz):
        self._call("nvmlDeviceSetGpuLockedClocks", h, ctypes.c_uint(int(mhz)), ctypes.c_uint(int(mhz)))

    def unlock_clock(self, h):
        self._call("nvmlDeviceResetGpuLockedClocks", h)


class Sampler(threading.Thread):
    """Polls the energy counter (noting when each new value appears) and,
    less often, the SM clock, temperature and throttle reasons."""

    def __init__(self, nvml, h, poll_s=0.001, slow_every=20):
        super().__init__(daemon=True)
        self.nvml, self.h, self.poll_s, self.slow_every = nvml, h, poll_s, slow_every
        self.updates, self.clocks, self.temps, self.reasons = [], [], [], 0
        self._halt = threading.Event()  # not _stop: threading.Thread has its own
        self.error = None

    def run(self):
        last, n = None, 0
        try:
            while not self._halt.is_set():
                e = self.nvml.energy_mj(self.h)
                t = time.perf_counter()
                if e != last:
                    self.updates.append((t, e))
                    last = e
                if n % self.slow_every == 0:
                    self.clocks.append((t, self.nvml.sm_clock_mhz(self.h)))
                    self.temps.append((t, self.nvml.temp_c(self.h)))
                    try:
                        self.reasons |= self.nvml.throttle_reasons(self.h)
                    except MeasureError:
                        pass
                n += 1
                time.sleep(self.poll_s)
        except MeasureError as e:
            self.error = e

    def stop(self):
        self._halt.set()
        self.join()
        if self.error:
            raise self.error


class Locked:
    """Lock the SM clock and/or set the power limit; always restore both."""

    def __init__(self, nvml, h, clock_mhz=None, power_limit_w=None):
        self.nvml, self.h, self.clock, self.limit = nvml, h, clock_mhz, power_limit_w
        self.old_limit = None

    def __enter__(self):
        if self.limit is not None:
            self.old_limit = self.nvml.power_limit_w(self.h)
            self.nvml.set_power_limit_w(self.h, self.limit)
        if self.clock is not None:
            self.nvml.lock_clock(self.h, self.clock)
        return self

    def __exit__(self, *exc):
        errors = []
        if self.clock is not None:
            try:
                self.nvml.unlock_clock(self.h)
            except MeasureError as e:
                errors.append(str(e))
        if self.old_limit is not None:
            try:
                self.nvml.set_power_limit_w(self.h, self.old_limit)
            except MeasureError as e:
                errors.append(str(e))
        if errors and exc[0] is None:
            raise MeasureError("could not restore the GPU: " + "; ".join(errors))
        return False


def measure_window(nvml, h, step, warmup_s, window_s, sync):
    """Run step() back to back: warm up, then a window; returns a dict with
    time per step (ms), power (W), energy per step (J), effective clock and
    temperature (medians), throttle reasons."""
    t_end = time.perf_counter() + warmup_s
    while time.perf_counter() < t_end:
        step()
    sync()
    s = Sampler(nvml, h)
    s.start()
    time.sleep(0.15)  # the sampler has seen a counter value
    t0 = time.perf_counter()
    n = 0
    while True:
        step()
        n += 1
        if n % 8 == 0 or window_s < 0.05:
            sync()
            if time.perf_counter() - t0 >= window_s:
                break
    sync()
    t1 = time.perf_counter()
    time.sleep(0.25)  # let the counter's next update land after the window
    s.stop()
    power, _ = power_from_updates(s.updates, t0, t1 + 0.25)
    time_ms = (t1 - t0) / n * 1e3
    clocks = [c for t, c in s.clocks if t0 <= t <= t1] or [c for _, c in s.clocks]
    temps = [c for t, c in s.temps if t0 <= t <= t1] or [c for _, c in s.temps]
    return {"time_ms": time_ms, "power_w": power, "energy_j": power * time_ms * 1e-3,
            "measured_clock_mhz": statistics.median(clocks) if clocks else float("nan"),
            "temp_c": statistics.median(temps) if temps else float("nan"),
            "throttle_reasons": s.reasons}


def repeated(nvml, h, step, args, sync):
    runs = [measure_window(nvml, h, step, args.warmup_s, args.window_s, sync)
            for _ in range(args.repeats)]
    out = dict(runs[len(runs) // 2])
    for k in ("time_ms", "power_w", "measured_clock_mhz", "temp_c"):
        out[k] = statistics.median(r[k] for r in runs)
    out["energy_j"] = out["power_w"] * out["time_ms"] * 1e-3
    out["repeats"] = len(runs)
    out["time_spread_pct"] = spread_pct([r["time_ms"] for r in runs])
    out["power_spread_pct"] = spread_pct([r["power_w"] for r in runs])
    out["throttle_reasons"] = 0
    for r in runs:
        out["throttle_reasons"] |= r["throttle_reasons"]
    return out


# ---- writers (atomic: a temporary file beside the target, renamed) ----------

def _atomic_write(path, text):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w", encoding="utf-8") as f:  # a device or FIFO: in place
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix=".wattlas-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _num(v, digits=6):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, int):
        return str(v)
    text = "%.*f" % (digits, v)
    return text.rstrip("0").rstrip(".") if "." in text else text


def measurements_text(rows):
    """Rows (dicts) as the measurement schema's CSV, extra columns after."""
    cols = MEAS_COLUMNS + EXTRA_COLUMNS
    lines = [",".join(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            if c == "throttle_reasons" and v is not None:
                cells.append("0x%x" % v)
            elif isinstance(v, str):
                if any(ch in v for ch in ',"\n'):
                    raise MeasureError("%s: '%s' cannot be a CSV cell" % (c, v))
                cells.append(v)
            else:
                cells.append(_num(v))
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def idle_text(rows):
    lines = ["sm_clock_mhz,voltage_mv,idle_power_w"]
    for r in rows:
        lines.append("%d,%s,%.2f" % (r["sm_clock_mhz"], _num(r.get("voltage_mv")), r["idle_power_w"]))
    return "\n".join(lines) + "\n"


def host_text(host_id, name, launch_us, stderr_us, source, op_launch_us=None,
              op_stderr_us=None, notes=()):
    """A host preset (presets/hosts): launch_us per kernel of a model's forward,
    op_launch_us per kernel of a bare op in a loop (left out when None)."""
    for k, v in (("launch_us", launch_us), ("op_launch_us", op_launch_us)):
        if v is not None and not (math.isfinite(v) and 0 < v <= 10000):
            raise MeasureError("%s: %r us is not a launch cost (0 to 10000 us)" % (k, v))
    for v in (host_id, name, source):
        if "\n" in v:
            raise MeasureError("'%s' cannot go on one preset line" % v)
    lines = ["; %s" % name, "; measured by: %s" % source]
    lines += ["; %s" % n for n in notes]
    lines += ["[host]", "id = %s" % host_id, "name = %s" % name,
              "launch_us = %.3f" % launch_us, "launch_us_stderr = %.3f" % stderr_us]
    if op_launch_us is not None:
        lines += ["op_launch_us = %.3f" % op_launch_us,
                  "op_launch_us_stderr = %.3f" % (op_stderr_us or 0.0)]
    return "\n".join(lines) + "\n"


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
    if case["mode"] == "prefill":
        model.eval()

        def step():
            with torch.no_grad():
                model(input_ids=ids)
        return step
    if case["mode"] == "train":
        model.train()
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


# ---- subcommands -------------------------------------------------------------

def _progress(args, text):
    """A line per point: rewritten in place on a terminal, appended to a log."""
    if args.quiet:
        return
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + text)
    else:
        sys.stderr.write("wattlas.measure: %s\n" % text)
    sys.stderr.flush()


def _note(args, text):
    if not args.quiet:
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
        sys.stderr.write("wattlas.measure: %s\n" % text)


def _import_torch():
    try:
        import torch
    except ImportError:
        raise MeasureError("PyTorch is not installed: 'kernels', 'models' and 'host' run "
                           "workloads with it") from None
    if not torch.cuda.is_available():
        raise MeasureError("PyTorch sees no CUDA GPU")
    return torch


def _points(args):
    clocks = parse_list(args.clocks, "--clocks", integer=True) if args.clocks else [None]
    limits = parse_list(args.power_limits, "--power-limits") if getattr(args, "power_limits", None) else [None]
    return [(c, w) for w in limits for c in clocks]


def cmd_idle(args, nvml, h, gpu):
    rows = []
    clocks = parse_list(args.clocks, "--clocks", integer=True)
    for i, c in enumerate(clocks):
        _progress(args, "idle %d/%d: %d MHz" % (i + 1, len(clocks), c))
        with Locked(nvml, h, clock_mhz=c):
            time.sleep(args.warmup_s)
            s = Sampler(nvml, h)
            s.start()
            t0 = time.perf_counter()
            time.sleep(args.window_s)
            t1 = time.perf_counter()
            s.stop()
            p, _ = power_from_updates(s.updates, t0, t1)
        rows.append({"sm_clock_mhz": c, "voltage_mv": None, "idle_power_w": p})
    _atomic_write(args.out, idle_text(rows))
    _note(args, "%d clocks -> %s" % (len(rows), args.out))


def _row(gpu, case, clock, limit, m, gen=None, top_clock=None):
    """One measured row. A point run under a power limit with the clock
    unlocked asks for the GPU's top clock (the governor boosts to it unless
    the limit holds it back), so its row requests top_clock and carries the
    limit, as 'wattlas predict --set power_limit_w=W' does. A training step
    here keeps weights and AdamW state in the model's dtype (master_dtype
    none); generate launches its kernels one by one (launch eager)."""
    if clock is None:
        clock = top_clock if top_clock else round(m["measured_clock_mhz"])
    r = {"gpu": gpu, "model": case["model"], "batch": case["batch"], "seq": case.get("seq"),
         "dtype": case["dtype"], "mode": case["mode"], "attention": case.get("attention", "eager"),
         "sm_clock_mhz": clock, "power_limit_w": limit, "gen_tokens": gen}
    if case["mode"] == "train":
        r.update(optimizer="adamw", master_dtype="none")
    elif case["mode"] == "decode":
        r.update(launch="eager")
    if case.get("stack"):
        r["stack"] = case["stack"]
    r.update(m)
    return r


def _run_cases(args, nvml, h, gpu, cases, make_step, save):
    """Measure every case at every point; save(rows) runs after each point,
    so that an interrupted run (Ctrl-C, a time limit's SIGTERM) keeps the
    points it finished."""
    torch = _import_torch()
    dev = torch.device("cuda", args.device)
    sync = torch.cuda.synchronize
    rows, points = [], _points(args)
    top = nvml.max_sm_clock_mhz(h) if any(c is None for c, _ in points) else None
    total = len(cases) * len(points)
    done = 0
    for case in cases:
        try:
            step = make_step(torch, case, dev)
            step()
            sync()
        except torch.cuda.OutOfMemoryError:
            _note(args, "skipped %s %s: does not fit in memory" % (case["model"], case["dtype"]))
            torch.cuda.empty_cache()
            done += len(points)
            continue
        for clock, limit in points:
            done += 1
            _progress(args, "%d/%d %s %s b%s s%s at %s" % (done, total, case["model"], case["dtype"],
                                                         case["batch"], case.get("seq"),
                                                         "%d MHz" % clock if clock else "%g W" % limit))
            with Locked(nvml, h, clock_mhz=clock, power_limit_w=limit):
                m = repeated(nvml, h, step, args, sync)
            rows.append(_row(gpu, case, clock, limit, m, case.get("gen_tokens"), top))
            save(rows)
        del step
        torch.cuda.empty_cache()
    return rows


def cmd_kernels(args, nvml, h, gpu):
    dtypes = [d.strip() for d in args.dtypes.split(",")]
    bad = [d for d in dtypes if d not in ("bf16", "fp16", "fp32", "tf32")]
    if bad:
        raise MeasureError("--dtypes: '%s' is not bf16, fp16, fp32 or tf32" % bad[0])
    specs = kernel_specs(dtypes)
    cases = [{"model": s["name"], "mode": "prefill", "batch": 1, "seq": None,
              "dtype": s["dtype"] if s["dtype"] != "tf32" else "fp32", "spec": s} for s in specs]
    out = os.path.join(args.out, "measurements", "%s-kernels.csv" % gpu)
    for s in specs:  # first, so that rows saved along the way have their traces
        _atomic_write(os.path.join(args.out, "traces", trace_name(s)), json.dumps([s["entry"]]) + "\n")
    rows = _run_cases(args, nvml, h, gpu, cases,
                      lambda torch, c, dev: _torch_step(torch, c["spec"], dev),
                      lambda r: _atomic_write(out, measurements_text(r)))
    _atomic_write(out, measurements_text(rows))  # the header alone when nothing fit
    _note(args, "%d rows -> %s, traces in %s" % (len(rows), out, os.path.join(args.out, "traces")))


def cmd_models(args, nvml, h, gpu):
    cases = model_cases([m.strip() for m in args.models.split(",")],
                        parse_list(args.batch, "--batch", True), parse_list(args.seq, "--seq", True),
                        [m.strip() for m in args.modes.split(",")], args.dtype)
    stack = software_stack()
    for c in cases:
        c["attention"] = "flash" if args.attention == "sdpa" else "eager"
        c["stack"] = stack
        if c["mode"] == "decode":
            c["gen_tokens"] = args.gen_tokens
    out = os.path.join(args.out, "measurements", "%s-models.csv" % gpu)
    rows = _run_cases(args, nvml, h, gpu, cases,
                      lambda torch, c, dev: _model_step(torch, c, dev, args.attention, args.gen_tokens),
                      lambda r: _atomic_write(out, measurements_text(r)))
    _atomic_write(out, measurements_text(rows))  # the header alone when nothing fit
    _note(args, "%d rows -> %s" % (len(rows), out))


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


def _time_loop(torch, step, n, repeats):
    """Median wall time of one call (us) over repeats of n calls back to back
    (after a warm-up), and the standard error of that median's runs."""
    per = []
    for _ in range(repeats):
        for _ in range(min(200, n)):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / n * 1e6)
    sd = statistics.stdev(per) / math.sqrt(len(per)) if len(per) > 1 else 0.0
    return statistics.median(per), sd


def _count_kernels(torch, step):
    """Kernels one call launches (torch.profiler), or None if it cannot say."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        cuda = torch.autograd.DeviceType.CUDA
        n = sum(1 for e in prof.events()
                if e.device_type == cuda and not e.name.startswith(("Memcpy", "Memset")))
        return n or None
    except Exception:  # the profiler is optional here: the count is a note
        return None


def cmd_host(args, nvml, h, gpu):
    """Time-only rows (bare ops in a loop, a launch-bound forward) with their
    one-kernel traces, and a host preset from them."""
    torch = _import_torch()
    dev = torch.device("cuda", args.device)
    clocks = parse_list(args.clocks, "--clocks", integer=True) if args.clocks else [None]
    case = {"model": args.model, "mode": "prefill", "batch": args.batch, "seq": args.seq,
            "dtype": "bf16", "attention": "eager"}
    if args.model not in MODEL_CONFIGS:
        raise MeasureError("--model: no config for '%s' (%s)" % (args.model, ", ".join(MODEL_CONFIGS)))
    specs = tiny_specs()
    rows, ops, fwd = [], [], []
    kernels = None
    for ci, clock in enumerate(clocks):
        timed = []  # (model, batch, seq, us per call) at this clock
        with Locked(nvml, h, clock_mhz=clock):
            for s in specs:
                _progress(args, "clock %d/%d: %s" % (ci + 1, len(clocks), s["name"]))
                us, sd = _time_loop(torch, _torch_step(torch, s, dev), args.launches, args.repeats)
                ops.append((us, sd))
                timed.append((s["name"], 1, None, us))
            _progress(args, "clock %d/%d: %s b%d s%d forward" % (ci + 1, len(clocks), args.model,
                                                                 args.batch, args.seq))
            step = _model_step(torch, case, dev, "eager", 0)
            if kernels is None:
                kernels = _count_kernels(torch, step)
            us, sd = _time_loop(torch, step, args.forwards, args.repeats)
            fwd.append((us, sd))
            timed.append((args.model, args.batch, args.seq, us))
            del step
            # unlocked: the clock the GPU ran at, read before the lock is undone
            clk = round(nvml.sm_clock_mhz(h)) if clock is None else clock
        stack = software_stack()
        rows += [{"gpu": gpu, "model": m, "batch": b, "seq": sq, "dtype": "bf16",
                  "mode": "prefill", "attention": "eager", "sm_clock_mhz": clk,
                  "measured_clock_mhz": float(clk), "time_ms": us * 1e-3,
                  "repeats": args.repeats, "stack": stack if sq else ""}
                 for m, b, sq, us in timed]
    meas = os.path.join(args.out, "measurements", "%s-host.csv" % gpu)
    _atomic_write(meas, measurements_text(rows))
    for s in specs:
        _atomic_write(os.path.join(args.out, "traces", trace_name(s)), json.dumps([s["entry"]]) + "\n")
    op_us = statistics.median(u for u, _ in ops)
    op_sd = statistics.median(d for _, d in ops)
    fwd_us = statistics.median(u for u, _ in fwd)
    notes = []
    if kernels:
        launch, sd = fwd_us / kernels, statistics.median(d for _, d in fwd) / kernels
        notes.append("launch_us: a %s b%d s%d forward, %.0f us for the %d kernels it launches"
                     % (args.model, args.batch, args.seq, fwd_us, kernels))
    else:
        launch, sd = op_us, op_sd
        notes.append("launch_us: the bare ops' cost (the profiler could not count the "
                     "forward's kernels)")
    notes.append("per kernel PyTorch launched; for wattlas's own kernel sequence fit it: "
                 "wattlas calibrate --gpu ID %s --traces %s --fit host -o host.ini"
                 % (meas, os.path.join(args.out, "traces")))
    import platform
    name = "%s, Python %s, PyTorch %s" % (platform.processor() or platform.machine(),
                                          platform.python_version(), torch.__version__)
    ini = os.path.join(args.out, "%s.ini" % args.id)
    _atomic_write(ini, host_text(args.id, name, launch, sd,
                                 "python3 -m wattlas.measure host", op_us, op_sd, notes))
    _note(args, "bare op %.2f us, model kernel %.2f us -> %s; %d time-only rows -> %s"
          % (op_us, launch, ini, len(rows), meas))


# ---- profiles -----------------------------------------------------------------

SUMMARY_COLUMNS = ["workload", "sm_clock_mhz", "wall_ms_per_step", "device_events",
                   "gpu_busy_ms", "kernel_launches", "kernel_busy_ms", "memcpy", "memcpy_ms",
                   "memset", "memset_ms"]


def trace_summary(trace):
    """A profiler trace's device events: counts and summed durations in ms,
    in total and by kind (kernels, memcpys, memsets)."""
    kinds = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    n = {k: 0 for k in kinds.values()}
    ms = {k: 0.0 for k in kinds.values()}
    for e in trace.get("traceEvents", []):
        k = kinds.get(e.get("cat")) if isinstance(e, dict) else None
        if k and e.get("ph") == "X":
            n[k] += 1
            ms[k] += float(e.get("dur", 0)) * 1e-3
    return {"device_events": sum(n.values()), "gpu_busy_ms": sum(ms.values()),
            "kernel_launches": n["kernel"], "kernel_busy_ms": ms["kernel"],
            "memcpy": n["memcpy"], "memcpy_ms": ms["memcpy"],
            "memset": n["memset"], "memset_ms": ms["memset"]}


def workload_name(case):
    return "%s_%s_b%d_s%d_%s_%s" % (case["model"], case["mode"], case["batch"], case["seq"],
                                   case["dtype"], case["attention_name"])


def write_profile(path, trace, clock_mhz, wall_ms, stack):
    """The trace gzipped, with what wattlas reads beside traceEvents: the
    clock it ran at and the unprofiled wall time per step (from which the
    profiler's own host cost is taken off), and the software stack."""
    import gzip
    trace = dict(trace)
    trace["wattlas"] = {"sm_clock_mhz": clock_mhz, "wall_ms_per_step": wall_ms, "stack": stack}
    data = gzip.compress(json.dumps(trace).encode())
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def summary_text(rows):
    lines = [",".join(SUMMARY_COLUMNS)]
    for r in rows:
        lines.append(",".join(r[c] if isinstance(r[c], str) else _num(r[c], 4)
                              for c in SUMMARY_COLUMNS))
    return "\n".join(lines) + "\n"


def cmd_profile(args, nvml, h, gpu):
    """One step of each 'models' workload at each locked clock under
    torch.profiler (CPU and CUDA activity, record_shapes): after --steps
    warm-up steps, --steps unprofiled steps are timed (the wall time per
    step), then one step is profiled. Each trace goes to
    DIR/profiles/<workload>_<MHz>mhz.json.gz, which 'wattlas predict
    --trace' reads; DIR/profiles/summary.csv counts their device events."""
    torch = _import_torch()
    from torch.profiler import profile, ProfilerActivity
    dev = torch.device("cuda", args.device)
    sync = torch.cuda.synchronize
    cases = model_cases([m.strip() for m in args.models.split(",")],
                        parse_list(args.batch, "--batch", True), parse_list(args.seq, "--seq", True),
                        [m.strip() for m in args.modes.split(",")], args.dtype)
    clocks = parse_list(args.clocks, "--clocks", integer=True)
    stack = software_stack()
    outdir = os.path.join(args.out, "profiles")
    os.makedirs(outdir, exist_ok=True)
    summary = os.path.join(outdir, "summary.csv")
    rows, done, total = [], 0, len(cases) * len(clocks)
    for case in cases:
        case["attention_name"] = args.attention
        try:
            step = _model_step(torch, case, dev, args.attention, args.gen_tokens)
            step()
            sync()
        except torch.cuda.OutOfMemoryError:
            _note(args, "skipped %s: does not fit in memory" % workload_name(case))
            torch.cuda.empty_cache()
            done += len(clocks)
            continue
        for clock in clocks:
            done += 1
            name = workload_name(case)
            _progress(args, "%d/%d %s at %d MHz" % (done, total, name, clock))
            with Locked(nvml, h, clock_mhz=clock):
                for _ in range(args.steps):
                    step()
                sync()
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    step()
                sync()
                wall_ms = (time.perf_counter() - t0) * 1e3 / args.steps
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                             record_shapes=True) as prof:
                    step()
                    sync()
                fd, tmp = tempfile.mkstemp(suffix=".json")
                os.close(fd)
                try:
                    prof.export_chrome_trace(tmp)
                    with open(tmp) as f:
                        trace = json.load(f)
                finally:
                    os.unlink(tmp)
            path = os.path.join(outdir, "%s_%dmhz.json.gz" % (name, clock))
            write_profile(path, trace, clock, wall_ms, stack)
            r = {"workload": name, "sm_clock_mhz": clock, "wall_ms_per_step": wall_ms}
            r.update(trace_summary(trace))
            rows.append(r)
            _atomic_write(summary, summary_text(rows))
        del step
        torch.cuda.empty_cache()
    _atomic_write(summary, summary_text(rows))
    _note(args, "%d profiles -> %s (summary.csv beside them); 'wattlas predict --gpu ID --trace "
          "FILE --clock LIST' predicts each at any clock" % (len(rows), outdir))


# ---- command line ------------------------------------------------------------

def build_parser():
    p = argparse.ArgumentParser(
        prog="python3 -m wattlas.measure",
        description="Measure a GPU with NVML and PyTorch, in wattlas's measurement schema.",
        epilog="Workflow: measure, then 'wattlas calibrate --gpu ID DIR/measurements/X.csv "
               "--traces DIR/traces -o mine.ini', 'wattlas validate ... --gpu mine.ini', "
               "'wattlas predict --gpu mine.ini ...'.")
    p.add_argument("--device", type=int, default=0, help="GPU index (default 0)")
    p.add_argument("--gpu", help="the gpu column (default: NVML's board name)")
    p.add_argument("--quiet", action="store_true", help="no progress or notes")
    sub = p.add_subparsers(dest="command", metavar="idle|kernels|models|host|profile")
    sub.required = True

    def common(sp, clocks_required):
        sp.add_argument("--clocks", required=clocks_required,
                        help="SM clocks to lock, MHz: a,b,c or MIN:MAX:STEP")
        sp.add_argument("--warmup-s", type=float, default=0.3, help="seconds before a window")
        sp.add_argument("--window-s", type=float, default=1.2, help="seconds measured")
        sp.add_argument("--repeats", type=int, default=3, help="windows per point (median)")

    sp = sub.add_parser("idle", help="idle power at each locked clock -> a gpu-tables CSV")
    common(sp, True)
    sp.add_argument("-o", "--out", required=True, help="the idle table (CSV)")
    sp = sub.add_parser("kernels", help="the kernel database -> measurements/ and traces/")
    common(sp, True)
    sp.add_argument("--dtypes", default="bf16,fp16,fp32,tf32")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    sp = sub.add_parser("models", help="HF models with random weights: prefill, train, decode")
    common(sp, False)
    sp.add_argument("--power-limits", help="board power limits, W, instead of locked clocks")
    sp.add_argument("--models", default="gpt2")
    sp.add_argument("--modes", default="prefill")
    sp.add_argument("--batch", default="1,8")
    sp.add_argument("--seq", default="128,512")
    sp.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    sp.add_argument("--attention", default="eager", choices=["eager", "sdpa"])
    sp.add_argument("--gen-tokens", type=int, default=64, help="decode: tokens generated")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    sp = sub.add_parser("profile", help="a PyTorch profiler trace of one step of each 'models' "
                                        "workload at each clock -> DIR/profiles/ and its summary")
    sp.add_argument("--clocks", required=True, help="SM clocks to lock, MHz: a,b,c or MIN:MAX:STEP")
    sp.add_argument("--models", default="gpt2")
    sp.add_argument("--modes", default="prefill")
    sp.add_argument("--batch", default="4")
    sp.add_argument("--seq", default="1024")
    sp.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    sp.add_argument("--attention", default="eager", choices=["eager", "sdpa"])
    sp.add_argument("--gen-tokens", type=int, default=16, help="decode: tokens generated")
    sp.add_argument("--steps", type=int, default=3,
                    help="warm-up steps, then as many unprofiled steps timed (default 3)")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    sp = sub.add_parser("host", help="launch cost per kernel: time-only rows, their traces "
                                     "and a host preset (DIR/ID.ini)")
    sp.add_argument("--clocks", help="SM clocks to lock, MHz (default: as the GPU runs)")
    sp.add_argument("--repeats", type=int, default=5, help="timed loops per point (median)")
    sp.add_argument("--launches", type=int, default=20000, help="bare-op calls per loop")
    sp.add_argument("--model", default="gpt2", help="the launch-bound forward's model")
    sp.add_argument("--batch", type=int, default=1)
    sp.add_argument("--seq", type=int, default=8)
    sp.add_argument("--forwards", type=int, default=200, help="forward passes per loop")
    sp.add_argument("--id", default="my-host", help="the host preset's id")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    return p


def check_args(args):
    for k in ("warmup_s", "window_s"):
        v = getattr(args, k, None)
        if v is not None and not (math.isfinite(v) and 0 <= v <= 3600):
            raise MeasureError("--%s: must be 0 to 3600 s" % k.replace("_", "-"))
    window = getattr(args, "window_s", None)
    if window is not None and window < 0.3:
        raise MeasureError("--window-s: at least 0.3 s (the energy counter moves every ~0.1 s)")
    if not 1 <= getattr(args, "repeats", 1) <= 1000:
        raise MeasureError("--repeats: 1 to 1000")
    if args.command == "models" and not args.clocks and not args.power_limits:
        raise MeasureError("models: give --clocks or --power-limits")
    if args.command in ("models", "profile") and not 1 <= args.gen_tokens <= 100000:
        raise MeasureError("--gen-tokens: 1 to 100000")
    if args.command in ("models", "profile"):
        models = [m.strip() for m in args.models.split(",")]
        modes = [m.strip() for m in args.modes.split(",")]
        # the cases themselves (an unknown model or mode is an error here too)
        model_cases(models, [1], [1], modes, args.dtype)
        check_positions(models, parse_list(args.seq, "--seq", True), modes, args.gen_tokens)
    if args.command == "profile" and not 1 <= args.steps <= 1000:
        raise MeasureError("--steps: 1 to 1000")
    if args.command == "host":
        for k, hi in (("launches", 10 ** 7), ("forwards", 10 ** 6), ("batch", 4096),
                      ("seq", 131072)):
            if not 1 <= getattr(args, k) <= hi:
                raise MeasureError("--%s: 1 to %d" % (k, hi))
        if not args.id or any(c in args.id for c in "/\n") or len(args.id) > 63:
            raise MeasureError("--id: a name of 1 to 63 characters, no '/'")
    for k in ("clocks", "power_limits"):
        if getattr(args, k, None):
            parse_list(getattr(args, k), "--" + k.replace("_", "-"))


def _interrupt(signum, frame):
    """SIGTERM as Ctrl-C, so that the clocks and the power limit are restored."""
    raise KeyboardInterrupt


COMMANDS = {"idle": cmd_idle, "kernels": cmd_kernels, "models": cmd_models, "host": cmd_host,
            "profile": cmd_profile}


def main(argv=None):
    args = build_parser().parse_args(argv)
    nvml = None
    old = signal.getsignal(signal.SIGTERM)
    try:
        check_args(args)
        signal.signal(signal.SIGTERM, _interrupt)
        nvml = Nvml(os.environ.get("WATTLAS_NVML_LIB", "libnvidia-ml.so.1"))
        h = nvml.device(args.device)
        gpu = args.gpu or gpu_id_from_name(nvml.name(h))
        COMMANDS[args.command](args, nvml, h, gpu)
        return 0
    except MeasureError as e:
        sys.stderr.write("wattlas.measure: %s\n" % e)
        return 2 if str(e).startswith("--") else 1
    except KeyboardInterrupt:
        sys.stderr.write("\nwattlas.measure: interrupted; clocks and power limit restored, the points finished are saved\n")
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
        if nvml:
            nvml.shutdown()


if __name__ == "__main__":
    sys.exit(main())
