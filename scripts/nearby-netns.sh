#!/usr/bin/env bash
# Private test networks for the nearby (DNS-SD) tests: hosts in network namespaces of
# their own, joined by a bridge, each with its own D-Bus system bus and avahi-daemon, so
# that no mDNS packet ever reaches the machine's own interfaces (docs/nearby.md, "Tests").
# Needs root, iproute2, dbus-daemon and avahi-daemon.
#
#   scripts/nearby-netns.sh up NAME N      hosts NAME-h1 … NAME-hN (10.77.0.1 … .N on eth0),
#                                          bridged in NAME-hub; waits until every avahi runs
#   scripts/nearby-netns.sh exec NAME I CMD…  runs CMD on host I, with its D-Bus address
#   scripts/nearby-netns.sh bus NAME I     prints host I's DBUS_SYSTEM_BUS_ADDRESS value
#   scripts/nearby-netns.sh down NAME      stops the daemons, deletes the namespaces
#
# NAME is at most 8 characters ([a-z0-9]); state lives in /tmp/inviso-netns/NAME.
set -euo pipefail

state_root=/tmp/inviso-netns

die() { echo "nearby-netns: $*" >&2; exit 1; }

bus_address() { echo "unix:path=$state_root/$1/h$2/system_bus_socket"; }

up() {
    local name="$1" count="$2" dir="$state_root/$1"
    [[ "$name" =~ ^[a-z0-9]{1,8}$ ]] || die "NAME must be 1-8 characters of [a-z0-9]"
    [[ "$count" =~ ^[1-9]$ ]] || die "N must be 1-9"
    [ "$(id -u)" = 0 ] || die "needs root"
    down "$name" 2>/dev/null || true
    mkdir -p "$dir"
    chmod 755 "$state_root" "$dir"
    ip netns add "$name-hub"
    ip -n "$name-hub" link add br0 type bridge
    # Flood multicast to every port: no IGMP querier runs on this bridge.
    ip -n "$name-hub" link set br0 type bridge mcast_snooping 0
    ip -n "$name-hub" link set br0 up
    for i in $(seq 1 "$count"); do
        local ns="$name-h$i" host="$dir/h$i"
        mkdir -p "$host"
        chmod 755 "$host"
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        ip link add "$name-v$i" netns "$name-hub" type veth peer name eth0 netns "$ns"
        ip -n "$name-hub" link set "$name-v$i" master br0 up
        ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
        ip -n "$ns" link set eth0 up multicast on
        cat > "$host/avahi-daemon.conf" <<CONF
[server]
host-name=$name-h$i
domain-name=local
use-ipv4=yes
use-ipv6=no
allow-interfaces=eth0
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
[rlimits]
CONF
        ip netns exec "$ns" dbus-daemon --config-file=/usr/share/dbus-1/system.conf \
            --address="$(bus_address "$name" "$i")" --nopidfile --fork --print-pid > "$host/dbus.pid"
        # avahi keeps its pid file and socket in /run/avahi-daemon: a private tmpfs there,
        # in a mount namespace of its own, keeps the hosts (and the machine) apart.
        ip netns exec "$ns" env DBUS_SYSTEM_BUS_ADDRESS="$(bus_address "$name" "$i")" \
            unshare -m sh -c "mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f '$host/avahi-daemon.conf'" \
            > "$host/avahi.log" 2>&1 &
        echo $! > "$host/avahi.pid"
    done
    for i in $(seq 1 "$count"); do
        local ready=""
        for _ in $(seq 1 100); do
            # org.freedesktop.Avahi.Server.GetState: 2 is AVAHI_SERVER_RUNNING.
            if DBUS_SYSTEM_BUS_ADDRESS="$(bus_address "$name" "$i")" dbus-send --system --print-reply \
                --dest=org.freedesktop.Avahi / org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q "int32 2"; then
                ready=1
                break
            fi
            sleep 0.1
        done
        [ -n "$ready" ] || { cat "$dir/h$i/avahi.log" >&2; die "avahi-daemon on $name-h$i did not start"; }
    done
}

down() {
    local name="$1" dir="$state_root/$1"
    if [ -d "$dir" ]; then
        for pidfile in "$dir"/h*/avahi.pid "$dir"/h*/dbus.pid; do
            [ -f "$pidfile" ] && kill "$(head -n 1 "$pidfile")" 2>/dev/null || true
        done
    fi
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$name-(hub|h[0-9])$" || true); do
        # Anything still running in the namespace goes with it.
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns delete "$ns"
    done
    rm -rf "$dir"
}

command="${1:-}"
case "$command" in
    up) up "${2:?NAME}" "${3:?N}" ;;
    down) down "${2:?NAME}" ;;
    bus) bus_address "${2:?NAME}" "${3:?I}" ;;
    exec)
        name="${2:?NAME}" i="${3:?I}"
        shift 3
        exec ip netns exec "$name-h$i" env DBUS_SYSTEM_BUS_ADDRESS="$(bus_address "$name" "$i")" AVAHI_COMPAT_NOWARN=1 "$@"
        ;;
    *) die "usage: $0 up NAME N | exec NAME I CMD… | bus NAME I | down NAME" ;;
esac
