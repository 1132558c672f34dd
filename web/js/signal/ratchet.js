// The Double Ratchet as libsignal runs it (message version 3), the way Inviso v2 seeds it
// from the Noise handshake (docs/protocol.md, "Derivations"; InvisoSignal's
// SessionState+Ratchet, RatchetKeys, MessageCrypto and SignalMessage are the reference):
//
//   chain step      message key seed = HMAC(CK, 0x01), next CK = HMAC(CK, 0x02)
//   message keys    HKDF-SHA256(seed, salt = none, info "WhisperMessageKeys", 80)
//                   = cipher key 32 ‖ MAC key 32 ‖ IV 16
//   DH ratchet      HKDF-SHA256(DH(ours, theirs), salt = RK, info "WhisperRatchet", 64)
//                   = RK' 32 ‖ CK 32
//   body            AES-256-CBC, PKCS #7 padding
//   SignalMessage   0x34 ‖ protobuf {1: ratchet key (0x05 ‖ u), 2: counter, 3: previous
//                   counter, 4: ciphertext} ‖ MAC = HMAC(MAC key, sender identity (33) ‖
//                   receiver identity (33) ‖ version ‖ protobuf)[0..<8]
//
// Decryption is transactional: everything that can fail happens before the state changes.

import { concat, constantTimeEqual } from "../crypto/bytes.js";
import { x25519, x25519Public } from "../crypto/x25519.js";

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();
const ROOT_INFO = encoder.encode("WhisperRatchet");
const MESSAGE_KEYS_INFO = encoder.encode("WhisperMessageKeys");

/** libsignal's limits. */
export const MAX_FORWARD_JUMPS = 25000;
export const MAX_MESSAGE_KEYS = 2000;
export const MAX_RECEIVER_CHAINS = 5;
/** The message version of seeded sessions (libsignal's X3DH version). */
export const SESSION_VERSION = 3;
const MAC_BYTES = 8;

/** A typed ratchet failure (no key material in its message). */
export class RatchetError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// MARK: - Keys

/**
 * A public key as libsignal serialises it: 0x05 ‖ u.
 * @param {Uint8Array} u
 */
export function serializePublicKey(u) {
  return concat(new Uint8Array([0x05]), u);
}

/**
 * The u of a serialised public key.
 * @param {Uint8Array} serialized
 * @returns {Uint8Array}
 */
export function parsePublicKey(serialized) {
  if (serialized.length !== 33 || serialized[0] !== 0x05) throw new RatchetError("invalidKey", "not a Curve25519 public key");
  return serialized.slice(1);
}

/**
 * @param {Uint8Array} key @param {Uint8Array} data
 * @returns {Promise<Uint8Array>}
 */
async function hmac(key, data) {
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, data));
}

/**
 * HKDF-SHA256 (RFC 5869).
 * @param {Uint8Array} ikm @param {Uint8Array} salt @param {Uint8Array} info @param {number} length
 * @returns {Promise<Uint8Array>}
 */
export async function hkdf(ikm, salt, info, length) {
  const key = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, length * 8));
}

/** A key pair: 32 private bytes and the public u. */
export class KeyPair {
  /** @param {Uint8Array} privateKey @param {Uint8Array} publicKey */
  constructor(privateKey, publicKey) {
    this.privateKey = privateKey;
    this.publicKey = publicKey;
  }

  /** @param {Uint8Array} privateKey @returns {Promise<KeyPair>} */
  static async fromPrivate(privateKey) {
    return new KeyPair(privateKey, await x25519Public(privateKey));
  }
}

/**
 * A chain step: the message keys of `chainKey` at `index`, and the next chain key.
 * @param {Uint8Array} chainKey
 * @returns {Promise<{ seed: Uint8Array, next: Uint8Array }>}
 */
export async function chainStep(chainKey) {
  const [seed, next] = await Promise.all([hmac(chainKey, new Uint8Array([1])), hmac(chainKey, new Uint8Array([2]))]);
  return { seed, next };
}

/**
 * The message keys from a seed.
 * @param {Uint8Array} seed
 * @returns {Promise<{ cipherKey: Uint8Array, macKey: Uint8Array, iv: Uint8Array }>}
 */
export async function messageKeys(seed) {
  const material = await hkdf(seed, new Uint8Array(0), MESSAGE_KEYS_INFO, 80);
  return { cipherKey: material.slice(0, 32), macKey: material.slice(32, 64), iv: material.slice(64, 80) };
}

/**
 * One DH ratchet step: a new root key and chain key.
 * @param {Uint8Array} rootKey @param {Uint8Array} theirRatchetKey u @param {KeyPair} ours
 * @returns {Promise<{ rootKey: Uint8Array, chainKey: Uint8Array }>}
 */
export async function createChain(rootKey, theirRatchetKey, ours) {
  let shared;
  try {
    shared = await x25519(ours.privateKey, theirRatchetKey);
  } catch {
    throw new RatchetError("invalidKey", "the ratchet key agreement failed");
  }
  const derived = await hkdf(shared, rootKey, ROOT_INFO, 64);
  return { rootKey: derived.slice(0, 32), chainKey: derived.slice(32, 64) };
}

// MARK: - Protobuf and SignalMessage

/** @param {number[]} out @param {number} value */
function writeVarint(out, value) {
  let v = value >>> 0;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

/**
 * The SignalMessage (version 3) without its MAC.
 * @param {Uint8Array} ratchetKey u @param {number} counter @param {number} previousCounter @param {Uint8Array} ciphertext
 */
function encodeBody(ratchetKey, counter, previousCounter, ciphertext) {
  /** @type {number[]} */
  const out = [(SESSION_VERSION << 4) | 4];
  out.push(0x0a);
  writeVarint(out, 33);
  out.push(...serializePublicKey(ratchetKey));
  out.push(0x10);
  writeVarint(out, counter);
  out.push(0x18);
  writeVarint(out, previousCounter);
  out.push(0x22);
  writeVarint(out, ciphertext.length);
  return concat(new Uint8Array(out), ciphertext);
}

/**
 * Reads a SignalMessage (version 3 only): the fields, the body the MAC covers, the MAC.
 * Unknown fields are skipped; a missing required field, a truncated varint or length,
 * another version or a bad key is an error.
 * @param {Uint8Array} bytes
 */
export function parseSignalMessage(bytes) {
  if (bytes.length < 1 + MAC_BYTES) throw new RatchetError("invalidMessage", "SignalMessage too short");
  if (bytes[0] >> 4 !== SESSION_VERSION) throw new RatchetError("invalidMessage", "not a version 3 SignalMessage");
  const body = bytes.subarray(0, bytes.length - MAC_BYTES);
  /** @type {Uint8Array | undefined} */
  let ratchetKey;
  /** @type {number | undefined} */
  let counter;
  let previousCounter = 0;
  /** @type {Uint8Array | undefined} */
  let ciphertext;
  let offset = 1;
  const varint = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (offset >= body.length || shift > 63) throw new RatchetError("invalidMessage", "truncated varint");
      const byte = body[offset++];
      if (shift < 32) value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(byte & 0x80)) return value;
    }
  };
  while (offset < body.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 0) {
      const value = varint();
      if (value > 0xffffffff) throw new RatchetError("invalidMessage", "counter out of range");
      if (field === 2) counter = value;
      else if (field === 3) previousCounter = value;
    } else if (wireType === 2) {
      const length = varint();
      if (offset + length > body.length) throw new RatchetError("invalidMessage", "truncated field");
      const value = body.slice(offset, offset + length);
      offset += length;
      if (field === 1) ratchetKey = parsePublicKey(value);
      else if (field === 4) ciphertext = value;
    } else if (wireType === 5) {
      offset += 4;
    } else if (wireType === 1) {
      offset += 8;
    } else {
      throw new RatchetError("invalidMessage", "unknown wire type");
    }
    if (offset > body.length) throw new RatchetError("invalidMessage", "truncated field");
  }
  if (!ratchetKey || counter === undefined || !ciphertext) throw new RatchetError("invalidMessage", "missing field");
  return { ratchetKey, counter, previousCounter, ciphertext, body, mac: bytes.subarray(bytes.length - MAC_BYTES) };
}

/**
 * The 8-byte MAC of a message body.
 * @param {Uint8Array} macKey @param {Uint8Array} senderIdentity u @param {Uint8Array} receiverIdentity u @param {Uint8Array} body
 */
async function mac(macKey, senderIdentity, receiverIdentity, body) {
  const full = await hmac(macKey, concat(serializePublicKey(senderIdentity), serializePublicKey(receiverIdentity), body));
  return full.slice(0, MAC_BYTES);
}

// MARK: - Session state

/**
 * @typedef {{ ratchetKey: Uint8Array, chainKey: Uint8Array, index: number, skipped: { index: number, seed: Uint8Array }[] }} ReceiverChain
 */

/** A session's ratchet state (one side). */
export class SessionState {
  /**
   * @param {{ localIdentity: Uint8Array, remoteIdentity: Uint8Array, rootKey: Uint8Array,
   *   sender: { keyPair: KeyPair, chainKey: Uint8Array, index: number },
   *   receivers: ReceiverChain[], previousCounter: number }} fields
   */
  constructor(fields) {
    this.localIdentity = fields.localIdentity;
    this.remoteIdentity = fields.remoteIdentity;
    this.rootKey = fields.rootKey;
    this.sender = fields.sender;
    this.receivers = fields.receivers;
    this.previousCounter = fields.previousCounter;
  }

  /**
   * Alice (Inviso's creator) seeded from an external secret: the peer's first ratchet
   * key is the receiving chain's, one DH step with a fresh key gives the sending chain.
   * @param {{ ourIdentity: Uint8Array, theirIdentity: Uint8Array, rootKey: Uint8Array, chainKey: Uint8Array,
   *   theirRatchetKey: Uint8Array, random: (count: number) => Uint8Array }} parameters
   */
  static async initializeAlice(parameters) {
    const sending = await KeyPair.fromPrivate(parameters.random(32));
    const { rootKey, chainKey } = await createChain(parameters.rootKey, parameters.theirRatchetKey, sending);
    return new SessionState({
      localIdentity: parameters.ourIdentity,
      remoteIdentity: parameters.theirIdentity,
      rootKey,
      sender: { keyPair: sending, chainKey, index: 0 },
      receivers: [{ ratchetKey: parameters.theirRatchetKey, chainKey: parameters.chainKey, index: 0, skipped: [] }],
      previousCounter: 0,
    });
  }

  /**
   * Bob (Inviso's joiner): its first ratchet key pair sends on the seeded chain.
   * @param {{ ourIdentity: Uint8Array, theirIdentity: Uint8Array, rootKey: Uint8Array, chainKey: Uint8Array,
   *   ourRatchetKey: KeyPair }} parameters
   */
  static initializeBob(parameters) {
    return new SessionState({
      localIdentity: parameters.ourIdentity,
      remoteIdentity: parameters.theirIdentity,
      rootKey: parameters.rootKey,
      sender: { keyPair: parameters.ourRatchetKey, chainKey: parameters.chainKey, index: 0 },
      receivers: [],
      previousCounter: 0,
    });
  }

  /**
   * Encrypts one message with the sending chain and advances it; returns the serialised
   * SignalMessage.
   * @param {Uint8Array} plaintext
   * @returns {Promise<Uint8Array>}
   */
  async encrypt(plaintext) {
    const { seed, next } = await chainStep(this.sender.chainKey);
    const keys = await messageKeys(seed);
    const cipherKey = await subtle.importKey("raw", keys.cipherKey, "AES-CBC", false, ["encrypt"]);
    const ciphertext = new Uint8Array(await subtle.encrypt({ name: "AES-CBC", iv: keys.iv }, cipherKey, plaintext));
    const body = encodeBody(this.sender.keyPair.publicKey, this.sender.index, this.previousCounter, ciphertext);
    const tag = await mac(keys.macKey, this.localIdentity, this.remoteIdentity, body);
    this.sender = { keyPair: this.sender.keyPair, chainKey: next, index: this.sender.index + 1 };
    return concat(body, tag);
  }

  /**
   * Decrypts a serialised SignalMessage, advancing the state only when it is authentic.
   * @param {Uint8Array} serialized
   * @param {(count: number) => Uint8Array} random where a new ratchet key comes from
   * @returns {Promise<Uint8Array>}
   */
  async decrypt(serialized, random) {
    const message = parseSignalMessage(serialized);
    const position = this.receivers.findIndex((chain) => constantTimeEqual(chain.ratchetKey, message.ratchetKey));
    if (position >= 0) {
      const chain = this.receivers[position];
      const { keys, apply } = await receivingKeys(chain, message.counter);
      const plaintext = await this.open(message, keys);
      this.receivers[position] = apply(chain);
      return plaintext;
    }
    // A new ratchet key from the peer: a DH step for the receiving chain, and once the
    // message proves authentic, one for a new sending chain.
    const receiving = await createChain(this.rootKey, message.ratchetKey, this.sender.keyPair);
    /** @type {ReceiverChain} */
    const chain = { ratchetKey: message.ratchetKey, chainKey: receiving.chainKey, index: 0, skipped: [] };
    const { keys, apply } = await receivingKeys(chain, message.counter);
    const plaintext = await this.open(message, keys);
    const ourNew = await KeyPair.fromPrivate(random(32));
    const sending = await createChain(receiving.rootKey, message.ratchetKey, ourNew);
    this.rootKey = sending.rootKey;
    // Appended; beyond libsignal's five the oldest goes.
    this.receivers.push(apply(chain));
    if (this.receivers.length > MAX_RECEIVER_CHAINS) this.receivers.splice(0, this.receivers.length - MAX_RECEIVER_CHAINS);
    this.previousCounter = this.sender.index > 0 ? this.sender.index - 1 : 0;
    this.sender = { keyPair: ourNew, chainKey: sending.chainKey, index: 0 };
    return plaintext;
  }

  /**
   * Checks the MAC (constant time), then decrypts.
   * @param {ReturnType<typeof parseSignalMessage>} message
   * @param {{ cipherKey: Uint8Array, macKey: Uint8Array, iv: Uint8Array }} keys
   */
  async open(message, keys) {
    const expected = await mac(keys.macKey, this.remoteIdentity, this.localIdentity, message.body);
    if (!constantTimeEqual(expected, message.mac)) throw new RatchetError("authenticationFailed", "a message did not authenticate");
    if (message.ciphertext.length === 0 || message.ciphertext.length % 16 !== 0) {
      throw new RatchetError("authenticationFailed", "a message did not authenticate");
    }
    try {
      const cipherKey = await subtle.importKey("raw", keys.cipherKey, "AES-CBC", false, ["decrypt"]);
      return new Uint8Array(await subtle.decrypt({ name: "AES-CBC", iv: keys.iv }, cipherKey, message.ciphertext));
    } catch {
      throw new RatchetError("authenticationFailed", "a message did not authenticate");
    }
  }
}

/**
 * The message keys for `counter` on `chain` — a stored skipped key for an old counter, or
 * the chain advanced for a new one — and how to update the chain once the message proved
 * authentic. Changes nothing itself.
 * @param {ReceiverChain} chain @param {number} counter
 * @returns {Promise<{ keys: { cipherKey: Uint8Array, macKey: Uint8Array, iv: Uint8Array }, apply: (chain: ReceiverChain) => ReceiverChain }>}
 */
async function receivingKeys(chain, counter) {
  if (chain.index > counter) {
    const stored = chain.skipped.findIndex((entry) => entry.index === counter);
    if (stored < 0) throw new RatchetError("duplicateMessage", "a message was received before");
    const keys = await messageKeys(chain.skipped[stored].seed);
    return {
      keys,
      apply: (current) => ({ ...current, skipped: current.skipped.filter((_, index) => index !== stored) }),
    };
  }
  if (counter - chain.index > MAX_FORWARD_JUMPS) throw new RatchetError("tooFarIntoFuture", "a message is too far ahead");
  let chainKey = chain.chainKey;
  let index = chain.index;
  /** @type {{ index: number, seed: Uint8Array }[]} */
  const skipped = [];
  const firstStored = counter > MAX_MESSAGE_KEYS ? counter - MAX_MESSAGE_KEYS : 0;
  while (index < counter) {
    const step = await chainStep(chainKey);
    if (index >= firstStored) skipped.push({ index, seed: step.seed });
    chainKey = step.next;
    index += 1;
  }
  const step = await chainStep(chainKey);
  const keys = await messageKeys(step.seed);
  return {
    keys,
    apply: (current) => {
      const kept = [...current.skipped, ...skipped];
      return {
        ratchetKey: current.ratchetKey,
        chainKey: step.next,
        index: counter + 1,
        skipped: kept.length > MAX_MESSAGE_KEYS ? kept.slice(kept.length - MAX_MESSAGE_KEYS) : kept,
      };
    },
  };
}
