// The page's QR encoder (js/chat/qr.js) against python-qrcode, an independent
// implementation, with the vectors Tests/invisoTests/QRVectorTests.swift reads
// (Tests/invisoTests/Resources/qr-vectors.json, made by scripts/vectors/qr_vectors.py):
// module matrices for every mask, codewords, block layouts, alignment positions, the BCH
// words and the automatic mask choice — the same checks, so the page and the CLI are held
// to the same symbols.
//
// A run that finds no vectors fails (the counts are checked), so a wrong path cannot pass
// silently.

import {
  LEVEL_NAMES, MAX_VERSION, alignmentPatternCenters, byteCapacity, codewordBlocks, dataCodewordCount,
  encodeQR, encodeQRText, formatWord, interleavedCodewords, qrPenalty, totalCodewords, versionWord,
} from "../js/chat/qr.js";
import { check, group, load } from "./support.js";

/** @typedef {import("./support.js").GroupResult} GroupResult */
/** @typedef {import("../js/chat/qr.js").QRLevel} QRLevel */

/**
 * @typedef {{ label: string, data_hex: string, version: number, level: string, codewords_hex: string,
 *   python_qrcode_mask: number, masks: string[][] }} QRSymbolVector
 * @typedef {{ source: string, symbols: QRSymbolVector[], blocks: Record<string, number[][][]>,
 *   alignment: number[][], format_words: Record<string, number[]>, version_words: Record<string, number> }} QRVectors
 */

/** @param {string} hex @returns {Uint8Array} */
function bytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substring(i * 2, i * 2 + 2), 16);
  return out;
}

/** @param {Uint8Array} bytes @returns {string} */
function hex(bytes) {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

/**
 * The symbol's rows as strings of "0" and "1", as in the vectors.
 * @param {{ size: number, modules: Uint8Array }} code
 */
function rows(code) {
  /** @type {string[]} */
  const out = [];
  for (let y = 0; y < code.size; y++) out.push(Array.from(code.modules.subarray(y * code.size, (y + 1) * code.size)).join(""));
  return out;
}

/** @param {unknown} a @param {unknown} b */
function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** @param {string} level @returns {QRLevel} */
function level(level) {
  if (!LEVEL_NAMES.includes(/** @type {QRLevel} */ (level))) throw new Error(`unknown level ${level}`);
  return /** @type {QRLevel} */ (level);
}

/**
 * Every symbol matches python-qrcode module for module, for each of the 8 masks.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function matrices(result, vectors) {
  let compared = 0;
  for (const symbol of vectors.symbols) {
    const data = bytes(symbol.data_hex);
    const options = { level: level(symbol.level), minVersion: symbol.version, maxVersion: symbol.version };
    check(result, symbol.masks.length === 8, `${symbol.label}: 8 masks`);
    symbol.masks.forEach((expected, mask) => {
      const code = encodeQR(data, { ...options, mask });
      check(result, code.size === expected.length && code.version === symbol.version && code.mask === mask
        && code.level === symbol.level, `${symbol.label}, mask ${mask}: version, size, mask and level`);
      const actual = rows(code);
      const differing = expected.flatMap((row, index) => (actual[index] === row ? [] : [index]));
      check(result, differing.length === 0 && actual.length === expected.length,
        `${symbol.label}, mask ${mask}: rows ${differing.join(", ")} differ`);
      compared += 1;
    });
  }
  // 8 inputs × 8 masks; a runner that compares nothing must fail.
  check(result, compared === 64, `compared ${compared} symbols from ${vectors.source}`);
}

/**
 * Interleaved codewords match python-qrcode.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function codewords(result, vectors) {
  for (const symbol of vectors.symbols) {
    const actual = interleavedCodewords(bytes(symbol.data_hex), symbol.version, level(symbol.level));
    check(result, hex(actual) === symbol.codewords_hex.toLowerCase(), `${symbol.label}: codewords`);
    check(result, actual.length === totalCodewords(symbol.version), `${symbol.label}: codeword count`);
  }
  check(result, vectors.symbols.length === 8, `${vectors.symbols.length} symbols, expected 8`);
}

/**
 * Block layout (Table 9) for all 40 versions × 4 levels matches python-qrcode.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function blockLayouts(result, vectors) {
  let checked = 0;
  for (const name of LEVEL_NAMES) {
    const expected = vectors.blocks[name] ?? [];
    check(result, expected.length === 40, `blocks for ${name}: 40 versions`);
    for (let version = 1; version <= MAX_VERSION && version <= expected.length; version++) {
      const reference = expected[version - 1];
      const blocks = codewordBlocks(new Uint8Array(dataCodewordCount(version, name)), version, name);
      const actual = blocks.map((block) => [block.data.length + block.ec.length, block.data.length]);
      check(result, same(actual, reference), `version ${version} ${name}: blocks`);
      const total = reference.reduce((sum, block) => sum + block[0], 0);
      check(result, total === totalCodewords(version), `version ${version} ${name}: total codewords`);
      checked += 1;
    }
  }
  check(result, checked === 160, `${checked} block layouts, expected 160`);
}

/**
 * Alignment pattern centres for all 40 versions match python-qrcode.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function alignment(result, vectors) {
  check(result, vectors.alignment.length === 40, "alignment for 40 versions");
  for (let version = 1; version <= MAX_VERSION && version <= vectors.alignment.length; version++) {
    check(result, same(alignmentPatternCenters(version), vectors.alignment[version - 1]), `version ${version}: alignment`);
  }
}

/**
 * Format words (32) and version words (34) match python-qrcode.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function bchWords(result, vectors) {
  let checked = 0;
  for (const name of LEVEL_NAMES) {
    const words = vectors.format_words[name] ?? [];
    for (let mask = 0; mask < 8; mask++) {
      check(result, formatWord(name, mask) === words[mask], `format word ${name} mask ${mask}`);
      checked += 1;
    }
  }
  for (let version = 7; version <= MAX_VERSION; version++) {
    check(result, versionWord(version) === vectors.version_words[String(version)], `version word ${version}`);
    checked += 1;
  }
  check(result, checked === 32 + 34, `${checked} BCH words, expected 66`);
}

/**
 * The automatic mask has the lowest penalty of the eight, ties going to the lower mask.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function automaticMask(result, vectors) {
  for (const symbol of vectors.symbols) {
    const data = bytes(symbol.data_hex);
    const options = { level: level(symbol.level), minVersion: symbol.version, maxVersion: symbol.version };
    const chosen = encodeQR(data, options);
    const penalties = [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => {
      const code = encodeQR(data, { ...options, mask });
      return qrPenalty(code.size, code.modules).total;
    });
    const lowest = Math.min(...penalties);
    check(result, penalties[chosen.mask] === lowest, `${symbol.label}: mask ${chosen.mask} of penalties ${penalties.join(", ")}`);
    check(result, penalties.indexOf(lowest) === chosen.mask, `${symbol.label}: ties go to the lower mask`);
  }
}

/**
 * Beyond the Swift test: the smallest version is chosen, text is its UTF-8, and data over
 * the capacity is refused.
 * @param {GroupResult} result @param {QRVectors} vectors
 */
function api(result, vectors) {
  for (const symbol of vectors.symbols) {
    const data = bytes(symbol.data_hex);
    const name = level(symbol.level);
    let smallest = 1;
    while (byteCapacity(smallest, name) < data.length) smallest += 1;
    check(result, encodeQR(data, { level: name }).version === smallest, `${symbol.label}: smallest version`);
  }
  const text = "inviso ✓ QR";
  check(result, same(encodeQRText(text), encodeQR(new TextEncoder().encode(text))), "encodeQRText encodes UTF-8");
  const capacity = byteCapacity(MAX_VERSION, "L");
  check(result, capacity === 2953, `version 40-L holds ${capacity} bytes, expected 2953`);
  let refused = false;
  try { encodeQR(new Uint8Array(capacity + 1), { level: "L" }); } catch (error) { refused = error instanceof Error; }
  check(result, refused, "data over the capacity is refused");
  refused = false;
  try { encodeQR(new Uint8Array(20), { maxVersion: 1 }); } catch (error) { refused = error instanceof Error; }
  check(result, refused, "data over the allowed versions is refused");
}

/**
 * Runs every check; `vectors` is the parsed qr-vectors.json or the URL it is served at.
 * @param {string | QRVectors} vectors
 * @returns {Promise<{ qr: GroupResult }>}
 */
export async function runQRVectors(vectors) {
  /** @type {QRVectors} */
  const doc = typeof vectors === "string" ? await load(vectors) : vectors;
  const result = group();
  for (const run of [matrices, codewords, blockLayouts, alignment, bchWords, automaticMask, api]) {
    try {
      run(result, doc);
    } catch (error) {
      check(result, false, `${run.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { qr: result };
}
