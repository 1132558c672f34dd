// Inviso v2 pairing and session, as docs/protocol.md ("v2") specifies and the Swift
// `V2Pairing` / `V2Session` implement: CPace on the invite's words, then
// Noise_XXpsk3_25519_ChaChaPoly_SHA256 keyed with CPace's result, then a Double Ratchet
// seeded from the handshake. A value machine without I/O: feed it frames, carry out the
// actions it returns. Randomness is injected (`random(count)`), so tests replay the Swift
// side's vectors byte for byte.
//
//   frames   0x01 CPace (0x20 ‖ Y ‖ 0x00) · 0x02 Noise message · 0x03 ratchet · 0x7F abort
//   psk      = HKDF-SHA256(ISK, salt = room id, "inviso v2 psk", 32)
//   prologue = "inviso v2" ‖ 0x00 ‖ room id ‖ 0x00 ‖ sid_output
//   RK ‖ CK  = HKDF-SHA256(k1 ‖ k2, salt = h, "inviso v2 ratchet", 64)
//   direct   = HKDF-SHA256(k1 ‖ k2, salt = h, "inviso v2 direct", 32)

import { concat, utf8 } from "../crypto/bytes.js";
import { CPaceParty } from "../crypto/cpace.js";
import { HandshakeState } from "../crypto/noise.js";
import { safetyNumber } from "../signal/fingerprint.js";
import { KeyPair, SessionState, hkdf, parsePublicKey, serializePublicKey } from "../signal/ratchet.js";

export const FRAME = { cpace: 0x01, handshake: 0x02, ratchet: 0x03, fileChunk: 0x04, abort: 0x7f };
const LABEL = utf8("inviso v2");
const NOISE = "Noise_XXpsk3_25519_ChaChaPoly_SHA256";
/** The three XXpsk3 message lengths with Inviso's payloads. */
const HANDSHAKE_LENGTHS = [48, 32 + 48 + 49, 48 + 16];
/** Ratchet plaintext kinds. */
export const KIND = { confirmation: 0x00, message: 0x01, ack: 0x02 };

/** A typed pairing failure (its message holds no secret). */
export class V2Error extends Error {
  /** @param {string} code @param {string} [message] */
  constructor(code, message) {
    super(message ?? code);
    this.code = code;
  }
}

/**
 * @typedef {{ type: "send", frame: Uint8Array } | { type: "established", session: V2Session }
 *   | { type: "received", message: Uint8Array } | { type: "failed", error: V2Error }} Action
 */

/** An established session: seals and opens ratchet frames. */
export class V2Session {
  /** @param {"creator" | "joiner"} role @param {SessionState} state @param {Uint8Array} directPathKey */
  constructor(role, state, directPathKey) {
    this.role = role;
    this.state = state;
    this.directPathKey = directPathKey;
  }

  /** The peer's Noise static public key (32 bytes). */
  get peerIdentity() {
    return this.state.remoteIdentity;
  }

  /**
   * A ratchet frame of `kind` with `body`.
   * @param {number} kind @param {Uint8Array} body
   */
  async sealKind(kind, body) {
    return concat(new Uint8Array([FRAME.ratchet]), await this.state.encrypt(concat(new Uint8Array([kind]), body)));
  }

  /** @param {Uint8Array} plaintext */
  seal(plaintext) {
    return this.sealKind(KIND.message, plaintext);
  }

  /**
   * Opens a ratchet frame; returns its kind and body. The session is unchanged on a throw,
   * also when `only` names a kind and the frame is another (`unexpectedFrame`).
   * @param {Uint8Array} frame @param {(count: number) => Uint8Array} random @param {number} [only]
   * @returns {Promise<{ kind: number, body: Uint8Array }>}
   */
  async openKind(frame, random, only) {
    if (frame.length < 2 || frame[0] !== FRAME.ratchet) throw new V2Error("unexpectedFrame", "not a ratchet frame");
    // Transactional: decrypt a copy, keep it only when the plaintext is well formed.
    const copy = cloneState(this.state);
    let plaintext;
    try {
      plaintext = await copy.decrypt(frame.subarray(1), random);
    } catch (error) {
      const code = /** @type {any} */ (error).code;
      if (code === "duplicateMessage" || code === "tooFarIntoFuture") throw new V2Error(code);
      throw new V2Error(code === "invalidMessage" || code === "invalidKey" ? "malformedFrame" : "authenticationFailed");
    }
    if (plaintext.length === 0 || plaintext[0] > KIND.ack) throw new V2Error("malformedFrame");
    if (plaintext[0] === KIND.confirmation && plaintext.length !== 1) throw new V2Error("malformedFrame");
    if (plaintext[0] === KIND.ack && plaintext.length !== 9) throw new V2Error("malformedFrame");
    if (only !== undefined && plaintext[0] !== only) throw new V2Error("unexpectedFrame", "another kind of record");
    this.state = copy;
    return { kind: plaintext[0], body: plaintext.slice(1) };
  }

  /**
   * Opens a message frame (not a confirmation).
   * @param {Uint8Array} frame @param {(count: number) => Uint8Array} random
   */
  async open(frame, random) {
    return (await this.openKind(frame, random, KIND.message)).body;
  }

  /** The 60-digit safety number (the same on both sides). */
  safetyNumber() {
    const remote = this.role === "creator" ? "joiner" : "creator";
    return safetyNumber({
      localStableID: utf8(`inviso v2 ${this.role}`),
      localKey: serializePublicKey(this.state.localIdentity),
      remoteStableID: utf8(`inviso v2 ${remote}`),
      remoteKey: serializePublicKey(this.state.remoteIdentity),
    });
  }
}

/**
 * A session as plain data (bytes stay `Uint8Array`s) for the page's encrypted store, and
 * back. Everything in it is secret: it is only ever kept sealed (js/store/vault.js).
 * @typedef {{ role: "creator" | "joiner", directPathKey: Uint8Array, localIdentity: Uint8Array,
 *   remoteIdentity: Uint8Array, rootKey: Uint8Array,
 *   sender: { privateKey: Uint8Array, publicKey: Uint8Array, chainKey: Uint8Array, index: number },
 *   receivers: import("../signal/ratchet.js").ReceiverChain[], previousCounter: number }} StoredSession
 */

/** @param {V2Session} session @returns {StoredSession} */
export function storeSession(session) {
  const state = session.state;
  return {
    role: session.role,
    directPathKey: session.directPathKey,
    localIdentity: state.localIdentity,
    remoteIdentity: state.remoteIdentity,
    rootKey: state.rootKey,
    sender: {
      privateKey: state.sender.keyPair.privateKey, publicKey: state.sender.keyPair.publicKey,
      chainKey: state.sender.chainKey, index: state.sender.index,
    },
    receivers: state.receivers.map((chain) => ({ ...chain, skipped: chain.skipped.map((key) => ({ ...key })) })),
    previousCounter: state.previousCounter,
  };
}

/**
 * @param {StoredSession} stored @returns {V2Session}
 * @throws {V2Error} "malformedState" when a field is missing or of the wrong kind
 */
export function restoreSession(stored) {
  const bytes = (/** @type {unknown} */ value, /** @type {number} */ length) => {
    if (!(value instanceof Uint8Array) || (length > 0 && value.length !== length)) throw new V2Error("malformedState");
    return value;
  };
  const count = (/** @type {unknown} */ value) => {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new V2Error("malformedState");
    return value;
  };
  if (!stored || (stored.role !== "creator" && stored.role !== "joiner") || !Array.isArray(stored.receivers)) {
    throw new V2Error("malformedState");
  }
  const state = new SessionState({
    localIdentity: bytes(stored.localIdentity, 32),
    remoteIdentity: bytes(stored.remoteIdentity, 32),
    rootKey: bytes(stored.rootKey, 32),
    sender: {
      keyPair: new KeyPair(bytes(stored.sender?.privateKey, 32), bytes(stored.sender?.publicKey, 32)),
      chainKey: bytes(stored.sender?.chainKey, 32),
      index: count(stored.sender?.index),
    },
    receivers: stored.receivers.map((chain) => ({
      ratchetKey: bytes(chain.ratchetKey, 0),
      chainKey: bytes(chain.chainKey, 32),
      index: count(chain.index),
      skipped: Array.isArray(chain.skipped) ? chain.skipped.map((key) => ({ index: count(key.index), seed: bytes(key.seed, 0) })) : [],
    })),
    previousCounter: count(stored.previousCounter),
  });
  return new V2Session(stored.role, state, bytes(stored.directPathKey, 0));
}

/** @param {SessionState} state @returns {SessionState} */
function cloneState(state) {
  return new SessionState({
    localIdentity: state.localIdentity,
    remoteIdentity: state.remoteIdentity,
    rootKey: state.rootKey,
    sender: { ...state.sender },
    receivers: state.receivers.map((chain) => ({ ...chain, skipped: [...chain.skipped] })),
    previousCounter: state.previousCounter,
  });
}

/** The pairing machine. Build it with {@link V2Pairing.create}. */
export class V2Pairing {
  /**
   * @param {{ role: "creator" | "joiner", words: string[], roomID: string, staticPrivate: Uint8Array,
   *   random: (count: number) => Uint8Array }} options
   */
  static async create(options) {
    const sid = utf8(options.roomID);
    if (sid.length < 1 || sid.length > 255 || sid.includes(0)) throw new V2Error("invalidRoomID");
    const party = await CPaceParty.create({
      initiator: options.role === "creator",
      prs: utf8(options.words.map((word) => word.toLowerCase()).join("-")),
      ci: LABEL,
      sid,
      scalar: options.random(32),
    });
    const staticKey = await KeyPair.fromPrivate(options.staticPrivate);
    return new V2Pairing(options.role, options.roomID, staticKey, party);
  }

  /**
   * @param {"creator" | "joiner"} role @param {string} roomID @param {KeyPair} staticKey @param {CPaceParty} party
   */
  constructor(role, roomID, staticKey, party) {
    this.role = role;
    this.roomID = roomID;
    this.staticKey = staticKey;
    this.party = party;
    /** @type {"ready" | "awaitingCPace" | "creatorAwaitingMessage2" | "joinerAwaitingMessage1" | "joinerAwaitingMessage3" | "awaitingConfirmation" | "established" | "failed"} */
    this.phase = "ready";
    /** @type {HandshakeState | null} */
    this.handshake = null;
    /** @type {KeyPair | null} */
    this.ratchetKey = null;
    /** @type {V2Session | null} */
    this.session = null;
  }

  /**
   * Our CPace frame.
   * @returns {Action[]}
   */
  start() {
    if (this.phase !== "ready") return [];
    this.phase = "awaitingCPace";
    return [{ type: "send", frame: concat(new Uint8Array([FRAME.cpace]), this.party.message) }];
  }

  /**
   * Takes one frame from the peer. A frame that does not belong to the current step is
   * refused with a thrown V2Error and changes nothing; a failing step fails the pairing.
   * @param {Uint8Array} frame @param {(count: number) => Uint8Array} random
   * @returns {Promise<Action[]>}
   */
  async receive(frame, random) {
    if (frame.length < 1 || !Object.values(FRAME).includes(frame[0])) throw new V2Error("malformedFrame");
    const type = frame[0];
    const body = frame.slice(1);
    if (this.phase === "failed") throw new V2Error("pairingFailed");
    if (this.phase === "ready" || this.phase === "established") throw new V2Error("unexpectedFrame");
    if (type === FRAME.abort) {
      if (body.length !== 1) throw new V2Error("malformedFrame");
      return this.fail(new V2Error("pairingFailed"), false);
    }
    if (this.phase === "awaitingCPace" && type === FRAME.cpace) {
      if (equal(body, this.party.message)) throw new V2Error("unexpectedFrame", "our own CPace message");
      let output;
      try {
        output = await this.party.receive(body);
      } catch (error) {
        return this.fail(new V2Error(/** @type {any} */ (error).code === "malformed" ? "malformedFrame" : "invalidPeerKey"));
      }
      return this.startHandshake(output, random);
    }
    if (type === FRAME.handshake && this.handshake) {
      const index = { creatorAwaitingMessage2: 1, joinerAwaitingMessage1: 0, joinerAwaitingMessage3: 2 }[
        /** @type {"creatorAwaitingMessage2" | "joinerAwaitingMessage1" | "joinerAwaitingMessage3"} */ (this.phase)];
      if (index !== undefined) {
        if (body.length !== HANDSHAKE_LENGTHS[index] && HANDSHAKE_LENGTHS.includes(body.length)) {
          throw new V2Error("unexpectedFrame", "handshake message of another step");
        }
        if (this.phase === "creatorAwaitingMessage2") return this.creatorReadMessage2(body, random);
        if (this.phase === "joinerAwaitingMessage1") return this.joinerReadMessage1(body, random);
        return this.joinerReadMessage3(body);
      }
    }
    if (this.phase === "awaitingConfirmation" && type === FRAME.ratchet && this.session) {
      const { kind, body: message } = await this.session.openKind(frame, random);
      this.phase = "established";
      /** @type {Action[]} */
      const actions = [{ type: "established", session: this.session }];
      if (kind === KIND.message) actions.push({ type: "received", message });
      return actions;
    }
    throw new V2Error("unexpectedFrame");
  }

  /**
   * @param {{ isk: Uint8Array, sidOutput: Uint8Array }} output @param {(count: number) => Uint8Array} random
   * @returns {Promise<Action[]>}
   */
  async startHandshake(output, random) {
    const room = utf8(this.roomID);
    const ephemeral = random(32);
    const psk = await hkdf(output.isk, room, utf8("inviso v2 psk"), 32);
    this.handshake = await HandshakeState.create({
      protocolName: NOISE,
      initiator: this.role === "creator",
      prologue: concat(LABEL, new Uint8Array([0]), room, new Uint8Array([0]), output.sidOutput),
      staticPrivate: this.staticKey.privateKey,
      ephemeralPrivate: ephemeral,
      psks: [psk],
    });
    if (this.role !== "creator") {
      this.phase = "joinerAwaitingMessage1";
      return [];
    }
    try {
      const message1 = await this.handshake.writeMessage(new Uint8Array(0));
      this.phase = "creatorAwaitingMessage2";
      return [{ type: "send", frame: concat(new Uint8Array([FRAME.handshake]), message1) }];
    } catch (error) {
      return this.fail(noiseError(error));
    }
  }

  /** @param {Uint8Array} message2 @param {(count: number) => Uint8Array} random @returns {Promise<Action[]>} */
  async creatorReadMessage2(message2, random) {
    const handshake = /** @type {HandshakeState} */ (this.handshake);
    let payload;
    let message3;
    try {
      payload = await handshake.readMessage(message2);
      message3 = await handshake.writeMessage(new Uint8Array(0));
    } catch (error) {
      return this.fail(noiseError(error));
    }
    let theirRatchetKey;
    try {
      theirRatchetKey = parsePublicKey(payload);
    } catch {
      return this.fail(new V2Error("invalidPeerKey"));
    }
    try {
      const seed = await this.seed(handshake);
      const state = await SessionState.initializeAlice({ ...seed, theirRatchetKey, random });
      this.session = new V2Session(this.role, state, seed.directPathKey);
    } catch {
      return this.fail(new V2Error("invalidPeerKey"));
    }
    this.phase = "awaitingConfirmation";
    return [{ type: "send", frame: concat(new Uint8Array([FRAME.handshake]), message3) }];
  }

  /** @param {Uint8Array} message1 @param {(count: number) => Uint8Array} random @returns {Promise<Action[]>} */
  async joinerReadMessage1(message1, random) {
    const handshake = /** @type {HandshakeState} */ (this.handshake);
    try {
      if ((await handshake.readMessage(message1)).length !== 0) return this.fail(new V2Error("malformedFrame"));
      this.ratchetKey = await KeyPair.fromPrivate(random(32));
      const message2 = await handshake.writeMessage(serializePublicKey(this.ratchetKey.publicKey));
      this.phase = "joinerAwaitingMessage3";
      return [{ type: "send", frame: concat(new Uint8Array([FRAME.handshake]), message2) }];
    } catch (error) {
      return this.fail(noiseError(error));
    }
  }

  /** @param {Uint8Array} message3 @returns {Promise<Action[]>} */
  async joinerReadMessage3(message3) {
    const handshake = /** @type {HandshakeState} */ (this.handshake);
    try {
      if ((await handshake.readMessage(message3)).length !== 0) return this.fail(new V2Error("malformedFrame"));
    } catch (error) {
      return this.fail(noiseError(error));
    }
    const seed = await this.seed(handshake);
    const state = SessionState.initializeBob({ ...seed, ourRatchetKey: /** @type {KeyPair} */ (this.ratchetKey) });
    const session = new V2Session(this.role, state, seed.directPathKey);
    const confirmation = await session.sealKind(KIND.confirmation, new Uint8Array(0));
    this.session = session;
    this.phase = "established";
    return [{ type: "send", frame: confirmation }, { type: "established", session }];
  }

  /**
   * The ratchet seed and direct-path key from a finished handshake.
   * @param {HandshakeState} handshake
   */
  async seed(handshake) {
    const [k1, k2] = handshake.split();
    if (!handshake.remoteStatic || !k1.key || !k2.key) throw new V2Error("invalidPeerKey");
    const ikm = concat(k1.key, k2.key);
    const h = handshake.handshakeHash;
    const seed = await hkdf(ikm, h, utf8("inviso v2 ratchet"), 64);
    return {
      ourIdentity: this.staticKey.publicKey,
      theirIdentity: handshake.remoteStatic,
      rootKey: seed.slice(0, 32),
      chainKey: seed.slice(32, 64),
      directPathKey: await hkdf(ikm, h, utf8("inviso v2 direct"), 32),
    };
  }

  /** @param {V2Error} error @param {boolean} [notifyPeer] @returns {Action[]} */
  fail(error, notifyPeer = true) {
    this.phase = "failed";
    /** @type {Action[]} */
    const actions = notifyPeer ? [{ type: "send", frame: new Uint8Array([FRAME.abort, 0x01]) }] : [];
    actions.push({ type: "failed", error });
    return actions;
  }
}

/** @param {unknown} error */
function noiseError(error) {
  const code = /** @type {any} */ (error).code;
  if (code === "invalidKey") return new V2Error("invalidPeerKey");
  if (code === "malformed") return new V2Error("malformedFrame");
  return new V2Error("authenticationFailed");
}

/** @param {Uint8Array} a @param {Uint8Array} b */
function equal(a, b) {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
