#!/usr/bin/env bash
# Files in a chat, end to end with the installed binary (CI runs it on the release build):
# a 200 MiB file through the relay and through the direct path, with the receiver killed
# (SIGKILL) mid-way and resumed with `inviso resume`, the sender killed and resumed on the
# relay, and the hash compared. Everything on 127.0.0.1; a temporary directory is removed.
#
#   scripts/files-acceptance.sh [BINARY] [MIB]
set -euo pipefail

binary="${1:-.build/release/inviso}"
mib="${2:-200}"
root="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$root"
}
trap cleanup EXIT

fail() {
    echo "files-acceptance: $*" >&2
    for log in "$root"/*.out "$root"/*.err; do
        [ -s "$log" ] && { echo "--- $log" >&2; grep -v file_progress "$log" | tail -20 >&2; }
    done
    exit 1
}

# Waits up to $2 seconds for a line of file $1 matching $3.
wait_for() {
    local file="$1" seconds="$2" pattern="$3"
    for _ in $(seq 1 $((seconds * 20))); do
        grep -q -- "$pattern" "$file" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# The highest `bytes` of the file_progress lines in $1.
progress() { grep -o '"event":"file_progress"[^}]*"bytes":[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' | sort -n | tail -1; }

# Waits until $1 reports at least $2 bytes.
wait_for_bytes() {
    for _ in $(seq 1 2400); do
        local held
        held="$(progress "$1")"
        [ "${held:-0}" -ge "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

head -c $((mib << 20)) /dev/urandom > "$root/big.bin"
expected="$(sha256sum "$root/big.bin" | cut -d' ' -f1)"

"$binary" serve --port 0 --data "$root/server" --relay-rate 1000 --message-rate 100000 > "$root/server.out" 2> "$root/server.err" &
pids+=($!)
wait_for "$root/server.out" 30 '"listening"' || fail "the server did not start"
url="$(grep -m1 -o '"url":"[^"]*"' "$root/server.out" | cut -d'"' -f4)"

# One chat: alice sends, bob receives; $1 = relay|direct, $2 = receiver|sender (who is killed).
run() {
    local path="$1" victim="$2" dir="$root/$1-$2"
    local flags=()
    [ "$path" = relay ] && flags=(--no-direct)
    mkdir -p "$dir/downloads"
    mkfifo "$dir/a.in" "$dir/b.in"
    "$binary" invite --json --server "$url" --data "$dir/a" "${flags[@]}" < "$dir/a.in" > "$root/a-$path-$victim.out" 2> "$root/a-$path-$victim.err" &
    local alice=$!
    pids+=($alice)
    exec 7> "$dir/a.in"
    wait_for "$root/a-$path-$victim.out" 30 '"event":"invite"' || fail "$path: no invite"
    local invite
    invite="$(grep -o '"invite":"[^"]*"' "$root/a-$path-$victim.out" | cut -d'"' -f4)"
    "$binary" join "$invite" --json --server "$url" --data "$dir/b" --downloads "$dir/downloads" "${flags[@]}" \
        < "$dir/b.in" > "$root/b-$path-$victim.out" 2> "$root/b-$path-$victim.err" &
    local bob=$!
    pids+=($bob)
    exec 8> "$dir/b.in"
    wait_for "$root/b-$path-$victim.out" 30 '"event":"connected"' || fail "$path: bob did not connect"
    if [ "$path" = direct ]; then
        wait_for "$root/a-$path-$victim.out" 30 '"path":"direct"' || fail "direct: no direct path"
    fi
    echo '{"command":"send","path":"'"$root/big.bin"'"}' >&7
    wait_for "$root/b-$path-$victim.out" 30 '"event":"file_offer"' || fail "$path: no offer"
    echo '{"command":"accept_file"}' >&8
    local half=$(((mib << 20) / 2))
    local sa="$root/a-$path-$victim.out" sb="$root/b-$path-$victim.out"
    if [ "$victim" = receiver ]; then
        wait_for_bytes "$sb" "$half" || fail "$path: bob never held half"
        local session
        session="$(grep -m1 -o '"session":"[^"]*"' "$sb" | cut -d'"' -f4)"
        kill -9 "$bob"
        wait "$bob" 2>/dev/null || true
        exec 8>&-
        local held
        held="$(progress "$sb")"
        [ "$held" -lt $((mib << 20)) ] || fail "$path: the whole file arrived before the kill"
        rm -f "$dir/b.in"
        mkfifo "$dir/b.in"
        sb="$root/b2-$path-$victim.out"
        "$binary" resume "${session:0:8}" --json --data "$dir/b" --downloads "$dir/downloads" "${flags[@]}" \
            < "$dir/b.in" > "$sb" 2> "$root/b2-$path-$victim.err" &
        pids+=($!)
        exec 8> "$dir/b.in"
        echo "$path: receiver killed at $held bytes, resumed"
    else
        wait_for_bytes "$sa" "$half" || fail "$path: alice never sent half"
        local session
        session="$(grep -m1 -o '"session":"[^"]*"' "$sa" | cut -d'"' -f4)"
        kill -9 "$alice"
        wait "$alice" 2>/dev/null || true
        exec 7>&-
        echo "$path: sender killed at $(progress "$sa") bytes acknowledged, resumed"
        rm -f "$dir/a.in"
        mkfifo "$dir/a.in"
        sa="$root/a2-$path-$victim.out"
        "$binary" resume "${session:0:8}" --json --data "$dir/a" "${flags[@]}" < "$dir/a.in" > "$sa" 2> "$root/a2-$path-$victim.err" &
        pids+=($!)
        exec 7> "$dir/a.in"
    fi
    wait_for "$sb" 600 '"event":"file_received"' || fail "$path: the file was not received"
    wait_for "$sa" 60 '"event":"file_sent","id":"[0-9a-f]*","verified":true' || fail "$path: the sender was not told"
    local got
    got="$(sha256sum "$dir/downloads/big.bin" | cut -d' ' -f1)"
    [ "$got" = "$expected" ] || fail "$path: hash differs"
    grep -q "\"sha256\":\"$expected\"" "$sb" || fail "$path: reported hash differs"
    exec 7>&- 8>&-
    echo "$path, $victim killed: $mib MiB received, SHA-256 equal ($expected)"
}

[ -n "${ONLY:-}" ] || run relay receiver
[ -n "${ONLY:-}" ] || run direct receiver
run relay sender
echo "files-acceptance: all passed"
