// The direct path between two pages: one WebRTC DataChannel, set up through the server's
// signaling (`webrtc_offer`, `webrtc_answer`, `ice_candidate`, which the server forwards
// to the other member of the room as they are).
//
// Only session frames travel on it, sealed by the Double Ratchet exactly as on the relay:
// the DataChannel's own DTLS is a second layer, not the one we rely on. The server sees
// the offer, the answer and the candidates (addresses it already knows from the sockets),
// never a message.
//
//        creator (offerer)                 joiner (answerer)
//   new RTCPeerConnection + channel
//   createOffer → webrtc_offer ───────────▶ new RTCPeerConnection
//                                           setRemoteDescription, createAnswer
//   setRemoteDescription ◀──────────────── webrtc_answer
//   ice_candidate ◀──────────────────────▶ ice_candidate   (trickled both ways)
//   channel "open" ──────── frames ─────── channel "open"
//
// With "relay only" and a server that has a TURN relay, the connection gathers TURN
// candidates alone (iceTransportPolicy "relay"): the channel runs through the server's
// TURN relay and the peer learns only the relay's address.
//
// A channel that closes, or a connection that fails, is reported once; the chat goes back
// to the relay and resends what the peer has not acknowledged. Nothing here reads or
// writes a message: the reliable layer above (seq, acks, resend) makes moving between the
// paths lose nothing.

/**
 * @typedef {{
 *   initiator: boolean,
 *   iceServers: RTCIceServer[],
 *   relayOnly?: boolean,
 *   signal: (message: object) => void,
 *   onFrame: (frame: Uint8Array) => void,
 *   onOpen: () => void,
 *   onClose: () => void,
 * }} PeerLinkOptions
 */

/** The label of the channel both sides use. */
export const CHANNEL_LABEL = "inviso";

/** The channel's buffer above which `send` says the path is full (bytes). */
export const HIGH_WATER = 4 << 20;

export class PeerLink {
  /** @param {PeerLinkOptions} options */
  constructor(options) {
    this.options = options;
    // Relay only: candidates of the server's TURN relay alone, so the peer never sees this
    // device's addresses (the SDP then names none either).
    this.connection = new RTCPeerConnection({ iceServers: options.iceServers, iceTransportPolicy: options.relayOnly ? "relay" : "all" });
    /** @type {RTCDataChannel | null} */
    this.channel = null;
    this.closed = false;
    /** Signaling steps run one after another (a candidate waits for its description). */
    /** @type {Promise<void>} */
    this.steps = Promise.resolve();
    this.connection.onicecandidate = (event) => {
      if (event.candidate) options.signal({ type: "ice_candidate", candidate: event.candidate.toJSON() });
    };
    this.connection.onconnectionstatechange = () => {
      const state = this.connection.connectionState;
      if (state === "failed" || state === "closed") this.close();
    };
    this.connection.ondatachannel = (event) => {
      // The offerer's first channel, whatever its label (the iOS app names its own).
      if (!options.initiator && !this.channel) this.adopt(event.channel);
    };
  }

  /** Whether frames can go on the channel now. */
  get isOpen() {
    return !this.closed && this.channel?.readyState === "open";
  }

  /** The offerer's first step: the channel and the offer. */
  start() {
    this.adopt(this.connection.createDataChannel(CHANNEL_LABEL, { ordered: true }));
    this.step(async () => {
      await this.connection.setLocalDescription(await this.connection.createOffer());
      const local = /** @type {RTCSessionDescription} */ (this.connection.localDescription);
      this.options.signal({ type: "webrtc_offer", sdp: local.sdp });
    });
  }

  /**
   * A signaling message from the peer (`webrtc_offer`, `webrtc_answer`, `ice_candidate`).
   * Anything malformed or out of turn is dropped.
   * @param {{ type: string, sdp?: unknown, candidate?: unknown }} message
   */
  signaled(message) {
    this.step(async () => {
      if (message.type === "webrtc_offer" && !this.options.initiator && typeof message.sdp === "string") {
        if (this.connection.signalingState !== "stable" || this.connection.remoteDescription) return;
        await this.connection.setRemoteDescription({ type: "offer", sdp: message.sdp });
        await this.connection.setLocalDescription(await this.connection.createAnswer());
        const local = /** @type {RTCSessionDescription} */ (this.connection.localDescription);
        this.options.signal({ type: "webrtc_answer", sdp: local.sdp });
      } else if (message.type === "webrtc_answer" && this.options.initiator && typeof message.sdp === "string") {
        if (this.connection.signalingState !== "have-local-offer") return;
        await this.connection.setRemoteDescription({ type: "answer", sdp: message.sdp });
      } else if (message.type === "ice_candidate" && message.candidate && typeof message.candidate === "object") {
        if (!this.connection.remoteDescription) return;
        const init = /** @type {RTCIceCandidateInit} */ (message.candidate);
        await this.connection.addIceCandidate(init);
      }
    });
  }

  /**
   * Sends one frame on the channel; false when it is not open or its buffer is full (the
   * caller sends on the relay instead).
   * @param {Uint8Array} frame
   */
  send(frame) {
    if (!this.isOpen || !this.channel || this.channel.bufferedAmount > HIGH_WATER) return false;
    try {
      this.channel.send(frame);
      return true;
    } catch {
      this.close();
      return false;
    }
  }

  /**
   * How the open channel runs: "turn" when either end of the selected candidate pair is a
   * TURN relay's address, else "direct".
   * @returns {Promise<"turn" | "direct">}
   */
  async route() {
    try {
      const stats = await this.connection.getStats();
      /** @type {Map<string, any>} */
      const byID = new Map();
      stats.forEach((report) => byID.set(report.id, report));
      for (const report of byID.values()) {
        if (report.type !== "transport" || !report.selectedCandidatePairId) continue;
        const pair = byID.get(report.selectedCandidatePairId);
        const ends = [byID.get(pair?.localCandidateId), byID.get(pair?.remoteCandidateId)];
        return ends.some((end) => end?.candidateType === "relay") ? "turn" : "direct";
      }
    } catch {
      // No statistics: told as direct, which the relay-only choice never is.
    }
    return this.options.relayOnly ? "turn" : "direct";
  }

  /** Bytes queued on the channel and not yet handed to the network. */
  get buffered() {
    return this.channel?.bufferedAmount ?? 0;
  }

  /** Ends the connection; `onClose` runs once (when it had not yet). */
  close() {
    if (this.closed) return;
    this.closed = true;
    try {
      this.channel?.close();
      this.connection.close();
    } catch {
      // Already gone.
    }
    this.options.onClose();
  }

  /** @param {RTCDataChannel} channel */
  adopt(channel) {
    this.channel = channel;
    channel.binaryType = "arraybuffer";
    channel.onopen = () => {
      if (!this.closed) this.options.onOpen();
    };
    channel.onclose = () => this.close();
    channel.onmessage = (event) => {
      if (event.data instanceof ArrayBuffer) this.options.onFrame(new Uint8Array(event.data));
    };
  }

  /** @param {() => Promise<void>} work */
  step(work) {
    this.steps = this.steps.then(work).catch(() => {
      // A description or candidate the browser refused: the link stays as it was; the
      // relay carries on.
    });
  }
}
