import InvisoKit
import Testing

@testable import inviso

@Suite("--server and --expires")
struct ServerAddressTests {
    @Test("URL forms: scheme, default ports, IPv6, trailing slash")
    func forms() throws {
        let plain = try ServerAddress.parse("http://127.0.0.1:8080")
        #expect(plain.host == "127.0.0.1" && plain.port == 8080 && !plain.useTLS)
        let secure = try ServerAddress.parse("HTTPS://chat.example.org/")
        #expect(secure.host == "chat.example.org" && secure.port == 443 && secure.useTLS)
        let bare = try ServerAddress.parse("localhost:9000")
        #expect(bare.host == "localhost" && bare.port == 9000 && !bare.useTLS)
        let six = try ServerAddress.parse("http://[::1]:8081")
        #expect(six.host == "::1" && six.port == 8081)
        #expect(try ServerAddress.parse("http://example.org").port == 80)
        // Spaces and tabs around the address (a pasted value) are ignored.
        #expect(try ServerAddress.parse(" \thttp://example.org:81 \u{00A0}").port == 81)
        #expect(try InviteLifetime.seconds("  5m\t") == 300)
    }

    @Test("trimming spaces: leading and trailing blanks go, line breaks and inner spaces stay")
    func trimming() {
        #expect(" \t a b \u{3000}".trimmingSpaces() == "a b")
        #expect("\n x \n".trimmingSpaces() == "\n x \n")
        #expect("   ".trimmingSpaces().isEmpty && "".trimmingSpaces().isEmpty)
        #expect("x".trimmingSpaces() == "x")
    }

    @Test("bad addresses are refused with a message", arguments: [
        "ftp://x:1", "http://host:0", "http://host:70000", "http://host:abc", "http://", "http://a b:1",
        "http://host:1/api", "http://[::1", "http://[::1]x",
    ])
    func refused(_ text: String) {
        #expect(throws: CLIError.self) { _ = try ServerAddress.parse(text) }
    }

    @Test("the flag wins over INVISO_SERVER, which wins over the default")
    func precedence() throws {
        #expect(try ServerAddress.resolve(flag: nil, environment: [:]).port == 8080)
        #expect(try ServerAddress.resolve(flag: nil, environment: ["INVISO_SERVER": "http://h:1"]).host == "h")
        #expect(try ServerAddress.resolve(flag: "http://f:2", environment: ["INVISO_SERVER": "http://h:1"]).host == "f")
        #expect(try ServerAddress.resolve(flag: nil, environment: ["INVISO_SERVER": ""]).port == 8080)
    }

    @Test("--expires: s, m, h within 1 s … 24 h")
    func lifetimes() throws {
        #expect(try InviteLifetime.seconds("5m") == 300)
        #expect(try InviteLifetime.seconds("90s") == 90)
        #expect(try InviteLifetime.seconds("24h") == 86_400)
        for bad in ["0m", "25h", "5", "m", "-1m", "5d", "99999999999999999h"] {
            #expect(throws: CLIError.self) { _ = try InviteLifetime.seconds(bad) }
        }
    }
}
