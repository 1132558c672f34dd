package import InvisoCrypto
import InvisoWire

/// An Inviso v2 invite: `NNNNNN-word-word-word`, or as a link
/// `inviso://join/NNNNNN#word-word-word`.
///
/// - The six digits are the server's join code: a public nameplate that finds the room
///   (`POST /api/rooms/accept {joinid}`), nothing more.
/// - The three words, drawn uniformly from the 2,048 words of ``InviteWordlist``, are the
///   secret: 33 bits that only the two people see. In the link they sit in the fragment,
///   which browsers and link previews do not send to servers. They become CPace's
///   password (``V2Pairing``), so the server, or anyone who learns the join code, gets
///   one online guess per pairing (a 1 in 2^33 chance) and nothing to test offline.
///
/// The words are secret: ``description`` and reflection show only the join code. Show
/// ``text`` or ``link`` to the user, and give the invite to ``V2Pairing``.
public struct Invite: Sendable {
    /// The number of secret words.
    public static let wordCount = 3
    /// The link form's prefix; the join code follows, then `#` and the words.
    public static let linkPrefix = "inviso://join/"

    /// The server's six-digit join code (public).
    public let joinCode: String
    /// Positions of the words in ``InviteWordlist``.
    private let wordIndices: [Int]

    /// An invite from its parts.
    ///
    /// - Parameters:
    ///   - joinCode: six ASCII digits, as the server accepted or assigned them.
    ///   - words: three words of ``InviteWordlist``, in any case.
    /// - Throws: ``V2Error/invalidJoinCode``, ``V2Error/wrongWordCount``,
    ///   ``V2Error/unknownWord``.
    public init(joinCode: String, words: [String]) throws(V2Error) {
        guard JoinCode.isValid(joinCode) else { throw .invalidJoinCode }
        guard words.count == Self.wordCount else { throw .wrongWordCount }
        var indices: [Int] = []
        for (position, word) in words.enumerated() {
            guard let index = InviteWordlist.index(of: Self.asciiLowercased(word)) else {
                throw V2Error(.unknownWord, "word \(position + 1)")
            }
            indices.append(index)
        }
        self.joinCode = joinCode
        self.wordIndices = indices
    }

    /// A new invite for `joinCode` with three words drawn from `generator`: each word is
    /// the low 11 bits of one `next()`, so with a secure generator each of the 2^33 word
    /// triples is equally likely.
    ///
    /// The code comes from the caller because the server decides it: the client proposes
    /// one in `POST /api/rooms {joinid}` (``randomJoinCode(using:)``) and takes the
    /// `joinid` of the `201` answer, which is the server's pick when none was proposed.
    ///
    /// - Parameters:
    ///   - joinCode: six ASCII digits.
    ///   - generator: a cryptographically secure generator outside tests.
    /// - Throws: ``V2Error/invalidJoinCode``.
    public static func generate(
        joinCode: String, using generator: inout some RandomNumberGenerator
    ) throws(V2Error) -> Invite {
        guard JoinCode.isValid(joinCode) else { throw .invalidJoinCode }
        let indices = (0..<wordCount).map { _ in Int(generator.next() & UInt64(InviteWordlist.count - 1)) }
        return Invite(joinCode: joinCode, wordIndices: indices)
    }

    /// A uniformly random six-digit code (`000000`…`999999`) to propose as `joinid`.
    public static func randomJoinCode(using generator: inout some RandomNumberGenerator) -> String {
        let digits = String(UInt32.random(in: 0..<1_000_000, using: &generator))
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    private init(joinCode: String, wordIndices: [Int]) {
        self.joinCode = joinCode
        self.wordIndices = wordIndices
    }

    /// The three secret words, lowercase.
    public var words: [String] { wordIndices.map { InviteWordlist.words[$0] } }

    /// `NNNNNN-word-word-word`, to show or read out.
    public var text: String { ([joinCode] + words).joined(separator: "-") }

    /// `inviso://join/NNNNNN#word-word-word`.
    public var link: String { Self.linkPrefix + joinCode + "#" + words.joined(separator: "-") }

    /// CPace's password-related string: UTF-8 of the lowercase words joined by `-`.
    package var passwordRelatedString: SecretBytes { SecretBytes(Array(words.joined(separator: "-").utf8)) }

    /// `text` with ASCII letters lowercased; other characters are kept (and then match no
    /// word), so no Unicode case mapping can turn a look-alike into a word.
    static func asciiLowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

// MARK: - Redacted descriptions

extension Invite: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The join code only; the words are secret.
    public var description: String { "Invite(joinCode: \(joinCode), words: <redacted>)" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show no word.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
