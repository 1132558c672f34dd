/// How a safety number is shown: libsignal-style numbers (all digits, a multiple of 5 long,
/// e.g. 60) in groups of five, four groups a line; anything else sanitized as it is.
enum SafetyNumberText {
    /// `number` laid out for reading aloud and comparing.
    static func grouped(_ number: String) -> String {
        guard !number.isEmpty, number.count % 5 == 0, number.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return TerminalText.sanitized(number)
        }
        let characters = Array(number)
        let groups = stride(from: 0, to: characters.count, by: 5).map { String(characters[$0..<$0 + 5]) }
        return stride(from: 0, to: groups.count, by: 4).map {
            groups[$0..<min($0 + 4, groups.count)].joined(separator: " ")
        }.joined(separator: "\n")
    }
}
