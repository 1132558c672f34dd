internal import InvisoNoise

/// Everything a caller can observe about a `HandshakeState`. A failed call must leave
/// all of it exactly as it was.
struct HandshakeView: Equatable {
    let handshakeHash: [UInt8]
    let nextMessageIndex: Int
    let isWriteTurn: Bool
    let isComplete: Bool
    let remoteStaticPublicKey: [UInt8]?
    let remoteEphemeralPublicKey: [UInt8]?
    let localEphemeralPublicKey: [UInt8]?

    init(_ state: HandshakeState) {
        handshakeHash = state.handshakeHash
        nextMessageIndex = state.nextMessageIndex
        isWriteTurn = state.isWriteTurn
        isComplete = state.isComplete
        remoteStaticPublicKey = state.remoteStaticPublicKey
        remoteEphemeralPublicKey = state.remoteEphemeralPublicKey
        localEphemeralPublicKey = state.localEphemeralPublicKey
    }
}
