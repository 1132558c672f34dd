// One chat in the page: the room (REST), the signaling WebSocket (relay path), the v2
// pairing and the reliable message layer of docs/protocol.md ("Reliable messages"):
// every message keeps its seq until acked, is resent after a reconnect or when the ack
// stalls, and is delivered exactly once and in order; acks are cumulative (at once after
// 16 deliveries, else 20 ms after the first).

import { concat, toHex, utf8 } from "../crypto/bytes.js";
import { KIND, V2Pairing } from "../v2/pairing.js";
import { inviteText, randomWords } from "./invite.js";

const random = (/** @type {number} */ count) => globalThis.crypto.getRandomValues(new Uint8Array(count));

/** @param {number} value @returns {Uint8Array} 8 bytes big-endian */
function u64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out;
}

/**
 * @typedef {{ type: "invite", invite: string, link: string }
 *   | { type: "status", text: string }
 *   | { type: "secured", safetyNumber: string }
 *   | { type: "message", seq: number, text: string, outgoing: boolean }
 *   | { type: "delivered", seq: number }
 *   | { type: "peer", name: string }
 *   | { type: "presence", online: boolean }
 *   | { type: "error", text: string }} ChatEvent
 */

export class Chat {
  /** @param {(event: ChatEvent) => void} emit */
  constructor(emit) {
    this.emit = emit;
    this.deviceID = toHex(random(16));
    /** @type {"creator" | "joiner" | null} */
    this.role = null;
    /** @type {WebSocket | null} */
    this.socket = null;
    this.roomID = "";
    /** @type {string[]} */
    this.words = [];
    /** @type {V2Pairing | null} */
    this.pairing = null;
    /** @type {import("../v2/pairing.js").V2Session | null} */
    this.session = null;
    this.nextSeq = 1;
    /** @type {Map<number, Uint8Array>} */
    this.outbox = new Map();
    this.delivered = 0;
    /** @type {Map<number, Uint8Array>} */
    this.reorder = new Map();
    this.unacked = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.ackTimer = null;
    this.peerAck = 0;
    this.lastAckMove = Date.now();
    /** @type {Promise<void>} */
    this.queue = Promise.resolve();
    this.resendTimer = setInterval(() => this.resendIfStalled(), 2000);
  }

  /** Creates a room and an invite, then waits for the peer. */
  async create() {
    this.role = "creator";
    const response = await fetch("/api/rooms", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client1: this.deviceID, expiresInSeconds: 600 }),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(`the server refused the room (${body.error ?? response.status})`);
    this.words = randomWords();
    const invite = inviteText({ joinCode: body.joinid, words: this.words });
    this.emit({ type: "invite", invite, link: `${location.origin}/#join=${invite}` });
    await this.connect();
    this.send({ type: "watch_code", joinid: body.joinid, client1: this.deviceID });
    this.emit({ type: "status", text: "waiting for your peer to join" });
  }

  /** @param {import("./invite.js").Invite} invite */
  async join(invite) {
    this.role = "joiner";
    this.words = invite.words;
    const response = await fetch("/api/rooms/accept", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ joinid: invite.joinCode, client2: this.deviceID }),
    });
    const body = await response.json();
    if (!response.ok) {
      const reason = body.error === "already_accepted" ? "this invite was already used" : body.error === "not_found_or_expired" ? "this invite expired or does not exist" : body.error ?? response.status;
      throw new Error(`${reason}: ask for a new invite`);
    }
    this.roomID = body.roomid;
    await this.connect();
    this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
  }

  /** Opens the signaling WebSocket (the relay path) to this page's server. */
  connect() {
    return new Promise((resolve, reject) => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const socket = new WebSocket(`${scheme}//${location.host}/`);
      socket.binaryType = "arraybuffer";
      this.socket = socket;
      socket.onopen = () => resolve(undefined);
      socket.onerror = () => reject(new Error("the server cannot be reached"));
      socket.onclose = () => this.emit({ type: "status", text: "disconnected from the server" });
      socket.onmessage = (event) => this.serial(() => this.received(event.data));
      setInterval(() => this.send({ type: "ping" }), 25000);
    });
  }

  /**
   * Runs `work` after everything queued before it: the ratchet and the pairing are not
   * reentrant (two seals at once would take the same message key), so every step that
   * touches them — a frame received, a message sent, an ack, a resend — goes through here.
   * @param {() => Promise<void> | void} work
   * @returns {Promise<void>}
   */
  serial(work) {
    this.queue = this.queue.then(work).catch((error) => this.emit({ type: "error", text: String(error?.message ?? error) }));
    return this.queue;
  }

  /** @param {object} message */
  send(message) {
    this.socket?.send(JSON.stringify(message));
  }

  /** @param {Uint8Array} frame */
  sendFrame(frame) {
    this.socket?.send(frame);
  }

  /** @param {string | ArrayBuffer} data */
  async received(data) {
    if (typeof data !== "string") return this.receivedFrame(new Uint8Array(data));
    const message = JSON.parse(data);
    switch (message.type) {
      case "room_accepted":
        this.roomID = message.roomid;
        this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
        break;
      case "room_ready":
        this.emit({ type: "presence", online: true });
        if (!this.pairing) await this.startPairing();
        else if (this.session) this.resendAll();
        break;
      case "peer_left":
        this.emit({ type: "status", text: "your peer left the chat" });
        break;
      case "peer_disconnected":
        this.emit({ type: "presence", online: false });
        break;
      case "error":
        this.emit({ type: "error", text: String(message.error ?? "server error") });
        break;
      default:
        break;
    }
  }

  async startPairing() {
    this.pairing = await V2Pairing.create({
      role: /** @type {"creator" | "joiner"} */ (this.role), words: this.words, roomID: this.roomID,
      staticPrivate: random(32), random,
    });
    this.emit({ type: "status", text: "pairing" });
    await this.apply(this.pairing.start());
  }

  /** @param {import("../v2/pairing.js").Action[]} actions */
  async apply(actions) {
    for (const action of actions) {
      if (action.type === "send") this.sendFrame(action.frame);
      if (action.type === "failed") {
        this.emit({ type: "error", text: "pairing failed: the invite's words do not match, or someone interfered. Ask for a new invite." });
      }
      if (action.type === "established") {
        this.session = action.session;
        this.emit({ type: "secured", safetyNumber: await this.session.safetyNumber() });
        this.resendAll();
      }
      if (action.type === "received") await this.record(KIND.message, action.message);
    }
  }

  /** @param {Uint8Array} frame */
  async receivedFrame(frame) {
    if (this.session && frame[0] === 0x03) {
      let opened;
      try {
        opened = await this.session.openKind(frame, random);
      } catch {
        return; // a duplicate or a forgery: dropped, nothing changes
      }
      return this.record(opened.kind, opened.body);
    }
    if (!this.pairing || frame[0] === 0x04) return;
    try {
      await this.apply(await this.pairing.receive(frame, random));
    } catch {
      // A frame that does not belong to this step: refused, nothing changes.
    }
  }

  /** @param {number} kind @param {Uint8Array} body */
  async record(kind, body) {
    if (kind === KIND.ack && body.length === 8) {
      const ack = Number(new DataView(body.buffer, body.byteOffset).getBigUint64(0));
      if (ack >= this.nextSeq) return;
      for (const seq of [...this.outbox.keys()]) {
        if (seq <= ack) {
          this.outbox.delete(seq);
          this.emit({ type: "delivered", seq });
        }
      }
      if (ack > this.peerAck) {
        this.peerAck = ack;
        this.lastAckMove = Date.now();
      }
      return;
    }
    if (kind !== KIND.message || body.length < 8) return;
    const seq = Number(new DataView(body.buffer, body.byteOffset).getBigUint64(0));
    const payload = body.slice(8);
    if (seq === 0 || seq > this.delivered + 1024) return;
    if (seq > this.delivered) this.reorder.set(seq, payload);
    while (this.reorder.has(this.delivered + 1)) {
      const next = /** @type {Uint8Array} */ (this.reorder.get(this.delivered + 1));
      this.reorder.delete(this.delivered + 1);
      this.delivered += 1;
      this.unacked += 1;
      this.deliver(this.delivered, next);
    }
    // A duplicate still owes the ack: the sender resent because it missed ours.
    if (this.unacked >= 16) await this.sendAck();
    else this.ackTimer ??= setTimeout(() => this.serial(() => this.sendAck()), 20);
  }

  /** @param {number} seq @param {Uint8Array} payload */
  deliver(seq, payload) {
    const text = new TextDecoder().decode(payload);
    if (text.startsWith("{")) {
      try {
        const object = JSON.parse(text);
        if (object.type === "profile" && typeof object.name === "string") {
          this.emit({ type: "peer", name: object.name.slice(0, 64) });
          return;
        }
        if (typeof object.type === "string" && /^(file_|lifetime|contact)/.test(object.type)) {
          this.emit({ type: "status", text: `your peer used a feature this page does not have yet (${object.type})` });
          return;
        }
      } catch {
        // Not JSON: a text that starts with a brace.
      }
    }
    this.emit({ type: "message", seq, text, outgoing: false });
  }

  async sendAck() {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    this.unacked = 0;
    if (!this.session) return;
    this.sendFrame(await this.session.sealKind(KIND.ack, u64(this.delivered)));
  }

  /**
   * Sends a text (kept until acknowledged).
   * @param {string} text
   */
  async sendText(text) {
    const seq = this.nextSeq++;
    const payload = utf8(text);
    this.outbox.set(seq, payload);
    this.emit({ type: "message", seq, text, outgoing: true });
    await this.serial(() => this.transmit(seq, payload));
  }

  /** @param {number} seq @param {Uint8Array} payload */
  async transmit(seq, payload) {
    if (!this.session) return;
    this.sendFrame(await this.session.sealKind(KIND.message, concat(u64(seq), payload)));
  }

  /** Sends every unacknowledged message again, in order (each as a new ratchet frame). */
  resendAll() {
    this.serial(async () => {
      for (const [seq, payload] of [...this.outbox.entries()].sort((a, b) => a[0] - b[0])) await this.transmit(seq, payload);
    });
  }

  resendIfStalled() {
    if (this.session && this.outbox.size > 0 && Date.now() - this.lastAckMove > 2000) {
      this.lastAckMove = Date.now();
      this.resendAll();
    }
  }
}
