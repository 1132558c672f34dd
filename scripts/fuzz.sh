#!/usr/bin/env bash
# Builds one libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz.sh TARGET [RUNS] [extra libFuzzer options...]
#
# TARGET is kit, mesh, nearby, noise, offline, server or signal (the product Inviso<Target>Fuzz). RUNS
# defaults to 1000000. The fuzz build lives in .build-fuzz; seeds go to
# fuzz-corpus/TARGET-seeds, new inputs to fuzz-corpus/TARGET-work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product Inviso<Target>Fuzz && .build/debug/Inviso<Target>Fuzz CRASH_FILE
set -euo pipefail
export SWIFT_BACKTRACE=enable=no  # else the runtime backtracer exits before libFuzzer writes the crash file
cd "$(dirname "$0")/.."

target="${1:?usage: scripts/fuzz.sh kit|mesh|nearby|noise|offline|server|signal [RUNS] [libFuzzer options...]}"
shift
runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))
product="Inviso$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}Fuzz"

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING --product "$product" --scratch-path .build-fuzz
swift build --product "$product"
mkdir -p "fuzz-corpus/$target-work" fuzz-corpus/artifacts
".build/debug/$product" --write-seeds "fuzz-corpus/$target-seeds"

exec ".build-fuzz/release/$product" \
    -runs="$runs" -print_final_stats=1 -max_len=4096 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    "fuzz-corpus/$target-work" "fuzz-corpus/$target-seeds"
