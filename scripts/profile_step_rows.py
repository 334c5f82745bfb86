#!/usr/bin/env python3
"""The unprofiled training steps of a profile folder as rows wattlas calibrate reads.

usage: profile_step_rows.py PROFILES/GPU/summary.csv [MODELS.csv] > rows.csv

summary.csv is what the project's profiling run writes beside its traces
(../shared/data/profiles/h200-sxm-141gb/summary.csv): per workload and
locked clock, wall_ms_per_step is the mean of three steps run without the
profiler, so it holds the host's real cost, which the profiled timeline
inflates. Workloads are named MODEL_MODE_bBATCH_sSEQ_DTYPE_ATTENTION (the
harness's measure-models cases: HF models, AdamW with its state in the
model's dtype). Only the training steps are kept: they are what fits a
host's cost per kernel of a training step (calibrate --fit
host_train_launch_us); the GPU is the folder's. The rows are time only.
MODELS.csv, a whole-model file the harness wrote (measure models) on the
same host, adds its training rows as they are.
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from wattlas.measure_files import EXTRA_COLUMNS, MEAS_COLUMNS  # noqa: E402 (the harness's schema)

COLUMNS = MEAS_COLUMNS + EXTRA_COLUMNS
NAME = re.compile(r"^(?P<model>.+)_(?P<mode>train)_b(?P<batch>\d+)_s(?P<seq>\d+)_"
                  r"(?P<dtype>[a-z0-9]+)_(?P<attention>[a-z]+)$")


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    path = argv[1]
    gpu = os.path.basename(os.path.dirname(os.path.abspath(path)))
    cols = COLUMNS
    out = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    out.writeheader()
    n = 0
    try:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                m = NAME.match(r.get("workload") or "")
                if not m:
                    continue
                try:
                    clock = int(r["sm_clock_mhz"])
                    wall = float(r["wall_ms_per_step"])
                except (KeyError, TypeError, ValueError):
                    sys.stderr.write("%s:%d: sm_clock_mhz, wall_ms_per_step: expected numbers\n"
                                     % (path, line))
                    return 1
                if not (0 < clock < 10000 and 0 < wall < 1e7):
                    sys.stderr.write("%s:%d: sm_clock_mhz or wall_ms_per_step out of range\n"
                                     % (path, line))
                    return 1
                out.writerow({"gpu": gpu, "model": m["model"], "batch": m["batch"],
                              "seq": m["seq"], "dtype": m["dtype"], "mode": "train",
                              "attention": m["attention"], "sm_clock_mhz": clock,
                              "time_ms": "%.6g" % wall, "optimizer": "adamw",
                              "master_dtype": "none"})
                n += 1
        if len(argv) == 3:
            with open(argv[2], newline="") as f:
                rd = csv.DictReader(f)
                missing = [c for c in ("gpu", "mode", "time_ms") if c not in (rd.fieldnames or [])]
                if missing:
                    sys.stderr.write("%s:1: %s: missing column\n" % (argv[2], missing[0]))
                    return 1
                for r in rd:
                    if r["mode"] == "train":
                        out.writerow({c: r.get(c) or "" for c in cols})
                        n += 1
    except OSError as e:
        sys.stderr.write("%s: %s\n" % (e.filename, e.strerror))
        return 1
    if not n:
        sys.stderr.write("%s: no training step (workload MODEL_train_bB_sS_DTYPE_ATTN)\n" % path)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
