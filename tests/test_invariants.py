"""The property layer: invariants where features meet, over generated cases.

Each feature of wattlas has tests of its own; this file checks what must
hold wherever they meet, on cases drawn at random from every GPU preset
(measured, transferred, hypothetical, and --set variants), every workload
source (builders in prefill, train and decode, eager and graphs; kernel
traces; PyTorch profiles; learned models), clocks, power limits, voltage
offsets and precisions, thread counts and the order of lists, through each
entry point (the command line, Python, report, shards and merge, compare,
optimize and pareto). It asserts:

- caps: a lower power limit is never faster, and power stays within the
  limit unless the lowest clock already draws more;
- clocks: time never rises with the clock while the clock is not held;
- row independence: a sweep row is byte-identical to its own predict,
  whatever else is in the lists, in whatever order, on any thread count,
  in shards merged back, and from Python;
- provenance: every derived column (optimize's chosen, fastest and max-clock
  columns and savings, pareto's front, compare's columns, a report's
  savings.csv and index.md) equals the row it names;
- bookkeeping: energy = power x time; energy parts, training phases and
  decode phases sum to their totals, memory parts to no more than the
  total; per-token columns are totals over tokens;
- flags: throttled holds exactly when the effective clock shows the clock
  held below the request; fits agrees with memory_gb and the capacity;
- preset sanity: each GPU's 8192^3 GEMM at its top clock, without a limit,
  reaches 0.6-0.95 of its dense peak at that clock, a streaming add
  0.6-0.95 of its DRAM bandwidth.

The seed changes every run and is printed; a failure names its case and
replays with WATTLAS_SEED=S (make invariants N=... SEED=S). make check runs
WATTLAS_INVARIANT_CASES cases (default 60, about 15 s on 2 cores).
"""

import csv
import glob
import io
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyunit  # noqa: E402

WATTLAS = os.environ.get("WATTLAS_BIN", "bin/wattlas")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.environ.get("WATTLAS_SHARED") or os.path.join(ROOT, "..", "shared"),
                      "data")
SEED = int(os.environ.get("WATTLAS_SEED") or (time.time_ns() // 1000) % 2**31)
CASES = int(os.environ.get("WATTLAS_INVARIANT_CASES") or 60)

try:
    import wattlas
    if isinstance(wattlas._wattlas, wattlas._Missing):  # the extension is not built
        wattlas = None
except ImportError:
    wattlas = None


def cli(*args, check=True):
    p = subprocess.run([WATTLAS, *[str(a) for a in args]], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("wattlas %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode,
                                                           p.stderr.strip()[-600:]))
    return p


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


def num(r, k):
    v = r.get(k, "")
    return float(v) if v not in ("", None) else math.nan


def csv_lines(text):
    """A CSV's header and its data lines."""
    lines = text.splitlines()
    return lines[0], lines[1:]


class Gpus:
    """The GPU presets and what the cases need of them."""

    def __init__(self):
        self.g = {}
        for r in rows_of(cli("presets", "list", "--format", "csv").stdout):
            if r["kind"] != "gpu":
                continue
            show = cli("presets", "show", r["id"]).stdout
            pmin = 0.0
            for line in show.splitlines():
                if line.startswith("power_limit_min_w"):
                    pmin = float(line.split("=")[1].split(";")[0])
                    break
            self.g[r["id"]] = dict(fmin=float(r["sm_clock_min_mhz"]),
                                   fmax=float(r["sm_clock_max_mhz"]),
                                   limit=float(r["power_limit_w"]), limit_min=pmin,
                                   mem=num(r, "mem_capacity_gb"), dram=float(r["dram_bw_gbs"]),
                                   show=show)


_GPUS = None


def gpus():
    global _GPUS
    if _GPUS is None:
        _GPUS = Gpus()
    return _GPUS.g


# ---- cases ----------------------------------------------------------------

LM = ["gpt2", "gpt3-125m", "opt-1.3b", "bert-large", "qwen2-1.5b", "llama-3-8b", "gpt3-1.3b"]
VISION = ["vit-large", "resnet-101"]


def sources():
    """What a case's workload may come from, by kind."""
    s = {"builder": True}
    traces = sorted(glob.glob(os.path.join(SHARED, "traces", "*_prefill.json")))
    traces += sorted(glob.glob(os.path.join(ROOT, "data", "h100-vm-2026-11", "traces", "*.json")))
    s["trace"] = [t for t in traces if os.path.getsize(t) < 400000]
    # the repository's own profiles (CI has them without ../shared)
    s["profile"] = sorted(p for p in glob.glob(os.path.join(ROOT, "data", "*", "profiles",
                                                            "*.json.gz"))
                          if os.path.getsize(p) < 300000)
    return s


def draw_case(rng, srcs, learned):
    g = gpus()
    gid = rng.choice(sorted(g))
    info = g[gid]
    c = {"gpu": gid, "args": [], "set": {}}
    kind = rng.choice(["builder"] * 5 + ["trace"] * (1 if srcs["trace"] else 0) +
                      ["profile"] * (2 if srcs["profile"] else 0) +
                      ["learned"] * (1 if learned else 0))
    c["kind"] = kind
    if kind in ("builder", "learned"):
        model = rng.choice(LM + VISION) if kind == "builder" else rng.choice(["gpt2", "opt-1.3b"])
        args = ["--model", model]
        mode = "prefill"
        if model not in VISION:
            # an encoder (BERT) does not generate
            mode = rng.choice(["prefill", "prefill", "train"] +
                              ([] if model == "bert-large" else ["decode"]))
            args += ["--seq", rng.choice([128, 256, 512])]
        args += ["--batch", rng.choice([1, 2, 4])]
        args += ["--mode", mode]
        if mode == "decode":
            args += ["--gen", rng.choice([4, 8, 16]), "--launch", rng.choice(["eager", "graphs"])]
        big = model in ("llama-3-8b", "qwen2-1.5b", "opt-1.3b", "gpt3-1.3b")
        if big and rng.random() < 0.6:
            args += ["--scope", "layer"]
        if kind == "builder" and "v100" not in gid and rng.random() < 0.25:
            args += ["--dtype", rng.choice(["fp16", "fp32"])]
        elif "v100" in gid:
            args += ["--dtype", "fp16"]  # no bf16 math on a V100
        if kind == "learned":
            args += ["--learned", learned]
        c["args"] = args
        c["mode"] = mode
        c["model"] = model
    elif kind == "trace":
        c["args"] = ["--trace", rng.choice(srcs["trace"])]
        c["mode"] = "prefill"
        if "v100" in gid:
            c["gpu"] = gid = rng.choice([x for x in sorted(g) if "v100" not in x])
            info = g[gid]
    else:
        p = rng.choice(srcs["profile"])
        c["args"] = ["--trace", p]
        if rng.random() < 0.3:
            c["args"] += ["--profile-power-limit-w", rng.choice([info["limit"], 500, 600])]
        c["mode"] = "prefill"
        # the repository's profiles were taken on an H200: on another GPU
        # they are anchored there (--profile-gpu), on an H200 either way
        if "v100" in gid:  # no bf16 math
            c["gpu"] = gid = rng.choice([x for x in sorted(g) if "v100" not in x])
            info = g[gid]
        if gid != "h200-sxm-141gb" or rng.random() < 0.5:
            c["args"] += ["--profile-gpu", "h200-sxm-141gb"]
    # a --set variant now and then: more SMs or DRAM bandwidth
    if rng.random() < 0.2:
        c["set"]["dram_bw_gbs"] = [round(info["dram"] * rng.choice([0.8, 1.25]))]
    step = 15
    lo, hi = info["fmin"], info["fmax"]
    nclk = rng.randint(3, 6)
    clocks = sorted({min(hi, max(lo, round(rng.uniform(lo, hi) / step) * step))
                     for _ in range(nclk)} | {hi})
    c["clocks"] = clocks
    pmin = max(info["limit_min"], info["limit"] * 0.3)
    caps = sorted({info["limit"]} | {round(rng.uniform(pmin, info["limit"]) / 5) * 5
                                     for _ in range(rng.randint(1, 3))})
    c["caps"] = [x for x in caps if x >= info["limit_min"]]
    c["voff"] = rng.choice([[0], [0], [0], [-50, 0], [-30, 0, 20]])
    c["threads"] = rng.choice([1, 2, 4])
    return c


def axis(vals):
    return ",".join("%g" % v for v in vals)


def sweep_args(c, clocks=None, caps=None, voff=None, extra_set=None):
    a = ["--gpu", c["gpu"], *c["args"], "--clock", axis(clocks or c["clocks"]),
         "--voltage-offset-mv", axis(voff or c["voff"]),
         "--set", "power_limit_w=" + axis(caps or c["caps"])]
    for k, v in c["set"].items():
        a += ["--set", "%s=%s" % (k, axis(v))]
    return a


def describe(c):
    return "case %s on %s: %s clocks %s caps %s offsets %s threads %d" % (
        c["kind"], c["gpu"], " ".join(map(str, c["args"])), c["clocks"], c["caps"], c["voff"],
        c["threads"])


# ---- the checks ---------------------------------------------------------------

PARAM_END = "sm_clock_mhz"


def key_cols(header):
    cols = header.split(",")
    return cols[:cols.index(PARAM_END)]


def check_row_flags(t, rows, gpu, c):
    for r in rows:
        if r.get("feasible") != "1":
            continue
        req, eff = num(r, "sm_clock_mhz"), num(r, "effective_clock_mhz")
        thr = r["throttled"] == "1"
        t.assertEqual(thr, eff < req, "throttled=%s with the effective clock %s of %s: %s"
                      % (r["throttled"], r["effective_clock_mhz"], r["sm_clock_mhz"], describe(c)))
        e, p, tm = num(r, "energy_j"), num(r, "power_w"), num(r, "time_ms")
        # energy = power x time, to the digits printed (power 3, time 5)
        t.assertLessEqual(abs(e - p * tm * 1e-3),
                          1e-6 + e * (6e-4 / max(p, 1e-9) + 6e-6 / max(tm, 1e-9)) + 1e-6,
                          "energy %s != power %s x time %s: %s" % (r["energy_j"], r["power_w"],
                                                                    r["time_ms"], describe(c)))
        parts = num(r, "energy_dyn_compute_j") + num(r, "energy_dyn_memory_j") + \
            num(r, "energy_static_j")
        t.assertLessEqual(abs(parts - e), 2e-6 + 1e-6 * e, "energy parts %g != %g: %s"
                          % (parts, e, describe(c)))
        mode = r.get("mode", "")
        if mode == "train" and r.get("time_fwd_ms"):
            ts = sum(num(r, k) for k in ("time_fwd_ms", "time_bwd_ms", "time_opt_ms"))
            es = sum(num(r, k) for k in ("energy_fwd_j", "energy_bwd_j", "energy_opt_j"))
            t.assertLessEqual(abs(ts - tm), 2e-5 + 1e-6 * tm, "phase times %g != %g: %s"
                              % (ts, tm, describe(c)))
            t.assertLessEqual(abs(es - e), 3e-6 + 1e-6 * e, "phase energies %g != %g: %s"
                              % (es, e, describe(c)))
            mem = sum(num(r, k) for k in ("weights_gb", "master_gb", "grads_gb", "optimizer_gb",
                                          "activations_gb"))
            t.assertLessEqual(mem, num(r, "memory_gb") + 5e-3, describe(c))
        if mode == "decode" and r.get("ttft_ms"):
            gen = None
            args = c["args"]
            gen = int(args[args.index("--gen") + 1])
            batch = int(args[args.index("--batch") + 1])
            tt = num(r, "ttft_ms") + (gen - 1) * num(r, "tpot_ms")
            t.assertLessEqual(abs(tt - tm), 1e-4 + 1e-5 * gen * tm, "ttft + (gen-1) tpot %g != %g: %s"
                              % (tt, tm, describe(c)))
            es = num(r, "energy_prefill_j") + num(r, "energy_decode_j")
            t.assertLessEqual(abs(es - e), 3e-6 + 1e-6 * e, describe(c))
            ept = num(r, "energy_per_token_j")
            t.assertLessEqual(abs(ept * batch * gen - e), 1e-6 * batch * gen + 1e-6 * e,
                              "energy_per_token_j %s x %d tokens != %s: %s"
                              % (r["energy_per_token_j"], batch * gen, r["energy_j"], describe(c)))
        elif mode == "prefill" and r.get("energy_per_token_j") and r.get("seq"):
            tokens = int(r["batch"]) * int(r["seq"])
            ept = num(r, "energy_per_token_j")
            t.assertLessEqual(abs(ept * tokens - e), 1e-6 * tokens + 1e-6 * e, describe(c))
        # fits: the footprint against the capacity (both as printed)
        if r.get("fits") in ("0", "1") and not math.isnan(gpu["mem"]):
            mem = num(r, "memory_gb")
            if abs(mem - gpu["mem"]) > 0.01:
                t.assertEqual(r["fits"] == "1", mem <= gpu["mem"], "fits=%s with %s GB of %s: %s"
                              % (r["fits"], r["memory_gb"], gpu["mem"], describe(c)))


def check_caps_and_clocks(t, rows, c):
    """A lower cap is never faster and holds power; a higher clock is never
    slower while nothing holds the clock."""
    gpu = gpus()[c["gpu"]]
    by_cap, by_clock = {}, {}
    for r in rows:
        if r.get("feasible") != "1":
            continue
        k_cap = tuple((k, v) for k, v in r.items() if k not in ("power_limit_w",) and
                      k in key_cols(",".join(r.keys())) + ["sm_clock_mhz"])
        by_cap.setdefault(k_cap, []).append(r)
        k_clk = tuple((k, v) for k, v in r.items() if k in key_cols(",".join(r.keys())))
        by_clock.setdefault(k_clk, []).append(r)
        cap = num(r, "power_limit_w")
        at_floor = num(r, "effective_clock_mhz") <= gpu["fmin"] + 0.05
        t.assertTrue(num(r, "power_w") <= cap * 1.0005 + 1e-3 or at_floor,
                     "%s W under a %s W limit at %s MHz: %s" % (r["power_w"], r["power_limit_w"],
                                                               r["sm_clock_mhz"], describe(c)))
    for group in by_cap.values():
        group.sort(key=lambda r: num(r, "power_limit_w"))
        # within the governor's solve (power to 1e-4 of the cap): a few
        # parts per million of time
        for lo, hi in zip(group, group[1:]):
            t.assertGreaterEqual(num(lo, "time_ms"), num(hi, "time_ms") * (1 - 1e-5) - 1e-5,
                                 "%s ms under %s W but %s ms under %s W at %s MHz: %s"
                                 % (lo["time_ms"], lo["power_limit_w"], hi["time_ms"],
                                    hi["power_limit_w"], lo["sm_clock_mhz"], describe(c)))
    for group in by_clock.values():
        free = sorted((r for r in group if r["throttled"] == "0"),
                      key=lambda r: num(r, "sm_clock_mhz"))
        for lo, hi in zip(free, free[1:]):
            t.assertLessEqual(num(hi, "time_ms"), num(lo, "time_ms") * (1 + 1e-7) + 1e-5,
                              "%s ms at %s MHz but %s ms at %s MHz: %s"
                              % (lo["time_ms"], lo["sm_clock_mhz"], hi["time_ms"],
                                 hi["sm_clock_mhz"], describe(c)))


def group_key(r, cols):
    return tuple(r[k] for k in cols)


def check_optimize(t, sweep_text, c, objective, all_rows):
    """Each optimize column equals the row it names."""
    header, _ = csv_lines(sweep_text)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(sweep_text)
        path = f.name
    try:
        args = ["optimize", path, "--objective", objective, "--format", "csv"]
        if all_rows:
            args.append("--all")
        out = cli(*args).stdout
    finally:
        os.unlink(path)
    rows = rows_of(sweep_text)
    gcols = key_cols(header)  # the parameters, the voltage offset among them
    groups = {}
    for r in rows:
        ok = all_rows or (r.get("feasible") == "1" and r.get("fits") != "0")
        if ok:
            groups.setdefault(group_key(r, gcols), []).append(r)
    for o in rows_of(out):
        g = groups.get(group_key(o, gcols))
        t.assertIsNotNone(g, "optimize row %s names no group: %s" % (o, describe(c)))
        by_req = {r["sm_clock_mhz"]: r for r in g}
        chosen = by_req.get(o["sm_clock_mhz"])
        t.assertIsNotNone(chosen, describe(c))
        for k in ("time_ms", "power_w", "energy_j"):
            t.assertEqual(o[k], chosen[k], "optimize %s %s, its row %s: %s"
                          % (k, o[k], chosen[k], describe(c)))
        fast = by_req[o["fastest_sm_clock_mhz"]]
        t.assertEqual(o["fastest_time_ms"], fast["time_ms"], describe(c))
        t.assertEqual(o["fastest_energy_j"], fast["energy_j"], describe(c))
        top = max(g, key=lambda r: num(r, "sm_clock_mhz"))
        t.assertEqual(o["max_sm_clock_mhz"], top["sm_clock_mhz"], describe(c))
        t.assertEqual(o["max_effective_clock_mhz"], top["effective_clock_mhz"],
                      "max_effective_clock_mhz %s, the %s MHz row's %s: %s"
                      % (o["max_effective_clock_mhz"], top["sm_clock_mhz"],
                         top["effective_clock_mhz"], describe(c)))
        t.assertEqual(o["max_time_ms"], top["time_ms"], describe(c))
        t.assertEqual(o["max_energy_j"], top["energy_j"], describe(c))
        save = 100 * (1 - num(o, "energy_j") / num(o, "max_energy_j"))
        t.assertLessEqual(abs(save - num(o, "energy_saving_vs_max_clock_pct")), 0.006, describe(c))
        # the flat band holds the chosen energy's neighbourhood: its ends
        # are rows within 1% of the least energy
        emin = min(num(r, "energy_j") for r in g)
        for end in ("clock_within_1pct_min_mhz", "clock_within_1pct_max_mhz"):
            if o[end]:
                t.assertLessEqual(num(by_req[o[end]], "energy_j"), emin * 1.01 + 1e-9, describe(c))


def check_pareto(t, sweep_text, c):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(sweep_text)
        path = f.name
    try:
        out = cli("pareto", path, "--format", "csv").stdout
    finally:
        os.unlink(path)
    _, lines = csv_lines(sweep_text)
    have = set(lines)
    head = out.splitlines()[0].split(",")
    extra = head[-1] == "same_point_up_to_mhz"
    for line in out.splitlines()[1:]:
        row = line.rsplit(",", 1)[0] if extra else line
        t.assertIn(row, have, "a front row that is not a sweep row: %s: %s" % (row, describe(c)))


# ---- the tests -----------------------------------------------------------------


class Invariants(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        print("invariants: seed %d, %d cases (replay: WATTLAS_SEED=%d "
              "WATTLAS_INVARIANT_CASES=%d build/tests/test_invariants, or make invariants "
              "N=%d SEED=%d)" % (SEED, CASES, SEED, CASES, CASES, SEED), flush=True)
        cls.tmp = tempfile.mkdtemp(prefix="wattlas-inv-")
        cls.srcs = sources()
        cls.learned = None
        meas = os.path.join(ROOT, "data", "h100-vm-2026-11", "measurements",
                            "h100-sxm-80gb-models.csv")
        if os.path.exists(meas):
            out = os.path.join(cls.tmp, "learned.json")
            p = cli("learn", meas, "-o", out, "--hybrid", "--kind", "gbt", "--no-beside",
                    "--no-refit", "--quiet", check=False)
            if p.returncode == 0:
                cls.learned = out
        rng = random.Random(SEED)
        cls.cases = [draw_case(rng, cls.srcs, cls.learned) for _ in range(CASES)]
        cls.rng = rng

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_sweeps(self):
        """every case: its sweep's rows obey the row invariants, do not
        depend on list order or thread count, equal their own predict, and
        what optimize and pareto derive from them names its rows"""
        rng = random.Random(SEED + 1)
        for i, c in enumerate(self.cases):
            with self.subTest(case=i):
                a = sweep_args(c)
                full = cli("sweep", *a, "--threads", c["threads"], "--quiet").stdout
                header, lines = csv_lines(full)
                rows = rows_of(full)
                self.assertTrue(rows, describe(c))
                check_row_flags(self, rows, gpus()[c["gpu"]], c)
                check_caps_and_clocks(self, rows, c)
                # the same grid, lists reordered, another thread count
                clocks, caps, voff = list(c["clocks"]), list(c["caps"]), list(c["voff"])
                rng.shuffle(clocks)
                rng.shuffle(caps)
                rng.shuffle(voff)
                other = rng.choice([t for t in (1, 2, 4) if t != c["threads"]])
                again = cli("sweep", *sweep_args(c, clocks, caps, voff), "--threads", other,
                            "--quiet").stdout
                h2, l2 = csv_lines(again)
                self.assertEqual(h2, header, describe(c))
                self.assertEqual(sorted(l2), sorted(lines),
                                 "rows depend on list order or threads (%d vs %d): %s"
                                 % (c["threads"], other, describe(c)))
                # a row is its own predict, alone
                for r_line in rng.sample(lines, min(2, len(lines))):
                    r = dict(zip(header.split(","), next(csv.reader([r_line]))))
                    p = cli("predict", *sweep_args(c, [float(r["sm_clock_mhz"])],
                                                   [float(r["power_limit_w"])],
                                                   [float(r["voltage_offset_mv"])]),
                            "--format", "csv", "--quiet").stdout
                    ph, pl = csv_lines(p)
                    self.assertEqual(ph, header, describe(c))
                    self.assertEqual(pl, [r_line], "predict differs from its sweep row: %s"
                                     % describe(c))
                objective = rng.choice(["energy", "edp", "energy-within-slowdown=10"])
                check_optimize(self, full, c, objective, False)
                check_optimize(self, full, c, objective, True)
                check_pareto(self, full, c)

    def test_shards_and_python(self):
        """a sharded sweep merged back, and Python's sweep, are the command
        line's sweep byte for byte"""
        rng = random.Random(SEED + 2)
        for i, c in enumerate(rng.sample(self.cases, min(4, len(self.cases)))):
            with self.subTest(case=i):
                full = cli("sweep", *sweep_args(c), "--threads", c["threads"], "--quiet").stdout
                n = rng.choice([2, 3])
                parts = []
                for k in range(1, n + 1):
                    path = os.path.join(self.tmp, "s%d.csv" % k)
                    cli("sweep", *sweep_args(c), "--shard", "%d/%d" % (k, n), "-o", path,
                        "--quiet")
                    parts.append(path)
                merged = os.path.join(self.tmp, "merged.csv")
                cli("merge", *parts, "-o", merged)
                with open(merged) as f:
                    self.assertEqual(f.read(), full, "merged shards differ: %s" % describe(c))
                mpi = os.path.join(ROOT, "bin", "wattlas-mpi")
                if os.access(mpi, os.X_OK) and shutil.which("mpirun"):
                    p = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                        "2", mpi, "sweep", *map(str, sweep_args(c)), "--quiet"],
                                       capture_output=True, text=True)
                    self.assertEqual(p.returncode, 0, p.stderr[-500:])
                    self.assertEqual(p.stdout, full, "the MPI sweep differs: %s" % describe(c))
                if wattlas is None:
                    continue
                kw = python_kw(c)
                self.assertEqual(wattlas.sweep(**kw, fmt="csv", threads=c["threads"]), full,
                                 "Python's sweep differs: %s" % describe(c))
                # predict, optimize and pareto from Python: the command line's text
                one = dict(kw, clock="%g" % c["clocks"][-1])
                self.assertEqual(wattlas.predict(**one, fmt="csv"),
                                 cli("predict", *sweep_args(c, [c["clocks"][-1]]), "--format",
                                     "csv", "--quiet").stdout, describe(c))
                path = os.path.join(self.tmp, "full.csv")
                with open(path, "w") as f:
                    f.write(full)
                for objective in ("energy", "energy-within-slowdown=5"):
                    self.assertEqual(wattlas.optimize(path, objective, fmt="csv"),
                                     cli("optimize", path, "--objective", objective, "--format",
                                         "csv").stdout, describe(c))
                self.assertEqual(wattlas.pareto(path, fmt="csv"),
                                 cli("pareto", path, "--format", "csv").stdout, describe(c))

    def test_schedule_provenance(self):
        """optimize --schedule's fixed_ columns are the row they name, as
        printed (the sum of a row's rounded phases once printed 780.92941
        for a row's 780.92942), for phase schedules of training steps and
        generations and for kernel-class schedules"""
        rng = random.Random(SEED + 12)
        seen = 0
        picked = [c for c in self.cases if c.get("mode") in ("train", "decode")][:6]
        picked += [c for c in self.cases if c["kind"] == "builder"][:2]
        for i, c in enumerate(picked):
            with self.subTest(case=i):
                by = "phase" if c.get("mode") in ("train", "decode") and rng.random() < 0.7 \
                    else "class"
                extra = ["--kernels"] if by == "class" else []
                sw = cli("sweep", *sweep_args(c), *extra, "--quiet", check=False)
                if sw.returncode != 0:
                    continue
                with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
                    f.write(sw.stdout)
                    path = f.name
                try:
                    obj = rng.choice(["energy", "energy-within-slowdown=5"])
                    out = cli("optimize", path, "--schedule=" + by, "--objective", obj,
                              "--format", "csv", check=False)
                finally:
                    os.unlink(path)
                if out.returncode != 0:
                    continue
                rows = rows_of(sw.stdout)
                header = sw.stdout.splitlines()[0]
                gcols = [k for k in key_cols(header) if k != "kernel_class"]
                for o in rows_of(out.stdout):
                    if not o.get("fixed_sm_clock_mhz") or by != "phase":
                        continue
                    named = [r for r in rows if all(r[k] == o[k] for k in gcols if k in o) and
                             r["sm_clock_mhz"] == o["fixed_sm_clock_mhz"]]
                    self.assertTrue(named, "a schedule names no row: %s" % describe(c))
                    self.assertEqual(o["fixed_time_ms"], named[0]["time_ms"],
                                     "fixed_time_ms %s, its row's %s: %s"
                                     % (o["fixed_time_ms"], named[0]["time_ms"], describe(c)))
                    self.assertEqual(o["fixed_energy_j"], named[0]["energy_j"], describe(c))
                    seen += 1
        print("schedules: %d fixed clocks checked against their rows" % seen, flush=True)

    def test_set_derives(self):
        """--set K=V gives the rows of the same change with every key that
        derives from K re-derived as the presets derive it and set by hand
        (sms: the L2's bandwidth per SM), and the note names what followed
        and what was held"""
        rng = random.Random(SEED + 13)
        seen = 0
        for i, c in enumerate(self.cases[:8]):
            with self.subTest(case=i):
                show = gpus()[c["gpu"]]["show"]
                vals = {}
                for line in show.splitlines():
                    k = line.split("=")[0].strip()
                    if k in ("sms", "l2_bw_bytes_per_clk") and k not in vals:
                        vals[k] = float(line.split("=")[1].split(";")[0])
                if len(vals) < 2:
                    continue
                sms = int(vals["sms"] * rng.choice([0.5, 1.5, 2.0]))
                l2 = vals["l2_bw_bytes_per_clk"] * sms / vals["sms"]
                base = sweep_args(c, clocks=c["clocks"][-2:], caps=c["caps"][-1:], voff=[0])
                alone = cli("sweep", *base, "--set", "sms=%d" % sms, check=False)
                both = cli("sweep", *base, "--set", "sms=%d" % sms, "--set",
                           "l2_bw_bytes_per_clk=%.17g" % l2, "--quiet", check=False)
                self.assertEqual(alone.returncode, both.returncode, describe(c))
                if alone.returncode != 0:
                    continue
                self.assertIn("re-derived in proportion to it", alone.stderr, describe(c))
                self.assertIn("l2_size_mb", alone.stderr, describe(c))
                ra, rb = rows_of(alone.stdout), rows_of(both.stdout)
                self.assertEqual(len(ra), len(rb), describe(c))
                for x, y in zip(ra, rb):
                    y.pop("l2_bw_bytes_per_clk", None)
                    self.assertEqual(x, y, "--set sms=%d alone differs from it with the L2 "
                                     "re-derived by hand: %s" % (sms, describe(c)))
                    seen += 1
        print("set derives: %d rows checked" % seen, flush=True)

    def test_power_limit_spelling(self):
        """the power limit is one key in every command: --power-limit-w
        LIST gives the rows --set power_limit_w=LIST gives, on sweep and
        predict over generated cases (compare, serve and cluster: test_cli's
        test_power_limit_spelling; issue 79: the cap was --set
        power_limit_w= in three commands and --power-limits in a fourth)"""
        checked = 0
        for c in self.cases[:6]:
            caps = axis(c["caps"])
            sets = [x for k, v in c["set"].items() for x in ("--set", "%s=%s" % (k, axis(v)))]
            common = ["--gpu", c["gpu"], *map(str, c["args"]), *sets]
            base = common + ["--clock", axis(c["clocks"]), "--voltage-offset-mv", axis(c["voff"])]
            p = common + ["--voltage-offset-mv", axis(c["voff"][:1])]
            with self.subTest(case=describe(c)):
                a = cli("sweep", *base, "--set", "power_limit_w=" + caps, "--quiet").stdout
                b = cli("sweep", *base, "--power-limit-w", caps, "--quiet").stdout
                self.assertEqual(a, b, describe(c))
                one = "%g" % c["caps"][0]
                a = cli("predict", *p, "--set", "power_limit_w=" + one, "--format", "csv",
                        "--quiet").stdout
                b = cli("predict", *p, "--power-limit-w", one, "--format", "csv",
                        "--quiet").stdout
                self.assertEqual(a, b, describe(c))
                checked += 1
        print("power limit spelling: %d cases" % checked, flush=True)

    def test_voltage_at_effective_clock(self):
        """a row's voltage_mv is the voltage its clock ran at: a row the cap
        holds below its request reports what the same run at its effective
        clock without a limit reports (the curve's there plus the offset,
        both dies near the cap's temperature), not its request's; feasible
        is judged at that clock and voltage"""
        rng = random.Random(SEED + 11)
        seen = 0
        for i, c in enumerate(self.cases):
            with self.subTest(case=i):
                # the lowest caps hold hardest; a positive offset now and then
                voff = sorted(set(c["voff"]) | {rng.choice([-40, 30])})
                full = cli("sweep", *sweep_args(c, caps=c["caps"][:2], voff=voff),
                           "--quiet", check=False)
                if full.returncode != 0:
                    continue
                held = [r for r in rows_of(full.stdout) if r.get("throttled") == "1" and
                        r.get("time_ms") not in ("", "nan") and
                        num(r, "sm_clock_mhz") - num(r, "effective_clock_mhz") > 60 and
                        num(r, "effective_clock_mhz") >= gpus()[c["gpu"]]["fmin"]]
                for r in rng.sample(held, min(2, len(held))):
                    args = ["--gpu", c["gpu"], *c["args"], "--clock", r["effective_clock_mhz"],
                            "--voltage-offset-mv", r["voltage_offset_mv"], "--no-power-limit"]
                    for k, v in c["set"].items():
                        args += ["--set", "%s=%s" % (k, axis(v))]
                    p = rows_of(cli("predict", *args, "--format", "csv", "--quiet").stdout)[0]
                    self.assertLessEqual(abs(num(r, "voltage_mv") - num(p, "voltage_mv")), 6.0,
                                         "held at %s of %s MHz (offset %s) it reports %s mV; the "
                                         "same clock unheld %s mV: %s"
                                         % (r["effective_clock_mhz"], r["sm_clock_mhz"],
                                            r["voltage_offset_mv"], r["voltage_mv"],
                                            p["voltage_mv"], describe(c)))
                    seen += 1
        print("voltage at the effective clock: %d held rows checked" % seen, flush=True)

    def test_compare(self):
        """compare's columns at the asked clock and at its optimum are the
        predict rows of each GPU"""
        rng = random.Random(SEED + 3)
        builders = [c for c in self.cases if c["kind"] == "builder"] or []
        for i, c in enumerate(builders[:2]):
            with self.subTest(case=i):
                others = rng.sample(sorted(gpus()), 2)
                ids = [g for g in dict.fromkeys([c["gpu"]] + others) if "v100" not in g]
                args = [a for a in map(str, c["args"])]
                out = cli("compare", "--gpu", ",".join(ids), *args, "--format", "csv",
                          check=False)
                if out.returncode != 0:
                    continue
                for row in rows_of(out.stdout):
                    if not row.get("time_ms"):
                        continue  # a GPU that cannot run it says why
                    for pre, clock in (("", row["sm_clock_mhz"]),
                                       ("opt_", row.get("opt_sm_clock_mhz"))):
                        if not clock:
                            continue
                        p = rows_of(cli("predict", "--gpu", row["gpu"], *args, "--clock", clock,
                                        "--format", "csv", "--quiet").stdout)[0]
                        for k in ("time_ms", "power_w", "energy_j"):
                            self.assertEqual(row[pre + k], p[k], "compare %s%s on %s at %s MHz: "
                                             "%s, predict %s" % (pre, k, row["gpu"], clock,
                                                                 row[pre + k], p[k]))

    def test_report(self):
        """a report's savings.csv is optimize on its own sweep.csv, its rows
        those of the sweep, and index.md says of the max clock what its row
        says"""
        rng = random.Random(SEED + 4)
        g = rng.sample(sorted(x for x in gpus() if "v100" not in x), 2)
        spec = os.path.join(self.tmp, "study.ini")
        objective = rng.choice(["energy", "energy-within-slowdown=10", "edp"])
        with open(spec, "w") as f:
            f.write("[report]\ntitle = invariants\nobjective = %s\n[sweep]\ngpu = %s\n"
                    "model = %s\nseq = %s\nmode = prefill, train\nscope = layer\n"
                    "clock = %s\n" % (objective, ", ".join(g),
                                      ", ".join(rng.sample(["gpt3-125m", "gpt3-1.3b", "gpt2"], 2)),
                                      rng.choice([128, 512]), "300:2000:%d" % rng.choice([60, 90])))
        out = os.path.join(self.tmp, "report")
        cli("report", "--spec", spec, "-o", out, "--quiet")
        with open(os.path.join(out, "sweep.csv")) as f:
            sweep_text = f.read()
        mine = cli("optimize", os.path.join(out, "sweep.csv"), "--objective", objective,
                   "--format", "csv").stdout
        with open(os.path.join(out, "savings.csv")) as f:
            self.assertEqual(f.read(), mine, "savings.csv is not optimize of sweep.csv")
        c = {"kind": "report", "gpu": g[0], "args": [objective], "clocks": [], "caps": [],
             "voff": [], "threads": 0}
        check_optimize(self, sweep_text, c, objective, False)
        rows = rows_of(sweep_text)
        with open(os.path.join(out, "index.md")) as f:
            index = f.read()
        # the index's savings tables: a row per workload, its last cell
        # whether the max clock was throttled
        marked, head = {}, None
        for line in index.splitlines():
            if not line.startswith("|"):
                head = None
                continue
            cells = [x.strip() for x in line.strip().strip("|").split("|")]
            if "max clock throttled" in cells:
                head = cells
                continue
            if head and len(cells) == len(head) and not cells[0].startswith("---"):
                r = dict(zip(head, cells))
                keys = tuple(h for h in head[:head.index("clock (MHz)")])
                marked[tuple((h, r[h]) for h in keys)] = r["max clock throttled"] == "yes"
        self.assertTrue(marked, "index.md has no savings table")
        kc = key_cols(sweep_text.split("\n")[0])
        for o in rows_of(mine):
            top = [r for r in rows if all(r[k] == o[k] for k in kc) and
                   r["sm_clock_mhz"] == o["max_sm_clock_mhz"]]
            self.assertEqual(len(top), 1)
            k = next((m for m in marked if all(o.get(h) == v for h, v in m)), None)
            self.assertIsNotNone(k, "index.md has no row for %s" % o)
            if k in marked:
                self.assertEqual(marked[k], top[0]["throttled"] == "1",
                                 "index.md says max clock throttled %s for %s, whose %s MHz row "
                                 "has throttled=%s" % (marked[k], k, o["max_sm_clock_mhz"],
                                                       top[0]["throttled"]))

    def test_presets(self):
        """each GPU's 8192^3 GEMM at its top clock reaches 0.6-0.95 of its
        dense peak there, a streaming add 0.6-0.95 of its DRAM bandwidth;
        the transfer rules never undo a datasheet figure"""
        add = os.path.join(self.tmp, "add.json")
        n = 1 << 28
        with open(add, "w") as f:
            f.write('[[{"dim": %d, "op": "pointwise_add", "prec": "bf16"}, ["elementwise"]]]\n' % n)
        for gid, info in sorted(gpus().items()):
            with self.subTest(gpu=gid):
                dt = "fp16" if "v100" in gid else "bf16"
                ec = rows_of(cli("energy-check", "--gpu", gid, "--dtype", dt, "--format",
                                 "csv").stdout)[0]
                frac = num(ec, "model_tflops") / num(ec, "peak_tflops")
                print("%-16s %s GEMM %.0f of %.0f TFLOPS at %s MHz (%.3f)" %
                      (gid, dt, num(ec, "model_tflops"), num(ec, "peak_tflops"),
                       ec["sm_clock_mhz"], frac))
                self.assertTrue(0.6 <= frac <= 0.95, "%s: the 8192^3 %s GEMM reaches %.3f of "
                                "its dense peak" % (gid, dt, frac))
                if "v100" in gid:
                    continue
                p = rows_of(cli("predict", "--gpu", gid, "--trace", add, "--no-power-limit",
                                "--format", "csv", "--quiet").stdout)[0]
                bw = 3 * n * 2 / (num(p, "time_ms") * 1e-3) / 1e9
                print("%-16s add streams %.0f of %.0f GB/s (%.3f)" % (gid, bw, info["dram"],
                                                                      bw / info["dram"]))
                self.assertTrue(0.6 <= bw / info["dram"] <= 0.95, "%s: a streaming add reaches "
                                "%.3f of its DRAM bandwidth" % (gid, bw / info["dram"]))

    def test_first_principles(self):
        """arithmetic alone never costs more than the board spends per
        operation: energy-check's first_principles_pct is at most 100 on
        every GPU's tensor cores; on CUDA cores above 100 only where the
        datasheet's peak is beyond the TDP, which the table says and the
        model shows (its GEMM there draws more than the TDP); the model's
        own compute energy per FLOP is never below the arithmetic's; the
        parts add up, a tensor-core MAC costs less than the fp32 FFMA, and
        the same GPU on a finer node (a file with a smaller process_nm) has
        a smaller share (issue 79: the B200 had 108% in fp16 and 126% in
        fp8, a whole fp32 add charged to each product of a tensor core's
        dot; the L4's fp32 peak, 30.3 TFLOPS in 72 W, takes 122%)"""
        rng = random.Random(SEED + 97)
        for gid in sorted(gpus()):
            rows = rows_of(cli("energy-check", "--gpu", gid, "--format", "csv").stdout)
            table = cli("energy-check", "--gpu", gid).stdout
            self.assertTrue(rows, gid)
            by = {r["dtype"]: r for r in rows}
            for r in rows:
                what = "%s %s" % (gid, r["dtype"])
                pct = num(r, "first_principles_pct")
                said = "# %s %s: the arithmetic" % (gid, r["dtype"]) in table
                if r["unit"] == "tensor":
                    self.assertLessEqual(pct, 100.0, what)
                if pct > 100:
                    self.assertTrue(said, what)
                    self.assertGreater(num(r, "model_power_w"), num(r, "board_w"), what)
                else:
                    self.assertFalse(said, what)
                self.assertGreaterEqual(num(r, "model_compute_pj_per_flop"),
                                        num(r, "arith_pj_per_flop") + num(r, "operand_pj_per_flop"),
                                        what)
                parts = num(r, "arith_pj_per_flop") + num(r, "operand_pj_per_flop")
                self.assertAlmostEqual(pct, 100 * parts / num(r, "board_pj_per_flop"), delta=0.06,
                                       msg=what)
                self.assertEqual(num(r, "residual_pj_per_flop") > 0, pct < 100, what)
                if r["unit"] == "tensor" and "fp32" in by:
                    self.assertLess(num(r, "arith_pj_per_flop"), num(by["fp32"], "arith_pj_per_flop"),
                                    what)
        gid = rng.choice(sorted(gpus()))
        text = cli("presets", "show", gid).stdout
        m = re.search(r"^process_nm\s*=\s*([0-9.]+)", text, re.M)
        if m:
            nm = float(m.group(1))
            finer = round(nm * rng.uniform(0.4, 0.9), 3)
            path = os.path.join(self.tmp, "finer.ini")
            with open(path, "w") as f:
                f.write(text[:m.start(1)] + str(finer) + text[m.end(1):])
            a = {r["dtype"]: num(r, "first_principles_pct") for r in
                 rows_of(cli("energy-check", "--gpu", gid, "--format", "csv").stdout)}
            b = {r["dtype"]: num(r, "first_principles_pct") for r in
                 rows_of(cli("energy-check", "--gpu", path, "--format", "csv").stdout)}
            for dt in a:
                self.assertLess(b[dt], a[dt] + 0.05, "%s %s at %s nm against %s" % (gid, dt, finer, nm))

    def test_aliases_resolve(self):
        """every alias a preset lists names that preset, on every line of
        its list and for every kind (issue 78: the aliases on a list's
        indented continuation lines were never read, so the leaderboard's
        hub ids of Llama 3.1 8B named no model; presets show asked every
        kind's resolver but the workloads')"""
        listed = rows_of(cli("presets", "list", "--format", "csv").stdout)
        for p in listed:
            text = cli("presets", "show", p["id"]).stdout
            lines = text.splitlines()
            aliases = []
            for i, line in enumerate(lines):
                if line.split("=")[0].strip() != "aliases":
                    continue
                parts = [line.split("=", 1)[1]]
                for more in lines[i + 1:]:
                    if not more[:1].isspace():
                        break
                    parts.append(more)
                aliases = [a.split(";")[0].strip() for a in ",".join(parts).split(",")]
                break
            for a in filter(None, aliases):
                with self.subTest(preset=p["id"], alias=a):
                    shown = cli("presets", "show", a, check=False)
                    self.assertEqual(shown.returncode, 0, shown.stderr)
                    ids = [l.split("=", 1)[1].split(";")[0].strip() for l in shown.stdout.splitlines()
                           if l.split("=")[0].strip() == "id"]
                    # an alias that is another kind's id shows that preset
                    # (an exact id first: the dgx-h100 system, an alias of
                    # the server-2023 host); its own kind's commands take it
                    want = a if a in {q["id"] for q in listed} else p["id"]
                    self.assertEqual(ids[:1], [want], "%s names %s" % (a, ids[:1]))

    def test_same_die(self):
        """a preset that takes its coefficients from another of the same die
        at the same clocks (sms, top clock and process the same: the H800
        from the H100 SXM) draws the same voltage and power at every clock;
        one left on a rule while the other moved to its measured curve sold
        a preset's history as a difference in silicon (issue 76: the H800,
        left on GH100's old rule, throttled DeepSeek-V3's step 2.9% longer
        than the H100's curve gives)"""
        def key(show, k):
            for line in show.splitlines():
                if line.split("=")[0].strip() == k:
                    return line.split("=", 1)[1].split(";")[0].strip()
            return None
        g = gpus()
        pairs = 0
        for gid, info in sorted(g.items()):
            donor = key(info["show"], "transfer_from")
            if donor not in g or any(key(info["show"], k) != key(g[donor]["show"], k)
                                     for k in ("sms", "sm_clock_max_mhz", "process_nm")):
                continue
            pairs += 1
            for clock in (info["fmin"] + 300, 0.5 * (info["fmin"] + info["fmax"]), info["fmax"]):
                clock = round(clock / 15) * 15
                r = [rows_of(cli("predict", "--gpu", x, "--model", "gpt2", "--batch", "8",
                                 "--seq", "512", "--clock", "%g" % clock, "--no-power-limit",
                                 "--format", "csv", "--quiet").stdout)[0] for x in (gid, donor)]
                with self.subTest(gpu=gid, donor=donor, clock=clock):
                    self.assertAlmostEqual(num(r[0], "voltage_mv"), num(r[1], "voltage_mv"),
                                           delta=1.0)
                    self.assertLess(abs(num(r[0], "power_w") / num(r[1], "power_w") - 1), 0.01)
        self.assertGreater(pairs, 0, "no same-die pair among the presets")

    def test_same_board(self):
        """compare --same-board runs every GPU on the first one's board: a
        GPU on its own board is its own row; and where two GPUs share a die
        the note of how much of their difference is the two presets' boards
        gives what the --same-board rows give (issue 79: the H200 12% faster
        and 23% cheaper than the H100 on compute-bound prefill, sold as
        architecture, was 10.5 and 22.3 points the boards' coefficients)"""
        rng = random.Random(SEED + 14)
        die = ["h100-sxm-80gb", "h200-sxm-141gb", "h800-sxm-80gb"]
        checked = 0
        for c in [c for c in self.cases if c["kind"] == "builder"][:4]:
            a, b = rng.sample(die, 2)
            args = [str(x) for x in c["args"] if str(x) not in ("fp32", "fp16")]
            args = [x for i, x in enumerate(args) if not (x == "--dtype")]
            with self.subTest(a=a, b=b, args=args):
                one = cli("compare", "--gpu", "%s,%s" % (a, a), *args, "--format", "csv",
                          check=False)
                same = cli("compare", "--gpu", "%s,%s" % (a, a), *args, "--same-board",
                           "--format", "csv", check=False)
                if one.returncode or same.returncode:
                    continue
                for x, y in zip(rows_of(one.stdout), rows_of(same.stdout)):
                    x.pop("coefficients")
                    y.pop("coefficients")
                    for k in x:
                        if x[k] and y[k] and k.endswith(("_ms", "_w", "_j")):
                            self.assertAlmostEqual(float(x[k]), float(y[k]),
                                                   delta=2e-6 * abs(float(x[k])) + 1e-6,
                                                   msg="%s on its own board: %s" % (a, k))
                plain = cli("compare", "--gpu", "%s,%s" % (a, b), *args, "--format", "csv")
                moved = rows_of(cli("compare", "--gpu", "%s,%s" % (a, b), *args, "--same-board",
                                    "--format", "csv", "--quiet").stdout)
                m = re.search(r"on \S+'s board \(its coefficients carried over: --same-board\) "
                              r"([-+][0-9.]+)% and ([-+][0-9.]+)%", plain.stderr)
                self.assertIsNotNone(m, "no same-die note for %s and %s: %s" % (a, b, plain.stderr))
                t = 100 * (num(moved[1], "time_ms") / num(moved[0], "time_ms") - 1)
                e = 100 * (num(moved[1], "energy_j") / num(moved[0], "energy_j") - 1)
                self.assertLessEqual(abs(float(m.group(1)) - t), 0.051, plain.stderr)
                self.assertLessEqual(abs(float(m.group(2)) - e), 0.051, plain.stderr)
                checked += 1
        print("same board: %d pairs checked" % checked, flush=True)

    def test_power_limit_floor(self):
        """a limit below the board's lowest is a usage error, on every path"""
        for gid, info in sorted(gpus().items()):
            if not info["limit_min"] > 0:
                self.fail("%s states no power_limit_min_w" % gid)
            low = info["limit_min"] - 1
            p = cli("predict", "--gpu", gid, "--set", "power_limit_w=%g" % low, check=False)
            self.assertEqual(p.returncode, 2, gid)
            self.assertIn("power_limit_min_w", p.stderr)

    # ---- hostile input (issue 77): on every command, the same verdict -----

    def test_output_never_input(self):
        """an output named as one of the inputs, by any spelling (the same
        name, ./name, sub/../name, a link to it) or as another output, is
        a usage error on every command and from Python, before any work:
        the input is byte for byte as it was"""
        d = tempfile.mkdtemp(dir=self.tmp)
        os.mkdir(os.path.join(d, "sub"))
        meas = os.path.join(ROOT, "data", "h100-vm-2026-11", "measurements",
                            "h100-sxm-80gb-models.csv")
        files = {"m.csv": open(meas).read() if os.path.exists(meas) else
                 "gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,"
                 "time_ms,energy_j,power_w,temp_c\n"
                 "h100-sxm-80gb,gpt2,8,128,bf16,prefill,eager,900,900,8,0.8,100,60\n",
                 "w.csv": "prompt_tokens,output_tokens\n100,10\n200,20\n",
                 "s.ini": "[sweep]\nmodel = gpt2\nclock = 900, 1410\n",
                 "t.json": '[[{"dim": 4096, "op": "pointwise_add", "prec": "bf16"}, '
                           '["elementwise"]]]\n'}
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        cli("serve", "--requests", "3", "-o", os.path.join(d, "r.csv"))
        files["r.csv"] = open(os.path.join(d, "r.csv")).read()
        cli("sweep", "--model", "gpt2", "--clock", "900", "--shard", "1/2", "-o",
            os.path.join(d, "a.csv"))
        files["a.csv"] = open(os.path.join(d, "a.csv")).read()
        rng = random.Random(SEED + 77)

        def spell(name):
            k = rng.randrange(4)
            if k == 3:
                link = os.path.join(d, "link-%d-%s" % (rng.randrange(10**6), name))
                os.symlink(name, link)
                return link
            return os.path.join(d, ["", "./", "sub/../"][k] + name)

        def at(name):
            return os.path.join(d, name)
        cases = [
            lambda: ("calibrate", "--gpu", "h100-sxm-80gb", at("m.csv"), "-o", spell("m.csv")),
            lambda: ("validate", "--gpu", "h100-sxm-80gb", at("m.csv"), "-o", spell("m.csv")),
            lambda: ("validate", at("r.csv"), "-o", spell("r.csv")),
            lambda: ("serve", "--workload", at("w.csv"), "--requests", "3", "-o", spell("w.csv")),
            lambda: ("sweep", at("s.ini"), "-o", spell("s.ini")),
            lambda: ("report", at("s.ini"), "-o", d),
            lambda: ("predict", "--trace", at("t.json"), "-o", spell("t.json")),
            lambda: ("plot", at("r.csv"), "-o", spell("r.csv")),
            lambda: ("merge", at("a.csv"), "-o", spell("a.csv")),
            lambda: ("cluster", "--timeline", at("tl.json"), "-o", spell("tl.json")),
            lambda: ("serve", "--workload", at("w.csv"), "--requests", "3", "--steps",
                     spell("w.csv")),
            lambda: ("serve", "--requests", "3", "-o", at("tl.json"), "--steps", spell("tl.json")),
            lambda: ("calibrate", "--gpu", "h100-sxm-80gb", at("m.csv"), "--fit", "gpu,host",
                     "-o", at("x.ini"), "--host-out", spell("x.ini")),
        ]
        for make in cases:
            args = make()
            with self.subTest(args=" ".join(args)):
                p = cli(*args, check=False)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertTrue("never one of the inputs" in p.stderr or
                                "overwrite each other" in p.stderr, p.stderr)
                for name, text in files.items():
                    self.assertEqual(open(at(name)).read(), text, "%s changed" % name)
                self.assertFalse(os.path.exists(at("x.ini")) or os.path.exists(at("tl.json")))
        if wattlas is None:
            print("test_output_never_input: SKIPPED Python (the extension is not built)")
            return
        for call in (lambda: wattlas.calibrate(at("m.csv"), gpu="h100-sxm-80gb",
                                               out=spell("m.csv")),
                     lambda: wattlas.report(at("s.ini"), out=d)):
            with self.assertRaises(wattlas.Error):
                call()
            for name, text in files.items():
                self.assertEqual(open(at(name)).read(), text, "%s changed (Python)" % name)

    def test_set_edges(self):
        """--set of a key to its range's edge gets one verdict on predict,
        sweep, serve, cluster and Python: refused (exit 2) everywhere, or
        taken everywhere with numbers that keep the physics (a cap at the
        board's floor is kept by its power; a minimum clock at the maximum
        runs the top clock, as without it)"""
        systems = {"h100-sxm-80gb": "dgx-h100", "a100-sxm-80gb": "dgx-a100-80gb",
                   "h800-sxm-80gb": "hgx-h800", "a100-pcie-80gb": "server-4x-a100-pcie-80gb"}
        rng = random.Random(SEED + 78)
        g = gpus()
        for gid in rng.sample(sorted(systems), 2):
            info = g[gid]
            fmin, fmax, pmin = info["fmin"], info["fmax"], info["limit_min"]
            edges = [("power_limit_w", pmin - 1, False), ("power_limit_w", pmin, True),
                     ("sm_clock_min_mhz", fmax, True), ("sm_clock_min_mhz", fmax + 15, False),
                     ("sm_clock_max_mhz", fmin - 15, False),
                     ("power_limit_w", info["limit"] * rng.choice([2, 10]), True)]
            for key, val, ok in edges:
                kv = "%s=%g" % (key, val)
                runs = {
                    "predict": ("predict", "--gpu", gid, "--model", "gpt2", "--clock", "%g" % fmax,
                                "--set", kv, "--format", "csv", "--quiet"),
                    "sweep": ("sweep", "--gpu", gid, "--model", "gpt2", "--clock",
                              "%g" % fmax, "--set", kv, "--format", "csv", "--quiet"),
                    "serve": ("serve", "--gpu", gid, "--requests", "4", "--set", kv, "--format",
                              "csv", "--quiet"),
                    "cluster": ("cluster", "--system", systems[gid], "--set", kv, "--format",
                                "csv", "--quiet"),
                }
                with self.subTest(gpu=gid, set=kv):
                    out = {}
                    for cmd, args in runs.items():
                        p = cli(*args, check=False)
                        self.assertEqual(p.returncode, 0 if ok else 2,
                                         "%s --set %s: %s" % (cmd, kv, p.stderr[-400:]))
                        if ok:
                            out[cmd] = rows_of(p.stdout)[0]
                    if wattlas is not None:
                        if ok:
                            wattlas.predict(gpu=gid, model="gpt2", clock=fmax, set={key: val})
                        else:
                            with self.assertRaises(wattlas.Error):
                                wattlas.predict(gpu=gid, model="gpt2", clock=fmax,
                                                set={key: val})
                    if not ok:
                        continue
                    for cmd, r in out.items():
                        for k, v in r.items():
                            if k.endswith(("_ms", "_w", "_j", "_s")) and v not in ("", None):
                                self.assertTrue(math.isfinite(float(v)) and float(v) >= 0,
                                                "%s %s = %s" % (cmd, k, v))
                    cap = val if key == "power_limit_w" else info["limit"]
                    for cmd in ("predict", "serve", "cluster"):
                        r = out[cmd]
                        # the cluster's power_w is its whole: one GPU's share
                        # serve's four requests have no steady state: its run's power
                        pw = (num(r, "energy_gpu_j") / num(r, "time_s") / num(r, "gpus")
                              if cmd == "cluster" else
                              num(r, "run_power_w") if cmd == "serve" else num(r, "power_w"))
                        self.assertLessEqual(pw, cap * 1.02 + 1,
                                             "%s draws %.1f W under a %.0f W cap" % (cmd, pw, cap))
                    self.assertGreater(num(out["serve"], "median_ttft_ms"), 0)
                    self.assertLess(num(out["cluster"], "mfu"), 1.0)
                    if key == "sm_clock_min_mhz":
                        base = rows_of(cli(*[a for a in runs["predict"] if a not in ("--set", kv)])
                                       .stdout)[0]
                        self.assertEqual(out["predict"]["time_ms"], base["time_ms"])

    def test_serve_rows_validate(self):
        """serve's own rows, for options drawn at random, validate to zero
        error on every column (within the rows' printed digits)"""
        rng = random.Random(SEED + 79)
        d = tempfile.mkdtemp(dir=self.tmp)
        # the scored columns are the steady state's: max_num_seqs of 8 at
        # most and 20 requests or more give every run one
        pool = [["--rate", lambda: rng.choice(["0.5", "2", "8"])],
                ["--temperature", lambda: rng.choice(["0", "0.7", "1"])],
                ["--top-p", lambda: rng.choice(["0.9", "1"])],
                ["--seed", lambda: str(rng.randrange(100))],
                ["--async-scheduling"],
                ["--clock", lambda: ",".join(sorted(rng.sample(["990", "1410", "1755", "1980"], 2),
                                                    key=float))],
                ["--set", lambda: "power_limit_w=%d" % rng.choice([400, 550, 700])],
                ["--gpu-memory-utilization", lambda: rng.choice(["0.5", "0.9"])],
                ["--repetition-penalty", lambda: rng.choice(["1", "1.1"])],
                # several GPUs (issue 78): the layout is in the rows too (one
                # of them: a MoE's --ep is its --tp's, and refuses --dp)
                rng.choice([["--tp", lambda: rng.choice(["2", "1,4"])],
                            ["--dp", lambda: rng.choice(["2", "1,2"]), "--tp", lambda: "2"],
                            ["--model", lambda: "qwen3-30b-a3b", "--ep", lambda: "2"]]),
                # fixed lengths, or the workload's answers scaled (not both:
                # a usage error)
                rng.choice([["--prompt-tokens", lambda: "300", "--output-tokens", lambda: "20"],
                            ["--output-mean-tokens", lambda: rng.choice(["60", "250.5"])]])]
        for i in range(4):
            args = ["serve", "--requests", str(rng.randrange(20, 40)), "--max-num-seqs",
                    ",".join(map(str, sorted(rng.sample([2, 4, 8], 2))))]
            for opt in rng.sample(pool, 3):
                args += [a() if callable(a) else a for a in opt]
            out = os.path.join(d, "sv%d.csv" % i)
            with self.subTest(args=" ".join(args)):
                cli(*args, "-o", out)
                p = cli("validate", out)
                m = [line for line in p.stderr.splitlines() if "MAPE: median ITL" in line]
                self.assertTrue(m, p.stderr)
                errs = [float(x) for x in
                        __import__("re").findall(r"(-?[0-9.]+)%", m[0])]
                self.assertEqual(len(errs), 4, m[0])
                self.assertLessEqual(max(errs), 0.05, m[0])

    def test_serve_steady_window(self):
        """serve's steady columns are the benchmark's window over its own
        step log (issue 78: they had silently become the whole run's): the
        window opens at the first step after max_num_seqs requests have a
        first token and ends with the step that brings the finished to
        requests - max_num_seqs - 1 (at least one); avg_batch, tokens/s,
        power and energy per token are the log's sums over it, the run_
        columns the sums over every record; a run without a window leaves
        its steady columns empty and says so. The cache never holds more
        than it has, and a full one preempts or runs fewer requests."""
        rng = random.Random(SEED + 82)
        d = tempfile.mkdtemp(dir=self.tmp)
        for i in range(3):
            n = rng.randrange(6, 60)
            seqs = sorted(rng.sample([1, 2, 4, 8, 16, 32], 2))
            args = ["serve", "--requests", n, "--max-num-seqs", ",".join(map(str, seqs)),
                    "--seed", rng.randrange(1000)]
            extra = rng.sample([["--rate", rng.choice(["1", "5", "50"])], ["--async-scheduling"],
                                ["--clock", "990,1980"], ["--set", "power_limit_w=300,700"],
                                ["--gpu-memory-utilization", "0.23"],
                                ["--prompt-tokens", "600", "--output-tokens", "40"]], 2)
            for e in extra:
                args += e
            rows_path, steps_path = (os.path.join(d, "r%d.csv" % i), os.path.join(d, "s%d.csv" % i))
            with self.subTest(args=" ".join(map(str, args))):
                p = cli(*args, "-o", rows_path, "--steps", steps_path)
                with open(rows_path) as f:
                    rows = list(csv.DictReader(f))
                with open(steps_path) as f:
                    steps = list(csv.DictReader(f))
                key = ("gpu", "tp", "max_num_seqs", "sm_clock_mhz", "prefill_clock_mhz",
                       "power_limit_w")
                for r in rows:
                    log = [x for x in steps if all(x[k] == r[k] for k in key)]
                    self.assertTrue(log, r)
                    m, reqs = int(r["max_num_seqs"]), int(r["requests"])
                    close_at = reqs - m - 1
                    # the window from the log's counts, by the benchmark's rule
                    want, state = [], 0
                    for x in log:
                        inside = state == 1
                        want.append(inside)
                        if state == 0 and int(x["started"]) >= m:
                            state = 1
                        if state < 2 and int(x["finished"]) > 0 and int(x["finished"]) >= close_at:
                            state = 2
                    self.assertEqual([x["steady"] == "1" for x in log], want)
                    for x in log:
                        self.assertLessEqual(int(x["cache_tokens"]), int(r["kv_cache_tokens"]))
                        self.assertLessEqual(int(x["running"]), m)
                    win = [x for x in log if x["steady"] == "1"]
                    T = sum(float(x["time_ms"]) for x in win) / 1e3
                    if not win:
                        for k in ("avg_batch", "power_w", "energy_per_token_j", "steady_s",
                                  "output_tokens_per_s", "energy_per_request_j"):
                            self.assertEqual(r[k], "", k)
                        self.assertIn("no steady state", p.stderr)
                        self.assertEqual(r["stable"], "0")
                    else:
                        E = sum(float(x["energy_j"]) for x in win)
                        tok = sum(int(x["sampled_tokens"]) for x in win)
                        b = sum(int(x["running"]) * float(x["time_ms"]) for x in win) / 1e3
                        start = float(win[0]["start_s"])
                        end = float(win[-1]["start_s"]) + float(win[-1]["time_ms"]) / 1e3
                        for k, v, tol in (("steady_s", T, 1e-3), ("steady_start_s", start, 1e-3),
                                          ("steady_end_s", end, 1e-3), ("power_w", E / T, 0.05),
                                          ("avg_batch", b / T, 0.005),
                                          ("output_tokens_per_s", tok / T, 1e-5 * tok / T),
                                          ("energy_per_token_j", E / tok, 5e-6)):
                            self.assertAlmostEqual(num(r, k), v, delta=tol + 1e-6 * abs(v),
                                                   msg="%s: %s" % (k, r))
                        stable_own = T >= 20 and b / T >= 0.85 * m
                        self.assertTrue(stable_own or r["stable"] == "0", r)
                    # the whole run: every record
                    Tr = sum(float(x["time_ms"]) for x in log) / 1e3
                    Er = sum(float(x["energy_j"]) for x in log)
                    tr = sum(int(x["sampled_tokens"]) for x in log)
                    self.assertAlmostEqual(num(r, "time_s"), Tr, delta=1e-3 + 1e-6 * Tr)
                    self.assertAlmostEqual(num(r, "energy_j"), Er, delta=0.05 + 1e-6 * Er)
                    self.assertAlmostEqual(num(r, "run_energy_per_token_j"), Er / tr,
                                           delta=5e-6 + 1e-6 * Er / tr)
                    self.assertAlmostEqual(num(r, "run_energy_per_request_j"), Er / reqs,
                                           delta=5e-4 + 1e-6 * Er / reqs)
                    # a full cache: preemptions, or never all max_num_seqs running
                    # while requests wait
                    full = any(int(x["cache_tokens"]) + 16 * m > int(r["kv_cache_tokens"])
                               for x in log)
                    if full and int(r["preemptions"]) == 0:
                        self.assertFalse(any(int(x["running"]) == m and int(x["waiting"]) > 0
                                             and int(x["cache_tokens"]) >= int(r["kv_cache_tokens"])
                                             for x in log))

                # rows without a window through validate: said and not
                # scored, never a bare failure (issue 78: an empty steady
                # cell stopped validate with "failed" and no reason)
                if any(r["power_w"] == "" for r in rows):
                    v = cli("validate", rows_path, check=False)
                    self.assertIn("not scored", v.stderr)
                    self.assertNotRegex(v.stderr, r"validate: failed\s*$")
                # Python's serve: the same steady cells empty (None) or not
                if wattlas is not None:
                    kw, it = {}, iter(map(str, args[1:]))
                    for opt in it:
                        k = opt[2:].replace("-", "_")
                        kw[k] = True if k == "async_scheduling" else next(it)
                    py = wattlas.serve(**kw)
                    self.assertEqual([r["power_w"] is None for r in py],
                                     [r["power_w"] == "" for r in rows])
                # the leaderboard's group rule: once a max_num_seqs is
                # unstable, so is every larger one of the same GPU and clocks
                groups = {}
                for r in rows:
                    groups.setdefault(tuple(r[k] for k in key if k != "max_num_seqs"),
                                      []).append(r)
                for g in groups.values():
                    flags = [x["stable"] for x in sorted(g, key=lambda x: int(x["max_num_seqs"]))]
                    self.assertNotIn("1", flags[flags.index("0"):] if "0" in flags else [], g)

    def test_serve_tensor_parallel(self):
        """--tp (issue 78): --tp 1 is plain serve, row for row; over the same
        schedule (requests the cache holds at every tp, synchronous
        scheduling), a step's compute (time_ms - comm_ms) never grows with
        more GPUs, its collectives are none on one GPU and some on several,
        the run's power and energy columns are the GPUs' sum (gpus = tp),
        and no step holds more cache than the cache has."""
        rng = random.Random(SEED + 83)
        d = tempfile.mkdtemp(dir=self.tmp)
        for i in range(2):
            model, tps = rng.choice([("llama-3-8b", [2, 4, 8]), ("qwen3-8b", [2, 4, 8]),
                                     ("gpt3-1.3b", [2, 4, 8]), ("qwen3-30b-a3b", [2, 4, 8]),
                                     ("gemma-3-12b", [2, 4, 8]), ("mixtral-8x7b", [2, 4, 8])])
            gpu = rng.choice(["h100-sxm-80gb", "b200"])
            n, seqs = rng.randrange(4, 24), rng.choice([2, 4, 8, 16])
            base = ["serve", "--gpu", gpu, "--model", model, "--requests", n,
                    "--max-num-seqs", seqs, "--prompt-tokens", rng.choice([32, 300, 900]),
                    "--output-tokens", rng.randrange(4, 40), "--seed", rng.randrange(1000)]
            if rng.random() < 0.5:
                base += ["--set", "power_limit_w=%d" % rng.choice([300, 500])]
            tp = sorted(rng.sample(tps, 2))
            if model == "mixtral-8x7b":  # 93 GB of weights: two GPUs at least
                base[base.index("--gpu") + 1] = "b200"
            with self.subTest(args=" ".join(map(str, base)), tp=tp):
                plain = cli(*base, "--format", "csv", "--quiet").stdout
                one = cli(*base, "--tp", "1", "--format", "csv", "--quiet").stdout
                self.assertEqual(plain, one)
                rp, sp = os.path.join(d, "r%d.csv" % i), os.path.join(d, "s%d.csv" % i)
                cli(*base, "--tp", ",".join(map(str, [1] + tp)), "-o", rp, "--steps", sp)
                with open(rp) as f:
                    rows = {int(r["tp"]): r for r in csv.DictReader(f)}
                with open(sp) as f:
                    steps = list(csv.DictReader(f))
                self.assertEqual(sorted(rows), [1] + tp)
                logs = {t: [x for x in steps if int(x["tp"]) == t] for t in rows}
                for t, r in rows.items():
                    self.assertEqual(int(r["gpus"]), t)
                    self.assertEqual(r["system"] != "", t > 1)
                    E = sum(float(x["energy_j"]) for x in logs[t])
                    self.assertAlmostEqual(float(r["energy_j"]), E, delta=1e-6 * E + 0.05)
                    for x in logs[t]:
                        self.assertLessEqual(int(x["cache_tokens"]), int(r["kv_cache_tokens"]))
                        comm = float(x["comm_ms"])
                        self.assertEqual(comm > 0, t > 1 and int(x["running"]) > 0, x)
                    if t > 1:  # a step's energy is at least its GPUs' idle draw
                        for x in logs[t]:
                            if int(x["running"]) > 0:
                                self.assertGreater(float(x["energy_j"]), 0)
                sched = ("running", "decode_seqs", "prefill_tokens", "sampled_tokens")
                for a, b in zip([1] + tp, tp):
                    la, lb = logs[a], logs[b]
                    if [[x[k] for k in sched] for x in la] != [[x[k] for k in sched] for x in lb]:
                        continue  # a larger cache scheduled differently: not comparable
                    for x, y in zip(la, lb):
                        if int(x["running"]) == 0:
                            continue
                        ca = float(x["time_ms"]) - float(x["comm_ms"])
                        cb = float(y["time_ms"]) - float(y["comm_ms"])
                        self.assertLessEqual(cb, ca * (1 + 1e-9) + 1e-9, (a, b, x, y))

    def test_serve_data_parallel(self):
        """--dp (issue 78): --dp 1 is plain serve; k engines of identical
        requests (fixed lengths, all at once) dealt round robin are k runs of
        one: k times the energy, power and tokens/s, the same time, ITL,
        TTFT and energy per token, gpus = k x tp; the step log's records are
        the engines' (replica 0 .. k - 1) and sum to the run's energy."""
        rng = random.Random(SEED + 84)
        d = tempfile.mkdtemp(dir=self.tmp)
        for i in range(2):
            n, seqs, k = rng.randrange(3, 20), rng.choice([2, 4, 8]), rng.choice([2, 3, 4])
            tp = rng.choice([1, 1, 2])
            base = ["serve", "--model", rng.choice(["llama-3-8b", "qwen3-8b", "gemma-3-12b"]),
                    "--max-num-seqs", seqs, "--prompt-tokens", rng.choice([40, 500, 1500]),
                    "--output-tokens", rng.randrange(3, 30), "--tp", tp]
            if rng.random() < 0.5:
                base += ["--async-scheduling"]
            with self.subTest(args=" ".join(map(str, base)), n=n, k=k):
                plain = cli(*base, "--requests", n, "--format", "csv", "--quiet").stdout
                one = cli(*base, "--requests", n, "--dp", 1, "--format", "csv", "--quiet").stdout
                self.assertEqual(plain, one)
                a = next(csv.DictReader(io.StringIO(plain)))
                sp = os.path.join(d, "s%d.csv" % i)
                out = cli(*base, "--requests", n * k, "--dp", k, "--format", "csv", "--quiet",
                          "--steps", sp).stdout
                b = next(csv.DictReader(io.StringIO(out)))
                self.assertEqual(int(b["gpus"]), k * tp)
                for key in ("energy_j", "run_power_w", "run_output_tokens_per_s"):
                    # each printed to 0.05 (one decimal): k of them and one
                    self.assertAlmostEqual(float(b[key]), k * float(a[key]),
                                           delta=1e-6 * k * float(a[key]) + 0.05 * (k + 1),
                                           msg=key)
                for key in ("time_s", "median_itl_ms", "p90_itl_ms", "median_ttft_ms",
                            "run_energy_per_token_j"):
                    self.assertAlmostEqual(float(b[key]), float(a[key]),
                                           delta=1e-6 * float(a[key]) + 2e-3, msg=key)
                with open(sp) as f:
                    steps = list(csv.DictReader(f))
                self.assertEqual(sorted({int(x["replica"]) for x in steps}), list(range(k)))
                E = sum(float(x["energy_j"]) for x in steps)
                self.assertAlmostEqual(E, float(b["energy_j"]), delta=1e-6 * E + 0.15)

    def test_serve_w8a8(self):
        """An 8-bit checkpoint serves bf16 activations (issue 78: its
        all-reduces were counted at one byte an element, its attention run
        in 8 bits): on the same schedule its steps' collectives take what the
        bf16 checkpoint's take, and its KV cache (bf16 either way, fewer bytes
        of weights) holds at least as many tokens."""
        rng = random.Random(SEED + 85)
        d = tempfile.mkdtemp(dir=self.tmp)
        for i in range(2):
            model, tp = rng.choice([("llama-3-8b", 2), ("qwen3-30b-a3b", 2), ("llama-3-70b", 4),
                                    ("gemma-3-12b", 2)])
            base = ["serve", "--model", model, "--tp", tp, "--requests", rng.randrange(3, 12),
                    "--max-num-seqs", rng.choice([2, 4, 8]), "--prompt-tokens",
                    rng.choice([40, 400]), "--output-tokens", rng.randrange(3, 20)]
            if model == "qwen3-30b-a3b" and rng.random() < 0.5:
                base += ["--ep", tp]
            with self.subTest(args=" ".join(map(str, base))):
                rows, logs = {}, {}
                for dt in ("bf16", "fp8"):
                    sp = os.path.join(d, "s%d%s.csv" % (i, dt))
                    out = cli(*base, "--dtype", dt, "--format", "csv", "--quiet",
                              "--steps", sp).stdout
                    rows[dt] = next(csv.DictReader(io.StringIO(out)))
                    with open(sp) as f:
                        logs[dt] = list(csv.DictReader(f))
                self.assertGreaterEqual(int(rows["fp8"]["kv_cache_tokens"]),
                                        int(rows["bf16"]["kv_cache_tokens"]))
                sched = ("running", "decode_seqs", "prefill_tokens", "sampled_tokens")
                a, b = logs["bf16"], logs["fp8"]
                self.assertEqual([[x[k] for k in sched] for x in a],
                                 [[x[k] for k in sched] for x in b])
                for x, y in zip(a, b):
                    self.assertAlmostEqual(float(x["comm_ms"]), float(y["comm_ms"]),
                                           delta=1e-9 * float(x["comm_ms"]) + 1e-9, msg=(x, y))

    def test_serve_bounds(self):
        """rates and counts at their bounds: one request at any rate; a rate
        whose arrivals span just under 10^9 s runs, just over is a usage
        error; max_num_seqs 1 serves one request at a time (avg_batch 1)"""
        n = 3 + random.Random(SEED + 80).randrange(5)
        edge = (n - 1) / 1e9
        cli("serve", "--requests", "1", "--rate", "1e-300", "--format", "csv")
        ok = cli("serve", "--requests", n, "--rate", "%.17g" % (edge * 1.01), "--format", "csv")
        self.assertGreater(num(rows_of(ok.stdout)[0], "median_itl_ms"), 0.5)
        bad = cli("serve", "--requests", n, "--rate", "%.17g" % (edge * 0.99), check=False)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        one = rows_of(cli("serve", "--requests", n, "--max-num-seqs", "1", "--format",
                          "csv").stdout)[0]
        if "avg_batch" in one and one["avg_batch"]:
            self.assertAlmostEqual(num(one, "avg_batch"), 1.0, places=6)
        for bad_n in ("0", "-1", "1.5", "1e400"):
            p = cli("serve", "--requests", bad_n, check=False)
            self.assertEqual(p.returncode, 2, "--requests %s: %s" % (bad_n, p.stderr))

    def test_lists_and_numbers(self):
        """one grammar on every command: a value twice in an axis (a row per
        value) is a usage error naming it (--max-num-seqs 1,1,1 printed one
        row three times), and a number that is none says why (a subnormal
        was "not a finite number")"""
        rng = random.Random(SEED + 81)
        v = rng.choice([900, 990, 1200])
        dup = "%d,%d" % (v, v) if rng.random() < 0.5 else "%d,510:1410:%d" % (v, v - 510)
        runs = [("predict", "--clock"), ("sweep", "--model", "gpt2", "--clock"),
                ("serve", "--requests", "2", "--clock"), ("serve", "--requests", "2",
                                                          "--max-num-seqs"),
                ("cluster", "--clock"), ("cluster", "--power-limits")]
        for args in runs:
            for val, why in ((dup, "is in the list twice"),
                             ("1e-310", "too close to zero"), ("1e400", "beyond the largest double")):
                with self.subTest(args=" ".join(args), value=val):
                    if args[-1] in ("--max-num-seqs", "--power-limits") and val == dup:
                        val = "%d,%d" % (v // 10 * 10 // 3, v // 10 * 10 // 3)
                    p = cli(*args, val, check=False)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(why, p.stderr)
        if wattlas is not None:
            with self.assertRaises(wattlas.Error):
                wattlas.sweep(model="gpt2", clock=[v, v])

    def test_rows_named(self):
        """rows a fit cannot use are named on every command that reads
        measurements: a clock the board cannot lock is left out by its line
        (calibrate, validate), a workload mixing relative and absolute times
        is refused (calibrate, validate, learn), and a model a row names by a
        file outside the data's folder is named, never opened"""
        meas = os.path.join(SHARED, "measurements", "a100-pcie-40gb-dvfs.csv")
        if not os.path.exists(meas):
            print("test_rows_named: SKIPPED (no ../shared/data/measurements)")
            return
        d = tempfile.mkdtemp(dir=self.tmp)
        lines = open(meas).read().splitlines()
        rng = random.Random(SEED + 82)
        k = rng.randrange(2, len(lines))
        bad = lines[k].split(",")
        bad[7] = bad[8] = str(rng.choice([100, 99999, 1500]))
        clk = os.path.join(d, "clk.csv")
        with open(clk, "w") as f:
            f.write("\n".join(lines[:k] + [",".join(bad)] + lines[k + 1:]) + "\n")
        for args in (("calibrate", "--gpu", "a100-pcie-40gb", clk, "-o", os.path.join(d, "c.ini")),
                     ("validate", "--gpu", "a100-pcie-40gb", clk)):
            with self.subTest(args=args[0], clock=bad[7]):
                p = cli(*args, check=False)
                self.assertEqual(p.returncode, 0, p.stderr[-300:])
                self.assertIn("clk.csv:%d: " % (k + 1), p.stderr)
                self.assertIn("clock %s MHz is outside the GPU's 210-1410 MHz" % bad[7], p.stderr)
        mix = os.path.join(d, "mix.csv")
        with open(mix, "w") as f:
            f.write(lines[0] + ",time_relative\n")
            for i, line in enumerate(lines[1:], 2):
                f.write(line + (",1\n" if i == k else ",0\n"))
        pw = os.path.join(d, "pw.csv")
        with open(pw, "w") as f:
            row = lines[1].split(",")
            row[1] = "/etc/passwd"
            f.write(lines[0] + "\n" + ",".join(row) + "\n" + "\n".join(lines[2:]) + "\n")
        for args in (("calibrate", "--gpu", "a100-pcie-40gb", "IN", "-o", os.path.join(d, "m.ini")),
                     ("validate", "--gpu", "a100-pcie-40gb", "IN"),
                     ("learn", "IN", "-o", os.path.join(d, "m.json"), "--kind", "rf",
                      "--no-beside", "--no-refit", "--quiet")):
            with self.subTest(args=args[0], rows="mixed"):
                p = cli(*[mix if a == "IN" else a for a in args], check=False)
                self.assertEqual(p.returncode, 1, p.stderr[-300:])
                self.assertIn("mix.csv:%d: time_relative: workload " % k, p.stderr)
            if args[0] == "learn":
                continue
            with self.subTest(args=args[0], rows="a model outside the folder"):
                p = cli(*[pw if a == "IN" else a for a in args], check=False)
                self.assertIn("pw.csv:2: ", p.stderr)
                self.assertIn("'/etc/passwd' is outside %s's folder" % pw, p.stderr)
                self.assertNotIn("root", p.stderr)

    def test_phase_host_costs(self):
        """a training step's host cost per phase (issue 76) means one thing on
        predict, sweep and Python: a phase's cost left unstated is the
        step's (stating it at the step's value changes nothing); a dearer
        backward or optimizer never makes a step faster and leaves the
        phases before it as they were; the three paths give one time"""
        rng = random.Random(SEED + 83)
        gpu = rng.choice(["a100-pcie-40gb", "h100-sxm-80gb", "h200-sxm-141gb"])
        shape = {"model": rng.choice(["gpt2", "gpt3-125m"]), "batch": rng.choice([1, 2]),
                 "seq": rng.choice([8, 32, 64]), "optimizer": rng.choice(["adamw", "sgd"]),
                 "clock": rng.choice([510, 900, 1200, 1410])}
        t = round(rng.uniform(15, 40), 2)
        k = round(rng.uniform(1.5, 3), 2)
        args = ["--gpu", gpu, "--mode", "train", "--master-dtype", "none", "--format", "csv"]
        for key, v in shape.items():
            args += ["--" + key, v]
        what = "%s %s t=%g k=%g" % (gpu, shape, t, k)

        def run(cmd, **costs):
            sets = dict(host_train_launch_us=t, **costs)
            a = list(args) + sum((["--set", "%s=%r" % kv] for kv in sets.items()), [])
            return rows_of(cli(cmd, *a).stdout)[0]

        base = run("predict")
        same = run("predict", host_backward_launch_us=t, host_optimizer_launch_us=t)
        for col in ("time_ms", "energy_j", "time_fwd_ms", "time_bwd_ms", "time_opt_ms"):
            self.assertEqual(base[col], same[col], "%s: unstated != stated at the step's: %s"
                             % (col, what))
        bwd = run("predict", host_backward_launch_us=t * k)
        opt = run("predict", host_optimizer_launch_us=t * k)
        self.assertGreaterEqual(num(bwd, "time_ms"), num(base, "time_ms") * (1 - 1e-9), what)
        self.assertGreaterEqual(num(opt, "time_ms"), num(base, "time_ms") * (1 - 1e-9), what)
        self.assertEqual(bwd["time_fwd_ms"], base["time_fwd_ms"], what)
        for col in ("time_fwd_ms", "time_bwd_ms"):
            self.assertEqual(opt[col], base[col], "%s moved by the optimizer's cost: %s"
                             % (col, what))
        sw = run("sweep", host_backward_launch_us=t * k)
        self.assertEqual(sw["time_ms"], bwd["time_ms"], "sweep against predict: " + what)
        if wattlas is not None:
            got = wattlas.predict(gpu, shape["model"], batch=shape["batch"], seq=shape["seq"],
                                  mode="train", optimizer=shape["optimizer"],
                                  master_dtype="none", clock=shape["clock"],
                                  set={"host_train_launch_us": t,
                                       "host_backward_launch_us": t * k}, fmt="csv")
            self.assertEqual(rows_of(got)[0]["time_ms"], bwd["time_ms"], "Python: " + what)
        # a generation's decode steps: unstated (0) is the forward's cost,
        # a dearer one never makes it faster nor moves its prefill
        dargs = ["--gpu", gpu, "--model", shape["model"], "--batch", shape["batch"], "--seq",
                 shape["seq"], "--mode", "decode", "--gen", rng.choice([4, 16]), "--clock",
                 shape["clock"], "--format", "csv", "--set", "host_launch_us=%r" % t]
        what = "decode: " + " ".join(map(str, dargs))

        def dec(v):
            return rows_of(cli("predict", *dargs, "--set", "host_decode_launch_us=%r" % v).stdout)[0]
        d0, dt, dk = dec(0), dec(t), dec(t * k)
        self.assertEqual(d0["time_ms"], dt["time_ms"], what)
        self.assertGreaterEqual(num(dk, "time_ms"), num(dt, "time_ms") * (1 - 1e-9), what)
        if "ttft_ms" in dt:
            self.assertEqual(dk["ttft_ms"], dt["ttft_ms"], what)

    def test_finetune(self):
        """a fine-tuning trains less than the whole model on every path:
        LoRA and --freeze never need more optimizer state, gradients or
        backward FLOPs than full training of the same step, --freeze no
        more backward time; freezing more layers never costs more, a higher
        LoRA rank never less; the adapters' weights are what LoRA adds to the
        weights; sweep's row is predict's (issue 79, item 10)"""
        rng = random.Random(SEED + 91)
        models = {"gpt2": 12, "qwen2-1.5b": 28, "opt-1.3b": 24, "bert-large": 24,
                  "vit-large": 24, "llama-3-8b": 32}
        for _ in range(4):
            model = rng.choice(sorted(models))
            gpu = rng.choice(["a100-pcie-40gb", "h100-sxm-80gb", "h200-sxm-141gb"])
            base = ["--gpu", gpu, "--model", model, "--mode", "train",
                    "--batch", rng.choice([1, 2]), "--seq", rng.choice([128, 256]),
                    "--dtype", rng.choice(["bf16", "fp16", "fp32"]),
                    "--attention", rng.choice(["eager", "flash"]),
                    "--recompute", rng.choice(["none", "selective", "full"]),
                    "--optimizer", rng.choice(["adamw", "sgd"]),
                    "--clock", rng.choice([900, 1200, 1410]), "--no-power-limit"]
            L = models[model]
            f1, f2 = sorted(rng.sample(range(1, L + 1), 2))
            r1, r2 = sorted(rng.sample([4, 8, 16, 64], 2))
            tg = rng.choice(["q,v", "attention", "all", "o,down"])
            runs = {"full": [], "f1": ["--freeze", f1], "f2": ["--freeze", f2],
                    "r1": ["--finetune", "lora", "--lora-rank", r1, "--lora-targets", tg],
                    "r2": ["--finetune", "lora", "--lora-rank", r2, "--lora-targets", tg]}
            row = {}
            case = " ".join(map(str, base)) + " freeze %d/%d rank %d/%d %s" % (f1, f2, r1, r2, tg)
            with self.subTest(case=case):
                for k, extra in runs.items():
                    sw = rows_of(cli("sweep", *base, *extra, "--quiet").stdout)
                    pr = rows_of(cli("predict", *base, *extra, "--format", "csv",
                                     "--quiet").stdout)
                    self.assertEqual(len(sw), 1, case)
                    for col in ("time_ms", "energy_j", "memory_gb", "hardware_tflop",
                                "trainable_params_m"):
                        self.assertEqual(sw[0][col], pr[0][col], "%s %s: %s" % (k, col, case))
                    row[k] = sw[0]
                state = lambda r: num(r, "master_gb") + num(r, "grads_gb") + num(r, "optimizer_gb")
                # (LoRA's backward can take longer than full training's where
                # launches set the pace: each adapter adds six kernels to it)
                for a, b in (("f1", "full"), ("f2", "f1"), ("r1", "full"), ("r2", "full")):
                    cols = ("time_bwd_ms", "trainable_params_m") if a[0] == "f" else \
                        ("trainable_params_m",)
                    for col in cols:
                        self.assertLess(num(row[a], col), num(row[b], col),
                                        "%s %s above %s's: %s" % (a, col, b, case))
                    self.assertLessEqual(state(row[a]), state(row[b]), "%s: %s" % (a, case))
                # freezing stops the backward: less hardware work; LoRA adds
                # its adapters' forward but drops every base weight gradient
                for a, b in (("f1", "full"), ("f2", "f1"), ("r1", "full"), ("r1", "r2")):
                    self.assertLess(num(row[a], "hardware_tflop"), num(row[b], "hardware_tflop"),
                                    "%s hardware_tflop not below %s's: %s" % (a, b, case))
                self.assertLess(num(row["r1"], "trainable_params_m"),
                                num(row["r2"], "trainable_params_m"), case)
                # LoRA's weights: the model's plus its adapters' at the dtype
                # (a ViT's LoRA trains its classifier too, which it has anyway)
                eb = {"bf16": 2, "fp16": 2, "fp32": 4}[base[base.index("--dtype") + 1]]
                added = num(row["r1"], "weights_gb") - num(row["full"], "weights_gb")
                if model != "vit-large":
                    self.assertAlmostEqual(added, num(row["r1"], "trainable_params_m") * eb / 1e3,
                                           delta=0.0011, msg=case)
                self.assertEqual(row["f1"]["weights_gb"], row["full"]["weights_gb"], case)
        print("fine-tuning: 4 cases, 5 runs each", flush=True)

    def test_finetune_everywhere(self):
        """a fine-tuning means one thing in every command: a setting that
        makes it meaningless is a usage error naming its option in predict,
        sweep, compare and cluster alike, and cluster's LoRA, like the single
        GPU's, keeps the base's weights and drops their gradients and state"""
        rng = random.Random(SEED + 92)
        bad = [["--lora-rank", 8], ["--lora-targets", "q"], ["--finetune", "lora", "--freeze", 1],
               ["--finetune", "lora", "--lora-targets", "gate"], ["--freeze", 99]]
        cmds = [["predict", "--gpu", "h100-sxm-80gb"], ["sweep", "--gpu", "h100-sxm-80gb"],
                ["compare", "--gpu", "h100-sxm-80gb,a100-sxm-80gb"], ["cluster", "--system", "dgx-h100"]]
        for opts in rng.sample(bad, 3):
            for cmd in cmds:
                if cmd[0] == "cluster" and "--freeze" in opts:
                    continue  # refused outright (not modelled): test_cli
                p = cli(*cmd, "--model", "gpt2", "--mode", "train", *opts, check=False)
                opt = [o for o in opts if str(o).startswith("--") and o != "--finetune"][0]
                self.assertEqual(p.returncode, 2, "%s %s: %s" % (cmd[0], opts, p.stderr))
                self.assertIn(opt, p.stderr, "%s %s" % (cmd[0], opts))
        for _ in range(2):
            model = rng.choice(["gpt3-1.3b", "llama-3-8b", "opt-1.3b"])
            args = ["--system", "dgx-h100", "--model", model, "--mode", "train", "--tp", 2,
                    "--pp", 2, "--dp", 2, "--global-batch", 16, "--seq", rng.choice([512, 2048]),
                    "--zero", rng.choice([0, 1]), "--format", "csv", "--all"]
            tg = rng.choice(["attention", "all", "q,v"])
            full = rows_of(cli("cluster", *args).stdout)[0]
            lora = rows_of(cli("cluster", *args, "--finetune", "lora", "--lora-targets", tg,
                               "--lora-rank", rng.choice([8, 64])).stdout)[0]
            what = " ".join(map(str, args)) + " " + tg
            self.assertLess(num(lora, "memory_gb"), num(full, "memory_gb"), what)
            self.assertLess(num(lora, "dp_comm_exposed_s"), num(full, "dp_comm_exposed_s") + 1e-4,
                            what)

    def test_interval_residual_by_bucket(self):
        """an interval takes the fit's residual on what the run spends its
        time on: a run all in tensor-core GEMMs, on the preset's own board
        (--board same: no spread between boards), has a time interval of
        z times at least 0.98 of the preset's sigma_time_log_gemm_tc, below
        z times its global sigma_time_log, the same in predict and sweep
        (issue 79: one global residual priced the H200's bf16 prefill by its
        fp32 GEMMs' and norms' errors, -31%/+51% at 95%)"""
        rng = random.Random(SEED + 99)
        z = 1.959963985
        for _ in range(2):
            gpu = rng.choice(["h100-sxm-80gb", "h200-sxm-141gb"])
            text = cli("presets", "show", gpu).stdout
            sig = {m.group(1): float(m.group(2)) for m in
                   re.finditer(r"^sigma_time_log(\w*) = ([0-9.eE+-]+)", text, re.M)}
            self.assertLess(sig["_gemm_tc"], 0.9 * sig[""], gpu)  # what makes the check bite
            m, n, k = (rng.choice([4096, 8192]) for _ in range(3))
            path = os.path.join(self.tmp, "gemm-iv.json")
            with open(path, "w") as f:
                f.write('[[{"batch": 1, "dimM": %d, "dimN": %d, "dimK": %d, "precM": "bf16", '
                        '"precA": "fp32", "useTensorCore": true}, ["gemm", "tc", "bf16_fp32"]]]\n'
                        % (m, n, k))
            args = ["--gpu", gpu, "--trace", path, "--clock", "%d" % rng.choice([900, 1200, 1410]),
                    "--no-power-limit", "--interval", "95", "--board", "same"]
            what = " ".join(args)
            p = rows_of(cli("predict", *args, "--format", "csv", "--quiet").stdout)[0]
            sw = rows_of(cli("sweep", *args, "--quiet").stdout)[0]
            for key in ("time_lo_ms", "time_hi_ms"):
                self.assertEqual(sw[key], p[key], what)
            w = math.log(num(p, "time_hi_ms") / num(p, "time_ms")) / z
            self.assertGreaterEqual(w, 0.98 * sig["_gemm_tc"] - 1e-4, what)
            self.assertLess(w, sig[""], what)

    def test_fp8_cycle_held(self):
        """a busy fp8 tensor-core cycle draws more than a bf16 one where the
        board's data say so (tc_fp8_power_ratio, fitted on the H100's GEMM
        pairs and carried by the transfer to the H200 and B200): a GEMM held
        by one power limit runs at a lower clock in fp8 than in bf16, in
        predict and in sweep alike, as the H100 holds 8192^3 at 1324 against
        1485 MHz (issue 79: the per-operation rule alone put the fp8 cycle at
        0.94 of a bf16 one, which would hold fp8 higher)"""
        rng = random.Random(SEED + 98)
        for _ in range(3):
            gpu = rng.choice(["h100-sxm-80gb", "h200-sxm-141gb", "b200"])
            m, n, k = (rng.choice([4096, 8192, 16384]) for _ in range(3))
            cap = rng.choice([450, 550, 700]) if gpu != "b200" else rng.choice([700, 850, 1000])
            what = "%s %dx%dx%d under %d W" % (gpu, m, n, k, cap)
            clocks = {}
            for dt in ("bf16", "fp8"):
                path = os.path.join(self.tmp, "gemm-%s.json" % dt)
                with open(path, "w") as f:
                    f.write('[[{"batch": 1, "dimM": %d, "dimN": %d, "dimK": %d, "precM": "%s", '
                            '"precA": "fp32", "useTensorCore": true}, ["gemm", "tc", "%s_fp32"]]]\n'
                            % (m, n, k, dt, dt))
                args = ["--gpu", gpu, "--trace", path, "--clock", "max", "--set",
                        "power_limit_w=%d" % cap]
                p = rows_of(cli("predict", *args, "--format", "csv", "--quiet").stdout)[0]
                sw = rows_of(cli("sweep", *args, "--quiet").stdout)
                self.assertEqual(len(sw), 1, what)
                self.assertEqual(sw[0]["effective_clock_mhz"], p["effective_clock_mhz"], what)
                self.assertEqual(sw[0]["time_ms"], p["time_ms"], what)
                clocks[dt] = (num(p, "effective_clock_mhz"), p["throttled"])
            if clocks["bf16"][1] == "1" and clocks["fp8"][1] == "1":
                self.assertLess(clocks["fp8"][0], clocks["bf16"][0], what)

    def test_precision_math(self):
        """a precision runs where the GPU has its math and nowhere else, the
        same on every command: fp8 (an 8-bit checkpoint's W8A8 inference)
        on Hopper and Blackwell gives a feasible row holding less memory
        than bf16's; fp8 on an A100 and bf16 on a V100 give predict's and
        sweep's rows empty with feasible 0 and compare's a reason (issue
        79: predict and sweep refused fp8, and the V100's bf16 rows were
        priced)"""
        rng = random.Random(SEED + 95)
        for _ in range(3):
            model = rng.choice(["gpt2", "qwen2-1.5b", "opt-1.3b", "llama-3-8b"])
            shape = ["--model", model, "--batch", rng.choice([1, 4]),
                     "--seq", rng.choice([128, 512]), "--mode", rng.choice(["prefill", "decode"]),
                     "--attention", rng.choice(["eager", "flash"]), "--clock", 900]
            if "decode" in shape:
                shape += ["--gen", 4]
            what = " ".join(map(str, shape))
            has = rng.choice(["h100-sxm-80gb", "h200-sxm-141gb", "b200"])
            rows = {dt: rows_of(cli("predict", "--gpu", has, *shape, "--dtype", dt, "--format",
                                    "csv", "--quiet").stdout)[0] for dt in ("fp8", "bf16")}
            self.assertEqual(rows["fp8"]["feasible"], "1", "%s fp8: %s" % (has, what))
            self.assertLess(num(rows["fp8"], "memory_gb"), num(rows["bf16"], "memory_gb"),
                            "%s fp8 memory: %s" % (has, what))
            for gpu, dt in (("a100-pcie-40gb", "fp8"), ("v100-sxm2-32gb", "bf16")):
                p = cli("predict", "--gpu", gpu, *shape, "--dtype", dt, "--format", "csv")
                self.assertIn("cannot run this case", p.stderr, "%s %s: %s" % (gpu, dt, what))
                sw = rows_of(cli("sweep", "--gpu", "%s,%s" % (gpu, has), *shape, "--dtype", dt,
                                 "--quiet").stdout)
                for r in rows_of(p.stdout) + [r for r in sw if r["gpu"] == gpu]:
                    self.assertEqual((r["feasible"], r["time_ms"], r["energy_j"]), ("0", "", ""),
                                     "%s %s: %s" % (gpu, dt, what))
                self.assertTrue(all(r["time_ms"] for r in sw if r["gpu"] == has),
                                "%s's rows beside it: %s" % (has, what))
                c = cli("compare", "--gpu", "%s,%s" % (has, gpu), *shape, "--dtype", dt,
                        "--format", "csv")
                self.assertIn("%s cannot run this case" % gpu, c.stderr, what)

    def test_cuda_core_gemms(self):
        """a GEMM on CUDA cores (fp32 without TF32) is cuBLAS's SGEMM or gemv,
        which has no stream-K: every fp32 row is the same whether the GPU's
        gemm_stream_k is on or off, on sweep and predict (issue 79: stream-K
        spread the H200's fp32 skinny GEMM over every SM, 3x too fast)"""
        rng = random.Random(SEED + 96)
        for _ in range(3):
            gpu = rng.choice(["h100-sxm-80gb", "h200-sxm-141gb"])
            args = ["--gpu", gpu, "--model", rng.choice(["gpt2", "opt-1.3b", "qwen2-1.5b"]),
                    "--batch", rng.choice([1, 2, 16]), "--seq", rng.choice([1, 16, 128]),
                    "--dtype", "fp32", "--mode", rng.choice(["prefill", "train", "decode"]),
                    "--clock", "%d" % rng.choice([510, 900, 1410]), "--no-power-limit"]
            if "decode" in args:
                args += ["--gen", 3]
            what = " ".join(map(str, args))
            rows = rows_of(cli("sweep", *args, "--set", "gemm_stream_k=0,1", "--quiet").stdout)
            self.assertEqual(len(rows), 2, what)
            for k in ("time_ms", "energy_j"):
                self.assertEqual(rows[0][k], rows[1][k], "%s with and without stream-K: %s"
                                 % (k, what))
            p = rows_of(cli("predict", *args, "--set", "gemm_stream_k=0", "--format", "csv",
                            "--quiet").stdout)[0]
            self.assertEqual(p["time_ms"], rows[0]["time_ms"], what)

    def test_intervals_nested(self):
        """prediction intervals mean one thing on predict and sweep: each
        holds its centre, a higher level holds a lower one's (every board
        factor is taken at the level's own quantile, so a hinge only widens
        a wider interval), and sweep's match predict's at the same point"""
        rng = random.Random(SEED + 84)
        for _ in range(3):
            gpu = rng.choice(["a100-pcie-40gb", "h100-sxm-80gb", "h200-sxm-141gb"])
            mode = rng.choice(["prefill", "train", "decode"])
            args = ["--gpu", gpu, "--model", rng.choice(["gpt2", "qwen2-1.5b", "opt-1.3b"]),
                    "--batch", rng.choice([1, 4, 16]), "--seq", rng.choice([64, 512, 2048]),
                    "--mode", mode, "--clock", rng.choice([510, 900, 1200, 1410]),
                    "--format", "csv"]
            if mode == "decode":
                args += ["--gen", 8]
            if rng.random() < 0.5:  # within every board's range: A100 PCIe 150-250 W
                args += ["--set", "power_limit_w=%d" % {"a100-pcie-40gb": rng.choice([150, 200]),
                                                        }.get(gpu, rng.choice([200, 300, 450]))]
            what = " ".join(map(str, args))
            rows = {}
            for lv in (50, 80, 95):
                rows[lv] = rows_of(cli("predict", *args, "--interval", lv).stdout)[0]
            for q, u in (("time", "ms"), ("power", "w"), ("energy", "j")):
                c = num(rows[95], "%s_%s" % (q, u))
                lo_prev, hi_prev = c, c
                for lv in (50, 80, 95):
                    lo, hi = num(rows[lv], "%s_lo_%s" % (q, u)), num(rows[lv], "%s_hi_%s" % (q, u))
                    self.assertLessEqual(lo, lo_prev * (1 + 1e-9), "%s %d%%: %s" % (q, lv, what))
                    self.assertGreaterEqual(hi, hi_prev * (1 - 1e-9), "%s %d%%: %s" % (q, lv, what))
                    lo_prev, hi_prev = lo, hi
            # no board runs faster than the same work at its top clock unheld,
            # or slower than at its lowest, each known to its own interval (the
            # H200's residual scatter and board spread in quadrature once put a
            # capped prefill's lower bound under its top clock's own)
            g = gpus()[gpu]
            base, skip = [], False
            for a in args:  # without the clock and the cap
                if skip or a in ("--clock", "--set"):
                    skip = not skip
                    continue
                base.append(a)
            for lv in (50, 95):
                for board in ("same", "other"):
                    here = rows_of(cli("predict", *args, "--interval", lv, "--board",
                                       board).stdout)[0]
                    ends = [rows_of(cli("predict", *base, "--clock", "%g" % f, "--no-power-limit",
                                        "--interval", lv, "--board", board).stdout)[0]
                            for f in (g["fmax"], g["fmin"])]
                    lo, hi = num(here, "time_lo_ms"), num(here, "time_hi_ms")
                    self.assertGreaterEqual(lo, num(ends[0], "time_lo_ms") * (1 - 1e-6),
                                            "time_lo_ms %g under the unheld top clock's own %s "
                                            "(%d%%, board %s): %s" % (lo, ends[0]["time_lo_ms"],
                                                                      lv, board, what))
                    # a row the cap holds may end slower: a board held by its
                    # limit drops below the lowest clock's pace (clamped there,
                    # the 95% intervals cover 78.0% of H100 board 2's 41 rows
                    # for time, not 100.0%: data/h100-vm-2026-11)
                    if here.get("throttled") != "1":
                        self.assertLessEqual(hi, num(ends[1], "time_hi_ms") * (1 + 1e-6),
                                             "time_hi_ms %g over the lowest clock's own %s (%d%%, "
                                             "board %s): %s" % (hi, ends[1]["time_hi_ms"], lv,
                                                                board, what))
            sw = rows_of(cli("sweep", *args, "--interval", 95).stdout)[0]
            for col in ("time_lo_ms", "time_hi_ms", "power_lo_w", "power_hi_w", "energy_lo_j",
                        "energy_hi_j"):
                self.assertEqual(sw[col], rows[95][col], "sweep against predict, %s: %s"
                                 % (col, what))
            if mode != "prefill" or "--set" in args:
                continue
            # validate, on a row of that point, draws the same interval
            r = rows[95]
            path = os.path.join(tempfile.mkdtemp(dir=self.tmp), "row.csv")
            with open(path, "w") as f:
                f.write("gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,"
                        "time_ms,energy_j,power_w,temp_c,stack\n%s,%s,%s,%s,%s,prefill,%s,%s,,%s,"
                        "%s,%s,,hf5\n" % (gpu, r["model"], r["batch"], r["seq"], r["dtype"],
                                          r["attention"], r["sm_clock_mhz"], r["time_ms"],
                                          r["energy_j"], r["power_w"]))
            v = rows_of(cli("validate", path, "--no-lomo", "--interval", 95, "--format",
                            "csv").stdout)[0]
            for q, u in (("time", "ms"), ("power", "w"), ("energy", "j")):
                for end in ("lo", "hi"):
                    want = num(r, "%s_%s_%s" % (q, end, u))
                    self.assertAlmostEqual(num(v, "predicted_%s_%s_%s" % (q, end, u)), want,
                                           delta=2e-4 * want, msg="validate, %s %s: %s"
                                           % (q, end, what))

    def test_host_fit_round_trip(self):
        """a host's per-phase costs survive the round trip: rows predict
        makes with a host that states its backward's and decode's costs are
        fitted back to them by calibrate from the host without them (the
        costs it did state kept in the file it writes, a bare op's
        included), and validate then scores those rows at no error"""
        rng = random.Random(SEED + 85)
        gpu = rng.choice(["h100-sxm-80gb", "a100-pcie-40gb"])
        L = round(rng.uniform(15, 35), 2)
        costs = {"launch_us": L, "op_launch_us": round(rng.uniform(8, 14), 2),
                 "train_launch_us": round(L * rng.uniform(1.0, 1.5), 2)}
        truth = dict(costs, backward_launch_us=round(costs["train_launch_us"] *
                                                     rng.uniform(1.2, 2.0), 2),
                     decode_launch_us=round(L * rng.uniform(0.45, 0.8), 2))
        d = tempfile.mkdtemp(dir=self.tmp)

        def host(name, kv):
            path = os.path.join(d, name + ".ini")
            with open(path, "w") as f:
                f.write("[host]\nid = %s\n" % name +
                        "".join("%s = %r\n" % item for item in kv.items()))
            return path
        t_ini, s_ini = host("truth", truth), host("start", costs)
        cases = [("prefill", None, None), ("train", "adamw", None), ("train", "none", None),
                 ("decode", None, 8), ("decode", None, 32)]
        lines = []
        for mode, opt, gen in cases:
            for clk in (990, 1410):
                a = ["--gpu", gpu, "--host", t_ini, "--model", "gpt2", "--batch", 1, "--seq", 8,
                     "--mode", mode, "--clock", clk, "--format", "csv"]
                a += ["--optimizer", opt, "--master-dtype", "none"] if opt else []
                a += ["--gen", gen] if gen else []
                r = rows_of(cli("predict", *a).stdout)[0]
                lines.append("%s,gpt2,1,8,bf16,%s,eager,%d,,%s,,,,%s,%s,%s,hf5" % (
                    gpu, mode, clk, r["time_ms"], gen or "", opt or "", "none" if opt else ""))
        rows = os.path.join(d, "rows.csv")
        with open(rows, "w") as f:
            f.write("gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,"
                    "time_ms,energy_j,power_w,temp_c,gen_tokens,optimizer,master_dtype,stack\n" +
                    "\n".join(lines) + "\n")
        out = os.path.join(d, "fitted.ini")
        what = "%s, truth %s" % (gpu, truth)
        cli("calibrate", "--gpu", gpu, rows, "--host", s_ini, "--fit",
            "host_backward_launch_us,host_decode_launch_us", "-o", out, "--quiet")
        got = {}
        with open(out) as f:
            for line in f:
                k, sep, v = line.partition(" = ")
                if sep and k in truth:
                    got[k] = float(v)
        for k, v in truth.items():
            tol = 0.03 * v if k in ("backward_launch_us", "decode_launch_us") else 1e-9 + 1e-6 * v
            self.assertIn(k, got, "%s not written: %s" % (k, what))
            self.assertAlmostEqual(got[k], v, delta=tol, msg="%s: %s" % (k, what))
        err = cli("validate", rows, "--gpu", gpu, "--host", out, "--no-lomo").stderr
        m = re.search(r"MAPE with [^\n]*?: time ([0-9.]+)%", err)
        self.assertIsNotNone(m, err[-500:])
        self.assertLess(float(m.group(1)), 1.0, what)


def python_kw(c):
    """A case's command-line arguments as wattlas.sweep keywords."""
    kw = {"gpu": c["gpu"], "clock": axis(c["clocks"]), "voltage_offset_mv": axis(c["voff"]),
          "set": {"power_limit_w": c["caps"], **c["set"]}}
    a = list(map(str, c["args"]))
    for i in range(0, len(a), 2):
        kw[a[i][2:].replace("-", "_")] = a[i + 1]
    return kw


if __name__ == "__main__":
    sys.exit(pyunit.main())
