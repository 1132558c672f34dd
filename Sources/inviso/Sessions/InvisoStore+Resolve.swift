import InvisoStore

// MARK: - Finding a session

extension InvisoStore {
    /// The session whose ID is `reference`, or the only one whose ID starts with it (at least
    /// four characters), like git's abbreviated hashes; letters match in either case (IDs
    /// print in upper case, people type them in lower).
    ///
    /// - Throws: ``CLIError`` when no session or more than one matches, or for a prefix of
    ///   fewer than four characters.
    func resolveSession(_ reference: String) throws -> StoredSession {
        if let exact = try session(id: reference) { return exact }
        let wanted = reference.uppercased()
        let all = try sessions()
        if let exact = all.first(where: { $0.id.uppercased() == wanted }) { return exact }
        guard reference.count >= 4 else {
            throw CLIError("give at least 4 characters of the session ID (\(TerminalText.sanitized(reference)) is too short)")
        }
        let matches = all.filter { $0.id.uppercased().hasPrefix(wanted) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw CLIError("no session \(TerminalText.sanitized(reference))")
        default:
            throw CLIError(
                "\(matches.count) sessions start with \(TerminalText.sanitized(reference)); give more of the ID")
        }
    }
}
