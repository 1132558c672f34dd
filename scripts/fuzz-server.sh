#!/usr/bin/env bash
# The server's fuzz target (docs/fuzzing.md): scripts/fuzz-server.sh [RUNS] [libFuzzer options...]
exec "$(dirname "$0")/fuzz.sh" server "$@"
