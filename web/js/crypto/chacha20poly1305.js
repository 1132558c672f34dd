// ChaCha20-Poly1305 AEAD (RFC 8439), which WebCrypto does not offer. Noise
// (`Noise_XXpsk3_25519_ChaChaPoly_SHA256`) needs it for the pairing's handshake messages.
// Written from RFC 8439 §2.1–2.8 and checked against its test vectors (§2.3.2, 2.4.2,
// 2.5.2, 2.6.2, 2.8.2 and appendix A) in the browser tests.

import { constantTimeEqual } from "./bytes.js";

/** @param {Uint32Array} x @param {number} a @param {number} b @param {number} c @param {number} d */
function quarterRound(x, a, b, c, d) {
  x[a] = (x[a] + x[b]) | 0; x[d] ^= x[a]; x[d] = (x[d] << 16) | (x[d] >>> 16);
  x[c] = (x[c] + x[d]) | 0; x[b] ^= x[c]; x[b] = (x[b] << 12) | (x[b] >>> 20);
  x[a] = (x[a] + x[b]) | 0; x[d] ^= x[a]; x[d] = (x[d] << 8) | (x[d] >>> 24);
  x[c] = (x[c] + x[d]) | 0; x[b] ^= x[c]; x[b] = (x[b] << 7) | (x[b] >>> 25);
}

/**
 * The 16-word initial state: constants, key, counter, nonce (§2.3).
 * @param {Uint8Array} key 32 bytes
 * @param {number} counter
 * @param {Uint8Array} nonce 12 bytes
 * @returns {Uint32Array}
 */
function initialState(key, counter, nonce) {
  const state = new Uint32Array(16);
  state[0] = 0x61707865; state[1] = 0x3320646e; state[2] = 0x79622d32; state[3] = 0x6b206574;
  const keyView = new DataView(key.buffer, key.byteOffset, key.byteLength);
  for (let i = 0; i < 8; i++) state[4 + i] = keyView.getUint32(i * 4, true);
  state[12] = counter >>> 0;
  const nonceView = new DataView(nonce.buffer, nonce.byteOffset, nonce.byteLength);
  for (let i = 0; i < 3; i++) state[13 + i] = nonceView.getUint32(i * 4, true);
  return state;
}

/**
 * One 64-byte keystream block (§2.3) as 16 words.
 * @param {Uint32Array} state the initial state (its counter word is used as is)
 * @param {Uint32Array} working scratch, 16 words
 * @param {Uint32Array} out 16 words
 */
function block(state, working, out) {
  working.set(state);
  for (let i = 0; i < 10; i++) {
    quarterRound(working, 0, 4, 8, 12); quarterRound(working, 1, 5, 9, 13);
    quarterRound(working, 2, 6, 10, 14); quarterRound(working, 3, 7, 11, 15);
    quarterRound(working, 0, 5, 10, 15); quarterRound(working, 1, 6, 11, 12);
    quarterRound(working, 2, 7, 8, 13); quarterRound(working, 3, 4, 9, 14);
  }
  for (let i = 0; i < 16; i++) out[i] = (working[i] + state[i]) | 0;
}

/** @param {Uint32Array} words @returns {Uint8Array} the words little-endian */
function littleEndianBytes(words) {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < words.length; i++) view.setUint32(i * 4, words[i], true);
  return bytes;
}

/**
 * The keystream block for `counter` as bytes (§2.3.2's test).
 * @param {Uint8Array} key @param {number} counter @param {Uint8Array} nonce
 * @returns {Uint8Array}
 */
export function chacha20Block(key, counter, nonce) {
  const out = new Uint32Array(16);
  block(initialState(key, counter, nonce), new Uint32Array(16), out);
  return littleEndianBytes(out);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * ChaCha20 encryption (§2.4): `data` XORed with the keystream from `counter` on.
 * @param {Uint8Array} key 32 bytes @param {number} counter @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} data
 * @returns {Uint8Array}
 */
export function chacha20(key, counter, nonce, data) {
  if (key.length !== 32 || nonce.length !== 12) throw new Error("chacha20: bad key or nonce length");
  const state = initialState(key, counter, nonce);
  const working = new Uint32Array(16);
  const stream = new Uint32Array(16);
  const streamBytes = new Uint8Array(stream.buffer);
  const out = new Uint8Array(data.length);
  for (let offset = 0; offset < data.length; offset += 64) {
    block(state, working, stream);
    if (!LITTLE_ENDIAN) {
      // The keystream is serialised little-endian whatever the platform.
      const view = new DataView(stream.buffer);
      for (let i = 0; i < 16; i++) view.setUint32(i * 4, stream[i], true);
    }
    const end = Math.min(64, data.length - offset);
    for (let i = 0; i < end; i++) out[offset + i] = data[offset + i] ^ streamBytes[i];
    state[12] = (state[12] + 1) | 0;
  }
  return out;
}

// Poly1305 (§2.5) with h and r in ten 13-bit limbs (130 bits). After a carry every limb is
// below 2^13 and a limb of h plus a message limb below 2^14, so a product term is below
// 2^27 and a sum of ten of them (five times for the wrapped ones) below 2^33: every
// intermediate is an exact double.

const LIMBS = 10;
const RADIX = 8192;

/**
 * Reads 16 little-endian bytes (plus a bit at 2^128 when `hibit`) into limbs.
 * @param {Uint8Array} bytes @param {number} offset @param {number} hibit 0 or 1
 * @param {Float64Array} limbs
 */
function loadLimbs(bytes, offset, hibit, limbs) {
  // Limb k holds bits 13k … 13k+12 of the 129-bit number.
  for (let k = 0; k < LIMBS; k++) {
    let value = 0;
    for (let bit = 0; bit < 13; bit++) {
      const position = 13 * k + bit;
      const byteIndex = position >> 3;
      const byte = byteIndex < 16 ? bytes[offset + byteIndex] : byteIndex === 16 ? hibit : 0;
      value |= ((byte >> (position & 7)) & 1) << bit;
    }
    limbs[k] = value;
  }
}

/**
 * Carries limbs into 13 bits each, folding the carry out of the top limb back into limb 0
 * (× 5, as 2^130 ≡ 5), until nothing is left to fold: then every limb is below 2^13.
 * @param {Float64Array} x
 */
function carry(x) {
  let c;
  do {
    c = 0;
    for (let k = 0; k < LIMBS; k++) {
      const value = x[k] + c;
      c = Math.floor(value / RADIX);
      x[k] = value - c * RADIX;
    }
    x[0] += 5 * c;
  } while (c !== 0);
}

/**
 * Poly1305 MAC of `message` under the 32-byte one-time key (§2.5).
 * @param {Uint8Array} key @param {Uint8Array} message
 * @returns {Uint8Array} 16 bytes
 */
export function poly1305(key, message) {
  if (key.length !== 32) throw new Error("poly1305: bad key length");
  // r is clamped (§2.5.1).
  const rBytes = key.slice(0, 16);
  rBytes[3] &= 15; rBytes[7] &= 15; rBytes[11] &= 15; rBytes[15] &= 15;
  rBytes[4] &= 252; rBytes[8] &= 252; rBytes[12] &= 252;
  const r = new Float64Array(LIMBS);
  loadLimbs(rBytes, 0, 0, r);
  const h = new Float64Array(LIMBS);
  const m = new Float64Array(LIMBS);
  const d = new Float64Array(LIMBS);
  const padded = new Uint8Array(16);
  for (let offset = 0; offset < message.length; offset += 16) {
    const remaining = message.length - offset;
    if (remaining >= 16) {
      loadLimbs(message, offset, 1, m);
    } else {
      // The last partial block gets a 0x01 byte right after it (§2.5.1).
      padded.fill(0);
      padded.set(message.subarray(offset));
      padded[remaining] = 1;
      loadLimbs(padded, 0, 0, m);
    }
    for (let k = 0; k < LIMBS; k++) h[k] += m[k];
    // d = h × r mod 2^130 − 5: a term past limb 9 wraps to limb k − 10 times 5.
    for (let k = 0; k < LIMBS; k++) {
      let sum = 0;
      for (let j = 0; j < LIMBS; j++) {
        const i = k - j;
        sum += i >= 0 ? h[i] * r[j] : 5 * h[i + LIMBS] * r[j];
      }
      d[k] = sum;
    }
    carry(d);
    h.set(d);
  }
  return finish(h, key);
}

/**
 * Reduces h fully mod p, adds s and serialises the low 128 bits (§2.5).
 * @param {Float64Array} h @param {Uint8Array} key
 * @returns {Uint8Array}
 */
function finish(h, key) {
  carry(h);
  // h < 2^130 now, maybe ≥ p: g = h + 5 − 2^130 is kept when h + 5 reaches 2^130.
  const g = new Float64Array(LIMBS);
  let c = 5;
  for (let k = 0; k < LIMBS; k++) {
    const value = h[k] + c;
    c = Math.floor(value / RADIX);
    g[k] = value - c * RADIX;
  }
  const value = c === 1 ? g : h;
  const bytes = new Uint8Array(17);
  for (let k = 0; k < LIMBS; k++) {
    for (let bit = 0; bit < 13; bit++) {
      const position = 13 * k + bit;
      if (position >= 136) break;
      if ((value[k] >> bit) & 1) bytes[position >> 3] |= 1 << (position & 7);
    }
  }
  const tag = new Uint8Array(16);
  let sum = 0;
  for (let i = 0; i < 16; i++) {
    sum += bytes[i] + key[16 + i];
    tag[i] = sum & 0xff;
    sum >>= 8;
  }
  return tag;
}

/**
 * The Poly1305 one-time key for a ChaCha20 key and nonce (§2.6).
 * @param {Uint8Array} key @param {Uint8Array} nonce @returns {Uint8Array}
 */
export function poly1305KeyGen(key, nonce) {
  return chacha20Block(key, 0, nonce).slice(0, 32);
}

/** The MAC input (§2.8): AAD, padding, ciphertext, padding, both lengths (LE 64-bit). */
function macData(/** @type {Uint8Array} */ aad, /** @type {Uint8Array} */ ciphertext) {
  const pad = (/** @type {number} */ n) => (16 - (n % 16)) % 16;
  const ciphertextAt = aad.length + pad(aad.length);
  const lengthsAt = ciphertextAt + ciphertext.length + pad(ciphertext.length);
  const out = new Uint8Array(lengthsAt + 16);
  out.set(aad, 0);
  out.set(ciphertext, ciphertextAt);
  const lengths = new DataView(out.buffer, lengthsAt);
  lengths.setUint32(0, aad.length, true);
  lengths.setUint32(8, ciphertext.length, true);
  return out;
}

/**
 * AEAD seal (§2.8): ciphertext ‖ 16-byte tag.
 * @param {Uint8Array} key 32 bytes @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} plaintext @param {Uint8Array} aad
 * @returns {Uint8Array}
 */
export function seal(key, nonce, plaintext, aad) {
  const ciphertext = chacha20(key, 1, nonce, plaintext);
  const tag = poly1305(poly1305KeyGen(key, nonce), macData(aad, ciphertext));
  const out = new Uint8Array(ciphertext.length + 16);
  out.set(ciphertext);
  out.set(tag, ciphertext.length);
  return out;
}

/**
 * AEAD open (§2.8); the tag is compared in constant time.
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} sealed ciphertext ‖ tag
 * @param {Uint8Array} aad
 * @returns {Uint8Array} the plaintext
 * @throws {Error} "authentication failed"
 */
export function open(key, nonce, sealed, aad) {
  if (sealed.length < 16) throw new Error("authentication failed");
  const ciphertext = sealed.subarray(0, sealed.length - 16);
  const tag = poly1305(poly1305KeyGen(key, nonce), macData(aad, ciphertext));
  if (!constantTimeEqual(tag, sealed.subarray(sealed.length - 16))) throw new Error("authentication failed");
  return chacha20(key, 1, nonce, ciphertext);
}
