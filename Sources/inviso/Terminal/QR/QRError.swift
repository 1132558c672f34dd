/// Why a QR code could not be made.
struct QRError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable {
        case dataTooLong(bytes: Int, capacity: Int)
        case invalidVersionRange
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The data does not fit the largest allowed version at the chosen level.
    static func dataTooLong(bytes: Int, capacity: Int) -> QRError {
        QRError(.dataTooLong(bytes: bytes, capacity: capacity))
    }

    /// The smallest allowed version is larger than the largest.
    static let invalidVersionRange = QRError(.invalidVersionRange)

    var description: String {
        switch code {
        case .dataTooLong(let bytes, let capacity):
            "\(bytes) bytes do not fit in a QR code (at most \(capacity) with the allowed versions at this error-correction level)"
        case .invalidVersionRange:
            "the smallest QR version is larger than the largest"
        }
    }
}
