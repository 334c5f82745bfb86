#!/bin/sh
# A phase's host cost per kernel against a forward's, over every host whose
# rows of that phase were measured: for each, calibrate fits the phase's
# cost to its rows with its own measured forward cost (launch_us) held, and
# the ratio of the two is that host's. Prints one line per host, then
# "ratio R sd S": the geometric mean of the ratios and its standard error
# (the spread of their logs over sqrt(n)), which make calibrate carries to
# the server class (presets/hosts/server-2023.ini).
#   train: a training step's kernel (host_train_launch_us), from AdamW steps
#   decode: a kernel of generate's decode steps (host_decode_launch_us),
#           from HF generate rows
#
# usage: scripts/host_phase_ratio.sh BIN SHARED BUILD train|decode
#   BIN: the wattlas binary; SHARED: ../shared; BUILD: a scratch folder
set -eu
bin=$1 shared=$2 build=$3 phase=$4
case $phase in
train) key=train_launch_us ;;
decode) key=decode_launch_us ;;
*) echo "host_phase_ratio.sh: the phase is train or decode, not '$phase'" >&2; exit 2 ;;
esac
mkdir -p "$build"
out=$build/$phase-host-ratios.txt
: > "$out"

# fit HOST_NAME GPU HOST_INI ROWS.csv
fit() {
    if ! "$bin" calibrate --gpu "$2" --fit "host_$key" "$4" --host "$3" \
        -o "$build/$phase-host-$1.ini" > "$build/$phase-host-$1.log" 2>&1; then
        cat "$build/$phase-host-$1.log" >&2
        exit 1
    fi
    awk -F' = ' -v n="$1" -v k="$key" '/^launch_us =/{l=$2} $1 == k {t=$2}
        END{if (!(l > 0 && t > 0)) exit 1; printf "%s %.4f %.4f %.4f\n", n, l, t, t / l}' \
        "$build/$phase-host-$1.ini" >> "$out"
}

rows() {
    python3 "$(dirname "$0")/profile_step_rows.py" "$@"
}

if [ "$phase" = train ]; then
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
else
    # generations: the two H100 hosts of this repository whose HF generate
    # runs were measured, their whole-model files as they are (the rows
    # that are not generations do not move the decode cost)
    fit h100-vm presets/gpus/h100-sxm-80gb.ini data/h100-vm-2026-11/h100-vm.ini \
        data/h100-vm-2026-11/measurements/h100-sxm-80gb-models.csv
    fit h100-vm-b presets/gpus/h100-sxm-80gb.ini data/h100-vm-2026-11-26/h100-vm-b.ini \
        data/h100-vm-2026-11-26/measurements/h100-sxm-80gb-models.csv
fi

awk -v ph="$phase" '{printf "host %-12s forward %6.2f us a kernel, %s %6.2f: ratio %.3f\n", $1, $2,
      ph == "train" ? "training step" : "decode step", $3, $4;
      s += log($4); ss += log($4) ^ 2; n++}
     END {m = s / n; v = (ss - n * m * m) / (n - 1); if (v < 0) v = 0;
          printf "ratio %.4f sd %.4f\n", exp(m), exp(m) * sqrt(v / n)}' "$out"
