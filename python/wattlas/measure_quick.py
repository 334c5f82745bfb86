"""``python3 -m wattlas.measure quick``: a board's calibration set in about
a minute, then its board preset.

Boards of one product differ by 15-30% in power at a clock and in the power
at which their controller holds a throttled kernel; hosts differ 2x in their
cost per kernel (README, "Boards differ"). A preset carries one board, so a
user with a GPU measures theirs:

1. idle power at four clocks (a gpu-tables CSV: the V-f table's idle power);
2. ten kernels at the same four clocks, one window each: big, wide, skinny
   and decode-like bf16 GEMMs, an fp32 GEMM, SDPA, softmax, RMSNorm,
   LayerNorm and an add, the families whose coefficients differ between
   boards (tensor-core, SIMT, memory and SFU power, the memory path);
3. at the top clock the big GEMM runs into the power limit: its row records
   the clock and power the controller held it at (the setpoint) with NVML's
   enforced limit and throttle reasons;
4. the host's cost per kernel (bare ops in a loop, and an HF GPT-2 forward
   when transformers is installed): a host preset;
5. ``wattlas calibrate --fit auto`` on all of it, with the product's preset
   as the prior: the board preset (``-o``), which ``wattlas predict --gpu
   board.ini`` takes.

The clocks and the power limit are restored on any exit (the context
managers of measure_nvml, and SIGTERM taken as Ctrl-C by measure.main)."""

import os
import shutil
import subprocess
import time
from types import SimpleNamespace

from .measure_files import MeasureError

# (name, dtype) of measure_cases.kernel_specs
QUICK_KERNELS = (
    ("k-gemm-8192x8192x8192", "bf16"),   # big: tensor cores flat out, the setpoint at the top
    ("k-gemm-512x20480x5120", "bf16"),   # wide weight, few tokens
    ("k-gemm-64x12288x12288", "bf16"),   # skinny: weight streaming
    ("k-gemm-1x8192x8192", "bf16"),      # decode-like: one token
    ("k-gemm-4096x4096x4096", "fp32"),   # SIMT FP32 (no TF32)
    ("k-sdpa-64x4096x128", "bf16"),      # fused attention
    ("k-softmax-393216x1024", "bf16"),   # exp on the SFUs
    ("k-rmsnorm-131072x4096", "bf16"),
    ("k-layernorm-131072x2048", "bf16"),
    ("k-pointwiseadd-268435456", "bf16"),  # the memory path
)

# seconds a point costs beyond its window: the lock, measure_window's
# 0.15 s before and 0.25 s after (the energy counter's updates)
POINT_OVERHEAD_S = 0.5
HOST_S = 20.0       # torch and transformers imported, the host rows
CALIBRATE_S = 5.0


def quick_clocks(max_mhz, n=4):
    """n clocks from about a third of the top clock to the top, on the
    15 MHz grid Hopper and Ampere boards lock to: 690/1125/1545/1980 on a
    1980 MHz part. The lowest sits near the V-f knee's foot, the top under
    the power limit."""
    if not max_mhz or max_mhz <= 0:
        raise MeasureError("quick: NVML reports no maximum SM clock")
    fr = [0.35 + (1.0 - 0.35) * i / (n - 1) for i in range(n)]
    out = []
    for f in fr:
        c = int(round(max_mhz * f / 15.0) * 15)
        c = min(c, int(max_mhz))
        if c not in out:
            out.append(c)
    return out


def quick_specs(kernel_specs):
    """The quick set's specs out of the kernel database's."""
    specs = {(s["name"], s["dtype"]): s for s in kernel_specs(("bf16", "fp32"))}
    missing = [k for k in QUICK_KERNELS if k not in specs]
    if missing:
        raise MeasureError("quick: the kernel database has no %s %s" % missing[0])
    return [specs[k] for k in QUICK_KERNELS]


def quick_plan_s(args, n_clocks):
    """The run's expected length: what the progress line counts down."""
    idle = n_clocks * (args.warmup_s + args.window_s + 0.1)
    kernels = len(QUICK_KERNELS) * n_clocks * (args.warmup_s + args.window_s + POINT_OVERHEAD_S)
    return idle + kernels + (HOST_S if not args.no_host else 0.0) + CALIBRATE_S


def find_wattlas():
    """The wattlas command: $WATTLAS_BIN, this checkout's bin/wattlas, or
    the one on PATH (None: none)."""
    env = os.environ.get("WATTLAS_BIN")
    if env:
        return env if os.access(env, os.X_OK) else None
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "bin", "wattlas")
    if os.access(local, os.X_OK):
        return os.path.normpath(local)
    return shutil.which("wattlas")


def calibrate_command(wattlas, preset, out_dir, gpu, board_ini, host_ini):
    """The calibrate call that turns the quick set into a board preset."""
    cmd = [wattlas, "calibrate", "--gpu", preset,
           os.path.join(out_dir, "measurements", "%s-kernels.csv" % gpu),
           "--traces", os.path.join(out_dir, "traces"),
           "--idle", os.path.join(out_dir, "gpu-tables", "%s-idle.csv" % gpu),
           "--fit", "auto", "-o", board_ini, "--quiet"]
    if host_ini:
        cmd[4:4] = ["--host", host_ini]
    return cmd


def run_calibrate(args, preset, gpu, host_ini, note):
    """Runs calibrate on the quick set; returns the board preset's path, or
    None (and a note with the command to run) without a wattlas command."""
    wattlas = find_wattlas()
    cmd = calibrate_command(wattlas or "wattlas", preset, args.out, gpu, args.board, host_ini)
    if not wattlas:
        note("no wattlas command found ($WATTLAS_BIN, bin/wattlas, PATH); run: %s" % " ".join(cmd))
        return None
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise MeasureError("calibrate failed (%s): %s" % (" ".join(cmd), r.stderr.strip()[-2000:]))
    return args.board


def cmd_quick(args, nvml, h, gpu, steps):
    """steps: the harness's own subcommands and helpers (measure.py), so that
    quick measures exactly as idle, kernels and host do."""
    # PyTorch first: without it the idle minutes would be measured for nothing
    steps._import_torch()
    t_start = time.perf_counter()
    clocks = (steps.parse_list(args.clocks, "--clocks", integer=True) if args.clocks
              else quick_clocks(nvml.max_sm_clock_mhz(h)))
    plan = quick_plan_s(args, len(clocks))
    preset = args.preset or gpu
    if not args.board:
        args.board = os.path.join(args.out, "board.ini")
    clock_text = ",".join(str(c) for c in clocks)
    os.makedirs(args.out, exist_ok=True)
    # the files quick adds to, checked before a minute is measured: rows and
    # clocks of an earlier run stay beside this run's, as kernels and idle
    # keep them, and a file in another schema stops the run here
    idle_csv = os.path.join(args.out, "gpu-tables", "%s-idle.csv" % gpu)
    meas = os.path.join(args.out, "measurements", "%s-kernels.csv" % gpu)
    steps.earlier_idle(idle_csv)
    earlier = steps.earlier_rows(meas)

    def eta():
        el = time.perf_counter() - t_start
        return "[%3.0f s, ~%.0f s left] " % (el, max(0.0, plan - el))

    common = dict(device=args.device, quiet=args.quiet, eta=eta, warmup_s=args.warmup_s,
                  window_s=args.window_s, repeats=1)
    steps.cmd_idle(SimpleNamespace(clocks=clock_text, out=idle_csv,
                                   **dict(common, warmup_s=max(args.warmup_s, 0.5))), nvml, h, gpu)

    # the kernels, under NVML's enforced limit, recorded in every row
    try:
        limit = nvml.enforced_power_limit_w(h)
    except (MeasureError, AttributeError):
        limit = nvml.power_limit_w(h)
    specs = quick_specs(steps.kernel_specs)
    cases = [{"model": s["name"], "mode": "prefill", "batch": 1, "seq": None,
              "dtype": s["dtype"], "spec": s} for s in specs]
    for s in specs:
        steps._atomic_write(os.path.join(args.out, "traces", steps.trace_name(s)),
                            steps.json.dumps([s["entry"]]) + "\n")

    def with_limit(rows):
        for r in rows:
            r["power_limit_w"] = limit

    kargs = SimpleNamespace(clocks=clock_text, power_limits=None, **common)
    rows, kept = steps.measure_into(kargs, nvml, h, gpu, cases,
                                    lambda tm, c, dev: steps._torch_step(tm, c["spec"], dev),
                                    meas, earlier, with_limit)
    top = [r for r in rows if r["model"] == QUICK_KERNELS[0][0] and r["sm_clock_mhz"] == max(clocks)]
    if top:
        r = top[0]
        steps._note(args, "setpoint: %s asked for %d MHz ran at %.0f MHz, %.0f W under a %.0f W "
                    "limit (throttle reasons 0x%x)"
                    % (r["model"], r["sm_clock_mhz"], r["measured_clock_mhz"], r["power_w"], limit,
                       r["throttle_reasons"]))

    host_ini = None
    if not args.no_host:
        hargs = SimpleNamespace(clocks=None, launches=args.launches, forwards=args.forwards,
                                model="gpt2", batch=1, seq=8, gen_tokens=32, id=args.host_id,
                                out=args.out,
                                **dict(common, repeats=3))
        try:
            steps.cmd_host(hargs, nvml, h, gpu)
            host_ini = os.path.join(args.out, "%s.ini" % args.host_id)
        except ImportError as e:  # transformers missing: the preset's host class stays
            steps._note(args, "host not measured (%s): the preset's host class stays" % e)

    board = run_calibrate(args, preset, gpu, host_ini, lambda t: steps._note(args, t))
    took = time.perf_counter() - t_start
    done = ("%d kernel rows at %s MHz%s, idle at %d clocks -> %s"
            % (len(rows), clock_text, steps._kept_note(kept), len(clocks),
               board or os.path.dirname(meas)))
    if board:
        steps._note(args, "%s in %.0f s; 'wattlas predict --gpu %s%s ...' predicts this board"
                    % (done, took, board, " --host %s" % host_ini if host_ini else ""))
    else:
        steps._note(args, "%s in %.0f s" % (done, took))
    return board
