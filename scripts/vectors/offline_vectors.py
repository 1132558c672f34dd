#!/usr/bin/env python3
"""Generates Tests/InvisoOfflineTests/Resources/offline-vectors.json: SecureChats/KryptEY
envelopes built from the format description (../shared/docs/SECURECHATS.md) with Python's
json and base64 modules, independently of the Swift code, so the Swift writer can be
checked byte for byte and the reader against the same texts.

    python3 scripts/vectors/offline_vectors.py > Tests/InvisoOfflineTests/Resources/offline-vectors.json

The tests read only the JSON; they never run Python. Byte fields are made-up patterns, not
real keys: the envelope codec does not interpret them.

Each vector: "name", "form" (android | ios), "kind", "json" (the exact text an app writes),
and "fields" (the envelope's values, byte fields in hex).

"deflate": each vector's JSON compressed as the apps compress a Fairy Tale payload, with
Python's zlib binding: raw DEFLATE (window bits -15, memory level 8, default strategy) at
level 9 (Android, Java's Deflater(9, true)) and level 5 (iOS, COMPRESSION_ZLIB), in hex.

"encodings": each envelope as text in both forms (the JSON written again from its fields,
checked against the vector's own form), the way the format description builds it: "raw" (the JSON), "base64" (standard, padded, over the JSON) and "fairytale" (the cover
sentence below, then the compressed payload as invisible characters, high nibble first).
Fairy Tale in the Android form: every quoted key abbreviated by Android's list, raw DEFLATE
level 9; when that stream's first byte is 0x00 or >= 0x80 (Android's BigInteger decoder
loses such a byte), the stream is made again behind an empty fixed-Huffman block (zlib's
Z_PARTIAL_FLUSH before any input: first byte 0x02). In the iOS form: the iOS list, level 5,
the iOS table. "firstByte" is the level-9 stream's first byte, so both Android cases are
known to be covered.
"""
import base64
import json
import sys
import zlib


def pad(data):
    return base64.b64encode(data).decode()


def unpad(data):
    return pad(data).rstrip("=")


IDENTITY = bytes([5] + list(range(1, 33)))
SIGNED = bytes([5] + list(range(33, 65)))
SIGNATURE = bytes(range(100, 164))
ONE_TIME = bytes([5] + list(range(200, 232)))
KYBER = bytes([8]) + bytes((i * 7) & 0xFF for i in range(1568))
KYBER_SIGNATURE = bytes(255 - i for i in range(64))
# 50 bytes: the base64 needs padding ("=="), and contains "+" and "/".
CIPHERTEXT = bytes(range(0, 50))
CIPHERTEXT_2 = bytes((i * 37 + 11) & 0xFF for i in range(301))
ANDROID_ADDRESS = "3f1c0d7e-8a2b-4c5d-9e6f-0a1b2c3d4e5f"
IOS_ADDRESS = "8D4E2C1A-5B6F-4E7D-8C9B-0A1F2E3D4C5B"


def fields(ciphertext, ciphertext_type, device, response, address, timestamp):
    return {
        "ciphertext": ciphertext.hex() if ciphertext is not None else None,
        "ciphertextType": ciphertext_type,
        "deviceId": device,
        "preKeyResponse": response,
        "address": address,
        "timestamp": timestamp,
    }


def response_fields(kyber):
    return {
        "identityKey": IDENTITY.hex(),
        "devices": [{
            "deviceId": 1, "registrationId": 4242,
            "preKey": {"keyId": 1, "publicKey": ONE_TIME.hex()},
            "signedPreKey": {"keyId": 7, "publicKey": SIGNED.hex(), "signature": SIGNATURE.hex()},
        }],
        "kyberPreKeyId": 9 if kyber else None,
        "kyberPubKey": KYBER.hex() if kyber else None,
        "kyberSignature": KYBER_SIGNATURE.hex() if kyber else None,
    }


def android_response(kyber):
    device = [1, [1, unpad(ONE_TIME)], 4242, [7, unpad(SIGNED), unpad(SIGNATURE)]]
    return [[device], {"publicKey": unpad(IDENTITY)},
            9 if kyber else None, pad(KYBER) if kyber else None, pad(KYBER_SIGNATURE) if kyber else None]


def ios_response(kyber):
    device = {
        "deviceId": 1, "registrationId": 4242,
        "signedPreKey": {"keyId": 7, "publicKey": pad(SIGNED), "signature": pad(SIGNATURE)},
        "preKey": {"keyId": 1, "publicKey": pad(ONE_TIME)},
    }
    response = {"identityKey": pad(IDENTITY), "devices": [device]}
    if kyber:
        response.update({"kyberPubKey": pad(KYBER), "kyberPreKeyId": 9, "kyberSignature": pad(KYBER_SIGNATURE)})
    return response


def android(ciphertext, ciphertext_type, response, timestamp):
    return json.dumps(
        [pad(ciphertext) if ciphertext is not None else None, ciphertext_type, 1, response, ANDROID_ADDRESS, timestamp],
        separators=(",", ":"))


def ios(ciphertext, ciphertext_type, response, timestamp):
    value = {}
    if response is not None:
        value["preKeyResponse"] = response
    if ciphertext is not None:
        value["ciphertextMessage"] = pad(ciphertext)
    value.update({"ciphertextType": ciphertext_type, "timestamp": timestamp,
                  "signalProtocolAddressName": IOS_ADDRESS, "deviceId": 1})
    # Apple's JSONEncoder escapes "/" (Python's json does not).
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/")


def vectors():
    out = []
    for kyber, label in ((True, "PQXDH"), (False, "X3DH")):
        out.append({"name": f"android invite ({label})", "form": "android", "kind": "invite",
                    "json": android(None, 0, android_response(kyber), 1795743453000),
                    "fields": fields(None, 0, 1, response_fields(kyber), ANDROID_ADDRESS, 1795743453000)})
        out.append({"name": f"ios invite ({label})", "form": "ios", "kind": "invite",
                    "json": ios(None, 0, ios_response(kyber), 1795743453000),
                    "fields": fields(None, 0, 1, response_fields(kyber), IOS_ADDRESS, 1795743453000)})
    out.append({"name": "android pre-key message", "form": "android", "kind": "message",
                "json": android(CIPHERTEXT, 3, None, 1795743453001),
                "fields": fields(CIPHERTEXT, 3, 1, None, ANDROID_ADDRESS, 1795743453001)})
    out.append({"name": "android message", "form": "android", "kind": "message",
                "json": android(CIPHERTEXT_2, 2, None, 1795743453002),
                "fields": fields(CIPHERTEXT_2, 2, 1, None, ANDROID_ADDRESS, 1795743453002)})
    out.append({"name": "android rotation", "form": "android", "kind": "rotation",
                "json": android(CIPHERTEXT_2, 2, android_response(True), 1795743453003),
                "fields": fields(CIPHERTEXT_2, 2, 1, response_fields(True), ANDROID_ADDRESS, 1795743453003)})
    out.append({"name": "ios message", "form": "ios", "kind": "message",
                "json": ios(CIPHERTEXT, 2, None, 1795743453004),
                "fields": fields(CIPHERTEXT, 2, 1, None, IOS_ADDRESS, 1795743453004)})
    out.append({"name": "ios rotation", "form": "ios", "kind": "rotation",
                "json": ios(CIPHERTEXT_2, 2, ios_response(True), 1795743453005),
                "fields": fields(CIPHERTEXT_2, 2, 1, response_fields(True), IOS_ADDRESS, 1795743453005)})
    return out


def raw_deflate(data, level):
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    return compressor.compress(data) + compressor.flush()


def deflate_vectors(envelopes):
    return [{"name": vector["name"], "level": level, "input": vector["json"],
             "output": raw_deflate(vector["json"].encode(), level).hex()}
            for vector in envelopes for level in (9, 5)]


COVER = "Once upon a time there was a test vector."

ANDROID_TABLE = [0x200C, 0x200D, 0x2060, 0x2062, 0x200B, 0x200E, 0x200F, 0x2064,
                 0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF, 0x061C]
IOS_TABLE = [0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x206A,
             0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF, 0x200B, 0x061C]
ANDROID_KEYS = [("preKeyResponse", "pR"), ("identityKey", "i"), ("publicKey", "pK"), ("devices", "d"),
                ("deviceId", "dI"), ("registrationId", "rI"), ("signedPreKey", "sK"), ("keyId", "k"),
                ("signature", "s"), ("preKey", "prK"), ("ciphertextMessage", "c"), ("ciphertextType", "cT"),
                ("timestamp", "t"), ("signalProtocolAddressName", "a")]
IOS_KEYS = [("preKeyResponse", "pR"), ("ciphertextMessage", "cM"), ("ciphertextType", "cT"), ("timestamp", "ts"),
            ("signalProtocolAddressName", "a"), ("deviceId", "d"), ("identityKey", "iK"), ("devices", "dv"),
            ("kyberPubKey", "kP"), ("kyberPreKeyId", "kI"), ("kyberSignature", "kS"), ("signedPreKey", "sP"),
            ("preKey", "pK"), ("keyId", "kd"), ("publicKey", "pk"), ("signature", "sg"), ("registrationId", "rI")]


def fairy_tale(text, form):
    data = text
    if form == "android":
        data = data.replace(" ", "").replace("\n", "")
    for key, short in (ANDROID_KEYS if form == "android" else IOS_KEYS):
        data = data.replace('"%s"' % key, '"%s"' % short)
    data = data.encode()
    if form == "android":
        payload = raw_deflate(data, 9)
        first = payload[0]
        if not 0x01 <= first <= 0x7F:
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
            payload = compressor.flush(zlib.Z_PARTIAL_FLUSH) + compressor.compress(data) + compressor.flush()
        table = ANDROID_TABLE
    else:
        payload = raw_deflate(data, 5)
        first = raw_deflate(data, 9)[0]
        table = IOS_TABLE
    hidden = "".join(chr(table[b >> 4]) + chr(table[b & 15]) for b in payload)
    return COVER + hidden, payload, first


def json_from_fields(fields, form):
    """The envelope's JSON in `form`, written from its fields (checked against the
    hand-built vectors of the same form below)."""
    b = lambda h: bytes.fromhex(h)
    response = fields["preKeyResponse"]
    if form == "android":
        r = None
        if response is not None:
            d = response["devices"][0]
            device = [d["deviceId"], [d["preKey"]["keyId"], unpad(b(d["preKey"]["publicKey"]))], d["registrationId"],
                      [d["signedPreKey"]["keyId"], unpad(b(d["signedPreKey"]["publicKey"])),
                       unpad(b(d["signedPreKey"]["signature"]))]]
            kyber = response["kyberPubKey"] is not None
            r = [[device], {"publicKey": unpad(b(response["identityKey"]))},
                 response["kyberPreKeyId"], pad(b(response["kyberPubKey"])) if kyber else None,
                 pad(b(response["kyberSignature"])) if kyber else None]
        c = fields["ciphertext"]
        return json.dumps([pad(b(c)) if c is not None else None, fields["ciphertextType"], fields["deviceId"], r,
                           fields["address"], fields["timestamp"]], separators=(",", ":"))
    value = {}
    if response is not None:
        d = response["devices"][0]
        device = {"deviceId": d["deviceId"], "registrationId": d["registrationId"],
                  "signedPreKey": {"keyId": d["signedPreKey"]["keyId"], "publicKey": pad(b(d["signedPreKey"]["publicKey"])),
                                   "signature": pad(b(d["signedPreKey"]["signature"]))},
                  "preKey": {"keyId": d["preKey"]["keyId"], "publicKey": pad(b(d["preKey"]["publicKey"]))}}
        r = {"identityKey": pad(b(response["identityKey"])), "devices": [device]}
        if response["kyberPubKey"] is not None:
            r.update({"kyberPubKey": pad(b(response["kyberPubKey"])), "kyberPreKeyId": response["kyberPreKeyId"],
                      "kyberSignature": pad(b(response["kyberSignature"]))})
        value["preKeyResponse"] = r
    if fields["ciphertext"] is not None:
        value["ciphertextMessage"] = pad(b(fields["ciphertext"]))
    value.update({"ciphertextType": fields["ciphertextType"], "timestamp": fields["timestamp"],
                  "signalProtocolAddressName": fields["address"], "deviceId": fields["deviceId"]})
    return json.dumps(value, separators=(",", ":")).replace("/", "\\/")


def encoding_vectors(envelopes):
    out = []
    for vector in envelopes:
        assert json_from_fields(vector["fields"], vector["form"]) == vector["json"], vector["name"]
        for form in ("android", "ios"):
            text = json_from_fields(vector["fields"], form)
            fairy, payload, first = fairy_tale(text, form)
            out.append({"name": vector["name"], "form": form, "cover": COVER,
                        "raw": text, "base64": base64.b64encode(text.encode()).decode(),
                        "fairytale": fairy, "payload": payload.hex(), "firstByte": first})
    return out


if __name__ == "__main__":
    envelopes = vectors()
    json.dump({"generator": "scripts/vectors/offline_vectors.py", "zlib": zlib.ZLIB_RUNTIME_VERSION,
               "vectors": envelopes, "deflate": deflate_vectors(envelopes),
               "encodings": encoding_vectors(envelopes)}, sys.stdout, indent=1, ensure_ascii=True)
    sys.stdout.write("\n")
