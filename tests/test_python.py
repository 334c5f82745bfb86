"""Tests of the wattlas Python package against the command line: the same
rows digit for digit, the same errors, presets, numpy and pandas views.
Run by make check (build/tests/test_python); prints a cmocka-style summary
line for tests/run.sh."""

import csv
import io
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import wattlas

WATTLAS = os.environ.get("WATTLAS_BIN", "bin/wattlas")


def cli(*args):
    """stdout, stderr and the exit status of the command line."""
    p = subprocess.run([WATTLAS, *args], capture_output=True, text=True)
    return p.stdout, p.stderr, p.returncode


def parse_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def same_cell(py, text):
    """A Python value against the command line's CSV cell."""
    if text == "":
        return py is None
    if isinstance(py, bool):
        return text == ("1" if py else "0") or text == ("true" if py else "false")
    if isinstance(py, (int, float)):
        return float(text) == float(py)
    return str(py) == text


class Predict(unittest.TestCase):
    ARGS = dict(gpu="a100-pcie-40gb", model="gpt2", batch=8, seq=512, dtype="bf16")
    CLI = ["--gpu", "a100-pcie-40gb", "--model", "gpt2", "--batch", "8", "--seq", "512",
           "--dtype", "bf16"]

    def test_text_equals_cli(self):
        """the CSV text is the command line's, byte for byte"""
        for clocks, cl in (([900, 1410], "900,1410"), (range(510, 1411, 90), "510:1410:90")):
            out, _, rc = cli("predict", *self.CLI, "--clock", cl, "--format", "csv")
            self.assertEqual(rc, 0)
            self.assertEqual(wattlas.predict(**self.ARGS, clock=clocks, fmt="csv"), out)

    def test_rows_equal_cli(self):
        """the rows hold the command line's numbers, digit for digit"""
        out, _, rc = cli("predict", *self.CLI, "--mode", "train", "--clock", "1005,1410",
                         "--format", "csv")
        self.assertEqual(rc, 0)
        want = parse_csv(out)
        rows = wattlas.predict(**self.ARGS, mode="train", clock=[1005, 1410])
        self.assertEqual(len(rows), len(want))
        # the command line's columns, and which coefficients each row ran on
        self.assertEqual(rows.columns, list(want[0]) + ["coefficients"])
        self.assertEqual(rows[0]["coefficients"], "measured")
        for r, w in zip(rows, want):
            for c in want[0]:
                self.assertTrue(same_cell(r[c], w[c]), f"{c}: {r[c]!r} against {w[c]!r}")
        # the CSV the rows give is the command line's, byte for byte
        self.assertEqual(rows.to_csv(), out)
        # the maximum clock when none is given
        self.assertEqual([r["sm_clock_mhz"] for r in wattlas.predict(**self.ARGS)], [1410])

    def test_ctrl_c(self):
        """Ctrl-C stops a long sweep while the library runs (it polls a stop
        flag, as the command line does), not after it returns, and leaves
        Python's handler in place"""
        import signal
        import threading
        import time
        if threading.current_thread() is not threading.main_thread():
            self.skipTest("signals reach the main thread only")
        # Python leaves SIGINT ignored when it started so (a shell's
        # background job, as a parallel test run may be): what a user's
        # interactive session has is Python's own handler
        old = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.addCleanup(signal.signal, signal.SIGINT, old)
        t0 = time.time()
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                # about 20 s of work on one thread
                wattlas.sweep(model="gpt3-1.3b", batch=1, seq=1024, clock="210:1410:15",
                              dtype=["bf16", "fp16", "fp32"], threads=1,
                              set={"sms": list(range(80, 140)),
                                   "dram_bw_gbs": list(range(1500, 3500, 20))})
        finally:
            timer.cancel()
        self.assertLess(time.time() - t0, 5)
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        # and the next call runs whole
        self.assertEqual(len(wattlas.predict(**self.ARGS)), 1)

    def test_errors(self):
        """bad values raise wattlas.Error naming the keyword, as the command
        line names its option, with the same text"""
        with self.assertRaises(wattlas.Error) as e:
            wattlas.predict(**dict(self.ARGS, batch=0))
        _, err, rc = cli("predict", *self.CLI[:4], "--batch", "0")
        self.assertEqual(rc, 2)
        self.assertEqual(e.exception.source, "batch")
        self.assertIn(e.exception.text, err)
        self.assertTrue(str(e.exception).startswith("batch"))
        with self.assertRaises(wattlas.Error) as e:
            wattlas.predict(**self.ARGS, clock=5000)
        self.assertIn("clock", str(e.exception))
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**dict(self.ARGS, gpu="no-such-gpu"))
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**dict(self.ARGS, gpu=["a100-pcie-40gb", "h100-sxm-80gb"]))
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**dict(self.ARGS, seq=float("nan")))
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**self.ARGS, clock=[])
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**self.ARGS, colour="red")
        with self.assertRaises(wattlas.Error):
            wattlas.predict(**self.ARGS, scope="kernel")
        # a list of lists is not flattened into one list
        for nested in ([[1, 2], [3]], [1, (2, 3)], [range(1, 3)]):
            with self.assertRaises(wattlas.Error) as e:
                wattlas.sweep(**dict(self.ARGS, batch=nested))
            self.assertIn("not a list of lists", str(e.exception))

    def test_output_over_input(self):
        """an output named as an input (or through a link to one), or as
        another output, raises before any work and leaves the input whole,
        as the command line refuses it (issue 77: calibrate('x.csv',
        out='x.csv') replaced the measurements with the preset)"""
        d = tempfile.mkdtemp(prefix="wattlas-py-alias-")
        try:
            src = os.path.join(d, "x.csv")
            with open(src, "w") as f:
                f.write("keep,me\n1,2\n")
            os.symlink("x.csv", os.path.join(d, "link.csv"))
            calls = [
                lambda: wattlas.calibrate(src, "a100-pcie-40gb", out=src),
                lambda: wattlas.calibrate(src, "a100-pcie-40gb",
                                          out=os.path.join(d, "link.csv")),
                lambda: wattlas.calibrate(src, "a100-pcie-40gb", fit="gpu,host",
                                          out=os.path.join(d, "a.ini"),
                                          host_out=os.path.join(d, "a.ini")),
                lambda: wattlas.learn(src, out=src),
                lambda: wattlas.merge([src], out=os.path.join(d, "link.csv")),
                lambda: wattlas.plot("energy-freq", src, out=src),
            ]
            for call in calls:
                with self.assertRaises(wattlas.Error) as e:
                    call()
                self.assertTrue("never one of the inputs" in str(e.exception) or
                                "overwrite each other" in str(e.exception), str(e.exception))
                with open(src) as f:
                    self.assertEqual(f.read(), "keep,me\n1,2\n")
            self.assertFalse(os.path.exists(os.path.join(d, "a.ini")))
        finally:
            shutil.rmtree(d)

    def test_numpy_and_pandas(self):
        rows = wattlas.predict(**self.ARGS, clock=range(510, 1411, 90))
        try:
            import numpy
        except ImportError:
            print("test_numpy_and_pandas: SKIPPED numpy views (python3-numpy not installed)")
            return
        a = rows.to_numpy()
        self.assertEqual(a["energy_j"].dtype, numpy.float64)
        self.assertEqual(len(a["energy_j"]), 11)
        self.assertEqual(list(a["gpu"]), ["a100-pcie-40gb"] * 11)
        # energy is time times power, as each row reports them
        self.assertTrue(numpy.allclose(a["energy_j"], a["time_ms"] * a["power_w"] / 1e3,
                                       rtol=1e-4))
        # numpy values are taken as values
        again = wattlas.predict(**self.ARGS, clock=numpy.array([510, 600]))
        self.assertEqual([r["sm_clock_mhz"] for r in again], [510, 600])
        try:
            import pandas  # noqa: F401
        except ImportError:
            print("test_numpy_and_pandas: SKIPPED the DataFrame (pandas not installed)")
            return
        df = rows.to_pandas()
        self.assertEqual(list(df.columns), rows.columns)
        self.assertEqual(len(df), 11)


class Sweep(unittest.TestCase):
    def test_equals_cli(self):
        """a grid with GPU variants, in parallel, is the command line's"""
        out, _, rc = cli("sweep", "--gpu", "a100-pcie-40gb,a100-sxm-80gb", "--model", "gpt2",
                         "--batch", "1,8", "--seq", "128", "--dtype", "bf16,fp32",
                         "--clock", "510:1410:300", "--set", "power_limit_w=200,250",
                         "--format", "csv")
        self.assertEqual(rc, 0)
        text = wattlas.sweep(gpu=["a100-pcie-40gb", "a100-sxm-80gb"], model="gpt2",
                             batch=[1, 8], seq=128, dtype=("bf16", "fp32"),
                             clock="510:1410:300", set={"power_limit_w": [200, 250]},
                             threads=2, fmt="csv")
        self.assertEqual(text, out)
        rows = wattlas.sweep(gpu=["a100-pcie-40gb", "a100-sxm-80gb"], model="gpt2",
                             batch=[1, 8], seq=128, dtype=("bf16", "fp32"),
                             clock="510:1410:300", set={"power_limit_w": [200, 250]})
        self.assertEqual(len(rows), len(parse_csv(out)))
        # one evaluation into columns: the CSV the rows give is the command
        # line's, byte for byte (set axes, text and numbers, empty cells)
        self.assertEqual(rows.to_csv(), out)
        want = parse_csv(out)
        for i in (0, len(want) // 2, len(want) - 1):
            for c in want[0]:
                self.assertTrue(same_cell(rows[i][c], want[i][c]), c)
        self.assertEqual(rows[-1], rows[len(rows) - 1])
        self.assertEqual([r["gpu"] for r in rows][:1], [want[0]["gpu"]])
        col = rows["time_ms"]
        self.assertEqual(len(col), len(want))
        self.assertEqual(float(col[3]), float(want[3]["time_ms"]))

    def test_warnings(self):
        """the command line's warnings reach Python as WattlasWarning"""
        import warnings
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            rows = wattlas.predict(gpu="h100-pcie-80gb", model="bert-large", seq=4096)
        texts = [str(w.message) for w in got if issubclass(w.category, wattlas.WattlasWarning)]
        self.assertTrue(any("512 learned positions" in t for t in texts), texts)
        self.assertTrue(any("h100-pcie-80gb: coefficients transferred" in t for t in texts), texts)
        self.assertTrue(rows[0]["coefficients"].startswith("transferred from"))
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            wattlas.predict(gpu="a100-pcie-40gb", model="opt-1.3b", batch=512, seq=2048)
        self.assertTrue(any("need more memory" in str(w.message) for w in got))
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            wattlas.predict(gpu="a100-pcie-40gb", model="gpt2")
        self.assertEqual([str(w.message) for w in got], [])
        # a PyTorch profile's import note: what it kept at measured times
        d = tempfile.mkdtemp(prefix="wattlas-py-")
        try:
            path = os.path.join(d, "step_1410mhz.json")
            with open(path, "w") as f:
                f.write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::weird", '
                        '"ts": 1, "dur": 2, "tid": 1, "args": {"External id": 1}}, '
                        '{"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 7, "tid": 7, '
                        '"args": {"External id": 1, "correlation": 3}}]}')
            with warnings.catch_warnings(record=True) as got:
                warnings.simplefilter("always")
                rows = wattlas.predict(gpu="a100-pcie-40gb", trace=path, clock=[900, 1410])
            texts = [str(w.message) for w in got]
            self.assertTrue(any("1 kept at their measured time" in t and "aten::weird x1" in t
                                for t in texts), texts)
            # a kernel known only by its time takes it at every clock
            self.assertEqual(rows[0]["time_ms"], rows[1]["time_ms"])
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_spec_file(self):
        """a spec file's errors name the file and the line"""
        d = tempfile.mkdtemp(prefix="wattlas-py-")
        try:
            good = os.path.join(d, "good.ini")
            with open(good, "w") as f:
                f.write("[sweep]\ngpu = a100-pcie-40gb\nmodel = gpt2\nbatch = 1\nseq = 128\n"
                        "dtype = bf16\nclock = 900\n")
            out, _, rc = cli("sweep", "--spec", good, "--format", "csv")
            self.assertEqual(rc, 0)
            self.assertEqual(wattlas.sweep(good, fmt="csv"), out)
            # keywords replace the file's axes, as options after --spec do
            self.assertEqual([r["batch"] for r in wattlas.sweep(good, batch=[2, 4])], [2, 4])
            bad = os.path.join(d, "bad.ini")
            with open(bad, "w") as f:
                f.write("[sweep]\ngpu = a100-pcie-40gb\nbatch = -3\n")
            with self.assertRaises(wattlas.Error) as e:
                wattlas.sweep(bad)
            self.assertEqual(e.exception.source, bad)
            self.assertEqual(e.exception.line, 3)
            self.assertIn("bad.ini:3", str(e.exception))
            with self.assertRaises(wattlas.Error) as e:
                wattlas.sweep(os.path.join(d, "missing.ini"))
            self.assertTrue(e.exception.io)
        finally:
            shutil.rmtree(d)


class Select(unittest.TestCase):
    """pareto and optimize over a file or over Rows equal the command line"""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.csv = os.path.join(self.dir, "s.csv")
        _, _, rc = cli("sweep", "--gpu", "a100-pcie-40gb,h100-sxm-80gb", "--model", "gpt2,opt-1.3b",
                       "--batch", "1,8", "--seq", "512", "--clock", "510:1980:90",
                       "--voltage-offset-mv", "-120,0", "--quiet", "-o", self.csv)
        self.assertEqual(rc, 0)
        self.rows = wattlas.sweep(gpu=["a100-pcie-40gb", "h100-sxm-80gb"], model=["gpt2", "opt-1.3b"],
                                  batch=[1, 8], seq=512, clock="510:1980:90",
                                  voltage_offset_mv=[-120, 0])

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_pareto(self):
        for args, kw in (([], {}), (["--all"], {"all": True}),
                         (["--minimize", "power_w", "--group-by", "gpu,model"],
                          {"minimize": "power_w", "group_by": ["gpu", "model"]})):
            out, _, rc = cli("pareto", self.csv, *args, "--format", "csv")
            self.assertEqual(rc, 0)
            self.assertEqual(wattlas.pareto(self.csv, fmt="csv", **kw), out)
            self.assertEqual(wattlas.pareto(self.rows, fmt="csv", **kw), out)
            rows = wattlas.pareto(self.rows, **kw)
            want = parse_csv(out)
            self.assertEqual(len(rows), len(want))
            for r, w in zip(rows, want):
                for c in rows.columns:
                    self.assertTrue(same_cell(r[c], w[c]), (c, r[c], w[c]))

    def test_optimize(self):
        for obj in ("energy", "edp", "energy-within-slowdown=5", "time-within-power=200"):
            out, _, rc = cli("optimize", self.csv, "--objective", obj, "--format", "csv")
            self.assertEqual(rc, 0)
            self.assertEqual(wattlas.optimize(self.csv, obj, fmt="csv"), out)
            self.assertEqual(wattlas.optimize(self.rows, obj, fmt="csv"), out)
        rows = wattlas.optimize(self.rows, "energy")
        for r in rows:
            self.assertLessEqual(r["clock_within_1pct_min_mhz"], r["sm_clock_mhz"])
            self.assertGreaterEqual(r["clock_within_1pct_max_mhz"], r["sm_clock_mhz"])
        # keyed by the sweep's own columns: a result joins back to the sweep
        self.assertEqual(rows.columns[:10], ["gpu", "model", "batch", "seq", "dtype", "attention",
                                             "mode", "scope", "voltage_offset_mv", "objective"])
        try:
            import pandas
        except ImportError:
            sys.stderr.write("SKIP optimize(DataFrame): pandas is not installed\n")
        else:
            df = self.rows.to_pandas()
            best = wattlas.optimize(df, "energy").to_pandas()
            self.assertEqual(wattlas.optimize(df, "energy", fmt="csv"),
                             wattlas.optimize(self.csv, "energy", fmt="csv"))
            keys = ["gpu", "model", "batch", "seq", "dtype", "mode", "sm_clock_mhz", "energy_j"]
            joined = best.merge(df, on=keys, suffixes=("", "_sweep"))
            self.assertEqual(len(joined), len(best))  # each chosen point is one sweep row
            self.assertTrue((joined["time_ms"] == joined["time_ms_sweep"]).all())
        # rows the user edited are written back as CSV and still work
        edited = wattlas.Rows([dict(r) for r in self.rows], self.rows.columns)
        self.assertEqual(wattlas.optimize(edited, "energy", fmt="csv"),
                         wattlas.optimize(self.csv, "energy", fmt="csv"))

    def test_errors(self):
        with self.assertRaises(wattlas.Error) as e:
            wattlas.optimize(self.rows, "speed")
        self.assertEqual(e.exception.field, "objective")
        with self.assertRaises(wattlas.Error) as e:
            wattlas.pareto(self.rows, x="joules")
        self.assertIn("joules", str(e.exception))
        with self.assertRaises(wattlas.Error) as e:
            wattlas.pareto(os.path.join(self.dir, "none.csv"))
        self.assertTrue(e.exception.io)
        with self.assertRaises(wattlas.Error):
            wattlas.pareto(42)


class Validate(unittest.TestCase):
    DATA = os.path.join(os.environ.get("WATTLAS_SHARED", "../shared"), "data", "measurements",
                        "a100-pcie-40gb-dvfs.csv")

    def test_equals_cli(self):
        if not os.path.exists(self.DATA):
            self.skipTest(f"../shared/data not found ({self.DATA} is not there)")
        out, err, rc = cli("validate", self.DATA, "--no-lomo", "--interval", "95", "--quiet")
        self.assertEqual(rc, 0)
        self.assertEqual(wattlas.validate(self.DATA, interval=95, fmt="csv"), out)
        rows = wattlas.validate(self.DATA)
        self.assertEqual(rows.summary["scored"], len(rows))
        # the summary's MAPE is the one the command line reports
        for key, word in (("mape_time_pct", "time"), ("mape_energy_pct", "energy")):
            self.assertIn(f"{word} {rows.summary[key]:.2f}", err.replace("%", ""))

    def test_errors(self):
        with self.assertRaises(wattlas.Error) as e:
            wattlas.validate("/nonexistent/m.csv")
        self.assertTrue(e.exception.io)
        with self.assertRaises(wattlas.Error):
            wattlas.validate(self.DATA, interval=150)


class Compare(unittest.TestCase):
    def test_equals_cli(self):
        """compare gives the command line's rows, and says which GPU cannot run"""
        import warnings
        out, _, rc = cli("compare", "--gpu", "a100-pcie-40gb,h100-sxm-80gb,v100-sxm2-32gb",
                         "--model", "gpt2", "--batch", "8", "--seq", "512", "--objective",
                         "energy-within-slowdown=10", "--format", "csv")
        self.assertEqual(rc, 0)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            t = wattlas.compare(["a100-pcie-40gb", "h100-sxm-80gb", "v100-sxm2-32gb"], "gpt2",
                                batch=8, seq=512, objective="energy-within-slowdown=10")
        self.assertEqual(t.to_csv(), out)
        self.assertTrue(any("v100-sxm2-32gb cannot run" in str(w.message) for w in got))
        out, _, rc = cli("compare", "--gpu", "a100-pcie-40gb,h100-sxm-80gb", "--model", "gpt2",
                         "--clock", "1200", "--format", "csv")
        self.assertEqual(rc, 0)
        self.assertEqual(wattlas.compare(["a100-pcie-40gb", "h100-sxm-80gb"], "gpt2",
                                         clock=1200).to_csv(), out)
        with self.assertRaises(wattlas.Error) as e:
            wattlas.compare(["a100-pcie-40gb"], "gpt2", objective="speed")
        self.assertEqual(e.exception.source, "objective")


class Cluster(unittest.TestCase):
    def test_equals_cli(self):
        """cluster and cluster_search give the command line's rows"""
        out, _, rc = cli("cluster", "--system", "dgx-a100-80gb", "--nodes", "8", "--model",
                         "gpt3-175b", "--tp", "8", "--pp", "8", "--vp", "3", "--global-batch",
                         "64", "--recompute", "selective", "--sequence-parallel", "--dtype",
                         "fp16", "--format", "csv")
        self.assertEqual(rc, 0)
        r = wattlas.cluster("dgx-a100-80gb", "gpt3-175b", nodes=8, tp=8, pp=8, vp=3,
                            global_batch=64, recompute="selective", sequence_parallel=True,
                            dtype="fp16")
        self.assertEqual(r.to_csv(), out)
        out, _, rc = cli("cluster", "--model", "gpt3-1.3b", "--pp", "4", "--partition",
                         "5,7,7,5", "--set", "power_limit_w=300", "--format", "csv")
        self.assertEqual(rc, 0)
        r = wattlas.cluster(model="gpt3-1.3b", pp=4, partition=[5, 7, 7, 5],
                            set={"power_limit_w": 300})
        self.assertEqual(r.to_csv(), out)
        out, _, rc = cli("cluster", "search", "--model", "gpt3-1.3b", "--global-batch", "16",
                         "--format", "csv")
        self.assertEqual(rc, 0)
        front = wattlas.cluster_search(model="gpt3-1.3b", global_batch=16)
        self.assertEqual(front.to_csv(), out)
        every = wattlas.cluster_search(model="gpt3-1.3b", global_batch=16, front_only=False)
        self.assertGreater(len(every), len(front))
        self.assertEqual(sum(1 for c in every["choice"] if c), len(front))
        with self.assertRaises(wattlas.Error) as e:
            wattlas.cluster(tp=3)
        self.assertEqual(e.exception.field, "tp")
        with self.assertRaises(wattlas.Error):
            wattlas.cluster(recompute="sometimes")
        with self.assertRaises(wattlas.Error):
            wattlas.cluster(system="no-such-system")

    def test_plans_equal_cli(self):
        """cluster's plans, frontiers, stages and power limits give the
        command line's rows, and its timeline the same trace"""
        base = ["cluster", "--model", "gpt3-1.3b", "--pp", "4", "--global-batch", "16"]
        kw = dict(model="gpt3-1.3b", pp=4, global_batch=16)
        cases = [
            (["--optimize", "energy", "--max-slowdown-pct", "2"],
             dict(optimize="energy", max_slowdown_pct=2)),
            (["--optimize", "energy", "--energy-scope", "all"],
             dict(optimize="energy", energy_scope="all")),
            (["--frontier", "--power-limits", "250:400:50"],
             dict(frontier=True, power_limits="250:400:50")),
            (["--power-limits", "300,400"], dict(power_limits=[300, 400])),
            (["--stages"], dict(stages=True)),
            (["--stage-power-limits", "300,320,340,360", "--stages"],
             dict(stage_power_limits=[300, 320, 340, 360], stages=True)),
        ]
        for args, extra in cases:
            out, err, rc = cli(*base, *args, "--format", "csv")
            self.assertEqual(rc, 0, (args, err))
            self.assertEqual(wattlas.cluster(**kw, **extra).to_csv(), out, args)
            self.assertEqual(wattlas.cluster(**kw, **extra, fmt="csv"), out, args)
        d = tempfile.mkdtemp()
        try:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            self.assertEqual(cli(*base, "--timeline", a, "--format", "csv")[2], 0)
            wattlas.cluster(**kw, timeline=b)
            with open(a) as fa, open(b) as fb:
                self.assertEqual(fa.read(), fb.read())
        finally:
            shutil.rmtree(d)
        with self.assertRaises(wattlas.Error) as e:
            wattlas.cluster(**kw, stage_power_limits=[300, 300])
        self.assertEqual(e.exception.field, "stage_power_limits")
        with self.assertRaises(wattlas.Error):
            wattlas.cluster(**kw, energy_scope="rack")
        with self.assertRaises(wattlas.Error):
            wattlas.cluster(**kw, power_limits=[300], optimize="energy")


SHARED = os.environ.get("WATTLAS_SHARED", "../shared")
DVFS = os.path.abspath(os.path.join(SHARED, "data", "measurements", "a100-pcie-40gb-dvfs.csv"))


def without_command(text):
    """A preset's text less the lines that record the command that made it
    (a key and its indented continuation lines)."""
    out, skip = [], False
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and skip:
            continue
        skip = line.startswith("command")
        if not skip:
            out.append(line)
    return "\n".join(out)


class Calibrate(unittest.TestCase):
    def test_equals_cli(self):
        """calibrate writes the command line's presets and says its report"""
        if not os.path.exists(DVFS):
            self.skipTest(f"../shared/data not found ({DVFS} is not there)")
        d = tempfile.mkdtemp()
        try:
            # four of the eleven clocks (64 rows): the same path, the two
            # fits in a third of the time (test_calib holds the whole set's)
            data = os.path.join(d, "dvfs4.csv")
            with open(DVFS) as fi, open(data, "w") as fo:
                for i, line in enumerate(fi):
                    if i == 0 or line.split(",")[7] in ("510", "870", "1140", "1410"):
                        fo.write(line)
            a, h = os.path.join(d, "cli.ini"), os.path.join(d, "cli-host.ini")
            _, err, rc = cli("calibrate", "--gpu", "a100-pcie-40gb", data, "--fit", "gpu,host",
                             "-o", a, "--host-out", h, "--holdout", "gpt2")
            self.assertEqual(rc, 0, err)
            pa, ph = os.path.join(d, "py.ini"), os.path.join(d, "py-host.ini")
            c = wattlas.calibrate(data, "a100-pcie-40gb", fit=["gpu", "host"], out=pa,
                                  host_out=ph, holdout="gpt2")
            with open(a) as f1, open(pa) as f2:
                self.assertEqual(without_command(f1.read()), without_command(f2.read()))
            with open(ph) as f:
                self.assertIn("wattlas.calibrate(", f.read())
            self.assertEqual(c.log, err.splitlines())
            s = c.summary
            self.assertEqual((s["rows"], s["held_out_rows"]), (64, 32))
            self.assertEqual(s["fitted_rows"] + s["held_out_rows"] + s["excluded"], s["rows"])
            self.assertIn(f"held-out ({s['held_out']['rows']} rows): MAPE time "
                          f"{s['held_out']['mape_time_pct']:.2f}%", err)
            self.assertIsNone(s["kfold"])
            host = next(r for r in c if r["coefficient"] == "host_launch_us")
            self.assertTrue(host["fitted"])
            self.assertGreater(host["stderr"], 0)
            self.assertEqual((s["gpu_written"], s["host_written"]), (pa, ph))
        finally:
            shutil.rmtree(d)

    def test_errors(self):
        """option errors name the keyword; nothing is written"""
        d = tempfile.mkdtemp()
        try:
            out = os.path.join(d, "x.ini")
            with self.assertRaises(wattlas.Error) as e:
                wattlas.calibrate(DVFS, "a100-pcie-40gb", out=out, fit=["gpu", "host"])
            self.assertEqual(e.exception.field, "fit")
            with self.assertRaises(wattlas.Error) as e:
                wattlas.calibrate(DVFS, "a100-pcie-40gb", out=out, fit="speed")
            self.assertEqual(e.exception.field, "fit")
            with self.assertRaises(wattlas.Error) as e:
                wattlas.calibrate(DVFS, "no-such-gpu", out=out)
            self.assertFalse(os.path.exists(out))
        finally:
            shutil.rmtree(d)


class Learn(unittest.TestCase):
    def test_equals_cli(self):
        """learn saves the command line's model and reports its folds"""
        if not os.path.exists(DVFS):
            self.skipTest(f"../shared/data not found ({DVFS} is not there)")
        d = tempfile.mkdtemp()
        try:
            a, b = os.path.join(d, "cli.json"), os.path.join(d, "py.json")
            _, err, rc = cli("learn", DVFS, "-o", a, "--kfold", "2", "--no-refit", "--trees",
                             "20", "--lomo")
            self.assertEqual(rc, 0, err)
            cv = wattlas.learn(DVFS, out=b, kfold=2, refit=False, trees=20, lomo=True,
                               importance=os.path.join(d, "imp.csv"))
            with open(a) as f1, open(b) as f2:
                self.assertEqual(f1.read(), f2.read())
            # the report's lines; a stderr that is not a terminal also gets
            # progress lines ("3/6 models in 40 s, ..."), Python's log not
            report = [l for l in err.replace(a, b).splitlines()
                      if not re.match(r"\d+/\d+ models", l)]
            self.assertEqual(cv.log, report)
            self.assertTrue(any(re.match(r"\d+/\d+ models", l) for l in err.splitlines()))
            self.assertEqual([r["split"] for r in cv], ["workload", "model"])
            self.assertEqual(cv[0]["folds"], 2)
            self.assertEqual(cv[1]["folds"], 3)  # bert-large, gpt2, opt-1.3b
            self.assertIn(f"learned MAPE time {cv[0]['learned_time_pct']:.2f}%", err)
            self.assertEqual(cv.summary["rows"], 176)
            with open(os.path.join(d, "imp.csv")) as f:
                self.assertEqual(f.readline().strip(),
                                 "feature,time_importance,power_importance,energy_importance")
            with self.assertRaises(wattlas.Error) as e:
                wattlas.learn(DVFS, out=b, kind="svm")
            self.assertEqual(e.exception.field, "kind")
        finally:
            shutil.rmtree(d)


class Plot(unittest.TestCase):
    def test_equals_cli(self):
        """a figure from a Table is the command line's from its CSV, byte for byte"""
        d = tempfile.mkdtemp()
        try:
            t = wattlas.sweep(gpu="a100-pcie-40gb", model="gpt2", batch=[1, 8],
                              clock=range(510, 1411, 90))
            csv_path = os.path.join(d, "t.csv")
            with open(csv_path, "w") as f:
                f.write(t.to_csv())
            a, b = os.path.join(d, "cli.svg"), os.path.join(d, "py.svg")
            _, err, rc = cli("plot", "energy-freq", csv_path, "-o", a, "--panels",
                             "power,time,energy", "--objective", "energy", "--title", "GPT-2")
            self.assertEqual(rc, 0, err)
            self.assertEqual(wattlas.plot("energy-freq", t, b, panels=["power", "time", "energy"],
                                          objective="energy", title="GPT-2"), b)
            with open(a, "rb") as f1, open(b, "rb") as f2:
                self.assertEqual(f1.read(), f2.read())
            # a file name and a DataFrame-free Rows work as well
            wattlas.plot("pareto-norm", csv_path, os.path.join(d, "n.png"), edp=True,
                         size=(4, 3), dpi=100)
            self.assertTrue(os.path.getsize(os.path.join(d, "n.png")) > 1000)
            for kw, field in ((dict(edp=True), "edp"), (dict(palette="jet"), "palette"),
                              (dict(panels="speed"), "panels"), (dict(size=(0, 1)), "width_in")):
                with self.assertRaises(wattlas.Error) as e:
                    wattlas.plot("energy-freq", t, os.path.join(d, "x.png"), **kw)
                self.assertEqual(e.exception.field, field, kw)
            with self.assertRaises(wattlas.Error) as e:
                wattlas.plot("pie", t, os.path.join(d, "x.png"))
            self.assertEqual(e.exception.field, "kind")
            self.assertFalse(os.path.exists(os.path.join(d, "x.png")))
        finally:
            shutil.rmtree(d)


class Serve(unittest.TestCase):
    def test_serve_equals_cli(self):
        """serve()'s text is the command line's, byte for byte, and its rows
        hold the same numbers; a serving study through report() is the
        command line's grid"""
        out, _, rc = cli("serve", "--max-num-seqs", "8,16", "--clock", "990,1980", "--requests",
                         "64", "--async-scheduling", "--top-p", "0.9", "--format", "csv")
        self.assertEqual(rc, 0)
        kw = dict(max_num_seqs=[8, 16], clock=[990, 1980], requests=64, async_scheduling=True,
                  top_p=0.9)
        self.assertEqual(wattlas.serve(**kw, fmt="csv"), out)
        want = parse_csv(out)
        rows = wattlas.serve(**kw)
        self.assertEqual(len(rows), len(want))
        for r, w in zip(rows, want):
            for c in want[0]:
                self.assertTrue(same_cell(r[c], w[c]), f"{c}: {r[c]!r} against {w[c]!r}")
        with self.assertRaises(wattlas.Error) as e:
            wattlas.serve(sampler="fast")
        self.assertIn("native or flashinfer", str(e.exception))
        d = tempfile.mkdtemp()
        try:
            spec = os.path.join(d, "s.ini")
            with open(spec, "w") as f:
                f.write("[serve]\nmax_num_seqs = 8,16\nclock = 990,1980\nrequests = 64\n"
                        "async_scheduling = on\ntop_p = 0.9\n")
            r = wattlas.report(spec, out=os.path.join(d, "study"))
            self.assertEqual(r["points"], 4)
            self.assertEqual(r["figures"], 1)
            with open(os.path.join(d, "study", "serve.csv")) as f:
                self.assertEqual(f.read(), out.split("\n", 1)[1] if out.startswith("#") else out)
        finally:
            shutil.rmtree(d)


class Report(unittest.TestCase):
    def test_report(self):
        """report writes a whole study whose sweep is sweep()'s"""
        d = tempfile.mkdtemp()
        try:
            spec = os.path.join(d, "s.ini")
            with open(spec, "w") as f:
                f.write("[report]\ntitle = t\n[sweep]\ngpu = a100-pcie-40gb\nmodel = gpt2\n"
                        "batch = 1\nseq = 128\nclock = 510:1410:150\n")
            out = os.path.join(d, "study")
            r = wattlas.report(spec, out=out, batch=[1, 8])
            self.assertEqual(r["index"], os.path.join(out, "index.html"))
            self.assertTrue(os.path.exists(r["index"]))
            self.assertGreater(r["figures"], 3)
            with open(os.path.join(out, "sweep.csv")) as f:
                self.assertEqual(f.read(), wattlas.sweep(spec, batch=[1, 8], fmt="csv"))
            with open(os.path.join(out, "index.md")) as f:
                md = f.read()
            self.assertIn("wattlas.report(", md)
            # the index's table of optimal clocks says what optimal.csv says
            # (it read the savings cells by fixed positions once, and
            # shifted them when the tables gained their key columns)
            with open(os.path.join(out, "optimal.csv")) as f:
                opt = parse_csv(f.read())
            table = md.split("## Energy-optimal SM clock per workload")[1]
            lines = [l for l in table.splitlines() if l.startswith("|")]
            head = [c.strip() for c in lines[0].strip("|").split("|")]
            first = [c.strip() for c in lines[2].strip("|").split("|")]
            cell = dict(zip(head, first))
            self.assertEqual(cell["clock (MHz)"], "%.0f" % float(opt[0]["sm_clock_mhz"]))
            self.assertEqual(float(cell["energy saved (%)"]),
                             round(float(opt[0]["energy_saving_vs_max_clock_pct"]), 1))
            lo, hi = cell["within 1% of least (MHz)"].split("-")
            self.assertEqual(float(lo), float(opt[0]["clock_within_1pct_min_mhz"]))
            # a study of two GPUs where some subsets cannot run at all (a
            # 13B training step on 40 and 80 GB): no savings figure for
            # those, and GPU beside GPU for the others
            r2 = wattlas.report("studies/default.ini", out=os.path.join(d, "two"), batch=[1, 8])
            names = os.listdir(os.path.join(d, "two"))
            self.assertTrue(any(n.startswith("gpus-bf16-train") and n.endswith(".png")
                                for n in names))
            self.assertFalse(any(n.startswith("savings-") and n.endswith("train-gpt3-13b.png")
                                 for n in names))
            self.assertGreater(r2["figures"], r["figures"])
            with self.assertRaises(wattlas.Error) as e:
                wattlas.report(spec, out=os.path.join(d, "bad"), batch=0)
            self.assertEqual(e.exception.field, "batch")
            self.assertFalse(os.path.exists(os.path.join(d, "bad")))
        finally:
            shutil.rmtree(d)


class Options(unittest.TestCase):
    """Every option of every command is a keyword of its Python function
    (issue 42): the options are read from each command's --help."""
    FUNCS = {"predict": ["predict"], "compare": ["compare"], "energy-check": ["energy_check"],
             "validate": ["validate"], "calibrate": ["calibrate"], "learn": ["learn"],
             "sweep": ["sweep"], "merge": ["merge"], "pareto": ["pareto"],
             "optimize": ["optimize"], "plot": ["plot"], "report": ["report"],
             "cluster": ["cluster", "cluster_search"],
             "presets": ["presets", "preset_text", "derive_vf"]}
    # the command line's own: help, its input and output (Python takes the
    # data and returns rows), its stderr (Python warns and returns summaries)
    CLI_ONLY = {"help", "in", "quiet"}
    RENAME = {"format": "fmt", "no-power-limit": "power_limit", "no-beside": "beside",
              "no-lomo": "lomo", "no-refit": "refit", "size": "size"}
    # names in a --help that are other commands' options or figure kinds
    MENTIONS = {("optimize", "kernels"), ("learn", "learned"), ("plot", "importance"),
                ("plot", "timeline"), ("merge", "shard"), ("presets", "format"),
                ("cluster", "decoder-first"),
                # a search's slices are for spreading it over machines from the
                # command line (MPI, Slurm); cluster_search returns the whole
                ("cluster", "shard")}
    # sweep keys predict, compare and sweep pass on to the spec (**more)
    SPEC_KEYS = {"board"}

    def test_every_option(self):
        import inspect
        missing = []
        for cmd, funcs in self.FUNCS.items():
            out, err, rc = cli(cmd, "--help")
            self.assertEqual(rc, 0, cmd)
            opts = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", out))
            params, more = set(), False
            for name in funcs:
                sig = inspect.signature(getattr(wattlas, name)).parameters
                params |= set(sig)
                more |= any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.values())
            for o in sorted(opts):
                if o in self.CLI_ONLY or (cmd, o) in self.MENTIONS:
                    continue
                kw = self.RENAME.get(o, o.replace("-", "_"))
                if kw in params or (more and (kw in wattlas._AXIS_KEYS or kw in self.SPEC_KEYS)):
                    continue
                missing.append(f"{cmd} --{o} ({kw}=)")
        self.assertEqual(missing, [], "options with no Python keyword")
        # a spec key passed on by name works
        r = wattlas.predict("a100-sxm-80gb", "gpt2", board="other", interval=95)
        self.assertLess(r[0]["energy_lo_j"], r[0]["energy_j"])

    def test_energy_check_merge_shard(self):
        out, _, rc = cli("energy-check", "--gpu", "h100-sxm-80gb", "--dtype", "bf16,fp32",
                         "--format", "csv")
        self.assertEqual(rc, 0)
        rows = wattlas.energy_check("h100-sxm-80gb", dtype=["bf16", "fp32"])
        want = parse_csv(out)
        self.assertEqual(len(rows), len(want))
        for r, w in zip(rows, want):
            for k, v in w.items():
                self.assertTrue(same_cell(r[k], v), (k, r[k], v))
        with self.assertRaises(wattlas.Error) as e:
            wattlas.energy_check("h100-sxm-80gb", dtype="fp64x")
        self.assertEqual(e.exception.field, "dtype")
        out, _, rc = cli("compare", "--gpu", "a100-pcie-40gb,h100-sxm-80gb", "--model", "gpt2",
                         "--mode", "decode", "--gen", "8", "--format", "csv")
        self.assertEqual(rc, 0)
        self.assertEqual(wattlas.compare(["a100-pcie-40gb", "h100-sxm-80gb"], "gpt2",
                                         mode="decode", gen=8, fmt="csv"), out)
        idle = os.path.join(SHARED, "data", "gpu-tables", "a100-sxm-80gb-idle.csv")
        if os.path.exists(idle):
            out, _, rc = cli("presets", "derive-vf", idle, "--step-mhz", "90")
            self.assertEqual(rc, 0)
            self.assertEqual(wattlas.derive_vf(idle, step_mhz=90), out)
        d = tempfile.mkdtemp()
        try:
            whole, _, rc = cli("sweep", "--gpu", "a100-pcie-40gb", "--model", "gpt2",
                               "--batch", "1,8", "--clock", "510:1410:300", "--format", "csv",
                               "--quiet")
            self.assertEqual(rc, 0)
            parts = []
            for i in (2, 1, 3):
                t = wattlas.sweep(gpu="a100-pcie-40gb", model="gpt2", batch=[1, 8],
                                  clock="510:1410:300", shard=f"{i}/3", fmt="csv")
                parts.append(os.path.join(d, f"p{i}.csv"))
                with open(parts[-1], "w") as f:
                    f.write(t)
            self.assertEqual(wattlas.merge(parts), whole)
            out = os.path.join(d, "all.csv")
            self.assertEqual(wattlas.merge(parts, out=out), out)
            with open(out) as f:
                self.assertEqual(f.read(), whole)
            with self.assertRaises(wattlas.Error):
                wattlas.merge(parts[:2])  # a shard missing
            with self.assertRaises(wattlas.Error):
                wattlas.sweep(model="gpt2", shard="1/2")  # a Table is not a shard
        finally:
            shutil.rmtree(d)

    def test_optimize_schedule(self):
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "tr.csv")
            _, _, rc = cli("sweep", "--gpu", "a100-sxm-80gb", "--model", "gpt3-125m",
                           "--mode", "train", "--scope", "layer", "--clock", "810:1410:60",
                           "--quiet", "-o", path)
            self.assertEqual(rc, 0)
            out, _, rc = cli("optimize", path, "--schedule=phase", "--objective", "energy",
                             "--switch-us", "50", "--format", "csv")
            self.assertEqual(rc, 0)
            want = parse_csv(out)
            rows = wattlas.optimize(path, "energy", schedule="phase", switch_us=50)
            self.assertEqual(len(rows), len(want))
            for r, w in zip(rows, want):
                for k, v in w.items():
                    self.assertTrue(same_cell(r[k], v), (k, r[k], v))
            self.assertEqual(wattlas.optimize(path, "energy", schedule=True, fmt="csv"),
                             cli("optimize", path, "--schedule", "--objective", "energy",
                                 "--format", "csv")[0])
            with self.assertRaises(wattlas.Error):
                wattlas.optimize(path, "edp", schedule="phase")
            with self.assertRaises(wattlas.Error):
                wattlas.optimize(path, "energy", schedule="layer")
        finally:
            shutil.rmtree(d)

    def test_validate_options(self):
        if not os.path.exists(DVFS):
            self.skipTest("../shared/data not found")
        # two models at every other clock of the DVFS rows: the refits take
        # seconds, not minutes
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        data = os.path.join(d, "dvfs.csv")
        with open(DVFS) as fi, open(data, "w") as fo:
            for i, line in enumerate(fi):
                c = line.split(",")
                if i == 0 or ((int(c[7]) // 90) % 2 == 0 and c[1] in ("bert-large", "opt-1.3b")):
                    fo.write(line)
        v = wattlas.validate(data, gpu="a100-pcie-40gb", interval=95, board="other", lomo=True)
        g = v.summary["gpus"]["a100-pcie-40gb"]
        self.assertGreater(g["regret_workloads"], 0)
        self.assertGreater(v.summary["coverage_energy_pct"], 50)
        # the command line's summary says the same
        _, err, rc = cli("validate", data, "--gpu", "a100-pcie-40gb", "--lomo", "--format", "csv")
        self.assertEqual(rc, 0)
        m = re.search(r"held-out MAPE \((\d+) rows\): time ([\d.]+)%", err)
        self.assertIsNotNone(m, err)
        self.assertEqual(g["lomo"]["scored"], int(m.group(1)))
        self.assertAlmostEqual(g["lomo"]["mape_time_pct"], float(m.group(2)), places=1)
        m = re.search(r"regret \((\d+) workloads.*mean ([\d.]+)%", err)
        self.assertIsNotNone(m, err)
        self.assertAlmostEqual(g["regret_mean_pct"], float(m.group(2)), places=1)
        with self.assertRaises(wattlas.Error):
            wattlas.validate(data, board="mine")


class WithoutNumpy(unittest.TestCase):
    """numpy is optional: without it a column is the documented fallback
    (array.array("d") of numbers, a list of texts) and to_numpy() raises
    wattlas.Error saying so, where it once returned a dict of array.arrays
    as if they were numpy's"""

    def test_fallback(self):
        code = ("import sys\nsys.modules['numpy'] = None\nimport array, wattlas\n"
                "t = wattlas.predict(gpu='a100-pcie-40gb', model='gpt2', clock=[900, 1410])\n"
                "assert isinstance(t['energy_j'], array.array), type(t['energy_j'])\n"
                "assert t['energy_j'][1] == t[1]['energy_j']\n"
                "assert t['gpu'] == ['a100-pcie-40gb'] * 2, t['gpu']\n"
                "for obj in (t, wattlas.energy_check('a100-sxm-80gb', dtype='bf16')):\n"
                "    try:\n"
                "        obj.to_numpy()\n"
                "        raise SystemExit('to_numpy returned without numpy')\n"
                "    except wattlas.Error as e:\n"
                "        assert 'numpy is not installed' in str(e), e\n"
                "print('ok')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(wattlas.__file__)))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-1500:])
        self.assertEqual(p.stdout.strip(), "ok")


class StrictKeywords(unittest.TestCase):
    """Python refuses what the command line refuses, naming the keyword
    (issue 64: these were coerced or replaced without a word)."""

    def refused(self, key, f):
        with self.assertRaises(wattlas.Error) as e:
            f()
        self.assertTrue(str(e.exception).startswith(key + ":"), str(e.exception))

    def test_refused(self):
        for bad in (float("nan"), -1, 0, "", True):
            self.refused("clock", lambda: wattlas.compare(gpu="a100-pcie-40gb", model="gpt2",
                                                          clock=bad))
        for bad in (0, 1.5, True, "2"):
            self.refused("nodes", lambda: wattlas.cluster(nodes=bad))
        self.refused("power_limits", lambda: wattlas.cluster(power_limits=b"x"))
        self.refused("power_limits", lambda: wattlas.cluster(power_limits=[300, float("inf")]))
        self.refused("tp", lambda: wattlas.cluster(tp=True))
        self.refused("threads", lambda: wattlas.sweep(model="gpt2", clock=900, threads=-1))
        self.refused("threads", lambda: wattlas.cluster_search(model="gpt2", threads=1.5))
        self.refused("trees", lambda: wattlas.learn("x.csv", out="m.json", trees=1.5))
        self.refused("clock", lambda: wattlas.sweep(model="gpt2", clock=list(range(1000001))))
        # what the command line takes still runs
        self.assertEqual(len(wattlas.compare(gpu="a100-pcie-40gb", model="gpt2", clock=900)), 1)
        self.assertEqual(len(wattlas.sweep(model="gpt2", clock=900, threads=0)), 1)
        wattlas.cluster(tp=2, sequence_parallel=True)


class Api(unittest.TestCase):
    def test_api(self):
        """dir() shows the API; help() shows every option and a column list"""
        self.assertEqual([n for n in dir(wattlas) if n.startswith("_") and n != "__version__"],
                         [])
        import inspect
        for name in ("predict", "sweep", "compare", "cluster", "cluster_search", "pareto",
                     "optimize", "validate", "calibrate", "learn", "plot", "report", "presets",
                     "energy_check", "merge"):
            fn = getattr(wattlas, name)
            self.assertIn("Example", fn.__doc__, name)
            self.assertNotIn(inspect.Parameter.VAR_KEYWORD,
                             [p.kind for p in inspect.signature(fn).parameters.values()
                              if name not in ("predict", "sweep", "compare", "report")], name)
        self.assertIn("clock", inspect.signature(wattlas.sweep).parameters)


class Presets(unittest.TestCase):
    def test_list_and_text(self):
        out, _, rc = cli("presets", "list", "--format", "csv")
        self.assertEqual(rc, 0)
        want = [(r["kind"], r["id"]) for r in parse_csv(out)]
        got = [(p["kind"], p["id"]) for p in wattlas.presets()]
        self.assertEqual(got, want)
        # the table the command line prints, cell for cell
        table = wattlas.presets()
        self.assertEqual(table.to_csv(), out)
        systems = wattlas.presets("system")
        self.assertIn("dgx-a100-80gb", [r["id"] for r in systems])
        gpus = wattlas.presets("gpu")
        self.assertTrue(all(p["kind"] == "gpu" for p in gpus))
        a100 = next(r for r in gpus if r["id"] == "a100-sxm-80gb")
        self.assertEqual((a100["sms"], a100["power_limit_w"]), (108, 400.0))
        self.assertIn("[gpu]", wattlas.preset_text("gpu", "a100-sxm-80gb"))
        with self.assertRaises(wattlas.Error):
            wattlas.preset_text("gpu", "nope")
        with self.assertRaises(wattlas.Error):
            wattlas.presets("board")

    def test_version(self):
        out, _, _ = cli("--version")
        self.assertEqual(out.strip(), "wattlas " + wattlas.__version__)



class PerseusRows(unittest.TestCase):
    """scripts/perseus_stage_rows.py: stage 0's forward and backward summed,
    by hand, for one board; other boards, stages and lone halves left out."""

    RAW = ("source_file,gpu,model,dtype,stage,instruction,frequency_mhz,time_s,energy_j,"
           "power_w_derived\n"
           "x,a100-sxm-80gb,gpt3-175b,bf16,0,forward,1410,0.05,20.0,400\n"
           "x,a100-sxm-80gb,gpt3-175b,bf16,0,backward,1410,0.10,45.0,450\n"
           "x,a100-sxm-80gb,gpt3-175b,bf16,1,forward,1410,0.07,30.0,428\n"
           "x,a40,gpt3-175b,bf16,0,forward,1410,0.09,20.0,222\n"
           "x,a40,gpt3-175b,bf16,0,backward,1410,0.19,40.0,210\n"
           "x,a100-sxm-80gb,gpt3-175b,bf16,0,forward,855,0.08,16.0,200\n")

    def run_script(self, text, *args):
        d = tempfile.mkdtemp(prefix="wattlas-test-")
        try:
            path = os.path.join(d, "raw.csv")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            p = subprocess.run([sys.executable, "scripts/perseus_stage_rows.py", path, *args],
                               capture_output=True, text=True)
            return p.stdout, p.stderr, p.returncode
        finally:
            shutil.rmtree(d)

    def test_rows(self):
        out, err, rc = self.run_script(self.RAW, "a100-sxm-80gb", "a100-sxm-80gb-500w")
        self.assertEqual(rc, 0, err)
        rows = parse_csv(out)
        self.assertEqual(len(rows), 1)  # 855 MHz has no backward
        r = rows[0]
        self.assertEqual((r["gpu"], r["model"], r["mode"], r["optimizer"], r["impl"],
                          r["time_relative"], r["sm_clock_mhz"]),
                         ("a100-sxm-80gb-500w", "gpt3-175b", "train", "none", "fused", "1", "1410"))
        self.assertAlmostEqual(float(r["time_ms"]), 150.0, places=6)
        self.assertAlmostEqual(float(r["energy_j"]), 65.0, places=6)
        self.assertAlmostEqual(float(r["power_w"]), 65.0 / 0.15, places=3)

    def test_errors(self):
        _, err, rc = self.run_script(self.RAW, "h100", "x")
        self.assertEqual(rc, 1)
        self.assertIn("no stage-0 forward and backward pairs for h100", err)
        bad = self.RAW.replace("0.10,45.0", "fast,45.0")
        _, err, rc = self.run_script(bad, "a100-sxm-80gb", "x")
        self.assertEqual(rc, 1)
        self.assertRegex(err, r"raw\.csv:3: ")
        _, err, rc = self.run_script(self.RAW)
        self.assertEqual(rc, 2)
        self.assertIn("usage: perseus_stage_rows.py", err)


class ZeusRows(unittest.TestCase):
    """scripts/zeus_power_limit_rows.py: one GPU's power (the four GPUs'
    energy over the time and the stages), the iteration's time, the limit;
    a model with no preset left out, by hand."""

    def test_rows(self):
        raw = ("model_name,partition_method,batch_size,dp,tp,pp,microbatch_size,"
               "num_microbatches,power_limit_w,time_s,energy_j\n"
               "gpt3-xl,uniform,1024,1,1,4,8,128,300,60.0,64800.0\n"
               "bert-huge-uncased,\"custom:0,8\",256,1,1,4,8,32,300,6.0,6800.0\n"
               "bloom-3b,uniform,512,1,1,4,4,128,175,100.0,66000.0\n")
        d = tempfile.mkdtemp(prefix="wattlas-test-")
        try:
            path = os.path.join(d, "raw.csv")
            with open(path, "w", encoding="utf-8") as f:
                f.write(raw)
            p = subprocess.run([sys.executable, "scripts/zeus_power_limit_rows.py", path],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = parse_csv(p.stdout)
            self.assertEqual([r["model"] for r in rows], ["gpt3-1.3b", "bloom-3b"])
            g, b = rows
            self.assertEqual((g["gpu"], g["batch"], g["power_limit_w"], g["optimizer"],
                              g["time_relative"]), ("a100-pcie-80gb", "8", "300", "none", "1"))
            self.assertAlmostEqual(float(g["power_w"]), 64800.0 / 60 / 4, places=3)  # 270 W
            self.assertAlmostEqual(float(g["time_ms"]), 60000.0, places=3)
            self.assertAlmostEqual(float(b["power_w"]), 165.0, places=3)
            self.assertEqual(b["batch"], "4")
            with open(path, "w", encoding="utf-8") as f:
                f.write(raw.replace("60.0,64800.0", "-1,64800.0"))
            p = subprocess.run([sys.executable, "scripts/zeus_power_limit_rows.py", path],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("raw.csv:2: ", p.stderr)
        finally:
            shutil.rmtree(d)


class Stop(unittest.TestCase):
    """Ctrl-C and SIGTERM stop every long call within 0.5 s (issue 62): the
    library polls a flag the package's handlers set while it runs, Python's
    own handler runs once the call is back (KeyboardInterrupt by default),
    and nothing is left under the output's final name. Each call below
    takes seconds to minutes unstopped; the signal comes 0.4 s in."""

    LIMIT = 0.5

    def setUp(self):
        import signal
        import threading
        if threading.current_thread() is not threading.main_thread():
            self.skipTest("signals reach the main thread only")
        # Python leaves SIGINT ignored when it started so (a background job,
        # as a parallel test run may be): a user's session has its handler
        old = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.addCleanup(signal.signal, signal.SIGINT, old)
        self.dir = tempfile.mkdtemp(prefix="wattlas-stop-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def stops(self, call, sig=None, expect=KeyboardInterrupt, after=0.4):
        """call() stopped by sig (SIGINT) sent after `after` s: the
        exception expect within LIMIT of the signal. The signal comes from
        another process, as a terminal's would: a thread of this one would
        need the GIL, which compare holds (its notes are Python objects).
        That process prints the system's monotonic clock (the one
        time.monotonic reads, in every process) as it sends the signal, and
        the stop is timed from there: a loaded machine that is slow to start
        it delays the signal, not the stop."""
        import signal
        import time
        num = int(sig or signal.SIGINT)
        send = (f"import os, time; time.sleep({after}); t = time.monotonic(); "
                f"os.kill({os.getpid()}, {num}); print(repr(t), flush=True)")
        killer = subprocess.Popen([sys.executable, "-c", send], stdout=subprocess.PIPE, text=True)
        raised = False
        try:
            with self.assertRaises(expect):
                call()
            done = time.monotonic()
            raised = True
        finally:
            if not raised:  # the signal must not reach the test run itself
                killer.kill()
            out, _ = killer.communicate(timeout=60)
        self.assertTrue(out.strip(), "the call ended before the signal: make it longer")
        self.assertLess(done - float(out), self.LIMIT)
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

    def need_data(self):
        if not os.path.exists(DVFS):
            self.skipTest(f"../shared/data not found ({DVFS} is not there)")

    def test_learn(self):
        self.need_data()
        out = os.path.join(self.dir, "m.json")
        self.stops(lambda: wattlas.learn(DVFS, out=out, kind="rf", lomo=True))
        self.assertFalse(os.path.exists(out))

    def test_learn_sigterm(self):
        """SIGTERM too: here under a handler of the user's, which runs after"""
        import signal
        self.need_data()

        class Term(Exception):
            pass

        def on_term(sig, frame):
            raise Term()
        old = signal.signal(signal.SIGTERM, on_term)
        self.addCleanup(signal.signal, signal.SIGTERM, old)
        out = os.path.join(self.dir, "m.json")
        self.stops(lambda: wattlas.learn(DVFS, out=out, kind="rf", lomo=True),
                   sig=signal.SIGTERM, expect=Term)
        self.assertFalse(os.path.exists(out))

    def test_calibrate(self):
        self.need_data()
        out = os.path.join(self.dir, "g.ini")
        self.stops(lambda: wattlas.calibrate(DVFS, "a100-pcie-40gb", out=out, kfold=4,
                                             lomo=True))
        self.assertFalse(os.path.exists(out))

    def test_validate(self):
        self.need_data()
        self.stops(lambda: wattlas.validate(DVFS, lomo=True))

    def test_report(self):
        out = os.path.join(self.dir, "study")
        self.stops(lambda: wattlas.report(out=out, model="gpt3-1.3b", batch=1, seq=1024,
                                          clock="210:1410:15", dtype=["bf16", "fp16", "fp32"],
                                          threads=1,
                                          set={"sms": list(range(80, 140)),
                                               "dram_bw_gbs": list(range(1500, 3500, 20))}))
        self.assertEqual(os.listdir(self.dir), [])  # no study, no temporary folder

    def test_cluster_search(self):
        # every configuration of the 1T on 65,536 GPUs: about 5 s
        self.stops(lambda: wattlas.cluster_search("dgx-a100-80gb", "megatron-1t", nodes=8192,
                                                  global_batch=24576, threads=1,
                                                  front_only=False))

    def test_compare(self):
        gpus = [g["id"] for g in wattlas.presets("gpu")]
        self.stops(lambda: wattlas.compare(gpus, "llama-3-8b", mode="decode", gen=2000,
                                           batch=8, seq=128))

    def test_serve(self):
        # 20,000 requests on two engines: about 20 s
        self.stops(lambda: wattlas.serve(requests=20000, max_num_seqs=[16, 256]))

    def fifo(self, head, row, rows=1000):
        """A FIFO that gives head and rows, then stalls (a slow writer)."""
        import threading
        import time
        path = os.path.join(self.dir, "in.csv")
        os.mkfifo(path)
        done = threading.Event()

        def writer():
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(head)
                    for _ in range(rows):
                        f.write(row)
                    f.flush()
                    done.wait(10)
            except BrokenPipeError:
                pass  # the reader stopped: what the test wants
        th = threading.Thread(target=writer, daemon=True)
        th.start()
        self.addCleanup(th.join)
        self.addCleanup(done.set)
        return path

    def stalled_shards(self):
        """s2.csv, a sweep's second shard, and in.csv, a FIFO giving the
        first shard's head and a row whose end never comes."""
        shards = [os.path.join(self.dir, f"s{i}.csv") for i in (1, 2)]
        for i, path in enumerate(shards):
            _, err, rc = cli("sweep", "--gpu", "h100-sxm-80gb", "--model", "gpt2", "--clock",
                             "990,1980", "--shard", f"{i + 1}/2", "--quiet", "-o", path)
            self.assertEqual(rc, 0, err)
        with open(shards[0], encoding="utf-8") as f:
            meta, head, row = f.readlines()[:3]
        os.remove(shards[0])
        return self.fifo(meta + head, row, rows=1)

    def test_merge(self):
        fifo = self.stalled_shards()
        out = os.path.join(self.dir, "all.csv")
        self.stops(lambda: wattlas.merge([fifo, os.path.join(self.dir, "s2.csv")], out=out))
        self.assertFalse(os.path.exists(out))

    def test_plot(self):
        text = wattlas.sweep(model="gpt2", gpu="h100-sxm-80gb", clock=[990, 1980]).to_csv()
        head, row = text.splitlines(True)[:2]
        data = self.fifo(head, row)
        out = os.path.join(self.dir, "f.png")
        self.stops(lambda: wattlas.plot("energy-freq", data, out))
        self.assertFalse(os.path.exists(out))

class CliStop(Stop):
    """The same from the command line (issue 62): the first Ctrl-C or
    SIGTERM sets the flag the library polls (cli/main.c), the command ends
    within 0.5 s with status 128 + the signal, and leaves neither its output
    nor a temporary file or folder. The signal comes 0.4 s in, from this
    process, timed from its sending."""

    def runs(self, *args, sig=None, after=0.4):
        import signal
        import time
        num = sig or signal.SIGINT
        p = subprocess.Popen([WATTLAS, *args], cwd=self.dir, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(after)
            sent = time.monotonic()
            p.send_signal(num)
            _, err = p.communicate(timeout=60)
            done = time.monotonic()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 128 + int(num), f"not stopped by the signal: {err}")
        self.assertLess(done - sent, self.LIMIT)
        self.assertIn("stopped", err)
        return err

    def left(self, *inputs):
        """Nothing in the folder but the inputs: no output, no temporary."""
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(inputs))

    def test_learn(self):
        self.need_data()
        self.runs("learn", DVFS, "--kind", "rf", "--lomo", "-o", "m.json", "--quiet")
        self.left()

    def test_learn_sigterm(self):
        import signal
        self.need_data()
        self.runs("learn", DVFS, "--kind", "rf", "--lomo", "-o", "m.json", "--quiet",
                  sig=signal.SIGTERM)
        self.left()

    def test_calibrate(self):
        self.need_data()
        self.runs("calibrate", "--gpu", "a100-pcie-40gb", DVFS, "--kfold", "4", "--lomo",
                  "-o", "g.ini")
        self.left()

    def test_validate(self):
        self.need_data()
        self.runs("validate", DVFS, "--gpu", "a100-pcie-40gb", "--lomo", "--quiet")
        self.left()

    def test_report(self):
        with open(os.path.join(self.dir, "study.ini"), "w", encoding="utf-8") as f:
            f.write("[sweep]\nmodel = gpt3-1.3b\nbatch = 1\nseq = 1024\nclock = 210:1410:15\n"
                    "dtype = bf16, fp16, fp32\n[set]\nsms = 80:139:1\n"
                    "dram_bw_gbs = 1500:3480:20\n")
        self.runs("report", "--spec", "study.ini", "-o", "study", "--threads", "1", "--quiet")
        self.left("study.ini")  # no study, no temporary folder

    def test_cluster_search(self):
        self.runs("cluster", "search", "--system", "dgx-a100-80gb", "--model", "megatron-1t",
                  "--nodes", "8192", "--global-batch", "24576", "--threads", "1", "-o", "s.csv")
        self.left()

    def test_cluster_frontier(self):
        # Megatron's 1T on 3072 GPUs: clock plans' frontier, about 5 s
        self.runs("cluster", "--system", "dgx-a100-80gb", "--model", "megatron-1t", "--nodes",
                  "384", "--tp", "8", "--pp", "64", "--global-batch", "1536", "--recompute",
                  "full", "--frontier", "-o", "f.csv")
        self.left()

    def test_serve(self):
        self.runs("serve", "--requests", "20000", "--max-num-seqs", "16,256", "-o", "s.csv")
        self.left()

    def test_compare(self):
        gpus = ",".join(g["id"] for g in wattlas.presets("gpu"))
        self.runs("compare", "--gpu", gpus, "--model", "llama-3-8b", "--mode", "decode",
                  "--gen", "2000", "--batch", "8", "--seq", "128", "-o", "c.csv")
        self.left()

    def test_merge(self):
        self.stalled_shards()
        self.runs("merge", "in.csv", "s2.csv", "-o", "all.csv")
        self.left("in.csv", "s2.csv")

    def test_plot(self):
        text = wattlas.sweep(model="gpt2", gpu="h100-sxm-80gb", clock=[990, 1980]).to_csv()
        head, row = text.splitlines(True)[:2]
        self.fifo(head, row)
        self.runs("plot", "energy-freq", "in.csv", "-o", "f.png")
        self.left("in.csv")


if __name__ == "__main__":
    import pyunit  # tests/, beside this file
    sys.exit(pyunit.main())
