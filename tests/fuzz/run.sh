#!/bin/sh
# make fuzz: runs each libFuzzer harness for SECONDS on a working copy of its
# seed corpus and prints executions, coverage and findings per harness
# (crashes, sanitizer reports, leaks, timeouts and units slower than 10 s,
# each an artifact libFuzzer writes). Every finding is copied to
# tests/fuzz/regress/NAME (make check replays it from then on) and the run
# fails.
# usage: run.sh BUILD_DIR SECONDS NAME...
# FUZZ_RUNS=N stops a harness after N executions (when SECONDS allow).
set -u
dir=$1; secs=$2; shift 2
status=0
printf '%-14s %12s %10s %8s %s\n' harness executions exec/s cov findings
for t in "$@"; do
    work=$dir/corpus/$t; crashes=$dir/crashes/$t
    # an earlier run's findings are in tests/fuzz/regress already: only
    # this run's count
    rm -rf "$crashes"
    mkdir -p "$work" "$crashes"
    cp -n tests/fuzz/corpus/"$t"/* "$work"/ 2>/dev/null
    [ -d tests/fuzz/regress/"$t" ] && cp -n tests/fuzz/regress/"$t"/* "$work"/ 2>/dev/null
    log=$dir/fuzz_$t.log
    LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
        "$dir/fuzz_$t" "$work" -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
        -print_final_stats=1 -timeout=20 \
        -rss_limit_mb=2560 -max_len=8192 -artifact_prefix="$crashes/" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    n=$(find "$crashes" -type f | wc -l)
    printf '%-14s %12s %10s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$n"
    if [ "$rc" != 0 ] || [ "$n" != 0 ]; then
        status=1
        mkdir -p tests/fuzz/regress/"$t"
        for f in "$crashes"/*; do
            [ -f "$f" ] && cp "$f" tests/fuzz/regress/"$t"/ && echo "  kept $f in tests/fuzz/regress/$t/"
        done
        grep -m 5 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/  /'
    fi
done
exit $status
