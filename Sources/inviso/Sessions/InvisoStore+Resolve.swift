import InvisoStore

// MARK: - Finding a session

extension InvisoStore {
    /// The session whose ID is `reference`, or the only one whose ID starts with it (at least
    /// four characters), like git's abbreviated hashes.
    ///
    /// - Throws: ``CLIError`` when no session or more than one matches.
    func resolveSession(_ reference: String) throws -> StoredSession {
        if let exact = try session(id: reference) { return exact }
        let matches = reference.count >= 4 ? try sessions().filter { $0.id.hasPrefix(reference) } : []
        switch matches.count {
        case 1: return matches[0]
        case 0: throw CLIError("no session \(TerminalText.sanitized(reference))")
        default:
            throw CLIError(
                "\(matches.count) sessions start with \(TerminalText.sanitized(reference)); give more of the ID")
        }
    }
}
