"""The README's numbers, generated from the commands that print them.

Each claim below runs the README's example (the command line, or the Python
package for the Python examples) and formats what it printed the way the
README writes it; the test fails when that text is not in the README, so a
number cannot go stale unnoticed: the failure names the claim, the command
and the text the README should hold. Whitespace is compared collapsed (the
README wraps its lines).

    tests/test_readme.py             the claims that take seconds (make check)
    tests/test_readme.py --all       every claim, the slow ones too (make readme-check)
    tests/test_readme.py --print     print each claim's generated text, check nothing

Claims that read ../shared/data (or $WATTLAS_SHARED/data) skip without it.
"""

import csv
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATTLAS = os.environ.get("WATTLAS_BIN", os.path.join(ROOT, "bin", "wattlas"))
SHARED = os.environ.get("WATTLAS_SHARED", os.path.join(ROOT, "..", "shared"))
DATA = os.path.join(SHARED, "data")
MEAS = os.path.join(DATA, "measurements")
SLOW = os.environ.get("WATTLAS_README_SLOW") == "1"


def readme_text():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return " ".join(f.read().split())


class Out:
    """What one command printed: out, err, and out's CSV rows."""

    def __init__(self, out, err):
        self.out, self.err = out, err

    @property
    def rows(self):
        lines = [l for l in self.out.splitlines() if not l.startswith("#")]
        return list(csv.DictReader(io.StringIO("\n".join(lines))))

    @property
    def row(self):
        return self.rows[0]


_cache = {}
# tests/run.sh gives the tests of one run a directory where test_readme and
# test_accuracy share what the same command printed: the one that runs it
# first holds a lock on its entry while it does, the other waits and reads
# (the directory goes with the run, so nothing outlives the binary it ran)
SHARE = os.environ.get("WATTLAS_CMD_CACHE")


def shared_run(key, argv, env=None):
    """(returncode, stdout, stderr) of argv in the repository root, through
    SHARE when the run has one."""
    def run():
        p = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
        return p.returncode, p.stdout, p.stderr
    if not SHARE or not os.path.isdir(SHARE):
        return run()
    import fcntl
    import hashlib
    import json
    name = os.path.join(SHARE, hashlib.sha256(key.encode()).hexdigest())
    with open(name + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(name + ".json"):
            with open(name + ".json", encoding="utf-8") as f:
                return tuple(json.load(f))
        got = run()
        with open(name + ".tmp", "w", encoding="utf-8") as f:
            json.dump(got, f)
        os.replace(name + ".tmp", name + ".json")
        return got


def w(cmd):
    """Runs 'wattlas CMD' (CMD as the README writes it, '../shared/data'
    being DATA) in the repository root; exit status 0 required."""
    cmd = cmd.replace("../shared/data", DATA)
    if cmd in _cache:
        return _cache[cmd]
    # a command that writes a file (-o) is run here, not shared: its file
    # is this process's to read
    argv = [WATTLAS, *shlex.split(cmd)]
    if " -o " in f" {cmd} ":
        p = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        rc, out, err = p.returncode, p.stdout, p.stderr
    else:
        rc, out, err = shared_run(WATTLAS + "\0" + cmd, argv)
    if rc != 0:
        raise AssertionError(f"wattlas {cmd}: exit {rc}\n{err[-2000:]}")
    _cache[cmd] = Out(out, err)
    return _cache[cmd]


def f(x, nd):
    """x with nd decimals, as the README writes it (printf's rounding)."""
    return f"{float(x):.{nd}f}"


def pct(x):
    return f"{float(x):.0f}"


CLAIMS = []


def claim(slow=False, data=False):
    def deco(fn):
        CLAIMS.append((fn, slow, data))
        return fn
    return deco


# --- energy-check -----------------------------------------------------------

@claim()
def energy_check_a100_sxm():
    """energy-check: the A100 SXM's board, arithmetic and operand energies"""
    r = w("energy-check --gpu a100-sxm-80gb --dtype bf16 --format csv").row
    arith = float(r["arith_pj_per_flop"]) / float(r["board_pj_per_flop"]) * 100
    return [f"{r['board_w']} W / {f(r['peak_tflops'], 1)} TFLOP/s = "
            f"{f(r['board_pj_per_flop'], 2)} pJ/FLOP",
            f"{f(r['arith_pj_per_flop'], 3)} pJ/FLOP, {pct(arith)}%",
            f"{f(r['operand_pj_per_flop'], 3)} pJ/FLOP; together {pct(r['first_principles_pct'])}%"]


@claim()
def energy_check_model_power():
    """energy-check's model_power_w: a bf16 8192^3 GEMM over the board limit"""
    out = []
    for gpu, name in (("a100-pcie-40gb", "A100 PCIe"), ("a100-sxm-80gb", "A100 SXM"),
                      ("h100-sxm-80gb", "H100 SXM"), ("a10-24gb", "A10")):
        r = w(f"energy-check --gpu {gpu} --dtype bf16 --format csv").row
        out.append((name, pct(r["model_power_w"]), r["board_w"]))
    (n0, p0, b0), *rest = out
    return [f"{n0} {p0} W unthrottled against {b0} W, "
            + ", ".join(f"{n} {p}/{b}" for n, p, b in rest)]


# --- training and decode ----------------------------------------------------

SXM = "predict --gpu a100-sxm-80gb --dtype bf16 --format csv"


def optimum(args, clocks):
    """(optimize row, phase schedule row or None) of a sweep of ARGS."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.csv")
        w(f"sweep --gpu a100-sxm-80gb --dtype bf16 {args} --clock {clocks} -o {path} --quiet")
        best = w(f"optimize {path} --objective energy").row
        sched = None
        if "--mode train" in args:
            sched = w(f"optimize {path} --objective energy --schedule=phase").row
    return best, sched


@claim()
def train_table():
    """the training rows of the table in 'Training and decode'"""
    eager = w(f"{SXM} --mode train --model gpt2 --batch 8 --seq 1024 --attention eager").row
    flash = w(f"{SXM} --mode train --model gpt2 --batch 8 --seq 1024 --attention flash").row
    g13 = "--mode train --model gpt3-1.3b --batch 4 --seq 2048 --attention flash"
    r = w(f"{SXM} {g13}").row
    full = w(f"{SXM} {g13} --recompute full").row
    bert = w(f"{SXM} --mode train --model bert-large --batch 32 --seq 512").row
    best, sched = optimum(g13, "810:1410:30")
    clocks = {kv.split("=")[1] for kv in sched["schedule_mhz"].split(";")}
    plan = (f"forward, backward and optimizer all at {clocks.pop()}" if len(clocks) == 1
            else sched["schedule_mhz"])
    mfu = lambda x: f(float(x["mfu"]) * 100, 1)
    return [f"| GPT-2 train b8 s1024 eager / flash | {f(eager['time_ms'], 1)} / "
            f"{f(flash['time_ms'], 1)} ms | {mfu(eager)} / {mfu(flash)}% |",
            f"| GPT-3 1.3B train b4 s2048 flash | {f(r['time_ms'], 0)} ms "
            f"({f(r['memory_gb'], 1)} GB) | {mfu(r)}% | {f(best['sm_clock_mhz'], 0)} MHz: "
            f"-{pct(best['energy_saving_vs_max_clock_pct'])}% energy, "
            f"+{pct(best['runtime_penalty_vs_max_clock_pct'])}% time; {plan} |",
            f"| same, `--recompute full` | {f(full['time_ms'], 0)} ms "
            f"({f(full['memory_gb'], 1)} GB) | {mfu(full)}% |",
            f"| BERT-large train b32 s512 | {f(bert['time_ms'], 0)} ms | {mfu(bert)}% |"]


@claim()
def decode_table():
    """the decode rows of the table in 'Training and decode'"""
    out = []
    for launch, label in (("eager", "Llama-3-8B decode b1 s512, gen 128, eager"),
                          ("graphs", "same, `--launch graphs`")):
        args = f"--mode decode --model llama-3-8b --batch 1 --seq 512 --gen 128 --launch {launch}"
        r = w(f"{SXM} {args}").row
        best, _ = optimum(args, "510:1410:30")
        bound = ", launch-bound" if float(r["launch_bound_pct"]) > 25 else ""
        out.append(f"| {label} | TPOT {f(r['tpot_ms'], 1)} ms{bound} | | "
                   f"{f(best['sm_clock_mhz'], 0)} MHz: "
                   f"-{pct(best['energy_saving_vs_max_clock_pct'])}% energy, "
                   f"+{pct(best['runtime_penalty_vs_max_clock_pct'])}% time |")
    return out


@claim()
def decode_batches():
    """decode with graphs and eager as the batch grows"""
    g = [f(w(f"{SXM} --mode decode --model llama-3-8b --batch {b} --seq 512 --gen 128 "
             f"--launch graphs").row["tpot_ms"], 1) for b in (1, 8, 32, 64, 128, 256)]
    e = [float(w(f"{SXM} --mode decode --model llama-3-8b --batch {b} --seq 512 --gen 128")
               .row["tpot_ms"]) for b in (1, 8, 32, 64)]
    return [f"TPOT {', '.join(g[:-1])} and {g[-1]} ms at batch 1, 8, 32, 64, 128 and 256",
            f"eager stays at the host's ~{f(e[0], 0)} ms per step up to batch 32 and "
            f"{f(e[3], 0)} ms at 64"]


# --- hosts ------------------------------------------------------------------

@claim()
def host_launch_bound():
    """--host moves a launch-bound prediction"""
    a = "predict --gpu a100-pcie-40gb --model gpt2 --batch 1 --seq 128 --format csv"
    base = w(a).row["time_ms"]
    srv = w(a + " --host server-2023").row["time_ms"]
    return [f"from {f(base, 2)} ms to {f(srv, 2)} with `server-2023`"]


# --- presets ----------------------------------------------------------------

@claim()
def a10_critical_line():
    """--set vmin_mv=600 on the A10: the clocks above which the floor is infeasible"""
    rows = w("sweep --gpu a10-24gb --model gpt2 --set vmin_mv=600 --quiet").rows
    floor = [r for r in rows if float(r["voltage_mv"]) == 600]
    ok = max(float(r["sm_clock_mhz"]) for r in floor if r["feasible"] == "1")
    bad = min(float(r["sm_clock_mhz"]) for r in floor if r["feasible"] == "0")
    # 966 MHz: the alpha-power law's f_max at 600 mV (test_presets computes it)
    edge = "966" if ok < 966 < bad else f"{ok:.0f}-{bad:.0f}"
    return [f"marks every clock above {edge} MHz at the 600 mV floor `feasible=0`"]


# --- serve ------------------------------------------------------------------

@claim(data=True)
def serve_mlenergy():
    """the ML.ENERGY leaderboard's Llama-3.1-8B rows through validate"""
    rows = w("validate ../shared/data/public/ml-energy/v3-llama-3.1-8b-lm-arena-chat.csv "
             "--format csv").rows

    def pc(p, m):
        return (float(p) / float(m) - 1) * 100
    return [f"| {r['gpu']} | {r['max_num_seqs']} | {r['avg_batch']} / {r['predicted_avg_batch']} | "
            f"{float(r['median_itl_ms']):.2f} / {float(r['predicted_median_itl_ms']):.2f} ms "
            f"({pc(r['predicted_median_itl_ms'], r['median_itl_ms']):+.0f}%) | "
            f"{float(r['power_w']):.0f} / {float(r['predicted_power_w']):.0f} W "
            f"({pc(r['predicted_power_w'], r['power_w']):+.0f}%) | "
            f"{float(r['energy_per_token_j']):.3f} / "
            f"{float(r['predicted_energy_per_token_j']):.3f} J "
            f"({pc(r['predicted_energy_per_token_j'], r['energy_per_token_j']):+.0f}%) |"
            for r in rows]


@claim(data=True)
def serve_leaderboard():
    """the whole leaderboard's lm-arena-chat configurations"""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "lb.csv")
        w(f"validate ../shared/data/public/ml-energy/v3-all-llm-configs.csv -o {out}")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "leaderboard_table.py"),
                            out], capture_output=True, text=True, check=True)
    last = p.stdout.strip().splitlines()[-1]
    m = re.match(r"lm-arena-chat: (\d+) configurations, (\d+) ran \((\d+)%\); energy per token "
                 r"\|error\| median ([0-9.]+)%, 75th percentile ([0-9.]+)%", last)
    assert m, last
    return [f"of its {m[1]} lm-arena-chat configurations {m[2]} ran ({m[3]}%), with the energy per\n"
            f"token's error at {m[4]}% at the median and {m[5]}% at the 75th percentile"]


@claim()
def serve_tensor_parallel():
    """Llama-3-70B on four and eight H100s"""
    r = w("serve --model llama-3-70b --tp 4,8 --max-num-seqs 128 --format csv").rows
    assert [x["gpus"] for x in r] == ["4", "8"], r
    return [f"--max-num-seqs 128` gives {r[0]['energy_per_token_j']} J/token at a "
            f"{r[0]['median_itl_ms']} ms median ITL on\nfour H100s and "
            f"{r[1]['energy_per_token_j']} J/token at {r[1]['median_itl_ms']} ms on eight"]


@claim()
def serve_steady_state():
    """one steady-state definition: 256 has a window, 320 none"""
    r = w("serve --requests 300 --max-num-seqs 256,320 --format csv").rows
    return [f"gives {r[0]['energy_per_token_j']}\nJ/token over a {r[0]['steady_s']} s window at 256",
            f"`run_energy_per_token_j` is {r[0]['run_energy_per_token_j']} and\n"
            f"{r[1]['run_energy_per_token_j']} J/token for the two"]


@claim()
def serve_clock_front():
    """the serving study's least energy per token at its lowest clock"""
    rows = w("serve --max-num-seqs 16,64,128 --clock 990,1980 --async-scheduling "
             "--format csv").rows
    by = {}
    for r in rows:
        by.setdefault(r["max_num_seqs"], {})[r["sm_clock_mhz"]] = r
    saved, slower = [], []
    for k, v in by.items():
        lo, hi = v["990.0"], v["1980.0"]
        saved.append((1 - float(lo["energy_per_token_j"]) / float(hi["energy_per_token_j"])) * 100)
        slower.append(float(lo["p90_itl_ms"]) / float(hi["p90_itl_ms"]))
    lo16, hi16 = by["16"]["990.0"], by["16"]["1980.0"]
    return [f"990 MHz, {min(saved):.0f}-{max(saved):.0f}% below 1980 MHz, at a p90 ITL "
            f"{min(slower):.1f}-{max(slower):.1f} times as long (16: "
            f"{float(lo16['energy_per_token_j']):.3f} J and {float(lo16['p90_itl_ms']):.1f} ms "
            f"against {float(hi16['energy_per_token_j']):.3f} J and "
            f"{float(hi16['p90_itl_ms']):.1f} ms)"]


# --- cluster ----------------------------------------------------------------

DGX13 = "cluster --system dgx-a100-80gb --model gpt3-1.3b --tp 2 --pp 4 --global-batch 64"
# eager attention's 2048-token scores need 100 GB on its first stage: --all
PCIE13 = "cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 --micro-batch 8 --all"


@claim()
def cluster_plans_dgx():
    """clocks per stage: gpt3-1.3b on one DGX A100, uniform and balanced"""
    u = w(f"{DGX13} --optimize energy --format csv").row
    b = w(f"{DGX13} --optimize energy --partition balanced --format csv").row
    st = w(f"{DGX13} --optimize energy --partition balanced --stages --format csv").rows
    return [f"(`imbalance_pct` {f(u['imbalance_pct'], 1)}), saves "
            f"{f(u['energy_saving_pct'], 1)}% of the GPU energy at {u['slowdown_pct']}% "
            f"slowdown, but only {f(u['saving_vs_balanced_pct'], 1)}% over balanced stages",
            f"balanced stages ({', '.join(s['layers'] for s in st)} layers; imbalance "
            f"{f(b['imbalance_pct'], 1)}%, what whole layers allow) the plan saves "
            f"{f(b['energy_saving_pct'], 1)}% at {b['slowdown_pct']}%"]


@claim()
def cluster_plans_pcie():
    """clocks per stage on the 4-GPU PCIe server, balanced stages"""
    out = []
    for s in (1, 2, 3):
        r = w(f"{PCIE13} --partition balanced --optimize energy --max-slowdown-pct {s} "
              "--format csv").row
        out.append(f"{f(r['energy_saving_pct'], 1)}% at {r['slowdown_pct']}%")
    st = w(f"{PCIE13} --partition balanced --stages --format csv").rows
    return [f"balanced stages save {out[0]} ({out[1]} within 2%, {out[2]} within 3%)",
            f"({', '.join(s['fwd_clock_mhz'] for s in st[:-1])} and "
            f"{st[-1]['fwd_clock_mhz']} MHz there"]


@claim()
def cluster_plans_175b():
    """clocks per stage: GPT-3 175B on 64 GPUs"""
    r = w("cluster --system dgx-a100-80gb --nodes 8 --model gpt3-175b --tp 8 --pp 8 --vp 3 "
          "--global-batch 64 --recompute selective --sequence-parallel --dtype fp16 "
          "--optimize energy --format csv").row
    return [f"saves {f(r['energy_saving_pct'], 1)}% of the GPU energy at "
            f"{f(r['slowdown_pct'], 1)}%."]


@claim()
def cluster_plans_computation():
    """clocks per computation on one DGX A100 and the 4-GPU PCIe server"""
    out = []
    for cmd in (DGX13, f"{PCIE13} --partition balanced"):
        r0 = w(f"{cmd} --optimize energy --max-slowdown-pct 0 --format csv").row
        r1 = w(f"{cmd} --optimize energy --max-slowdown-pct 1 --format csv").row
        out.append(f"{f(r0['computation_saving_pct'], 1)}% at a strict 0% (a stage plan "
                   f"{f(r0['energy_saving_pct'], 1)}%), {f(r1['computation_saving_pct'], 1)}% "
                   f"within 1% (a stage plan {f(r1['energy_saving_pct'], 1)}%)")
    return [f"gpt3-1.3b on one DGX A100 (uniform split) the per-computation plan saves {out[0]}",
            f"on the PCIe server with balanced stages {out[1]}"]


@claim()
def compare_same_die():
    """compare on one die: the boards' share of the difference"""
    cmd = ("compare --gpu h100-sxm-80gb,h200-sxm-141gb --model llama-3-8b --batch 8 --seq 2048 "
           "--attention flash --format csv")
    rows = w(cmd).rows
    moved = w(cmd + " --same-board --quiet").rows
    t = 100 * (1 - float(rows[1]["time_ms"]) / float(rows[0]["time_ms"]))
    e = 100 * (1 - float(rows[1]["energy_j"]) / float(rows[0]["energy_j"]))
    tm = 100 * (float(moved[1]["time_ms"]) / float(moved[0]["time_ms"]) - 1)
    em = 100 * (float(moved[1]["energy_j"]) / float(moved[0]["energy_j"]) - 1)
    return [f"has the H200 {f(t, 1)}% faster and {f(e, 1)}% cheaper at 1980 MHz",
            f"but on the H100's board {f(tm, 1)}% and {f(em, 1)}%: {f(t + tm, 1)} and",
            f"{f(e + em, 1)} points are the two presets' boards"]


@claim(data=True)
def set_sms_derives():
    """--set sms re-derives the L2's bandwidth per SM"""
    gemm = "../shared/data/traces/k-gemm-8192x8192x8192_bf16_b1_prefill.json"
    base = f"sweep --gpu h100-sxm-80gb --trace {gemm} --clock 990 --no-power-limit --format csv"
    rows = w(f"{base} --set sms=132,264 --quiet").rows
    held = w(f"{base} --set sms=264 --set l2_bw_bytes_per_clk=6258 --quiet").rows
    t = {r["sms"]: float(r["time_ms"]) for r in rows}
    return [f"its 8192^3 GEMM runs {f(t['132'] / t['264'], 2)}x faster at 990 MHz",
            f"({f(t['132'] / float(held[0]['time_ms']), 2)}x while the L2 stayed)"]


@claim()
def cluster_power_caps():
    """board power caps on the 4-GPU PCIe server"""
    rows = w(f"{PCIE13} --partition balanced --power-limit-w 150:300:25 --format csv").rows
    by = {r["power_limit_w"]: r for r in rows}
    slower = (float(by["175"]["time_s"]) / float(by["300"]["time_s"]) - 1) * 100
    gpu = min(rows, key=lambda r: float(r["energy_gpu_j"]))
    allj = min(rows, key=lambda r: float(r["energy_j"]))
    cut = (1 - float(gpu["energy_gpu_j"]) / float(by["300"]["energy_gpu_j"])) * 100
    fr = w(f"{PCIE13} --frontier --max-slowdown-pct 40 --power-limit-w 150:300:25 "
           "--partition balanced --format csv").rows
    cap = next(r for r in fr if r["kind"] == "cap" and r["power_limit_w"] == "200")
    plans = [r for r in fr if r["kind"] == "plan"
             and float(r["slowdown_pct"]) <= float(cap["slowdown_pct"])]
    plan = max(plans, key=lambda r: float(r["energy_saving_pct"]))
    return [f"{pct(slower)}% slower at 175 W than at 300 W; the least GPU energy at "
            f"{gpu['power_limit_w']} W ({f(cut, 1)}% below 300 W's), the least cluster "
            f"energy at {allj['power_limit_w']} W",
            f"a cap of 200 W saves {f(cap['energy_saving_pct'], 1)}% of the GPU energy for "
            f"{f(cap['slowdown_pct'], 1)}% more time, where a plan within the same slowdown "
            f"saves {f(plan['energy_saving_pct'], 1)}%"]


@claim()
def cluster_decode_tpot():
    """cluster decode with graphs against predict's vLLM-kernel path"""
    c, p = [], []
    for b in (8, 32, 128):
        c.append(f(w(f"cluster --system dgx-h100 --model llama-3-8b --mode decode --tp 1 --pp 1 "
                     f"--global-batch {8 * b} --micro-batch {b} --seq 512 --gen 256 "
                     "--launch graphs --attention flash --format csv").row["tpot_ms"], 2))
        p.append(f(w(f"predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode --batch {b} "
                     "--seq 512 --gen 256 --launch graphs --format csv").row["tpot_ms"], 2))
    return [f"TPOT {c[0]}, {c[1]} and {c[2]} ms at 8, 32 and 128 sequences",
            f"({p[0]}, {p[1]}, {p[2]})"]


@claim()
def cluster_search_175b():
    """cluster search: GPT-3 175B on 1024 GPUs"""
    r = w("cluster search --model gpt3-175b --nodes 128 --global-batch 1536 --format csv")
    fast = next(x for x in r.rows if "fastest" in x["choice"].split("+"))
    m = re.search(r"(\d+) configurations of gpt3-175b on 1024 GPUs: (\d+) simulated, (\d+) fit"
                  r" \(of the rest, (\d+) cannot hold their weights and optimizer state, (\d+) "
                  r"their activations either, (\d+) are beaten on their bounds", r.err)
    if not m:
        raise AssertionError(f"no counts in:\n{r.err}")
    return [f"{m.group(1)} configurations, {m.group(2)} simulated, {m.group(3)} fit ({m.group(4)} "
            f"cannot hold their weights and optimizer state, {m.group(5)} their activations, "
            f"{m.group(6)} are beaten on their bounds)",
            f"micro-batch {fast['micro_batch']} at {f(fast['tflops_per_gpu'], 1)} TFLOP/s per "
            f"GPU ({f(float(fast['mfu']) * 100, 1)}% MFU)"]


@claim()
def cluster_search_rows():
    """cluster search -o: every configuration, and Narayanan et al.'s"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "all.csv")
        w(f"cluster search --model gpt3-175b --nodes 128 --global-batch 1536 -o {path} --quiet")
        with open(path, encoding="utf-8") as fp:
            rows = list(csv.DictReader(fp))
    held = [r for r in rows if r["time_s"]]
    fit = [r for r in held if r["fits"] == "1"]
    fast = max(float(r["tflops_per_gpu"]) for r in fit)
    sc21 = [r for r in fit if (r["tp"], r["pp"], r["dp"], r["vp"]) == ("8", "8", "16", "3")]
    best = max(sc21, key=lambda r: float(r["tflops_per_gpu"]))
    behind = (1 - float(best["tflops_per_gpu"]) / fast) * 100
    # Narayanan et al.'s end-to-end estimate for GPT-3 175B assumes 140
    over = (float(best["tflops_per_gpu"]) / 140 - 1) * 100
    return [f"every one of the {len(held)} that hold their weights simulated",
            f"with 3 chunks comes out {f(behind, 1)}% behind it",
            f"TFLOP/s per GPU, which wattlas exceeds by some {pct(over)}%"]


@claim()
def cluster_search_1t():
    """cluster search: Megatron's 1T on 4096 GPUs"""
    r = w("cluster search --model megatron-1t --nodes 512 --global-batch 3072 --format csv")
    m = re.search(r"(\d+) configurations of megatron-1t on 4096 GPUs: (\d+) simulated", r.err)
    if not m:
        raise AssertionError(f"no counts in:\n{r.err}")
    return [f"(global batch 3072): {m.group(1)} configurations, {m.group(2)} simulated"]


LLAMA405 = ("cluster --system dgx-h100 --nodes {n} --model llama-3.1-405b --tp 8 --pp 16 "
            "--vp {vp} --global-batch 2048 --seq 8192 --sequence-parallel --zero 1 "
            "--recompute selective --partition {p} --format csv")


@claim()
def llama_405b_mfu():
    """Llama 3.1 405B on 8K and 16K H100s against the Llama 3 paper's MFU"""
    p2 = ",".join(["3"] + ["4"] * 30 + ["3"])
    p1 = ",".join(["7"] + ["8"] * 14 + ["7"])
    run = lambda n, vp, p, extra="": w(LLAMA405.format(n=n, vp=vp, p=p) + extra).row
    mfu = lambda r: f(float(r["mfu"]) * 100, 1)
    fl = [run(n, 2, p2, " --attention flash") for n in (1024, 2048)]
    ovl = [run(n, 2, p2, " --attention flash --tp-comm-overlap") for n in (1024, 2048)]
    one = [run(n, 1, p1, " --attention flash") for n in (1024, 2048)]
    eg = [run(n, 2, p2) for n in (1024, 2048)]
    gap = [43 - float(mfu(fl[0])), 41 - float(mfu(fl[1]))]
    side = [f"{f(abs(g), 1)} points {'short' if g > 0 else 'over'}" for g in gap]
    return [f"gives {mfu(fl[0])}% and {mfu(fl[1])}% ({f(fl[0]['tflops_per_gpu'], 0)} and "
            f"{f(fl[1]['tflops_per_gpu'], 0)} TFLOP/s a GPU, against the paper's 430 and 400) "
            f"with flash attention, two chunks per GPU and selective recompute, "
            f"{mfu(ovl[0])}% and {mfu(ovl[1])}% with `--tp-comm-overlap` as well, "
            f"{mfu(one[0])}% and {mfu(one[1])}% without interleaving",
            f"({side[0]} on 8,192 GPUs and {side[1]} on 16,384)",
            f"Eager attention (Megatron's unfused softmax over 8192 keys) gives "
            f"{mfu(eg[0])}% and {mfu(eg[1])}%"]


@claim()
def deepseek_v3():
    """DeepSeek-V3 on 2048 H800s"""
    # over 80 GB by the memory model: --all
    cmd = ("cluster --system hgx-h800 --nodes 256 --model deepseek-v3 --tp 1 --pp 16 --ep 64 "
           "--global-batch 15360 --seq 4096 --zero 1 --partition balanced --recompute selective "
           "--dtype fp8 --all --format csv")
    a, o = w(cmd).row, w(cmd + " --ep-overlap").row
    per = lambda r: pct(float(r["tokens_per_s"]) / 2048)
    return [f"the exposed all-to-alls are {f(a['ep_comm_exposed_s'], 1)} s of a "
            f"{f(a['time_s'], 1)} s step, {per(a)} tokens/s a GPU",
            f"with `--ep-overlap` {f(o['ep_comm_exposed_s'], 1)} s of a {f(o['time_s'], 1)} s "
            f"step, {per(o)} tokens/s a GPU",
            f"the memory model puts it at {pct(a['memory_gb'])} GB, over 80"]


@claim()
def context_parallel():
    """cp 4 against cp 1: Llama 3 8B at seq 32768 on 16 H100s"""
    # cp 1's activations do not fit (the point): --all
    a = ("cluster --system dgx-h100 --nodes 2 --model llama-3-8b --tp 2 --seq 32768 "
         "--attention flash --sequence-parallel --all --format csv")
    c4, c1 = w(a + " --cp 4 --global-batch 4"), w(a + " --cp 1 --global-batch 8")
    s4, s1 = w(a + " --cp 4 --global-batch 4 --stages"), w(a + " --cp 1 --global-batch 8 --stages")
    act = float(s1.row["activations_gb"]) / float(s4.row["activations_gb"])
    tps = (1 - float(c4.row["tokens_per_s"]) / float(c1.row["tokens_per_s"])) * 100
    if act <= 3.5:
        return [f"cuts the activations by {f(act, 1)}x"]
    return [f"cp 4 cuts the activations by over 3.5x and the tokens per second by {pct(tps)}%"]


def script(path, env=None):
    """stdout of one of scripts/ (exit status 0 required), on this wattlas."""
    e = dict(os.environ, WATTLAS=WATTLAS, **(env or {}))
    key = "\0".join([WATTLAS, path] + [f"{k}={v}" for k, v in sorted((env or {}).items())])
    rc, out, err = shared_run(key, ["sh", os.path.join(ROOT, path)], env=e)
    if rc != 0:
        raise AssertionError(f"{path}: exit {rc}\n{err[-2000:]}")
    return out


@claim()
def narayanan():
    """the summary against Narayanan et al.'s Table 1 (scripts/narayanan.sh)"""
    out = script("scripts/narayanan.sh")
    m = re.search(r"mean \|error\| ([0-9.]+)%, worst ([0-9.]+)%", out)
    rows = list(csv.DictReader(io.StringIO("\n".join(
        l for l in out.splitlines() if not l.startswith("#")))))
    worst = max(rows, key=lambda r: abs(float(r["error_pct"])))
    side = "fast" if float(worst["error_pct"]) > 0 else "slow"
    return [f"within {m.group(1)}% on average, worst {m.group(2)}% (the "
            f"{worst['model'][:-1]}B on {worst['gpus']} GPUs, {side})"]


@claim()
def korthikanti():
    """the table against Korthikanti et al. (scripts/korthikanti.sh)"""
    names = {"megatron-22b": "22B", "gpt3-175b": "175B", "mt-nlg-530b": "530B",
             "megatron-1t": "1T"}
    exps = {"full": "full recompute", "selective": "sequence parallel + selective"}
    out = script("scripts/korthikanti.sh")
    rows = list(csv.DictReader(io.StringIO("\n".join(
        l for l in out.splitlines() if not l.startswith("#")))))
    claims = [f"| {names[r['model']]}, {r['gpus']} | {exps[r['experiment']]} | {r['measured_s']} "
              f"| {r['predicted_s']} | {r['error_pct']}% |" for r in rows]
    m = re.search(r"mean \|error\| ([0-9.]+)%, worst ([0-9.]+)%", out)
    claims.append(f"Mean error {m.group(1)}%, worst {m.group(2)}%")
    free = script("scripts/korthikanti.sh", {"EXTRA": "--set power_limit_w=600"})
    m = re.search(r"mean \|error\| ([0-9.]+)%, worst ([0-9.]+)%", free)
    claims.append(f"it is {m.group(1)}% (worst {m.group(2)}%)")
    return claims


@claim()
def tp_overlap_175b():
    """--tp-comm-overlap on GPT-3 175B, 64 A100s"""
    a = ("cluster --system dgx-a100-80gb --nodes 8 --model gpt3-175b --tp 8 --pp 8 --vp 3 "
         "--global-batch 64 --recompute selective --sequence-parallel --dtype fp16 --format csv")
    r0, r1 = w(a).row, w(a + " --tp-comm-overlap").row
    return [f"exposed tensor-parallel time {f(r0['tp_comm_exposed_s'], 2)} -> "
            f"{f(r1['tp_comm_exposed_s'], 3)} s, the step {f(r0['time_s'], 2)} -> "
            f"{f(r1['time_s'], 2)} s"]


@claim()
def fp8_22b():
    """fp8 against bf16 on Megatron's 22B, one DGX H100"""
    a = ("cluster --system dgx-h100 --model megatron-22b --tp 8 --pp 1 --global-batch 4 "
         "--micro-batch 4 --sequence-parallel --recompute selective --format csv")
    r8, r16 = w(a + " --dtype fp8").row, w(a + " --dtype bf16").row
    t8, t16 = float(r8["time_s"]), float(r16["time_s"])
    return [f"runs {f(t16 / t8, 2)}x faster than in bf16 ({f(t8, 3)} against {f(t16, 3)} s"]


@claim()
def fp8_small():
    """fp8 on a launch-bound model: GPT-3 1.3B at tp 2"""
    a = ("cluster --system dgx-h100 --model gpt3-1.3b --tp 2 --global-batch 64 --micro-batch 1 "
         "--format csv")
    t8, t16 = float(w(a + " --dtype fp8").row["time_s"]), float(w(a + " --dtype bf16").row["time_s"])
    d = (t8 / t16 - 1) * 100
    return [f"(GPT-3 1.3B at tp 2 is {pct(abs(d))}% {'slower' if d >= 0 else 'faster'}"]


# --- Python -----------------------------------------------------------------

@claim()
def python_predict():
    """the Python predict example"""
    import wattlas
    rows = wattlas.predict(gpu="a100-pcie-40gb", model="gpt2", batch=8, seq=512,
                           dtype="bf16", clock=range(510, 1411, 90))
    best = min(rows, key=lambda r: r["energy_j"])
    return [f"# ({best['sm_clock_mhz']}, {best['energy_j']})"]


@claim()
def python_optimize():
    """the Python notebook example: sweep, optimize"""
    import warnings
    import wattlas
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = wattlas.sweep(gpu=["a100-pcie-40gb", "h100-sxm-80gb"], model="llama-3-8b",
                          batch=8, seq=512, clock=range(510, 1981, 30))
    best = wattlas.optimize(t, "energy")
    return [" / ".join(f"{r['gpu']} {r['sm_clock_mhz']} {r['energy_saving_vs_max_clock_pct']:.2f}"
                       for r in best)]


@claim()
def python_cluster():
    """the Python cluster example"""
    import wattlas
    r = wattlas.cluster("dgx-a100-80gb", "gpt3-175b", nodes=8, tp=8, pp=8, vp=3,
                        global_batch=64, recompute="selective", sequence_parallel=True,
                        dtype="fp16")
    return [f"# ({r[0]['time_s']}, {r[0]['mfu']})"]


@claim(data=True)
def python_validate():
    """the Python validate example"""
    import wattlas
    check = wattlas.validate(os.path.join(MEAS, "a100-pcie-40gb-dvfs.csv"), interval=95)
    return [f"# {check.summary['mape_energy_pct']:.2f}"]


@claim(slow=True, data=True)
def python_calibrate_learn():
    """the Python calibrate and learn examples"""
    import wattlas
    with tempfile.TemporaryDirectory() as d:
        fit = wattlas.calibrate(os.path.join(MEAS, "a100-pcie-40gb-dvfs.csv"), "a100-pcie-40gb",
                                out=os.path.join(d, "a100-fitted.ini"), kfold=4)
        cv = wattlas.learn(os.path.join(MEAS, "a100-pcie-40gb-dvfs.csv"),
                           out=os.path.join(d, "hybrid.json"), kind="gbt", hybrid=True)
    k = fit.summary["kfold"]
    return [f"# {k['mape_energy_pct']:.2f} (held out by workload)",
            f"# ({cv[0]['learned_energy_pct']:.2f}, {cv[0]['analytical_energy_pct']:.2f})",
            f"| dvfs, 4-fold by workload | held-out | {k['mape_time_pct']:.2f} | "
            f"{k['mape_power_pct']:.2f} | {k['mape_energy_pct']:.2f} |"]


def learn_mape(text, what):
    """(learned, analytical) MAPE triples of one cross-validation line of learn."""
    m = re.search(re.escape(what) + r"[^\n]*?MAPE time ([0-9.]+)%\s+power ([0-9.]+)%\s+energy "
                  r"([0-9.]+)%; analytical alone ([0-9.]+)%\s+([0-9.]+)%\s+([0-9.]+)%", text)
    if not m:
        raise AssertionError(f"no '{what}' line in:\n{text[-3000:]}")
    g = m.groups()
    return g[:3], g[3:]


@claim(slow=True, data=True)
def learn_table():
    """the learn section's table: the DVFS columns of the analytical model, the
    hybrids and plain gbt"""
    out = []
    with tempfile.TemporaryDirectory() as d:
        for kind in ("rf", "gbt"):
            r = w(f"learn {DVFS} -o {d}/h.json --hybrid --kind {kind} --lomo --quiet")
            (k, ka), (l, la) = learn_mape(r.err, "4-fold"), learn_mape(r.err, "leave one model out")
            if kind == "rf":
                out.append(f"| analytical, refitted per fold | {' / '.join(ka)} | {' / '.join(la)} |")
            out.append(f"| hybrid {kind} | {' / '.join(k)} | {' / '.join(l)} |")
        r = w(f"learn {DVFS} -o {d}/p.json --kind gbt --quiet")
        k, _ = learn_mape(r.err, "4-fold")
        out.append(f"| plain gbt | {' / '.join(f(x, 1) for x in k)} |")
    return out


@claim(slow=True)
def python_report():
    """the Python report example"""
    import wattlas
    with tempfile.TemporaryDirectory() as d:
        study = wattlas.report(os.path.join(ROOT, "studies", "default.ini"),
                               out=os.path.join(d, "study"), batch=[1, 8])
    return [f"('study/index.html', {study['figures']})"]


# --- accuracy ---------------------------------------------------------------

def mape(text):
    """(time, power, energy) MAPE from validate's summary on stderr (power and
    energy None for time-only rows)."""
    m = re.search(r"MAPE with [^\n]*?: time ([0-9.]+)%(?:\s+power ([0-9.]+)%\s+energy ([0-9.]+)%)?",
                  text)
    if not m:
        raise AssertionError(f"no MAPE line in:\n{text[-3000:]}")
    return m.groups()


def regret(text):
    """(worst, mean) energy-optimal-clock regret from validate's summary."""
    m = re.search(r"regret \([^)]*\): worst ([0-9.]+)% [^\n]*mean ([0-9.]+)%", text)
    if not m:
        raise AssertionError(f"no regret line in:\n{text[-3000:]}")
    return m.groups()


def subset(src, keep, name):
    """A measurements file of SRC's header and the rows KEEP accepts, in a
    directory named like ../shared/data/measurements so the idle tables and
    traces beside the data are found as they are for the original."""
    d = tempfile.mkdtemp(prefix="wattlas-readme-")
    os.symlink(os.path.join(DATA, "gpu-tables"), os.path.join(d, "gpu-tables"))
    os.symlink(os.path.join(DATA, "traces"), os.path.join(d, "traces"))
    os.mkdir(os.path.join(d, "measurements"))
    path = os.path.join(d, "measurements", name)
    with open(os.path.join(MEAS, src), encoding="utf-8") as fi, \
            open(path, "w", encoding="utf-8") as fo:
        lines = fi.readlines()
        fo.write(lines[0])
        fo.writelines(l for l in lines[1:] if keep(l))
    return path


def row_of(label, kind, text):
    t, p, e = mape(text)
    return f"| {label} | {kind} | {t} | {p or ''} | {e or ''} |"


DVFS = "../shared/data/measurements/a100-pcie-40gb-dvfs.csv"
MHZ900 = "../shared/data/measurements/a100-pcie-40gb-900mhz.csv"


@claim(data=True)
def accuracy_dvfs():
    """the accuracy table: the DVFS rows in sample and left out by model"""
    r = w(f"validate {DVFS} --lomo")
    worst, mean = regret(r.err)
    m = re.search(r"pooled held-out MAPE \(176 rows\): time ([0-9.]+)%\s+power ([0-9.]+)%\s+"
                  r"energy ([0-9.]+)%; held-out regret worst ([0-9.]+)%, mean ([0-9.]+)%", r.err)
    if not m:
        raise AssertionError(f"no leave-one-model-out line in:\n{r.err[-3000:]}")
    lomo = m.groups()
    per = []
    for model in ("bert-large", "gpt2", "opt-1.3b"):
        mm = re.search(rf"without {re.escape(model)}\s+\(\s*\d+ rows\): time ([0-9.]+)%\s+"
                       r"power ([0-9.]+)%\s+energy ([0-9.]+)%", r.err)
        per.append(f"without {model} " + "/".join(mm.groups()))
    return [row_of("dvfs, 176 rows (16 workloads x 11 clocks)", "in-sample", r.err)
            + f" {worst} (mean {mean}) |",
            f"| dvfs, leave-one-model-out | held-out | {lomo[0]} | {lomo[1]} | {lomo[2]} | "
            f"{lomo[3]} (gpt2 b8 s128; mean {lomo[4]}) |",
            "Leave-one-model-out per model (time/power/energy): " + ", ".join(per) + "."]


@claim(data=True)
def accuracy_interval():
    """95% prediction intervals' coverage on the DVFS rows"""
    t, p, e = coverage(w(f"validate {DVFS} --no-lomo --interval 95").err)
    return [f"cover the measured time in {t}% of the DVFS rows, power in {p}%, energy in {e}%"]


@claim(data=True)
def accuracy_energaizer():
    """the accuracy table: EnergAIzer's four workloads"""
    keys = (",gpt2,8,128,bf16,", ",gpt2,32,512,bf16,", ",opt-1.3b,2,128,bf16,",
            ",opt-1.3b,8,2048,bf16,")
    path = subset("a100-pcie-40gb-dvfs.csv", lambda l: any(k in l for k in keys), "eai4.csv")
    r = w(f"validate {path} --no-lomo")
    worst, _ = regret(r.err)
    return [row_of("dvfs, EnergAIzer's four workloads", "in-sample", r.err)
            + f" {f(worst, 1)} |"]


@claim(data=True)
def accuracy_900mhz():
    """the accuracy table: the 900 MHz file, not fitted on"""
    tf = subset("a100-pcie-40gb-900mhz.csv", lambda l: "prefill" in l, "900tf.csv")
    vis = subset("a100-pcie-40gb-900mhz.csv",
                 lambda l: "vit-large" in l or "resnet-101" in l, "900vis.csv")
    mv = subset("a100-pcie-40gb-900mhz.csv", lambda l: "mobilevit" in l, "mv.csv")
    nf = "not fitted on"
    return [row_of("900 MHz table, 84 transformer rows", nf, w(f"validate {tf} --no-lomo").err),
            row_of("900 MHz table, 16 vision rows (native vit-large, resnet-101)", nf,
                   w(f"validate {vis} --no-lomo").err),
            row_of("900 MHz table, all 100 natively built rows (`--no-beside`)", nf,
                   w(f"validate {MHZ900} --no-lomo --no-beside").err),
            row_of("900 MHz table, 8 mobilevit-small rows (bf16 traces; fp32 retyped from them)",
                   nf, w(f"validate {mv} --traces ../shared/data/traces --no-lomo").err),
            row_of("900 MHz table, all 108 rows (default: native, mobilevit from `traces/` beside "
                   "the data)", nf, w(f"validate {MHZ900} --no-lomo").err),
            row_of("900 MHz table, 108 rows with `--traces` (traces over builders)", nf,
                   w(f"validate {MHZ900} --traces ../shared/data/traces --no-lomo").err)]


@claim(data=True)
def accuracy_vision_models():
    """the cautions: ViT-Large and ResNet-101 per model at 900 MHz"""
    vis = subset("a100-pcie-40gb-900mhz.csv",
                 lambda l: "vit-large" in l or "resnet-101" in l, "900vis.csv")
    rows = w(f"validate {vis} --no-lomo").rows
    out = []
    for model, text in (("vit-large", "ViT-Large is {}% off"),
                        ("resnet-101", "ResNet-101 built natively is {}% off")):
        mine = [r for r in rows if r["model"] == model]
        errs = []
        for pred, meas in (("predicted_time_ms", "time_ms"), ("predicted_power_w", "power_w"),
                           ("predicted_energy_j", "energy_j")):
            e = [abs(float(r[pred]) / float(r[meas]) - 1) * 100 for r in mine]
            errs.append(f(sum(e) / len(e), 1))
        out.append(text.format("/".join(errs)))
    return out


@claim(data=True)
def accuracy_h100_db():
    """the accuracy table: the H100 SXM kernel database and host rows"""
    k = w("validate ../shared/data/measurements/h100-sxm-80gb-kernels.csv "
          "--traces ../shared/data/traces --no-lomo")
    h = w("validate ../shared/data/measurements/h100-sxm-80gb-host.csv "
          "--traces ../shared/data/traces --no-lomo")
    worst, _ = regret(k.err)
    ho = h100_holdout()
    hw = re.search(r"held-out \(\d+ rows\):.*clock regret worst ([0-9.]+)%", ho.err).group(1)
    names = re.search(r"held out \(--holdout every:5\): (\S+)", ho.err).group(1)
    hn, ht, hp, he = calibrate_figures(ho.err, "held-out")
    return [row_of("H100 SXM kernel database, 144 rows (18 kernels x 8 clocks), `make calibrate`",
                   "in-sample", k.err) + f" {worst} |",
            f"| the same fit with every fifth kernel name held out "
            f"({names.replace(',', ', ')}: {hn} rows) | held-out | {ht} | {hp} | {he} | {hw} |",
            row_of("H100 SXM host rows, 15 time-only rows (tiny bare ops, GPT-2 b1 s8), "
                   "`server-2023` fitted by `make calibrate`", "in-sample", h.err)]


@claim(data=True)
def decode_host_ratio():
    """the hosts' decode cost: scripts/host_phase_ratio.sh decode on every measured host"""
    out = tempfile.mkdtemp(prefix="wattlas-readme-")
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "host_phase_ratio.sh"), WATTLAS,
                        SHARED, out, "decode"], capture_output=True, text=True, cwd=ROOT,
                       check=True)
    r = {m.group(1): (float(m.group(2)), float(m.group(3)), float(m.group(4)))
         for m in re.finditer(r"^host (\S+) +forward +([0-9.]+) .* ([0-9.]+): ratio ([0-9.]+)$",
                              p.stdout, re.M)}
    a, b = r["h100-vm"], r["h100-vm-b"]
    return [f"a decode step's kernel costs {a[2]:.2f}x a forward's on this repository's H100 "
            f"board 2's VM ({a[1]:.1f} of {a[0]:.1f} us) and {b[2]:.2f}x on its second H100 VM "
            f"({b[1]:.1f} of {b[0]:.1f} us)"]


@claim(data=True)
def train_host_ratio():
    """the hosts' training cost: scripts/host_phase_ratio.sh train on every measured host, and the
    server class's train_launch_us as make calibrate writes it"""
    out = tempfile.mkdtemp(prefix="wattlas-readme-")
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "host_phase_ratio.sh"), WATTLAS,
                        SHARED, out, "train"], capture_output=True, text=True, cwd=ROOT, check=True)
    r = {m.group(1): float(m.group(2))
         for m in re.finditer(r"^host (\S+) .* ratio ([0-9.]+)$", p.stdout, re.M)}
    ratio, sd = map(float, re.search(r"^ratio ([0-9.]+) sd ([0-9.]+)$", p.stdout, re.M).groups())
    host = {}
    with open(os.path.join(ROOT, "presets", "hosts", "server-2023.ini"), encoding="utf-8") as f:
        for line in f:
            k, _, v = line.partition(" = ")
            host[k] = v.strip()
    launch, train = float(host["launch_us"]), float(host["train_launch_us"])
    # the shipped class is what make calibrate makes of these fits
    if abs(train - ratio * launch) > 1e-3 * train:
        raise AssertionError(f"server-2023 train_launch_us {train}, the hosts' ratio gives "
                             f"{ratio * launch:.4f}: run make calibrate")
    return [f"a training step's kernel costs {r['h200-shared']:.2f}x a forward's on `../shared`'s "
            f"H200 host, {r['h100-vm']:.2f}x and {r['h100-vm-b']:.2f}x on this repository's two "
            f"H100 hosts and {r['h200-vm-b']:.2f}x on its H200 board B's. `server-2023` takes "
            f"their geometric mean, {ratio:.2f}x ({train:.1f} +- {sd * launch:.1f} us)"]


def h100_holdout():
    """make calibrate's H100 fit redone with every fifth kernel name held out (its run)."""
    out = os.path.join(tempfile.mkdtemp(prefix="wattlas-readme-"), "h100.ini")
    return w("calibrate --gpu h100-sxm-80gb --fit gpu ../shared/data/measurements/"
             f"h100-sxm-80gb-kernels.csv --traces ../shared/data/traces --holdout every:5 -o {out}")


def calibrate_figures(err, what):
    """(rows, time, power, energy) of calibrate's WHAT line ("in-sample after", "held-out")."""
    m = re.search(what + r"\s+\((\d+) rows\): MAPE time ([0-9.]+)%\s+power ([0-9.]+)%\s+"
                  r"energy ([0-9.]+)%", err)
    if not m:
        raise AssertionError(f"no {what} line in:\n{err[-3000:]}")
    return m.groups()


def make_calibrate_h200():
    """make calibrate's H200 fit, redone into a temporary preset: (in-sample, held-out)."""
    d = tempfile.mkdtemp(prefix="wattlas-readme-")
    src = os.path.join(d, "h200-transfer.ini")
    with open(os.path.join(ROOT, "presets/gpus/h200-sxm-141gb.ini"), encoding="utf-8") as f:
        spec = f.read().split("[calibration]")[0]
    with open(src, "w", encoding="utf-8") as f:
        f.write(spec + "[calibration]\ntransfer_from = presets/gpus/h100-sxm-80gb.ini\n")
    c = w(f"calibrate --gpu {src} --fit board ../shared/data/measurements/h200-sxm-141gb-kernels.csv "
          "--traces ../shared/data/traces --idle ../shared/data/gpu-tables/h200-sxm-141gb-idle.csv "
          "--host ../shared/data/hosts/h200-vm-host.ini --holdout every:5 "
          f"-o {os.path.join(d, 'h200.ini')} --quiet")
    return calibrate_figures(c.err, "in-sample after"), calibrate_figures(c.err, "held-out")


@claim(data=True)
def accuracy_h200():
    """the accuracy table: the H200 kernel database as make calibrate fits it, and whole models"""
    (n, t, pw, e), (hn, ht, hp, he) = make_calibrate_h200()
    d = tempfile.mkdtemp(prefix="wattlas-readme-")
    ini = os.path.join(d, "h200.ini")
    c = w("calibrate --gpu h200-sxm-141gb ../shared/data/measurements/h200-sxm-141gb-kernels.csv "
          f"--traces ../shared/data/traces -o {ini}")
    cn, ct, cp, ce = calibrate_figures(c.err, "in-sample after")
    v = w(f"validate --gpu {ini} ../shared/data/measurements/h200-sxm-141gb-models.csv --no-lomo "
          "--host ../shared/data/hosts/h200-vm-host.ini")
    u = w("validate ../shared/data/measurements/h200-sxm-141gb-models.csv --no-lomo "
          "--host ../shared/data/hosts/h200-vm-host.ini")
    s = w("validate ../shared/data/measurements/h200-sxm-141gb-models.csv --no-lomo")
    nf = "not fitted on"
    return [f"| H200 kernel database, the shipped fit (`make calibrate`: `--fit board`, the "
            f"H100's latency kept, memory and power fitted to {n} rows) | in-sample | {t} | {pw} "
            f"| {e} | |",
            f"| the same fit: every fifth kernel name held out ({hn} rows) | held-out | {ht} | {hp} "
            f"| {he} | |",
            f"| H200 kernel database, all {cn} rows, `calibrate --gpu h200-sxm-141gb` (a board "
            f"fit from the shipped preset) | in-sample | {ct} | {cp} | {ce} | |",
            row_of("H200 whole models, 16 rows (GPT-2 and Qwen2-1.5B prefill b4 s1024 and AdamW "
                   "steps b4 s512, 510-1980 MHz), on that calibration, the H200's host", nf, v.err),
            row_of("the same rows on the shipped preset, the H200's host (its forward's cost "
                   "only: the file states no training cost)", nf, u.err),
            row_of("the same rows on the shipped preset as it comes: its host class "
                   "(`server-2023`, whose training step costs 1.18x a forward's kernel)", nf,
                   s.err)]


def public_rows(script, raw, *args):
    """A public/zeus-perseus file as make calibrate reshapes it (scripts/SCRIPT): a temporary CSV."""
    out = os.path.join(tempfile.mkdtemp(prefix="wattlas-readme-"), "rows.csv")
    with open(out, "w", encoding="utf-8") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script),
                        os.path.join(DATA, "public/zeus-perseus", raw), *args],
                       stdout=f, check=True)
    return out


def perseus_rows(board, source="a100-sxm-80gb"):
    """Perseus's stage-0 rows of SOURCE's boards as make calibrate reshapes them, for BOARD."""
    return public_rows("perseus_stage_rows.py", "perseus-sosp24-stage-profile-per-clock-raw.csv",
                       source, board)


def perseus_table_rows(board, source, label):
    """A board's accuracy rows on Perseus's stage profiles: GPT-3 175B
    (fitted) and BLOOM 176B (held out), with their regrets."""
    rows = perseus_rows(board, source=source)
    out = []
    for model, text, kind in (("gpt3-175b", label, "in-sample"),
                              ("bloom-176b", "the same fit: BLOOM 176B's stage 0, held out",
                               "held-out")):
        sub = subset(rows, lambda l, m=model: f",{m}," in l, f"perseus-{source}-{model}.csv")
        v = w(f"validate {sub} --no-lomo")
        out.append(row_of(text, kind, v.err) + f" {regret(v.err)[0]} |")
    return out


@claim(data=True)
def accuracy_a100_500w():
    """the accuracy table: the A100 SXM of the 500 W class on Perseus's stage profiles"""
    return perseus_table_rows(
        "a100-sxm-80gb-500w", "a100-sxm-80gb",
        "A100 SXM4 80GB, 500 W class (`a100-sxm-80gb-500w`): Perseus's GPT-3 175B stage 0, "
        "forward and backward at 38 clocks, 855-1410 MHz (time relative), fitted few-shot by "
        "`make calibrate`")


@claim(data=True)
def accuracy_a40():
    """the accuracy table: the A40 on Perseus's stage profiles"""
    return perseus_table_rows(
        "a40-48gb", "a40",
        "A40 (`a40-48gb`): Perseus's GPT-3 175B stage 0, forward and backward at 60 clocks, "
        "855-1740 MHz (time relative), the board's power fitted by `make calibrate`")


PERSEUS_LAYER = ("predict --gpu {gpu} --model gpt3-175b --scope layer --mode train --optimizer none "
                 "--impl fused --batch 1 --seq 2048 --clock 855:1410:15 --format csv")


def perseus_measured(model="gpt3-175b"):
    """Perseus's A100 SXM stage 0 (forward + backward): t855/t1410 and the least-energy clock."""
    t, e = {}, {}
    with open(os.path.join(DATA, "public/zeus-perseus/perseus-sosp24-stage-profile-per-clock-raw.csv"),
              encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["gpu"] == "a100-sxm-80gb" and r["model"] == model and r["stage"] == "0":
                k = int(r["frequency_mhz"])
                t[k] = t.get(k, 0) + float(r["time_s"])
                e[k] = e.get(k, 0) + float(r["energy_j"])
    return t[855] / t[1410], min(e, key=e.get)


def perseus_predicted(gpu):
    rows = w(PERSEUS_LAYER.format(gpu=gpu)).rows
    t = {float(r["sm_clock_mhz"]): float(r["time_ms"]) for r in rows}
    e = {float(r["sm_clock_mhz"]): float(r["energy_j"]) for r in rows}
    return t[855] / t[1410], min(e, key=e.get)


@claim(data=True)
def perseus_layer():
    """a GPT-3 175B layer's forward and backward against Perseus's A100 SXM stage profiles"""
    rm, bm = perseus_measured()
    r5, b5 = perseus_predicted("a100-sxm-80gb-500w")
    r4, b4 = perseus_predicted("a100-sxm-80gb")
    return [f"t855/t1410 {r5:.3f} and the least energy at {b5:.0f} MHz, where the profiles "
            f"measure {rm:.3f} and {bm} MHz; on the 400 W preset, {r4:.3f} and {b4:.0f} MHz"]


def zeus_rows():
    """Zeus's sweep as make calibrate reshapes it."""
    return public_rows("zeus_power_limit_rows.py", "zeus-a100-pcie-80gb-pp4-power-limit.csv")


@claim(data=True)
def accuracy_a100_80gb():
    """the accuracy table: the A100 PCIe 80GB on Zeus's power-limit sweep"""
    rows = zeus_rows()
    bloom = subset(rows, lambda l: ",bloom-3b," in l, "zeus-bloom.csv")
    gpt3 = subset(rows, lambda l: ",gpt3-1.3b," in l, "zeus-gpt3.csv")
    b = w(f"validate {bloom} --no-lomo")
    g = w(f"validate {gpt3} --no-lomo")
    bw, _ = regret(b.err)
    gw, _ = regret(g.err)
    return [row_of("A100 PCIe 80GB (`a100-pcie-80gb`): Zeus's power-limit sweep of pipeline "
                   "training on four (pp 4), BLOOM 3B at 175-300 W (time relative), fitted "
                   "few-shot by `make calibrate`", "in-sample", b.err) + f" {bw} |",
            row_of("the same fit: GPT-3 XL's six limits, held out", "held-out", g.err)
            + f" {gw} |"]


ZEUS = ("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 --micro-batch 8 "
        "--global-batch 1024 --seq 1024 --power-limit-w 175:300:25 --format csv")


def zeus_measured(model="gpt3-xl"):
    """Zeus's 4 x A100 PCIe 80GB sweep: t(175 W)/t(300 W) and the least-energy limit."""
    t, e = {}, {}
    with open(os.path.join(DATA, "public/zeus-perseus/zeus-a100-pcie-80gb-pp4-power-limit.csv"),
              encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["model_name"] == model:
                w_ = int(float(r["power_limit_w"]))
                t[w_], e[w_] = float(r["time_s"]), float(r["energy_j"])
    return t[175] / t[300], min(e, key=e.get)


def zeus_predicted():
    rows = w(ZEUS).rows
    t = {int(float(r["power_limit_w"])): float(r["time_s"]) for r in rows}
    e = {int(float(r["power_limit_w"])): float(r["energy_gpu_j"]) for r in rows}
    return t[175] / t[300], min(e, key=e.get)


@claim(data=True)
def zeus_power_caps():
    """Zeus's power-limit sweep of GPT-3 XL on four A100 PCIe 80GB, held out of the fit"""
    rm, bm = zeus_measured()
    rp, bp = zeus_predicted()
    return [f"t(175 W)/t(300 W) is {rp:.3f} against the measured {rm:.3f} "
            f"({(rp / rm - 1) * 100:+.1f}%), and the least GPU energy at {bp} W against "
            f"{bm} W"]


@claim(data=True)
def accuracy_h100_board2():
    """the accuracy table: the second H100 board (data/h100-vm-2026-11)"""
    d = "data/h100-vm-2026-11"
    k = w(f"validate {d}/measurements/h100-sxm-80gb-kernels.csv "
          f"--traces {d}/traces,../shared/data/traces --no-lomo")
    m = w(f"validate {d}/measurements/h100-sxm-80gb-models.csv --no-lomo --host {d}/h100-vm.ini")
    p = w(f"validate {d}/measurements/h100-sxm-80gb-models.csv --no-lomo")
    v = w(f"validate {d}/measurements/h100-sxm-80gb-dvfs.csv --no-lomo --host {d}/h100-vm.ini")
    mw, _ = regret(m.err)
    pw, _ = regret(p.err)
    vw, vm = regret(v.err)
    nf = "not fitted on"
    return [row_of("H100 board 2 (`data/h100-vm-2026-11`, this repository): 44 kernel rows "
                   "(22 bf16 kernels x 1980, 1200 MHz)", nf, k.err),
            row_of("the same board: 41 whole-model rows (HF prefill, AdamW steps, `generate`, a "
                   "power-limit sweep; gpt2, qwen2-1.5b, llama-3-8b), its host measured "
                   "(`--host data/h100-vm-2026-11/h100-vm.ini`)", nf, m.err) + f" {mw} |",
            row_of("the same rows with the preset's host (`server-2023`)", nf, p.err) + f" {pw} |",
            row_of("the same board: 3 whole models x 8 clocks, 600-1980 MHz (Llama-3-8B prefill, "
                   "Qwen2-1.5B AdamW step, GPT-2 prefill; SDPA), its host measured", nf, v.err)
            + f" {vw} (mean {vm}) |"]


def coverage(err):
    m = re.search(r"intervals cover the measurement: time ([0-9.]+)%, power ([0-9.]+)%, "
                  r"energy ([0-9.]+)%", err)
    if not m:
        raise AssertionError(f"no coverage line in:\n{err[-3000:]}")
    return m.groups()


@claim()
def board_spread_coverage():
    """Boards differ: interval coverage on the two boards of this repository"""
    out = []
    for path in ("data/h100-vm-2026-11/measurements/h100-sxm-80gb-models.csv",
                 "data/h200-vm-2026-11/measurements/h200-sxm-141gb-models.csv"):
        t, p, e = coverage(w(f"validate {path} --no-lomo --interval 95").err)
        t0, p0, e0 = coverage(w(f"validate {path} --no-lomo --interval 95 --board same").err)
        out.append(f"{t}% of rows for time, {p}% for power and {e}% for energy "
                   f"({t0}/{p0}/{e0}% without")
    return out


@claim(data=True)
def energaizer_h100_coverage():
    """Boards differ: EnergAIzer's H100 board, its intervals and errors"""
    path = "../shared/data/public/energaizer/h100-sxm-80gb-1830mhz.csv"
    e = w(f"validate {path} --no-lomo --interval 95").err
    t, p, en = coverage(e)
    t0, p0, e0 = coverage(w(f"validate {path} --no-lomo --interval 95 --board same").err)
    m = mape(e)
    return [f"{t}% of rows for time, {p}% for power and {en}% for energy ({t0}/{p0}/{e0}% without",
            f"at {m[0]}/{m[1]}/{m[2]}% MAPE (time/power/energy)"]


@claim(data=True)
def quick_board_b():
    """measure quick: the board preset from board B's quick set, on its whole models"""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from wattlas import measure_quick
    want = set(measure_quick.QUICK_KERNELS)
    d = "data/h200-vm-2026-11"
    t = tempfile.mkdtemp(prefix="wattlas-readme-")
    kcsv = os.path.join(t, "h200-sxm-141gb-kernels.csv")
    with open(f"{d}/measurements/h200-sxm-141gb-kernels.csv", encoding="utf-8") as fi, \
            open(kcsv, "w", encoding="utf-8") as fo:
        lines = fi.readlines()
        fo.write(lines[0])
        fo.writelines(l for l in lines[1:] if tuple(l.split(",")[i] for i in (1, 4)) in want)
    ini = os.path.join(t, "board.ini")
    w(f"calibrate --gpu h200-sxm-141gb {kcsv} --traces {d}/traces,../shared/data/traces "
      f"--idle {d}/gpu-tables/h200-sxm-141gb-idle.csv --host {d}/h200-vm-b.ini --fit auto "
      f"-o {ini} --quiet")
    m = mape(w(f"validate {d}/measurements/h200-sxm-141gb-models.csv --gpu {ini} --no-lomo").err)
    p = mape(w(f"validate {d}/measurements/h200-sxm-141gb-models.csv --no-lomo").err)
    return [f"whole-model rows at {m[0]}/{m[1]}/{m[2]}% (time/power/energy) against "
            f"{p[0]}/{p[1]}/{p[2]}% on the product's preset"]


@claim(data=True)
def accuracy_h200_board_b():
    """the accuracy table: this repository's H200 (data/h200-vm-2026-11)"""
    d = "data/h200-vm-2026-11"
    t = tempfile.mkdtemp(prefix="wattlas-readme-")
    ini = os.path.join(t, "h200.ini")
    w("calibrate --gpu h200-sxm-141gb ../shared/data/measurements/h200-sxm-141gb-kernels.csv "
      f"--traces ../shared/data/traces -o {ini}")
    m = w(f"validate {d}/measurements/h200-sxm-141gb-models.csv --gpu {ini} --no-lomo")
    p = w(f"validate {d}/measurements/h200-sxm-141gb-models.csv --no-lomo")
    h = w(f"validate {d}/measurements/h200-sxm-141gb-models.csv --gpu {ini} --no-lomo "
          f"--host {d}/h200-vm-b.ini")
    k = w(f"validate {d}/measurements/h200-sxm-141gb-kernels.csv --gpu {ini} "
          f"--traces {d}/traces,../shared/data/traces --no-lomo")
    mw, mm = regret(m.err)
    nf = "not fitted on"
    return [row_of("H200 board B (`data/h200-vm-2026-11`, this repository): 24 whole-model rows "
                   "(GPT-2 and Qwen2-1.5B prefill and AdamW steps b4 s512 at 510-1980 MHz, and "
                   "under 500 and 400 W limits), on the H200 calibration above, the preset's "
                   "host", nf, m.err) + f" {mw} (mean {mm}) |",
            row_of("the same rows on the preset", nf, p.err),
            row_of("the same rows with the board's measured host (`--host "
                   "data/h200-vm-2026-11/h200-vm-b.ini`)", nf, h.err),
            row_of("the same board: 31 kernel rows (15 bf16 kernels x 1980, 990 MHz), on the "
                   "H200 calibration", nf, k.err)]


@claim()
def accuracy_h200_power_limits():
    """the accuracy table: this repository's H200 power-limit curve (data/h200-vm-2026-11-27)"""
    d = "data/h200-vm-2026-11-27/measurements"
    pl = w(f"validate {d}/h200-sxm-141gb-power-limits.csv --no-lomo")
    ck = w(f"validate {d}/h200-sxm-141gb-clocks.csv --no-lomo")
    pw, _ = regret(pl.err)
    cw, cm = regret(ck.err)
    nf = "not fitted on"
    return [row_of("H200 board C (`data/h200-vm-2026-11-27`, this repository): 12 AdamW steps "
                   "(Llama-3-8B and Qwen2-1.5B b4 s512, SDPA) under 700, 500, 400, 300, 250 and "
                   "200 W, on the preset", nf, pl.err) + f" {pw} |",
            row_of("the same steps at five locked clocks, 600-1980 MHz, on the preset", nf, ck.err)
            + f" {cw} (mean {cm}) |"]


def section_commands(start, end):
    """The commands of the README's code blocks between the headings start
    and end, as written: continuation lines joined, trailing comments off."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    body = text[text.index(start):text.index(end, text.index(start))]
    cmds, cur = [], ""
    for line in body.splitlines():
        if not line.startswith("    ") or not line.strip():
            cur = ""
            continue
        part = re.sub(r"\s+# .*$", "", line.strip())
        cont = part.endswith("\\")
        cur += " " + part.rstrip("\\").strip()
        if not cont:
            cmds.append(cur.strip())
            cur = ""
    return cmds


def have_nvml():
    import ctypes
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


class Readme(unittest.TestCase):
    def test_measurement_commands(self):
        """The measurement section's commands run as written up to the
        machine's limits: without a GPU the harness stops with its one-line
        NVML error (exit 1), so every option it was given parsed; the
        wattlas commands that read its output stop at the missing file
        (exit 1), never at an option (exit 2)."""
        if have_nvml():
            self.skipTest("this machine has NVML: the harness would measure")
        cmds = section_commands("### Measuring a GPU", "### calibrate")
        env = dict(os.environ)
        ran = 0
        with tempfile.TemporaryDirectory() as d:
            for cmd in cmds:
                if cmd.startswith("export PYTHONPATH=python"):
                    env["PYTHONPATH"] = os.path.join(ROOT, "python")
                    continue
                argv = shlex.split(cmd)
                if argv[0] == "bin/wattlas":
                    argv[0] = WATTLAS
                elif argv[:3] == ["python3", "-m", "wattlas.measure"]:
                    argv[0] = sys.executable
                    self.assertIn("PYTHONPATH", env, "the README sets PYTHONPATH first")
                else:
                    self.fail(f"not a command of the section: {cmd}")
                p = subprocess.run(argv, cwd=d, env=env, capture_output=True, text=True,
                                   timeout=120)
                ran += 1
                self.assertEqual(p.returncode, 1, f"{cmd}\n{p.stderr}")
                err = p.stderr.strip()
                if argv[0] == sys.executable:
                    self.assertEqual(len(err.splitlines()), 1, f"{cmd}\n{err}")
                    self.assertIn("NVML", err, cmd)
                else:
                    self.assertRegex(err, r"mydata|my-", cmd)
        self.assertGreaterEqual(ran, 10)


def _make(fn, slow, data):
    def test(self):
        if slow and not SLOW:
            self.skipTest("slow: make readme-check runs it")
        if data and not os.path.isdir(MEAS):
            self.skipTest(f"no {MEAS}")
        text = readme_text()
        missing = [s for s in fn() if " ".join(s.split()) not in text]
        if missing:
            self.fail(f"{fn.__doc__}: the README should say\n  " + "\n  ".join(missing))
    test.__doc__ = fn.__doc__
    return test


for _fn, _slow, _data in CLAIMS:
    setattr(Readme, "test_" + _fn.__name__, _make(_fn, _slow, _data))


if __name__ == "__main__":
    if "--print" in sys.argv:
        for fn, slow, data in CLAIMS:
            if data and not os.path.isdir(MEAS):
                continue
            print(f"# {fn.__doc__}")
            for s in fn():
                print("  " + s)
        sys.exit(0)
    if "--all" in sys.argv:
        sys.argv.remove("--all")
        SLOW = True
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pyunit
    sys.exit(pyunit.main())
