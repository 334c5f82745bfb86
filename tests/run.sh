#!/bin/sh
# Runs each cmocka test binary and prints a closing summary line.
# usage: run.sh DIR TEST...
dir=$1; shift
pass=0; fail=0; failed=""
for t in "$@"; do
    out=$("$dir/$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
    if [ "$rc" != 0 ]; then
        [ -z "$f" ] && fail=$((fail + 1))
        failed="$failed $t"
    fi
done
echo "$pass passed, $fail failed"
[ -z "$failed" ] || { echo "failing:$failed" >&2; exit 1; }
