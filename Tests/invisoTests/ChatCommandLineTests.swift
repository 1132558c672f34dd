import ArgumentParser
import Testing

@testable import inviso

/// ``ChatCommandLine`` reads `invite`, `join` and `resume` into the same values as
/// ArgumentParser, and leaves everything else to it.
@Suite("Chat command lines without ArgumentParser")
struct ChatCommandLineTests {
    /// The fields of a parsed chat command, for comparing two parses.
    struct Fields: Equatable {
        var command: String
        var positional: String?
        var server: String?
        var data: String?
        var downloads: String?
        var ephemeral: Bool
        var name: String?
        var displayName: String?
        var json: Bool
        var noDirect: Bool
        var linger: Int
        var fileRate: UInt64?
        var expires: String?
        var noUnicode: Bool?
        var invert: Bool?

        init(_ command: any ParsableCommand) throws {
            let options: ChatOptions
            switch command {
            case let invite as InviteCommand:
                self.command = "invite"
                options = invite.options.named(invite.naming)
                expires = invite.expires
                noUnicode = invite.display.noUnicode
                invert = invite.display.invert
            case let join as JoinCommand:
                self.command = "join"
                options = join.options.named(join.naming)
                positional = join.invite
                noUnicode = join.text.noUnicode
            case let resume as ResumeCommand:
                self.command = "resume"
                options = resume.options
                positional = resume.sessionID
                noUnicode = resume.text.noUnicode
            default:
                throw ChatCommandLineMismatch(description: "not a chat command: \(type(of: command))")
            }
            server = options.server
            data = options.data
            downloads = options.downloads
            ephemeral = options.ephemeral
            name = options.name
            displayName = options.displayName
            json = options.json
            noDirect = options.noDirect
            linger = options.linger
            fileRate = options.fileRate?.bytesPerSecond
        }
    }

    struct ChatCommandLineMismatch: Error, CustomStringConvertible {
        var description: String
    }

    static let read: [[String]] = [
        ["invite"],
        ["invite", "--json", "--ephemeral", "--server", "http://127.0.0.1:8080"],
        ["invite", "--server=https://chat.example", "--data", "/tmp/d", "--name", "bob", "--linger", "0", "--expires", "2h"],
        ["invite", "--no-unicode", "--invert-qr", "--no-direct", "--expires=30s"],
        ["invite", "--expires", "1d"],
        ["join", "123456-apple-river-stone", "--json", "--ephemeral", "--server", "http://127.0.0.1:1"],
        ["join", "--json", "inviso://join/123456#apple-river-stone"],
        ["join", "123456", "--linger=3600", "--name", "with alice", "--data", "relative/dir"],
        ["join", "123456", "--no-unicode", "--downloads", "/tmp/in"],
        ["resume", "abcd", "--downloads=~/x"],
        ["join", "123456-apple-river-stone", "--as", "Zoë"],
        ["resume", "abcd", "--no-unicode"],
        ["resume", "abcd", "--server", "http://localhost:9", "--json", "--no-direct"],
        ["resume", "--linger", "12", "0123456789abcdef"],
        ["invite", "--file-rate", "3M"], ["join", "123456", "--file-rate=512k"], ["resume", "abcd", "--file-rate", "1000"],
    ]

    @Test(arguments: read)
    func readsAsArgumentParserDoes(_ arguments: [String]) throws {
        let direct = try #require(ChatCommandLine.command(arguments), "not read: \(arguments)")
        let parsed = try Inviso.parseAsRoot(arguments)
        #expect(try Fields(direct) == Fields(parsed))
    }

    /// A property added to a chat command or its option groups must be read (or given its
    /// default) by ``ChatCommandLine`` too: a wrapper it never set would stop the command
    /// when read. This counts the properties it knows about.
    @Test func everyPropertyOfTheChatCommandsIsKnown() {
        #expect(Mirror(reflecting: ChatOptions()).children.count == 10)
        #expect(Mirror(reflecting: SessionNaming()).children.count == 3)
        #expect(Mirror(reflecting: TextStyleOptions()).children.count == 1)
        #expect(Mirror(reflecting: QRDisplayOptions()).children.count == 2)
        #expect(Mirror(reflecting: InviteCommand()).children.count == 4)
        #expect(Mirror(reflecting: JoinCommand()).children.count == 4)
        #expect(Mirror(reflecting: ResumeCommand()).children.count == 3)
    }

    static let leftToArgumentParser: [[String]] = [
        [], ["sessions"], ["serve", "--port", "0"],
        ["invite", "--help"], ["join", "-h"], ["invite", "--generate-completion-script", "bash"],
        ["join"], ["join", "a", "b"], ["invite", "extra"], ["resume"],
        ["join", "x", "--json", "--json"], ["join", "x", "--server"], ["join", "x", "--server", "--json"],
        ["join", "x", "--linger", "soon"], ["join", "x", "--linger", "-1"], ["join", "x", "--linger", "4000"],
        ["join", "x", "--expires", "1h"], ["join", "x", "--invert-qr"], ["invite", "--json=true"],
        ["invite", "--expires", "99h"], ["resume", "abcd", "--ephemeral"], ["resume", "abcd", "--name", "n"],
        ["join", "--", "-x"], ["join", "x", "--unknown"], ["invite", "-v"],
        ["invite", "--file-rate", "0"], ["invite", "--file-rate", "3T"], ["invite", "--file-rate", "M"],
        ["invite", "--file-rate", "99999999999G"],
    ]

    @Test func fileRatesReadAsUsersWriteThem() {
        #expect(ByteRate(argument: "3M")?.bytesPerSecond == 3 << 20)
        #expect(ByteRate(argument: "512k")?.bytesPerSecond == 512 << 10)
        #expect(ByteRate(argument: "1G")?.bytesPerSecond == 1 << 30)
        #expect(ByteRate(argument: "1000")?.bytesPerSecond == 1_000)
        for bad in ["", "0", "-1", "1.5M", "M", "3MB", "٣M", "99999999999G", " "] { #expect(ByteRate(argument: bad) == nil, "\(bad)") }
        #expect(throws: (any Error).self) { try Inviso.parseAsRoot(["invite", "--file-rate", "fast"]) }
    }

    @Test(arguments: leftToArgumentParser)
    func leavesTheRestToArgumentParser(_ arguments: [String]) {
        #expect(ChatCommandLine.command(arguments) == nil)
    }
}
