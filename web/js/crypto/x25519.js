// X25519 (RFC 7748) through WebCrypto: the browser's own implementation does the scalar
// multiplication; this module only wraps raw 32-byte keys the way WebCrypto takes them.

const subtle = globalThis.crypto.subtle;

/** PKCS #8 for an X25519 private key (RFC 8410): the DER header, then the 32 key bytes. */
const PKCS8_PREFIX = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20]);

/** The base point, u = 9. */
const BASE_POINT = (() => {
  const u = new Uint8Array(32);
  u[0] = 9;
  return u;
})();

/** @param {Uint8Array} privateKey 32 bytes @returns {Promise<CryptoKey>} */
async function importPrivate(privateKey) {
  if (privateKey.length !== 32) throw new Error("x25519: a private key is 32 bytes");
  const der = new Uint8Array(PKCS8_PREFIX.length + 32);
  der.set(PKCS8_PREFIX);
  der.set(privateKey, PKCS8_PREFIX.length);
  return subtle.importKey("pkcs8", der, { name: "X25519" }, false, ["deriveBits"]);
}

/**
 * X25519(k, u): the scalar (clamped as RFC 7748 says) times the point u. WebCrypto refuses
 * an all-zero result (a low-order u), and so does this function.
 * @param {Uint8Array} privateKey 32 bytes @param {Uint8Array} publicKey 32 bytes
 * @returns {Promise<Uint8Array>}
 * @throws {Error} for wrong lengths or an all-zero result
 */
export async function x25519(privateKey, publicKey) {
  if (publicKey.length !== 32) throw new Error("x25519: a public key is 32 bytes");
  const ours = await importPrivate(privateKey);
  const theirs = await subtle.importKey("raw", publicKey, { name: "X25519" }, false, []);
  const shared = new Uint8Array(await subtle.deriveBits({ name: "X25519", public: theirs }, ours, 256));
  let acc = 0;
  for (const byte of shared) acc |= byte;
  if (acc === 0) throw new Error("x25519: all-zero shared secret");
  return shared;
}

/**
 * The public key of a private key.
 * @param {Uint8Array} privateKey
 * @returns {Promise<Uint8Array>}
 */
export async function x25519Public(privateKey) {
  return x25519(privateKey, BASE_POINT);
}
