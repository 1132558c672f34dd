/// The 38 base patterns of Noise revision 34 (§7.4 one-way, §7.5 interactive fundamental,
/// §7.6 deferred), written in the specification's arrow notation and parsed when asked for.
extension HandshakePattern {
    /// Every base pattern name this library knows, in specification order.
    public static let baseNames: [String] = catalogueSource.map(\.name)

    /// The base pattern called `name` (without modifiers), or `nil`.
    ///
    /// Only that pattern's notation is parsed (a few microseconds): a client names one
    /// protocol, and parsing all 38 up front cost its first handshake half a millisecond.
    public static func base(named name: String) -> HandshakePattern? {
        catalogueSource.first { $0.name == name }.map { parse(name: $0.name, notation: $0.notation) }
    }

    /// Parses the arrow notation: lines before `...` are pre-messages.
    private static func parse(name: String, notation: String) -> HandshakePattern {
        var initiatorPre: [NoiseToken] = []
        var responderPre: [NoiseToken] = []
        var messages: [[NoiseToken]] = []
        let lines = notation.split(separator: "\n").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        let preCount = lines.firstIndex(of: "...") ?? 0
        for (index, line) in lines.enumerated() where line != "..." {
            let outbound = line.hasPrefix("->")
            let tokens = line.dropFirst(2).split(separator: ",").map { NoiseToken(rawValue: String($0))! }
            if index < preCount {
                if outbound { initiatorPre = tokens } else { responderPre = tokens }
            } else {
                precondition(outbound == (messages.count % 2 == 0), "pattern \(name) must alternate")
                messages.append(tokens)
            }
        }
        let oneWay = messages.count == 1
        return HandshakePattern(name: name, initiatorPreMessage: initiatorPre, responderPreMessage: responderPre,
                                messages: messages, isOneWay: oneWay)
    }

    private static let catalogueSource: [(name: String, notation: String)] = [
        // One-way (§7.4)
        ("N", "<- s\n...\n-> e, es"),
        ("K", "-> s\n<- s\n...\n-> e, es, ss"),
        ("X", "<- s\n...\n-> e, es, s, ss"),
        // Fundamental interactive (§7.5)
        ("NN", "-> e\n<- e, ee"),
        ("NK", "<- s\n...\n-> e, es\n<- e, ee"),
        ("NX", "-> e\n<- e, ee, s, es"),
        ("XN", "-> e\n<- e, ee\n-> s, se"),
        ("XK", "<- s\n...\n-> e, es\n<- e, ee\n-> s, se"),
        ("XX", "-> e\n<- e, ee, s, es\n-> s, se"),
        ("KN", "-> s\n...\n-> e\n<- e, ee, se"),
        ("KK", "-> s\n<- s\n...\n-> e, es, ss\n<- e, ee, se"),
        ("KX", "-> s\n...\n-> e\n<- e, ee, se, s, es"),
        ("IN", "-> e, s\n<- e, ee, se"),
        ("IK", "<- s\n...\n-> e, es, s, ss\n<- e, ee, se"),
        ("IX", "-> e, s\n<- e, ee, se, s, es"),
        // Deferred (§7.6)
        ("NK1", "<- s\n...\n-> e\n<- e, ee, es"),
        ("NX1", "-> e\n<- e, ee, s\n-> es"),
        ("X1N", "-> e\n<- e, ee\n-> s\n<- se"),
        ("X1K", "<- s\n...\n-> e, es\n<- e, ee\n-> s\n<- se"),
        ("XK1", "<- s\n...\n-> e\n<- e, ee, es\n-> s, se"),
        ("X1K1", "<- s\n...\n-> e\n<- e, ee, es\n-> s\n<- se"),
        ("X1X", "-> e\n<- e, ee, s, es\n-> s\n<- se"),
        ("XX1", "-> e\n<- e, ee, s\n-> es, s, se"),
        ("X1X1", "-> e\n<- e, ee, s\n-> es, s\n<- se"),
        ("K1N", "-> s\n...\n-> e\n<- e, ee\n-> se"),
        ("K1K", "-> s\n<- s\n...\n-> e, es\n<- e, ee\n-> se"),
        ("KK1", "-> s\n<- s\n...\n-> e\n<- e, ee, se, es"),
        ("K1K1", "-> s\n<- s\n...\n-> e\n<- e, ee, es\n-> se"),
        ("K1X", "-> s\n...\n-> e\n<- e, ee, s, es\n-> se"),
        ("KX1", "-> s\n...\n-> e\n<- e, ee, se, s\n-> es"),
        ("K1X1", "-> s\n...\n-> e\n<- e, ee, s\n-> se, es"),
        ("I1N", "-> e, s\n<- e, ee\n-> se"),
        ("I1K", "<- s\n...\n-> e, es, s\n<- e, ee\n-> se"),
        ("IK1", "<- s\n...\n-> e, s\n<- e, ee, se, es"),
        ("I1K1", "<- s\n...\n-> e, s\n<- e, ee, es\n-> se"),
        ("I1X", "-> e, s\n<- e, ee, s, es\n-> se"),
        ("IX1", "-> e, s\n<- e, ee, se, s\n-> es"),
        ("I1X1", "-> e, s\n<- e, ee, s\n-> se, es"),
    ]
}
