public import Crypto
public import Foundation
import InvisoCrypto
public import InvisoWire

/// The TURN servers the rendezvous server hands out, and the secret it shares with them.
///
/// Credentials follow the TURN REST API (draft-uberti-behave-turn-rest), which coturn
/// implements as `use-auth-secret` with `static-auth-secret=<secret>`: the username is
/// `"<expiry>:<user id>"` (expiry in Unix seconds) and the password is
/// `base64(HMAC-SHA1(secret, username))`. The TURN server recomputes the password from the
/// username and refuses the username once its expiry has passed, so it needs no user list
/// and credentials cannot be extended by editing the username.
///
/// The secret is kept in a `SymmetricKey` and never shown: `description`,
/// `debugDescription` and the mirror (`dump`) print it as `<redacted>`.
public struct TURNConfiguration: Sendable {
    /// The longest lifetime a configuration accepts (30 days).
    public static let maximumTTL: Duration = .seconds(30 * 24 * 60 * 60)

    /// The lifetime used when none is given (24 hours).
    public static let defaultTTL: Duration = .seconds(24 * 60 * 60)

    /// The secret shared with the TURN servers (coturn's `static-auth-secret`).
    private let secret: SymmetricKey

    /// The TURN and STUN server URLs given to clients, in order (`turn:`, `turns:` or
    /// `stun:` URLs, RFC 7064/7065), for example `turn:turn.example.org:3478?transport=udp`.
    public let urls: [String]

    /// How long a credential is valid after it is issued, in whole seconds.
    public let ttl: Duration

    /// Creates a configuration from the shared secret's bytes.
    ///
    /// - Parameters:
    ///   - secret: The secret shared with the TURN servers; it must not be empty.
    ///   - urls: The server URLs given to clients: at least one, each starting with
    ///     `turn:`, `turns:` or `stun:` followed by a host, without whitespace.
    ///   - ttl: How long each credential is valid, from 1 second to ``maximumTTL``;
    ///     a fraction of a second is dropped. Defaults to ``defaultTTL`` (24 hours).
    /// - Throws: ``TURNConfigurationError`` with code
    ///   ``TURNConfigurationError/Code/emptySecret``, ``TURNConfigurationError/Code/noURLs``,
    ///   ``TURNConfigurationError/Code/invalidURL`` or ``TURNConfigurationError/Code/invalidTTL``.
    public init(secret: SymmetricKey, urls: [String], ttl: Duration = TURNConfiguration.defaultTTL) throws {
        guard secret.bitCount > 0 else {
            throw TURNConfigurationError(.emptySecret, "the TURN secret is empty")
        }
        guard !urls.isEmpty else {
            throw TURNConfigurationError(.noURLs, "at least one TURN or STUN URL is needed")
        }
        for (index, url) in urls.enumerated() where !Self.isValidURL(url) {
            // The URL itself is left out: a misconfigured one may hold a password.
            throw TURNConfigurationError(
                .invalidURL, "urls[\(index)] must be turn:, turns: or stun: followed by a host, without whitespace"
            )
        }
        guard ttl >= .seconds(1), ttl <= Self.maximumTTL else {
            throw TURNConfigurationError(.invalidTTL, "the TTL must be from 1 second to 30 days")
        }
        self.secret = secret
        self.urls = urls
        self.ttl = .seconds(ttl.components.seconds)
    }

    /// Creates a configuration from a textual secret, as written in coturn's
    /// `static-auth-secret` (the HMAC key is the text's UTF-8 bytes).
    ///
    /// - Parameters:
    ///   - secret: The secret shared with the TURN servers; it must not be empty.
    ///   - urls: The server URLs given to clients: at least one, each starting with
    ///     `turn:`, `turns:` or `stun:` followed by a host, without whitespace.
    ///   - ttl: How long each credential is valid, from 1 second to ``maximumTTL``.
    /// - Throws: ``TURNConfigurationError``, as the `SymmetricKey` initializer does.
    public init(secret: String, urls: [String], ttl: Duration = TURNConfiguration.defaultTTL) throws {
        try self.init(secret: SymmetricKey(data: Data(secret.utf8)), urls: urls, ttl: ttl)
    }

    /// Issues a credential for the device `deviceID`, valid from `now` for ``ttl``.
    ///
    /// The username is `"<expiry>:<user id>"`, where expiry is `now` plus ``ttl`` in whole
    /// Unix seconds and the user id is ``userID(forDeviceID:)`` — never the device ID, which
    /// is a bearer secret and would otherwise reach the TURN server's logs. The credential
    /// is `base64(HMAC-SHA1(secret, username))`.
    ///
    /// - Parameters:
    ///   - deviceID: The device asking; only a hash of it appears in the username.
    ///   - now: The current time (passed in so tests control expiry).
    /// - Returns: The URLs, username, credential and lifetime in seconds: the body of
    ///   `POST /api/turn`.
    public func credential(for deviceID: String, now: Date) -> TURNCredentialsResponse {
        let ttlSeconds = Int(ttl.components.seconds)
        let expiry = Int(now.timeIntervalSince1970.rounded(.down)) + ttlSeconds
        let username = "\(expiry):\(Self.userID(forDeviceID: deviceID))"
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(username.utf8), using: secret)
        return TURNCredentialsResponse(
            urls: urls, username: username, credential: Data(mac).base64EncodedString(), ttl: ttlSeconds
        )
    }

    /// The user id that stands for `deviceID` in TURN usernames: the first 16 lowercase hex
    /// digits (64 bits) of `SHA-256("inviso-turn:" + deviceID)`.
    ///
    /// It is stable, so a TURN server's logs and quotas can tell devices apart, but does not
    /// reveal the device ID. Given a device ID, it finds that device's lines in those logs.
    ///
    /// - Parameter deviceID: The device ID.
    /// - Returns: Sixteen characters from `0-9a-f`.
    public static func userID(forDeviceID deviceID: String) -> String {
        Hex.encode(SHA256.hash(data: Data("inviso-turn:\(deviceID)".utf8)).prefix(8))
    }

    /// Whether `url` is `turn:`, `turns:` or `stun:` followed by at least one character,
    /// with no whitespace or control characters anywhere.
    private static func isValidURL(_ url: String) -> Bool {
        guard let colon = url.firstIndex(of: ":") else { return false }
        guard ["turn", "turns", "stun"].contains(url[..<colon]) else { return false }
        guard url.index(after: colon) < url.endIndex else { return false }
        return url.unicodeScalars.allSatisfy { scalar in
            !scalar.properties.isWhitespace && !CharacterSet.controlCharacters.contains(scalar)
        }
    }
}

// MARK: - CustomStringConvertible

extension TURNConfiguration: CustomStringConvertible {
    /// The URLs and lifetime; the secret is shown as `<redacted>`.
    public var description: String {
        "TURNConfiguration(urls: \(urls), ttl: \(ttl.components.seconds) s, secret: <redacted>)"
    }
}

// MARK: - CustomDebugStringConvertible

extension TURNConfiguration: CustomDebugStringConvertible {
    /// The same as ``description``: the secret is shown as `<redacted>`.
    public var debugDescription: String { description }
}

// MARK: - CustomReflectable

extension TURNConfiguration: CustomReflectable {
    /// A mirror (for `dump` and debuggers) without the secret's bytes.
    public var customMirror: Mirror {
        Mirror(self, children: ["urls": urls, "ttl": ttl, "secret": "<redacted>"], displayStyle: .struct)
    }
}
