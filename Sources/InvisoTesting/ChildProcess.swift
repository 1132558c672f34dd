package import Foundation

/// A child process with captured standard output/error and bounded waits, for driving the
/// `inviso` executable from tests.
package final class ChildProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let condition = NSCondition()
    private var stdoutBytes: [UInt8] = []
    private var stderrBytes: [UInt8] = []
    private var openStreams = 2

    /// Starts `executable` with `arguments`; standard input stays open until ``closeInput()``.
    /// The child inherits this process's environment plus `environment`, minus `unsetting`.
    package init(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], unsetting: [String] = []
    ) throws {
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty || !unsetting.isEmpty {
            var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            for name in unsetting { merged[name] = nil }
            process.environment = merged
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        startReader(output.fileHandleForReading, isStdout: true)
        startReader(errors.fileHandleForReading, isStdout: false)
    }

    private func startReader(_ handle: FileHandle, isStdout: Bool) {
        let thread = Thread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty {
                    openStreams -= 1
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                if isStdout { stdoutBytes.append(contentsOf: data) } else { stderrBytes.append(contentsOf: data) }
                condition.broadcast()
                condition.unlock()
            }
        }
        thread.start()
    }

    /// Writes `text` to the child's standard input.
    package func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes the child's standard input (end of file for it).
    package func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Complete stdout lines so far, parsed as JSON objects (unparseable lines are kept as `["raw": line]`).
    package var events: [[String: Any]] {
        condition.lock()
        let bytes = stdoutBytes
        condition.unlock()
        return Self.lines(bytes).map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["raw": line]
        }
    }

    /// Everything written to stdout so far, as bytes (a terminal stream, say).
    package var standardOutput: [UInt8] { snapshot().stdout }

    /// Whether the process has not exited yet.
    package var isRunning: Bool { process.isRunning }

    /// Everything written to stdout and stderr, for failure messages.
    package var transcript: String {
        condition.lock()
        defer { condition.unlock() }
        return "stdout:\n" + String(decoding: stdoutBytes, as: UTF8.self) + "stderr:\n" + String(decoding: stderrBytes, as: UTF8.self)
    }

    /// Waits until some stdout line is a JSON object satisfying `predicate`.
    ///
    /// Polls with `Task.sleep`: a blocking wait would hold one of the concurrency pool's
    /// threads (two on a 2-core CI host) and starve every other test running at the time.
    package func waitForEvent(timeout: TimeInterval, _ predicate: ([String: Any]) -> Bool) async -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let (bytes, open) = snapshot()
            for line in Self.lines(bytes) {
                if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], predicate(object) {
                    return object
                }
            }
            if open == 0 || Date() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The texts of the `message` events so far (an `inviso` chat command with `--json`).
    package var messageTexts: [String] {
        events.filter { $0["event"] as? String == "message" }.compactMap { $0["text"] as? String }
    }

    /// Waits until at least `count` ``messageTexts`` arrived, or `timeout` passed; returns
    /// them. Polls, as ``waitForEvent(timeout:_:)`` does.
    package func waitForMessageTexts(count: Int, timeout: TimeInterval = 60) async -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let texts = messageTexts
            if texts.count >= count { return texts }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return messageTexts
    }

    /// Waits for the child to exit and its output to drain; kills it after `timeout`.
    /// Returns the exit status, or `nil` if it had to be killed. Polls, as
    /// ``waitForEvent(timeout:_:)`` does.
    package func waitForExit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            kill()
            return nil
        }
        let drained = Date(timeIntervalSinceNow: 5)
        while Date() < drained {
            if snapshot().openStreams == 0 { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }

    /// Standard output so far and how many output streams are still open.
    private func snapshot() -> (stdout: [UInt8], openStreams: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (stdoutBytes, openStreams)
    }

    /// Sends `signal` to the child.
    package func signal(_ signal: Int32) {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, signal)
    }

    /// Kills the child if it is still running.
    package func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        kill()
    }

    private static func lines(_ bytes: [UInt8]) -> [String] {
        var result: [String] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            result.append(String(decoding: bytes[start..<index], as: UTF8.self))
            start = index + 1
        }
        return result
    }
}
