#!/usr/bin/env python3
"""Builds the page's ChaCha20 and Poly1305 core as WebAssembly.

Writes web/wasm/chacha20poly1305.wat (the text, generated here: the twenty rounds are
written out) and web/js/crypto/chacha20poly1305-wasm.js (the module's bytes, base64,
compiled by wabt's `wat2wasm` from Debian). `--check` builds into memory and fails when
either committed file differs (scripts/test.sh runs it; CI installs wabt).

The module (RFC 8439, written from its sections 2.3-2.5):

  memory (exported)               grown by the JavaScript side as messages need
  chacha20(key, nonce, counter, src, dst, len)
                                  dst = src XOR keystream(key, nonce, from counter); the
                                  key (32 bytes) and nonce (12) are read from memory
  poly_init(key)                  r (clamped) and s from the 32-byte one-time key; h = 0
  poly_blocks(src, len, hibit)    absorbs len / 16 whole blocks; hibit 1 adds 2^128 to each
  poly_finish(out)                writes the 16-byte tag

Poly1305 keeps h and r in five 26-bit limbs in i64s: a product is below 2^56 and a sum of
five below 2^59, so nothing overflows; the final reduction selects h or h - p with a mask,
without a branch.
"""

import base64
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
WAT = ROOT / "web" / "wasm" / "chacha20poly1305.wat"
JS = ROOT / "web" / "js" / "crypto" / "chacha20poly1305-wasm.js"


def quarter(a, b, c, d):
    """One quarter round on locals $xa..$xd (§2.1)."""
    lines = []
    for (p, q, r, shift) in ((a, b, d, 16), (c, d, b, 12), (a, b, d, 8), (c, d, b, 7)):
        # p += q; r ^= p; r <<<= shift
        lines.append(f"    (local.set $x{p} (i32.add (local.get $x{p}) (local.get $x{q})))")
        lines.append(f"    (local.set $x{r} (i32.rotl (i32.xor (local.get $x{r}) (local.get $x{p})) (i32.const {shift})))")
    return lines


def block_function():
    """$block: the keystream block of the state at $state into memory at $out (64 bytes)."""
    lines = ["  (func $block (param $state i32) (param $out i32)"]
    lines.append("    " + " ".join(f"(local $x{i} i32)" for i in range(16)))
    lines.append("    (local $round i32)")
    for i in range(16):
        lines.append(f"    (local.set $x{i} (i32.load offset={4 * i} (local.get $state)))")
    lines.append("    (local.set $round (i32.const 10))")
    lines.append("    (loop $rounds")
    body = []
    for (a, b, c, d) in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                         (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
        body += quarter(a, b, c, d)
    lines += ["  " + line for line in body]
    lines.append("      (local.set $round (i32.sub (local.get $round) (i32.const 1)))")
    lines.append("      (br_if $rounds (local.get $round)))")
    for i in range(16):
        lines.append(
            f"    (i32.store offset={4 * i} (local.get $out) "
            f"(i32.add (local.get $x{i}) (i32.load offset={4 * i} (local.get $state))))")
    lines.append("  )")
    return lines


MASK26 = "(i64.const 0x3ffffff)"


def poly_functions():
    g = lambda name: f"(global.get ${name})"
    lines = []
    # poly_init: r clamped (§2.5.1), split in 26-bit limbs; s kept whole.
    lines += [
        "  (func (export \"poly_init\") (param $key i32)",
        "    (local $lo i64) (local $hi i64)",
        "    (local.set $lo (i64.and (i64.load (local.get $key)) (i64.const 0x0ffffffc0fffffff)))",
        "    (local.set $hi (i64.and (i64.load offset=8 (local.get $key)) (i64.const 0x0ffffffc0ffffffc)))",
        f"    (global.set $r0 (i64.and (local.get $lo) {MASK26}))",
        f"    (global.set $r1 (i64.and (i64.shr_u (local.get $lo) (i64.const 26)) {MASK26}))",
        f"    (global.set $r2 (i64.and (i64.or (i64.shr_u (local.get $lo) (i64.const 52)) (i64.shl (local.get $hi) (i64.const 12))) {MASK26}))",
        f"    (global.set $r3 (i64.and (i64.shr_u (local.get $hi) (i64.const 14)) {MASK26}))",
        "    (global.set $r4 (i64.shr_u (local.get $hi) (i64.const 40)))",
        "    (global.set $s_lo (i64.load offset=16 (local.get $key)))",
        "    (global.set $s_hi (i64.load offset=24 (local.get $key)))",
    ]
    lines += [f"    (global.set $h{i} (i64.const 0))" for i in range(5)]
    lines.append("  )")

    # poly_blocks: h = (h + block) * r mod 2^130 - 5, per 16-byte block.
    lines += [
        "  (func (export \"poly_blocks\") (param $src i32) (param $len i32) (param $hibit i32)",
        "    (local $lo i64) (local $hi i64) (local $top i64) (local $c i64)",
        "    (local $h0 i64) (local $h1 i64) (local $h2 i64) (local $h3 i64) (local $h4 i64)",
        "    (local $r0 i64) (local $r1 i64) (local $r2 i64) (local $r3 i64) (local $r4 i64)",
        "    (local $s1 i64) (local $s2 i64) (local $s3 i64) (local $s4 i64)",
        "    (local $d0 i64) (local $d1 i64) (local $d2 i64) (local $d3 i64) (local $d4 i64)",
        "    (local $end i32)",
        "    (local.set $top (i64.shl (i64.extend_i32_u (local.get $hibit)) (i64.const 24)))",
        "    (local.set $end (i32.add (local.get $src) (i32.and (local.get $len) (i32.const -16))))",
    ]
    lines += [f"    (local.set $h{i} {g(f'h{i}')})" for i in range(5)]
    lines += [f"    (local.set $r{i} {g(f'r{i}')})" for i in range(5)]
    lines += [f"    (local.set $s{i} (i64.mul (local.get $r{i}) (i64.const 5)))" for i in range(1, 5)]
    lines += [
        "    (block $done",
        "      (loop $blocks",
        "        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))",
        "        (local.set $lo (i64.load (local.get $src)))",
        "        (local.set $hi (i64.load offset=8 (local.get $src)))",
        f"        (local.set $h0 (i64.add (local.get $h0) (i64.and (local.get $lo) {MASK26})))",
        f"        (local.set $h1 (i64.add (local.get $h1) (i64.and (i64.shr_u (local.get $lo) (i64.const 26)) {MASK26})))",
        f"        (local.set $h2 (i64.add (local.get $h2) (i64.and (i64.or (i64.shr_u (local.get $lo) (i64.const 52)) (i64.shl (local.get $hi) (i64.const 12))) {MASK26})))",
        f"        (local.set $h3 (i64.add (local.get $h3) (i64.and (i64.shr_u (local.get $hi) (i64.const 14)) {MASK26})))",
        "        (local.set $h4 (i64.add (local.get $h4) (i64.or (i64.shr_u (local.get $hi) (i64.const 40)) (local.get $top))))",
    ]
    # d_k = sum over i of h_i * (r_{k-i} or 5 r_{k-i+5})
    def term(i, k):
        j = k - i
        factor = f"$r{j}" if j >= 0 else f"$s{j + 5}"
        return f"(i64.mul (local.get $h{i}) (local.get {factor}))"
    for k in range(5):
        expr = term(0, k)
        for i in range(1, 5):
            expr = f"(i64.add {expr} {term(i, k)})"
        lines.append(f"        (local.set $d{k} {expr})")
    lines += [
        "        (local.set $c (i64.shr_u (local.get $d0) (i64.const 26)))",
        f"        (local.set $h0 (i64.and (local.get $d0) {MASK26}))",
    ]
    for k in range(1, 5):
        lines += [
            f"        (local.set $d{k} (i64.add (local.get $d{k}) (local.get $c)))",
            f"        (local.set $c (i64.shr_u (local.get $d{k}) (i64.const 26)))",
            f"        (local.set $h{k} (i64.and (local.get $d{k}) {MASK26}))",
        ]
    lines += [
        "        (local.set $h0 (i64.add (local.get $h0) (i64.mul (local.get $c) (i64.const 5))))",
        "        (local.set $c (i64.shr_u (local.get $h0) (i64.const 26)))",
        f"        (local.set $h0 (i64.and (local.get $h0) {MASK26}))",
        "        (local.set $h1 (i64.add (local.get $h1) (local.get $c)))",
        "        (local.set $src (i32.add (local.get $src) (i32.const 16)))",
        "        (br $blocks)))",
    ]
    lines += [f"    (global.set $h{i} (local.get $h{i}))" for i in range(5)]
    lines.append("  )")

    # poly_finish: carry fully, subtract p when h >= p (mask select), add s mod 2^128.
    lines += [
        "  (func (export \"poly_finish\") (param $out i32)",
        "    (local $h0 i64) (local $h1 i64) (local $h2 i64) (local $h3 i64) (local $h4 i64)",
        "    (local $g0 i64) (local $g1 i64) (local $g2 i64) (local $g3 i64) (local $g4 i64)",
        "    (local $c i64) (local $keep i64) (local $f0 i64) (local $f1 i64) (local $sum i64)",
    ]
    lines += [f"    (local.set $h{i} {g(f'h{i}')})" for i in range(5)]
    for (a, b) in ((1, 2), (2, 3), (3, 4)):
        lines += [
            f"    (local.set $c (i64.shr_u (local.get $h{a}) (i64.const 26)))",
            f"    (local.set $h{a} (i64.and (local.get $h{a}) {MASK26}))",
            f"    (local.set $h{b} (i64.add (local.get $h{b}) (local.get $c)))",
        ]
    lines += [
        "    (local.set $c (i64.shr_u (local.get $h4) (i64.const 26)))",
        f"    (local.set $h4 (i64.and (local.get $h4) {MASK26}))",
        "    (local.set $h0 (i64.add (local.get $h0) (i64.mul (local.get $c) (i64.const 5))))",
        "    (local.set $c (i64.shr_u (local.get $h0) (i64.const 26)))",
        f"    (local.set $h0 (i64.and (local.get $h0) {MASK26}))",
        "    (local.set $h1 (i64.add (local.get $h1) (local.get $c)))",
        # g = h + 5 - 2^130
        "    (local.set $g0 (i64.add (local.get $h0) (i64.const 5)))",
        "    (local.set $c (i64.shr_u (local.get $g0) (i64.const 26)))",
        f"    (local.set $g0 (i64.and (local.get $g0) {MASK26}))",
    ]
    for k in range(1, 4):
        lines += [
            f"    (local.set $g{k} (i64.add (local.get $h{k}) (local.get $c)))",
            f"    (local.set $c (i64.shr_u (local.get $g{k}) (i64.const 26)))",
            f"    (local.set $g{k} (i64.and (local.get $g{k}) {MASK26}))",
        ]
    lines += [
        "    (local.set $g4 (i64.sub (i64.add (local.get $h4) (local.get $c)) (i64.const 0x4000000)))",
        # keep = all ones when g4 < 0 (h < p: keep h), else 0 (take g)
        "    (local.set $keep (i64.shr_s (local.get $g4) (i64.const 63)))",
    ]
    for k in range(5):
        lines.append(
            f"    (local.set $h{k} (i64.or (i64.and (local.get $h{k}) (local.get $keep)) "
            f"(i64.and (i64.and (local.get $g{k}) {MASK26}) (i64.xor (local.get $keep) (i64.const -1)))))")
    lines += [
        "    (local.set $f0 (i64.or (i64.or (local.get $h0) (i64.shl (local.get $h1) (i64.const 26))) (i64.shl (local.get $h2) (i64.const 52))))",
        "    (local.set $f1 (i64.or (i64.or (i64.shr_u (local.get $h2) (i64.const 12)) (i64.shl (local.get $h3) (i64.const 14))) (i64.shl (local.get $h4) (i64.const 40))))",
        "    (local.set $sum (i64.add (local.get $f0) (global.get $s_lo)))",
        "    (i64.store (local.get $out) (local.get $sum))",
        "    (i64.store offset=8 (local.get $out) (i64.add (i64.add (local.get $f1) (global.get $s_hi)) (i64.extend_i32_u (i64.lt_u (local.get $sum) (local.get $f0)))))",
        "  )",
    ]
    return lines


def chacha_function():
    """chacha20: the state at STATE (64 bytes of scratch at 0), one block at a time."""
    return [
        "  (func (export \"chacha20\") (param $key i32) (param $nonce i32) (param $counter i32) (param $src i32) (param $dst i32) (param $len i32)",
        "    (local $i i32) (local $end i32) (local $rest i32)",
        # state: constants, key, counter, nonce at offset 0; keystream at 64
        "    (i32.store (i32.const 0) (i32.const 0x61707865))",
        "    (i32.store (i32.const 4) (i32.const 0x3320646e))",
        "    (i32.store (i32.const 8) (i32.const 0x79622d32))",
        "    (i32.store (i32.const 12) (i32.const 0x6b206574))",
        "    (memory.copy (i32.const 16) (local.get $key) (i32.const 32))",
        "    (i32.store (i32.const 48) (local.get $counter))",
        "    (memory.copy (i32.const 52) (local.get $nonce) (i32.const 12))",
        "    (local.set $end (i32.add (local.get $src) (i32.and (local.get $len) (i32.const -64))))",
        "    (block $whole",
        "      (loop $blocks",
        "        (br_if $whole (i32.ge_u (local.get $src) (local.get $end)))",
        "        (call $block (i32.const 0) (i32.const 64))",
        "        (local.set $i (i32.const 0))",
        "        (loop $words",
        "          (i64.store (i32.add (local.get $dst) (local.get $i))",
        "            (i64.xor (i64.load (i32.add (local.get $src) (local.get $i))) (i64.load offset=64 (local.get $i))))",
        "          (local.set $i (i32.add (local.get $i) (i32.const 8)))",
        "          (br_if $words (i32.lt_u (local.get $i) (i32.const 64))))",
        "        (i32.store (i32.const 48) (i32.add (i32.load (i32.const 48)) (i32.const 1)))",
        "        (local.set $src (i32.add (local.get $src) (i32.const 64)))",
        "        (local.set $dst (i32.add (local.get $dst) (i32.const 64)))",
        "        (br $blocks)))",
        "    (local.set $rest (i32.and (local.get $len) (i32.const 63)))",
        "    (if (local.get $rest)",
        "      (then",
        "        (call $block (i32.const 0) (i32.const 64))",
        "        (local.set $i (i32.const 0))",
        "        (loop $bytes",
        "          (i32.store8 (i32.add (local.get $dst) (local.get $i))",
        "            (i32.xor (i32.load8_u (i32.add (local.get $src) (local.get $i))) (i32.load8_u offset=64 (local.get $i))))",
        "          (local.set $i (i32.add (local.get $i) (i32.const 1)))",
        "          (br_if $bytes (i32.lt_u (local.get $i) (local.get $rest))))))",
        "  )",
    ]


def wat():
    lines = [
        ";; ChaCha20 and Poly1305 (RFC 8439) for the page. Generated by scripts/build-wasm.py:",
        ";; edit that script, not this file. Memory: bytes 0-63 the ChaCha20 state, 64-127 a",
        ";; keystream block; the JavaScript side uses 1024 on.",
        "(module",
        "  (memory (export \"memory\") 1)",
    ]
    lines += [f"  (global ${name} (mut i64) (i64.const 0))" for name in
              ["r0", "r1", "r2", "r3", "r4", "h0", "h1", "h2", "h3", "h4", "s_lo", "s_hi"]]
    lines += block_function() + chacha_function() + poly_functions()
    lines.append(")")
    return "\n".join(lines) + "\n"


def compile_wasm(text):
    with tempfile.TemporaryDirectory() as folder:
        source = pathlib.Path(folder) / "module.wat"
        output = pathlib.Path(folder) / "module.wasm"
        source.write_text(text)
        subprocess.run(["wat2wasm", str(source), "-o", str(output)], check=True)
        return output.read_bytes()


def module_js(binary):
    encoded = base64.b64encode(binary).decode()
    chunks = [encoded[i:i + 96] for i in range(0, len(encoded), 96)]
    body = "\n".join(f'  "{chunk}" +' for chunk in chunks).rstrip(" +") 
    return (
        "// Generated by scripts/build-wasm.py from web/wasm/chacha20poly1305.wat (wabt's wat2wasm):\n"
        "// do not edit. The bytes of the ChaCha20 and Poly1305 WebAssembly module, base64.\n"
        f"export const WASM_BASE64 =\n{body};\n")


def main():
    text = wat()
    js = module_js(compile_wasm(text))
    if "--check" in sys.argv:
        stale = [path for path, content in ((WAT, text), (JS, js)) if not path.exists() or path.read_text() != content]
        if stale:
            print("stale: " + ", ".join(str(path.relative_to(ROOT)) for path in stale) + " (run scripts/build-wasm.py)")
            sys.exit(1)
        print("web/wasm is current")
        return
    WAT.parent.mkdir(parents=True, exist_ok=True)
    WAT.write_text(text)
    JS.write_text(js)
    print(f"wrote {WAT.relative_to(ROOT)} and {JS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
