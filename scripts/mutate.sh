#!/bin/sh
# make mutate: applies each mutation of tests/mutations.txt on its own,
# rebuilds the tests it names, and runs them: every mutation must make one
# of them fail. Prints each mutation's fate and the survivors; exits 1 when
# any survives or a sed expression no longer changes its file (the code
# moved: the list must follow it). The working tree is restored after each.
# usage: mutate.sh [LIST]
list=${1:-tests/mutations.txt}
build=${BUILD:-build}
tab=$(printf '\t')
n=0; caught=0; survivors=""; stale=""
while IFS="$tab" read -r file expr tests; do
    case "$file" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    cp "$file" "$file.mutate-orig" || exit 1
    sed -i "$expr" "$file"
    if cmp -s "$file" "$file.mutate-orig"; then
        mv "$file.mutate-orig" "$file"
        echo "stale  $n $file: $expr"
        stale="$stale $n"
        continue
    fi
    fate=survived
    targets=""
    for t in $tests; do targets="$targets $build/tests/$t"; done
    if ! make --no-print-directory $targets >"$build/mutate.log" 2>&1; then
        fate="caught (build)"
    else
        for t in $tests; do
            if ! "$build/tests/$t" >>"$build/mutate.log" 2>&1; then
                fate="caught by $t"
                break
            fi
        done
    fi
    mv "$file.mutate-orig" "$file"
    touch "$file" # newer than the mutant's objects, which make then rebuilds
    echo "$fate  $n $file: $expr"
    if [ "$fate" = survived ]; then
        survivors="$survivors $n"
    else
        caught=$((caught + 1))
    fi
done < "$list"
# the library and the command rebuilt from the restored sources
make --no-print-directory all >/dev/null 2>&1
echo "$n mutations: $caught caught${survivors:+, survived:$survivors}${stale:+, stale:$stale}"
[ -z "$survivors" ] && [ -z "$stale" ]
