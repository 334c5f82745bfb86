#!/usr/bin/env python3
"""Perseus's per-clock stage profiles as rows wattlas calibrate reads.

usage: perseus_stage_rows.py RAW.csv SOURCE_GPU ROW_GPU > rows.csv

RAW.csv is ../shared/data/public/zeus-perseus/perseus-sosp24-stage-profile-
per-clock-raw.csv (ml-energy/zeus, the Perseus SOSP '24 artifact): the time
(s) and energy (J) of one pipeline stage's forward and of its backward,
bf16, at each locked SM clock. One row a model and clock: stage 0's forward
and backward together (a training step's computation without its optimizer:
mode train, optimizer none), on the board ROW_GPU names. The rows' work is
not stated (the artifact scales a stored row by 10 in time for its
emulation and does not give the layers behind it), so they say only how
time changes with the clock: time_relative = 1. Power (energy / time) is
one GPU's, as measured. The shape is Megatron-LM's (impl fused), a
microbatch of one 2048-token sequence.
"""
import csv
import sys


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    path, src_gpu, row_gpu = argv[1:]
    acc = {}
    try:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                if r["gpu"] != src_gpu or r["stage"] != "0":
                    continue
                try:
                    t, e = float(r["time_s"]), float(r["energy_j"])
                    mhz = int(r["frequency_mhz"])
                except (KeyError, ValueError) as err:
                    sys.stderr.write(f"{path}:{line}: {err}\n")
                    return 1
                if not (t > 0 and e > 0 and mhz > 0):
                    sys.stderr.write(f"{path}:{line}: time, energy and clock must be positive\n")
                    return 1
                k = (r["model"], r["dtype"], mhz)
                parts = acc.setdefault(k, {})
                if r["instruction"] in parts:
                    sys.stderr.write(f"{path}:{line}: a second {r['instruction']} for {k}\n")
                    return 1
                parts[r["instruction"]] = (t, e)
    except OSError as err:
        sys.stderr.write(f"{path}: {err.strerror}\n")
        return 1
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["gpu", "model", "batch", "seq", "dtype", "mode", "attention", "sm_clock_mhz",
                  "measured_clock_mhz", "time_ms", "energy_j", "power_w", "temp_c", "optimizer",
                  "impl", "time_relative"])
    n = 0
    for (model, dtype, mhz), parts in sorted(acc.items()):
        if set(parts) != {"forward", "backward"}:
            continue
        t = parts["forward"][0] + parts["backward"][0]
        e = parts["forward"][1] + parts["backward"][1]
        out.writerow([row_gpu, model, 1, 2048, dtype, "train", "eager", mhz, "",
                      f"{t * 1e3:.6f}", f"{e:.6f}", f"{e / t:.4f}", "", "none", "fused", 1])
        n += 1
    if not n:
        sys.stderr.write(f"{path}: no stage-0 forward and backward pairs for {src_gpu}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
