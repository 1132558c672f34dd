public import InvisoSignal
import Synchronization

/// What a session's safety number is computed from: both sides' stable ids and public
/// identity keys, nothing secret. The computation is libsignal's displayable fingerprint
/// (version 2, 5,200 SHA-512 rounds per side): about 4 ms here, so a session leaves it to
/// whoever asks for the digits (``ChatSecurity/safetyNumber``) instead of making every
/// frame of the step that establishes the channel wait for it.
public struct SafetyNumberInputs: Sendable, Hashable {
    /// Our stable id (`inviso v2 creator`, …).
    public let localStableID: [UInt8]
    /// Our public identity key.
    public let localIdentity: IdentityKey
    /// The peer's stable id.
    public let remoteStableID: [UInt8]
    /// The peer's public identity key.
    public let remoteIdentity: IdentityKey

    /// The inputs.
    public init(localStableID: [UInt8], localIdentity: IdentityKey, remoteStableID: [UInt8], remoteIdentity: IdentityKey) {
        self.localStableID = localStableID
        self.localIdentity = localIdentity
        self.remoteStableID = remoteStableID
        self.remoteIdentity = remoteIdentity
    }

    /// The 60 digits.
    public func digits() -> String {
        do {
            return try Fingerprint(
                version: 2, iterations: 5_200, localStableID: localStableID, localIdentity: localIdentity,
                remoteStableID: remoteStableID, remoteIdentity: remoteIdentity
            ).displayable.digits
        } catch {
            preconditionFailure("version 2 and 5,200 iterations are valid fingerprint parameters")
        }
    }
}

/// A safety number computed on first access, once, by whichever thread asks first (a
/// second asker waits for it); or given outright.
final class LazySafetyNumber: Sendable {
    private let inputs: SafetyNumberInputs?
    private let digits: Mutex<String?>

    init(_ digits: String) {
        inputs = nil
        self.digits = Mutex(digits)
    }

    init(_ inputs: SafetyNumberInputs) {
        self.inputs = inputs
        digits = Mutex(nil)
    }

    var value: String {
        digits.withLock { digits in
            if let digits { return digits }
            // One of the two initialisers set either the digits or the inputs.
            let computed = inputs!.digits()
            digits = computed
            return computed
        }
    }
}
