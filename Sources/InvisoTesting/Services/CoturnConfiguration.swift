public import Foundation

/// The configuration of a test's own coturn `turnserver`: one address, UDP and TCP on one
/// port, relays on `relays`, REST-API credentials (`use-auth-secret`, the scheme `inviso
/// serve --turn-secret` mints), no TLS, DTLS, CLI or system files, a verbose log at
/// `directory/turnserver.log`.
public enum CoturnConfiguration {
    /// The file's text. `loopbackPeers` lets allocations relay to loopback addresses (for
    /// a server on 127.0.0.1, whose two test clients relay to each other).
    public static func text(
        host: String, port: Int, relays: ClosedRange<Int>, secret: String, directory: URL, loopbackPeers: Bool
    ) -> String {
        var lines = [
            "listening-ip=\(host)", "relay-ip=\(host)", "listening-port=\(port)",
            "min-port=\(relays.lowerBound)", "max-port=\(relays.upperBound)",
            "use-auth-secret", "static-auth-secret=\(secret)", "realm=inviso.test",
        ]
        if loopbackPeers { lines.append("allow-loopback-peers") }
        lines += [
            "no-tls", "no-dtls", "no-cli", "no-rfc5780", "verbose",
            "log-file=\(logURL(in: directory).path)", "simple-log", "no-stdout-log",
            "pidfile=\(directory.appendingPathComponent("turnserver.pid").path)",
            "userdb=\(directory.appendingPathComponent("turndb").path)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Where the server logs.
    public static func logURL(in directory: URL) -> URL {
        directory.appendingPathComponent("turnserver.log")
    }
}
