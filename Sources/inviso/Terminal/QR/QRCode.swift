/// A finished QR code symbol (Model 2, byte mode): a square of dark and light modules.
///
/// Make one with ``encode(_:level:versions:mask:)``; draw it with ``QRTerminalRenderer``.
/// The encoder follows ISO/IEC 18004:2015 from the standard's description; it supports
/// every version (1…40) and level, and picks the smallest version that fits and the mask
/// with the lowest penalty unless told otherwise.
struct QRCode: Sendable, Hashable {
    /// The symbol's version.
    let version: QRVersion
    /// The error-correction level.
    let level: QRErrorCorrectionLevel
    /// The data mask applied.
    let mask: QRMask
    /// Row-major modules, `true` = dark.
    let modules: [Bool]

    /// Modules per side (without quiet zone).
    var size: Int { version.size }

    /// Whether the module at column `x`, row `y` is dark; modules outside the symbol (the
    /// quiet zone) are light.
    subscript(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// Encodes `data` in byte mode.
    ///
    /// - Parameters:
    ///   - data: The bytes (e.g. a link's UTF-8).
    ///   - level: The error-correction level; M by default.
    ///   - versions: The versions allowed; the smallest that fits is used.
    ///   - mask: A fixed mask, or `nil` to evaluate all eight and keep the one with the lowest
    ///     ``QRPenalty`` (ties go to the lower reference).
    /// - Throws: ``QRError/dataTooLong(bytes:capacity:)`` when no allowed version holds
    ///   `data`; ``QRError/invalidVersionRange`` for an empty range.
    static func encode(
        _ data: some Collection<UInt8>,
        level: QRErrorCorrectionLevel = .medium,
        versions: ClosedRange<QRVersion> = QRVersion.minimum...QRVersion.maximum,
        mask: QRMask? = nil
    ) throws(QRError) -> QRCode {
        let bytes = Array(data)
        guard
            let version = QRVersion.all.first(where: { versions.contains($0) && bytes.count <= $0.byteCapacity(level) })
        else {
            throw QRError.dataTooLong(bytes: bytes.count, capacity: versions.upperBound.byteCapacity(level))
        }
        var grid = QRModuleGrid(version: version)
        grid.placeCodewords(QRCodewords.interleaved(bytes, version: version, level: level))
        let candidates = mask.map { [$0] } ?? QRMask.all
        var best: QRCode?
        var bestPenalty = Int.max
        for candidate in candidates {
            var masked = grid
            masked.apply(candidate)
            masked.drawFormat(level: level, mask: candidate)
            let penalty = candidates.count == 1 ? 0 : QRPenalty(size: version.size, modules: masked.modules).total
            if penalty < bestPenalty {
                best = QRCode(version: version, level: level, mask: candidate, modules: masked.modules)
                bestPenalty = penalty
            }
        }
        guard let best else { preconditionFailure("QRMask.all is never empty") }
        return best
    }

    /// Encodes the UTF-8 bytes of `text`; see ``encode(_:level:versions:mask:)``.
    static func encode(
        text: String,
        level: QRErrorCorrectionLevel = .medium,
        versions: ClosedRange<QRVersion> = QRVersion.minimum...QRVersion.maximum,
        mask: QRMask? = nil
    ) throws(QRError) -> QRCode {
        try encode(Array(text.utf8), level: level, versions: versions, mask: mask)
    }
}
