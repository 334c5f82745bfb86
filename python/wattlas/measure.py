"""Measure a GPU for wattlas: python3 -m wattlas.measure SUBCOMMAND.

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
* ``profile``: one step of each ``models`` workload under torch.profiler at
  each locked clock -> PyTorch profiles (``wattlas predict --trace``) and a
  summary.csv beside them.
* ``serve``: a serving engine (vLLM when importable, else a builtin
  continuous-batching loop over HF with a static KV cache and CUDA graphs)
  on the requests ``wattlas serve`` simulates, at locked clocks or power
  limits -> ``measurements/<gpu>-serve.csv`` in ``wattlas serve``'s columns,
  which ``wattlas validate`` scores (measure_serve.py).
* ``quick``: a board's calibration set in about a minute (idle and ten
  kernels at four clocks, the controller's setpoint at the top clock, the
  host's cost per kernel), then ``wattlas calibrate --fit auto`` on it -> a
  board preset (``DIR/board.ini``) for ``wattlas predict --gpu``
  (measure_quick.py).

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

This module holds the command line and the subcommands; measure_nvml.py the
NVML side, measure_cases.py the workloads, measure_files.py the outputs.
"""

import argparse
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time

# the harness's parts: what this module runs, and what callers of
# wattlas.measure reach through it
from .measure_files import (  # noqa: F401
    MEAS_COLUMNS, MeasureError, _atomic_write, measurements_text, idle_text,
    earlier_rows, save_measurements, earlier_idle, save_idle,
    host_text, trace_summary, workload_name, write_profile, summary_text,
    SUMMARY_COLUMNS, SUMMARY_POINT)
from .measure_nvml import (  # noqa: F401
    power_from_updates, spread_pct, Nvml, Sampler, Locked, measure_window, repeated)
from .measure_cases import (  # noqa: F401
    kernel_specs, trace_name, _torch_step, MODEL_CONFIGS, check_positions,
    model_cases, _model_step, tiny_specs)
from . import measure_quick
from . import measure_serve
from . import measure_campaign


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
    'h100-80gb-hbm3', an alias of h100-sxm-80gb); validate resolves aliases.
    It names output files and CSV cells: anything but letters, digits, '.'
    and '-' becomes '-' (a '/' or '..' would leave the output directory, a
    ',' split a CSV cell)."""
    s = name.strip().lower()
    if s.startswith("nvidia"):
        s = s[6:]
    s = "-".join(s.replace("_", " ").split())
    s = "".join(c if c.isascii() and (c.isalnum() or c in ".-") else "-" for c in s)
    while ".." in s:
        s = s.replace("..", ".")
    return s.strip(".-") or "gpu"


def check_gpu_id(gpu):
    """--gpu is the gpu column and names the output files: one file name
    that is one CSV cell."""
    if gpu is None:
        return
    if not gpu or gpu.startswith(".") or ".." in gpu or \
            any(c in gpu for c in ",/\\\n\r\"") or len(gpu) > 200:
        raise MeasureError("--gpu: a GPU name without '/', '..', ',' or quotes, got %r" % gpu)


def check_out(args):
    """The output, checked before any measuring (it failed with a traceback
    after the work): idle writes a file, the rest a directory."""
    out = getattr(args, "out", None)
    if not out:
        return
    if args.command == "idle":
        if os.path.isdir(out):
            raise MeasureError("-o %s: is a directory; idle writes a CSV file" % out)
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            raise MeasureError("-o %s: its directory %s cannot be written" % (out, parent))
    else:
        if os.path.exists(out) and not os.path.isdir(out):
            raise MeasureError("-o %s: not a directory; %s writes a directory" %
                               (out, args.command))
        probe = out
        while not os.path.exists(probe):
            probe = os.path.dirname(os.path.abspath(probe))
        if not os.access(probe, os.W_OK | os.X_OK):
            raise MeasureError("-o %s: %s cannot be written" % (out, probe))


# ---- subcommands -------------------------------------------------------------

def _progress(args, text):
    """A line per point: rewritten in place on a terminal, appended to a log."""
    if args.quiet:
        return
    eta = getattr(args, "eta", None)  # quick: elapsed and left
    if eta:
        text = eta() + text
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
    limits = parse_list(args.power_limits, "--power-limit-w") if getattr(args, "power_limits", None) else [None]
    return [(c, w) for w in limits for c in clocks]


def cmd_idle(args, nvml, h, gpu):
    rows = []
    clocks = parse_list(args.clocks, "--clocks", integer=True)
    # the clocks an earlier run measured stay beside this run's; a file in
    # another schema stops the run here, before a minute is spent
    earlier, kept = earlier_idle(args.out), 0
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
        kept = save_idle(args.out, earlier, rows)  # each clock, as the cases save each point
    _note(args, "%d clocks -> %s%s" % (len(rows), args.out,
                                       " (beside %d clocks kept from an earlier run)" % kept
                                       if kept else ""))


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
    if case.get("scope") and case["scope"] != "model":
        r["scope"] = case["scope"]
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
        step = None
        try:
            step = make_step(torch, case, dev)
            # two steps: an optimizer's second allocates what its first did
            # not (AdamW's foreach temporaries beside the state the first
            # created), and a case that fits one step can fail the next
            step()
            step()
            sync()
        except torch.cuda.OutOfMemoryError:
            _note(args, "skipped %s %s: does not fit in memory" % (case["model"], case["dtype"]))
            step = None
            _free_gpu(torch)
            done += len(points)
            continue
        failed = False
        for clock, limit in points:
            done += 1
            if failed:
                continue
            _progress(args, "%d/%d %s %s b%s s%s at %s" % (done, total, case["model"], case["dtype"],
                                                         case["batch"], case.get("seq"),
                                                         "%d MHz" % clock if clock else "%g W" % limit))
            try:
                with Locked(nvml, h, clock_mhz=clock, power_limit_w=limit):
                    m = repeated(nvml, h, step, args, sync)
            except torch.cuda.OutOfMemoryError:
                # memory that fragments over the windows: the points
                # measured stay, the case's others are skipped, and the run
                # goes on with the next case
                failed = True
                _note(args, "skipped %s %s b%s s%s from %s on: ran out of memory while measured"
                      % (case["model"], case["dtype"], case["batch"], case.get("seq"),
                         "%d MHz" % clock if clock else "%g W" % limit))
                continue
            rows.append(_row(gpu, case, clock, limit, m, case.get("gen_tokens"), top))
            save(rows)
        step = None
        _free_gpu(torch)
    return rows


def _free_gpu(torch):
    """Returns a case's memory to the device: its model and optimizer go
    with the last reference (gc breaks their cycles), then the allocator's
    cache."""
    import gc
    gc.collect()
    torch.cuda.empty_cache()


def measure_into(args, nvml, h, gpu, cases, make_step, out, earlier, each=None,
                 run_cases=None):
    """Measures cases into the measurement file out: earlier's rows
    (earlier_rows, read before anything was measured) that this run does not
    re-measure stay, and the file is saved after every point. each(rows), if
    given, completes the rows before they are saved. kernels, models and
    quick all write through here. Returns the rows and how many earlier
    lines were kept. run_cases stands in for _run_cases (a replay)."""
    def save(rows):
        if each:
            each(rows)
        return save_measurements(out, earlier, rows)
    rows = (run_cases or _run_cases)(args, nvml, h, gpu, cases, make_step, save)
    # the header alone when nothing fit and nothing was there
    return rows, save(rows)


def cmd_kernels(args, nvml, h, gpu):
    dtypes = [d.strip() for d in args.dtypes.split(",")]
    bad = [d for d in dtypes if d not in ("bf16", "fp16", "fp32", "tf32")]
    if bad:
        raise MeasureError("--dtypes: '%s' is not bf16, fp16, fp32 or tf32" % bad[0])
    specs = kernel_specs(dtypes)
    cases = [{"model": s["name"], "mode": "prefill", "batch": 1, "seq": None,
              "dtype": s["dtype"] if s["dtype"] != "tf32" else "fp32", "spec": s} for s in specs]
    out = os.path.join(args.out, "measurements", "%s-kernels.csv" % gpu)
    earlier = earlier_rows(out)
    for s in specs:  # first, so that rows saved along the way have their traces
        _atomic_write(os.path.join(args.out, "traces", trace_name(s)), json.dumps([s["entry"]]) + "\n")
    rows, kept = measure_into(args, nvml, h, gpu, cases,
                              lambda torch, c, dev: _torch_step(torch, c["spec"], dev), out, earlier)
    _note(args, "%d rows -> %s%s, traces in %s" % (len(rows), out, _kept_note(kept),
                                                   os.path.join(args.out, "traces")))


def _kept_note(kept):
    """The rows of an earlier run the file kept beside this run's."""
    return " (beside %d kept from an earlier run)" % kept if kept else ""


def cmd_models(args, nvml, h, gpu):
    cases = model_cases([m.strip() for m in args.models.split(",")],
                        parse_list(args.batch, "--batch", True), parse_list(args.seq, "--seq", True),
                        [m.strip() for m in args.modes.split(",")], args.dtype)
    stack = software_stack()
    if args.scope == "layer" and any(c["mode"] != "prefill" for c in cases):
        raise MeasureError("--scope layer: a block called alone is timed in prefill (--modes prefill)")
    for c in cases:
        c["attention"] = "flash" if args.attention == "sdpa" else "eager"
        c["stack"] = stack
        c["scope"] = args.scope
        if c["mode"] == "decode":
            c["gen_tokens"] = args.gen_tokens
    out = os.path.join(args.out, "measurements", "%s-models.csv" % gpu)
    earlier = earlier_rows(out)
    rows, kept = measure_into(args, nvml, h, gpu, cases,
                              lambda torch, c, dev: _model_step(torch, c, dev, args.attention,
                                                                args.gen_tokens), out, earlier)
    _note(args, "%d rows -> %s%s" % (len(rows), out, _kept_note(kept)))


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
    """Time-only rows (bare ops in a loop, a launch-bound forward and a
    training step of the same model, AdamW) with their one-kernel traces,
    and a host preset from them."""
    torch = _import_torch()
    dev = torch.device("cuda", args.device)
    clocks = parse_list(args.clocks, "--clocks", integer=True) if args.clocks else [None]
    meas = os.path.join(args.out, "measurements", "%s-host.csv" % gpu)
    earlier = earlier_rows(meas)  # kept beside this run's rows, as kernels keeps them
    case = {"model": args.model, "mode": "prefill", "batch": args.batch, "seq": args.seq,
            "dtype": "bf16", "attention": "eager"}
    if args.model not in MODEL_CONFIGS:
        raise MeasureError("--model: no config for '%s' (%s)" % (args.model, ", ".join(MODEL_CONFIGS)))
    specs = tiny_specs()
    rows, ops, fwd, train = [], [], [], {}
    kernels, train_kernels = None, {}  # train: "forward", "none", "adamw" -> timings, kernels
    dec, dec_kernels = {}, {}  # generate's new tokens -> timings, kernels
    for ci, clock in enumerate(clocks):
        timed = []  # (model, batch, seq, mode, us per call) at this clock
        with Locked(nvml, h, clock_mhz=clock):
            for s in specs:
                _progress(args, "clock %d/%d: %s" % (ci + 1, len(clocks), s["name"]))
                us, sd = _time_loop(torch, _torch_step(torch, s, dev), args.launches, args.repeats)
                ops.append((us, sd))
                timed.append((s["name"], 1, None, "prefill", us))
            _progress(args, "clock %d/%d: %s b%d s%d forward" % (ci + 1, len(clocks), args.model,
                                                                 args.batch, args.seq))
            step = _model_step(torch, case, dev, "eager", 0)
            if kernels is None:
                kernels = _count_kernels(torch, step)
            us, sd = _time_loop(torch, step, args.forwards, args.repeats)
            fwd.append((us, sd))
            timed.append((args.model, args.batch, args.seq, "prefill", us))
            del step
            # a training step costs the host more per kernel than a forward,
            # and by phase: the forward records the autograd graph, the
            # backward runs on autograd's engine, AdamW's foreach ops group
            # and walk every parameter tensor. Three calls tell them apart:
            # the step's forward alone, forward and backward (optimizer
            # none), and the whole AdamW step; each phase's cost per kernel
            # is the difference of two over the kernels it adds.
            for part in ("forward", "none", "adamw"):
                _progress(args, "clock %d/%d: %s b%d s%d training %s"
                          % (ci + 1, len(clocks), args.model, args.batch, args.seq,
                             {"forward": "forward", "none": "forward and backward",
                              "adamw": "step"}[part]))
                pc = dict(case, mode="train", **({"phase": "forward"} if part == "forward"
                                                 else {"optimizer": part}))
                step = _model_step(torch, pc, dev, "eager", 0)
                if part not in train_kernels:
                    train_kernels[part] = _count_kernels(torch, step)
                us, sd = _time_loop(torch, step, max(1, args.forwards // 3), args.repeats)
                train.setdefault(part, []).append((us, sd))
                if part != "forward":  # a workload wattlas builds: optimizer none or adamw
                    timed.append((args.model, args.batch, args.seq, "train:" + part, us))
                del step
            # generate's decode loop: the difference of two generations
            # (few and many new tokens) is decode steps alone, without the
            # prefill and generate's setup
            for g in (args.gen_tokens // 4 or 1, args.gen_tokens):
                _progress(args, "clock %d/%d: %s b%d s%d generate %d tokens"
                          % (ci + 1, len(clocks), args.model, args.batch, args.seq, g))
                step = _model_step(torch, dict(case, mode="decode"), dev, "eager", g)
                if g not in dec_kernels:
                    dec_kernels[g] = _count_kernels(torch, step)
                us, sd = _time_loop(torch, step, max(1, args.forwards // 20), args.repeats)
                dec.setdefault(g, []).append((us, sd))
                del step
            # unlocked: the clock the GPU ran at, read before the lock is undone
            clk = round(nvml.sm_clock_mhz(h)) if clock is None else clock
        stack = software_stack()
        rows += [dict({"gpu": gpu, "model": m, "batch": b, "seq": sq, "dtype": "bf16",
                       "mode": mode, "attention": "eager", "sm_clock_mhz": clk,
                       "measured_clock_mhz": float(clk), "time_ms": us * 1e-3,
                       "repeats": args.repeats, "stack": stack if sq else ""},
                      **({"mode": "train", "optimizer": mode[6:], "master_dtype": "none"}
                         if mode.startswith("train:") else {}))
                 for m, b, sq, mode, us in timed]
    save_measurements(meas, earlier, rows)
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
    phase, phase_sd = _train_phases(train, train_kernels, args, notes)
    de = None
    g_lo, g_hi = args.gen_tokens // 4 or 1, args.gen_tokens
    if g_hi > g_lo and dec_kernels.get(g_lo) and dec_kernels.get(g_hi) and \
            dec_kernels[g_hi] > dec_kernels[g_lo]:
        t_lo = statistics.median(u for u, _ in dec[g_lo])
        t_hi = statistics.median(u for u, _ in dec[g_hi])
        if t_hi > t_lo:
            de = (t_hi - t_lo) / (dec_kernels[g_hi] - dec_kernels[g_lo])
            notes.append("decode_launch_us: %s b%d s%d generate of %d and %d new tokens, %.0f us "
                         "more for the %d kernels more" % (args.model, args.batch, args.seq, g_lo,
                                                           g_hi, t_hi - t_lo,
                                                           dec_kernels[g_hi] - dec_kernels[g_lo]))
    notes.append("per kernel PyTorch launched; for wattlas's own kernel sequence fit it: "
                 "wattlas calibrate --gpu ID %s --traces %s --fit host -o host.ini"
                 % (meas, os.path.join(args.out, "traces")))
    import platform
    name = "%s, Python %s, PyTorch %s" % (platform.processor() or platform.machine(),
                                          platform.python_version(), torch.__version__)
    ini = os.path.join(args.out, "%s.ini" % args.id)
    _atomic_write(ini, host_text(args.id, name, launch, sd,
                                 "python3 -m wattlas.measure host", op_us, op_sd, notes,
                                 phase.get("train"), phase_sd.get("train"), de,
                                 backward_launch_us=phase.get("backward"),
                                 backward_stderr_us=phase_sd.get("backward"),
                                 optimizer_launch_us=phase.get("optimizer"),
                                 optimizer_stderr_us=phase_sd.get("optimizer")))
    said = "".join(", %s kernel %.2f us" % (k, phase[k]) for k in ("train", "backward", "optimizer")
                   if k in phase)
    _note(args, "bare op %.2f us, model kernel %.2f us%s%s -> %s; %d time-only rows -> %s"
          % (op_us, launch, said, ", decode step kernel %.2f us" % de if de else "", ini,
             len(rows), meas))


def train_phases(t_us, kernels):
    """A training step's host cost per kernel by phase, from the wall times
    (us) and kernel counts of three calls: "forward" (the step's forward,
    recording autograd), "none" (forward and backward) and "adamw" (the
    whole step). train: the forward's time over its kernels; backward and
    optimizer: the difference of two calls over the kernels the later one
    adds. A phase whose difference is not positive (the GPU set the pace,
    or noise) is left out, and its cost follows the step's. Where the host
    is not the bottleneck the differences hold GPU time too: then they are
    upper bounds, which calibrate --fit host refines from the rows."""
    out = {}
    if t_us.get("forward") and kernels.get("forward"):
        out["train"] = t_us["forward"] / kernels["forward"]
    for k, a, b in (("backward", "forward", "none"), ("optimizer", "none", "adamw")):
        if all(t_us.get(x) and kernels.get(x) for x in (a, b)) and \
                kernels[b] > kernels[a] and t_us[b] > t_us[a]:
            out[k] = (t_us[b] - t_us[a]) / (kernels[b] - kernels[a])
    return out


def _train_phases(train, train_kernels, args, notes):
    """train_phases on the medians of each call's timings (and on their
    standard errors, added in quadrature, for the stderr), with a note per
    cost written."""
    med = {k: statistics.median(u for u, _ in v) for k, v in train.items()}
    sem = {k: statistics.median(d for _, d in v) for k, v in train.items()}
    phase = train_phases(med, train_kernels)
    phase_sd = {}
    what = {"train": ("forward", None), "backward": ("none", "forward"),
            "optimizer": ("adamw", "none")}
    for k, v in phase.items():
        b, a = what[k]
        dk = train_kernels[b] - (train_kernels[a] if a else 0)
        phase_sd[k] = math.hypot(sem[b], sem[a] if a else 0.0) / dk
        notes.append("%s_launch_us: a %s b%d s%d training %s, %.0f us for the %d kernels %s"
                     % (k, args.model, args.batch, args.seq,
                        {"train": "forward recording autograd", "backward": "forward and backward "
                         "less its forward", "optimizer": "AdamW step less its forward and "
                         "backward"}[k], med[b] - (med[a] if a else 0), dk,
                        "it launches" if k == "train" else "it adds"))
    return phase, phase_sd


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
    # an earlier run's profiles stay in the directory, so their rows stay in
    # the summary (one of the same workload and clock is replaced)
    earlier = earlier_rows(summary, SUMMARY_COLUMNS)
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
                limit_w = nvml.enforced_power_limit_w(h)
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
            write_profile(path, trace, clock, wall_ms, stack, limit_w, gpu)
            r = {"workload": name, "sm_clock_mhz": clock, "wall_ms_per_step": wall_ms}
            r.update(trace_summary(trace))
            rows.append(r)
            save_measurements(summary, earlier, rows, SUMMARY_COLUMNS, SUMMARY_POINT)
        del step
        torch.cuda.empty_cache()
    save_measurements(summary, earlier, rows, SUMMARY_COLUMNS, SUMMARY_POINT)
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
    sub = p.add_subparsers(dest="command",
                           metavar="idle|kernels|models|host|profile|quick|serve|campaign")
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
    sp.add_argument("--power-limit-w", "--power-limits", dest="power_limits",
                    help="board power limits, W, instead of locked clocks (--power-limits: "
                         "the older spelling)")
    sp.add_argument("--models", default="gpt2")
    sp.add_argument("--modes", default="prefill")
    sp.add_argument("--batch", default="1,8")
    sp.add_argument("--seq", default="128,512")
    sp.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    sp.add_argument("--attention", default="eager", choices=["eager", "sdpa"])
    sp.add_argument("--gen-tokens", type=int, default=64, help="decode: tokens generated")
    sp.add_argument("--scope", default="model", choices=["model", "layer"],
                    help="model: the whole forward; layer: the first decoder block called on "
                         "its own, block(x), at each clock (no mask, no KV cache: 'wattlas "
                         "predict --scope layer' is that block)")
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
    sp.add_argument("--gen-tokens", type=int, default=32,
                    help="generate: new tokens of the longer of two generations whose "
                         "difference is decode steps alone (the shorter: a quarter)")
    sp.add_argument("--id", default="my-host", help="the host preset's id")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    sp = sub.add_parser("quick", help="a board's calibration set in about a minute, then its "
                                      "board preset (DIR/board.ini) by wattlas calibrate")
    sp.add_argument("--clocks", help="SM clocks to lock, MHz (default: four from 0.35 of the "
                                     "top clock to the top)")
    sp.add_argument("--warmup-s", type=float, default=0.25, help="seconds before a window")
    sp.add_argument("--window-s", type=float, default=0.5, help="seconds measured per point")
    sp.add_argument("--preset", help="the product's preset, the fit's prior (default: the gpu "
                                     "name, as 'wattlas presets' resolves it)")
    sp.add_argument("--board", help="the board preset written (default DIR/board.ini)")
    sp.add_argument("--no-host", action="store_true", help="keep the preset's host class")
    sp.add_argument("--launches", type=int, default=3000, help="host: bare-op calls per loop")
    sp.add_argument("--forwards", type=int, default=50, help="host: forward passes per loop")
    sp.add_argument("--host-id", default="my-host", help="the host preset's id")
    sp.add_argument("-o", "--out", required=True, help="a directory")
    measure_serve.add_parser(sub, common)
    sp = sub.add_parser("campaign", help="what a board needs, in order of value, until --minutes "
                                         "are spent (resumable), then its board preset and "
                                         "validation")
    sp.add_argument("--minutes", type=float, required=True, help="the time to spend")
    sp.add_argument("--clocks", help="SM clocks to lock, MHz (default: quick's four)")
    sp.add_argument("--warmup-s", type=float, default=0.3, help="seconds before a window")
    sp.add_argument("--window-s", type=float, default=0.8, help="seconds measured")
    sp.add_argument("--repeats", type=int, default=2, help="windows per point (median)")
    sp.add_argument("--preset", help="the product's preset, the fit's prior (default: the gpu "
                                     "name)")
    sp.add_argument("-o", "--out", required=True, help="a directory (a campaign.json there "
                                                       "is gone on from)")
    return p


def check_args(args):
    check_gpu_id(getattr(args, "gpu", None))
    check_out(args)
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
        raise MeasureError("models: give --clocks or --power-limit-w")
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
    if args.command in ("host", "quick"):
        for k, hi in (("launches", 10 ** 7), ("forwards", 10 ** 6), ("batch", 4096),
                      ("seq", 131072)):
            if hasattr(args, k) and not 1 <= getattr(args, k) <= hi:
                raise MeasureError("--%s: 1 to %d" % (k, hi))
        hid = args.id if args.command == "host" else args.host_id
        if not hid or any(c in hid for c in "/\n") or len(hid) > 63:
            raise MeasureError("--%s: a name of 1 to 63 characters, no '/'"
                               % ("id" if args.command == "host" else "host-id"))
    for k in ("clocks", "power_limits"):
        if getattr(args, k, None):
            parse_list(getattr(args, k), "--" + k.replace("_", "-"))
    if args.command == "serve":
        measure_serve.check_args(args, sys.modules[__name__])
    if args.command == "campaign" and not (math.isfinite(args.minutes) and
                                           0.5 <= args.minutes <= 10000):
        raise MeasureError("--minutes: 0.5 to 10000")


def _interrupt(signum, frame):
    """SIGTERM as Ctrl-C, so that the clocks and the power limit are restored."""
    raise KeyboardInterrupt


def cmd_quick(args, nvml, h, gpu):
    measure_quick.cmd_quick(args, nvml, h, gpu, sys.modules[__name__])


def cmd_serve(args, nvml, h, gpu):
    measure_serve.cmd_serve(args, nvml, h, gpu, sys.modules[__name__])


def cmd_campaign(args, nvml, h, gpu):
    measure_campaign.cmd_campaign(args, nvml, h, gpu, sys.modules[__name__])


COMMANDS = {"idle": cmd_idle, "kernels": cmd_kernels, "models": cmd_models, "host": cmd_host,
            "profile": cmd_profile, "quick": cmd_quick, "serve": cmd_serve,
            "campaign": cmd_campaign}


def main(argv=None):
    args = build_parser().parse_args(argv)
    if "--power-limits" in (sys.argv[1:] if argv is None else argv):
        print("wattlas.measure: note: --power-limits is --power-limit-w, the power limit's "
              "spelling in every command", file=sys.stderr)
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
        return 2 if str(e).startswith("-") else 1
    except KeyboardInterrupt:
        sys.stderr.write("\nwattlas.measure: interrupted; clocks and power limit restored, the points finished are saved\n")
        return 130
    except OSError as e:
        # an output that cannot be written (a full disk, /dev/full): one line
        sys.stderr.write("wattlas.measure: %s%s\n" % (e.strerror or e,
                                                      ": %s" % e.filename if e.filename else ""))
        return 1
    finally:
        signal.signal(signal.SIGTERM, old)
        if nvml:
            nvml.shutdown()


if __name__ == "__main__":
    sys.exit(main())
