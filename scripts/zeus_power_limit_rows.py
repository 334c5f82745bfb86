#!/usr/bin/env python3
"""Zeus's power-limit sweep of pipeline training as rows wattlas calibrate reads.

usage: zeus_power_limit_rows.py RAW.csv > rows.csv

RAW.csv is ../shared/data/public/zeus-perseus/zeus-a100-pcie-80gb-pp4-power-limit.csv
(ml-energy/zeus, the Perseus SOSP '24 artifact, sosp24_data/zeus/csv/A100/
zeus_global.csv): Merak (eager PyTorch) pipeline training on 4 x A100 PCIe
80GB, PP=4, one power limit on every GPU: the time of an iteration (s) and
the energy of all four GPUs (J). One row a model and limit, for one GPU:
power is the energy over the time and the four GPUs, time the iteration's.
With 128 (or 32) micro-batches over 4 stages the pipeline's bubble is 2%
(9%) of the step and the optimizer runs once in 128 (32) micro-batches, so
a GPU's step is its stage's forward and backward: mode train, optimizer
none, a micro-batch of batch_size / num_microbatches sequences. The rows
do not state the sequence length nor how the layers split, so their time
says only how it changes with the limit: time_relative = 1. Models with a
wattlas preset are kept: gpt3-xl (GPT-3 XL, 1.3B: gpt3-1.3b) and
bloom-3b, at 1024 tokens (Merak's examples' length); bert-huge-uncased
has none and is left out.
"""
import csv
import sys

MODELS = {"gpt3-xl": "gpt3-1.3b", "bloom-3b": "bloom-3b"}


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    path = argv[1]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["gpu", "model", "batch", "seq", "dtype", "mode", "attention", "sm_clock_mhz",
                  "measured_clock_mhz", "time_ms", "energy_j", "power_w", "temp_c",
                  "power_limit_w", "optimizer", "impl", "time_relative"])
    n = 0
    try:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                model = MODELS.get(r.get("model_name", ""))
                if not model:
                    continue
                try:
                    t, e = float(r["time_s"]), float(r["energy_j"])
                    limit = float(r["power_limit_w"])
                    pp, mbs = int(r["pp"]), int(r["microbatch_size"])
                except (KeyError, ValueError) as err:
                    sys.stderr.write(f"{path}:{line}: {err}\n")
                    return 1
                if not (t > 0 and e > 0 and limit > 0 and pp > 0 and mbs > 0):
                    sys.stderr.write(f"{path}:{line}: time, energy, limit, pp and the "
                                     "micro-batch must be positive\n")
                    return 1
                p = e / t / pp
                out.writerow(["a100-pcie-80gb", model, mbs, 1024, "fp16", "train", "eager",
                              1410, "", f"{t * 1e3:.6f}", f"{p * t:.6f}", f"{p:.4f}", "",
                              f"{limit:g}", "none", "hf-eager", 1])
                n += 1
    except OSError as err:
        sys.stderr.write(f"{path}: {err.strerror}\n")
        return 1
    if not n:
        sys.stderr.write(f"{path}: no rows of {', '.join(MODELS)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
