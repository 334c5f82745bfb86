#!/usr/bin/env python3
"""The training steps a host ran, as rows wattlas calibrate reads.

usage: profile_step_rows.py FILE... > rows.csv

summary.csv is what the project's profiling run writes beside its traces
(../shared/data/profiles/h200-sxm-141gb/summary.csv): per workload and
locked clock, wall_ms_per_step is the mean of three steps run without the
profiler, so it holds the host's real cost, which the profiled timeline
inflates. Workloads are named MODEL_MODE_bBATCH_sSEQ_DTYPE_ATTENTION (the
harness's measure-models cases: HF models, AdamW with its state in the
model's dtype). Only the training steps are kept: they are what fits a
host's cost per kernel of a training step (calibrate --fit
host_train_launch_us); the GPU is the folder's. The rows are time only.
A whole-model file the harness wrote (measure models; it has a mode
column) adds its training rows as they are. Give the files of one host.
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


def summary_rows(path, rd, out):
    """A profile folder's summary.csv: its training steps, time only."""
    gpu = os.path.basename(os.path.dirname(os.path.abspath(path)))
    n = 0
    for line, r in enumerate(rd, start=2):
        m = NAME.match(r.get("workload") or "")
        if not m:
            continue
        try:
            clock = int(r["sm_clock_mhz"])
            wall = float(r["wall_ms_per_step"])
        except (KeyError, TypeError, ValueError):
            raise ValueError("%s:%d: sm_clock_mhz, wall_ms_per_step: expected numbers"
                             % (path, line)) from None
        if not (0 < clock < 10000 and 0 < wall < 1e7):
            raise ValueError("%s:%d: sm_clock_mhz or wall_ms_per_step out of range" % (path, line))
        out.writerow({"gpu": gpu, "model": m["model"], "batch": m["batch"], "seq": m["seq"],
                      "dtype": m["dtype"], "mode": "train", "attention": m["attention"],
                      "sm_clock_mhz": clock, "time_ms": "%.6g" % wall, "optimizer": "adamw",
                      "master_dtype": "none"})
        n += 1
    return n


def model_rows(path, rd, out):
    """A whole-model file's training rows, as they are."""
    missing = [c for c in ("gpu", "mode", "time_ms") if c not in (rd.fieldnames or [])]
    if missing:
        raise ValueError("%s:1: %s: missing column" % (path, missing[0]))
    n = 0
    for r in rd:
        if r["mode"] == "train":
            out.writerow({c: r.get(c) or "" for c in COLUMNS})
            n += 1
    return n


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    out = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n",
                         extrasaction="ignore")
    out.writeheader()
    n = 0
    try:
        for path in argv[1:]:
            with open(path, newline="") as f:
                rd = csv.DictReader(f)
                read = summary_rows if "workload" in (rd.fieldnames or []) else model_rows
                n += read(path, rd, out)
    except OSError as e:
        sys.stderr.write("%s: %s\n" % (e.filename, e.strerror))
        return 1
    except ValueError as e:
        sys.stderr.write("%s\n" % e)
        return 1
    if not n:
        sys.stderr.write("%s: no training step\n" % " ".join(argv[1:]))
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
