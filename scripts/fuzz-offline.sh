#!/usr/bin/env bash
# The offline-messages fuzz target (docs/fuzzing.md): scripts/fuzz-offline.sh [RUNS] [libFuzzer options...]
exec "$(dirname "$0")/fuzz.sh" offline "$@"
