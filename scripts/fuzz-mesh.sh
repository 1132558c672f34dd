#!/usr/bin/env bash
# The mesh fuzz target (docs/fuzzing.md): scripts/fuzz-mesh.sh [RUNS] [libFuzzer options...]
exec "$(dirname "$0")/fuzz.sh" mesh "$@"
