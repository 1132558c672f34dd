import Foundation
import InvisoTesting
import Testing

/// The URL of `shared/vectors/<path>`, or `nil` after reporting the absence the project's
/// way: a recorded issue under `CI=true`, a printed skip line elsewhere.
func sharedVectorFile(_ path: String, describing what: String) -> URL? {
    if let url = SharedVectors.url(path) { return url }
    if SharedVectors.isCI { Issue.record("shared/vectors/\(path) is missing under CI=true") }
    print(SharedVectors.skipMessage(what))
    return nil
}
