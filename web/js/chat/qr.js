// QR codes for the invite link, drawn in the page so the link never leaves it: a port of
// the CLI's encoder (Sources/inviso/Terminal/QR), which follows ISO/IEC 18004:2015 from the
// standard's description. Model 2, byte mode only, every version (1…40) and level
// (L, M, Q, H). The smallest version that fits is used and, unless one is fixed, the mask
// with the lowest penalty (§7.8.3; ties go to the lower mask), exactly as the CLI picks
// them, so a page and a terminal draw the same symbol for the same link.
//
// The steps, each exported for the vectors (web/test/qr-vectors.js, which checks them
// against python-qrcode as Tests/invisoTests/QRVectorTests.swift does):
//
//   bytes → dataCodewords (mode, count, bytes, terminator, padding)
//         → codewordBlocks (Table 9, Reed–Solomon over GF(2⁸)) → interleavedCodewords
//         → ModuleGrid (function patterns, codeword placement, mask, format word)

/** @typedef {"L" | "M" | "Q" | "H"} QRLevel */

/**
 * @typedef {{ version: number, size: number, level: QRLevel, mask: number, modules: Uint8Array }} QRCode
 *   `modules` is row-major, `size` × `size`, 1 = dark (no quiet zone).
 * @typedef {{ level?: QRLevel, minVersion?: number, maxVersion?: number, mask?: number }} QROptions
 * @typedef {{ data: Uint8Array, ec: Uint8Array }} QRBlock
 * @typedef {{ runs: number, blocks: number, finderLike: number, balance: number, total: number }} QRPenalty
 */

export const MIN_VERSION = 1;
export const MAX_VERSION = 40;

/**
 * Per level (§5.3.8, Tables 9 and 12): the two format bits (L = 01, M = 00, Q = 11,
 * H = 10), the error-correction codewords per block and the number of blocks for
 * versions 1…40.
 * @type {Record<QRLevel, { formatBits: number, ecCodewordsPerBlock: number[], blockCounts: number[] }>}
 */
const LEVELS = {
  L: {
    formatBits: 0b01,
    ecCodewordsPerBlock: [
      7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
      28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
    ],
    blockCounts: [
      1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
      8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
    ],
  },
  M: {
    formatBits: 0b00,
    ecCodewordsPerBlock: [
      10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
      26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    ],
    blockCounts: [
      1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
      17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
    ],
  },
  Q: {
    formatBits: 0b11,
    ecCodewordsPerBlock: [
      13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
      28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
    ],
    blockCounts: [
      1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
      23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
    ],
  },
  H: {
    formatBits: 0b10,
    ecCodewordsPerBlock: [
      17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
      30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
    ],
    blockCounts: [
      1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
      25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
    ],
  },
};

/**
 * The four levels, lowest first.
 * @type {readonly QRLevel[]}
 */
export const LEVEL_NAMES = ["L", "M", "Q", "H"];

/** @param {unknown} level @returns {level is QRLevel} */
function isLevel(level) {
  return typeof level === "string" && Object.prototype.hasOwnProperty.call(LEVELS, level);
}

/** @param {number} version */
function checkVersion(version) {
  if (!Number.isInteger(version) || version < MIN_VERSION || version > MAX_VERSION) {
    throw new Error(`QR version ${version} is not one of ${MIN_VERSION}…${MAX_VERSION}`);
  }
}

// MARK: - GF(2⁸) and Reed–Solomon (§7.5.2)

/**
 * GF(2⁸) modulo the primitive polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D), whose root α = 2
 * generates every non-zero element: EXP[i] = αⁱ for i in 0…254, LOG[x] = i with αⁱ = x
 * for x in 1…255 (LOG[0] is unused).
 */
const PRIMITIVE_POLYNOMIAL = 0x11d;
const EXP = new Uint8Array(255);
const LOG = new Uint8Array(256);
{
  let value = 1;
  for (let power = 0; power < 255; power++) {
    EXP[power] = value;
    LOG[value] = power;
    value <<= 1;
    if (value & 0x100) value ^= PRIMITIVE_POLYNOMIAL;
  }
}

/**
 * `a · b` in GF(2⁸).
 * @param {number} a @param {number} b
 */
export function gfMultiply(a, b) {
  if (a === 0 || b === 0) return 0;
  return EXP[(LOG[a] + LOG[b]) % 255];
}

/**
 * αⁿ in GF(2⁸), for any n ≥ 0.
 * @param {number} n
 */
export function gfPower(n) {
  return EXP[n % 255];
}

/**
 * Generators already built, by degree.
 * @type {Map<number, Uint8Array>}
 */
const generators = new Map();

/**
 * The Reed–Solomon generator g(x) = (x − α⁰)(x − α¹)…(x − αⁿ⁻¹) for n = `degree`
 * error-correction codewords, coefficients highest degree first, leading 1 included.
 * @param {number} degree 1…255
 * @returns {Uint8Array} degree + 1 coefficients
 */
export function reedSolomonGenerator(degree) {
  return generatorFor(degree).slice();
}

/**
 * The shared copy of the generator for `degree` (not to be modified).
 * @param {number} degree
 */
function generatorFor(degree) {
  if (!Number.isInteger(degree) || degree < 1 || degree > 255) throw new Error("Reed–Solomon degree out of range");
  const known = generators.get(degree);
  if (known) return known;
  // Start from g(x) = 1 and multiply by (x + αⁱ) for i = 0…degree−1.
  let polynomial = new Uint8Array([1]);
  for (let i = 0; i < degree; i++) {
    const root = gfPower(i);
    const next = new Uint8Array(polynomial.length + 1);
    for (let index = 0; index < polynomial.length; index++) {
      next[index] ^= polynomial[index]; // · x
      next[index + 1] ^= gfMultiply(polynomial[index], root); // · αⁱ
    }
    polynomial = next;
  }
  generators.set(degree, polynomial);
  return polynomial;
}

/**
 * The `degree` error-correction codewords of one block: the remainder of data(x) · xⁿ
 * divided by g(x).
 * @param {Uint8Array | readonly number[]} data @param {number} degree
 * @returns {Uint8Array}
 */
export function reedSolomonRemainder(data, degree) {
  const generator = generatorFor(degree).subarray(1);
  const remainder = new Uint8Array(degree);
  for (const byte of data) {
    // Synthetic division: shift in the next data byte, subtract factor · g(x).
    const factor = byte ^ remainder[0];
    remainder.copyWithin(0, 1);
    remainder[degree - 1] = 0;
    if (factor !== 0) {
      for (let index = 0; index < degree; index++) remainder[index] ^= gfMultiply(generator[index], factor);
    }
  }
  return remainder;
}

// MARK: - Versions (§5.3.1, §6.3.6, Annex E)

/**
 * Modules per side: 21 for version 1, four more per version.
 * @param {number} version
 */
export function versionSize(version) {
  return 17 + 4 * version;
}

/**
 * Row/column coordinates of the alignment-pattern centres (Annex E): none for version 1;
 * otherwise 6, the far edge minus 7, and evenly spaced (even) steps between them. The rule
 * reproduces Annex E's table, including its one irregular entry (version 32, step 26).
 * @param {number} version
 * @returns {number[]}
 */
export function alignmentPatternCenters(version) {
  checkVersion(version);
  if (version < 2) return [];
  const count = Math.floor(version / 7) + 2;
  const last = versionSize(version) - 7;
  let step;
  if (version === 32) {
    step = 26;
  } else {
    // Round (last − 6) / (count − 1) up to the next even number.
    const span = last - 6;
    const intervals = count - 1;
    step = Math.floor((span + 2 * intervals - 1) / (2 * intervals)) * 2;
  }
  const centers = [6];
  for (let index = count - 2; index >= 0; index--) centers.push(last - index * step);
  return centers;
}

/**
 * Bits of the character count indicator in byte mode (Table 3).
 * @param {number} version
 */
export function byteModeCountBits(version) {
  return version <= 9 ? 8 : 16;
}

/**
 * Error-correction codewords per block.
 * @param {number} version @param {QRLevel} level
 */
export function ecCodewordsPerBlock(version, level) {
  return LEVELS[level].ecCodewordsPerBlock[version - 1];
}

/**
 * Number of error-correction blocks.
 * @param {number} version @param {QRLevel} level
 */
export function blockCount(version, level) {
  return LEVELS[level].blockCounts[version - 1];
}

/**
 * Modules free for codewords per version, counted once on empty grids.
 * @type {number[] | null}
 */
let dataModuleCounts = null;

/**
 * Modules available for codewords and remainder bits: counted on an empty grid with the
 * function patterns drawn, so the count follows from the same code that draws them.
 * @param {number} version
 */
export function dataModuleCount(version) {
  checkVersion(version);
  if (!dataModuleCounts) {
    dataModuleCounts = [];
    for (let number = MIN_VERSION; number <= MAX_VERSION; number++) {
      dataModuleCounts.push(new ModuleGrid(number).freeModuleCount());
    }
  }
  return dataModuleCounts[version - 1];
}

/**
 * All codewords the symbol holds (data and error correction), in whole bytes.
 * @param {number} version
 */
export function totalCodewords(version) {
  return Math.floor(dataModuleCount(version) / 8);
}

/**
 * Modules after the last whole codeword (left light before masking).
 * @param {number} version
 */
export function remainderBits(version) {
  return dataModuleCount(version) % 8;
}

/**
 * Data codewords (before error correction).
 * @param {number} version @param {QRLevel} level
 */
export function dataCodewordCount(version, level) {
  return totalCodewords(version) - ecCodewordsPerBlock(version, level) * blockCount(version, level);
}

/**
 * The most bytes byte mode carries (4 mode bits and the count indicator come first).
 * @param {number} version @param {QRLevel} level
 */
export function byteCapacity(version, level) {
  return Math.floor((dataCodewordCount(version, level) * 8 - 4 - byteModeCountBits(version)) / 8);
}

// MARK: - Format and version information (§7.9, §7.10, Annexes C and D)

/** Generator of the (15, 5) BCH code: x¹⁰ + x⁸ + x⁵ + x⁴ + x² + x + 1. */
const FORMAT_GENERATOR = 0b101_0011_0111;
/** XOR mask applied to the format word so it is never all zero. */
const FORMAT_MASK = 0b101_0100_0001_0010;
/** Generator of the (18, 6) BCH code: x¹² + x¹¹ + x¹⁰ + x⁹ + x⁸ + x⁵ + x² + 1. */
const VERSION_GENERATOR = 0b1_1111_0010_0101;

/**
 * The remainder of data · x^degree divided by `generator` over GF(2).
 * @param {number} data @param {number} dataBits @param {number} generator @param {number} degree
 */
export function bchRemainder(data, dataBits, generator, degree) {
  let value = data << degree;
  for (let bit = dataBits + degree - 1; bit >= degree; bit--) {
    if (value & (1 << bit)) value ^= generator << (bit - degree);
  }
  return value;
}

/**
 * The 15-bit format word: 2 level bits, 3 mask bits, 10 BCH bits, XORed with the format mask.
 * @param {QRLevel} level @param {number} mask 0…7
 */
export function formatWord(level, mask) {
  const data = (LEVELS[level].formatBits << 3) | mask;
  return ((data << 10) | bchRemainder(data, 5, FORMAT_GENERATOR, 10)) ^ FORMAT_MASK;
}

/**
 * The 18-bit version word (versions 7…40): 6 version bits and 12 BCH bits.
 * @param {number} version
 */
export function versionWord(version) {
  return (version << 12) | bchRemainder(version, 6, VERSION_GENERATOR, 12);
}

// MARK: - Codewords (§7.4–§7.6)

/**
 * Accumulates bits most significant first and packs them into bytes.
 */
class BitWriter {
  constructor() {
    /** @type {number[]} */
    this.bytes = [];
    /** Bits written so far. */
    this.count = 0;
  }

  /**
   * Appends the low `bitCount` bits of `value`, most significant first.
   * @param {number} value @param {number} bitCount
   */
  append(value, bitCount) {
    for (let shift = bitCount - 1; shift >= 0; shift--) {
      if (this.count % 8 === 0) this.bytes.push(0);
      if ((value >> shift) & 1) this.bytes[this.bytes.length - 1] |= 0x80 >> (this.count % 8);
      this.count += 1;
    }
  }
}

/**
 * The data codewords for `data` in byte mode: mode indicator 0100, the character count,
 * the bytes, a terminator of up to four zero bits, zero bits to the byte boundary, then
 * the pad codewords 0xEC, 0x11 alternately.
 * @param {Uint8Array} data @param {number} version @param {QRLevel} level
 * @returns {Uint8Array}
 * @throws {Error} when `data` does not fit this version at this level
 */
export function dataCodewords(data, version, level) {
  const capacity = dataCodewordCount(version, level);
  if (data.length > byteCapacity(version, level)) throw new Error("data does not fit this QR version");
  const bits = new BitWriter();
  bits.append(0b0100, 4);
  bits.append(data.length, byteModeCountBits(version));
  for (const byte of data) bits.append(byte, 8);
  bits.append(0, Math.min(4, capacity * 8 - bits.count));
  bits.append(0, (8 - (bits.count % 8)) % 8);
  const codewords = new Uint8Array(capacity);
  codewords.set(bits.bytes);
  let pad = 0xec;
  for (let index = bits.bytes.length; index < capacity; index++) {
    codewords[index] = pad;
    pad = pad === 0xec ? 0x11 : 0xec;
  }
  return codewords;
}

/**
 * The data codewords split into blocks (§7.5.2, Table 9): the short blocks first, then the
 * blocks one data codeword longer, each with its error-correction codewords.
 * @param {Uint8Array} codewords the data codewords (dataCodewordCount of them)
 * @param {number} version @param {QRLevel} level
 * @returns {QRBlock[]}
 */
export function codewordBlocks(codewords, version, level) {
  const count = blockCount(version, level);
  const ecLength = ecCodewordsPerBlock(version, level);
  const total = totalCodewords(version);
  const shortBlocks = count - (total % count);
  const shortDataLength = Math.floor(total / count) - ecLength;
  /** @type {QRBlock[]} */
  const result = [];
  let offset = 0;
  for (let index = 0; index < count; index++) {
    const length = shortDataLength + (index < shortBlocks ? 0 : 1);
    const data = codewords.slice(offset, offset + length);
    offset += length;
    result.push({ data, ec: reedSolomonRemainder(data, ecLength) });
  }
  return result;
}

/**
 * The symbol's codeword sequence (§7.6): the data codewords of `data` interleaved across
 * blocks, one from each block in turn, then the error-correction codewords the same way.
 * @param {Uint8Array} data @param {number} version @param {QRLevel} level
 * @returns {Uint8Array} totalCodewords(version) bytes
 */
export function interleavedCodewords(data, version, level) {
  const blocks = codewordBlocks(dataCodewords(data, version, level), version, level);
  const result = new Uint8Array(totalCodewords(version));
  let next = 0;
  const longest = Math.max(0, ...blocks.map((block) => block.data.length));
  for (let index = 0; index < longest; index++) {
    for (const block of blocks) if (index < block.data.length) result[next++] = block.data[index];
  }
  const ecLength = ecCodewordsPerBlock(version, level);
  for (let index = 0; index < ecLength; index++) {
    for (const block of blocks) result[next++] = block.ec[index];
  }
  return result;
}

// MARK: - Masks (§7.8.2, Table 10)

/**
 * Whether mask `mask` (0…7) flips the module at row `i`, column `j`.
 * @param {number} mask @param {number} i @param {number} j
 */
export function maskFlips(mask, i, j) {
  switch (mask) {
    case 0: return (i + j) % 2 === 0;
    case 1: return i % 2 === 0;
    case 2: return j % 3 === 0;
    case 3: return (i + j) % 3 === 0;
    case 4: return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5: return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6: return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    default: return (((i + j) % 2) + ((i * j) % 3)) % 2 === 0;
  }
}

// MARK: - The module grid (§6.3, §7.7.3, §7.9)

/**
 * A symbol under construction: the module colours plus which modules belong to function
 * patterns (and so are neither data nor masked). `x` is the column, `y` the row, (0, 0)
 * the top-left module.
 */
export class ModuleGrid {
  /**
   * An empty grid for `version` with every function pattern drawn and the format areas
   * reserved (light until drawFormat).
   * @param {number} version
   */
  constructor(version) {
    checkVersion(version);
    this.version = version;
    this.size = versionSize(version);
    /** Row-major colours, 1 = dark. */
    this.modules = new Uint8Array(this.size * this.size);
    /** Row-major flags: 1 for finder, separator, timing, alignment, dark-module, format and version modules. */
    this.isFunction = new Uint8Array(this.size * this.size);
    this.drawFunctionPatterns();
  }

  /** A copy to mask without touching this one. */
  clone() {
    const copy = /** @type {ModuleGrid} */ (Object.create(ModuleGrid.prototype));
    copy.version = this.version;
    copy.size = this.size;
    copy.modules = this.modules.slice();
    copy.isFunction = this.isFunction.slice();
    return copy;
  }

  /** Modules left for codewords and remainder bits. */
  freeModuleCount() {
    let count = 0;
    for (const flag of this.isFunction) if (!flag) count += 1;
    return count;
  }

  /** @param {number} x @param {number} y @param {boolean} dark */
  setFunction(x, y, dark) {
    this.modules[y * this.size + x] = dark ? 1 : 0;
    this.isFunction[y * this.size + x] = 1;
  }

  /** @private */
  drawFunctionPatterns() {
    const size = this.size;
    // Timing patterns: row 6 and column 6 alternate, dark on even indices. The finders
    // drawn next overwrite their ends.
    for (let index = 0; index < size; index++) {
      this.setFunction(6, index, index % 2 === 0);
      this.setFunction(index, 6, index % 2 === 0);
    }
    // Finder patterns with their light separators (a 9×9 square clipped at the edge).
    this.drawFinder(3, 3);
    this.drawFinder(size - 4, 3);
    this.drawFinder(3, size - 4);
    // Alignment patterns, except the three that would overlap a finder.
    const centers = alignmentPatternCenters(this.version);
    const last = centers.length - 1;
    centers.forEach((y, row) => {
      centers.forEach((x, column) => {
        const overlapsFinder = (row === 0 && column === 0) || (row === 0 && column === last) || (row === last && column === 0);
        if (!overlapsFinder) this.drawAlignment(x, y);
      });
    });
    // Reserve both format areas; the dark module is part of the second one's column.
    this.drawFormatWord(0);
    // Version information, versions 7 and up (§7.10).
    if (this.version >= 7) {
      const word = versionWord(this.version);
      for (let bit = 0; bit < 18; bit++) {
        const dark = ((word >> bit) & 1) === 1;
        const long = Math.floor(bit / 3);
        const short = size - 11 + (bit % 3);
        this.setFunction(short, long, dark); // top right: 3 columns × 6 rows
        this.setFunction(long, short, dark); // bottom left: 6 columns × 3 rows
      }
    }
  }

  /** @private @param {number} centerX @param {number} centerY */
  drawFinder(centerX, centerY) {
    for (let dy = -4; dy <= 4; dy++) {
      for (let dx = -4; dx <= 4; dx++) {
        const x = centerX + dx;
        const y = centerY + dy;
        if (x < 0 || x >= this.size || y < 0 || y >= this.size) continue;
        const ring = Math.max(Math.abs(dx), Math.abs(dy));
        this.setFunction(x, y, ring !== 2 && ring !== 4);
      }
    }
  }

  /** @private @param {number} centerX @param {number} centerY */
  drawAlignment(centerX, centerY) {
    for (let dy = -2; dy <= 2; dy++) {
      for (let dx = -2; dx <= 2; dx++) {
        this.setFunction(centerX + dx, centerY + dy, Math.max(Math.abs(dx), Math.abs(dy)) !== 1);
      }
    }
  }

  /**
   * Writes the format word for `level` and `mask` into both copies.
   * @param {QRLevel} level @param {number} mask
   */
  drawFormat(level, mask) {
    this.drawFormatWord(formatWord(level, mask));
  }

  /**
   * Bit 0 is the least significant. First copy: bits 0–7 up column 8 next to the top-left
   * finder (skipping the timing row), bits 8–14 along row 8 leftwards (skipping the timing
   * column). Second copy: bits 0–7 along row 8 from the right edge, bits 8–14 down column 8
   * to the bottom edge, below the always-dark module.
   * @private @param {number} word
   */
  drawFormatWord(word) {
    const size = this.size;
    const bit = (/** @type {number} */ index) => ((word >> index) & 1) === 1;
    for (let index = 0; index < 6; index++) this.setFunction(8, index, bit(index));
    this.setFunction(8, 7, bit(6));
    this.setFunction(8, 8, bit(7));
    this.setFunction(7, 8, bit(8));
    for (let index = 9; index < 15; index++) this.setFunction(14 - index, 8, bit(index));
    for (let index = 0; index < 8; index++) this.setFunction(size - 1 - index, 8, bit(index));
    for (let index = 8; index < 15; index++) this.setFunction(8, size - 15 + index, bit(index));
    this.setFunction(8, size - 8, true); // the dark module (§7.9.1)
  }

  /**
   * Places `codewords` most significant bit first in two-module-wide columns, starting at
   * the bottom-right corner, going up then down alternately, skipping function modules and
   * the vertical timing column. Modules left over (remainder bits) stay light.
   * @param {Uint8Array} codewords
   */
  placeCodewords(codewords) {
    const size = this.size;
    const bitCount = codewords.length * 8;
    let bitIndex = 0;
    let right = size - 1;
    let upward = true;
    while (right >= 1) {
      if (right === 6) right = 5;
      for (let step = 0; step < size; step++) {
        const y = upward ? size - 1 - step : step;
        for (const x of [right, right - 1]) {
          if (this.isFunction[y * size + x] || bitIndex >= bitCount) continue;
          this.modules[y * size + x] = (codewords[bitIndex >> 3] >> (7 - (bitIndex & 7))) & 1;
          bitIndex += 1;
        }
      }
      right -= 2;
      upward = !upward;
    }
  }

  /**
   * Flips every non-function module that mask `mask` (0…7) selects.
   * @param {number} mask
   */
  applyMask(mask) {
    const size = this.size;
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        if (!this.isFunction[y * size + x] && maskFlips(mask, y, x)) this.modules[y * size + x] ^= 1;
      }
    }
  }
}

// MARK: - Mask evaluation (§7.8.3, Table 11)

/**
 * The penalty of a symbol whose row-major modules (1 = dark) are `modules`; lower is
 * better. Weights N1 = 3, N2 = 3, N3 = 40, N4 = 10. Rule 3 counts each 1:1:3:1:1 run in a
 * row or column once when four light modules precede or follow it, modules outside the
 * symbol counting as light (the quiet zone). Other encoders read the standard differently
 * here and may pick another mask for the same data; every mask yields a valid symbol.
 * @param {number} size @param {Uint8Array} modules
 * @returns {QRPenalty}
 */
export function qrPenalty(size, modules) {
  if (modules.length !== size * size) throw new Error("modules do not match the size");
  const dark = (/** @type {number} */ x, /** @type {number} */ y) => modules[y * size + x] === 1;
  let runs = 0;
  let finderLike = 0;
  let blocks = 0;
  for (let line = 0; line < size; line++) {
    const row = (/** @type {number} */ x) => dark(x, line);
    const column = (/** @type {number} */ y) => dark(line, y);
    runs += runPenalty(size, row) + runPenalty(size, column);
    finderLike += finderPenalty(size, row) + finderPenalty(size, column);
  }
  for (let y = 0; y < size - 1; y++) {
    for (let x = 0; x < size - 1; x++) {
      const colour = dark(x, y);
      if (dark(x + 1, y) === colour && dark(x, y + 1) === colour && dark(x + 1, y + 1) === colour) blocks += 3;
    }
  }
  let darkCount = 0;
  for (const module of modules) if (module === 1) darkCount += 1;
  const total = size * size;
  const balance = 10 * Math.floor(Math.abs(20 * darkCount - 10 * total) / total);
  return { runs, blocks, finderLike, balance, total: runs + blocks + finderLike + balance };
}

/**
 * Rule 1 for one line, read through `module`: 3 + (run − 5) for each run of five or more
 * same-coloured modules.
 * @param {number} size @param {(index: number) => boolean} module
 */
function runPenalty(size, module) {
  let penalty = 0;
  let runLength = 1;
  for (let index = 1; index <= size; index++) {
    if (index < size && module(index) === module(index - 1)) {
      runLength += 1;
    } else {
      if (runLength >= 5) penalty += 3 + runLength - 5;
      runLength = 1;
    }
  }
  return penalty;
}

const FINDER_LIKE = [true, false, true, true, true, false, true];

/**
 * Rule 3 for one line, read through `module`; positions outside 0…size−1 are light.
 * @param {number} size @param {(index: number) => boolean} module
 */
function finderPenalty(size, module) {
  const at = (/** @type {number} */ index) => index >= 0 && index < size && module(index);
  let penalty = 0;
  for (let start = 0; start <= size - FINDER_LIKE.length; start++) {
    if (!FINDER_LIKE.every((expected, offset) => at(start + offset) === expected)) continue;
    let lightBefore = true;
    let lightAfter = true;
    for (let distance = 1; distance <= 4; distance++) if (at(start - distance)) lightBefore = false;
    for (let distance = 0; distance < 4; distance++) if (at(start + FINDER_LIKE.length + distance)) lightAfter = false;
    if (lightBefore || lightAfter) penalty += 40;
  }
  return penalty;
}

// MARK: - Encoding

/**
 * Encodes `data` in byte mode.
 *
 * The smallest version in minVersion…maxVersion (1…40 by default) that holds `data` is
 * used. Without a fixed `mask`, all eight are tried and the one with the lowest penalty
 * is kept (ties go to the lower mask).
 * @param {Uint8Array} data the bytes (e.g. a link's UTF-8)
 * @param {QROptions} [options] level defaults to "M"
 * @returns {QRCode}
 * @throws {Error} when no allowed version holds `data`, or on an unknown level, a version
 *   outside 1…40, an empty version range or a mask outside 0…7
 */
export function encodeQR(data, options = {}) {
  const level = options.level ?? "M";
  const minVersion = options.minVersion ?? MIN_VERSION;
  const maxVersion = options.maxVersion ?? MAX_VERSION;
  if (!isLevel(level)) throw new Error(`unknown QR error-correction level ${String(level)} (L, M, Q or H)`);
  checkVersion(minVersion);
  checkVersion(maxVersion);
  if (minVersion > maxVersion) throw new Error("the smallest QR version is larger than the largest");
  if (options.mask !== undefined && !(Number.isInteger(options.mask) && options.mask >= 0 && options.mask < 8)) {
    throw new Error(`QR mask ${options.mask} is not one of 0…7`);
  }
  let version = minVersion;
  while (version <= maxVersion && data.length > byteCapacity(version, level)) version += 1;
  if (version > maxVersion) {
    throw new Error(`${data.length} bytes do not fit in a QR code (at most ${byteCapacity(maxVersion, level)} with the allowed versions at this error-correction level)`);
  }
  const grid = new ModuleGrid(version);
  grid.placeCodewords(interleavedCodewords(data, version, level));
  const candidates = options.mask === undefined ? [0, 1, 2, 3, 4, 5, 6, 7] : [options.mask];
  /** @type {QRCode | null} */
  let best = null;
  let bestPenalty = Infinity;
  for (const candidate of candidates) {
    const masked = grid.clone();
    masked.applyMask(candidate);
    masked.drawFormat(level, candidate);
    const penalty = candidates.length === 1 ? 0 : qrPenalty(masked.size, masked.modules).total;
    if (penalty < bestPenalty) {
      best = { version, size: masked.size, level, mask: candidate, modules: masked.modules };
      bestPenalty = penalty;
    }
  }
  if (!best) throw new Error("no QR mask evaluated");
  return best;
}

/**
 * Encodes the UTF-8 bytes of `text`; see encodeQR.
 * @param {string} text @param {QROptions} [options]
 * @returns {QRCode}
 */
export function encodeQRText(text, options = {}) {
  return encodeQR(new TextEncoder().encode(text), options);
}
