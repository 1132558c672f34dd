// The Noise Protocol Framework (revision 34) for the page: HandshakeState, SymmetricState
// and CipherState over X25519 (WebCrypto), ChaCha20-Poly1305 (ours) or AES-256-GCM
// (WebCrypto), and SHA-256 or SHA-512 (WebCrypto). The pairing uses
// `Noise_XXpsk3_25519_ChaChaPoly_SHA256` (docs/protocol.md); the other names are here so
// that the public test vectors (../shared/vectors/noise) check the same code.

import * as chachapoly from "./chacha20poly1305.js";
import { concat, utf8 } from "./bytes.js";
import { x25519, x25519Public } from "./x25519.js";

const subtle = globalThis.crypto.subtle;

/** The base patterns (§7.4–7.6), in the specification's arrow notation. */
const CATALOGUE = /** @type {Record<string, string>} */ ({
  N: "<- s\n...\n-> e, es",
  K: "-> s\n<- s\n...\n-> e, es, ss",
  X: "<- s\n...\n-> e, es, s, ss",
  NN: "-> e\n<- e, ee",
  NK: "<- s\n...\n-> e, es\n<- e, ee",
  NX: "-> e\n<- e, ee, s, es",
  XN: "-> e\n<- e, ee\n-> s, se",
  XK: "<- s\n...\n-> e, es\n<- e, ee\n-> s, se",
  XX: "-> e\n<- e, ee, s, es\n-> s, se",
  KN: "-> s\n...\n-> e\n<- e, ee, se",
  KK: "-> s\n<- s\n...\n-> e, es, ss\n<- e, ee, se",
  KX: "-> s\n...\n-> e\n<- e, ee, se, s, es",
  IN: "-> e, s\n<- e, ee, se",
  IK: "<- s\n...\n-> e, es, s, ss\n<- e, ee, se",
  IX: "-> e, s\n<- e, ee, se, s, es",
  NK1: "<- s\n...\n-> e\n<- e, ee, es",
  NX1: "-> e\n<- e, ee, s\n-> es",
  X1N: "-> e\n<- e, ee\n-> s\n<- se",
  X1K: "<- s\n...\n-> e, es\n<- e, ee\n-> s\n<- se",
  XK1: "<- s\n...\n-> e\n<- e, ee, es\n-> s, se",
  X1K1: "<- s\n...\n-> e\n<- e, ee, es\n-> s\n<- se",
  X1X: "-> e\n<- e, ee, s, es\n-> s\n<- se",
  XX1: "-> e\n<- e, ee, s\n-> es, s, se",
  X1X1: "-> e\n<- e, ee, s\n-> es, s\n<- se",
  K1N: "-> s\n...\n-> e\n<- e, ee\n-> se",
  K1K: "-> s\n<- s\n...\n-> e, es\n<- e, ee\n-> se",
  KK1: "-> s\n<- s\n...\n-> e\n<- e, ee, se, es",
  K1K1: "-> s\n<- s\n...\n-> e\n<- e, ee, es\n-> se",
  K1X: "-> s\n...\n-> e\n<- e, ee, s, es\n-> se",
  KX1: "-> s\n...\n-> e\n<- e, ee, se, s\n-> es",
  K1X1: "-> s\n...\n-> e\n<- e, ee, s\n-> se, es",
  I1N: "-> e, s\n<- e, ee\n-> se",
  I1K: "<- s\n...\n-> e, es, s\n<- e, ee\n-> se",
  IK1: "<- s\n...\n-> e, s\n<- e, ee, se, es",
  I1K1: "<- s\n...\n-> e, s\n<- e, ee, es\n-> se",
  I1X: "-> e, s\n<- e, ee, s, es\n-> se",
  IX1: "-> e, s\n<- e, ee, se, s\n-> es",
  I1X1: "-> e, s\n<- e, ee, s\n-> se, es",
});

/**
 * @typedef {{ initiatorPre: string[], responderPre: string[], messages: string[][] }} Pattern
 */

/**
 * A pattern with its `pskN` modifiers applied (`XXpsk3`, `NNpsk0+psk2`), or null.
 * @param {string} name
 * @returns {Pattern | null}
 */
export function pattern(name) {
  const match = /^([A-Z0-9]+?)((?:psk\d)(?:\+psk\d)*)?$/.exec(name);
  if (!match || !(match[1] in CATALOGUE)) return null;
  const lines = CATALOGUE[match[1]].split("\n").map((line) => line.replace(/\s/g, ""));
  const split = lines.indexOf("...");
  /** @type {Pattern} */
  const result = { initiatorPre: [], responderPre: [], messages: [] };
  lines.forEach((line, index) => {
    if (line === "...") return;
    const tokens = line.slice(2).split(",");
    if (index < split) {
      if (line.startsWith("->")) result.initiatorPre = tokens;
      else result.responderPre = tokens;
    } else {
      result.messages.push(tokens);
    }
  });
  for (const modifier of match[2] ? match[2].split("+") : []) {
    const position = Number(modifier.slice(3));
    if (position === 0) result.messages[0].unshift("psk");
    else if (position <= result.messages.length) result.messages[position - 1].push("psk");
    else return null;
  }
  return result;
}

/**
 * A protocol name's parts, or null for one this module does not run (448, BLAKE2).
 * @param {string} name e.g. "Noise_XXpsk3_25519_ChaChaPoly_SHA256"
 * @returns {{ pattern: Pattern, cipher: string, hash: string } | null}
 */
export function parseProtocol(name) {
  const parts = name.split("_");
  if (parts.length !== 5 || parts[0] !== "Noise") return null;
  const [, patternName, dh, cipher, hash] = parts;
  const parsed = pattern(patternName);
  if (!parsed || dh !== "25519" || !["ChaChaPoly", "AESGCM"].includes(cipher) || !["SHA256", "SHA512"].includes(hash)) {
    return null;
  }
  return { pattern: parsed, cipher, hash };
}

/** A typed Noise failure; its message never holds key material. */
export class NoiseError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// MARK: - Primitives

/** @param {string} hash @returns {string} the WebCrypto name */
function webCryptoHash(hash) {
  return hash === "SHA256" ? "SHA-256" : "SHA-512";
}

/** @param {string} hash @param {Uint8Array} data @returns {Promise<Uint8Array>} */
async function digest(hash, data) {
  return new Uint8Array(await subtle.digest(webCryptoHash(hash), data));
}

/** @param {string} hash @param {Uint8Array} key @param {Uint8Array} data @returns {Promise<Uint8Array>} */
async function hmac(hash, key, data) {
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: webCryptoHash(hash) }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, data));
}

/**
 * HKDF as Noise defines it (§4.3): two or three outputs of HASHLEN bytes.
 * @param {string} hash @param {Uint8Array} chainingKey @param {Uint8Array} input @param {number} count
 * @returns {Promise<Uint8Array[]>}
 */
async function hkdf(hash, chainingKey, input, count) {
  const tempKey = await hmac(hash, chainingKey, input);
  const first = await hmac(hash, tempKey, new Uint8Array([1]));
  const second = await hmac(hash, tempKey, concat(first, new Uint8Array([2])));
  if (count === 2) return [first, second];
  const third = await hmac(hash, tempKey, concat(second, new Uint8Array([3])));
  return [first, second, third];
}

/**
 * The 12-byte nonce (§12): 4 zero bytes, then n little-endian for ChaChaPoly, big-endian
 * for AESGCM.
 * @param {string} cipher @param {bigint} n
 */
function nonceBytes(cipher, n) {
  const out = new Uint8Array(12);
  new DataView(out.buffer).setBigUint64(4, n, cipher === "ChaChaPoly");
  return out;
}

/**
 * @param {string} cipher @param {Uint8Array} key @param {bigint} n
 * @param {Uint8Array} ad @param {Uint8Array} plaintext @returns {Promise<Uint8Array>}
 */
async function encrypt(cipher, key, n, ad, plaintext) {
  const nonce = nonceBytes(cipher, n);
  if (cipher === "ChaChaPoly") return chachapoly.seal(key, nonce, plaintext, ad);
  const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  return new Uint8Array(await subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: ad }, imported, plaintext));
}

/**
 * @param {string} cipher @param {Uint8Array} key @param {bigint} n
 * @param {Uint8Array} ad @param {Uint8Array} ciphertext @returns {Promise<Uint8Array>}
 * @throws {NoiseError} when it does not authenticate
 */
async function decrypt(cipher, key, n, ad, ciphertext) {
  const nonce = nonceBytes(cipher, n);
  try {
    if (cipher === "ChaChaPoly") return chachapoly.open(key, nonce, ciphertext, ad);
    const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
    return new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: nonce, additionalData: ad }, imported, ciphertext));
  } catch {
    throw new NoiseError("decryptFailed", "a Noise message did not authenticate");
  }
}

// MARK: - States

/** A CipherState (§5.1). */
export class CipherState {
  /** @param {string} cipher @param {Uint8Array | null} key */
  constructor(cipher, key = null) {
    this.cipher = cipher;
    /** @type {Uint8Array | null} */
    this.key = key;
    this.n = 0n;
  }

  get hasKey() {
    return this.key !== null;
  }

  /** @param {Uint8Array} ad @param {Uint8Array} plaintext */
  async encryptWithAd(ad, plaintext) {
    if (this.key === null) return plaintext;
    if (this.n === 0xffffffffffffffffn) throw new NoiseError("nonceExhausted", "the nonce is exhausted");
    const out = await encrypt(this.cipher, this.key, this.n, ad, plaintext);
    this.n += 1n;
    return out;
  }

  /** @param {Uint8Array} ad @param {Uint8Array} ciphertext */
  async decryptWithAd(ad, ciphertext) {
    if (this.key === null) return ciphertext;
    if (this.n === 0xffffffffffffffffn) throw new NoiseError("nonceExhausted", "the nonce is exhausted");
    const out = await decrypt(this.cipher, this.key, this.n, ad, ciphertext);
    this.n += 1n;
    return out;
  }
}

/** A SymmetricState (§5.2). */
class SymmetricState {
  /** @param {string} protocolName @param {string} cipher @param {string} hash */
  constructor(protocolName, cipher, hash) {
    this.cipher = cipher;
    this.hash = hash;
    this.hashLength = hash === "SHA256" ? 32 : 64;
    this.protocolName = utf8(protocolName);
    this.cipherState = new CipherState(cipher);
    this.h = new Uint8Array(0);
    this.ck = new Uint8Array(0);
  }

  async initialize() {
    if (this.protocolName.length <= this.hashLength) {
      this.h = new Uint8Array(this.hashLength);
      this.h.set(this.protocolName);
    } else {
      this.h = await digest(this.hash, this.protocolName);
    }
    this.ck = this.h;
  }

  /** @param {Uint8Array} inputKeyMaterial */
  async mixKey(inputKeyMaterial) {
    const [ck, tempK] = await hkdf(this.hash, this.ck, inputKeyMaterial, 2);
    this.ck = ck;
    this.cipherState = new CipherState(this.cipher, tempK.slice(0, 32));
  }

  /** @param {Uint8Array} data */
  async mixHash(data) {
    this.h = await digest(this.hash, concat(this.h, data));
  }

  /** @param {Uint8Array} inputKeyMaterial */
  async mixKeyAndHash(inputKeyMaterial) {
    const [ck, tempH, tempK] = await hkdf(this.hash, this.ck, inputKeyMaterial, 3);
    this.ck = ck;
    await this.mixHash(tempH);
    this.cipherState = new CipherState(this.cipher, tempK.slice(0, 32));
  }

  /** @param {Uint8Array} plaintext */
  async encryptAndHash(plaintext) {
    const ciphertext = await this.cipherState.encryptWithAd(this.h, plaintext);
    await this.mixHash(ciphertext);
    return ciphertext;
  }

  /** @param {Uint8Array} ciphertext */
  async decryptAndHash(ciphertext) {
    const plaintext = await this.cipherState.decryptWithAd(this.h, ciphertext);
    await this.mixHash(ciphertext);
    return plaintext;
  }

  /** @returns {Promise<[CipherState, CipherState]>} */
  async split() {
    const [first, second] = await hkdf(this.hash, this.ck, new Uint8Array(0), 2);
    return [new CipherState(this.cipher, first.slice(0, 32)), new CipherState(this.cipher, second.slice(0, 32))];
  }
}

/**
 * @typedef {object} HandshakeOptions
 * @property {string} protocolName
 * @property {boolean} initiator
 * @property {Uint8Array} [prologue]
 * @property {Uint8Array} [staticPrivate] 32 bytes
 * @property {Uint8Array} [ephemeralPrivate] 32 bytes (tests; otherwise fresh)
 * @property {Uint8Array} [remoteStatic] the peer's public static key, for a pre-message
 * @property {Uint8Array[]} [psks] in the order the pattern's psk tokens appear
 */

/** A HandshakeState (§5.3). Build it with {@link HandshakeState.create}. */
export class HandshakeState {
  /**
   * @param {HandshakeOptions} options
   * @returns {Promise<HandshakeState>}
   */
  static async create(options) {
    const parsed = parseProtocol(options.protocolName);
    if (!parsed) throw new NoiseError("unsupported", `unsupported Noise protocol ${options.protocolName}`);
    const state = new HandshakeState(options, parsed);
    await state.symmetric.initialize();
    await state.symmetric.mixHash(options.prologue ?? new Uint8Array(0));
    if (state.staticPrivate) state.staticPublic = await x25519Public(state.staticPrivate);
    // Pre-messages: the initiator's first, then the responder's (§5.3).
    /** @type {[string[], boolean][]} */
    const preMessages = [
      [parsed.pattern.initiatorPre, options.initiator],
      [parsed.pattern.responderPre, !options.initiator],
    ];
    for (const [tokens, ours] of preMessages) {
      for (const token of tokens) {
        if (token !== "s") throw new NoiseError("unsupported", "pre-message ephemeral keys are not supported");
        const key = ours ? state.staticPublic : state.remoteStatic;
        if (!key) throw new NoiseError("missingKey", "a pre-message needs a static key");
        await state.symmetric.mixHash(key);
      }
    }
    return state;
  }

  /**
   * @param {HandshakeOptions} options
   * @param {{ pattern: Pattern, cipher: string, hash: string }} parsed
   */
  constructor(options, parsed) {
    this.initiator = options.initiator;
    this.pattern = parsed.pattern;
    this.symmetric = new SymmetricState(options.protocolName, parsed.cipher, parsed.hash);
    this.staticPrivate = options.staticPrivate ?? null;
    /** @type {Uint8Array | null} */
    this.staticPublic = null;
    /** @type {Uint8Array | null} */
    this.fixedEphemeral = options.ephemeralPrivate ?? null;
    /** @type {Uint8Array | null} */
    this.ephemeralPrivate = null;
    /** @type {Uint8Array | null} */
    this.ephemeralPublic = null;
    this.remoteStatic = options.remoteStatic ?? null;
    /** @type {Uint8Array | null} */
    this.remoteEphemeral = null;
    this.psks = [...(options.psks ?? [])];
    this.isPSK = this.pattern.messages.some((tokens) => tokens.includes("psk"));
    this.messageIndex = 0;
    /** @type {[CipherState, CipherState] | null} */
    this.result = null;
  }

  /** Whether it is our turn to write. */
  get isMyTurn() {
    return (this.messageIndex % 2 === 0) === this.initiator;
  }

  get isComplete() {
    return this.result !== null;
  }

  /** The handshake hash (after the last message: the channel binding). */
  get handshakeHash() {
    return this.symmetric.h;
  }

  /** @param {Uint8Array} ours @param {Uint8Array} theirs */
  async dh(ours, theirs) {
    try {
      return await x25519(ours, theirs);
    } catch {
      throw new NoiseError("invalidKey", "a Diffie-Hellman output was zero or a key was invalid");
    }
  }

  /**
   * The two DH keys of a token, from our side: "es" is the initiator's e with the
   * responder's s, so the responder uses its s with the initiator's e.
   * @param {string} token
   * @returns {[Uint8Array, Uint8Array]}
   */
  keysFor(token) {
    const letters = /** @type {[string, string]} */ ([token[0], token[1]]);
    const [mine, theirs] = this.initiator ? letters : [letters[1], letters[0]];
    const myKey = mine === "e" ? this.ephemeralPrivate : this.staticPrivate;
    const theirKey = theirs === "e" ? this.remoteEphemeral : this.remoteStatic;
    if (!myKey || !theirKey) throw new NoiseError("missingKey", `a key for ${token} is missing`);
    return [myKey, theirKey];
  }

  /**
   * A token that writes nothing and reads nothing: `psk` (the next pre-shared key) or a
   * DH (`ee`, `es`, `se`, `ss`).
   * @param {string} token
   */
  async mixToken(token) {
    if (token === "psk") {
      const psk = this.psks.shift();
      if (!psk || psk.length !== 32) throw new NoiseError("missingKey", "no 32-byte psk");
      await this.symmetric.mixKeyAndHash(psk);
    } else {
      const [mine, theirs] = this.keysFor(token);
      await this.symmetric.mixKey(await this.dh(mine, theirs));
    }
  }

  /**
   * Writes the next handshake message with `payload`.
   * @param {Uint8Array} payload
   * @returns {Promise<Uint8Array>}
   */
  async writeMessage(payload) {
    if (this.isComplete || !this.isMyTurn) throw new NoiseError("wrongTurn", "not our turn to write");
    const parts = [];
    for (const token of this.pattern.messages[this.messageIndex]) {
      if (token === "e") {
        this.ephemeralPrivate = this.fixedEphemeral ?? globalThis.crypto.getRandomValues(new Uint8Array(32));
        this.fixedEphemeral = null;
        this.ephemeralPublic = await x25519Public(this.ephemeralPrivate);
        parts.push(this.ephemeralPublic);
        await this.symmetric.mixHash(this.ephemeralPublic);
        if (this.isPSK) await this.symmetric.mixKey(this.ephemeralPublic);
      } else if (token === "s") {
        if (!this.staticPublic) throw new NoiseError("missingKey", "no static key");
        parts.push(await this.symmetric.encryptAndHash(this.staticPublic));
      } else {
        await this.mixToken(token);
      }
    }
    parts.push(await this.symmetric.encryptAndHash(payload));
    await this.advance();
    return concat(...parts);
  }

  /**
   * Reads the peer's next handshake message; returns its payload.
   * @param {Uint8Array} message
   * @returns {Promise<Uint8Array>}
   */
  async readMessage(message) {
    if (this.isComplete || this.isMyTurn) throw new NoiseError("wrongTurn", "not our turn to read");
    let offset = 0;
    const take = (/** @type {number} */ count) => {
      if (offset + count > message.length) throw new NoiseError("malformed", "a Noise message is too short");
      const part = message.subarray(offset, offset + count);
      offset += count;
      return part;
    };
    for (const token of this.pattern.messages[this.messageIndex]) {
      if (token === "e") {
        this.remoteEphemeral = take(32).slice();
        await this.symmetric.mixHash(this.remoteEphemeral);
        if (this.isPSK) await this.symmetric.mixKey(this.remoteEphemeral);
      } else if (token === "s") {
        this.remoteStatic = await this.symmetric.decryptAndHash(take(this.symmetric.cipherState.hasKey ? 48 : 32));
      } else {
        await this.mixToken(token);
      }
    }
    const payload = await this.symmetric.decryptAndHash(message.subarray(offset));
    await this.advance();
    return payload;
  }

  async advance() {
    this.messageIndex += 1;
    if (this.messageIndex === this.pattern.messages.length) this.result = await this.symmetric.split();
  }

  /** The transport ciphers after the last message: [initiator → responder, responder → initiator]. */
  split() {
    if (!this.result) throw new NoiseError("wrongTurn", "the handshake is not complete");
    return this.result;
  }
}
