// The page's decoders fed mutated and random input (a fixed-seed generator, so every run
// is the same): each must either give a well-formed value or throw, never hang or give
// something half-valid. Covers the file offer and chunk frame (js/chat/files.js), the
// vault's JSON-with-bytes, a kept v2 session and kept v1 counters (js/store/vault.js,
// js/v2/pairing.js, js/v1/channel.js), and the names a sender chooses.

import { toHex } from "../js/crypto/bytes.js";
import { chunkHeader, chunkKey, decodeOffer, encodeOffer, openChunk, sanitizeName, sealChunk } from "../js/chat/files.js";
import { decodeJSON, encodeJSON } from "../js/store/vault.js";
import { KeyPair, SessionState } from "../js/signal/ratchet.js";
import { V1Channel } from "../js/v1/channel.js";
import { V2Session, restoreSession, storeSession } from "../js/v2/pairing.js";
import { check, group } from "./support.js";

/** xorshift32 from a fixed seed. */
function generator(seed = 0x1badb002) {
  let x = seed >>> 0;
  const next = () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
  return {
    below: (/** @type {number} */ n) => next() % n,
    bytes: (/** @type {number} */ n) => Uint8Array.from({ length: n }, () => next() & 0xff),
  };
}

/**
 * `bytes` with a few random flips, insertions, deletions or a cut.
 * @param {ReturnType<typeof generator>} g @param {Uint8Array} bytes
 */
function mutate(g, bytes) {
  let out = Array.from(bytes);
  const edits = 1 + g.below(4);
  for (let i = 0; i < edits; i++) {
    const at = g.below(out.length + 1);
    switch (g.below(4)) {
      case 0: if (out.length) out[at % out.length] ^= 1 << g.below(8); break;
      case 1: out.splice(at, 0, g.below(256)); break;
      case 2: out.splice(at, 1 + g.below(4)); break;
      default: out = out.slice(0, at);
    }
  }
  return Uint8Array.from(out);
}

/** @returns {Promise<{ fuzz: import("./support.js").GroupResult }>} */
export async function runFuzz(rounds = 2000) {
  const result = group();
  const g = generator();

  // File offers: a mutated offer decodes to a sane one or throws.
  const offer = { id: g.bytes(16), size: 123456789, chunkSize: 61440, key: g.bytes(32), name: "report.pdf" };
  const encoded = encodeOffer(offer);
  const back = decodeOffer(encoded);
  check(result, toHex(encodeOffer(back)) === toHex(encoded) && back.name === "report.pdf", "offer round trip");
  let offerFailures = 0;
  for (let i = 0; i < rounds; i++) {
    try {
      const decoded = decodeOffer(mutate(g, encoded));
      const sane = decoded.id.length === 16 && decoded.key.length === 32 && decoded.chunkSize >= 1024 && decoded.chunkSize <= 1048576
        && Number.isSafeInteger(decoded.size) && decoded.size <= 2 ** 40 && typeof decoded.name === "string";
      if (!sane) offerFailures += 1;
    } catch (error) {
      if (!(error instanceof Error)) offerFailures += 1;
    }
  }
  check(result, offerFailures === 0, `${offerFailures} mutated offers decoded to something malformed`);

  // Chunk frames: the header reads only whole frames; a mutated frame never opens.
  const key = await chunkKey(offer.key);
  const frame = await sealChunk(key, offer.id, 7, g.bytes(1000));
  check(result, chunkHeader(frame)?.index === 7 && chunkHeader(frame)?.id === toHex(offer.id), "chunk header");
  let opened = 0;
  for (let i = 0; i < rounds / 4; i++) {
    const bad = mutate(g, frame);
    const header = chunkHeader(bad);
    if (header === null) continue;
    try {
      await openChunk(key, offer.id, header.index, bad);
      if (toHex(bad) !== toHex(frame)) opened += 1;
    } catch {
      // Refused, as it must be.
    }
  }
  check(result, opened === 0, `${opened} mutated chunk frames opened`);
  let headers = 0;
  for (let i = 0; i < rounds; i++) {
    const header = chunkHeader(g.bytes(g.below(64)));
    if (header && (typeof header.index !== "number" || header.index < 0 || header.id.length !== 32)) headers += 1;
  }
  check(result, headers === 0, "random chunk headers");

  // JSON with bytes, and kept sessions: mutated text is refused or restores a whole session.
  const sending = new KeyPair(g.bytes(32), g.bytes(32));
  const state = new SessionState({
    localIdentity: g.bytes(32), remoteIdentity: g.bytes(32), rootKey: g.bytes(32),
    sender: { keyPair: sending, chainKey: g.bytes(32), index: 3 },
    receivers: [{ ratchetKey: g.bytes(33), chainKey: g.bytes(32), index: 2, skipped: [{ index: 1, seed: g.bytes(32) }] }],
    previousCounter: 1,
  });
  const text = encodeJSON(storeSession(new V2Session("creator", state, g.bytes(32))));
  const restored = restoreSession(decodeJSON(text));
  check(result, encodeJSON(storeSession(restored)) === text, "kept session round trip");
  let sessionFailures = 0;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  for (let i = 0; i < rounds; i++) {
    const mutated = decoder.decode(mutate(g, encoder.encode(text)));
    let value;
    try {
      value = decodeJSON(mutated);
    } catch {
      continue;
    }
    try {
      const session = restoreSession(value);
      if (session.state.rootKey.length !== 32 || session.state.sender.keyPair.privateKey.length !== 32) sessionFailures += 1;
    } catch (error) {
      if (/** @type {any} */ (error)?.code !== "malformedState") sessionFailures += 1;
    }
  }
  check(result, sessionFailures === 0, `${sessionFailures} mutated sessions were half restored or threw untyped errors`);

  // Kept v1 counters: mutated ones are refused or give a channel whose window holds.
  const channel = new V1Channel(g.bytes(32), "joiner");
  channel.sendCounter = 40;
  channel.highest = 2000;
  channel.seen = new Set([2000, 1999, 1500, 977]);
  const counters = encodeJSON(channel.counters());
  let counterFailures = 0;
  for (let i = 0; i < rounds; i++) {
    let value;
    try {
      value = decodeJSON(decoder.decode(mutate(g, encoder.encode(counters))));
    } catch {
      continue;
    }
    try {
      const kept = V1Channel.restore(g.bytes(32), "creator", value);
      const window = [...kept.seen];
      if (!Number.isSafeInteger(kept.sendCounter) || kept.sendCounter < 0 || window.some((c) => c > kept.highest || c <= kept.highest - 1024)) counterFailures += 1;
    } catch (error) {
      if (/** @type {any} */ (error)?.code !== "malformed") counterFailures += 1;
    }
  }
  check(result, counterFailures === 0, `${counterFailures} mutated v1 counters were half restored or threw untyped errors`);
  check(result, encodeJSON(V1Channel.restore(g.bytes(32), "joiner", decodeJSON(counters)).counters()) === counters, "kept v1 counters round trip");

  // Names: whatever the sender picks, a plain name with no path, control character or leading dot.
  const hostile = ["../../x", "/etc/passwd", "..", "a\\b\\c.txt", "\u202Egnp.exe", ".hidden", " ", "x\u0000y", "é".repeat(300), "CON"];
  let badNames = 0;
  for (const name of hostile.concat(Array.from({ length: rounds }, () => decoder.decode(g.bytes(1 + g.below(40)))))) {
    const clean = sanitizeName(name);
    if (!clean || /[/\\\p{Cc}\p{Cf}]/u.test(clean) || clean.startsWith(".") || encoder.encode(clean).length > 255) badNames += 1;
  }
  check(result, badNames === 0, `${badNames} names came out unsafe`);
  check(result, sanitizeName("../../x") === "x" && sanitizeName("..") === "file" && sanitizeName("/etc/passwd") === "passwd", "the CLI's cleaning");
  return { fuzz: result };
}
