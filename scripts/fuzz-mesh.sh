#!/usr/bin/env bash
# Builds the InvisoMesh libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz-mesh.sh [RUNS] [extra libFuzzer options...]
#
# RUNS defaults to 1000000. The fuzz build lives in .build-fuzz; seeds go to
# fuzz-corpus/mesh-seeds, new inputs to fuzz-corpus/mesh-work and crash files to
# fuzz-corpus/artifacts (all ignored by git). Reproduce a crash with
#   swift build --product InvisoMeshFuzz && .build/debug/InvisoMeshFuzz CRASH_FILE
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1000000}"
shift $(( $# > 0 ? 1 : 0 ))

# Without this the Swift runtime backtracer handles the trap of a failed invariant and
# libFuzzer never writes the crash file.
export SWIFT_BACKTRACE=enable=no

swift build -c release --sanitize=fuzzer -Xswiftc -DINVISO_FUZZING \
    --product InvisoMeshFuzz --scratch-path .build-fuzz
swift build --product InvisoMeshFuzz
mkdir -p fuzz-corpus/mesh-work fuzz-corpus/artifacts
.build/debug/InvisoMeshFuzz --write-seeds fuzz-corpus/mesh-seeds

exec .build-fuzz/release/InvisoMeshFuzz \
    -runs="$runs" -print_final_stats=1 -max_len=4096 \
    -artifact_prefix=fuzz-corpus/artifacts/ "$@" \
    fuzz-corpus/mesh-work fuzz-corpus/mesh-seeds
