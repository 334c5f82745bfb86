#!/bin/sh
# Runs each cmocka test binary (and the Python tests, which print the same
# summary lines) and prints a closing line: passed, failed and skipped, then
# each skip with its reason. A test that needs only ../shared/data and is
# skipped although ../shared/data is there fails the run: CI has it.
# usage: run.sh DIR TEST...
dir=$1; shift
pass=0; fail=0; skip=0; failed=""; reasons=""
shared=${WATTLAS_SHARED:-../shared}/data
for t in "$@"; do
    out=$("$dir/$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' | tail -n 1)
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0})); skip=$((skip + ${s:-0}))
    why=$(printf '%s\n' "$out" | sed -n 's/^SKIP \(.*\)/\1/p')
    [ -n "$why" ] && reasons="$reasons$(printf '%s\n' "$why" | sed "s|^|  $t: |")
"
    if [ "$rc" != 0 ]; then
        [ -z "$f" ] && fail=$((fail + 1))
        failed="$failed $t"
    fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ -n "$reasons" ] && printf 'skipped:\n%s' "$reasons"
if [ -d "$shared" ] && printf '%s' "$reasons" | grep -q 'shared/data not found'; then
    echo "a test skipped for want of ../shared/data, which is at $shared" >&2
    failed="$failed (skips)"
fi
[ -z "$failed" ] || { echo "failing:$failed" >&2; exit 1; }
