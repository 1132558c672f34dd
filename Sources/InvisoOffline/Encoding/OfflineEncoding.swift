import InvisoCrypto

/// How an envelope travels as text.
public enum OfflineEncoding: String, Sendable, Hashable, CaseIterable {
    /// The compact JSON as is.
    case raw
    /// ``FairyTale``: a decoy sentence with the compressed JSON in invisible characters.
    case fairytale
    /// Standard base64 (padded, one line) of the compact JSON.
    case base64

    /// `envelope` as text in this encoding and `form`.
    ///
    /// - Parameters:
    ///   - envelope: The envelope.
    ///   - form: The JSON form (Android by default; it also picks Fairy Tale's table).
    ///   - cover: Fairy Tale's visible sentence (ignored by the other encodings).
    public func encode(_ envelope: OfflineEnvelope, form: OfflineEnvelope.Form = .android, cover: String) -> String {
        switch self {
        case .raw: envelope.json(form)
        case .fairytale: FairyTale.encode(envelope, form: form, cover: cover)
        case .base64: Base64.encodeString(envelope.jsonBytes(form))
        }
    }

    /// ``encode(_:form:cover:)`` with a cover sentence drawn from ``FairyTale/coverSentences``.
    public func encode(
        _ envelope: OfflineEnvelope, form: OfflineEnvelope.Form = .android, using generator: inout some RandomNumberGenerator
    ) -> String {
        encode(envelope, form: form, cover: FairyTale.coverSentences.randomElement(using: &generator)!)
    }
}
