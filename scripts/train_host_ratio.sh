#!/bin/sh
# A training step's host cost per kernel against a forward's, over every host
# whose training steps were measured: for each, calibrate fits
# host_train_launch_us to its AdamW steps with its own measured forward cost
# (launch_us) held, and the ratio of the two is that host's. Prints one line
# per host, then "ratio R sd S": the geometric mean of the ratios and its
# standard error (the spread of their logs over sqrt(n)), which make
# calibrate carries to the server class (presets/hosts/server-2023.ini).
#
# usage: scripts/train_host_ratio.sh BIN SHARED BUILD
#   BIN: the wattlas binary; SHARED: ../shared; BUILD: a scratch folder
set -eu
bin=$1 shared=$2 build=$3
mkdir -p "$build"
out=$build/train-host-ratios.txt
: > "$out"

# fit HOST_NAME GPU HOST_INI ROWS.csv
fit() {
    if ! "$bin" calibrate --gpu "$2" --fit host_train_launch_us "$4" --host "$3" \
        -o "$build/train-host-$1.ini" > "$build/train-host-$1.log" 2>&1; then
        cat "$build/train-host-$1.log" >&2
        exit 1
    fi
    awk -F' = ' -v n="$1" '/^launch_us =/{l=$2} /^train_launch_us =/{t=$2}
        END{if (!(l > 0 && t > 0)) exit 1; printf "%s %.4f %.4f %.4f\n", n, l, t, t / l}' \
        "$build/train-host-$1.ini" >> "$out"
}

rows() {
    python3 "$(dirname "$0")/profile_step_rows.py" "$@"
}

# ../shared's H200 host: its profile folder's unprofiled steps and its
# whole-model file's AdamW steps
rows "$shared/data/profiles/h200-sxm-141gb/summary.csv" \
    "$shared/data/measurements/h200-sxm-141gb-models.csv" > "$build/train-rows-h200-shared.csv"
fit h200-shared presets/gpus/h200-sxm-141gb.ini "$shared/data/hosts/h200-vm-host.ini" \
    "$build/train-rows-h200-shared.csv"
# this repository's boards, each on the host it was measured on
rows data/h200-vm-2026-11/measurements/h200-sxm-141gb-models.csv > "$build/train-rows-h200-b.csv"
fit h200-vm-b presets/gpus/h200-sxm-141gb.ini data/h200-vm-2026-11/h200-vm-b.ini \
    "$build/train-rows-h200-b.csv"
rows data/h100-vm-2026-11/measurements/h100-sxm-80gb-models.csv > "$build/train-rows-h100.csv"
fit h100-vm presets/gpus/h100-sxm-80gb.ini data/h100-vm-2026-11/h100-vm.ini \
    "$build/train-rows-h100.csv"
rows data/h100-vm-2026-11-26/measurements/h100-sxm-80gb-models.csv > "$build/train-rows-h100-b.csv"
fit h100-vm-b presets/gpus/h100-sxm-80gb.ini data/h100-vm-2026-11-26/h100-vm-b.ini \
    "$build/train-rows-h100-b.csv"

awk '{printf "host %-12s forward %6.2f us a kernel, training step %6.2f: ratio %.3f\n", $1, $2, $3, $4;
      s += log($4); ss += log($4) ^ 2; n++}
     END {m = s / n; v = (ss - n * m * m) / (n - 1); if (v < 0) v = 0;
          printf "ratio %.4f sd %.4f\n", exp(m), exp(m) * sqrt(v / n)}' "$out"
