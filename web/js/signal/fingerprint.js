// libsignal's displayable fingerprint (safety number), version 2: per side SHA-512 over
// 0x0000 ‖ key ‖ stable id ‖ key, then iterations − 1 times over digest ‖ key; the first
// 30 bytes as six 5-byte big-endian numbers mod 100,000; the two 30-digit halves sorted.

import { concat } from "../crypto/bytes.js";

const subtle = globalThis.crypto.subtle;

/**
 * One side's 64-byte hash.
 * @param {number} iterations @param {Uint8Array} stableID @param {Uint8Array} key serialised (33 bytes)
 */
export async function fingerprintHash(iterations, stableID, key) {
  let digest = new Uint8Array(await subtle.digest("SHA-512", concat(new Uint8Array([0, 0]), key, stableID, key)));
  const round = new Uint8Array(64 + key.length);
  round.set(key, 64);
  for (let i = 1; i < iterations; i++) {
    round.set(digest, 0);
    digest = new Uint8Array(await subtle.digest("SHA-512", round));
  }
  return digest;
}

/** @param {Uint8Array} hash @returns {string} 30 digits */
function encode(hash) {
  let text = "";
  for (let chunk = 0; chunk < 6; chunk++) {
    let value = 0;
    for (let i = 0; i < 5; i++) value = value * 256 + hash[chunk * 5 + i];
    text += String(value % 100000).padStart(5, "0");
  }
  return text;
}

/**
 * The 60 digits both people see.
 * @param {{ localStableID: Uint8Array, localKey: Uint8Array, remoteStableID: Uint8Array, remoteKey: Uint8Array, iterations?: number }} inputs
 *   keys serialised (0x05 ‖ u)
 * @returns {Promise<string>}
 */
export async function safetyNumber(inputs) {
  const iterations = inputs.iterations ?? 5200;
  const local = encode(await fingerprintHash(iterations, inputs.localStableID, inputs.localKey));
  const remote = encode(await fingerprintHash(iterations, inputs.remoteStableID, inputs.remoteKey));
  return local < remote ? local + remote : remote + local;
}
