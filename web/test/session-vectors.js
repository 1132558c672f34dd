// The page's Double Ratchet, safety number and v2 pairing against vectors: libsignal's
// chain step and fingerprints (../shared/vectors/signal), and the v2 session the Swift
// side writes (vectors/v2-session.json, Tests/InvisoKitTests/V2WebVectorTests.swift): the
// page plays each side with that side's recorded randomness and must send the same frames
// byte for byte, open the other side's, and show the same safety number.

import { fromHex, toHex, utf8 } from "../js/crypto/bytes.js";
import { safetyNumber } from "../js/signal/fingerprint.js";
import { chainStep, messageKeys } from "../js/signal/ratchet.js";
import { V1Channel, messageKey, sessionKey } from "../js/v1/channel.js";
import { V2Pairing } from "../js/v2/pairing.js";
import { check, group, load } from "./support.js";

/** @typedef {import("./support.js").GroupResult} GroupResult */

/**
 * Bytes handed out in order from a recorded stream.
 * @param {string} hex
 */
function recorded(hex) {
  const bytes = fromHex(hex);
  let offset = 0;
  const random = (/** @type {number} */ count) => {
    if (offset + count > bytes.length) throw new Error("the recorded randomness ran out");
    const out = bytes.slice(offset, offset + count);
    offset += count;
    return out;
  };
  return { random, used: () => offset, total: bytes.length };
}

/**
 * libsignal's chain step and safety numbers.
 * @param {any} chainDoc
 * @param {any} fingerprintDoc
 */
async function signal(chainDoc, fingerprintDoc) {
  const result = group();
  for (const v of chainDoc.vectors) {
    const step = await chainStep(fromHex(v.inputs.chain_key));
    const keys = await messageKeys(step.seed);
    check(result, toHex(keys.cipherKey) === v.expected.cipher_key && toHex(keys.macKey) === v.expected.mac_key, `${v.name} keys`);
    check(result, toHex(step.next) === v.expected.next_chain_key, `${v.name} next chain key`);
  }
  for (const v of fingerprintDoc.vectors) {
    const inputs = v.inputs;
    if (!inputs?.alice_identity_key || !v.expected?.displayable) {
      result.skipped += 1;
      continue;
    }
    const digits = await safetyNumber({
      localStableID: fromHex(inputs.alice_stable_id_hex),
      localKey: fromHex(inputs.alice_identity_key),
      remoteStableID: fromHex(inputs.bob_stable_id_hex),
      remoteKey: fromHex(inputs.bob_identity_key),
      iterations: inputs.iterations,
    });
    check(result, digits === v.expected.displayable, `${v.name} displayable`);
  }
  return result;
}

/**
 * Replays the Swift side's v2 session with the page as `role` (the other side's frames
 * come from the vector).
 * @param {any} vector @param {"creator" | "joiner"} role @param {GroupResult} result
 */
async function replay(vector, role, result) {
  const words = vector.invite.split("-").slice(1);
  const stream = recorded(role === "creator" ? vector.creator_random : vector.joiner_random);
  const pairing = await V2Pairing.create({
    role,
    words,
    roomID: vector.room_id,
    staticPrivate: fromHex(role === "creator" ? vector.creator_static_private : vector.joiner_static_private),
    random: stream.random,
  });
  /** @type {import("../js/v2/pairing.js").V2Session | null} */
  let session = null;
  const expected = vector.pairing_frames.filter((/** @type {any} */ f) => f.from === role).map((/** @type {any} */ f) => f.frame);
  /** @type {string[]} */
  const sent = [];
  /** @param {import("../js/v2/pairing.js").Action[]} actions */
  const take = (actions) => {
    for (const action of actions) {
      if (action.type === "send") sent.push(toHex(action.frame));
      if (action.type === "established") session = action.session;
      if (action.type === "failed") throw action.error;
    }
  };
  take(pairing.start());
  for (const frame of vector.pairing_frames) {
    if (frame.from !== role) take(await pairing.receive(fromHex(frame.frame), stream.random));
  }
  check(result, sent.length === expected.length && sent.every((frame, index) => frame === expected[index]), `${role}: pairing frames`);
  const established = /** @type {import("../js/v2/pairing.js").V2Session | null} */ (session);
  check(result, established !== null, `${role}: established`);
  if (!established) return;
  // The conversation: our messages must be the vector's; theirs must open, in the order
  // the Swift run opened them (the joiner took the creator's second message first).
  const messages = vector.messages;
  const ours = messages.filter((/** @type {any} */ m) => m.from === role);
  const theirs = messages.filter((/** @type {any} */ m) => m.from !== role);
  const openOrder = role === "joiner" ? [theirs[1], theirs[0], theirs[2]] : [theirs[0], theirs[1]];
  // Interleave as the Swift run did: creator sends 2; joiner opens 2, sends 1; creator
  // opens 1, sends 1; joiner opens 1, sends 1; creator opens 1.
  const script = role === "creator"
    ? ["send", "send", "open", "send", "open"]
    : ["open", "open", "send", "open", "send"];
  let sendIndex = 0;
  let openIndex = 0;
  for (const step of script) {
    if (step === "send") {
      const message = ours[sendIndex++];
      const frame = await established.seal(utf8(message.text));
      check(result, toHex(frame) === message.frame, `${role}: message "${message.text}"`);
    } else {
      const message = openOrder[openIndex++];
      const text = new TextDecoder().decode(await established.open(fromHex(message.frame), stream.random));
      check(result, text === message.text, `${role}: opens "${message.text}"`);
    }
  }
  // A replayed frame is refused and changes nothing.
  let refused = false;
  try { await established.open(fromHex(openOrder[0].frame), stream.random); } catch { refused = true; }
  check(result, refused, `${role}: a replay is refused`);
  check(result, stream.used() === stream.total, `${role}: used exactly the recorded randomness`);
  check(result, (await established.safetyNumber()) === vector.safety_number, `${role}: safety number`);
}

/**
 * v1 as the iOS app ships it: frames made by the app's own code
 * (../shared/vectors/inviso-v1/app-v1.json) open, with the session and message keys the
 * vector gives; a replay and our own frame reflected back are refused.
 * @param {any} doc
 */
async function v1(doc) {
  const result = group();
  const alice = await sessionKey(fromHex(doc.alice_private), fromHex(doc.bob_public));
  const bob = await sessionKey(fromHex(doc.bob_private), fromHex(doc.alice_public));
  check(result, toHex(alice) === doc.session_key && toHex(bob) === doc.session_key, "session key");
  const channels = { alice: new V1Channel(alice, "creator"), bob: new V1Channel(bob, "joiner") };
  for (const message of doc.messages) {
    check(result, toHex(await messageKey(alice, message.counter)) === message.message_key, `message key ${message.counter}`);
    const receiver = message.sender === "alice" ? channels.bob : channels.alice;
    try {
      const { plaintext } = await receiver.open(message.wire_json);
      check(result, new TextDecoder().decode(plaintext) === message.plaintext, `opens ${message.sender} #${message.counter}`);
    } catch (error) {
      check(result, false, `opens ${message.sender} #${message.counter}: ${/** @type {any} */ (error).code}`);
    }
  }
  /** @param {() => Promise<unknown>} action @param {string} code */
  const refuses = async (action, code) => {
    try {
      await action();
      return false;
    } catch (error) {
      return /** @type {any} */ (error).code === code;
    }
  };
  const first = doc.messages.find((/** @type {any} */ m) => m.sender === "alice");
  check(result, await refuses(() => channels.bob.open(first.wire_json), "replayed"), "a replay is refused");
  const fresh = new V1Channel(alice, "creator");
  fresh.sendCounter = 1000;
  const ours = await fresh.seal(utf8("to bob"));
  check(result, await refuses(() => fresh.open(ours), "reflected"), "our own frame reflected back is refused");
  check(result, new TextDecoder().decode((await channels.bob.open(ours)).plaintext) === "to bob", "bob opens ours");
  return result;
}

/**
 * Runs every group; `vectors` is where ../shared/vectors is served.
 * @param {string} vectors
 * @returns {Promise<Record<string, GroupResult>>}
 */
export async function runSessionVectors(vectors) {
  const [chainDoc, fingerprintDoc, v1Doc, v2] = await Promise.all([
    load(`${vectors}/signal/chain-key.json`),
    load(`${vectors}/signal/fingerprint.json`),
    load(`${vectors}/inviso-v1/app-v1.json`),
    load(new URL("./vectors/v2-session.json", import.meta.url).href),
  ]);
  const v2Result = group();
  for (const role of /** @type {const} */ (["creator", "joiner"])) {
    try {
      await replay(v2, role, v2Result);
    } catch (error) {
      check(v2Result, false, `${role}: ${/** @type {Error} */ (error).message}`);
    }
  }
  return { signal: await signal(chainDoc, fingerprintDoc), v1: await v1(v1Doc), v2: v2Result };
}
