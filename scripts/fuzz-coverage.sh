#!/usr/bin/env bash
# Line coverage of one fuzz target's corpus (docs/fuzzing.md, "The campaign").
#
#   scripts/fuzz-coverage.sh TARGET [MODULE...]
#
# TARGET is kit, mesh, noise, server or signal. Builds the replay tool Inviso<Target>Fuzz
# with coverage instrumentation (in .build-cov), replays fuzz-corpus/TARGET-seeds and
# fuzz-corpus/TARGET-work through it, and prints llvm-cov's per-file report for the
# modules the target exercises (default: Inviso<Target>): per module, a summary line
# (lines covered of lines) and the same for every file the corpus reached.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:?usage: scripts/fuzz-coverage.sh kit|mesh|noise|server|signal [MODULE...]}"
shift
product="Inviso$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}Fuzz"
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=("Inviso$(tr '[:lower:]' '[:upper:]' <<< "${target:0:1}")${target:1}")

# The toolchain's own LLVM tools: a system llvm-profdata may not read the profile format
# this compiler writes.
toolchain="$(dirname "$(readlink -f "$(command -v swift)")")"
llvm_cov="$toolchain/llvm-cov"
llvm_profdata="$toolchain/llvm-profdata"
[ -x "$llvm_cov" ] || llvm_cov="$(command -v llvm-cov)"
[ -x "$llvm_profdata" ] || llvm_profdata="$(command -v llvm-profdata)"

swift build --product "$product" --scratch-path .build-cov \
    -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping > /dev/null 2>&1
binary=".build-cov/debug/$product"
profiles="$(mktemp -d)"
trap 'rm -rf "$profiles"' EXIT

corpora=()
for directory in "fuzz-corpus/$target-seeds" "fuzz-corpus/$target-work"; do
    [ -d "$directory" ] && corpora+=("$directory")
done
[ ${#corpora[@]} -gt 0 ] || { echo "no corpus in fuzz-corpus/$target-*: run scripts/fuzz.sh $target first" >&2; exit 1; }
# A snapshot: a fuzzer still running on the corpus replaces inputs as it goes.
mkdir "$profiles/corpus"
find "${corpora[@]}" -type f -exec cp -t "$profiles/corpus" {} + 2> /dev/null || true
inputs="$(find "$profiles/corpus" -type f | wc -l)"
LLVM_PROFILE_FILE="$profiles/%p.profraw" "$binary" "$profiles/corpus" > /dev/null
"$llvm_profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/merged.profdata"

echo "$product: $inputs inputs replayed"
for module in "${modules[@]}"; do
    report="$("$llvm_cov" report "$binary" -instr-profile="$profiles/merged.profdata" "$PWD/Sources/$module" 2> /dev/null)"
    # Module total, then every file the corpus reached (lines covered of lines).
    tail -n 1 <<< "$report" |
        awk -v module="$module" '{ printf "%s: lines %d of %d covered (%s), functions %s, regions %s\n", module, $8 - $9, $8, $10, $7, $4 }'
    grep -E '^[^ ]+\.swift ' <<< "$report" |
        awk '$8 > $9 { printf "  %s: %d of %d lines (%s)\n", $1, $8 - $9, $8, $10 }'
done
