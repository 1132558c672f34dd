#!/usr/bin/env bash
# Line coverage of one fuzz target's corpus (docs/fuzzing.md, "The campaign").
#
#   scripts/fuzz-coverage.sh TARGET [MODULE...]
#
# TARGET is kit, mesh, noise, server or signal. Builds the replay tool Inviso<Target>Fuzz
# with coverage instrumentation (in .build-cov), replays fuzz-corpus/TARGET-seeds and
# fuzz-corpus/TARGET-work through it, and prints llvm-cov's per-file report for the
# modules the target exercises (default: Inviso<Target>), then one summary line per module:
# lines covered / lines, as a percentage.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: scripts/fuzz-coverage.sh kit|mesh|noise|server|signal [MODULE...]}"
shift
product="Inviso$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}Fuzz"
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=("Inviso$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}")

llvm_cov="$(command -v llvm-cov || echo "$(dirname "$(readlink -f "$(command -v swift)")")/llvm-cov")"
llvm_profdata="$(command -v llvm-profdata || echo "$(dirname "$(readlink -f "$(command -v swift)")")/llvm-profdata")"

swift build --product "$product" --scratch-path .build-cov \
    -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping > /dev/null
binary=".build-cov/debug/$product"
profiles="$(mktemp -d)"
trap 'rm -rf "$profiles"' EXIT

corpora=()
for directory in "fuzz-corpus/$target-seeds" "fuzz-corpus/$target-work"; do
    [ -d "$directory" ] && corpora+=("$directory")
done
[ ${#corpora[@]} -gt 0 ] || { echo "no corpus in fuzz-corpus/$target-*: run scripts/fuzz.sh $target first" >&2; exit 1; }
inputs="$(find "${corpora[@]}" -type f | wc -l)"
LLVM_PROFILE_FILE="$profiles/%p.profraw" "$binary" "${corpora[@]}" > /dev/null
"$llvm_profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/merged.profdata"

echo "$product: $inputs inputs replayed"
for module in "${modules[@]}"; do
    "$llvm_cov" report "$binary" -instr-profile="$profiles/merged.profdata" \
        "$PWD/Sources/$module" 2> /dev/null | tail -n 1 |
        awk -v module="$module" '{ printf "%s: lines %d of %d covered (%s), functions %s, regions %s\n", module, $8 - $9, $8, $10, $7, $4 }'
done
