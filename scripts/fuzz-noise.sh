#!/usr/bin/env bash
# Builds the InvisoNoise libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz-noise.sh [RUNS] [extra libFuzzer options...]
#
# RUNS defaults to 1000000. The fuzz build lives in .build-fuzz; the seed corpus is
# written to fuzz-corpus/seeds, new inputs go to fuzz-corpus/work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product InvisoNoiseFuzz && .build/debug/InvisoNoiseFuzz CRASH_FILE
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING \
    --product InvisoNoiseFuzz --scratch-path .build-fuzz
# The seed writer is the replay mode of the same target, from the normal build.
swift build --product InvisoNoiseFuzz
mkdir -p fuzz-corpus/work fuzz-corpus/artifacts
.build/debug/InvisoNoiseFuzz --write-seeds fuzz-corpus/seeds

exec .build-fuzz/release/InvisoNoiseFuzz \
    -runs="$runs" -dict=Fuzz/noise.dict -print_final_stats=1 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    fuzz-corpus/work fuzz-corpus/seeds
