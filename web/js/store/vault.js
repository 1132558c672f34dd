// The page's store: chats kept in IndexedDB, each record sealed with AES-256-GCM under a
// key derived from a passphrase the user chooses (PBKDF2-HMAC-SHA-256, 600,000 rounds,
// a random 16-byte salt). Nothing is written in the clear but the salt, the round count
// and the records' ids. A wrong passphrase is told apart from damage by a sealed check
// value written when the vault was made.
//
//   database "inviso", object store "vault":
//     "meta"        → { salt, iterations, check: { iv, sealed } }
//     "chat:<id>"      → { iv, sealed }   sealed = AES-GCM(key, iv, JSON, aad = "chat:<id>")
//     "contact:<id>"   → the same, for a saved contact (js/chat/contacts.js)
//     "identity:self"  → the same, for this browser's long-term identity key
//
// Ids are random (never a key or a name), so the clear text tells only how many records
// of each kind there are.
//
// The AAD binds each record to its key, so records cannot be swapped between ids.

const DATABASE = "inviso";
const STORE = "vault";
const ITERATIONS = 600000;
const CHECK = "inviso vault v1";

export class VaultError extends Error {
  /** @param {"wrongPassphrase" | "damaged" | "unavailable"} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * JSON with bytes: a `Uint8Array` becomes `{"$b": base64}`.
 * @param {unknown} value @returns {string}
 */
export function encodeJSON(value) {
  return JSON.stringify(value, (_key, item) => {
    if (item instanceof Uint8Array) {
      let binary = "";
      for (let i = 0; i < item.length; i += 0x8000) binary += String.fromCharCode(...item.subarray(i, i + 0x8000));
      return { $b: btoa(binary) };
    }
    return item;
  });
}

/** @param {string} text @returns {any} */
export function decodeJSON(text) {
  return JSON.parse(text, (_key, item) => {
    if (item && typeof item === "object" && Object.keys(item).length === 1 && typeof item.$b === "string") {
      const binary = atob(item.$b);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      return bytes;
    }
    return item;
  });
}

/** @returns {Promise<IDBDatabase>} */
function openDatabase() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(new VaultError("unavailable", "this browser keeps no data for this page"));
  });
}

/**
 * One request in its own transaction.
 * @template T
 * @param {IDBDatabase} database @param {IDBTransactionMode} mode @param {(store: IDBObjectStore) => IDBRequest<T>} make
 * @returns {Promise<T>}
 */
function request(database, mode, make) {
  return new Promise((resolve, reject) => {
    const transaction = database.transaction(STORE, mode);
    const pending = make(transaction.objectStore(STORE));
    transaction.oncomplete = () => resolve(pending.result);
    transaction.onerror = () => reject(new VaultError("unavailable", "the browser's store refused the change"));
    transaction.onabort = () => reject(new VaultError("unavailable", "the browser's store refused the change"));
  });
}

/** Whether this browser has a vault for this page (before asking for its passphrase). */
export async function vaultExists() {
  try {
    const database = await openDatabase();
    const meta = await request(database, "readonly", (store) => store.get("meta"));
    database.close();
    return meta !== undefined;
  } catch {
    return false;
  }
}

/** @typedef {"chat" | "contact" | "identity"} RecordKind */

/**
 * The store key of record `id` of `kind` (also the AAD of its seal).
 * @param {string} id @param {RecordKind} kind
 */
function recordKey(id, kind) {
  return `${kind}:${id}`;
}

export class Vault {
  /** @param {IDBDatabase} database @param {CryptoKey} key */
  constructor(database, key) {
    this.database = database;
    this.key = key;
  }

  /**
   * Opens the vault with `passphrase`, making it when there is none.
   * @param {string} passphrase
   * @returns {Promise<Vault>}
   * @throws {VaultError} "wrongPassphrase", "damaged", "unavailable"
   */
  static async open(passphrase) {
    if (passphrase.length < 8) throw new VaultError("wrongPassphrase", "a passphrase has at least 8 characters");
    const database = await openDatabase();
    let meta = await request(database, "readonly", (store) => store.get("meta"));
    if (meta === undefined) {
      const salt = globalThis.crypto.getRandomValues(new Uint8Array(16));
      const vault = new Vault(database, await derive(passphrase, salt, ITERATIONS));
      const check = await vault.seal("meta", new TextEncoder().encode(CHECK));
      meta = { salt, iterations: ITERATIONS, check };
      await request(database, "readwrite", (store) => store.put(meta, "meta"));
      return vault;
    }
    if (!(meta.salt instanceof Uint8Array) || typeof meta.iterations !== "number" || meta.iterations < 100000) {
      throw new VaultError("damaged", "the stored chats are damaged");
    }
    const vault = new Vault(database, await derive(passphrase, meta.salt, meta.iterations));
    let check;
    try {
      check = await vault.unseal("meta", meta.check);
    } catch {
      throw new VaultError("wrongPassphrase", "wrong passphrase");
    }
    if (new TextDecoder().decode(check) !== CHECK) throw new VaultError("damaged", "the stored chats are damaged");
    return vault;
  }

  /**
   * Keeps `value` (JSON with bytes) under `id`, replacing what was there. `kind` keeps
   * chats, contacts and this browser's identity apart (and is bound into the seal).
   * @param {string} id @param {unknown} value @param {RecordKind} [kind]
   */
  async put(id, value, kind = "chat") {
    const key = recordKey(id, kind);
    const sealed = await this.seal(key, new TextEncoder().encode(encodeJSON(value)));
    await request(this.database, "readwrite", (store) => store.put(sealed, key));
  }

  /**
   * The value kept under `id`, or undefined.
   * @param {string} id @param {RecordKind} [kind]
   * @throws {VaultError} "damaged" when the record does not open
   */
  async get(id, kind = "chat") {
    const key = recordKey(id, kind);
    const record = await request(this.database, "readonly", (store) => store.get(key));
    if (record === undefined) return undefined;
    try {
      return decodeJSON(new TextDecoder().decode(await this.unseal(key, record)));
    } catch {
      throw new VaultError("damaged", `a stored ${kind} is damaged`);
    }
  }

  /** The ids of the kept records of `kind` (chats unless told). @param {RecordKind} [kind] */
  async ids(kind = "chat") {
    const keys = await request(this.database, "readonly", (store) => store.getAllKeys());
    return keys.map(String).filter((key) => key.startsWith(`${kind}:`)).map((key) => key.slice(kind.length + 1));
  }

  /** @param {string} id @param {RecordKind} [kind] */
  async delete(id, kind = "chat") {
    await request(this.database, "readwrite", (store) => store.delete(recordKey(id, kind)));
  }

  /** @param {string} label @param {Uint8Array} plaintext */
  async seal(label, plaintext) {
    const iv = globalThis.crypto.getRandomValues(new Uint8Array(12));
    const additionalData = new TextEncoder().encode(label);
    const sealed = new Uint8Array(await globalThis.crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, this.key, plaintext));
    return { iv, sealed };
  }

  /** @param {string} label @param {{ iv: Uint8Array, sealed: Uint8Array }} record */
  async unseal(label, record) {
    if (!(record?.iv instanceof Uint8Array) || !(record?.sealed instanceof Uint8Array)) throw new Error("malformed");
    const additionalData = new TextEncoder().encode(label);
    return new Uint8Array(await globalThis.crypto.subtle.decrypt({ name: "AES-GCM", iv: record.iv, additionalData }, this.key, record.sealed));
  }
}

/**
 * @param {string} passphrase @param {Uint8Array} salt @param {number} iterations
 * @returns {Promise<CryptoKey>}
 */
async function derive(passphrase, salt, iterations) {
  const material = await globalThis.crypto.subtle.importKey("raw", new TextEncoder().encode(passphrase.normalize("NFC")), "PBKDF2", false, ["deriveKey"]);
  return globalThis.crypto.subtle.deriveKey(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations }, material, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}
