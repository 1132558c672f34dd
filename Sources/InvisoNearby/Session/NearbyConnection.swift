/// One nearby TCP connection as a value-type machine: the Noise XX handshake with signed
/// identities, then the connection request the other side's user accepts or rejects (as
/// MultipeerConnectivity's invitation), then records over the secure channel. No I/O: the
/// driver feeds the bytes it reads and carries out the returned actions in order.
///
/// ```
///   dialler:   start ─▶ handshaking ──secured──▶ requesting ──accept──▶ open
///                          │                        └──reject──▶ closed(rejected)
///   listener:  start ─▶ handshaking ──secured──▶ deciding ──accept()──▶ open
///                                                   └──reject()──▶ closed(local)
///   any state: bad bytes, a refused identity, or the peer's end ──▶ closed
/// ```
///
/// After ``Action/closed(_:)`` every input is ignored and nothing more is written.
public struct NearbyConnection: Sendable {
    /// Who the dialler expects to reach.
    public enum Expectation: Sendable, Hashable {
        /// Anyone (a `--peer HOST:PORT` with no pinned identity).
        case anyone
        /// The identity whose short fingerprint the service advertised (`id=`).
        case fingerprint(String)
        /// A pinned identity.
        case identity(NearbyPublicIdentity)
    }

    /// Why a connection ended.
    public enum CloseReason: Sendable, Equatable {
        /// The other side's user (or block list) refused the request.
        case rejected
        /// We refused or closed it.
        case local
        /// The peer presented an identity other than the expected one.
        case identityChanged(presented: NearbyPublicIdentity)
        /// The peer's bytes were refused.
        case failed(NearbyError)
        /// The TCP connection ended.
        case disconnected
    }

    /// What the driver does, in order.
    public enum Action: Sendable, Equatable {
        /// Write these bytes to the socket.
        case write([UInt8])
        /// The handshake verified the peer's hello (listener: decide with ``accept()`` or
        /// ``reject()``; dialler: the request is on its way).
        case secured(NearbyHello)
        /// Both sides agreed: records may flow.
        case opened
        /// A record arrived on the open connection.
        case record(NearbyRecord)
        /// A file chunk arrived on the open connection (beside the channel: the driver
        /// opens it with its transfer's key).
        case chunk(NearbyChunk)
        /// Close the socket.
        case closed(CloseReason)
    }

    /// Where the connection is.
    public enum Phase: Sendable, Hashable {
        case handshaking, requesting, deciding, open, closed
    }

    /// The current phase.
    public private(set) var phase: Phase = .handshaking
    /// The peer's verified hello, once secured.
    public private(set) var peer: NearbyHello?
    /// The end this side plays.
    public let role: NearbyHandshake.Role
    private let expectation: Expectation
    private var handshake: NearbyHandshake
    private var decoder: NearbyFrameDecoder
    private var channel: NearbyChannel?

    /// A connection for `role`, with the handshake to run and, for the dialler, whom it
    /// expects.
    public init(role: NearbyHandshake.Role, handshake: NearbyHandshake, expecting expectation: Expectation = .anyone) {
        self.role = role
        self.handshake = handshake
        self.expectation = expectation
        decoder = NearbyFrameDecoder(role: role)
    }

    /// The first bytes (the dialler's handshake message 1; nothing for the listener).
    public mutating func start() -> [Action] {
        guard role == .initiator, phase == .handshaking else { return [] }
        do {
            return [.write(NearbyFrameDecoder.frame(try handshake.start()))]
        } catch {
            return close(.failed(error))
        }
    }

    /// Bytes read from the socket.
    public mutating func receive(_ bytes: some Collection<UInt8>) -> [Action] {
        guard phase != .closed else { return [] }
        decoder.append(bytes)
        var actions: [Action] = []
        while phase != .closed {
            let frame: NearbyFrame
            do {
                guard let next = try decoder.next() else { break }
                frame = next
            } catch {
                return actions + close(.failed(error))
            }
            switch frame {
            case .message(let body):
                actions += handle(body)
            case .chunk(let chunk):
                guard phase == .open else {
                    return actions + close(.failed(NearbyError(.unexpectedMessage, "file chunk before the connection opened")))
                }
                actions.append(.chunk(chunk))
            }
        }
        return actions
    }

    /// The listener's user accepts the request.
    public mutating func accept() -> [Action] {
        guard phase == .deciding else { return [] }
        let actions = seal(.connectAccept)
        guard phase != .closed else { return actions }
        phase = .open
        return actions + [.opened]
    }

    /// The listener's user (or its block list) refuses the request.
    public mutating func reject() -> [Action] {
        guard phase == .deciding else { return phase == .closed ? [] : close(.local) }
        return seal(.connectReject) + close(.local)
    }

    /// Sends a record on the open connection (ignored in any other phase).
    public mutating func send(_ record: NearbyRecord) -> [Action] {
        guard phase == .open else { return [] }
        return seal(record)
    }

    /// The socket closed.
    public mutating func disconnected() -> [Action] {
        guard phase != .closed else { return [] }
        return close(.disconnected)
    }

    // MARK: - Frames

    private mutating func handle(_ frame: [UInt8]) -> [Action] {
        guard var channel else { return handshakeFrame(frame) }
        let record: NearbyRecord
        do {
            guard let opened = try channel.open(frame) else {
                self.channel = channel
                return []
            }
            self.channel = channel
            record = try NearbyRecord(decoding: opened)
        } catch {
            self.channel = channel
            return close(.failed(error))
        }
        switch (phase, record) {
        case (.requesting, .connectAccept):
            phase = .open
            return [.opened]
        case (.requesting, .connectReject):
            return close(.rejected)
        case (.deciding, .connectRequest) where !requestSeen, (.open, .connectRequest) where role == .responder && !requestSeen:
            // The request may arrive after the listener already accepted (a known peer is
            // accepted as soon as the handshake names it).
            requestSeen = true
            return []
        case (.open, .connectRequest), (.open, .connectAccept), (.open, .connectReject), (.deciding, _), (.requesting, _):
            return close(.failed(NearbyError(.unexpectedMessage, "record out of phase")))
        case (.open, _):
            return [.record(record)]
        default:
            return []
        }
    }

    private var requestSeen = false

    private mutating func handshakeFrame(_ frame: [UInt8]) -> [Action] {
        let step: NearbyHandshake.Step
        do {
            step = try handshake.receive(frame)
        } catch {
            return close(.failed(error))
        }
        var actions: [Action] = []
        if let reply = step.reply { actions.append(.write(NearbyFrameDecoder.frame(reply))) }
        guard let established = step.established else { return actions }
        let hello = established.peer
        let expected = switch expectation {
        case .anyone: true
        case .fingerprint(let short): hello.identity.shortFingerprint == short
        case .identity(let pinned): hello.identity == pinned
        }
        guard expected else { return actions + close(.identityChanged(presented: hello.identity)) }
        peer = hello
        channel = NearbyChannel(transport: established.transport)
        actions.append(.secured(hello))
        if role == .initiator {
            phase = .requesting
            actions += seal(.connectRequest)
        } else {
            phase = .deciding
        }
        return actions
    }

    private mutating func seal(_ record: NearbyRecord) -> [Action] {
        guard var channel else { return [] }
        do {
            let bytes = try channel.seal(record.encoded())
            self.channel = channel
            return [.write(bytes)]
        } catch {
            return close(.failed(error))
        }
    }

    private mutating func close(_ reason: CloseReason) -> [Action] {
        phase = .closed
        channel = nil
        return [.closed(reason)]
    }
}
