#!/usr/bin/env bash
# Builds the InvisoServer libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz-server.sh [RUNS] [extra libFuzzer options...]
#
# RUNS defaults to 1000000. The fuzz build lives in .build-fuzz; seeds go to
# fuzz-corpus/server-seeds, new inputs to fuzz-corpus/server-work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product InvisoServerFuzz && .build/debug/InvisoServerFuzz CRASH_FILE
set -euo pipefail
export SWIFT_BACKTRACE=enable=no  # else the runtime backtracer exits before libFuzzer writes the crash file
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING \
    --product InvisoServerFuzz --scratch-path .build-fuzz
swift build --product InvisoServerFuzz
mkdir -p fuzz-corpus/server-work fuzz-corpus/artifacts
.build/debug/InvisoServerFuzz --write-seeds fuzz-corpus/server-seeds

exec .build-fuzz/release/InvisoServerFuzz \
    -runs="$runs" -print_final_stats=1 -max_len=4096 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    fuzz-corpus/server-work fuzz-corpus/server-seeds
