#!/bin/sh
# Throughput of Narayanan et al. SC'21 (arXiv 2104.04473), Table 1, on
# Selene (DGX A100 80GB, fp16, seq 2048, full recompute): wattlas cluster's
# TFLOP/s per GPU against the measured, with the error of each row, the
# mean and the worst. Configurations: Megatron-LM's examples/sc21/
# run_table_1.sh (tensor and pipeline sizes, micro- and global batch, layers
# per virtual stage, --recompute-method uniform; DDP=local from 39B up, whose
# gradient all-reduce follows the backward: --no-dp-overlap); the models are the
# megatron-1t preset's GPT with Table 1's layers, hidden size and heads
# (written to a temporary directory). Throughput as the paper counts it
# (its equation 3, recomputation included): 96 B s l h^2 (1 + s / 6h +
# V / 16lh) FLOPs per iteration of B sequences of s tokens, l layers,
# hidden size h, vocabulary V = 51200 (GPT-2's padded), over the
# iteration's time and the GPUs. usage: scripts/narayanan.sh [extra options]
W=${WATTLAS:-bin/wattlas}
base=$(dirname "$0")/../presets/models/megatron-1t.ini
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'model,gpus,tp,pp,vp,measured_tflops,predicted_tflops,error_pct\n'
# size layers hidden heads tp pp vp mbs gbs gpus measured ddp
rows=$({
    echo "1.7b 24 2304 24 1 1 1 16 512 32 137 torch"
    echo "3.6b 30 3072 32 2 1 1 16 512 64 138 torch"
    echo "7.5b 36 4096 32 4 1 1 16 512 128 142 torch"
    echo "18.4b 40 6144 48 8 1 1 8 1024 256 135 torch"
    echo "39.1b 48 8192 64 8 2 1 4 1536 512 138 local"
    echo "76.1b 60 10240 80 8 4 3 2 1792 1024 140 local"
    echo "145.6b 80 12288 96 8 8 2 2 2304 1536 148 local"
    echo "310.1b 96 16384 128 8 16 2 1 2160 1920 155 local"
    echo "529.6b 105 20480 128 8 35 3 1 2520 2520 163 local"
    echo "1008b 128 25600 160 8 64 1 1 3072 3072 163 local"
} | while read -r size L h a tp pp vp mbs gbs gpus meas ddp; do
    ov=; [ "$ddp" = local ] && ov=--no-dp-overlap
    ini="$tmp/sc21-$size.ini"
    sed -e "s/^id = .*/id = sc21-$size/" -e "s/^layers = .*/layers = $L/" \
        -e "s/^d_model = .*/d_model = $h/" -e "s/^heads = .*/heads = $a/" \
        -e "s/^d_ff = .*/d_ff = $((4 * h))/" "$base" > "$ini" || exit 1
    t=$($W cluster --system dgx-a100-80gb --nodes $((gpus / 8)) --model "$ini" --dtype fp16 \
        --seq 2048 --tp "$tp" --pp "$pp" --vp "$vp" --micro-batch "$mbs" --global-batch "$gbs" \
        --recompute full $ov ${EXTRA:-} --format csv 2>/dev/null |
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_s") c = i } NR == 2 && c { print $c }')
    [ -n "$t" ] || { echo "sc21-$size: wattlas cluster failed" >&2; exit 1; }
    awk -v m="$size" -v g="$gpus" -v tp="$tp" -v pp="$pp" -v vp="$vp" -v a="$meas" -v t="$t" \
        -v B="$gbs" -v l="$L" -v h="$h" 'BEGIN { s = 2048; V = 51200
        p = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) / (t * g) / 1e12
        printf "%s,%d,%d,%d,%d,%.0f,%.1f,%+.1f\n", m, g, tp, pp, vp, a, p, 100 * (p - a) / a }'
done) || exit 1
printf '%s\n' "$rows"
printf '%s\n' "$rows" | awk -F, '{ e = $8 < 0 ? -$8 : $8; s += e; if (e > w) w = e; n++ }
    END { printf "# mean |error| %.1f%%, worst %.1f%% over %d rows\n", s / n, w, n }'
