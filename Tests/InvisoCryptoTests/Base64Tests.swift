import InvisoCrypto
import Testing

@Suite("Base64")
struct Base64Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 test vectors both ways")
    func rfcVectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encodeString(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("every byte value and length round-trips")
    func roundTrip() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        let all = (0...255).map(UInt8.init)
        #expect(Base64.decode(Base64.encode(all)) == all)
    }

    @Test("non-canonical or invalid input is rejected")
    func rejects() {
        for text in ["Zg", "Zg=", "Zh==", "Zm9=", "Zm8", "Z===", "====", "Zm9v\n", " Zm9v", "Zm9v====", "Zg==Zm9v", "Zm-v", "Zm_v"] {
            #expect(Base64.decode(text) == nil, "\(text)")
        }
    }
}
