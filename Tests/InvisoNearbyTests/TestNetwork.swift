import Foundation
import Synchronization
import Testing

/// Runs programs for the namespace tests with `posix_spawn` and `waitpid` on their own pid
/// (Foundation's `Process` did not observe the exit of a script whose children daemonise).
/// Standard output and error go through a pipe that a thread of ours drains.
enum Spawn {
    /// Runs `arguments` to completion on a thread of its own — never on one of the few
    /// threads Swift concurrency has, which a blocking wait would starve — and returns its
    /// exit status and output (stdout + stderr).
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try runBlocking(arguments))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    /// ``run(_:)`` on the calling thread (deinitialisers only).
    static func runBlocking(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try Child(arguments)
        let status = child.wait()
        return (status, child.output())
    }

    /// A started program.
    ///
    /// Interactive children (`input: true`) get a pipe for standard input and a
    /// non-blocking one for their output, read whenever the output is asked for (and while
    /// waiting for the exit, so the child never blocks on a full pipe). Others write to a
    /// file read after they exit: a script that starts daemons would hand them a pipe's
    /// write end, which would then never reach end of file.
    final class Child: @unchecked Sendable {
        // @unchecked: `pid` and the descriptors are set once in init; the rest is guarded
        // by Mutexes.
        let pid: pid_t
        private let buffer = OutputBuffer()
        private let outputPath: String?
        private let reaped = Mutex<Int32?>(nil)
        private let inputFD = Mutex<Int32?>(nil)

        init(_ arguments: [String], input: Bool = false) throws {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            // Every descriptor of ours is close-on-exec, so no other child inherits it.
            var inputPipe: [Int32] = [-1, -1]
            var outputPipe: [Int32] = [-1, -1]
            if input {
                guard pipe(&inputPipe) == 0, pipe(&outputPipe) == 0 else { throw POSIXError(.EMFILE) }
                for fd in inputPipe + outputPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
                posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
                posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)
                outputPath = nil
            } else {
                let path = NSTemporaryDirectory() + "inviso-spawn-\(UUID().uuidString).log"
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                outputPath = path
            }
            // The spawning thread may block signals (test runners' worker threads do), and a
            // child inherits that mask: reset it and every signal's disposition, or SIGTERM
            // would never reach it.
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var empty = sigset_t()
            sigemptyset(&empty)
            var all = sigset_t()
            sigfillset(&all)
            posix_spawnattr_setsigmask(&attributes, &empty)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            let argv = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
            if input {
                close(inputPipe[0])
                close(outputPipe[1])
            }
            guard status == 0 else {
                if input {
                    close(inputPipe[1])
                    close(outputPipe[0])
                }
                throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL)
            }
            self.pid = pid
            if input {
                inputFD.withLock { $0 = inputPipe[1] }
                _ = fcntl(outputPipe[0], F_SETFL, fcntl(outputPipe[0], F_GETFL) | O_NONBLOCK)
                buffer.adopt(outputPipe[0])
            }
        }

        /// Writes `text` to the child's standard input.
        func write(_ text: String) {
            inputFD.withLock { fd in
                guard let fd else { return }
                let bytes = Array(text.utf8)
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }

        /// Closes the child's standard input.
        func closeInput() {
            inputFD.withLock { fd in
                if let open = fd { close(open) }
                fd = nil
            }
        }

        /// Waits for the exit and returns the exit status (128 + signal when killed).
        @discardableResult
        func wait() -> Int32 {
            reaped.withLock { reaped in
                if let reaped { return reaped }
                var status: Int32 = 0
                if outputPath == nil {
                    // Keep reading, so that a child with a lot to say is never stuck on a full pipe.
                    while waitpid(pid, &status, WNOHANG) == 0 {
                        buffer.poll()
                        usleep(10_000)
                    }
                    buffer.poll()
                } else {
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                }
                let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                reaped = exitStatus
                return exitStatus
            }
        }

        /// Sends SIGKILL and waits for the exit.
        func killAbruptly() async {
            kill(pid, SIGKILL)
            _ = await exit()
        }

        /// Sends SIGTERM and waits for the exit.
        func terminate() async {
            kill(pid, SIGTERM)
            _ = await exit()
        }

        /// Waits for the exit without blocking a thread (polls, reading output meanwhile);
        /// returns the exit status.
        func exit() async -> Int32 {
            while true {
                if let status = reapIfExited() { return status }
                buffer.poll()
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        private func reapIfExited() -> Int32? {
            reaped.withLock { reaped in
                if let reaped { return reaped }
                var status: Int32 = 0
                guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
                buffer.poll()
                let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                reaped = exitStatus
                return exitStatus
            }
        }

        /// Everything the program wrote so far.
        func output() -> String {
            if let outputPath { return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
            return buffer.text
        }

        deinit {
            if reaped.withLock({ $0 == nil }) {
                kill(pid, SIGKILL)
                wait()
            }
            closeInput()
            if let outputPath { try? FileManager.default.removeItem(atPath: outputPath) }
        }
    }

    /// Output read from a non-blocking pipe on demand.
    final class OutputBuffer: Sendable {
        private struct State {
            var fd: Int32 = -1
            var bytes: [UInt8] = []
        }
        private let state = Mutex(State())

        var text: String {
            poll()
            return String(decoding: state.withLock { $0.bytes }, as: UTF8.self)
        }

        func adopt(_ fd: Int32) { state.withLock { $0.fd = fd } }


        /// Reads whatever the pipe holds; closes it at end of file.
        func poll() {
            state.withLock { state in
                guard state.fd >= 0 else { return }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(state.fd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        state.bytes += chunk[0..<count]
                        continue
                    }
                    if count < 0, errno == EINTR { continue }
                    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
                    close(state.fd)
                    state.fd = -1
                    return
                }
            }
        }

        deinit {
            state.withLock { if $0.fd >= 0 { close($0.fd) } }
        }
    }
}

/// Hosts in network namespaces with their own D-Bus and avahi-daemon
/// (`scripts/nearby-netns.sh`). Needs root and the avahi packages: outside CI the tests
/// that use it skip with a message; under `CI=true` they run (and fail without them).
final class TestNetwork: @unchecked Sendable {
    // @unchecked: `name` is set once; `stopped` is touched by the test's task only.
    let name: String
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/nearby-netns.sh").standardizedFileURL.path

    /// Whether the namespace tests can run here (root, `ip`, `dbus-daemon`, `avahi-daemon`).
    static var isAvailable: Bool {
        guard getuid() == 0 else { return false }
        return ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/avahi-browse"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && (FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/sbin/ip"))
    }

    /// Whether to run: available, or CI (which must run them).
    static var shouldRun: Bool {
        if isAvailable { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        print("skipping the DNS-SD namespace tests: they need root and avahi-daemon, dbus-daemon, avahi-utils, iproute2 (CI=true runs them)")
        return false
    }

    private var stopped = false

    private init(name: String) { self.name = name }

    /// Starts `hosts` hosts named after `prefix` plus a random suffix.
    static func start(prefix: String, hosts: Int) async throws -> TestNetwork {
        let network = TestNetwork(name: prefix + String(UInt32.random(in: 0...0xFFFF), radix: 16))
        let result = try await Spawn.run(["bash", script, "up", network.name, String(hosts)])
        guard result.status == 0 else {
            await network.stop()
            throw TestNetworkError(output: result.output)
        }
        return network
    }

    /// Stops the daemons and deletes the namespaces.
    func stop() async {
        guard !stopped else { return }
        stopped = true
        _ = try? await Spawn.run(["bash", Self.script, "down", name])
    }

    /// The D-Bus address of host `index`'s system bus.
    func busAddress(_ index: Int) -> String { "unix:path=/tmp/inviso-netns/\(name)/h\(index)/system_bus_socket" }

    /// Runs a command on host `index` to completion.
    func run(_ index: Int, _ command: [String]) async throws -> (status: Int32, output: String) {
        try await Spawn.run(["bash", Self.script, "exec", name, String(index)] + command)
    }

    /// Starts a command on host `index` (with a pipe to its standard input for `input`).
    func start(_ index: Int, _ command: [String], input: Bool = false) throws -> Spawn.Child {
        try Spawn.Child(["bash", Self.script, "exec", name, String(index)] + command, input: input)
    }

    /// A test that failed before ``stop()`` still leaves nothing behind (blocking, rarely).
    deinit {
        if !stopped { _ = try? Spawn.runBlocking(["bash", Self.script, "down", name]) }
    }
}

struct TestNetworkError: Error, CustomStringConvertible {
    let output: String
    var description: String { "could not start the test network:\n\(output)" }
}

/// Waits (on the real daemon, with a generous deadline) until `condition` holds.
func eventually(_ what: String, seconds: Double = 15, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}
