#!/usr/bin/env bash
# The client's fuzz target (docs/fuzzing.md): scripts/fuzz-kit.sh [RUNS] [libFuzzer options...]
exec "$(dirname "$0")/fuzz.sh" kit "$@"
