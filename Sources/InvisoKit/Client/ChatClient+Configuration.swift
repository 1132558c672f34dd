public import InvisoCrypto
public import Foundation
public import InvisoStore

extension ChatClient {
    /// What a session does and how long it waits. The defaults suit the CLI.
    public struct Configuration: Sendable {
        /// The server.
        public var server: ServerEndpoint
        /// The session's name in the store (renamed with ``ChatClient/rename(to:)``).
        public var name = ""
        /// An ephemeral session keeps nothing: no session, message or key is stored.
        public var isEphemeral = false
        /// How long stored messages live (the app's lifetimes); the peer can propose
        /// another.
        public var lifetime = MessageLifetime.thirtyDays
        /// How long the invite's join code stays valid on the server (5 minutes).
        public var inviteExpiry: Duration = .seconds(300)
        /// Whether the creator falls back to v1 when the peer starts the app's v1 key
        /// exchange (it has only the join code, as the iOS app). The session is then
        /// marked unverified. Turn off to require v2.
        public var allowsV1Fallback = true
        /// How long the secure channel may take once both members are in the room (30 s).
        public var pairingTimeout: Duration = .seconds(30)
        /// How often the creator polls `check` in case the `watch_code` push is missed (3 s).
        public var acceptPollInterval: Duration = .seconds(3)
        /// How long an owed ack may wait for more messages to cover (20 ms).
        public var ackDelay: Duration = .milliseconds(20)
        /// After how long without ack progress unacknowledged messages are sent again (2 s;
        /// doubled after each resend that brings no ack, see ``maxRetransmitInterval``).
        public var retransmitInterval: Duration = .seconds(2)
        /// The longest wait between resends that bring no ack (60 s).
        public var maxRetransmitInterval: Duration = .seconds(60)
        /// How often expired messages are deleted from the store (60 s).
        public var expiryInterval: Duration = .seconds(60)
        /// The longest one REST request may take, connect to answer (15 s).
        public var httpTimeout: Duration = .seconds(15)
        /// The signaling socket's timing (ping, pong timeout, connect timeout, reconnect).
        public var signaling: SignalingTiming = SignalingTiming()
        /// The relay path's send pacing (below the server's per-socket limit).
        public var relayPacing = RelayTransport.Pacing.serverDefault
        /// Whether the relay paces by the limits the server announces in its greeting
        /// (``RelayTransport/adopt(_:)``) instead of ``relayPacing``, once it announced them.
        public var relayPacingFollowsServer = true
        /// The message layer's windows and limits.
        public var reliable = ReliableLink.Configuration()
        /// The direct TCP path, tried once the channel is secured (listening on every IPv4
        /// interface by default); `nil` keeps the session on the relay. The peer must run
        /// it too (the iOS app does not: such sessions stay on the relay).
        public var direct: DirectConfiguration? = DirectConfiguration()
        /// How long the direct listener waits for the peer's candidates before it closes
        /// and the session stays on the relay (30 s).
        public var directCandidatesTimeout: Duration = .seconds(30)
        /// The folder received files land in (created when the first one is accepted);
        /// `nil` refuses every incoming file.
        public var downloads: URL?
        /// File transfer windows and timings.
        public var files = FileTransferMachine.Configuration()
        /// A call to a saved contact (``ContactCall``): our long-term identity (the Noise
        /// static private key the session uses instead of a fresh one) and the contact's
        /// identity key the peer must prove it holds. `nil`: a fresh identity, any peer.
        public var contactCall: (identity: SecretBytes, peer: [UInt8])?

        /// A configuration for `server` with the defaults above.
        public init(server: ServerEndpoint) {
            self.server = server
        }
    }

    /// The timing of the signaling socket (`docs/client.md`).
    public struct SignalingTiming: Sendable {
        /// Control-frame ping interval (25 s).
        public var pingInterval: Duration = .seconds(25)
        /// Pong timeout (10 s).
        public var pongTimeout: Duration = .seconds(10)
        /// Connect timeout (10 s).
        public var connectTimeout: Duration = .seconds(10)
        /// Reconnect schedule.
        public var reconnect = ReconnectPolicy()

        /// The defaults.
        public init() {}
    }
}
