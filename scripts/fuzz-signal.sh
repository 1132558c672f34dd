#!/usr/bin/env bash
# The signal fuzz target (docs/fuzzing.md): scripts/fuzz-signal.sh [RUNS] [libFuzzer options...]
exec "$(dirname "$0")/fuzz.sh" signal "$@"
