#!/bin/sh
# Iteration times of Korthikanti et al. 2022 (arXiv 2205.05198), Table 5, on
# Selene (DGX A100 80GB, fp16, seq 2048): wattlas cluster against the
# measured seconds, with the error of each row, the mean and the worst.
# Shapes: their Table 3; micro-batch 4 for 22B (global batch 4 on one
# pipeline stage), 1 for the others. usage: scripts/korthikanti.sh [extra options]
W=${WATTLAS:-bin/wattlas}
FULL="--recompute full"
SEL="--recompute selective --sequence-parallel"
printf 'model,gpus,experiment,measured_s,predicted_s,error_pct\n'
rows=$({
    echo "megatron-22b 1 --tp 8 --pp 1 --global-batch 4 --micro-batch 4|1.42|1.10"
    echo "gpt3-175b 8 --tp 8 --pp 8 --vp 3 --global-batch 64|18.13|13.75"
    echo "mt-nlg-530b 35 --tp 8 --pp 35 --vp 3 --global-batch 280|49.05|37.83"
    echo "megatron-1t 64 --tp 8 --pp 64 --global-batch 512|94.42|71.49"
} | while IFS='|' read -r cfg full sel; do
    set -- $cfg
    model=$1 nodes=$2
    shift 2
    for exp in full selective; do
        if [ $exp = full ]; then opts=$FULL meas=$full; else opts=$SEL meas=$sel; fi
        t=$($W cluster --system dgx-a100-80gb --nodes "$nodes" --model "$model" --dtype fp16 \
            --seq 2048 "$@" $opts ${EXTRA:-} --format csv 2>/dev/null |
            awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_s") c = i } NR == 2 && c { print $c }')
        [ -n "$t" ] || { echo "$model $exp: wattlas cluster failed" >&2; exit 1; }
        awk -v m="$model" -v g=$((nodes * 8)) -v e=$exp -v a="$meas" -v p="$t" \
            'BEGIN { printf "%s,%d,%s,%.2f,%.2f,%+.1f\n", m, g, e, a, p, 100 * (p - a) / a }'
    done
done) || exit 1
printf '%s\n' "$rows"
printf '%s\n' "$rows" | awk -F, '{ e = $6 < 0 ? -$6 : $6; s += e; if (e > w) w = e; n++ }
    END { printf "# mean |error| %.1f%%, worst %.1f%% over %d rows\n", s / n, w, n }'
