#!/bin/sh
# Few-shot calibration experiment on the public A100 900 MHz table: the prior
# is the A100 PCIe preset with its [calibration] removed (physical defaults,
# as an unmeasured GPU would start), 4 random rows go to `calibrate` (the
# default --fit auto), the other rows are scored with `validate --gpu FILE`
# against the zero-shot prior on the same rows. Seeds 1-5; the row draw uses
# awk's srand(seed), so another awk draws other rows.
# usage: scripts/few-shot-experiment.sh [SHARED_DIR] [WORK_DIR]
set -eu
shared=${1:-../shared}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
data=$shared/data/measurements/a100-pcie-40gb-900mhz.csv
bin=bin/wattlas
[ -r "$data" ] || { echo "few-shot-experiment: $data not found" >&2; exit 1; }
$bin presets show a100-pcie-40gb |
    awk '/^\[/{skip = ($0 == "[calibration]" || $0 == "[calibrated_spec]")} !skip' > "$work/prior.ini"
for seed in 1 2 3 4 5; do
    head -1 "$data" > "$work/few$seed.csv"
    head -1 "$data" > "$work/rest$seed.csv"
    tail -n +2 "$data" | awk -v s="$seed" 'BEGIN{srand(s)} {print rand() "\t" $0}' |
        sort -n | cut -f2- > "$work/shuffled$seed"
    head -4 "$work/shuffled$seed" >> "$work/few$seed.csv"
    tail -n +5 "$work/shuffled$seed" >> "$work/rest$seed.csv"
    $bin calibrate --gpu "$work/prior.ini" "$work/few$seed.csv" -o "$work/fit$seed.ini" > "$work/calibrate$seed.log" 2>&1
    echo "seed $seed: $(grep '^few_shot =' "$work/fit$seed.ini")"
    echo "  few-shot:  $($bin validate "$work/rest$seed.csv" --gpu "$work/fit$seed.ini" --no-lomo -o "$work/few$seed-scored.csv" 2>&1 | tail -1)"
    echo "  zero-shot: $($bin validate "$work/rest$seed.csv" --gpu "$work/prior.ini" --no-lomo -o "$work/zero$seed-scored.csv" 2>&1 | tail -1)"
done
