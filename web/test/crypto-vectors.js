// The page's crypto against the public vectors, run in a real browser by
// Tests/InvisoWebTests (the same files the Swift tests read: ../shared/vectors, served by
// the test under /vectors/, and RFC 8439's vectors beside this file).
//
// Every group reports how many vectors passed and the first failures; a group that finds
// no vectors fails (so a wrong path cannot pass silently).

import * as chachapoly from "../js/crypto/chacha20poly1305.js";
import { fromHex, toHex } from "../js/crypto/bytes.js";
import { CPaceParty, generator } from "../js/crypto/cpace.js";
import { mapToCurveU } from "../js/crypto/elligator2.js";
import { HandshakeState, parseProtocol } from "../js/crypto/noise.js";
import { x25519 } from "../js/crypto/x25519.js";
import { check, group, load } from "./support.js";

/** @typedef {import("./support.js").GroupResult} GroupResult */

/**
 * RFC 8439 (§2.3.2–2.8.2, appendix A).
 * @param {any} doc
 */
function rfc8439(doc) {
  const result = group();
  for (const v of doc.block) {
    check(result, toHex(chachapoly.chacha20Block(fromHex(v.key), v.counter, fromHex(v.nonce))) === v.keystream, `block ${v.section}`);
  }
  for (const v of doc.encrypt) {
    const out = chachapoly.chacha20(fromHex(v.key), v.counter, fromHex(v.nonce), fromHex(v.plaintext));
    check(result, toHex(out) === v.ciphertext, `encrypt ${v.section}`);
  }
  for (const v of doc.poly1305) {
    check(result, toHex(chachapoly.poly1305(fromHex(v.key), fromHex(v.message))) === v.tag, `poly1305 ${v.section}`);
  }
  for (const v of doc.keygen) {
    check(result, toHex(chachapoly.poly1305KeyGen(fromHex(v.key), fromHex(v.nonce))) === v.otk, `keygen ${v.section}`);
  }
  for (const useJavaScript of [true, false]) {
  // The AEAD through each implementation (JavaScript, then WebAssembly).
  chachapoly.useJavaScript(useJavaScript);
  const which = useJavaScript ? "js" : "wasm";
  check(result, chachapoly.implementation() === (useJavaScript ? "javascript" : "wasm"), `${which} implementation in use`);
  for (const v of doc.aead) {
    const sealed = chachapoly.seal(fromHex(v.key), fromHex(v.nonce), fromHex(v.plaintext), fromHex(v.aad));
    check(result, toHex(sealed) === v.ciphertext + v.tag, `aead seal ${v.section}`);
    const opened = chachapoly.open(fromHex(v.key), fromHex(v.nonce), fromHex(v.ciphertext + v.tag), fromHex(v.aad));
    check(result, toHex(opened) === v.plaintext, `aead open ${v.section}`);
    // One flipped bit anywhere in ciphertext or tag, or in the AAD, does not open.
    const tampered = fromHex(v.ciphertext + v.tag);
    tampered[tampered.length - 1] ^= 1;
    let refused = false;
    try { chachapoly.open(fromHex(v.key), fromHex(v.nonce), tampered, fromHex(v.aad)); } catch { refused = true; }
    check(result, refused, `aead tampered tag ${v.section} (${which})`);
  }
  }
  chachapoly.useJavaScript(false);
  // Both implementations agree on every length around the block sizes and on AADs that
  // do and do not fill a block.
  const random = (/** @type {number} */ n) => globalThis.crypto.getRandomValues(new Uint8Array(n));
  let disagreements = 0;
  for (let length = 0; length < 300; length++) {
    const key = random(32), nonce = random(12), plaintext = random(length * 7), aad = random(length % 40);
    chachapoly.useJavaScript(true);
    const javascript = toHex(chachapoly.seal(key, nonce, plaintext, aad));
    chachapoly.useJavaScript(false);
    const wasm = chachapoly.seal(key, nonce, plaintext, aad);
    if (toHex(wasm) !== javascript || toHex(chachapoly.open(key, nonce, wasm, aad)) !== toHex(plaintext)) disagreements += 1;
  }
  check(result, disagreements === 0, `${disagreements} lengths where the implementations disagree`);
  return result;
}

/**
 * The Noise vectors this page can run (25519 with ChaChaPoly or AESGCM and SHA256 or
 * SHA512; 448 and BLAKE2 have no WebCrypto and are counted as skipped): both sides built
 * from the vector, every handshake and transport message compared byte for byte, and the
 * handshake hash where the file has it.
 * @param {any[]} documents
 */
async function noise(documents) {
  const result = group();
  for (const doc of documents) {
    for (const v of doc.vectors) {
      const name = v.protocol_name;
      if (!name || !parseProtocol(name)) {
        result.skipped += 1;
        continue;
      }
      let ok = true;
      try {
        /** @param {boolean} initiator */
        const side = (initiator) => {
          const pick = (/** @type {string} */ key) => v[(initiator ? "init_" : "resp_") + key];
          return HandshakeState.create({
            protocolName: name,
            initiator,
            prologue: fromHex(pick("prologue") ?? ""),
            staticPrivate: pick("static") ? fromHex(pick("static")) : undefined,
            ephemeralPrivate: pick("ephemeral") ? fromHex(pick("ephemeral")) : undefined,
            remoteStatic: pick("remote_static") ? fromHex(pick("remote_static")) : undefined,
            psks: (pick("psks") ?? []).map(fromHex),
          });
        };
        const initiator = await side(true);
        const responder = await side(false);
        const oneWay = initiator.pattern.messages.length === 1;
        /** @type {import("../js/crypto/noise.js").CipherState[] | null} */
        let initiatorCiphers = null;
        /** @type {import("../js/crypto/noise.js").CipherState[] | null} */
        let responderCiphers = null;
        for (let index = 0; index < v.messages.length && ok; index++) {
          const message = v.messages[index];
          const payload = fromHex(message.payload);
          if (!initiatorCiphers || !responderCiphers) {
            const [writer, reader] = index % 2 === 0 ? [initiator, responder] : [responder, initiator];
            const ciphertext = await writer.writeMessage(payload);
            ok = toHex(ciphertext) === message.ciphertext && toHex(await reader.readMessage(ciphertext)) === message.payload;
            if (initiator.isComplete) {
              initiatorCiphers = initiator.split();
              responderCiphers = responder.split();
              if (v.handshake_hash) ok = ok && toHex(initiator.handshakeHash) === v.handshake_hash;
            }
          } else {
            // Transport messages alternate from where the handshake stopped; a one-way
            // pattern sends from the initiator only.
            const fromInitiator = oneWay || index % 2 === 0;
            const [sender, receiver] = fromInitiator
              ? [initiatorCiphers[0], responderCiphers[0]]
              : [responderCiphers[1], initiatorCiphers[1]];
            const ciphertext = await sender.encryptWithAd(new Uint8Array(0), payload);
            ok = toHex(ciphertext) === message.ciphertext
              && toHex(await receiver.decryptWithAd(new Uint8Array(0), ciphertext)) === message.payload;
          }
        }
      } catch (error) {
        ok = false;
      }
      check(result, ok, name);
    }
  }
  return result;
}

/**
 * CPace (draft-21 B.1, A.1) and Elligator 2 (RFC 9380 J.4).
 * @param {any} cpaceDoc
 * @param {any} ell2Doc
 */
async function cpace(cpaceDoc, ell2Doc) {
  const result = group();
  const vector = cpaceDoc.protocol_vector;
  const inputs = vector.inputs;
  const prs = fromHex(inputs.PRS.hex);
  const ci = fromHex(inputs.CI.hex);
  const sid = fromHex(inputs.sid);
  check(result, toHex(await generator(prs, ci, sid)) === vector.generator.g, "generator g");
  const a = await CPaceParty.create({ initiator: true, prs, ci, sid, ad: fromHex(inputs.ADa.hex), scalar: fromHex(inputs.ya) });
  const b = await CPaceParty.create({ initiator: false, prs, ci, sid, ad: fromHex(inputs.ADb.hex), scalar: fromHex(inputs.yb) });
  check(result, toHex(a.share) === vector.messages.Ya && toHex(b.share) === vector.messages.Yb, "Ya and Yb");
  const fromA = await a.receive(b.message);
  const fromB = await b.receive(a.message);
  check(result, toHex(fromA.isk) === vector.ISK_initiator_responder.ISK && toHex(fromB.isk) === vector.ISK_initiator_responder.ISK, "ISK");
  check(result, toHex(fromA.sidOutput) === vector.sid_output.ir && toHex(fromB.sidOutput) === vector.sid_output.ir, "sid_output");
  let again = false;
  try { await a.receive(b.message); } catch { again = true; }
  check(result, again, "a second receive is refused");
  const low = cpaceDoc.low_order_points;
  for (const point of low.cases) {
    let output = "abort";
    try { output = toHex(await x25519(fromHex(low.s), fromHex(point.u))); } catch { /* all-zero: refused */ }
    check(result, point.must_abort ? output === "abort" : output === point.q, `low-order ${point.name}`);
  }
  for (const [name, suite] of Object.entries(ell2Doc.suites)) {
    for (const v of /** @type {any} */ (suite).vectors) {
      const points = v.Q ? [v.Q] : [v.Q0, v.Q1];
      v.u.forEach((/** @type {string} */ u, /** @type {number} */ index) => {
        check(result, mapToCurveU(BigInt("0x" + u)) === BigInt("0x" + points[index].x), `${name} ${v.msg}`);
      });
    }
  }
  return result;
}

/**
 * Runs every group; `vectors` is where ../shared/vectors is served.
 * @param {string} vectors
 * @returns {Promise<Record<string, GroupResult>>}
 */
export async function runCryptoVectors(vectors) {
  await chachapoly.ready;
  const [rfc, cacophony, snow, cpaceDoc, ell2Doc] = await Promise.all([
    load(new URL("./vectors/rfc8439.json", import.meta.url).href),
    load(`${vectors}/noise/cacophony.txt`),
    load(`${vectors}/noise/snow.txt`),
    load(`${vectors}/cpace/cpace-x25519.json`),
    load(`${vectors}/cpace/rfc9380-curve25519-ell2.json`),
  ]);
  return {
    rfc8439: rfc8439(rfc),
    noise: await noise([cacophony, snow]),
    cpace: await cpace(cpaceDoc, ell2Doc),
  };
}
