#!/usr/bin/env bash
# Builds the InvisoKit libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz-kit.sh [RUNS] [extra libFuzzer options...]
#
# RUNS defaults to 1000000. The fuzz build lives in .build-fuzz; seeds go to
# fuzz-corpus/kit-seeds, new inputs to fuzz-corpus/kit-work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product InvisoKitFuzz && .build/debug/InvisoKitFuzz CRASH_FILE
set -euo pipefail
export SWIFT_BACKTRACE=enable=no  # else the runtime backtracer exits before libFuzzer writes the crash file
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING \
    --product InvisoKitFuzz --scratch-path .build-fuzz
swift build --product InvisoKitFuzz
mkdir -p fuzz-corpus/kit-work fuzz-corpus/artifacts
.build/debug/InvisoKitFuzz --write-seeds fuzz-corpus/kit-seeds

exec .build-fuzz/release/InvisoKitFuzz \
    -runs="$runs" -print_final_stats=1 -max_len=4096 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    fuzz-corpus/kit-work fuzz-corpus/kit-seeds
