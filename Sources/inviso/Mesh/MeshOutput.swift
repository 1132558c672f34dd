import InvisoCrypto
import InvisoMesh

/// How `inviso mesh` shows what happens: JSON lines, or text for a person.
///
/// Text mode prints what peers sent with control characters replaced, so a hostile
/// nickname or message cannot drive the terminal.
struct MeshOutput: Sendable {
    let json: Bool

    func started(identity: MeshIdentity, nick: String, port: Int, pending: Int) {
        let fingerprint = Hex.encode(identity.fingerprint)
        if json {
            JSONLines.emit([
                "event": .string("started"), "nick": .string(nick), "id": .string(identity.peerID.description),
                "fingerprint": .string(fingerprint), "port": .int(port), "pending": .int(pending),
            ])
        } else {
            line("mesh: \(nick) on UDP port \(port), peer \(identity.peerID)")
            line("      fingerprint \(Self.grouped(fingerprint))")
            if pending > 0 { line("      \(pending) private message(s) still waiting for delivery") }
        }
    }

    func event(_ event: MeshNodeCore.Event) {
        switch event {
        case .peer(let peer):
            if json {
                JSONLines.emit([
                    "event": .string("peer"), "nick": .string(peer.nickname), "fingerprint": .string(peer.fingerprint),
                    "id": .string(peer.id.description),
                ])
            } else {
                line("* \(Self.clean(peer.nickname)) is on the mesh (fingerprint \(Self.grouped(peer.fingerprint)))")
            }
        case .publicMessage(let peer, let text, let hops, _):
            if json {
                JSONLines.emit([
                    "event": .string("public"), "from": .string(peer.nickname), "text": .string(text),
                    "hops": hops.map { .int($0) } ?? .null, "fingerprint": .string(peer.fingerprint),
                ])
            } else {
                let route = hops.map { $0 == 1 ? "  (direct)" : "  (\($0) hops)" } ?? "  (synced)"
                line("<\(Self.clean(peer.nickname))> \(Self.clean(text))\(route)")
            }
        case .privateMessage(let peer, let peerID, let text, let id):
            let from = peer?.nickname ?? peerID.description
            if json {
                JSONLines.emit([
                    "event": .string("private"), "from": .string(from), "text": .string(text),
                    "fingerprint": peer.map { .string($0.fingerprint) } ?? .null, "id": .string(id),
                ])
            } else {
                line("[private] <\(Self.clean(from))> \(Self.clean(text))")
            }
        case .delivered(let id, let peer):
            if json {
                JSONLines.emit(["event": .string("delivered"), "id": .string(id), "to": .string(peer.description)])
            } else {
                line("✓ delivered to \(peer)")
            }
        case .undeliverable(let id, let peer):
            if json {
                JSONLines.emit(["event": .string("undeliverable"), "id": .string(id), "to": .string(peer.description)])
            } else {
                line("! a private message to \(peer) was given up")
            }
        case .refused(let reason):
            if json {
                JSONLines.emit(["event": .string("refused"), "reason": .string(reason)])
            } else {
                line("! refused: \(reason)")
            }
        }
    }

    func peers(_ peers: [MeshNodeCore.Peer], present: Set<PeerID>) {
        if json {
            for peer in peers {
                JSONLines.emit([
                    "event": .string("peer"), "nick": .string(peer.nickname), "fingerprint": .string(peer.fingerprint),
                    "id": .string(peer.id.description), "present": .bool(present.contains(peer.id)),
                ])
            }
        } else if peers.isEmpty {
            line("no peers yet")
        } else {
            for peer in peers {
                let status = present.contains(peer.id) ? "present" : "away"
                line("  \(Self.clean(peer.nickname))  \(peer.id)  \(status)  \(Self.grouped(peer.fingerprint))")
            }
        }
    }

    func sent(id: String, to target: String) {
        if json {
            JSONLines.emit(["event": .string("sent"), "id": .string(id), "to": .string(target)])
        } else {
            line("→ queued for \(target)")
        }
    }

    func error(_ error: any Error) {
        if json {
            JSONLines.emitError(error)
        } else {
            line("error: \(error)")
        }
    }

    private func line(_ text: String) {
        JSONLines.emitLine(text)
    }

    /// A fingerprint in groups of four hex digits.
    static func grouped(_ hex: String) -> String {
        stride(from: 0, to: hex.count, by: 4).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<hex.index(start, offsetBy: min(4, hex.count - offset))])
        }.joined(separator: " ")
    }

    /// `text` with control characters shown as U+FFFD.
    static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "\u{FFFD}" : $0 }))
    }
}
