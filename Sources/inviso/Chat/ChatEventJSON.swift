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
        case .file:
            return JSONLines.object(["event": .string("message"), "id": id, "kind": .string("file")])
        case .contact:
            return JSONLines.object(["event": .string("contact_offered")])
        }
    }

    /// A file transfer's event.
    static func file(_ event: ChatFileEvent) -> String {
        func id(_ id: String) -> JSONValue { .string(id) }
        switch event {
        case .offered(let file), .incoming(let file):
            let name = if case .offered = event { "file_offered" } else { "file_offer" }
            return JSONLines.object([
                "event": .string(name), "id": id(file.id), "name": .string(file.name), "size": .int(Int(clamping: file.size)),
            ])
        case .progress(let transfer, let bytes, let total, let sending):
            return JSONLines.object([
                "event": .string("file_progress"), "id": id(transfer), "bytes": .int(Int(clamping: bytes)),
                "total": .int(Int(clamping: total)), "direction": .string(sending ? "send" : "receive"),
            ])
        case .received(let transfer, let path, let sha256):
            return JSONLines.object([
                "event": .string("file_received"), "id": id(transfer), "path": .string(path), "sha256": .string(sha256),
            ])
        case .sent(let transfer, let verified):
            return JSONLines.object(["event": .string("file_sent"), "id": id(transfer), "verified": .bool(verified)])
        case .refused(let transfer):
            return JSONLines.object(["event": .string("file_refused"), "id": id(transfer)])
        case .cancelled(let transfer, let byPeer):
            return JSONLines.object(["event": .string("file_cancelled"), "id": id(transfer), "by_peer": .bool(byPeer)])
        case .failed(let transfer, let reason):
            return JSONLines.object(["event": .string("file_failed"), "id": id(transfer), "reason": .string(reason)])
        }
    }

    /// An error of `inviso send` / `receive`.
    static func fileError(_ text: String) -> String {
        JSONLines.object(["event": .string("error"), "error": .string(text)])
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
