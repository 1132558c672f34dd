/// The relay limits a server enforces, announced in its `connected` greeting (an Inviso
/// extension: the Node server sends no `limits`, and the app ignores the field), so that a
/// client paces its relay traffic below them instead of having frames dropped.
///
/// ```json
/// "limits": {"messagesPerSecond": 50, "messageBurst": 200,
///            "roomBytesPerSecond": 1048576, "roomByteBurst": 8388608, "maxMessageBytes": 65536}
/// ```
public struct RelayLimits: Sendable, Hashable {
    /// Messages per second one socket may send.
    public var messagesPerSecond: Double
    /// Messages one socket may send at once.
    public var messageBurst: Double
    /// Binary bytes per second one room may relay (both members together).
    public var roomBytesPerSecond: Double
    /// Binary bytes one room may relay at once.
    public var roomByteBurst: Double
    /// The largest WebSocket message.
    public var maxMessageBytes: Int

    /// Limits from their values.
    public init(
        messagesPerSecond: Double, messageBurst: Double, roomBytesPerSecond: Double, roomByteBurst: Double,
        maxMessageBytes: Int
    ) {
        self.messagesPerSecond = messagesPerSecond
        self.messageBurst = messageBurst
        self.roomBytesPerSecond = roomBytesPerSecond
        self.roomByteBurst = roomByteBurst
        self.maxMessageBytes = maxMessageBytes
    }

    /// The JSON object.
    var json: JSONValue {
        func number(_ value: Double) -> JSONValue {
            value.isFinite && value < 1e15 ? .number(String(Int64(value.rounded(.down)))) : .number("1000000000000000")
        }
        return .object(JSONObject([
            ("messagesPerSecond", number(messagesPerSecond)), ("messageBurst", number(messageBurst)),
            ("roomBytesPerSecond", number(roomBytesPerSecond)), ("roomByteBurst", number(roomByteBurst)),
            ("maxMessageBytes", .number(String(maxMessageBytes))),
        ]))
    }

    /// Reads the object; `nil` when a field is missing, not a number, or not positive.
    init?(_ value: JSONValue?) {
        guard let object = value?.objectValue else { return nil }
        func number(_ key: String) -> Double? {
            guard case .number(let text)? = object[key], let value = Double(text), value.isFinite, value > 0 else { return nil }
            return value
        }
        guard let messages = number("messagesPerSecond"), let burst = number("messageBurst"),
            let bytes = number("roomBytesPerSecond"), let byteBurst = number("roomByteBurst"),
            let largest = number("maxMessageBytes"), largest <= Double(Int32.max)
        else { return nil }
        self.init(
            messagesPerSecond: messages, messageBurst: burst, roomBytesPerSecond: bytes, roomByteBurst: byteBurst,
            maxMessageBytes: Int(largest))
    }
}
