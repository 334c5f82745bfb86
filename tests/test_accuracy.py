"""Accuracy bounds that do not come from the program's output.

The README's main accuracy figures (the accuracy table's DVFS, 900 MHz,
H100 database and H200 rows, the A100 SXM 500 W class on Perseus's stage
profiles and the A100 PCIe 80GB on Zeus's power-limit sweep, the H200
power-limit curve, and the cluster figures against their
papers) are computed here as test_readme computes
them (the same commands, through its helpers) and each held to a bound
written below: today's figure plus about one point (MAPE and regret in
points, the cluster figures in points of error against the published
number). A change that worsens a figure fails here with the figure's name,
whatever the README then says: test_readme keeps the text true, this keeps
the figures good. A bound is moved only with the change that earns it, in
the same commit, and never up to make a failing change pass.

Figures on ../shared/data skip, by name, without it; the ones on this
repository's own measurements (data/) and the published cluster tables
always run.
"""

import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_readme as R  # noqa: E402  (its commands, parsers and data paths)

# name -> bound. Today's figure is in the comment; the bound is about one
# point above it (regret and errors likewise).
BOUNDS = {
    # the A100 PCIe DVFS set (176 rows), in sample; energy-optimal clock regret
    "dvfs in-sample time %": 4.7,        # 3.67
    "dvfs in-sample power %": 3.8,       # 2.80
    "dvfs in-sample energy %": 3.9,      # 2.91
    "dvfs in-sample worst regret %": 1.4,  # 0.40
    # left out by model (LOMO), pooled held-out
    "dvfs LOMO time %": 6.6,             # 5.56
    "dvfs LOMO power %": 6.1,            # 5.13
    "dvfs LOMO energy %": 5.3,           # 4.31
    "dvfs LOMO worst regret %": 11.6,    # 10.6
    "dvfs LOMO mean regret %": 1.7,      # 0.72
    # the 900 MHz file, not fitted on
    "900 MHz transformer rows time %": 6.5,   # 5.45
    "900 MHz transformer rows power %": 4.0,  # 3.00
    "900 MHz transformer rows energy %": 6.5,  # 5.50
    "900 MHz all rows time %": 7.3,      # 6.24
    "900 MHz all rows power %": 4.8,     # 3.74
    "900 MHz all rows energy %": 7.1,    # 6.09
    # the H100 SXM kernel database (make calibrate's set), in sample
    "H100 kernel database time %": 5.1,  # 4.03
    "H100 kernel database power %": 6.0,  # 4.94
    "H100 kernel database energy %": 5.5,  # 4.41
    # the same fit with every fifth kernel name held out (a GEMM, LayerNorm,
    # an upcast: 24 rows), scored on them
    "H100 kernel database held-out time %": 7.7,     # 6.67
    "H100 kernel database held-out power %": 14.2,   # 13.13
    "H100 kernel database held-out energy %": 8.6,   # 7.60
    # the H200: the shipped fit (make calibrate: --fit board, every fifth
    # kernel name held out), in sample and held out; calibrate --gpu
    # h200-sxm-141gb on all 109 rows (the issue-40 recipe: a board fit from
    # the shipped preset), in sample; the whole-model rows on that
    # calibration and on the shipped preset (not fitted on)
    "H200 shipped fit in-sample time %": 18.1,     # 17.07
    "H200 shipped fit in-sample power %": 11.7,    # 10.68
    "H200 shipped fit in-sample energy %": 16.0,   # 14.99
    "H200 shipped fit held-out time %": 4.6,       # 3.60
    "H200 shipped fit held-out power %": 8.7,      # 7.70
    "H200 shipped fit held-out energy %": 7.0,     # 6.00
    "H200 kernels board fit time %": 14.5,    # 13.44
    "H200 kernels board fit power %": 10.6,   # 9.52
    "H200 kernels board fit energy %": 13.9,  # 12.87
    "H200 whole models calibrated time %": 13.3,    # 12.22
    "H200 whole models calibrated power %": 10.6,   # 9.56
    "H200 whole models calibrated energy %": 8.8,   # 7.71
    "H200 whole models preset time %": 13.0,   # 11.91 (12.22 transferred from the H100)
    "H200 whole models preset power %": 9.8,   # 8.73 (30.43 transferred)
    "H200 whole models preset energy %": 9.1,  # 8.09 (13.58 transferred)
    # the shipped preset as it comes, on its host class (server-2023, whose
    # training step costs 1.18x a forward's kernel: scripts/host_phase_ratio.sh train):
    # issue 61's bar, 10/8/8 (12.38/9.15/8.29 before the class had a
    # training cost)
    "H200 whole models shipped time %": 10.0,    # 9.80
    "H200 whole models shipped power %": 8.0,    # 7.16
    "H200 whole models shipped energy %": 8.0,   # 7.14
    # this repository's H200 power-limit curve (data/h200-vm-2026-11-27):
    # board C holds a throttled step at 0.93 of the limit where the shared
    # board the preset is now fitted to held 0.76-0.87, so it is the preset
    # that moved (transferred from the H100 board, which held 0.99-1.01:
    # 3.96/5.24/5.07). The bounds moved with make calibrate's H200 fit.
    "H200 power limits time %": 6.0,     # 4.97
    # the server class's training cost (1.18x a forward's kernel) made its
    # host-bound steps slower and cooler: time 6.12 -> 4.97, energy 13.68 ->
    # 12.12, power 8.02 -> 9.60
    "H200 power limits power %": 10.6,   # 9.60
    "H200 power limits energy %": 13.1,  # 12.12
    # the A100 SXM of the 500 W class, few-shot on Perseus's stage profiles
    # (GPT-3 175B fitted, BLOOM 176B held out; time relative)
    "A100 500 W Perseus GPT-3 time %": 1.4,    # 0.38
    "A100 500 W Perseus GPT-3 power %": 1.8,   # 0.82
    "A100 500 W Perseus GPT-3 energy %": 1.7,  # 0.70
    "A100 500 W Perseus BLOOM time %": 1.7,    # 0.61
    "A100 500 W Perseus BLOOM power %": 6.3,   # 5.25
    "A100 500 W Perseus BLOOM energy %": 6.3,  # 5.28
    # the A40, its board's power fitted to Perseus's A40 stage profiles
    # (GPT-3 175B fitted, BLOOM 176B held out; time relative; transferred,
    # 7.94/30.05/30.15 and 7.34/28.64/28.75)
    "A40 Perseus GPT-3 time %": 5.7,     # 4.66
    "A40 Perseus GPT-3 power %": 2.6,    # 1.58
    "A40 Perseus GPT-3 energy %": 6.1,   # 5.12
    "A40 Perseus BLOOM time %": 4.2,     # 3.19
    "A40 Perseus BLOOM power %": 5.6,    # 4.63
    "A40 Perseus BLOOM energy %": 6.0,   # 5.01
    # the A100 PCIe 80GB, few-shot on Zeus's power-limit sweep (BLOOM 3B
    # fitted, GPT-3 XL held out; time relative), and the cluster's
    # t(175 W)/t(300 W) on Zeus's setup against GPT-3 XL's (issue 61's bar:
    # 10%), with its least-energy limit (|W| off: one 25 W step)
    "A100 80GB Zeus BLOOM time %": 2.2,     # 1.18
    "A100 80GB Zeus BLOOM power %": 1.9,    # 0.84
    "A100 80GB Zeus BLOOM energy %": 2.7,   # 1.67
    "A100 80GB Zeus GPT-3 XL time %": 3.7,    # 2.69
    "A100 80GB Zeus GPT-3 XL power %": 1.7,   # 0.70
    "A100 80GB Zeus GPT-3 XL energy %": 4.2,  # 3.14
    "Zeus t175/t300 error %": 4.8,            # 3.79 (1.702 against 1.769)
    "Zeus optimal limit error W": 25,         # 25 (225 against 250)
    # a GPT-3 175B layer's forward and backward (--optimizer none) against
    # the profiles' stage: t855/t1410 (|error| %) and the least-energy clock
    # (|MHz| off; issue 61's bar is 60)
    "Perseus layer t855/t1410 error %": 4.1,       # 2.6 (1.565 against 1.525)
    "Perseus layer optimal clock error MHz": 45,   # 30 (1050 against 1080)
    # cluster, against published tables (mean and worst |error|)
    "Korthikanti mean error %": 6.7,     # 5.7
    "Korthikanti worst error %": 10.3,   # 9.3
    "Narayanan mean error %": 3.9,       # 2.9
    "Narayanan worst error %": 9.6,      # 8.6
    # Llama 3.1 405B (flash, tp8 pp16 vp2) TFLOP/s a GPU against Meta's 430 and 400
    "Llama 405B 8K GPUs TF/GPU error %": 7.3,    # +6.3 (457)
    "Llama 405B 16K GPUs TF/GPU error %": 5.0,   # -4.0 (384)
    # DeepSeek-V3 on 2048 H800s, --ep-overlap, against the 1543 tokens/s a GPU
    # its published 180K GPU-hours per trillion tokens imply
    "DeepSeek-V3 tokens/s/GPU error %": 6.3,     # -5.1 (1465)
}


def have_shared():
    return os.path.isdir(R.MEAS)


def f3(groups):
    return [float(x) for x in groups]


def fig_dvfs():
    r = R.w(f"validate {R.DVFS} --lomo")
    t, p, e = f3(R.mape(r.err))
    worst, _ = R.regret(r.err)
    m = re.search(r"pooled held-out MAPE \(176 rows\): time ([0-9.]+)%\s+power ([0-9.]+)%\s+"
                  r"energy ([0-9.]+)%; held-out regret worst ([0-9.]+)%, mean ([0-9.]+)%", r.err)
    if not m:
        raise AssertionError(f"no leave-one-model-out line in:\n{r.err[-3000:]}")
    lt, lp, le, lw, lm = f3(m.groups())
    return {"dvfs in-sample time %": t, "dvfs in-sample power %": p,
            "dvfs in-sample energy %": e, "dvfs in-sample worst regret %": float(worst),
            "dvfs LOMO time %": lt, "dvfs LOMO power %": lp, "dvfs LOMO energy %": le,
            "dvfs LOMO worst regret %": lw, "dvfs LOMO mean regret %": lm}


def tpe(name, cmd):
    """{name time %, name power %, name energy %} from a validate command's MAPE line."""
    t, p, e = f3(R.mape(R.w(cmd).err))
    return {f"{name} time %": t, f"{name} power %": p, f"{name} energy %": e}


def fig_900mhz():
    tf = R.subset("a100-pcie-40gb-900mhz.csv", lambda l: "prefill" in l, "900tf.csv")
    return {**tpe("900 MHz transformer rows", f"validate {tf} --no-lomo"),
            **tpe("900 MHz all rows", f"validate {R.MHZ900} --no-lomo")}


def fig_h100_db():
    _, t, p, e = R.calibrate_figures(R.h100_holdout().err, "held-out")
    return {**tpe("H100 kernel database",
                  "validate ../shared/data/measurements/h100-sxm-80gb-kernels.csv "
                  "--traces ../shared/data/traces --no-lomo"),
            **dict(zip([f"H100 kernel database held-out {k} %" for k in ("time", "power", "energy")],
                       f3((t, p, e))))}


def fig_h200():
    (_, t, p, e), (_, ht, hp, he) = R.make_calibrate_h200()
    d = tempfile.mkdtemp(prefix="wattlas-accuracy-")
    ini = os.path.join(d, "h200.ini")
    c = R.w("calibrate --gpu h200-sxm-141gb ../shared/data/measurements/h200-sxm-141gb-kernels.csv "
            f"--traces ../shared/data/traces -o {ini}")
    _, ct, cp, ce = R.calibrate_figures(c.err, "in-sample after")
    host = "--host ../shared/data/hosts/h200-vm-host.ini"
    rows = "../shared/data/measurements/h200-sxm-141gb-models.csv"
    return {**dict(zip([f"H200 shipped fit in-sample {k} %" for k in ("time", "power", "energy")],
                       f3((t, p, e)))),
            **dict(zip([f"H200 shipped fit held-out {k} %" for k in ("time", "power", "energy")],
                       f3((ht, hp, he)))),
            **dict(zip([f"H200 kernels board fit {k} %" for k in ("time", "power", "energy")],
                       f3((ct, cp, ce)))),
            **tpe("H200 whole models calibrated", f"validate --gpu {ini} {rows} --no-lomo {host}"),
            **tpe("H200 whole models preset", f"validate {rows} --no-lomo {host}"),
            **tpe("H200 whole models shipped", f"validate {rows} --no-lomo")}


def fig_a100_500w():
    rows = R.perseus_rows("a100-sxm-80gb-500w")
    gpt3 = R.subset(rows, lambda l: ",gpt3-175b," in l, "perseus-gpt3.csv")
    bloom = R.subset(rows, lambda l: ",bloom-176b," in l, "perseus-bloom.csv")
    rm, bm = R.perseus_measured()
    r5, b5 = R.perseus_predicted("a100-sxm-80gb-500w")
    return {**tpe("A100 500 W Perseus GPT-3", f"validate {gpt3} --no-lomo"),
            **tpe("A100 500 W Perseus BLOOM", f"validate {bloom} --no-lomo"),
            "Perseus layer t855/t1410 error %": abs(r5 / rm - 1) * 100,
            "Perseus layer optimal clock error MHz": abs(b5 - bm)}


def fig_a40():
    rows = R.perseus_rows("a40-48gb", source="a40")
    gpt3 = R.subset(rows, lambda l: ",gpt3-175b," in l, "perseus-a40-gpt3.csv")
    bloom = R.subset(rows, lambda l: ",bloom-176b," in l, "perseus-a40-bloom.csv")
    return {**tpe("A40 Perseus GPT-3", f"validate {gpt3} --no-lomo"),
            **tpe("A40 Perseus BLOOM", f"validate {bloom} --no-lomo")}


def fig_a100_80gb():
    rows = R.zeus_rows()
    bloom = R.subset(rows, lambda l: ",bloom-3b," in l, "zeus-bloom.csv")
    gpt3 = R.subset(rows, lambda l: ",gpt3-1.3b," in l, "zeus-gpt3.csv")
    rm, bm = R.zeus_measured()
    rp, bp = R.zeus_predicted()
    return {**tpe("A100 80GB Zeus BLOOM", f"validate {bloom} --no-lomo"),
            **tpe("A100 80GB Zeus GPT-3 XL", f"validate {gpt3} --no-lomo"),
            "Zeus t175/t300 error %": abs(rp / rm - 1) * 100,
            "Zeus optimal limit error W": abs(bp - bm)}


def fig_h200_power_limits():
    return tpe("H200 power limits",
               "validate data/h200-vm-2026-11-27/measurements/h200-sxm-141gb-power-limits.csv "
               "--no-lomo")


def summary(out):
    m = re.search(r"mean \|error\| ([0-9.]+)%, worst ([0-9.]+)%", out)
    if not m:
        raise AssertionError(f"no summary line in:\n{out[-3000:]}")
    return f3(m.groups())


def fig_korthikanti():
    mean, worst = summary(R.script("scripts/korthikanti.sh"))
    return {"Korthikanti mean error %": mean, "Korthikanti worst error %": worst}


def fig_narayanan():
    mean, worst = summary(R.script("scripts/narayanan.sh"))
    return {"Narayanan mean error %": mean, "Narayanan worst error %": worst}


def fig_llama_405b():
    p2 = ",".join(["3"] + ["4"] * 30 + ["3"])
    out = {}
    for n, gpus, paper in ((1024, "8K", 430.0), (2048, "16K", 400.0)):
        r = R.w(R.LLAMA405.format(n=n, vp=2, p=p2) + " --attention flash").row
        out[f"Llama 405B {gpus} GPUs TF/GPU error %"] = \
            abs(float(r["tflops_per_gpu"]) / paper - 1) * 100
    return out


def fig_deepseek():
    cmd = ("cluster --system hgx-h800 --nodes 256 --model deepseek-v3 --tp 1 --pp 16 --ep 64 "
           "--global-batch 15360 --seq 4096 --zero 1 --partition balanced --recompute selective "
           "--dtype fp8 --format csv --ep-overlap --all")  # 126 GB by the memory model
    r = R.w(cmd).row
    # 180K H800 GPU-hours per trillion tokens: 1e12 / (180e3 * 3600) tokens/s a GPU
    published = 1e12 / (180e3 * 3600)
    return {"DeepSeek-V3 tokens/s/GPU error %":
            abs(float(r["tokens_per_s"]) / 2048 / published - 1) * 100}


# (function, needs ../shared)
FIGURES = [(fig_dvfs, True), (fig_900mhz, True), (fig_h100_db, True), (fig_h200, True),
           (fig_a100_500w, True), (fig_a40, True), (fig_a100_80gb, True),
           (fig_h200_power_limits, False), (fig_korthikanti, False), (fig_narayanan, False),
           (fig_llama_405b, False), (fig_deepseek, False)]


class Accuracy(unittest.TestCase):
    seen, skipped = set(), []

    def test_zz_every_bound_checked(self):
        """every bound is some figure's (runs last: unittest sorts by name)"""
        if self.skipped:
            self.skipTest("not every figure ran: " + ", ".join(self.skipped))
        self.assertEqual(sorted(set(BOUNDS) - self.seen), [], "bounds no figure checks")


def _make(fn, shared):
    def test(self):
        if shared and not have_shared():
            Accuracy.skipped.append(fn.__name__[4:])
            self.skipTest(f"{fn.__name__[4:]}: no {R.MEAS} (shared/data not found)")
        figs = fn()
        over = []
        for name, value in figs.items():
            self.assertIn(name, BOUNDS, f"{name}: a figure with no bound")
            Accuracy.seen.add(name)
            print(f"  {name}: {value:.2f} (bound {BOUNDS[name]})")
            if not value <= BOUNDS[name]:
                over.append(f"{name}: {value:.2f}, over its bound {BOUNDS[name]}")
        if over:
            self.fail("worse than the bound:\n  " + "\n  ".join(over))
    test.__doc__ = f"accuracy bounds: {fn.__name__[4:]}"
    return test


for _fn, _shared in FIGURES:
    setattr(Accuracy, "test_" + _fn.__name__[4:], _make(_fn, _shared))


if __name__ == "__main__":
    import pyunit
    sys.exit(pyunit.main())
