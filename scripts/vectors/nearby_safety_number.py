#!/usr/bin/env python3
"""Known answer for NearbySafetyNumber (Tests/InvisoNearbyTests/SafetyNumberTests.swift).

An independent implementation of libsignal's displayable fingerprint (version 2,
5,200 iterations): per side, h = 0x0000 ‖ key ‖ stable id, then 5,200 times
h = SHA-512(h ‖ key); the first 30 bytes, as six 5-byte big-endian numbers mod 100,000,
give 30 digits; the two sides' digits are joined in ascending order. The keys are the
Ed25519 public keys of the 32-byte seeds 01…01 and 02…02; the stable id is "inviso-nearby".
"""
import hashlib
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization


def public(seed: int) -> bytes:
    key = Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32).public_key()
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def half(key: bytes, stable_id: bytes) -> str:
    h = b"\x00\x00" + key + stable_id
    for _ in range(5200):
        h = hashlib.sha512(h + key).digest()
    return "".join("%05d" % (int.from_bytes(h[i:i + 5], "big") % 100000) for i in range(0, 30, 5))


stable = b"inviso-nearby"
a, b = half(public(1), stable), half(public(2), stable)
print(a + b if a <= b else b + a)
