import Foundation
import Testing

@testable import inviso

@Suite("JSON output lines")
struct JSONLinesTests {
    @Test("strings are escaped as RFC 8259 asks and read back by JSONSerialization unchanged")
    func strings() throws {
        let samples = [
            "", "plain", "quote \" and backslash \\", "a/b", "line\nbreak\ttab\rcr", "\u{8}\u{C}", "\u{0}\u{1}\u{1F}\u{7F}",
            "héllo wörld", "emoji 👩‍👩‍👧", "\u{200E}mark\u{2028}sep",
        ]
        for sample in samples {
            let text = JSONValue.string(sample).json
            let decoded = try JSONSerialization.jsonObject(with: Data("[\(text)]".utf8)) as? [String]
            #expect(decoded == [sample], "\(text)")
        }
        #expect(JSONValue.string("a\"b\\c/d\n\u{1}").json == #""a\"b\\c/d\n\u0001""#)
    }

    @Test("numbers: whole doubles as integers, others round-trip, not-finite ones are null")
    func numbers() {
        #expect(JSONValue.double(30).json == "30")
        #expect(JSONValue.double(-0.0).json == "0")
        #expect(JSONValue.double(12.5).json == "12.5")
        #expect(JSONValue.double(.nan).json == "null" && JSONValue.double(.infinity).json == "null")
        #expect(JSONValue.int(-7).json == "-7" && JSONValue.bool(true).json == "true" && JSONValue.null.json == "null")
        for value in [0.1, 1e-7, 123_456.789, 1e300, -2.5e-300, 9_007_199_254_740_993.0, 4.0e15 + 0.5] {
            let text = JSONValue.double(value).json
            // JSON's number grammar (no leading "+", no ".5", no "5."), and the same value back.
            #expect(text.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/) != nil, "\(text)")
            #expect(Double(text) == value, "\(text)")
        }
    }

    @Test("an object keeps its keys in the order given")
    func object() {
        let line = JSONLines.object(["event": .string("message"), "id": .int(3), "text": .string("hi \"you\"")])
        #expect(line == #"{"event":"message","id":3,"text":"hi \"you\""}"#)
    }
}
