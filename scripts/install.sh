#!/usr/bin/env bash
# Builds the `inviso` command for use and installs it.
#
#   scripts/install.sh [--prefix DIR] [--no-install]
#
# Installs DIR/bin/inviso (DIR: $PREFIX, else ~/.local). --no-install only builds and
# prints the binary's path. The build has its own scratch directory (.build-install), so
# it does not disturb `swift build`'s debug build in .build.
#
# On Linux the binary is built for a fast start (docs/cli.md, "Where the two-process time
# goes"); each flag roughly halves a part of what a process spends before its first line:
#   --static-swift-stdlib   the Swift runtime and Foundation linked in: no dynamic
#                           linker resolving them at every start;
#   -disable-concrete-type-metadata-mangled-name-accessors
#                           generic types' metadata built by accessor calls instead of
#                           from mangled names, which makes the runtime scan every
#                           protocol-conformance record of the binary on first use;
#   --no-export-dynamic     the executable's 54,000 symbols kept out of the dynamic
#                           symbol table: fewer symbol relocations at load, and a cheap
#                           `dladdr` (the runtime calls it once at start).
# The binary stays position-independent (ASLR). On macOS this is `swift build -c release`.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${PREFIX:-$HOME/.local}"
install=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix)
            [ $# -ge 2 ] || { echo "usage: scripts/install.sh [--prefix DIR] [--no-install]" >&2; exit 2; }
            prefix="$2"
            shift 2
            ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-install) install=0; shift ;;
        -h | --help)
            sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) echo "unknown option $1 (usage: scripts/install.sh [--prefix DIR] [--no-install])" >&2; exit 2 ;;
    esac
done

flags=(-c release --product inviso --scratch-path .build-install)
if [ "$(uname -s)" = Linux ]; then
    flags+=(
        --static-swift-stdlib
        -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
        -Xlinker --no-export-dynamic
    )
fi

swift build "${flags[@]}" >&2
binary="$(swift build "${flags[@]}" --show-bin-path)/inviso"
"$binary" --help >/dev/null

if [ "$install" = 0 ]; then
    echo "$binary"
    exit 0
fi
mkdir -p "$prefix/bin"
install -m 0755 "$binary" "$prefix/bin/inviso"
echo "installed $prefix/bin/inviso" >&2
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "note: $prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac
echo "$prefix/bin/inviso"
