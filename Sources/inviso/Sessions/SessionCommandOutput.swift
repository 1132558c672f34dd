/// What a store command prints: text for people, a JSON object for scripts.
struct SessionCommandOutput {
    /// The text form.
    let text: String
    /// The JSON form.
    let json: any Encodable
}
