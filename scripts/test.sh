#!/usr/bin/env bash
# The project's test command (README): build everything, including the `inviso`
# executable that the interop tests launch, replay the fuzz seed corpus through the
# fuzz target's invariant checks, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
bin="$(swift build --show-bin-path)"
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
"$bin/InvisoNoiseFuzz" --write-seeds "$seeds" >/dev/null
"$bin/InvisoNoiseFuzz" "$seeds" | tail -n 1
"$bin/InvisoSignalFuzz" --write-seeds "$seeds/signal" >/dev/null
"$bin/InvisoSignalFuzz" "$seeds/signal" | tail -n 1
"$bin/InvisoMeshFuzz" --write-seeds "$seeds/mesh" >/dev/null
"$bin/InvisoMeshFuzz" "$seeds/mesh" | tail -n 1
swift test
