// ChaCha20-Poly1305 AEAD (RFC 8439), which WebCrypto does not offer. Noise
// (`Noise_XXpsk3_25519_ChaChaPoly_SHA256`) needs it for the pairing's handshake messages.
// Written from RFC 8439 §2.1–2.8 and checked against its test vectors (§2.3.2, 2.4.2,
// 2.5.2, 2.6.2, 2.8.2 and appendix A) in the browser tests.
//
// Two implementations of the AEAD: WebAssembly (web/wasm/chacha20poly1305.wat, built by
// scripts/build-wasm.py: ChaCha20 on i32 locals, Poly1305 in five 26-bit limbs in i64s),
// used once `ready` has settled, and this file's JavaScript, used before that or where
// WebAssembly is not allowed. Both pass the same vectors (the tests run each).

import { constantTimeEqual } from "./bytes.js";
import { WASM_BASE64 } from "./chacha20poly1305-wasm.js";

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
 * One 64-byte keystream block (§2.3) into `out` (16 words): the state in sixteen locals,
 * ten double rounds, then the input added. (The quarter rounds are written out: a helper
 * function cannot change its caller's locals, and typed-array slots are slower.)
 * @param {Uint32Array} state the initial state (its counter word is used as is)
 * @param {Uint32Array} out 16 words
 */
function block(state, out) {
  let x0 = state[0];
  let x1 = state[1];
  let x2 = state[2];
  let x3 = state[3];
  let x4 = state[4];
  let x5 = state[5];
  let x6 = state[6];
  let x7 = state[7];
  let x8 = state[8];
  let x9 = state[9];
  let x10 = state[10];
  let x11 = state[11];
  let x12 = state[12];
  let x13 = state[13];
  let x14 = state[14];
  let x15 = state[15];
  for (let round = 0; round < 10; round++) {
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 16) | (x12 >>> 16);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 12) | (x4 >>> 20);
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 8) | (x12 >>> 24);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 7) | (x4 >>> 25);
    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 16) | (x13 >>> 16);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 12) | (x5 >>> 20);
    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 8) | (x13 >>> 24);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 7) | (x5 >>> 25);
    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 16) | (x14 >>> 16);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 12) | (x6 >>> 20);
    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 8) | (x14 >>> 24);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 7) | (x6 >>> 25);
    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 16) | (x15 >>> 16);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 12) | (x7 >>> 20);
    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 8) | (x15 >>> 24);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 7) | (x7 >>> 25);
    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 16) | (x15 >>> 16);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 12) | (x5 >>> 20);
    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 8) | (x15 >>> 24);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 7) | (x5 >>> 25);
    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 16) | (x12 >>> 16);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 12) | (x6 >>> 20);
    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 8) | (x12 >>> 24);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 7) | (x6 >>> 25);
    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 16) | (x13 >>> 16);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 12) | (x7 >>> 20);
    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 8) | (x13 >>> 24);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 7) | (x7 >>> 25);
    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 16) | (x14 >>> 16);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 12) | (x4 >>> 20);
    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 8) | (x14 >>> 24);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 7) | (x4 >>> 25);
  }
  out[0] = (x0 + state[0]) | 0;
  out[1] = (x1 + state[1]) | 0;
  out[2] = (x2 + state[2]) | 0;
  out[3] = (x3 + state[3]) | 0;
  out[4] = (x4 + state[4]) | 0;
  out[5] = (x5 + state[5]) | 0;
  out[6] = (x6 + state[6]) | 0;
  out[7] = (x7 + state[7]) | 0;
  out[8] = (x8 + state[8]) | 0;
  out[9] = (x9 + state[9]) | 0;
  out[10] = (x10 + state[10]) | 0;
  out[11] = (x11 + state[11]) | 0;
  out[12] = (x12 + state[12]) | 0;
  out[13] = (x13 + state[13]) | 0;
  out[14] = (x14 + state[14]) | 0;
  out[15] = (x15 + state[15]) | 0;
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
  block(initialState(key, counter, nonce), out);
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
  const stream = new Uint32Array(16);
  const streamBytes = new Uint8Array(stream.buffer);
  const out = new Uint8Array(data.length);
  // Whole blocks a word at a time where the platform is little-endian and the input is
  // word-aligned (the keystream words are then its bytes in order); the rest bytewise.
  const words = LITTLE_ENDIAN && data.byteOffset % 4 === 0;
  const in32 = words ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2) : null;
  const out32 = new Uint32Array(out.buffer, 0, out.length >>> 2);
  for (let offset = 0; offset < data.length; offset += 64) {
    block(state, stream);
    if (in32 && offset + 64 <= data.length) {
      const w = offset >>> 2;
      for (let i = 0; i < 16; i++) out32[w + i] = in32[w + i] ^ stream[i];
    } else {
      if (!LITTLE_ENDIAN) {
        // The keystream is serialised little-endian whatever the platform.
        const view = new DataView(stream.buffer);
        for (let i = 0; i < 16; i++) view.setUint32(i * 4, stream[i], true);
      }
      const end = Math.min(64, data.length - offset);
      for (let i = 0; i < end; i++) out[offset + i] = data[offset + i] ^ streamBytes[i];
    }
    state[12] = (state[12] + 1) | 0;
  }
  return out;
}

// Poly1305 (§2.5) with h and r in ten 13-bit limbs (130 bits). After a carry every limb is
// below 2^13 (limb 1 may hold one more), and a limb of h plus a message limb below 2^14 + 1,
// so a product term is below 2^27 · 5 and a sum of ten below 2^33: every intermediate is an
// exact double, and multiplying by 2^−13 then flooring is an exact shift.

const LIMBS = 10;
const RADIX = 8192;
const INV_RADIX = 1 / 8192;

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
 * A Poly1305 computation (§2.5): the clamped r, and the accumulator h between calls.
 */
class Poly1305State {
  /** @param {Uint8Array} key the 32-byte one-time key */
  constructor(key) {
    if (key.length !== 32) throw new Error("poly1305: bad key length");
    // r is clamped (§2.5.1).
    const rBytes = key.slice(0, 16);
    rBytes[3] &= 15; rBytes[7] &= 15; rBytes[11] &= 15; rBytes[15] &= 15;
    rBytes[4] &= 252; rBytes[8] &= 252; rBytes[12] &= 252;
    this.r = new Float64Array(LIMBS);
    loadLimbs(rBytes, 0, 0, this.r);
    this.h = new Float64Array(LIMBS);
    this.key = key;
  }

  /**
   * Adds the 16-byte blocks of `m` from `offset` to `end` (a multiple of 16 bytes on),
   * each with the 2^128 bit when `hibit` is 2^11 (whole blocks), without it when 0 (the
   * last partial block of a plain MAC, already padded with its 0x01 byte).
   * @param {Uint8Array} m @param {number} offset @param {number} end @param {number} hibit
   */
  blocks(m, offset, end, hibit) {
    const [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9] = this.r;
    // A term past limb 9 wraps to limb k − 10 times 5 (2^130 ≡ 5 mod p).
    const s1 = 5 * r1, s2 = 5 * r2, s3 = 5 * r3, s4 = 5 * r4, s5 = 5 * r5, s6 = 5 * r6, s7 = 5 * r7, s8 = 5 * r8, s9 = 5 * r9;
    let [h0, h1, h2, h3, h4, h5, h6, h7, h8, h9] = this.h;
    for (let o = offset; o + 16 <= end; o += 16) {
      // The block's 16-bit little-endian words, then its ten 13-bit limbs (limb k is bits
      // 13k … 13k+12; the 2^128 bit, set for a whole block, is bit 11 of limb 9).
      const t0 = m[o] | (m[o + 1] << 8), t1 = m[o + 2] | (m[o + 3] << 8);
      const t2 = m[o + 4] | (m[o + 5] << 8), t3 = m[o + 6] | (m[o + 7] << 8);
      const t4 = m[o + 8] | (m[o + 9] << 8), t5 = m[o + 10] | (m[o + 11] << 8);
      const t6 = m[o + 12] | (m[o + 13] << 8), t7 = m[o + 14] | (m[o + 15] << 8);
      h0 += t0 & 0x1fff;
      h1 += ((t0 >>> 13) | (t1 << 3)) & 0x1fff;
      h2 += ((t1 >>> 10) | (t2 << 6)) & 0x1fff;
      h3 += ((t2 >>> 7) | (t3 << 9)) & 0x1fff;
      h4 += ((t3 >>> 4) | (t4 << 12)) & 0x1fff;
      h5 += (t4 >>> 1) & 0x1fff;
      h6 += ((t4 >>> 14) | (t5 << 2)) & 0x1fff;
      h7 += ((t5 >>> 11) | (t6 << 5)) & 0x1fff;
      h8 += ((t6 >>> 8) | (t7 << 8)) & 0x1fff;
      h9 += (t7 >>> 5) | hibit;
      const d0 = h0 * r0 + h9 * s1 + h8 * s2 + h7 * s3 + h6 * s4 + h5 * s5 + h4 * s6 + h3 * s7 + h2 * s8 + h1 * s9;
      const d1 = h1 * r0 + h0 * r1 + h9 * s2 + h8 * s3 + h7 * s4 + h6 * s5 + h5 * s6 + h4 * s7 + h3 * s8 + h2 * s9;
      const d2 = h2 * r0 + h1 * r1 + h0 * r2 + h9 * s3 + h8 * s4 + h7 * s5 + h6 * s6 + h5 * s7 + h4 * s8 + h3 * s9;
      const d3 = h3 * r0 + h2 * r1 + h1 * r2 + h0 * r3 + h9 * s4 + h8 * s5 + h7 * s6 + h6 * s7 + h5 * s8 + h4 * s9;
      const d4 = h4 * r0 + h3 * r1 + h2 * r2 + h1 * r3 + h0 * r4 + h9 * s5 + h8 * s6 + h7 * s7 + h6 * s8 + h5 * s9;
      const d5 = h5 * r0 + h4 * r1 + h3 * r2 + h2 * r3 + h1 * r4 + h0 * r5 + h9 * s6 + h8 * s7 + h7 * s8 + h6 * s9;
      const d6 = h6 * r0 + h5 * r1 + h4 * r2 + h3 * r3 + h2 * r4 + h1 * r5 + h0 * r6 + h9 * s7 + h8 * s8 + h7 * s9;
      const d7 = h7 * r0 + h6 * r1 + h5 * r2 + h4 * r3 + h3 * r4 + h2 * r5 + h1 * r6 + h0 * r7 + h9 * s8 + h8 * s9;
      const d8 = h8 * r0 + h7 * r1 + h6 * r2 + h5 * r3 + h4 * r4 + h3 * r5 + h2 * r6 + h1 * r7 + h0 * r8 + h9 * s9;
      const d9 = h9 * r0 + h8 * r1 + h7 * r2 + h6 * r3 + h5 * r4 + h4 * r5 + h3 * r6 + h2 * r7 + h1 * r8 + h0 * r9;
      let c = (d0 * INV_RADIX) | 0;
      h0 = d0 - c * RADIX;
      let e1 = d1 + c;
      c = (e1 * INV_RADIX) | 0;
      h1 = e1 - c * RADIX;
      let e2 = d2 + c;
      c = (e2 * INV_RADIX) | 0;
      h2 = e2 - c * RADIX;
      let e3 = d3 + c;
      c = (e3 * INV_RADIX) | 0;
      h3 = e3 - c * RADIX;
      let e4 = d4 + c;
      c = (e4 * INV_RADIX) | 0;
      h4 = e4 - c * RADIX;
      let e5 = d5 + c;
      c = (e5 * INV_RADIX) | 0;
      h5 = e5 - c * RADIX;
      let e6 = d6 + c;
      c = (e6 * INV_RADIX) | 0;
      h6 = e6 - c * RADIX;
      let e7 = d7 + c;
      c = (e7 * INV_RADIX) | 0;
      h7 = e7 - c * RADIX;
      let e8 = d8 + c;
      c = (e8 * INV_RADIX) | 0;
      h8 = e8 - c * RADIX;
      let e9 = d9 + c;
      c = (e9 * INV_RADIX) | 0;
      h9 = e9 - c * RADIX;
      // The carry out of limb 9 is worth 2^130 ≡ 5.
      h0 += 5 * c;
      c = (h0 * INV_RADIX) | 0;
      h0 -= c * RADIX;
      h1 += c;
    }
    this.h.set([h0, h1, h2, h3, h4, h5, h6, h7, h8, h9]);
  }

  /** The 16-byte tag. */
  finish() {
    return finish(this.h, this.key);
  }
}

/**
 * Poly1305 MAC of `message` under the 32-byte one-time key (§2.5).
 * @param {Uint8Array} key @param {Uint8Array} message
 * @returns {Uint8Array} 16 bytes
 */
export function poly1305(key, message) {
  const state = new Poly1305State(key);
  const whole = message.length & ~15;
  state.blocks(message, 0, whole, 1 << 11);
  if (whole < message.length) {
    // The last partial block gets a 0x01 byte right after it and no 2^128 bit.
    const padded = new Uint8Array(16);
    padded.set(message.subarray(whole));
    padded[message.length - whole] = 1;
    state.blocks(padded, 0, 16, 0);
  }
  return state.finish();
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

/**
 * The AEAD's tag (§2.8): Poly1305 over AAD, zero padding to 16, ciphertext, zero padding,
 * and both lengths (64-bit little-endian), fed block by block without building that
 * message (every block of it is whole, so each has the 2^128 bit).
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} aad @param {Uint8Array} ciphertext
 */
function aeadTag(key, nonce, aad, ciphertext) {
  const state = new Poly1305State(poly1305KeyGen(key, nonce));
  const block = new Uint8Array(16);
  for (const part of [aad, ciphertext]) {
    const whole = part.length & ~15;
    state.blocks(part, 0, whole, 1 << 11);
    if (whole < part.length) {
      block.fill(0);
      block.set(part.subarray(whole));
      state.blocks(block, 0, 16, 1 << 11);
    }
  }
  const lengths = new DataView(block.buffer);
  block.fill(0);
  lengths.setUint32(0, aad.length, true);
  lengths.setUint32(8, ciphertext.length, true);
  state.blocks(block, 0, 16, 1 << 11);
  return state.finish();
}

/**
 * AEAD seal (§2.8): ciphertext ‖ 16-byte tag.
 * @param {Uint8Array} key 32 bytes @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} plaintext @param {Uint8Array} aad
 * @returns {Uint8Array}
 */
function sealJavaScript(key, nonce, plaintext, aad) {
  const ciphertext = chacha20(key, 1, nonce, plaintext);
  const tag = aeadTag(key, nonce, aad, ciphertext);
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
function openJavaScript(key, nonce, sealed, aad) {
  if (sealed.length < 16) throw new Error("authentication failed");
  const ciphertext = sealed.subarray(0, sealed.length - 16);
  const tag = aeadTag(key, nonce, aad, ciphertext);
  if (!constantTimeEqual(tag, sealed.subarray(sealed.length - 16))) throw new Error("authentication failed");
  return chacha20(key, 1, nonce, ciphertext);
}

// MARK: WebAssembly

/**
 * @typedef {{ memory: WebAssembly.Memory,
 *   chacha20: (key: number, nonce: number, counter: number, src: number, dst: number, len: number) => void,
 *   poly_init: (key: number) => void, poly_blocks: (src: number, len: number, hibit: number) => void,
 *   poly_finish: (out: number) => void }} Core
 */

/** @type {Core | null} */
let core = null;
let preferJavaScript = false;

// The module's scratch (docs in scripts/build-wasm.py): 0–127 belong to the module.
const KEY = 1024;
const NONCE = 1056;
const POLY_KEY = 1088; // a whole keystream block; the first 32 bytes are the key
const ZEROS = 1152;
const LENGTHS = 1216;
const TAG = 1232;
const DATA = 1280;

/** Settles once the WebAssembly core is compiled (or refused: then JavaScript is used). */
export const ready = (async () => {
  try {
    const bytes = Uint8Array.from(atob(WASM_BASE64), (c) => c.charCodeAt(0));
    const { instance } = await WebAssembly.instantiate(bytes);
    core = /** @type {Core} */ (/** @type {unknown} */ (instance.exports));
  } catch {
    core = null; // e.g. a CSP without 'wasm-unsafe-eval'
  }
})();

/** Which implementation `seal` and `open` use now. */
export function implementation() {
  return core && !preferJavaScript ? "wasm" : "javascript";
}

/**
 * For the tests and the bench: use the JavaScript implementation even when the
 * WebAssembly one is ready (`true`), or the fastest (`false`).
 * @param {boolean} value
 */
export function useJavaScript(value) {
  preferJavaScript = value;
}

/** @param {number} n */
const padded = (n) => (n + 15) & ~15;

/**
 * The core's memory as bytes, grown to hold `bytes` from 0.
 * @param {Core} wasm @param {number} bytes
 */
function memory(wasm, bytes) {
  const have = wasm.memory.buffer.byteLength;
  if (bytes > have) wasm.memory.grow(Math.ceil((bytes - have) / 65536));
  return new Uint8Array(wasm.memory.buffer);
}

/**
 * Encrypts (or decrypts) `input` in place in the core and computes the tag over the AAD
 * and the ciphertext (which is the output when sealing, the input when opening).
 * @param {Core} wasm @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} aad
 * @param {Uint8Array} input @param {boolean} sealing
 * @returns {{ output: Uint8Array, tag: Uint8Array }}
 */
function wasmAEAD(wasm, key, nonce, aad, input, sealing) {
  const data = DATA + padded(aad.length);
  const end = data + padded(input.length);
  const mem = memory(wasm, end + 64);
  mem.set(key, KEY);
  mem.set(nonce, NONCE);
  mem.fill(0, ZEROS, ZEROS + 64);
  wasm.chacha20(KEY, NONCE, 0, ZEROS, POLY_KEY, 64);
  mem.set(aad, DATA);
  mem.fill(0, DATA + aad.length, data);
  mem.set(input, data);
  mem.fill(0, data + input.length, end);
  wasm.poly_init(POLY_KEY);
  if (!sealing) wasm.poly_blocks(DATA, end - DATA, 1);
  wasm.chacha20(KEY, NONCE, 1, data, data, input.length);
  if (sealing) {
    mem.fill(0, data + input.length, end);
    wasm.poly_blocks(DATA, end - DATA, 1);
  }
  const lengths = new DataView(mem.buffer, LENGTHS, 16);
  lengths.setUint32(0, aad.length, true);
  lengths.setUint32(4, 0, true);
  lengths.setUint32(8, input.length, true);
  lengths.setUint32(12, 0, true);
  wasm.poly_blocks(LENGTHS, 16, 1);
  wasm.poly_finish(TAG);
  const output = mem.slice(data, data + input.length);
  const tag = mem.slice(TAG, TAG + 16);
  // No key, keystream or plaintext stays behind in the core's memory.
  mem.fill(0, 0, end);
  return { output, tag };
}

/**
 * AEAD seal (§2.8): ciphertext ‖ 16-byte tag, by the WebAssembly core when it is ready.
 * @param {Uint8Array} key 32 bytes @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} plaintext @param {Uint8Array} aad
 * @returns {Uint8Array}
 */
export function seal(key, nonce, plaintext, aad) {
  if (key.length !== 32 || nonce.length !== 12) throw new Error("chacha20: bad key or nonce length");
  if (!core || preferJavaScript) return sealJavaScript(key, nonce, plaintext, aad);
  const { output, tag } = wasmAEAD(core, key, nonce, aad, plaintext, true);
  const out = new Uint8Array(output.length + 16);
  out.set(output);
  out.set(tag, output.length);
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
  if (key.length !== 32 || nonce.length !== 12) throw new Error("chacha20: bad key or nonce length");
  if (!core || preferJavaScript) return openJavaScript(key, nonce, sealed, aad);
  if (sealed.length < 16) throw new Error("authentication failed");
  const { output, tag } = wasmAEAD(core, key, nonce, aad, sealed.subarray(0, sealed.length - 16), false);
  if (!constantTimeEqual(tag, sealed.subarray(sealed.length - 16))) {
    output.fill(0);
    throw new Error("authentication failed");
  }
  return output;
}
