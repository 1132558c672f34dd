// Elligator 2 for curve25519 (RFC 9380 §6.7.1 with A = 486662, K = 1, Z = 2), u-coordinate
// only: CPace uses the map's u and drops v (docs/cpace.md). Field arithmetic over BigInt.
//
// BigInt arithmetic is not constant time. The input is derived from the password, so a
// program that can time this page's work could learn something about the generator; the
// Swift side (InvisoCrypto.Elligator2) is constant time. docs/web.md says so.

export const P = (1n << 255n) - 19n;
const A = 486662n;
const Z = 2n;

/** @param {bigint} x @returns {bigint} x mod p in [0, p) */
export function mod(x) {
  const r = x % P;
  return r < 0n ? r + P : r;
}

/** @param {bigint} base @param {bigint} exponent @returns {bigint} */
export function power(base, exponent) {
  let result = 1n;
  let b = mod(base);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

/**
 * inv0 (RFC 9380 §4): x^(p−2), so 0 maps to 0.
 * @param {bigint} x
 */
export function inv0(x) {
  return power(x, P - 2n);
}

/**
 * Whether x is a square in GF(p) (0 is).
 * @param {bigint} x
 */
export function isSquare(x) {
  const legendre = power(x, (P - 1n) / 2n);
  return legendre === 0n || legendre === 1n;
}

/** @param {Uint8Array} bytes little-endian @returns {bigint} */
export function decodeLittleEndian(bytes) {
  let x = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]);
  return x;
}

/** @param {bigint} x @returns {Uint8Array} 32 bytes little-endian of x mod p */
export function encodeLittleEndian(x) {
  let value = mod(x);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}

/**
 * The u-coordinate of map_to_curve_elligator2(r).
 * @param {bigint} r a field element
 * @returns {bigint}
 */
export function mapToCurveU(r) {
  let tv1 = mod(Z * r * r);
  if (tv1 === P - 1n) tv1 = 0n;
  const x1 = mod(-A * inv0(tv1 + 1n));
  // g(x1) = x1³ + A·x1² + x1
  const gx1 = mod(((x1 + A) * x1 + 1n) * x1);
  const x2 = mod(-x1 - A);
  return isSquare(gx1) ? x1 : x2;
}
