#!/usr/bin/env bash
# Builds the InvisoSignal libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz-signal.sh [RUNS] [extra libFuzzer options...]
#
# RUNS defaults to 1000000. The fuzz build lives in .build-fuzz; seeds go to
# fuzz-corpus/signal-seeds, new inputs to fuzz-corpus/signal-work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product InvisoSignalFuzz && .build/debug/InvisoSignalFuzz CRASH_FILE
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING \
    --product InvisoSignalFuzz --scratch-path .build-fuzz
swift build --product InvisoSignalFuzz
mkdir -p fuzz-corpus/signal-work fuzz-corpus/artifacts
.build/debug/InvisoSignalFuzz --write-seeds fuzz-corpus/signal-seeds

exec .build-fuzz/release/InvisoSignalFuzz \
    -runs="$runs" -print_final_stats=1 -max_len=4096 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    fuzz-corpus/signal-work fuzz-corpus/signal-seeds
