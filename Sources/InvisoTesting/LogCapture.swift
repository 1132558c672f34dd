public import Logging
import Synchronization

/// Collects log lines, to check what a component logs (and that secrets stay out).
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Every line so far: level, message and metadata.
    public var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger at `trace` that writes here.
    public func logger(label: String = "inviso.tests") -> Logger {
        var logger = Logger(label: label) { _ in CaptureHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    struct CaptureHandler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append("\(event.level) \(event.message) \(merged)")
        }
    }
}
