// Contacts (docs/protocol.md, "Contacts"): two people who paired once with a v2 invite
// and saved each other hold a shared contact secret and each other's long-term identity
// key, and can call each other again without a new invite. A call's invite (six digits
// for the server, three words it never sees) comes from the secret and the five-minute
// window; both sides use their identity key as the Noise static key, and the pairing ends
// unless the peer's is the pinned one. The same derivations as ContactCall.swift.

import { constantTimeEqual, fromHex, toHex, utf8 } from "../crypto/bytes.js";
import { x25519Public } from "../crypto/x25519.js";
import { hkdf } from "../signal/ratchet.js";
import { WORDS } from "../v2/wordlist.js";

/** Seconds per rendezvous window. */
export const CALL_WINDOW_SECONDS = 300;

/**
 * Calls per window and contact: the server keeps a code taken after its room was entered,
 * so each call of a window takes the next free slot.
 */
export const CALL_SLOTS = 8;

/** How many contacts a page waits for at once (the server keeps twenty live codes per address). */
export const LISTEN_LIMIT = 10;

/**
 * @typedef {{ id?: string, name: string, identity: Uint8Array, secret: Uint8Array, verified: boolean, savedAt: number }} Contact
 * `id`: the vault record's (random, made on the first save); `identity`: the contact's X25519 identity key (32 bytes); `secret`: the contact secret
 * (32 bytes); `savedAt`: ms since 1970.
 */

/** @param {number} nowMs ms since 1970 @returns {number} the window it falls in */
export function callWindow(nowMs) {
  return Math.floor(nowMs / 1000 / CALL_WINDOW_SECONDS);
}

/**
 * The invite of `window`'s `slot` for the contact whose secret is `secret`:
 * `okm = HKDF-SHA256(secret, "", "inviso call v1" ‖ uint64_be(window) [‖ uint8(slot)], 16)`
 * (the slot byte only from slot 1), code = `uint32_be(okm[0..<4]) mod 10⁶`, words = the
 * three 11-bit indices in `okm[4..<9]`.
 * @param {Uint8Array} secret @param {number} window @param {number} [slot] 0 ..< CALL_SLOTS
 * @returns {Promise<import("./invite.js").Invite>}
 */
export async function callInvite(secret, window, slot = 0) {
  if (!Number.isInteger(slot) || slot < 0 || slot >= CALL_SLOTS) throw new RangeError("a call slot is 0 ..< CALL_SLOTS");
  const label = utf8("inviso call v1");
  const info = new Uint8Array(label.length + 8 + (slot > 0 ? 1 : 0));
  info.set(label);
  new DataView(info.buffer).setBigUint64(label.length, BigInt.asUintN(64, BigInt(window)));
  if (slot > 0) info[label.length + 8] = slot;
  const okm = await hkdf(secret, new Uint8Array(0), info, 16);
  const view = new DataView(okm.buffer, okm.byteOffset);
  const code = String(view.getUint32(0) % 1000000).padStart(6, "0");
  // 40 bits; the top 33 are the words, most significant first.
  let bits = 0n;
  for (const byte of okm.subarray(4, 9)) bits = (bits << 8n) | BigInt(byte);
  const words = [0, 1, 2].map((position) => WORDS[Number((bits >> BigInt(29 - 11 * position)) & 0x7ffn)]);
  return { joinCode: code, words };
}

/**
 * Whether `a` sorts before `b` byte by byte (Swift's `lexicographicallyPrecedes`).
 * @param {Uint8Array} a @param {Uint8Array} b
 */
function precedes(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i];
  return a.length < b.length;
}

/**
 * The contact secret both sides derive once each sent its identity key and 32 random
 * bytes: `HKDF-SHA256(nonce_lo ‖ nonce_hi, identity_lo ‖ identity_hi, "inviso contact v1", 32)`,
 * `lo` being the side with the lower identity key.
 * @param {{ ourIdentity: Uint8Array, ourNonce: Uint8Array, theirIdentity: Uint8Array, theirNonce: Uint8Array }} parts
 * @returns {Promise<Uint8Array>}
 */
export async function contactSecret({ ourIdentity, ourNonce, theirIdentity, theirNonce }) {
  const low = precedes(ourIdentity, theirIdentity);
  const ikm = low ? [ourNonce, theirNonce] : [theirNonce, ourNonce];
  const salt = low ? [ourIdentity, theirIdentity] : [theirIdentity, ourIdentity];
  const join = (/** @type {Uint8Array[]} */ parts) => {
    const out = new Uint8Array(parts[0].length + parts[1].length);
    out.set(parts[0]);
    out.set(parts[1], parts[0].length);
    return out;
  };
  return hkdf(join(ikm), join(salt), utf8("inviso contact v1"), 32);
}

/**
 * The first 16 hex digits of an identity key, to tell contacts apart (as `inviso contacts`).
 * @param {Uint8Array} identity
 */
export function fingerprint(identity) {
  return toHex(identity.subarray(0, 8));
}

/**
 * A `{"type":"contact"}` payload from the peer, checked: its identity key and nonce, or
 * null when it is malformed.
 * @param {any} message
 * @returns {{ identity: Uint8Array, nonce: Uint8Array } | null}
 */
export function parseContactOffer(message) {
  const hex = (/** @type {unknown} */ value) => typeof value === "string" && /^[0-9a-fA-F]{64}$/.test(value) ? fromHex(value) : null;
  const identity = hex(message?.identity);
  const nonce = hex(message?.nonce);
  if (!identity || !nonce || identity.every((byte) => byte === 0)) return null;
  return { identity, nonce };
}

/**
 * The contact called `name` (letter case aside).
 * @param {Contact[]} contacts @param {string} name
 */
function byName(contacts, name) {
  const wanted = name.trim().toLowerCase();
  return contacts.find((contact) => contact.name.toLowerCase() === wanted);
}

/**
 * The contact whose identity key is `identity` (compared in constant time).
 * @param {Contact[]} contacts @param {Uint8Array} identity
 */
function byIdentity(contacts, identity) {
  return contacts.find((contact) => constantTimeEqual(contact.identity, identity));
}

/**
 * The contacts and this browser's identity, kept sealed in the vault (records of kind
 * `contact` under random ids, and `identity` `self`).
 */
export class ContactBook {
  /** @param {import("../store/vault.js").Vault} vault */
  constructor(vault) {
    this.vault = vault;
    /** @type {Promise<Uint8Array> | undefined} */
    this.made = undefined;
  }

  /**
   * This browser's identity private key, made on first use (the same for every contact).
   * @returns {Promise<Uint8Array>}
   */
  identity() {
    // One promise: two callers at once must not make two keys.
    this.made ??= (async () => {
      const stored = await this.vault.get("self", "identity");
      if (stored?.privateKey instanceof Uint8Array && stored.privateKey.length === 32) return stored.privateKey;
      const privateKey = globalThis.crypto.getRandomValues(new Uint8Array(32));
      await this.vault.put("self", { version: 1, privateKey }, "identity");
      return privateKey;
    })();
    this.made.catch(() => {
      this.made = undefined;
    });
    return this.made;
  }

  /** @returns {Promise<Uint8Array>} */
  async identityPublic() {
    return x25519Public(await this.identity());
  }

  /**
   * Every contact that opens, by name.
   * @returns {Promise<Contact[]>}
   */
  async all() {
    /** @type {Contact[]} */
    const contacts = [];
    for (const id of await this.vault.ids("contact")) {
      let stored;
      try {
        stored = await this.vault.get(id, "contact");
      } catch {
        continue; // damaged: not offered
      }
      if (typeof stored?.name === "string" && stored.identity instanceof Uint8Array && stored.identity.length === 32
        && stored.secret instanceof Uint8Array && stored.secret.length === 32) {
        contacts.push({ id, name: stored.name, identity: stored.identity, secret: stored.secret, verified: stored.verified === true, savedAt: Number(stored.savedAt) || 0 });
      }
    }
    return contacts.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** @param {string} name @returns {Promise<Contact | undefined>} */
  async named(name) {
    return byName(await this.all(), name);
  }

  /** @param {Uint8Array} identity @returns {Promise<Contact | undefined>} */
  async withIdentity(identity) {
    return byIdentity(await this.all(), identity);
  }

  /**
   * Saves `contact` (replacing the one with its identity key); the name must be free.
   * @param {Contact} contact
   */
  async save(contact) {
    const name = contact.name.trim();
    if (name.length === 0 || name.length > 64) throw new Error("a contact's name has 1 to 64 characters");
    const all = await this.all();
    const other = byName(all, name);
    if (other && !constantTimeEqual(other.identity, contact.identity)) throw new Error(`there is already a contact called ${name}`);
    const id = contact.id ?? byIdentity(all, contact.identity)?.id ?? toHex(globalThis.crypto.getRandomValues(new Uint8Array(8)));
    const { name: _name, id: _id, ...rest } = contact;
    await this.vault.put(id, { version: 1, ...rest, name }, "contact");
  }

  /** @param {Contact} contact */
  async delete(contact) {
    const id = contact.id ?? (await this.withIdentity(contact.identity))?.id;
    if (id) await this.vault.delete(id, "contact");
  }
}
