#!/bin/sh
# Runs each cmocka test binary (and the Python tests, which print the same
# summary lines) and prints a closing line: passed, failed and skipped, then
# each skip with its reason. A test that needs only ../shared/data and is
# skipped although ../shared/data is there fails the run: CI has it.
# The tests run WATTLAS_TEST_JOBS at a time (default: the processors there
# are; each test works in its own temporary directory), the slowest first
# (SLOW below, measured on 2 cores); each one's output is printed whole as
# it ends, and the summary counts them all.
# usage: run.sh DIR TEST...
dir=$1; shift
shared=${WATTLAS_SHARED:-../shared}/data
jobs=${WATTLAS_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wattlas-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# the longest first, so that the last to start are short
SLOW="test_calib test_cli test_accuracy test_readme test_learn test_cluster_search test_cli_multi"
order=""
for t in $SLOW; do
    for u in "$@"; do [ "$u" = "$t" ] && order="$order $t"; done
done
for u in "$@"; do
    case " $SLOW " in *" $u "*) ;; *) order="$order $u" ;; esac
done
: >"$tmp/lock"
# test_readme and test_accuracy run some of the same commands: the first to
# come runs each, the other reads what it printed (tests/test_readme.py)
mkdir "$tmp/cmd" && export WATTLAS_CMD_CACHE="$tmp/cmd"
# shellcheck disable=SC2016
printf '%s\n' $order | xargs -P "$jobs" -I{} sh -c \
    '"$1/$3" >"$2/$3.out" 2>&1; echo $? >"$2/$3.rc"; flock "$2/lock" cat "$2/$3.out"' \
    sh "$dir" "$tmp" {}
pass=0; fail=0; skip=0; failed=""; reasons=""
for t in "$@"; do
    out=$(cat "$tmp/$t.out" 2>/dev/null); rc=$(cat "$tmp/$t.rc" 2>/dev/null || echo 1)
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
