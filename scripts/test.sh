#!/usr/bin/env bash
# The project's test command (README): build everything, including the `inviso`
# executable that the interop tests launch, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test
