// CPACE-X25519-SHA512 (draft-irtf-cfrg-cpace-21), exactly as docs/cpace.md derives it for
// Inviso v2: the generator from the password (SHA-512, Elligator 2), the shares through
// WebCrypto's X25519, and the ISK and sid_output over the initiator–responder transcript.

import { concat } from "./bytes.js";
import { decodeLittleEndian, encodeLittleEndian, mapToCurveU } from "./elligator2.js";
import { x25519 } from "./x25519.js";

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();
const DSI = encoder.encode("CPace255");
const ISK_DSI = encoder.encode("CPace255_ISK");
const SID_OUTPUT = encoder.encode("CPaceSidOutput");
const S_IN_BYTES = 128;

/**
 * LEB128 of a length (7 bits a byte, least significant first).
 * @param {number} length
 */
export function leb128(length) {
  const out = [];
  let value = length;
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return new Uint8Array(out);
}

/**
 * prepend_len(x).
 * @param {Uint8Array} x
 */
export function prependLength(x) {
  return concat(leb128(x.length), x);
}

/**
 * lv_cat(…).
 * @param {...Uint8Array} parts
 */
export function lvCat(...parts) {
  return concat(...parts.map(prependLength));
}

/** @param {Uint8Array} data @returns {Promise<Uint8Array>} */
async function sha512(data) {
  return new Uint8Array(await subtle.digest("SHA-512", data));
}

/**
 * The generator g for a password (PRS), channel identifier and session id.
 * @param {Uint8Array} prs @param {Uint8Array} ci @param {Uint8Array} sid
 * @returns {Promise<Uint8Array>} g, 32 bytes little-endian
 */
export async function generator(prs, ci, sid) {
  const zpad = Math.max(0, S_IN_BYTES - 1 - prependLength(prs).length - prependLength(DSI).length);
  const hash = (await sha512(lvCat(DSI, prs, new Uint8Array(zpad), ci, sid))).slice(0, 32);
  hash[31] &= 0x7f;
  return encodeLittleEndian(mapToCurveU(decodeLittleEndian(hash)));
}

/** A typed CPace failure (no data in its message). */
export class CPaceError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * Reads a peer's message `lv_cat(Y, AD)`: minimal LEB128 lengths below 2^28, Y of 32
 * bytes, nothing after AD.
 * @param {Uint8Array} message
 * @returns {{ share: Uint8Array, ad: Uint8Array }}
 */
export function parseMessage(message) {
  let offset = 0;
  const field = () => {
    let length = 0;
    let shift = 1;
    for (let i = 0; ; i++) {
      if (offset >= message.length || i >= 4) throw new CPaceError("malformed", "a CPace message is malformed");
      const byte = message[offset++];
      // A last byte of zero after a continuation byte is not minimal.
      if (i > 0 && byte === 0) throw new CPaceError("malformed", "a CPace length is not minimal");
      length += (byte & 0x7f) * shift;
      shift *= 128;
      if (!(byte & 0x80)) break;
    }
    if (offset + length > message.length) throw new CPaceError("malformed", "a CPace message is malformed");
    const value = message.slice(offset, offset + length);
    offset += length;
    return value;
  };
  const share = field();
  const ad = field();
  if (share.length !== 32 || offset !== message.length) throw new CPaceError("malformed", "a CPace message is malformed");
  return { share, ad };
}

/** One party of a CPace run (initiator = Inviso's creator, responder = the joiner). */
export class CPaceParty {
  /**
   * @param {{ initiator: boolean, prs: Uint8Array, ci: Uint8Array, sid: Uint8Array, ad?: Uint8Array, scalar?: Uint8Array }} options
   *   `scalar` is for tests; otherwise 32 fresh random bytes.
   * @returns {Promise<CPaceParty>}
   */
  static async create(options) {
    const g = await generator(options.prs, options.ci, options.sid);
    const scalar = options.scalar ?? globalThis.crypto.getRandomValues(new Uint8Array(32));
    const share = await x25519(scalar, g);
    return new CPaceParty(options.initiator, options.sid, options.ad ?? new Uint8Array(0), scalar, share);
  }

  /**
   * @param {boolean} initiator @param {Uint8Array} sid @param {Uint8Array} ad
   * @param {Uint8Array} scalar @param {Uint8Array} share
   */
  constructor(initiator, sid, ad, scalar, share) {
    this.initiator = initiator;
    this.sid = sid;
    this.ad = ad;
    /** @type {Uint8Array | null} */
    this.scalar = scalar;
    this.share = share;
  }

  /** Our message, `lv_cat(Y, AD)`. */
  get message() {
    return lvCat(this.share, this.ad);
  }

  /**
   * Derives the ISK and sid_output from the peer's message. Throws (and changes nothing)
   * on a malformed message or a low-order share; after a key is derived every call throws.
   * @param {Uint8Array} peerMessage
   * @returns {Promise<{ isk: Uint8Array, sidOutput: Uint8Array }>}
   */
  async receive(peerMessage) {
    if (!this.scalar) throw new CPaceError("alreadyFinished", "CPace already derived its key");
    const { share, ad } = parseMessage(peerMessage);
    let k;
    try {
      k = await x25519(this.scalar, share);
    } catch {
      throw new CPaceError("invalidPeerShare", "the peer's CPace share is invalid");
    }
    this.scalar = null;
    const ours = lvCat(this.share, this.ad);
    const theirs = lvCat(share, ad);
    const transcript = this.initiator ? concat(ours, theirs) : concat(theirs, ours);
    const isk = await sha512(concat(lvCat(ISK_DSI, this.sid, k), transcript));
    const sidOutput = await sha512(concat(SID_OUTPUT, transcript));
    return { isk, sidOutput };
  }
}
