#!/usr/bin/env bash
# Man pages for `inviso` and each of its commands, generated from the commands' own
# definitions (their help texts, options and defaults) by swift-argument-parser's
# generate-manual plugin, into .build/man/:
#
#   scripts/man.sh            # then: man -l .build/man/inviso.1
#   scripts/man.sh --single   # one page with every command in it
#
# The plugin builds the package (release; a few minutes from clean) and runs
# `inviso --experimental-dump-help` (FirstHourCLITests checks what that prints).
set -euo pipefail
cd "$(dirname "$0")/.."
pages=(--multi-page)
[ "${1:-}" = "--single" ] && pages=()
swift package plugin generate-manual "${pages[@]}" --authors "The Inviso authors" >&2
out=.build/man
rm -rf "$out"
mkdir -p "$out"
find .build/plugins -path '*GenerateManual*' -name 'inviso*.1' -exec cp {} "$out"/ \;
ls "$out"/inviso.1 >/dev/null
echo "$out: $(ls "$out" | wc -l) pages"
