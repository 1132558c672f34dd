#!/usr/bin/env bash
# Runs the whole test suite N times in a row (default 10) with two busy loops beside it,
# to show that no test depends on a quiet machine (issue 17; CONTRIBUTING.md).
#
#   scripts/stress-tests.sh [N] [extra swift test options...]
#
# Builds once, then runs `swift test --skip-build --parallel` N times while two shell
# loops spin on the CPU. Prints one line per run (green/red, seconds, the test count)
# and a summary; exits non-zero when any run failed. The logs of failed runs are kept in
# .build/stress-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
shift $(( $# > 0 ? 1 : 0 ))

swift build --build-tests
logs=.build/stress-logs
mkdir -p "$logs"

burners=()
for _ in 1 2; do
    ( while :; do :; done ) &
    burners+=($!)
done
trap 'kill "${burners[@]}" 2>/dev/null || true' EXIT

green=0
for run in $(seq 1 "$runs"); do
    start=$SECONDS
    log="$logs/run-$run.log"
    if swift test --skip-build --parallel "$@" > "$log" 2>&1; then
        green=$((green + 1))
        verdict=green
        summary="$(grep -E '^✔ Test run with' "$log" | tail -n 1 || true)"
        rm -f "$log"
    else
        verdict=RED
        summary="$(grep -E '✘ Test run with|✘ Test .* recorded an issue' "$log" | head -n 3 || true)"
    fi
    echo "run $run/$runs: $verdict in $((SECONDS - start)) s — $summary"
done
echo "$green of $runs runs green (two busy loops beside each)"
[ "$green" -eq "$runs" ]
