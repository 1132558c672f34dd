// Speed in the page (issue 21, section 4): ChaCha20-Poly1305 (ours: WebCrypto has none)
// against WebCrypto's AES-256-GCM, measured in the same page, on 1 MiB messages.

import * as chachapoly from "../js/crypto/chacha20poly1305.js";

/**
 * MiB/s of `step` over about `milliseconds` (at least three runs).
 * @param {() => Promise<unknown> | unknown} step @param {number} milliseconds
 */
async function rate(step, milliseconds) {
  await step();
  let runs = 0;
  const start = performance.now();
  while (runs < 3 || performance.now() - start < milliseconds) {
    await step();
    runs += 1;
  }
  return runs / ((performance.now() - start) / 1000);
}

/**
 * Seals 1 MiB with each cipher, alternating rounds; the median of each.
 * @param {number} rounds
 * @returns {Promise<{ chachapoly: number, aesgcm: number, ratio: number, javascript: number, implementation: number }>}
 */
export async function benchCiphers(rounds = 5) {
  await chachapoly.ready;
  const key = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const nonce = new Uint8Array(12);
  const data = new Uint8Array(1 << 20);
  for (let offset = 0; offset < data.length; offset += 65536) {
    globalThis.crypto.getRandomValues(data.subarray(offset, offset + 65536));
  }
  const aes = await globalThis.crypto.subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  /** @type {number[]} */
  const ours = [];
  /** @type {number[]} */
  const theirs = [];
  for (let round = 0; round < rounds; round++) {
    ours.push(await rate(() => chachapoly.seal(key, nonce, data, new Uint8Array(0)), 300));
    theirs.push(await rate(() => globalThis.crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, aes, data), 300));
  }
  const median = (/** @type {number[]} */ values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const chacha = median(ours);
  const gcm = median(theirs);
  chachapoly.useJavaScript(true);
  const javascript = await rate(() => chachapoly.seal(key, nonce, data, new Uint8Array(0)), 300);
  chachapoly.useJavaScript(false);
  return { chachapoly: chacha, aesgcm: gcm, ratio: chacha / gcm, javascript, implementation: chachapoly.implementation() === "wasm" ? 1 : 0 };
}
