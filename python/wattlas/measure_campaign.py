"""``python3 -m wattlas.measure campaign --minutes N -o DIR``: what a board
needs, in order of value, until the time is spent.

A lent GPU comes with minutes, not hours. The campaign measures, in this
order, each stage only if its estimated time still fits:

1. ``quick``: idle power, the ten quick kernels at four clocks and the
   host's cost per kernel (``measure quick``: the board's calibration set,
   and ``DIR/board.ini`` from it at once);
2. ``profiles``: PyTorch profiles of the eight workloads of
   ``../shared/data/profiles`` at the top clock and half of it (what
   PyTorch launches on this stack, and one profile predicts every clock);
3. ``models``: whole models at four clocks (GPT-2 and Qwen2-1.5B, prefill
   and AdamW steps, b4 s512: the rows the board's calibration is judged on);
4. ``decode``: ``generate`` at the same clocks (GPT-2 b1 eager, Llama-3-8B
   b16 SDPA: host-paced and bandwidth-bound decode);
5. ``serve``: a serving loop at two clocks (``measure serve``);
6. ``power-limits``: the AdamW steps under four board power limits.

A stage that does not fit is skipped and said so; a later, shorter one may
still run. Each finished stage is recorded in ``DIR/campaign.json``, so a
second run into the same directory (after a stop, or with more minutes)
goes on with what is left. The campaign ends by calibrating the board from
every kernel row (``wattlas calibrate --fit auto`` with the product's preset
as the prior, as ``quick`` does) and validating that board preset on the
board's own whole-model rows, and prints both.

The estimates are the harness's own costs: a measured point is its warm-up,
its windows and the lock (``measure_quick.POINT_OVERHEAD_S``); a model is
loaded (random weights built from its config) and warmed up once per case
(``LOAD_S``); a profile is three warm-up, three timed and one profiled
step."""

import json
import os
import subprocess
import time
from types import SimpleNamespace

from .measure_files import MeasureError
from . import measure_quick

STATE = "campaign.json"
# seconds to build a model with random weights on the GPU and warm it up
# (HF from its config; the 8B model's 16 GB of weights dominate)
LOAD_S = {"gpt2": 8.0, "bert-large": 10.0, "opt-1.3b": 15.0, "qwen2-1.5b": 15.0,
          "llama-3-8b": 45.0}
PROFILE_CLOCK_S = 6.0   # 3 + 3 + 1 steps of a step under a second, the trace written
DECODE_POINT_S = 4.0    # a generate call is seconds long: one per window
SERVE_REQUESTS = 256    # a quarter of measure serve's default: ~40 s of steps a point
SERVE_S = 120.0         # its four points (two batch limits, two clocks), the engine built
FINISH_S = 15.0         # calibrate and validate at the end

# the eight workloads of ../shared/data/profiles (README there):
# (model, mode, batch, seq, attention, gen_tokens)
PROFILE_WORKLOADS = (
    ("gpt2", "prefill", 4, 1024, "eager", 0),
    ("qwen2-1.5b", "prefill", 4, 1024, "eager", 0),
    ("bert-large", "prefill", 8, 256, "eager", 0),
    ("llama-3-8b", "prefill", 2, 2048, "sdpa", 0),
    ("gpt2", "train", 4, 1024, "eager", 0),
    ("qwen2-1.5b", "train", 4, 512, "sdpa", 0),
    ("opt-1.3b", "train", 8, 256, "eager", 0),
    ("llama-3-8b", "decode", 8, 1024, "sdpa", 16),
)
MODEL_ROWS = ("gpt2,qwen2-1.5b", "prefill,train", "4", "512")
DECODE_ROWS = (("gpt2", "1", "128", "eager"), ("llama-3-8b", "16", "512", "sdpa"))
LIMIT_FRACTIONS = (1.0, 0.8, 0.6, 0.4)


def _clocks(args, nvml, h):
    if args.clocks:
        return args.steps_mod.parse_list(args.clocks, "--clocks", integer=True)
    return measure_quick.quick_clocks(nvml.max_sm_clock_mhz(h))


def _point_s(args):
    return args.warmup_s + args.window_s * args.repeats + measure_quick.POINT_OVERHEAD_S


def plan(args, clocks):
    """[(stage, what, estimated seconds)] in the campaign's order."""
    top, half = max(clocks), _half(clocks)
    n = len(clocks)
    prof = sum(LOAD_S.get(m, 20.0) + 2 * PROFILE_CLOCK_S * (4 if mode == "decode" else 1)
               for m, mode, *_ in PROFILE_WORKLOADS)
    models = 2 * 2 * (LOAD_S["qwen2-1.5b"] + n * _point_s(args))
    decode = sum(LOAD_S[m] + n * DECODE_POINT_S * args.repeats for m, *_ in DECODE_ROWS)
    limits = 2 * (LOAD_S["qwen2-1.5b"] + len(LIMIT_FRACTIONS) * _point_s(args))
    qargs = SimpleNamespace(warmup_s=args.warmup_s, window_s=0.5, no_host=False)
    return [("quick", "idle, the quick kernels and the host",
             measure_quick.quick_plan_s(qargs, n)),
            ("profiles", "profiles of the eight shared workloads at %d and %d MHz" % (top, half),
             prof),
            ("models", "whole models at %d clocks" % n, models),
            ("decode", "decode (generate) at %d clocks" % n, decode),
            ("serve", "serving at %d and %d MHz" % (top, half), SERVE_S),
            ("power-limits", "AdamW steps under %d power limits" % len(LIMIT_FRACTIONS), limits)]


def _half(clocks):
    """The clock nearest half the top (990 MHz on a 1980 MHz part)."""
    top = max(clocks)
    return int(round(top / 2 / 15.0) * 15)


def load_state(path, gpu):
    try:
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
    except FileNotFoundError:
        return {"gpu": gpu, "done": {}}
    except (OSError, ValueError) as e:
        raise MeasureError("%s: not a campaign state file (%s)" % (path, e)) from None
    if not isinstance(s, dict) or not isinstance(s.get("done"), dict):
        raise MeasureError("%s: not a campaign state file" % path)
    if s.get("gpu") != gpu:
        raise MeasureError("%s: a campaign of %s, not %s: measure into another directory"
                           % (path, s.get("gpu"), gpu))
    return s


def _parse(args, steps, sub, *opts):
    """A subcommand's arguments as its own parser gives them (every default)."""
    argv = (["--quiet"] if args.quiet else []) + ["--device", str(args.device), sub, *opts,
                                                  "-o", args.out]
    a = steps.build_parser().parse_args(argv)
    steps.check_args(a)
    return a


def run_stage(name, args, nvml, h, gpu, steps, clocks):
    """Runs one stage with the harness's own subcommands (steps)."""
    top, half = max(clocks), _half(clocks)
    text = ",".join(str(c) for c in clocks)
    win = ["--warmup-s", str(args.warmup_s), "--window-s", str(args.window_s),
           "--repeats", str(args.repeats)]
    if name == "quick":
        q = _parse(args, steps, "quick", "--clocks", text, "--host-id", "host",
                   *(["--preset", args.preset] if args.preset else []))
        steps.cmd_quick(q, nvml, h, gpu)
    elif name == "profiles":
        for m, mode, b, s, att, gen in PROFILE_WORKLOADS:
            steps.cmd_profile(_parse(args, steps, "profile", "--clocks", "%d,%d" % (top, half),
                                     "--models", m, "--modes", mode, "--batch", str(b),
                                     "--seq", str(s), "--attention", att,
                                     "--gen-tokens", str(gen or 16)), nvml, h, gpu)
    elif name == "models":
        models, modes, b, s = MODEL_ROWS
        steps.cmd_models(_parse(args, steps, "models", "--clocks", text, "--models", models,
                                "--modes", modes, "--batch", b, "--seq", s, *win), nvml, h, gpu)
    elif name == "decode":
        for m, b, s, att in DECODE_ROWS:
            steps.cmd_models(_parse(args, steps, "models", "--clocks", text, "--models", m,
                                    "--modes", "decode", "--batch", b, "--seq", s,
                                    "--attention", att, "--gen-tokens", "64", *win),
                             nvml, h, gpu)
    elif name == "serve":
        steps.cmd_serve(_parse(args, steps, "serve", "--clocks", "%d,%d" % (top, half),
                               "--max-num-seqs", "16,128", "--requests", str(SERVE_REQUESTS)),
                        nvml, h, gpu)
    elif name == "power-limits":
        top_w = nvml.power_limit_w(h)
        limits = ",".join("%.0f" % (top_w * f) for f in LIMIT_FRACTIONS)
        steps.cmd_models(_parse(args, steps, "models", "--power-limit-w", limits,
                                "--models", "gpt2,qwen2-1.5b", "--modes", "train",
                                "--batch", "4", "--seq", "512", *win), nvml, h, gpu)
    else:
        raise MeasureError("campaign: no stage '%s'" % name)


def finish(args, gpu, note):
    """calibrate on every kernel row, then validate on the board's whole models:
    (board preset or None, validate's summary lines)."""
    host = os.path.join(args.out, "host.ini")
    host = host if os.path.exists(host) else None
    kernels = os.path.join(args.out, "measurements", "%s-kernels.csv" % gpu)
    if not os.path.exists(kernels):
        note("no kernel rows: no board preset")
        return None, []
    board = os.path.join(args.out, "board.ini")
    q = SimpleNamespace(out=args.out, board=board)
    if not measure_quick.run_calibrate(q, args.preset or gpu, gpu, host, note):
        return None, []
    models = os.path.join(args.out, "measurements", "%s-models.csv" % gpu)
    if not os.path.exists(models):
        note("no whole-model rows to validate %s on" % board)
        return board, []
    wattlas = measure_quick.find_wattlas()
    cmd = [wattlas, "validate", models, "--gpu", board, "--no-lomo", "--quiet"]
    if host:
        cmd += ["--host", host]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise MeasureError("validate failed (%s): %s" % (" ".join(cmd), r.stderr.strip()[-2000:]))
    lines = [l for l in r.stderr.splitlines() if l.startswith(("MAPE", "energy-optimal"))]
    return board, lines


def cmd_campaign(args, nvml, h, gpu, steps, clock=time.perf_counter):
    """steps: the harness (measure.py) with its subcommands; clock: the
    time source (a test's stand-in)."""
    args.steps_mod = steps
    t0 = clock()
    budget = args.minutes * 60.0
    clocks = _clocks(args, nvml, h)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, STATE)
    state = load_state(path, gpu)

    def note(t):
        steps._note(args, t)

    def save():
        steps._atomic_write(path, json.dumps(state, indent=1, sort_keys=True) + "\n")

    measured, skipped = [], []
    for name, what, est in plan(args, clocks):
        if name in state["done"]:
            note("%s: done in an earlier run (%s)" % (name, what))
            continue
        left = budget - (clock() - t0) - FINISH_S
        if est > left:
            skipped.append((name, what, est))
            note("%s skipped: about %.0f s, %.0f s left (%s)" % (name, est, max(left, 0), what))
            continue
        note("%s: %s, about %.0f s" % (name, what, est))
        s0 = clock()
        try:
            run_stage(name, args, nvml, h, gpu, steps, clocks)
        except ImportError as e:  # transformers or vLLM missing: the others go on
            skipped.append((name, "%s (%s)" % (what, e), est))
            note("%s skipped: %s" % (name, e))
            continue
        took = clock() - s0
        state["done"][name] = {"s": round(took, 1), "what": what}
        save()
        measured.append((name, what, took))
    board, lines = finish(args, gpu, note)
    state["skipped"] = [n for n, *_ in skipped]
    save()
    note("measured: %s" % (", ".join("%s (%.0f s)" % (n, t) for n, _, t in measured) or "nothing"))
    if skipped:
        note("skipped for lack of time or software: %s; run again into %s with more minutes "
             "to go on" % (", ".join(n for n, *_ in skipped), args.out))
    if board:
        note("board preset %s%s" % (board, "; on its whole models: " + "; ".join(lines)
                                    if lines else ""))
    return SimpleNamespace(measured=[n for n, *_ in measured], skipped=[n for n, *_ in skipped],
                           board=board, validate=lines)
