// Files in a chat, with the CLI's protocol (docs/protocol.md "Files"): control messages
// are ordinary session messages (JSON `file_offer`, `file_answer`, `file_request`,
// `file_progress`, `file_digest`, `file_complete`, `file_cancel`), sealed, numbered and
// resent by the chat's reliable layer; chunks travel beside them in frames
//
//   0x04 ‖ id (16) ‖ index (u64 BE) ‖ AES-256-GCM(key, nonce = 0⁴ ‖ index,
//                                     aad = "inviso-file-v1" ‖ id ‖ index, chunk)
//
// under the file's own key, which reaches the receiver only inside the ratchet (in the
// offer). The sender keeps a window of chunks past the receiver's last `file_progress` (12
// on the relay, 64 on a DataChannel); the receiver takes only the next chunk it needs, asks
// again from what it holds after a gap or 5 s of silence, and checks the SHA-256 at the
// end. A page keeps a file it receives in memory (at most MAX_FILE) and offers it as a
// download; nothing of a transfer survives a reload.

import { concat, constantTimeEqual, fromHex, toHex, utf8 } from "../crypto/bytes.js";

export const CHUNK_SIZE = 60 * 1024;
/** The largest file a page sends or accepts (it holds the file in memory). */
export const MAX_FILE = 512 * 1024 * 1024;
export const FRAME_FILE_CHUNK = 0x04;
const LABEL = utf8("inviso-file-v1");
const WINDOW = { relay: 12, direct: 64 };
const PROGRESS_EVERY = { relay: 4, direct: 16 };
const BATCH = 8;
const STALL_MS = 5000;

/** @param {number} value @returns {Uint8Array} 8 bytes big-endian */
function u64(value) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out;
}

/** @param {Uint8Array} bytes @param {number} offset */
function readU64(bytes, offset) {
  return Number(new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0));
}

/**
 * @typedef {{ id: Uint8Array, size: number, chunkSize: number, key: Uint8Array, name: string }} Offer
 */

/**
 * The offer's wire form: id (16) ‖ size (u64) ‖ chunk size (u32) ‖ key (32) ‖ name
 * length (u16) ‖ name (UTF-8).
 * @param {Offer} offer
 */
export function encodeOffer(offer) {
  const name = utf8(offer.name);
  const fixed = new Uint8Array(16 + 8 + 4 + 32 + 2);
  const view = new DataView(fixed.buffer);
  fixed.set(offer.id, 0);
  view.setBigUint64(16, BigInt(offer.size));
  view.setUint32(24, offer.chunkSize);
  fixed.set(offer.key, 28);
  view.setUint16(60, name.length);
  return concat(fixed, name);
}

/**
 * @param {Uint8Array} bytes @returns {Offer}
 * @throws {Error} on anything the CLI would refuse (short, a chunk size outside 1 KiB…1 MiB,
 *   a size over 1 TiB, a name over 1,024 bytes or not UTF-8, trailing bytes)
 */
export function decodeOffer(bytes) {
  if (bytes.length < 62) throw new Error("short file offer");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = view.getBigUint64(16);
  const chunkSize = view.getUint32(24);
  const nameLength = view.getUint16(60);
  if (bytes.length !== 62 + nameLength || nameLength > 1024) throw new Error("file offer name");
  if (size > 1n << 40n || chunkSize < 1024 || chunkSize > 1048576) throw new Error("file offer size");
  const name = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(62));
  return { id: bytes.slice(0, 16), size: Number(size), chunkSize, key: bytes.slice(28, 60), name };
}

/**
 * A sender-chosen name made safe to show and to save: its last path component, without
 * control or format characters, leading dots or surrounding spaces; "file" when nothing
 * is left; at most 255 UTF-8 bytes (as the CLI's `SafeFileName`).
 * @param {string} name
 */
export function sanitizeName(name) {
  const last = name.split(/[/\\]/).filter((part) => part.length > 0).pop() ?? "";
  let cleaned = last.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]/gu, "").trim();
  cleaned = cleaned.replace(/^\.+/, "").trim();
  if (!cleaned) cleaned = "file";
  while (utf8(cleaned).length > 255) cleaned = [...cleaned].slice(0, -1).join("");
  return cleaned;
}

/** @param {number} index */
function nonce(index) {
  return concat(new Uint8Array(4), u64(index));
}

/** @param {Uint8Array} id @param {number} index */
function aad(id, index) {
  return concat(LABEL, id, u64(index));
}

/** @param {Uint8Array} raw */
export function chunkKey(raw) {
  return globalThis.crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/**
 * A chunk frame.
 * @param {CryptoKey} key @param {Uint8Array} id @param {number} index @param {Uint8Array} chunk
 */
export async function sealChunk(key, id, index, chunk) {
  const sealed = new Uint8Array(
    await globalThis.crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce(index), additionalData: aad(id, index) }, key, chunk));
  return concat(new Uint8Array([FRAME_FILE_CHUNK]), id, u64(index), sealed);
}

/**
 * The id (hex) and index of a chunk frame, or null when it is not one.
 * @param {Uint8Array} frame
 */
export function chunkHeader(frame) {
  if (frame.length < 25 + 16 || frame[0] !== FRAME_FILE_CHUNK) return null;
  return { id: toHex(frame.subarray(1, 17)), index: readU64(frame, 17) };
}

/**
 * @param {CryptoKey} key @param {Uint8Array} id @param {number} index @param {Uint8Array} frame
 * @returns {Promise<Uint8Array>} the chunk
 * @throws when it does not open (moved, replayed, forged)
 */
export async function openChunk(key, id, index, frame) {
  return new Uint8Array(await globalThis.crypto.subtle.decrypt(
    { name: "AES-GCM", iv: nonce(index), additionalData: aad(id, index) }, key, frame.subarray(25)));
}

/**
 * @typedef {{ type: "file_incoming", id: string, name: string, size: number }
 *   | { type: "file_offered", id: string, name: string, size: number }
 *   | { type: "file_progress", id: string, bytes: number, total: number, sending: boolean }
 *   | { type: "file_received", id: string, name: string, size: number, url: string, sha256: string }
 *   | { type: "file_sent", id: string }
 *   | { type: "file_failed", id: string, reason: string }
 *   | { type: "file_cancelled", id: string, byPeer: boolean }
 *   | { type: "file_refused", id: string }} FileEvent
 *
 * @typedef {{
 *   control: (message: object) => void,
 *   frame: (frame: Uint8Array) => void,
 *   direct: () => boolean,
 *   emit: (event: FileEvent) => void,
 *   now: () => number,
 * }} FileHost
 *
 * @typedef {{ offer: Offer, key: CryptoKey, blob: Blob, count: number, digest: Promise<Uint8Array>,
 *   streaming: boolean, next: number, acked: number, generation: number, pumping: boolean,
 *   digestSent: boolean, lastProgress: number }} Sending
 * @typedef {{ offer: Offer, key: CryptoKey, count: number, parts: Uint8Array[], held: number,
 *   reported: number, digest: Uint8Array | null, lastHeard: number, lastAsked: number, finishing: boolean }} Receiving
 */

export class FileTransfers {
  /** @param {FileHost} host */
  constructor(host) {
    this.host = host;
    /** @type {Map<string, Sending>} */
    this.sending = new Map();
    /** @type {Map<string, Receiving>} */
    this.receiving = new Map();
    /** @type {Map<string, Offer>} */
    this.pending = new Map();
    /** Chunks are opened one after another (each waits for the one before). */
    /** @type {Promise<void>} */
    this.chunks = Promise.resolve();
  }

  get window() {
    return this.host.direct() ? WINDOW.direct : WINDOW.relay;
  }

  /**
   * Offers `blob` under `name`; returns its id.
   * @param {Blob} blob @param {string} name
   */
  async offer(blob, name) {
    if (blob.size > MAX_FILE) throw new Error(`a page sends files up to ${MAX_FILE / 1048576} MiB; use the inviso command for larger ones`);
    const random = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
    /** @type {Offer} */
    const offer = { id: random(new Uint8Array(16)), size: blob.size, chunkSize: CHUNK_SIZE, key: random(new Uint8Array(32)), name: sanitizeName(name) };
    const id = toHex(offer.id);
    this.sending.set(id, {
      offer, key: await chunkKey(offer.key), blob, count: Math.ceil(offer.size / offer.chunkSize),
      digest: blob.arrayBuffer().then((bytes) => globalThis.crypto.subtle.digest("SHA-256", bytes)).then((hash) => new Uint8Array(hash)),
      streaming: false, next: 0, acked: 0, generation: 0, pumping: false, digestSent: false, lastProgress: this.host.now(),
    });
    this.host.control({ type: "file_offer", offer: toHex(encodeOffer(offer)) });
    this.host.emit({ type: "file_offered", id, name: offer.name, size: offer.size });
    return id;
  }

  /** @param {string} id */
  accept(id) {
    const offer = this.pending.get(id);
    if (!offer) return;
    this.pending.delete(id);
    chunkKey(offer.key).then((key) => {
      const now = this.host.now();
      this.receiving.set(id, {
        offer, key, count: Math.ceil(offer.size / offer.chunkSize), parts: [], held: 0, reported: 0, digest: null,
        lastHeard: now, lastAsked: 0, finishing: false,
      });
      this.host.control({ type: "file_answer", id, accepted: true });
      this.host.control({ type: "file_request", id, from: 0 });
    });
  }

  /** @param {string} id */
  refuse(id) {
    if (!this.pending.delete(id)) return;
    this.host.control({ type: "file_answer", id, accepted: false });
  }

  /** @param {string} id */
  cancel(id) {
    if (this.pending.delete(id)) {
      this.host.control({ type: "file_answer", id, accepted: false });
    } else if (this.sending.delete(id) || this.receiving.delete(id)) {
      this.host.control({ type: "file_cancel", id });
    } else {
      return;
    }
    this.host.emit({ type: "file_cancelled", id, byPeer: false });
  }

  /**
   * A control message from the peer (already delivered in order by the chat).
   * @param {any} message
   */
  control(message) {
    const id = typeof message.id === "string" && /^[0-9a-f]{32}$/.test(message.id) ? message.id : "";
    const count = (/** @type {unknown} */ value) => (Number.isSafeInteger(value) && /** @type {number} */ (value) >= 0 ? /** @type {number} */ (value) : -1);
    switch (message.type) {
      case "file_offer": {
        let offer;
        try {
          offer = decodeOffer(fromHex(String(message.offer)));
        } catch {
          return;
        }
        const offerID = toHex(offer.id);
        if (this.pending.has(offerID) || this.receiving.has(offerID) || this.sending.has(offerID)) return;
        if (offer.size > MAX_FILE) {
          this.host.control({ type: "file_answer", id: offerID, accepted: false });
          this.host.emit({ type: "file_failed", id: offerID, reason: `${sanitizeName(offer.name)} is larger than a page takes (${MAX_FILE / 1048576} MiB); refused` });
          return;
        }
        this.pending.set(offerID, offer);
        this.host.emit({ type: "file_incoming", id: offerID, name: sanitizeName(offer.name), size: offer.size });
        return;
      }
      case "file_answer":
        if (message.accepted === false && this.sending.delete(id)) this.host.emit({ type: "file_refused", id });
        return;
      case "file_request": {
        const file = this.sending.get(id);
        const from = count(message.from);
        if (!file) {
          if (id && !this.receiving.has(id)) this.host.control({ type: "file_cancel", id });
          return;
        }
        if (from < 0 || from > file.count) return;
        file.streaming = true;
        file.acked = Math.max(file.acked, from);
        file.next = from;
        file.generation += 1;
        file.lastProgress = this.host.now();
        this.pump(id);
        return;
      }
      case "file_progress": {
        const file = this.sending.get(id);
        const held = count(message.held);
        if (!file || held < 0 || held > file.count || held <= file.acked) return;
        file.acked = held;
        file.next = Math.max(file.next, held);
        file.lastProgress = this.host.now();
        this.host.emit({ type: "file_progress", id, bytes: Math.min(held * file.offer.chunkSize, file.offer.size), total: file.offer.size, sending: true });
        this.pump(id);
        return;
      }
      case "file_digest": {
        const file = this.receiving.get(id);
        if (!file || file.digest || typeof message.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(message.sha256)) return;
        file.digest = fromHex(message.sha256);
        if (file.held === file.count) this.finish(id, file);
        return;
      }
      case "file_complete": {
        if (!this.sending.delete(id)) return;
        if (message.verified === true) this.host.emit({ type: "file_sent", id });
        else this.host.emit({ type: "file_failed", id, reason: "the peer's SHA-256 did not match" });
        return;
      }
      case "file_cancel":
        if (this.pending.delete(id) || this.sending.delete(id) || this.receiving.delete(id)) {
          this.host.emit({ type: "file_cancelled", id, byPeer: true });
        }
        return;
      default:
    }
  }

  /**
   * A chunk frame from either path (queued: chunks open one at a time, in arrival order).
   * @param {Uint8Array} frame
   */
  chunk(frame) {
    this.chunks = this.chunks.then(() => this.openNext(frame)).catch(() => {});
  }

  /** @param {Uint8Array} frame */
  async openNext(frame) {
    const header = chunkHeader(frame);
    const file = header && this.receiving.get(header.id);
    if (!header || !file || file.finishing) return;
    if (header.index !== file.held) {
      // Earlier: a copy, dropped. Later: the path lost some; ask again (once per stall interval).
      if (header.index > file.held) this.ask(header.id, file, false);
      return;
    }
    let chunk;
    try {
      chunk = await openChunk(file.key, file.offer.id, header.index, frame);
    } catch {
      return; // dropped like a lost chunk; the gap asks for it again
    }
    const expected = Math.min(file.offer.chunkSize, file.offer.size - header.index * file.offer.chunkSize);
    if (chunk.length !== expected || this.receiving.get(header.id) !== file) return;
    file.parts.push(chunk);
    file.held += 1;
    file.lastHeard = this.host.now();
    const every = this.host.direct() ? PROGRESS_EVERY.direct : PROGRESS_EVERY.relay;
    if (file.held === file.count || file.held >= file.reported + every) {
      file.reported = file.held;
      this.host.control({ type: "file_progress", id: header.id, held: file.held });
      this.host.emit({ type: "file_progress", id: header.id, bytes: Math.min(file.held * file.offer.chunkSize, file.offer.size), total: file.offer.size, sending: false });
    }
    if (file.held === file.count && file.digest) this.finish(header.id, file);
  }

  /** @param {string} id @param {Receiving} file @param {boolean} always */
  ask(id, file, always) {
    const now = this.host.now();
    if (!always && now - file.lastAsked < STALL_MS) return;
    file.lastAsked = now;
    file.lastHeard = now;
    this.host.control({ type: "file_request", id, from: file.held });
  }

  /** @param {string} id @param {Receiving} file */
  async finish(id, file) {
    if (file.finishing) return;
    file.finishing = true;
    const blob = new Blob(/** @type {BlobPart[]} */ (file.parts), { type: "application/octet-stream" });
    const hash = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", await blob.arrayBuffer()));
    this.receiving.delete(id);
    const verified = file.digest !== null && constantTimeEqual(hash, file.digest);
    this.host.control({ type: "file_complete", id, verified });
    if (verified) {
      this.host.emit({ type: "file_received", id, name: sanitizeName(file.offer.name), size: file.offer.size, url: URL.createObjectURL(blob), sha256: toHex(hash) });
    } else {
      this.host.emit({ type: "file_failed", id, reason: "its SHA-256 does not match; it was discarded" });
    }
  }

  /**
   * Reads, seals and sends chunks while the window allows, a batch at a time; after the
   * last one, the digest.
   * @param {string} id
   */
  async pump(id) {
    const file = this.sending.get(id);
    if (!file || file.pumping) return;
    file.pumping = true;
    try {
      while (this.sending.get(id) === file && file.streaming && file.next < file.count && file.next < file.acked + this.window) {
        const generation = file.generation;
        const first = file.next;
        const end = Math.min(first + BATCH, file.count, file.acked + this.window);
        file.next = end;
        const size = file.offer.chunkSize;
        const bytes = new Uint8Array(await file.blob.slice(first * size, Math.min(end * size, file.offer.size)).arrayBuffer());
        for (let index = first; index < end; index++) {
          const frame = await sealChunk(file.key, file.offer.id, index, bytes.subarray((index - first) * size, (index - first + 1) * size));
          if (file.generation !== generation) break; // sent again from what the receiver holds
          this.host.frame(frame);
        }
      }
      if (this.sending.get(id) === file && file.next >= file.count && !file.digestSent) {
        file.digestSent = true;
        this.host.control({ type: "file_digest", id, sha256: toHex(await file.digest) });
      }
    } catch {
      if (this.sending.delete(id)) {
        this.host.control({ type: "file_cancel", id });
        this.host.emit({ type: "file_failed", id, reason: "the file cannot be read any more" });
      }
    } finally {
      file.pumping = false;
    }
  }

  /** Sending moved to another path: everything outstanding goes again from what the receiver holds. */
  pathChanged() {
    for (const [id, file] of this.sending) {
      if (!file.streaming) continue;
      file.next = file.acked;
      file.generation += 1;
      file.lastProgress = this.host.now();
      this.pump(id);
    }
  }

  /** The peer is back (after a reconnect): receivers ask for what they miss. */
  resync() {
    for (const [id, file] of this.receiving) if (file.held < file.count) this.ask(id, file, true);
  }

  /** The stall check (the chat calls it every second). */
  tick() {
    const now = this.host.now();
    for (const [id, file] of this.sending) {
      if (file.streaming && file.next > file.acked && now - file.lastProgress >= STALL_MS) {
        file.next = file.acked;
        file.generation += 1;
        file.lastProgress = now;
        this.pump(id);
      }
    }
    for (const [id, file] of this.receiving) {
      if (file.held < file.count && now - file.lastHeard >= STALL_MS) this.ask(id, file, true);
    }
  }
}
