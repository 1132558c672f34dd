import Foundation
import InvisoKit

/// `--server URL`: where the Inviso server is, as `http://host[:port]`,
/// `https://host[:port]` or `host:port` (plain HTTP). IPv6 literals go in brackets.
///
/// The default is `INVISO_SERVER`, then `http://127.0.0.1:8080`.
enum ServerAddress {
    static let fallback = "http://127.0.0.1:8080"

    /// `server`, unless it is the default a peer gets without saying anything (a peer does
    /// not share our `INVISO_SERVER`): what an invite's hint and link must carry.
    static func toShare(_ server: ServerEndpoint) -> String? {
        server.description == (try? parse(fallback))?.description ? nil : server.description
    }

    /// An `inviso://join/CODE#words` link with the server in its query
    /// (`inviso://join/CODE?server=URL#words`) when it is not the default.
    static func link(_ link: String, server: String?) -> String {
        guard let server, let hash = link.firstIndex(of: "#") else { return link }
        let encoded = server.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? server
        return String(link[..<hash]) + "?server=" + encoded + String(link[hash...])
    }

    /// Splits a link's `?server=URL` off: the link as `Invite.parse` reads it, and the
    /// server it names (nil when it names none, or for any other text).
    static func splitLink(_ text: String) -> (invite: String, server: String?) {
        let trimmed = text.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix(Invite.linkPrefix), let question = trimmed.firstIndex(of: "?") else {
            return (text, nil)
        }
        let hash = trimmed[question...].firstIndex(of: "#") ?? trimmed.endIndex
        let query = trimmed[trimmed.index(after: question)..<hash]
        var server: String?
        for pair in query.split(separator: "&") where pair.hasPrefix("server=") {
            server = String(pair.dropFirst("server=".count)).removingPercentEncoding
        }
        return (String(trimmed[..<question]) + String(trimmed[hash...]), server)
    }

    /// The server to use: the flag, else `INVISO_SERVER`, else ``fallback``.
    static func resolve(flag: String?, environment: [String: String]) throws(CLIError) -> ServerEndpoint {
        let text = flag ?? environment["INVISO_SERVER"].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
        return try parse(text)
    }

    /// Parses one address; the error repeats it (a server address is not secret).
    static func parse(_ text: String) throws(CLIError) -> ServerEndpoint {
        var rest = Substring(text.trimmingSpaces())
        var useTLS = false
        if rest.lowercased().hasPrefix("https://") {
            useTLS = true
            rest = rest.dropFirst("https://".count)
        } else if rest.lowercased().hasPrefix("http://") {
            rest = rest.dropFirst("http://".count)
        } else if rest.contains("://") {
            throw CLIError("unsupported server address \(text): use http:// or https://")
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else {
                throw CLIError("server address \(text) must not have a path")
            }
            rest = rest[..<slash]
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw CLIError("bad IPv6 address in \(text)") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw CLIError("bad server address \(text)") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:_".contains($0) }) else {
            throw CLIError("bad host in server address \(text)")
        }
        let port: Int
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw CLIError("bad port in server address \(text)")
            }
            port = value
        } else {
            port = useTLS ? 443 : 80
        }
        return ServerEndpoint(host: String(host), port: port, useTLS: useTLS)
    }
}

/// `--expires 5m`: how long an invite stays open, as a number and a unit (`s`, `m`, `h`);
/// the server accepts 1 s … 24 h.
enum InviteLifetime {
    static func seconds(_ text: String) throws(CLIError) -> Int {
        let trimmed = text.trimmingSpaces().lowercased()
        guard let unit = trimmed.last, let value = Int(trimmed.dropLast()), value > 0 else {
            throw CLIError("bad --expires \(text): use a number and s, m, h or d, e.g. 5m")
        }
        let seconds: Int
        switch unit {
        case "s": seconds = value
        case "m": seconds = value.multipliedReportingOverflow(by: 60).partialValue
        case "h": seconds = value.multipliedReportingOverflow(by: 3_600).partialValue
        case "d": seconds = value.multipliedReportingOverflow(by: 86_400).partialValue
        default: throw CLIError("bad --expires \(text): use a number and s, m, h or d, e.g. 5m")
        }
        guard value <= 86_400, (1...86_400).contains(seconds) else {
            throw CLIError("--expires \(text) is out of range: 1s to 24h")
        }
        return seconds
    }
}
