#!/usr/bin/env bash
# The API contract check: starts `inviso serve` (SQLite in a temporary directory, a free
# port on 127.0.0.1) and runs Schemathesis against docs/openapi.yaml with every check,
# the coverage, fuzzing and stateful phases, for SCHEMATHESIS_SECONDS (default 90).
# Deprecated operations (the old API, which only answers 410) are left out.
#
# Usage: scripts/schemathesis.sh [path/to/inviso]   (default: the debug build)
# Schemathesis is installed into .build/schemathesis-venv from PyPI on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
inviso="${1:-$(swift build --show-bin-path)/inviso}"
version=4.32.5
venv=.build/schemathesis-venv
if [ ! -x "$venv/bin/schemathesis" ] || [ "$("$venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $version" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "schemathesis==$version"
fi
data="$(mktemp -d)"
out="$(mktemp)"
"$inviso" serve --port 0 --data "$data" --log-level warning >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$data" "$out"' EXIT
for _ in $(seq 1 100); do
    grep -q '"listening"' "$out" && break
    sleep 0.1
done
url="$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$out" | head -n 1)"
[ -n "$url" ] || { echo "error: inviso serve did not start" >&2; exit 1; }
echo "schemathesis $version against $url (${SCHEMATHESIS_SECONDS:-90} s)"
"$venv/bin/schemathesis" --config-file scripts/schemathesis.toml run docs/openapi.yaml --url "$url" \
    --checks all --exclude-deprecated --phases coverage,fuzzing,stateful \
    --max-time "${SCHEMATHESIS_SECONDS:-90}" --seed 1 --no-color
