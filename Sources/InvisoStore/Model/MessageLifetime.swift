public import Foundation

/// How long a session's messages are kept: the disappearing-message lifetimes of the Inviso
/// app, with its wire names as raw values.
///
/// Stored in plaintext (the `sessions.lifetime` column): every message's plaintext
/// `expires_at − created_at` reveals it anyway. ``InvisoStore`` keeps no message of an
/// ``ephemeral`` session and deletes the others once they expire
/// (``InvisoStore/deleteExpired(now:)``).
public enum MessageLifetime: String, Sendable, Hashable, CaseIterable, Codable {
    /// Messages are never written to disk.
    case ephemeral
    /// One hour.
    case oneHour = "1h"
    /// Six hours.
    case sixHours = "6h"
    /// One day.
    case oneDay = "1d"
    /// Seven days.
    case sevenDays = "7d"
    /// Thirty days.
    case thirtyDays = "30d"

    /// How long a message is kept, or `nil` for ``ephemeral`` (not kept at all).
    public var duration: TimeInterval? {
        switch self {
        case .ephemeral: nil
        case .oneHour: 3_600
        case .sixHours: 6 * 3_600
        case .oneDay: 86_400
        case .sevenDays: 7 * 86_400
        case .thirtyDays: 30 * 86_400
        }
    }
}
