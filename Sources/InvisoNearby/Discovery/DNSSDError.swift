/// Why a DNS-SD operation failed.
///
/// ``Code/noDaemon`` is what a machine without a running DNS-SD daemon reports (avahi's
/// compatibility library answers `kDNSServiceErr_Unknown` when it cannot reach
/// `avahi-daemon` over D-Bus, Apple's `kDNSServiceErr_ServiceNotRunning`); its description
/// says how to start one and that `--peer HOST:PORT` works without.
public struct DNSSDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable { case noDaemon, nameConflict, invalidArgument, failed }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No DNS-SD daemon answers (or it went away).
        public static let noDaemon = Code(.noDaemon)
        /// The instance name is already registered on this host.
        public static let nameConflict = Code(.nameConflict)
        /// A name, type or TXT record the API refuses.
        public static let invalidArgument = Code(.invalidArgument)
        /// Any other error the daemon reported (see ``DNSSDError/status``).
        public static let failed = Code(.failed)

        public var description: String {
            switch base {
            case .noDaemon: "noDaemon"
            case .nameConflict: "nameConflict"
            case .invalidArgument: "invalidArgument"
            case .failed: "failed"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The `DNSServiceErrorType` the API returned (0 when the error is ours).
    public let status: Int32
    /// The operation (`register`, `browse`, `resolve`, `query`).
    public let operation: String

    /// An error for `status` returned by `operation`.
    init(status: Int32, operation: String) {
        switch status {
        case -65537, -65563: code = .noDaemon  // kDNSServiceErr_Unknown (avahi), _ServiceNotRunning (Apple)
        case -65548: code = .nameConflict
        case -65540, -65543, -65549: code = .invalidArgument  // BadParam, BadFlags, Invalid
        default: code = .failed
        }
        self.status = status
        self.operation = operation
    }

    /// An error of ours (no API status).
    init(_ code: Code, operation: String) {
        self.code = code
        self.status = 0
        self.operation = operation
    }

    public var description: String {
        switch code {
        case .noDaemon:
            "no DNS-SD daemon answers (\(operation)): start avahi-daemon (`sudo systemctl start avahi-daemon`; "
                + "Debian package avahi-daemon), or connect to a peer directly with --peer HOST:PORT"
        case .nameConflict: "the name is already registered on this host (\(operation))"
        case .invalidArgument: "DNS-SD refused the \(operation) arguments (error \(status))"
        default: "DNS-SD \(operation) failed (error \(status))"
        }
    }
}
