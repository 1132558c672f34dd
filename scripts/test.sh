#!/usr/bin/env bash
# The project's test command (README): build everything, including the `inviso`
# executable that the interop tests launch, replay the fuzz seed corpus through the
# fuzz target's invariant checks, then run every test in two passes.
#
# The passes keep CPU-bound tests (crypto vectors, mesh simulations on every core) away
# from the tests that run servers, sockets and timers: in one process they share Swift's
# cooperative thread pool, which is as wide as the machine has cores, and on a two-core
# host two long computations leave no thread for a signaling client's 10 s pong timer or
# a test's receive timeout. Any test target not named in `live` runs in the first pass.
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
live='^(InvisoKitTests|InvisoServerTests|invisoTests)\.'
status=0
swift test --skip-build --skip "$live" || status=$?
swift test --skip-build --filter "$live" || status=$?
exit "$status"
