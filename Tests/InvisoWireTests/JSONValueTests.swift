import InvisoWire
import Testing

@Suite("JSON values: strict parsing, order- and literal-preserving round trips")
struct JSONValueTests {
    @Test(
        "Round trips keep key order, number literals and escapes",
        arguments: [
            #"{"type":"ice_candidate","candidate":{"candidate":"candidate:1 1 udp 2122260223 10.0.0.2 53421 typ host","sdpMLineIndex":0,"sdpMid":"0"}}"#,
            #"{"z":1,"a":2,"m":[true,false,null,-0.5,1e+300,12345678901234567890]}"#,
            #"{"timestamp":1763743200123.25,"s":"quote \" backslash \\ newline \n tab \t nul \u0000 é ✓ 😀"}"#,
            #"[]"#, #"{}"#, #""""#, #"0"#, #"-12.5E-3"#,
        ])
    func roundTrip(text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(value.jsonText == text)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test("Whitespace is accepted around values and dropped on output")
    func whitespace() throws {
        let value = try JSONValue.parse(" {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\":{} } ")
        #expect(value.jsonText == #"{"a":[1,2],"b":{}}"#)
    }

    @Test("Escapes decode: \\u with surrogate pairs, \\/ and short escapes")
    func escapes() throws {
        let value = try JSONValue.parse(#""\ud83d\ude00 \u00e9 \/ \b\f""#)
        #expect(value.stringValue == "😀 é / \u{08}\u{0C}")
    }

    @Test(
        "Malformed texts are refused with an offset, never a crash",
        arguments: [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.", ".5", "1e", "+1", "-",
            "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
            "\"a\u{01}b\"", "{\"a\":1}{", "[1] x", "{\"a\":1,\"a\":2}", "NaN", "Infinity",
        ])
    func malformed(text: String) {
        #expect(throws: JSONError.self) { try JSONValue.parse(text) }
    }

    @Test("Invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xff, 0x22], [0x22, 0xc3, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22]] {
            #expect(throws: JSONError.self) { try JSONValue.parse(bytes) }
        }
    }

    @Test("Depth and container limits hold (a deep nest is an error, not a stack overflow)")
    func limits() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONError.self) { try JSONValue.parse(deep) }
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try JSONValue.parse(ok)
        let wide = "[" + Array(repeating: "1", count: 5_000).joined(separator: ",") + "]"
        #expect(throws: JSONError.self) { try JSONValue.parse(wide) }
        let small = JSONValue.ParseLimits(maxDepth: 2, maxContainerCount: 2)
        #expect(throws: JSONError.self) { try JSONValue.parse("[[[]]]", limits: small) }
        #expect(throws: JSONError.self) { try JSONValue.parse("[1,2,3]", limits: small) }
    }

    @Test("Integer accessor: integers and integral numbers only")
    func integers() throws {
        #expect(try JSONValue.parse("42").integerValue == 42)
        #expect(try JSONValue.parse("-7").integerValue == -7)
        #expect(try JSONValue.parse("3.0").integerValue == 3)
        #expect(try JSONValue.parse("3e2").integerValue == 300)
        #expect(try JSONValue.parse("3.5").integerValue == nil)
        #expect(try JSONValue.parse("1e300").integerValue == nil)
        #expect(try JSONValue.parse("\"3\"").integerValue == nil)
    }

    @Test("Objects: subscript appends, replaces in place and removes")
    func objectEditing() {
        var object = JSONObject([("type", .string("x")), ("a", .integer(1))])
        object["from"] = .string("peer")
        object["a"] = .integer(2)
        object["type"] = nil
        #expect(object.keys == ["a", "from"])
        #expect(JSONValue.object(object).jsonText == #"{"a":2,"from":"peer"}"#)
    }
}
