import Crypto
import InvisoCrypto
@testable import InvisoKit
import InvisoTesting
import Testing

@Suite("Inviso v2 invites")
struct InviteTests {
    @Test("the wordlist is BIP-39 English: 2,048 unique sorted lowercase words with the pinned SHA-256")
    func wordlist() {
        let words = InviteWordlist.words
        #expect(words.count == 2_048 && InviteWordlist.count == 2_048)
        #expect(Set(words).count == 2_048)
        #expect(words.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x61...0x7A).contains($0) } })
        #expect(words == words.sorted())
        #expect(words.first == "abandon" && words[1_024] == "length" && words.last == "zoo")
        // BIP-39's words are unambiguous from their first four letters.
        #expect(Set(words.map { $0.prefix(4) }).count == 2_048)
        let file = Array((words.joined(separator: "\n") + "\n").utf8)
        #expect(Hex.encode(SHA256.hash(data: file)) == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda")
        for (index, word) in words.enumerated() { #expect(InviteWordlist.index(of: word) == index) }
        #expect(InviteWordlist.index(of: "Zoo") == nil && InviteWordlist.index(of: "") == nil)
        // Misses before the first word, after the last, between neighbours, by a prefix.
        for miss in ["aaa", "zzz", "zoos", "abando", "abandonx", "lengt", "lengthy", "é"] {
            #expect(InviteWordlist.index(of: miss) == nil, "\(miss)")
        }
    }

    @Test("generate draws each word from the low 11 bits of one next()")
    func generate() throws {
        var fixed = FixedBytesGenerator(
            [0xFF, 0x07, 0, 0, 0, 0, 0, 0] + [0x00, 0xF8, 0, 0, 0, 0, 0, 0] + [0x00, 0x04, 0, 0, 0, 0, 0, 0xAA])
        let invite = try Invite.generate(joinCode: "004217", using: &fixed)
        #expect(fixed.isExhausted)
        #expect(invite.words == ["zoo", "abandon", "length"])
        #expect(invite.text == "004217-zoo-abandon-length")
        #expect(invite.link == "inviso://join/004217#zoo-abandon-length")
        #expect(invite.joinCode == "004217")

        var generator = SeededGenerator(seed: 7)
        var seen = Set<String>()
        for _ in 0..<200 {
            let invite = try Invite.generate(joinCode: Invite.randomJoinCode(using: &generator), using: &generator)
            #expect(invite.words.count == 3 && invite.joinCode.utf8.count == 6)
            seen.formUnion(invite.words)
        }
        #expect(seen.count > 400)  // 600 draws from 2,048 words
        #expect(throws: V2Error.invalidJoinCode) { try Invite.generate(joinCode: "12345", using: &generator) }
        #expect(throws: V2Error.invalidJoinCode) { try Invite.generate(joinCode: "١٢٣٤٥٦", using: &generator) }
    }

    @Test("text and link forms round-trip, in any case and with surrounding whitespace")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<50 {
            let invite = try Invite.generate(joinCode: Invite.randomJoinCode(using: &generator), using: &generator)
            for text in [invite.text, invite.link, invite.text.uppercased(), " \t\(invite.link.uppercased())\n "] {
                guard case .v2(let parsed) = try Invite.parse(text) else {
                    Issue.record("not parsed as v2")
                    continue
                }
                #expect(parsed.text == invite.text && parsed.link == invite.link)
            }
        }
        let mixed = try Invite(joinCode: "000000", words: ["Apple", "BANANA", "cherry"])
        #expect(mixed.text == "000000-apple-banana-cherry")
    }

    @Test("a bare six-digit code means v1 only")
    func v1Only() throws {
        for text in ["123456", "  000001\n"] {
            guard case .v1Only(let code) = try Invite.parse(text) else {
                Issue.record("not v1")
                continue
            }
            #expect(code == text.trimmingWhitespace)
        }
    }

    @Test("malformed invites are refused with typed errors that never repeat a word")
    func rejections() {
        let cases: [(String, V2Error)] = [
            ("", .malformedInvite), ("   ", .malformedInvite), ("hello", .malformedInvite),
            ("apple-banana-cherry", .malformedInvite), ("123456 apple banana cherry", .malformedInvite),
            ("https://join/123456#apple-banana-cherry", .malformedInvite),
            ("12345", .invalidJoinCode), ("1234567", .invalidJoinCode), ("12345-apple-banana-cherry", .invalidJoinCode),
            ("１２３４５６-apple-banana-cherry", .malformedInvite),
            ("123456-", .wrongWordCount), ("123456-apple-banana", .wrongWordCount),
            ("123456-apple-banana-cherry-lemon", .wrongWordCount), ("123456-apple--banana", .unknownWord),
            ("123456-apple-banana-cherryx", .unknownWord), ("123456-apple-banana-kiwi ", .v2OK),
            ("123456-apple-bananа-cherry", .unknownWord),  // Cyrillic а
            ("123456-apple-\u{212A}iwi-cherry", .unknownWord),  // Kelvin sign lowercases to k in Unicode
            ("inviso://join/123456", .missingSecret), ("inviso://join/123456#", .missingSecret),
            ("inviso://join/12345#apple-banana-cherry", .invalidJoinCode),
            ("inviso://join/#apple-banana-cherry", .invalidJoinCode),
            ("inviso://join/123456#apple-banana", .wrongWordCount),
            ("inviso://join/123456#apple-banana-secretword", .unknownWord),
        ]
        for (text, expected) in cases {
            do {
                _ = try Invite.parse(text)
                #expect(expected == .v2OK, "\(text) parsed")
            } catch {
                #expect(error == expected, "\(text): \(error)")
                #expect(!error.description.contains("secretword") && !error.description.contains("banana"))
            }
        }
        #expect(throws: V2Error.wrongWordCount) { try Invite(joinCode: "123456", words: ["apple"]) }
        #expect(throws: V2Error.unknownWord) { try Invite(joinCode: "123456", words: ["apple", "banana", "nope"]) }
    }

    @Test("the words are in no description, debug description or dump")
    func redacted() throws {
        let invite = try Invite(joinCode: "314159", words: ["orbit", "violin", "quantum"])
        var dumped = ""
        dump(invite, to: &dumped)
        for text in [invite.description, String(reflecting: invite), "\(invite)", dumped] {
            #expect(text.contains("314159") || text == dumped)
            for word in invite.words { #expect(!text.contains(word), "\(text)") }
        }
        #expect(invite.passwordRelatedString == SecretBytes(Array("orbit-violin-quantum".utf8)))
    }
}

extension V2Error {
    /// A marker for "this text parses" in the rejection table.
    fileprivate static let v2OK = V2Error(.notEstablished, "test marker: parses")
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
