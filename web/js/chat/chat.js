// One chat in the page: the room (REST), the signaling WebSocket (relay path), the v2
// pairing and the reliable message layer of docs/protocol.md ("Reliable messages"):
// every message keeps its seq until acked, is resent after a reconnect or when the ack
// stalls, and is delivered exactly once and in order; acks are cumulative (at once after
// 16 deliveries, else 20 ms after the first).

import { concat, constantTimeEqual, toHex, utf8 } from "../crypto/bytes.js";
import { x25519Public } from "../crypto/x25519.js";
import { safetyNumber } from "../signal/fingerprint.js";
import { serializePublicKey } from "../signal/ratchet.js";
import { V1Channel, sessionKey } from "../v1/channel.js";
import { KIND, V2Pairing, restoreSession, storeSession } from "../v2/pairing.js";
import { CALL_SLOTS, callInvite, callWindow, contactSecret, fingerprint, parseContactOffer } from "./contacts.js";
import { inviteText, randomWords } from "./invite.js";
import { FRAME_FILE_CHUNK, FileTransfers } from "./files.js";
import { PeerLink } from "./webrtc.js";

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
 *   | { type: "secured", safetyNumber: string, protocol: "v1" | "v2", verifiedByUser?: boolean, savesContacts?: boolean }
 *   | { type: "message", seq: number, text: string, outgoing: boolean, at: number }
 *   | { type: "delivered", seq: number }
 *   | { type: "peer", name: string }
 *   | { type: "presence", online: boolean }
 *   | { type: "path", path: "direct" | "turn" | "relay" }
 *   | { type: "lifetime_proposed", lifetime: string }
 *   | { type: "lifetime", lifetime: string }
 *   | { type: "lifetime_rejected" }
 *   | { type: "contact_offered" }
 *   | { type: "contact_pending", name: string }
 *   | { type: "contact_saved", name: string, fingerprint: string }
 *   | { type: "error", text: string }
 *   | import("./files.js").FileEvent} ChatEvent
 */

/**
 * @typedef {{ relayOnly?: boolean, vault?: import("../store/vault.js").Vault | null, name?: string,
 *   contacts?: import("./contacts.js").ContactBook | null, call?: import("./contacts.js").Contact | null }} ChatOptions
 * `name`: the name the peer sees for us (sent inside the session as a `profile`, like the
 * CLI's `--as`).
 * `contacts`: where `/save` keeps the peer (the vault's contact book; none: saving is off).
 * `call`: this chat is a call to (or from) that saved contact: its invite is derived, the
 * Noise static key is our identity key, the peer's must be the contact's, no v1.
 * `relayOnly`: the peer never learns this device's addresses: a DataChannel only through
 * the server's TURN relay when it has one, else no WebRTC at all (the WebSocket relay).
 * `vault`: keep the chat there (sealed under the user's passphrase) so that a reload can
 * resume it; without one nothing is kept.
 */

/** How many messages a kept chat remembers for its history. */
export const HISTORY_LIMIT = 500;

/**
 * Disappearing messages: the lifetimes of the iOS app and the CLI (wire names) and how
 * long each keeps a message (ms); `ephemeral` keeps none (nothing is written to the vault).
 * @type {Record<string, number>}
 */
export const LIFETIMES = { ephemeral: 0, "1h": 3600e3, "6h": 6 * 3600e3, "1d": 86400e3, "7d": 7 * 86400e3, "30d": 30 * 86400e3 };

/**
 * Holds the Web Locks lock of kept chat `id` until the returned function is called; throws
 * when another tab or window of this origin holds it (the same chat run twice would seal
 * two frames under one key and nonce).
 * @param {string} id
 * @returns {Promise<() => void>}
 */
async function holdLock(id) {
  const locks = globalThis.navigator?.locks;
  if (!locks) return () => {};
  return new Promise((resolve, reject) => {
    locks.request(`inviso-chat-${id}`, { ifAvailable: true }, (lock) => {
      if (!lock) {
        reject(new Error("this chat is open in another tab or window: close it there first"));
        return undefined;
      }
      return new Promise((release) => resolve(() => release(undefined)));
    }).catch(reject);
  });
}

/**
 * Whether a kept history entry is well formed.
 * @param {any} entry
 */
function isHistoryEntry(entry) {
  return entry != null && Number.isSafeInteger(entry.seq) && typeof entry.text === "string";
}

/**
 * Shows kept messages through `emit`, each with its delivery mark.
 * @param {{ seq: number, text: string, outgoing: boolean, delivered: boolean, at: number }[]} history
 * @param {(event: ChatEvent) => void} emit
 */
function replayHistory(history, emit) {
  for (const entry of history) {
    emit({ type: "message", seq: entry.seq, text: entry.text, outgoing: entry.outgoing, at: Number(entry.at) || Date.now() });
    if (entry.outgoing && entry.delivered) emit({ type: "delivered", seq: entry.seq });
  }
}

/**
 * The peer's name of a chat or a kept record: ours for them (`localName`), else the one
 * they chose (`peerName`), else "".
 * @param {any} chat
 * @returns {string}
 */
export function keptName(chat) {
  const name = [chat?.localName, chat?.peerName].find((item) => typeof item === "string" && item);
  return typeof name === "string" ? name.slice(0, 64) : "";
}

/** A refusal of the server's REST API, with its error code (`not_found_or_expired`, `code_taken`, …). */
export class RoomError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class Chat {
  /** @param {(event: ChatEvent) => void} emit @param {ChatOptions} [options] */
  constructor(emit, options = {}) {
    this.emit = emit;
    this.relayOnly = options.relayOnly === true;
    this.name = (options.name ?? "").trim().slice(0, 64);
    this.vault = options.vault ?? null;
    this.contacts = options.contacts ?? null;
    /** The saved contact this chat is a call with. */
    this.contact = options.call ?? null;
    /** `/save NAME` sent before the peer's `contact` arrived: our name for them. */
    this.pendingName = "";
    /**
     * The peer's `contact` message, until we save them too.
     * @type {{ identity: Uint8Array, nonce: Uint8Array } | null}
     */
    this.peerContact = null;
    /**
     * Our nonce of this chat's `contact` message, once sent.
     * @type {Uint8Array | null}
     */
    this.ourNonce = null;
    /** Our name for the peer once the contact is saved in this chat. */
    this.savedName = "";
    /**
     * "v2" (invites with words), or "v1": the iOS app's protocol, for a bare six-digit
     * code, or when the creator's peer answers with a `key_exchange` (docs/protocol.md,
     * "v1 in the chat engine"). v1 is unauthenticated and has no acks.
     * @type {"v1" | "v2"}
     */
    this.protocol = "v2";
    /** @type {V1Channel | null} */
    this.v1 = null;
    this.v1Private = random(32);
    /** @type {Uint8Array | null} */
    this.v1PeerKey = null;
    this.v1SentKey = false;
    /** Whether the user marked this v1 chat verified (after comparing the safety number). */
    this.verifiedByUser = false;
    /** Whether the peer sent a v2 frame (then the creator never falls back to v1). */
    this.peerSpokeV2 = false;
    /**
     * v1 messages waiting for the key exchange.
     * @type {Uint8Array[]}
     */
    this.v1Waiting = [];
    /** The chat's id in the vault. */
    this.id = toHex(random(8));
    /** The name the peer chose (its `profile`). */
    this.peerName = "";
    /** Our own name for the peer (rename, or the contact's name in a call): shown before theirs. */
    this.localName = "";
    /** @type {{ seq: number, text: string, outgoing: boolean, delivered: boolean, at: number }[]} */
    this.history = [];
    /** The agreed lifetime (the CLI's default until both agree on another). */
    this.lifetime = "30d";
    /** @type {string | null} */
    this.proposedLifetime = null;
    /** @type {string | null} */
    this.peerProposal = null;
    /** @type {PeerLink | null} */
    this.link = null;
    /**
     * The last ICE servers the server gave (or is giving), and when they were asked for.
     * @type {{ servers: Promise<RTCIceServer[]>, at: number } | null}
     */
    this.ice = null;
    /**
     * A DataChannel offer on its way (`openLinkSoon`).
     * @type {Promise<void> | null}
     */
    this.opening = null;
    /** Closed (left, stopped, ended): nothing opens again. */
    this.closed = false;
    /** The invite's code while the creator waits for its peer. */
    this.joinCode = "";
    /** Reconnections tried since the socket was last open. */
    this.reconnects = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.reconnectTimer = undefined;
    /** Whether the vault holds this chat (it was written at least once). */
    this.persisted = false;
    /**
     * Lets go of this chat's lock (held while a kept chat runs in this tab).
     * @type {(() => void) | null}
     */
    this.release = null;
    /** Frames sent and arrived on each path (the page shows the path; tests read these). */
    this.sent = { relay: 0, direct: 0 };
    this.arrived = { relay: 0, direct: 0 };
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
    /** Seqs of our file control messages: their acks are not shown as deliveries. */
    /** @type {Set<number>} */
    this.controlSeqs = new Set();
    this.files = new FileTransfers({
      control: (message) => this.sendControl(message),
      frame: (frame) => this.sendFrame(frame),
      direct: () => this.link?.isOpen === true,
      emit: (event) => this.emit(event),
      now: () => performance.now(),
    });
    /** The relay's pace (docs/protocol.md "Relay pacing"): until the server announces its limits, the default server's. */
    this.pacer = new RelayPacer({ messagesPerSecond: 50, messageBurst: 200, roomBytesPerSecond: 1048576, roomByteBurst: 8388608 });
    /** @type {ReturnType<typeof setInterval> | undefined} */
    this.pingTimer = undefined;
    this.resendTimer = setInterval(() => this.resendIfStalled(), 2000);
    this.fileTimer = setInterval(() => this.files.tick(), 1000);
  }

  /** Creates a room and an invite, then waits for the peer. */
  async create() {
    const joinCode = await this.createRoom();
    this.words = randomWords();
    const invite = inviteText({ joinCode, words: this.words });
    this.emit({ type: "invite", invite, link: `${location.origin}/#join=${invite}` });
    await this.watch(joinCode);
  }

  /**
   * Asks the server for a room (under `joinCode` when given, else a free code it picks).
   * @param {string} [joinCode]
   * @returns {Promise<string>} the room's join code
   * @throws {RoomError} `code_taken` when `joinCode` is live already
   */
  async createRoom(joinCode) {
    if (this.closed) throw new Error("the chat was closed");
    const response = await fetch("/api/rooms", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client1: this.deviceID, expiresInSeconds: 600, ...(joinCode ? { joinid: joinCode } : {}) }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new RoomError(String(body.error ?? response.status), `the server refused the room (${body.error ?? response.status})`);
    this.role = "creator";
    return String(body.joinid);
  }

  /**
   * The creator's side, once its room exists: connected and waiting for the peer.
   * @param {string} joinCode
   */
  async watch(joinCode) {
    this.joinCode = joinCode;
    await this.connect();
    this.send({ type: "watch_code", joinid: joinCode, client1: this.deviceID });
    this.emit({ type: "status", text: this.contact ? `calling ${this.contact.name}…` : "waiting for your peer to join" });
  }

  /**
   * @param {import("./invite.js").Invite} invite
   * @throws {RoomError} `not_found_or_expired`, `already_accepted`, …
   */
  async join(invite) {
    if (this.closed) throw new Error("the chat was closed");
    this.words = invite.words;
    if (invite.words.length === 0) this.protocol = "v1";
    const response = await fetch("/api/rooms/accept", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ joinid: invite.joinCode, client2: this.deviceID }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const reason = body.error === "already_accepted" ? "this invite was already used" : body.error === "not_found_or_expired" ? "this invite expired or does not exist" : body.error ?? response.status;
      throw new RoomError(String(body.error ?? response.status), `${reason}: ask for a new invite`);
    }
    this.role = "joiner";
    this.roomID = body.roomid;
    await this.connect();
    this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
  }

  /**
   * Calls the saved contact this chat was made for (`options.call`), as `inviso call`
   * does: joins the contact's room of this window or a neighbouring one (clocks a few
   * minutes apart still meet); when there is none, creates this window's and waits (a
   * taken code means the contact created it meanwhile: joins it).
   * @param {number} [now] ms since 1970
   */
  async call(now = Date.now()) {
    const contact = this.contact;
    if (!contact) throw new Error("not a call");
    this.named(contact.name);
    const window = callWindow(now);
    // This window's first slot with no room: ours is created there (every probe of a used
    // or missing code counts against this address's failed attempts at the server).
    let free = 0;
    for (const candidate of [window, window - 1, window + 1]) {
      // A used slot (an earlier call's room) leads to the next; a missing one ends the window.
      for (let slot = 0; slot < CALL_SLOTS; slot++) {
        const door = await this.tryJoin(await callInvite(contact.secret, candidate, slot));
        if (door === "joined") {
          this.emit({ type: "status", text: `calling ${contact.name}: pairing` });
          return;
        }
        if (door === "absent") break;
        if (candidate === window) free = slot + 1;
      }
    }
    await this.answer(window, free);
  }

  /**
   * Shows the peer under the contact's name (our name for them).
   * @param {string} name
   */
  named(name) {
    this.localName = name;
    this.emit({ type: "peer", name: this.shownName() });
  }

  /** The peer's name as shown: ours for them, else theirs, else none. */
  shownName() {
    return keptName(this);
  }

  /** Whether this chat can save its peer as a contact: kept, and verified (every v2 session is). */
  savesContacts() {
    return this.contacts != null && this.protocol === "v2";
  }

  /**
   * Renames the chat on this device (the CLI's `/rename`): our name for the peer, shown
   * instead of the one they chose; empty goes back to theirs. Kept with the chat.
   * @param {string} name
   */
  rename(name) {
    this.localName = name.trim().slice(0, 64);
    this.emit({ type: "peer", name: this.shownName() || "your peer" });
    this.serial(() => this.persist());
  }

  /**
   * Opens the contact's room of `window` (its first free slot from `first`) and waits for
   * their call (`inviso listen`'s half of a call); joins when the contact created it first.
   * @param {number} window @param {number} [first]
   */
  async answer(window, first = 0) {
    const contact = this.contact;
    if (!contact) throw new Error("not a call");
    this.named(contact.name);
    for (let slot = first; slot < CALL_SLOTS; slot++) {
      const invite = await callInvite(contact.secret, window, slot);
      // Taken: the contact's room waiting for us (joined), or an earlier call's (the next
      // slot); gone meanwhile (the contact stopped): this slot again, so no gap is left.
      for (let tries = 0; tries < 3; tries++) {
        try {
          await this.createRoom(invite.joinCode);
        } catch (error) {
          if (!(error instanceof RoomError) || error.code !== "code_taken") throw error;
          const door = await this.tryJoin(invite);
          if (door === "joined") return;
          if (door === "used") break;
          continue;
        }
        this.words = invite.words;
        await this.watch(invite.joinCode);
        return;
      }
    }
    throw new Error("every call of this window is used: try again in five minutes");
  }

  /**
   * Joins a call's room: "joined", "used" (someone entered it already) or "absent".
   * @param {import("./invite.js").Invite} invite
   * @returns {Promise<"joined" | "used" | "absent">}
   */
  async tryJoin(invite) {
    try {
      await this.join(invite);
      return "joined";
    } catch (error) {
      if (error instanceof RoomError && error.code === "not_found_or_expired") return "absent";
      if (error instanceof RoomError && error.code === "already_accepted") return "used";
      throw error;
    }
  }

  /** Opens the signaling WebSocket (the relay path) to this page's server. */
  connect() {
    if (this.closed) return Promise.reject(new Error("the chat was closed"));
    return new Promise((resolve, reject) => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const socket = new WebSocket(`${scheme}//${location.host}/`);
      socket.binaryType = "arraybuffer";
      this.socket = socket;
      socket.onopen = () => resolve(undefined);
      socket.onerror = () => reject(new Error("the server cannot be reached"));
      socket.onclose = () => {
        if (this.socket !== socket || this.closed) return;
        this.emit({ type: "status", text: "disconnected from the server: reconnecting…" });
        this.reconnectLater();
      };
      socket.onmessage = (event) => {
        if (typeof event.data !== "string") {
          this.arrived.relay += 1;
          const frame = new Uint8Array(event.data);
          // Chunks skip the chat's queue: they touch no ratchet, and a file must not hold up the messages.
          if (frame[0] === FRAME_FILE_CHUNK) return this.files.chunk(frame);
        }
        this.serial(() => this.received(event.data));
      };
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), 25000);
    });
  }

  /**
   * The relay's socket closed under us (a server restart, a network change): connects
   * again after 1, 2, 4 … 15 s and goes back into the room with the same device ID (or
   * back to watching the invite's code), as the CLI does. The peer then resends what we
   * had not acknowledged, and so do we.
   */
  reconnectLater() {
    clearTimeout(this.reconnectTimer);
    const delay = Math.min(15000, 1000 * 2 ** Math.min(this.reconnects, 4));
    this.reconnects += 1;
    this.reconnectTimer = setTimeout(async () => {
      if (this.closed) return;
      try {
        await this.connect();
      } catch {
        return; // its close event tries again
      }
      this.reconnects = 0;
      if (this.roomID) this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
      else if (this.role === "creator" && this.joinCode) this.send({ type: "watch_code", joinid: this.joinCode, client1: this.deviceID });
    }, delay);
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

  /**
   * Sends a frame on the DataChannel when it is open, else on the relay.
   * @param {Uint8Array} frame
   */
  sendFrame(frame) {
    if (this.link?.send(frame)) {
      this.sent.direct += 1;
      return;
    }
    this.sent.relay += 1;
    const socket = this.socket;
    if (socket) this.pacer.send(frame, (paced) => socket.send(paced));
  }

  /** `openLink` beside the chat's queue: the first messages need not wait for ICE servers. */
  openLinkSoon() {
    const opening = this.openLink()
      .catch((error) => this.emit({ type: "error", text: `WebRTC: ${error?.message ?? error}` }))
      .finally(() => {
        if (this.opening === opening) this.opening = null;
      });
    this.opening = opening;
  }

  /** Offers a DataChannel unless one is open or on its way. */
  ensureLink() {
    if (!this.link && !this.opening) this.openLinkSoon();
  }

  /**
   * The creator offers a DataChannel once the session is up: only then, because the offer
   * and its candidates tell the device's addresses, which must go to the authenticated
   * peer alone (not to whoever entered the room: a code guesser, or the server). Relay
   * only: only through the server's TURN relay, and not at all when it has none.
   */
  async openLink() {
    if (this.closed || this.role !== "creator" || !(this.session || this.v1)) return;
    const servers = await this.iceServers();
    if (this.relayOnly && servers.length === 0) return;
    this.link?.close();
    this.link = this.newLink(true, servers);
    this.link.start();
  }

  /**
   * A link whose frames enter the same queue as the relay's.
   * @param {boolean} initiator @param {RTCIceServer[]} iceServers
   */
  newLink(initiator, iceServers) {
    const link = new PeerLink({
      initiator,
      iceServers,
      relayOnly: this.relayOnly,
      signal: (message) => this.send(message),
      onFrame: (frame) => {
        this.arrived.direct += 1;
        if (frame[0] === FRAME_FILE_CHUNK) return this.files.chunk(frame);
        this.serial(() => this.receivedFrame(frame));
      },
      onOpen: () => {
        this.files.pathChanged();
        link.route().then((route) => {
          if (this.link === link && link.isOpen) this.emit({ type: "path", path: route });
        });
      },
      onClose: () => {
        if (this.link !== link) return;
        this.link = null;
        this.emit({ type: "path", path: "relay" });
        // What the channel had not delivered goes again on the relay.
        this.resendAll();
        this.files.pathChanged();
      },
    });
    return link;
  }

  /**
   * The server's TURN credentials when it has a TURN server (`POST /api/turn`), else no
   * ICE server at all: the page never asks a third party for its address.
   * @returns {Promise<RTCIceServer[]>}
   */
  iceServers() {
    // Asked once a minute at most (an offer after a failure reuses them).
    if (!this.ice || performance.now() - this.ice.at >= 60000) this.ice = { servers: this.fetchIceServers(), at: performance.now() };
    return this.ice.servers;
  }

  /** @returns {Promise<RTCIceServer[]>} */
  async fetchIceServers() {
    try {
      const response = await fetch("/api/turn", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ deviceId: this.deviceID }),
      });
      if (!response.ok) return [];
      const body = await response.json();
      const urls = Array.isArray(body.urls) ? body.urls.filter((/** @type {unknown} */ url) => typeof url === "string") : typeof body.urls === "string" ? [body.urls] : [];
      if (urls.length === 0 || typeof body.username !== "string" || typeof body.credential !== "string") return [];
      return [{ urls, username: body.username, credential: body.credential }];
    } catch {
      return [];
    }
  }

  /**
   * The chat as the vault keeps it (everything secret; only ever stored sealed). A v1 chat
   * keeps its X25519 keys and the channel's counters instead of a ratchet.
   */
  snapshot() {
    const common = {
      version: 1, id: this.id, deviceID: this.deviceID, roomID: this.roomID, role: this.role,
      nextSeq: this.nextSeq, outbox: [...this.outbox.entries()], delivered: this.delivered, peerAck: this.peerAck,
      peerName: this.peerName, localName: this.localName, history: this.history, lifetime: this.lifetime, savedAt: Date.now(),
    };
    if (this.protocol === "v1") {
      return {
        ...common, protocol: "v1", verifiedByUser: this.verifiedByUser,
        v1: { privateKey: this.v1Private, peerKey: this.v1PeerKey, ...(/** @type {V1Channel} */ (this.v1)).counters() },
      };
    }
    return { ...common, protocol: "v2", session: storeSession(/** @type {import("../v2/pairing.js").V2Session} */ (this.session)) };
  }

  /**
   * Keeps the chat in the vault (when it has one and the session is up). A v1 chat is
   * written before each frame it seals leaves, as a v2 one: a reload must never seal two
   * messages under one counter (AES-GCM with a repeated key and nonce).
   */
  async persist() {
    if (!this.vault) return;
    if (!(this.protocol === "v2" ? this.session : this.v1 && this.v1PeerKey)) return;
    // Kept: no other tab may run this chat (two would seal under the same keys).
    this.release ??= await holdLock(this.id);
    await this.vault.put(this.id, this.snapshot());
    this.persisted = true;
  }

  // MARK: v1

  async sendKeyExchange() {
    if (this.v1SentKey) return;
    this.v1SentKey = true;
    const publicKey = await x25519Public(this.v1Private);
    this.send({ type: "key_exchange", publicKey: btoa(String.fromCharCode(...publicKey)), sessionId: this.roomID, timestamp: Math.floor(Date.now() / 1000) });
  }

  /** @param {any} message */
  async receivedKeyExchange(message) {
    if (message.sessionId !== this.roomID || typeof message.publicKey !== "string") return;
    let key;
    try {
      key = Uint8Array.from(atob(message.publicKey), (c) => c.charCodeAt(0));
    } catch {
      key = new Uint8Array(0);
    }
    if (this.v1) return; // the same key again, or a second one: ignored, the session stays
    if (key.length !== 32) {
      this.emit({ type: "error", text: "your peer's key is malformed: ask for a new invite" });
      return;
    }
    let session;
    try {
      session = await sessionKey(this.v1Private, key);
    } catch {
      this.emit({ type: "error", text: "your peer's key is unusable (someone may have interfered): ask for a new invite" });
      return;
    }
    this.v1 = new V1Channel(session, /** @type {"creator" | "joiner"} */ (this.role));
    this.v1PeerKey = key;
    await this.persist();
    await this.sendKeyExchange();
    if (this.role === "joiner") this.send({ type: "key_exchange_complete", sessionId: this.roomID, timestamp: Math.floor(Date.now() / 1000) });
    this.emit({ type: "secured", safetyNumber: await this.v1SafetyNumber(), protocol: "v1" });
    await this.sendHeldV1();
    this.ensureLink();
  }

  /** The v1 safety number (docs/protocol.md, "v1 safety number"). */
  async v1SafetyNumber() {
    const ours = await x25519Public(this.v1Private);
    const remote = this.role === "creator" ? "joiner" : "creator";
    return safetyNumber({
      localStableID: utf8(`inviso v1 ${this.role}`), localKey: serializePublicKey(ours),
      remoteStableID: utf8(`inviso v1 ${remote}`), remoteKey: serializePublicKey(/** @type {Uint8Array} */ (this.v1PeerKey)),
    });
  }

  /** The user compared the v1 safety number with the peer's: kept with the chat. */
  markVerified() {
    this.verifiedByUser = true;
    this.serial(() => this.persist());
  }

  /** @param {string} text */
  async sendV1(text) {
    const seq = this.nextSeq++;
    const at = Date.now();
    // v1 has no acks: kept as sent, never marked delivered.
    this.remember({ seq, text, outgoing: true, delivered: false, at });
    this.emit({ type: "message", seq, text, outgoing: true, at });
    await this.sendOrHoldV1(utf8(text));
  }

  /**
   * Sends a v1 payload now if it can reach the peer's path, else holds it: v1 has no acks
   * or resends, so until the key exchange is done and this page is connected (a resumed
   * chat reconnects first) payloads wait, and go at `sendHeldV1`.
   * @param {Uint8Array} payload
   */
  sendOrHoldV1(payload) {
    return this.serial(async () => {
      if (this.v1 && (this.link?.isOpen === true || this.socket?.readyState === 1)) await this.transmitV1(payload);
      else this.v1Waiting.push(payload);
    });
  }

  /** Sends the v1 payloads held so far (the key exchange is done, or the room is back). */
  async sendHeldV1() {
    for (const payload of this.v1Waiting.splice(0)) await this.transmitV1(payload);
  }

  /** @param {Uint8Array} payload */
  async transmitV1(payload) {
    const channel = /** @type {V1Channel} */ (this.v1);
    const frame = utf8(await channel.seal(payload));
    // Written ahead: after a reload the next counter is beyond this one.
    await this.persist();
    this.sendFrame(frame);
  }

  /** @param {Uint8Array} frame */
  async receivedV1(frame) {
    if (!this.v1) return;
    let opened;
    try {
      opened = await this.v1.open(new TextDecoder("utf-8", { fatal: true }).decode(frame));
    } catch {
      return; // malformed, replayed, reflected or forged: dropped, nothing changes
    }
    this.deliver(opened.counter + 1, opened.plaintext);
    await this.persist();
  }

  /**
   * A kept chat, opened: its history and safety number shown, not yet connected
   * (``reconnect``). Messages sent meanwhile wait for the connection.
   * @param {import("../store/vault.js").Vault} vault @param {string} id
   * @param {(event: ChatEvent) => void} emit @param {ChatOptions} [options]
   */
  static async restore(vault, id, emit, options = {}) {
    const stored = await vault.get(id);
    if (stored?.ended === true) throw new Error("this chat ended: your peer left it");
    if (!stored || stored.version !== 1 || typeof stored.roomID !== "string" || typeof stored.deviceID !== "string"
      || (stored.role !== "creator" && stored.role !== "joiner") || !Number.isSafeInteger(stored.nextSeq)
      || !Number.isSafeInteger(stored.delivered) || !Array.isArray(stored.outbox) || !Array.isArray(stored.history)) {
      throw new Error("this kept chat is damaged");
    }
    const chat = new Chat(emit, { ...options, vault });
    chat.persisted = true;
    chat.id = id;
    chat.deviceID = stored.deviceID;
    chat.roomID = stored.roomID;
    chat.role = stored.role;
    let safety;
    if (stored.protocol === "v1") {
      const keys = stored.v1;
      if (!(keys?.privateKey instanceof Uint8Array) || keys.privateKey.length !== 32 || !(keys.peerKey instanceof Uint8Array) || keys.peerKey.length !== 32) {
        throw new Error("this kept chat is damaged");
      }
      chat.protocol = "v1";
      chat.v1Private = keys.privateKey;
      chat.v1PeerKey = keys.peerKey;
      chat.v1SentKey = true;
      chat.verifiedByUser = stored.verifiedByUser === true;
      try {
        chat.v1 = V1Channel.restore(await sessionKey(keys.privateKey, keys.peerKey), stored.role, keys);
      } catch {
        throw new Error("this kept chat is damaged");
      }
      safety = await chat.v1SafetyNumber();
    } else {
      chat.session = restoreSession(stored.session);
      safety = await chat.session.safetyNumber();
    }
    chat.nextSeq = stored.nextSeq;
    chat.delivered = stored.delivered;
    chat.peerAck = Number.isSafeInteger(stored.peerAck) ? stored.peerAck : 0;
    for (const [seq, payload] of stored.outbox) {
      if (Number.isSafeInteger(seq) && payload instanceof Uint8Array) chat.outbox.set(seq, payload);
    }
    chat.peerName = typeof stored.peerName === "string" ? stored.peerName.slice(0, 64) : "";
    chat.localName = typeof stored.localName === "string" ? stored.localName.slice(0, 64) : "";
    if (typeof stored.lifetime === "string" && stored.lifetime in LIFETIMES) chat.lifetime = stored.lifetime;
    chat.history = stored.history.filter(isHistoryEntry).slice(-HISTORY_LIMIT);
    // Known good: held from here on (another tab running it would seal under the same keys).
    chat.release = await holdLock(id);
    emit({ type: "secured", safetyNumber: safety, protocol: chat.protocol, verifiedByUser: chat.verifiedByUser, savesContacts: chat.savesContacts() });
    if (chat.shownName()) emit({ type: "peer", name: chat.shownName() });
    chat.expire(Date.now());
    emit({ type: "lifetime", lifetime: chat.lifetime });
    replayHistory(chat.history, emit);
    return chat;
  }

  /** Joins the kept chat's room again with the same device ID; the peer then resends what we had not acknowledged. */
  async reconnect() {
    this.emit({ type: "status", text: "resumed: reconnecting" });
    await this.connect();
    this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
  }

  // MARK: Lifetimes

  /**
   * Proposes a lifetime; it applies once the peer accepts (`lifetime_proposal`).
   * @param {string} lifetime one of LIFETIMES
   */
  proposeLifetime(lifetime) {
    if (!(lifetime in LIFETIMES)) throw new Error("a lifetime is ephemeral, 1h, 6h, 1d, 7d or 30d");
    this.proposedLifetime = lifetime;
    this.sendControl({ type: "lifetime_proposal", sessionId: this.roomID, lifetime, proposedAt: Date.now() / 1000 });
  }

  /** Accepts the peer's proposal and applies it. */
  acceptLifetime() {
    const lifetime = this.peerProposal;
    if (!lifetime) return;
    this.peerProposal = null;
    this.sendControl({ type: "lifetime_accept", sessionId: this.roomID, lifetime, acceptedAt: Date.now() / 1000 });
    this.applyLifetime(lifetime);
  }

  rejectLifetime() {
    if (!this.peerProposal) return;
    this.peerProposal = null;
    this.sendControl({ type: "lifetime_reject", sessionId: this.roomID });
  }

  /** @param {any} message a `lifetime_*` payload from the peer */
  lifetimeMessage(message) {
    const lifetime = typeof message.lifetime === "string" && message.lifetime in LIFETIMES ? message.lifetime : null;
    if (message.type === "lifetime_proposal" && lifetime) {
      this.peerProposal = lifetime;
      this.emit({ type: "lifetime_proposed", lifetime });
    } else if (message.type === "lifetime_accept" && lifetime && lifetime === this.proposedLifetime) {
      this.proposedLifetime = null;
      this.applyLifetime(lifetime);
    } else if (message.type === "lifetime_reject") {
      this.proposedLifetime = null;
      this.emit({ type: "lifetime_rejected" });
    }
  }

  /** @param {string} lifetime */
  applyLifetime(lifetime) {
    this.lifetime = lifetime;
    this.expire(Date.now());
    this.emit({ type: "lifetime", lifetime });
  }

  /**
   * Drops kept messages older than the lifetime (all of them when ephemeral); the page
   * removes the shown ones itself (it calls this every few seconds).
   * @param {number} now ms since 1970
   */
  expire(now) {
    const keep = LIFETIMES[this.lifetime] ?? LIFETIMES["30d"];
    const before = this.history.length;
    this.history = keep === 0 ? [] : this.history.filter((entry) => now - (entry.at ?? now) < keep);
    if (this.history.length !== before) this.serial(() => this.persist());
    return keep;
  }

  /**
   * Leaves for good, as the CLI's `/leave`: `leave_room` (the peer is told its peer left),
   * the room deleted and this device ID purged on the server, the kept copy forgotten,
   * every connection closed.
   */
  async leave() {
    await this.queue;
    // What arrived is acknowledged first, on the socket ahead of `leave_room` (as the CLI
    // does), so the peer's last messages show as delivered instead of staying sent.
    if (this.ackTimer && this.socket) await this.sendAck(true);
    this.send({ type: "leave_room" });
    const json = (/** @type {object} */ body) => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (this.roomID) await fetch("/api/rooms", { method: "DELETE", ...json({ roomid: this.roomID, deviceId: this.deviceID }) }).catch(() => {});
    await fetch("/api/user/purge", { method: "POST", ...json({ deviceIds: [this.deviceID] }) }).catch(() => {});
    await this.forget();
    this.close();
    this.emit({ type: "status", text: "you left the chat: nothing of it is kept" });
  }

  /**
   * The peer left: the kept copy loses every key and counter (it can never be resumed) and
   * keeps the messages, readable until the user forgets it or their lifetime passes.
   */
  async end() {
    if (!this.vault || !this.persisted) return;
    await this.vault.put(this.id, {
      version: 1, id: this.id, ended: true, protocol: this.protocol, peerName: this.peerName, localName: this.localName,
      history: this.history, lifetime: this.lifetime, savedAt: Date.now(),
    });
    this.vault = null;
  }

  /**
   * Shows an ended chat (`end`) through `emit`: its peer, lifetime and kept messages,
   * those older than its lifetime dropped (also from the vault).
   * @param {import("../store/vault.js").Vault} vault @param {string} id
   * @param {(event: ChatEvent) => void} emit @param {number} [now] ms since 1970
   */
  static async readEnded(vault, id, emit, now = Date.now()) {
    const stored = await vault.get(id);
    if (!stored || stored.ended !== true || !Array.isArray(stored.history)) throw new Error("this kept chat is damaged");
    const lifetime = typeof stored.lifetime === "string" && stored.lifetime in LIFETIMES ? stored.lifetime : "30d";
    const keep = LIFETIMES[lifetime];
    const history = stored.history.filter((/** @type {any} */ entry) =>
      isHistoryEntry(entry) && Number.isFinite(entry.at) && now - entry.at < keep);
    if (history.length !== stored.history.length) await vault.put(id, { ...stored, history });
    emit({ type: "peer", name: keptName(stored) || "your peer" });
    emit({ type: "lifetime", lifetime });
    replayHistory(history, emit);
  }

  /** Forgets the kept copy (the chat itself goes on until the page closes). */
  async forget() {
    if (this.vault) await this.vault.delete(this.id);
    this.vault = null;
  }

  /** Ends the chat's connections (the page is closing or the chat is left). */
  close() {
    this.closed = true;
    this.release?.();
    this.release = null;
    this.link?.close();
    if (this.socket) {
      // Closed on purpose: no "disconnected" to report, nothing more to read.
      this.socket.onclose = null;
      this.socket.onmessage = null;
    }
    this.socket?.close();
    clearInterval(this.resendTimer);
    clearInterval(this.fileTimer);
    clearInterval(this.pingTimer);
    clearTimeout(this.reconnectTimer);
  }

  /** @param {string | ArrayBuffer} data */
  async received(data) {
    if (typeof data !== "string") return this.receivedFrame(new Uint8Array(data));
    const message = JSON.parse(data);
    switch (message.type) {
      case "connected":
        if (message.limits && typeof message.limits === "object") this.pacer.announce(message.limits);
        break;
      case "room_accepted":
        this.roomID = message.roomid;
        this.send({ type: "join_room", roomId: this.roomID, deviceId: this.deviceID });
        break;
      case "room_ready":
        this.emit({ type: "presence", online: true });
        // Asked now, used once the pairing is done (nothing reaches the peer before then).
        this.iceServers();
        if (this.protocol === "v1") {
          if (!this.v1) await this.sendKeyExchange();
          else {
            await this.sendHeldV1();
            if (!this.link?.isOpen) this.openLinkSoon();
          }
        } else if (!this.pairing && !this.session) await this.startPairing();
        else if (this.session) {
          this.resendAll();
          this.files.resync();
          if (!this.link?.isOpen) this.openLinkSoon();
        }
        break;
      case "key_exchange":
        // A call is v2 only: a key exchange there is someone else's.
        if (this.contact) break;
        // The creator, which speaks v2, falls back to v1 when its peer opens with the app's key exchange.
        if (this.protocol === "v2" && this.role === "creator" && !this.peerSpokeV2 && !this.session) {
          this.protocol = "v1";
          this.pairing = null;
        }
        if (this.protocol === "v1") await this.receivedKeyExchange(message);
        break;
      case "key_exchange_complete":
        break;
      case "webrtc_offer":
      case "webrtc_answer":
      case "ice_candidate":
        // The joiner answers every new offer (the creator offers again after a failure);
        // relay only, it answers through the server's TURN relay or not at all.
        if (message.type === "webrtc_offer" && this.role === "joiner") {
          const servers = await this.iceServers();
          if (this.relayOnly && servers.length === 0) break;
          this.link?.close();
          this.link = this.newLink(false, servers);
        }
        this.link?.signaled(message);
        break;
      case "peer_left":
        // The chat is over: its keys are dropped and nothing more is sent. Its messages
        // stay (a server could send this without cause: it can end a chat, not erase it).
        await this.end();
        this.close();
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
    // A call proves who we are with our identity key; any other chat uses a fresh key.
    const staticPrivate = this.contact && this.contacts ? await this.contacts.identity() : random(32);
    this.pairing = await V2Pairing.create({
      role: /** @type {"creator" | "joiner"} */ (this.role), words: this.words, roomID: this.roomID,
      staticPrivate, random,
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
        if (this.contact && !constantTimeEqual(action.session.peerIdentity, this.contact.identity)) {
          // Whoever this is knew the call's words (the contact secret) but not the contact's private key.
          this.pairing = null;
          this.send({ type: "leave_room" });
          this.close();
          this.emit({ type: "error", text: `the peer is not ${this.contact.name}: the call was ended. Someone may hold a copy of your contact secret.` });
          return;
        }
        this.session = action.session;
        await this.persist();
        this.emit({ type: "secured", safetyNumber: await this.session.safetyNumber(), protocol: "v2", savesContacts: this.savesContacts() });
        this.resendAll();
        if (this.name) this.sendControl({ type: "profile", name: this.name });
        this.ensureLink();
      }
      if (action.type === "received") await this.record(KIND.message, action.message);
    }
  }

  /** @param {Uint8Array} frame */
  async receivedFrame(frame) {
    if (this.protocol === "v1") return this.receivedV1(frame);
    if (frame[0] >= 0x01 && frame[0] <= 0x03) this.peerSpokeV2 = true;
    if (this.session && frame[0] === 0x03) {
      let opened;
      try {
        opened = await this.session.openKind(frame, random);
      } catch {
        return; // a duplicate or a forgery: dropped, nothing changes
      }
      await this.record(opened.kind, opened.body);
      // Kept before any ack can say we hold it (the ack itself is sealed after this).
      return this.persist();
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
          if (this.controlSeqs.delete(seq)) continue;
          const entry = this.history.find((item) => item.outgoing && item.seq === seq);
          if (entry) entry.delivered = true;
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
          this.peerName = object.name.slice(0, 64);
          this.emit({ type: "peer", name: this.shownName() });
          // Kept: a reload shows the name they chose.
          this.serial(() => this.persist());
          return;
        }
        if (typeof object.type === "string" && object.type.startsWith("file_")) {
          this.files.control(object);
          return;
        }
        if (typeof object.type === "string" && object.type.startsWith("lifetime_")) {
          this.lifetimeMessage(object);
          return;
        }
        if (object.type === "contact") {
          this.receivedContact(object).catch((error) => this.emit({ type: "error", text: `the contact was not saved: ${error?.message ?? error}` }));
          return;
        }
      } catch {
        // Not JSON: a text that starts with a brace.
      }
    }
    const at = Date.now();
    this.remember({ seq, text, outgoing: false, delivered: true, at });
    this.emit({ type: "message", seq, text, outgoing: false, at });
  }

  // MARK: Contacts

  /**
   * `/save NAME`: sends our identity key and a fresh nonce inside the session; the contact
   * is saved once the peer's arrive (at once when they saved us first).
   * @param {string} name our name for the peer
   */
  async saveContact(name) {
    const trimmed = name.trim();
    if (!this.contacts) throw new Error("only a kept chat can save contacts (tick \"Keep\" and choose a passphrase)");
    // Every v2 session paired with an invite's words (or a call's): verified.
    if (this.protocol !== "v2" || !this.session) throw new Error("only a verified chat (an invite with words) can be saved as a contact");
    if (trimmed.length === 0 || trimmed.length > 64) throw new Error("a contact's name has 1 to 64 characters");
    const taken = await this.contacts.named(trimmed);
    if (taken && !(this.peerContact && constantTimeEqual(taken.identity, this.peerContact.identity))) {
      throw new Error(`there is already a contact called ${trimmed}`);
    }
    // One nonce per chat: saving again (another name) must not give the sides different secrets.
    if (!this.ourNonce) {
      this.ourNonce = random(32);
      this.sendControl({ type: "contact", identity: toHex(await this.contacts.identityPublic()), nonce: toHex(this.ourNonce) });
    }
    if (this.peerContact) return this.completeSave(trimmed);
    this.pendingName = trimmed;
    this.emit({ type: "contact_pending", name: trimmed });
  }

  /**
   * The peer's `contact` message.
   * @param {any} message
   */
  async receivedContact(message) {
    const offer = parseContactOffer(message);
    if (!offer || this.protocol !== "v2" || !this.session) return; // malformed, or a chat that cannot save contacts
    this.peerContact = offer;
    if (this.pendingName) return this.completeSave(this.pendingName);
    // Saved already, and the peer saved again with another nonce: the secret follows.
    if (this.savedName) return this.completeSave(this.savedName);
    this.emit({ type: "contact_offered" });
  }

  /**
   * Saves the peer as `name`, with the secret of both sides' nonces (ours was sent).
   * @param {string} name
   */
  async completeSave(name) {
    this.pendingName = "";
    const peer = this.peerContact;
    const ourNonce = this.ourNonce;
    if (!this.contacts || !peer || !ourNonce) return;
    const secret = await contactSecret({
      ourIdentity: await this.contacts.identityPublic(), ourNonce, theirIdentity: peer.identity, theirNonce: peer.nonce,
    });
    // Saved before (from an earlier chat, or in this one): its id and "verified" stay.
    const existing = await this.contacts.withIdentity(peer.identity);
    try {
      await this.contacts.save({ id: existing?.id, name, identity: peer.identity, secret, verified: existing?.verified === true, savedAt: Date.now() });
    } catch (error) {
      this.emit({ type: "error", text: `the contact was not saved: ${/** @type {Error} */ (error).message}` });
      return;
    }
    this.savedName = name;
    this.emit({ type: "contact_saved", name, fingerprint: fingerprint(peer.identity) });
  }

  /** @param {{ seq: number, text: string, outgoing: boolean, delivered: boolean, at: number }} entry */
  remember(entry) {
    if (!this.vault || this.lifetime === "ephemeral") return;
    this.history.push(entry);
    if (this.history.length > HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT);
  }

  /**
   * Sends the ack of what was delivered. `onSocket`: on the relay's socket itself, past the
   * pacer and any DataChannel (a page that leaves sends it ahead of `leave_room`).
   * @param {boolean} [onSocket]
   */
  async sendAck(onSocket = false) {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    this.unacked = 0;
    if (!this.session) return;
    const frame = await this.session.sealKind(KIND.ack, u64(this.delivered));
    await this.persist();
    if (onSocket) this.socket?.send(frame);
    else this.sendFrame(frame);
  }

  /**
   * Sends a text (kept until acknowledged).
   * @param {string} text
   */
  async sendText(text) {
    if (this.protocol === "v1") return this.sendV1(text);
    const seq = this.nextSeq++;
    const payload = utf8(text);
    this.outbox.set(seq, payload);
    const at = Date.now();
    this.remember({ seq, text, outgoing: true, delivered: false, at });
    this.emit({ type: "message", seq, text, outgoing: true, at });
    await this.serial(() => this.transmit(seq, payload));
  }

  /**
   * Sends a file control message: numbered, kept and resent like a text, never shown.
   * @param {object} message
   */
  sendControl(message) {
    const seq = this.nextSeq++;
    const payload = utf8(JSON.stringify(message));
    if (this.protocol === "v1") {
      // v1 carries the app's JSON payloads (lifetimes, profile) as it carries texts: no acks.
      this.sendOrHoldV1(payload);
      return;
    }
    this.outbox.set(seq, payload);
    this.controlSeqs.add(seq);
    this.serial(() => this.transmit(seq, payload));
  }

  /**
   * Offers a file to the peer.
   * @param {Blob} blob @param {string} name
   */
  sendFile(blob, name) {
    if (this.protocol === "v1") throw new Error("files need a v2 chat (an invite with words); v1 cannot carry them");
    return this.files.offer(blob, name);
  }

  /** @param {number} seq @param {Uint8Array} payload */
  async transmit(seq, payload) {
    if (!this.session) return;
    const frame = await this.session.sealKind(KIND.message, concat(u64(seq), payload));
    // Written ahead: a reload after this frame left must not seal with the same key again.
    await this.persist();
    this.sendFrame(frame);
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

/**
 * Paces binary frames on the relay below the server's announced limits (80 % of the
 * messages per second, 45 % of the room's bytes per second: both members share the room's
 * quota), so that the server never drops one. Frames wait in order; the relay's other
 * messages (JSON) are few and not paced.
 */
export class RelayPacer {
  /** @param {{ messagesPerSecond: number, messageBurst: number, roomBytesPerSecond: number, roomByteBurst: number }} limits */
  constructor(limits) {
    /** @type {{ frame: Uint8Array, write: (frame: Uint8Array) => void }[]} */
    this.queue = [];
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    this.last = performance.now();
    this.messageRate = 40;
    this.messageBurst = 160;
    this.byteRate = 471859;
    this.byteBurst = 3774873;
    this.messages = Infinity;
    this.bytes = Infinity;
    this.announce(limits);
  }

  /** @param {any} limits the `limits` of the server's `connected` */
  announce(limits) {
    const number = (/** @type {unknown} */ value, /** @type {number} */ fallback) =>
      typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
    this.messageRate = 0.8 * number(limits.messagesPerSecond, 50);
    this.messageBurst = Math.max(1, 0.8 * number(limits.messageBurst, 200));
    this.byteRate = 0.45 * number(limits.roomBytesPerSecond, 1048576);
    this.byteBurst = Math.max(65536, 0.45 * number(limits.roomByteBurst, 8388608));
    this.messages = Math.min(this.messages, this.messageBurst);
    this.bytes = Math.min(this.bytes, this.byteBurst);
  }

  /** @param {Uint8Array} frame @param {(frame: Uint8Array) => void} write */
  send(frame, write) {
    this.queue.push({ frame, write });
    this.drain();
  }

  drain() {
    const now = performance.now();
    const elapsed = (now - this.last) / 1000;
    this.last = now;
    this.messages = Math.min(this.messageBurst, this.messages + elapsed * this.messageRate);
    this.bytes = Math.min(this.byteBurst, this.bytes + elapsed * this.byteRate);
    while (this.queue.length > 0) {
      const { frame, write } = this.queue[0];
      const cost = Math.min(frame.length, this.byteBurst);
      if (this.messages < 1 || this.bytes < cost) break;
      this.messages -= 1;
      this.bytes -= cost;
      this.queue.shift();
      write(frame);
    }
    if (this.queue.length > 0 && !this.timer) {
      const cost = Math.min(this.queue[0].frame.length, this.byteBurst);
      const wait = Math.max((1 - this.messages) / this.messageRate, (cost - this.bytes) / this.byteRate, 0.002);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.drain();
      }, wait * 1000);
    }
  }
}
