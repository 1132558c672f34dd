// Inviso v1, the shipped iOS app's encryption (docs/protocol.md, "v1"), with the same
// hardening as the Swift V1Channel: an all-zero shared secret is refused, a 1,024-message
// replay window (updated only after the tag verifies), our own frame reflected back is
// refused, and our nonces are role ‖ 0x000000 ‖ counter (the app accepts any nonce).
//
//   session key = HKDF-SHA256(X25519(ours, theirs), salt "", "inviso-session-v1", 32)
//   key(c)      = HKDF-SHA256(session key, salt "", "inviso-msg-v1" ‖ 0x01 ‖ u64be(c), 32)
//   frame       = {"v":1,"c":c,"n":b64(nonce),"d":b64(ciphertext),"t":b64(tag)}, AES-256-GCM

import { concat, constantTimeEqual, utf8 } from "../crypto/bytes.js";
import { x25519 } from "../crypto/x25519.js";

const subtle = globalThis.crypto.subtle;
const WINDOW = 1024;
const MAX_FRAME = 16 << 20;

/** A typed v1 failure (no key material in its message). */
export class V1Error extends Error {
  /** @param {string} code */
  constructor(code) {
    super(code);
    this.code = code;
  }
}

/**
 * @param {Uint8Array} ikm @param {Uint8Array} info
 * @returns {Promise<Uint8Array>}
 */
async function hkdf(ikm, info) {
  const key = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info }, key, 256));
}

/**
 * The session key from our private key and the peer's public key.
 * @param {Uint8Array} ourPrivate @param {Uint8Array} peerPublic
 */
export async function sessionKey(ourPrivate, peerPublic) {
  let shared;
  try {
    shared = await x25519(ourPrivate, peerPublic);
  } catch {
    throw new V1Error("allZeroSharedSecret");
  }
  return hkdf(shared, utf8("inviso-session-v1"));
}

/**
 * The key of message `counter` (either direction: the app uses one direction byte).
 * @param {Uint8Array} session @param {number} counter
 */
export async function messageKey(session, counter) {
  const info = new Uint8Array(14 + 8);
  info.set(utf8("inviso-msg-v1"));
  info[13] = 0x01;
  new DataView(info.buffer).setBigUint64(14, BigInt(counter));
  return hkdf(session, info);
}

/** @param {Uint8Array} bytes */
function base64(bytes) {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

/**
 * Canonical base64 of exactly `length` bytes (when given), else throws.
 * @param {unknown} text @param {number} [length]
 */
function unbase64(text, length) {
  if (typeof text !== "string") throw new V1Error("malformed");
  let bytes;
  try {
    bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    throw new V1Error("malformed");
  }
  if (base64(bytes) !== text || (length !== undefined && bytes.length !== length)) throw new V1Error("malformed");
  return bytes;
}

/** One v1 session: seals our messages, opens the peer's. */
export class V1Channel {
  /**
   * @param {Uint8Array} session the session key
   * @param {"creator" | "joiner"} role
   */
  constructor(session, role) {
    this.session = session;
    this.roleByte = role === "creator" ? 0x01 : 0x02;
    this.sendCounter = 0;
    /** The highest counter opened, and which of the 1,024 below it were. */
    this.highest = -1;
    /** @type {Set<number>} */
    this.seen = new Set();
  }

  /**
   * The channel's counters as plain data, for a kept chat (the session key is derived
   * again from the kept keys). Everything in it is kept sealed only.
   * @returns {{ sendCounter: number, highest: number, seen: number[] }}
   */
  counters() {
    return { sendCounter: this.sendCounter, highest: this.highest, seen: [...this.seen] };
  }

  /**
   * A channel with kept counters; throws on anything malformed (a damaged kept chat).
   * @param {Uint8Array} session @param {"creator" | "joiner"} role @param {any} counters
   */
  static restore(session, role, counters) {
    const channel = new V1Channel(session, role);
    const { sendCounter, highest, seen } = counters ?? {};
    if (!Number.isSafeInteger(sendCounter) || sendCounter < 0 || !Number.isSafeInteger(highest) || highest < -1
      || !Array.isArray(seen) || seen.length > WINDOW || !seen.every((c) => Number.isSafeInteger(c) && c >= 0 && c <= highest && c > highest - WINDOW)) {
      throw new V1Error("malformed");
    }
    channel.sendCounter = sendCounter;
    channel.highest = highest;
    channel.seen = new Set(seen);
    return channel;
  }

  /** @param {number} counter */
  nonce(counter) {
    const nonce = new Uint8Array(12);
    nonce[0] = this.roleByte;
    new DataView(nonce.buffer).setBigUint64(4, BigInt(counter));
    return nonce;
  }

  /**
   * Seals the next message; returns the frame's JSON text.
   * @param {Uint8Array} plaintext
   */
  async seal(plaintext) {
    const counter = this.sendCounter++;
    const key = await subtle.importKey("raw", await messageKey(this.session, counter), "AES-GCM", false, ["encrypt"]);
    const nonce = this.nonce(counter);
    const sealed = new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv: nonce }, key, plaintext));
    return JSON.stringify({
      v: 1, c: counter, n: base64(nonce), d: base64(sealed.subarray(0, sealed.length - 16)), t: base64(sealed.subarray(sealed.length - 16)),
    });
  }

  /**
   * Opens a frame from the peer; nothing changes on a throw.
   * @param {string} text
   * @returns {Promise<{ counter: number, plaintext: Uint8Array }>}
   */
  async open(text) {
    if (text.length > MAX_FRAME) throw new V1Error("tooLarge");
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      throw new V1Error("malformed");
    }
    if (typeof frame !== "object" || frame === null || frame.v !== 1) throw new V1Error("malformed");
    const counter = frame.c;
    if (!Number.isSafeInteger(counter) || counter < 0) throw new V1Error("malformed");
    const nonce = unbase64(frame.n, 12);
    const ciphertext = unbase64(frame.d);
    const tag = unbase64(frame.t, 16);
    if (constantTimeEqual(nonce, this.nonce(counter))) throw new V1Error("reflected");
    if (counter <= this.highest - WINDOW || this.seen.has(counter)) throw new V1Error("replayed");
    const key = await subtle.importKey("raw", await messageKey(this.session, counter), "AES-GCM", false, ["decrypt"]);
    let plaintext;
    try {
      plaintext = new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: nonce }, key, concat(ciphertext, tag)));
    } catch {
      throw new V1Error("authenticationFailed");
    }
    // Authentic: remember it (the window forgets what falls 1,024 behind).
    if (this.seen.has(counter)) throw new V1Error("replayed");
    this.seen.add(counter);
    if (counter > this.highest) {
      this.highest = counter;
      for (const old of this.seen) if (old <= this.highest - WINDOW) this.seen.delete(old);
    }
    return { counter, plaintext };
  }
}
