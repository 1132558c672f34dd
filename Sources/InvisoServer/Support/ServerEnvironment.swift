public import Foundation
import InvisoCrypto
public import InvisoTime

/// The server's clock and randomness, injected so tests control expiry, rate limits and
/// generated identifiers.
public struct ServerEnvironment: Sendable {
    /// The clock (the package's one clock: a manual clock in tests).
    public var clock: any InvisoClock
    /// `count` random bytes (join codes, room ids, connection ids).
    public var randomBytes: @Sendable (Int) -> [UInt8]

    /// Creates an environment.
    public init(clock: any InvisoClock, randomBytes: @escaping @Sendable (Int) -> [UInt8]) {
        self.clock = clock
        self.randomBytes = randomBytes
    }

    /// The current wall-clock time.
    public func now() -> Date { clock.wallClock }

    /// The wall clock and the system's cryptographic random number generator.
    public static let live = ServerEnvironment(
        clock: SystemClock(),
        randomBytes: { count in
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }
    )

    /// Lowercase hex of `count` random bytes.
    func randomHex(_ count: Int) -> String {
        Hex.encode(randomBytes(count))
    }

    /// A random 6-digit join code (uniform: rejection sampling over 20 bits).
    func randomJoinCode() -> String {
        while true {
            let bytes = randomBytes(3)
            let value = (Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])) & 0xF_FFFF
            if value < 1_000_000 {
                let digits = String(value)
                return String(repeating: "0", count: 6 - digits.count) + digits
            }
        }
    }

    /// A random version-4 UUID string (the Node server's `clientId` format).
    func randomUUID() -> String {
        var bytes = randomBytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { Hex.encode(bytes[$0]) }.joined(separator: "-")
    }
}
