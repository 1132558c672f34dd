import Foundation
import InvisoWire
import Logging

/// Writes one JSON object per log line to stderr:
/// `{"ts":"…","level":"info","label":"…","message":"…","meta":{…}}`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = JSONObject()
        fields["ts"] = .string(Date().formatted(.iso8601))
        fields["level"] = .string(event.level.rawValue)
        fields["label"] = .string(label)
        fields["message"] = .string(event.message.description)
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            var meta = JSONObject()
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) { meta[key] = .string(value.description) }
            fields["meta"] = .object(meta)
        }
        FileHandle.standardError.write(Data(fields.serialized() + [0x0A]))
    }
}
