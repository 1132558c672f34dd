import InvisoKit

/// The JSON lines of `inviso invite --json` / `inviso join --json` (docs/cli.md).
enum ChatEventJSON {
    /// The invite, with its `link` (which names the server when it is not the default).
    static func invite(_ invite: Invite, link: String) -> String {
        JSONLines.object([
            "event": .string("invite"), "code": .string(invite.joinCode), "invite": .string(invite.text),
            "link": .string(link),
        ])
    }

    static func connected(_ security: ChatSecurity, path: ChatPath) -> String {
        JSONLines.object([
            "event": .string("connected"), "protocol": .string(security.version.rawValue),
            "verified": .bool(security.isVerified), "path": .string(path.rawValue),
        ])
    }

    static func path(_ path: ChatPath) -> String {
        JSONLines.object(["event": .string("path"), "path": .string(path.rawValue)])
    }

    static func sent(id: UInt64) -> String {
        JSONLines.object(["event": .string("sent"), "id": .int(Int(clamping: id))])
    }

    static func delivered(id: UInt64) -> String {
        JSONLines.object(["event": .string("delivered"), "id": .int(Int(clamping: id))])
    }

    /// A peer's message: `text` for a text, a `kind` and its fields for the app's other payloads.
    static func message(id: UInt64, payload: ChatPayload) -> String {
        let id = JSONValue.int(Int(clamping: id))
        switch payload {
        case .text(let text):
            return JSONLines.object(["event": .string("message"), "id": id, "text": .string(text)])
        case .location(let latitude, let longitude, let accuracy, let timestamp):
            return JSONLines.object([
                "event": .string("message"), "id": id, "kind": .string("location"), "latitude": .double(latitude),
                "longitude": .double(longitude), "accuracy": accuracy.map(JSONValue.double) ?? .null,
                "timestamp": .int(Int(timestamp)),
            ])
        case .voice(let duration, _, let audio, let timestamp):
            return JSONLines.object([
                "event": .string("message"), "id": id, "kind": .string("voice"), "duration": .double(duration),
                "audioBytes": .int(audio.count * 3 / 4), "timestamp": .int(Int(timestamp)),
            ])
        case .lifetimeProposal, .lifetimeAccept, .lifetimeReject:
            return JSONLines.object(["event": .string("message"), "id": id, "kind": .string("lifetime")])
        case .profile(let name):
            return JSONLines.object(["event": .string("peer_name"), "name": .string(name)])
        }
    }

    static func lifetimeProposed(_ lifetime: String) -> String {
        JSONLines.object(["event": .string("lifetime_proposed"), "lifetime": .string(lifetime)])
    }

    static func lifetime(_ lifetime: String) -> String {
        JSONLines.object(["event": .string("lifetime"), "lifetime": .string(lifetime)])
    }

    static func warning(_ warning: ChatWarning) -> String {
        JSONLines.object(["event": .string("warning"), "warning": .string(warning.description)])
    }

    static func closed(_ reason: ChatCloseReason) -> String {
        JSONLines.object(["event": .string("closed"), "reason": .string(reason.rawValue)])
    }
}
